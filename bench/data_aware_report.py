"""The data-aware tier's table: per configuration, time, proven gap and distance.

    python bench/run.py --tier data-aware --instances bench/instance-lists/sample-data-aware.txt --jobs 1
    python bench/data_aware_report.py bench/results/data-aware.jsonl [--out FILE.md]

Per configuration (data-prob / data-clause / data-probclause, and any other in the file):
the runs, the pairs found (validated), the median and 90th-percentile time, how many
optimising runs ended with a proof (``solver_status`` optimal) and the median proven
relative gap |bound - utility| / max(1, |utility|) of the others, the median and mean
distance to the data of the valid pairs, and the distance of the printed pairs that do not
replay (a peer's); then one row per instance with each configuration's distance.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path

from outputs import read_lines  # bench/ is on sys.path (script dir)


def _quantile(xs: list[float], q: float) -> float | None:
    if not xs:
        return None
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def _fmt(x, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def summary_rows(rows: list[dict]) -> list[str]:
    """The per-configuration table (Markdown lines)."""
    by_cfg: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_cfg[r["config"]].append(r)
    out = [
        "| configuration | runs | pairs (valid) | invalid pairs | median time s | p90 time s "
        "| proven optimal | median gap (not proven) | median distance | mean distance "
        "| median distance (invalid pairs) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for cfg in sorted(by_cfg):
        rs = by_cfg[cfg]
        times = [r["time"]["total"] for r in rs if r["time"].get("total") is not None]
        valid = [r for r in rs if r.get("validated")]
        invalid = [r for r in rs if r["status"] == "sensitive" and not r.get("validated")]
        da = [r.get("data_aware") or {} for r in valid]
        optimising = [d for d in da if "objective_bound" in d]  # the utility objective
        proven = sum(1 for d in optimising if d.get("solver_status") == "optimal")
        gaps = [
            d["objective_gap"]
            for d in optimising
            if d.get("solver_status") != "optimal" and d.get("objective_gap") is not None
        ]
        dist = [r["distance"] for r in valid if r.get("distance") is not None]
        bad = [r["distance"] for r in invalid if r.get("distance") is not None]
        out.append(
            f"| {cfg} | {len(rs)} | {len(valid)} | {len(invalid)}"
            f" | {_fmt(statistics.median(times) if times else None, 1)}"
            f" | {_fmt(_quantile(times, 0.9), 1)}"
            f" | {f'{proven} of {len(optimising)}' if optimising else '-'}"
            f" | {_fmt(statistics.median(gaps) if gaps else None)}"
            f" | {_fmt(statistics.median(dist) if dist else None)}"
            f" | {_fmt(statistics.mean(dist) if dist else None)}"
            f" | {_fmt(statistics.median(bad) if bad else None)} |"
        )
    return out


def instance_rows(rows: list[dict]) -> list[str]:
    """One row per instance: each configuration's time, gap and distance."""
    cfgs = sorted({r["config"] for r in rows})
    by_inst: dict[str, dict[str, dict]] = defaultdict(dict)
    for r in rows:
        by_inst[r["instance"]][r["config"]] = r
    out = [
        "| instance | " + " | ".join(f"{c}: time s / gap / distance" for c in cfgs) + " |",
        "|---|" + "---|" * len(cfgs),
    ]
    for inst in sorted(by_inst):
        cells = []
        for c in cfgs:
            r = by_inst[inst].get(c)
            if r is None:
                cells.append("")
                continue
            d = r.get("data_aware") or {}
            gap = "opt" if d.get("solver_status") == "optimal" and "objective_bound" in d else None
            if gap is None and d.get("objective_gap") is not None:
                gap = f"{100 * d['objective_gap']:.0f}%"
            dist = _fmt(r.get("distance")) if r.get("validated") else r.get("status", "?")
            if r["status"] == "sensitive" and not r.get("validated"):
                dist = f"{_fmt(r.get('distance'))} (invalid pair)"
            cells.append(f"{_fmt(r['time'].get('total'), 1)} / {gap or '-'} / {dist}")
        out.append(f"| {inst} | " + " | ".join(cells) + " |")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="+", help="JSON Lines of bench/run.py")
    ap.add_argument("--out", default=None, help="write the Markdown here (default: print)")
    args = ap.parse_args(argv)
    rows = [
        json.loads(line)
        for path in args.results
        for line in read_lines(path)
        if line.startswith("{")
    ]
    text = "\n".join([*summary_rows(rows), "", *instance_rows(rows)]) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
