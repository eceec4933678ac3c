"""treesens check MODEL --vary NAMES --gap G: one query from flags."""

from __future__ import annotations

import time

from ...compiler.encode import resolve_features
from ...compiler.query import resolve_condition
from ...driver import solve_query
from .common import (
    add_backend_arg,
    add_model_args,
    add_query_args,
    emit_result,
    load_from_args,
    log,
    query_from_args,
)
from .main import START


def add_parser(sub) -> None:
    p = sub.add_parser(
        "check",
        help="check one query given by flags",
        description="Can changing only the --vary features flip the model's decision "
        "with the given gap? Prints the verdict and, if sensitive, a replay-checked pair.",
    )
    add_model_args(p)
    add_query_args(p)
    add_backend_arg(p)
    p.set_defaults(func=run)


def run(args) -> int:
    t0 = START
    ens = load_from_args(args)
    q = query_from_args(args)
    resolve_features(ens, q.vary)  # an unknown name is a bad input, before "solving..."
    resolve_condition(ens, q)  # and so are a gap or classes the model cannot take
    if not args.json:
        log(
            f"loaded {ens.source}: {len(ens.trees)} trees, {ens.n_features} features, "
            f"{ens.n_classes} classes ({time.time() - t0:.2f}s); solving with {q.backend}..."
        )
    res = solve_query(ens, q, deadline=t0 + q.timeout, memory_mb=args.memory_mb)
    res.time["total"] = time.time() - t0
    emit_result(res, args.json, ens)
    return res.exit_code
