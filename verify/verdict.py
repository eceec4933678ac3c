"""A checker's verdict on a certificate, its refusals to check one (bad input), and the
two verdicts of a proof's walk: a pruned box whose bound does not close it, the boxes
left open (box_checks.py, walk.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Verdict:
    valid: bool
    message: str
    boxes: int = 0
    model: str = ""  # the model file the proof was checked against (its path and hash)
    # a valid proof's domain, per feature in model order: ``feature``, ``varied``, ``lb``,
    # ``ub`` (numbers, "-inf" / "inf"), ``integer``, ``missing``, ``codes`` where coded
    # (the verdict names at most SHOWN_BOUNDS other features' bounds; ``verify --json``
    # lists them all)
    domain: tuple = ()


def number(v) -> bool:
    """A number as JSON states one (true and false are not)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def unstated_bound(step: list, i: int) -> Verdict | None:
    """Why a ``prune`` step's bound is no number (None: it is one), as JSON states one: a
    string of the number, or true, is refused rather than read."""
    v = step[2]
    if number(v):
        return None
    return Verdict(False, f"step {i}: a prune step's bound is a number, not {v!r}")


def prune_refusal(
    where: tuple[int, int], name: str, bound: float, stated: float, tol: float, below: float
) -> Verdict | None:
    """Why a ``prune`` step of box ``where[0]`` (step ``where[1]``) does not close its
    box (None: it does): its row's recomputed ``bound`` is not the ``stated`` one (within
    ``tol``: the offset may be read with a float32 rounding's difference, within the
    relaxation), or does not reach ``below`` the row's threshold."""
    pruned, i = where
    if not math.isclose(bound, stated, rel_tol=1e-6, abs_tol=tol):
        return Verdict(
            False,
            f"box {pruned} (step {i}): its {name} bound is {bound:.9g}, not the "
            f"{stated:.9g} the certificate states",
            pruned,
        )
    if not bound < below:
        return Verdict(
            False,
            f"box {pruned} (step {i}): its {name} bound {bound:.9g} does not "
            f"reach below {below:.9g}",
            pruned,
        )
    return None


def covering(stack: list, pruned: int) -> Verdict:
    """The verdict of a walk that closed ``pruned`` boxes and left ``stack`` open."""
    if stack:
        return Verdict(False, f"the proof leaves {len(stack)} boxes of the pair space open")
    covers = "box covers" if pruned == 1 else "boxes cover"
    return Verdict(True, f"{pruned:,} {covers} the pair space, none meets the gap", pruned)


class CertificateError(Exception):
    """The file is not a certificate that can be checked (bad input, exit code 2)."""


class ModelUnreadable(CertificateError):
    """The model file the certificate names (or the one given) cannot be read."""
