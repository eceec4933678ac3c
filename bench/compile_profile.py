"""Profile the compile path: load + encode + passes (+ the CP-SAT reductions and model build).

    python bench/compile_profile.py [MODEL ...] [--vary F] [--repeat 3] [--out bench/results/compile.md]
                                    [--cprofile N]

Default model: german_credit_t800_d6 (800 trees, depth 6), the model of the compile-time
target (load + encode + passes under 3 s). Every phase is timed separately in this process, each
model in a fresh subprocess (so its peak memory, from ``resource.getrusage``, is its own).
The best of ``--repeat`` runs is reported per phase (first-run times are printed too);
``--cprofile N`` prints the N most expensive functions of one compile.
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

from instances import MODELS, SHARED  # noqa: E402

DEFAULT_MODELS = ["german_credit_t800_d6"]


def profile_one(key: str, vary: str | None, repeat: int, cprof: int) -> dict:
    """Runs inside a fresh process."""
    import resource

    t_imp = time.perf_counter()
    import treesens
    from treesens.backends.registry import get_info
    from treesens.compiler.encode import encode
    from treesens.compiler.passes import Chain, Compiled, passes_for
    from treesens.driver import backend_chain
    from treesens.interfaces.api import make_query

    t_imp = time.perf_counter() - t_imp
    m, d = MODELS[key]
    path, details = str(SHARED / m), (str(SHARED / d) if d else None)
    runs, cpu = [], []

    class _Clock:
        def __init__(self, ph, cp):
            self.ph, self.cp = ph, cp

        def __call__(self, name):
            self.name = name
            return self

        def __enter__(self):
            self.t, self.c = time.perf_counter(), time.process_time()

        def __exit__(self, *exc):
            self.ph[self.name] = time.perf_counter() - self.t
            self.cp[self.name] = time.process_time() - self.c

    for _ in range(repeat):
        ph, cp = {}, {}
        clock = _Clock(ph, cp)
        with clock("load"):
            ens = treesens.load_model(path, details=details)
        feats = [vary] if vary else [ens.feature_names[int(ens.trees[0].feature[0])]]
        q = make_query(
            feats,
            gap=0.2 if ens.n_outputs == 1 else 2.0,
            classes=None if ens.n_outputs == 1 else (0, 1),
        )
        with clock("encode"):
            problem, enc = encode(ens, q)
        compiled = Compiled(problem, enc)
        for p in passes_for(q.plan.passes):
            with clock(f"pass {type(p).__name__}"):
                compiled, _ = Chain([p]).apply(compiled)
        with clock("cpsat reductions (IntegerScaling)"):
            bcompiled, _ = Chain(backend_chain(get_info("cpsat").capabilities)).apply(compiled)
        try:
            from treesens.backends import cpsat

            with clock("cpsat model build (in the worker)"):
                cpsat.build(bcompiled.problem)
        except ImportError:
            pass
        stats = bcompiled.problem.stats()
        runs.append(ph)
        cpu.append(cp)
    if cprof:
        import cProfile
        import io
        import pstats

        pr = cProfile.Profile()
        pr.enable()
        ens = treesens.load_model(path, details=details)
        problem, enc = encode(ens, q)
        Chain(passes_for(q.plan.passes)).apply(Compiled(problem, enc))
        pr.disable()
        s = io.StringIO()
        pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(cprof)
        print(s.getvalue(), file=sys.stderr)
    best = {k: min(r[k] for r in runs) for k in runs[0]}
    best_cpu = {k: min(r[k] for r in cpu) for k in cpu[0]}
    first = runs[0]
    rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "model": key,
        "trees": len(ens.trees),
        "depth": ens.max_depth(),
        "leaves": ens.n_leaves(),
        "vary": feats,
        "import": t_imp,
        "best": best,
        "first": first,
        "cpu": best_cpu,
        "load_avg": __import__("os").getloadavg()[0],
        "stats": stats,
        "peak_rss_mb": rss_kb / 1024.0,
        "repeat": repeat,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "models",
        nargs="*",
        default=DEFAULT_MODELS,
        help=f"model keys (default {DEFAULT_MODELS[0]})",
    )
    ap.add_argument(
        "--vary", default=None, help="feature to vary (default: the first tree's root feature)"
    )
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cprofile", type=int, default=0, metavar="N")
    ap.add_argument("--out", default=str(HERE / "results" / "compile.md"))
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(profile_one(args.child, args.vary, args.repeat, args.cprofile)))
        return 0
    results = []
    for key in args.models:
        cmd = [
            sys.executable,
            __file__,
            "--child",
            key,
            "--repeat",
            str(args.repeat),
            "--cprofile",
            str(args.cprofile),
        ]
        if args.vary:
            cmd += ["--vary", args.vary]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
        if p.returncode != 0:
            print(f"{key}: profiling failed (exit {p.returncode})", file=sys.stderr)
            continue
        results.append(json.loads(p.stdout.strip().splitlines()[-1]))
    md = [
        "# Compile profile",
        "",
        f"`python bench/compile_profile.py {' '.join(args.models)}` — best of {args.repeat} runs per phase "
        "(and the first run), seconds; peak RSS of the whole process.",
        "",
    ]
    for r in results:
        b, f, c = r["best"], r["first"], r["cpu"]

        def core(d):
            return d["load"] + d["encode"] + sum(v for k, v in d.items() if k.startswith("pass "))

        md += [
            f"## {r['model']}: {r['trees']} trees, depth {r['depth']}, {r['leaves']} leaves, vary {', '.join(r['vary'])}",
            "",
            f"Load average during the run: {r['load_avg']:.1f} (wall times grow with it; CPU times do not).",
            "",
            "| phase | wall, best (s) | wall, first run (s) | CPU, best (s) |",
            "|---|---:|---:|---:|",
        ]
        for k in b:
            md.append(f"| {k} | {b[k]:.3f} | {f[k]:.3f} | {c[k]:.3f} |")
        md += [
            f"| **load + encode + passes** | **{core(b):.3f}** | {core(f):.3f} | **{core(c):.3f}** |",
            f"| (import treesens, once per process) | {r['import']:.3f} | | |",
            "",
            f"Peak memory (max RSS): {r['peak_rss_mb']:.0f} MB. Problem after passes + scaling: "
            + ", ".join(f"{k} {v}" for k, v in r["stats"].items() if isinstance(v, (int, float))),
            "",
        ]
    text = "\n".join(md) + "\n"
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
