"""What a query's process will hold in memory, stage by stage, estimated from the model's
size alone (questions/memory.py refuses a query up front by the first stage;
driver/solver_memory.py holds the solver stage to the limit before its compile).

Measured, not derived (bench/memory_probe.py --stages; bench/reports/memory-estimate.md
has the table, tests/driver/test_memory_estimate.py checks these figures cover it):

- **load and search** (``estimate_mb``): the peak of the load, the heuristic and the box
  search's encoding, ``BASE_MB`` plus ``KB_PER_LEAF`` per leaf. A query is refused up
  front when this passes its limit (a model whose loading alone cannot fit).
- **the solver stage** (``solver_stage_mb``), asked only of a query that the heuristic
  and the box search left open: what it adds to the memory held when it starts, in this
  process (the Problem's compile and the backend's reductions, ``SOLVER_BASE_MB`` plus
  ``SOLVER_KB_PER_LEAF`` per leaf) and in the solver's own process, alive at the same
  time (``WORKER_BASE_MB`` plus ``WORKER_KB_PER_LEAF`` per leaf; CP-SAT measured in its
  first 30-120 s).
- **a certificate** (``certificate_mb``): its proof, ``CERTIFICATE_BASE_MB`` plus
  ``CERTIFICATE_KB_PER_LEAF`` per leaf of the model plus ``CERTIFICATE_BYTES_PER_BOX``
  per box the search recorded, above what the process holds when it starts (the model's
  estimate and the pair tables, or its resident memory then if more): a max gap's
  or an answer's recorded proof that would pass the limit is not rebuilt
  (questions/memory.py ``certificate_refusal``); a certificate's own search holds its
  record to the boxes whose certificate fits (search/compiled_check.py
  ``recording_within``).

The box search's tables (a max gap's, a check's box stage) depend on the features
varied, not on the model's size alone: they are held to what the limit leaves above the
first estimate (search/pair_boxes.py).
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
# a certificate's proof, per box the search recorded (a leaf of the proof's tree, with
# its split): the tree rebuilt from the record (search/proof_bounds.py TiledTree's
# arrays), the walk of its bounds and the checker's reading of the file written (its
# steps as arrays, verify/certificate_text.py), all at their peak together, above a
# part that does not grow with the boxes (the checker's own reading of the model).
# Measured on adult xgb_t1000_d8 sex (bench/reports/memory-estimate.md, "A certificate's
# proof"): its check at gap 0.499, 17,987 boxes, 26 MB above the same check without a
# certificate (555 and 529 MB peaks); its max gap, 430,682 boxes, 94 MB above the peak
# before the rebuild (505 and 411 MB): about 165 bytes a box and 23 MB. 384 bytes and
# 32 MB with headroom (1,024 bytes and no base before, 760 bytes a box measured when the
# tree was Python tuples and the checker loaded the JSON document whole). Those were
# differences of whole-process peaks; from the resident memory at the certificate's start
# (VmHWM reset there) it grows more, the part that does not grow with the boxes most of
# it (the checker's own reading of the model through its library, its modules): 147 MB
# on adult xgb_t1000_d8 sex at gap 0.4995 (53,210 leaves, 6,581 boxes: 408 MB held at
# the start, 555 at the peak, where 32 MB and the model's estimate gave 386), 118 MB on
# breast_cancer_deep_xgb mean_texture at 0.45 (389 leaves, 3 boxes: 101 -> 218 MB).
# 160 MB plus 1 KB a leaf covers both with a margin of at least 1.35 (214 and 162 MB)
CERTIFICATE_BYTES_PER_BOX = 384
CERTIFICATE_BASE_MB = 160.0
CERTIFICATE_KB_PER_LEAF = 1.0
BASE_MB = 300.0
KB_PER_LEAF = 0.75
SOLVER_BASE_MB = 100.0
SOLVER_KB_PER_LEAF = 7.0
WORKER_BASE_MB = 250.0
WORKER_KB_PER_LEAF = 10.0


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
    """The peak resident memory of a query's process on a model of this size (MB) up to
    the solver stage: the load, the heuristic, the box search (its tables and a max
    gap's heap of open boxes aside)."""
    return BASE_MB + KB_PER_LEAF * size.leaves / 1024.0


def solver_stage_mb(size: ModelSize) -> float:
    """What the solver stage adds to the memory held before it on a model of this size
    (MB): in this process and in the solver's."""
    return solver_main_mb(size) + solver_process_mb(size)


def solver_main_mb(size: ModelSize) -> float:
    """What the solver stage adds in this process: the Problem's compile and the
    backend's reductions (MB)."""
    return SOLVER_BASE_MB + SOLVER_KB_PER_LEAF * size.leaves / 1024.0


def solver_process_mb(size: ModelSize) -> float:
    """The solver's own process at its peak (MB)."""
    return WORKER_BASE_MB + WORKER_KB_PER_LEAF * size.leaves / 1024.0


def certificate_mb(boxes: int, leaves: int = 0) -> float:
    """What a certificate whose proof has ``boxes`` boxes, of a model of ``leaves``
    leaves, adds to the memory held before its proof is rebuilt (MB), to the checker's
    peak reading it."""
    return (
        CERTIFICATE_BASE_MB
        + CERTIFICATE_KB_PER_LEAF * leaves / 1024.0
        + CERTIFICATE_BYTES_PER_BOX * boxes / MB
    )


def room_bytes(ens: Ensemble, memory_mb: float | None) -> int | None:
    """What a limit of ``memory_mb`` leaves above the model's estimate (bytes, at least
    0; None: no limit)."""
    if memory_mb is None:
        return None
    return max(0, int((memory_mb - estimate_mb(ModelSize.of(ens))) * MB))
