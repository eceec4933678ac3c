"""`expect` in .sens: each kind parses, round-trips through fmt and reaches the file's
expectations; one that does not fit its block, or its model, is reported at its place."""

from __future__ import annotations

from pathlib import Path

import pytest

from treesens.language import Expect, SensError, format_sens, load_queries, parse

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
BC = EXAMPLES / "breast_cancer_xgb.json"
BC_DETAILS = EXAMPLES / "breast_cancer_details.csv"
ROWS = EXAMPLES / "breast_cancer_rows.csv"
WINE = EXAMPLES / "wine_xgb.json"
WINE_DETAILS = EXAMPLES / "wine_details.csv"


def _query(stmt: str, extra: str = "") -> str:
    return f'model "m.json"\n\nquery q {{\n  vary a\n{extra}  {stmt}\n}}\n'


def _audit(stmt: str) -> str:
    return f'model "m.json"\n\naudit r {{\n  vary a\n  {stmt}\n}}\n'


def _expect(text: str) -> Expect:
    (blk,) = [it for it in parse(text).items if hasattr(it, "body")]
    (st,) = [s for s in blk.body if isinstance(s, Expect)]
    return st


def _error(text: str) -> SensError:
    with pytest.raises(SensError) as e:
        parse(text)
    return e.value


def test_expect_insensitive_parses():
    assert _expect(_query("expect insensitive")) == Expect("insensitive")


def test_expect_sensitive_or_unknown_parses():
    assert _expect(_query("expect sensitive or unknown")) == Expect("sensitive", allow_unknown=True)


def test_expect_max_gap_parses_its_limit():
    assert _expect(_query("expect max gap <= 0.05")) == Expect("max_gap", "<=", 0.05)


def test_expect_audit_parses_a_percentage_and_a_column():
    st = _expect(_audit("expect audit flippable <= 2% by sex"))
    assert (st.kind, st.limit, st.percent, st.by.text) == ("audit", 2.0, True, "sex")


def test_expect_audit_without_a_percent_sign_is_a_number_of_rows():
    assert not _expect(_audit("expect audit flippable <= 3")).percent


@pytest.mark.parametrize(
    "text",
    [
        _query("expect insensitive or unknown"),
        _query("expect max gap <= 0.1"),
        _audit("expect audit flippable <= 2.5% by label or unknown"),
        _audit("expect audit flippable <= 0"),
    ],
)
def test_expectations_round_trip_through_fmt(text):
    assert format_sens(parse(text)) == text


def test_fmt_writes_an_expectation_canonically():
    text = 'model "m.json"\nquery q { vary a  expect   max gap<=.10 }\n'
    assert "  expect max gap <= 0.1\n" in format_sens(parse(text))


def test_a_feature_may_be_called_like_an_expectation_word():
    text = 'model "m.json"\nquery q {\n  vary expect, unknown, or\n  expect sensitive\n}\n'
    assert _expect(text).kind == "sensitive"


def test_an_unknown_expectation_is_named_with_the_known_ones():
    e = _error(_query("expect insensitiv"))
    assert "unknown expectation 'insensitiv' (did you mean 'insensitive'" in e.message
    assert "expect max gap <= LIMIT" in e.message and (e.line, e.column) == (5, 10)


def test_expect_in_defaults_is_an_error():
    e = _error('model "m.json"\ndefaults {\n  expect sensitive\n}\nquery q { vary a }\n')
    assert "not in defaults" in e.message and e.line == 3


def test_an_audit_expectation_in_a_query_is_an_error():
    e = _error(_query("expect audit flippable <= 2%"))
    assert "write it in an audit block" in e.message and e.line == 5


def test_a_query_expectation_in_an_audit_is_an_error():
    e = _error(_audit("expect insensitive"))
    assert "an audit answers row by row" in e.message and e.line == 5


def test_expect_max_gap_takes_only_an_upper_limit():
    assert "write <=, not >=" in _error(_query("expect max gap >= 0.1")).message


def test_a_negative_limit_is_an_error():
    assert "must be a finite number >= 0" in _error(_query("expect max gap <= -0.1")).message


def test_a_percentage_above_100_is_an_error():
    assert "above 100%" in _error(_audit("expect audit flippable <= 101%")).message


def test_a_number_of_rows_must_be_whole():
    assert "give a whole number" in _error(_audit("expect audit flippable <= 2.5")).message


def test_expect_max_gap_with_the_blocks_own_gap_is_an_error():
    e = _error(_query("expect max gap <= 0.1", "  gap 0.2\n"))
    assert "drop the gap at line 5" in e.message and e.line == 6


def test_expect_insensitive_with_gap_max_is_an_error():
    e = _error(_query("expect insensitive", "  gap max\n"))
    assert "asks at one gap" in e.message and e.line == 6


def test_a_second_expectation_in_a_block_is_an_error():
    e = _error(_query("expect insensitive", "  expect sensitive\n"))
    assert "'expect' is set twice" in e.message


def _file(tmp_path, body: str, model=BC, details=BC_DETAILS) -> Path:
    path = tmp_path / "a.sens"
    path.write_text(f'model "{model}"\nfeatures from "{details}"\n{body}')
    return path


def test_expect_max_gap_makes_its_block_a_gap_max_query(tmp_path):
    body = "defaults {\n  gap 0.2\n}\nquery t {\n  vary mean_texture\n  expect max gap <= 0.1\n}\n"
    sf = load_queries(_file(tmp_path, body))
    (q,) = sf.queries
    assert q.kind == "max_gap" and sf.expectations["t"].kind == "max_gap"


def test_a_sweeps_expectation_reaches_each_of_its_queries(tmp_path):
    body = "sweep s {\n  vary each of mean_texture, worst_radius\n  expect insensitive\n}\n"
    sf = load_queries(_file(tmp_path, body))
    assert set(sf.expectations) == {"s/mean_texture", "s/worst_radius"}


def test_a_binary_max_gap_limit_of_a_half_is_an_error(tmp_path):
    path = _file(tmp_path, "query t {\n  vary mean_texture\n  expect max gap <= 0.5\n}\n")
    with pytest.raises(SensError, match="a binary gap is below 0.5") as e:
        load_queries(path)
    assert e.value.line == 5


def test_a_multiclass_max_gap_limit_below_one_is_an_error(tmp_path):
    body = "query t {\n  vary proline\n  classes 0 -> 1\n  expect max gap <= 0.5\n}\n"
    with pytest.raises(SensError, match="a probability ratio >= 1"):
        load_queries(_file(tmp_path, body, WINE, WINE_DETAILS))


def test_an_audit_expectations_unknown_column_is_reported_at_its_place(tmp_path):
    body = (
        f'audit r {{\n  data "{ROWS}"\n  vary worst_texture\n'
        "  expect audit flippable <= 5% by lable\n}\n"
    )
    with pytest.raises(SensError, match="by 'lable': not a column of the data") as e:
        load_queries(_file(tmp_path, body))
    assert (e.value.line, e.value.column) == (6, 35)
