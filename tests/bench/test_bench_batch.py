"""bench/run.py --batch: each model's instances in one process, through the batch path,
written as the same result lines (and verdicts) as the process-per-instance runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[2]
BENCH = CHECKOUT / "bench"
sys.path.insert(0, str(BENCH))
try:
    import instances
    from run import model_groups
    from run_one import run_treesens
finally:
    while str(BENCH) in sys.path:
        sys.path.remove(str(BENCH))

if not instances.SHARED.is_dir():
    pytest.skip(f"{instances.SHARED} not found", allow_module_level=True)

THREE = [
    "breast_cancer_robust|f3|g=0.1",
    "diabetes_robust|f2|g=0.2",
    "breast_cancer_robust|f2|g=0.1",
]


def _instances(ids):
    by_id = {i.id: i for i in instances.tier("full", ("single",))[0]}
    return [by_id[i] for i in ids]


@pytest.fixture(scope="module")
def batch_lines(tmp_path_factory):
    folder = tmp_path_factory.mktemp("batch")
    (folder / "three.txt").write_text("\n".join(THREE) + "\n")
    out = folder / "out.jsonl"
    cmd = [sys.executable, str(BENCH / "run.py"), "--tier", "full", "--suite", "single"]
    cmd += ["--configs", "default", "--batch", "--instances", str(folder / "three.txt")]
    cmd += ["--out", str(out), "--no-report", "--timeout", "120"]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_a_batch_run_writes_one_line_per_instance(batch_lines):
    assert sorted(r["instance"] for r in batch_lines) == sorted(THREE)


def test_a_batch_runs_lines_have_the_fields_the_report_reads(batch_lines):
    for r in batch_lines:
        assert {"config", "model", "gap", "status", "validated", "time"} <= set(r)
        assert r["time"]["total"] >= r["time"]["load"] >= 0


def test_a_batch_run_gives_the_process_per_instance_verdicts(batch_lines):
    cfg = {"name": "default"}
    for inst in _instances(THREE):
        single = run_treesens(inst.to_dict(), cfg, 120)
        line = next(r for r in batch_lines if r["instance"] == inst.id)
        assert (line["status"], line["validated"]) == (single["status"], single["validated"])


def test_a_batch_groups_the_runs_by_model_largest_group_first():
    cfg = instances.CONFIGS["default"]
    runs = [(i, cfg, None) for i in _instances(THREE)]
    groups = model_groups(runs)
    assert [[i.model for i, _ in g] for g in groups] == [  # 1 x 20 KB, then 2 x 4.6 KB
        ["diabetes_robust"],
        ["breast_cancer_robust", "breast_cancer_robust"],
    ]


def test_a_batch_size_cuts_a_models_group_in_parts_in_order():
    cfg = instances.CONFIGS["default"]
    runs = [(i, cfg, None) for i in _instances(THREE)]
    groups = model_groups(runs, size=1)
    assert sorted([i.id for i, _ in g] for g in groups) == sorted([i] for i in THREE)
