"""A sweep over every feature of a .sens file leaves out the features its constraints
hold to one value for both inputs (a query varying them alone would be vacuous), with a
warning naming them; a sweep that names such a feature is still an error at the
constraint."""

from __future__ import annotations

from pathlib import Path

import pytest

from treesens.compiler.errors import TreesensWarning
from treesens.language import SensError, load_queries

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HEAD = (
    f'model "{EXAMPLES / "breast_cancer_xgb.json"}"\n'
    f'features from "{EXAMPLES / "breast_cancer_details.csv"}"\n'
    "defaults {\n  gap 0.2\n  FIX\n}\n"
)


def _load(tmp_path, sweep: str, fix: str = "fix mean_texture = 20"):
    p = tmp_path / "s.sens"
    p.write_text(HEAD.replace("FIX", fix) + sweep)
    return load_queries(p)


def _varied(sens) -> list[tuple[str, ...]]:
    return [tuple(q.vary) for q in sens.queries]


def test_a_sweep_of_each_feature_leaves_out_a_fixed_one(tmp_path):
    with pytest.warns(TreesensWarning, match="sweep all leaves out mean_texture"):
        sens = _load(tmp_path, "sweep all {\n  vary each feature\n}\n")
    assert ("mean_texture",) not in _varied(sens)
    assert len(sens.queries) == 29


def test_a_sweep_of_subsets_of_every_feature_leaves_out_a_fixed_one(tmp_path):
    with pytest.warns(TreesensWarning, match="leaves out mean_texture"):
        sens = _load(tmp_path, "sweep pairs {\n  vary subsets of 2 sample 40\n}\n")
    assert all("mean_texture" not in fs for fs in _varied(sens))


def test_a_sweep_leaves_out_a_feature_held_equal_by_a_relation(tmp_path):
    fix = "where x1.mean_texture == x2.mean_texture"
    with pytest.warns(TreesensWarning, match="leaves out mean_texture"):
        sens = _load(tmp_path, "sweep all {\n  vary each feature\n}\n", fix)
    assert ("mean_texture",) not in _varied(sens)


def test_a_sweep_keeps_a_feature_its_constraints_let_differ(tmp_path):
    fix = "where x1.mean_texture <= x2.mean_texture and mean_radius in [10, 20]"
    sens = _load(tmp_path, "sweep all {\n  vary each feature\n}\n", fix)
    assert ("mean_texture",) in _varied(sens)


def test_a_sweep_naming_a_fixed_feature_is_an_error(tmp_path):
    with pytest.raises(SensError, match="x1 and x2 cannot differ"):
        _load(tmp_path, "sweep some {\n  vary each of mean_radius, mean_texture\n}\n")


def test_a_sweep_leaving_out_a_feature_one_valued_in_the_data_names_the_data(tmp_path):
    import pandas as pd

    rows = pd.read_csv(EXAMPLES / "breast_cancer_rows.csv").head(40)
    rows["mean_texture"] = 20.0
    rows.to_csv(tmp_path / "d.csv", index=False)
    head = f'model "{EXAMPLES / "breast_cancer_xgb.json"}"\ndata "d.csv"\nbounds from data\n'
    p = tmp_path / "s.sens"
    p.write_text(head + "sweep all {\n  vary each feature\n}\n")
    said = r"sweep all leaves out mean_texture \(one value in every row of \S*d\.csv, the data"
    with pytest.warns(TreesensWarning, match=said):
        sens = load_queries(p)
    assert ("mean_texture",) not in _varied(sens)
