"""A script that starts workers without the ``if __name__ == "__main__":`` guard.

A local pool's workers are spawned: each imports the parent's main script afresh (as
``__mp_main__``), so a script that calls treesens with ``jobs=2`` at its top level runs
again in every worker, loads and all, up to that call, which would start workers of its
own. ``refuse_while_importing_main`` stops such a call in the worker: in a worker of a
local pool (``NOTE_VARIABLE`` names the file its parent reads) it writes the line there
and ends the worker quietly, and ``LocalExecutor`` (or ``DaskExecutor`` starting its
``LocalCluster``, whose workers inherit the note) raises the line once in the parent;
elsewhere (the user's own processes) it raises the line.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ...compiler.errors import InputError

NOTE_VARIABLE = "TREESENS_WORKER_NOTE"  # the file a pool's worker writes its line to


def importing_main() -> bool:
    """True in a spawned process still importing its parent's main module."""
    return bool(getattr(multiprocessing.current_process(), "_inheriting", False))


def unguarded_line() -> str:
    main = sys.modules.get("__mp_main__") or sys.modules.get("__main__")
    script = getattr(main, "__file__", None) or "the main script"
    return (
        f"{script} starts treesens' worker processes (jobs > 1) from its top level: each "
        "worker imports the script afresh and would run it again; put the script's "
        'treesens calls under `if __name__ == "__main__":` (docs/distributed.md)'
    )


def refuse_while_importing_main() -> None:
    """Called where workers are started: refuse in a worker importing the main script."""
    if not importing_main():
        return
    line = unguarded_line()
    note = os.environ.get(NOTE_VARIABLE)
    if note:
        with contextlib.suppress(OSError):
            Path(note).write_text(line)
            _read_the_rest()
            raise SystemExit(2)  # the parent says the line, once
    raise InputError(line)


def _read_the_rest() -> None:
    """Read what the parent still writes to this worker (its process object, the model
    within): the parent holds the pipe open until its write ends, so a worker that ended
    unread would leave the parent waiting for ever in ``submit``."""
    frame = sys._getframe()
    while frame is not None and not (
        frame.f_code.co_name == "_main" and frame.f_code.co_filename.endswith("spawn.py")
    ):
        frame = frame.f_back
    source = frame.f_locals.get("from_parent") if frame is not None else None
    if source is not None:
        with contextlib.suppress(Exception):
            pickle.load(source)


@contextlib.contextmanager
def worker_note() -> Iterator[Path]:
    """A file the workers spawned within write their refusal to (named to them in the
    environment they inherit); the parent reads it when its pool breaks."""
    fd, name = tempfile.mkstemp(prefix="treesens-worker-", suffix=".txt")
    os.close(fd)
    before = os.environ.get(NOTE_VARIABLE)
    os.environ[NOTE_VARIABLE] = name
    try:
        yield Path(name)
    finally:
        if before is None:
            os.environ.pop(NOTE_VARIABLE, None)
        else:
            os.environ[NOTE_VARIABLE] = before
        with contextlib.suppress(OSError):
            os.unlink(name)


def raise_worker_note(note: Path) -> None:
    """Raise the line a worker wrote to ``note``, if one did (alone: not as the context
    of the failure the parent was handling when it looked)."""
    with contextlib.suppress(OSError):
        line = note.read_text().strip()
        if line:
            raise InputError(line) from None
