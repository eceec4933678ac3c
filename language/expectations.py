"""The ``expect`` statements of ``.sens`` (what ``treesens test`` checks, docs/testing.md):
their canonical text, and the checks that need no model: where each kind may stand, its
comparison, its limit, and how it goes with the block's gap."""

from __future__ import annotations

import math

from ..compiler.errors import InputError
from ..questions.audit_spec import check_by
from . import ast as nodes
from .show import PLAIN, FormatMode, fmt_name, fmt_num

# the kinds an audit block may expect, and those a query or a sweep may
AUDIT_KINDS = frozenset({"audit"})
QUERY_KINDS = frozenset({"insensitive", "sensitive", "max_gap"})


def expectation_text(st: nodes.Expect, mode: FormatMode = PLAIN) -> str:
    """The statement as ``treesens fmt`` writes it (also the name of its test case)."""
    if st.kind in ("insensitive", "sensitive"):
        text = f"expect {st.kind}"
    elif st.kind == "max_gap":
        text = f"expect max gap {st.op} {fmt_num(st.limit)}"
    else:
        text = f"expect audit flippable {st.op} {fmt_num(st.limit)}{'%' if st.percent else ''}"
        if st.by is not None:
            text += f" by {fmt_name(st.by.text, mode=mode)}"
    return text + (" or unknown" if st.allow_unknown else "")


def _first(body: tuple, kind):
    return next((st for st in body if isinstance(st, kind)), None)


def check_expectations(ast: nodes.SensAST) -> None:
    """Every ``expect`` stands in a block it fits, with a limit it can be held to."""
    defaults = _first(ast.items, nodes.Defaults)
    default_gap = _first(defaults.body, nodes.GapSetting) if defaults is not None else None
    for blk in ast.items:
        if isinstance(blk, nodes.Defaults):
            st = _first(blk.body, nodes.Expect)
            if st is not None:
                raise ast.error(
                    "'expect' says what must hold of one block's answer: write it in a "
                    "query, a sweep or an audit, not in defaults",
                    st,
                )
            continue
        if not isinstance(blk, (nodes.QueryBlock, nodes.SweepBlock, nodes.AuditBlock)):
            continue
        st = _first(blk.body, nodes.Expect)
        if st is None:
            continue
        _check_place(ast, blk, st)
        _check_limit(ast, st)
        own_gap = _first(blk.body, nodes.GapSetting)
        _check_gap(ast, st, own_gap, own_gap or default_gap)


def _check_place(ast: nodes.SensAST, blk, st: nodes.Expect) -> None:
    if isinstance(blk, nodes.AuditBlock) and st.kind not in AUDIT_KINDS:
        raise ast.error(
            f"{expectation_text(st)}: an audit answers row by row, so it expects how many "
            "rows may flip (expect audit flippable <= 2%); a query or a sweep expects "
            "insensitive, sensitive or max gap <= LIMIT",
            st,
        )
    if not isinstance(blk, nodes.AuditBlock) and st.kind in AUDIT_KINDS:
        kind = "query" if isinstance(blk, nodes.QueryBlock) else "sweep"
        raise ast.error(
            f"'expect audit ...' counts the rows of an audit that flip: write it in an "
            f'audit block (audit NAME {{ data "rows.csv" ... }}); a {kind} expects '
            "insensitive, sensitive or max gap <= LIMIT",
            st,
        )


def _check_limit(ast: nodes.SensAST, st: nodes.Expect) -> None:
    if st.kind in QUERY_KINDS - {"max_gap"}:
        return
    if st.op != "<=":
        what = "max gap" if st.kind == "max_gap" else "audit flippable"
        raise ast.error(f"expect {what} takes an upper limit: write <=, not {st.op}", st)
    if not math.isfinite(st.limit) or st.limit < 0:
        raise ast.error(f"the limit {fmt_num(st.limit)} must be a finite number >= 0", st)
    if st.kind == "audit" and st.percent and st.limit > 100:
        raise ast.error(f"the limit {fmt_num(st.limit)}% is above 100%", st)
    if st.kind == "audit" and not st.percent and st.limit != int(st.limit):
        raise ast.error(
            f"the limit {fmt_num(st.limit)} is a number of rows: give a whole number, or a "
            f"percentage ({fmt_num(st.limit)}%)",
            st,
        )


def _check_gap(ast: nodes.SensAST, st: nodes.Expect, own_gap, gap) -> None:
    """``expect max gap`` asks for the largest gap (the block's own gap, if any, must be
    ``gap max``); ``expect (in)sensitive`` asks at one gap."""
    if st.kind == "max_gap" and own_gap is not None and own_gap.kind != "max":
        raise ast.error(
            "expect max gap asks for the largest gap, so this block's own gap would be "
            f"ignored: drop the gap at line {own_gap.pos.line} (or write gap max)",
            st,
        )
    if st.kind in ("insensitive", "sensitive") and gap is not None and gap.kind == "max":
        raise ast.error(
            f"expect {st.kind} asks at one gap, but the gap at line {gap.pos.line} is "
            "'gap max' (how large): give a gap (gap 0.1), or expect max gap <= LIMIT",
            st,
        )


def check_expect_limit(ast: nodes.SensAST, ens, st: nodes.Expect) -> None:
    """A max-gap limit the model's gaps can be compared with: a binary gap is below 0.5,
    a multiclass gap is a probability ratio of at least 1."""
    if st.kind != "max_gap" or ens.is_regressor:
        return
    if ens.n_outputs == 1 and st.limit >= 0.5:
        raise ast.error(
            f"expect max gap <= {fmt_num(st.limit)}: a binary gap is below 0.5 (P(x1) >= "
            "0.5+g and P(x2) <= 0.5-g), so this always holds; give a limit below 0.5",
            st,
        )
    if ens.n_outputs > 1 and st.limit < 1:
        raise ast.error(
            f"expect max gap <= {fmt_num(st.limit)}: a multiclass gap is a probability "
            "ratio >= 1 (P(c1) >= g * P(c)); give a limit of at least 1",
            st,
        )


def check_audit_by(ast: nodes.SensAST, ens, plan, st: nodes.Expect) -> None:
    """The column an audit expectation counts by: a feature, the label or a data column."""
    if st.by is None:
        return
    try:
        check_by(plan.data, ens, st.by.text, plan.label)
    except InputError as e:
        raise ast.error(e.message, st.by) from None
