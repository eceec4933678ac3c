"""The paper's ablation, per solver: what removing one pass costs.

    python bench/run.py --tier full --suite single --instances bench/instance-lists/sample-solver-needed.txt \\
        --configs default-noheur,kant,no-unaff,no-aff,no-obj,highs,highs-kant,highs-no-unaff,highs-no-aff,highs-no-obj \\
        --timeout 30 --out bench/results/ablation.jsonl
    python bench/ablation_report.py bench/results/ablation.jsonl [--out FILE.md]

For each solver the reference is the encoding alone with every pass (CP-SAT:
``default-noheur``; HiGHS: ``highs``) and each variant removes one pass (UnAff, Aff,
Obj) or is Kantchelian's encoding (no pass at all). Per variant, on the instances both
the reference and the variant finished:

* solved counts and PAR2 of both;
* the cost of removing the pass, PAR2(variant) / PAR2(reference), with a 95% bootstrap
  interval (above 1: the pass pays on this solver), also on the instances with a known
  insensitive and a known sensitive answer separately;
* instances slower / faster by more than 10 % and 0.5 s, answers lost / gained;
* the median size of the model sent to the solver (variables, constraints).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # report.py beside this file
from report import fmt, load, par2, ratio_interval, rtime, solved  # noqa: E402

PASSES = (("UnAff", "no-unaff"), ("Aff", "no-aff"), ("Obj", "no-obj"), ("all (Kant)", "kant"))
SOLVERS = (
    ("CP-SAT", "default-noheur", {p: c for p, c in PASSES}),
    ("HiGHS", "highs", {p: f"highs-{c}" for p, c in PASSES}),
)
NOTICEABLE = (0.10, 0.5)  # a run is slower/faster when it differs by 10 % and 0.5 s


def known_answers(runs) -> dict[str, str]:
    """Each instance's answer as any configuration proved or replay-checked it."""
    answers: dict[str, str] = {}
    for (inst, _c), r in runs.items():
        if solved(r):
            answers[inst] = r["status"]
    return answers


def _cost(runs, insts, ref: str, var: str) -> float:
    """PAR2(var) / PAR2(ref) on ``insts``."""
    pr = par2([runs[(i, ref)] for i in insts])
    return par2([runs[(i, var)] for i in insts]) / pr if pr else float("nan")


def _cost_text(runs, insts, ref: str, var: str) -> str:
    return f"{fmt(_cost(runs, insts, ref, var))}x ({len(insts)})" if insts else "-"


def _median(xs) -> float | None:
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def compare(runs, ref: str, var: str, answers: dict[str, str]) -> dict | None:
    """The figures of one (reference, variant) pair on the instances both finished."""
    both = sorted(i for i, c in runs if c == ref and (i, var) in runs)
    if not both:
        return None
    r_runs = [runs[(i, ref)] for i in both]
    v_runs = [runs[(i, var)] for i in both]
    rel, absolute = NOTICEABLE
    slower = faster = lost = gained = 0
    for r, v in zip(r_runs, v_runs):
        tr, tv = rtime(r), rtime(v)
        if tv > tr * (1 + rel) and tv - tr > absolute:
            slower += 1
        elif tr > tv * (1 + rel) and tr - tv > absolute:
            faster += 1
        lost += solved(r) and not solved(v)
        gained += solved(v) and not solved(r)
    lo, hi = ratio_interval([rtime(v) for v in v_runs], [rtime(r) for r in r_runs])
    return {
        "instances": len(both),
        "solved_ref": sum(map(solved, r_runs)),
        "solved_var": sum(map(solved, v_runs)),
        "par2_ref": par2(r_runs),
        "par2_var": par2(v_runs),
        "cost": _cost(runs, both, ref, var),
        "interval": (lo, hi),
        "cost_insensitive": _cost_text(
            runs, [i for i in both if answers.get(i) == "insensitive"], ref, var
        ),
        "cost_sensitive": _cost_text(
            runs, [i for i in both if answers.get(i) == "sensitive"], ref, var
        ),
        "slower": slower,
        "faster": faster,
        "lost": lost,
        "gained": gained,
        "vars": (_median(r.get("vars") for r in r_runs), _median(v.get("vars") for v in v_runs)),
        "constraints": (
            _median(r.get("constraints") for r in r_runs),
            _median(v.get("constraints") for v in v_runs),
        ),
    }


def _size(pair) -> str:
    a, b = pair
    return "-" if a is None or b is None else f"{a:,.0f} -> {b:,.0f}"


def ablation_table(runs) -> list[str]:
    answers = known_answers(runs)
    lines = [
        "| solver | pass removed | instances | solved (all passes / without) | PAR2 s (all / without) "
        "| cost of removing: PAR2 ratio | 95% interval | on insensitive (n) | on sensitive (n) "
        "| slower / faster | answers lost / gained | median variables | median constraints |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for solver, ref, variants in SOLVERS:
        for removed, var in variants.items():
            c = compare(runs, ref, var, answers)
            if c is None:
                continue
            lo, hi = c["interval"]
            lines.append(
                f"| {solver} | {removed} | {c['instances']} | {c['solved_ref']} / {c['solved_var']} "
                f"| {fmt(c['par2_ref'])} / {fmt(c['par2_var'])} | **{fmt(c['cost'])}x** "
                f"| {fmt(lo)}x - {fmt(hi)}x | {c['cost_insensitive']} | {c['cost_sensitive']} "
                f"| {c['slower']} / {c['faster']} | {c['lost']} / {c['gained']} "
                f"| {_size(c['vars'])} | {_size(c['constraints'])} |"
            )
    return lines


def solver_table(runs) -> list[str]:
    """The solvers against each other, each with every pass, on the instances all finished."""
    refs = [(name, ref) for name, ref, _ in SOLVERS]
    common = sorted(i for i, c in runs if c == refs[0][1] and all((i, r) in runs for _, r in refs))
    if not common:
        return []
    lines = ["| solver | instances | solved | PAR2 s |", "|---|---:|---:|---:|"]
    for name, ref in refs:
        rs = [runs[(i, ref)] for i in common]
        lines.append(f"| {name} | {len(rs)} | {sum(map(solved, rs))} | {fmt(par2(rs))} |")
    return lines


def report(paths) -> str:
    runs = load(paths)
    limits = sorted({r["timeout"] for r in runs.values()})
    commits = sorted({r.get("commit", "?") for r in runs.values()})
    loads = [r.get("load", 0) for r in runs.values()]
    md = [
        f"# The ablation per solver: {', '.join(str(p) for p in paths)}",
        "",
        f"{len(runs)} runs, time limit {', '.join(f'{t:g}' for t in limits)} s, "
        f"commit {', '.join(commits)}; mean load average at the start of a run "
        f"{fmt(statistics.mean(loads)) if loads else '-'}.",
        "",
        "Cost of removing a pass = PAR2 without it / PAR2 with every pass, on the same "
        "solver and instances (above 1: the pass pays). Slower / faster: by more than "
        f"{NOTICEABLE[0]:.0%} and {NOTICEABLE[1]:g} s. Sizes: the model sent to the solver, "
        "before the solver's own presolve.",
        "",
        *ablation_table(runs),
    ]
    solvers = solver_table(runs)
    if solvers:
        md += ["", "The two solvers with every pass, on the same instances:", "", *solvers]
    return "\n".join(md) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="+", help="JSON Lines files written by bench/run.py")
    ap.add_argument("--out", default=None, help="also write the Markdown to this file")
    args = ap.parse_args(argv)
    text = report(args.results)
    if args.out:
        Path(args.out).write_text(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
