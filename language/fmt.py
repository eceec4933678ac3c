"""``treesens fmt``: the canonical text of a ``.sens`` file, comments kept."""

from __future__ import annotations

import json
import re

from ..compiler.options import fmt_work
from . import ast as nodes
from .errors import SensError
from .expectations import expectation_text
from .parse import parse
from .show import (
    CONSERVATIVE,
    PLAIN,
    VARY_WORDS,
    FormatMode,
    fmt_constraint,
    fmt_duration,
    fmt_name,
    fmt_names,
    fmt_num,
    fmt_ref,
    show_value,
)

BLOCK_WORDS = {nodes.QueryBlock: "query", nodes.SweepBlock: "sweep", nodes.AuditBlock: "audit"}


# a race as a backend line writes it bare (race:cpsat+highs); a race of commas is quoted
RACE_SPEC_RE = re.compile(r"race:[A-Za-z0-9_+-]*\Z")


def _fmt_backend(name: str, mode) -> str:
    return name if RACE_SPEC_RE.match(name) else fmt_name(name, mode=mode)


def _fmt_gap(st: nodes.GapSetting) -> str:
    if st.kind == "threshold":
        return f"gap above {fmt_num(st.value)} below {fmt_num(st.below)}"
    if st.kind == "delta":
        way = "" if st.direction is None else f" {st.direction}"
        return f"gap delta {fmt_num(st.value)}{way}"
    if st.kind == "max":
        return "gap max" + ("" if st.value is None else f" tolerance {fmt_num(st.value)}")
    return f"gap {fmt_num(st.value)}" if st.kind == "prob" else f"gap margin {fmt_num(st.value)}"


def _fmt_stmt(st: nodes.Node, mode: FormatMode) -> str:
    if isinstance(st, nodes.Vary):
        first = fmt_name(st.names[0].text, VARY_WORDS, mode)
        return "vary " + ", ".join([first] + [fmt_name(n.text, mode=mode) for n in st.names[1:]])
    if isinstance(st, nodes.VaryAll):
        return "vary all"
    if isinstance(st, nodes.VaryEachFeature):
        return "vary each feature"
    if isinstance(st, nodes.VaryEachOf):
        items = [
            ("{" + fmt_names(i.names, mode) + "}")
            if isinstance(i, nodes.FeatureSet)
            else fmt_name(i.text, mode=mode)
            for i in st.items
        ]
        return "vary each of " + ", ".join(items)
    if isinstance(st, nodes.VarySubsets):
        return _words(
            f"vary subsets of {st.k}",
            None if st.pool is None else f"from {fmt_names(st.pool, mode)}",
            None if st.sample is None else f"sample {st.sample}",
        )
    if isinstance(st, nodes.GapSetting):
        return _fmt_gap(st)
    if isinstance(st, nodes.Classes):
        return f"classes {st.c1} -> {st.c2}"
    if isinstance(st, nodes.Backend):
        return "backend " + ", ".join(_fmt_backend(b, mode) for b in st.names)
    if isinstance(st, nodes.Timeout):
        return f"timeout {fmt_duration(st.seconds)}"
    if isinstance(st, nodes.Work):
        return f"work {fmt_work(st.units)}"
    if isinstance(st, nodes.Threads):
        return f"threads {st.n}"
    if isinstance(st, nodes.Jobs):
        return f"jobs {st.n}"
    if isinstance(st, nodes.Budget):
        return f"budget {fmt_duration(st.seconds)}"
    if isinstance(st, nodes.Seed):
        return f"seed {st.n}"
    if isinstance(st, nodes.Passes):
        return "passes " + ", ".join(st.items)
    if isinstance(st, nodes.Baseline):
        return f"baseline {fmt_name(st.name, mode=mode)}"
    if isinstance(st, nodes.DataAware):
        params = [f"{fmt_name(p.name, mode=mode)} = {show_value(p.value)}" for p in st.params]
        return _words(f"data_aware {st.mode}", ", ".join(params) if params else None)
    if isinstance(st, nodes.OptionSetting):
        return f"option {fmt_name(st.name, mode=mode)} = {show_value(st.value)}"
    if isinstance(st, nodes.KindSetting):
        params = [f"{fmt_name(p.name, mode=mode)} = {show_value(p.value)}" for p in st.params]
        return _words(f"kind {fmt_name(st.name, mode=mode)}", ", ".join(params) or None)
    if isinstance(st, nodes.PluginDecl):
        return f"plugin {_quoted(st.path)}"
    if isinstance(st, nodes.Expect):
        return expectation_text(st, mode)
    if isinstance(st, nodes.Where):
        return "where " + " and ".join(fmt_constraint(c, mode) for c in st.items)
    if isinstance(st, nodes.Fix):
        return f"fix {fmt_ref(st.ref, mode=mode)} = {show_value(st.value)}"
    if isinstance(st, nodes.ModelDecl):
        return _words(
            f"model {_quoted(st.path)}",
            None if st.format is None else f"format {fmt_name(st.format, mode=mode)}",
            None if st.objective is None else f"objective {st.objective}",
            None if st.num_class is None else f"num_class {st.num_class}",
            None if st.num_parallel_tree is None else f"num_parallel_tree {st.num_parallel_tree}",
            None if st.base_score is None else f"base_score {_base_scores(st.base_score)}",
            "trust_pickle" if st.trust_pickle else None,
        )
    if isinstance(st, (nodes.DataDecl, nodes.Rows)):  # the file's data, an audit's rows
        label = None if st.label is None else f"label {fmt_name(st.label, mode=mode)}"
        return _words(f"data {_quoted(st.path)}", label)
    if isinstance(st, (nodes.By, nodes.Limit, nodes.Out)):
        return _fmt_audit_stmt(st, mode)
    if isinstance(st, nodes.DetailsDecl):
        return f"features from {_quoted(st.path)}"
    if isinstance(st, nodes.BoundsFromData):
        return "bounds from data"
    if isinstance(st, (nodes.GroupDecl, nodes.GroupsInfer, nodes.GroupsNone)):
        return _fmt_group(st, mode)
    if isinstance(st, nodes.FeatureDecl):
        kind = "" if st.kind is None else f": {st.kind}"
        cats = st.categories
        return _words(
            f"feature {fmt_name(st.name.text, mode=mode)}{kind}",
            None if st.lo is None else f"in [{fmt_num(st.lo)}, {fmt_num(st.hi)}]",
            None if cats is None else "{" + ", ".join(fmt_name(c, mode=mode) for c in cats) + "}",
        )
    raise TypeError(f"cannot format {st!r}")


def _words(*parts: str | None) -> str:
    """A statement: those of its parts that are given (None: left out), spaced."""
    return " ".join(p for p in parts if p is not None)


def _quoted(path: nodes.Str) -> str:
    return json.dumps(path.value, ensure_ascii=False)


def _fmt_audit_stmt(st: nodes.Node, mode: FormatMode) -> str:
    """The statements only an audit block has."""
    if isinstance(st, nodes.By):
        return f"by {fmt_name(st.name.text, mode=mode)}"
    if isinstance(st, nodes.Limit):
        return f"limit {st.n}"
    return f"out {_quoted(st.path)}"


def format_sens(ast: nodes.SensAST, indent: str = "  ") -> str:
    """The canonical text of a file: one statement per line, blocks indented, names and
    numbers written one way, comments kept, single blank lines kept (runs of them
    collapsed) and one blank line around every top-level block."""
    text = _format(ast, indent, PLAIN)
    try:  # the output must read back as the same file; if not, quote every keyword
        same = parse(text, ast.filename) == ast
    except SensError:
        same = False
    return text if same else _format(ast, indent, CONSERVATIVE)


def _format(ast: nodes.SensAST, indent: str, mode: FormatMode) -> str:
    comments = sorted(ast.comments, key=lambda c: (c.line, c.column))
    src = ast.source.splitlines()
    out: list[str] = []
    k = 0
    last = [0]  # last source line emitted

    def blank_between(a: int, b: int) -> bool:
        return any(not src[i - 1].strip() for i in range(a + 1, b) if 0 < i <= len(src))

    def emit(line: int, text: str, force_blank: bool = False) -> None:
        if (
            out
            and out[-1] != ""
            and (force_blank or (line and last[0] and blank_between(last[0], line)))
        ):
            out.append("")
        out.append(text)
        if line:
            last[0] = max(last[0], line)

    def leading(line: int, pad: str, force_blank: bool = False) -> None:
        nonlocal k
        while k < len(comments) and comments[k].line < line:
            emit(comments[k].line, pad + comments[k].text, force_blank)
            force_blank = False
            k += 1

    def trailing(line: int) -> str:
        nonlocal k
        parts = []
        while k < len(comments) and comments[k].line == line:
            parts.append(comments[k].text)
            k += 1
        return ("  " + " ".join(parts)) if parts else ""

    prev_block = False
    for i, it in enumerate(ast.items):
        is_block = isinstance(
            it, (nodes.Defaults, nodes.QueryBlock, nodes.SweepBlock, nodes.AuditBlock)
        )
        force = i > 0 and (is_block or prev_block)
        prev_block = is_block
        line = it.pos.line if it.pos else 0
        had_leading = k < len(comments) and comments[k].line < line
        leading(line, "", force)
        force = force and not had_leading
        end = it.pos.end_line if it.pos else 0
        if not is_block:
            emit(line, _fmt_stmt(it, mode) + trailing(end), force)
            last[0] = max(last[0], end)
            continue
        head = (
            "defaults"
            if isinstance(it, nodes.Defaults)
            else f"{BLOCK_WORDS[type(it)]} {fmt_name(it.name.text, mode=mode)}"
        )
        emit(line, head + " {" + trailing(line), force)
        for st in it.body:
            sl = st.pos.line if st.pos else 0
            leading(sl, indent)
            emit(sl, indent + _fmt_stmt(st, mode) + trailing(st.pos.end_line if st.pos else 0))
            last[0] = max(last[0], st.pos.end_line if st.pos else 0)
        leading(end, indent)
        if out and out[-1] == "":
            out.pop()
        out.append("}" + trailing(end))
        last[0] = max(last[0], end)
    for j, c in enumerate(comments[k:]):
        emit(c.line, c.text, force_blank=(j == 0 and bool(out)))
    return "\n".join(out) + "\n"


def _fmt_group(st, mode: str) -> str:
    if isinstance(st, nodes.GroupsInfer):
        return "groups infer"
    if isinstance(st, nodes.GroupsNone):
        return "groups none"
    s = f"group {fmt_name(st.name.text, mode=mode)} = " + ", ".join(
        fmt_name(c.text, mode=mode) for c in st.columns
    )
    return s + (f" dropped {fmt_name(st.dropped.text, mode=mode)}" if st.dropped else "")


def _base_scores(value) -> str:
    """A model line's base score: one number, or one per class joined by commas."""
    values = value if isinstance(value, tuple) else (value,)
    return ", ".join(fmt_num(v) for v in values)
