"""A race among the backends treesens compare compares: the list's commas separate the
backends compared, a race's own backends are joined by '+' (race:cpsat+highs), and the
race is one row, answered by its winner."""

from __future__ import annotations

import json
from pathlib import Path

import treesens
from treesens.questions.compare import backend_list
from treesens.tests.conftest import treesens_here

MODEL = str(Path(treesens.__file__).parent / "examples" / "breast_cancer_xgb.json")


def test_a_race_in_a_list_of_backends_keeps_its_own_backends():
    assert backend_list("cpsat,race:cpsat+highs") == ["cpsat", "race:cpsat+highs"]


def test_the_api_list_takes_a_race_written_with_commas_as_one_item():
    assert backend_list(["cpsat", "race:cpsat,highs"]) == ["cpsat", "race:cpsat,highs"]


def test_a_backend_takes_a_race_joined_by_plus_as_compare_writes_it():
    from treesens.driver.race_spec import race_backends

    assert race_backends("race:cpsat+highs") == race_backends("race:cpsat,highs")


def test_compare_answers_a_race_as_one_row_beside_the_other_backends():
    r = treesens_here(
        "compare", MODEL, "--vary", "worst_radius", "--gap", "0.2",
        "--backends", "cpsat,race:cpsat+highs", "--json",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert [row["status"] for row in rows] == ["sensitive", "sensitive"]
    assert rows[1]["backend"] in (
        "cpsat",
        "highs",
        "race:cpsat+highs",
    )  # its winner, or the race the heuristic answered


def test_compare_on_a_sens_query_compares_the_backends_its_backend_line_lists(tmp_path):
    sens = tmp_path / "q.sens"
    sens.write_text(
        f"model {json.dumps(MODEL)}\n"
        "query q {\n  vary worst_radius\n  backend cpsat, race:cpsat+highs\n}\n"
    )
    r = treesens_here("compare", sens, "--query", "q", "--json")
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert [row["stats"]["asked"]["backend"] for row in rows] == ["cpsat", "race:cpsat+highs"]
