"""Data files given with ``--data``: naming a model's generic features, the label column,
and malformed CSVs reported as one line naming the file and the line."""

from __future__ import annotations

import json
import warnings
from dataclasses import replace

import numpy as np
import pytest

import treesens
from treesens.compiler.errors import DataNote, InputError
from treesens.readers.data import load_data
from treesens.tests.conftest import treesens_here

NAMES = ["alpha", "beta", "gamma"]


@pytest.fixture(scope="module")
def xy():
    rng = np.random.default_rng(0)
    X = rng.random((60, 3))
    y = (X[:, 0] + 0.3 * X[:, 1] > 0.6).astype(int)
    return X, y


@pytest.fixture(scope="module")
def data_csv(tmp_path_factory, xy):
    X, y = xy
    lines = ["alpha,beta,gamma,label"]
    lines += [f"{a!r},{b!r},{c!r},{t}" for (a, b, c), t in zip(X.tolist(), y.tolist())]
    path = tmp_path_factory.mktemp("data") / "abc.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def lgb_file(tmp_path_factory, xy):
    """A LightGBM model trained on an array: its features are Column_0, Column_1, ..."""
    lgb = pytest.importorskip("lightgbm")
    X, y = xy
    params = {"objective": "binary", "num_leaves": 4, "verbose": -1, "num_threads": 1}
    booster = lgb.train(params, lgb.Dataset(X, label=y), 4)
    path = tmp_path_factory.mktemp("lgb") / "model.txt"
    booster.save_model(str(path))
    return path


@pytest.fixture(scope="module")
def sk_file(tmp_path_factory, xy):
    """A scikit-learn forest fitted on an array: its features are x0, x1, ..."""
    joblib = pytest.importorskip("joblib")
    from sklearn.ensemble import RandomForestClassifier

    X, y = xy
    est = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    path = tmp_path_factory.mktemp("sk") / "model.joblib"
    joblib.dump(est, path)
    return path


@pytest.fixture(scope="module")
def xgb_file(tmp_path_factory, xy):
    """An XGBoost model trained on an array: its features are f0, f1, ..."""
    xgb = pytest.importorskip("xgboost")
    X, y = xy
    params = {"max_depth": 2, "objective": "binary:logistic", "nthread": 1}
    booster = xgb.train(params, xgb.DMatrix(X, label=y), 4)
    path = tmp_path_factory.mktemp("xgb") / "model.json"
    booster.save_model(str(path))
    return path


def _write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    return path


# ---- data naming a model's generic features -------------------------------------------


def test_data_names_the_features_of_a_lightgbm_model_without_names(lgb_file, data_csv):
    assert treesens.load_model(lgb_file, data=data_csv).feature_names == NAMES


def test_data_names_the_features_of_a_sklearn_model_without_names(sk_file, data_csv):
    assert treesens.load_model(sk_file, data=data_csv, trust_pickle=True).feature_names == NAMES


def test_cli_varies_a_feature_of_a_lightgbm_model_by_its_name_in_the_data(lgb_file, data_csv):
    p = treesens_here(
        "check", lgb_file, "--data", data_csv, "--vary", "alpha", "--gap", "0.1", "--json"
    )
    assert p.returncode == 0, p.stderr
    assert '"features": ["alpha"]' in p.stdout


def test_data_with_another_feature_count_than_a_generic_model_is_an_input_error(tmp_path, lgb_file):
    data = _write(tmp_path, "two.csv", "alpha,beta,label\n0.1,0.2,0\n")
    with pytest.raises(InputError, match=r"two\.csv:1: 2 feature columns .* model has 3 features"):
        treesens.load_model(lgb_file, data=data)


def test_data_with_the_generic_names_in_another_order_keeps_them(tmp_path, xgb_file):
    data = _write(tmp_path, "f.csv", "f1,f0,f2,label\n0.2,0.1,0.3,0\n")
    ens = treesens.load_model(xgb_file, data=data)
    assert ens.feature_names == ["f0", "f1", "f2"]
    assert load_data(data, ens).X.tolist() == [[0.1, 0.2, 0.3]]


def test_data_naming_some_generic_features_by_their_own_names_is_an_input_error(tmp_path, xgb_file):
    # in order, f1 would be read as f0, f2 as f1 and id as f2
    data = _write(tmp_path, "f.csv", "f1,f2,id,label\n0.2,0.3,7,0\n")
    with pytest.raises(
        InputError, match=r"f\.csv:1: the data names 2 of the model's 3 .* no column for 'f0'"
    ):
        treesens.load_model(xgb_file, data=data)


def test_cli_audit_of_data_naming_some_generic_features_exits_2_in_one_line(tmp_path, xgb_file):
    data = _write(tmp_path, "f.csv", "f1,f2,id,label\n0.2,0.3,7,0\n")
    p = treesens_here("audit", xgb_file, "--data", data, "--vary", "f1", "--gap", "0.1")
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and "no column for 'f0'" in p.stderr


def test_a_generic_models_data_frame_naming_some_features_is_not_read_in_order(xgb_file):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"f1": [0.2], "f2": [0.3], "id": [7.0]})
    with pytest.raises(InputError, match=r"no column for feature\(s\) 'f0'"):
        load_data(frame, treesens.load_model(xgb_file))


def test_an_array_of_another_width_than_the_model_is_an_error_saying_so(xgb_file):
    ens = treesens.load_model(xgb_file)
    with pytest.raises(
        InputError, match=r"<array>: an array of 4 columns for a model of 3 features"
    ):
        load_data(np.zeros((2, 4)), ens)


def test_data_without_a_header_row_for_a_generic_model_says_it_needs_one(tmp_path, xgb_file):
    data = _write(tmp_path, "rows.csv", "0.25,0.5,0.75\n0.1,0.2,0.3\n")
    with pytest.raises(InputError, match=r"rows\.csv:1: its first line holds numbers, not column"):
        treesens.load_model(xgb_file, data=data)


def test_data_without_a_header_row_for_a_named_model_says_it_needs_one(tmp_path, xgb_file):
    data = _write(tmp_path, "rows.csv", "0.25,0.5,0.75\n0.1,0.2,0.3\n")
    ens = treesens.load_model(xgb_file, data=_write(tmp_path, "named.csv", "a,b,c\n1,2,3\n"))
    with pytest.raises(InputError, match=r"first line holds numbers, not column names"):
        load_data(data, ens)


def test_a_mismatch_without_a_label_column_asked_says_nothing_of_one(tmp_path, xgb_file):
    ens = treesens.load_model(xgb_file, data=_write(tmp_path, "named.csv", "a,b,c\n1,2,3\n"))
    with pytest.raises(InputError) as e:
        load_data(_write(tmp_path, "other.csv", "z,b,c\n1,2,3\n"), ens, label=None)
    assert "no column for feature(s) 'a'" in str(e.value) and "label" not in str(e.value)


def test_data_of_another_model_gets_no_guess_at_which_column_is_which(tmp_path, xgb_file):
    ens = treesens.load_model(xgb_file, data=_write(tmp_path, "named.csv", "a,b,c\n1,2,3\n"))
    with pytest.raises(InputError) as e:
        load_data(_write(tmp_path, "other.csv", "age,bmi,cost\n1,2,3\n"), ens)
    assert "did you mean" not in str(e.value)


def test_data_whose_names_differ_only_in_case_gets_them_suggested(tmp_path, xgb_file):
    ens = treesens.load_model(xgb_file, data=_write(tmp_path, "named.csv", "a,b,c\n1,2,3\n"))
    with pytest.raises(InputError, match="did you mean 'A' for 'a', 'B' for 'b', 'C' for 'c'"):
        load_data(_write(tmp_path, "upper.csv", "A,B,C\n1,2,3\n"), ens)


# ---- the label column -------------------------------------------------------------------


def test_only_a_label_column_named_by_the_user_must_be_in_the_data(tmp_path, xgb_file):
    data = _write(tmp_path, "nolabel.csv", "f0,f1,f2\n0.1,0.2,0.3\n")
    ens = treesens.load_model(xgb_file)
    assert load_data(data, ens).y is None  # the default label column may be absent
    with pytest.raises(InputError, match=r"nolabel\.csv:1: no label column 'target'"):
        load_data(data, ens, label="target")


def test_a_label_column_not_in_the_data_is_guessed_among_the_columns_that_are_not_features(
    tmp_path, xy
):
    xgb = pytest.importorskip("xgboost")
    X, y = xy
    booster = xgb.train({"max_depth": 2}, xgb.DMatrix(X, label=y, feature_names=NAMES), 2)
    booster.save_model(str(tmp_path / "named.json"))
    ens = treesens.load_model(tmp_path / "named.json")
    data = _write(tmp_path, "d.csv", "alpha,beta,gamma,outcome\n0.1,0.2,0.3,1\n")
    said = r"no label column 'target' \(did you mean 'outcome'\?\) \(the columns not the model's"
    with pytest.raises(InputError, match=said + " features: outcome\\)"):
        load_data(data, ens, label="target")


def test_cli_label_column_absent_from_the_data_exits_2_naming_file_and_column(xgb_file, data_csv):
    p = treesens_here(
        "check", xgb_file, "--data", data_csv, "--label", "nope", "--vary", "alpha", "--gap", "0.1"
    )
    assert p.returncode == 2
    assert "Traceback" not in p.stderr
    assert "abc.csv:1: no label column 'nope'" in p.stderr


# ---- malformed CSV ----------------------------------------------------------------------


@pytest.mark.parametrize("row", ["0.1,0.2,0", "0.1,0.2,0.3,0,9"], ids=["short", "long"])
def test_a_data_row_with_another_field_count_than_the_header_names_its_line(
    tmp_path, xgb_file, row
):
    n = len(row.split(","))
    data = _write(tmp_path, "ragged.csv", f"f0,f1,f2,label\n0.1,0.2,0.3,0\n\n{row}\n")
    ens = treesens.load_model(xgb_file)
    with pytest.raises(InputError, match=rf"ragged\.csv:4: {n} fields, the header has 4$"):
        load_data(data, ens)


def test_a_model_file_given_as_data_is_said_to_be_json_not_data(tmp_path, xgb_file):
    ens = treesens.load_model(xgb_file)
    with pytest.raises(InputError, match=r":1: a JSON file \(a model\?\), not a data file"):
        load_data(xgb_file, ens)


def test_a_details_file_given_as_data_is_said_to_be_one(tmp_path):
    from pathlib import Path

    examples = Path(__file__).resolve().parents[2] / "examples"
    ens = treesens.load_model(examples / "breast_cancer_xgb.json")
    with pytest.raises(InputError, match=r"a details file \(feature,name,lb,ub: .*--details"):
        load_data(examples / "breast_cancer_details.csv", ens)


def test_a_details_file_given_as_data_names_no_generic_features(tmp_path, xgb_file):
    # a model of 3 generic features took its columns feature, name, lb as their names
    path = _write(tmp_path, "d.csv", "feature,name,lb\n0,a,0\n1,b,0\n2,c,0\n")
    with pytest.raises(InputError, match=r"d\.csv:1: a details file \(feature,name,lb,ub"):
        treesens.load_model(xgb_file, data=path)


def test_a_parquet_file_named_otherwise_is_read_as_parquet(tmp_path, xy, xgb_file, monkeypatch):
    # it was named "a Parquet file, not text" in the CSV reader's error, and not read
    import pandas as pd

    X, y = xy
    frame = pd.DataFrame(X, columns=["f0", "f1", "f2"]).assign(label=y)
    path = tmp_path / "rows.dat"
    path.write_bytes(b"PAR1\x15\x04\xff\xfe")  # a Parquet file's first bytes
    monkeypatch.setattr(pd, "read_parquet", lambda p: frame if p == path else None)
    assert load_data(path, treesens.load_model(xgb_file)).X.shape == (60, 3)


@pytest.mark.parametrize("sep", [";", "\t"])
def test_a_data_file_separated_by_another_character_says_so_at_its_header(tmp_path, xgb_file, sep):
    # a spreadsheet's export with decimal commas: 0,1 would split into two fields
    text = sep.join(["f0", "f1", "f2", "label"]) + "\n" + sep.join(["0,1", "0,2", "0,3", "0"])
    data = _write(tmp_path, "semi.csv", text + "\n")
    ens = treesens.load_model(xgb_file)
    with pytest.raises(InputError, match=r"semi\.csv:1: the header is one field holding"):
        load_data(data, ens)


def test_data_rows_all_one_field_longer_than_the_header_are_an_input_error(tmp_path, xgb_file):
    # pandas would take the first field for an index and shift every column by one
    data = _write(tmp_path, "shift.csv", "f0,f1,f2,label\n7,0.1,0.2,0.3,0\n8,0.4,0.5,0.6,1\n")
    ens = treesens.load_model(xgb_file)
    with pytest.raises(InputError, match=r"shift\.csv:2: 5 fields, the header has 4"):
        load_data(data, ens)


def test_cli_ragged_data_exits_2_naming_the_line(tmp_path, xgb_file):
    data = _write(tmp_path, "data.csv", "f0,f1,f2,label\n0.1,0.2,0.3,0\n0.1,0.2,0\n")
    p = treesens_here("check", xgb_file, "--data", data, "--vary", "f0", "--gap", "0.1")
    assert p.returncode == 2
    assert "Traceback" not in p.stderr
    assert "data.csv:3: 3 fields, the header has 4" in p.stderr


def test_a_data_header_naming_a_column_twice_is_an_input_error(tmp_path, xgb_file):
    data = _write(tmp_path, "dup.csv", "f0,f1,f0,label\n0.1,0.2,0.3,0\n")
    ens = treesens.load_model(xgb_file)
    with pytest.raises(InputError, match=r"dup\.csv:1: column name 'f0' appears twice"):
        load_data(data, ens)


def test_python_api_check_varies_a_generic_feature_by_its_name_in_the_data(lgb_file, data_csv):
    res = treesens.check(str(lgb_file), vary="alpha", gap=0.1, data=str(data_csv), timeout=60)
    assert res.features == ["alpha"]
    assert res.status in ("sensitive", "insensitive")


def test_a_sens_file_varies_a_generic_feature_by_its_name_in_the_data(tmp_path, lgb_file, data_csv):
    from treesens.language import load_queries

    sens = _write(
        tmp_path,
        "q.sens",
        f'model "{lgb_file}"\ndata "{data_csv}"\nquery q {{\n  vary alpha\n  gap 0.1\n}}\n',
    )
    sf = load_queries(sens)
    assert sf.ensemble.feature_names[:3] == ["alpha", "beta", "gamma"]
    assert sf.select(None)[0].vary == ("alpha",)


def test_a_data_value_beyond_float32_for_a_float32_model_names_file_line_and_column(
    tmp_path, xgb_file
):
    data = _write(tmp_path, "big.csv", "f0,f1,f2,label\n0.1,0.2,0.3,0\n0.1,1e308,0.3,1\n")
    ens = treesens.load_model(xgb_file)
    with pytest.raises(InputError, match=r"big\.csv:3: column 'f1': 1e\+308 is beyond"):
        load_data(data, ens)


def test_a_data_cell_error_names_its_line_in_the_file_the_header_and_blank_lines_counted(
    tmp_path, xgb_file
):
    data = _write(tmp_path, "d.csv", "f0,f1,f2,label\n0.1,0.2,0.3,0\n\n0.1,abc,0.3,1\n")
    with pytest.raises(InputError, match=r"d\.csv:4: column 'f1': 'abc' is not a number$"):
        load_data(data, treesens.load_model(xgb_file))


def test_a_data_row_after_a_quoted_field_of_two_lines_is_named_at_the_line_it_starts(
    tmp_path, xgb_file
):
    text = 'f0,f1,f2,label\n0.1,0.2,0.3,"0\n"\n0.1,abc,0.3,1\n'
    with pytest.raises(InputError, match=r"d\.csv:4: column 'f1'"):
        load_data(_write(tmp_path, "d.csv", text), treesens.load_model(xgb_file))


def test_a_data_frame_cell_error_names_its_row_from_1(xgb_file):
    import pandas as pd

    frame = pd.DataFrame({"f0": [0.1, 0.1], "f1": ["0.2", "abc"], "f2": [0.3, 0.3]})
    with pytest.raises(InputError, match=r"<DataFrame>: column 'f1', row 2: 'abc' is not"):
        load_data(frame, treesens.load_model(xgb_file))


def test_a_data_value_beyond_float32_is_read_for_a_model_of_doubles(tmp_path, lgb_file):
    data = _write(tmp_path, "big.csv", "Column_0,Column_1,Column_2,label\n0.1,1e308,0.3,0\n")
    assert load_data(data, treesens.load_model(lgb_file)).X[0, 1] == 1e308


def test_data_written_with_its_index_to_a_generic_model_says_so(tmp_path, xgb_file):
    # was "4 feature columns besides the label column 'label', but the model has 3" alone
    data = _write(tmp_path, "rows.csv", ",a,b,c,label\n0,0.1,0.2,0.3,0\n1,0.4,0.5,0.6,1\n")
    with pytest.raises(InputError, match=r"DataFrame's index.*to_csv\(path, index=False\)"):
        treesens.load_model(xgb_file, data=str(data))


def test_an_index_column_the_model_does_not_use_is_named_as_one(tmp_path, xgb_file):
    data = _write(tmp_path, "rows.csv", ",f0,f1,f2,label\n0,0.1,0.2,0.3,0\n1,0.4,0.5,0.6,1\n")
    notes = _data_notes(lambda: treesens.check(xgb_file, vary="f1", gap=0.05, data=str(data)))
    assert any("'Unnamed: 0' is a DataFrame's index" in n for n in notes)


def test_a_gzipped_data_file_is_named_as_compressed(tmp_path, xgb_file):
    # was "rows.csv.gz:1: byte 0x8b is not UTF-8 text"
    import gzip

    data = tmp_path / "rows.csv.gz"
    data.write_bytes(gzip.compress(b"f0,f1,f2,label\n0.1,0.2,0.3,0\n"))
    with pytest.raises(InputError, match=r"rows\.csv\.gz: a gzip-compressed file, not text"):
        load_data(str(data), treesens.load_model(xgb_file))


def test_a_spreadsheet_given_as_data_is_named_as_one(tmp_path, xgb_file):
    data = tmp_path / "rows.xlsx"
    data.write_bytes(b"PK\x03\x04" + bytes(range(128, 256)))
    with pytest.raises(InputError, match=r"an \.xlsx workbook is one\), not text: .*\(a CSV"):
        load_data(str(data), treesens.load_model(xgb_file))


def test_a_data_file_that_is_not_utf8_names_the_line(tmp_path, xgb_file):
    data = tmp_path / "latin1.csv"
    data.write_bytes(b"f0,f1,f2,label\n0.1,0.2,0.3,0\n0.1,0.2,0.3\xe9,1\n")
    with pytest.raises(InputError, match=r"latin1\.csv:3: byte 0xe9 is not UTF-8 text"):
        load_data(data, treesens.load_model(xgb_file))


def test_a_dataframe_naming_a_column_twice_is_an_input_error(xgb_file):
    import pandas as pd

    frame = pd.DataFrame([[0.1, 0.2, 0.3, 0.4]], columns=["f0", "f1", "f2", "f0"])
    with pytest.raises(InputError, match=r"<DataFrame>: column name 'f0' appears twice"):
        load_data(frame, treesens.load_model(xgb_file))


# ---- a feature no tree reads needs no column -------------------------------------------


@pytest.fixture(scope="module")
def unread_f0(tmp_path_factory, xy):
    """An XGBoost model whose f0 no tree reads (its training column was constant), and
    its data without a column for f0 (as the chen2019 breast_cancer benchmark's)."""
    xgb = pytest.importorskip("xgboost")
    X, y = xy
    X = np.column_stack([np.zeros(len(X)), X[:, :2]])
    params = {"max_depth": 2, "objective": "binary:logistic", "nthread": 1}
    booster = xgb.train(params, xgb.DMatrix(X, label=y), 4)
    folder = tmp_path_factory.mktemp("unread")
    booster.save_model(str(folder / "model.json"))
    lines = ["f1,f2,label"] + [f"{a!r},{b!r},{t}" for (_, a, b), t in zip(X.tolist(), y)]
    (folder / "rows.csv").write_text("\n".join(lines) + "\n")
    ens = treesens.load_model(folder / "model.json")
    assert not any((t.feature == 0).any() for t in ens.trees)
    return folder / "model.json", folder / "rows.csv"


def test_cli_check_of_data_without_a_column_no_tree_reads_answers_with_a_note(unread_f0):
    model, rows = unread_f0
    p = treesens_here("check", model, "--data", rows, "--vary", "f1", "--gap", "0.05")
    assert p.returncode == 0, p.stderr
    assert "no column for 'f0', which no tree reads: every row holds 0 there" in p.stderr


def test_cli_audit_of_data_without_a_column_no_tree_reads_answers_with_a_note(unread_f0):
    model, rows = unread_f0
    p = treesens_here("audit", model, "--data", rows, "--vary", "f1", "--gap", "0.05")
    assert p.returncode == 0, p.stderr
    assert "no column for 'f0', which no tree reads" in p.stderr


def test_a_pair_shows_the_value_the_note_names_for_a_feature_the_data_lacks(tmp_path, unread_f0):
    model, rows = unread_f0
    details = _write(tmp_path, "d.csv", "feature,name,lb,ub\n0,f0,2,3\n1,f1,0,1\n2,f2,0,1\n")
    flags = ("--data", rows, "--details", details, "--vary", "f1", "--gap", "0.05", "--json")
    p = treesens_here("check", model, *flags)
    assert "every row holds 2 there" in p.stderr
    witness = json.loads(p.stdout)["witness"]
    assert witness["x1"]["f0"] == witness["x2"]["f0"] == 2


def test_a_feature_the_data_lacks_takes_the_bounds_of_the_model_it_is_read_for(unread_f0):
    model, rows = unread_f0
    ens = treesens.load_model(model)
    bounded = ens.with_features((replace(ens.features[0], lb=2.0, ub=3.0), *ens.features[1:]))
    assert load_data(rows, ens).X[:, 0].tolist() == [0.0] * 60
    assert load_data(rows, bounded).X[:, 0].tolist() == [2.0] * 60


def test_data_without_a_column_a_tree_reads_is_an_input_error_naming_only_it(tmp_path, unread_f0):
    model, _ = unread_f0
    data = _write(tmp_path, "f2.csv", "f2,label\n0.3,0\n")
    with pytest.raises(InputError, match=r"no column for 'f1': ") as e:
        treesens.load_model(model, data=data)
    assert "'f0'" not in str(e.value)


# ---- every route says the data's notes once -------------------------------------------

UNREAD_NOTE = "no column for 'f0', which no tree reads"


def _data_notes(call) -> list[str]:
    """The DataNote warnings a call gives, every one kept."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [str(w.message) for w in caught if issubclass(w.category, DataNote)]


def test_cli_check_says_a_data_note_once(unread_f0):
    model, rows = unread_f0
    p = treesens_here("check", model, "--data", rows, "--vary", "f1", "--gap", "0.05")
    assert p.stderr.count(UNREAD_NOTE) == 1


def test_api_check_says_a_data_note_once_as_a_warning(unread_f0):
    model, rows = unread_f0
    notes = _data_notes(lambda: treesens.check(model, vary="f1", gap=0.05, data=rows))
    assert [UNREAD_NOTE in n for n in notes] == [True]


def test_api_sweep_says_a_data_note_once_as_a_warning(unread_f0):
    model, rows = unread_f0
    notes = _data_notes(lambda: treesens.sweep(model, gap=0.05, data=rows, timeout=10))
    assert [UNREAD_NOTE in n for n in notes] == [True]


def test_api_audit_says_a_data_note_once_as_a_warning(unread_f0):
    model, rows = unread_f0
    notes = _data_notes(lambda: treesens.audit(model, rows, ["f1"], gap=0.05))
    assert [UNREAD_NOTE in n for n in notes] == [True]


def test_a_sens_run_says_a_data_note_once(tmp_path, unread_f0):
    model, rows = unread_f0
    sens = _write(
        tmp_path,
        "q.sens",
        f'model "{model}"\ndata "{rows}" label label\nquery q {{\n  vary f1\n  gap 0.05\n}}\n',
    )
    p = treesens_here("run", sens)
    assert p.returncode == 0, p.stderr
    assert p.stderr.count(UNREAD_NOTE) == 1


def test_a_data_file_read_again_under_another_name_is_named_as_given(
    data_csv, xgb_file, monkeypatch
):
    ens = treesens.load_model(xgb_file, data=data_csv)
    monkeypatch.chdir(data_csv.parent)
    assert load_data(data_csv.name, ens).source == data_csv.name
    assert load_data(str(data_csv), ens).source == str(data_csv)


def test_cli_report_says_a_data_note_once(tmp_path, unread_f0):
    # its ranking, checks and audit each read the data: the note was said four times
    model, rows = unread_f0
    argv = ["--data", rows, "--protected", "f1", "--budget", "20", "--out", tmp_path / "r.html"]
    p = treesens_here("report", model, *argv)
    assert p.returncode == 0, p.stderr
    assert p.stderr.count(UNREAD_NOTE) == 1


def test_api_report_says_a_data_note_once_as_a_warning(tmp_path, unread_f0):
    model, rows = unread_f0
    out = tmp_path / "r.html"
    call = lambda: treesens.report(model, rows, protected=["f1"], budget=20, out=out)  # noqa: E731
    notes = _data_notes(call)
    assert [UNREAD_NOTE in n for n in notes] == [True]
