"""A certificate written from the proof the answer's own box search recorded.

When a certificate is asked for, the answer is searched with its proof recorded
(``recording_proofs``, search/proof_tree.py): an answer the box search proves
"insensitive" carries it (``Result.box_proof``), and its certificate is written from it
with no second search, then checked by the independent checker as any other. An answer
without one (a solver proved it, the recording was dropped as too large) is certified
as before (questions/certify.py ``certify``: the box search after the answer).
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

from ..answers.result import Result
from ..compiler.ensemble import Ensemble
from ..compiler.query import Query
from ..compiler.readings import read_for
from ..search.pair_boxes import plain_numeric
from ..search.proof_tree import RecordedProof, recording_proofs
from .certify import (
    CODED_LIBRARIES,
    Certified,
    model_library,
    model_refusal,
    proof_part,
    refused,
    write_document,
    written_and_verified,
)


def recording_for(q: Query, certificate) -> AbstractContextManager:
    """Record the answer's proof when a certificate of ``q`` is asked for (a largest
    gap's: the boxes of its search, which its upper bound's certificate is rebuilt
    from, questions/certify_tiling.py); else leave recording as the caller set it."""
    if certificate is not None:
        return recording_proofs()
    return nullcontext()


def certify_recorded(
    ens: Ensemble, q: Query, res: Result, path: str | Path, model_file
) -> Certified | None:
    """The certificate of ``res`` written from its recorded proof and checked by the
    independent checker; None when the answer has no recorded proof (certify it by a
    search) or the checker rejects the one written from it (then the search's own
    record, certify.py, is the certificate). The recorded proof is dropped from ``res``
    either way."""
    rec, res.box_proof = res.box_proof, None
    if not isinstance(rec, RecordedProof) or not rec.parts:
        return None
    ens = read_for(ens, q)
    why = model_refusal(ens, q, model_file)
    if why is not None:
        return refused(why)
    if not all(plain_numeric(p.enc) for p in rec.parts) and (
        model_library(ens) not in CODED_LIBRARIES
    ):
        return None  # certify() says why not, as it does for every answer
    t0 = time.time()
    parts, boxes = [], 0
    for p in rec.parts:
        steps = p.tree.preorder()
        if steps is None:
            return None
        boxes += len(steps)
        parts.append(proof_part(ens, p.enc, p.tables, steps))
    enc, last = rec.parts[0].enc, rec.parts[-1]
    unwritten = write_document(ens, q, enc, last.tables, parts, model_file, path, False)
    if unwritten is not None:
        return refused(unwritten, boxes, time.time() - t0)
    seconds = time.time() - t0
    shown = f"{boxes:,} box{'es' if boxes != 1 else ''}"
    written = f"certificate written to {path} ({shown}, the answer's own proof, {seconds:.1f}s)"
    done = written_and_verified(Path(path), written, boxes, seconds)
    return done if done.verified else None
