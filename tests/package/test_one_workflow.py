"""Each piece of a question's run exists once: the results log (questions/results_log.py)
is the one writer of answer files and views/progress.py the one progress display (the
one constructor of error results: test_code_shape.py). Read from the source, so that a
second copy fails here rather than drifting."""

from __future__ import annotations

import re
from pathlib import Path

from treesens.tests.package.layers import LAYERS as LIBRARY

ROOT = Path(__file__).resolve().parents[2]


def _sources():
    for package in LIBRARY:
        for path in sorted((ROOT / package).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), path.read_text()


def test_only_the_results_log_keeps_a_file_open_for_appending_answers():
    # writable_file opens and closes at once, to test a path before a run
    allowed = {"questions/results_log.py", "questions/output_folder.py"}
    found = [p for p, text in _sources() if re.search(r"open\([^)]*[\"']a[\"']", text)]
    assert set(found) <= allowed, found


def test_only_the_progress_view_draws_a_progress_bar():
    found = [p for p, text in _sources() if re.search(r"\bProgress\(", text)]
    assert found == ["views/progress.py"], found
