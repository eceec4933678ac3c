"""treesens verify FILE...: re-check certificates of "insensitive" with the independent
checker (the ``verify`` package, which shares no code with the compiler or the driver);
a folder stands for every certificate in it, and each model file is read once for all
the certificates that name it (verify/held.py)."""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

from ...compiler.errors import InputError
from ...verify import CertificateError, ModelUnreadable, verify_file, walk
from .common import log

HELP = "re-check certificates of insensitive (exit 0 valid, 1 invalid)"
DESCRIPTION = """
Recompute every bound of a certificate's proof from the model's trees, read through the model's
own library, and check that its boxes cover the pair space (docs/certificates.md). Given several
certificates, or a folder of them (every *.json in it and in its subfolders), one line each and a
summary; a model file is read once for every certificate that names it. Exit 0: every one valid;
1: one or more rejected; 2: one or more not checked (not a certificate, or its model unreadable).
The first check of a long proof after install compiles the checker's kernels (about 15 s, once):
a line on stderr says so apart from the check's own time.
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "certificate",
        nargs="+",
        help="the certificate (JSON) that check --certificate wrote, or several, or a folder "
        "of them with its subfolders (audit, sweep, test or report --certificates DIR)",
    )
    p.add_argument(
        "--model",
        default=None,
        metavar="FILE",
        help="the model file (default: the path the certificate names); its SHA-256 must "
        "match the certificate's",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print the verdict as one JSON object: valid, message, boxes, model, "
        "verify_compile (the seconds the checker's kernels took to compile, 0 but on a first "
        "check after install) and, of a valid proof, domain (each feature's bounds, as the "
        "proof covers them); of several certificates, one a line, each with its certificate "
        "and whether it was checked",
    )


def run(args) -> int:
    given = args.certificate
    if len(given) == 1 and not Path(given[0]).is_dir():
        return _one(given[0], args)
    return _several(_certificates(given), args)


def _verdict(path: str, model: str | None):
    """``verify_file``'s verdict and the seconds its checker's kernels took to compile (a
    first check after install, once; said on stderr apart from the check's own time), its
    refusals to check as input errors."""
    t0, compiled = time.time(), walk.compile_seconds()
    try:
        verdict = verify_file(path, model)
    except ModelUnreadable as e:
        hint = "; check the path given to --model" if model else "; give it with --model FILE"
        raise InputError(f"{e}{hint}") from None
    except CertificateError as e:
        raise InputError(str(e)) from None
    compiled = walk.compile_seconds() - compiled
    if compiled:
        took = time.time() - t0 - compiled
        log(
            f"{path}: checked in {took:.1f}s, after {compiled:.1f}s compiling the checker's "
            "kernels, once per install"
        )
    return verdict, compiled


def _record(verdict, compiled: float) -> dict:
    fields = ("valid", "message", "boxes", "model")
    record = {k: getattr(verdict, k) for k in fields} | {"domain": list(verdict.domain)}
    return record | {"verify_compile": round(compiled, 3)}


def _one(certificate: str, args) -> int:
    verdict, compiled = _verdict(certificate, args.model)
    if args.json:
        print(json.dumps(_record(verdict, compiled), allow_nan=False), flush=True)
    else:
        print(("VALID: " if verdict.valid else "INVALID: ") + verdict.message, flush=True)
    if verdict.model:  # the claim is of this file: a certificate names the one it proves
        log(f"{certificate}: checked against the model {verdict.model}")
    if not verdict.valid:
        log(f"{certificate}: the certificate does not prove the answer")
    return 0 if verdict.valid else 1


def _natural(path: Path) -> list:
    """A file name's sort key with its numbers as numbers (row-2 before row-10)."""
    return [int(s) if s.isdigit() else s for s in re.split(r"(\d+)", path.name)]


def is_json_file(path: Path) -> bool:
    """A file named *.json in any case (c.JSON too, a name --certificate accepts)."""
    return path.suffix.lower() == ".json" and path.is_file()


def _folder(folder: Path) -> list[Path]:
    """A folder's *.json files in the order of their names, then its subfolders' (an
    audit's rows, which ``test`` and ``report --certificates DIR`` write into
    ``DIR/NAME.rows/``); a link to a folder is not followed."""
    files = sorted((f for f in folder.iterdir() if is_json_file(f)), key=_natural)
    subs = sorted((d for d in folder.iterdir() if d.is_dir() and not d.is_symlink()), key=_natural)
    return files + [f for d in subs for f in _folder(d)]


def _certificates(given: list[str]) -> list[str]:
    """The files given, a folder as its *.json files and its subfolders'."""
    out: list[str] = []
    for g in given:
        p = Path(g)
        if p.is_dir():
            files = _folder(p)
            if not files:
                raise InputError(f"{g}: a folder with no certificates (*.json) in it")
            out.extend(str(f) for f in files)
        else:
            out.append(g)
    return out


def _several(certificates: list[str], args) -> int:
    """One line per certificate (``FILE: VALID: ...``), then a summary; the models'
    files named on stderr, once each."""
    counts = {"valid": 0, "invalid": 0, "not checked": 0}
    models: dict[str, int] = {}
    for path in certificates:
        try:
            verdict, compiled = _verdict(path, args.model)
        except InputError as e:
            counts["not checked"] += 1
            why = str(e).removeprefix(f"{path}: ")  # the line names the file first
            record = {"certificate": path, "checked": False, "valid": False, "message": why}
            print(json.dumps(record) if args.json else f"{path}: NOT CHECKED: {why}", flush=True)
            continue
        counts["valid" if verdict.valid else "invalid"] += 1
        if verdict.model:
            models[verdict.model] = models.get(verdict.model, 0) + 1
        if args.json:
            record = {"certificate": path, "checked": True} | _record(verdict, compiled)
            print(json.dumps(record, allow_nan=False), flush=True)
        else:
            word = "VALID: " if verdict.valid else "INVALID: "
            print(f"{path}: {word}{verdict.message}", flush=True)
    for model, n in models.items():
        log(f"{n} of the certificates checked against the model {model}")
    n = len(certificates)
    counted = ", ".join(f"{v} {k}" for k, v in counts.items() if v)
    summary = f"{n} certificate{'s' if n != 1 else ''}: {counted}"
    if args.json:
        log(summary)
    else:
        print(summary, flush=True)
    return 1 if counts["invalid"] else 2 if counts["not checked"] else 0
