"""A backend for tests of the worker machinery (loaded only inside a worker process).

It misbehaves on request, chosen by a variable named ``fake:WHAT``: ``"crash"`` kills
its own process, ``"hang"`` sleeps past any deadline, ``"raise"`` raises. Any other
problem is solved by CP-SAT, so the same worker can be shown to go on working.
"""

from __future__ import annotations

import os
import signal
import time


def solve(problem, options):
    what = next((v.name[5:] for v in problem.vars if v.name.startswith("fake:")), None)
    if what == "crash":
        os.kill(os.getpid(), signal.SIGKILL)
    if what == "hang":
        time.sleep(3600)
    if what == "raise":
        raise RuntimeError("fake backend asked to fail")
    from treesens.backends import cpsat

    return cpsat.solve(problem, options)
