"""The report as a real browser shows it (Debian's chromium, headless).

Skipped where no chromium is installed, unless ``TREESENS_REQUIRE_BROWSER=1`` (.ci/run
installs chromium and sets it), where a missing browser is a failure."""

from __future__ import annotations

import html
import json
import os
import re
import shlex
import shutil
import subprocess

import numpy as np
import pytest

from treesens.tests.report.test_report_html import SECTIONS
from treesens.views.report_html import render


def _browser() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(name):
            return path
    if os.environ.get("TREESENS_REQUIRE_BROWSER") == "1":
        pytest.fail("TREESENS_REQUIRE_BROWSER=1 but no chromium is installed")
    pytest.skip("no chromium installed (apt-get install chromium)")


def _headless(page, *args) -> subprocess.CompletedProcess:
    cmd = [_browser(), "--headless", "--no-sandbox", "--disable-gpu", *args, page.as_uri()]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def page(small_report, tmp_path_factory):
    path = tmp_path_factory.mktemp("browser") / "report.html"
    path.write_text(render(small_report), encoding="utf-8")
    return path


def test_the_rendered_page_is_not_blank(page, tmp_path):
    shot = tmp_path / "shot.png"
    p = _headless(page, f"--screenshot={shot}", "--window-size=1200,2400")
    assert shot.is_file(), p.stderr[-2000:]
    import matplotlib.image

    pixels = matplotlib.image.imread(str(shot))[..., :3]
    ink = np.mean(np.any(pixels < 0.9, axis=-1))
    assert ink > 0.02  # more than a few stray pixels are drawn


def test_the_browser_sees_every_section(page):
    p = _headless(page, "--dump-dom")
    assert p.returncode == 0, p.stderr[-2000:]
    for section in SECTIONS:
        assert f'id="{section}"' in p.stdout


# the flags of the page's "Reproduce with" command (and their values) that its lines
# split, and the number of lines it takes, written into the page for --dump-dom
_SPLIT_FLAGS = """<script>
const code = [...document.querySelectorAll('.box code')].find(
  c => c.textContent.startsWith('treesens report'));
const nodes = [];
const walk = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
for (let n, off = 0; (n = walk.nextNode()); off += n.length) nodes.push([n, off]);
const at = (i, end) => nodes.find(([n, o]) => end ? i <= o + n.length : i < o + n.length);
const lines = range => {
  const tops = [...range.getClientRects()].map(r => r.top);
  return Math.max(...tops) - Math.min(...tops) > 4;
};
const split = [];
const text = code.textContent;
for (const m of text.matchAll(/--?[a-z][a-z-]* [^ ]+/g)) {
  const r = document.createRange();
  const [sn, so] = at(m.index, false), [en, eo] = at(m.index + m[0].length, true);
  r.setStart(sn, m.index - so);
  r.setEnd(en, m.index + m[0].length - eo);
  if (lines(r)) split.push(m[0]);
}
const whole = document.createRange();
whole.selectNodeContents(code);
const out = document.createElement('pre');
out.id = 'split-flags';
out.textContent = JSON.stringify({split, wraps: lines(whole), text});
document.body.appendChild(out);
</script>"""


def test_the_reproduce_line_keeps_each_flag_with_its_value_on_one_line(small_report, tmp_path):
    command = shlex.join(
        ["treesens", "report", "/a/long/folder/of/models/model.json", "--data",
         "/a/long/folder/of/data/rows.csv", "--protected", "mean_texture", "--features",
         "mean_texture,worst_radius,mean_radius", "--budget", "60", "--out", "report.html"]
    )  # fmt: skip
    small_report.provenance.command = command
    try:
        page = tmp_path / "narrow.html"
        page.write_text(render(small_report).replace("</body>", _SPLIT_FLAGS + "</body>"))
    finally:
        small_report.provenance.command = "treesens report ..."
    p = _headless(page, "--window-size=420,2000", "--dump-dom")
    found = re.search(r'<pre id="split-flags">(.*?)</pre>', p.stdout, re.S)
    assert found, p.stderr[-2000:]
    seen = json.loads(html.unescape(found.group(1)))
    assert (seen["text"], seen["wraps"], seen["split"]) == (command, True, [])


_TABLE_WIDTHS = """<script>
const body = document.body.getBoundingClientRect();
const pad = parseFloat(getComputedStyle(document.body).paddingRight);
const over = [...document.querySelectorAll('table')]
  .map(t => t.getBoundingClientRect().right - (body.right - pad));
const out = document.createElement('pre');
out.id = 'table-widths';
out.textContent = JSON.stringify({over, width: body.width});
document.body.appendChild(out);
</script>"""


def test_every_table_fits_a_narrow_window_the_files_and_their_hashes_too(small_report, tmp_path):
    page = tmp_path / "narrow.html"
    page.write_text(render(small_report).replace("</body>", _TABLE_WIDTHS + "</body>"))
    p = _headless(page, "--window-size=800,2000", "--dump-dom")
    found = re.search(r'<pre id="table-widths">(.*?)</pre>', p.stdout, re.S)
    assert found, p.stderr[-2000:]
    seen = json.loads(html.unescape(found.group(1)))
    assert seen["over"] and max(seen["over"]) <= 0.5, seen
