"""One query on several backends: compiled once, each backend in its own worker process
(``treesens compare`` and ``treesens.compare``)."""

from __future__ import annotations

import time

from ..answers.phrases import NOT_DESCRIBED
from ..backends.registry import BACKENDS, available, require_installed
from ..compiler.errors import InputError
from ..driver import compile_query, is_race, race_backends
from ..driver.race_spec import RACE
from ..readers.data import dataset_for
from .ask import answer, query_memory_limit, refused
from .memory import memory_refusal


def backend_list(spec) -> list[str]:
    """The backends a --backends list names: commas separate them, so a race among them
    joins its own backends by '+' (``cpsat,race:cpsat+highs``); the API's list takes a
    race of either spelling as one of its items."""
    if spec is not None and not isinstance(spec, (str, list, tuple)):
        raise InputError(f"backends: give a list of names, or one text 'cpsat,highs', not {spec!r}")
    if spec is not None and not isinstance(spec, str):  # the API's list of names
        names = [str(b).strip() for b in spec if str(b).strip()]
    else:
        names = [b.strip() for b in (spec or "").split(",") if b.strip()]
    if spec is not None and not names:
        raise InputError("backends: no backend named (leave it out for every installed one)")
    spaced = next((b for b in names if len(b.split()) > 1), None)
    if spaced is not None:  # 'cpsat z3' was "unknown backend 'cpsat z3' (did you mean 'cpsat'?)"
        joined = ",".join(spaced.split())
        raise InputError(f"backends: commas separate the backends, not spaces: {joined!r}")
    if not names:
        names = [b for b in BACKENDS if available(b)]
        if not names:
            raise InputError("no solver backend is installed (see 'treesens backends')")
        return names
    for i, b in enumerate(names):
        if is_race(b):
            check_race_in_list(b, names[i + 1 :])
        else:  # unknown name: a suggestion; not installed: how to install it
            require_installed(b)
        if b in names[:i]:  # as a .sens file's backend list: a slip, not a second run
            raise InputError(f"backends: backend {b!r} listed twice")
    return names


def check_race_in_list(race: str, after: list[str]) -> None:
    """A race in a list of backends names known, installed backends; one racing a single
    backend and followed by others ('race:cpsat,highs' split at its comma) is the race of
    them all misspelt: an error saying how a race is written there."""
    members = race_backends(race)
    if race != RACE and len(members) == 1 and after:
        raise InputError(
            f"backends: {race!r} races one backend, and the commas separate the backends "
            f"compared: join a race's backends by '+' ({race}+{after[0]})"
        )


def compare_query(
    ens,
    q,
    backends: list[str],
    *,
    memory_mb=None,
    heuristic: bool = False,
    on_result=None,
    start: float | None = None,
):
    """Solve one query on every backend from one compilation; a list of Results. A
    model too large for the memory limit is refused before compiling (each backend's
    result says so). Each backend's time limit covers what a check on it alone would
    count: the time from ``start`` (a ``time.time()``: the command's start, so that
    loading counts; default now) to the end of the compile, then its own stages."""
    start = time.time() if start is None else start
    q = q.planned(options=q.plan.options.with_(heuristic=heuristic))
    too_large = memory_refusal(ens, query_memory_limit(q, memory_mb), compiles=True)
    if too_large is not None:
        out = [refused(ens, q.planned(backend=b), too_large) for b in backends]
        for res in out if on_result else ():
            on_result(res)
        return out
    cq = compile_query(ens, q, data=dataset_for(ens, q))
    before = time.time() - start  # start-up, load and compile: shared, counted for each
    out = []
    for b in backends:
        res = answer(
            ens,
            q.planned(backend=b),
            start=time.time() - before,
            compiled=cq,
            memory_mb=memory_mb,
            catch=True,
        )
        res.time["compile"] = cq.compile_time
        out.append(res)
        if on_result:
            on_result(res)
    return out


def disagreement(results) -> str | None:
    """A message when one backend proved insensitive and another found a replayed witness."""
    sens = [r.backend for r in results if r.status == "sensitive" and r.validated]
    insens = [r.backend for r in results if r.status == "insensitive"]
    if sens and insens:
        return (
            f"BACKENDS DISAGREE: {', '.join(sens)} found a replayed witness (sensitive) but "
            f"{', '.join(insens)} proved insensitive -- one of them is wrong (a bug: please report it)"
        )
    return None


def not_taken(r) -> bool:
    """An error only because the backend does not take the query (not a failure): a
    size-limited license refused the model, or the box search does not describe the
    query (a data-aware mode, a relation it does not read)."""
    why = r.error or ""
    return r.status == "error" and ("license refused" in why or why.startswith(NOT_DESCRIBED))
