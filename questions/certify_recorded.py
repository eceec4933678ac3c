"""A certificate written from the proof the answer's own box search recorded.

When a certificate is asked for, the answer is searched with its proof recorded
(``recording_proofs``, search/proof_tree.py): an answer the box search proves
"insensitive" carries it (``Result.box_proof``), and its certificate is written from it
with no second search, then checked by the independent checker as any other. A proof
the compiled search's record did not rebuild within the query's time limit is kept
unbuilt (search/compiled_proof.py ``UnbuiltProof``) and rebuilt here, within the
certificate's budget; the search after the answer runs only where that fails. An answer
without one (a solver proved it, the recording was dropped as too large) is certified
as before (questions/certify.py ``certify``: the box search after the answer).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from pathlib import Path

from ..answers.result import Result
from ..compiler.ensemble import Ensemble
from ..compiler.query import Query
from ..compiler.readings import read_for
from ..search.compiled_check import note_rebuild
from ..search.compiled_proof import UnbuiltProof, too_long
from ..search.pair_boxes import tables_held
from ..search.proof_tree import RecordedProof, recording_proofs
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


def recording_for(q: Query, certificate) -> AbstractContextManager:
    """Record the answer's proof when a certificate of ``q`` is asked for (a largest
    gap's: the boxes of its search, which its upper bound's certificate is rebuilt
    from, questions/certify_tiling.py); else leave recording as the caller set it."""
    if certificate is not None:
        return recording_proofs()
    return nullcontext()


def certify_recorded(
    ens: Ensemble,
    q: Query,
    res: Result,
    path: str | Path,
    model_file,
    deadline: float = float("inf"),
    log: Callable[[str], None] | None = None,
    memory_mb: float | None = None,
) -> tuple[Certified | None, str, dict]:
    """The certificate of ``res`` written from its recorded proof and checked by the
    independent checker: (the certificate, or None to certify it by a search, why the
    answer's proof was given up ("": it was not), the stats of its rebuild here). None
    when the answer has no recorded proof, the checker rejects the one written from it
    (then the search's own record, certify.py, is the certificate) or its proof, left
    unbuilt by the query's time limit, is not rebuilt by ``deadline`` (``log`` says how
    many boxes and seconds it takes first). A proof whose rebuild, file and check would
    pass the memory limit (``memory_mb``, else the query's option, else the default:
    questions/memory.py ``certificate_refusal``) is refused before it is rebuilt. The
    recorded proof is dropped from ``res`` either way."""
    rec, res.box_proof = res.box_proof, None
    if not isinstance(rec, RecordedProof) or not rec.parts:
        return None, "", {}
    ens = read_for(ens, q)
    why = model_refusal(ens, q, model_file)
    if why is not None:
        return refused(why), "", {}
    if not checker_reads(ens, [p.enc for p in rec.parts]):
        return None, "", {}  # certify() says why not, as it does for every answer
    mb = memory_mb if memory_mb is not None else q.plan.options.memory_mb
    too_large = certificate_refusal(ens, *_recorded_size(rec), mb)
    if too_large is not None:
        return refused(too_large), "", {}
    t0, stats = time.time(), {}
    why = _rebuilt(rec, deadline, stats, log, q.plan.work is not None)
    if why:
        return None, why, stats
    parts, boxes = [], 0
    for p in rec.parts:
        steps = p.tree.preorder()
        if steps is None:
            return None, "", stats
        boxes += proof_boxes(steps)
        parts.append(proof_part(ens, p.enc, p.tables, steps))
    enc, last = rec.parts[0].enc, rec.parts[-1]
    del rec, p, steps  # the record: not held while its certificate is written and checked
    unwritten = write_document(ens, q, enc, last.tables, parts, model_file, path, False)
    del parts, last
    if unwritten is not None:
        return refused(unwritten, boxes, time.time() - t0), "", stats
    seconds = time.time() - t0
    shown = f"{boxes:,} box{'es' if boxes != 1 else ''}"
    written = f"certificate written to {path} ({shown}, the answer's own proof, {seconds:.1f}s)"
    done = written_and_verified(Path(path), written, boxes, seconds)
    done = replace(done, rebuild={**stats, **done.rebuild})
    return (done if done.verified else None), "", stats


def _recorded_size(rec: RecordedProof) -> tuple[int, int]:
    """A recorded proof's boxes (an unbuilt part's record; a built tree's leaves) and
    the bytes its tables and records hold (questions/memory.py ``certificate_refusal``)."""
    boxes, held = 0, 0
    for p in rec.parts:
        held += tables_held(p.tables)
        if isinstance(p.tree, UnbuiltProof):
            boxes += len(p.tree.boxes)
            held += p.tree.boxes.nbytes
        else:
            boxes += (p.tree.size() + 1) // 2
    return boxes, held


def _rebuilt(rec: RecordedProof, deadline: float, stats: dict, log, by_work: bool = False) -> str:
    """The parts of ``rec`` the answer left unbuilt (compiled_proof.UnbuiltProof),
    rebuilt by ``deadline`` in place, their boxes and seconds added to ``stats``
    (compiled_check.note_rebuild's): "" when every part has its proof, else why not
    (its estimate past the deadline, checked before it starts, as rebuilt_within's;
    ``by_work``, a query under a work budget: not checked, the deadline only a net)."""
    unbuilt = [p for p in rec.parts if isinstance(p.tree, UnbuiltProof)]
    if not unbuilt:
        return ""
    t0, n = time.time(), sum(len(p.tree.boxes) for p in unbuilt)
    estimates = [p.tree.estimate() for p in unbuilt]
    estimate = sum(e or 0.0 for e in estimates)
    left = deadline - time.time()
    if estimate > left and not by_work:
        note_rebuild(stats, (n, time.time() - t0))
        return too_long(n, estimate, left, share=1.0)
    if log is not None:
        about = f" (about {estimate:.0f}s)" if any(e is not None for e in estimates) else ""
        log(f"certificate: rebuilding the answer's proof from {n:,} boxes{about}...")
    for p, e in zip(unbuilt, estimates):
        tree, why = p.tree.rebuilt(deadline, e, by_work)
        if tree is None:
            note_rebuild(stats, (n, time.time() - t0))
            return why
        p.tree = tree
    note_rebuild(stats, (n, time.time() - t0))
    return ""
