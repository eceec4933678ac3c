"""One-hot groups declared where features are declared: a .sens file, a details CSV,
the command line."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from treesens.language import SensError, format_sens, load_queries, parse
from treesens.tests.conftest import json_lines, treesens_here


@pytest.fixture(scope="module")
def race_files(tmp_path_factory):
    from xgboost import XGBClassifier

    d = tmp_path_factory.mktemp("race")
    rng = np.random.default_rng(1)
    race = rng.choice(["A", "B", "C"], 1200)
    age = rng.integers(18, 80, 1200)
    X = pd.get_dummies(pd.DataFrame({"race": race, "age": age}), dtype=float)
    y = ((race == "B") & (age > 40)).astype(int)
    XGBClassifier(n_estimators=10, max_depth=3, n_jobs=1).fit(X, y).save_model(d / "race.json")
    X.assign(label=y).to_csv(d / "race.csv", index=False)
    (d / "groups.csv").write_text(
        "feature,name,lb,ub,kind,group\n0,age,18,79,integer,\n"
        "1,race_A,0,1,binary,race\n2,race_B,0,1,binary,race\n3,race_C,0,1,binary,race\n"
    )
    return d


SENS = """model "race.json"
data "race.csv"
group race = race_A, race_B, race_C
query q {
  vary race
  gap 0.3
  where x1.race == "B"
}
"""


def test_a_sens_group_line_makes_one_feature_with_the_columns_categories(race_files):
    (race_files / "g.sens").write_text(SENS)
    sf = load_queries(race_files / "g.sens")
    assert sf.ensemble.feature_names == ["age", "race"]
    assert sf.ensemble.features[1].categories == ("A", "B", "C")


def test_a_sens_group_line_round_trips_through_fmt():
    ast = parse(SENS + "group sex = sex_F, sex_M dropped X\n")
    assert parse(format_sens(ast)) == ast


def test_groups_infer_without_data_is_an_error_at_its_line(race_files):
    (race_files / "i.sens").write_text('model "race.json"\ngroups infer\nquery q { vary age }\n')
    with pytest.raises(SensError, match=r"i.sens:2:.*add a data line"):
        load_queries(race_files / "i.sens")


def test_a_details_group_column_groups_the_columns(race_files):
    out = treesens_here(
        "check",
        race_files / "race.json",
        "--details",
        race_files / "groups.csv",
        "--vary",
        "race",
        "--gap",
        "0.3",
        "--json",
    )
    (res,) = json_lines(out.stdout)
    assert res["features"] == ["race"] and res["witness"]["x1"]["race"] in ("A", "B", "C")


def test_groups_infer_on_the_command_line_reads_them_from_the_data(race_files):
    out = treesens_here(
        "sweep",
        race_files / "race.json",
        "--data",
        race_files / "race.csv",
        "--groups",
        "infer",
        "--gap",
        "0.3",
        "--json",
    )
    assert [r["features"] for r in json_lines(out.stdout)] == [["age"], ["race"]]


def test_a_malformed_groups_flag_is_one_line_and_exit_2(race_files):
    out = treesens_here(
        "check", race_files / "race.json", "--groups", "race:race_A", "--vary", "age"
    )
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1
    assert "NAME=COLUMN,COLUMN" in out.stderr


def test_a_groups_flag_over_a_column_that_is_no_0_1_column_is_one_line_and_exit_2(race_files):
    r = treesens_here(
        "check", str(race_files / "race.json"), "--groups", "g=age,race_A", "--vary", "g"
    )
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert "group 'g': the model splits column 'age' at age < " in lines[0]


def test_a_sens_group_over_a_column_that_is_no_0_1_column_is_an_error_at_its_line(race_files):
    (race_files / "bad.sens").write_text(
        'model "race.json"\ngroup g = age, race_A\nquery q { vary g }\n'
    )
    with pytest.raises(SensError, match=r"bad.sens:2:.*splits column 'age'"):
        load_queries(race_files / "bad.sens")
