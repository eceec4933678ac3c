"""Data-aware sensitivity: data loading, marginals / utility, cavity clauses, distance."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from treesens.compiler.cavities import (
    Clause,
    Literal,
    check_clauses,
    clause_holds_row,
)
from treesens.compiler.distance import distance_to_data
from treesens.compiler.encode import encode
from treesens.compiler.ensemble import LOGISTIC, Ensemble, Feature, Tree
from treesens.compiler.errors import InputError
from treesens.compiler.ir import check_constraint
from treesens.compiler.passes import Chain, Compiled, passes_for
from treesens.compiler.passes.data_aware import CavityClauses, UtilityObjective, marginals
from treesens.compiler.plan import Plan
from treesens.compiler.query import Query
from treesens.driver.clauses import clauses_for, load_clauses, save_clauses
from treesens.readers.data import load_data
from treesens.search.cavity_learning import learn_clauses
from treesens.tests.conftest import treesens_here


def stump(f: int, t: float, lo: float, hi: float) -> Tree:
    """x_f < t -> lo, else hi."""
    return Tree(
        feature=[f, -1, -1],
        threshold=[t, 0, 0],
        left=[1, -1, -1],
        right=[2, -1, -1],
        default_left=[True, False, False],
        value=[0.0, lo, hi],
        outputs=(0,),
    )


def tiny() -> Ensemble:
    # a: thresholds 0.5 (tree 0); b: thresholds 0.3, 0.7 (trees 1, 2); s: 0.5 (tree 3)
    trees = (
        stump(0, 0.5, -0.5, 0.5),
        stump(1, 0.3, 0.2, -0.2),
        stump(1, 0.7, 0.0, 0.3),
        stump(2, 0.5, -3.0, 3.0),
    )
    feats = (Feature("a", lb=0, ub=1), Feature("b", lb=0, ub=1), Feature("s", lb=0, ub=1))
    return Ensemble(trees=trees, features=feats, n_classes=2, intercept=(0.0,), link=LOGISTIC)


def compiled_for(ens, q):
    problem, enc = encode(ens, q)
    chain = Chain(passes_for(q.plan.passes))
    return chain.apply(Compiled(problem, enc))[0]


# ---- data ---------------------------------------------------------------------------


def test_load_data_by_name_order_and_errors(tmp_path):
    ens = tiny()
    p = tmp_path / "d.csv"
    pd.DataFrame({"b": [0.1, 0.2], "label": [0, 1], "a": [0.9, 0.8], "s": [0, 1]}).to_csv(
        p, index=False
    )
    d = load_data(p, ens)
    assert d.X.tolist() == [[0.9, 0.1, 0.0], [0.8, 0.2, 1.0]]
    p2 = tmp_path / "o.csv"
    pd.DataFrame({"x": [1.0], "y": [2.0], "z": [3.0], "label": [1]}).to_csv(p2, index=False)
    with pytest.raises(InputError, match="matched by name, not by position"):  # not by order
        load_data(p2, ens)
    p3 = tmp_path / "m.csv"
    pd.DataFrame({"a": [1.0], "label": [1]}).to_csv(p3, index=False)
    with pytest.raises(InputError, match="'b'"):
        load_data(p3, ens)
    p4 = tmp_path / "n.csv"
    pd.DataFrame({"a": [1.0, None], "b": [1.0, 2.0], "s": [0, 1]}).to_csv(p4, index=False)
    with pytest.raises(InputError, match=r"n\.csv:3: column 'a': missing value"):
        load_data(p4, ens)
    p5 = tmp_path / "s.csv"
    pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"], "s": [0, 1]}).to_csv(p5, index=False)
    with pytest.raises(InputError, match="column 'b'.*not a number"):
        load_data(p5, ens)
    p6 = tmp_path / "e.csv"
    p6.write_text("a,b,s,label\n")
    with pytest.raises(InputError, match="no rows"):
        load_data(p6, ens)
    with pytest.raises(InputError, match="not found"):
        load_data(tmp_path / "missing.csv", ens)


# ---- marginals and the utility objective -----------------------------------------------


def test_marginals_and_utility_objective():
    ens = tiny()
    X = np.array([[0.1, 0.1, 0.0], [0.2, 0.5, 0.0], [0.9, 0.5, 1.0], [0.8, 0.6, 1.0]])
    q = Query(vary=("s",), plan=Plan(data_aware="prob"))
    c = compiled_for(ens, q)
    enc = c.encoding
    m = marginals(enc, X, alpha=1.0)
    counts_b, probs_b = m[1].counts, m[1].probs
    assert counts_b.tolist() == [1, 3, 0]  # b < 0.3, [0.3, 0.7), >= 0.7
    assert np.allclose(probs_b, [(1 + 1) / 7, (3 + 1) / 7, 1 / 7])  # Laplace: (c+1)/(N+K)
    out, _ = UtilityObjective(X).apply(c)
    obj = out.problem.objective
    assert obj.role == "optimize" and obj.sense == "max"
    # the objective equals sum over both copies of log pi(x_f) (up to its constant)
    qb = enc.pred[0][1]  # b is shared: q_1 (rank < 1), q_2 (rank < 2)
    val = dict(zip(obj.vars, obj.coefs))

    def utility(rank_b):
        v = np.zeros(out.problem.n_vars)
        for r, var in enumerate(qb, start=1):
            v[var] = 1.0 if rank_b < r else 0.0
        return sum(val.get(i, 0.0) * v[i] for i in range(len(v))) + obj.constant

    for r in range(3):  # the b terms (other features' variables all 0 in this check)
        assert utility(r) - utility(0) == pytest.approx(
            2 * (math.log(probs_b[r]) - math.log(probs_b[0]))
        )
    # forbid: the empty interval of b (>= 0.7) is excluded for the shared copy
    out2, _ = UtilityObjective(X, empty="forbid").apply(c)
    forb = [k for k in out2.problem.constraints if k.tag and k.tag[0] == "prob-forbid"]
    assert forb and set(forb) == set(out2.problem.soft_constraints)


def test_smoothing_with_prob_alpha_0_scores_an_empty_interval_as_forbid_does_not_log_0():
    # b's interval >= 0.7 holds no row: with no pseudo-count its share is 0, scored as
    # one row in N + K_f (the dropped forbid rows' score), not math.log(0)
    ens = tiny()
    X = np.array([[0.1, 0.1, 0.0], [0.2, 0.5, 0.0], [0.9, 0.5, 1.0], [0.8, 0.6, 1.0]])
    c = compiled_for(ens, Query(vary=("s",), plan=Plan(data_aware="prob")))
    out, _ = UtilityObjective(X, alpha=0.0).apply(c)
    obj = out.problem.objective
    qb = c.encoding.pred[0][1]
    val = dict(zip(obj.vars, obj.coefs))
    # the step from b's middle interval (3 of 4 rows) to its empty last one
    assert val.get(qb[1], 0.0) == pytest.approx(2 * (math.log(3 / 4) + math.log(4 + 3)))


# ---- cavity clauses ---------------------------------------------------------------------


def test_clauses_find_known_empty_box_and_contain_no_data(tmp_path):
    ens = tiny()
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(400, 3))
    # carve a cavity: no row with a >= 0.5 and b in [0.3, 0.7)
    hole = (X[:, 0] >= 0.5) & (X[:, 1] >= 0.3) & (X[:, 1] < 0.7)
    X = X[~hole]
    clauses = learn_clauses(ens, X, width=2, max_clauses=10, time_budget=20)
    assert clauses
    for c in clauses:
        assert not clause_holds_row(ens, c, X).any()
    boxes = [{lit.feature: (lit.lo, lit.hi) for lit in c.literals} for c in clauses]
    assert {"a": (0.5, math.inf), "b": (0.3, 0.7)} in boxes
    # a file round trip, and rows inside a box make check_clauses drop it
    p = tmp_path / "c.json"
    save_clauses(p, clauses)
    again = load_clauses(p)
    assert again == clauses
    bad = Clause((Literal("a", -math.inf, 0.5),))
    assert check_clauses(ens, again + [bad], X) == clauses


def test_a_clauses_file_in_a_missing_directory_is_an_input_error_and_nothing_is_created(
    tmp_path,
):
    target = tmp_path / "absent" / "c.json"
    with pytest.raises(InputError, match="no directory"):
        clauses_for(tiny(), None, file=target)
    assert not target.parent.exists()


def test_cavity_clause_constraint_excludes_box_for_both_copies():
    ens = tiny()
    q = Query(vary=("b",), plan=Plan(data_aware="clause"))
    c = compiled_for(ens, q)
    clause = Clause((Literal("a", 0.5, math.inf), Literal("b", 0.3, 0.7)))
    out, _ = CavityClauses([clause]).apply(c)
    cons = [k for k in out.problem.constraints if k.tag and k.tag[0] == "cavity"]
    assert len(cons) == 2  # b is varied: one clause per copy
    enc = c.encoding
    n = out.problem.n_vars
    qa = enc.pred[0][0][0]  # a: q_1 = "a < 0.5"
    for copy, con in enumerate(cons):
        qb = enc.pred[copy][1]
        v = np.zeros(n)
        v[qa] = 0.0  # a >= 0.5
        v[qb[0]], v[qb[1]] = 0.0, 1.0  # b in [0.3, 0.7)
        assert not check_constraint(con, v)
        v[qa] = 1.0  # a < 0.5: outside the box
        assert check_constraint(con, v)


# ---- distance ---------------------------------------------------------------------------


def test_distance_zero_inside_and_hand_computed_outside():
    ens = tiny()
    x1 = np.array([0.8, 0.5, 0.9])
    x2 = np.array([0.8, 0.5, 0.1])
    leaves = ens.leaf_indices(np.stack([x1, x2]))
    X = np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]])  # ranges 1
    d, i, _ = distance_to_data(ens, (leaves[0], leaves[1]), {2}, np.vstack([X, [[0.7, 0.4, 0.0]]]))
    assert d == 0.0 and i == 2  # a row in the region (a >= 0.5, 0.3 <= b < 0.7)
    # region: a >= 0.5, b in [0.3, 0.7); rows (0.2, 0.9) and (0.4, 0.1): s is varied
    Y = np.array([[0.2, 0.9, 0.5], [0.4, 0.1, 0.5], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    d, i, per = distance_to_data(ens, (leaves[0], leaves[1]), {2}, Y)
    assert per[0] == pytest.approx(math.hypot(0.5 - 0.2, 0.9 - 0.7))
    assert per[1] == pytest.approx(math.hypot(0.5 - 0.4, 0.3 - 0.1))
    assert per[3] == pytest.approx(1.0 - 0.7)  # b above the region; a inside
    assert i == 1 and d == pytest.approx(per[1])


def test_a_row_on_the_excluded_edge_of_an_integer_features_region_is_a_whole_step_away():
    # g is whole, 0..4: tests g < 3 and g < 4 put x's g = 3 in [3, 4), i.e. g = 3 only
    trees = (stump(0, 3.0, -0.5, 0.5), stump(0, 4.0, 0.2, -0.2), stump(1, 0.5, -3.0, 3.0))
    feats = (Feature("g", kind="integer", lb=0, ub=4), Feature("s", lb=0, ub=1))
    ens = Ensemble(trees=trees, features=feats, n_classes=2, intercept=(0.0,), link=LOGISTIC)
    leaves = ens.leaf_indices(np.array([[3.0, 0.9], [3.0, 0.1]]))
    X = np.array([[0.0, 0.0], [4.0, 0.0]])  # g's range 4
    d, i, per = distance_to_data(ens, (leaves[0], leaves[1]), {1}, X)
    assert per[1] == pytest.approx(1 / 4)  # g = 4 is outside [3, 4): one step from 3
    assert d == pytest.approx(1 / 4) and i == 1


def test_an_integer_features_region_with_an_edge_at_infinity_keeps_its_edges():
    # a column NaN alone reaches (a SimpleImputer's indicator) tests its input at +-inf
    from treesens.compiler.distance import _Side, whole_edges

    ens = Ensemble(
        trees=(stump(0, 3.0, -0.5, 0.5),),
        features=(Feature("g", kind="integer", lb=0, ub=4),),
        n_classes=2,
        intercept=(0.0,),
        link=LOGISTIC,
    )
    assert whole_edges(ens, _Side(lo=math.inf)) == (math.inf, math.inf)
    assert whole_edges(ens, _Side(hi=-math.inf)) == (-math.inf, -math.inf)


# ---- end to end -------------------------------------------------------------------------


def test_end_to_end_small_model(tmp_path, monkeypatch):
    """A tiny ensemble solved with data: realistic values, a distance, every mode."""
    from treesens.interfaces.api import check

    monkeypatch.setenv("TREESENS_CACHE", str(tmp_path / "cache"))
    ens = tiny()
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 1, size=(200, 3)).round(2)
    hole = (X[:, 0] >= 0.5) & (X[:, 1] >= 0.3) & (X[:, 1] < 0.7)
    X = X[~hole]
    df = pd.DataFrame(X, columns=["a", "b", "s"])
    p = tmp_path / "d.csv"
    df.to_csv(p, index=False)
    results = {}
    for mode in ("none", "prob", "clause", "probclause"):
        clauses = {"clause_time": 10} if "clause" in mode else {}
        r = check(ens, ["s"], gap=0.2, data=p, data_aware=mode, timeout=60, **clauses)
        assert r.status == "sensitive" and r.validated, (mode, r.error, r.message)
        assert r.distance is not None and r.stats["nearest_row"]["index"] >= 0
        # witness values of shared features are values seen in the data
        for name in ("a", "b"):
            assert r.witness["x1"][name] in set(df[name].tolist())
        results[mode] = r
    assert results["clause"].stats.get("clauses", 0) >= 1  # the learned cavity is used
    assert results["probclause"].distance <= results["none"].distance + 1e-12


@pytest.mark.slow
def test_end_to_end_adult(shared_dir, tmp_path, monkeypatch):
    from treesens.interfaces.api import check

    monkeypatch.setenv("TREESENS_CACHE", str(tmp_path / "cache"))
    model = shared_dir / "adult" / "adult_t2_d2.json"
    data = shared_dir / "adult" / "train.csv"
    # this 2-tree model never reaches P >= 0.5: insensitive, whatever the data mode; the
    # data's columns name the model's generic features (f7 is `relationship`)
    r = check(
        model,
        ["relationship"],
        gap=0.0,
        data=data,
        data_aware="probclause",
        timeout=120,
        clause_time=10,
    )
    assert r.status == "insensitive"
    r = check(model, ["relationship"], margin_gap=0.0, data=data, timeout=60)
    assert r.status in ("insensitive", "sensitive")


def test_a_box_search_pair_takes_values_seen_in_the_data(tmp_path):
    """--data alone: a pair the box search finds is shown with the data's values (the
    same threshold cells), as the heuristic's and the solver's are."""
    from treesens.interfaces.api import check

    X = np.random.default_rng(1).uniform(0, 1, size=(200, 3)).round(2)
    df = pd.DataFrame(X, columns=["a", "b", "s"])
    p = tmp_path / "d.csv"
    df.to_csv(p, index=False)
    r = check(tiny(), ["s"], gap=0.2, data=p, backend="boxes", heuristic=False, timeout=30)
    assert r.stats["found_by"] == "box search" and r.validated
    for x in ("x1", "x2"):
        for name in ("a", "b", "s"):
            assert r.witness[x][name] in set(df[name].tolist()), (x, name, r.witness)


# ---- a feature that may be missing -------------------------------------------------------


def _sometimes_missing_b() -> Ensemble:
    """tiny() with b possibly missing (NaN goes left, as b < 0.3)."""
    ens = tiny()
    feats = (ens.features[0], Feature("b", lb=0, ub=1, may_be_missing=True), ens.features[2])
    return Ensemble(trees=ens.trees, features=feats, n_classes=2, intercept=(0.0,), link=LOGISTIC)


def _rows_with_missing_b() -> np.ndarray:
    # b: 45 rows missing, 30 below 0.3, 25 at or above 0.7
    b = np.array([np.nan] * 45 + [0.1] * 30 + [0.8] * 25)
    a = np.linspace(0.05, 0.95, 100)
    return np.column_stack([a, b, np.resize([0.2, 0.8], 100)])


def test_a_feature_that_may_be_missing_has_its_shares_and_nans_summing_to_one():
    ens = _sometimes_missing_b()
    c = compiled_for(ens, Query(vary=("s",), plan=Plan(data_aware="prob")))
    m = marginals(c.encoding, _rows_with_missing_b(), alpha=0.0)[1]
    assert m.probs.tolist() == [0.30, 0.0, 0.25] and m.missing == 0.45


def test_a_missing_value_the_data_hold_most_often_is_the_likeliest_pair_value(
    tmp_path, monkeypatch
):
    from treesens.interfaces.api import check

    monkeypatch.setenv("TREESENS_CACHE", str(tmp_path / "cache"))
    p = tmp_path / "d.csv"
    pd.DataFrame(_rows_with_missing_b(), columns=["a", "b", "s"]).to_csv(p, index=False)
    r = check(_sometimes_missing_b(), ["s"], gap=0.2, data=p, data_aware="prob", timeout=60)
    assert r.status == "sensitive" and r.stats["solver_status"] == "optimal"
    assert r.witness["x1"]["b"] is None and r.witness["x2"]["b"] is None


def test_a_feature_every_data_row_misses_scores_its_missing_value_as_the_likeliest(
    tmp_path, monkeypatch
):
    # no row has a value of b: its marginal is all NaN (not "no information": b's values
    # are each as unlikely as an empty interval, NaN is the data's value)
    from treesens.interfaces.api import check

    monkeypatch.setenv("TREESENS_CACHE", str(tmp_path / "cache"))
    X = _rows_with_missing_b()
    X[:, 1] = np.nan
    p = tmp_path / "d.csv"
    pd.DataFrame(X, columns=["a", "b", "s"]).to_csv(p, index=False)
    r = check(_sometimes_missing_b(), ["s"], gap=0.2, data=p, data_aware="prob", timeout=60)
    assert r.status == "sensitive" and r.stats["solver_status"] == "optimal"
    assert r.witness["x1"]["b"] is None and r.witness["x2"]["b"] is None


def test_the_reported_utility_is_the_documented_sum_of_log_shares_with_a_missing_feature(
    tmp_path, monkeypatch
):
    # docs/data-aware.md: pi_f(r) = (count_r + 1) / (N_f + K_f), N_f the rows with a value
    # in an admissible interval or NaN, K_f the intervals plus one for NaN; b (shared)
    # counts twice, s (varied) once per input
    from treesens.interfaces.api import check

    monkeypatch.setenv("TREESENS_CACHE", str(tmp_path / "cache"))
    p = tmp_path / "d.csv"
    pd.DataFrame(_rows_with_missing_b(), columns=["a", "b", "s"]).to_csv(p, index=False)
    r = check(_sometimes_missing_b(), ["s"], gap=0.2, data=p, data_aware="prob", timeout=60)
    a = r.witness["x1"]["a"]
    pa = (50 + 1) / (100 + 2)  # a: 50 rows each side of 0.5
    pb = (45 + 1) / (100 + 4)  # b missing: 45 rows; intervals [0, .3), [.3, .7), [.7, 1]
    ps = (50 + 1) / (100 + 2)  # s: 50 rows at 0.2, 50 at 0.8
    assert a is not None and r.witness["x1"]["b"] is None
    want = 2 * math.log(pa) + 2 * math.log(pb) + 2 * math.log(ps)
    assert r.stats["objective"] == pytest.approx(want, abs=1e-6)


def _b_low_or_missing_decides() -> Ensemble:
    """raw = 1 where b < 0.3 or b is missing (NaN goes left), -1 where b >= 0.3; a's
    stump adds little."""
    trees = (stump(1, 0.3, 1.0, -1.0), stump(0, 0.5, -0.1, 0.1))
    feats = (Feature("a", lb=0, ub=1), Feature("b", lb=0, ub=1, may_be_missing=True))
    return Ensemble(trees=trees, features=feats, n_classes=2, intercept=(0.0,), link=LOGISTIC)


def _forbid_check(tmp_path, monkeypatch, b: np.ndarray):
    from treesens.interfaces.api import check

    monkeypatch.setenv("TREESENS_CACHE", str(tmp_path / "cache"))
    p = tmp_path / "d.csv"
    a = np.linspace(0.05, 0.95, len(b))
    pd.DataFrame({"a": a, "b": b}).to_csv(p, index=False)
    ens = _b_low_or_missing_decides()
    return check(ens, ["b"], gap=0.2, data=p, data_aware="prob", prob_empty="forbid", timeout=60)


def test_forbid_forbids_a_missing_value_the_data_never_show_as_it_does_an_empty_interval(
    tmp_path, monkeypatch
):
    # every row has b = 0.5: x1 needs b < 0.3 (an empty interval) or NaN (no row misses
    # b), both forbidden, so the data's restrictions leave no pair and are dropped
    r = _forbid_check(tmp_path, monkeypatch, np.full(40, 0.5))
    assert r.status == "sensitive" and r.stats.get("data_restrictions_dropped")


def test_forbid_allows_a_missing_value_the_data_show(tmp_path, monkeypatch):
    r = _forbid_check(tmp_path, monkeypatch, np.array([0.5] * 30 + [np.nan] * 10))
    assert r.status == "sensitive" and not r.stats.get("data_restrictions_dropped")
    assert r.witness["x1"]["b"] is None


def test_learned_clauses_hold_no_row_missing_a_value_of_another_feature():
    # every row with a >= 0.5 misses b: the box "a >= 0.5" holds them all the same
    a = np.linspace(0.05, 0.95, 60)
    b = np.where(a >= 0.5, np.nan, np.resize([0.1, 0.5, 0.8], 60))
    X = np.column_stack([a, b, np.resize([0.2, 0.8], 60)])
    clauses = learn_clauses(tiny(), X, width=2, max_clauses=10, time_budget=20)
    assert not any(clause_holds_row(tiny(), c, X).any() for c in clauses)


def test_a_cached_clause_whose_box_holds_a_data_row_is_discarded(tmp_path, monkeypatch):
    monkeypatch.setenv("TREESENS_CACHE", str(tmp_path / "cache"))
    ens = tiny()
    p = tmp_path / "d.csv"
    pd.DataFrame({"a": [0.1, 0.9], "b": [0.1, 0.8], "s": [0.2, 0.8]}).to_csv(p, index=False)
    data = load_data(p, ens)
    clauses_for(ens, data, time_budget=5)
    (cached,) = (tmp_path / "cache" / "cavities").glob("*.json")
    save_clauses(cached, [Clause((Literal("a", -math.inf, 0.5),))])  # holds the row a = 0.1
    assert clauses_for(ens, data, time_budget=5, file=tmp_path / "c.json") == []
    assert load_clauses(tmp_path / "c.json") == []  # nor in the copy it writes


@pytest.mark.parametrize("damage", ["truncated", "not json", "not clauses"])
def test_a_damaged_cached_clause_file_is_a_miss_and_the_clauses_are_learned_again(
    tmp_path, monkeypatch, damage
):
    monkeypatch.setenv("TREESENS_CACHE", str(tmp_path / "cache"))
    ens = tiny()
    p = tmp_path / "d.csv"
    pd.DataFrame({"a": [0.1, 0.9], "b": [0.1, 0.8], "s": [0.2, 0.8]}).to_csv(p, index=False)
    data = load_data(p, ens)
    learned = clauses_for(ens, data, time_budget=5)
    (cached,) = (tmp_path / "cache" / "cavities").glob("*.json")
    text = cached.read_text()
    broken = {"truncated": text[: len(text) // 2], "not json": "\xff\x00", "not clauses": "[1]"}
    cached.write_text(broken[damage])
    stats: dict = {}
    assert clauses_for(ens, data, time_budget=5, stats=stats) == learned
    assert stats["clauses_source"] == "learned"


def _with_category() -> Ensemble:
    """s (stump at 0.5) and a categorical c: c in {1, 2} -> -1, else +1, so codes 0, 3, 4, 5
    route alike (0 stands for them all)."""
    cat = Tree(
        feature=[1, -1, -1],
        threshold=[0.0, 0, 0],
        left=[1, -1, -1],
        right=[2, -1, -1],
        default_left=[True, False, False],
        value=[0.0, -1.0, 1.0],
        outputs=(0,),
        categories=(frozenset({1, 2}), None, None),
    )
    feats = (Feature("s", lb=0, ub=1), Feature("c", kind="categorical", lb=0, ub=5))
    return Ensemble(
        trees=(stump(0, 0.5, -3.0, 3.0), cat),
        features=feats,
        n_classes=2,
        intercept=(0.0,),
        link=LOGISTIC,
    )


def test_a_category_no_split_lists_counts_in_the_share_of_the_code_standing_for_it():
    ens = _with_category()
    X = np.column_stack([np.resize([0.2, 0.8], 10), [0, 1, 1, 2, 3, 3, 4, 4, 5, 5]])
    c = compiled_for(ens, Query(vary=("s",), plan=Plan(data_aware="prob")))
    assert c.encoding.domains[1].codes == (0, 1, 2)
    assert marginals(c.encoding, X, alpha=0.0)[1].probs.tolist() == [0.7, 0.2, 0.1]


def test_a_data_aware_compile_put_off_until_the_solver_is_timed_once(tmp_path, monkeypatch):
    import time

    import treesens.driver.compile as compile_module
    from treesens.interfaces.api import check

    monkeypatch.setenv("TREESENS_CACHE", str(tmp_path / "cache"))
    real = compile_module.compile_query

    def slow(*args, **kw):
        time.sleep(1.0)
        return real(*args, **kw)

    monkeypatch.setattr(compile_module, "compile_query", slow)
    p = tmp_path / "d.csv"
    pd.DataFrame(_rows_with_missing_b(), columns=["a", "b", "s"]).to_csv(p, index=False)
    r = check(_sometimes_missing_b(), ["s"], gap=0.2, data=p, data_aware="prob", timeout=60)
    assert r.status == "sensitive" and 1.0 <= r.time["compile"] <= r.time["total"]


def test_a_witness_category_is_the_likeliest_data_code_the_model_routes_as_the_chosen_one():
    from treesens.compiler.domain import choose_value

    ens = _with_category()
    dom = compiled_for(ens, Query(vary=("s",))).encoding.domains[1]
    assert dom.codes[0] == 0  # the code standing for 0, 3, 4, 5
    assert choose_value(ens, ens.features[1], dom, 0, prefer=[1.0, 4.0, 0.0]) == 4.0


def test_a_column_missing_in_every_row_has_range_one_without_a_warning():
    import warnings

    from treesens.compiler.dataset import Dataset

    X = np.array([[0.1, np.nan, 0.2], [0.5, np.nan, 0.8]])  # b: missing in every row
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Dataset(X, None, ("a", "b", "s")).ranges()[1] == pytest.approx([0.4, 1.0, 0.6])
        distance_to_data(tiny(), ([1, 1, 1, 1], [1, 1, 1, 1]), {2}, X)


def test_varying_only_a_feature_the_datas_range_holds_to_one_value_is_an_input_error(tmp_path):
    from treesens.interfaces.api import check

    p = tmp_path / "d.csv"
    pd.DataFrame({"a": [0.1, 0.9], "b": [0.1, 0.8], "s": [1.0, 1.0]}).to_csv(p, index=False)
    model = load_model_with_data_bounds(p)
    with pytest.raises(InputError, match=r"column 's' = 1 in every row.*cannot differ"):
        check(model, ["s"], gap=0.2, data=p, data_aware="prob", timeout=60)


def test_a_varied_column_one_value_in_every_row_is_an_error_naming_the_data_file(tmp_path):
    from treesens.interfaces.api import check

    p = tmp_path / "d.csv"
    pd.DataFrame({"a": [0.1, 0.9], "b": [0.1, 0.8], "s": [1.0, 1.0]}).to_csv(p, index=False)
    with pytest.raises(InputError) as e:
        check(load_model_with_data_bounds(p), ["s"], gap=0.2, timeout=60)
    assert e.value.where == str(p) and "column 's' = 1 in every row" in e.value.message


def test_a_sweep_of_every_feature_leaves_out_those_the_datas_range_holds_to_one_value(tmp_path):
    from treesens.questions.sweep import feature_subsets

    p = tmp_path / "d.csv"
    pd.DataFrame({"a": [0.1, 0.9], "b": [0.1, 0.8], "s": [1.0, 1.0]}).to_csv(p, index=False)
    assert feature_subsets(load_model_with_data_bounds(p)) == [("a",), ("b",)]


def test_a_sweep_of_data_of_one_row_names_the_data_it_has_no_feature_to_vary_in(tmp_path):
    from treesens.questions.sweep import feature_subsets

    p = tmp_path / "d.csv"
    pd.DataFrame({"a": [0.1], "b": [0.2], "s": [1.0]}).to_csv(p, index=False)
    with pytest.raises(
        InputError, match=rf"no feature to sweep: each holds one value in every row of {p}"
    ):
        feature_subsets(load_model_with_data_bounds(p))


def load_model_with_data_bounds(path) -> Ensemble:
    from treesens import load_model

    ens = tiny()
    free = tuple(Feature(f.name) for f in ens.features)  # no declared bounds
    bare = Ensemble(trees=ens.trees, features=free, n_classes=2, intercept=(0.0,), link=LOGISTIC)
    return load_model(bare, data=path, bounds="data")


def _model_and_data_with_f2_one_value(tmp_path) -> list[str]:
    """An XGBoost model and its data (f2 is 1 in every row), as ``MODEL --data DATA``."""
    from xgboost import XGBClassifier

    X = np.random.default_rng(1).uniform(0, 1, size=(50, 3)).round(2)
    X[:, 2] = 1.0  # s: one value in every row
    p = tmp_path / "d.csv"
    pd.DataFrame(X, columns=["f0", "f1", "f2"]).assign(label=0).to_csv(p, index=False)
    y = (X[:, 0] > 0.5).astype(int)
    XGBClassifier(n_estimators=3, max_depth=2, n_jobs=1).fit(X, y).save_model(tmp_path / "m.json")
    return [str(tmp_path / "m.json"), "--data", str(p)]


def test_a_sweep_says_which_features_it_leaves_out_as_held_to_one_value(tmp_path, capsys):
    from treesens.interfaces.cli.main import main

    args = ["sweep", *_model_and_data_with_f2_one_value(tmp_path), "--bounds", "data"]
    assert main([*args, "--gap", "0.1", "--timeout", "30"]) == 0
    left_out = f"left out (one value in every row of {tmp_path / 'd.csv'}, the data the bounds come from): f2"
    assert left_out in capsys.readouterr().err


def test_checking_a_column_one_value_in_every_row_is_one_line_naming_the_data(tmp_path):
    args = _model_and_data_with_f2_one_value(tmp_path)
    out = treesens_here("check", *args, "--bounds", "data", "--vary", "f2", "--gap", "0.1")
    loaded, error = out.stderr.strip().splitlines()  # the progress line, then the error
    assert out.returncode == 2 and loaded.startswith("loaded ")
    assert error.startswith(f"treesens: error: {args[2]}: column 'f2' = 1 in every row")


def test_a_clauses_file_naming_an_unknown_feature_is_an_input_error_naming_clause_and_feature(
    tmp_path,
):
    ens = tiny()
    p = tmp_path / "d.csv"
    pd.DataFrame({"a": [0.1, 0.9], "b": [0.1, 0.8], "s": [0.2, 0.8]}).to_csv(p, index=False)
    f = tmp_path / "c.json"
    save_clauses(f, [Clause((Literal("a", 0.6, math.inf),)), Clause((Literal("bb", 0.5, 0.6),))])
    with pytest.raises(InputError, match=r"c\.json: clause 1: unknown feature 'bb'"):
        clauses_for(ens, load_data(p, ens), file=f)


def test_a_clause_literal_with_a_nan_bound_is_an_input_error(tmp_path):
    f = tmp_path / "c.json"
    f.write_text('{"clauses": [{"literals": [{"feature": "a", "lo": NaN, "hi": 1}]}]}')
    with pytest.raises(InputError, match="clause 0: a literal's lo or hi is NaN"):
        load_clauses(f)


def test_a_data_aware_mode_without_data_on_the_command_line_names_the_data_flag(tmp_path):
    args = _model_and_data_with_f2_one_value(tmp_path)[:1]  # the model alone
    out = treesens_here("check", *args, "--vary", "f0", "--data-aware", "prob")
    assert out.returncode == 2
    assert "treesens: error: data-aware mode 'prob' needs data (--data FILE)" in out.stderr
