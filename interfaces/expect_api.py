"""``treesens.expect_*``: a model's contract as assertions (docs/testing.md). Each asks the
contract question (questions/contract.py) and returns its Outcome when the expectation
holds, or raises an AssertionError whose message is the replay-checked pair, the count
that breaks it, or what a time limit left open; so inside pytest they read as asserts:

    def test_model_ignores_sex():
        treesens.expect_insensitive("model.json", vary=["sex"], gap=0.1)
"""

from __future__ import annotations

import time

from ..compiler.errors import InputError, suggests_keywords
from ..questions.audit import audit, format_summary, summary
from ..questions.contract import (
    ERROR,
    Expectation,
    Outcome,
    answer,
    audit_outcome,
    failed_message,
    judge_result,
)
from ..questions.keywords import takes_query_keywords
from ..questions.memory import MemoryRefused
from .api import query_of


def _held(outcome: Outcome) -> Outcome:
    if not outcome.ok:
        raise AssertionError(failed_message(outcome))
    return outcome


def _expect(exp: Expectation, model, vary, keywords: dict, where: str) -> Outcome:
    start = time.time()  # the time limit runs from the call, as check's
    ens, q, kw = query_of(model, vary, "", keywords, where)  # where: a slip's message
    res = answer(ens, q, exp, start=start, memory_mb=kw["memory_mb"])
    return _held(judge_result(ens, q, exp, res, res.time["total"]))


@takes_query_keywords
def expect_insensitive(model, vary, *, allow_unknown: bool = False, **keywords) -> Outcome:
    """Assert that ``model`` is proven insensitive to ``vary`` (at ``gap``, ``classes``
    ...: the keywords of ``check``). Returns the Outcome (its ``result`` the proof);
    raises AssertionError with the replay-checked pair when sensitive, and when the time
    limit leaves it open (unless ``allow_unknown``).

    >>> expect_insensitive("model.json", vary=["sex"], gap=0.1)   # doctest: +SKIP
    """
    exp = Expectation("insensitive", allow_unknown=allow_unknown)
    return _expect(exp, model, vary, keywords, "expect_insensitive")


@takes_query_keywords
def expect_sensitive(model, vary, *, allow_unknown: bool = False, **keywords) -> Outcome:
    """Assert that ``vary`` matters to ``model``: a replay-checked pair at ``gap`` (the
    keywords of ``check``). Raises AssertionError when proven insensitive, and when the
    time limit leaves it open (unless ``allow_unknown``)."""
    exp = Expectation("sensitive", allow_unknown=allow_unknown)
    return _expect(exp, model, vary, keywords, "expect_sensitive")


@takes_query_keywords
def expect_max_gap(
    model, vary, at_most: float, *, allow_unknown: bool = False, **keywords
) -> Outcome:
    """Assert that no pair differing only in ``vary`` reaches a gap above ``at_most``:
    binary, a probability gap (below 0.5); multiclass (with ``classes``), a probability
    ratio (>= 1); a regressor, its change f(x1) - f(x2). Proven by one check at the
    smallest gap above ``at_most``; raises AssertionError with the pair and the gap it
    reaches when one does, and when the time limit leaves it open (unless
    ``allow_unknown``). The keywords are ``check``'s, without a gap.

    >>> expect_max_gap("model.json", vary=["income"], at_most=0.3)   # doctest: +SKIP
    """
    for name in ("gap", "margin_gap", "delta", "above", "below"):
        if keywords.get(name) is not None:
            raise InputError(f"expect_max_gap asks about every gap above at_most: drop {name}=")
    exp = Expectation("max_gap", float(at_most), allow_unknown=allow_unknown)
    return _expect(exp, model, vary, keywords, "expect_max_gap")


@suggests_keywords(also=audit)
def expect_audit(
    model,
    data,
    vary,
    *,
    max_percent: float | None = None,
    max_rows: int | None = None,
    by=None,
    allow_unknown: bool = False,
    **audit_keywords,
) -> Outcome:
    """Assert that at most ``max_percent`` percent (or ``max_rows`` rows) of the rows of
    ``data`` flip when only ``vary`` changes (``treesens.audit``'s question; the other
    keywords are its: ``gap``, ``classes``, ``label``, ``details``, ``limit``,
    ``timeout_per_row``, ``jobs`` ...); with ``by`` (a column), in every group of its
    values. A row counts as flipping only with a replay-checked x2; the assertion holds
    when the rows not proven unflippable (flippable or unknown) are within the limit, and
    fails with a flipping row when the replay-checked ones alone exceed it (or, unless
    ``allow_unknown``, when the unknown rows leave it open). An audit refused for memory
    (``memory_mb``, questions/memory.py) is an ERROR outcome, as a refused query's is in
    ``expect_insensitive``: its AssertionError says why in one line.

    >>> expect_audit("model.json", "test.csv", ["sex"], max_percent=2, by="sex")  # doctest: +SKIP
    """
    if (max_percent is None) == (max_rows is None):
        raise InputError("expect_audit: give max_percent or max_rows (one of them)")
    percent = max_percent is not None
    limit_value = float(max_percent if percent else max_rows)
    by_name = by if isinstance(by, str) or by is None else str(getattr(by, "name", None) or "group")
    exp = Expectation("audit", limit_value, percent, by_name, allow_unknown)
    t0 = time.time()
    try:
        df = audit(model, data, vary, by=by, **audit_keywords)
    except MemoryRefused as e:
        name = f"audit of {', '.join([vary] if isinstance(vary, str) else vary)}"
        return _held(Outcome(name, exp, ERROR, f"error: {e}", seconds=time.time() - t0))
    varied = [c.removeprefix("x2_") for c in df.columns if c.startswith("x2_")]
    detail = format_summary(summary(df, by_name))
    name = f"audit of {', '.join(varied)}"
    return _held(audit_outcome(name, exp, df, varied, time.time() - t0, detail))
