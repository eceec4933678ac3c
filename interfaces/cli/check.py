"""treesens check MODEL --vary NAMES --gap G: one query from flags."""

from __future__ import annotations

import argparse
import math
import time
from contextlib import AbstractContextManager, nullcontext

from ...answers.phrases import BEFORE_SEARCH_STAGE
from ...answers.result import UNKNOWN
from ...compiler.kinds import resolve_condition
from ...compiler.readings import read_for
from ...questions.ask import answer, refuse_query, solving_with
from ...questions.memory import refuse_file_over_limit
from ...questions.query_build import require_backend
from ...readers.structure_cache import keep_structures
from .common import (
    add_backend_arg,
    add_max_gap_args,
    add_model_args,
    add_query_args,
    check_data,
    emit_result,
    load_from_args,
    log,
    positive_float,
    query_from_args,
    told_by_flag,
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
        metavar="FILE.json",
        default=None,
        help="an insensitive answer: write its box-search proof to FILE.json (a name ending "
        "in .json, as `treesens verify DIR` finds it) and check it with the independent "
        "checker of `treesens verify FILE.json` (docs/certificates.md); the result line says "
        "whether it was certified, or why not",
    )
    add_certify_budget_arg(p, "the query's --timeout")
    p.add_argument(  # kept for old scripts: --certificate now does what it asked
        "--certify", action="store_true", help=argparse.SUPPRESS
    )


def add_certify_budget_arg(p: argparse.ArgumentParser, default: str) -> None:
    p.add_argument(
        "--certify-budget",
        type=positive_float,
        default=None,
        metavar="SECONDS",
        help="with a certificate asked for: the seconds the box search gets, after the "
        "answer, to prove an insensitive answer again with its proof written out (an answer "
        f"a solver proved is certified only so; default {default}); the independent check of "
        "the file comes after it",
    )


def run(args) -> int:
    t0 = args.start
    t_run = time.time()  # the interpreter, the imports and the flags took until now
    with told_by_flag("--backend"):  # before loading: the heuristic must not answer for it
        require_backend(args.backend)
    check_plot_arg(args)
    if args.certificate is not None or args.certify_budget is not None:  # before the answer
        from ...questions.certificate_document import check_certificate_path, refuse_budget_alone

        refuse_budget_alone(args.certify_budget, args.certificate)
        if args.certificate is not None:  # a file that cannot be written
            check_certificate_path(args.certificate)
    refuse_file_over_limit(args.model, args.memory_mb)  # a skops file's size, before its load
    keep_structures()  # a model's encoding structure kept for its next check, as its parse
    ens = load_from_args(args)
    t_loaded = time.time()
    q = query_from_args(args, ens)  # an unknown name is a bad input, before "solving..."
    refuse_query(ens, q, args.memory_mb)  # over the memory limit: one line, exit 2
    check_data(args, ens)
    resolve_condition(ens, q)  # and so are a gap or classes the model cannot take
    ens = read_for(ens, q)  # a probability model's reading that the question asks
    if not args.json:
        log(
            f"loaded {ens.source}: {len(ens.trees)} trees, {ens.n_features} features, "
            f"{what_it_predicts(ens)} ({time.time() - t0:.2f}s); solving with {solving_with(ens, q)}..."
        )
    t_asked = time.time()
    try:  # the time limit runs from the command's start: loading counts
        with proof_recording(q, args.certificate):  # the certificate from the answer's proof
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
    # the command's start-up and the model's load, apart (both are in "total")
    res.time.update(startup=t_run - t0, load=t_loaded - t_run)
    before_search_note(res, q.plan.timeout, t_run - t0, t_asked - t_run)
    if args.certificate is not None:  # before the result: it says whether it was certified
        write_certificate(args, ens, q, res)
    emit_result(res, args.json, ens)
    write_witness_plot(args, res, ens)
    return res.exit_code


# the least time the advice above leaves a search: the limit asked, where it was less
# (--timeout 0.001), would leave it a fraction of a second, too little to answer
ADVISED_SEARCH_S = 10.0


def before_search_note(res, timeout: float | None, startup: float, load: float) -> None:
    """Where the time limit ran out before the search began (the command's start-up and
    the model's load took it, or compiling took what they left), say what took it and what
    to do: --timeout counts the whole command, so give one above what came before the
    search, or load the model once for many questions."""
    stage = BEFORE_SEARCH_STAGE.get(res.message)  # compiling, or reading the trees alone
    stopped = stage is not None
    if res.status != UNKNOWN or timeout is None or not (stopped or startup + load >= timeout):
        return
    compile_s = res.time.get("compile", 0.0) if stopped else 0.0
    before = startup + load + compile_s
    took = f"start-up {startup:.1f}s, loading the model {load:.1f}s"
    took += f", {stage} {compile_s:.1f}s" if stopped else ""
    if stopped:
        res.message = f"time limit reached before the search ({took}, of --timeout {timeout:g})"
    search = max(timeout, ADVISED_SEARCH_S)
    res.notes.append(
        f"--timeout counts the whole command{'' if stopped else f' ({took})'}: run with "
        f"--timeout {math.ceil(before + search)} or more (the {before:.1f}s before the "
        f"search and {search:g}s for it), or load the model once for many questions "
        "(treesens sweep, a .sens file's treesens run, or treesens.load_model and "
        "treesens.check in Python)"
    )


def certify_bound(q, seconds: float) -> str:
    """What bounds a certificate's own search: its seconds, or under a work budget the
    query's work in boxes (questions/certify.py), the seconds a net."""
    if q.plan.work is None:
        return f"at most {seconds:g}s"
    return f"at most {q.plan.work:,} boxes, the query's work; {seconds:g}s the safety net"


def proof_recording(q, certificate) -> AbstractContextManager:
    """The answer's box-search proof recorded when a certificate is asked for (imported
    only then: the certificate's modules load the checker)."""
    if certificate is None:
        return nullcontext()
    from ...questions.certify_recorded import recording_for

    return recording_for(q, certificate)


def write_certificate(args, ens, q, res) -> None:
    """The proof of an insensitive answer, for ``treesens verify``, checked by its
    checker; the result's proof record says so, and a line on stderr what was written
    (or why nothing was)."""
    from ...questions.certify import answer_refusal, certify_answer  # the checker: when asked

    budget = args.certify_budget if args.certify_budget is not None else q.plan.timeout
    if res.box_proof is None and answer_refusal(res) is None:
        # no recorded proof: a search of its own, which may take the whole budget
        log(f"certificate: searching for its proof ({certify_bound(q, budget)})...")
    done = certify_answer(
        ens, q, res, args.certificate, args.model, budget, args.memory_mb, log=log
    )
    log(done.message)
