"""The single-query command line on benchmark instances: its time, split.

    python bench/cli_times.py --instances bench/instance-lists/sample-kant.txt [--out FILE]

Runs ``treesens check MODEL --details D --vary F --gap G --json`` once per instance of the
full tier's list, each in a fresh process as a user would, and prints the medians of
``startup`` (interpreter, imports, flags: from the process's creation until the command
runs), ``load`` (the model), ``answer`` (compile, search and replay check, with the
imports they make on first use), ``total`` (all three; the command's wall time as it
measures it) and the process's CPU time (user + system, robust to the machine's load).
One JSON line per run goes to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from instances import tier  # noqa: E402

PARTS = ("startup", "load", "answer", "total", "cpu")


def _children_cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def run_cli(inst, timeout: float) -> dict:
    """One ``treesens check`` run of an instance: its status and times."""
    model, details = inst.paths
    cmd = [sys.executable, "-m", "treesens.interfaces.cli.main", "check", model, "--json"]
    cmd += ["--details", details] if details else []
    cmd += ["--vary", ",".join(inst.features), "--gap", f"{inst.gap:g}"]
    cmd += ["--timeout", f"{timeout:g}"]
    c0 = _children_cpu()
    p = subprocess.run(cmd, capture_output=True, text=True)
    cpu = _children_cpu() - c0
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        return {"instance": inst.id, "status": "error", "error": p.stderr.strip()[-300:]}
    r = json.loads(lines[-1])
    t = r["time"]
    answer = t["total"] - t.get("startup", 0.0) - t.get("load", 0.0)
    times = {"startup": t.get("startup"), "load": t.get("load"), "answer": answer}
    return {"instance": inst.id, "status": r["status"], **times, "total": t["total"], "cpu": cpu}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--instances", required=True, help="a list of the full tier's instance ids")
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--out", default=None, help="one JSON line per run")
    args = ap.parse_args(argv)
    wanted = [ln.split("#", 1)[0].strip() for ln in Path(args.instances).read_text().splitlines()]
    wanted = [w for w in wanted if w]
    insts = {i.id: i for i in tier("full", ("single",))[0]}
    rows = []
    for iid in wanted:
        row = run_cli(insts[iid], args.timeout)
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
        if args.out:
            with open(args.out, "a") as f:
                f.write(json.dumps(row) + "\n")
    ok = [r for r in rows if r["status"] != "error"]
    print(f"{len(ok)} of {len(rows)} answered; medians (s):")
    for part in PARTS:
        vals = [r[part] for r in ok if r.get(part) is not None]
        if vals:
            print(f"  {part:8s} {statistics.median(vals):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
