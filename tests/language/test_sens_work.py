"""``work N`` in .sens files (a work budget, answers/work.py): how it is read, printed and
checked, and that it reaches the query's plan."""

from __future__ import annotations

from pathlib import Path

import pytest

from treesens.language import SensError, Work, format_sens, load_queries, parse

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HEAD = 'model "m.json"\n'


def test_work_takes_a_suffix():
    ast = parse(HEAD + "query q { vary a work 4M }")
    assert ast.items[1].body[1] == Work(4_000_000)


def test_work_is_printed_with_its_suffix():
    text = format_sens(parse(HEAD + "defaults { work 250000 }\nquery q { vary a }\n"))
    assert "  work 250k\n" in text


def test_work_zero_is_an_error():
    with pytest.raises(SensError, match="work takes a whole number of work units"):
        parse(HEAD + "query q { vary a work 0 }")


def test_work_in_defaults_reaches_every_query_s_plan(tmp_path):
    p = tmp_path / "w.sens"
    p.write_text(
        f'model "{EXAMPLES / "breast_cancer_xgb.json"}"\n'
        "defaults { work 1.5M }\nquery q { vary radius_error gap 0.1 }\n"
    )
    (q,) = load_queries(p).queries
    assert q.plan.work == 1_500_000


def test_work_on_a_backend_that_ends_on_the_clock_is_an_error_at_the_query(tmp_path):
    p = tmp_path / "w.sens"
    p.write_text(
        f'model "{EXAMPLES / "breast_cancer_xgb.json"}"\n'
        "query q {\n  vary radius_error\n  backend highs\n  work 4M\n}\n"
    )
    with pytest.raises(SensError, match="not counted by backend highs") as e:
        load_queries(p)
    assert e.value.line == 2
