"""``pd.get_dummies(drop_first=True)``: the columns of one feature whose dropped category
is the row with no 1. The data shows the group (no row holds two 1s), so it is inferred,
and a pair never mixes two of its categories; where no group is known, a witness that
sets together columns no data row sets together says so."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.answers.result import INSENSITIVE, SENSITIVE
from treesens.compiler.errors import InputError
from treesens.tests.conftest import treesens_here

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def site_model(tmp_path_factory):
    """Sites east (dropped), north, south; north and south each raise the score, so a row
    with both set (which no data row has) scores highest of all."""
    from xgboost import XGBClassifier

    rng = np.random.default_rng(0)
    n = 2000
    site = rng.choice(["east", "north", "south"], n)
    age = rng.uniform(20, 70, n)
    logit = -3 + 2.5 * (site == "north") + 2.5 * (site == "south") + 0.03 * (age - 45)
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-logit))).astype(int)
    X = pd.get_dummies(pd.DataFrame({"age": age, "site": site}), drop_first=True, dtype=float)
    model = XGBClassifier(n_estimators=30, max_depth=2, n_jobs=1).fit(X, y)
    folder = tmp_path_factory.mktemp("site")
    model.save_model(folder / "m.json")
    X.assign(label=y).to_csv(folder / "data.csv", index=False)
    return model, X, folder


def _mixes(witness: dict) -> bool:
    return any(x.get("site_north") == 1 and x.get("site_south") == 1 for x in witness.values())


def test_columns_of_one_prefix_never_both_one_are_a_group_with_a_dropped_category(site_model):
    model, X, _ = site_model
    ens = treesens.load_model(model, data=X)
    site = ens.features[ens.feature_index("site")]
    assert site.categories == ("north", "south", "(dropped)")
    assert "site = site_north, site_south, and '(dropped)': all of them 0" in ens.source


def test_the_drop_first_example_answers_with_a_row_the_data_could_hold(site_model):
    model, X, _ = site_model
    res = treesens.check(treesens.load_model(model, data=X), vary="site_north,site_south", gap=0.3)
    assert res.features == ["site"]
    assert res.status == INSENSITIVE or (res.validated and not _mixes(res.witness))


def test_the_drop_first_example_from_the_cli_names_the_group_and_mixes_no_categories(site_model):
    _, _, folder = site_model
    out = treesens_here(
        "check", "m.json", "--data", "data.csv", "--vary", "site_north,site_south", "--gap", "0.3",
        "--json", cwd=folder,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert "one-hot groups inferred" in res["model"] and res["features"] == ["site"]
    assert res["status"] == "insensitive" or (res["validated"] and not _mixes(res["witness"]))


def _brute_force_sensitive(model, X: pd.DataFrame, gap: float) -> bool:
    """Whether two real rows of site (east, north, south as get_dummies writes them) at
    one age within the data's range get P(1) >= 0.5 + gap and <= 0.5 - gap. Every age
    cell of the trees meeting that range holds the range's low end or one of its
    thresholds (XGBoost sends x < t left, so t lies in the cell right of it)."""
    lo, hi = X["age"].min(), X["age"].max()
    trees = model.get_booster().trees_to_dataframe()
    cuts = trees.loc[trees.Feature == "age", "Split"].astype(float).unique()
    ages = np.unique(np.r_[lo, hi, cuts[(cuts >= lo) & (cuts <= hi)]])
    sites = {"east": (0.0, 0.0), "north": (1.0, 0.0), "south": (0.0, 1.0)}
    p = np.array([
        model.predict_proba(
            pd.DataFrame({"age": ages, "site_north": n, "site_south": s})[X.columns]
        )[:, 1]
        for n, s in sites.values()
    ])  # fmt: skip
    return bool(np.any((p.max(axis=0) >= 0.5 + gap) & (p.min(axis=0) <= 0.5 - gap)))


@pytest.mark.parametrize("gap", [0.1, 0.2, 0.3])
def test_the_drop_first_answer_agrees_with_brute_force_over_the_real_rows(site_model, gap):
    model, X, _ = site_model
    res = treesens.check(treesens.load_model(model, data=X), vary="site", gap=gap, data=X)
    assert res.status in (SENSITIVE, INSENSITIVE)
    assert (res.status == SENSITIVE) == _brute_force_sensitive(model, X, gap)
    assert res.status == INSENSITIVE or (res.validated and not _mixes(res.witness))


def test_columns_that_the_data_sets_together_are_not_a_group():
    from sklearn.tree import DecisionTreeClassifier

    X = pd.DataFrame({"has_car": [0, 1, 1, 0] * 10, "has_house": [0, 0, 1, 1] * 10}, dtype=float)
    model = DecisionTreeClassifier(random_state=0).fit(X, X.sum(axis=1) >= 1)
    assert treesens.load_model(model, data=X).feature_names == ["has_car", "has_house"]


def test_a_witness_setting_together_columns_no_data_row_sets_together_says_so(site_model):
    model, X, _ = site_model
    ens = treesens.load_model(model, data=X, groups={})
    res = treesens.check(ens, vary="site_north,site_south", gap=0.3, data=X)
    assert res.status == SENSITIVE and _mixes(res.witness)
    assert any("site_north and site_south to 1 together" in note for note in res.notes)
    assert "note: x1 sets site_north and site_south" in str(res)


def test_a_witness_the_data_could_hold_has_no_note(site_model):
    model, X, _ = site_model
    res = treesens.check(treesens.load_model(model, data=X), vary="site", gap=0.3, data=X)
    assert res.notes == []


def test_a_group_given_as_text_may_name_its_dropped_category(site_model):
    model, X, _ = site_model
    ens = treesens.load_model(model, data=X, groups="site=site_north,site_south dropped east")
    assert ens.features[ens.feature_index("site")].categories == ("north", "south", "east")


def test_groups_none_turns_inference_off(site_model):
    model, X, _ = site_model
    assert "site_north" in treesens.load_model(model, data=X, groups="none").feature_names


def test_a_group_text_without_columns_is_one_error():
    with pytest.raises(InputError, match="dropped CATEGORY"):
        treesens.load_model(
            EXAMPLES / "breast_cancer_xgb.json", groups="site= dropped east", auto_details=False
        )
