"""A sweep's answers do not depend on where its queries run: random ensembles (binary and
3-class, 6 to 20 trees) swept under a work budget (answers/work.py: counted work, the
same on any machine) answer the same on one process, on a local pool of 2 workers and on
dask's 2 workers (status, bounds, proven), checks and max gaps alike; and every bracket,
and each sweep under a time budget (budget=, its second pass: questions/sweep_budget.py),
holds the exact largest gap (ratio) by enumeration (tests/max_gap_oracle.py). Hunt behind
it: 30 ensembles (180 sweeps, each on three executors): no disagreement."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import treesens
from treesens.questions.executors import make_executor
from treesens.tests.max_gap_oracle import (
    exact_max_gap,
    exact_max_ratio,
    max_gap_problems,
    max_ratio_problems,
)
from treesens.tests.oracle import random_ensemble

WORK = [200, 5_000, 200_000]


@pytest.fixture(scope="module")
def executors():
    made = {"local": make_executor("local", 2)}
    if importlib.util.find_spec("distributed") is not None:
        made["dask"] = make_executor("dask", 2)
    yield made
    for ex in made.values():
        ex.close()


def _case(seed: int):
    rng = np.random.default_rng([7309, seed])
    n_classes = 3 if seed % 3 == 2 else 2
    ens = random_ensemble(
        rng,
        int(rng.integers(6, 21)) * (n_classes if n_classes > 2 else 1),
        int(rng.integers(2, 4)),
        3,
        int(rng.integers(2, 5)),
        n_classes,
        leaf_scale=1.0,
        bounded=bool(rng.random() < 0.5),
    )
    kw = {"classes": ("any", "any")} if n_classes > 2 else {}
    return ens, kw, WORK[seed % len(WORK)]


def _exact(ens, f):
    if ens.n_classes > 2:
        return exact_max_ratio(ens, [f], ("any", "any"))
    return exact_max_gap(ens, [f])


def _problems(ens, r, exact):
    if ens.n_classes > 2:
        return max_ratio_problems(exact, r)
    return max_gap_problems(exact, r, ens)


def _answer(r):
    m = r.max_gap or {}
    return (r.query, r.status, m.get("lower"), m.get("upper"), m.get("proven"))


def _sweeps_agree(seed: int, executors) -> None:
    ens, kw, work = _case(seed)
    exact = {f: _exact(ens, f) for f in ens.feature_names}
    gap = float(np.median([v for v in exact.values()]))
    gap = gap if ens.n_classes > 2 else min(max(gap, 0.01), 0.49)
    gap = max(gap, 1.01) if ens.n_classes > 2 else gap
    asked = {"max_gap": {"max_gap": True}, "check": {"gap": gap}}
    probs = []
    for name, q in asked.items():
        one = treesens.sweep(ens, work=work, timeout=120, **kw, **q)
        for where, ex in executors.items():
            there = treesens.sweep(ens, work=work, timeout=120, executor=ex, **kw, **q)
            if [_answer(r) for r in there] != [_answer(r) for r in one]:
                probs.append(f"{name} on {where}: {[_answer(r) for r in there]} != {one}")
        for r in one:
            if name == "max_gap":
                probs += [f"{r.query}: {p}" for p in _problems(ens, r, exact[r.query])]
            elif r.status == "insensitive" and exact[r.query] > gap + 1e-9:  # not a rounding
                probs.append(f"check {r.query}: insensitive at {gap}, exact {exact[r.query]}")
    for r in treesens.sweep(ens, max_gap=True, budget=2, timeout=30, **kw):
        probs += [f"budget {r.query}: {p}" for p in _problems(ens, r, exact[r.query])]
    assert not probs, (seed, work, probs)


@pytest.mark.slow  # the pool and dask's cluster start in about 25 s, then ~1 min a seed
@pytest.mark.parametrize("seed", range(30))
def test_a_sweep_answers_alike_on_one_process_and_on_workers(seed, executors):
    _sweeps_agree(seed, executors)
