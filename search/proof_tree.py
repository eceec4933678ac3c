"""The box search's proof recorded as a tree, whatever order the search visits it in.

A certificate states the proof in preorder, the "yes" side of a split first
(questions/certify.py). A search recording a flat list must visit it in that order; the
answer's search does not (past its first boxes it enters the child with more room
first), so it records each box under its own number instead: a split numbers its two
children, a pruned box or a box ruled out by the library's replay is a leaf. ``preorder``
reads the finished tree in the certificate's order; the certify step then writes the
answer's own proof with no second search (``recording_proofs``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

# boxes past which a recording is dropped (a certificate then searches again, as before
# recording existed): bounds the memory an answer's search may spend on its proof
MAX_RECORDED = 1_000_000

_RECORDING: ContextVar[bool] = ContextVar("treesens_recording_proofs", default=False)


@contextmanager
def recording_proofs(on: bool = True) -> Iterator[None]:
    """Within this block, a box search that answers "insensitive" in this thread keeps
    its proof on the result (``Result.box_proof``) for the certificate asked for."""
    token = _RECORDING.set(on)
    try:
        yield
    finally:
        _RECORDING.reset(token)


def recording() -> bool:
    return _RECORDING.get()


# a box closed because x1 and x2 reach the same leaf in every tree (no tree splits on a
# varied feature within its bounds: search/boxes.py ``reads_alike``), so the library
# predicts both alike; the certificate's ``alike`` step, which the checker verifies
# (verify/alike.py)
ALIKE = ("alike",)


class ProofTree:
    """Boxes numbered from 0 (the whole pair space); ``events[n]`` is box n's step as a
    flat record gives it (``("split", column, R)``, ``("prune", row, bound)``,
    ``("replay", x1, x2)``, ``ALIKE``), None while it is not visited; a split's "yes"
    box is ``yes_of[n]``, its "no" box the next number."""

    ROOT = 0

    def __init__(self, capped: bool = True) -> None:
        """``capped``: the recording is given up past MAX_RECORDED boxes (an answer's
        own, which a certificate may do without); a certificate's own search keeps all."""
        self.capped = capped
        self.events: list = [None]
        self.yes_of: list[int] = [-1]
        # past MAX_RECORDED boxes, or the compiled search took over: the recording was given up
        self.dropped = False

    def split(self, n: int, column: int, rank: int) -> tuple[int, int]:
        """Box n split at (column, rank): the numbers of its "yes" and "no" boxes."""
        if self.dropped:
            return self.ROOT, self.ROOT
        if self.capped and len(self.events) + 2 > MAX_RECORDED:
            self.give_up()
            return self.ROOT, self.ROOT
        yes = len(self.events)
        self.events[n] = ("split", column, rank)
        self.yes_of[n] = yes
        self.events += [None, None]
        self.yes_of += [-1, -1]
        return yes, yes + 1

    def size(self) -> int:
        """Its boxes, split or not (the whole space and each split's two)."""
        return len(self.events)

    def give_up(self) -> None:
        """Stop recording: the search goes on unrecorded (``preorder`` is then None)."""
        self.dropped = True
        self.events, self.yes_of = [None], [-1]

    def leaf(self, n: int, event: tuple) -> None:
        """Box n settled without a split: pruned, or ruled out by the replay."""
        if not self.dropped:
            self.events[n] = event

    def preorder(self) -> list | None:
        """The steps in the certificate's order; None when a box is not settled (the
        search did not finish) or the recording was dropped."""
        if self.dropped:
            return None
        out, stack = [], [self.ROOT]
        while stack:
            n = stack.pop()
            event = self.events[n]
            if event is None:
                return None
            out.append(event)
            if event[0] == "split":
                yes = self.yes_of[n]
                stack += [yes + 1, yes]
        return out


@dataclass
class RecordedPart:
    """One box search's recorded proof (one pair of classes): its encoding and pair
    tables, which the certificate names its rows and columns from."""

    enc: object
    tables: object
    tree: ProofTree


@dataclass
class RecordedProof:
    """The proof of an answer "insensitive" by the box search: a part per pair of
    classes, in the order ``class_pair_encodings`` gives them."""

    parts: list[RecordedPart]


@dataclass
class RecordedTiling:
    """What a max gap's compiled search recorded for the certificate of its upper bound
    (questions/certify_tiling.py): the boxes it dropped or resolved and those left open
    (rows lo | hi over ``tables``' columns), which tile the pair space, each bounded by
    the upper bound the answer states."""

    enc: object
    tables: object
    boxes: object
