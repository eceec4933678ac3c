"""What the box-search stages (boxes.py, link_boxes.py) share: their tables, skipped when
too large, and the answer a completed search proves."""

from __future__ import annotations

from collections.abc import Callable

from ..answers.accept import with_preferred
from ..answers.context import SolveContext
from ..answers.result import INSENSITIVE
from ..compiler.encode import Encoding
from ..compiler.invert import Witness, witness_from_pair
from ..compiler.kinds import kind_of
from ..compiler.memory_estimate import room_bytes
from ..compiler.question import where_words
from ..readers.load_notes import said_after
from .anchored_boxes import is_anchored
from .pair_boxes import PairTables, PairTablesPastDeadline, PairTablesTooLarge, pair_tables

FOUND_BY = "box search"
# seconds of building the pair tables after which ``note`` (a progress line) is told once:
# a model of many leaves takes up to a minute (adult lgbm_t1000_l255's fnlwgt)
TABLES_NOTE_AFTER = 5.0


def tables_or_skip(
    enc: Encoding,
    stats: dict,
    memory_mb: float | None = None,
    deadline: float | None = None,
    note: Callable[[str], None] | None = None,
) -> PairTables | None:
    """The pair tables of ``enc``, or None with ``stats`` saying why they were skipped
    (``memory_mb``: the query's memory limit, given or the default, which they must fit
    above the model's estimate; ``deadline``: the time building them may take, to an
    absolute time; ``note``: a progress line, told where building them takes seconds)."""
    held = room_bytes(enc.ensemble, memory_mb)
    # an anchored question's boxes derived from the nodes: its trees walk compiled
    boxes = not is_anchored(enc.query)
    try:
        with said_after(TABLES_NOTE_AFTER, note, "box search: building the pair tables..."):
            return pair_tables(enc, max_held=held, deadline=deadline, boxes=boxes)
    except PairTablesTooLarge as e:
        stats.clear()
        stats.update({"status": "skipped", "reason": str(e)})
        if isinstance(e, PairTablesPastDeadline):  # the time limit's, not the model's size
            stats["ended_by"] = "time"
        return None


def prove_insensitive(ctx: SolveContext, how: str = "") -> bool:
    """Record the search's proof that no pair meets the query (``how``: a note on how the
    boxes were bounded); True, the stage answered."""
    res = ctx.result
    res.status = INSENSITIVE
    res.message = (
        f"proved by the box search: no box of the pair space {ctx.ens.domain}"
        f"{where_words(ctx.q)} meets "
        f"{kind_of(ctx.q).asks}{how}"
    )
    ctx.stats["proved_by"] = FOUND_BY
    return True


def box_witnesses(ctx: SolveContext, enc: Encoding, x1, x2) -> list[Witness]:
    """The witnesses to replay for a pair the box search found, in turn: with --data, first
    with values seen in the data where they fit (the same cells, so the same leaves;
    docs/data-aware.md, "Realistic witnesses"), then as found; an anchored question's as
    found (its x1 is its row)."""
    w = witness_from_pair(enc, x1, x2)
    prefer = ctx.prefer and not is_anchored(enc.query)
    return [with_preferred(enc, w, ctx.prefer), w] if prefer else [w]
