"""The largest gap, ratio and change of models the differential campaign's families do
not train, against the library's own predict: CatBoost (nan_mode Min or Max), ONNX
files (skl2onnx's forests and boosting, onnxmltools' XGBoost and LightGBM) and
scikit-learn's forests, HistGradientBoosting and GradientBoosting, trained on data with
NaN where the library takes it and asked with the features declared may be missing;
binary (a gap), multiclass (a ratio between classes, "any" too) and regressors (the
largest change f(x1) - f(x2)). The library predicts every row of a grid of one value per
routing signature of each feature (NaN too), as tests/regressions/harness.py builds it;
the answer's bounds must hold the grid's best, and the IR must agree with the library
on the grid. A CatBoost border at float32's largest number is passed by the doubles
above it, which the grid also holds (+-5e38)."""

from __future__ import annotations

import itertools
import os
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.tests.max_gap_oracle import _ratios, max_gap_problems, max_ratio_problems
from treesens.tests.regressions import harness as H

SEEDS = int(os.environ.get("TS_LIBRARY_MISSING_SEEDS", "2"))
SLOW_SEEDS = int(os.environ.get("TS_LIBRARY_MISSING_SLOW_SEEDS", "30"))
KINDS = ("binary", "multi", "reg")
FAMILIES = ("catboost", "onnx", "sklearn")
# past float32's largest number: CatBoost reads it as inf, above every border
BEYOND_FLOAT32 = [5e38, -5e38]


def _data(rng, k: int, nan: bool):
    X = rng.uniform(size=(200, k))
    if rng.random() < 0.5:
        X[:, 0] = rng.integers(0, 5, size=200)
    y = X[:, 0] / max(1.0, X[:, 0].max()) + X[:, 1] - 0.8 + 0.3 * rng.normal(size=200)
    if nan:
        X[rng.random(size=X.shape) < 0.15] = np.nan
    return X, {"binary": (y > 0).astype(int), "multi": (y > -0.3).astype(int) + (y > 0.3), "reg": y}


def _catboost(rng, kind, X, y, folder):
    catboost = pytest.importorskip("catboost")
    p = dict(
        iterations=int(rng.integers(2, 6)),
        depth=int(rng.integers(1, 4)),
        border_count=int(rng.choice([4, 8, 32])),
        nan_mode=str(rng.choice(["Min", "Max"])),
        verbose=0,
        allow_writing_files=False,
        thread_count=1,
        random_seed=0,
    )
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    if kind == "reg":
        m = catboost.CatBoostRegressor(**p)
    else:
        m = catboost.CatBoostClassifier(
            loss_function="MultiClass" if kind == "multi" else None, **p
        )
    path = folder / "model.cbm"
    m.fit(df, y).save_model(str(path))
    return path


def _sklearn(rng, kind, X, y):
    from sklearn import ensemble as E

    n, d = int(rng.integers(2, 5)), int(rng.integers(1, 4))
    reg = kind == "reg"
    lib = str(rng.choice(["rf", "et", "hgb", "gb"]))
    if lib == "hgb":
        est = E.HistGradientBoostingRegressor if reg else E.HistGradientBoostingClassifier
        return est(max_iter=n, max_depth=d + 1, max_bins=16, random_state=0).fit(X, y), True
    if lib == "gb":  # takes no NaN
        est = E.GradientBoostingRegressor if reg else E.GradientBoostingClassifier
        return est(n_estimators=n, max_depth=d, random_state=0).fit(np.nan_to_num(X), y), False
    forests = {"rf": (E.RandomForestRegressor, E.RandomForestClassifier)}
    forests["et"] = (E.ExtraTreesRegressor, E.ExtraTreesClassifier)
    est = forests[lib][0 if reg else 1]
    return est(n_estimators=n, max_depth=d, random_state=0).fit(X, y), True


def _onnx(rng, kind, X, y, folder):
    pytest.importorskip("onnxruntime")
    from treesens.tests.frontends.onnx_models import onnxmltools_model, sklearn_onnx

    X = X.astype(np.float32)
    n, d, k = int(rng.integers(2, 5)), int(rng.integers(1, 4)), X.shape[1]
    lib = str(rng.choice(["sklearn", "xgboost", "lightgbm"]))
    if lib == "sklearn":  # skl2onnx writes HistGradientBoosting's NaN splits at inf
        est, _ = _sklearn(rng, kind, np.nan_to_num(X, nan=0.5), y)
        opts = None if kind == "reg" else {id(est): {"zipmap": False}}
        blob = sklearn_onnx(est, X, options=opts)
    elif lib == "xgboost":
        xgb = pytest.importorskip("xgboost")
        est = xgb.XGBRegressor if kind == "reg" else xgb.XGBClassifier
        blob = onnxmltools_model(est(n_estimators=n, max_depth=d, n_jobs=1).fit(X, y), k)
    else:
        lgb = pytest.importorskip("lightgbm")
        est = lgb.LGBMRegressor if kind == "reg" else lgb.LGBMClassifier
        est = est(n_estimators=n, max_depth=d, num_leaves=4, min_child_samples=5, verbose=-1)
        opts = {} if kind == "reg" else {"zipmap": False}
        blob = onnxmltools_model(est.set_params(n_jobs=1).fit(X, y), k, **opts)
    path = folder / "model.onnx"
    path.write_bytes(blob)
    return path


def _model(family: str, seed: int, folder):
    """The loaded model (its features declared may be missing where it takes NaN), its
    kind, and the features to vary."""
    rng = np.random.default_rng([seed, FAMILIES.index(family), 77])
    kind = KINDS[seed % 3]
    X, ys = _data(rng, int(rng.integers(2, 4)), nan=family != "onnx" or rng.random() < 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if family == "catboost":
            model, takes_nan = _catboost(rng, kind, X, ys[kind], folder), True
        elif family == "onnx":
            model, takes_nan = _onnx(rng, kind, X, ys[kind], folder), True
        else:
            model, takes_nan = _sklearn(rng, kind, X, ys[kind])
        ens = treesens.load_model(model)
    if kind != "reg" and ens.n_classes == 2:  # a class the data left out
        kind = "binary"
    if takes_nan:
        ens = ens.with_features(tuple(replace(f, may_be_missing=True) for f in ens.features))
    vary = sorted(rng.choice(ens.feature_names, size=int(rng.integers(1, 3)), replace=False))
    return ens, kind, [str(v) for v in vary], rng


def _grid(ens, vary, family: str):
    """The grid's rows (shared part x varied part) and the library's raw outputs and
    probabilities (a regressor: its predictions, twice)."""
    extra = BEYOND_FLOAT32 if family == "catboost" else []
    vals = {f: H.feature_values(ens, f) + extra for f in range(ens.n_features)}
    varying = sorted(ens.feature_names.index(v) for v in vary)
    shared = [f for f in range(ens.n_features) if f not in varying]
    S = np.array(list(itertools.product(*[vals[f] for f in shared])), dtype=float)
    V = np.array(list(itertools.product(*[vals[f] for f in varying])), dtype=float)
    X = np.empty((len(S) * len(V), ens.n_features))
    X[:, shared] = np.repeat(S.reshape(len(S), -1), len(V), axis=0)
    X[:, varying] = np.tile(V, (max(1, len(S)), 1))
    raw = np.asarray(ens.replayer.predict_raw(X), dtype=float).reshape(len(X), -1)
    if ens.n_classes < 2:
        return X, len(V), raw, raw
    return X, len(V), raw, np.asarray(ens.replayer.predict_proba(X), dtype=float)


def _problems(ens, kind, vary, family, seed) -> list[str]:
    X, nv, raw, proba = _grid(ens, vary, family)
    ours = ens.raw(X).reshape(raw.shape) if kind == "reg" else ens.proba(X)
    lib = raw if kind == "reg" else proba
    probs = [] if np.allclose(ours, lib, rtol=0, atol=1e-5) else ["the IR is not the library"]
    if kind == "binary":
        p = proba[:, 1].reshape(-1, nv)
        exact = float(np.max(np.minimum(p.max(axis=1) - 0.5, 0.5 - p.min(axis=1))))
        return probs + max_gap_problems(exact, treesens.max_gap(ens, vary, timeout=60), ens)
    if kind == "multi":
        classes = [("any", "any"), (0, 2), (2, "any"), (1, 0)][seed % 4]
        return probs + max_ratio_problems(
            _best_ratio(proba, nv, classes), treesens.max_gap(ens, vary, classes=classes)
        )
    pred = raw[:, 0].reshape(-1, nv)
    exact = float((pred.max(axis=1) - pred.min(axis=1)).max())
    m = treesens.max_gap(ens, vary, timeout=60).max_gap
    if m["upper"] is not None and m["upper"] < exact * (1 - 1e-6) - 1e-9:
        probs.append(f"upper {m['upper']!r} below the largest change {exact!r}")
    if m["lower"] is not None and m["lower"] > exact * (1 + 1e-6) + 1e-9:
        probs.append(f"lower {m['lower']!r} above the largest change {exact!r}")
    return probs


def _best_ratio(p: np.ndarray, nv: int, classes) -> float:
    C = p.shape[1]
    ratio = np.stack(
        [np.min(_ratios(p[:, [c]], np.delete(p, c, axis=1)), axis=1) for c in range(C)], axis=1
    )
    best = ratio.reshape(-1, nv, C).max(axis=1)
    sides = [range(C) if c == "any" else [int(c)] for c in classes]
    pairs = [(a, b) for a in sides[0] for b in sides[1] if a != b]
    return max(float(np.max(np.minimum(best[:, a], best[:, b]))) for a, b in pairs)


def _agrees(family: str, seed: int, folder) -> None:
    ens, kind, vary, _ = _model(family, seed, folder)
    problems = _problems(ens, kind, vary, family, seed)
    assert not problems, (family, kind, vary, problems)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("seed", range(SEEDS))
def test_library_models_with_missing_values_bracket_the_librarys_best(family, seed, tmp_path):
    _agrees(family, seed, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("seed", range(SEEDS, SEEDS + SLOW_SEEDS))
def test_more_library_models_with_missing_values_bracket_the_best(family, seed, tmp_path):
    _agrees(family, seed, tmp_path)
