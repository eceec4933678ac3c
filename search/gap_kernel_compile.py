"""Making the compiled largest-gap search (gap_kernel.py) ready: whether numba is there
(``available``), whether the kernel and a proof's rebuild kernels are compiled yet or only
on first use (``cold``: neither loaded nor in numba's cache on disk), about how long that
compile takes (``COMPILE_SECONDS``, ``PROOF_COMPILE_SECONDS``) and whether a time limit
leaves it (``compile_fits``), the lock file that lets processes sharing numba's cache
compile once (``compile_lock``), and the progress lines that say so. gap_kernel.prepare
makes the kernels ready with them, by a search over ``ONE_NODE``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .pair_boxes import PairTables


def available() -> bool:
    """Whether numba can be imported (it is a dependency; a platform without its wheels
    runs gap_boxes.py's search instead)."""
    try:
        import numba  # noqa: F401, PLC0415
    except ImportError:
        return False
    return True


# what compiling the kernel on an empty numba cache takes, about (seconds of CPU on two
# quiet cores; a busy machine's wall time is longer): the progress line says it, and a
# check whose time limit leaves less stays with box_search.py rather than compile
# (bench/reports/scale-tier.md, "The first run's compile")
COMPILE_SECONDS = 35
# what compiling the kernels that rebuild a certificate's proof from the search's record
# adds, about (gap_kernel_tops_jit.py: tile, preorder_ends, tiling_tops, box_tops; 14.2
# CPU s measured): made ready with the kernel where a certificate is asked for
# (gap_kernel.prepare's ``rebuild``), not on first use within the time the rebuild has
# (bench/reports/scale-tier.md, "The first run's compile")
PROOF_COMPILE_SECONDS = 15


def compile_fits(deadline: float, proof: bool = False) -> bool:
    """Whether the kernel is ready by ``deadline``: loaded or in numba's cache, or its
    compile (``compile_seconds``; ``proof``: with a proof's rebuild kernels) ends before
    it."""
    return deadline - time.time() >= compile_seconds(proof)


def compiles_first(proof: bool = False) -> bool:
    """Whether the next search compiles: the kernel, or with ``proof`` a proof's rebuild
    kernels (``cold``)."""
    return any(cold(proof))


def compile_seconds(proof: bool = False) -> float:
    """What the next search compiles, about (seconds of CPU): ``COMPILE_SECONDS`` for the
    kernel, and with ``proof`` ``PROOF_COMPILE_SECONDS`` for a proof's rebuild kernels,
    each where it is ``cold`` (0: all ready)."""
    return _seconds(*cold(proof))


def _seconds(search: bool, proof: bool) -> int:
    """Compiling the kernel (``search``) and a proof's rebuild kernels (``proof``), about."""
    return COMPILE_SECONDS * search + PROOF_COMPILE_SECONDS * proof


def cold(proof: bool = False) -> tuple[bool, bool]:
    """Whether the kernel, and (``proof``) any of a proof's rebuild kernels
    (compiled_proof.rebuilt_within's), is neither loaded in this process nor in numba's
    cache on disk: compiled on first use. Reads numba's cache index, which numba does not
    document: a kernel whose index cannot be read counts as ready (its search then runs
    unannounced)."""
    return _cold(kernel()), proof and any(map(_cold, proof_kernels()))


def _cold(run) -> bool:
    if run.signatures:
        return False
    try:
        return not run._cache._cache_file._load_index()  # noqa: SLF001
    except Exception:  # noqa: BLE001 - a numba without these internals
        return False


def proof_kernels() -> tuple:
    """The kernels a proof's rebuild calls (compiled_proof.rebuilt_within)."""
    from .gap_kernel_tops_jit import (  # noqa: PLC0415 - numba only when used
        box_tops,
        preorder_ends,
        tile,
        tiling_tops,
        walk_all_trees,
    )

    return tile, preorder_ends, walk_all_trees, tiling_tops, box_tops


@dataclass(frozen=True)
class Readiness:
    """What making the kernel ready took: ``seconds``, and whether it was ``compiled``
    (numba's cache had no build of it) rather than loaded from the cache."""

    seconds: float
    compiled: bool


def compiling_line(search: bool = True, proof: bool = False) -> str:
    """The progress line of a compile on an empty numba cache, said before it starts:
    the kernel's (``search``) and a proof's rebuild kernels' (``proof``), and about how
    long they take (``compile_seconds``)."""
    return (
        f"max gap: compiling {_what(search, proof)}, once per install: about {_seconds(search, proof)} s of CPU, longer on "
        "a busy machine (not counted in the time limit)"
    )


def _what(search: bool, proof: bool) -> str:
    """The kernels compiled: the search's (``search``), a proof's rebuild's (``proof``)."""
    return {
        (True, False): "the box search's kernels",
        (True, True): "the box search's kernels and those rebuilding a certificate's proof",
        (False, True): "the kernels rebuilding a certificate's proof",
    }[search, proof]


def compiled_line(first: tuple[bool, bool], seconds: float) -> str:
    """The progress line of a compile that took ``seconds``, said once it is done: of
    what ``first`` (``cold``'s answer before it) said was left, or the box search's."""
    what = "the box search" if first[0] or not any(first) else _what(*first)
    return f"max gap: compiled {what} in {seconds:.1f}s (not counted in the time limit)"


COMPILE_LOCK = "gap_kernel_jit.lock"


@contextmanager
def compile_lock(run, log: Callable[[str], None] | None):
    """Hold the lock file beside numba's cache of ``run`` while the kernel is made ready;
    yields whether another process held it first (this one then waited for its
    compile). Without the lock (no fcntl, a cache folder that cannot be written, a numba
    without these internals) every process compiles for itself, as numba alone does."""
    try:
        import fcntl  # noqa: PLC0415 - POSIX only

        folder = Path(run._cache._cache_path)  # noqa: SLF001
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / COMPILE_LOCK, os.O_RDWR | os.O_CREAT, 0o666)
    except Exception:  # noqa: BLE001 - no lock: compile unguarded
        yield False
        return
    try:
        waited = False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            waited = True
            if log is not None:
                log("max gap: waiting for another process compiling the box search")
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield waited
    finally:
        os.close(fd)  # releases the lock


def cache_misses(run) -> int:
    """How many signatures of ``run`` numba compiled rather than loaded (0 where its
    statistics are not there)."""
    try:
        return int(sum(run.stats.cache_misses.values()))
    except Exception:  # noqa: BLE001 - a numba without these statistics
        return 0


# one tree of one node on one column (rank < 1: leaf 0, else leaf 1), rows x1, x2, sum:
# what gap_kernel.prepare() and compiled_proof.ready_rebuild make the kernels ready on
ONE_NODE = PairTables(
    values=np.array([[1.0, -1.0], [1.0, -1.0], [2.0, -2.0]]),
    starts=np.zeros(1, dtype=np.int64),
    node_table=np.array([[0, 1, 0, 1, 2, -1, -1]], dtype=np.int32),
    node_starts=np.array([0, 1], dtype=np.int64),
    thresholds=np.zeros(3),
    sizes=np.full(1, 2, dtype=np.int32),
    columns=((0, None),),
)


def kernel():
    """The search's kernel (gap_kernel_jit.run), numba imported on its first call."""
    from .gap_kernel_jit import run  # noqa: PLC0415 - numba only when the search runs

    return run
