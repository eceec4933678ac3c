"""Second-solver confirmation of "insensitive" answers.

    python bench/confirm.py bench/reports/full-default-box.jsonl.gz bench/results/confirm.jsonl \
        [--reference default] [--unconfirmed FILE] [--out REPORT.md]

Every instance the reference configuration (default: ``default``) of the first results file
proved insensitive is looked up in the other files' runs of every other configuration (HiGHS,
z3, Veritas, ...). An instance is

* **confirmed** when at least one other configuration also proved it insensitive and none
  found a replay-validated pair;
* **disagreeing** when some configuration found a replay-validated pair (a wrong proof
  somewhere: the pair is the evidence);
* **not confirmed** when every other configuration that ran on it ended without an answer
  (time limit, memory cap, error) or none ran on it.

A pair that fails the replay check is not evidence against a proof (it is an invalid pair of
that configuration) and is counted separately. ``--unconfirmed FILE`` writes the ids of the
instances not yet confirmed, in the format of ``bench/run.py --instances``, so that the next
solver runs only on those.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from report import load  # noqa: E402


def classify(
    reference: dict[tuple[str, str], dict],
    others: dict[tuple[str, str], dict],
    ref_config: str,
) -> dict[str, tuple[str, list[dict]]]:
    """instance id -> (confirmed | disagreeing | not confirmed, the other runs on it)."""
    proved = sorted(
        i for (i, c), r in reference.items() if c == ref_config and r["status"] == "insensitive"
    )
    by_instance: dict[str, list[dict]] = {i: [] for i in proved}
    for (inst, config), run in others.items():
        if inst in by_instance and config != ref_config:
            by_instance[inst].append(run)
    verdicts = {}
    for inst, runs in by_instance.items():
        if any(r["status"] == "sensitive" and r.get("validated") for r in runs):
            verdict = "disagreeing"
        elif any(r["status"] == "insensitive" for r in runs):
            verdict = "confirmed"
        else:
            verdict = "not confirmed"
        verdicts[inst] = (verdict, sorted(runs, key=lambda r: r["config"]))
    return verdicts


def _run_cell(r: dict) -> str:
    status = r["status"]
    if status == "sensitive" and not r.get("validated"):
        status = "invalid pair"
    t = (r.get("time") or {}).get("total")
    return f"{r['config']}: {status}" + (f" {t:.1f} s" if isinstance(t, (int, float)) else "")


def report(verdicts: dict[str, tuple[str, list[dict]]], reference_name: str) -> str:
    counts = Counter(v for v, _ in verdicts.values())
    by_config: dict[str, Counter] = {}
    for _, runs in verdicts.values():
        for r in runs:
            key = (
                r["status"] if r["status"] != "sensitive" or r.get("validated") else "invalid pair"
            )
            by_config.setdefault(r["config"], Counter())[key] += 1
    lines = [
        f"# Second-solver confirmation of the insensitive answers of {reference_name}",
        "",
        "| insensitive (reference) | confirmed | not confirmed | disagreeing |",
        "|---:|---:|---:|---:|",
        f"| {len(verdicts)} | {counts['confirmed']} | {counts['not confirmed']} | {counts['disagreeing']} |",
        "",
        "Per configuration (runs on these instances):",
        "",
        "| configuration | runs | insensitive | sensitive (validated) | invalid pair | unknown | error |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for config, c in sorted(by_config.items()):
        lines.append(
            f"| {config} | {sum(c.values())} | {c['insensitive']} | {c['sensitive']} | "
            f"{c['invalid pair']} | {c['unknown']} | {c['error']} |"
        )
    for verdict in ("disagreeing", "not confirmed"):
        rows = [(i, runs) for i, (v, runs) in sorted(verdicts.items()) if v == verdict]
        if rows:
            lines += ["", f"{verdict.capitalize()}:", ""]
            for inst, runs in rows:
                cells = "; ".join(_run_cell(r) for r in runs) or "no other configuration ran"
                lines.append(f"- `{inst}`: {cells}")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("reference", type=Path, help="results file holding the reference's runs")
    ap.add_argument("others", type=Path, nargs="*", help="results files of the other solvers")
    ap.add_argument("--reference-config", default="default")
    ap.add_argument("--unconfirmed", type=Path, help="write the ids not yet confirmed here")
    ap.add_argument("--out", type=Path, help="write the report here (Markdown)")
    args = ap.parse_args(argv)
    reference = load([args.reference])
    others = load([args.reference, *args.others])
    verdicts = classify(reference, others, args.reference_config)
    text = report(verdicts, f"`{args.reference_config}` in {args.reference.name}")
    if args.unconfirmed:
        ids = [i for i, (v, _) in sorted(verdicts.items()) if v == "not confirmed"]
        args.unconfirmed.write_text("".join(f"{i}\n" for i in ids))
    if args.out:
        args.out.write_text(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
