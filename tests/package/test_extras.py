"""What the extras install."""

from __future__ import annotations

import re
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def _extra(name: str) -> str:
    m = re.search(rf"^{re.escape(name)} = \[(.*)\]$", PYPROJECT.read_text(), re.MULTILINE)
    assert m, f"no extra {name!r} in pyproject.toml"
    return m.group(1)


def test_the_test_extra_takes_the_cpu_build_of_xgboost_off_macos():
    test = _extra("test")
    assert "'xgboost-cpu>=2.1; platform_system != \"Darwin\"'" in test
    assert not re.search(r'"xgboost>=[^;"]*"', test)  # no unconditional full build


def test_the_test_extra_installs_skops_for_the_certificate_tests():
    assert '"skops' in _extra("test")
