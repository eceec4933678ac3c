"""A max gap's upper bound certified from its own search, with no second search.

Asked for a certificate, a binary max gap's compiled search (search/gap_boxes.py) keeps
every box it drops under its floor or resolves; with the boxes still open when it ends,
they tile the pair space, and each is bounded by the upper bound U the answer states
(a dropped box by the floor, which is at most U; a resolved box by the pair found in it;
an open box by U itself). So at the certified gap U' > U (certify.certified_bound) each
is ruled out by a row of the check at U': the proof is the tiling rebuilt as a tree of
splits (search/compiled_proof.py), each box's bound recomputed exactly over the pair
tables of that check. Where this does not give a proof (tables that differ, a box no row
rules out), the certificate comes from a search at U' as before (certify.certify).
Nothing here is trusted: the independent checker recomputes every bound.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import numpy as np

from ..compiler.ensemble import Ensemble
from ..compiler.query import Query
from ..compiler.readings import read_for
from ..search import gap_kernel
from ..search.compiled_proof import NOT_A_PROOF, ready_rebuild, rebuilt_within, root_proof
from ..search.gap_kernel import flatten
from ..search.pair_boxes import PairTables, PairTablesTooLarge, pair_tables, tables_held
from ..search.pair_scope import class_pair_encodings, pair_encoding
from ..search.proof_tree import RecordedTiling
from ..search.relation_boxes import rank_relations, relation_events
from .certificate_document import write_document
from .certificate_steps import proof_part
from .certify import (
    Certified,
    checker_reads,
    model_refusal,
    proof_boxes,
    refused,
    written_and_verified,
)
from .memory import certificate_refusal

# the share of a max gap certificate's budget (--certify-budget) that the rebuild of its
# proof from its own search's boxes may take; the search at U' after a rebuild that gave
# up keeps the rest at least (a rebuild whose estimate was too low ends at its deadline)
REBUILD_SHARE = Fraction(2, 3)


def rebuild_share(budget: float) -> float:
    """The seconds a max gap's certificate gives the rebuild of its proof from the boxes
    its own search kept: ``REBUILD_SHARE`` of its ``budget``."""
    return float(REBUILD_SHARE * max(budget, 0.0))


def search_after_rebuild(budget: float, spent: float) -> float:
    """The seconds the search at U' gets after a max gap's rebuild that gave up having
    ``spent`` seconds: what the rebuild left of ``budget``, and never less than the rest
    beyond the rebuild's share (no rebuild: the budget less what was spent)."""
    return max(budget - spent, budget - rebuild_share(budget), 0.0)


def certify_tiling(
    ens: Ensemble,
    q: Query,
    held: list[RecordedTiling],
    path: str | Path,
    model_file: str | Path | None,
    deadline: float,
    memory_mb: float | None = None,
    log: Callable[[str], None] | None = None,
) -> Certified | str:
    """The certificate that no pair reaches the gap ``q`` asks (U'), written from the
    tiling a max gap's search recorded and checked by the independent checker; else why
    the tiling gives no proof, or its boxes' bounds were not recomputed by ``deadline``
    (a line: the caller says it and searches at U'; "" where the model is refused,
    which that search says). A box of the tiling's tree already under
    U' ends its subtree there (compiled_proof.rebuilt_within's ``from_the_root``): most
    do where the search dropped its boxes well under U' (a bracket left open), and the
    walk down the tree costs no more for it. ``held``: a list holding the record, its
    only reference, emptied here so that its boxes are freed once the proof is rebuilt
    from them (not held while the certificate is written and checked). A proof whose
    rebuild would pass the memory limit (``memory_mb``, else the query's option, else the
    default: questions/memory.py ``certificate_refusal``) is refused before it starts,
    with no search at U' (which would record as many boxes); ``log`` is told of a
    rebuild as it starts, and of its ``deadline``: the caller's share of the
    certificate's budget (``rebuild_share``)."""
    t0 = time.time()
    rec = held.pop()  # the caller's only reference: dropped here once its boxes are read
    ens = read_for(ens, q)
    if model_refusal(ens, q, model_file) is not None:
        return ""  # certify() says why, as for every answer
    found = _tables_for(ens, q, rec)
    if isinstance(found, str):
        return found
    enc, tables = found
    boxes, recorded = np.asarray(rec.boxes), len(rec.boxes)
    del rec
    mb = memory_mb if memory_mb is not None else q.plan.options.memory_mb
    too_large = certificate_refusal(ens, recorded, tables_held(tables) + boxes.nbytes, mb)
    if too_large is not None:
        return refused(too_large, 0, time.time() - t0)
    if log is not None:
        kept = f"{recorded:,} box{'es' if recorded != 1 else ''}"
        within = f"at most {max(deadline - t0, 0.0):.3g}s, {REBUILD_SHARE} of its budget"
        log(
            f"certificate: rebuilding its proof from the {kept} the max gap's search kept "
            f"({within}, the rest kept for a search at U')..."
        )
    tree, why, compiled = root_proof(tables), "", {}  # the whole space under U' (no split)
    if tree is None:
        # the kernels a rebuild runs, compiled here on an empty numba cache (the search's
        # kernel alone was made ready before it): said, and not counted in the budget
        ready = gap_kernel.prepare(log, ready_rebuild)
        if ready.compiled:  # left out of the rebuild's seconds too
            deadline, t0 = deadline + ready.seconds, t0 + ready.seconds
            compiled = {"rebuild_compile": ready.seconds}
        ft = flatten(tables, np.arange(len(tables.starts)))
        # the boxes no pair of whose ranks meets a relation: closed by its step, unbounded
        events = relation_events(rank_relations(enc, tables), boxes)
        tree, why = rebuilt_within(
            boxes,
            ft,
            tables,
            events,
            False,
            deadline,
            from_the_root=True,
            share=float(REBUILD_SHARE),
            by_work=q.plan.work is not None,  # the estimate the load's: not a reason
        )
        del ft
    del boxes
    steps = None if tree is None else tree.preorder()
    if steps is None:
        return _given_up(why or NOT_A_PROOF, recorded, deadline - t0)
    rebuild = {"recorded": recorded, "rebuild_time": time.time() - t0, **compiled}
    pruned = proof_boxes(steps)
    parts = [proof_part(ens, enc, tables, steps)]
    del tree, steps  # the parts' generator holds them until the document is written
    unwritten = write_document(ens, q, enc, tables, parts, model_file, path, True)
    del parts  # the proof: not held while the checker reads the file
    if unwritten is not None:
        return replace(refused(unwritten, pruned, time.time() - t0), rebuild=rebuild)
    seconds = time.time() - t0
    written = (
        f"certificate written to {path} ({pruned:,} box{'es' if pruned != 1 else ''}, "
        f"{_source(pruned, recorded)}, "
        f"{seconds:.1f}s)"
    )
    done = written_and_verified(Path(path), written, pruned, seconds)
    return replace(done, rebuild={**rebuild, **done.rebuild})


def _tables_for(ens, q: Query, rec: RecordedTiling) -> tuple | str:
    """The check at U''s one encoding and its pair tables, the same pair space as the
    tiling's; else why not (a line)."""
    encs = class_pair_encodings(pair_encoding(ens, q.over_all_inputs()), relations=True)
    if encs is None or len(encs) != 1:
        return "the check at U' is not one pair of classes, as the max gap's boxes are"
    if not checker_reads(ens, encs):
        return "the checker does not read the model's categories or missing values"
    try:
        tables = pair_tables(encs[0])
    except PairTablesTooLarge as e:
        return str(e)
    if not same_pair_space(tables, rec.tables):
        return "the check at U''s pair tables are not those of the max gap's search"
    return encs[0], tables


def _given_up(why: str, recorded: int, budget: float) -> str:
    """Why a tiling's rebuild gave no proof, as the progress line and the proof record
    say it: a rebuild that did not end in time names its boxes and budget."""
    if why == NOT_A_PROOF:
        return f"the max gap's {recorded:,} boxes do not rebuild a proof at U'"
    if why.endswith("ran past its deadline"):
        within = f"within its budget of {max(budget, 0.0):.3g}s"
        return f"the rebuild from {recorded:,} boxes did not end {within}"
    return why


def _source(pruned: int, recorded: int) -> str:
    """Where a proof's boxes came from, as the certificate's line says it."""
    if pruned == recorded:
        return "the max gap's own search"
    return f"from the {recorded:,} of the max gap's own search"


def same_pair_space(a: PairTables, b: PairTables) -> bool:
    """Whether a box (ranks per column) means the same pair leaves in both tables: the
    same columns, trees and nodes (the gap changes the rows' thresholds only)."""
    return (
        a.columns == b.columns
        and np.array_equal(a.sizes, b.sizes)
        and np.array_equal(a.starts, b.starts)
        and np.array_equal(a.node_starts, b.node_starts)
        and np.array_equal(a.node_table, b.node_table)
    )
