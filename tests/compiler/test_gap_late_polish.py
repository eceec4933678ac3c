"""The late polish (search/gap_seed.py, ``late_polish``): once the compiled search has run
a few times as long as the seed did, the best pair so far is polished again, patiently
(search/gap_polish.py, ``patient``), and the gap the replay accepts is the search's floor
from then on (search/gap_boxes.py, ``Later``). Only ever a pair: the upper bound is still
the search's alone."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from treesens.compiler.plan import Plan
from treesens.compiler.query import Gap, Query
from treesens.search import (
    gap_boxes,
    gap_kernel,
    gap_kernel_compile,
    gap_polish,
    gap_search,
    gap_seed,
    gap_units,
)
from treesens.search.gap_boxes import Later, largest_gap
from treesens.search.gap_search import box_largest_gap
from treesens.search.gap_units import achieved_gap, gap_bound
from treesens.search.heuristic import Spent
from treesens.search.heuristic_stage import HEURISTIC_WORK_PER_LEAF, heuristic_work
from treesens.search.pair_boxes import pair_tables
from treesens.search.pair_scope import pair_encoding
from treesens.search.tolerance import Tolerance
from treesens.tests.compiler.test_gap_boxes import _bracket_problems, _case
from treesens.tests.compiler.test_gap_polish import (
    ASCENT_WORK,
    POLISH_WORK,
    _ascent,
    _seeds_of_rounds,
    _stuck_case,
)
from treesens.tests.compiler.test_gap_seed import TOLERANCE
from treesens.tests.compiler.test_gap_seed import _case as _seeded_case
from treesens.tests.max_gap_oracle import exact_max_gap
from treesens.tests.oracle import random_ensemble

FAR = 1e9

pytestmark = pytest.mark.skipif(not gap_kernel_compile.available(), reason="numba is not installed")


def _sensitive(i: int) -> bool:
    ens, q, _tol = _case(i)
    return exact_max_gap(ens, q.vary) > 0.05


SENSITIVE = [i for i in range(30) if _sensitive(i)][:6]
# cases the heuristic seeds (no bounds, plain comparisons)
SEEDED = [i for i in range(40) if exact_max_gap(_seeded_case(i)[0], _seeded_case(i)[1].vary) > 0.1][
    :6
]


def _search(i: int, later: Later | None):
    ens, q, tol = _case(i)
    enc = pair_encoding(ens, q.with_(gap=Gap(0.0)))

    def offer(x1, x2):
        p = ens.proba(np.stack([x1, x2]))[:, 1]
        return achieved_gap(p[0], p[1])

    deadline = time.time() + FAR
    return largest_gap(enc, pair_tables(enc), gap_bound(ens), offer, tol, deadline, later=later)


def _counted(gap: float | None, runs: list[int]) -> Later:
    def run():
        runs.append(1)
        return gap

    return Later(0.0, run)


@pytest.mark.parametrize("i", SENSITIVE)
def test_a_later_steps_gap_is_the_searchs_floor_from_then_on(i):
    ens, q, _tol = _case(i)
    assert _search(i, None).lower is not None  # alone, the search resolves a pair
    # given the exact largest gap, every box is under it plus the tolerance: dropped
    out = _search(i, _counted(exact_max_gap(ens, q.vary), []))
    assert out.proven and out.lower is None


@pytest.mark.parametrize("i", SENSITIVE)
def test_a_search_whose_later_step_found_a_pair_still_brackets_the_exact_gap(i):
    ens, q, _tol = _case(i)
    exact = exact_max_gap(ens, q.vary)
    out = _search(i, _counted(exact / 2, []))
    assert out.proven and not _bracket_problems(exact, max(out.lower, exact / 2), out.upper)


def test_a_later_step_runs_once():
    runs: list[int] = []
    _search(SENSITIVE[0], _counted(None, runs))
    assert runs == [1]


def _counted_again(gap: float | None, runs: list[int]) -> Later:
    def run():
        runs.append(1)
        return gap

    return Later(0.0, run, again=0.0)


def test_a_later_step_that_runs_again_runs_once_more_a_resolved_pair_beats_the_gaps_reached():
    runs: list[int] = []
    out = _search(SENSITIVE[0], _counted_again(None, runs))
    assert out.lower is not None  # the search resolved pairs above the tolerance
    assert len(runs) > 1


def test_a_later_step_runs_again_only_for_a_resolved_pair_above_its_gap():
    ens, q, _tol = _case(SENSITIVE[0])
    runs: list[int] = []
    # the exact largest gap: no resolved pair is above it, the step runs once
    _search(SENSITIVE[0], _counted_again(exact_max_gap(ens, q.vary), runs))
    assert runs == [1]


@pytest.mark.parametrize("step", ["again", "other streams"])
@pytest.mark.parametrize("i", SENSITIVE)
def test_a_search_whose_later_step_runs_again_or_on_other_streams_still_brackets_the_exact_gap(
    i, step
):
    ens, q, _tol = _case(i)
    exact = exact_max_gap(ens, q.vary)
    runs: list = []
    if step == "again":
        out = _search(i, _counted_again(exact / 2, runs))
    else:
        out = _search(i, _counted_others(exact / 2, runs))
        assert "other" in runs
    assert out.proven and not _bracket_problems(exact, max(out.lower, exact / 2), out.upper)


def test_a_timed_late_polish_runs_again_and_a_work_budgets_once():
    ens, q = _seeded_case(SEEDED[0])
    encs = [pair_encoding(ens, q.with_(gap=Gap(0.0)))]
    late = gap_search.LatePolish(encs, gap_units.BestPair(ens, q), Tolerance(TOLERANCE))
    assert late.later(FAR, float("inf")).again == gap_seed.LATE_TIMES
    by_boxes = gap_search.LatePolish(encs, late.best, Tolerance(TOLERANCE), timed=False)
    assert by_boxes.later(FAR, 1000).again is None


def _counted_others(gap: float | None, runs: list[str], after=0.0, times=0.0) -> Later:
    def run(kind):
        runs.append(kind)
        return gap

    return Later(
        after, lambda: run("run"), again=FAR, other=lambda: run("other"), other_times=times
    )


def test_a_later_steps_other_stream_runs_as_the_search_goes_on_with_no_better_pair():
    runs: list[str] = []
    # the step itself runs again only after FAR times its seconds
    _search(SENSITIVE[0], _counted_others(None, runs))
    assert runs[0] == "run" and runs.count("run") == 1
    assert runs.count("other") > 1


def test_a_later_steps_other_stream_waits_for_the_step_itself():
    runs: list[str] = []
    _search(SENSITIVE[0], _counted_others(None, runs, after=FAR))
    assert runs == []


def test_a_later_steps_other_stream_waits_other_times_the_runs_seconds():
    runs: list[str] = []
    _search(SENSITIVE[0], _counted_others(None, runs, times=FAR))
    assert runs == ["run"]


def test_the_other_streams_wait_after_seconds_each_for_runs_that_take_none():
    # two runs of no seconds, after 10 s each, other_times 1: due after 20 s of search
    runs = gap_boxes._LaterRuns(_counted_others(None, [], after=10.0, times=1.0), runs=2)
    assert not runs._other_due(gap_kernel.RESOLVED, time.time() - 15.0)
    assert runs._other_due(gap_kernel.RESOLVED, time.time() - 25.0)
    assert not runs._other_due(gap_kernel.EMPTY, time.time() - 25.0)


def test_a_timed_late_polish_runs_on_other_streams_and_a_work_budgets_does_not():
    ens, q = _seeded_case(SEEDED[0])
    encs = [pair_encoding(ens, q.with_(gap=Gap(0.0)))]
    late = gap_search.LatePolish(encs, gap_units.BestPair(ens, q), Tolerance(TOLERANCE))
    timed = late.later(FAR, float("inf"))
    assert timed.other is not None and timed.other_times == gap_seed.LATE_STREAM_TIMES
    by_boxes = gap_search.LatePolish(encs, late.best, Tolerance(TOLERANCE), timed=False)
    assert by_boxes.later(FAR, 1000).other is None


def _late_polish_calls(monkeypatch, raise_by: float):
    """A timed late polish's ``later`` and the (pair, stream) of each polish it runs, each
    polish raising the best gap by ``raise_by``; the best pair is ``first`` at the start."""
    ens, q = _seeded_case(SEEDED[0])
    encs = [pair_encoding(ens, q.with_(gap=Gap(0.0)))]
    best = gap_units.BestPair(ens, q)
    calls = []

    def polished(enc, pair, *a, **k):
        calls.append((pair, a[-1]))
        best.gap += raise_by
        best.pair = np.ones(len(ens.features)), np.zeros(len(ens.features))

    monkeypatch.setattr(gap_search, "late_polish", polished)
    later = gap_search.LatePolish(encs, best, Tolerance(TOLERANCE)).later(FAR, float("inf"))
    best.pair, best.gap = (np.zeros(len(ens.features)), np.ones(len(ens.features))), 0.2
    return later, best.pair, calls


def test_the_late_polish_on_another_stream_starts_from_where_the_last_polish_did(monkeypatch):
    later, first, calls = _late_polish_calls(monkeypatch, 2 * TOLERANCE)
    later.run()
    later.other()
    later.other()
    assert [(pair is first, stream) for pair, stream in calls] == [(True, 0), (True, 1), (True, 2)]


def test_the_late_polish_runs_no_other_stream_once_a_polish_raised_the_best_gap_too_little(
    monkeypatch,
):
    later, _first, calls = _late_polish_calls(monkeypatch, TOLERANCE / 2)
    later.run()
    later.other()
    assert len(calls) == 1


def test_a_later_step_does_not_run_before_its_time():
    runs: list[int] = []
    _search(SENSITIVE[0], Later(FAR, lambda: runs.append(1)))
    assert runs == []


def test_a_gap_under_the_tolerance_raises_no_floor():
    assert gap_boxes._raised(None, 0.5e-3, Tolerance(1e-3)) is None
    assert gap_boxes._raised(0.2, 0.1, Tolerance(1e-3)) == 0.2


def test_the_late_polish_is_due_after_late_times_the_seeds_evaluations():
    assert gap_seed.late_after(Spent(1000)) == gap_seed.LATE_TIMES * 1000 > 1000


@pytest.mark.parametrize("i", SEEDED)
def test_a_max_gap_with_the_late_polish_brackets_the_exact_gap(i, monkeypatch):
    monkeypatch.setattr(gap_search, "late_after", lambda seed: 0.0)  # due at once
    ens, q = _seeded_case(i)
    res, out = box_largest_gap(ens, q, TOLERANCE, time.time() + FAR)
    assert res.stats["box_search"]["seed"]["late_seconds"] is not None
    assert out.proven and not _bracket_problems(exact_max_gap(ens, q.vary), out.lower, out.upper)


def test_a_search_that_ends_before_the_late_polish_is_due_runs_none(monkeypatch):
    monkeypatch.setattr(gap_seed, "LATE_TIMES", math.inf)
    ens, q = _seeded_case(SEEDED[0])
    res, _out = box_largest_gap(ens, q, TOLERANCE, time.time() + FAR)
    assert res.stats["box_search"]["seed"]["late_seconds"] is None


def test_a_patient_polish_far_below_its_ask_goes_on_in_rounds_while_they_raise_it(monkeypatch):
    enc = _stuck_case()
    x1, x2, _met = _ascent(enc, ASCENT_WORK)
    seeds = _seeds_of_rounds(monkeypatch)
    # far below the ask of 50 the first round raises the smaller slack (5.86 -> 7.14): the
    # impatient polish stops there (test_gap_polish.py), the patient one tries again
    gap_polish.polish_pair(enc, x1, x2, 50.0, POLISH_WORK, time.time() + FAR, patient=True)
    assert seeds[:2] == [0, 1]


def test_a_patient_round_restarts_patient_stall_times_without_a_rise(monkeypatch):
    enc = _stuck_case()
    x1, x2, _met = _ascent(enc, ASCENT_WORK)
    kicks: list[int] = []
    real = gap_polish._Climb.kicked

    def counted(self, best, strength):
        kicks.append(strength)
        return real(self, best, strength)

    monkeypatch.setattr(gap_polish._Climb, "kicked", counted)
    monkeypatch.setattr(gap_polish, "PATIENT_ROUNDS", 1)
    gap_polish.polish_pair(enc, x1, x2, 50.0, 10**9, time.time() + FAR, patient=True)
    assert len(kicks) >= gap_polish.PATIENT_STALL > gap_polish.FAR_STALL_RESTARTS


def _deep_case(depth: int):
    rng = np.random.default_rng([4753, depth])
    ens = random_ensemble(rng, 6, depth, 3, 16, split_prob=1.0)
    q = Query(vary=(ens.feature_names[0],), plan=Plan(timeout=60.0))
    return pair_encoding(ens, q.with_(gap=Gap(0.0)))


def _tree_leaves(enc) -> list[int]:
    return [int((t.feature < 0).sum()) for t in enc.ensemble.trees]


def test_the_late_polishs_work_on_trees_of_at_most_late_tree_leaves_is_the_heuristics():
    enc = _deep_case(3)
    assert max(_tree_leaves(enc)) <= gap_seed.LATE_TREE_LEAVES
    assert gap_seed.late_work(enc) == heuristic_work(enc.ensemble)


def test_the_late_polishs_work_counts_a_bigger_trees_leaves_as_late_tree_leaves(monkeypatch):
    enc = _deep_case(4)
    monkeypatch.setattr(gap_seed, "LATE_TREE_LEAVES", 4)
    leaves = _tree_leaves(enc)
    assert max(leaves) > 4
    counted = sum(min(n, 4) for n in leaves)
    assert gap_seed.late_work(enc) == HEURISTIC_WORK_PER_LEAF * counted + 2000
    assert gap_seed.late_work(enc) < heuristic_work(enc.ensemble)


def test_the_late_polishs_rounds_have_polish_work_late_works_each(monkeypatch):
    enc = _deep_case(4)
    monkeypatch.setattr(gap_seed, "LATE_TREE_LEAVES", 4)
    works: list[int] = []

    def polished(enc, x1, x2, margin, work, *a, **k):
        works.append(work)
        return None

    monkeypatch.setattr(gap_seed, "polish_pair", polished)
    x = np.zeros(enc.ensemble.n_features)
    gap_seed.late_polish(enc, (x, x), lambda x1, x2: None, 1.0, time.time() + FAR)
    assert works == [int(gap_seed.POLISH_WORK * gap_seed.late_work(enc))]


def _clocked(runs: list[int], after: float, again=None, other_times=math.inf) -> Later:
    """A later step on a work clock of one unit a box, recording the boxes at each run."""
    seen = [0]

    def clock(boxes: int) -> float:
        seen[0] = boxes
        return float(boxes)

    def run(kind):
        runs.append((kind, seen[0]))
        return None

    other = (lambda: run("other")) if math.isfinite(other_times) else None
    return Later(
        after, lambda: run("run"), again=again, other=other, other_times=other_times, clock=clock
    )


def _longest() -> int:
    """The sensitive case whose search visits the most boxes (18)."""
    return max(SENSITIVE, key=lambda i: _search(i, None).boxes)


def test_a_later_step_on_a_work_clock_runs_at_the_first_look_past_its_work(monkeypatch):
    monkeypatch.setattr(gap_boxes, "LATER_EVERY", 4)
    runs: list = []
    _search(_longest(), _clocked(runs, after=5.0))
    assert runs == [("run", 8)]


def test_a_later_step_on_a_work_clock_comes_at_the_same_boxes_on_a_slow_clock(monkeypatch):
    monkeypatch.setattr(gap_boxes, "LATER_EVERY", 2)
    case = _longest()
    quick: list = []
    out = _search(case, _clocked(quick, after=2.0, again=1.0, other_times=1.0))
    real = time.time
    ticks = iter(range(10**9))
    monkeypatch.setattr(gap_boxes.time, "time", lambda: real() + next(ticks))  # 1 s a read
    slow: list = []
    slowed = _search(case, _clocked(slow, after=2.0, again=1.0, other_times=1.0))
    assert len(quick) > 1 and slow == quick
    assert (slowed.boxes, slowed.upper) == (out.boxes, out.upper)


def test_a_timed_late_polish_counts_boxes_a_tree_each_and_its_polishes_evaluations():
    ens, q = _seeded_case(SEEDED[0])
    encs = [pair_encoding(ens, q.with_(gap=Gap(0.0)))]
    late = gap_search.LatePolish(encs, gap_units.BestPair(ens, q), Tolerance(TOLERANCE))
    later = late.later(FAR, float("inf"))
    late.spent.evaluations = 7
    per_box = gap_seed.BOX_TREE_EVALUATIONS * len(ens.trees)
    assert later.clock(10) == 10 * per_box + 7


def test_a_timed_search_polishes_late_after_late_times_its_seeds_evaluations(monkeypatch):
    seeds, afters = [], []
    seed_floor, later = gap_search.seed_floor, gap_search.LatePolish.later

    def counted_seed(enc, offer, deadline, saturation, timed, spent):
        n = seed_floor(enc, offer, deadline, saturation, timed, spent)
        seeds.append(spent.evaluations)
        return n

    def recorded_later(self, *a):
        step = later(self, *a)
        afters.append(step.after)
        return step

    monkeypatch.setattr(gap_search, "seed_floor", counted_seed)
    monkeypatch.setattr(gap_search.LatePolish, "later", recorded_later)
    ens, q = _seeded_case(SEEDED[0])
    box_largest_gap(ens, q, TOLERANCE, time.time() + FAR)
    assert seeds[0] > 0 and afters == [gap_seed.LATE_TIMES * seeds[0]]


def test_a_polish_adds_its_rounds_evaluations_to_spent():
    enc = _stuck_case()
    x1, x2, _met = _ascent(enc, ASCENT_WORK)
    spent = Spent()
    gap_polish.polish_pair(enc, x1, x2, 50.0, POLISH_WORK, time.time() + FAR, spent=spent)
    once = spent.evaluations
    gap_polish.polish_pair(enc, x1, x2, 50.0, POLISH_WORK, time.time() + FAR, spent=spent)
    assert once > 0 and spent.evaluations == 2 * once
