"""Models trained with the settings users' models come with (objectives and their links,
boosters, forests of boosted trees, intercepts set or learnt, sigmoid scales, CatBoost's
scale and bias, scikit-learn's exponential loss and starts) are read exactly or refused:
each tiny model is saved, loaded from its file, and its IR must equal the library's own
predict (asked here, not through treesens' replayer) on random rows and on a grid of one
value per routing signature of every feature; a check just below and just above the
grid's best gap (or ratio, or change) must say sensitive and insensitive, and the max
gap must bracket the best."""

from __future__ import annotations

import itertools
import json
import warnings

import numpy as np
import pytest

import treesens
from treesens.tests.max_gap_oracle import _ratios
from treesens.tests.regressions import harness as H

N = 300


def _data():
    rng = np.random.default_rng(11)
    X = rng.uniform(size=(N, 3))
    X[:, 2] = rng.integers(0, 4, N)
    z = X[:, 0] + X[:, 1] - 1 + 0.3 * (X[:, 2] % 3) - 0.3
    noisy = z + 0.3 * rng.normal(size=N)
    return X, {
        "binary": (noisy > 0).astype(int),
        "prob": 1 / (1 + np.exp(-3 * noisy)),
        "multi": (z > -0.3).astype(int) + (z > 0.3),
        "reg": 3 * noisy,
        "positive": np.exp(noisy) + 0.1,
        "count": rng.poisson(np.exp(z + 1)).astype(float),
    }


def _softmax(r):
    e = np.exp(r - r.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# ---------------------------------------------------------------------------------------
# the variants: (library, settings, kind the library predicts, labels)
# ---------------------------------------------------------------------------------------
XGB = {
    "binary:logistic base_score 0.2": ({"objective": "binary:logistic", "base_score": 0.2}, "binary", "binary"),
    "binary:logitraw": ({"objective": "binary:logitraw"}, "binary", "binary"),
    "reg:logistic": ({"objective": "reg:logistic"}, "binary", "prob"),
    "reg:squarederror": ({"objective": "reg:squarederror"}, "reg", "reg"),
    "count:poisson": ({"objective": "count:poisson"}, "reg", "count"),
    "reg:tweedie": ({"objective": "reg:tweedie", "tweedie_variance_power": 1.3}, "reg", "positive"),
    "reg:gamma base_score 3": ({"objective": "reg:gamma", "base_score": 3.0}, "reg", "positive"),
    "multi:softmax": ({"objective": "multi:softmax", "num_class": 3}, "multi", "multi"),
    "num_parallel_tree 3": ({"objective": "binary:logistic", "num_parallel_tree": 3, "subsample": 0.7}, "binary", "binary"),
    "multi num_parallel_tree 2": ({"objective": "multi:softprob", "num_class": 3, "num_parallel_tree": 2, "subsample": 0.7}, "multi", "multi"),
}  # fmt: skip
LGB = {
    "binary sigmoid 2": ({"objective": "binary", "sigmoid": 2.0}, "binary", "binary"),
    "rf": ({"objective": "binary", "boosting": "rf", "bagging_fraction": 0.7, "bagging_freq": 1}, "binary", "binary"),
    "dart": ({"objective": "binary", "boosting": "dart", "drop_rate": 0.5}, "binary", "binary"),
    "goss": ({"objective": "binary", "data_sample_strategy": "goss"}, "binary", "binary"),
    "cross_entropy": ({"objective": "cross_entropy"}, "binary", "prob"),
    "multiclass rf": ({"objective": "multiclass", "num_class": 3, "boosting": "rf", "bagging_fraction": 0.7, "bagging_freq": 1}, "multi", "multi"),
    "poisson": ({"objective": "poisson"}, "reg", "count"),
    "gamma": ({"objective": "gamma"}, "reg", "positive"),
    "quantile": ({"objective": "quantile", "alpha": 0.8}, "reg", "reg"),
}  # fmt: skip
SKLEARN = {
    "exponential loss": ("GradientBoostingClassifier", {"loss": "exponential"}, "binary", "binary"),
    "init zero": ("GradientBoostingClassifier", {"init": "zero"}, "multi", "multi"),
    "class_weight": ("RandomForestClassifier", {"class_weight": {0: 1, 1: 5}}, "binary", "binary"),
    "extra trees": ("ExtraTreesRegressor", {}, "reg", "reg"),
}  # fmt: skip
CATBOOST = {
    "CrossEntropy": ("CatBoostClassifier", {"loss_function": "CrossEntropy"}, "binary", "prob"),
    "MultiClass scale and bias": ("CatBoostClassifier", {"loss_function": "MultiClass"}, "multi", "multi"),
    "Poisson scale and bias": ("CatBoostRegressor", {"loss_function": "Poisson"}, "reg", "count"),
}  # fmt: skip


def _xgboost(name, folder):
    xgb = pytest.importorskip("xgboost")
    params, kind, labels = XGB[name]
    X, ys = _data()
    bst = xgb.train(
        {"max_depth": 2, "eta": 0.5, "nthread": 1, **params}, xgb.DMatrix(X, ys[labels]), 3
    )
    path = folder / "model.ubj"
    bst.save_model(path)

    def predict(Z):
        if name == "binary:logitraw":
            return 1 / (1 + np.exp(-bst.predict(xgb.DMatrix(Z))))
        if name == "multi:softmax":  # its predict is the class: the probabilities are the margin's
            return _softmax(bst.predict(xgb.DMatrix(Z), output_margin=True))
        return bst.predict(xgb.DMatrix(Z))

    return path, kind, predict


def _lightgbm(name, folder):
    lgb = pytest.importorskip("lightgbm")
    params, kind, labels = LGB[name]
    X, ys = _data()
    base = {"num_leaves": 4, "learning_rate": 0.5, "min_data_in_leaf": 10, "verbose": -1}
    bst = lgb.train({**base, "num_threads": 1, **params}, lgb.Dataset(X, ys[labels]), 4)
    path = folder / "model.json"  # dump_model(): read through the text format
    path.write_text(json.dumps(bst.dump_model()))
    return path, kind, bst.predict


def _sklearn(name, folder):
    skops_io = pytest.importorskip("skops.io")
    from sklearn import ensemble

    cls, params, kind, labels = SKLEARN[name]
    X, ys = _data()
    est = getattr(ensemble, cls)(n_estimators=3, max_depth=2, random_state=0, **params)
    est.fit(X, ys[labels])
    path = folder / "model.skops"
    skops_io.dump(est, path)
    return path, kind, _estimator_output(est, kind)


def _catboost(name, folder):
    catboost = pytest.importorskip("catboost")
    cls, params, kind, labels = CATBOOST[name]
    X, ys = _data()
    opts = {"iterations": 3, "depth": 2, "verbose": 0, "allow_writing_files": False}
    est = getattr(catboost, cls)(thread_count=1, random_seed=0, border_count=8, **opts, **params)
    est.fit(X, ys[labels])
    if "scale and bias" in name:
        est.set_scale_and_bias(1.7, [0.3, -0.2, 0.1] if kind == "multi" else 0.4)
    path = folder / "model.cbm"
    est.save_model(str(path))
    return path, kind, _estimator_output(est, kind)


def _estimator_output(est, kind):
    if kind == "binary":
        return lambda Z: est.predict_proba(Z)[:, 1]
    return est.predict_proba if kind == "multi" else est.predict


TRAIN = {"xgboost": (_xgboost, XGB), "lightgbm": (_lightgbm, LGB)}
TRAIN.update({"sklearn": (_sklearn, SKLEARN), "catboost": (_catboost, CATBOOST)})
VARIANTS = [(lib, name) for lib, (_, names) in TRAIN.items() for name in names]
# asked in every run: a link read from a setting (an exp link's base score, the margin as
# the output, a sigmoid's scale, the exponential loss's 2F, CatBoost's scale and bias) and
# averages (forests of boosted trees, LightGBM's rf); the others are slow
FAST = {
    ("xgboost", "reg:gamma base_score 3"),
    ("xgboost", "binary:logitraw"),
    ("xgboost", "multi num_parallel_tree 2"),
    ("lightgbm", "binary sigmoid 2"),
    ("lightgbm", "multiclass rf"),
    ("sklearn", "exponential loss"),
    ("catboost", "MultiClass scale and bias"),
    ("catboost", "Poisson scale and bias"),
}


# ---------------------------------------------------------------------------------------
# the oracle: the library's predict on a grid of every routing signature
# ---------------------------------------------------------------------------------------
def _grid(ens, vary):
    vals = [H.feature_values(ens, f) for f in range(ens.n_features)]
    varying = [ens.feature_names.index(v) for v in vary]
    shared = [f for f in range(ens.n_features) if f not in varying]
    S = np.array(list(itertools.product(*[vals[f] for f in shared])), dtype=float)
    V = np.array(list(itertools.product(*[vals[f] for f in varying])), dtype=float)
    X = np.empty((len(S) * len(V), ens.n_features))
    X[:, shared] = np.repeat(S.reshape(len(S), -1), len(V), axis=0)
    X[:, varying] = np.tile(V, (len(S), 1))
    return X, len(V)


def _ir_output(ens, kind, X):
    if kind == "reg":
        return ens.predict(X).reshape(-1)
    return ens.proba(X)[:, 1] if kind == "binary" else ens.proba(X)


def _best(kind, y, nv) -> float:
    """The grid's best gap (binary), ratio between two classes (multi) or change (reg)."""
    if kind == "binary":
        p = y.reshape(-1, nv)
        return float(np.max(np.minimum(p.max(axis=1) - 0.5, 0.5 - p.min(axis=1))))
    if kind == "reg":
        y = y.reshape(-1, nv)
        return float((y.max(axis=1) - y.min(axis=1)).max())
    C = y.shape[1]
    ratio = np.stack(
        [np.min(_ratios(y[:, [c]], np.delete(y, c, axis=1)), axis=1) for c in range(C)], axis=1
    )
    best = ratio.reshape(-1, nv, C).max(axis=1)
    return max(
        float(np.max(np.minimum(best[:, a], best[:, b])))
        for a in range(C)
        for b in range(C)
        if a != b
    )


def _ask(ens, kind, vary, value, max_gap=False):
    opts = {"timeout": 60}
    if kind == "multi":
        opts["classes"] = ("any", "any")
    if max_gap:
        return treesens.max_gap(ens, vary, **opts)
    key = {"binary": "gap", "multi": "gap", "reg": "delta"}[kind]
    return treesens.check(ens, vary, **{key: value}, **opts)


def _below_and_above(kind, best):
    if kind == "binary":
        return [(g, g < best) for g in (best - 0.02, best + 0.02) if 0.001 < g < 0.499]
    return [
        (v, v < best) for v in (best * 0.98, best * 1.02) if v > (1.0 if kind == "multi" else 1e-9)
    ]


def _answers_agree(ens, kind, predict, vary) -> list[str]:
    X, nv = _grid(ens, vary)
    best = _best(kind, np.asarray(predict(X), dtype=float), nv)
    problems = []
    for value, sensitive in _below_and_above(kind, best):
        r = _ask(ens, kind, vary, value)
        want = "sensitive" if sensitive else "insensitive"
        if r.status != want or (sensitive and not r.validated):
            problems.append(f"vary {vary} at {value!r} (best {best!r}): {r.status} {r.error}")
    m = _ask(ens, kind, vary, None, max_gap=True).max_gap
    rel = 1e-6  # the library's float32 outputs against treesens' doubles
    if m["upper"] is not None and m["upper"] < best - rel * max(1.0, abs(best)):
        problems.append(f"vary {vary}: max gap's upper {m['upper']!r} below the best {best!r}")
    if m["lower"] is not None and m["lower"] > best + rel * max(1.0, abs(best)):
        problems.append(f"vary {vary}: max gap's lower {m['lower']!r} above the best {best!r}")
    return problems


def _ir_is_the_library(ens, kind, predict) -> None:
    rng = np.random.default_rng(0)
    R = rng.uniform(-0.2, 1.2, size=(2000, ens.n_features))
    R[:, 2] = rng.integers(-1, 6, size=len(R))
    for X in (R, _grid(ens, ens.feature_names[:1])[0]):
        lib = np.asarray(predict(X), dtype=float)
        ours = _ir_output(ens, kind, X).reshape(lib.shape)
        assert np.allclose(ours, lib, rtol=1e-6, atol=1e-6), np.abs(ours - lib).max()


def _read_and_answered_exactly(library, name, folder) -> None:
    train, _ = TRAIN[library]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        path, kind, predict = train(name, folder)
        ens = treesens.load_model(path)
        _ir_is_the_library(ens, kind, predict)
        names = ens.feature_names
        problems = [
            p for vary in ([names[0]], names[1:]) for p in _answers_agree(ens, kind, predict, vary)
        ]
    assert not problems, problems


@pytest.mark.parametrize("library,name", sorted(FAST))
def test_a_model_variant_is_read_as_its_library_predicts_and_answered_exactly(
    library, name, tmp_path
):
    _read_and_answered_exactly(library, name, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("library,name", [v for v in VARIANTS if v not in FAST])
def test_more_model_variants_are_read_as_their_library_predicts_and_answered_exactly(
    library, name, tmp_path
):
    _read_and_answered_exactly(library, name, tmp_path)
