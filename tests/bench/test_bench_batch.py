"""bench/run.py --batch: each model's instances in one process, through the batch path,
written as the same result lines (and verdicts) as the process-per-instance runs."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[2]
BENCH = CHECKOUT / "bench"
sys.path.insert(0, str(BENCH))
try:
    import instances
    import run_one
    from run import model_groups
    from run_one import HardLimit, hard_limit, run_batch, run_treesens
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


INSENSITIVE = "breast_cancer_robust|f7|g=0.3"  # proved by the box search in a few boxes
SENSITIVE = "breast_cancer_robust|f9|g=0.1"  # the heuristic's pair


def _group(*ids):
    return {"name": "default"}, [i.to_dict() for i in _instances(ids)]


def test_a_batch_writes_a_certificate_the_checker_accepts_per_insensitive_answer(tmp_path):
    from treesens.verify import verify_file

    (line,) = run_batch(60, _group(INSENSITIVE), certificates=str(tmp_path))
    assert line["status"] == "insensitive" and line["certificate"]["verified"]
    assert verify_file(Path(line["certificate"]["path"])).valid


def test_a_batch_writes_no_certificate_for_a_sensitive_answer(tmp_path):
    (line,) = run_batch(60, _group(SENSITIVE), certificates=str(tmp_path))
    assert line["status"] == "sensitive" and "certificate" not in line
    assert list(tmp_path.iterdir()) == []


def test_the_hard_limit_stops_what_runs_past_its_seconds():
    t0 = time.time()
    with pytest.raises(HardLimit), hard_limit(0.2):
        time.sleep(5)
    assert time.time() - t0 < 2


def test_a_query_past_its_hard_limit_is_unknown_and_the_next_one_answers(monkeypatch):
    import treesens.questions.campaign as campaign

    asked = campaign.ask_many

    def first_hangs(ens, queries, **kw):
        if queries[0].label == "f7":
            time.sleep(60)  # a query that does not stop at its time limit
        return asked(ens, queries, **kw)

    monkeypatch.setattr(campaign, "ask_many", first_hangs)
    monkeypatch.setattr(run_one, "GRACE", 0.5)
    t0 = time.time()
    stuck, answered = run_batch(1, _group(INSENSITIVE, SENSITIVE))
    assert stuck["status"] == "unknown" and "hard limit" in stuck["message"]
    assert answered["status"] == "sensitive"
    assert time.time() - t0 < 30
