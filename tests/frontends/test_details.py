"""Feature declarations: details CSVs given, found beside the model, and data column names."""

from __future__ import annotations

import math

import numpy as np
import pytest

import treesens
from treesens.compiler.errors import InputError


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    import xgboost as xgb

    rng = np.random.default_rng(0)
    X = rng.random((80, 3))
    y = (X[:, 0] > 0.5).astype(int)
    b = xgb.train(
        {"max_depth": 2, "objective": "binary:logistic", "nthread": 1},
        xgb.DMatrix(X, label=y, feature_names=["a", "b", "c"]),
        3,
    )
    d = tmp_path_factory.mktemp("m")
    path = d / "model.json"
    b.save_model(path)
    return path


def test_details_beside_the_model_naming_its_features_give_bounds(model_file):
    (model_file.parent / "details.csv").write_text(
        "feature,name,lb,ub\n0,a,0,1\n1,b,0,2\n2,c,-1,1\n"
    )
    ens = treesens.load_model(model_file)
    assert [(f.lb, f.ub) for f in ens.features] == [(0, 1), (0, 2), (-1, 1)]
    assert "bounds from" in ens.source


def test_a_details_file_given_is_named_in_the_models_source(tmp_path, model_file):
    given = tmp_path / "mine.csv"
    given.write_text("feature,name,lb,ub\n0,a,0,1\n1,b,0,2\n2,c,-1,1\n")
    ens = treesens.load_model(model_file, details=given, auto_details=False)
    assert ens.source.endswith(f"(bounds from {given})")


def test_details_beside_the_model_with_other_names_are_ignored(model_file):
    (model_file.parent / "details.csv").write_text(
        "feature,name,lb,ub\n0,x,0,1\n1,y,0,2\n2,z,-1,1\n"
    )
    ens = treesens.load_model(model_file)
    assert all(math.isinf(f.lb) for f in ens.features)


def test_auto_details_can_be_switched_off(model_file):
    (model_file.parent / "details.csv").write_text(
        "feature,name,lb,ub\n0,a,0,1\n1,b,0,2\n2,c,-1,1\n"
    )
    ens = treesens.load_model(model_file, auto_details=False)
    assert all(math.isinf(f.lb) for f in ens.features)


def test_details_index_out_of_range_names_the_line(tmp_path, model_file):
    bad = tmp_path / "d.csv"
    bad.write_text("feature,name,lb,ub\n0,a,0,1\n7,b,0,1\n")
    with pytest.raises(InputError, match=r"d\.csv:3: feature index 7 out of range"):
        treesens.load_model(model_file, details=bad)


def test_details_with_a_duplicate_name_is_an_input_error(tmp_path, model_file):
    bad = tmp_path / "d.csv"
    bad.write_text("feature,name,lb,ub\n0,a,0,1\n1,a,0,1\n")
    with pytest.raises(InputError, match="used twice"):
        treesens.load_model(model_file, details=bad)


def test_details_with_crossed_bounds_is_an_input_error(tmp_path, model_file):
    bad = tmp_path / "d.csv"
    bad.write_text("feature,name,lb,ub\n0,a,2,1\n")
    with pytest.raises(InputError, match="above upper bound"):
        treesens.load_model(model_file, details=bad)


def test_bounds_under_another_column_name_are_an_input_error_not_dropped(tmp_path, model_file):
    bad = tmp_path / "d.csv"
    bad.write_text("feature,name,lower,upper\n0,a,0.2,0.8\n")
    with pytest.raises(InputError) as e:
        treesens.load_model(model_file, details=bad)
    assert e.value.message.startswith("unknown column 'lower' (the columns a details file takes")
    assert "bounds go in lb and ub" in e.value.message


def test_a_misspelt_name_column_gets_the_closest_name(tmp_path, model_file):
    # was "header has no 'name' column", the column 'names' unmentioned
    bad = tmp_path / "d.csv"
    bad.write_text("feature,names,lb,ub\n0,a,0.2,0.8\n")
    with pytest.raises(InputError, match="no 'name' column \\(did you mean 'names'\\?\\)"):
        treesens.load_model(model_file, details=bad)


def test_a_model_given_as_the_details_is_said_to_be_json(model_file):
    # was "header has no 'feature' column", naming the model's JSON keys
    with pytest.raises(InputError, match=r"a JSON file \(a model\?\), not a details file"):
        treesens.load_model(model_file, details=model_file)


def test_a_column_of_another_file_is_no_guess_for_a_missing_one(tmp_path, model_file):
    bad = tmp_path / "d.csv"
    bad.write_text("tenure,age\n1,2\n")
    with pytest.raises(InputError, match=r"d.csv:1: header has no 'feature' column \(expected"):
        treesens.load_model(model_file, details=bad)


def test_a_data_file_given_as_the_details_is_asked_whether_it_is_the_data(tmp_path, model_file):
    # was "header has no 'feature' column (expected feature,name,lb,ub)"
    data = tmp_path / "rows.csv"
    data.write_text("a,b,c,label\n0.1,0.2,0.3,1\n")
    with pytest.raises(InputError) as e:
        treesens.load_model(model_file, details=data)
    assert str(e.value) == (
        f"{data}:1: this looks like data (its header names the model's features: a, b, c), not "
        "a details file (feature,name,lb,ub): did you mean to give it as data (--data, data=)?"
    )


def test_a_data_file_of_other_column_names_is_told_by_its_label_column(tmp_path, model_file):
    data = tmp_path / "rows.csv"
    data.write_text("x,y,label\n0.1,0.2,1\n")
    with pytest.raises(
        InputError, match=r"rows.csv:1: this looks like data \(its header has a label"
    ):
        treesens.load_model(model_file, details=data)


def test_a_misspelt_column_gets_the_closest_name(tmp_path, model_file):
    bad = tmp_path / "d.csv"
    bad.write_text("feature,name,lb,ub,kinds\n0,a,0.2,0.8,real\n")
    with pytest.raises(InputError, match="unknown column 'kinds' \\(did you mean 'kind'\\?\\)"):
        treesens.load_model(model_file, details=bad)


def test_a_trailing_comma_s_unnamed_column_keeps_the_bounds(tmp_path, model_file):
    trailing = tmp_path / "d.csv"
    trailing.write_text("feature,name,lb,ub,\n0,a,0.2,0.8,\n")
    ens = treesens.load_model(model_file, details=trailing)
    assert (ens.features[0].lb, ens.features[0].ub) == (0.2, 0.8)


def test_a_column_named_twice_is_an_input_error_not_the_last_one_read(tmp_path, model_file):
    # 'lb' twice: the second (empty: unbounded) was read, the first's 0.2 dropped
    twice = tmp_path / "d.csv"
    twice.write_text("feature,name,lb,ub,LB\n0,a,0.2,0.8,\n")
    with pytest.raises(InputError, match="column 'lb' appears twice") as e:
        treesens.load_model(model_file, details=twice)
    assert e.value.where == f"{twice}:1"


def test_details_split_by_semicolons_are_said_to_be_so(tmp_path, model_file):
    bad = tmp_path / "d.csv"
    bad.write_text("feature;name;lb;ub\n0;a;0,2;0,8\n")
    with pytest.raises(InputError, match="the header is one field holding ';'"):
        treesens.load_model(model_file, details=bad)


def test_details_named_after_the_model_are_found_beside_it(tmp_path, model_file):
    model = tmp_path / "credit_xgb.json"
    model.write_bytes(model_file.read_bytes())
    (tmp_path / "credit_details.csv").write_text("feature,name,lb,ub\n0,a,0,1\n1,b,0,2\n2,c,0,3\n")
    ens = treesens.load_model(model)
    assert [f.ub for f in ens.features] == [1, 2, 3]
    assert "credit_details.csv" in ens.source


def test_the_most_specific_details_file_beside_the_model_wins(tmp_path, model_file):
    model = tmp_path / "credit_xgb.json"
    model.write_bytes(model_file.read_bytes())
    (tmp_path / "details.csv").write_text("feature,name,lb,ub\n0,a,0,9\n1,b,0,9\n2,c,0,9\n")
    (tmp_path / "credit_xgb_details.csv").write_text(
        "feature,name,lb,ub\n0,a,0,1\n1,b,0,1\n2,c,0,1\n"
    )
    assert [f.ub for f in treesens.load_model(model).features] == [1, 1, 1]


def test_details_with_only_a_header_is_an_input_error(tmp_path, model_file):
    bad = tmp_path / "d.csv"
    bad.write_text("feature,name,lb,ub\n")
    with pytest.raises(InputError, match=r"d\.csv:1: no feature rows after the header"):
        treesens.load_model(model_file, details=bad)


def test_a_directory_given_as_details_is_named_as_one(tmp_path, model_file):
    with pytest.raises(InputError, match="is a directory, not a details file"):
        treesens.load_model(str(model_file), details=str(tmp_path))


def test_details_row_with_extra_fields_names_its_line(tmp_path, model_file):
    bad = tmp_path / "d.csv"
    bad.write_text("feature,name,lb,ub\n0,a,0,1\n1,b,0,1,7\n")
    with pytest.raises(InputError, match=r"d\.csv:3: 5 fields, the header has 4$"):
        treesens.load_model(model_file, details=bad)


def test_details_declaring_a_feature_index_twice_is_an_input_error(tmp_path, model_file):
    bad = tmp_path / "d.csv"
    bad.write_text("feature,name,lb,ub\n0,a,0,1\n0,z,0,1\n")
    with pytest.raises(InputError, match=r"d\.csv:3: feature index 0 declared twice"):
        treesens.load_model(model_file, details=bad)


def test_unknown_feature_with_no_close_name_lists_the_model_features(model_file):
    from treesens.compiler.encode import resolve_features

    ens = treesens.load_model(model_file, auto_details=False)
    with pytest.raises(InputError, match=r"unknown feature 'zzz' \(known features: a, b, c\)$"):
        resolve_features(ens, ["zzz"])


def test_a_long_list_of_known_features_is_cut_and_counted():
    from treesens.compiler.errors import closest

    names = [f"feature_{i}" for i in range(30)]
    hint = closest("zzz", names, listing="known features")
    assert hint.startswith(" (known features: feature_0, feature_1, ")
    assert hint.endswith(", ... 30 in all)")
    assert len(hint) < 120


def test_details_with_a_byte_order_mark_are_read(tmp_path, model_file):
    d = tmp_path / "d.csv"
    d.write_bytes(b"\xef\xbb\xbffeature,name,lb,ub\n0,a,0,1\n")  # a spreadsheet's UTF-8
    assert treesens.load_model(model_file, details=d).features[0].ub == 1


def test_details_that_are_not_utf8_name_the_line(tmp_path, model_file):
    d = tmp_path / "d.csv"
    d.write_bytes(b"feature,name,lb,ub\n0,a\xff,0,1\n")
    with pytest.raises(InputError, match=r"d\.csv:2: byte 0xff is not UTF-8 text"):
        treesens.load_model(model_file, details=d)


def test_details_saved_as_utf16_are_named_utf16(tmp_path, model_file):
    d = tmp_path / "d.csv"
    d.write_bytes("feature,name,lb,ub\n0,a,0,1\n".encode("utf-16"))  # Excel's "Unicode text"
    with pytest.raises(InputError, match=r"d\.csv:1: the file is UTF-16 text, not UTF-8"):
        treesens.load_model(model_file, details=d)


def test_an_integer_feature_without_a_whole_number_in_its_bounds_names_the_line(
    tmp_path, model_file
):
    d = tmp_path / "d.csv"
    d.write_text("feature,name,lb,ub,kind\n0,a,0.2,0.7,integer\n")
    with pytest.raises(InputError, match=r"d\.csv:2: an integer feature has no whole number"):
        treesens.load_model(model_file, details=d)


def test_an_integer_feature_without_bounds_is_read(tmp_path, model_file):
    d = tmp_path / "d.csv"
    d.write_text("feature,name,lb,ub,kind\n0,a,,,integer\n1,b,,3,integer\n")
    assert treesens.load_model(model_file, details=d).features[1].ub == 3


def _details_notes(model_file, details, **kw) -> list[str]:
    """The notes loading the model with these details gives, every one kept."""
    import warnings

    from treesens.compiler.errors import DataNote

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        treesens.load_model(model_file, details=details, auto_details=False, **kw)
    return [str(w.message) for w in caught if issubclass(w.category, DataNote)]


def test_empty_bound_cells_are_named_in_one_note(tmp_path, model_file):
    d = tmp_path / "d.csv"
    d.write_text("feature,name,lb,ub\n0,a,0,1\n1,b,0,\n2,c,,\n")
    (note,) = _details_notes(model_file, d)
    assert note.startswith(f"{d}: no lower bound for 'c' (lb empty); no upper bound for 'b', 'c'")


def test_one_feature_left_unbounded_is_an_it_in_the_note(tmp_path, model_file):
    d = tmp_path / "d.csv"
    d.write_text("feature,name,lb,ub\n0,a,0,1\n1,b,0,\n2,c,0,1\n")
    (note,) = _details_notes(model_file, d)
    assert "(ub empty): it ranges over all reals on that side" in note


def test_a_details_file_without_an_ub_column_is_said_to_leave_features_unbounded(
    tmp_path, model_file
):
    d = tmp_path / "d.csv"
    d.write_text("feature,name,lb\n0,a,0\n1,b,0\n2,c,0\n")
    (note,) = _details_notes(model_file, d)
    assert note.startswith(f"{d}: no upper bound for 'a', 'b', 'c' (no ub column)")


def test_bounds_left_out_on_purpose_give_no_note(tmp_path, model_file):
    d = tmp_path / "d.csv"
    d.write_text("feature,name,lb,ub\n0,a,none,none\n1,b,-inf,inf\n2,c,0,1\n")
    assert _details_notes(model_file, d) == []


def test_a_binary_feature_without_bounds_gives_no_note(tmp_path, model_file):
    d = tmp_path / "d.csv"
    d.write_text("feature,name,lb,ub,kind\n0,a,,,binary\n1,b,0,1,real\n2,c,0,1,real\n")
    assert _details_notes(model_file, d) == []


def test_bounds_the_data_gives_leave_no_note(tmp_path, model_file):
    d = tmp_path / "d.csv"
    d.write_text("feature,name,lb,ub\n0,a,0,\n1,b,0,1\n2,c,0,1\n")
    rows = tmp_path / "rows.csv"
    rows.write_text("a,b,c\n0.2,0.5,0.5\n0.7,0.1,0.9\n")
    assert _details_notes(model_file, d, data=rows, bounds="data") == []


def test_a_details_dataframe_s_missing_bound_is_noted(model_file):
    import pandas as pd

    d = pd.DataFrame({"feature": [0, 1, 2], "name": list("abc"), "lb": [0, 0, None]})
    (note,) = _details_notes(model_file, d)
    assert note.startswith("<details DataFrame>: no lower bound for 'c' (lb empty); no upper")


def _sens_notes(path) -> list[str]:
    import warnings

    from treesens.compiler.errors import DataNote
    from treesens.language import load_queries

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_queries(path)
    return [str(w.message) for w in caught if issubclass(w.category, DataNote)]


def test_a_sens_features_file_s_empty_bound_is_noted_by_the_name_it_has_there(tmp_path, model_file):
    (tmp_path / "d.csv").write_text("feature,name,lb,ub\n0,a,0,1\n1,b,0,\n2,c,0,1\n")
    sens = tmp_path / "a.sens"
    sens.write_text(f'model "{model_file}"\nfeatures from "d.csv"\nquery q {{\n  vary a\n}}\n')
    (note,) = _sens_notes(sens)
    assert note.startswith("d.csv: no upper bound for 'b' (ub empty)")


def test_a_sens_feature_line_bounding_the_side_leaves_no_note(tmp_path, model_file):
    (tmp_path / "d.csv").write_text("feature,name,lb,ub\n0,a,0,1\n1,b,0,\n2,c,0,1\n")
    sens = tmp_path / "a.sens"
    sens.write_text(
        f'model "{model_file}"\nfeatures from "d.csv"\nfeature b in [0, 2]\n'
        "query q {\n  vary a\n}\n"
    )
    assert _sens_notes(sens) == []


def test_a_sens_feature_line_bounds_the_side_a_details_file_beside_the_model_left_out(
    tmp_path, model_file
):
    import shutil

    shutil.copy(model_file, tmp_path / "model.json")
    (tmp_path / "details.csv").write_text("feature,name,lb,ub\n0,a,0,1\n1,b,0,\n2,c,0,1\n")
    body = 'model "model.json"\n{}query q {{\n  vary a\n}}\n'
    (tmp_path / "a.sens").write_text(body.format(""))
    (tmp_path / "b.sens").write_text(body.format("feature b in [0, 2]\n"))
    (note,) = _sens_notes(tmp_path / "a.sens")
    assert note.startswith(f"{tmp_path / 'details.csv'}: no upper bound for 'b' (ub empty)")
    assert _sens_notes(tmp_path / "b.sens") == []
