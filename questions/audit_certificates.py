"""Certificates of an audit's rows that do not flip (``treesens audit --certificates
DIR``): one per row, since each states its own claim (x1 the row on every feature, x2
the row outside F: questions/certify.py, the ``flip`` claim of docs/certificates.md).
A row is certified by the box search on its anchored question (search/anchored_boxes.py)
with its proof recorded, whether the enumeration or the search answered it, and the file
checked by the independent checker; a flipped row keeps its witness and gets none."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..answers.result import INSENSITIVE
from ..compiler.ensemble import Ensemble
from .audit_solve import row_query
from .audit_spec import AuditSpec, audit_reading
from .certify import certify


def model_file_of(model, ens: Ensemble) -> str | Path | None:
    """The file a row's certificate names: the model given as a path, or the file a loaded
    Ensemble was read from (None: an in-memory model, which the checker cannot read)."""
    if isinstance(model, (str, Path)):
        return model
    where = ens.origin.file if ens.origin is not None else ""
    return where if where and Path(where).is_file() else None


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
) -> dict[int, str]:
    """Write and check a certificate of each row of ``lines`` (the audit's result lines)
    that does not flip into ``folder``, within ``budget`` seconds of box search each:
    row -> "" (certified and verified) or why not; ``log`` gets a line per row."""
    out: dict[int, str] = {}
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    ens = audit_reading(ens, spec.target)
    for d in lines:
        if d.get("status") != INSENSITIVE:
            continue
        row = int(d["row"])
        q = row_query(ens, spec, X[row], d["decision"], budget)
        t0 = time.time()
        done = certify(
            ens, q, folder / certificate_name(row), model_file, budget, memory_mb=memory_mb
        )
        out[row] = "" if done.verified else done.reason or done.message
        if log is not None:
            log(f"row {row}: {done.message} ({time.time() - t0:.1f}s in all)")
    return out


def rows_folder(folder: str | Path, name: str) -> Path:
    """The folder of one audit's row certificates among others' (a ``.sens`` audit
    block's, a report's protected feature's): ``FOLDER/NAME.rows``, the name made a file
    name as a query's certificate's is."""
    return Path(folder) / (re.sub(r"[^A-Za-z0-9_.+@-]+", "_", name) + ".rows")


def certified_text(outcome: dict[int, str], folder) -> str:
    """The audit's line on its certificates: how many rows that do not flip were
    certified, where, and the first reason of those that were not."""
    done = sum(1 for why in outcome.values() if not why)
    text = f"certificates: {done} of {len(outcome)} rows that do not flip, in {folder}"
    missed = [why for why in outcome.values() if why]
    if missed:
        text += f" (not certified: {missed[0]}" + (" ..." if len(missed) > 1 else "") + ")"
    return text
