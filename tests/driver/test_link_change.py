"""A change of at least delta, and the largest change, of regressors whose prediction is
a nonlinear increasing link of the raw score (exp: Poisson, gamma, Tweedie; sigmoid:
XGBoost's reg:logistic in its regressor reading): a check is answered on every installed
backend by an outer approximation refined with tangent cuts, the largest change by the
box search (or bisection over checks), in agreement with brute force on tiny models,
every pair replayed with the library's own predict."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import treesens
from treesens.backends.registry import available
from treesens.compiler import link_change
from treesens.compiler.errors import InputError
from treesens.compiler.link_change import rounding_band
from treesens.compiler.query import FeatureBound, FeatureRelation
from treesens.driver import backend as backend_stage
from treesens.driver.solve import solve_query
from treesens.questions.query_build import make_query
from treesens.search.gap_boxes import root_bound
from treesens.search.gap_search import level_encodings, link_bound
from treesens.search.pair_boxes import pair_tables
from treesens.search.pair_scope import applies, pair_encoding
from treesens.tests.conftest import treesens_here
from treesens.tests.oracle import brute_force_largest_change, cell_grid, interval_values

xgb = pytest.importorskip("xgboost")
lgb = pytest.importorskip("lightgbm")

BACKENDS = [b for b in ("cpsat", "highs", "cbc", "gurobi", "z3") if available(b)]
# the backend's encoding alone (the box search declines these queries anyway)
SOLVER_ONLY = {"box_search": False, "heuristic": False}


def _data(n: int = 120, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    z = 1.5 * X[:, 0] + X[:, 1] * X[:, 2] + 0.2 * rng.normal(size=n)
    return X, z


def _xgb(objective: str):
    def fit(X, z):
        y = 1.0 / (1.0 + np.exp(-z)) if objective == "reg:logistic" else np.exp(z / 2.0)
        est = xgb.XGBRegressor(n_estimators=4, max_depth=2, objective=objective, nthread=1)
        return est.fit(X, y)

    return fit


def _lgb(objective: str):
    def fit(X, z):
        est = lgb.LGBMRegressor(
            n_estimators=4, max_depth=2, objective=objective, verbose=-1, num_threads=1
        )
        return est.fit(X, np.exp(z / 2.0))

    return fit


TINY = {
    "xgboost-poisson": _xgb("count:poisson"),
    "xgboost-gamma": _xgb("reg:gamma"),
    "xgboost-tweedie": _xgb("reg:tweedie"),
    "xgboost-logistic": _xgb("reg:logistic"),
    "lightgbm-poisson": _lgb("poisson"),
}


def _model(name: str, seed: int = 0):
    """The estimator and its Ensemble (reg:logistic: its regressor reading, whose
    prediction is sigmoid(raw); loaded, it reads as a binary classifier)."""
    X, z = _data(seed=seed)
    est = TINY[name](X, z)
    ens = treesens.load_model(est)
    return est, ens.as_regressor() if ens.probability else ens


def _either_side(best: float) -> tuple[float, float]:
    eps = 1e-3 * max(1e-3, abs(best))
    return best - eps, best + eps


def _replayed_change(est, r) -> float:
    """f(x1) - f(x2) by the library's predict on the witness."""
    rows = np.array([list(r.witness[x].values()) for x in ("x1", "x2")], dtype=np.float64)
    p = np.asarray(est.predict(rows), dtype=np.float64)
    return float(p[0] - p[1])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(TINY))
def test_delta_agrees_with_brute_force_either_side_of_the_largest_change(name, backend):
    est, ens = _model(name)
    f = ens.feature_names[0]
    below, above = _either_side(brute_force_largest_change(ens, [f]))
    reached = treesens.check(ens, vary=[f], delta=below, backend=backend, **SOLVER_ONLY)
    assert reached.status == "sensitive" and reached.validated
    assert abs(_replayed_change(est, reached)) >= below
    beyond = treesens.check(ens, vary=[f], delta=above, backend=backend, **SOLVER_ONLY)
    assert beyond.status == "insensitive"


@pytest.mark.parametrize("name", sorted(TINY))
def test_delta_witness_predictions_are_the_librarys(name):
    est, ens = _model(name)
    r = treesens.check(ens, vary=[ens.feature_names[0]], delta=0.1)
    for x in ("x1", "x2"):
        row = np.array([list(r.witness[x].values())], dtype=np.float64)
        assert r.outputs[x][0] == float(est.predict(row)[0])


def _largest_changes_with_x1_at_most(ens, bound: float) -> dict[str, float]:
    """The largest change from x1 to x2 up, down and either way over every threshold
    cell, with x1.f0 <= bound (a cell's value is its smallest, so a cell below the bound
    has one)."""
    X, ns, nv = cell_grid(ens, ["f0"])
    pred = ens.predict(X).reshape(ns, nv)
    low = X[:nv, 0] <= bound
    up = float((pred.max(axis=1) - pred[:, low].min(axis=1)).max())
    down = float((pred[:, low].max(axis=1) - pred.min(axis=1)).max())
    return {"up": up, "down": down, "either": max(up, down)}


@pytest.mark.parametrize("backend", [b for b in BACKENDS if b in ("cpsat", "highs", "z3")])
@pytest.mark.parametrize("name", ["xgboost-poisson", "xgboost-logistic"])
@pytest.mark.parametrize("direction", ["up", "down", "either"])
def test_direction_on_one_input_only_bounds_agrees_with_brute_force(direction, name, backend):
    """With x1.f0 held low (a bound on one input), "up" and "down" are different
    questions; "either" is a choice between the two directions' rows (and their cuts)."""
    _, ens = _model(name)
    bound = float(np.median(interval_values(ens, 0)))
    best = _largest_changes_with_x1_at_most(ens, bound)[direction]
    answers = []
    for delta in _either_side(best):
        q = make_query(["f0"], delta=delta, direction=direction, backend=backend)
        r = solve_query(ens, q.with_(bounds=(FeatureBound("f0", hi=bound, copies=(1,)),)))
        answers.append(r.status)
        if r.status == "sensitive":
            assert r.witness["x1"]["f0"] <= bound
            moved = r.outputs["x2"][0] - r.outputs["x1"][0]
            assert {"up": moved, "down": -moved, "either": abs(moved)}[direction] >= delta
    assert answers == ["sensitive", "insensitive"]


@pytest.mark.parametrize("method", ["boxes", "bisection"])
@pytest.mark.parametrize("name", sorted(TINY))
def test_largest_change_is_brute_forces_within_the_tolerance(name, method):
    _, ens = _model(name, seed=2)
    f = ens.feature_names[0]
    best = brute_force_largest_change(ens, [f])
    r = treesens.max_gap(ens, vary=[f], tolerance=1e-3, box_search=method == "boxes")
    m = r.max_gap
    assert m["proven"] and m["kind"] == "change" and m["method"] == method
    # the lower bound is measured by the library (float32), brute force by the IR
    f32 = 1e-6 * max(1.0, best)
    assert m["lower"] - f32 <= best <= m["upper"] + f32
    # relative to the change, never closer than the link's rounding
    assert m["upper"] - m["lower"] <= max(m["tolerance"] * m["lower"], rounding_band(ens))
    assert r.validated and r.outputs["x1"][0] - r.outputs["x2"][0] == pytest.approx(m["lower"])


def test_box_bound_on_a_change_through_a_link_holds_for_every_box_corner():
    """The bound a box of the largest-change search gives (x1's highest raw score, x2's
    lowest, their largest difference, through the link) is at least the change of every
    pair in it: checked on the root box against brute force."""
    _, ens = _model("xgboost-tweedie", seed=4)
    for f in ens.feature_names:
        enc = level_encodings(pair_encoding(ens, make_query([f], delta=1.0, direction="up")))
        root = root_bound(pair_tables(enc[0]), lambda u: u, link_bound(ens.link))
        assert root >= brute_force_largest_change(ens, [f])


@pytest.mark.parametrize("name", ["xgboost-poisson", "xgboost-logistic"])
def test_largest_change_of_a_feature_the_model_ignores_is_none(name):
    """The search asks no change below the library's rounding through the link, where
    pairs no tangent separates from the curve would fill it."""
    X, z = _data()
    est = TINY[name](X, 3.0 * X[:, 0])
    ens = treesens.load_model(est)
    if ens.probability:
        ens = ens.as_regressor()
    r = treesens.max_gap(ens, vary=["f2"])
    assert r.status == "insensitive" and r.max_gap["proven"] and r.max_gap["lower"] is None


def test_sweep_ranks_a_poisson_regressors_features_by_largest_change():
    _, ens = _model("xgboost-poisson")
    found = {r.features[0]: r.max_gap for r in treesens.sweep(ens, max_gap=True)}
    best = {f: brute_force_largest_change(ens, [f]) for f in ens.feature_names}
    for f, b in best.items():
        f32 = 1e-6 * max(1.0, b)
        assert (found[f]["lower"] or 0.0) - f32 <= b <= found[f]["upper"] + f32
    assert sorted(found, key=lambda f: -(found[f]["lower"] or 0.0)) == sorted(
        best, key=lambda f: -best[f]
    )


def test_a_spurious_solution_of_the_outer_approximation_is_cut_off(monkeypatch):
    """Without initial tangents, the first solutions here lie below the curve (the
    library's change is under delta): they are cut off and the search goes on to the
    right answers."""
    monkeypatch.setattr(link_change, "INITIAL_TANGENTS", 0)
    est, ens = _model("xgboost-gamma")
    below, above = _either_side(brute_force_largest_change(ens, ["f1"]))
    beyond = treesens.check(ens, vary=["f1"], delta=above, **SOLVER_ONLY)
    assert beyond.status == "insensitive" and beyond.stats["cuts"] >= 1
    reached = treesens.check(ens, vary=["f1"], delta=below, **SOLVER_ONLY)
    assert reached.status == "sensitive" and reached.stats["cuts"] >= 1
    assert abs(_replayed_change(est, reached)) >= below


def _library_largest_change(est, ens, vary) -> float:
    """The largest change over every threshold cell, by the library's own predict."""
    X, ns, nv = cell_grid(ens, vary)
    pred = np.asarray(est.predict(X), dtype=np.float64).reshape(ns, nv)
    return float((pred.max(axis=1) - pred.min(axis=1)).max())


def test_a_sigmoid_regressor_asked_at_its_exact_largest_change_answers_as_its_library():
    """At D = the exact largest change, the only pairs reaching it are ones the library's
    float32 sigmoid puts a few 1e-8 short of D: near misses within the link's rounding,
    cut (not a disagreement), and the answer is the library's (here: none reaches D)."""
    est, ens = _model("xgboost-logistic")
    f = ens.feature_names[1]
    best = brute_force_largest_change(ens, [f])
    assert _library_largest_change(est, ens, [f]) < best
    r = treesens.check(ens, vary=[f], delta=best, backend="highs", **SOLVER_ONLY)
    assert r.status == "insensitive", r.error


class _ShrunkSigmoid:
    """The regressor's own predictions pulled toward 0.5 by 0.1 percent: within the
    replay's agreement, yet a change moves by far more than float32 rounds it."""

    library = "fake"

    def __init__(self, ens):
        self.ens = ens

    def predict_raw(self, X):
        return self.ens.raw(X)

    def predict(self, X):
        return 0.5 + (self.ens.predict(X) - 0.5) * (1.0 - 1e-3)


def test_a_sigmoid_regressor_whose_library_misses_a_change_past_its_rounding_is_an_error():
    _, ens = _model("xgboost-logistic")
    f = ens.feature_names[1]
    delta = brute_force_largest_change(ens, [f]) - 5e-5
    lying = dataclasses.replace(ens, replayer=_ShrunkSigmoid(ens))
    r = treesens.check(lying, vary=[f], delta=delta, backend="highs", **SOLVER_ONLY)
    assert r.status == "error" and "disagrees" in r.error


def test_too_many_rounds_of_cuts_answer_unknown_saying_so(monkeypatch):
    monkeypatch.setattr(link_change, "INITIAL_TANGENTS", 0)
    monkeypatch.setattr(backend_stage, "MAX_CUTS", 0)
    _, ens = _model("xgboost-gamma")
    above = _either_side(brute_force_largest_change(ens, ["f1"]))[1]
    r = treesens.check(ens, vary=["f1"], delta=above, **SOLVER_ONLY)
    assert r.status == "unknown" and "tangent cuts on the exp link" in r.message


def test_box_search_never_reads_the_outer_approximation_of_a_check():
    """The check's own rows are an outer approximation: the pair tables decline them."""
    _, ens = _model("xgboost-gamma")
    q = make_query(["f0"], delta=0.5, direction="up")
    assert not applies(pair_encoding(ens, q))


@pytest.mark.parametrize("direction", ["up", "down", "either"])
@pytest.mark.parametrize("name", sorted(TINY))
def test_box_backend_answers_a_check_through_the_link_both_ways(name, direction):
    """``--backend boxes`` searches the largest change's tables with every box bounded
    under D dropped: a replayed pair reaching D in the direction asked (the tables' pair
    goes down; up takes it swapped), or a proof that no box does."""
    est, ens = _model(name, seed=1)
    f = ens.feature_names[0]
    below, above = _either_side(brute_force_largest_change(ens, [f]))
    way = {"direction": direction, "backend": "boxes"}
    reached = treesens.check(ens, vary=[f], delta=below, **way)
    moved = -_replayed_change(est, reached)  # f(x2) - f(x1)
    assert reached.status == "sensitive"
    assert {"up": moved, "down": -moved, "either": abs(moved)}[direction] >= below
    beyond = treesens.check(ens, vary=[f], delta=above, **way)
    assert beyond.status == "insensitive" and beyond.stats["proved_by"] == "box search"


@pytest.mark.parametrize("direction", ["up", "down"])
def test_box_backend_answers_a_check_on_one_inputs_bound_as_brute_force_does(direction):
    """The tables' pairs go down: for "up" they are taken swapped, x1's bound with them."""
    _, ens = _model("xgboost-poisson")
    bound = float(np.median(interval_values(ens, 0)))
    best = _largest_changes_with_x1_at_most(ens, bound)[direction]
    answers = []
    for delta in _either_side(best):
        q = make_query(["f0"], delta=delta, direction=direction, backend="boxes")
        r = solve_query(ens, q.with_(bounds=(FeatureBound("f0", hi=bound, copies=(1,)),)))
        assert r.backend == "boxes", r.error
        answers.append(r.status)
        if r.status == "sensitive":
            assert r.witness["x1"]["f0"] <= bound
    assert answers == ["sensitive", "insensitive"]


def _largest_changes_related(ens, op: str) -> dict[str, float]:
    """The largest change from x1 to x2 up and down over every pair of threshold cells of
    f0 with x1.f0 <op> x2.f0 (op non-strict: a cell's one value may pair with itself)."""
    X, ns, nv = cell_grid(ens, ["f0"])
    pred = ens.predict(X).reshape(ns, nv)
    v = X[:nv, 0]
    related = v[:, None] <= v[None, :] if op == "<=" else v[:, None] >= v[None, :]
    down = np.where(related[None], pred[:, :, None] - pred[:, None, :], -np.inf)
    up = np.where(related[None], pred[:, None, :] - pred[:, :, None], -np.inf)
    return {"up": float(up.max()), "down": float(down.max())}


@pytest.mark.parametrize("op", ["<=", ">="])
@pytest.mark.parametrize("direction", ["up", "down"])
def test_box_backend_answers_a_check_under_a_relation_as_brute_force_does(direction, op):
    """The tables' pairs go down: for "up" they are taken swapped, the relation with
    them (a Gamma model rising in f0: up with x1.f0 <= x2.f0 was proved insensitive
    below its largest rise, and up with >= never found its pair)."""
    _, ens = _model("xgboost-gamma")
    best = _largest_changes_related(ens, op)[direction]
    relation = (FeatureRelation("f0", 1, op, 2),)
    answers = []
    for delta in _either_side(best):
        q = make_query(["f0"], delta=delta, direction=direction, backend="boxes")
        r = solve_query(ens, q.with_(relations=relation))
        assert r.backend == "boxes", r.error
        answers.append(r.status)
        if r.status == "sensitive":
            x1, x2 = r.witness["x1"]["f0"], r.witness["x2"]["f0"]
            assert x1 <= x2 if op == "<=" else x1 >= x2
    assert answers == ["sensitive", "insensitive"]


def test_sigmoid_change_of_one_or_more_is_refused():
    _, ens = _model("xgboost-logistic")
    with pytest.raises(InputError, match=r"lie in \(0, 1\)"):
        treesens.check(ens, vary=["f0"], delta=1.0)


def test_sigmoid_change_below_its_float32_rounding_is_refused():
    _, ens = _model("xgboost-logistic")
    with pytest.raises(InputError, match="float32 rounding"):
        treesens.check(ens, vary=["f0"], delta=1e-7)


def test_cli_delta_and_max_gap_on_a_poisson_regressor(tmp_path):
    est, _ = _model("xgboost-poisson")
    path = tmp_path / "r.json"
    est.save_model(path)
    ens = treesens.load_model(str(path))
    below, above = _either_side(brute_force_largest_change(ens, ["f0"]))
    for extra, status in (
        (["--delta", repr(below)], "sensitive"),
        (["--delta", repr(above)], "insensitive"),
        (["--max-gap"], "sensitive"),
    ):
        p = treesens_here("check", path, "--json", "--vary", "f0", *extra)
        assert p.returncode == 0, p.stderr
        assert f'"status": "{status}"' in p.stdout


def test_emitted_problem_says_it_is_an_outer_approximation():
    from treesens.interfaces.cli.emit import emit_text

    _, ens = _model("xgboost-poisson")
    text = emit_text(ens, make_query(["f0"], delta=1.0), "lp")
    assert "delta 1 either" in text.splitlines()[0]
    assert "outer approximation" in text.splitlines()[1]
