"""--solver-param passes CP-SAT parameters through to the solver (researchers' tuning)."""

from __future__ import annotations

import json
from pathlib import Path

from treesens.interfaces.cli.main import main

MODEL = str(Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_xgb.json")


def _check(capsys, *flags):
    code = main(["check", MODEL, "--vary", "mean_texture", "--gap", "0.2", "--json", *flags])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else None), err


def test_a_valid_parameter_reaches_the_solver(capsys):
    code, r, _ = _check(capsys, "--no-heuristic", "--solver-param", "linearization_level=2")
    assert code == 0 and r["status"] in ("sensitive", "insensitive")
    assert r["stats"].get("found_by") in (None, "cpsat")


def test_an_unknown_parameter_is_an_error_result_naming_it(capsys):
    code, r, _ = _check(capsys, "--no-heuristic", "--solver-param", "no_such_field=1")
    assert code == 1 and r["status"] == "error" and "no_such_field" in r["error"]


def test_a_parameter_without_a_value_is_bad_input(capsys):
    code, _, err = _check(capsys, "--solver-param", "linearization_level")
    assert code == 2 and "NAME=VALUE" in err


def test_parameters_for_another_backend_are_bad_input(capsys):
    code, _, err = _check(capsys, "--backend", "z3", "--solver-param", "linearization_level=2")
    assert code == 2 and "--backend cpsat" in err


def test_an_enum_parameter_is_accepted_by_its_member_name(capsys):
    code, r, _ = _check(capsys, "--no-heuristic", "--solver-param", "search_branching=FIXED_SEARCH")
    assert code == 0 and r["status"] in ("sensitive", "insensitive")


def test_an_enum_parameter_is_accepted_by_its_number(capsys):
    code, r, _ = _check(capsys, "--no-heuristic", "--solver-param", "search_branching=4")
    assert code == 0 and r["status"] in ("sensitive", "insensitive")


def test_an_enum_parameter_outside_its_members_is_an_error_result_listing_them(capsys):
    code, r, _ = _check(capsys, "--no-heuristic", "--solver-param", "search_branching=NO_SUCH")
    assert code == 1 and r["status"] == "error" and "FIXED_SEARCH" in r["error"]


def test_cp_sat_s_own_probing_can_be_restored_with_the_same_verdict(capsys):
    _, default, _ = _check(capsys, "--no-heuristic")
    code, r, _ = _check(capsys, "--no-heuristic", "--solver-param", "cp_model_probing_level=2")
    assert code == 0 and r["status"] == default["status"]
