"""--plot FILE.png of check (the witness plot) and sweep (the sweep plot)."""

from __future__ import annotations

import argparse

from ...answers.result import Result
from ...compiler.ensemble import Ensemble
from ...views.plot_common import PLOT_SUFFIXES, check_plot_path
from .common import log


def add_plot_arg(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--plot",
        default=None,
        metavar="FILE.png",
        help=f"write {what} to FILE (its suffix picks the format: {', '.join(PLOT_SUFFIXES)}; "
        "docs/plots.md)",
    )


def check_plot_arg(args) -> None:
    """A --plot file that cannot be written fails before anything runs."""
    if args.plot is not None:
        check_plot_path(args.plot)


def write_witness_plot(args, res: Result, ens: Ensemble) -> None:
    """The witness plot of ``res`` to --plot (with --data's distribution); a result without
    a pair gets a figure that says so, and a line on stderr."""
    if args.plot is None:
        return
    from ...views.plot_witness import plot_witness  # only with --plot

    data = getattr(args, "data", None)
    plot_witness(res, data=data, model=ens, label=args.label, path=args.plot)
    if not res.witness:
        log(f"plot {args.plot}: {res.status}, no pair to draw (the figure says so)")
    else:
        log(f"plot written to {args.plot}")


def write_sweep_plot(args, results: list[Result]) -> None:
    """The sweep plot of ``results`` to --plot."""
    if args.plot is None or not results:
        return
    from ...views.plot_sweep import plot_sweep  # only with --plot

    plot_sweep(results, path=args.plot)
    log(f"plot written to {args.plot}")
