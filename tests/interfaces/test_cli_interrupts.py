"""A signal whose first raise was lost (in a finaliser) is raised again where the command
asks between two steps, as the exception its handler raises: Ctrl-C as KeyboardInterrupt,
SIGTERM and SIGHUP as Terminated; a command that ends by a plain KeyboardInterrupt after
SIGTERM (a search that carried its partial answer on one) still exits 128 + SIGTERM."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from treesens.interfaces.cli.interrupts import (
    Terminated,
    interrupts_recorded,
    raise_if_interrupted,
    record,
)
from treesens.interfaces.cli.main import main

MODEL = str(Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_xgb.json")


def test_nothing_is_raised_when_no_signal_came():
    with interrupts_recorded():
        raise_if_interrupted()


def test_a_lost_sigterm_is_raised_again_as_terminated():
    with interrupts_recorded():
        record(signal.SIGTERM)
        with pytest.raises(Terminated) as e:
            raise_if_interrupted()
    assert e.value.signum == signal.SIGTERM


def test_a_lost_ctrl_c_is_raised_again_as_a_keyboard_interrupt():
    with interrupts_recorded():
        record(signal.SIGINT)
        with pytest.raises(KeyboardInterrupt) as e:
            raise_if_interrupted()
    assert not isinstance(e.value, Terminated)


def test_a_signal_recorded_by_an_earlier_command_is_forgotten():
    with interrupts_recorded():
        record(signal.SIGTERM)
    with interrupts_recorded():
        raise_if_interrupted()


def test_a_plain_keyboard_interrupt_after_sigterm_exits_as_sigterm(tmp_path, capsys):
    plugin = tmp_path / "after_sigterm.py"
    plugin.write_text(
        "import signal\n"
        "from treesens.interfaces.cli.interrupts import record\n"
        "record(signal.SIGTERM)\n"
        "raise KeyboardInterrupt\n"
    )
    assert main(["check", MODEL, "--vary", "mean_radius", "--plugin", str(plugin)]) == 143
    assert capsys.readouterr().err.strip().splitlines()[-1] == "treesens: terminated by SIGTERM"


def test_run_prints_the_answer_so_far_of_a_max_gap_ctrl_c_ends(tmp_path, capsys, monkeypatch):
    from treesens.search import gap_search

    real = gap_search.seed_floor

    def seed_then_ctrl_c(*args, **kw):
        real(*args, **kw)
        raise KeyboardInterrupt

    monkeypatch.setattr(gap_search, "seed_floor", seed_then_ctrl_c)
    sens = tmp_path / "texture.sens"
    sens.write_text(f'model "{MODEL}"\nquery texture {{\n  vary mean_texture\n  gap max\n}}\n')
    assert main(["run", str(sens), "--json"]) == 128 + signal.SIGINT
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and json.loads(out[0])["max_gap"]["stopped_by"] == "interrupted"


def test_an_audit_cut_short_says_its_out_file_holds_the_answers_for_resume(
    tmp_path, capsys, monkeypatch
):
    # was "treesens: interrupted" alone, the rows answered in --out unmentioned
    from treesens.interfaces.cli import audit as audit_cmd

    def ctrl_c(*_a, **_k):
        raise KeyboardInterrupt

    monkeypatch.setattr(audit_cmd, "run_audit", ctrl_c)
    out = tmp_path / "rows.jsonl"
    rows = str(Path(MODEL).with_name("breast_cancer_rows.csv"))
    argv = ["audit", MODEL, "--data", rows, "--vary", "mean_radius", "--gap", "0.1"]
    assert main([*argv, "--out", str(out)]) == 130
    assert capsys.readouterr().err.strip().splitlines()[-2:] == [
        f"the answers so far are in {out}: run the audit again with --resume {out} to ask the rest",
        "treesens: interrupted",
    ]


def test_a_report_cut_short_says_which_logs_keep_its_answers_for_a_second_run(
    tmp_path, capsys, monkeypatch
):
    # was "treesens: interrupted" alone, the ranking kept in r.rank.jsonl unmentioned
    from treesens.interfaces.cli import report as report_cmd

    def ranked_then_ctrl_c(*_a, **_k):
        (tmp_path / "r.rank.jsonl").write_text("")
        raise KeyboardInterrupt

    monkeypatch.setattr(report_cmd, "report", ranked_then_ctrl_c)
    rows = str(Path(MODEL).with_name("breast_cancer_rows.csv"))
    assert main(["report", MODEL, "--data", rows, "--out", str(tmp_path / "r.html")]) == 130
    assert capsys.readouterr().err.strip().splitlines()[-2:] == [
        f"the answers so far are in {tmp_path / 'r.rank.jsonl'}: the same command run again "
        "reuses them",
        "treesens: interrupted",
    ]


def _compile_broken(monkeypatch, signum: int | None, raised_in: str) -> None:
    """check's run, faked: ``signum`` recorded (or none), then a RuntimeError raised as a
    compile raises it in ``raised_in`` (a module's name) once a signal broke into it."""
    from treesens.interfaces.cli import check

    def run(_args):
        if signum is not None:
            record(signum)
        error = "raise RuntimeError(\"no compiled object yet for <Library 'sweep_from'>\")"
        exec(error, {"__name__": raised_in})

    monkeypatch.setattr(check, "run", run)


def test_a_compile_error_after_sigterm_exits_as_sigterm(monkeypatch, capsys):
    _compile_broken(monkeypatch, signal.SIGTERM, "numba.core.codegen")
    assert main(["check", MODEL, "--vary", "mean_radius"]) == 143
    assert capsys.readouterr().err.strip().splitlines()[-1] == "treesens: terminated by SIGTERM"


def test_a_compile_error_with_no_signal_is_an_internal_error(monkeypatch, capsys):
    _compile_broken(monkeypatch, None, "llvmlite.binding.ffi")
    assert main(["check", MODEL, "--vary", "mean_radius"]) == 1
    assert "internal error: RuntimeError" in capsys.readouterr().err


def test_an_error_of_treesens_own_after_a_signal_is_an_internal_error(monkeypatch, capsys):
    _compile_broken(monkeypatch, signal.SIGINT, "treesens.search.gap_kernel")
    assert main(["check", MODEL, "--vary", "mean_radius"]) == 1
    assert "internal error: RuntimeError" in capsys.readouterr().err
