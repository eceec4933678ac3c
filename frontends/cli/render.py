"""Human-readable output: the verdict, and the two inputs side by side."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from ...compiler.result import ERROR, INSENSITIVE, SENSITIVE

if TYPE_CHECKING:
    from rich.console import Console

_STYLE = {SENSITIVE: "bold red", INSENSITIVE: "bold green", ERROR: "bold magenta"}


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def render_result(res, ens=None, console: Console | None = None) -> None:
    from rich.console import Console  # rich is kept out of the CLI's start-up

    con = console or Console(file=sys.stdout, highlight=False, soft_wrap=True)
    style = _STYLE.get(res.status, "bold yellow")
    feats = ", ".join(res.features)
    gap = f"g={res.gap:.12g}" if res.gap_kind == "prob" else f"margin gap {res.gap:.12g}"
    backend = res.backend
    search = (res.stats or {}).get("search")
    if search and search != "default":  # a later search of the backend's schedule answered
        backend += f" ({search} search)"
    con.print(
        f"[{style}]{res.status.upper()}[/] [dim]({res.query})[/] "
        f"varying [bold]{feats}[/], {gap}, backend {backend}, "
        f"{res.time['total']:.2f}s (compile {res.time['compile']:.2f}s, solve {res.time['solve']:.2f}s)"
    )
    if res.error:
        con.print(f"[magenta]error:[/] {res.error}")
    if res.message:
        con.print(f"[dim]{res.message}[/]")
    if res.witness:
        from rich.table import Table

        t = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
        t.add_column("feature", overflow="fold")  # a long name wraps, never cut
        t.add_column("x1", justify="right", no_wrap=True)
        t.add_column("x2", justify="right", no_wrap=True)
        near = (res.stats or {}).get("nearest_row")
        if near:
            t.add_column(f"nearest data row #{near['index']}", justify="right", no_wrap=True)
        t.add_column("")
        varied = set(res.features)
        for name, v1 in res.witness["x1"].items():
            v2 = res.witness["x2"][name]
            mark = "<- varied" if name in varied else ("changed" if v1 != v2 else "")
            style_row = "bold yellow" if name in varied else None
            cells = [name, _fmt(v1), _fmt(v2)]
            if near:
                nv = near["values"].get(name)
                differs = name not in varied and nv != v1
                cells.append(("*" if differs else "") + _fmt(nv))
            t.add_row(*cells, mark, style=style_row)
        print_full_width(con, t)
        if res.outputs:
            p1, p2 = res.outputs["x1"], res.outputs["x2"]
            fmt = lambda p: "[" + ", ".join(f"{x:.4f}" for x in p) + "]"  # noqa: E731
            check = (
                "[green]replay-checked with the library's predict[/]"
                if res.validated
                else "[red]NOT validated[/]"
            )
            con.print(f"probabilities  x1 {fmt(p1)}   x2 {fmt(p2)}   {check}")
        if res.distance is not None:
            extra = " (* = the nearest data row differs from x1 there)" if near else ""
            con.print(
                f"distance to data: {res.distance:.4f} (l2 over the features outside F, each "
                f"divided by its range in the data, from the nearest data row to the witness's "
                f"region){extra}"
            )


def print_full_width(con: Console, table) -> None:
    """A table in a terminal fits its width (long names wrap); written to a file or a pipe,
    it is as wide as its widest row, so every name stays whole on one line."""
    if con.is_terminal:
        con.print(table)
        return
    from rich.measure import Measurement

    widest = Measurement.get(con, con.options.update_width(10**6), table).maximum
    width = con.width
    con.width = max(width, widest)  # print's own width cannot exceed the console's
    try:
        con.print(table)
    finally:
        con.width = width
