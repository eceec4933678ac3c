"""Scale: the largest shared models, load + compile time, single-feature answers, peak memory.

    python bench/scale.py [--models mnist,webspam] [--features 5] [--timeout 120] [--gap 0.2]
                          [--out bench/results]

Each model runs in a fresh process (so its peak memory is its own): the model is loaded,
then ``--features`` single-feature queries (features spread over those the splits read)
are answered with the default settings. Recorded per query: status, replay check, compile
and total time; per model: load time, and the peak resident memory of the main process
and of the solver worker processes (``getrusage``: the largest child), which is what a
memory limit would have to cover. Writes ``scale.jsonl`` and ``scale.md`` to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from instances import SHARED  # noqa: E402  (honours TREESENS_SHARED)

CHEN = SHARED / "chen2019"
MODELS = {
    "mnist": CHEN / "binary_mnist_unrobust" / "1000.json",
    "webspam": CHEN / "webspam_unrobust" / "0100.json",
}


def run_model(key: str, n_features: int, timeout: float, gap: float) -> dict:
    """Runs inside a fresh process; returns the model's record."""
    import resource

    import numpy as np

    import treesens
    from treesens.backends.worker import shutdown

    t0 = time.perf_counter()
    ens = treesens.load_model(MODELS[key])
    load_s = time.perf_counter() - t0
    used = sorted({int(f) for t in ens.trees for f in t.feature if f >= 0})
    pick = [used[int(i)] for i in np.linspace(0, len(used) - 1, n_features).round()]
    queries = []
    for f in dict.fromkeys(pick):
        name = ens.feature_names[f]
        r = treesens.check(ens, vary=[name], gap=gap, timeout=timeout)
        queries.append(
            {
                "feature": name,
                "status": r.status,
                "validated": r.validated,
                "compile_s": round(r.time.get("compile", 0.0), 3),
                "total_s": round(r.time.get("total", 0.0), 3),
                "vars": r.stats.get("vars"),
                "constraints": r.stats.get("constraints"),
                "found_by": r.stats.get("found_by"),
            }
        )
        print(f"  {key} {name}: {r.status} in {r.time.get('total', 0):.1f}s", file=sys.stderr)
    shutdown()  # the workers exit, so their peak memory is counted among the children
    kb = 1024.0
    return {
        "model": key,
        "path": str(MODELS[key].relative_to(HERE.parent.parent)),
        "trees": len(ens.trees),
        "features": ens.n_features,
        "used_features": len(used),
        "leaves": ens.n_leaves(),
        "load_s": round(load_s, 3),
        "peak_main_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / kb, 1),
        "peak_worker_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / kb, 1),
        "queries": queries,
    }


def report(records: list[dict]) -> str:
    lines = [
        "| model | trees | features (used) | load s | queries answered | compile s (max) "
        "| query s (median / max) | peak MB main / worker |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in records:
        qs = r["queries"]
        answered = sum(q["status"] in ("sensitive", "insensitive") for q in qs)
        ok = all(q["validated"] for q in qs if q["status"] == "sensitive")
        tot = sorted(q["total_s"] for q in qs)
        med = tot[len(tot) // 2] if tot else float("nan")
        lines.append(
            f"| {r['path']} | {r['trees']} | {r['features']} ({r['used_features']}) "
            f"| {r['load_s']:.2f} | {answered}/{len(qs)}{'' if ok else ' (replay FAILED)'} "
            f"| {max(q['compile_s'] for q in qs):.2f} | {med:.1f} / {max(tot):.1f} "
            f"| {r['peak_main_mb']:.0f} / {r['peak_worker_mb']:.0f} |"
        )
    lines.append("")
    for r in records:
        lines.append(
            f"{r['model']}: "
            + "; ".join(f"{q['feature']} {q['status']} {q['total_s']:.1f}s" for q in r["queries"])
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="mnist,webspam")
    ap.add_argument("--features", type=int, default=5, help="single-feature queries per model")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--gap", type=float, default=0.2)
    ap.add_argument("--out", default=str(HERE / "results"))
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)  # internal: child process
    args = ap.parse_args(argv)
    if args.one:
        rec = run_model(args.one, args.features, args.timeout, args.gap)
        print(json.dumps(rec))
        return 0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    records = []
    for key in args.models.split(","):
        if key not in MODELS:
            ap.error(f"unknown model {key!r}; known: {', '.join(MODELS)}")
        if not MODELS[key].exists():
            ap.error(
                f"{MODELS[key]} not found (the shared benchmarks: beside the repo, or TREESENS_SHARED)"
            )
        print(f"{key}: {MODELS[key]}", file=sys.stderr)
        cmd = [sys.executable, __file__, "--one", key, "--features", str(args.features)]
        cmd += ["--timeout", str(args.timeout), "--gap", str(args.gap)]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=True)
        records.append(json.loads(p.stdout.strip().splitlines()[-1]))
    with open(out / "scale.jsonl", "a") as f:
        for r in records:
            f.write(json.dumps({**r, "date": time.strftime("%Y-%m-%d %H:%M")}) + "\n")
    text = report(records)
    (out / "scale.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
