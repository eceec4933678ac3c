"""Where a single ``treesens check``'s CPU goes, phase by phase, on benchmark instances.

    python bench/cli_phases.py --instances LIST [--against REV] [--timeout S]

Runs ``treesens check MODEL --details D --vary F --gap G --json`` once per instance in a
fresh process (as bench/cli_times.py does), with the command's functions wrapped by
timers of the process's CPU time (user + system: robust to the machine's load, unlike
wall time). Each phase's time excludes the phases nested in it (a replay inside the box
search counts as replay):

- ``interpreter``: before the first line (Python's start, site, .pth files);
- ``numpy``, ``treesens``: importing numpy, then the command's modules (``main`` and
  ``check``);
- ``load``: reading the model (and details) into treesens' IR;
- ``compile``: the encoding (driver/solve.py ``_start``);
- ``heuristic``, ``box``, ``solver``: the searches (the solver's problem built and run;
  where the box search's and the solver's layers are imported by their stage, as here,
  their import is in the stage's time: main imported them at start-up);
- ``replay``: the library's own predict on the pair(s) (answers/verdict.py
  ``library_scores``, with the library's load and any import it makes);
- ``other``: the rest (flags, the query, the result's output);
- ``total``: the process's CPU when the result is out (without the interpreter's exit);
- ``exit``: from then until the process has ended (the interpreter's and the kernel's
  side of its end), and ``whole``: the process's CPU from start to end, both read by this
  script with ``getrusage(RUSAGE_CHILDREN)`` (``whole`` is what a user's process costs).

Medians per checkout over the instances every checkout answered, and the median total.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from instances import tier  # noqa: E402
from run import HERE_CHECKOUT, Checkout, compile_sources, other_checkout  # noqa: E402

PHASES = (
    "interpreter",
    "numpy",
    "treesens",
    "load",
    "compile",
    "heuristic",
    "box",
    "solver",
    "replay",
    "other",
    "total",
    "exit",
    "whole",
)

# the child: timers around the command's functions, then the command as console_main
# runs it; the phases' CPU goes to stderr as one JSON line
CHILD = r"""
import time, sys, json
_cpu = time.process_time
T = {"interpreter": _cpu()}
import numpy
T["numpy"] = _cpu() - T["interpreter"]
_t = _cpu()
from treesens.interfaces.cli import main as _main
import treesens.interfaces.cli.check as _check
T["treesens"] = _cpu() - _t
_stack = []

def _timed(mod, name, phase):
    f = getattr(mod, name, None)
    if f is None:
        return
    def g(*a, **k):
        _stack.append(0.0)
        t = _cpu()
        try:
            return f(*a, **k)
        finally:
            spent = _cpu() - t
            inner = _stack.pop()
            T[phase] = T.get(phase, 0.0) + spent - inner
            if _stack:
                _stack[-1] += spent
    setattr(mod, name, g)

import treesens.answers.verdict as _v
import treesens.driver.solve as _s
import treesens.search.heuristic_stage as _h
_timed(_check, "load_from_args", "load")
_timed(_s, "_start", "compile")
_timed(_h, "find_witness", "heuristic")
_timed(_s, "box_stage", "box")
_timed(_s, "_box_stage", "box")  # the stages that import their layers when first run
_timed(_s, "reduce_for_backend", "solver")
_timed(_s, "backend_beside_boxes", "solver")
_timed(_s, "_solver_stage", "solver")
_timed(_v, "library_scores", "replay")
_emit = _check.emit_result
def _report():
    if "other" in T:
        return
    T.setdefault("total", _cpu())
    known = sum(v for k, v in T.items() if k != "total")
    T["other"] = max(0.0, T["total"] - known)
    print("PHASES " + json.dumps(T), file=sys.stderr, flush=True)
def _emit_then_total(*a, **k):
    out = _emit(*a, **k)
    T["total"] = _cpu()
    _report()  # here: the command may end its process without returning
    return out
_check.emit_result = _emit_then_total
sys.argv = ["treesens", *json.loads(sys.argv[1])]
try:
    sys.exit(_main.console_main())
finally:
    _report()
"""


def _children_cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def run_phases(inst, timeout: float, checkout: Checkout) -> dict:
    model, details = inst.paths
    argv = ["check", model, "--json", "--vary", ",".join(inst.features)]
    argv += ["--details", details] if details else []
    argv += ["--gap", f"{inst.gap:g}", "--timeout", f"{timeout:g}"]
    env = dict(os.environ, PYTHONPATH=str(checkout.root.parent))
    c0 = _children_cpu()
    p = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(argv)], capture_output=True, text=True, env=env
    )
    whole = _children_cpu() - c0
    at = checkout.label or "this"
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    phases = [ln for ln in p.stderr.splitlines() if ln.startswith("PHASES ")]
    if not lines or not phases:
        return {"instance": inst.id, "at": at, "status": "error", "error": p.stderr[-300:]}
    answer = json.loads(lines[-1])
    status, validated = answer["status"], answer.get("validated")
    T = json.loads(phases[-1][7:])
    T["exit"] = max(0.0, whole - T["total"])
    row = {"instance": inst.id, "at": at, "status": status, "validated": validated}
    return {**row, **T, "whole": whole}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--instances", required=True, help="a list of the full tier's instance ids")
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--out", default=None, help="one JSON line per run")
    ap.add_argument("--against", default=None, metavar="REV", help="commit REV side by side")
    args = ap.parse_args(argv)
    wanted = [ln.split("#", 1)[0].strip() for ln in Path(args.instances).read_text().splitlines()]
    wanted = [w for w in wanted if w]
    insts = {i.id: i for i in tier("full", ("single",))[0]}
    checkouts = [HERE_CHECKOUT] + ([other_checkout(args.against)] if args.against else [])
    for co in checkouts:
        compile_sources(co)
    rows = []
    for n, iid in enumerate(wanted):
        for co in checkouts[n % len(checkouts) :] + checkouts[: n % len(checkouts)]:
            row = run_phases(insts[iid], args.timeout, co)
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
            if args.out:
                with open(args.out, "a") as f:
                    f.write(json.dumps(row) + "\n")
    where = [co.label or "this" for co in checkouts]
    ok = {
        i
        for i in wanted
        if all(
            any(r["instance"] == i and r["at"] == w and r["status"] != "error" for r in rows)
            for w in where
        )
    }
    for w in where:
        mine = [r for r in rows if r["at"] == w and r["instance"] in ok]
        print(f"{w}: {len(mine)} of {len(wanted)} answered; median CPU seconds per phase:")
        for ph in PHASES:
            vals = [r.get(ph, 0.0) for r in mine]
            if vals:
                print(f"  {ph:12s} {statistics.median(vals):.3f}")
        under = sum(r["whole"] < 0.5 for r in mine)
        print(f"  whole process under 0.5 s: {under} of {len(mine)}")
        pairs = [r for r in mine if r["status"] == "sensitive"]
        replayed = sum(r.get("validated") is True for r in pairs)
        print(f"  sensitive {len(pairs)}, their pair replay-checked: {replayed}")
    if len(where) > 1:
        verdict = {(r["instance"], r["at"]): r["status"] for r in rows}
        differ = [i for i in sorted(ok) if len({verdict[(i, w)] for w in where}) > 1]
        print(f"verdicts that differ: {len(differ)} {' '.join(differ)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
