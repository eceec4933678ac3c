"""A worker process still starting at the deadline (its pipe full) is stopped then: the
answer says it was stopped while starting (a worker that took the problem would have
answered from its solve), and the process is gone."""

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
        sol = worker.solve(problem, SolveOptions(deadline=time.time() + 0.01))
        assert sol.status == UNKNOWN
        assert sol.message == "time limit reached (solver process stopped while starting)"
        assert not worker.alive()
    finally:
        worker.close()
