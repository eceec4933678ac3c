"""The Ensemble IR computes what XGBoost's own predict computes:
on random rows, on rows exactly on split thresholds and just below them (float32), and
on rows with missing values, for every benchmark model and for in-memory models."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import pytest

from treesens.readers.load import load_model
from treesens.tests.conftest import shared_benchmarks

xgb = pytest.importorskip("xgboost")

TOL = 1e-6
N_ROWS = 200

BINARY_DIRS = ("adult", "churn", "pimadiabetes", "german_credit")
MULTI_DIRS = ("iris", "winequality_red")


def _model_files(dirs, pattern="*.json") -> list[str]:
    root = shared_benchmarks()
    if root is None:
        return ["<missing>"]  # one test id, skipped (or failed in CI) by the shared_dir fixture
    out = []
    for d in dirs:
        for p in sorted((root / d).glob(pattern)):
            if p.name not in ("encoding_map.json", "feature_map.json"):
                out.append(f"{d}/{p.name}")
    return out


def _chen(pattern: str) -> list[str]:
    root = shared_benchmarks()
    if root is None:
        return ["<missing>"]
    return sorted(str(p.relative_to(root)) for p in (root / "chen2019").glob(pattern))


def _chen_dumps() -> list[str]:
    return (
        [p for p in _chen("*/*.json") if not p.endswith(".resaved.json")]
        if shared_benchmarks()
        else ["<missing>"]
    )


def _thresholds(ens) -> list[np.ndarray]:
    ths = [[] for _ in range(ens.n_features)]
    for t in ens.trees:
        inner = t.feature >= 0
        for f, th in zip(t.feature[inner].tolist(), t.threshold[inner].tolist()):
            ths[f].append(th)
    return [np.unique(np.asarray(v, dtype=np.float64)) for v in ths]


def probe_rows(ens, rng: np.random.Generator, n: int = N_ROWS) -> dict[str, np.ndarray]:
    """Random rows, rows on thresholds, just below thresholds (float32), and with NaNs."""
    ths = _thresholds(ens)
    d = ens.n_features
    lo = np.array([t.min() - 1.0 if len(t) else -1.0 for t in ths])
    hi = np.array([t.max() + 1.0 if len(t) else 1.0 for t in ths])
    rand = rng.uniform(lo, hi, size=(n, d))
    on = rand.copy()
    for f, t in enumerate(ths):
        if len(t):
            on[:, f] = t[rng.integers(len(t), size=n)]
    on = on.astype(np.float32).astype(np.float64)
    below = np.nextafter(on.astype(np.float32), np.float32(-np.inf)).astype(np.float64)
    above = np.nextafter(on.astype(np.float32), np.float32(np.inf)).astype(np.float64)
    nan = np.where(rng.random((n, d)) < 0.3, np.nan, np.where(rng.random((n, d)) < 0.5, on, rand))
    return {
        "random": rand,
        "on-threshold": on,
        "below-threshold": below,
        "above-threshold": above,
        "missing": nan,
    }


def xgb_proba(booster, X: np.ndarray, objective: str | None = None) -> np.ndarray:
    """Class probabilities from xgboost itself."""
    dm = xgb.DMatrix(
        X, missing=np.nan, feature_names=booster.feature_names, feature_types=booster.feature_types
    )
    if objective == "multi:softmax":
        raw = booster.predict(dm, output_margin=True)
        z = np.exp(raw - raw.max(axis=1, keepdims=True))
        return z / z.sum(axis=1, keepdims=True)
    p = np.asarray(booster.predict(dm), dtype=np.float64)
    return np.stack([1.0 - p, p], axis=1) if p.ndim == 1 else p


def _objective(booster) -> str:
    return json.loads(booster.save_config())["learner"]["objective"]["name"]


def assert_ir_matches(ens, booster, X_by_kind, n_cols: int | None = None) -> None:
    obj = _objective(booster)
    for kind, X in X_by_kind.items():
        X_ir = X if n_cols is None else X[:, :n_cols]
        got = ens.proba(X_ir)
        want = xgb_proba(booster, X, obj)
        assert got.shape == want.shape, kind
        diff = float(np.max(np.abs(got - want)))
        assert diff <= TOL, f"{kind} rows: max |IR - xgboost| = {diff:.3g}"


@functools.lru_cache(maxsize=8)
def _booster(path: Path):
    return xgb.Booster(model_file=str(path))


@functools.lru_cache(maxsize=8)
def _load(path: Path):
    return load_model(path)


# ---- benchmark models -----------------------------------------------------------------
@pytest.mark.shared
@pytest.mark.parametrize("name", _model_files(BINARY_DIRS))
def test_binary_benchmark_ir_matches_xgboost_predict(shared_dir, name):
    path = shared_dir / name
    ens = _load(path)
    assert ens.n_classes == 2
    assert_ir_matches(ens, _booster(path), probe_rows(ens, np.random.default_rng(0)))


@pytest.mark.shared
@pytest.mark.parametrize("name", _model_files(BINARY_DIRS))
def test_binary_benchmark_ir_matches_xgboost_on_data_rows(shared_dir, name):
    path = shared_dir / name
    ens = _load(path)
    import pandas as pd

    df = pd.read_csv(path.parent / "test.csv")
    # the label is the last column ("label", or "income" for adult)
    X = df.iloc[:N_ROWS, : ens.n_features].to_numpy(dtype=np.float64)
    assert df.shape[1] == ens.n_features + 1
    assert_ir_matches(ens, _booster(path), {"data": X})


@pytest.mark.shared
@pytest.mark.parametrize("name", _model_files(MULTI_DIRS))
def test_multiclass_benchmark_ir_matches_xgboost_predict(shared_dir, name):
    path = shared_dir / name
    ens = _load(path)
    assert ens.n_classes > 2
    assert_ir_matches(ens, _booster(path), probe_rows(ens, np.random.default_rng(1)))


@pytest.mark.shared
@pytest.mark.parametrize("name", _chen("*/*.resaved.json"))
def test_chen2019_resaved_ir_matches_xgboost_predict(shared_dir, name):
    path = shared_dir / name
    ens = _load(path)
    assert_ir_matches(ens, _booster(path), probe_rows(ens, np.random.default_rng(2)))


@pytest.mark.shared
@pytest.mark.parametrize("name", _chen_dumps())
def test_chen2019_dump_ir_matches_xgboost_on_the_resaved_model(shared_dir, name):
    path = shared_dir / name
    resaved = path.with_name(path.stem + ".resaved.json")
    ens = _load(path)
    booster = _booster(resaved)
    n_full = int(booster.num_features())
    assert ens.n_features <= n_full
    rows = probe_rows(ens, np.random.default_rng(3))
    # the dump does not know the unused trailing features: pad with values no tree reads
    padded = {
        k: np.hstack([X, np.zeros((len(X), n_full - ens.n_features))]) for k, X in rows.items()
    }
    assert_ir_matches(ens, booster, padded, n_cols=ens.n_features)


@pytest.mark.shared
@pytest.mark.parametrize("name", _chen_dumps())
def test_chen2019_dump_replayer_agrees_with_the_resaved_model(shared_dir, name):
    path = shared_dir / name
    resaved = path.with_name(path.stem + ".resaved.json")
    ens = _load(path)
    assert ens.replayer is not None
    booster = _booster(resaved)
    n_full = int(booster.num_features())
    for kind, X in probe_rows(ens, np.random.default_rng(4)).items():
        got = np.asarray(ens.replayer.predict_proba(X), dtype=np.float64)
        Xp = np.hstack([X, np.zeros((len(X), n_full - ens.n_features))])
        want = xgb_proba(booster, Xp)
        diff = float(np.max(np.abs(got - want)))
        assert diff <= TOL, f"{kind} rows: max |dump replayer - xgboost| = {diff:.3g}"


@pytest.mark.shared
def test_binary_benchmark_intercept_is_the_logit_of_base_score(shared_dir):
    ens = load_model(shared_dir / "adult" / "adult_t2_d2.json")
    p = 1.0 / (1.0 + np.exp(-ens.intercept[0]))
    assert abs(p - 0.2408) < 1e-3


# ---- in-memory models ------------------------------------------------------------------
@pytest.fixture(scope="module")
def cancer():
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    return X.astype(np.float64), y


def _multiclass_labels(X) -> np.ndarray:
    # three classes from the first two columns' terciles of a linear score
    s = X[:, 0] / X[:, 0].std() + X[:, 1] / X[:, 1].std()
    return np.digitize(s, np.quantile(s, [1 / 3, 2 / 3]))


def _with_nans(X: np.ndarray, rng) -> np.ndarray:
    Xn = X.copy()
    Xn[rng.random(X.shape) < 0.1] = np.nan
    return Xn


@pytest.fixture(scope="module")
def binary_classifier(cancer):
    X, y = cancer
    rng = np.random.default_rng(5)
    clf = xgb.XGBClassifier(
        n_estimators=20, max_depth=3, learning_rate=0.3, n_jobs=1, random_state=0
    )
    clf.fit(_with_nans(X, rng), y)
    return clf


def test_in_memory_xgbclassifier_ir_matches_predict_proba(cancer, binary_classifier):
    X, _ = cancer
    ens = load_model(binary_classifier)
    rows = probe_rows(ens, np.random.default_rng(6)) | {"data": X[:N_ROWS]}
    for kind, R in rows.items():
        diff = float(np.max(np.abs(ens.proba(R) - binary_classifier.predict_proba(R))))
        assert diff <= TOL, f"{kind} rows: {diff:.3g}"


def test_in_memory_booster_ir_matches_predict(binary_classifier):
    booster = binary_classifier.get_booster()
    ens = load_model(booster)
    assert_ir_matches(ens, booster, probe_rows(ens, np.random.default_rng(7)))


def test_in_memory_model_has_a_replayer_that_matches_the_ir(binary_classifier):
    ens = load_model(binary_classifier)
    X = probe_rows(ens, np.random.default_rng(8))["missing"]
    assert np.max(np.abs(ens.replayer.predict_proba(X) - ens.proba(X))) <= TOL


@pytest.mark.parametrize("objective", ["multi:softprob", "multi:softmax"])
def test_in_memory_multiclass_ir_matches_xgboost(cancer, objective):
    X, _ = cancer
    y = _multiclass_labels(X)
    rng = np.random.default_rng(9)
    clf = xgb.XGBClassifier(
        n_estimators=10, max_depth=3, objective=objective, n_jobs=1, random_state=0
    )
    clf.fit(_with_nans(X, rng), y)
    ens = load_model(clf)
    assert ens.n_classes == 3
    booster = clf.get_booster()
    rows = probe_rows(ens, np.random.default_rng(10)) | {"data": X[:N_ROWS]}
    assert_ir_matches(ens, booster, rows)


@pytest.mark.parametrize("objective", ["multi:softprob", "multi:softmax"])
def test_in_memory_multiclass_predicted_class_matches_xgboost(cancer, objective):
    X, _ = cancer
    y = _multiclass_labels(X)
    clf = xgb.XGBClassifier(
        n_estimators=10, max_depth=3, objective=objective, n_jobs=1, random_state=0
    )
    clf.fit(X, y)
    ens = load_model(clf)
    R = probe_rows(ens, np.random.default_rng(11))["on-threshold"]
    assert np.array_equal(ens.proba(R).argmax(axis=1), clf.predict(R))


def test_ubj_file_ir_matches_xgboost(tmp_path, binary_classifier):
    path = tmp_path / "model.ubj"
    binary_classifier.get_booster().save_model(str(path))
    ens = _load(path)
    assert_ir_matches(ens, _booster(path), probe_rows(ens, np.random.default_rng(12)))


def test_ubj_multiclass_file_ir_matches_xgboost(tmp_path, cancer):
    X, _ = cancer
    clf = xgb.XGBClassifier(
        n_estimators=6, max_depth=2, objective="multi:softprob", n_jobs=1, random_state=0
    )
    clf.fit(X, _multiclass_labels(X))
    path = tmp_path / "multi.ubj"
    clf.get_booster().save_model(str(path))
    ens = _load(path)
    assert_ir_matches(ens, _booster(path), probe_rows(ens, np.random.default_rng(13)))


# ---- what a fitted estimator's own predict uses -----------------------------------------
def _early_stopped(X, y, **kw):
    """An estimator whose early stopping kept fewer rounds than its booster holds: the
    validation labels are flipped, so every round past the first makes it worse."""
    clf = xgb.XGBClassifier(
        n_estimators=10,
        max_depth=2,
        learning_rate=0.9,
        early_stopping_rounds=2,
        n_jobs=1,
        random_state=0,
        **kw,
    )
    clf.fit(X, y, eval_set=[(X, 1 - y)], verbose=False)
    assert clf.best_iteration + 1 < clf.get_booster().num_boosted_rounds()
    return clf


def test_early_stopped_xgbclassifier_is_read_with_the_rounds_its_predict_uses(cancer):
    X, y = cancer
    clf = _early_stopped(X, y)
    ens = load_model(clf)
    assert len(ens.trees) == clf.best_iteration + 1
    rows = probe_rows(ens, np.random.default_rng(14)) | {"data": X[:N_ROWS]}
    for kind, R in rows.items():
        diff = float(np.max(np.abs(ens.proba(R) - clf.predict_proba(R))))
        assert diff <= TOL, f"{kind} rows: {diff:.3g}"
        assert np.max(np.abs(ens.replayer.predict_proba(R) - clf.predict_proba(R))) <= TOL


def test_a_file_saved_after_early_stopping_warns_that_every_round_is_read(cancer, tmp_path):
    from treesens.compiler.errors import TreesensWarning

    X, y = cancer
    clf = _early_stopped(X, y)
    clf.save_model(tmp_path / "m.json")
    with pytest.warns(TreesensWarning, match="best_iteration"):
        ens = load_model(tmp_path / "m.json")
    assert len(ens.trees) == clf.get_booster().num_boosted_rounds()


def test_an_early_stopped_booster_in_memory_warns_that_every_round_is_read(cancer):
    # was: read silently, where a file saved from it warned
    from treesens.compiler.errors import TreesensWarning

    X, y = cancer
    booster = _early_stopped(X, y).get_booster()
    with pytest.warns(
        TreesensWarning, match=r"the Booster records early stopping.*iteration_range"
    ):
        ens = load_model(booster)
    assert len(ens.trees) == booster.num_boosted_rounds()


def test_an_early_stopped_estimator_is_read_without_the_warning(cancer):
    import warnings

    X, y = cancer
    clf = _early_stopped(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_model(clf)


def _forest_file(cancer, tmp_path, best_iteration: int) -> Path:
    """Five rounds of three parallel trees, saved recording ``best_iteration``."""
    X, y = cancer
    params = {"num_parallel_tree": 3, "subsample": 0.7, "max_depth": 2, "nthread": 1}
    booster = xgb.train(params, xgb.DMatrix(X, y), 5)
    booster.set_attr(best_iteration=str(best_iteration))
    booster.save_model(tmp_path / "forest.json")
    return tmp_path / "forest.json"


def test_a_forest_file_whose_early_stopping_kept_every_round_does_not_warn(cancer, tmp_path):
    # was: "treesens reads all 15 rounds ... predicts with the first 5", its trees counted
    import warnings

    path = _forest_file(cancer, tmp_path, best_iteration=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ens = load_model(path)
    assert len(ens.trees) == 15


def test_a_forest_files_early_stopping_warning_counts_rounds_not_trees(cancer, tmp_path):
    from treesens.compiler.errors import TreesensWarning

    path = _forest_file(cancer, tmp_path, best_iteration=2)
    with pytest.warns(TreesensWarning, match="reads all 5 rounds.*with the first 3"):
        load_model(path)


def test_early_stopped_categorical_xgbclassifier_keeps_its_category_names():
    import pandas as pd

    rng = np.random.default_rng(15)
    X = pd.DataFrame(
        {"a": rng.normal(size=300), "k": pd.Categorical(rng.choice(list("pqrs"), 300))}
    )
    y = ((X.a + (X.k == "q")) > 0.3).astype(int).to_numpy()
    clf = _early_stopped(X, y, enable_categorical=True)
    ens = load_model(clf)
    assert ens.features[1].categories == ("p", "q", "r", "s")
    codes = np.c_[X.a, X.k.cat.codes]
    assert np.max(np.abs(ens.proba(codes) - clf.predict_proba(X))) <= TOL


def test_xgb_estimator_with_a_number_as_missing_is_refused(cancer):
    from treesens.compiler.errors import UnsupportedModelError

    X, y = cancer
    clf = xgb.XGBClassifier(n_estimators=3, max_depth=2, missing=0.0, n_jobs=1).fit(X, y)
    with pytest.raises(UnsupportedModelError, match=r"missing=0\.0"):
        load_model(clf)


def test_xgbclassifier_whose_predict_proba_returns_the_logitraw_margin_is_refused(cancer):
    # was: answered in sigmoid(margin), while this object's predict_proba gave the margin
    from treesens.compiler.errors import UnsupportedModelError

    X, y = cancer
    params = dict(n_estimators=3, max_depth=2, n_jobs=1, objective="binary:logitraw")
    clf = xgb.XGBClassifier(**params).fit(X, y)
    with pytest.raises(UnsupportedModelError, match=r"binary:logitraw.*get_booster"):
        load_model(clf)


def test_the_booster_of_a_logitraw_xgbclassifier_is_read_as_sigmoid_of_its_margin(cancer):
    X, y = cancer
    params = dict(n_estimators=3, max_depth=2, n_jobs=1, objective="binary:logitraw")
    booster = xgb.XGBClassifier(**params).fit(X, y).get_booster()
    ens = load_model(booster)
    margin = booster.predict(xgb.DMatrix(X[:50]), output_margin=True)
    assert np.max(np.abs(ens.proba(X[:50])[:, 1] - 1 / (1 + np.exp(-margin)))) <= TOL


def test_two_class_softprob_model_is_read_as_a_softmax_of_two_classes(cancer):
    # was: "tree 1 is malformed: it adds to class 1", a valid model refused
    X, y = cancer
    params = {"objective": "multi:softprob", "num_class": 2, "max_depth": 2, "nthread": 1}
    booster = xgb.train(params, xgb.DMatrix(X, y), 3)
    ens = load_model(booster)
    assert (ens.n_classes, len(ens.trees)) == (2, 6)
    assert_ir_matches(ens, booster, probe_rows(ens, np.random.default_rng(16)))
