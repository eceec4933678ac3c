"""Starting a solver worker is silent: a notebook user sees no warning from it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_xgb.json"


def test_a_worker_starts_without_a_warning_on_stderr():
    code = (
        "import treesens; "
        f"r = treesens.check({str(EXAMPLE)!r}, vary=['mean_texture'], gap=0.2, "
        "heuristic=False, timeout=60); print(r.status)"
    )
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, timeout=120
    )
    assert done.stdout.strip() == "sensitive", done.stderr
    assert "Warning" not in done.stderr, done.stderr
