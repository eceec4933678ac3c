"""The report as a real browser shows it (Debian's chromium, headless).

Skipped where no chromium is installed, unless ``TREESENS_REQUIRE_BROWSER=1`` (.ci/run
installs chromium and sets it), where a missing browser is a failure."""

from __future__ import annotations

import os
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
