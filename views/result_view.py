"""How a Result reads: the verdict line and the two inputs side by side.

One witness table (``witness_rows``) drawn three ways: on a rich console by the CLI
(``render_result``), as plain text by ``str(result)`` (``result_text``) and as HTML by
Jupyter (``result_html``): ``str(result)`` and Jupyter reach it through the package
root, which hands ``result_text`` and ``result_html`` to answers/result.py (a layer below).
"""

from __future__ import annotations

import html
import io
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..answers.phrases import (
    lower_text,
    max_gap_brief,
    prediction_condition,
    unproven_because,
    unsplit_reason,
    unsplit_text,
    upper_text,
)
from ..answers.proof import BOX_SEARCH, bound_claim
from ..answers.stats import KERNEL_COMPILE
from ..backends.registry import BOXES
from .console import output_console

if TYPE_CHECKING:
    from rich.console import Console

    from ..answers.proof import Proof
    from ..answers.result import Result

_STYLE = {"sensitive": "bold red", "insensitive": "bold green", "error": "bold magenta"}
_HTML_COLOUR = {
    "sensitive": "#c62828",
    "insensitive": "#2e7d32",
    "error": "#8e24aa",
    "unknown": "#b58900",
}
# wide enough that no feature name or value of str(result) is cut or wrapped
_TEXT_WIDTH = 10_000


def _fmt(v) -> str:
    if v is None:  # a missing value (NaN); JSON keeps it null
        return "missing"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def _probs(p) -> str:
    return "[" + ", ".join(f"{x:.4f}" for x in p) + "]"


@dataclass(frozen=True)
class WitnessRow:
    """One feature of the witness table: its name, the cells after it, the mark."""

    name: str
    cells: tuple[str, ...]  # x1, x2 (and the nearest data row's value)
    mark: str  # "<- varied", "changed" or ""
    varied: bool


def witness_columns(res: Result) -> list[str]:
    """The witness table's headers after ``feature`` (the mark column has none)."""
    near = (res.stats or {}).get("nearest_row")
    return ["x1", "x2"] + ([f"nearest {data_row_words(near['index'])}"] if near else [])


def data_row_words(index: int) -> str:
    """A data row as the user counts it (the first row is row 1, as data errors say) and
    as ``stats.nearest_row.index`` records it (from 0)."""
    return f"data row {index + 1} (index {index})"


def witness_rows(res: Result) -> list[WitnessRow]:
    """The witness table's rows, one per feature, in the model's order (none without a
    witness). A nearest data row's value differing from x1 outside F is starred."""
    if not res.witness:
        return []
    near = (res.stats or {}).get("nearest_row")
    varied = set(res.features)
    rows = []
    for name, v1 in res.witness["x1"].items():
        v2 = res.witness["x2"][name]
        mark = "<- varied" if name in varied else ("changed" if v1 != v2 else "")
        cells = [_fmt(v1), _fmt(v2)]
        if near:
            nv = near["values"].get(name)
            differs = name not in varied and nv != v1
            cells.append(("*" if differs else "") + _fmt(nv))
        rows.append(WitnessRow(name, tuple(cells), mark, name in varied))
    return rows


def asked_max_gap(res: Result) -> bool:
    """Whether ``res`` answers a max gap query (its ``stats["asked"]`` holds the tolerance),
    with bounds or not (an error before any)."""
    return ((res.stats or {}).get("asked") or {}).get("max_gap") is not None


def headline_parts(res: Result) -> tuple[str, str]:
    """The verdict line after the status and query: ``(varied features, the rest)``; an
    insensitive answer's ends with its proof's label (``proof_label``)."""
    gap = f"g={res.gap:.12g}" if res.gap_kind == "prob" else f"margin gap {res.gap:.12g}"
    if res.max_gap is None and asked_max_gap(res):  # ended before any bounds: no gap of its own
        gap = "max gap asked"
    elif prediction_condition(res) and not res.max_gap:
        gap = prediction_condition(res)
    elif (res.max_gap or {}).get("kind") == "change":
        gap = f"largest change {res.gap:.12g}"
    if (res.max_gap or {}).get("unsplit"):  # one prediction for both inputs: 0 exactly
        gap = unsplit_text(res.max_gap)
    elif res.max_gap and res.max_gap.get("lower") is None and res.status == "insensitive":
        # the gap asked is the tolerance, not one a pair reached: say so
        what = {"change": "largest change", "ratio": "largest ratio"}
        gap = f"{what.get(res.max_gap.get('kind'), 'max gap')} below the tolerance {res.gap:.6g}"
        upper = res.max_gap.get("upper")
        if upper is not None and upper > res.gap:  # a regressor's: the change below which
            # none counts is 1e-3 of the leaf values' bound; what is proven is ``upper``
            gap = f"{what.get(res.max_gap.get('kind'), 'max gap')} below {upper:.6g}"
    backend = res.backend
    search = (res.stats or {}).get("search")
    if search and search != "default":  # a later search of the backend's schedule answered
        backend += f" ({search} search)"
    found_by = (res.stats or {}).get("found_by") or ""
    boxed = res.max_gap is not None and res.backend == BOXES  # no solver ran
    if boxed:
        backend += " (the box search, no solver)"
    # the heuristic, the box search (said already where it answered a max gap)
    said = boxed and found_by.startswith(BOX_SEARCH)
    if res.witness and found_by and found_by != res.backend and not said:
        backend += f", pair found by {found_by}"
    t = res.time
    # an insensitive answer another than its backend proved (the box search before the
    # solver): the prover first, the backend as the one asked
    apart = (
        res.proof is not None
        and res.proof.bound is None
        and res.proof.by != res.backend
        and res.backend != BOXES  # a max gap's box search: said as "backend boxes (...)"
    )
    who = f"proved by {res.proof.prover} (backend {backend} asked)" if apart else None
    # a compile of 0.00s did not happen (the heuristic or the box search answered from
    # the trees, time.compile their encoding's few ms): left out, kept in the JSON
    compiled = f"compile {t.get('compile', 0.0):.2f}s, "
    compiled = "" if compiled == "compile 0.00s, " else compiled
    rest = (
        f"{gap}, {who or 'backend ' + backend}, {t.get('total', 0.0):.2f}s "
        f"({compiled}solve {t.get('solve', 0.0):.2f}s"
    )
    if t.get(KERNEL_COMPILE):
        counted = "not counted in" if res.max_gap else "within"  # a check's box search
        rest += f"; box search compiled {t[KERNEL_COMPILE]:.1f}s, {counted} the time limit"
    rest += ")"
    if res.proof is not None:  # an insensitive answer: who proved it, and was it re-checked
        kind = (res.max_gap or {}).get("kind", "prob")
        rest += f"; {proof_label(res.proof, kind, named=not apart)}"
    return ", ".join(res.features), rest


def proof_label(proof: Proof, kind: str = "prob", named: bool = True) -> str:
    """An insensitive answer's proof as the verdict line ends: "certified: c.json,
    verified", or "proved by CP-SAT, not independently checked" (and why, when a
    certificate was asked for; ``named`` False: the prover said already, "not
    independently checked"). A max gap's upper bound: "certified: no pair reaches a gap
    of 0.35 (c.json, verified)" (a regressor's, ``kind`` "change": "no change of D or
    more"), or "not certified: why"."""
    if proof.bound is not None:
        if proof.checked:
            return f"certified: {bound_claim(proof.bound, kind)} ({proof.certificate}, verified)"
        if proof.needs_none:
            return f"no certificate needed: {proof.why_not}"
        return f"not certified: {proof.why_not or 'no certificate'}"
    if proof.checked:
        return f"certified: {proof.certificate}, verified"
    text = f"proved by {proof.prover}, {NOT_CHECKED}" if named else NOT_CHECKED
    return f"{text}: {proof.why_not}" if proof.why_not else text


NOT_CHECKED = "not independently checked"


def max_gap_outcome(bounds: dict, features: Sequence[str] = ()) -> str:
    """A max-gap search's final answer in one line: "max gap 0.3489 (proven within 0.001:
    [0.3489, 0.3498])", or the bracket it was left in; ``features``: the varied ones, named
    where no tree splits on them."""
    lo, hi, tol = bounds.get("lower"), bounds.get("upper"), bounds.get("tolerance")
    what = "largest change" if bounds.get("kind") == "change" else "max gap"
    if bounds.get("unsplit"):
        return f"{unsplit_text(bounds)} ({unsplit_reason(features)})"
    within = f" within {tol:g}" if tol is not None else ""
    if lo is None:
        if bounds.get("proven"):
            return f"{what} none (proven: no pair reaches {upper_text(hi)})"
        return f"{what} unknown (at most {upper_text(hi)}; {unproven_because(bounds)})"
    low, high = lower_text(lo), upper_text(hi)
    if bounds.get("proven"):
        return f"{what} {low} (proven{within}: [{low}, {high}])"
    return f"{what} in [{low}, {high}], not proven ({unproven_because(bounds)})"


def max_gap_note(res: Result) -> str:
    """The max gap line of a result whose message does not already give its bounds."""
    message = res.message or ""
    if not res.max_gap or "max gap" in message or "largest change" in message:
        return ""
    return max_gap_brief(res.max_gap)


def distance_text(res: Result) -> str:
    near = (res.stats or {}).get("nearest_row")
    extra = " (* = the nearest data row differs from x1 there)" if near else ""
    return (
        f"distance to data: {res.distance:.4f} (l2 over the features outside F, each "
        f"divided by its range in the data, from the nearest data row to the witness's "
        f"region){extra}"
    )


# how an optimisation that did not prove its optimum ended (stats["stopped_by"])
_STOPPED = {
    "time limit": "in the time limit",
    "stall": "before the search stalled (stall_time)",
    "time budget": "in the optimisation's time budget (optimise_time)",
    "gap": "within the optimality gap (optimality_gap)",
    "interrupted": "before the interruption",
    "work budget": "within the work budget (work)",
}


def optimum_line(stats: dict) -> str:
    """For an optimising (data-aware utility) run: was the pair proven the best?"""
    if "objective_bound" not in stats or "solver_status" not in stats:
        return ""  # not an optimising run (a guiding objective stops at the first pair)
    if stats["solver_status"] == "optimal":
        return "best pair by the data-aware utility (proven optimal)"
    how = _STOPPED.get(stats.get("stopped_by", "time limit"), "in the time limit")
    gap, bound = stats.get("objective_gap"), stats.get("objective_bound")
    proof = ""
    if gap is not None and bound is not None and stats.get("objective") is not None:
        proof = f"; utility {stats['objective']:.4g}, bound {bound:.4g}, gap {100 * gap:.1f}%"
    return f"best found {how} (not proven optimal{proof})"


def named_apart(res: Result) -> bool:
    """Whether the verdict line names the query before the features it varies: not where
    its name is those features (a check's, ``mean_texture`` or ``bmi,ltg``; a .sens
    query ``sex`` varying sex), in any order (``--vary bmi,age``: the features in the
    model's order), which the line says once, after "varying"."""
    return sorted(part.strip() for part in res.query.split(",")) != sorted(res.features)


# a witness table longer than this (a model of hundreds of features: binary_mnist's 784)
# shows the varied and changed features only, on the console and in str(result)
MAX_SHOWN_ROWS = 50


def shown_rows(rows: list[WitnessRow]) -> list[WitnessRow]:
    """The witness rows the console shows: all of them, or past ``MAX_SHOWN_ROWS`` the
    varied and changed ones (the others hold x1's value in both inputs)."""
    if len(rows) <= MAX_SHOWN_ROWS:
        return rows
    return [r for r in rows if r.varied or r.mark]


def hidden_rows_text(hidden: int, total: int) -> str:
    return (
        f"... and {hidden:,} other features, each the same in x1 and x2, not shown ({total:,} "
        "in all: --json, or result.witness in Python)"
    )


def render_result(res: Result, ens=None, console: Console | None = None) -> None:
    """The verdict line, the witness table and the pair's probabilities on ``console``
    (default: stdout)."""
    from rich.markup import escape  # a name like "[b]" is text, not markup

    con = console or output_console(file=sys.stdout, highlight=False, soft_wrap=True)
    style = _STYLE.get(res.status, "bold yellow")
    feats, rest = (escape(part) for part in headline_parts(res))
    name = f" [dim]({escape(res.query)})[/]" if named_apart(res) else ""
    con.print(f"[{style}]{res.status.upper()}[/]{name} varying [bold]{feats}[/], {rest}")
    if res.error:
        con.print(f"[magenta]error:[/] {escape(res.error)}")
    optimum = optimum_line(res.stats or {})
    if optimum:
        con.print(f"[yellow]{optimum}[/]")
    if res.message:
        con.print(f"[dim]{escape(res.message)}[/]")
    if max_gap_note(res):
        con.print(max_gap_note(res))
    if res.witness:
        from rich.table import Table

        t = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
        t.add_column("feature", overflow="fold")  # a long name wraps, never cut
        for col in witness_columns(res):
            t.add_column(col, justify="right", no_wrap=True)
        t.add_column("")
        rows = witness_rows(res)
        shown = shown_rows(rows)
        for row in shown:
            cells = (escape(c) for c in (row.name, *row.cells, row.mark))
            t.add_row(*cells, style="bold yellow" if row.varied else None)
        print_full_width(con, t)
        if len(shown) < len(rows):
            con.print(f"[dim]{hidden_rows_text(len(rows) - len(shown), len(rows))}[/]")
        if res.outputs:
            check = (
                "[green]replay-checked with the library's predict[/]"
                if res.validated
                else "[red]NOT validated[/]"
            )
            p1, p2 = _probs(res.outputs["x1"]), _probs(res.outputs["x2"])
            what = "predictions" if res.predicts else "probabilities"
            if res.classes and len(res.outputs["x1"]) > 2:
                what = f"class {res.classes[0]} -> {res.classes[1]}, {what}"
            con.print(f"{what}  x1 {p1}   x2 {p2}   {check}")
        if res.distance is not None:
            con.print(distance_text(res))
    for note in res.notes:
        con.print(f"[yellow]note:[/] {escape(note)}")


def print_full_width(con, table) -> None:
    """A table in a terminal fits its width (long names wrap); written to a file or a pipe,
    it is as wide as its widest row, so every name stays whole on one line. Its lines end
    at their last character: the cells' padding is not written past it."""
    if con.is_terminal:
        _print_unpadded(con, table)
        return
    from rich.measure import Measurement

    widest = Measurement.get(con, con.options.update_width(10**6), table).maximum
    width = con.width
    con.width = max(width, widest)  # print's own width cannot exceed the console's
    try:
        _print_unpadded(con, table)
    finally:
        con.width = width


def _print_unpadded(con, table) -> None:
    """``table``'s lines on ``con`` without the spaces that pad them to the table's width
    (the last column's, empty on most rows of a witness table)."""
    from rich.segment import Segment, Segments

    out: list[Segment] = []
    for line in con.render_lines(table, pad=False, new_lines=False):
        while line and not line[-1].text.rstrip(" "):
            line.pop()
        if line:
            last = line[-1]
            line[-1] = Segment(last.text.rstrip(" "), last.style, last.control)
        out.extend([*line, Segment.line()])
    con.print(Segments(out))


def result_text(res: Result) -> str:
    """What ``render_result`` prints, as plain text (``str(result)``)."""
    from rich.console import Console

    buf = io.StringIO()
    con = Console(
        file=buf,
        width=_TEXT_WIDTH,
        color_system=None,
        highlight=False,
        soft_wrap=True,
        emoji=False,
    )
    render_result(res, console=con)
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines())


def result_html(res: Result) -> str:
    """The same as an HTML fragment (Jupyter's rich display); every name is escaped."""
    e = html.escape
    colour = _HTML_COLOUR.get(str(res.status), "#555")
    feats, rest = headline_parts(res)
    out = [
        '<div class="treesens-result">',
        f'<p><b style="color:{colour}">{e(str(res.status).upper())}</b> '
        + (f'<span style="color:#777">({e(res.query)})</span> ' if named_apart(res) else "")
        + f"varying <b>{e(feats)}</b>, {e(rest)}</p>",
    ]
    if res.error:
        out.append(f"<p><b>error:</b> {e(res.error)}</p>")
    if res.message:
        out.append(f'<p style="color:#777">{e(res.message)}</p>')
    if max_gap_note(res):
        out.append(f"<p>{e(max_gap_note(res))}</p>")
    if res.witness:
        out.append(_witness_html(res))
        if res.outputs:
            check = (
                "replay-checked with the library's predict" if res.validated else "NOT validated"
            )
            p1, p2 = _probs(res.outputs["x1"]), _probs(res.outputs["x2"])
            what = "predictions" if res.predicts else "probabilities"
            out.append(f"<p>{what} x1 {p1} &nbsp; x2 {p2} &nbsp; {e(check)}</p>")
        if res.distance is not None:
            out.append(f"<p>{e(distance_text(res))}</p>")
    out += [f"<p><b>note:</b> {e(note)}</p>" for note in res.notes]
    out.append("</div>")
    return "\n".join(out)


def _witness_html(res: Result) -> str:
    e = html.escape
    head = "".join(f'<th style="text-align:right">{e(c)}</th>' for c in witness_columns(res))
    lines = [
        "<table>",
        f'<thead><tr><th style="text-align:left">feature</th>{head}<th></th></tr></thead>',
        "<tbody>",
    ]
    for row in witness_rows(res):
        style = ' style="font-weight:bold;background:#fff3c4"' if row.varied else ""
        cells = "".join(f'<td style="text-align:right">{e(c)}</td>' for c in row.cells)
        lines.append(
            f'<tr{style}><td style="text-align:left">{e(row.name)}</td>{cells}'
            f"<td>{e(row.mark)}</td></tr>"
        )
    lines += ["</tbody>", "</table>"]
    return "\n".join(lines)
