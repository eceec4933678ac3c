"""treesens check MODEL --vary NAMES --gap G: one query from flags."""

from __future__ import annotations

import argparse
import time

from ...compiler.kinds import resolve_condition
from ...compiler.readings import read_for
from ...questions.ask import answer
from ...questions.certify import (
    NO_CERTIFICATE,
    answer_refusal,
    certificate_note,
    certify,
    model_refusal,
)
from ...questions.query_build import require_backend
from .common import (
    add_backend_arg,
    add_max_gap_args,
    add_model_args,
    add_query_args,
    check_data,
    emit_result,
    load_from_args,
    log,
    query_from_args,
    what_it_predicts,
)
from .plot import add_plot_arg, check_plot_arg, write_witness_plot

HELP = "check one query given by flags"
DESCRIPTION = """
Can changing only the --vary features flip the model's decision with the given gap? Prints the
verdict and, if sensitive, a replay-checked pair.
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_args(p)
    add_query_args(p)
    add_backend_arg(p)
    add_plot_arg(
        p, "the witness plot (the pair against each feature's range; no pair: the verdict)"
    )
    add_max_gap_args(p)
    p.add_argument(
        "--certificate",
        metavar="FILE",
        default=None,
        help="an insensitive answer proved by the box search: write its proof to FILE, for "
        "`treesens verify FILE` (docs/certificates.md)",
    )
    p.add_argument(
        "--certify",
        action="store_true",
        help="with --certificate: an insensitive answer proved by another solver is "
        "certified by running the box search after the fact",
    )


def run(args) -> int:
    t0 = args.start
    require_backend(args.backend)  # before loading: the heuristic must not answer for it
    check_plot_arg(args)
    ens = load_from_args(args)
    q = query_from_args(args, ens)  # an unknown name is a bad input, before "solving..."
    check_data(args, ens)
    resolve_condition(ens, q)  # and so are a gap or classes the model cannot take
    ens = read_for(ens, q)  # a probability model's reading that the question asks
    if not args.json:
        log(
            f"loaded {ens.source}: {len(ens.trees)} trees, {ens.n_features} features, "
            f"{what_it_predicts(ens)} ({time.time() - t0:.2f}s); solving with {q.plan.backend}..."
        )
    try:  # the time limit runs from the command's start: loading counts
        res = answer(
            ens,
            q,
            start=t0,
            memory_mb=args.memory_mb,
            log=None if args.json else log,
        )
    except KeyboardInterrupt as e:  # the best pair found so far, then the interruption
        partial = getattr(e, "partial_result", None)
        if partial is not None:
            emit_result(partial, args.json, ens)
        raise
    emit_result(res, args.json, ens)
    write_witness_plot(args, res, ens)
    if args.certificate is not None:
        write_certificate(args, ens, q, res)
    return res.exit_code


def write_certificate(args, ens, q, res) -> None:
    """The proof of an insensitive answer, for ``treesens verify`` (a note on stderr says
    what was written, or why nothing was)."""
    refusal = answer_refusal(res) or model_refusal(ens, q, args.model)
    if refusal is None and not args.certify:
        refusal = certificate_note(res.stats)
    if refusal is not None:
        log(f"{NO_CERTIFICATE}: {refusal}")
        return
    out = certify(ens, q, args.certificate, args.model, q.plan.timeout)
    boxes = f"{out.boxes:,} box{'es' if out.boxes != 1 else ''}"
    log(out.message + (f" ({boxes}, {out.seconds:.1f}s)" if out.written else ""))
