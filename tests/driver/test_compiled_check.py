"""A check's box search by the compiled kernel (search/compiled_check.py): on large
tables, with no proof recorded, the box stage searches with it; it agrees with the
brute-force oracle as box_search.py does, and a memory budget that sheds boxes leaves it
without a proof."""

from __future__ import annotations

import re
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import treesens
from treesens.answers.result import INSENSITIVE, SENSITIVE
from treesens.answers.stats import KERNEL_UNBUILT
from treesens.compiler.encode import encode
from treesens.compiler.memory_estimate import CERTIFICATE_BYTES_PER_BOX, MB, certificate_mb
from treesens.compiler.query import Gap, Query
from treesens.compiler.replay import meets
from treesens.questions.certify import certify_answer
from treesens.questions.query_build import make_query
from treesens.search import boxes, compiled_check, gap_kernel, gap_kernel_compile
from treesens.search.box_search import FOUND, GAVE_UP, PROVED, box_search
from treesens.search.compiled_check import COMPILED, CompiledBoxSearch
from treesens.search.compiled_proof import UnbuiltProof, proof_from_boxes, ready_rebuild
from treesens.search.pair_boxes import pair_tables
from treesens.search.proof_tree import recording_proofs
from treesens.tests.driver.test_box_stage import _context, _query
from treesens.tests.oracle import brute_force_sensitive, random_ensemble
from treesens.verify import verify_file

FAR = 1e9


@pytest.fixture
def every_table(monkeypatch):
    """The compiled search from a check's first box (it takes over past HAND_OVER), its
    kernel made ready first: a check counts the kernel's compile (COMPILE_SECONDS, cold numba
    cache) within its time limit, so a compile inside the test would end the box stage's
    first turn (20 s) before the search ran."""
    monkeypatch.setattr(compiled_check, "HAND_OVER", 0)
    gap_kernel.prepare()


def _compiled(ens, q: Query):
    enc = encode(ens, q)[1]
    return CompiledBoxSearch(enc, pair_tables(enc)).run(time.time() + FAR)


# (seed, trees, depth, varied features, gap, op, cast): XGBoost-like, and scikit-learn-
# and LightGBM-like comparisons
CASES = [
    (seed, trees, depth, vary, g, op, cast)
    for seed, (trees, depth) in enumerate([(3, 2), (4, 3), (6, 2), (5, 3), (8, 3)] * 4)
    for vary, g in [(("f0",), 0.1), (("f1",), 0.3), (("f0", "f2"), 0.2)][seed % 3 : seed % 3 + 1]
    for op, cast in [(("<", "float32"), ("<=", "float32"), ("<=", "float64"))[seed % 3]]
]


@pytest.mark.parametrize(
    "case", CASES, ids=lambda c: f"seed{c[0]}-{'+'.join(c[3])}-g{c[4]}-{c[5]}{c[6]}"
)
def test_the_compiled_check_agrees_with_the_brute_force_oracle(case):
    seed, trees, depth, vary, g, op, cast = case
    ens = random_ensemble(seed, trees, depth, 3, 3, leaf_scale=1.0, op=op, cast=cast)
    q = Query(vary=vary, gap=Gap(g))
    out = _compiled(ens, q)
    assert out.status == (FOUND if brute_force_sensitive(ens, q) else PROVED)
    if out.status == FOUND:
        raw, proba = ens.raw(np.stack(out.pair)), ens.proba(np.stack(out.pair))
        assert meets(ens, q, proba[0], raw[0], 0) and meets(ens, q, proba[1], raw[1], 1)


@pytest.mark.parametrize("seed", range(9))
def test_the_compiled_check_agrees_with_the_brute_force_oracle_on_multiclass_gaps(seed):
    pair, ratio = [((0, 1), 1.5), ((2, 0), 3.0), ((1, 2), 1.1)][seed % 3]
    ens = random_ensemble(300 + seed, 6 + seed, 2 + seed % 2, 3, 3, n_classes=3, leaf_scale=1.5)
    q = Query(vary=("f1",), gap=Gap(ratio), classes=pair)
    out = _compiled(ens, q)
    assert out.status == (FOUND if brute_force_sensitive(ens, q) else PROVED)


def test_the_compiled_check_and_box_search_py_agree_on_a_larger_ensemble():
    ens = random_ensemble(7, 40, 4, 5, 6, leaf_scale=0.1)
    for g in (0.1, 0.2, 0.3):  # sensitive, then insensitive
        q = Query(vary=("f1",), gap=Gap(g))
        enc = encode(ens, q)[1]
        slow = box_search(enc, pair_tables(enc), time.time() + FAR)
        assert _compiled(ens, q).status == slow.status


def test_the_compiled_check_gives_up_at_a_past_deadline():
    ens = random_ensemble(7, 40, 4, 5, 6, leaf_scale=0.1)
    enc = encode(ens, Query(vary=("f1",), gap=Gap(0.2)))[1]
    assert CompiledBoxSearch(enc, pair_tables(enc)).run(time.time() - 1).status == GAVE_UP


def test_boxes_shed_for_memory_leave_the_compiled_check_without_a_proof(monkeypatch):
    ens = random_ensemble(7, 40, 4, 5, 6, leaf_scale=0.1)
    q = Query(vary=("f1",), gap=Gap(0.2))
    assert _compiled(ens, q).status == PROVED
    monkeypatch.setattr(gap_kernel, "HEAP_BYTES", 1)  # a heap of 4 boxes
    monkeypatch.setattr(gap_kernel, "MIN_HEAP_BYTES", 1)
    enc = encode(ens, q)[1]
    search = CompiledBoxSearch(enc, pair_tables(enc))
    assert search.run(time.time() + FAR).status == GAVE_UP and search.search.shed_boxes > 0


def test_the_box_stage_hands_a_search_past_its_first_boxes_to_the_compiled_check(every_table):
    ens = random_ensemble(7, 40, 4, 5, 6, leaf_scale=0.1)
    ctx = _context(ens, _query(("f1",), Gap(0.2)))
    assert boxes.box_stage(ctx) and ctx.result.status == INSENSITIVE
    assert ctx.stats["box_search"]["search"] == COMPILED


def test_the_box_stage_answers_within_its_first_boxes_by_box_search_py():
    ens = random_ensemble(7, 40, 4, 5, 6, leaf_scale=0.1)
    ctx = _context(ens, _query(("f1",), Gap(0.2)))
    assert boxes.box_stage(ctx) and ctx.result.status == INSENSITIVE
    assert "search" not in ctx.stats["box_search"]


def test_a_proof_recorded_for_a_certificate_is_the_compiled_search_s_own_past_the_hand_over(
    every_table,
):
    ens = random_ensemble(7, 40, 4, 5, 6, leaf_scale=0.1)
    # the proof is rebuilt by the query's deadline, and its rebuild's kernels (tile,
    # tiling_tops) compile at the hand-over, 10-20 CPU s on an empty numba cache: past a
    # 60 s deadline on a loaded machine, the proof was given up (left unbuilt)
    ctx = _context(ens, _query(("f1",), Gap(0.2)), seconds=FAR)
    with recording_proofs():
        assert boxes.box_stage(ctx) and ctx.result.status == INSENSITIVE
    assert ctx.stats["box_search"]["search"] == COMPILED
    assert ctx.result.box_proof.parts[0].tree.preorder() is not None


def test_a_proof_recorded_before_the_hand_over_is_kept_for_the_certificate():
    ens = random_ensemble(7, 40, 4, 5, 6, leaf_scale=0.1)
    ctx = _context(ens, _query(("f1",), Gap(0.2)))
    with recording_proofs():
        assert boxes.box_stage(ctx) and ctx.result.status == INSENSITIVE
    assert "search" not in ctx.stats["box_search"] and ctx.result.box_proof is not None


def test_an_answer_the_compiled_search_proved_is_certified_from_its_own_proof(
    every_table, no_second_search, tmp_path
):
    model = Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_xgb.json"
    out = tmp_path / "c.json"
    r = treesens.check(str(model), vary=["worst_symmetry"], gap=0.1, certificate=out)
    assert r.status == INSENSITIVE and r.stats["box_search"]["search"] == COMPILED
    assert r.proof.checked and verify_file(out).valid


@pytest.fixture
def no_second_search(monkeypatch):
    """A certificate written from the answer's own recorded proof only."""
    from treesens.questions import certify

    def searched_again(*args, **kw):
        raise AssertionError("the certificate searched again: the answer had no proof")

    monkeypatch.setattr(certify, "certify", searched_again)


@pytest.mark.parametrize("seed", range(8))
def test_certificates_of_the_compiled_search_s_proofs_are_valid(
    every_table, no_second_search, tmp_path, seed
):
    """Every insensitive answer the compiled search proves, certified from its recorded
    boxes, passes the independent checker (XGBoost and LightGBM models of a few trees)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(400, 4))
    y = (X[:, 0] + 0.5 * X[:, 1] - 0.3 * X[:, 2] + rng.normal(0, 0.3, 400) > 0.6).astype(int)
    if seed % 2:
        lgb = pytest.importorskip("lightgbm")
        est = lgb.LGBMClassifier(n_estimators=8, num_leaves=6, verbose=-1).fit(X, y)
        model = tmp_path / "m.txt"
        est.booster_.save_model(str(model))
    else:
        xgb = pytest.importorskip("xgboost")
        est = xgb.XGBClassifier(n_estimators=8, max_depth=3, nthread=1).fit(X, y)
        model = tmp_path / "m.json"
        est.save_model(str(model))
    certified = 0
    for f in treesens.load_model(str(model)).feature_names[1:]:
        for g in (0.05, 0.15, 0.3):
            out = tmp_path / f"{f}-{g}.json"
            r = treesens.check(str(model), vary=[f], gap=g, certificate=out)
            if r.status != INSENSITIVE or r.stats["box_search"].get("search") != COMPILED:
                continue
            assert r.proof.checked and verify_file(out).valid, (f, g)
            certified += 1
    assert certified > 0


def test_boxes_that_leave_part_of_the_space_uncovered_give_no_proof():
    ens = random_ensemble(7, 40, 4, 5, 6, leaf_scale=0.1)
    enc = encode(ens, Query(vary=("f1",), gap=Gap(0.2)))[1]
    tab = pair_tables(enc)
    search = CompiledBoxSearch(enc, tab, recording=True)
    assert search.run(time.time() + FAR).status == PROVED
    recorded = search.search.recorded
    tops = search.search.box_tops(recorded)
    assert proof_from_boxes(tab, recorded, {}, tops) is not None
    assert proof_from_boxes(tab, recorded[1:], {}, tops[1:]) is None
    twice = np.vstack([recorded, recorded[:1]])
    assert proof_from_boxes(tab, twice, {}, np.vstack([tops, tops[:1]])) is None


@pytest.mark.parametrize("seed", range(6))
def test_a_check_by_the_compiled_search_agrees_with_brute_force_and_is_replayed(every_table, seed):
    xgb = pytest.importorskip("xgboost")
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(300, 3))
    y = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(0, 0.2, 300) > 0.8).astype(int)
    est = xgb.XGBClassifier(n_estimators=6, max_depth=3, nthread=1).fit(X, y)
    ens = treesens.load_model(est)
    for g in (0.1, 0.3):
        r = treesens.check(est, vary="f1", gap=g, backend="boxes", heuristic=False)
        q = Query(vary=("f1",), gap=Gap(g))
        assert r.status == (SENSITIVE if brute_force_sensitive(ens, q) else INSENSITIVE)
        assert r.stats["box_search"]["search"] == COMPILED
        assert r.status == INSENSITIVE or r.validated


def test_a_near_miss_of_a_change_does_not_rule_its_box_out_in_the_compiled_check(every_table):
    from treesens.tests.driver.test_regressor_change import _largest_library_change

    ens, best, _ = _largest_library_change()
    r = treesens.check(ens, vary="f1", delta=best, direction="either", backend="boxes")
    assert r.status != INSENSITIVE
    r = treesens.check(ens, vary="f1", delta=best, direction="either")
    assert r.status == SENSITIVE and r.validated


def test_the_compiled_search_takes_over_after_fewer_boxes_on_larger_tables():
    ens = random_ensemble(7, 40, 4, 5, 6, leaf_scale=0.1)
    enc = encode(ens, Query(vary=("f1",), gap=Gap(0.2)))[1]
    small = pair_tables(enc)
    large = replace(small, values=np.zeros((small.values.shape[0], 16 * small.values.shape[1])))
    assert compiled_check.hand_over_boxes(large) < compiled_check.hand_over_boxes(small)


def test_a_box_s_exact_bounds_are_its_leaves_maxima_summed():
    from treesens.search.box_search import leaf_top

    ens = random_ensemble(7, 40, 4, 5, 6, leaf_scale=0.1)
    enc = encode(ens, Query(vary=("f1",), gap=Gap(0.2)))[1]
    tab = pair_tables(enc)
    search = CompiledBoxSearch(enc, tab, recording=True)
    search.run(time.time() + FAR)
    recorded = search.search.recorded
    tops = search.search.box_tops(recorded)
    cols = len(tab.sizes)
    for i in range(0, len(recorded), 7):
        lo, hi = recorded[i, :cols], recorded[i, cols:]
        live = np.ones(tab.values.shape[1], dtype=bool)
        for c in range(cols):
            live &= (tab.lo[c] < hi[c]) & (tab.hi[c] > lo[c])
        assert np.allclose(tops[i], leaf_top(tab, live).sum(axis=1))


@pytest.fixture
def compiled_searches(monkeypatch):
    """The compiled searches started, as a list."""
    started = []

    class Spy(CompiledBoxSearch):
        def __init__(self, *args, **kw):
            super().__init__(*args, **kw)
            started.append(self)

    monkeypatch.setattr(compiled_check, "CompiledBoxSearch", Spy)
    return started


def test_a_max_gap_bound_its_own_boxes_do_not_prove_is_certified_by_the_compiled_search(
    every_table, compiled_searches, tmp_path, monkeypatch
):
    from treesens.questions import certify_tiling

    monkeypatch.setattr(certify_tiling, "certify_tiling", lambda *args: "no proof at U'")
    model = Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_xgb.json"
    out = tmp_path / "mg.json"
    r = treesens.max_gap(str(model), vary=["worst_symmetry"], certificate=out)
    assert compiled_searches and r.proof.checked and verify_file(out).valid


def test_a_check_whose_memory_limit_leaves_no_room_for_the_kernel_stays_with_box_search_py(
    every_table, monkeypatch
):
    monkeypatch.setattr(compiled_check, "fits", lambda *_args: False)
    ens = random_ensemble(7, 40, 4, 5, 6, leaf_scale=0.1)
    ctx = _context(ens, _query(("f1",), Gap(0.2)))
    assert boxes.box_stage(ctx) and ctx.result.status == INSENSITIVE
    assert "search" not in ctx.stats["box_search"]


def test_a_check_whose_kernel_would_compile_past_its_time_limit_stays_with_box_search_py(
    monkeypatch,
):
    """A cold numba cache (gap_kernel_compile.cold) and a time limit under the compile's estimate:
    the search past its first boxes goes on in Python, saying why, and compiles nothing."""
    monkeypatch.setattr(compiled_check, "HAND_OVER", 0)
    monkeypatch.setattr(gap_kernel_compile, "cold", lambda proof=False: (True, proof))
    monkeypatch.setattr(gap_kernel_compile, "COMPILE_SECONDS", FAR)
    monkeypatch.setattr(gap_kernel, "prepare", lambda *_a: pytest.fail("compiled"))
    ens = random_ensemble(7, 40, 4, 5, 6, leaf_scale=0.1)
    ctx = _context(ens, _query(("f1",), Gap(0.2)))
    assert boxes.box_stage(ctx) and ctx.result.status == INSENSITIVE
    assert "search" not in ctx.stats["box_search"]
    assert ctx.stats["box_search"]["kernel_skipped"] == KERNEL_UNBUILT


@pytest.fixture
def rebuild_kernels_cold(monkeypatch):
    """numba's cache with the search's kernel but not the kernels rebuilding a proof
    (gap_kernel_compile.cold), their compile's estimate far past any time limit."""
    monkeypatch.setattr(compiled_check, "HAND_OVER", 0)
    monkeypatch.setattr(gap_kernel_compile, "cold", lambda proof=False: (False, proof))
    monkeypatch.setattr(gap_kernel_compile, "PROOF_COMPILE_SECONDS", FAR)


def test_a_certificate_s_check_whose_rebuild_kernels_would_compile_past_its_limit_stays_in_python(
    rebuild_kernels_cold, monkeypatch
):
    """Its proof's rebuild would compile them within the query's time: the search stays
    box_search.py's, whose own proof the certificate writes, and compiles nothing."""
    monkeypatch.setattr(gap_kernel, "prepare", lambda *_a: pytest.fail("compiled"))
    ens = random_ensemble(7, 40, 4, 5, 6, leaf_scale=0.1)
    ctx = _context(ens, _query(("f1",), Gap(0.2)))
    with recording_proofs():
        assert boxes.box_stage(ctx) and ctx.result.status == INSENSITIVE
    assert ctx.stats["box_search"]["kernel_skipped"] == KERNEL_UNBUILT
    assert ctx.result.box_proof.parts[0].tree.preorder() is not None


def test_a_check_with_no_certificate_hands_over_whatever_the_rebuild_kernels_would_take(
    every_table, rebuild_kernels_cold
):
    ens = random_ensemble(7, 40, 4, 5, 6, leaf_scale=0.1)
    ctx = _context(ens, _query(("f1",), Gap(0.2)))
    assert boxes.box_stage(ctx) and ctx.result.status == INSENSITIVE
    assert ctx.stats["box_search"]["search"] == COMPILED


@pytest.fixture
def rebuilds_made_ready(monkeypatch) -> list:
    """What each gap_kernel.prepare call was given to make a proof's rebuild ready."""
    calls, prepare = [], gap_kernel.prepare

    def recorded(log=None, rebuild=None):
        calls.append(rebuild)
        return prepare(log, rebuild)

    monkeypatch.setattr(gap_kernel, "prepare", recorded)
    return calls


def test_a_certificate_s_check_makes_its_rebuild_kernels_ready_at_the_hand_over(
    every_table, rebuilds_made_ready
):
    ens = random_ensemble(7, 40, 4, 5, 6, leaf_scale=0.1)
    ctx = _context(ens, _query(("f1",), Gap(0.2)), seconds=FAR)
    with recording_proofs():
        assert boxes.box_stage(ctx) and ctx.result.status == INSENSITIVE
    assert ready_rebuild in rebuilds_made_ready


def test_a_max_gap_asked_a_certificate_makes_its_rebuild_kernels_ready_before_its_search(
    every_table, rebuilds_made_ready, tmp_path
):
    model = Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_xgb.json"
    r = treesens.max_gap(str(model), vary=["worst_symmetry"], certificate=tmp_path / "mg.json")
    # rebuilt from the max gap's own boxes: no search at U' made the kernels ready
    assert r.stats["certificate"]["recorded"] > 0
    assert ready_rebuild in rebuilds_made_ready


@pytest.fixture
def slow_bounds(monkeypatch):
    """The rebuild's bounds take 100 s of the rebuild's clock a call: the sample's that
    estimate it (compiled_proof.py), and each stretch of the walk (proof_bounds.py)."""
    from treesens.search import compiled_proof, proof_bounds

    late = [0.0]
    tops, walk = gap_kernel.flat_box_tops, proof_bounds.ProofBounds.walk

    def slow(ft, boxes):
        late[0] += 100.0
        return tops(ft, boxes)

    def slow_walk(self, steps):
        late[0] += 100.0
        return walk(self, steps)

    monkeypatch.setattr(gap_kernel, "flat_box_tops", slow)
    monkeypatch.setattr(proof_bounds.ProofBounds, "walk", slow_walk)
    clock = type("Clock", (), {"time": staticmethod(lambda: time.time() + late[0])})
    monkeypatch.setattr(compiled_proof, "time", clock, raising=False)
    monkeypatch.setattr(proof_bounds, "time", clock, raising=False)
    return compiled_proof


def _recording_search() -> CompiledBoxSearch:
    ens = random_ensemble(7, 40, 4, 5, 6, leaf_scale=0.1)  # 147 boxes recorded
    enc = encode(ens, Query(vary=("f1",), gap=Gap(0.2)))[1]
    return CompiledBoxSearch(enc, pair_tables(enc), recording=True)


def test_a_proof_whose_rebuild_would_end_past_the_deadline_is_given_up_before_it(
    slow_bounds, monkeypatch
):
    monkeypatch.setattr(slow_bounds, "REBUILD_SAMPLE", 4, raising=False)  # timed on 4 boxes of 147
    search = _recording_search()
    assert search.run(time.time() + 60).status == PROVED  # the answer stands
    assert search.proof.preorder() is None
    assert "rebuilding its proof from 147 boxes would take about" in search.why_not


def test_a_proof_whose_rebuild_runs_past_the_deadline_midway_is_given_up(slow_bounds, monkeypatch):
    from treesens.search import proof_bounds

    monkeypatch.setattr(proof_bounds, "CHUNK", 8)  # no estimate (under 2 x 256 boxes)
    search = _recording_search()
    assert search.run(time.time() + 60).status == PROVED
    assert search.proof.preorder() is None
    assert search.why_not == "rebuilding its proof from 147 boxes ran past its deadline"


def test_a_certificate_whose_rebuild_would_pass_its_budget_is_refused_saying_so(
    every_table, slow_bounds, monkeypatch, tmp_path
):
    monkeypatch.setattr(slow_bounds, "REBUILD_SAMPLE", 4, raising=False)
    model = Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_xgb.json"
    out = tmp_path / "c.json"
    r = treesens.check(
        str(model),
        vary=["worst_symmetry"],
        gap=0.1,
        timeout=60,
        certificate=out,
        certify_budget=60,
    )
    assert r.status == INSENSITIVE and not r.proof.checked and not out.exists()
    assert "would take about" in r.proof.why_not


def test_an_answer_s_proof_its_time_limit_cannot_rebuild_is_kept_unbuilt_for_its_certificate(
    every_table, slow_bounds, monkeypatch
):
    monkeypatch.setattr(slow_bounds, "REBUILD_SAMPLE", 4)
    ens = random_ensemble(7, 40, 4, 5, 6, leaf_scale=0.1)
    ctx = _context(ens, _query(("f1",), Gap(0.2)))  # a rebuild of about 3,000 s in 60 s
    with recording_proofs():
        assert boxes.box_stage(ctx) and ctx.result.status == INSENSITIVE
    assert isinstance(ctx.result.box_proof.parts[0].tree, UnbuiltProof)


def _answer_left_unbuilt(ens):
    """breast cancer's check, proved with its proof left unbuilt: its rebuild takes
    thousands of seconds of the slow clock, the time limit 60 s."""
    with recording_proofs():
        r = treesens.check(ens, vary=["worst_symmetry"], gap=0.1, timeout=60)
    assert isinstance(r.box_proof.parts[0].tree, UnbuiltProof)
    return r


def test_an_answer_s_unbuilt_proof_is_certified_within_the_budget_with_no_second_search(
    every_table, slow_bounds, no_second_search, monkeypatch, tmp_path
):
    monkeypatch.setattr(slow_bounds, "REBUILD_SAMPLE", 4)
    model = Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_xgb.json"
    ens = treesens.load_model(model)
    r, said = _answer_left_unbuilt(ens), []
    q = make_query(["worst_symmetry"], gap=0.1)
    done = certify_answer(ens, q, r, tmp_path / "c.json", model, 1e6, log=said.append)
    assert done.verified and "the answer's own proof" in done.message
    assert re.fullmatch(
        r"certificate: rebuilding the answer's proof from [\d,]+ boxes "
        r"\(about \d+s\)\.\.\.",
        said[0],
    ), said


def test_an_unbuilt_proof_its_budget_cannot_rebuild_either_is_refused_saying_what_it_takes(
    every_table, slow_bounds, monkeypatch, tmp_path
):
    """The search after it fails for want of time too: the rebuild's reason says more."""
    from treesens.questions import certify

    monkeypatch.setattr(slow_bounds, "REBUILD_SAMPLE", 4)
    not_in_time = certify.refused("the box search did not finish within its budget of 60s")
    monkeypatch.setattr(certify, "certify", lambda *args, **kw: not_in_time)
    model = Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_xgb.json"
    ens = treesens.load_model(model)
    r = _answer_left_unbuilt(ens)
    q = make_query(["worst_symmetry"], gap=0.1)
    done = certify_answer(ens, q, r, tmp_path / "c.json", model, 60)
    assert not done.written and r.box_proof is None
    assert r.proof.why_not.startswith("the box search proved it, but rebuilding its proof")
    assert "would take about" in r.proof.why_not


def test_an_unbuilt_proof_its_budget_cannot_rebuild_names_the_budget_up_front(
    every_table, slow_bounds, monkeypatch, tmp_path
):
    """Before the search after it starts, its line says what budget the rebuild needs:
    more than its estimate."""
    from treesens.questions import certify

    monkeypatch.setattr(slow_bounds, "REBUILD_SAMPLE", 4)
    monkeypatch.setattr(certify, "certify", lambda *args, **kw: certify.refused("not in time"))
    model = Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_xgb.json"
    ens = treesens.load_model(model)
    r, said = _answer_left_unbuilt(ens), []
    q = make_query(["worst_symmetry"], gap=0.1)
    certify_answer(ens, q, r, tmp_path / "c.json", model, 60, log=said.append)
    line = re.search(r"take about (\d+)s, .*ask for --certify-budget (\d+) .*; searching", said[-1])
    assert line and int(line[2]) > int(line[1])


def test_a_certificate_s_own_search_whose_rebuild_would_pass_its_budget_names_the_budget(
    every_table, slow_bounds, monkeypatch, tmp_path
):
    """Its compiled search proved it, and the rebuild of its proof would end past the
    budget: the reason names the budget to ask for, above the rebuild's estimate (the
    line an answer's unbuilt proof gives)."""
    from treesens.questions.certify import certify

    monkeypatch.setattr(slow_bounds, "REBUILD_SAMPLE", 4)
    model = Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_xgb.json"
    ens = treesens.load_model(model)
    q = make_query(["worst_symmetry"], gap=0.1)
    done = certify(ens, q, tmp_path / "c.json", model, 60)
    line = re.search(r"take about (\d+)s, .*ask for --certify-budget (\d+) ", done.reason)
    assert not done.written and line and int(line[2]) > int(line[1]), done.reason


@pytest.fixture
def room_for_ten_boxes(monkeypatch):
    """The memory limit leaves the least heap and a record of 10 boxes of the search of
    _recording_search (its tables: 6 columns, 3 rows), with what their certificate holds."""
    per_box = 12 * 6 + 8 * 3 + CERTIFICATE_BYTES_PER_BOX

    def left(enc, *_args) -> int:  # and the certificate's part that no box adds to
        base = int(certificate_mb(0, enc.ensemble.n_leaves()) * MB)
        return gap_kernel.MIN_HEAP_BYTES + 10 * per_box + base

    monkeypatch.setattr(compiled_check, "_left", left)


def test_a_recording_search_s_heap_and_record_share_what_the_memory_limit_leaves(monkeypatch):
    monkeypatch.setattr(compiled_check, "_left", lambda *_args: 300 << 20)
    search = _recording_search()
    tab = search.tab
    heap, rows = compiled_check.recording_within(search.enc, tab, 1.0)
    per_box = 12 * len(tab.sizes) + 8 * tab.values.shape[0] + CERTIFICATE_BYTES_PER_BOX
    assert heap + rows * per_box <= 300 << 20
    assert search.search.record_max == rows


def test_a_recording_search_leaves_the_certificate_s_base_out_of_its_heap_and_record(
    monkeypatch,
):
    monkeypatch.setattr(compiled_check, "_left", lambda *_args: 300 << 20)
    search = _recording_search()
    tab = search.tab
    heap, rows = compiled_check.recording_within(search.enc, tab, 1.0)
    per_box = 12 * len(tab.sizes) + 8 * tab.values.shape[0] + CERTIFICATE_BYTES_PER_BOX
    base = certificate_mb(0, search.enc.ensemble.n_leaves()) * MB
    assert rows > 0 and heap + rows * per_box + base <= 300 << 20


def test_a_certificate_s_own_search_stops_when_its_record_would_pass_the_memory_limit(
    room_for_ten_boxes,
):
    ens = random_ensemble(7, 40, 4, 5, 6, leaf_scale=0.1)  # 147 boxes recorded
    enc = encode(ens, Query(vary=("f1",), gap=Gap(0.2)))[1]
    search = CompiledBoxSearch(enc, pair_tables(enc), 1.0, recording=True, capped=False)
    assert search.run(time.time() + FAR).status == GAVE_UP and search.exhausted
    assert search.why_not.startswith("its record of the boxes it dropped reached 10 boxes")


def test_an_answer_s_own_search_goes_on_unrecorded_when_its_record_would_pass_the_limit(
    room_for_ten_boxes,
):
    search = _recording_search()  # capped: an answer's own
    assert search.run(time.time() + FAR).status == PROVED
    assert search.proof.preorder() is None and "memory limit" in search.why_not


def test_a_search_that_does_not_record_takes_the_room_for_its_heap(room_for_ten_boxes):
    ens = random_ensemble(7, 40, 4, 5, 6, leaf_scale=0.1)
    enc = encode(ens, Query(vary=("f1",), gap=Gap(0.2)))[1]
    tab = pair_tables(enc)
    search = CompiledBoxSearch(enc, tab, 1.0)
    heap = compiled_check.heap_within(enc, tab, 1.0)
    assert search.search.max_rows == gap_kernel.heap_rows(heap, len(tab.sizes))
    assert search.search.record_max is None and search.run(time.time() + FAR).status == PROVED


def test_a_certificate_whose_record_would_pass_the_memory_limit_is_refused_saying_so(
    every_table, room_for_ten_boxes, tmp_path
):
    model = Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_xgb.json"
    out = tmp_path / "c.json"
    r = treesens.check(str(model), vary=["worst_symmetry"], gap=0.1, certificate=out)
    assert r.status == INSENSITIVE and not r.proof.checked and not out.exists()
    assert "memory limit" in r.proof.why_not


def test_a_check_certified_from_the_compiled_search_s_record_states_its_rebuild(
    every_table, no_second_search, tmp_path
):
    model = Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_xgb.json"
    r = treesens.check(
        str(model), vary=["worst_symmetry"], gap=0.1, certificate=tmp_path / "c.json"
    )
    stats = r.stats["box_search"]
    assert r.proof.checked and stats["recorded"] > 0 and stats["rebuild_time"] >= 0.0


def test_a_max_gap_bound_certified_by_the_compiled_search_states_its_rebuild(every_table, tmp_path):
    model = Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_xgb.json"
    r = treesens.max_gap(str(model), vary=["worst_symmetry"], certificate=tmp_path / "mg.json")
    stats = r.stats["certificate"]
    assert r.proof.checked and stats["recorded"] > 0 and stats["rebuild_time"] >= 0.0


def test_a_box_stage_turn_s_proof_is_rebuilt_by_the_query_s_deadline_not_the_turn_s(
    every_table, slow_bounds, monkeypatch
):
    """The first turn ends at 60 s, the query at 10^6 s: a rebuild of about 3,000 s of the
    slow clock is the query's to spend."""
    monkeypatch.setattr(slow_bounds, "REBUILD_SAMPLE", 4)
    ens = random_ensemble(7, 40, 4, 5, 6, leaf_scale=0.1)
    ctx = _context(ens, _query(("f1",), Gap(0.2)), seconds=1e6)
    with recording_proofs():
        assert boxes.BoxStage(ctx).run(ctx, time.time() + 60)
    assert ctx.result.status == INSENSITIVE and ctx.result.box_proof is not None
