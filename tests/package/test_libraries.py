"""The command line imports xgboost / lightgbm without scikit-learn (1-2 s per command)."""

from __future__ import annotations

import subprocess
import sys

import pytest

SCRIPT = """
import sys
from treesens.readers.libraries import import_library, prefer_lean_imports
{lean}
import_library({lib!r})
print("sklearn" in sys.modules)
import sklearn.base  # still importable afterwards
print("ok")
"""


def _run(lib: str, lean: bool) -> list[str]:
    code = SCRIPT.format(lib=lib, lean="prefer_lean_imports()" if lean else "")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.split()


@pytest.mark.parametrize("lib", ["xgboost", "lightgbm"])
def test_lean_import_leaves_sklearn_unloaded_and_importable(lib):
    assert _run(lib, lean=True) == ["False", "ok"]


def test_python_api_imports_libraries_as_usual():
    assert _run("xgboost", lean=False) == ["True", "ok"]
