"""The report page: self-contained, with every section."""

from __future__ import annotations

import re

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


def test_the_page_says_how_to_reproduce_it(small_report):
    assert "treesens report ..." in render(small_report)


def test_names_are_escaped(small_report):
    small_report.provenance.command = "<script>alert(1)</script>"
    try:
        assert "<script>" not in render(small_report)
    finally:
        small_report.provenance.command = "treesens report ..."


def test_the_python_api_writes_the_page(tmp_path):
    import treesens
    from treesens.tests.report.conftest import MODEL, ROWS

    out = tmp_path / "r.html"
    rep = treesens.report(
        str(MODEL), str(ROWS), features=["mean_texture"], budget=5, progress=False, out=out
    )
    assert out.read_text().startswith("<!DOCTYPE html>")
    assert len(rep.ranking) == 1
