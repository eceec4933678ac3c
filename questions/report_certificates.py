"""A report's claims certified within its budget (``treesens report --certificates``):
each protected feature's insensitive answer and each ranked max gap's upper bound, one
after the other, each given its share of the time left until the report's deadline (at
most ``--certify-budget``); a claim reached once the budget is spent is not tried, and
its proof record says so. The audited rows' certificates come after them, with what is
left (questions/report.py, ``RowCertificates``)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from ..answers.proof import BOX_SEARCH, Proof
from ..answers.result import ERROR, Result
from ..compiler.ensemble import Ensemble
from .certify import answer_refusal, certify_answer, forget_file
from .output_folder import make_folder
from .query_build import query_from_keywords

# a claim's share of the time left: this much for its search, the rest for the checker's
# reading of the file it writes (outside the search's time limit: questions/certify.py)
SEARCH_PART = 0.75
# a share shorter than this is not tried: the report's budget is spent
MIN_CLAIM_SECONDS = 0.1
# how a certificate names the budget its proof needs (search/compiled_proof.too_long)
ASK_CERTIFY_BUDGET = re.compile(r"ask for --certify-budget (\d+) \(certify_budget=\d+\) or more")
# "What was not answered" (questions/report.py) and the line of the claims not tried name
# this many features of one reason, and count more
HANDFUL = 5


@dataclass
class ClaimCertificates:
    """How a report's claims are certified: into ``folder``, the model read from
    ``model_file``, each claim within ``SEARCH_PART`` of its share of the time until
    ``end`` (the report's deadline, a time.time()) and at most ``budget`` seconds
    (``--certify-budget``); ``report_budget``: the report's ``--budget``, as the lines
    name it; ``say`` gets a line per claim."""

    folder: Path
    model_file: str | Path | None
    budget: float
    end: float
    report_budget: float
    say: Callable[[str], None]

    def certify(
        self, ens: Ensemble, checks: list[tuple[str, Result]], ranking: list[Result], asked, classes
    ) -> None:
        """Each protected feature's answer (``checks``: feature and answer), then each
        ranked max gap's upper bound, certified one after the other: a claim that may get
        a certificate takes its share of the time left (the claims still to certify
        share it), one that may not says why at once."""
        make_folder(self.folder, f"certificates folder {self.folder}")
        claims = [
            (f"{f}: ", res, [f], {**asked, "classes": classes}, self.folder / f"{f}.json")
            for f, res in checks
        ]
        for r in ranking:
            if r.status != ERROR:
                name = r.features[0] if len(r.features) == 1 else ",".join(r.features)
                where = self.folder / f"{name}.max-gap.json"
                claims.append(
                    (f"max gap of {name}: ", r, list(r.features), {"classes": classes}, where)
                )
        for claim in claims:  # an earlier report's file (another model's) is no claim of this one
            forget_file(claim[-1])
        timed = sum(1 for c in claims if answer_refusal(c[1]) is None)
        if timed:
            left = max(0.0, self.end - time.time())
            self.say(
                f"report: certifying {timed} claim{'s' if timed != 1 else ''} within the "
                f"{left:.0f}s left of the budget ({self.report_budget:g}s), each at most "
                f"{self.budget:g}s; the audited rows after them, with what remains"
            )
        untried = []
        for head, res, features, kw, path in claims:
            may = answer_refusal(res) is None
            seconds = self.seconds(timed) if may else 0.0
            timed -= int(may)
            if may and seconds < MIN_CLAIM_SECONDS:
                not_tried(res, self.not_tried_text())
                bound = path.name.endswith(".max-gap.json")  # a max gap's, not an answer's
                untried.append((bound, ",".join(features)))
                continue
            q = query_from_keywords(features, kw, ens=ens)
            done = certify_answer(ens, q, res, path, self.model_file, seconds)
            self.say(f"report: {head}{self.asking(done.message, seconds, res)}")
        if untried:  # one line for them all
            n = len(untried)
            self.say(
                f"report: {n} claim{'s' if n != 1 else ''} without a certificate, "
                f"{self.not_tried_text()}: {untried_text(untried)}"
            )

    def seconds(self, claims: int) -> float:
        """The next claim's time: its share of the time left, ``claims`` sharing it."""
        share = (self.end - time.time()) / max(1, claims)
        return min(self.budget, SEARCH_PART * share)

    def asking(self, message: str, seconds: float, res: Result) -> str:
        """A certificate's message, and its proof record's reason, where the time it
        needs is named: the budget to ask for is the report's ``--budget`` where its share
        of it, not ``--certify-budget``, held the claim's time (``seconds``)."""
        if seconds >= self.budget:
            return message

        def ask(m: re.Match) -> str:
            more = f"--certify-budget {m[1]} and " if int(m[1]) > self.budget else ""
            return (
                f"ask for {more}a larger --budget (the report's {self.report_budget:g}s left "
                f"it {seconds:.3g}s)"
            )

        if res.proof is not None and res.proof.why_not:
            res.proof = replace(res.proof, why_not=ASK_CERTIFY_BUDGET.sub(ask, res.proof.why_not))
        return ASK_CERTIFY_BUDGET.sub(ask, message)

    def not_tried_text(self) -> str:
        return (
            f"not tried: the report's budget of {self.report_budget:g}s was spent before it "
            "(a larger --budget leaves it time)"
        )


def not_tried(res: Result, why: str) -> None:
    """A claim's proof record once its certificate was not tried: unchecked, saying why."""
    proof = res.proof if res.proof is not None else Proof(BOX_SEARCH)
    res.proof = replace(proof, checked=False, certificate=None, why_not=why, bound=None)
    res.box_proof = None  # a max gap's recorded boxes: not kept past its certificate


def untried_text(untried: list[tuple[bool, str]]) -> str:
    """The claims not tried ((a max gap's bound?, its features)), grouped as "What was not
    answered" groups them: the insensitive answers, then the max gaps' upper bounds, each
    group's features named up to HANDFUL, else counted."""
    groups = by_reason(untried)
    answers, bounds = groups.get(False, []), groups.get(True, [])
    said = []
    if answers:
        said.append(f"the insensitive {plural(answers, 'answer')} of {named(answers)}")
    if bounds:
        said.append(
            f"the upper {plural(bounds, 'bound')} of the max {plural(bounds, 'gap')} of "
            f"{named(bounds)}"
        )
    return "; ".join(said)


def by_reason(pairs: list[tuple]) -> dict:
    """(reason, name) pairs as each reason's names, in the order first met."""
    out: dict = {}
    for why, name in pairs:
        out.setdefault(why, []).append(name)
    return out


def named(names: list[str]) -> str:
    """Features as a sentence names them: each, up to HANDFUL, else how many."""
    if len(names) > HANDFUL:
        return f"{len(names)} features"
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def plural(names: list[str], one: str, more: str | None = None) -> str:
    """``one`` for a single name, else ``more`` (``one`` + "s" unless given)."""
    return one if len(names) == 1 else (more or one + "s")
