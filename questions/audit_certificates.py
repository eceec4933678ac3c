"""Certificates of an audit's rows that do not flip (``treesens audit --certificates
DIR``): one per row, since each states its own claim (x1 the row on every feature, x2
the row outside F: questions/certificate_document.py, the ``flip`` claim of docs/certificates.md).
A row is certified by the box search on its anchored question (search/anchored_boxes.py)
with its proof recorded, and the file checked by the independent checker; a row the
audit's own box search proved (in this process, within ``keeping_row_proofs``) is
certified from the proof that search recorded, with no second search (certify_answer);
a flipped row keeps its witness and gets none."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..answers.result import INSENSITIVE
from ..compiler.ensemble import Ensemble
from ..compiler.query import ANY
from .audit_solve import kept_answer, row_query
from .audit_spec import AuditSpec, audit_reading
from .certify import certify, certify_answer, forget_file
from .output_folder import make_folder

# the reason of a row left without a certificate because a bound (a number of rows, a
# time) stopped the certificates before it: the row was not tried
NOT_ATTEMPTED = "not attempted"
# the end of the reason of a multiclass row of the class x2 is asked (``_own_class``): it
# cannot flip to its own class, so it has no claim to certify and no certificate is missing
NO_FLIP = "no flip to certify"
# a long run's progress line: how far the certificates got, at most once in this many s
PROGRESS_SECONDS = 30.0


def certificate_name(row: int) -> str:
    """A row's certificate's file name in the folder (its index in the data)."""
    return f"row-{row}.json"


def certify_rows(
    ens: Ensemble,
    spec: AuditSpec,
    X: np.ndarray,
    lines: list[dict],
    folder: str | Path,
    model_file,
    budget: float,
    memory_mb: float | None = None,
    log: Callable[[str], None] | None = None,
    limit: int | None = None,
    seconds: float | None = None,
    progress: Callable[[str], None] | None = None,
    work: int | None = None,
) -> dict[int, str]:
    """Write and check a certificate of each row of ``lines`` (the audit's result lines)
    that does not flip into ``folder``, within ``budget`` seconds of box search each:
    row -> "" (certified and verified) or why not; ``log`` gets a line per row. ``limit``:
    at most that many rows are certified, the first in the data's order; ``seconds``: rows
    are begun only until that many seconds have passed (a row gets at most the time left);
    the rows not begun are ``NOT_ATTEMPTED``, saying which bound stopped them.
    ``progress`` gets a line saying how far they got (``progress_text``) at most once in
    ``PROGRESS_SECONDS``, on a run that long. ``work``: each row's work budget (the
    audit's per row): a row's search ends on the boxes it visits, ``budget`` a net, so
    that its certificate does not depend on the machine's load."""
    out: dict[int, str] = {}
    folder = make_folder(folder, f"certificates folder {folder}")
    for d in lines:  # an earlier audit's file of a row not certified now is no claim of this one
        forget_file(folder / certificate_name(int(d["row"])))
    ens = audit_reading(ens, spec.target)
    t_start = time.time()
    end = None if seconds is None else t_start + seconds
    kept = [d for d in lines if d.get("status") == INSENSITIVE]
    said = t_start
    for d in kept:
        if progress is not None and time.time() - said >= PROGRESS_SECONDS:
            progress(progress_text(out, len(kept), time.time() - t_start))
            said = time.time()
        row = int(d["row"])
        to = _own_class(ens, spec, d["decision"])
        if to is not None:  # x2 asked the row's own class: no flip claim to make
            out[row] = f"the row is of class {to}, the class x2 is asked: {NO_FLIP}"
            continue
        left = budget if end is None else min(budget, end - time.time())
        if limit is not None and len(out) >= limit:
            out[row] = f"{NOT_ATTEMPTED}: only the first {limit} are tried"
            continue
        if left <= 0:
            out[row] = f"{NOT_ATTEMPTED}: the {seconds:.1f}s given to certificates were spent"
            continue
        q = row_query(ens, spec, X[row], d["decision"], left, work)
        t0, path = time.time(), folder / certificate_name(row)
        own = kept_answer(spec, X[row], d["decision"])  # the box search proved the row
        if own is not None:  # its proof, recorded as it answered: no second search
            done = certify_answer(ens, q, own, path, model_file, left, memory_mb=memory_mb)
        else:
            done = certify(ens, q, path, model_file, left, memory_mb=memory_mb)
        out[row] = "" if done.verified else done.reason or done.message
        if log is not None:
            log(f"row {row}: {done.message} ({time.time() - t0:.1f}s in all)")
    return out


def _own_class(ens: Ensemble, spec: AuditSpec, decision) -> int | None:
    """The class x2 is asked (``audit --classes C``) where it is the row's own decision
    (a multiclass row cannot flip to its own class), else None."""
    classes = spec.question.classes
    if ens.is_regressor or ens.n_outputs == 1 or not classes or classes[1] == ANY:
        return None
    return int(classes[1]) if int(classes[1]) == int(decision) else None


def progress_text(outcome: dict[int, str], rows: int, seconds: float) -> str:
    """The progress line of a long run of row certificates: how many of the ``rows`` that
    do not flip were tried and certified so far, in how long."""
    done = sum(1 for why in outcome.values() if not why)
    tried = sum(1 for why in outcome.values() if not why.startswith(NOT_ATTEMPTED))
    return (
        f"certificates: {tried} of {rows} rows that do not flip tried, {done} certified "
        f"({seconds:.0f}s)"
    )


def rows_folder(folder: str | Path, name: str) -> Path:
    """The folder of one audit's row certificates among others' (a ``.sens`` audit
    block's, a report's protected feature's): ``FOLDER/NAME.rows``, the name made a file
    name as a query's certificate's is."""
    return Path(folder) / (re.sub(r"[^A-Za-z0-9_.+@-]+", "_", name) + ".rows")


def not_attempted(outcome: dict[int, str]) -> list[str]:
    """The reasons of the rows a bound left untried (``certify_rows``'s limit or time)."""
    return [why for why in outcome.values() if why.startswith(NOT_ATTEMPTED)]


def split_untried(outcome: dict[int, str]) -> tuple[dict[int, str], dict[int, str]]:
    """The rows tried (row -> "" or why not) and those a bound left untried (-> the bound
    that stopped them, without the words 'not attempted')."""
    tried = {r: why for r, why in outcome.items() if not why.startswith(NOT_ATTEMPTED)}
    untried = {r: why.removeprefix(f"{NOT_ATTEMPTED}: ") for r, why in outcome.items()}
    return tried, {r: why for r, why in untried.items() if r not in tried}


def own_class(outcome: dict[int, str]) -> dict[int, str]:
    """The rows of the class x2 is asked (-> why they need no certificate): no flip claim."""
    return {r: why for r, why in outcome.items() if why.endswith(NO_FLIP)}


def split_own_class(outcome: dict[int, str]) -> tuple[dict[int, str], dict[int, str]]:
    """``outcome`` apart from the rows of the class x2 is asked, and those rows (-> why
    they need no certificate)."""
    own = own_class(outcome)
    return {r: why for r, why in outcome.items() if r not in own}, own


def failed(outcome: dict[int, str]) -> list[str]:
    """The reasons of the rows tried and left without a verified certificate (a row of
    the class x2 is asked needs none)."""
    return [
        why
        for why in outcome.values()
        if why and not why.startswith(NOT_ATTEMPTED) and not why.endswith(NO_FLIP)
    ]


def certified_text(outcome: dict[int, str], folder) -> str:
    """The audit's line on its certificates: how many rows that do not flip were
    certified, where, how many a bound left untried and why, how many of the class x2 is
    asked need none, and the first reason of those tried and not certified."""
    done = sum(1 for why in outcome.values() if not why)
    own = own_class(outcome)
    text = f"certificates: {done} of {len(outcome) - len(own)} rows that do not flip, in {folder}"
    skipped, missed = not_attempted(outcome), failed(outcome)
    if skipped:
        text += f"; {len(skipped)} {skipped[0]}"
    if own:
        text += f"; {len(own)} need none ({next(iter(own.values()))})"
    if missed:
        text += f" (not certified: {missed[0]}" + (" ..." if len(missed) > 1 else "") + ")"
    return text
