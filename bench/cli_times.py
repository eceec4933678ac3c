"""The single-query command line on benchmark instances: its time, split.

    python bench/cli_times.py --instances bench/instance-lists/sample-kant.txt [--out FILE]
    python bench/cli_times.py --instances LIST --against main   # side by side, one run

Runs ``treesens check MODEL --details D --vary F --gap G --json`` once per instance of the
full tier's list, each in a fresh process as a user would, and prints the medians of
``startup`` (interpreter, imports, flags: from the process's creation until the command
runs), ``load`` (the model), ``answer`` (compile, search and replay check, with the
imports they make on first use), ``total`` (all three; the command's wall time as it
measures it), ``imports`` (every import of the process, wherever it happens: the sum of
``python -X importtime``'s top-level entries, so the replay's ``import xgboost`` counts
here too), ``no_imports`` (``total`` less ``imports``) and the process's CPU time (user
+ system, robust to the machine's load). One JSON line per run goes to ``--out``.

``--against REV`` runs each instance at commit REV too, right after this checkout's run
(the two take turns going first), with REV checked out as bench/run.py ``--against``
does; both checkouts are byte-compiled first, so that no run compiles a module on the
clock. The medians are then given per checkout, on the instances both answered.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from instances import tier  # noqa: E402
from run import HERE_CHECKOUT, Checkout, compile_sources, other_checkout  # noqa: E402

PARTS = ("startup", "load", "answer", "total", "imports", "no_imports", "cpu")
_TOP_IMPORT = re.compile(r"^import time:\s+\d+ \|\s+(\d+) \| (\S.*)$")


def _children_cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def import_seconds(stderr: str) -> float:
    """The seconds a process spent importing: the cumulative times of ``-X importtime``'s
    top-level entries (a name not indented), which hold every nested import."""
    return sum(int(m.group(1)) for ln in stderr.splitlines() if (m := _TOP_IMPORT.match(ln))) / 1e6


def run_cli(inst, timeout: float, checkout: Checkout = HERE_CHECKOUT) -> dict:
    """One ``treesens check`` run of an instance at a checkout: its status and times."""
    model, details = inst.paths
    cmd = [sys.executable, "-X", "importtime", "-m", "treesens.interfaces.cli.main", "check"]
    cmd += [model, "--json"]
    cmd += ["--details", details] if details else []
    cmd += ["--vary", ",".join(inst.features), "--gap", f"{inst.gap:g}"]
    cmd += ["--timeout", f"{timeout:g}"]
    env = dict(os.environ, PYTHONPATH=str(checkout.root.parent))
    c0 = _children_cpu()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    cpu = _children_cpu() - c0
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    where = _at(checkout)
    if not lines:
        err = "\n".join(ln for ln in p.stderr.splitlines() if not ln.startswith("import time:"))
        return {"instance": inst.id, "at": where, "status": "error", "error": err.strip()[-300:]}
    r = json.loads(lines[-1])
    t = r["time"]
    answer = t["total"] - t.get("startup", 0.0) - t.get("load", 0.0)
    imports = import_seconds(p.stderr)
    times = {"startup": t.get("startup"), "load": t.get("load"), "answer": answer}
    times |= {"total": t["total"], "imports": imports, "no_imports": t["total"] - imports}
    return {"instance": inst.id, "at": where, "status": r["status"], **times, "cpu": cpu}


def _at(checkout: Checkout) -> str:
    """A checkout's name in the lines: ``this`` or the other commit's short hash."""
    return checkout.label or "this"


def medians(rows: list[dict]) -> list[str]:
    lines = []
    for part in PARTS:
        vals = [r[part] for r in rows if r.get(part) is not None]
        if vals:
            lines.append(f"  {part:10s} {statistics.median(vals):.3f}")
    return lines


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
    checkouts = [HERE_CHECKOUT]
    if args.against:
        try:
            checkouts.append(other_checkout(args.against))
        except ValueError as e:
            ap.error(f"--against {args.against}: {e}")
    for co in checkouts:
        compile_sources(co)
    rows = []
    for n, iid in enumerate(wanted):
        turn = checkouts[n % len(checkouts) :] + checkouts[: n % len(checkouts)]
        for co in turn:
            row = run_cli(insts[iid], args.timeout, co)
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
            if args.out:
                with open(args.out, "a") as f:
                    f.write(json.dumps(row) + "\n")
    where = [_at(co) for co in checkouts]
    answered = {
        iid
        for iid in wanted
        if all(any(r["instance"] == iid and r["at"] == w for r in rows) for w in where)
        and not any(r["instance"] == iid and r["status"] == "error" for r in rows)
    }
    for w in where:
        ok = [r for r in rows if r["at"] == w and r["instance"] in answered]
        print(f"{w}: {len(ok)} of {len(wanted)} answered (by every checkout); medians (s):")
        print("\n".join(medians(ok)))
    if len(where) > 1:
        both = {(r["instance"], r["at"]): r["status"] for r in rows}
        differ = [i for i in sorted(answered) if len({both[(i, w)] for w in where}) > 1]
        print(f"verdicts that differ: {len(differ)} {' '.join(differ)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
