"""The memory limit (questions/memory.py): a model whose estimated need passes it is
refused before anything is compiled, in one line naming the model's size, the estimate
and the limit, on every interface (the API, the CLI, a .sens option, compare); a max gap
keeps its open boxes within what the limit leaves and says when it shed some."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import treesens
from treesens.compiler import memory_estimate
from treesens.compiler.memory_estimate import MB, ModelSize, estimate_mb
from treesens.compiler.query import Gap, Query
from treesens.questions import ask, max_gap, memory
from treesens.questions.audit_run import AuditRun, run_audit
from treesens.questions.audit_spec import make_spec, make_target
from treesens.questions.compare import compare_query
from treesens.questions.memory import (
    HEAP_BYTES,
    MemoryLimit,
    SearchBudget,
    memory_limit,
    search_budget,
)
from treesens.readers.data import load_data
from treesens.search import gap_kernel, gap_kernel_compile, pair_boxes
from treesens.tests.max_gap_oracle import exact_max_gap
from treesens.tests.oracle import random_ensemble

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MODEL = EXAMPLES / "breast_cancer_xgb.json"


def _small():
    return random_ensemble(5, n_trees=4, depth=2, n_features=3, n_thresholds=2)


def _never_solved(monkeypatch):
    def fail(*_a, **_k):
        raise AssertionError("a refused query was compiled")

    monkeypatch.setattr(ask, "solve_query", fail)
    monkeypatch.setattr(max_gap, "max_gap_query", fail)  # ask imports it when asked


def test_a_model_whose_estimate_passes_the_limit_is_refused_before_compiling(monkeypatch):
    _never_solved(monkeypatch)
    r = treesens.check(_small(), vary=["f0"], gap=0.1, memory_mb=1)
    assert r.status == "error"
    assert r.error.startswith("refused:")


def test_the_refusal_names_the_model_size_the_estimate_and_the_limit():
    ens = _small()
    r = treesens.check(ens, vary=["f0"], gap=0.1, memory_mb=1)
    need = estimate_mb(ModelSize.of(ens))
    assert f"{len(ens.trees)} trees, {ens.n_leaves()} leaves, 3 features" in r.error
    assert f"about {need:,.0f} MB" in r.error
    assert "memory limit of 1 MB" in r.error and "--memory-mb" in r.error
    assert "\n" not in r.error


def test_a_max_gap_too_large_for_the_limit_is_refused_too(monkeypatch):
    _never_solved(monkeypatch)
    r = treesens.max_gap(_small(), ["f0"], memory_mb=1)
    assert r.status == "error" and r.error.startswith("refused:")


def test_a_model_within_the_limit_is_answered():
    ens = _small()
    limit = math.ceil(estimate_mb(ModelSize.of(ens)))
    assert treesens.check(ens, vary=["f0"], gap=0.1, memory_mb=limit).status != "error"


def test_the_cli_refuses_in_one_line_with_exit_code_2():
    out = subprocess.run(
        [sys.executable, "-m", "treesens.interfaces.cli.main", "check", str(MODEL)]
        + ["--vary", "worst_area", "--memory-mb", "1"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 2
    assert out.stdout == ""
    (line,) = out.stderr.splitlines()
    assert line.startswith("treesens: error: refused: breast_cancer_xgb.json (60 trees")


def test_the_cli_refuses_before_anything_is_compiled(monkeypatch, capsys):
    from treesens.interfaces.cli import check
    from treesens.interfaces.cli.main import main

    monkeypatch.setattr(check, "answer", lambda *a, **k: pytest.fail("answered"))
    assert main(["check", str(MODEL), "--vary", "worst_area", "--memory-mb", "1"]) == 2


def test_a_cli_sweep_over_the_limit_is_refused_once_with_exit_code_2(capsys):
    from treesens.interfaces.cli.main import main

    assert main(["sweep", str(MODEL), "--memory-mb", "1", "--table", "none"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.strip().splitlines()
    assert line.startswith("treesens: error: refused: breast_cancer_xgb.json (60 trees")


def test_a_cli_compare_over_the_limit_is_refused_once_with_exit_code_2(capsys):
    from treesens.interfaces.cli.main import main

    args = ["compare", str(MODEL), "--vary", "worst_area", "--memory-mb", "1"]
    assert main(args) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("treesens: error: refused: breast_cancer_xgb.json (60 trees")


def test_the_sweep_api_refuses_before_any_query(monkeypatch):
    from treesens.questions import sweep as sweep_module

    monkeypatch.setattr(sweep_module, "sweep_campaign", lambda *a, **k: pytest.fail("ran"))
    with pytest.raises(memory.MemoryRefused, match="^refused: breast_cancer_xgb.json"):
        treesens.sweep(MODEL, memory_mb=1)


def test_a_sens_file_s_memory_option_refuses_its_query(tmp_path):
    sens = tmp_path / "q.sens"
    sens.write_text(
        f'model "{MODEL}"\n\nquery small {{\n  vary worst_area\n  option memory_mb = 1\n}}\n'
    )
    (r,) = treesens.run_file(sens)
    assert r.status == "error" and r.error.startswith("refused:")


def test_compare_refuses_every_backend_before_compiling(monkeypatch):
    import treesens.questions.compare as compare

    monkeypatch.setattr(compare, "compile_query", lambda *a, **k: pytest.fail("compiled"))
    q = Query(vary=("worst_area",), gap=Gap(0.2))
    results = compare_query(treesens.load_model(MODEL), q, ["cpsat", "highs"], memory_mb=1)
    assert [r.status for r in results] == ["error", "error"]
    assert all(r.error.startswith("refused:") for r in results)


def test_the_default_limit_is_three_quarters_of_the_memory_available(monkeypatch):
    monkeypatch.setattr(memory, "available_mb", lambda: 1000.0)
    assert memory_limit(None) == MemoryLimit(750.0, given=False)


def test_the_default_limit_is_at_most_2000_mb(monkeypatch):
    monkeypatch.setattr(memory, "available_mb", lambda: 24_000.0)
    assert memory_limit(None) == MemoryLimit(2000.0, given=False)


def test_the_default_limit_is_2000_mb_where_the_memory_available_is_unknown(monkeypatch):
    monkeypatch.setattr(memory, "available_mb", lambda: None)
    assert memory_limit(None) == MemoryLimit(2000.0, given=False)


def test_a_model_estimated_past_2000_mb_is_refused_by_default(monkeypatch):
    monkeypatch.setattr(memory, "available_mb", lambda: 24_000.0)
    monkeypatch.setattr(memory_estimate, "BASE_MB", 2001.0)
    r = treesens.check(_small(), vary=["f0"], gap=0.1)
    assert r.status == "error"
    assert "above the memory limit of 2,000 MB (the default" in r.error


def test_the_memory_available_is_read_on_this_machine():
    free = memory.available_mb()
    assert free is not None and free > 0


def test_a_limit_given_limits_the_solver_process_and_the_default_does_not():
    assert MemoryLimit(2000.0, True).given_mb == 2000
    assert MemoryLimit(2000.0, False).given_mb is None


def test_by_default_a_max_gap_s_heap_takes_at_most_its_default_budget():
    assert search_budget(_small(), MemoryLimit(1e6, given=False)).heap_bytes == HEAP_BYTES


def test_the_default_limit_holds_a_max_gap_s_tables_and_heap_too():
    ens = _small()
    need = estimate_mb(ModelSize.of(ens))
    room = int(4000 * MB)
    budget = search_budget(ens, MemoryLimit(need + 4000, given=False))
    assert budget == SearchBudget(HEAP_BYTES, room)


def test_a_limit_given_leaves_the_box_search_what_the_estimate_does_not_take():
    ens = _small()
    need = estimate_mb(ModelSize.of(ens))
    room = int(4000 * MB)
    assert search_budget(ens, MemoryLimit(need + 4000, given=True)) == SearchBudget(room, room)


def _deeper():
    """A max gap whose search fills a heap of a few boxes (test_gap_kernel's case 5)."""
    return random_ensemble(np.random.default_rng([47, 5]), 12, 3, 3, 4, leaf_scale=1.0)


def _tight_max_gap(monkeypatch):
    """A max gap whose limit leaves 200 bytes above the model's estimate, where its tables
    take a byte a pair leaf (136): its heap keeps the fewest boxes it can (4)."""
    monkeypatch.setattr(gap_kernel, "MIN_HEAP_BYTES", 1)
    monkeypatch.setattr(pair_boxes, "held_bytes", lambda leaves, *_: leaves)
    for module in (memory, memory_estimate):
        monkeypatch.setattr(module, "estimate_mb", lambda size: 100.0 - 200 / MB)
    ens = _deeper()
    return ens, treesens.max_gap(ens, ["f0"], tolerance=1e-4, memory_mb=100)


@pytest.mark.skipif(not gap_kernel_compile.available(), reason="numba is not installed")
def test_a_max_gap_that_shed_boxes_for_memory_says_so_in_its_stats_and_notes(monkeypatch):
    _, r = _tight_max_gap(monkeypatch)
    shed = r.stats["box_search"]["shed"]
    assert shed["boxes"] > 0
    assert any("memory budget" in note for note in r.notes)


@pytest.mark.skipif(not gap_kernel_compile.available(), reason="numba is not installed")
def test_a_max_gap_left_open_by_boxes_shed_says_memory_not_time(monkeypatch):
    ens, r = _tight_max_gap(monkeypatch)
    assert not r.max_gap["proven"] and r.max_gap["stopped_by"] == "memory"
    assert "not proven (boxes shed for memory" in r.message
    assert r.max_gap["upper"] >= exact_max_gap(ens, ["f0"]) >= r.max_gap["lower"]


@pytest.fixture
def estimate_100(monkeypatch):
    """Every model's estimate 100 MB: a limit of 100 + M leaves M MB to the box search."""
    for module in (memory, memory_estimate):
        monkeypatch.setattr(module, "estimate_mb", lambda size: 100.0)


def test_a_max_gap_whose_tables_pass_what_the_limit_leaves_is_bisected_and_says_why(
    estimate_100,
):
    # worst_area's pair tables: 503 leaves, 0.6 MB held while built
    r = treesens.max_gap(treesens.load_model(MODEL), ["worst_area"], timeout=60, memory_mb=100)
    assert r.max_gap["method"] == "bisection"
    assert any("memory limit leaves" in note for note in r.notes)


def test_the_same_max_gap_with_room_for_its_tables_is_searched_by_boxes(estimate_100):
    r = treesens.max_gap(treesens.load_model(MODEL), ["worst_area"], timeout=60, memory_mb=164)
    assert r.max_gap["method"] == "boxes"


def test_a_check_s_box_stage_skips_tables_that_pass_what_the_limit_leaves(estimate_100):
    r = treesens.check(treesens.load_model(MODEL), vary=["worst_area"], gap=0.49, memory_mb=100)
    stage = r.stats["box_search"]
    assert stage["status"] == "skipped" and "memory limit leaves" in stage["reason"]


def test_the_default_limit_holds_a_check_s_box_stage_tables_too(estimate_100, monkeypatch):
    monkeypatch.setattr(memory, "available_mb", lambda: 100.0 / memory.DEFAULT_SHARE)
    r = treesens.check(treesens.load_model(MODEL), vary=["worst_area"], gap=0.49)
    stage = r.stats["box_search"]
    assert stage["status"] == "skipped" and "memory limit leaves" in stage["reason"]


def _audit_contract(tmp_path) -> Path:
    sens = tmp_path / "audit.sens"
    sens.write_text(
        f'model "{MODEL}"\nfeatures from "{EXAMPLES / "breast_cancer_details.csv"}"\n\n'
        f'audit texture {{\n  data "{EXAMPLES / "breast_cancer_rows.csv"}"\n'
        "  vary worst_texture\n  gap 0.1\n  expect audit flippable <= 5%\n}\n"
    )
    return sens


def test_treesens_test_judges_an_audit_refused_for_memory_an_error(tmp_path, capsys):
    from treesens.interfaces.cli.main import main

    assert main(["test", str(_audit_contract(tmp_path)), "--memory-mb", "1"]) == 1
    out = capsys.readouterr().out
    (line,) = [ln for ln in out.splitlines() if ln.startswith(("PASS", "ERROR", "FAIL"))]
    assert line.startswith("ERROR") and "refused: breast_cancer_xgb.json (60 trees" in line


def test_treesens_test_judges_an_audit_within_the_memory_limit(tmp_path, capsys):
    from treesens.interfaces.cli.main import main

    assert main(["test", str(_audit_contract(tmp_path)), "--memory-mb", "4000"]) == 0
    assert capsys.readouterr().out.startswith("PASS")


def test_the_audit_cli_refuses_in_one_line_with_exit_code_2(capsys):
    from treesens.interfaces.cli.main import main

    args = ["audit", str(MODEL), "--data", str(EXAMPLES / "breast_cancer_rows.csv")]
    assert main([*args, "--vary", "worst_texture", "--memory-mb", "1"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.strip().splitlines()[-1:]
    assert line.startswith("treesens: error: refused: breast_cancer_xgb.json (60 trees")


def test_the_audit_api_refuses_before_any_row_is_answered(monkeypatch):
    from treesens.questions import audit as audit_module

    monkeypatch.setattr(audit_module, "answer_blocks", lambda *a, **k: pytest.fail("answered"))
    with pytest.raises(memory.MemoryRefused, match="^refused: breast_cancer_xgb.json"):
        treesens.audit(MODEL, EXAMPLES / "breast_cancer_rows.csv", ["worst_texture"], memory_mb=1)


def test_an_audit_s_solver_rows_are_asked_under_its_memory_limit(monkeypatch):
    from treesens.questions import audit_solve

    limits = []

    def recorded(ens, q, **kw):
        limits.append(kw.get("memory_mb"))
        return ask.answer(ens, q, **kw)

    monkeypatch.setattr(audit_solve, "answer", recorded)
    ens = treesens.load_model(MODEL)
    ds = load_data(EXAMPLES / "breast_cancer_rows.csv", ens, "label")
    spec = make_spec(ens, ds, ["worst_texture"], make_target(ens, 0.1, None, None))
    # max_candidates=1: the enumeration leaves every row to the solver
    run = AuditRun(n_rows=2, timeout_per_row=5, max_candidates=1, memory_mb=4000)
    run_audit(ens, ds, spec, run)
    assert limits == [4000, 4000]


def test_treesens_run_refuses_an_audit_block_over_its_memory_limit(tmp_path, capsys):
    from treesens.interfaces.cli.main import main

    assert main(["run", str(_audit_contract(tmp_path)), "--memory-mb", "1"]) == 1
    err = capsys.readouterr().err
    assert "error: refused: breast_cancer_xgb.json (60 trees" in err and "done: 1 error" in err


def _tables_too_large_for(feature: str, monkeypatch) -> None:
    """The box search's pair tables of ``feature`` past what the limit leaves (others fit)."""
    real = max_gap.box_largest_gap

    def searched(ens, q, *a, **k):
        if feature in q.vary:
            raise pair_boxes.PairTablesTooLarge("the pair tables would hold more than 7 MB")
        return real(ens, q, *a, **k)

    monkeypatch.setattr(max_gap, "box_largest_gap", searched)


def test_a_multiclass_sweep_errs_on_the_query_whose_tables_do_not_fit_and_answers_the_others(
    monkeypatch,
):
    _tables_too_large_for("alcohol", monkeypatch)
    rs = treesens.sweep(
        str(EXAMPLES / "wine_xgb.json"), features=["alcohol", "flavanoids"], max_gap=True,
        classes=("0", "any"), timeout=60, progress=False,
    )  # fmt: skip
    assert [(r.query, str(r.status)) for r in rs] == [
        ("alcohol", "error"),
        ("flavanoids", "sensitive"),
    ]
    assert "the pair tables would hold more than 7 MB" in rs[0].error
