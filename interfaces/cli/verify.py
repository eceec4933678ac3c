"""treesens verify FILE: re-check a certificate of "insensitive" with the independent
checker (the ``verify`` package, which shares no code with the compiler or the driver)."""

from __future__ import annotations

import argparse
import json

from ...compiler.errors import InputError
from ...verify import CertificateError, ModelUnreadable, verify_file
from .common import log

HELP = "re-check a certificate of insensitive (exit 0 valid, 1 invalid)"
DESCRIPTION = """
Recompute every bound of a certificate's proof from the model's trees, read through the model's
own library, and check that its boxes cover the pair space (docs/certificates.md).
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("certificate", help="the certificate (JSON) that check --certificate wrote")
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
        help="print the verdict as one JSON object: valid, message, boxes, model and, of a "
        "valid proof, domain (each feature's bounds, as the proof covers them)",
    )


def run(args) -> int:
    try:
        verdict = verify_file(args.certificate, args.model)
    except ModelUnreadable as e:
        hint = "; check the path given to --model" if args.model else "; give it with --model FILE"
        raise InputError(f"{e}{hint}") from None
    except CertificateError as e:
        raise InputError(str(e)) from None
    if args.json:
        fields = ("valid", "message", "boxes", "model")
        out = {k: getattr(verdict, k) for k in fields} | {"domain": list(verdict.domain)}
        print(json.dumps(out, allow_nan=False), flush=True)
    else:
        print(("VALID: " if verdict.valid else "INVALID: ") + verdict.message, flush=True)
    if verdict.model:  # the claim is of this file: a certificate names the one it proves
        log(f"{args.certificate}: checked against the model {verdict.model}")
    if not verdict.valid:
        log(f"{args.certificate}: the certificate does not prove the answer")
    return 0 if verdict.valid else 1
