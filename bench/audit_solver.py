"""The audit's solver path: rows per second when every row goes to the solver (the
enumeration limit lowered to 0), for a binary and a multiclass model that ship in
examples/, each row's answer compared with the enumeration's; and --jobs 1 vs 2.

    python bench/audit_solver.py [--rows 30]

writes bench/reports/audit-solver.md. Needs scikit-learn (the rows are its data sets).
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import numpy as np
import pandas as pd
from outputs import write_report  # bench/ is on sys.path (script dir)
from sklearn.datasets import load_breast_cancer, load_wine

from treesens.questions.audit import answer_blocks, make_spec, make_target
from treesens.questions.campaign import Campaign, opened
from treesens.readers.data import load_data
from treesens.readers.load import load_model

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "examples"
REPORT = HERE / "reports" / "audit-solver.md"
# model stem, scikit-learn loader, F, gap, classes
CASES = [
    ("breast_cancer", load_breast_cancer, ["worst_texture"], 0.1, None),
    ("wine", load_wine, ["proline"], 1.5, None),
    ("wine", load_wine, ["alcohol", "flavanoids"], 1.0, "2"),
]


def _rows(stem: str, loader, ens, n: int):
    ds = loader()
    df = pd.DataFrame(ds.data, columns=ens.feature_names)
    lo = np.array([f.lb for f in ens.features])
    hi = np.array([f.ub for f in ens.features])
    df[:] = np.clip(df.to_numpy(), lo, hi)
    return load_data(df.sample(n=min(n, len(df)), random_state=0).reset_index(drop=True), ens)


def _answers(ens, data, spec, max_candidates, executor=None, block=None):
    rows = np.arange(data.n_rows)
    out = {}
    blocks = answer_blocks(
        ens,
        data,
        spec,
        rows,
        block or data.n_rows,
        60.0,
        executor=executor,
        max_candidates=max_candidates,
    )
    for idx, ans in blocks:
        for i, r in enumerate(idx.tolist()):
            out[r] = ans.status[i]
    return [out[r] for r in range(data.n_rows)]


def case(stem, loader, vary, gap, classes, n) -> str:
    ens = load_model(EXAMPLES / f"{stem}_xgb.json", details=EXAMPLES / f"{stem}_details.csv")
    data = _rows(stem, loader, ens, n)
    spec = make_spec(ens, data, vary, make_target(ens, gap, classes=classes))
    exact = _answers(ens, data, spec, None)
    t0 = time.perf_counter()
    solved = _answers(ens, data, spec, 0)
    dt = time.perf_counter() - t0
    agree = sum(a == b for a, b in zip(exact, solved))
    flips = sum(s == "flippable" for s in solved)
    unknown = sum(s == "unknown" for s in solved)
    what = f"{stem}_xgb.json ({ens.n_classes} classes)"
    cls = f", classes any -> {classes}" if classes else ""
    return (
        f"| {what} | {','.join(vary)} | gap {gap:g}{cls} | {n} | {dt:.1f} | {n / dt:.2f} "
        f"| {flips} | {unknown} | {agree}/{n} |"
    )


def jobs(n: int) -> list[str]:
    stem, loader, vary, gap, classes = CASES[1]
    ens = load_model(EXAMPLES / f"{stem}_xgb.json", details=EXAMPLES / f"{stem}_details.csv")
    data = _rows(stem, loader, ens, n)
    spec = make_spec(ens, data, vary, make_target(ens, gap, classes=classes))
    out = []
    answers = {}
    for k in (1, 2):
        t0 = time.perf_counter()
        with opened(Campaign(jobs=k)) as run:
            answers[k] = _answers(ens, data, spec, 0, run.executor, max(1, n // (4 * k)))
        out.append(f"| {k} | {n} | {time.perf_counter() - t0:.1f} |")
    same = "the same" if answers[1] == answers[2] else "DIFFERENT"
    return [
        "| jobs | rows | seconds (workers' start included) |",
        "|---:|---:|---:|",
        *out,
        "",
        f"Answers with 1 and 2 jobs: {same}. Each worker is a spawned process that imports "
        "treesens and loads the model before its first block; on this loaded machine that "
        "start costs more than 20 solver rows take.",
    ]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=30, help="rows per case (a seeded sample)")
    args = ap.parse_args(argv)
    lines = [
        "# Row-level audit: the solver path",
        "",
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.1f} at the start (other jobs ran alongside). "
        "Every row is sent to the solver (enumeration limit 0); its answer is compared "
        "with the enumeration's (exact). Time per row: compile and solve of the row's "
        "queries (one for a binary model, one per class the row may flip to for a "
        "multiclass model).",
        "",
        "Command: `python bench/audit_solver.py --rows " + str(args.rows) + "`",
        "",
        "| model | F | condition | rows | seconds | rows/s | flippable | unknown | "
        "same as enumeration |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for c in CASES:
        lines.append(case(*c, args.rows))
        print(lines[-1], flush=True)
    lines += ["", "## --jobs on the solver path (wine, proline)", "", *jobs(args.rows)]
    write_report(REPORT, lines, show_last=6)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
