"""Data whose label column is not called ``label`` (adult's ``income``): the rows are
read without labels, which no answer reads, and the note naming the columns the model
does not use says which of them looks like the label, and how to name it; ``by label``
on such data points to that column rather than to a feature whose name is near."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from treesens.compiler.errors import InputError
from treesens.questions.audit import audit
from treesens.readers.data import data_notes, load_data
from treesens.readers.load import load_model
from treesens.tests.conftest import treesens_here

REPO = __import__("pathlib").Path(__file__).resolve().parents[2]
MODEL = REPO / "examples" / "breast_cancer_xgb.json"
ROWS = REPO / "examples" / "breast_cancer_rows.csv"

pytest.importorskip("xgboost")


@pytest.fixture(scope="module")
def ens():
    return load_model(MODEL)


def _rows(tmp_path, **columns) -> str:
    """The shipped rows with their label column called ``diagnosis``, plus ``columns``."""
    df = pd.read_csv(ROWS).rename(columns={"label": "diagnosis"})
    for name, values in columns.items():
        df[name] = values
    path = tmp_path / "rows.csv"
    df.to_csv(path, index=False)
    return str(path)


def _note(ens, path) -> str:
    [note] = data_notes(load_data(path, ens))
    return note


def test_a_label_under_another_name_is_named_as_looking_like_the_label(ens, tmp_path):
    note = _note(ens, _rows(tmp_path))
    assert "no column is named 'label', the label column's default name" in note
    assert "'diagnosis' (2 values) looks like the label" in note
    assert "(label='diagnosis' names it)" in note


def test_a_column_of_many_values_is_not_taken_for_a_label(ens, tmp_path):
    note = _note(ens, _rows(tmp_path, patient=np.arange(200)))
    assert "'patient'" in note and "'patient' (" not in note


def test_two_columns_of_few_values_are_both_named(ens, tmp_path):
    note = _note(ens, _rows(tmp_path, site=np.where(np.arange(200) % 3 == 0, "a", "b")))
    assert "'diagnosis' (2 values) or 'site' (2 values) looks like the label" in note


def test_data_with_its_label_column_named_label_has_no_such_note(ens):
    assert not data_notes(load_data(ROWS, ens))


def test_a_label_named_with_label_gets_no_note(ens, tmp_path):
    assert not data_notes(load_data(_rows(tmp_path), ens, "diagnosis"))


def test_by_label_without_that_column_points_to_the_column_that_looks_like_it(tmp_path):
    with pytest.raises(InputError, match="'diagnosis' looks like the label") as e:
        audit(str(MODEL), _rows(tmp_path), ["mean_texture"], gap=0.1, by="label")
    assert "did you mean" not in str(e.value)


def test_cli_audit_notes_the_column_that_looks_like_the_label(tmp_path):
    argv = ["--vary", "mean_texture", "--gap", "0.1", "--limit", "5"]
    p = treesens_here("audit", MODEL, "--data", _rows(tmp_path), *argv)
    assert p.returncode == 0, p.stderr
    assert "'diagnosis' (2 values) looks like the label" in p.stderr
    assert "(--label diagnosis names it)" in p.stderr


def test_the_label_flag_s_help_says_data_may_lack_the_column():
    p = treesens_here("audit", "--help")
    assert "no answer reads labels" in " ".join(p.stdout.split())
