"""Row-level audit throughput: rows per second for every shipped binary model, and the
full adult test set checked row by row against the brute force.

    OMP_NUM_THREADS=1 taskset -c 0 python bench/audit.py [--rows 1000] [--full-adult]

writes bench/reports/audit.md (one core: the libraries' predict is pinned to one thread).
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

from outputs import write_report  # bench/ is on sys.path (script dir)

from treesens.compiler.audit import FLIPPABLE, UNKNOWN, Target, audit_rows
from treesens.compiler.query import Gap
from treesens.readers.data import load_data
from treesens.readers.load import load_model
from treesens.tests.audit_oracle import brute_force_flippable
from treesens.tests.conftest import require_shared

REPORT = Path(__file__).resolve().parent / "reports" / "audit.md"
# data set -> (label column, the features F audited, one name each)
DATASETS = {
    "adult": ("income", ["sex", "race"]),
    "churn": ("label", ["gender", "SeniorCitizen"]),
    "german_credit": ("label", ["PersonalStatusSex", "ForeignWorker"]),
    "pimadiabetes": ("label", ["Age", "BMI"]),
}
GAP = 0.1


def time_model(path: Path, details: Path, test: Path, label: str, vary: str, rows: int):
    ens = load_model(path, details=details)
    ds = load_data(test, ens, label)
    X = ds.X[:rows]
    ens.replayer.predict_proba(X[:1])  # load the library before the clock starts
    t0 = time.perf_counter()
    ans = audit_rows(ens, X, [vary], Target(Gap(GAP)), {})
    dt = time.perf_counter() - t0
    flips = sum(s == FLIPPABLE for s in ans.status)
    unknown = sum(s == UNKNOWN for s in ans.status)
    return ens, X, ans, len(X), dt, flips, unknown


def throughput(root: Path, rows: int) -> list[str]:
    out = [
        "| model | F | rows | seconds | rows/s | flippable | unknown |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for name, (label, features) in DATASETS.items():
        d = root / name
        for model in sorted(d.glob(f"{name}_t*_d*.json")):
            for vary in features:
                _, _, _, n, dt, flips, unknown = time_model(
                    model, d / "details.csv", d / "test.csv", label, vary, rows
                )
                out.append(
                    f"| {model.name} | {vary} | {n} | {dt:.2f} | {n / dt:.0f} | {flips} | {unknown} |"
                )
                print(out[-1], flush=True)
    return out


def full_adult(root: Path) -> list[str]:
    d = root / "adult"
    ens, X, ans, n, dt, flips, unknown = time_model(
        d / "adult_t200_d5.json", d / "details.csv", d / "test.csv", "income", "sex", 10**9
    )
    t0 = time.perf_counter()
    expected = brute_force_flippable(ens, X, ["sex"], Target(Gap(GAP)))
    bf = time.perf_counter() - t0
    got = [s == FLIPPABLE for s in ans.status]
    agree = sum(a == b for a, b in zip(got, expected))
    t1 = time.perf_counter()
    first = audit_rows(ens, X[:1000], ["sex"], Target(Gap(GAP)), {})
    first_s = time.perf_counter() - t1
    assert first.status == ans.status[:1000]
    return [
        f"adult_t200_d5.json, test.csv, --vary sex --gap {GAP}: {n} rows in {dt:.2f}s "
        f"({n / dt:.0f} rows/s); first 1,000 rows in {first_s:.2f}s",
        f"flippable {flips}, not flippable {n - flips - unknown}, unknown {unknown}; "
        f"agreement with the per-row brute force: {agree}/{n} rows (brute force {bf:.2f}s)",
    ]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1000, help="first N test rows per model")
    ap.add_argument("--full-adult", action="store_true", help="also the whole adult test set")
    args = ap.parse_args(argv)
    root = require_shared()
    lines = [
        "# Row-level audit: throughput",
        "",
        f"Machine: {platform.processor() or platform.machine()}, one core "
        "(`OMP_NUM_THREADS=1 taskset -c 0`). Gap {GAP}, first {args.rows} rows of each "
        "test.csv; time of the audit itself (model and data loaded before).".replace(
            "{GAP}", str(GAP)
        ),
        "",
        "Command: `OMP_NUM_THREADS=1 taskset -c 0 python bench/audit.py --full-adult`",
        "",
        *throughput(root, args.rows),
    ]
    if args.full_adult:
        lines += ["", "## The whole adult test set", "", *full_adult(root)]
    write_report(REPORT, lines, show_last=3)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
