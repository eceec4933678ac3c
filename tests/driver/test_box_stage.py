"""The box search stage of a solve (driver/boxes.py): it answers what the backend left
unanswered, and only then."""

from __future__ import annotations

import time

from treesens.compiler.query import Gap, Query
from treesens.compiler.result import INSENSITIVE, SENSITIVE, UNKNOWN
from treesens.driver import boxes
from treesens.driver.solve import _start, solve_query
from treesens.tests.oracle import brute_force_sensitive, random_ensemble
from treesens.tests.pass_cases import two_feature_ensemble


def _context(ens, q: Query):
    return _start(ens, q, None, time.time() + 60.0, None, False, None)


def _query(vary, gap: Gap, box_search: bool = True) -> Query:
    return Query(
        vary=tuple(vary),
        gap=gap,
        timeout=60.0,
        options=(("heuristic", False), ("box_search", box_search)),
    )


def test_the_box_stage_proves_what_the_backend_left_unanswered():
    ctx = _context(two_feature_ensemble(), _query(("x1",), Gap(1.6, "margin")))
    boxes.backend_then_boxes(ctx, lambda: None)  # a backend that answers nothing
    assert ctx.result.status == INSENSITIVE
    assert ctx.stats["proved_by"] == boxes.FOUND_BY


def test_the_box_stage_answers_with_a_replay_checked_pair():
    ctx = _context(two_feature_ensemble(), _query(("x1",), Gap(1.25, "margin")))
    boxes.backend_then_boxes(ctx, lambda: None)
    assert ctx.result.status == SENSITIVE and ctx.result.validated
    assert ctx.stats["found_by"] == boxes.FOUND_BY


def test_the_box_stage_does_not_run_when_switched_off():
    ctx = _context(two_feature_ensemble(), _query(("x1",), Gap(1.6, "margin"), False))
    boxes.backend_then_boxes(ctx, lambda: None)
    assert ctx.result.status == UNKNOWN and "box_search" not in ctx.stats


def test_the_box_stage_does_not_run_after_the_backend_answered():
    ctx = _context(two_feature_ensemble(), _query(("x1",), Gap(1.6, "margin")))

    def backend():
        ctx.result.status = INSENSITIVE

    boxes.backend_then_boxes(ctx, backend)
    assert "box_search" not in ctx.stats


def test_the_backend_gets_its_share_of_the_time_left():
    ctx = _context(two_feature_ensemble(), _query(("x1",), Gap(1.6, "margin")))
    seen = []
    boxes.backend_then_boxes(ctx, lambda: seen.append(ctx.time_left()))
    assert seen[0] < boxes.BACKEND_SHARE * 60.0 + 1e-6
    assert ctx.time_left() > 0.9 * (1 - boxes.BACKEND_SHARE) * 60.0


def test_the_pipeline_agrees_with_the_oracle_with_the_box_stage_on():
    for seed in range(6):
        ens = random_ensemble(200 + seed, 5, 3, 3, 3, leaf_scale=1.0)
        q = _query(("f0",), Gap(0.2))
        res = solve_query(ens, q)
        assert (res.status == SENSITIVE) == brute_force_sensitive(ens, q)
