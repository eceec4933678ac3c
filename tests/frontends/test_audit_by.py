"""Grouping an audit by any column of the data, or by values given separately."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from treesens.compiler.errors import InputError
from treesens.questions.audit import audit, format_summary, summary
from treesens.tests.conftest import treesens_here

REPO = __import__("pathlib").Path(__file__).resolve().parents[2]
MODEL = REPO / "examples" / "breast_cancer_xgb.json"
ROWS = REPO / "examples" / "breast_cancer_rows.csv"


@pytest.fixture(scope="module")
def rows_with_site(tmp_path_factory) -> str:
    df = pd.read_csv(ROWS)
    df["site"] = np.where(np.arange(len(df)) % 3 == 0, "north", "south")
    path = tmp_path_factory.mktemp("by") / "rows.csv"
    df.to_csv(path, index=False)
    return str(path)


def test_audit_groups_by_a_data_column_the_model_does_not_use(rows_with_site):
    df = audit(str(MODEL), rows_with_site, ["mean_texture"], gap=0.1, by="site")
    table = summary(df, by="site")
    site = table[table["group"] == "site"]
    assert dict(zip(site["value"], site["rows"], strict=True)) == {"north": 67, "south": 133}


def test_audit_groups_by_a_series_given_separately():
    site = pd.Series(np.where(np.arange(200) % 2 == 0, "a", "b"), name="site")
    df = audit(str(MODEL), str(ROWS), ["mean_texture"], gap=0.1, by=site)
    assert list(summary(df, by="site").query("group == 'site'")["rows"]) == [100, 100]


def test_values_given_for_by_must_be_one_per_row():
    with pytest.raises(InputError, match="3 values for 200 data rows"):
        audit(str(MODEL), str(ROWS), ["mean_texture"], gap=0.1, by=["a", "b", "c"])


def test_by_a_column_that_is_not_there_suggests_the_closest(rows_with_site):
    with pytest.raises(InputError, match="did you mean 'site'"):
        audit(str(MODEL), rows_with_site, ["mean_texture"], gap=0.1, by="sitee")


def test_cli_audit_by_a_column_the_model_does_not_use(rows_with_site):
    p = treesens_here(
        "audit",
        MODEL,
        "--data",
        rows_with_site,
        "--vary",
        "mean_texture",
        "--gap",
        "0.1",
        "--by",
        "site",
    )
    assert p.returncode == 0, p.stderr
    assert "site       north" in p.stdout and "site       south" in p.stdout


def test_cli_names_the_data_columns_the_model_does_not_use_in_a_note(rows_with_site):
    p = treesens_here(
        "audit", MODEL, "--data", rows_with_site, "--vary", "mean_texture", "--limit", "5"
    )
    assert p.returncode == 0, p.stderr
    assert "columns the model does not use" in p.stderr and "'site'" in p.stderr


def test_the_summary_s_columns_stay_aligned_under_a_by_column_of_a_long_name():
    site = pd.Series(np.where(np.arange(200) % 2 == 0, "a", "b"), name="SeniorCitizenSite")
    df = audit(str(MODEL), str(ROWS), ["mean_texture"], gap=0.1, by=site)
    header, *lines = format_summary(summary(df, by="SeniorCitizenSite")).splitlines()
    end = header.index("rows") + len("rows")  # the rows column is right-aligned to here
    assert any(ln.startswith("SeniorCitizenSite ") for ln in lines)
    for ln in lines:
        assert ln[end - 1].isdigit() and ln[end] == " ", ln
