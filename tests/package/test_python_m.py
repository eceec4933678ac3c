"""``python -m treesens`` runs the ``treesens`` command, as the console script does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_python_m_treesens_runs_the_command():
    p = subprocess.run(
        [sys.executable, "-m", "treesens", "backends"],
        cwd=ROOT.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    assert "cpsat" in p.stdout
