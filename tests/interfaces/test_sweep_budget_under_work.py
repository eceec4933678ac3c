"""`sweep --budget S --work N`: the budget's passes give each query a time limit of a
few seconds, which ends a query before its work budget does, so the verdicts follow the
load that --work was asked to take out; the sweep's first line says so, and how to get a
verdict that does not."""

from __future__ import annotations

from pathlib import Path

from treesens.interfaces.cli.main import main

MODEL = str(Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_xgb.json")
SWEEP = ["sweep", MODEL, "--features", "radius_error", "--gap", "0.1"]


def test_a_sweep_within_a_budget_under_work_says_its_time_limits_may_decide(capsys):
    main([*SWEEP, "--work", "20k", "--budget", "10"])
    first = capsys.readouterr().err.splitlines()[0]
    assert "may end a query before its --work does" in first and "give --work alone" in first


def test_a_sweep_within_a_budget_alone_says_nothing_of_work(capsys):
    main([*SWEEP, "--budget", "10"])
    assert "--work" not in capsys.readouterr().err
