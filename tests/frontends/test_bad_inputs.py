"""Bad inputs (flags, details files, .sens files, model numbers, depth bombs, full disks):
exit 2 and one line naming the file or flag and the problem, never an internal error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import treesens
from treesens.compiler.errors import InputError
from treesens.frontends.api import make_query

EXAMPLES = Path(treesens.__file__).parent / "examples"
MODEL = str(EXAMPLES / "breast_cancer_xgb.json")


def _cli(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "treesens.frontends.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=cwd,
    )


def _one_line_error(r, *words):
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, r.stderr
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


def test_api_rejects_a_feature_listed_twice_in_vary():
    with pytest.raises(InputError, match="'mean_texture' listed twice"):
        make_query(["mean_texture", "mean_texture"], gap=0.2)


@pytest.mark.parametrize("command", ["check", "compare", "emit"])
def test_cli_rejects_a_feature_listed_twice_in_vary(command, tmp_path):
    extra = ["-o", str(tmp_path / "x.smt2")] if command == "emit" else []
    r = _cli(command, MODEL, "--vary", "mean_texture,mean_texture", "--gap", "0.2", *extra)
    _one_line_error(r, "--vary", "'mean_texture' listed twice")
