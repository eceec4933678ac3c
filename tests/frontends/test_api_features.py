"""One way to name features in Python: a name, a list of names, or indices, in every
question; errors name the Python keyword."""

from __future__ import annotations

import pytest

import treesens
from treesens.compiler.errors import InputError, TreesensWarning

REPO = __import__("pathlib").Path(__file__).resolve().parents[2]
MODEL = str(REPO / "examples" / "breast_cancer_xgb.json")
ROWS = str(REPO / "examples" / "breast_cancer_rows.csv")


@pytest.fixture(scope="module")
def model():
    return treesens.load_model(MODEL)


def test_check_takes_a_feature_index(model):
    r = treesens.check(model, vary=[20], gap=0.2, timeout=30)
    assert r.features == [model.feature_names[20]]


def test_check_takes_one_name_as_a_string(model):
    assert treesens.check(model, vary="worst_radius", gap=0.2, timeout=30).features == [
        "worst_radius"
    ]


def test_sweep_takes_one_name_as_a_string_not_its_characters(model):
    rows = treesens.sweep(model, features="worst_radius", timeout=30, progress=False)
    assert [r.features for r in rows] == [["worst_radius"]]


def test_sweep_takes_feature_indices(model):
    rows = treesens.sweep(model, features=[0, 1], timeout=30, progress=False)
    assert [r.features for r in rows] == [[model.feature_names[0]], [model.feature_names[1]]]


def test_audit_takes_a_feature_index(model):
    df = treesens.audit(MODEL, ROWS, 1, gap=0.1, limit=3)
    assert f"x2_{model.feature_names[1]}" in df.columns


def test_an_index_out_of_range_names_the_python_keyword(model):
    with pytest.raises(InputError, match=r"^vary: feature index 99 out of range"):
        treesens.check(model, vary=[99])


def test_a_float_index_is_an_input_error_naming_the_keyword(model):
    with pytest.raises(InputError, match=r"^vary: 20.0 is neither a feature name nor an index"):
        treesens.check(model, vary=20.0)


def test_an_unknown_name_names_the_keyword_and_the_closest(model):
    with pytest.raises(InputError, match=r"features: unknown feature 'worst_radiu'.*worst_radius"):
        treesens.sweep(model, features=["worst_radiu"], progress=False)


def test_classes_errors_name_no_cli_flag():
    wine = treesens.load_model(str(REPO / "examples" / "wine_xgb.json"))
    with pytest.raises(InputError) as e:
        treesens.check(wine, vary=[0], gap=2, classes="0,1,2")
    assert "--" not in str(e.value)


def test_a_name_lightgbm_rewrote_is_found_under_the_original_spelling():
    lightgbm = pytest.importorskip("lightgbm")
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer(as_frame=True)
    est = lightgbm.LGBMClassifier(n_estimators=5, verbose=-1).fit(data.data, data.target)
    with pytest.warns(TreesensWarning, match="read as the feature 'mean_texture'"):
        r = treesens.check(est, vary=["mean texture"], gap=0.1, timeout=30)
    assert r.features == ["mean_texture"]
