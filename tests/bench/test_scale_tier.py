"""The scale tier end to end on a tiny configuration: bench/models/train_scale.py trains
a 3-tree model from a benchmark dataset, bench/scale_tier.py checks one feature and
bounds its max gap, a line per query, and a rerun resumes. (The benchmark data comes
from ../shared/benchmarks; skipped without it.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench"
FEATURE = "Status"  # german credit's strongest feature: read by the first trees


def _run(argv: list[str], shared: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "TREESENS_SHARED": str(shared.parent), "PYTHONPATH": str(REPO.parent)}
    return subprocess.run(
        [sys.executable, *argv], capture_output=True, text=True, env=env, timeout=300
    )


def _train(shared: Path, out: Path) -> Path:
    proc = _run(
        [
            str(BENCH / "models" / "train_scale.py"),
            "--datasets",
            "german_credit",
            "--models",
            "xgb_t1000_d8",
            "--trees",
            "3",
            "--out",
            str(out),
        ],
        shared,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out / "german_credit" / "german_credit_xgb_t1000_d8.json"


def _tier(shared: Path, models: Path, results: Path, *more: str) -> subprocess.CompletedProcess:
    return _run(
        [
            str(BENCH / "scale_tier.py"),
            *more,
            "--datasets",
            "german_credit",
            "--models",
            "xgb_t1000_d8",
            "--features",
            FEATURE,
            "--gaps",
            "0.2",
            "--check-timeout",
            "30",
            "--max-gap-timeout",
            "30",
            "--models-dir",
            str(models),
            "--out",
            str(results),
        ],
        shared,
    )


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    from tests.conftest import require_shared

    shared = require_shared()
    tmp = tmp_path_factory.mktemp("scale")
    model = _train(shared, tmp / "models")
    results = tmp / "scale-tier.jsonl"
    proc = _tier(shared, tmp / "models", results)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return shared, tmp, model, results, proc


def _lines(path: Path) -> list[dict]:
    return [json.loads(ln) for ln in path.read_text().splitlines()]


def test_train_scale_saves_the_model_in_its_librarys_format_with_the_details_beside_it(
    tiny_run,
):
    import xgboost as xgb

    _, tmp, model, _, _ = tiny_run
    booster = xgb.Booster(model_file=str(model))
    assert booster.num_boosted_rounds() == 3
    assert (model.parent / "details.csv").exists()


def test_train_scale_trains_the_same_model_twice(tiny_run):
    shared, tmp, model, _, _ = tiny_run
    again = _train(shared, tmp / "again")
    assert again.read_bytes() == model.read_bytes()


def test_scale_tier_writes_the_load_and_a_line_per_query(tiny_run):
    *_, results, _ = tiny_run
    kinds = [(d["kind"], d["feature"], d["gap"]) for d in _lines(results) if "gap" in d]
    assert kinds == [("check", FEATURE, 0.2), ("max_gap", FEATURE, None)]
    load = next(d for d in _lines(results) if d["kind"] == "load")
    assert load["trees"] == 3 and load["load_s"] >= 0 and load["peak_main_mb"] > 0


def test_scale_tier_records_each_querys_own_peak_memory_and_the_peak_so_far(tiny_run):
    *_, results, _ = tiny_run
    for d in _lines(results):
        if d["kind"] in ("check", "max_gap"):
            assert 0 < d["query_peak_main_mb"] <= d["peak_main_mb"], d


def test_scale_tier_answers_the_check_and_bounds_the_max_gap(tiny_run):
    *_, results, _ = tiny_run
    by_kind = {d["kind"]: d for d in _lines(results)}
    check, mg = by_kind["check"], by_kind["max_gap"]
    assert check["status"] in ("sensitive", "insensitive")
    assert check["status"] == "insensitive" or check["validated"]
    assert mg["upper"] is not None and mg["timeout"] == 30.0
    assert mg["status"] == "insensitive" or mg["lower"] <= mg["upper"]


def test_scale_tier_reports_a_table_for_the_model(tiny_run):
    *_, results, proc = tiny_run
    assert f"| {FEATURE} |" in proc.stdout
    assert "### german_credit xgb_t1000_d8" in results.with_suffix(".md").read_text()


def test_scale_tier_run_again_skips_the_queries_already_in_its_results(tiny_run):
    shared, tmp, _, results, _ = tiny_run
    before = len([d for d in _lines(results) if d["kind"] in ("check", "max_gap")])
    proc = _tier(shared, tmp / "models", results)
    assert proc.returncode == 0, proc.stderr[-2000:]
    after = len([d for d in _lines(results) if d["kind"] in ("check", "max_gap")])
    assert (before, after) == (2, 2)


def test_scale_tier_again_asks_the_queries_of_the_kinds_named_once_more(tiny_run):
    shared, tmp, _, results, _ = tiny_run
    copy = tmp / "again.jsonl"
    copy.write_text(results.read_text())
    proc = _tier(shared, tmp / "models", copy, "--kinds", "max_gap", "--again")
    assert proc.returncode == 0, proc.stderr[-2000:]
    kinds = [d["kind"] for d in _lines(copy) if d["kind"] in ("check", "max_gap")]
    assert sorted(kinds) == ["check", "max_gap", "max_gap"]


def test_a_query_past_its_limit_is_written_as_killed_and_its_process_ends(tmp_path):
    out = tmp_path / "lines.jsonl"
    script = textwrap.dedent(
        f"""
        import json, sys, time
        sys.path.insert(0, {str(BENCH)!r})
        import scale_tier
        fh = open({str(out)!r}, "a")
        def emit(line):
            fh.write(json.dumps(line) + "\\n")
            fh.flush()
        dog = scale_tier.Watchdog(emit, cap_mb=1e9, grace=0.2)
        dog.start()
        dog.watch({{"kind": "check", "feature": "x", "gap": 0.2}}, limit=0.1)
        time.sleep(30)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(REPO.parent)}
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, timeout=60)
    assert proc.returncode == 3, proc.stderr.decode()[-2000:]
    (line,) = _lines(out)
    assert line["status"] == "killed" and line["total_s"] < 30


def test_report_counts_a_query_over_2_gb_by_its_own_peak_and_the_unsure_apart(tmp_path):
    sys.path.insert(0, str(BENCH))
    try:
        import scale_tier
    finally:
        sys.path.remove(str(BENCH))
    base = {"dataset": "adult", "model": "hgb", "peak_worker_mb": 0.0}
    load = {"kind": "load", "feature": None, "trees": 1, "leaves": 2, "features": 1}
    load.update(used_features=1, import_s=1.0, load_s=1.0, peak_main_mb=300.0)
    query = {"kind": "max_gap", "gap": None, "status": "insensitive", "tolerance": 1e-3}
    lines = [
        {**base, **load},
        # written before peaks were per query: the first rose past 2 GB (its own peak),
        # the second may have stayed below it
        {**base, **query, "feature": "a", "peak_main_mb": 2500.0},
        {**base, **query, "feature": "b", "peak_main_mb": 2500.0},
        {**base, **query, "feature": "c", "peak_main_mb": 2500.0, "query_peak_main_mb": 900.0},
    ]
    lines[-1].update(query_peak_worker_mb=0.0, peak_reset=True)
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in lines))
    summary = scale_tier.report(path).splitlines()[2]
    assert summary.endswith("| 1/3 (+1 unsure) |")


def _report_of(tmp_path: Path, queries: list[dict]) -> str:
    sys.path.insert(0, str(BENCH))
    try:
        import scale_tier
    finally:
        sys.path.remove(str(BENCH))
    base = {"dataset": "adult", "model": "rf_t500", "peak_main_mb": 900.0, "peak_worker_mb": 0.0}
    load = {"kind": "load", "feature": None, "trees": 500, "leaves": 9, "features": 1}
    load.update(used_features=1, import_s=1.0, load_s=1.0)
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps({**base, **d}) + "\n" for d in [load, *queries]))
    return scale_tier.report(path)


REFUSAL = (
    "refused: m.skops (500 trees, 9 leaves, 1 features) would need about 6,819 MB to "
    "compile and search, above the memory limit of 2,000 MB; raise it with --memory-mb MB"
)


def test_report_shows_a_query_refused_for_memory_as_refused_with_its_line_once(tmp_path):
    refused = {"status": "error", "error": REFUSAL, "total_s": 0.0, "cpu_s": 0.0}
    check = {"kind": "check", "gap": 0.2, "status": "sensitive", "validated": True}
    text = _report_of(
        tmp_path,
        [
            {**refused, "kind": "check", "feature": "a", "gap": 0.1},
            {**check, "feature": "a", "total_s": 1.0},
            {**refused, "kind": "max_gap", "feature": "a", "gap": None},
        ],
    )
    summary = text.splitlines()[2]
    assert "| 1/2 (1 refused) |" in summary and "| 0/1 (1 refused) |" in summary
    assert text.count(REFUSAL) == 1 and "Refused up front: 2 of 3 queries" in text
    (row,) = [ln for ln in text.splitlines() if ln.startswith("| a |")]
    assert row.startswith("| a | refused | S 1.0 | refused |")


def test_report_shows_another_error_as_an_error(tmp_path):
    failed = {"kind": "max_gap", "feature": "a", "gap": None, "status": "error"}
    text = _report_of(tmp_path, [{**failed, "error": "internal error: boom"}])
    assert "error: internal error: boom" in text and "refused" not in text
