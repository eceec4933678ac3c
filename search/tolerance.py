"""How near a max gap's bounds must come before the search ends proven."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tolerance:
    """In the gap's units. ``least``: the smallest gap counted as reached (a search that
    proves no pair reaches it answers "insensitive") and, with ``relative`` 0, how far
    apart the bounds may end. ``relative`` (a regressor's change, whose units are the
    prediction's): once a pair reaches g, the bounds close to within ``relative * g``,
    never less than ``band`` (the link's rounding)."""

    least: float
    relative: float = 0.0
    band: float = 0.0

    def width(self, lower: float | None) -> float:
        """How far above ``lower`` (the best gap reached, None: none) the upper bound
        may end."""
        if lower is None or not self.relative:
            return self.least
        return max(self.relative * lower, self.band)

    def floor(self, lower: float | None) -> float:
        """What a box's bound must pass to be searched further."""
        return self.least if lower is None else lower + self.width(lower)

    def met(self, lower: float | None, upper: float) -> bool:
        """Whether the bounds are near enough (a pair reached: ``lower`` not None)."""
        return lower is not None and upper - lower <= self.width(lower)


def as_tolerance(tolerance: float | Tolerance) -> Tolerance:
    """A plain number is an absolute tolerance."""
    return tolerance if isinstance(tolerance, Tolerance) else Tolerance(float(tolerance))
