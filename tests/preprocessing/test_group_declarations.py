"""One-hot groups declared where features are declared: a .sens file, a details CSV,
the command line."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from treesens.language import SensError, format_sens, load_queries, parse
from treesens.readers.load import load_model
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


def test_bounds_from_data_infers_the_groups_as_bounds_data_does(race_files):
    (race_files / "b.sens").write_text(
        'model "race.json"\ndata "race.csv"\nbounds from data\nquery q { vary race }\n'
    )
    cli = load_model(race_files / "race.json", data=race_files / "race.csv", bounds="data")
    sf = load_queries(race_files / "b.sens")
    assert sf.ensemble.feature_names == cli.feature_names == ["age", "race"]
    assert sf.ensemble.features[1].categories == ("A", "B", "C")


def test_groups_none_keeps_the_one_hot_columns_with_bounds_from_data(race_files):
    (race_files / "n.sens").write_text(
        'model "race.json"\ndata "race.csv"\nbounds from data\ngroups none\n'
        "query q { vary race_A }\n"
    )
    names = load_queries(race_files / "n.sens").ensemble.feature_names
    assert names == ["age", "race_A", "race_B", "race_C"]


def test_groups_none_and_groups_infer_is_an_error_at_the_second(race_files):
    (race_files / "two.sens").write_text(
        'model "race.json"\ndata "race.csv"\ngroups infer\ngroups none\nquery q { vary age }\n'
    )
    with pytest.raises(SensError, match=r"two.sens:4:.*use one or the other"):
        load_queries(race_files / "two.sens")


def test_groups_none_round_trips_through_fmt():
    ast = parse(SENS.replace("group race = race_A, race_B, race_C", "groups none"))
    assert parse(format_sens(ast)) == ast


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
