"""Categorical splits and missing values in the encoding, on all three libraries.

* a brute-force oracle over every category code / threshold interval / NaN agrees with
  the solver on the exact best margin gap (sensitive just below it, insensitive above);
* models built so that only a category, or only a NaN, or only LightGBM's zero flips
  the decision give validated witnesses that use exactly that.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest

from treesens.compiler.encode import encode, node_yes
from treesens.driver import solve_query
from treesens.interfaces.api import make_query
from treesens.readers.details import declare
from treesens.readers.load import load_model

lgb = pytest.importorskip("lightgbm")
xgb = pytest.importorskip("xgboost")


def _data(n=1200, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=n)
    a[rng.random(n) < 0.2] = np.nan
    b = rng.normal(size=n)
    c = rng.integers(0, 6, n)
    y = (np.isin(c, [1, 4]) ^ (np.nan_to_num(a, nan=3.0) > 1.0) ^ (b > 1.2)).astype(int)
    return a, b, c, y


def _xgb_model():
    pd = pytest.importorskip("pandas")
    a, b, c, y = _data()
    df = pd.DataFrame({"a": a, "b": b, "c": pd.Categorical(c, categories=range(6))})
    return xgb.XGBClassifier(
        n_estimators=6,
        max_depth=3,
        enable_categorical=True,
        tree_method="hist",
        max_cat_to_onehot=1,
        random_state=0,
    ).fit(df, y)


def _lgb_model():
    a, b, c, y = _data()
    b = np.where(np.random.default_rng(1).random(len(b)) < 0.2, 0.0, b)
    X = np.column_stack([a, b, c])
    return lgb.train(
        dict(
            objective="binary",
            verbose=-1,
            num_leaves=6,
            max_depth=3,
            min_data_per_group=5,
            cat_smooth=1,
            max_cat_to_onehot=1,
            zero_as_missing=False,
        ),
        lgb.Dataset(X, y, categorical_feature=[2], feature_name=["a", "b", "c"]),
        6,
    )


def _lgb_zero_model():
    a, b, c, y = _data()
    X = np.column_stack([a, b, c])
    return lgb.train(
        dict(
            objective="binary",
            verbose=-1,
            num_leaves=6,
            max_depth=3,
            min_data_per_group=5,
            cat_smooth=1,
            max_cat_to_onehot=1,
            zero_as_missing=True,
        ),
        lgb.Dataset(X, y, categorical_feature=[2], feature_name=["a", "b", "c"]),
        6,
    )


def _hgb_model():
    from sklearn.ensemble import HistGradientBoostingClassifier

    pd = pytest.importorskip("pandas")
    a, b, c, y = _data()
    X = pd.DataFrame({"a": a, "b": b, "c": c.astype(float)})
    return HistGradientBoostingClassifier(
        max_iter=6, max_depth=3, categorical_features=[2], random_state=0
    ).fit(X, y)


MODELS = {
    "xgboost": _xgb_model,
    "lightgbm": _lgb_model,
    "lightgbm-zero": _lgb_zero_model,
    "hgb": _hgb_model,
}


@functools.cache
def _ensemble(name: str):
    """MODELS[name] trained and read once per process: the tests only read it."""
    return load_model(MODELS[name]())


def _grid_values(enc, f):
    dom = enc.domains[f]
    vals = (
        [float(c) for c in dom.codes]
        if dom.codes is not None
        else [float(dom.reps[j]) for j in dom.valid]
    )
    if enc.ensemble.features[f].may_be_missing:
        vals.append(np.nan)
    return vals


def brute_force_best_gap(ens, vary: list[int]) -> float:
    """max over pairs equal outside ``vary`` of min(raw(x1), -raw(x2)), by enumeration."""
    q = make_query([ens.feature_names[f] for f in vary], margin_gap=0.0)
    _, enc = encode(ens, q)
    values = [_grid_values(enc, f) for f in range(ens.n_features)]
    grid = np.array(list(itertools.product(*values)), dtype=float)
    raw = ens.raw(grid)[:, 0].reshape([len(v) for v in values])
    axes = tuple(vary)
    hi = raw.max(axis=axes)
    lo = raw.min(axis=axes)
    return float(np.max(np.minimum(hi, -lo)))


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("vary", [["c"], ["a"], ["a", "c"], ["b"]])
@pytest.mark.parametrize("missing", [False, True])
def test_solver_agrees_with_brute_force(name, vary, missing):
    ens = _ensemble(name)
    if missing:
        ens = declare(ens, missing=["a", "b"])
    vidx = [ens.feature_index(v) for v in vary]
    best = brute_force_best_gap(ens, vidx)
    if best <= 0.02:
        pytest.skip(f"no positive gap to probe ({best})")
    for d, expect in ((best - 0.01, "sensitive"), (best + 0.01, "insensitive")):
        q = make_query(vary, margin_gap=d, timeout=60).planned(options=(("heuristic", False),))
        r = solve_query(ens, q)
        assert r.status == expect, (name, vary, missing, d, best, r.status, r.error, r.message)
        if expect == "sensitive":
            assert r.validated


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("vary", [["c"], ["a"], ["a", "c"], ["b"]])
@pytest.mark.parametrize("missing", [False, True])
def test_box_search_alone_agrees_with_brute_force(name, vary, missing):
    """The box search (``--backend boxes``: no solver) over category sets, NaN ranks and
    the zero band: sensitive just below the best margin gap, a proof just above it."""
    ens = _ensemble(name)
    if missing:
        ens = declare(ens, missing=["a", "b"])
    best = brute_force_best_gap(ens, [ens.feature_index(v) for v in vary])
    if best <= 0.02:
        pytest.skip(f"no positive gap to probe ({best})")
    for d, expect in ((best - 0.01, "sensitive"), (best + 0.01, "insensitive")):
        q = make_query(vary, margin_gap=d, timeout=60)
        r = solve_query(ens, q.planned(backend="boxes", options={"heuristic": False}))
        assert r.status == expect, (name, vary, missing, d, best, r.status, r.error, r.message)
        assert expect == "insensitive" or r.validated


def test_node_yes_matches_ir_routing():
    """The encoder's per-node routing of NaN, zero, the zero band and codes is the IR's."""
    for make in (_lgb_zero_model, _lgb_model, _xgb_model, _hgb_model):
        ens = load_model(make())
        probes = [
            np.nan,
            0.0,
            -0.0,
            1e-36,
            -1e-36,
            0.5,
            -0.5,
            1.0,
            2.0,
            3.0,
            4.0,
            5.0,
            7.0,
            1e9,
            -1e9,
        ]
        for t in ens.trees:
            for n in np.flatnonzero(t.feature >= 0).tolist():
                f = int(t.feature[n])
                for v in probes + [float(t.threshold[n])]:
                    x = np.zeros((1, ens.n_features))
                    x[0, f] = v
                    # route from node n: compare with the child the IR's evaluation would take
                    sub = _single_node_tree(t, n)
                    from dataclasses import replace

                    one = replace(ens, trees=(sub,))
                    leaf = int(one.leaf_indices(x)[0, 0])
                    assert (leaf == 1) == node_yes(ens, t, n, v), (make.__name__, n, v)


def _single_node_tree(t, n):
    from treesens.compiler.ensemble import Tree

    cats = None
    if t.categories is not None:
        cats = (t.categories[n], None, None)
    miss = None if t.missing is None else [t.missing[n], 0, 0]
    return Tree(
        feature=[t.feature[n], -1, -1],
        threshold=[t.threshold[n], 0, 0],
        left=[1, -1, -1],
        right=[2, -1, -1],
        default_left=[t.default_left[n], False, False],
        value=[[0.0], [1.0], [2.0]],
        outputs=t.outputs,
        missing=miss,
        categories=cats,
    )


# ---------------------------------------------------------------------------------
# deliberately built models


def test_category_flips_the_decision():
    """Only categories {1, 4, 6} of c raise the churn probability: the witness uses them."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    n = 2000
    names = [f"k{i}" for i in range(8)]
    c = rng.integers(0, 8, n)
    df = pd.DataFrame(
        {"a": rng.normal(size=n), "c": pd.Categorical(np.array(names)[c], categories=names)}
    )
    y = np.isin(c, [1, 4, 6]).astype(int)
    for model in (
        lgb.LGBMClassifier(
            n_estimators=20,
            num_leaves=4,
            max_depth=2,
            min_data_per_group=5,
            cat_smooth=1,
            max_cat_to_onehot=1,
            verbose=-1,
        ).fit(df, y),
        xgb.XGBClassifier(
            n_estimators=20,
            max_depth=2,
            enable_categorical=True,
            tree_method="hist",
            max_cat_to_onehot=1,
        ).fit(df, y),
    ):
        ens = load_model(model)
        if ens.features[1].categories is None:  # xgboost keeps no category names: declare them
            ens = declare(ens, categories={"c": names})
        q = make_query(["c"], gap=0.3, timeout=60).planned(options=(("heuristic", False),))
        r = solve_query(ens, q)
        assert r.status == "sensitive" and r.validated, (type(model).__name__, r.status, r.error)
        w = r.witness
        assert w["x1"]["c"] in ("k1", "k4", "k6") and w["x2"]["c"] not in ("k1", "k4", "k6")
        assert w["x1"]["a"] == w["x2"]["a"]


def _nan_data(n=2000):
    rng = np.random.default_rng(0)
    a = rng.normal(size=n)
    miss = rng.random(n) < 0.3
    a[miss] = np.nan
    b = rng.normal(size=n)
    return np.column_stack([a, b]), miss.astype(int)


def _nan_models():
    from sklearn.ensemble import HistGradientBoostingClassifier

    X, y = _nan_data()
    return {
        "lightgbm": lgb.LGBMClassifier(n_estimators=20, num_leaves=4, max_depth=2, verbose=-1).fit(
            X, y
        ),
        "xgboost": xgb.XGBClassifier(n_estimators=20, max_depth=2).fit(X, y),
        "hgb": HistGradientBoostingClassifier(max_iter=20, max_depth=2).fit(X, y),
    }


def test_nan_flips_the_decision():
    """Only a missing a makes class 1: insensitive over numbers, sensitive with NaN declared."""
    import json
    from dataclasses import replace

    X, _ = _nan_data()
    lo, hi = np.nanmin(X, axis=0), np.nanmax(X, axis=0)
    for name, model in _nan_models().items():
        ens = load_model(model)
        # inside the data's range (xgboost may send values above it the way of NaN)
        ens = ens.with_features(
            tuple(replace(f, lb=float(lo[i]), ub=float(hi[i])) for i, f in enumerate(ens.features))
        )
        a = ens.feature_names[0]
        q = make_query([a], gap=0.3, timeout=60)
        r = solve_query(ens, q)
        assert r.status == "insensitive", (name, r.status, r.witness)
        r = solve_query(declare(ens, missing=[a]), q)
        assert r.status == "sensitive" and r.validated, (name, r.status, r.error)
        assert r.witness["x1"][a] is None and r.witness["x2"][a] is not None
        json.loads(json.dumps(r.witness))  # NaN is shown as null: valid JSON
        assert r.outputs["x1"][1] >= 0.8 and r.outputs["x2"][1] <= 0.2


def test_lightgbm_zero_as_missing_flips_the_decision():
    """With zero_as_missing, 0.0 routes like NaN: the witness uses a zero (no NaN declared)."""
    rng = np.random.default_rng(0)
    n = 2000
    a = rng.normal(size=n)
    zero = rng.random(n) < 0.3
    a[zero] = 0.0
    X = np.column_stack([a, rng.normal(size=n)])
    y = zero.astype(int)
    b = lgb.train(
        dict(objective="binary", verbose=-1, num_leaves=4, max_depth=2, zero_as_missing=True),
        lgb.Dataset(X, y),
        20,
    )
    ens = load_model(b)
    assert any(t.missing is not None and (t.missing == 1).any() for t in ens.trees)
    r = solve_query(
        ens, make_query(["Column_0"], gap=0.3, timeout=60).planned(options=(("heuristic", False),))
    )
    assert r.status == "sensitive" and r.validated, (r.status, r.error)
    x1 = r.witness["x1"]["Column_0"]
    assert abs(x1) <= 1e-35 and r.witness["x2"]["Column_0"] != 0.0


@pytest.mark.parametrize("passes", ["none", "ordering", "unaff,aff"])
def test_passes_switched_off_still_agree(passes):
    ens = declare(_ensemble("lightgbm-zero"), missing=["a", "b"])
    vary = ["a", "c"]
    best = brute_force_best_gap(ens, [0, 2])
    for d, expect in ((best - 0.01, "sensitive"), (best + 0.01, "insensitive")):
        q = make_query(vary, margin_gap=d, timeout=60, passes=passes).planned(
            options=(("heuristic", False),)
        )
        r = solve_query(ens, q)
        assert r.status == expect, (passes, d, best, r.status, r.error)


def test_a_histgradientboosting_category_unseen_in_fit_is_an_input_a_pair_may_use():
    # predict routes a category not seen in fit (4, -1) like NaN; a pair using one reaches
    # a gap of 0.12 that the fit's categories 0..3 do not (0.082 at most)
    import pandas as pd
    from sklearn.ensemble import HistGradientBoostingClassifier

    import treesens

    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(400, 3)), columns=["f0", "f1", "f2"])
    X["f0"] = rng.choice([0, 1, 2, 3], 400).astype(float)
    y = ((X.f0.map({0: -1, 1: 1, 2: 0.5, 3: -0.3}) + X.f1) > 0).astype(int)
    m = HistGradientBoostingClassifier(
        max_iter=3, max_depth=2, random_state=1, categorical_features=[0]
    ).fit(X, y)
    res = treesens.check(m, vary=["f1"], gap=0.11, timeout=60)
    assert res.status == "sensitive" and res.validated
    unseen = (
        X.assign(f0=4.0).iloc[:1].assign(f1=res.witness["x1"]["f1"], f2=res.witness["x1"]["f2"])
    )
    assert m.predict_proba(unseen)[0, 1] == pytest.approx(res.outputs["x1"][1])
