"""A max-gap result that ended unproven says so in its repr, str() and HTML view."""

from __future__ import annotations

from treesens.answers.result import SENSITIVE, Result

UNPROVEN = {"lower": 0.447454, "upper": 0.49, "tolerance": 1e-4, "proven": False, "steps": 9}


def _unproven(message: str = "") -> Result:
    return Result("q", SENSITIVE, "cpsat", ["a"], 0.447454, max_gap=dict(UNPROVEN), message=message)


def test_repr_of_an_unproven_max_gap_gives_its_bounds_as_not_proven():
    assert "max gap in [0.447454, 0.49], not proven" in repr(_unproven())


def test_str_of_an_unproven_max_gap_gives_its_bounds_as_not_proven():
    assert "max gap in [0.447454, 0.49], not proven" in str(_unproven())


def test_html_of_an_unproven_max_gap_gives_its_bounds_as_not_proven():
    assert "max gap in [0.447454, 0.49], not proven" in _unproven()._repr_html_()


def test_repr_of_a_proven_max_gap_does_not_say_not_proven():
    res = _unproven()
    res.max_gap["proven"] = True
    assert "not proven" not in repr(res)


def test_str_does_not_repeat_the_bounds_its_message_gives():
    line = "max gap in [0.447454, 0.49], not proven (time limit; tolerance 0.0001)"
    assert str(_unproven(line)).count("max gap in") == 1


def test_a_max_gap_that_ended_in_error_shows_no_check_s_gap():
    from pathlib import Path

    import treesens

    model = Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_xgb.json"
    r = treesens.max_gap(str(model), vary=["mean_texture"], memory_mb=1)  # refused
    assert r.status == "error"
    assert "g=" not in str(r) and "varying mean_texture, max gap asked, backend" in str(r)


def _refused_max_gap(model_file: str, **kw) -> dict:
    """The JSON of a max gap refused up front (memory_mb=1): an error before any bound."""
    import json
    from pathlib import Path

    import treesens

    model = Path(__file__).resolve().parents[2] / "examples" / model_file
    r = treesens.max_gap(str(model), memory_mb=1, **kw)
    assert r.status == "error"
    return json.loads(r.to_json())


def test_a_binary_max_gap_in_error_states_gap_0_not_a_check_s_default():
    d = _refused_max_gap("breast_cancer_xgb.json", vary=["mean_texture"])
    assert (d["gap"], d["gap_kind"]) == (0.0, "prob") and "max_gap" not in d


def test_a_multiclass_max_gap_in_error_states_the_ratio_1():
    d = _refused_max_gap("wine_xgb.json", vary=["proline"], classes=(0, 1))
    assert (d["gap"], d["gap_kind"]) == (1.0, "prob")


def test_a_regressor_s_max_gap_in_error_states_a_change_of_0():
    d = _refused_max_gap("gamma_stump.json", vary=["a"])
    assert (d["gap"], d["gap_kind"]) == (0.0, "change")
