"""When a timed max-gap search that keeps frames goes best first (gap_boxes._late_best_first):
in the last BEST_FIRST_SHARE of its time, and only while its upper bound is not on course
to reach the floor by the deadline. Best first gives a search stopped by its limit a
tighter bracket; the frames close a search sooner (gap_kernel.DIVE_FRAMES), so a search
about to close keeps them."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from . import gap_kernel


@dataclass
class UpperFall:
    """A search's upper bound (row units) at the start of each step, with the time."""

    times: list[float] = field(default_factory=list)
    uppers: list[float] = field(default_factory=list)

    def add(self, now: float, upper: float) -> None:
        self.times.append(now)
        self.uppers.append(upper)

    def at(self, when: float) -> float:
        """The upper bound at the last step started at or before ``when`` (the first
        step's where none was)."""
        i = bisect.bisect_right(self.times, when) - 1
        return self.uppers[max(i, 0)]


def closes_in_time(
    fall: UpperFall, now: float, u_floor: float, started: float, deadline: float
) -> bool:
    """Whether the search's upper bound, falling as it fell over the last BEST_FIRST_SHARE
    of its time (from ``started`` to ``deadline``), reaches ``u_floor`` within the time
    left divided by CLOSE_MARGIN (its fall slows as it nears the floor)."""
    if not fall.times:
        return False
    window = min(gap_kernel.BEST_FIRST_SHARE * (deadline - started), now - started)
    u_now = fall.uppers[-1]
    fell = fall.at(now - window) - u_now
    if u_now <= u_floor:
        return True
    if fell <= 0.0 or window <= 0.0:
        return False
    return (u_now - u_floor) / fell * window * gap_kernel.CLOSE_MARGIN <= deadline - now
