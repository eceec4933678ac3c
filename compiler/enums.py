"""The one string-enum idiom of the package (Python 3.10 has no ``enum.StrEnum``)."""

from __future__ import annotations

from enum import Enum


class StrValue(str, Enum):
    """A str enum that prints, formats, compares and hashes as its value: a dict keyed by
    the plain string finds it, and pickles and JSON carry the plain word."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)

    def __hash__(self) -> int:
        return str.__hash__(self)
