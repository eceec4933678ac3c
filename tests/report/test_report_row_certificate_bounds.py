"""A report's audited rows are certified within a bound the user sets (``--certify-rows
N``: the first N of each protected feature, whatever the time) or, by default, within the
report's own budget; the page, the progress line and 'What was not answered' say how many
were certified of how many, and why the rest were not tried."""

from __future__ import annotations

import pytest

import treesens
from treesens.interfaces.cli.main import main
from treesens.questions.report import UNTRIED_HINT, RowCertificates, report
from treesens.tests.report.conftest import MODEL, ROWS
from treesens.verify import verify_file
from treesens.views.report_html import render

pytest.importorskip("xgboost")
FEATURE = "worst_concave_points"  # at gap 0.1, 2 of the first 12 rows flip


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    path = tmp_path_factory.mktemp("rows") / "rows.csv"
    path.write_text("".join(ROWS.read_text().splitlines(keepends=True)[:13]))  # 12 rows
    return path


def _report(rows, folder, lines, **kw):
    return report(
        str(MODEL), str(rows), features=[FEATURE], protected=[FEATURE], gap=0.1,
        certificates=folder, progress=False, note=lines.append, **kw,
    )  # fmt: skip


@pytest.fixture(scope="module")
def capped(rows, tmp_path_factory):
    lines: list[str] = []
    folder = tmp_path_factory.mktemp("capped")
    return _report(rows, folder, lines, budget=60, certify_rows=3), folder, lines


def test_certify_rows_certifies_the_first_n_rows_that_do_not_flip_and_no_other(capped):
    rep, folder, _ = capped
    (f,) = rep.protected
    df = treesens.audit(str(MODEL), str(rep.data_path), [FEATURE], gap=0.1)
    kept = sorted(df.loc[df["status"] == "not flippable", "row"].astype(int))
    assert f.audit_certificates == {row: "" for row in kept[:3]}
    assert sorted(f.audit_untried) == kept[3:]
    written = sorted(folder.glob(f"{FEATURE}.rows/*.json"))
    assert len(written) == 3 and all(verify_file(p).valid for p in written)


def test_the_page_says_how_many_were_certified_of_how_many_and_why_not_the_rest(capped):
    rep, _, _ = capped
    n = rep.protected[0].rows_to_certify
    assert f"3 of the {n} rows that do not flip are certified" in render(
        rep
    ) and f"{n - 3} were not tried: only the first 3 are tried" in render(rep)


def test_the_rows_not_tried_are_listed_as_not_answered_with_the_option_that_asks_more(capped):
    rep, _, _ = capped
    n = rep.protected[0].rows_to_certify
    assert rep.missing_certificates == [
        f"{n - 3} of the {n} audited rows of {FEATURE} that do not flip were not tried for a "
        f"certificate: only the first 3 are tried ({UNTRIED_HINT})."
    ]


def test_the_progress_line_says_how_many_were_certified_and_why_not_the_rest(capped):
    rep, _, lines = capped
    n = rep.protected[0].rows_to_certify
    (line,) = [x for x in lines if "certificates:" in x]
    assert f"certificates: 3 of {n} rows that do not flip" in line
    assert f"; {n - 3} not attempted: only the first 3 are tried ({UNTRIED_HINT})" in line


def test_by_default_no_row_is_begun_once_the_report_s_budget_is_spent(rows, tmp_path):
    # a budget of a millisecond is spent before the audit: loading the model takes longer
    rep = _report(rows, tmp_path, [], budget=0.001)
    (f,) = rep.protected
    assert f.audit_certificates == {} and f.audit_untried
    assert set(f.audit_untried.values()) == {"the 0.0s given to certificates were spent"}
    assert not list(tmp_path.glob(f"{FEATURE}.rows/*.json"))


def test_the_budget_left_is_shared_between_the_protected_features_still_to_audit():
    import time

    bound = RowCertificates(folder=None, budget=5.0, rows=None, end=time.time() + 60, left=2)
    first = bound.asked()
    assert 29 < first["certify_timeout"] <= 30 and bound.left == 1
    assert first["certify_budget"] == 5.0 and first["certify_rows"] is None


def test_given_a_number_of_rows_no_time_bound_is_asked():
    bound = RowCertificates(folder=None, budget=5.0, rows=3, end=0.0, left=1)
    assert "certify_timeout" not in bound.asked()


def test_the_api_s_audit_leaves_every_row_untried_saying_why_at_a_timeout_of_0(tmp_path):
    df = treesens.audit(
        str(MODEL), str(ROWS), [FEATURE], gap=0.1, limit=6, certificates=tmp_path,
        certify_timeout=0,
    )  # fmt: skip
    reasons = set(df.attrs["certificates"].values())
    assert reasons == {"not attempted: the 0.0s given to certificates were spent"}


def test_certify_rows_0_is_one_line_and_exit_2(tmp_path, capsys):
    argv = ["report", str(MODEL), "--data", str(ROWS), "--out", str(tmp_path / "r.html")]
    argv += ["--protected", FEATURE, "--certificates", str(tmp_path), "--certify-rows", "0"]
    assert main(argv) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("treesens: error: --certify-rows: '0': must be at least 1")
