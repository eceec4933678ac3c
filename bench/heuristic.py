"""The pre-solver heuristic alone, in variants, on the same instances: how many pairs each
finds within the pipeline's work bound (row-tree evaluations, so the count does not
depend on the machine's load), and how fast.

    python bench/heuristic.py --instances bench/instance-lists/sample-heuristic.txt \\
        --variant default --variant balance=0.5 --variant balance=3,work=2

A variant is ``name`` or ``key=value,...`` over ``find_witness``'s tuning arguments
(balance, candidates), ``work`` (a multiple of the pipeline's bound) and ``walk``: how
the trees are walked, ``numpy`` or ``compiled`` from the first evaluation (default: the
pipeline's rule, compiled after ``heuristic.COMPILED_AFTER_WORK`` evaluations). The
compiled walk is loaded before the first instance, so no variant pays for loading it.
Every variant runs on every instance in this one process, one after the other, so the
comparison is side by side; a JSON line per (instance, variant) goes to --out and a
table to standard output. Only pairs are counted: the heuristic never proves
"insensitive", and a found pair is checked against the model's own evaluation here
(the pipeline replays it through the library before it answers).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from instances import tier  # noqa: E402

TUNING = ("balance", "candidates")
WALKS = ("numpy", "compiled")


def parse_variant(text: str) -> tuple[str, dict]:
    """``default`` or ``balance=1.5,work=2`` -> (name, keyword arguments)."""
    if text == "default":
        return text, {}
    kw: dict = {}
    for part in text.split(","):
        key, _, value = part.partition("=")
        if key not in TUNING + ("work", "walk") or not value or (key == "walk") != (value in WALKS):
            raise SystemExit(
                f"bench/heuristic.py: variant {text!r}: expected key=value with key "
                f"in {', '.join(TUNING + ('work', 'walk'))} (walk: {' or '.join(WALKS)})"
            )
        kw[key] = value if key == "walk" else int(value) if key == "candidates" else float(value)
    return text, kw


def run_one(ens, q, variants, seed: int) -> list[dict]:
    import numpy as np

    from treesens.compiler.replay import condition_slack
    from treesens.driver import compile_query
    from treesens.search import heuristic
    from treesens.search.heuristic import find_witness
    from treesens.search.heuristic_stage import heuristic_work

    enc = compile_query(ens, q).encoding
    base_work = heuristic_work(ens)
    out = []
    for name, kw in variants:
        kw = dict(kw)
        work = int(base_work * kw.pop("work", 1.0))
        with _walking(heuristic, kw.pop("walk", None)):
            t0 = time.process_time()
            found = find_witness(enc, 3600.0, seed=seed, margin=2 * enc.relax, work=work, **kw)
            cpu = time.process_time() - t0
        ok, slack = False, None
        if found is not None:
            x1, x2, ok = found
            raw = ens.raw(np.stack([x1, x2]))
            slack = min(condition_slack(enc, raw[0], 0), condition_slack(enc, raw[1], 1))
            ok = bool(ok and slack >= 0)
        out.append({"variant": name, "found": ok, "slack": slack, "cpu": cpu})
    return out


@contextmanager
def _walking(heuristic, walk: str | None):
    """heuristic's walk rule for one variant: as the pipeline's (None), always numpy, or
    compiled from the first evaluation."""
    saved = heuristic.COMPILED_AFTER_WORK, dict(heuristic._LOADED)
    if walk == "numpy":
        heuristic.COMPILED_AFTER_WORK = math.inf
        heuristic._LOADED.clear()
    elif walk == "compiled":
        heuristic.COMPILED_AFTER_WORK = 0
    elif "walk" in saved[1]:  # the pipeline's rule, in a process that has not loaded it
        heuristic._LOADED.clear()
    try:
        yield
    finally:
        heuristic.COMPILED_AFTER_WORK = saved[0]
        heuristic._LOADED.clear()
        heuristic._LOADED.update(saved[1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--instances", required=True, help="file of instance ids, one per line")
    ap.add_argument("--variant", action="append", default=[], help="a variant (repeatable)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="JSON Lines file for the per-run results")
    args = ap.parse_args(argv)
    variants = [parse_variant(v) for v in (args.variant or ["default"])]
    wanted = [ln.split("#", 1)[0].strip() for ln in Path(args.instances).read_text().splitlines()]
    wanted = sorted((w for w in wanted if w), key=lambda w: w.split("|")[0])  # by model
    insts, _, _ = tier("full", ("single",))
    by_id = {i.id: i for i in insts}
    missing = [w for w in wanted if w not in by_id]
    if missing:
        raise SystemExit(f"{args.instances}: unknown instance {missing[0]!r}")

    import treesens
    from treesens.interfaces.api import make_query
    from treesens.search.heuristic import compiled_eval

    compiled_eval()  # loaded once, before any variant runs

    loaded = (None, None)  # (model key, Ensemble): instances come sorted by model
    results = []
    for k, iid in enumerate(wanted, 1):
        inst = by_id[iid]
        if loaded[0] != inst.model:
            m, d = inst.paths
            loaded = (inst.model, treesens.load_model(m, details=d))
        ens = loaded[1]
        q = make_query(list(inst.features), gap=inst.gap, threads=1)
        for r in run_one(ens, q, variants, args.seed):
            r["instance"] = iid
            results.append(r)
            if args.out:
                with open(args.out, "a") as out:
                    out.write(json.dumps(r) + "\n")
        line = "  ".join(
            f"{r['variant']}: {'yes' if r['found'] else 'no '} {r['cpu']:.1f}s"
            for r in results[-len(variants) :]
        )
        print(f"[{k}/{len(wanted)}] {iid}  {line}", file=sys.stderr, flush=True)
    print("| variant | instances | pairs found | CPU total (s) | median CPU when found (s) |")
    print("|---|---:|---:|---:|---:|")
    for name, _ in variants:
        rs = [r for r in results if r["variant"] == name]
        hits = [r["cpu"] for r in rs if r["found"]]
        med = f"{statistics.median(hits):.2f}" if hits else "-"
        total = sum(r["cpu"] for r in rs)
        print(f"| {name} | {len(rs)} | {len(hits)} | {total:.1f} | {med} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
