"""A sweep's certificates (``--certificates DIR``): each insensitive answer certified
before its line is written or shown, so that its proof record (``Result.proof``) says so
in the results file, the JSON and the table (docs/certificates.md). The sweep campaign
(questions/campaign.py) hands each answer over, reused or new."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

from ..answers.result import INSENSITIVE, Result
from ..compiler.ensemble import Ensemble
from ..compiler.query import Gap, GapKind, Query
from .certify import certify_answer, forget_file, model_refusal, proof_after, refused
from .output_folder import make_folder


class SweepCertificates:
    """The certificates of one sweep: ``DIR/QUERY.json`` per insensitive answer, written
    by the box search (within ``budget`` seconds, default each query's time limit) and
    checked by the independent checker; ``note`` sees a line for each answer left
    without one, ``summary`` the count at the end. ``max_gap``: a max-gap sweep, whose
    answers get ``DIR/QUERY.max-gap.json``, a certificate of their upper bound (as a
    report's ranking does)."""

    def __init__(
        self,
        ens: Ensemble,
        make_query: Callable[..., Query],
        subsets: list[tuple[str, ...]],
        folder: str | Path,
        model_file: str | Path | None,
        *,
        budget: float | None = None,
        max_gap: bool = False,
        note: Callable[[str], None] = lambda _msg: None,
    ):
        self.ens, self.make_query, self.note = ens, make_query, note
        self.folder = Path(folder)
        self.model_file, self.budget = model_file, budget
        self.subsets = {",".join(s): tuple(s) for s in subsets}
        self.max_gap = max_gap
        self.refusal = None  # why no answer of this sweep gets one
        if subsets:
            q = make_query(list(subsets[0]), "")
            if max_gap:  # its certificates are of "no pair reaches U'", a probability gap
                q = q.with_(kind="", params=(), gap=Gap(0.25, GapKind.PROB))
            self.refusal = model_refusal(ens, q, model_file)
        if self.refusal is None:
            make_folder(self.folder, f"certificates folder {self.folder}")
        self.written, self.rejected, self.others = 0, 0, Counter()

    def __call__(self, res: Result, subset: tuple[str, ...] | None = None) -> None:
        """Certify ``res`` (the answer for ``subset``, default the one its label names) if
        it is insensitive; its proof record says what became of it."""
        s = subset or self.subsets.get(res.query) or tuple(res.features)
        name = "+".join(s)
        suffix = ".max-gap.json" if self.max_gap else ".json"
        path = self.folder / f"{safe_name(name)}{suffix}"
        forget_file(path)  # an earlier sweep's (another model's) is no claim of this
        if res.status != INSENSITIVE and not (self.max_gap and res.max_gap is not None):
            self.others[str(res.status)] += 1
            return
        if self.refusal is not None:
            if res.proof is not None:
                res.proof = proof_after(res.proof, refused(self.refusal))
            return
        q = self.make_query(list(s), ",".join(s))
        budget = self.budget if self.budget is not None else q.plan.timeout
        done = certify_answer(self.ens, q, res, path, self.model_file, budget)
        self.written += done.written
        self.rejected += done.written and not done.verified
        needs_none = res.proof is not None and res.proof.needs_none
        if not done.verified and not needs_none:  # the table says "not needed"
            self.note(f"{'max gap of ' if self.max_gap else ''}{name}: {done.message}")
        if self.max_gap and not done.written:
            self.others["not needed" if needs_none else "not certified"] += 1

    def takes_recorded(self, executor) -> bool:
        """Whether the answers' own proofs are recorded for these certificates: answers
        asked in this process (an executor's workers would send them back pickled) that
        may get one (a max gap's: the boxes its search kept, certify_tiling.py)."""
        return executor is None and self.refusal is None

    def summary(self) -> str:
        """The last line: how many were written, and the answers that get none."""
        if self.refusal is not None:
            return f"no certificates: {self.refusal}"
        others = ", ".join(f"{n} {status}" for status, n in sorted(self.others.items()))
        rejected = f", {self.rejected} rejected by the checker" if self.rejected else ""
        what = "the max gaps without one" if self.max_gap else "the answers not insensitive"
        tail = f" (none for {what}: {others})" if others else ""
        return f"certificates: {self.written} written to {self.folder}{rejected}{tail}"


def safe_name(text: str) -> str:
    """A file name for a query: letters, digits, '-', '_', '+' and '.'; others as '_'."""
    return "".join(c if c.isalnum() or c in "-_+." else "_" for c in text)
