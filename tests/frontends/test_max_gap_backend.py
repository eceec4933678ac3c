"""A max gap the box search answers says so: no solver ran, so its result's backend is
the box search's name (`boxes`, as `--backend boxes` names it), its verdict line says
"the box search, no solver", and the line before it does not say a solver is solving."""

from __future__ import annotations

from pathlib import Path

import treesens
from treesens.interfaces.cli.main import main

MODEL = Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_xgb.json"
ARGS = [str(MODEL), "--vary", "mean_texture"]


def test_a_max_gap_the_box_search_answers_has_the_box_search_as_its_backend():
    r = treesens.max_gap(str(MODEL), vary=["mean_texture"])
    assert r.max_gap["method"] == "boxes" and r.backend == "boxes"


def test_its_verdict_line_names_the_box_search_not_the_solver_asked(capsys):
    main(["check", *ARGS, "--max-gap"])
    verdict = capsys.readouterr().out.splitlines()[0]
    assert "backend boxes (the box search, no solver)" in verdict and "cpsat" not in verdict


def test_the_line_before_a_max_gap_says_the_box_search_solves_it(capsys):
    main(["check", *ARGS, "--max-gap"])
    err = capsys.readouterr().err
    assert "solving with the box search (cpsat where it does not apply)..." in err


def test_the_line_before_a_check_names_its_backend(capsys):
    main(["check", *ARGS, "--gap", "0.3"])
    assert "solving with cpsat..." in capsys.readouterr().err


def test_compare_names_each_backend_asked_and_the_box_search_that_answered(capsys):
    main(["compare", *ARGS, "--kind", "max_gap", "--backends", "cpsat,highs"])
    err = capsys.readouterr().err
    assert "  cpsat (answered by boxes): sensitive" in err
    assert "  highs (answered by boxes): sensitive" in err
