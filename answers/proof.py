"""Who proved an "insensitive" answer, and whether a checker that shares no code with
treesens re-checked that proof (``Result.proof``; docs/certificates.md).

An answer is *independently checked* when its certificate was written and the checker of
the ``verify`` package (``treesens verify``) accepted it; otherwise the record says who
proved it and, when a certificate was asked for, why there is none. How a record reads:
in a few words (the repr, the sweep's table) answers/phrases.py, on the verdict line and
the report's page views/result_view.py.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

# why a max gap's upper bound gets no certificate when it is the largest probability gap
# there is: no pair of any model goes past it, so there is nothing to certify
TRIVIAL_BOUND = "the upper bound is 0.5, the largest gap there is"
BOX_SEARCH = "box search"  # the prover of search/box_search.py; a solver goes by its backend
# how sentences name a prover (a backend of a plugin: by its own name)
_NAMES = {
    BOX_SEARCH: "the box search",
    "cpsat": "CP-SAT",
    "cbc": "CBC",
    "highs": "HiGHS",
    "gurobi": "Gurobi",
    "z3": "Z3",
}


@dataclass(frozen=True)
class Proof:
    """The proof behind an "insensitive" answer, or behind a max gap's upper bound."""

    by: str  # "box search", or the solver that proved it: "cpsat", "cbc", "highs", "gurobi", "z3"
    checked: bool = False  # a certificate was written and the independent checker accepted it
    certificate: str | None = None  # that certificate's path (only when checked)
    # why it was not checked, one short clause, when a certificate was asked for ("" else)
    why_not: str = ""
    # a max gap's record: the gap U' its certificate states no pair reaches (its upper
    # bound U rounded up; questions/certify.py), when one was asked for; None otherwise
    bound: float | None = None

    @property
    def needs_none(self) -> bool:
        """Whether this max gap's upper bound needs no certificate (``TRIVIAL_BOUND``)."""
        return self.bound is not None and not self.checked and self.why_not == TRIVIAL_BOUND

    @property
    def prover(self) -> str:
        """The prover as sentences name it: "the box search", "CP-SAT", ..."""
        return _NAMES.get(self.by, self.by)

    def to_dict(self) -> dict:
        """The JSON form; ``bound`` only in a max gap's record."""
        out = asdict(self)
        if self.bound is None:
            del out["bound"]
        return out

    @classmethod
    def from_dict(cls, d: dict) -> Proof:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})


def prover_of(stats: dict, backend: str) -> str:
    """Who proved an answer: the box search when it did (``stats["proved_by"]``), else
    the backend that ran."""
    by = (stats or {}).get("proved_by") or backend
    # the largest gap's search is the box search too ("box search (largest gap)")
    return BOX_SEARCH if by.startswith(BOX_SEARCH) else by


def bound_claim(bound: float, kind: str = "prob") -> str:
    """What a max gap's certificate states of its bound U' (``Proof.bound``): a
    regressor's largest change (``kind`` "change"), a multiclass probability ratio
    ("ratio"), or a binary probability gap."""
    if kind == "change":
        return f"no change of {bound:g} or more"
    if kind == "ratio":
        return f"no pair reaches a probability ratio of {bound:g}"
    return f"no pair reaches a gap of {bound:g}"


def brief(reason: str) -> str:
    """A reason's short form for a label: its words before any parenthesis."""
    return reason.split(" (", 1)[0]
