"""The report page: self-contained, with every section."""

from __future__ import annotations

import html
import re
import shlex

import pytest

from treesens.views.report_html import render

SECTIONS = ("summary", "checked", "ranking", "protected-mean_texture", "unanswered")


def test_every_section_is_in_the_page(small_report):
    page = render(small_report)
    for section in SECTIONS:
        assert f'id="{section}"' in page


def test_the_page_requests_nothing_from_a_network(small_report):
    page = render(small_report)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)


def test_figures_are_inline_png(small_report):
    page = render(small_report)
    sources = re.findall(r'<img [^>]*src="([^"]+)"', page)
    assert sources and all(s.startswith("data:image/png;base64,") for s in sources)


def reproduce_line(page: str) -> str:
    """The text of the page's "Reproduce with" command, as a browser copies it."""
    [box] = re.findall(r'Reproduce with:</p><div class="box"><code>(.*?)</code>', page)
    return html.unescape(re.sub("<[^>]+>", "", box))


def test_the_page_says_how_to_reproduce_it(small_report):
    assert reproduce_line(render(small_report)) == "treesens report ..."


def test_names_are_escaped(small_report):
    small_report.provenance.command = "<script>alert(1)</script>"
    try:
        assert "<script>" not in render(small_report)
    finally:
        small_report.provenance.command = "treesens report ..."


@pytest.fixture(scope="module")
def api_page(tmp_path_factory):
    """A report made by the Python API: the call's report, its page's path."""
    import treesens
    from treesens.tests.report.conftest import MODEL, ROWS

    out = tmp_path_factory.mktemp("api-report") / "r.html"
    rep = treesens.report(
        str(MODEL), str(ROWS), features=["mean_texture"], budget=5, progress=False, out=out
    )
    return rep, out


def test_the_python_api_writes_the_page(api_page):
    rep, out = api_page
    assert out.read_text().startswith("<!DOCTYPE html>")
    assert len(rep.ranking) == 1


def test_the_python_apis_page_says_the_call_that_makes_it_again(api_page):
    from treesens.tests.report.conftest import MODEL, ROWS

    _, out = api_page
    assert reproduce_line(out.read_text()) == (
        f"treesens.report({str(MODEL)!r}, {str(ROWS)!r}, features=['mean_texture'], "
        f"budget=5, out={str(out)!r})"
    )


def test_the_python_api_refuses_a_page_not_named_html_before_any_ranking(tmp_path):
    import treesens
    from treesens.compiler.errors import InputError
    from treesens.tests.report.conftest import MODEL, ROWS

    out = tmp_path / "r.txt"
    with pytest.raises(InputError, match=r"r\.txt: the report is an HTML page; name it FILE\.html"):
        treesens.report(str(MODEL), str(ROWS), budget=5, progress=False, out=out)
    assert not out.exists() and not (tmp_path / "r.rank.jsonl").exists()


def _insensitive(feature: str):
    from treesens.answers.result import Result

    return Result(query=feature, status="insensitive", backend="cpsat", features=[feature], gap=0.2)


def test_an_insensitive_answer_over_bounds_from_the_data_says_the_datas_range(
    small_report, tmp_path
):
    import shutil

    from treesens.questions.report import Report
    from treesens.readers.load import load_model
    from treesens.tests.report.conftest import MODEL, ROWS
    from treesens.views.report_html import _answer_sentence

    alone = shutil.copy(MODEL, tmp_path / "model.json")  # no details file beside it
    ens = load_model(str(alone), data=str(ROWS))
    rep = Report(**{**small_report.__dict__, "model": ens})
    sentence = _answer_sentence(rep, _insensitive("mean_radius"))
    assert "within the data&#x27;s range" in sentence and small_report.data_path in sentence
    assert "declared" not in sentence


def test_an_insensitive_answer_over_declared_bounds_names_the_details_file(small_report):
    from treesens.views.report_html import _answer_sentence

    sentence = _answer_sentence(small_report, _insensitive("mean_radius"))
    assert "within the bounds declared in" in sentence
    assert "breast_cancer_details.csv" in sentence


@pytest.fixture(scope="module")
def cli_page(tmp_path_factory) -> tuple[list[str], str]:
    """A report made by the command line (in this process), protecting mean_radius as
    scikit-learn's dataset spells it ('mean radius', as check's --vary takes it): the
    command's arguments and the page."""
    import shutil

    from treesens.tests.conftest import treesens_here
    from treesens.tests.report.conftest import MODEL, ROWS

    folder = tmp_path_factory.mktemp("cli-report")
    alone = shutil.copy(MODEL, folder / "model.json")
    out = folder / "r.html"
    argv = [
        "report", str(alone), "--data", str(ROWS), "--features", "mean_radius", "--protected",
        "mean radius", "--budget", "60", "--out", str(out), "--no-progress",
    ]  # fmt: skip
    p = treesens_here(*argv)
    assert p.returncode == 0, p.stderr
    return argv, out.read_text()


def test_the_cli_report_says_the_proof_holds_within_the_datas_range(cli_page):
    _, page = cli_page
    assert "proved that no two inputs differing only in mean_radius" in page
    assert "within the data&#x27;s range" in page and "declared" not in page


def test_the_cli_reports_summary_of_a_feature_no_tree_splits_on_says_so(cli_page):
    _, page = cli_page  # the shipped model's trees never split on mean_radius
    summary = page.split('id="summary"')[1].split('id="checked"')[0]
    assert (
        "The model never splits on mean_radius: no change of it alone moves its prediction."
        in summary
    )


def test_the_cli_report_takes_a_protected_feature_spelled_with_a_space_for_an_underscore(
    cli_page,
):
    _, page = cli_page
    assert 'id="protected-mean_radius"' in page


def test_the_cli_reports_reproduce_line_is_the_command_it_was_given(cli_page):
    argv, page = cli_page
    assert reproduce_line(page) == shlex.join(["treesens", *argv])
