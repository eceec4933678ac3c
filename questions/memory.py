"""A query's memory: what a model will need, the limit it is held to, and the share of
it a max gap's box search may keep open.

The estimates (compiler/memory_estimate.py) are measured per stage from the model's
size. A query whose first stage (the load, the heuristic and the box search) passes the
limit is refused before anything is compiled: an "error" result whose message names the
model's size, the estimate and the limit, and how to raise it (``check`` and ``sweep``
on the command line, a sweep or an audit in Python: refused once, up front,
MemoryRefused: exit 2). The solver stage is held to the limit when it comes
(driver/solver_memory.py): a query the heuristic or the box search answers never needs
it. What the limit leaves above the first estimate bounds the box search's tables and a
max gap's heap of open boxes (search_budget).

The limit is the ``memory_mb`` option (``--memory-mb``, ``memory_mb=``, ``option
memory_mb = MB`` in a .sens file); by default, ``DEFAULT_SHARE`` of the memory this
process could have when the query starts (what the system, or the container's cgroup,
reports available, plus what the process holds already), at most ``DEFAULT_CAP_MB``.
A limit given also caps the solver process's address space (backends/worker.py); the
default does not. The box search's tables (a check's box stage, a max gap's) and a max
gap's heap are held to either.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..compiler.ensemble import Ensemble
from ..compiler.errors import InputError
from ..compiler.memory_estimate import (
    HEAP_BYTES,
    MB,
    ModelSize,
    certificate_mb,
    estimate_mb,
    room_bytes,
    solver_stage_mb,
)
from ..driver.solver_memory import RAISE_IT, resident_mb
from ..readers.file_size import size_before_load

# the default limit: this share of the memory the process could have, at most
# DEFAULT_CAP_MB (issue 47: every scale-tier query within 2 GB, a model that would need
# more refused in one line; --memory-mb raises it)
DEFAULT_SHARE = 0.75
DEFAULT_CAP_MB = 2000.0


@dataclass(frozen=True)
class MemoryLimit:
    """The limit a query is held to: ``mb``, and whether it was ``given`` (the option)
    or is the default (``DEFAULT_SHARE`` of the memory available)."""

    mb: float
    given: bool

    @property
    def given_mb(self) -> int | None:
        """The limit as the solver process's address space takes it: only a given one."""
        return int(self.mb) if self.given else None

    def __str__(self) -> str:
        how = (
            ""
            if self.given
            else f" (the default: {DEFAULT_SHARE:.0%} of the memory available, at most "
            f"{DEFAULT_CAP_MB:,.0f} MB)"
        )
        return f"{self.mb:,.0f} MB{how}"


def memory_limit(memory_mb: int | None) -> MemoryLimit:
    """The limit of a query: ``memory_mb`` when given, else the default:
    ``DEFAULT_SHARE`` of the memory available, at most ``DEFAULT_CAP_MB`` (the cap alone
    where the memory available cannot be read)."""
    if memory_mb is not None:
        return MemoryLimit(float(memory_mb), True)
    free = available_mb()
    share = DEFAULT_CAP_MB if free is None else DEFAULT_SHARE * free
    return MemoryLimit(min(DEFAULT_CAP_MB, share), False)


def available_mb() -> float | None:
    """The memory this process could have (MB): the system's available memory (Linux
    ``MemAvailable``; else the physical memory), or the room left under the process's
    cgroup limit when that is less, plus what the process holds already."""
    free = _meminfo_mb("MemAvailable")
    if free is None:
        try:
            free = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / MB
        except (ValueError, OSError, AttributeError):
            return None
    room = _cgroup_room_mb()
    if room is not None:
        free = min(free, room)
    return free + (resident_mb() or 0.0)


def _meminfo_mb(field: str) -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024.0
    except (OSError, ValueError, IndexError):
        return None
    return None


def _cgroup_room_mb() -> float | None:
    """cgroup v2: memory.max less memory.current (None: no limit, or not readable)."""
    base = Path("/sys/fs/cgroup")
    try:
        top = (base / "memory.max").read_text().strip()
        if top == "max":
            return None
        return (int(top) - int((base / "memory.current").read_text())) / MB
    except (OSError, ValueError):
        return None


def memory_refusal(ens: Ensemble, limit: MemoryLimit | None, compiles: bool = False) -> str | None:
    """Why a query on ``ens`` is refused before compiling (None: it fits the limit):
    its load and search pass it, or (``compiles``: a compare, which compiles for every
    backend first) those and the solver stage's compile."""
    if limit is None:
        return None
    size = ModelSize.of(ens)
    need = estimate_mb(size) + (solver_stage_mb(size) if compiles else 0.0)
    what = "to load, compile and solve" if compiles else "to load and search"
    if need <= limit.mb:
        return None
    return _refusal(_model_name(ens), str(size), need, limit, what)


def _refusal(
    name: str, size: str, need: float, limit: MemoryLimit, what: str = "to load and search"
) -> str:
    return (
        f"refused: {name} ({size}) would need about {need:,.0f} MB {what}, above the "
        f"memory limit of {limit}; {RAISE_IT}"
    )


def refuse_file_over_limit(path, memory_mb: int | None) -> None:
    """Raise MemoryRefused, before the model file ``path`` is loaded, when the trees and
    leaves its format gives without loading it (readers/file_size.py: skops files)
    would pass the limit ``memory_mb`` (else the default); nothing where it gives none
    (the refusal then comes after the load)."""
    size = size_before_load(path)
    if size is None:
        return
    limit = memory_limit(memory_mb)
    need = estimate_mb(ModelSize(size.trees, size.leaves, 0))
    if need > limit.mb:
        raise MemoryRefused(
            _refusal(Path(path).name, f"{size}, read before loading it", need, limit)
        )


class MemoryRefused(InputError):
    """A run refused before it starts (an audit: before any row is answered; a
    command-line check or sweep: after the load, before anything is compiled), saying
    why in one line (``memory_refusal``'s message): on the command line, exit 2."""


def refuse_over_limit(ens: Ensemble, memory_mb: int | None) -> None:
    """Raise MemoryRefused when ``ens`` would pass the limit ``memory_mb`` (else the
    default): what a query is refused for, asked of a whole audit up front."""
    why = memory_refusal(ens, memory_limit(memory_mb))
    if why is not None:
        raise MemoryRefused(why)


def _model_name(ens: Ensemble) -> str:
    """The model file's name, else what the ensemble says it came from."""
    files = [path for role, path in ens.inputs if role == "model"]
    return Path(files[0]).name if files else (ens.source or "the model")


@dataclass(frozen=True)
class SearchBudget:
    """A max gap's box search under a limit: its heap of open boxes at most
    ``heap_bytes``; its tables and heap together within ``memory_bytes`` (None: the
    tables under their own bound, search/pair_boxes.py)."""

    heap_bytes: int = HEAP_BYTES
    memory_bytes: int | None = None


def search_budget(ens: Ensemble, limit: MemoryLimit | None) -> SearchBudget:
    """What a max gap's box search may hold: all that the limit leaves above the model's
    estimate, tables and heap together; its heap at most ``HEAP_BYTES`` under the
    default limit (all of that room under a limit given)."""
    if limit is None:
        return SearchBudget()
    room = room_bytes(ens, limit.mb)
    return SearchBudget(room if limit.given else min(room, HEAP_BYTES), room)


def certificate_refusal(ens: Ensemble, boxes: int, held_bytes: int, memory_mb) -> str | None:
    """Why a certificate whose proof is rebuilt from ``boxes`` recorded boxes is not
    written under the limit ``memory_mb`` (else the default), None where it fits: the
    model's estimate, what the search's tables and record hold (``held_bytes``) and the
    proof's rebuild, file and check (``certificate_mb``) together pass it; where the
    process already holds more than the first two (its resident memory now), that."""
    limit = memory_limit(memory_mb)
    size = ModelSize.of(ens)
    held = max(estimate_mb(size) + held_bytes / MB, resident_mb() or 0.0)
    need = held + certificate_mb(boxes, size.leaves)
    if need <= limit.mb:
        return None
    return (
        f"its proof from {boxes:,} boxes would need about {need:,.0f} MB, the model and "
        f"the search's tables included, above the memory limit of {limit}; {RAISE_IT}"
    )
