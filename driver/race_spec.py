"""What a ``--backend race`` spec names: ``"race"`` (the installed backends of
``DEFAULT_RACE``) or ``"race:cpsat,z3"`` (those backends; ``"race:cpsat+z3"`` alike, the
spelling of a race in a list of backends, whose commas separate the list). Apart from race.py, which runs
the race, so that checking a query's backend loads no solver machinery."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..backends.registry import (
    BACKENDS,
    SEARCH_METHODS,
    available,
    install_hint,
    is_search_method,
)
from ..compiler.errors import InputError, closest

RACE = "race"
# CP-SAT, z3 (pseudo-Boolean SAT) and HiGHS are strong on different instances
DEFAULT_RACE = ("cpsat", "z3", "highs")


def is_race(backend: str) -> bool:
    return backend == RACE or backend.startswith(RACE + ":")


def unknown_backend(name: str, in_list: bool = False) -> str:
    """The error of a backend name that is neither a backend, a search method nor a race,
    every name a backend setting takes listed; ``in_list``: of a list of backends (a .sens
    file's backend line), where a race joins its backends by '+'."""
    known = [*BACKENDS, *SEARCH_METHODS, RACE]
    race = (
        f"{RACE}:NAME+NAME to race those"
        if in_list
        else f"{RACE}:NAME,NAME to race those; {RACE}:NAME+NAME in a list of backends"
    )
    return f"unknown backend {name!r}{closest(name, known)}; known: {', '.join(known)} (or {race})"


def race_in_list_problem(race: str, after: Sequence[str]) -> str | None:
    """What is wrong with a race in a list of backends (a .sens file's backend line), whose
    commas separate the list, or None: it names no backend, an unknown one or a race, or
    races one backend followed by others (the race of them all split at its comma). Which
    backends are installed is checked when it runs."""
    if race == RACE:
        return None
    names = [b.strip() for b in re.split("[,+]", race.split(":", 1)[1]) if b.strip()]
    if not names:
        return f"{race!r} names no backend to race (e.g. {RACE}:cpsat+highs)"
    known = [*BACKENDS, *SEARCH_METHODS]
    for b in names:
        if is_race(b):
            return "a race cannot contain a race"
        if b not in known:
            return (
                f"unknown backend {b!r} in the race{closest(b, known)}; known: {', '.join(known)}"
            )
    if len(names) == 1 and after:
        return (
            f"{race!r} races one backend, and the commas separate the backends listed: "
            f"join a race's backends by '+' ({race}+{after[0]})"
        )
    return None


def race_backends(backend: str, backends: Sequence[str] | None = None) -> list[str]:
    """The backends a race spec names (installed ones only for the default set)."""
    if backends:
        names = list(backends)
    elif backend.startswith(RACE + ":"):
        names = [b.strip() for b in re.split("[,+]", backend.split(":", 1)[1]) if b.strip()]
        if not names:
            raise InputError(f"{backend!r} names no backend to race (e.g. {RACE}:cpsat+highs)")
    else:
        names = [b for b in DEFAULT_RACE if available(b)]
        if not names:
            names = [b for b in BACKENDS if available(b)]
    for b in names:
        if is_race(b):
            raise InputError("a race cannot contain a race")
        if b not in BACKENDS and not is_search_method(b):
            known = [*BACKENDS, *SEARCH_METHODS]
            raise InputError(
                f"unknown backend {b!r} in the race{closest(b, known)}; known: {', '.join(known)}"
            )
        if not available(b):
            raise InputError(f"backend {b!r} in the race is not installed: {install_hint(b)}")
    names = list(dict.fromkeys(names))
    if not names:
        raise InputError("no backend is installed to race")
    return names
