"""A regressor's change by at least delta from x1 to x2 (up: f(x2) - f(x1) >= D, down:
f(x1) - f(x2) >= D, or either) and its largest change (max gap): answered on every installed backend and by the
box search, in agreement with brute force on tiny regressors, every pair replayed with
the library's own predict."""

from __future__ import annotations

import numpy as np
import pytest

import treesens
from treesens.backends.registry import available
from treesens.compiler.errors import InputError
from treesens.compiler.query import FeatureBound
from treesens.driver.solve import solve_query
from treesens.questions.query_build import make_query
from treesens.tests.conftest import treesens_here
from treesens.tests.oracle import brute_force_largest_change

xgb = pytest.importorskip("xgboost")
lgb = pytest.importorskip("lightgbm")
sk_ensemble = pytest.importorskip("sklearn.ensemble")
sk_tree = pytest.importorskip("sklearn.tree")

BACKENDS = [b for b in ("cpsat", "highs", "cbc", "gurobi", "z3") if available(b)]
# the search without the box search and the heuristic: the backend's encoding alone
SOLVER_ONLY = {"box_search": False, "heuristic": False}

TINY = {
    "xgboost": lambda X, y: xgb.XGBRegressor(n_estimators=4, max_depth=2, nthread=1).fit(X, y),
    "lightgbm": lambda X, y: lgb.LGBMRegressor(
        n_estimators=4, max_depth=2, verbose=-1, num_threads=1
    ).fit(X, y),
    "random-forest": lambda X, y: sk_ensemble.RandomForestRegressor(
        3, max_depth=2, random_state=0
    ).fit(X, y),
    "extra-trees": lambda X, y: sk_ensemble.ExtraTreesRegressor(3, max_depth=2, random_state=0).fit(
        X, y
    ),
    "gradient-boosting": lambda X, y: sk_ensemble.GradientBoostingRegressor(
        n_estimators=3, max_depth=2, random_state=0
    ).fit(X, y),
    "hist-boosting": lambda X, y: sk_ensemble.HistGradientBoostingRegressor(
        max_iter=4, max_depth=2, learning_rate=0.5
    ).fit(X, y),
    "decision-tree": lambda X, y: sk_tree.DecisionTreeRegressor(max_depth=3).fit(X, y),
}


def _data(n: int = 120, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = 2.0 * X[:, 0] + X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=n)
    return X, y


def _model(name: str, seed: int = 0):
    X, y = _data(seed=seed)
    est = TINY[name](X, y)
    return est, treesens.load_model(est)


def _either_side(best: float) -> tuple[float, float]:
    eps = 1e-3 * max(1.0, abs(best))
    return best - eps, best + eps


def _change(r) -> float:
    return r.outputs["x1"][0] - r.outputs["x2"][0]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(TINY))
def test_delta_agrees_with_brute_force_either_side_of_the_largest_change(name, backend):
    _, ens = _model(name)
    f = ens.feature_names[0]
    below, above = _either_side(brute_force_largest_change(ens, [f]))
    reached = treesens.check(ens, vary=[f], delta=below, backend=backend, **SOLVER_ONLY)
    assert reached.status == "sensitive" and reached.validated
    assert abs(_change(reached)) >= below
    beyond = treesens.check(ens, vary=[f], delta=above, backend=backend, **SOLVER_ONLY)
    assert beyond.status == "insensitive"


@pytest.mark.parametrize("name", sorted(TINY))
def test_delta_by_the_box_search_agrees_with_brute_force(name):
    _, ens = _model(name, seed=1)
    f = ens.feature_names[0]
    below, above = _either_side(brute_force_largest_change(ens, [f]))
    assert treesens.check(ens, vary=[f], delta=below).status == "sensitive"
    beyond = treesens.check(ens, vary=[f], delta=above)
    assert beyond.status == "insensitive"
    assert beyond.stats.get("proved_by") == "box search"


def test_delta_witness_predictions_are_the_librarys():
    est, ens = _model("xgboost")
    r = treesens.check(ens, vary=["f0"], delta=0.5)
    for x in ("x1", "x2"):
        row = np.array([list(r.witness[x].values())], dtype=np.float64)
        assert r.outputs[x][0] == float(est.predict(row)[0])


def test_direction_up_puts_the_higher_prediction_on_x2():
    """Up: the prediction goes up from x1 to x2."""
    _, ens = _model("lightgbm")
    r = treesens.check(ens, vary=[ens.feature_names[0]], delta=0.5, direction="up")
    assert r.status == "sensitive" and -_change(r) >= 0.5


def test_direction_down_puts_the_higher_prediction_on_x1():
    _, ens = _model("lightgbm")
    r = treesens.check(ens, vary=[ens.feature_names[0]], delta=0.5, direction="down")
    assert r.status == "sensitive" and _change(r) >= 0.5


def test_direction_up_reads_as_the_prediction_going_up_in_the_verdict_line():
    _, ens = _model("lightgbm")
    r = treesens.check(ens, vary=[ens.feature_names[0]], delta=0.5, direction="up")
    assert "f(x2) - f(x1) >= 0.5" in str(r).splitlines()[0]


@pytest.mark.parametrize("direction", ["up", "down"])
def test_direction_means_the_same_in_check_and_audit(direction):
    """In an audit x1 is the row: up there is x2 above the row, as up in a check is
    f(x2) above f(x1)."""
    _, ens = _model("xgboost")
    X, _ = _data(30)
    df = treesens.audit(ens, X, ["f0"], delta=0.5, direction=direction)
    flipped = df[df["status"] == "flippable"]
    audit_sign = float(np.sign((flipped["p_x2"] - flipped["decision"]).iloc[0]))
    r = treesens.check(ens, vary=["f0"], delta=0.5, direction=direction)
    check_sign = float(np.sign(r.outputs["x2"][0] - r.outputs["x1"][0]))
    assert audit_sign == check_sign == {"up": 1.0, "down": -1.0}[direction]


@pytest.mark.parametrize("direction", ["up", "down", "either"])
def test_direction_on_one_input_only_bounds_agrees_with_enumeration(direction):
    """With x1.f0 held below 0 (a bound on one input), "up" and "down" are different
    questions; "either" is one of the two."""
    _, ens = _model("xgboost")
    X, _ = _data()
    grid = np.linspace(-4, 4, 801)
    rows = np.repeat(X[:20], len(grid), axis=0)
    rows[:, 0] = np.tile(grid, 20)
    pred = ens.predict(rows).reshape(20, len(grid))
    low, high = grid <= 0, grid > -np.inf  # x1.f0 low, x2.f0 anywhere
    up = max(float(p[high].max() - p[low].min()) for p in pred)
    down = max(float(p[low].max() - p[high].min()) for p in pred)
    delta = 0.95 * {"up": up, "down": down, "either": max(up, down)}[direction]
    q = make_query(["f0"], delta=delta, direction=direction)
    r = solve_query(ens, q.with_(bounds=(FeatureBound("f0", hi=0.0, copies=(1,)),)))
    assert r.status == "sensitive" and r.witness["x1"]["f0"] <= 0.0
    moved = -_change(r)  # f(x2) - f(x1)
    assert {"up": moved >= delta, "down": -moved >= delta, "either": abs(moved) >= delta}[direction]


@pytest.mark.parametrize("name", sorted(TINY))
def test_largest_change_is_brute_forces_within_the_tolerance(name):
    _, ens = _model(name, seed=2)
    f = ens.feature_names[0]
    best = brute_force_largest_change(ens, [f])
    r = treesens.max_gap(ens, vary=[f])
    assert r.max_gap["proven"] and r.max_gap["kind"] == "change"
    # the lower bound is measured by the library (float32 sums for XGBoost and LightGBM),
    # brute force by the IR (float64): they agree to float32 rounding
    f32 = 1e-6 * max(1.0, best)
    assert r.max_gap["lower"] - f32 <= best <= r.max_gap["upper"] + f32
    # the tolerance is relative to the change
    assert r.max_gap["upper"] - r.max_gap["lower"] <= r.max_gap["tolerance"] * r.max_gap["lower"]
    assert r.validated and _change(r) == pytest.approx(r.max_gap["lower"])


@pytest.mark.parametrize("name", ["xgboost", "random-forest"])
def test_largest_change_by_bisection_brackets_brute_force(name):
    _, ens = _model(name, seed=3)
    f = ens.feature_names[0]
    best = brute_force_largest_change(ens, [f])
    r = treesens.max_gap(ens, vary=[f], box_search=False, tolerance=1e-3)
    assert r.max_gap["proven"] and r.max_gap["method"] == "bisection"
    f32 = 1e-6 * max(1.0, best)
    assert r.max_gap["lower"] - f32 <= best <= r.max_gap["upper"] + f32


def test_largest_change_of_a_feature_the_model_ignores_is_none():
    X, y = _data()
    y = 2.0 * X[:, 0]
    ens = treesens.load_model(TINY["xgboost"](X, y))
    r = treesens.max_gap(ens, vary=["f2"])
    assert r.status == "insensitive" and r.max_gap["proven"] and r.max_gap["lower"] is None


def test_sweep_ranks_a_regressors_features_by_largest_change():
    _, ens = _model("xgboost")
    results = treesens.sweep(ens, max_gap=True)
    best = {f: brute_force_largest_change(ens, [f]) for f in ens.feature_names}
    found = {r.features[0] if r.features else r.query: r.max_gap for r in results}
    for f, b in best.items():
        lower = found[f]["lower"] or 0.0
        assert lower - 1e-6 * max(1.0, b) <= b <= found[f]["upper"] + 1e-6 * max(1.0, b)
    ranked = sorted(best, key=lambda f: -best[f])
    assert sorted(found, key=lambda f: -(found[f]["lower"] or 0.0)) == ranked


def test_delta_on_a_classifier_is_refused():
    X, y = _data()
    ens = treesens.load_model(xgb.XGBClassifier(n_estimators=2, max_depth=2).fit(X, y > 0))
    with pytest.raises(InputError, match="delta .* is for regressors"):
        treesens.check(ens, vary=["f0"], delta=0.5)


@pytest.mark.parametrize("delta", [0.0, -1.0, float("nan"), float("inf")])
def test_delta_must_be_a_finite_number_above_zero(delta):
    _, ens = _model("xgboost")
    with pytest.raises(InputError, match="delta"):
        treesens.check(ens, vary=["f0"], delta=delta)


def test_delta_with_a_threshold_form_is_refused():
    _, ens = _model("xgboost")
    with pytest.raises(InputError, match=r"above=1 below=0 and delta=1: give one of"):
        treesens.check(ens, vary=["f0"], delta=1.0, above=1.0, below=0.0)


def test_direction_without_delta_is_refused():
    _, ens = _model("xgboost")
    with pytest.raises(InputError, match="direction=up goes with delta=D"):
        treesens.check(ens, vary=["f0"], above=1.0, below=0.0, direction="up")


def test_delta_result_states_the_change_asked():
    _, ens = _model("xgboost")
    r = treesens.check(ens, vary=["f0"], delta=0.5, direction="down")
    assert r.to_dict()["delta"] == {"at_least": 0.5, "direction": "down"}
    assert "f(x1) - f(x2) >= 0.5" in str(r)


def test_cli_delta_answers_both_ways(tmp_path):
    est, _ = _model("xgboost")
    path = tmp_path / "r.json"
    est.save_model(path)
    ens = treesens.load_model(str(path))
    below, above = _either_side(brute_force_largest_change(ens, ["f0"]))
    for delta, status in ((below, "sensitive"), (above, "insensitive")):
        p = treesens_here("check", path, "--json", "--vary", "f0", "--delta", repr(delta))
        assert p.returncode == 0, p.stderr
        assert f'"status": "{status}"' in p.stdout


def test_cli_delta_on_a_classifier_exits_2_with_one_line(tmp_path):
    X, y = _data()
    path = tmp_path / "c.json"
    xgb.XGBClassifier(n_estimators=2, max_depth=2).fit(X, y > 0).save_model(path)
    p = treesens_here("check", path, "--vary", "f0", "--delta", "1")
    assert p.returncode == 2 and p.stderr.strip().count("\n") == 0


# ---- the audit of a regressor: per row, the predictions F reaches ----------------------

from treesens.tests.oracle import feature_thresholds, interval_values  # noqa: E402


def _reach_by_enumeration(ens, row: np.ndarray, f: int) -> tuple[float, float]:
    values = interval_values(ens, f, feature_thresholds(ens)[f], "independent")
    X = np.repeat(row[None, :], len(values), axis=0)
    X[:, f] = values
    pred = ens.predict(X)
    return float(pred.min()), float(pred.max())


@pytest.mark.parametrize("name", ["xgboost", "lightgbm", "random-forest"])
def test_audit_reach_is_the_range_enumeration_finds(name):
    _, ens = _model(name)
    X, _ = _data(20, seed=4)
    df = treesens.audit(ens, X, [ens.feature_names[0]], delta=0.5)
    for i in range(len(X)):
        low, high = _reach_by_enumeration(ens, X[i], 0)
        f32 = 1e-6 * max(1.0, abs(high))
        assert df["reach_low"][i] == pytest.approx(low, abs=f32)
        assert df["reach_high"][i] == pytest.approx(high, abs=f32)


@pytest.mark.parametrize("direction", ["up", "down", "either"])
def test_audit_row_is_flippable_when_its_reach_moves_by_delta(direction):
    _, ens = _model("xgboost")
    X, _ = _data(30, seed=5)
    delta = 0.7
    df = treesens.audit(ens, X, ["f0"], delta=delta, direction=direction)
    up = df["reach_high"] - df["decision"] >= delta
    down = df["decision"] - df["reach_low"] >= delta
    want = {"up": up, "down": down, "either": up | down}[direction]
    assert list(df["status"] == "flippable") == list(want)


def test_audit_x2_prediction_is_the_librarys_and_moves_by_delta():
    est, ens = _model("xgboost")
    X, _ = _data(10, seed=6)
    df = treesens.audit(ens, X, ["f0"], delta=0.5)
    for i in np.flatnonzero(df["status"] == "flippable"):
        x2 = X[i].copy()
        x2[0] = df["x2_f0"][i]
        assert float(est.predict(x2[None, :])[0]) == df["p_x2"][i]
        assert abs(df["p_x2"][i] - df["decision"][i]) >= 0.5


def test_audit_solver_fallback_agrees_with_enumeration():
    """Rows the enumeration leaves to the solver (a limit of 0 candidates) get the same
    answers from a query per row."""
    from treesens.questions.audit import AuditWork, answer_block
    from treesens.questions.audit_spec import make_spec, make_target
    from treesens.readers.data import load_data

    _, ens = _model("xgboost")
    X, _ = _data(12, seed=7)
    ds = load_data(X, ens)
    spec = make_spec(ens, ds, ["f0"], make_target(ens, delta=0.6))
    rows = np.arange(len(X))
    exact = answer_block(AuditWork(ens, ds, spec), rows)
    solved = answer_block(AuditWork(ens, ds, spec, 30.0, max_candidates=0), rows)
    assert [s == "flippable" for s in exact.status] == [s == "flippable" for s in solved.status]
    assert "unknown" not in solved.status


def test_cli_audit_of_a_regressor_answers_every_row(tmp_path):
    est, _ = _model("xgboost")
    est.save_model(tmp_path / "r.json")
    X, y = _data(40, seed=8)
    import pandas as pd

    pd.DataFrame(X, columns=["f0", "f1", "f2"]).assign(label=y).to_csv(tmp_path / "d.csv")
    p = treesens_here(
        "audit", tmp_path / "r.json", "--data", tmp_path / "d.csv", "--vary", "f0",
        "--delta", "0.5", "--json",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    lines = [line for line in p.stdout.splitlines() if line.startswith("{")]
    assert len(lines) == 40 and all('"reach": [' in line for line in lines)


@pytest.mark.parametrize("direction", ["up", "down", "either"])
def test_audit_of_a_log_link_regressor_agrees_between_enumeration_and_solver(direction):
    """An anchored row asks x2's prediction against a known value, so the solver path is
    exact through any increasing link (here exp, Poisson)."""
    from treesens.questions.audit import AuditWork, answer_block
    from treesens.questions.audit_spec import make_spec, make_target
    from treesens.readers.data import load_data

    X, _ = _data(12, seed=9)
    est = xgb.XGBRegressor(n_estimators=6, max_depth=3, objective="count:poisson", nthread=1)
    ens = treesens.load_model(est.fit(X, np.exp(X[:, 0])))
    ds = load_data(X, ens)
    spec = make_spec(ens, ds, ["f0"], make_target(ens, delta=1.0, direction=direction))
    rows = np.arange(len(X))
    exact = answer_block(AuditWork(ens, ds, spec), rows)
    solved = answer_block(AuditWork(ens, ds, spec, 30.0, max_candidates=0), rows)
    assert [s == "flippable" for s in exact.status] == [s == "flippable" for s in solved.status]


def _largest_library_change():
    """Three XGBoost stumps and f1's largest change by the library's own predict (float32
    sums) over every threshold cell: a change a pair meets exactly, while the box search
    meets first a pair of the same per-tree differences whose float32 sums miss it; and
    the fitted estimator."""
    from treesens.tests.oracle import cell_grid

    rng = np.random.default_rng(12)
    rng.integers(2, 4)  # (the draw that chose 3 features)
    X = np.round(rng.normal(0, 2, (150, 3)), 1)
    y = np.abs(X @ rng.normal(size=3) + rng.normal(0, 1, 150)) * 3
    est = xgb.XGBRegressor(n_estimators=3, max_depth=1, n_jobs=1, random_state=12).fit(X, y)
    ens = treesens.load_model(est)
    G, ns, nv = cell_grid(ens, ["f1"])
    p = np.asarray(est.predict(G), dtype=np.float64).reshape(ns, nv)
    return ens, float((p.max(axis=1) - p.min(axis=1)).max()), est


def test_a_near_miss_of_a_change_does_not_rule_its_box_out():
    # a box the pair row resolves fixes each tree's difference, not its two values: the
    # box search ruled it out on its corner pair's float32 sums, and proved "insensitive"
    ens, best, _ = _largest_library_change()
    for backend in ("cpsat", "boxes"):
        r = treesens.check(ens, vary="f1", delta=best, direction="either", backend=backend)
        assert r.status != "insensitive", backend
    r = treesens.check(ens, vary="f1", delta=best, direction="either")
    assert r.status == "sensitive" and r.validated


def test_a_change_s_near_miss_refuses_a_certificate_rather_than_write_one_the_checker_rejects(
    tmp_path,
):
    # just above the library's largest change: insensitive; the certifying box search
    # meets pairs whose float64 change reaches it and whose library change does not. A
    # "replay" step cannot rule their box out (it fixes each tree's difference only)
    _, best, est = _largest_library_change()
    model = tmp_path / "m.json"
    est.save_model(model)
    delta = float(np.nextafter(np.float32(best), np.float32(np.inf)))
    cert = tmp_path / "c.json"
    r = treesens.check(str(model), vary="f1", delta=delta, direction="either", certificate=cert)
    assert r.status == "insensitive"
    assert r.proof.why_not == "the box search found a pair it could not rule out"


def _loose_bound_regressor():
    """c* = 1 (tree A, on f0), under a loose bound: trees B and C add +-0.005 to the
    change where f1 < 0.5 (cancelling there, so only splitting f1 shows it), and D and E,
    on f0, cancel each other while widening the leaf values' bound to about 101."""
    from treesens.compiler.ensemble import IDENTITY, Ensemble, Feature, ModelOrigin, Tree

    def tree(split_f1: bool, lo: float, hi: float) -> Tree:
        if not split_f1:  # f0 < 0.5 -> lo, else hi
            return Tree([0, -1, -1], [0.5, 0, 0], [1, -1, -1], [2, -1, -1], [True] * 3,
                        np.array([[0.0], [lo], [hi]]), (0,))  # fmt: skip
        # f1 < 0.5 -> (f0 < 0.5 -> lo, else hi), else 0
        return Tree([1, 0, -1, -1, -1], [0.5, 0.5, 0, 0, 0], [1, 3, -1, -1, -1],
                    [2, 4, -1, -1, -1], [True] * 5,
                    np.array([[0.0], [0.0], [0.0], [lo], [hi]]), (0,))  # fmt: skip

    trees = (tree(False, 0.0, 1.0), tree(True, 0.0, 0.005), tree(True, 0.005, 0.0),
             tree(False, 50.0, 0.0), tree(False, 0.0, 50.0))  # fmt: skip
    feats = tuple(Feature(f"f{i}", "real", 0.0, 1.0) for i in range(2))
    return Ensemble(trees=trees, features=feats, n_classes=0, intercept=(0.0,), link=IDENTITY,
                    op="<", cast="float32", origin=ModelOrigin("test", "loose"), replayer=None)  # fmt: skip


@pytest.mark.parametrize("box_search", [True, False])
def test_largest_change_closes_within_the_tolerance_of_the_change_not_of_the_leaf_bound(
    box_search,
):
    """The tolerance of a change is relative to the change: with c* = 1 and the leaf
    values' bound near 101, a bound of 1.005 is searched further, not taken as within
    1e-3 (of the leaf values' bound, 0.1)."""
    ens = _loose_bound_regressor()
    r = treesens.max_gap(ens, vary=["f0"], tolerance=1e-3, box_search=box_search)
    m = r.max_gap
    assert m["proven"] and m["tolerance"] == 1e-3
    assert m["lower"] == pytest.approx(1.0) and m["upper"] <= 1.001 + 1e-9
