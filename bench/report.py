"""Tables and cactus plots from bench/run.py results (works on partial results).

    python bench/report.py bench/results/quick.jsonl [more.jsonl ...] [--out bench/results/quick]

Writes ``<out>.md`` (the Markdown summary, also printed) and ``<out>-cactus-<suite>.png``.

* solved: status sensitive (with a replay-validated pair) or insensitive, within the
  time limit; ``unknown`` and ``error`` are unsolved.
* time: the run's ``time.total`` (model load + compile + solve + replay, measured inside
  the instance's process); PAR2 counts an unsolved run as 2 x the time limit.
* Every comparison is made on the instances that EVERY configuration in the table has
  finished ("common instances"), so partial results of an interrupted run compare fairly.
* speed-up of X against R: PAR2(R) / PAR2(X) on the instances both finished; also the
  same on the instances where one of the two took >= 1 s (the paper's filter).
* speed-ups come with a 95% bootstrap interval (instances resampled with replacement,
  fixed seed): when the instances are a random sample of a tier (a partial run of the
  shuffled order, or a sample file), it is the range the whole tier's ratio likely lies in.
* A sensitive answer from one configuration and an insensitive one from another on the
  same instance is listed as a disagreement (it would be a soundness bug).
* A configuration run at another commit too (``bench/run.py --against REV``, named
  ``CONFIG@REV``) is set beside it: how many verdicts are the same, both PAR2 and their
  ratio, the ratio of their CPU times, and every instance whose verdict (status) differs.
* A "sensitive" answer whose pair does not replay (a peer's, e.g. Ensense's rounded
  encoding) is counted in the table's sensitive column but not as solved; the
  invalid-pair table says how many.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

SHORT = {"sensitive": "S", "insensitive": "I", "unknown": "?", "error": "E"}
ORDER = [
    "default",
    "default-noheur",
    "kant",
    "no-unaff",
    "no-aff",
    "no-obj",
    "cbc",
    "highs",
    "gurobi",
    "z3",
    "veritas",
    "veritas-sides-eps0",
    "ensense",
]


def load(paths) -> dict[tuple[str, str], dict]:
    runs = {}
    for p in paths:
        # the committed results of long runs are gzipped (bench/reports/*.jsonl.gz)
        raw = Path(p).read_bytes()
        text = (gzip.decompress(raw) if str(p).endswith(".gz") else raw).decode()
        for line in text.splitlines():
            if not line.strip():
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue
            runs[(r["instance"], r["config"])] = r  # the last run of a pair wins
    return runs


def solved(r: dict) -> bool:
    t = (r.get("time") or {}).get("total")
    if t is None or t > r["timeout"] + 1e-9:
        return False
    return r["status"] == "insensitive" or (r["status"] == "sensitive" and bool(r.get("validated")))


def rtime(r: dict) -> float:
    """The time a run counts for: its time if solved, else 2 x the limit (PAR2)."""
    return float(r["time"]["total"]) if solved(r) else 2.0 * float(r["timeout"])


def par2(rs) -> float:
    return sum(rtime(r) for r in rs) / len(rs) if rs else float("nan")


def fmt(x, nd=2) -> str:
    if x is None or x != x:
        return "-"
    if isinstance(x, float):
        return f"{x:.{nd}f}"
    return str(x)


def _configs(runs) -> list[str]:
    """The configurations in ORDER, each beside its runs at other commits (``CONFIG@REV``)."""
    names = {c for _, c in runs}

    def key(c: str) -> tuple:
        base, _, rev = c.partition("@")
        return (ORDER.index(base) if base in ORDER else len(ORDER), base, rev)

    return sorted(names, key=key)


def table(runs, insts: list[str], configs: list[str]) -> list[str]:
    lines = [
        "| configuration | instances | solved | sensitive | insensitive | unknown | error | PAR2 (s) "
        "| median time of solved (s) | median CPU of solved (s) | total time (s) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c in configs:
        rs = [runs[(i, c)] for i in insts]
        st = defaultdict(int)
        for r in rs:
            st[r["status"]] += 1
        ok = [r for r in rs if solved(r)]
        med = statistics.median([r["time"]["total"] for r in ok]) if ok else None
        cpus = [r["time"]["cpu"] for r in ok if r["time"].get("cpu") is not None]
        medc = statistics.median(cpus) if cpus else None
        tot = sum(float((r.get("time") or {}).get("total") or r.get("wall") or 0.0) for r in rs)
        lines.append(
            f"| {c} | {len(rs)} | {len(ok)} | {st['sensitive']} | {st['insensitive']} | {st['unknown']} "
            f"| {st['error']} | {fmt(par2(rs))} | {fmt(med)} | {fmt(medc)} | {fmt(tot, 1)} |"
        )
    return lines


def invalid_pairs(runs, insts: list[str], configs: list[str]) -> list[str]:
    """Per configuration: "sensitive" answers, and how many of their pairs replayed (an
    invalid pair is not solved); empty when every pair replayed."""
    counts = []
    for c in configs:
        claimed = [runs[(i, c)] for i in insts if runs[(i, c)]["status"] == "sensitive"]
        valid = sum(1 for r in claimed if r.get("validated"))
        counts.append((c, len(claimed), valid, len(claimed) - valid))
    if not any(bad for *_, bad in counts):
        return []
    lines = [
        "",
        "Pairs replayed with the model's own predict (an invalid pair counts as unsolved):",
        "",
        "| configuration | answered sensitive | pair valid | invalid pairs |",
        "|---|---:|---:|---:|",
    ]
    lines += [f"| {c} | {n} | {ok} | {bad} |" for c, n, ok, bad in counts]
    return lines


BOOTSTRAP = 2000


def ratio_interval(ref_times, x_times, level: float = 0.95, seed: int = 0) -> tuple[float, float]:
    """Bootstrap interval of sum(ref) / sum(x) over instances drawn with replacement."""
    import numpy as np

    r, x = np.asarray(ref_times, dtype=float), np.asarray(x_times, dtype=float)
    if len(r) == 0:
        return float("nan"), float("nan")
    idx = np.random.default_rng(seed).integers(0, len(r), size=(BOOTSTRAP, len(r)))
    ratios = r[idx].sum(axis=1) / np.maximum(x[idx].sum(axis=1), 1e-12)
    lo, hi = np.quantile(ratios, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def speedups(
    runs,
    insts: list[str],
    configs: list[str],
    refs=("kant", "veritas", "veritas-sides-eps0", "ensense"),
) -> list[str]:
    lines = []
    for ref in refs:
        if ref not in configs:
            continue
        lines += [
            "",
            f"Speed-up against **{ref}** (PAR2({ref}) / PAR2(X), same instances):",
            "",
            "| X | instances | PAR2(X) | PAR2(ref) | speed-up | 95% interval | instances >= 1 s "
            "| speed-up on those |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for c in configs:
            if c == ref:
                continue
            both = [i for i in insts if (i, c) in runs and (i, ref) in runs]
            if not both:
                continue
            px, pr = par2([runs[(i, c)] for i in both]), par2([runs[(i, ref)] for i in both])
            slow = [i for i in both if max(rtime(runs[(i, c)]), rtime(runs[(i, ref)])) >= 1.0]
            sx = par2([runs[(i, c)] for i in slow]) if slow else float("nan")
            sr = par2([runs[(i, ref)] for i in slow]) if slow else float("nan")
            lo, hi = ratio_interval(
                [rtime(runs[(i, ref)]) for i in both], [rtime(runs[(i, c)]) for i in both]
            )
            lines.append(
                f"| {c} | {len(both)} | {fmt(px)} | {fmt(pr)} | {fmt(pr / px if px else float('nan'))}x "
                f"| {fmt(lo)}x - {fmt(hi)}x "
                f"| {len(slow)} | {fmt(sr / sx if slow and sx else float('nan'))}x |"
            )
    return lines


def cactus(runs, insts: list[str], configs: list[str], path: Path, title: str) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    styles = ["-", "--", "-.", ":"]
    timeout = None
    for k, c in enumerate(configs):
        rs = [runs[(i, c)] for i in insts]
        ts = sorted(r["time"]["total"] for r in rs if solved(r))
        timeout = rs[0]["timeout"] if rs else timeout
        if ts:
            ax.plot(
                range(1, len(ts) + 1),
                ts,
                styles[k % len(styles)],
                marker=".",
                markersize=3,
                label=f"{c} ({len(ts)}/{len(rs)})",
            )
    if timeout:
        ax.axhline(timeout, color="grey", lw=0.8, ls=":")
    ax.set_yscale("log")
    ax.set_xlabel("instances solved")
    ax.set_ylabel("time per instance (s, log scale)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def own_table(runs, own: dict[str, list[str]], configs: list[str]) -> list[str]:
    """One row per configuration, each over the instances it finished itself."""
    lines = []
    for k, c in enumerate(configs):
        rows = table(runs, own[c], [c])
        lines += rows if k == 0 else rows[2:]
    return lines


def unanswered(runs, insts: list[str], config: str = "default") -> list[str]:
    miss = [i for i in insts if not solved(runs[(i, config)])]
    out = [f"Instances the {config} configuration did not answer ({len(miss)}):", ""]
    for i in miss:
        r = runs[(i, config)]
        t = (r.get("time") or {}).get("total")
        detail = f"{r['status']} after {fmt(t, 0)} s {r.get('message') or ''}{r.get('error') or ''}"
        out.append(f"- `{i}`: {detail.rstrip()}")
    return out if miss else out + ["- none"]


def spec_targets(runs, insts: list[str], with_counts: bool = True) -> list[str]:
    """The targets on these instances: answered, median time, PAR2 ratio against Kant."""
    d = [runs[(i, "default")] for i in insts]
    lines = []
    if with_counts:
        ok = [r for r in d if solved(r)]
        lines += [
            f"- default answered {len(ok)}/{len(d)} within the limit (target: all within 600 s)",
            f"- default median time {fmt(statistics.median(r['time']['total'] for r in d))} s "
            f"over all {len(d)} (target <= 2 s); median CPU "
            f"{fmt(statistics.median([r['time'].get('cpu') or 0 for r in d]))} s",
        ]
    if all((i, "kant") in runs for i in insts):
        k = [runs[(i, "kant")] for i in insts]
        ratio = par2(k) / par2(d) if par2(d) else float("nan")
        met = "met" if ratio >= 8 else "not met"
        lo, hi = ratio_interval([rtime(r) for r in k], [rtime(r) for r in d])
        lines.append(
            f"- PAR2 kant / default = {fmt(ratio)}x (target >= 8x): {met} on these instances; "
            f"95% bootstrap interval {fmt(lo)}x - {fmt(hi)}x"
            + (" (entirely above 8x)" if lo >= 8 else "")
        )
    if not lines:
        return []
    return ["", f"Targets on these {len(d)} instances:", ""] + lines


def default_summary(runs, insts: list[str], suite: str) -> list[str]:
    """The default configuration over all its instances: by gap, the targets, misses."""
    md = ["", f"### default on all {len(insts)} instances it finished", ""]
    gaps = sorted({runs[(i, "default")]["gap"] for i in insts})
    md += table(runs, insts, ["default"])
    for g in gaps if len(gaps) > 1 else []:
        sub = [i for i in insts if runs[(i, "default")]["gap"] == g]
        row = table(runs, sub, ["default"])[-1]
        md.append(row.replace("| default |", f"| default, g = {g:g} |", 1))
    if suite == "single":
        found = defaultdict(int)
        for i in insts:
            r = runs[(i, "default")]
            if r["status"] == "sensitive" and solved(r):
                by = r.get("found_by") or "?"
                if r.get("search") and r["search"] != "default":  # a later search of the schedule
                    by += f" ({r['search']} search)"
                found[by] += 1
        md += spec_targets(runs, insts)
        md.append(
            "- sensitive pairs found by: "
            + ", ".join(f"{k} {v}" for k, v in sorted(found.items(), key=lambda kv: -kv[1]))
        )
    md += [""] + unanswered(runs, insts)
    return md


def _commits(runs, insts: list[str], config: str) -> str:
    return ", ".join(sorted({str(runs[(i, config)].get("commit")) for i in insts}))


def side_by_side(runs, insts: list[str], configs: list[str]) -> list[str]:
    """Each configuration beside its runs at another commit (``bench/run.py --against``):
    verdicts and PAR2 on the same instances, then every instance whose verdict differs."""
    pairs = [(c.partition("@")[0], c) for c in configs if "@" in c]
    pairs = [(c, other) for c, other in pairs if c in configs]
    if not pairs:
        return []
    lines = [
        "",
        "Side by side with another commit (`bench/run.py --against`; the same instances "
        "in the same run):",
        "",
        "| configuration | commit | other commit | instances | same verdict | PAR2 (s) "
        "| PAR2 other (s) | other / this | 95% interval | CPU time, other / this |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    differ = []
    for c, other in pairs:
        mine, theirs = [runs[(i, c)] for i in insts], [runs[(i, other)] for i in insts]
        same = sum(a["status"] == b["status"] for a, b in zip(mine, theirs))
        lo, hi = ratio_interval([rtime(b) for b in theirs], [rtime(a) for a in mine])
        # CPU time is less sensitive to the machine's load than wall time (the runs that
        # have it: a killed run has none)
        cpus = [(a["time"].get("cpu"), b["time"].get("cpu")) for a, b in zip(mine, theirs)]
        cpus = [(x, y) for x, y in cpus if x is not None and y is not None]
        cpu = sum(y for _, y in cpus) / sum(x for x, _ in cpus) if cpus else float("nan")
        lines.append(
            f"| {c} | {_commits(runs, insts, c)} | {_commits(runs, insts, other)} | {len(insts)} "
            f"| {same} | {fmt(par2(mine))} | {fmt(par2(theirs))} "
            f"| {fmt(par2(theirs) / par2(mine) if par2(mine) else float('nan'))}x "
            f"| {fmt(lo)}x - {fmt(hi)}x | {fmt(cpu)}x |"
        )
        for i, a, b in zip(insts, mine, theirs):
            if a["status"] != b["status"]:
                differ.append(
                    f"- `{i}` [{c}]: {a['status']} after {fmt(a['time'].get('total'), 1)} s; "
                    f"{other}: {b['status']} after {fmt(b['time'].get('total'), 1)} s"
                )
    return lines + ["", f"Verdicts that differ between the commits: {len(differ)}"] + differ


def disagreements(runs, insts) -> list[str]:
    out = []
    by = defaultdict(dict)
    for (i, c), r in runs.items():
        by[i][c] = r["status"]
    for i in insts:
        st = by[i]
        if "sensitive" in st.values() and "insensitive" in st.values():
            out.append(f"- `{i}`: " + ", ".join(f"{c}={s}" for c, s in sorted(st.items())))
    return out


def certificates(runs, insts: list[str], config: str) -> list[str]:
    """The certificates of a batch run with ``--certificates``: how many of the
    insensitive answers have one the independent checker accepted, the times to write
    and check them, and each answer left without (none when no line asked for them)."""
    ins = [runs[(i, config)] for i in insts if runs[(i, config)]["status"] == "insensitive"]
    if not any("certificate" in r for r in ins):
        return []
    certs = [r.get("certificate") or {} for r in ins]
    ok = [c for c in certs if c.get("verified")]
    write = [c["write_s"] for c in ok]
    check = [c["verify_s"] for c in ok]
    lines = [
        "",
        f"Certificates ({config}): {len(ok)} of the {len(ins)} insensitive answers "
        f"certified and verified by the independent checker, "
        f"{sum(1 for c in certs if c.get('written'))} written; "
        f"writing {fmt(sum(write), 1)} s in all (median {fmt(statistics.median(write), 3)} s), "
        f"checking {fmt(sum(check), 1)} s in all (median {fmt(statistics.median(check), 3)} s, "
        f"largest {fmt(max(check), 1)} s)."
        if ok
        else f"Certificates ({config}): none of the {len(ins)} insensitive answers verified.",
    ]
    for r, c in zip(ins, certs, strict=True):
        if not c.get("verified"):
            lines.append(f"- `{r['instance']}`: {c.get('why_not') or 'not asked'}")
    return lines


def report(paths, out: Path, configs: list[str] | None = None) -> str:
    runs = load(paths)
    if not runs:
        return "no results yet\n"
    configs = configs or _configs(runs)
    out.parent.mkdir(parents=True, exist_ok=True)
    suites = defaultdict(set)
    for (i, _c), r in runs.items():
        suites[r.get("suite", "single")].add(i)
    md = [f"# Benchmark report: {', '.join(str(p) for p in paths)}", ""]
    r0 = next(iter(runs.values()))
    limits = sorted({r["timeout"] for r in runs.values()})
    md.append(
        f"{len(runs)} runs, time limit {', '.join(f'{t:g}' for t in limits)} s per run, "
        f"host {r0.get('host', '?')} ({r0.get('cpus', '?')} cores, Python {r0.get('python', '?')}); "
        f"mean load average at start of a run {fmt(statistics.mean(r.get('load', 0) for r in runs.values()))}."
    )
    for suite in sorted(suites):
        all_i = sorted(suites[suite])
        present = [c for c in configs if any((i, c) in runs for i in all_i)]
        common = [i for i in all_i if all((i, c) in runs for c in present)]
        own = {c: [i for i in all_i if (i, c) in runs] for c in present}
        # the default ran on more instances than the others (they ran on a sample)
        default_wider = len(own.get("default", [])) > len(common)
        md += [
            "",
            f"## Suite `{suite}`: {len(common)} instances finished by all of {', '.join(present)} "
            f"(of {len(all_i)} started)",
        ]
        if any(len(own[c]) > len(common) for c in present):
            md += [
                "",
                "### Each configuration on every instance it finished",
                "",
                "(Not comparable across rows when the instance sets differ; the comparisons "
                "below use the common instances only.)",
                "",
            ]
            md += own_table(runs, own, present)
            if default_wider:
                md += default_summary(runs, own["default"], suite)
            md += ["", f"### The {len(common)} instances every configuration finished"]
        md.append("")
        if not common:
            continue
        md += table(runs, common, present)
        md += side_by_side(runs, common, present)
        md += invalid_pairs(runs, common, present)
        md += speedups(runs, common, present)
        gaps = sorted({runs[(i, present[0])]["gap"] for i in common})
        if len(gaps) > 1:
            for g in gaps:
                sub = [i for i in common if runs[(i, present[0])]["gap"] == g]
                md += ["", f"### g = {g:g} ({len(sub)} instances)", ""]
                md += table(runs, sub, present)
        if suite == "single" and "default" in present:
            md += spec_targets(runs, common, with_counts=not default_wider)
        if len(common) <= 40:
            md += [
                "",
                "Per instance (time in s; S sensitive, I insensitive, ? unknown, E error):",
                "",
                "| instance | " + " | ".join(present) + " |",
                "|---|" + "---:|" * len(present),
            ]
            for i in common:
                cells = []
                for c in present:
                    r = runs[(i, c)]
                    t = (r.get("time") or {}).get("total")
                    cells.append(f"{SHORT.get(r['status'], r['status'])} {fmt(t, 1)}")
                md.append(f"| `{i.replace('|', chr(92) + '|')}` | " + " | ".join(cells) + " |")
        png = out.parent / f"{out.name}-cactus-{suite}.png"
        if cactus(runs, common, present, png, f"{suite}: {len(common)} instances"):
            md += ["", f"Cactus plot: `{png}`"]
        if default_wider:
            png = out.parent / f"{out.name}-cactus-{suite}-default.png"
            n = len(own["default"])
            if cactus(runs, own["default"], ["default"], png, f"{suite}: default, {n} instances"):
                md += [f"Cactus plot of the default on all its instances: `{png}`"]
        if "default" in present and not default_wider:
            md += [""] + unanswered(runs, common)
        for c in present:
            md += certificates(runs, common, c)
        dis = disagreements(runs, all_i)
        md += ["", f"Disagreements (sensitive vs insensitive on one instance): {len(dis)}"] + dis
        errs = [(i, c) for i in common for c in present if runs[(i, c)]["status"] == "error"]
        if errs:
            md += ["", f"Runs that ended in error ({len(errs)}; first 20):", ""]
            md += [
                f"- `{i}` [{c}]: {(runs[(i, c)].get('error') or '')[:200]}" for i, c in errs[:20]
            ]
    text = "\n".join(md) + "\n"
    Path(f"{out}.md").write_text(text)
    return text


def default_prefix(results: Path) -> Path:
    """The output prefix beside a results file: its name without .jsonl or .jsonl.gz."""
    name = results.name.removesuffix(".gz").removesuffix(".jsonl")
    return results.with_name(name)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="+", help="JSON Lines files written by bench/run.py")
    ap.add_argument(
        "--out", default=None, help="output prefix (default: the first file without .jsonl[.gz])"
    )
    ap.add_argument("--configs", default=None, help="only these configurations, in this order")
    args = ap.parse_args(argv)
    out = Path(args.out) if args.out else default_prefix(Path(args.results[0]))
    configs = [c.strip() for c in args.configs.split(",")] if args.configs else None
    sys.stdout.write(report(args.results, out, configs))
    print(f"\nwritten: {out}.md and {out}-cactus-*.png", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
