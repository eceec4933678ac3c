"""A worker process still starting at the deadline (its pipe full) is stopped then."""

from __future__ import annotations

import pickle
import time

from treesens.backends.worker import Worker
from treesens.compiler.encode import encode
from treesens.compiler.query import Gap, Query
from treesens.compiler.solver import UNKNOWN, SolveOptions
from treesens.tests.oracle import random_ensemble


def test_a_problem_not_taken_by_the_deadline_stops_the_starting_worker():
    ens = random_ensemble(4, n_trees=120, depth=5, n_features=8, n_thresholds=10)
    problem, _ = encode(ens, Query(vary=("f0",), gap=Gap(0.2)))
    assert len(pickle.dumps(problem)) > 1 << 17  # more than a pipe holds
    worker = Worker("cpsat")
    try:
        t0 = time.time()
        sol = worker.solve(problem, SolveOptions(deadline=t0 + 0.01))
        assert time.time() - t0 < 2.5
        assert sol.status == UNKNOWN and "time limit" in sol.message
    finally:
        worker.close()
