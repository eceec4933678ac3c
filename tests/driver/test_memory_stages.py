"""The memory limit stage by stage (compiler/memory_estimate.py, driver/solver_memory.py):
a query is refused up front only when its load and search would pass the limit; the
solver stage (its compile, the backend's reductions, the solver's process) is held to
the limit when it comes, and skipped with the reason when it would pass it, so that a
query the heuristic answers is answered on a model whose solver stage would not fit."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import treesens
from treesens.compiler import memory_estimate
from treesens.compiler.memory_estimate import (
    ModelSize,
    estimate_mb,
    solver_main_mb,
    solver_process_mb,
    solver_stage_mb,
)
from treesens.driver import compile as compile_module
from treesens.driver import race as race_module
from treesens.driver import solver_memory

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MODEL = EXAMPLES / "breast_cancer_xgb.json"

# Measured 2026-11-26 on the scale tier and three shared benchmarks (python
# bench/memory_probe.py MODEL --stages, one fresh process a model; the table is in
# bench/reports/memory-estimate.md, "Per stage"): leaves, the peak of the load and the
# heuristic (MB), and what the solver stage's compile added to the memory held before it
# (MB).
MEASURED = [
    # model, leaves, load and heuristic peak, solver compile's increase
    ("adult_t500_d6.json", 15542, 190, 32),
    ("churn_t500_d6.json", 15939, 191, 33),
    ("german_credit_t800_d6.json", 10641, 183, 21),
    ("german_credit_xgb_t1000_d8.json", 7044, 178, 14),
    ("german_credit_xgb_t2000_d6.json", 10467, 188, 21),
    ("german_credit_lgbm_t1000_l63.txt", 19870, 177, 41),
    ("german_credit_lgbm_t1000_l255.txt", 19870, 177, 39),
    ("german_credit_hgb.skops", 2701, 194, 6),
    ("german_credit_cat_i1000.cbm", 55258, 152, 110),
    ("churn_xgb_t1000_d8.json", 31192, 218, 65),
    ("churn_xgb_t2000_d6.json", 39735, 237, 80),
    ("churn_lgbm_t1000_l63.txt", 63000, 201, 143),
    ("churn_lgbm_t1000_l255.txt", 126443, 242, 320),
    ("churn_hgb.skops", 3100, 194, 7),
    ("churn_cat_i1000.cbm", 46785, 153, 95),
    ("adult_xgb_t1000_d8.json", 53210, 255, 110),
    ("adult_xgb_t2000_d6.json", 58143, 268, 118),
    ("adult_lgbm_t1000_l63.txt", 63000, 200, 144),
    ("adult_lgbm_t1000_l255.txt", 255000, 321, 709),
    ("adult_hgb.skops", 2666, 194, 6),
    ("adult_cat_i1000.cbm", 44373, 153, 89),
    ("german_credit_rf_t500.skops", 72468, 247, 147),
    ("churn_rf_t500.skops", 512484, 468, 1412),
    ("adult_rf_t500.skops", 1681756, 1092, 5019),
]


def _size(leaves: int) -> ModelSize:
    return ModelSize(trees=1, leaves=leaves, features=1)


@pytest.mark.parametrize(("model", "leaves", "peak", "_"), MEASURED)
def test_the_load_and_search_estimate_covers_each_measured_peak(model, leaves, peak, _):
    assert estimate_mb(_size(leaves)) >= peak


@pytest.mark.parametrize(("model", "leaves", "_", "compile_mb"), MEASURED)
def test_the_solver_stage_estimate_in_this_process_covers_each_measured_compile(
    model, leaves, _, compile_mb
):
    assert solver_main_mb(_size(leaves)) >= compile_mb


# The solver stage itself (bench/memory_probe.py MODEL --stages --solver, 30 s; 120 s
# on the 255-leaf model): leaves, what this process added over the memory held before
# the compile (the compile and the backend's reductions, MB), the solver process's peak
# (CP-SAT, MB).
SOLVER_MEASURED = [
    ("adult_t500_d6.json", 15_542, 70, 273),
    ("german_credit_xgb_t1000_d8.json", 7_044, 33, 169),
    ("adult_xgb_t1000_d8.json", 53_210, 266, 564),
    ("churn_lgbm_t1000_l63.txt", 63_000, 319, 309),
    ("adult_cat_i1000.cbm", 44_373, 183, 318),
    ("german_credit_rf_t500.skops", 72_468, 329, 445),
    ("adult_lgbm_t1000_l255.txt", 255_000, 1_406, 2_320),
]


@pytest.mark.parametrize(("model", "leaves", "main_mb", "_"), SOLVER_MEASURED)
def test_the_solver_stage_estimate_in_this_process_covers_each_measured_stage(
    model, leaves, main_mb, _
):
    assert solver_main_mb(_size(leaves)) >= main_mb


@pytest.mark.parametrize(("model", "leaves", "_", "worker_mb"), SOLVER_MEASURED)
def test_the_solver_process_estimate_covers_each_measured_solver_process(
    model, leaves, _, worker_mb
):
    assert solver_process_mb(_size(leaves)) >= worker_mb


# The solver process's largest peak over the scale tier's checks (60 s each;
# bench/reports/scale-tier.jsonl.gz, peak_worker_mb): leaves, MB.
SCALE_TIER_SOLVER_PROCESS = [
    ("german_credit_rf_t500.skops", 72_468, 714),
    ("adult_cat_i1000.cbm", 44_373, 588),
    ("german_credit_cat_i1000.cbm", 55_258, 400),
    ("churn_cat_i1000.cbm", 46_785, 347),
    ("german_credit_lgbm_t1000_l63.txt", 19_870, 254),
    ("churn_hgb.skops", 3_100, 226),
    ("german_credit_xgb_t1000_d8.json", 7_044, 209),
    ("german_credit_hgb.skops", 2_701, 202),
    ("adult_hgb.skops", 2_666, 201),
]


@pytest.mark.parametrize(("model", "leaves", "worker_mb"), SCALE_TIER_SOLVER_PROCESS)
def test_the_solver_process_estimate_covers_the_scale_tier_s_solver_processes(
    model, leaves, worker_mb
):
    assert solver_process_mb(_size(leaves)) >= worker_mb


def test_the_solver_stage_counts_both_processes():
    size = _size(100_000)
    assert solver_stage_mb(size) == solver_main_mb(size) + solver_process_mb(size)


def test_the_up_front_refusal_names_the_size_and_the_load_and_search_need():
    ens = treesens.load_model(MODEL)
    r = treesens.check(ens, vary=["worst_area"], gap=0.1, memory_mb=1)
    need = estimate_mb(ModelSize.of(ens))
    assert r.status == "error"
    assert f"({ModelSize.of(ens)}) would need about {need:,.0f} MB to load and search" in r.error


def test_a_limit_above_the_load_and_search_is_not_refused_for_the_solver_stage():
    ens = treesens.load_model(MODEL)
    limit = math.ceil(estimate_mb(ModelSize.of(ens)))
    assert limit < estimate_mb(ModelSize.of(ens)) + solver_stage_mb(ModelSize.of(ens))
    r = treesens.check(ens, vary=["worst_area"], gap=0.1, memory_mb=limit)
    assert r.status != "error"


@pytest.fixture
def solver_stage_never_fits(monkeypatch):
    """Every model's solver stage 10 TB: it never fits; and it is never compiled."""
    monkeypatch.setattr(memory_estimate, "SOLVER_BASE_MB", 1e7)

    def fail(*_a, **_k):
        raise AssertionError("the solver stage was compiled")

    monkeypatch.setattr(compile_module, "compile_query", fail)
    # race.py binds the name when first imported: imported above, before this patch, and
    # patched too (imported under the patch, it kept `fail` for the rest of the session)
    monkeypatch.setattr(race_module, "compile_query", fail)


def test_a_query_the_heuristic_answers_is_answered_when_the_solver_stage_would_not_fit(
    solver_stage_never_fits,
):
    r = treesens.check(treesens.load_model(MODEL), vary=["worst_area"], gap=0.1, memory_mb=4000)
    assert r.status == "sensitive" and r.validated
    assert r.stats["found_by"] == "heuristic"


def test_the_solver_stage_is_skipped_with_the_reason_when_it_would_pass_the_limit(
    solver_stage_never_fits,
):
    ens = treesens.load_model(MODEL)
    r = treesens.check(ens, vary=["worst_area"], gap=0.1, heuristic=False, memory_mb=4000)
    assert r.status == "unknown"
    assert r.stats["solver_stage"] == "skipped: memory"
    assert r.message.startswith(
        f"solver stage skipped: the solver stage ({ModelSize.of(ens)}: its compile"
    )
    assert "above the memory limit of 4,000 MB; raise it with --memory-mb MB" in r.message


def test_the_skipped_solver_stage_counts_the_memory_the_process_holds(monkeypatch):
    monkeypatch.setattr(memory_estimate, "SOLVER_BASE_MB", 50.0)
    monkeypatch.setattr(memory_estimate, "SOLVER_KB_PER_LEAF", 0.0)
    monkeypatch.setattr(memory_estimate, "WORKER_BASE_MB", 50.0)
    monkeypatch.setattr(memory_estimate, "WORKER_KB_PER_LEAF", 0.0)
    monkeypatch.setattr(solver_memory, "resident_mb", lambda: 950.0)
    ens = treesens.load_model(MODEL)
    assert solver_memory.solver_stage_over(ens, 1000.0, given=True) is not None
    assert solver_memory.solver_stage_over(ens, 1050.0, given=True) is None


def test_a_query_that_compiles_first_is_refused_before_its_compile(solver_stage_never_fits):
    # a race compiles once for its backends, after the heuristic (off here)
    ens = treesens.load_model(MODEL)
    r = treesens.check(
        ens, vary=["worst_area"], gap=0.1, backend="race", heuristic=False, memory_mb=4000
    )
    assert r.status == "error"
    assert r.error.startswith("refused: the solver stage (")


def test_a_race_with_the_box_search_runs_it_alone_where_its_solvers_would_not_fit(
    solver_stage_never_fits,
):
    # as a check's box search goes on with its solver stage skipped, not refused whole
    ens = treesens.load_model(MODEL)
    backend = "race:boxes,cpsat"
    r = treesens.check(ens, vary=["worst_symmetry"], gap=0.1, backend=backend, memory_mb=4000)
    assert r.status == "insensitive" and r.stats["proved_by"] == "box search"
    assert r.stats["race"] == {"boxes": "insensitive", "cpsat": "skipped: memory"}
    assert "cpsat left out of the race: the solver stage (" in " ".join(r.notes)


def test_a_race_whose_box_search_refuses_its_tables_does_not_advise_the_solver_left_out(
    solver_stage_never_fits, monkeypatch
):
    from treesens.search import box_answers

    monkeypatch.setattr(box_answers, "room_bytes", lambda *_a, **_k: 1)  # no room for tables
    ens = treesens.load_model(MODEL)
    backend = "race:boxes,cpsat"
    r = treesens.check(ens, vary=["worst_symmetry"], gap=0.1, backend=backend, memory_mb=4000)
    assert r.status == "error" and "--backend cpsat" not in r.error
    assert r.error.endswith(
        "raise the memory limit (--memory-mb MB, memory_mb= in Python) to hold them, or to "
        "run cpsat, left out of the race (its note says what it needs)"
    )


def test_with_the_solver_stage_skipped_the_unfinished_box_search_goes_on_alone(
    solver_stage_never_fits, monkeypatch
):
    from treesens.search import boxes

    monkeypatch.setattr(boxes, "FIRST_TURN", 0.0)  # the first turn ends unfinished
    ens = treesens.load_model(MODEL)
    r = treesens.check(ens, vary=["worst_area"], gap=0.49, timeout=60, memory_mb=4000)
    assert r.stats["solver_stage"] == "skipped: memory"
    assert r.status == "insensitive" and r.stats["proved_by"] == "box search"


def test_the_scale_tier_s_forest_is_not_refused_up_front_by_the_default_2000_mb():
    # adult_rf_t500.skops: its checks the heuristic or the box search answer peak at
    # about 1.1 GB; only its solver stage (about 6.5 GB) would not fit
    assert estimate_mb(ModelSize(500, 1_681_756, 14)) < 2000


def test_a_query_with_data_which_compiles_first_is_refused_before_its_compile(
    solver_stage_never_fits,
):
    r = treesens.check(
        treesens.load_model(MODEL),
        vary=["worst_area"],
        gap=0.1,
        data=EXAMPLES / "breast_cancer_rows.csv",
        memory_mb=4000,
    )
    assert r.status == "error"
    assert r.error.startswith("refused: the solver stage (")


def test_a_sweeps_line_says_a_query_is_unknown_because_its_solver_stage_was_skipped(
    solver_stage_never_fits, capsys
):
    # was "[1/1] worst_area: unknown (0.04s)", the reason in its JSON result alone
    from treesens.interfaces.cli.main import main

    argv = ["sweep", str(MODEL), "--features", "worst_area", "--gap", "0.1", "--no-heuristic"]
    assert main([*argv, "--memory-mb", "4000", "--table", "none"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert any(
        s.startswith("[1/1] worst_area: unknown (solver stage skipped: above the memory limit)")
        for s in err
    )
    (note,) = [s for s in err if s.startswith("note: unknown with the solver stage skipped")]
    assert note.startswith("note: unknown with the solver stage skipped: worst_area; the solver")
    assert note.endswith(
        "raise it with --memory-mb MB (memory_mb= in Python, option memory_mb = MB in a .sens file)"
    )
