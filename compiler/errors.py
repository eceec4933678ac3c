"""Errors a user can act on. Anything else escaping is a bug."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


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


# the ``listing`` of closest() for unknown feature names
FEATURES = "known features"


def closest(name: str, candidates: Iterable[str], n: int = 3, *, listing: str | None = None) -> str:
    """A 'did you mean' suffix for unknown names, or an empty string.

    With ``listing`` (say "known features"), a name with no close match gets the start of
    the candidates' list instead: " (known features: a, b, c, ... 30 in all)".
    """
    cand = [str(c) for c in candidates]
    got = difflib.get_close_matches(name, cand, n=n, cutoff=0.5)
    if not got:
        low = {c.lower(): c for c in cand}
        got = [low[name.lower()]] if name.lower() in low else []
    if got:
        return f" (did you mean {', '.join(repr(g) for g in got)}?)"
    if listing is None or not cand:
        return ""
    return f" ({listing}: {name_list(cand)})"


def name_list(names: Iterable[object], max_names: int = 8, max_chars: int = 80) -> str:
    """``a, b, c`` or, for a long list, its start: ``a, b, c, ... 30 in all``."""
    names = [str(x) for x in names]
    shown: list[str] = []
    for x in names:
        if len(shown) == max_names or (shown and len(", ".join(shown + [x])) > max_chars):
            break
        shown.append(x)
    if len(shown) == len(names):
        return ", ".join(shown)
    return f"{', '.join(shown)}, ... {len(names)} in all"


class TreesensWarning(UserWarning):
    """Something a user should know that does not stop the run (the CLI prints it as one
    line: ``treesens: warning: ...``)."""
