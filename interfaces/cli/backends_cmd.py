"""treesens backends: which solver backends are installed and usable."""

from __future__ import annotations

import argparse
import json

from ...backends.registry import (
    BACKENDS,
    DEFAULT_BACKEND,
    SEARCH_METHODS,
    available,
    install_hint,
)
from ...driver.probe import backend_loads
from ...driver.race_spec import DEFAULT_RACE, RACE

HELP = (
    "list solver backends and whether they are installed (each tried on a tiny problem "
    "in its own process)"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object per backend: name, installed, default, description",
    )


def run(args) -> int:
    rows = []
    for name, info in BACKENDS.items():
        ok, why = available(name), ""
        if ok:  # its packages import: does its solver load and solve?
            ok, why = backend_loads(name)
        note = info.description
        if why:
            note += f" (installed but does not load: {why}; {install_hint(name)})"
        if info.size_limit and ok:
            note += f" (size-limited license: at most {info.size_limit[0]} variables and {info.size_limit[1]} constraints)"
        rows.append(
            {"name": name, "installed": ok, "default": name == DEFAULT_BACKEND, "description": note}
        )
    for name, method in SEARCH_METHODS.items():  # no solver: always there
        rows.append(
            {"name": name, "installed": True, "default": False, "description": method.description}
        )
    rows.append(_race_row(rows))
    if args.json:
        for r in rows:
            print(json.dumps(r))
    else:
        for r in rows:
            mark = "yes" if r["installed"] else "no "
            dflt = " (default)" if r["default"] else ""
            print(f"{r['name']:8} installed: {mark}  {r['description']}{dflt}")
    return 0


def _race_row(rows: list[dict]) -> dict:
    """The race, which ``--backend`` takes as a backend: installed when a backend is."""
    installed = {r["name"] for r in rows if r["installed"]}
    racing = [b for b in DEFAULT_RACE if b in installed]
    alone = f"{RACE} alone races {', '.join(racing)}" if racing else f"{RACE} alone races none here"
    return {
        "name": RACE,
        "installed": any(b in installed for b in BACKENDS),
        "default": False,
        "description": "several backends at once, the first proven answer wins: "
        f"{alone}; {RACE}:cpsat+highs (or {RACE}:cpsat,highs) the ones named (docs/backends.md)",
    }
