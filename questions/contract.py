"""Model contracts: does an expectation hold of a model? (``treesens test``, the ``expect``
statements of ``.sens``, ``treesens.expect_*``; docs/testing.md)

Every verdict rests on what the check proves or replays, never on a sample:

* ``insensitive``: PASS on a proof of "insensitive"; FAIL on a replay-checked pair.
* ``sensitive``: PASS on a replay-checked pair; FAIL on a proof of "insensitive".
* ``max_gap`` (``<= L``): one check at the smallest gap above L (binary: a probability
  gap; multiclass: a probability ratio; a regressor: the change f(x1) - f(x2)). A proof
  that no pair reaches it is a proof that no pair's gap exceeds L: PASS; a replay-checked
  pair reaches a gap above L: FAIL, with the gap it reaches.
* ``audit`` (``flippable <= L`` rows or L% of them, per ``by`` group): FAIL when the rows
  with a replay-checked flip already exceed the limit in some group; PASS when, in every
  group, the rows not proven unflippable (flippable or unknown) are within it.

Anything else (a time limit, a pair the library's predict does not confirm) is UNKNOWN,
which fails unless the expectation allows it (``or unknown``); a query that ends in error
is an ERROR.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from ..answers.result import ERROR as ERROR_STATUS
from ..answers.result import INSENSITIVE, SENSITIVE, Result
from ..compiler.audit import FLIPPABLE
from ..compiler.audit import UNKNOWN as ROW_UNKNOWN
from ..compiler.ensemble import Ensemble
from ..compiler.enums import StrValue
from ..compiler.errors import InputError
from ..compiler.options import fmt_work
from ..compiler.query import DOWN, Gap, GapKind, Query
from .ask import answer as ask
from .ask import refused
from .audit_groups import binned
from .max_gap import achieved_gap


class Verdict(StrValue):
    PASS = "pass"
    FAIL = "fail"
    UNKNOWN = "unknown"
    ERROR = "error"


PASS, FAIL, UNKNOWN, ERROR = Verdict
KINDS = ("insensitive", "sensitive", "max_gap", "audit")


@dataclass(frozen=True)
class Expectation:
    """What must hold: ``kind`` one of KINDS; ``limit`` the upper limit of ``max_gap``
    and ``audit`` (``percent``: a percentage of the rows, else a number of rows; ``by``:
    per value of this column); ``allow_unknown``: an UNKNOWN does not fail."""

    kind: str
    limit: float | None = None
    percent: bool = False
    by: str | None = None
    allow_unknown: bool = False

    def __post_init__(self):
        if self.kind not in KINDS:
            raise InputError(f"unknown expectation {self.kind!r}; known: {', '.join(KINDS)}")
        limited = self.kind in ("max_gap", "audit")
        if limited and (self.limit is None or not math.isfinite(self.limit) or self.limit < 0):
            raise InputError(f"the limit {self.limit!r} must be a finite number >= 0")
        if self.kind == "audit" and self.percent and self.limit > 100:
            raise InputError(f"the limit {self.limit:g}% is above 100%")
        if self.kind == "audit" and not self.percent and self.limit != int(self.limit):
            raise InputError(f"the limit {self.limit:g} is a number of rows: a whole number")

    @property
    def words(self) -> str:
        """As ``.sens`` writes it (the name of its test case)."""
        limit = None if self.limit is None else _num(self.limit)
        return expectation_words(self.kind, limit, self.percent, self.by, self.allow_unknown)


def expectation_words(
    kind: str, limit: str | None, percent: bool, by: str | None, allow_unknown: bool, op="<="
) -> str:
    """An expectation as ``.sens`` writes it, its ``limit`` and ``by`` column already
    written as they are to read (``treesens fmt`` quotes a name that needs it)."""
    if kind in ("insensitive", "sensitive"):
        text = f"expect {kind}"
    elif kind == "max_gap":
        text = f"expect max gap {op} {limit}"
    else:
        text = f"expect audit flippable {op} {limit}{'%' if percent else ''}"
        text += f" by {by}" if by is not None else ""
    return text + (" or unknown" if allow_unknown else "")


@dataclass
class Outcome:
    """The verdict on one expectation of one query (or audit): ``message`` says why in
    one line (the witness, the proof, or what was proven before the time limit);
    ``detail`` the full answer (the witness table, the audit's counts)."""

    block: str  # the query's name (a sweep's: SWEEP/FEATURE) or the audit block's
    expectation: Expectation
    verdict: Verdict
    message: str
    detail: str = ""
    seconds: float = 0.0
    result: Result | None = None
    certificate: str | None = None  # the file written, or why none was

    @property
    def name(self) -> str:
        """The test's stable name: the query and the expectation."""
        return f"{self.block}: {self.expectation.words}"

    @property
    def ok(self) -> bool:
        """Whether it counts as passed (an allowed UNKNOWN does)."""
        return self.verdict == PASS or self.skipped

    @property
    def skipped(self) -> bool:
        """An UNKNOWN the expectation allows: neither passed nor failed."""
        return self.verdict == UNKNOWN and self.expectation.allow_unknown

    def line(self) -> str:
        """One line for people: ``PASS  NAME  (why)``."""
        word = "UNKNOWN (allowed)" if self.skipped else str(self.verdict).upper()
        return f"{word:<7} {self.name}: {self.message}"


def _num(v: float) -> str:
    return str(int(v)) if v == int(v) and abs(v) < 1e16 else repr(float(v))


# ---- queries: insensitive, sensitive, max gap ------------------------------------------


def limit_query(ens: Ensemble, q: Query, limit: float) -> Query:
    """The check that decides ``max gap <= limit``: the pair question at the smallest gap
    above the limit (a regressor: its change f(x1) - f(x2) by at least that much), not
    the max_gap kind's search the block asks when run."""
    q = q.with_(kind="", params=())
    above = math.nextafter(float(limit), math.inf)
    if ens.is_regressor:  # x1 the higher prediction: the change goes down from x1 to x2
        return q.with_(delta=above, direction=DOWN)
    binary = ens.n_outputs == 1
    if binary and not above < 0.5:
        raise InputError(f"max gap <= {limit:g}: a binary gap is below 0.5, give a lower limit")
    if not binary and limit < 1:
        raise InputError(f"max gap <= {limit:g}: a multiclass gap is a ratio of at least 1")
    return q.with_(gap=Gap(above, GapKind.PROB))


def asked_query(ens: Ensemble, q: Query, exp: Expectation) -> Query:
    """The query the solver answers for an expectation of ``q``."""
    if exp.kind == "max_gap":
        return limit_query(ens, q, exp.limit)
    if exp.kind == "audit":
        raise InputError("an audit expectation is judged on an audit's rows (judge_audit)")
    return q


def answer(
    ens: Ensemble,
    q: Query,
    exp: Expectation,
    *,
    start: float | None = None,
    memory_mb: int | None = None,
    catch: bool = False,
) -> Result:
    """Answer the query the expectation asks (``asked_query``) with the question's runner
    (questions/ask.py: the time limit runs from ``start``); ``catch``: a problem with the
    query (a limit it cannot take, a bug) is an "error" result, not an exception."""
    try:
        asked = asked_query(ens, q, exp)
    except Exception as e:  # noqa: BLE001 - with catch, one query's problem is its result
        if not catch:
            raise
        why = str(e) if isinstance(e, InputError) else f"internal error: {type(e).__name__}: {e}"
        return refused(ens, q, why, start)
    return ask(ens, asked, start=start, memory_mb=memory_mb, catch=catch)


def reached_gap(ens: Ensemble, res: Result) -> float:
    """The gap a replay-checked pair reaches: binary min(P(x1) - 0.5, 0.5 - P(x2)); a
    regressor's change f(x1) - f(x2); multiclass, the smaller of the two inputs' ratios
    of their predicted class over the next likeliest."""
    x1, x2 = res.outputs["x1"], res.outputs["x2"]
    if ens.is_regressor or ens.n_outputs == 1:
        return achieved_gap(res.outputs)

    def ratio(p) -> float:
        top, second = sorted(p, reverse=True)[:2]
        return math.inf if second <= 0 else top / second

    return min(ratio(x1), ratio(x2))


def witness_brief(res: Result) -> str:
    """The pair in one line: the features that differ, and the two predictions."""
    w = res.witness or {}
    x1, x2 = w.get("x1", {}), w.get("x2", {})
    changed = [n for n in x1 if x1[n] != x2.get(n)] or list(res.features)
    parts = [f"x1.{n} = {_val(x1.get(n))}, x2.{n} = {_val(x2.get(n))}" for n in changed]
    what = "f" if res.predicts else "P"
    o = res.outputs or {}
    if o:
        parts.append(f"{what}(x1) = {_outputs(o['x1'])}, {what}(x2) = {_outputs(o['x2'])}")
    return "; ".join(parts)


def _val(v) -> str:
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def _outputs(p: list) -> str:
    if len(p) == 2:  # a binary model's P(class 1)
        return f"{p[1]:.4f}"
    if len(p) == 1:
        return f"{p[0]:.6g}"
    return "[" + ", ".join(f"{x:.4f}" for x in p) + "]"


def _gap_words(res: Result) -> str:
    if res.delta:
        return f"a change of at least {res.delta['at_least']:.6g}"
    if res.classes:
        return f"ratio {res.gap:.6g}, classes {res.classes[0]} -> {res.classes[1]}"
    kind = "margin gap" if res.gap_kind == "margin" else "gap"
    return f"{kind} {res.gap:.6g}"


def judge(ens: Ensemble, exp: Expectation, res: Result) -> tuple[Verdict, str]:
    """The verdict on an expectation of a query, from the answer to ``asked_query``, and
    why in one line."""
    if res.status == ERROR_STATUS:
        return ERROR, f"error: {res.error}"
    pair = res.status == SENSITIVE and res.validated and bool(res.outputs)
    proof = res.status == INSENSITIVE
    at = _gap_words(res)
    if exp.kind == "max_gap":
        limit = _num(exp.limit)
        if proof:
            return PASS, f"proven: no pair reaches a gap above {limit} ({_by(res)})"
        if pair:
            g = reached_gap(ens, res)
            return FAIL, f"a replay-checked pair reaches {g:.6g} > {limit}: {witness_brief(res)}"
        return UNKNOWN, _open(res, f"whether a pair reaches a gap above {limit}")
    if exp.kind in ("insensitive", "sensitive"):  # each passes where the other fails
        wants_pair = exp.kind == "sensitive"
        if pair:
            found = f"sensitive at {at}, replay-checked pair: {witness_brief(res)}"
            return (PASS if wants_pair else FAIL), found
        if proof:
            none = ": no pair exists" if wants_pair else ""
            return (FAIL if wants_pair else PASS), f"proven insensitive at {at}{none} ({_by(res)})"
        return UNKNOWN, _open(res, f"whether a pair exists at {at}")
    raise InputError(f"{exp.words}: judged on an audit's rows (judge_audit)")


def _by(res: Result) -> str:
    """What proved it: the box search, the heuristic's bounds, or the backend's solver."""
    return f"proved by {(res.stats or {}).get('proved_by') or res.backend}"


def _open(res: Result, question: str) -> str:
    """What an UNKNOWN leaves open, and why."""
    if res.status == SENSITIVE:  # a pair the library's predict did not confirm
        return f"unknown: the solver's pair is not confirmed by the library's predict ({question})"
    work = res.stats.get("work") or {}
    if work.get("ended_by") == "work":  # the same on any machine: a larger work decides it
        spent = f"the work budget of {fmt_work(work['budget'])} units was spent"
        return f"unknown: {spent} with no proof and no pair ({question})"
    limit = (res.stats.get("asked") or {}).get("timeout")
    within = f" of {limit:g}s" if isinstance(limit, (int, float)) else ""
    return f"unknown: the time limit{within} ran out with no proof and no pair ({question})"


def judge_result(ens: Ensemble, q: Query, exp: Expectation, res: Result, seconds: float) -> Outcome:
    """The Outcome of a query's expectation from its answer (``answer``)."""
    verdict, message = judge(ens, exp, res)
    return Outcome(q.name or q.label, exp, verdict, message, str(res), seconds, res)


# ---- audits: how many rows may flip ----------------------------------------------------


@dataclass(frozen=True)
class GroupCount:
    """One group's rows: ``flippable`` (replay-checked flips), ``unknown`` (neither a
    flip nor a proof), of ``rows``, and the most rows that may flip (``allowed``)."""

    name: str  # "all", or "COLUMN=VALUE"
    rows: int
    flippable: int
    unknown: int
    allowed: Fraction

    def words(self) -> str:
        pct = f" ({100 * self.flippable / self.rows:.3g}%)" if self.rows else ""
        unk = f", {self.unknown} unknown" if self.unknown else ""
        head = "" if self.name == "all" else f"{self.name}: "
        return f"{head}{self.flippable} of {self.rows} rows flippable{pct}{unk}"


def allowed_rows(exp: Expectation, n: int) -> Fraction:
    """The most rows of ``n`` that may flip; a percentage is taken exactly as written
    (0.3% of 1000 rows is 3 rows, not a float's 2.9999...)."""
    limit = Fraction(repr(float(exp.limit)))
    return limit * n / 100 if exp.percent else limit


def _groups(exp: Expectation, df) -> list[tuple[str, object]]:
    """The audit frame's rows per value of the ``by`` column (one group without it; a
    numeric column of many values per interval of its deciles, as the summary's)."""
    if exp.by is None:
        return [("all", df)]
    groups = df.groupby(binned(df[exp.by]), sort=True, dropna=False, observed=True)
    return [(f"{exp.by}={v}", sub) for v, sub in groups]


def group_counts(exp: Expectation, df) -> list[GroupCount]:
    """Per group, the rows that flip with a replay-checked pair and those left unknown
    (``df``: the audit's frame, questions/audit.py, with the ``by`` column)."""
    out = []
    for name, sub in _groups(exp, df):
        flips = int((sub["status"] == FLIPPABLE).sum())
        unknown = int((sub["status"] == ROW_UNKNOWN).sum())
        out.append(GroupCount(name, len(sub), flips, unknown, allowed_rows(exp, len(sub))))
    return out


def judge_audit(exp: Expectation, df, vary) -> tuple[Verdict, str]:
    """The verdict on ``expect audit flippable <= L`` from an audit's frame (its rows'
    statuses; a flippable row's x2 was replayed with the library's predict)."""
    counts = group_counts(exp, df)
    limit = f"{_num(exp.limit)}{'%' if exp.percent else ' rows'}"
    over = [c for c in counts if c.flippable > c.allowed]
    if over:
        name, sub = next(g for g in _groups(exp, df) if g[0] == over[0].name)
        row = sub[sub["status"] == FLIPPABLE].iloc[0]
        return FAIL, f"{over[0].words()} > {limit}; e.g. {_row_flip(row, vary)}"
    if all(c.flippable + c.unknown <= c.allowed for c in counts):
        return PASS, "; ".join(c.words() for c in counts) + f": within {limit}"
    open_ = [c for c in counts if c.flippable + c.unknown > c.allowed]
    return UNKNOWN, (
        "unknown: "
        + "; ".join(c.words() for c in open_)
        + f": the unknown rows (time limit per row) may or may not take it above {limit}"
    )


def _row_flip(row, vary) -> str:
    """A flippable row in words: its number (from 1, as data errors count rows; its
    index from 0 too, the audit's ``row``), x2's values of F, the two predictions."""
    x2 = ", ".join(f"{v} = {_val(row[f'x2_{v}'])}" for v in vary)
    index = int(row["row"])
    return (
        f"row {index + 1} (index {index}) flips with {x2} (prediction {row['p_row']:.4g} -> "
        f"{row['p_x2']:.4g}, replay-checked)"
    )


def audit_outcome(
    name: str, exp: Expectation, df, vary, seconds: float, detail: str = ""
) -> Outcome:
    """The Outcome of an audit's expectation from its frame (questions/audit.py)."""
    verdict, message = judge_audit(exp, df, vary)
    return Outcome(name, exp, verdict, message, detail, seconds)


def failed_message(outcome: Outcome) -> str:
    """What an AssertionError says: the verdict line, then the full answer."""
    return outcome.line() + ("\n" + outcome.detail if outcome.detail else "")
