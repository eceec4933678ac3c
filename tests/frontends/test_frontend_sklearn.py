"""scikit-learn frontend: the IR's own evaluation equals the estimator's predict.

Rows: random, exactly on every threshold (and one ulp either side, in float32 and
float64), NaN rows where the estimator accepts NaN, every category (HistGradientBoosting).
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.ensemble import (  # noqa: E402
    AdaBoostRegressor,
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

from treesens.compiler.errors import InputError, UnsupportedModelError  # noqa: E402
from treesens.readers.formats import sklearn as sf  # noqa: E402
from treesens.readers.load import load_model  # noqa: E402

TOL = 1e-6


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X[:, 2] = rng.integers(0, 5, n) * 3
    Xn = X.copy()
    Xn[rng.random(n) < 0.15, 0] = np.nan
    y = ((X[:, 1] > 0.2) ^ (X[:, 2] == 6)).astype(int)
    y3 = y + (X[:, 3] > 1)
    return X, Xn, y, y3


def probe_rows(ens, nan=True, seed=1, codes=None):
    rng = np.random.default_rng(seed)
    R = rng.normal(size=(200, ens.n_features))
    R[:, 2] = rng.integers(0, 5, 200) * 3 if codes is None else rng.integers(0, codes, 200)
    rows = [R]
    for t in ens.trees:
        for k in range(t.n_nodes):
            if t.feature[k] < 0 or t.is_categorical(k) or not np.isfinite(t.threshold[k]):
                continue
            th = float(t.threshold[k])
            for v in (
                th,
                np.nextafter(th, -np.inf),
                np.nextafter(th, np.inf),
                float(np.nextafter(np.float32(th), np.float32(np.inf))),
                float(np.nextafter(np.float32(th), np.float32(-np.inf))),
            ):
                r = R[:1].copy()
                r[0, t.feature[k]] = v
                rows.append(r)
    if nan:
        m = R[:30].copy()
        m[:, 0] = np.nan
        m[::2, 1] = np.nan
        rows.append(m)
    if codes is not None:
        c = np.repeat(R[:1], codes + 1, axis=0)
        c[:, 2] = list(range(codes)) + [np.nan]
        rows.append(c)
    return np.concatenate(rows)


def assert_matches(ens, X):
    rep = ens.replayer
    d_raw = np.abs(ens.raw(X) - rep.predict_raw(X)).max()
    d_p = np.abs(ens.proba(X) - rep.predict_proba(X)).max()
    assert d_raw <= TOL, f"raw differs by {d_raw}"
    assert d_p <= TOL, f"probabilities differ by {d_p}"


CASES = {
    "dt": (lambda: DecisionTreeClassifier(max_depth=4, random_state=0), True),
    "rf": (lambda: RandomForestClassifier(15, max_depth=4, random_state=0), True),
    "et": (lambda: ExtraTreesClassifier(15, max_depth=4, random_state=0), True),
    "gb": (lambda: GradientBoostingClassifier(n_estimators=15, max_depth=3, random_state=0), False),
    "gb-exp": (
        lambda: GradientBoostingClassifier(
            n_estimators=15, max_depth=3, loss="exponential", random_state=0
        ),
        False,
    ),
    "gb-zero": (
        lambda: GradientBoostingClassifier(
            n_estimators=15, max_depth=3, init="zero", random_state=0
        ),
        False,
    ),
    "hgb": (lambda: HistGradientBoostingClassifier(max_iter=15, max_depth=3, random_state=0), True),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("multiclass", [False, True])
def test_matches_predict(name, multiclass):
    make, nan = CASES[name]
    if name == "gb-exp" and multiclass:
        pytest.skip("exponential loss is binary only")
    X, Xn, y, y3 = _data()
    est = make().fit(Xn if nan else X, y3 if multiclass else y)
    ens = sf.from_estimator(est)
    assert ens.op == "<="
    assert ens.cast == ("float64" if name == "hgb" else "float32")
    assert ens.n_classes == (3 if multiclass else 2)
    if not multiclass:
        assert ens.n_outputs == 1
    assert_matches(ens, probe_rows(ens, nan=nan))


def test_tree_values_are_fractions():
    X, _, y, _ = _data()
    est = DecisionTreeClassifier(max_depth=3).fit(X, y)
    assert np.allclose(est.tree_.value[:, 0, :].sum(axis=1), 1.0), (
        "sklearn >= 1.4 stores class fractions"
    )


def test_hist_gradient_boosting_categorical_codes():
    X, Xn, y, y3 = _data()
    for target in (y, y3):
        est = HistGradientBoostingClassifier(
            max_iter=15, max_depth=3, categorical_features=[2], random_state=0
        ).fit(Xn, target)
        ens = sf.from_estimator(est)
        f = ens.features[2]
        assert f.kind == "categorical" and f.categories == ("0", "3", "6", "9", "12")
        assert any(t.categories is not None for t in ens.trees)
        assert_matches(ens, probe_rows(ens, codes=5))


def test_hist_gradient_boosting_nan_in_a_categorical_feature_is_missing_not_a_category():
    X, Xn, y, _ = _data()
    Xn = Xn.copy()
    Xn[::4, 2] = np.nan
    est = HistGradientBoostingClassifier(
        max_iter=15, max_depth=3, categorical_features=[2], random_state=0
    ).fit(Xn, y)
    ens = sf.from_estimator(est)
    assert ens.features[2].categories == ("0", "3", "6", "9", "12")
    assert_matches(ens, probe_rows(ens, codes=5))  # probe rows include NaN


def test_hist_gradient_boosting_pandas_categories():
    pd = pytest.importorskip("pandas")
    X, Xn, y, _ = _data()
    df = pd.DataFrame(Xn, columns=["a", "b", "c", "d"])
    df["c"] = pd.Categorical(np.array(list("uvwxy"))[(X[:, 2] // 3).astype(int)])
    est = HistGradientBoostingClassifier(
        max_iter=15, max_depth=3, categorical_features="from_dtype", random_state=0
    ).fit(df, y)
    ens = load_model(est)
    assert ens.feature_names == ["a", "b", "c", "d"]
    assert ens.features[2].categories == tuple("uvwxy")
    assert_matches(ens, probe_rows(ens, codes=5))


def test_rejects_unsupported_regressors_and_pipeline_steps():
    from sklearn.decomposition import PCA
    from sklearn.pipeline import make_pipeline

    X, _, y, _ = _data(200)
    with pytest.raises(UnsupportedModelError, match="not supported"):
        load_model(AdaBoostRegressor(n_estimators=2).fit(X, y.astype(float)))
    with pytest.raises(UnsupportedModelError, match="step 'PCA' is not supported"):
        load_model(make_pipeline(PCA(2), DecisionTreeClassifier()).fit(X, y))
    with pytest.raises(InputError, match="not fitted"):
        load_model(RandomForestClassifier())


def test_trusted_joblib_file_loads(tmp_path):
    import joblib

    X, _, y, _ = _data(300)
    est = RandomForestClassifier(5, max_depth=3, random_state=0).fit(X, y)
    p = tmp_path / "rf.joblib"
    joblib.dump(est, p)
    ens = load_model(p, trust_pickle=True)
    assert_matches(ens, probe_rows(ens, nan=False))
    bad = tmp_path / "bad.pkl"
    bad.write_bytes(b"not a pickle at all")
    with pytest.raises(InputError, match="cannot load"):
        load_model(bad, trust_pickle=True)
    skops_file = tmp_path / "m.skops"
    skops_file.write_bytes(b"PK")
    with pytest.raises(InputError):
        load_model(skops_file)


CHURN_MODELS = {
    "rf": (
        lambda: RandomForestClassifier(30, max_depth=4, class_weight="balanced", random_state=0),
        ["tenure", "Contract", "InternetService"],
    ),
    "et": (
        lambda: ExtraTreesClassifier(30, max_depth=4, class_weight="balanced", random_state=0),
        ["Contract"],
    ),
    "gb": (
        lambda: GradientBoostingClassifier(n_estimators=30, max_depth=3, random_state=0),
        ["tenure"],
    ),
    "hgb": (
        lambda: HistGradientBoostingClassifier(max_iter=30, max_depth=4, random_state=0),
        ["Contract"],
    ),
    "dt": (
        lambda: DecisionTreeClassifier(max_depth=4, class_weight="balanced", random_state=0),
        ["tenure", "Contract", "InternetService"],
    ),
}


@pytest.mark.parametrize("name", sorted(CHURN_MODELS))
def test_churn_check_gives_validated_witness(name, shared_dir):
    pd = pytest.importorskip("pandas")
    import treesens

    df = pd.read_csv(shared_dir / "churn" / "train.csv")
    X, y = df.drop(columns="label"), df["label"].to_numpy()
    make, vary = CHURN_MODELS[name]
    est = make().fit(X, y)
    r = treesens.check(est, vary=vary, gap=0.2, timeout=60)
    assert r.status == "sensitive" and r.validated, (r.status, r.error, r.message)
    p = est.predict_proba(pd.DataFrame([r.witness["x1"], r.witness["x2"]]))[:, 1]
    assert p[0] >= 0.7 and p[1] <= 0.3
    for f in X.columns:
        if f not in vary:
            assert r.witness["x1"][f] == r.witness["x2"][f]


def test_churn_check_with_solver_only(shared_dir):
    """The same on HistGradientBoosting with the heuristic off: the solver's answer is replayed."""
    pd = pytest.importorskip("pandas")
    from treesens.driver import solve_query
    from treesens.interfaces.api import make_query

    df = pd.read_csv(shared_dir / "churn" / "train.csv")
    X, y = df.drop(columns="label"), df["label"].to_numpy()
    est = GradientBoostingClassifier(n_estimators=20, max_depth=3, random_state=0).fit(X, y)
    ens = load_model(est)
    q = make_query(["tenure"], gap=0.2, timeout=60).planned(options=(("heuristic", False),))
    r = solve_query(ens, q)
    assert r.status == "sensitive" and r.validated and r.stats.get("found_by") == "cpsat", (
        r.status,
        r.error,
    )


def test_a_multiclass_model_whose_labels_are_not_positions_warns_how_classes_are_numbered():
    from sklearn.ensemble import RandomForestClassifier

    from treesens.compiler.errors import TreesensWarning

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y = np.array([0, 2, 5])[(X[:, 0] > 0).astype(int) + (X[:, 1] > 0)]
    m = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
    with pytest.warns(TreesensWarning, match=r"class labels are \[0, 2, 5\].*class 1 is label 2"):
        load_model(m)


def test_a_binary_model_with_named_labels_says_whose_probability_p_class_1_is():
    from sklearn.ensemble import RandomForestClassifier

    from treesens.compiler.errors import TreesensWarning

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y = np.where(X[:, 0] > 0, "reject", "hire")
    m = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
    with pytest.warns(TreesensWarning, match=r"labels are \[hire, reject\].*of label reject"):
        load_model(m)


def test_a_multiclass_model_whose_labels_are_the_strings_of_0_to_k_minus_1_does_not_warn():
    """Labels read as text from a CSV ('0', '1', '2'): class 1 is label '1', nothing to
    warn of (the warning said 'labels are [0, 1, 2] ... class 1 is label 1')."""
    import warnings

    from sklearn.ensemble import RandomForestClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y = np.array(["0", "1", "2"])[(X[:, 0] > 0).astype(int) + (X[:, 1] > 0)]
    m = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_model(m).n_classes == 3
