"""An audit's breakdown column (``--by``, ``summary(df, by=)``, the report's protected
feature, a contract's ``by``): a column of a few values, text or categories keeps one
group per value; a numeric column of more than MAX_VALUES values is grouped by its
deciles, each labelled by the lowest and highest value of its rows."""

from __future__ import annotations

import numpy as np
import pandas as pd

from treesens.questions.audit import audit, summary
from treesens.questions.audit_groups import MAX_VALUES, binned
from treesens.tests.conftest import treesens_here
from treesens.tests.frontends.test_audit_by import MODEL, ROWS


def test_a_breakdown_column_of_few_values_keeps_them():
    few = pd.Series([float(i % MAX_VALUES) for i in range(100)])
    assert binned(few).equals(few)


def test_a_text_breakdown_column_keeps_its_values():
    sites = pd.Series([f"site {i}" for i in range(100)])
    assert binned(sites).equals(sites)


def test_a_breakdown_interval_names_the_lowest_and_highest_value_of_its_rows():
    labels = binned(pd.Series([float(i) for i in range(100)]))
    assert labels[0] == "[0, 9]" and labels[99] == "[90, 99]"


def test_a_value_a_tenth_of_the_rows_take_is_a_breakdown_group_of_its_own():
    gains = pd.Series([0.0] * 270 + [float(i) for i in range(1, 31)])  # capital gains
    labels = binned(gains)
    assert (labels == "0").sum() == 270 and labels.nunique() == 11


def test_intervals_that_read_alike_in_four_digits_get_more():
    ids = pd.Series([1_000_000.0 + i for i in range(100)])  # all 1e+06 to four digits
    assert binned(ids).nunique() == 10


def test_a_missing_value_stays_missing():
    values = pd.Series([float(i) for i in range(99)] + [np.nan])
    assert binned(values).isna().tolist() == [False] * 99 + [True]


def test_the_summary_groups_a_continuous_column_by_its_deciles():
    df = audit(str(MODEL), str(ROWS), ["mean_texture"], gap=0.1, by="mean_radius", limit=40)
    groups = summary(df).query("group == 'mean_radius'")
    assert len(groups) == 10 and groups["rows"].sum() == 40
    assert all(v.startswith("[") for v in groups["value"])


def test_cli_audit_by_a_continuous_column_prints_one_line_per_decile():
    p = treesens_here(
        "audit", MODEL, "--data", ROWS, "--vary", "mean_texture", "--gap", "0.1",
        "--by", "mean_radius", "--limit", "40",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert sum(line.startswith("mean_radius") for line in p.stdout.splitlines()) == 10


def test_a_contracts_audit_by_a_continuous_column_counts_its_deciles():
    from treesens.questions.contract import Expectation, group_counts

    frame = pd.DataFrame({"status": ["not flippable"] * 100, "age": np.arange(100.0)})
    counts = group_counts(Expectation("audit", limit=2, percent=True, by="age"), frame)
    assert [c.name for c in counts][:2] == ["age=[0, 9]", "age=[10, 19]"] and len(counts) == 10


def test_a_breakdown_column_of_few_scaled_values_names_them_in_four_digits():
    # a min-max scaled column (german credit's Duration) read 0.10294117647058824
    df = pd.DataFrame(
        {
            "status": ["insensitive"] * 4,
            "decision": [0, 0, 1, 1],
            "duration": [7 / 68, 7 / 68, 0.25, 1.0],
        }
    )
    names = summary(df, by="duration").query("group == 'duration'")["value"]
    assert list(names) == ["0.1029", "0.25", "1"]


def test_breakdown_values_that_read_alike_in_four_digits_get_more():
    df = pd.DataFrame(
        {"status": ["insensitive"] * 2, "decision": [0, 1], "x": [0.123451, 0.123459]}
    )
    names = summary(df, by="x").query("group == 'x'")["value"]
    assert list(names) == ["0.12345", "0.12346"]
