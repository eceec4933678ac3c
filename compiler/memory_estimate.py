"""What a query's process will hold in memory, estimated from the model's size alone
(questions/memory.py holds a query to its memory limit with it).

Measured, not derived: a query's process (load, compile, heuristic, box stage) peaked at
about ``BASE_MB`` plus ``KB_PER_LEAF`` per leaf of the model on the scale tier's adult
models and the shared benchmarks, from 1,250 to 1,681,756 leaves
(bench/reports/memory-estimate.md has the fit). The box search's tables (a max gap's, a
check's box stage) depend on the features varied, not on the model's size alone: they
are held to what the limit leaves above this estimate (search/pair_boxes.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from .ensemble import Ensemble

MB = 1 << 20
# the box search's open boxes' heap, at most (bytes; search/gap_kernel.py KernelSearch's
# heap_bytes): a search that would hold more sheds the boxes of lowest bound (1 GB: about
# 5 million boxes over adult's 14 features, against the 7.4 GB fnlwgt reached unbounded on
# a 255,000-leaf model)
HEAP_BYTES = 1 << 30
BASE_MB = 250.0
KB_PER_LEAF = 4.0


@dataclass(frozen=True)
class ModelSize:
    """What the estimate reads of a model."""

    trees: int
    leaves: int
    features: int

    @classmethod
    def of(cls, ens: Ensemble) -> ModelSize:
        return cls(len(ens.trees), ens.n_leaves(), ens.n_features)

    def __str__(self) -> str:
        return f"{self.trees:,} trees, {self.leaves:,} leaves, {self.features:,} features"


def estimate_mb(size: ModelSize) -> float:
    """The peak resident memory of a query's process on a model of this size (MB), the
    box search's tables and a max gap's heap of open boxes aside."""
    return BASE_MB + KB_PER_LEAF * size.leaves / 1024.0


def room_bytes(ens: Ensemble, memory_mb: float | None) -> int | None:
    """What a limit of ``memory_mb`` leaves above the model's estimate (bytes, at least
    0; None: no limit)."""
    if memory_mb is None:
        return None
    return max(0, int((memory_mb - estimate_mb(ModelSize.of(ens))) * MB))
