"""The data-aware tier (bench/instances.py), its table (bench/data_aware_report.py) and the
argument that turns on Ensense's clause mode (bench/ensense_peer.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
try:
    import data_aware_report  # noqa: E402  (bench/ modules import each other by plain name)
    import ensense_peer  # noqa: E402
    import instances  # noqa: E402
finally:
    sys.path.remove(str(BENCH))

needs_shared = pytest.mark.skipif(not instances.SHARED.is_dir(), reason="needs ../shared")


@needs_shared
def test_the_data_aware_tier_runs_the_three_modes_on_models_with_data_at_g_0_2():
    insts, configs, _ = instances.tier("data-aware")
    assert configs == ["data-prob", "data-clause", "data-probclause"]
    assert {i.gap for i in insts} == {0.2}
    assert all(i.data_path and i.data_path.endswith("train.csv") for i in insts)


@needs_shared
def test_the_data_aware_sample_lists_instances_of_the_tier():
    ids = {i.id for i in instances.tier("data-aware")[0]}
    lines = (BENCH / "instance-lists" / "sample-data-aware.txt").read_text().splitlines()
    sample = {ln.split("#", 1)[0].strip() for ln in lines} - {""}
    assert sample and sample <= ids


def test_each_data_aware_configuration_names_its_mode():
    for mode in ("none", "prob", "clause", "probclause"):
        assert instances.CONFIGS[f"data-{mode}"].data_aware == mode


def test_ensense_argv_passes_its_clause_file_when_given():
    argv = ensense_peer.ensense_argv("py", "m.json", [3], (0.3, 0.7), None, None, "c.txt")
    assert argv[-2:] == ["--in_distro_clauses", "c.txt"]


def _row(config, total, status="sensitive", gap=None, optimal=False, distance=0.5):
    da = {} if gap is None else {"objective": -1.0, "objective_bound": 0.0, "objective_gap": gap}
    if optimal:
        da["solver_status"] = "optimal"
    return {
        "instance": "m|f|g=0.2",
        "config": config,
        "status": status,
        "validated": status == "sensitive",
        "distance": distance,
        "time": {"total": total},
        "data_aware": da,
    }


def test_the_table_reports_the_median_gap_of_the_runs_not_proven_optimal():
    rows = [_row("data-prob", 10, gap=0.2), _row("data-prob", 20, gap=0.4)]
    rows.append(_row("data-prob", 30, gap=0.0, optimal=True))
    (line,) = [x for x in data_aware_report.summary_rows(rows) if x.startswith("| data-prob")]
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[6] == "1 of 3" and cells[7] == f"{0.3:.3f}" and cells[4] == "20.0"


def test_the_table_counts_printed_pairs_that_do_not_replay_as_invalid():
    rows = [_row("peer", 5.0), _row("peer", 6.0)]
    rows[1]["validated"] = False
    (line,) = [x for x in data_aware_report.summary_rows(rows) if x.startswith("| peer")]
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[2:4] == ["1", "1"]
