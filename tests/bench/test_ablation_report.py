"""bench/ablation_report.py: what removing one pass costs, per solver."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(CHECKOUT / "bench"))  # ablation_report.py imports report.py beside it
spec = importlib.util.spec_from_file_location(
    "bench_ablation_report", CHECKOUT / "bench" / "ablation_report.py"
)
ablation = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ablation)


def run(instance, config, status, seconds, *, timeout=30.0, variables=100):
    return {
        "instance": instance,
        "config": config,
        "status": status,
        "validated": status == "sensitive",
        "timeout": timeout,
        "time": {"total": seconds},
        "vars": variables,
        "constraints": 2 * variables,
    }


def keyed(*runs):
    return {(r["instance"], r["config"]): r for r in runs}


def compare(*runs, ref="default-noheur", var="no-unaff"):
    rs = keyed(*runs)
    return ablation.compare(rs, ref, var, ablation.known_answers(rs))


def test_cost_is_the_variants_par2_over_the_references():
    c = compare(
        run("a", "default-noheur", "insensitive", 10.0), run("a", "no-unaff", "insensitive", 20.0)
    )
    assert c["cost"] == 2.0


def test_a_timeout_counts_twice_the_limit_and_is_a_lost_answer():
    c = compare(
        run("a", "default-noheur", "insensitive", 10.0), run("a", "no-unaff", "unknown", 30.0)
    )
    assert (c["par2_var"], c["lost"], c["gained"]) == (60.0, 1, 0)


def test_only_instances_both_configurations_finished_are_compared():
    c = compare(
        run("a", "default-noheur", "insensitive", 1.0),
        run("a", "no-unaff", "insensitive", 1.0),
        run("b", "default-noheur", "insensitive", 5.0),
    )
    assert c["instances"] == 1


def test_a_small_absolute_difference_is_neither_slower_nor_faster():
    c = compare(
        run("a", "default-noheur", "insensitive", 0.5), run("a", "no-unaff", "insensitive", 0.9)
    )
    assert (c["slower"], c["faster"]) == (0, 0)


def test_a_large_relative_and_absolute_difference_is_slower():
    c = compare(
        run("a", "default-noheur", "insensitive", 5.0), run("a", "no-unaff", "insensitive", 9.0)
    )
    assert (c["slower"], c["faster"]) == (1, 0)


def test_the_cost_is_split_by_the_instances_known_answer():
    c = compare(
        run("i", "default-noheur", "insensitive", 10.0),
        run("i", "no-unaff", "insensitive", 30.0),
        run("s", "default-noheur", "sensitive", 10.0),
        run("s", "no-unaff", "sensitive", 10.0),
    )
    assert (c["cost_insensitive"], c["cost_sensitive"]) == ("3.00x (1)", "1.00x (1)")


def test_model_sizes_are_the_medians_sent_to_the_solver():
    c = compare(
        run("a", "default-noheur", "insensitive", 1.0, variables=100),
        run("a", "no-unaff", "insensitive", 1.0, variables=300),
    )
    assert c["vars"] == (100, 300)


def test_highs_variants_are_compared_with_highs_not_with_cpsat():
    rs = keyed(
        run("a", "default-noheur", "insensitive", 1.0),
        run("a", "highs", "insensitive", 10.0),
        run("a", "highs-no-obj", "insensitive", 20.0),
    )
    line = next(x for x in ablation.ablation_table(rs) if "| HiGHS | Obj |" in x)
    assert "**2.00x**" in line


def test_the_report_reads_a_results_file(tmp_path):
    path = tmp_path / "ablation.jsonl"
    rows = [run("a", "default-noheur", "insensitive", 2.0), run("a", "kant", "unknown", 30.0)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert "| CP-SAT | all (Kant) | 1 | 1 / 0 |" in ablation.report([path])
