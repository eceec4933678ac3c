"""What the bench scripts write: a Markdown report, or a JSON Lines results file and the
report made from it (``--report FILE`` makes the report again without running), with
the commit it was measured at."""

from __future__ import annotations

import argparse
import gzip
import json
import multiprocessing as mp
import subprocess
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent


def read_lines(path: Path) -> list[str]:
    """The lines of a results file, gzipped (``.gz``, as bench/reports keeps them) or not."""
    raw = Path(path).read_bytes()
    return (gzip.decompress(raw) if str(path).endswith(".gz") else raw).decode().splitlines()


def repo_commit() -> str | None:
    """The repository's commit (+ "-dirty" when tracked files differ), for the record; None
    outside a git checkout."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=HERE,
            capture_output=True,
            text=True,
        )
    except OSError:
        return None
    if head.returncode != 0:
        return None
    return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def write_report(path: Path, lines: list[str], show_last: int) -> None:
    """The report's ``lines`` to ``path`` (its folder made), its last ``show_last`` lines
    printed, and where it went."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    print("\n".join(lines[-show_last:]))
    print(f"wrote {path}")


def add_results_args(ap: argparse.ArgumentParser, default_out: Path, report: str) -> None:
    """--out (the results file a run appends to) and --report (print only ``report``)."""
    ap.add_argument("--out", default=str(default_out))
    ap.add_argument("--report", default=None, metavar="JSONL", help=f"only print {report}")


def run_or_report(args, run: Callable[[Path], object], report: Callable[[Path], str]) -> int:
    """With --report, print the report of that results file; else ``run`` into --out (its
    folder made) and print the report of what it holds."""
    if args.report:
        print(report(Path(args.report)))
        return 0
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    run(out)
    print(report(out))
    return 0


def fresh_process(fn: Callable[[tuple], dict], args: tuple) -> dict:
    """``fn(args)`` in a fresh (spawned) process: no state of one run reaches the next."""
    with mp.get_context("spawn").Pool(1) as pool:
        return pool.apply(fn, (args,))


def run_sides(
    out: Path, field: str, sides, queries, run_one: Callable[[tuple], dict], timeout: float
) -> None:
    """A side-by-side run: each query (model, feature, classes) of ``queries`` asked of
    each of ``sides`` by ``run_one((side, model, feature, classes, timeout))``, each in a
    fresh process, its line appended to ``out`` and printed as it ends. The pairs already
    in ``out`` (the side in the field ``field``) are skipped, so a stopped run resumes."""
    done = set()
    if out.exists():
        for ln in out.read_text().splitlines():
            d = json.loads(ln)
            done.add((d[field], d["model"], d["feature"], str(d["classes"])))
    with out.open("a") as fh:
        for key, feature, classes in queries:
            for side in sides:
                cls = list(classes) if classes else None
                if (side, key, feature, str(cls)) in done:
                    continue
                line = fresh_process(run_one, (side, key, feature, classes, timeout))
                fh.write(json.dumps(line) + "\n")
                fh.flush()
                print(json.dumps(line), flush=True)


def by_query(path: Path, field: str) -> dict:
    """A side-by-side results file's lines by query (model, feature, classes), then by
    the side in the field ``field`` (which search or tool answered)."""
    by: dict = {}
    for d in map(json.loads, read_lines(path)):
        by.setdefault((d["model"], d["feature"], str(d["classes"])), {})[d[field]] = d
    return by


def bounds_cell(d: dict | None, seconds: str, boxes: bool = False) -> str:
    """One side's answer in a max-gap table: [lower, upper], closed or open, its time
    (the field ``seconds``) and, with ``boxes``, the boxes its search visited."""
    if d is None:
        return "not run"
    if d.get("error"):
        return f"error: {d['error'][:60]}"
    lo = "none" if d["lower"] is None else f"{d['lower']:.4f}"
    hi = "?" if d["upper"] is None else f"{d['upper']:.4f}"
    mark = "closed" if d["closed"] else "open"
    tail = f", {d['boxes']:,}" if boxes else ""
    return f"[{lo}, {hi}] {mark}, {d[seconds]:.1f} s{tail}"
