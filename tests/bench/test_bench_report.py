"""bench/report.py: what the benchmark tables count (synthetic results, no solver runs)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# the checkout this test sits in (bench/ is not part of the installed package)
CHECKOUT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("bench_report", CHECKOUT / "bench" / "report.py")
report_mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(report_mod)


def run(instance, config, status, total, *, validated=True, gap=0.1, timeout=600.0):
    return {
        "instance": f"{instance}|g={gap:g}",
        "config": config,
        "suite": "single",
        "gap": gap,
        "timeout": timeout,
        "status": status,
        "validated": validated,
        "time": {"total": total, "cpu": total},
        "found_by": "cpsat" if status == "sensitive" else None,
    }


def write(tmp_path, runs):
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in runs))
    return path


def test_par2_counts_an_unanswered_run_as_twice_the_limit():
    rs = [run("a", "default", "sensitive", 2.0), run("b", "default", "unknown", 600.0)]
    assert report_mod.par2(rs) == pytest.approx((2.0 + 1200.0) / 2)


def test_a_sensitive_answer_without_a_replayed_pair_is_not_solved():
    assert not report_mod.solved(run("a", "default", "sensitive", 1.0, validated=False))


def test_an_answer_after_the_time_limit_is_not_solved():
    assert not report_mod.solved(run("a", "default", "insensitive", 601.0))


def test_speed_up_is_compared_on_the_instances_both_configurations_finished(tmp_path):
    runs = [
        run("a", "default", "sensitive", 1.0),
        run("a", "kant", "sensitive", 10.0),
        run("b", "default", "sensitive", 1.0),  # kant never ran b
    ]
    text = report_mod.report([write(tmp_path, runs)], tmp_path / "r")
    assert "PAR2 kant / default = 10.00x (target >= 8x): met" in text


def test_default_misses_are_listed_over_all_its_instances_when_others_ran_a_sample(tmp_path):
    runs = [
        run("a", "default", "sensitive", 1.0),
        run("a", "kant", "sensitive", 10.0),
        run("b", "default", "unknown", 590.0, gap=0.3),
    ]
    text = report_mod.report([write(tmp_path, runs)], tmp_path / "r")
    assert "### default on all 2 instances it finished" in text
    assert "- `b|g=0.3`: unknown after 590 s" in text
    assert "default answered 1/2 within the limit" in text


def test_a_sensitive_and_an_insensitive_answer_on_one_instance_are_a_disagreement(tmp_path):
    runs = [run("a", "default", "sensitive", 1.0), run("a", "kant", "insensitive", 3.0)]
    text = report_mod.report([write(tmp_path, runs)], tmp_path / "r")
    assert "Disagreements (sensitive vs insensitive on one instance): 1" in text


def test_each_configuration_is_listed_beside_its_runs_at_another_commit():
    runs = {("a", c): {} for c in ("kant@abc1234", "default", "kant", "default@abc1234")}
    assert report_mod._configs(runs) == ["default", "default@abc1234", "kant", "kant@abc1234"]


def test_a_configuration_run_at_another_commit_is_compared_with_it_on_verdicts_and_par2(tmp_path):
    runs = []
    for k, (here, there) in enumerate([(1.0, 2.0), (3.0, 6.0)]):
        runs += [
            {**run(f"i{k}", "default", "sensitive", here), "commit": "new1234"},
            {**run(f"i{k}", "default@old1234", "sensitive", there), "commit": "old1234"},
        ]
    text = report_mod.report([write(tmp_path, runs)], tmp_path / "r")
    row = "| default | new1234 | old1234 | 2 | 2 | 2.00 | 4.00 | 2.00x | 2.00x - 2.00x | 2.00x |"
    assert row in text
    assert "Verdicts that differ between the commits: 0" in text


def test_a_verdict_that_differs_between_the_commits_is_listed(tmp_path):
    runs = [
        run("a", "default", "sensitive", 1.0),
        run("a", "default@old1234", "unknown", 600.0),
        run("b", "default", "insensitive", 2.0),
        run("b", "default@old1234", "insensitive", 2.0),
    ]
    text = report_mod.report([write(tmp_path, runs)], tmp_path / "r")
    assert "Verdicts that differ between the commits: 1" in text
    assert (
        "- `a|g=0.1` [default]: sensitive after 1.0 s; default@old1234: unknown after 600.0 s"
        in text
    )


def test_the_speed_up_interval_is_one_point_when_every_instance_has_the_same_ratio():
    lo, hi = report_mod.ratio_interval([10.0, 20.0, 30.0], [1.0, 2.0, 3.0])
    assert lo == pytest.approx(10.0) and hi == pytest.approx(10.0)


def test_the_speed_up_interval_contains_the_ratio_and_widens_with_uneven_instances():
    ref, x = [100.0, 1.0, 1.0, 50.0, 2.0], [1.0, 1.0, 1.0, 1.0, 1.0]
    lo, hi = report_mod.ratio_interval(ref, x)
    assert lo < sum(ref) / sum(x) < hi


def test_the_kant_ratio_says_when_its_whole_interval_is_above_the_target(tmp_path):
    runs = []
    for k in range(12):
        runs += [run(f"i{k}", "default", "sensitive", 1.0), run(f"i{k}", "kant", "sensitive", 20.0)]
    text = report_mod.report([write(tmp_path, runs)], tmp_path / "r")
    assert "95% bootstrap interval 20.00x - 20.00x (entirely above 8x)" in text


def test_the_speed_up_interval_of_no_instances_is_undefined():
    lo, hi = report_mod.ratio_interval([], [])
    assert lo != lo and hi != hi  # nan


def test_gzipped_results_are_read_like_plain_ones(tmp_path):
    import gzip

    runs = [run("a", "default", "sensitive", 2.0), run("b", "kant", "unknown", 600.0)]
    plain = write(tmp_path, runs)
    packed = tmp_path / "results.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert report_mod.load([packed]) == report_mod.load([plain])


def test_the_report_of_gzipped_results_is_written_beside_them_without_both_suffixes(tmp_path):
    # was: bench/reports/X.jsonl.gz reported to X.jsonl.md and X.jsonl-cactus-*.png
    import gzip

    plain = write(tmp_path, [run("a", "default", "sensitive", 2.0)])
    packed = tmp_path / "quick.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    plain.unlink()
    assert report_mod.main([str(packed)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "quick-cactus-single.png",
        "quick.jsonl.gz",
        "quick.md",
    ]


def test_listing_the_instances_into_a_reader_that_stops_early_is_not_an_error(shared_dir):
    # was: a BrokenPipeError traceback from `bench/run.py --list | head`
    env = dict(os.environ, TREESENS_SHARED=str(shared_dir.parent))
    proc = subprocess.Popen(
        [sys.executable, str(CHECKOUT / "bench" / "run.py"), "--tier", "quick", "--list"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    proc.stdout.close()  # the reader is gone before the listing is written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0
    assert "Traceback" not in err


def test_a_sensitive_answer_whose_pair_does_not_replay_is_counted_as_an_invalid_pair(tmp_path):
    runs = [
        run("a", "default", "sensitive", 1.0),
        run("a", "ensense", "sensitive", 5.0, validated=False),
    ]
    text = report_mod.report([write(tmp_path, runs)], tmp_path / "r")
    assert "| ensense | 1 | 0 | 1 |" in text


def test_the_speed_up_against_ensense_is_reported(tmp_path):
    runs = [run("a", "default", "sensitive", 1.0), run("a", "ensense", "sensitive", 4.0)]
    text = report_mod.report([write(tmp_path, runs)], tmp_path / "r")
    assert "Speed-up against **ensense**" in text


def test_the_report_counts_the_insensitive_answers_certified_and_names_the_others(tmp_path):
    ok = {"written": True, "verified": True, "write_s": 0.5, "verify_s": 1.5, "why_not": ""}
    refused = {"written": False, "verified": False, "why_not": "budget spent"}
    runs = [
        {**run("a", "default", "insensitive", 1.0), "certificate": ok},
        {**run("b", "default", "insensitive", 1.0), "certificate": refused},
        run("c", "default", "sensitive", 1.0),
    ]
    text = report_mod.report([write(tmp_path, runs)], tmp_path / "r")
    assert "1 of the 2 insensitive answers certified and verified" in text
    assert "- `b|g=0.1`: budget spent" in text
