"""Errors a user can act on. Anything else escaping is a bug."""

from __future__ import annotations


class TreesensError(Exception):
    """Base class: a problem treesens can explain in one line."""


class InputError(TreesensError):
    """Bad input: a file, flag or query that cannot be used (exit code 2).

    ``where`` names the file (and place) the problem is in.
    """

    def __init__(self, message: str, where: str | None = None):
        self.message = message
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)


class UnsupportedModelError(InputError):
    """A model of a kind treesens does not handle (regressor, ranking, DART, ...)."""


def closest(name: str, candidates, n: int = 3) -> str:
    """A 'did you mean' suffix for unknown names, or an empty string."""
    import difflib

    cand = [str(c) for c in candidates]
    got = difflib.get_close_matches(name, cand, n=n, cutoff=0.5)
    if not got:
        low = {c.lower(): c for c in cand}
        got = [low[name.lower()]] if name.lower() in low else []
    return f" (did you mean {', '.join(repr(g) for g in got)}?)" if got else ""
