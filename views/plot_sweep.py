"""The sweep plot: one horizontal bar per query of a sweep (a feature or a feature set),
coloured by its verdict, as long as the gap it reaches, longest first.

A bar's length is the query's maximal gap when the result carries one (``max_gap``), else
the gap its pair achieves (binary: the largest g with P(x1) >= 0.5 + g and
P(x2) <= 0.5 - g; multiclass: the probability ratio); a query without a pair
(insensitive, unknown, error) has a bar of length 0 and its verdict written beside it."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..answers.result import ERROR, INSENSITIVE, SENSITIVE, UNKNOWN, Result
from ..answers.stats import asked_of
from ..compiler.errors import InputError, suggests_keywords
from ..questions.results_log import read_log
from .plot_common import (
    VERDICT_COLOURS,
    as_result,
    check_plot_path,
    figure_and_axes,
    max_gap_of,
    pair_gap,
    save,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# the order of verdicts among bars of the same length
_VERDICT_ORDER = {SENSITIVE: 0, UNKNOWN: 1, INSENSITIVE: 2, ERROR: 3}


@dataclass(frozen=True)
class Bar:
    """One query's bar: its label, verdict, length and the text written beside it."""

    label: str
    status: str
    length: float
    note: str
    is_max: bool  # the length is the maximal gap, not one pair's


def bar_of(r: Result) -> Bar:
    label = _label(r)
    top = max_gap_of(r)
    g = pair_gap(r.outputs) if r.status == SENSITIVE else None
    if top is not None:
        return Bar(label, str(r.status), max(top, 0.0), f"max {top:.3g}", True)
    if g is not None:
        return Bar(label, str(r.status), max(g.achieved, 0.0), f"{g.achieved:.3g}", False)
    note = {
        INSENSITIVE: f"insensitive at {r.gap:g}",
        UNKNOWN: "unknown (no answer in the time limit)",
        ERROR: "error",
    }.get(r.status, str(r.status))
    return Bar(label, str(r.status), 0.0, note, False)


def sweep_bars(results: Iterable[Result | Mapping[str, Any]]) -> list[Bar]:
    """The bars of a sweep's results, longest first (ties: verdict, then label). An
    infinite gap (a multiclass ratio over a probability of 0) is drawn a little longer
    than the longest finite one."""
    bars = [bar_of(as_result(r)) for r in results]
    finite = [b.length for b in bars if math.isfinite(b.length)]
    cap = 1.15 * (max(finite, default=0.0) or 1.0)
    bars = [b if math.isfinite(b.length) else replace(b, length=cap) for b in bars]
    return sorted(bars, key=lambda b: (-b.length, _VERDICT_ORDER.get(b.status, 9), b.label))


@suggests_keywords()
def plot_sweep(
    results: Iterable[Result | Mapping[str, Any]] | str | Path,
    ax: Axes | None = None,
    path: str | Path | None = None,
) -> Figure:
    """Draw a sweep's results as one bar per query; returns the matplotlib Figure.

    ``results``: Results (or their dicts: lines of ``sweep --out``, parsed), or the path
    of a ``sweep --out`` file, of one sweep (``one_sweep``: those of two models, or a query
    asked two ways, are refused). ``ax``: draw into these axes (else a new figure);
    ``path``: also write the figure there (.png, .svg, .pdf)."""
    if path is not None:
        check_plot_path(path)  # before the drawing
    if isinstance(results, (str, Path)):  # iterated, a path was its characters
        results = _log_results(results)
    rs = one_sweep([as_result(r) for r in results])
    if not rs:
        raise InputError("no results to plot")
    bars = sweep_bars(rs)
    fig, ax = figure_and_axes(ax, (9.0, 0.3 * len(bars) + 1.9))
    ys = range(len(bars))
    ax.barh(
        ys,
        [b.length for b in bars],
        color=[VERDICT_COLOURS.get(b.status, "0.5") for b in bars],
        height=0.7,
    )
    asked = _asked_gap(rs)
    longest = max([b.length for b in bars] + ([asked] if asked is not None else [])) or 0.5
    for y, b in zip(ys, bars, strict=True):
        colour = "black" if b.length > 0 else VERDICT_COLOURS.get(b.status, "0.3")
        ax.text(b.length + 0.01 * longest, y, b.note, va="center", fontsize=8, color=colour)
    ax.set_yticks(list(ys), [b.label for b in bars], fontsize=8)
    for tick, b in zip(ax.get_yticklabels(), bars, strict=True):
        if b.length <= 0:  # its bar is not seen: the verdict's colour marks the query
            tick.set_color(VERDICT_COLOURS.get(b.status, "0.3"))
    ax.set_ylim(len(bars) - 0.5, -0.5)
    ax.set_xlim(0.0, longest * 1.3)
    if asked is not None:
        ax.axvline(asked, color="0.3", ls="--", lw=1.0, label=f"gap asked ({asked:g})")
    ax.set_xlabel(_x_label(rs, bars), fontsize=9)
    ax.set_ylabel("query (features varied)", fontsize=9)
    ax.set_title(_title(rs), loc="left", fontsize=10)
    _legend(ax, bars)
    save(fig, path)
    return fig


def one_sweep(rs: list[Result]) -> list[Result]:
    """The results of one sweep, one per query: ``out=`` / ``--out`` append to their file
    (so that ``resume=`` can go on), and a file two sweeps wrote holds both. Results of
    more than one model (by its fingerprint, ``stats["asked"]["ensemble"]``, else its
    ``model`` text), or a query asked two ways (at two gaps, for other classes, or on two
    backends: compare's results), are an InputError naming them, rather than one figure
    whose bars mix them; a query answered again as it was asked (``resume=`` runs errors
    and short unknowns again, a sweep run twice into one file) is drawn by its last
    result."""
    _refuse_other_models(rs)
    last: dict[tuple, Result] = {}
    for r in rs:  # a later answer to the same question replaces an earlier one
        last[(_label(r), _asked(r))] = r
    labels = [label for label, _ in last]
    twice = [q for i, q in enumerate(labels) if q in labels[:i]]
    if twice:
        ways = " and ".join(asked for label, asked in last if label == twice[0])
        raise InputError(
            f"query {twice[0]!r} is there asked {ways}: the results hold more than one "
            "sweep; plot one sweep's results, or give each sweep its own out= / --out file "
            "(they append)"
        )
    return list(last.values())


def _refuse_other_models(rs: list[Result]) -> None:
    """One model's results, by fingerprint (else ``model`` text), or an InputError naming
    the models; one name with several fingerprints is said so (the lines' ``model`` does
    not tell them apart)."""
    prints = {_fingerprint(r): r.model for r in rs if _fingerprint(r)}
    models = list(dict.fromkeys(prints.values()))
    models += [
        m for m in dict.fromkeys(r.model for r in rs if not _fingerprint(r)) if m not in models
    ]
    if len(prints) <= 1 and len(models) <= 1:
        return
    n = max(len(prints), len(models))
    names = list(prints.values())
    shared = [m for m in models if names.count(m) > 1]  # a name several fingerprints share
    if shared:
        what = (
            f"{n} models named {shared[0]}"
            + (" and others" if len(models) > 1 else "")
            + " (other trees or bounds under one name, or results of an earlier treesens: "
            "their fingerprints, stats.asked.ensemble, differ): plot one's results (by "
            "stats.asked.ensemble)"
        )
    else:
        shown = "; ".join(models[:3]) + ("; ..." if len(models) > 3 else "")
        what = f"{n} models ({shown}): plot one model's results (the lines whose 'model' names it)"
    raise InputError(
        f"the results are of {what}, or give each sweep its own out= / --out file (they append)"
    )


def _fingerprint(r: Result) -> str | None:
    return (asked_of(r.stats) or {}).get("ensemble")


def _asked(r: Result) -> str:
    """What a result's query asked besides its features, as words: its gap (a max gap's:
    its tolerance, its gap is the one found), classes, a regressor's change or bounds, and
    the backend asked (compare's results are one query on several). What the result
    records as asked (``stats.asked``) comes first: a max gap's error has no bounds, and a
    pair of classes "any" names the two it was found in."""
    asked = asked_of(r.stats) or {}
    if r.max_gap or "max_gap" in asked:
        found = r.max_gap.get("tolerance") if isinstance(r.max_gap, dict) else None
        words = f"for the max gap (tolerance {asked.get('max_gap', found)})"
    else:
        words = f"at gap {r.gap:g}" + (" (margin)" if r.gap_kind == "margin" else "")
    classes = asked.get("classes") or r.classes
    for name, value in (("classes", classes), ("delta", r.delta), ("threshold", r.threshold)):
        if value:
            words += f", {name} {value}"
    backend = asked.get("backend")  # a race's, not its winner
    return f"{words} on {backend or r.backend}"


def _label(r: Result) -> str:
    return r.query or "+".join(r.features)


def _x_label(rs: list[Result], bars: list[Bar]) -> str:
    multiclass = any(len((r.outputs or {}).get("x1") or ()) > 2 for r in rs)
    unit = "probability ratio" if multiclass else "gap min(P(x1) - 0.5, 0.5 - P(x2))"
    if any(b.is_max for b in bars):
        return f"maximal {unit} (max), else the pair's"
    return f"{unit} the pair achieves"


def _asked_gap(rs: list[Result]) -> float | None:
    """The gap every query asked, when they all asked the same probability gap."""
    asked = {r.gap for r in rs}
    if len(asked) == 1 and all(r.gap_kind == "prob" for r in rs):
        return float(asked.pop())
    return None


def _title(rs: list[Result]) -> str:
    counts: dict[str, int] = {}
    for r in rs:
        counts[str(r.status)] = counts.get(str(r.status), 0) + 1
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items(), key=lambda kv: -kv[1]))
    return f"sweep: {len(rs)} quer{'y' if len(rs) == 1 else 'ies'} ({summary})"


def _legend(ax, bars: list[Bar]) -> None:
    from matplotlib.patches import Patch

    present = sorted({b.status for b in bars}, key=lambda s: _VERDICT_ORDER.get(s, 9))
    handles = [Patch(color=VERDICT_COLOURS.get(s, "0.5"), label=s) for s in present]
    line_handles, _ = ax.get_legend_handles_labels()
    ax.legend(handles=handles + line_handles, loc="best", fontsize=8)


def _log_results(log: str | Path) -> list[dict]:
    """The results of a ``sweep --out`` file; a file of an audit's rows, or of no results
    (a CSV, a .sens file), is refused in one line."""
    if not Path(log).is_file():
        raise InputError("no such results file (plot_sweep takes a sweep --out file)", str(log))
    lines = read_log(log, lambda d, _n: d if isinstance(d, dict) else {})
    if any("row" in d for d in lines):
        raise InputError(
            "holds an audit's rows (its lines name a 'row'), not a sweep's results: "
            "treesens audit --plot FILE draws an audit",
            str(log),
        )
    results = [d for d in lines if isinstance(d.get("query"), str) and "status" in d]
    if not results:
        raise InputError("holds no sweep results (JSON lines of a query and its status)", str(log))
    return results
