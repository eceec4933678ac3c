"""Importing a model's library: a missing one is an input error that says what to install
(xgboost is an extra of treesens, not a requirement)."""

from __future__ import annotations

import sys

import pytest

from treesens.compiler.errors import InputError
from treesens.readers.libraries import import_library


def test_a_missing_xgboost_is_an_input_error_naming_xgboost_cpu(monkeypatch):
    monkeypatch.setitem(sys.modules, "xgboost", None)  # import now fails as if absent
    with pytest.raises(InputError, match="needs the xgboost package.*pip install xgboost-cpu"):
        import_library("xgboost")


def test_a_missing_lightgbm_is_an_input_error_naming_lightgbm(monkeypatch):
    monkeypatch.setitem(sys.modules, "lightgbm", None)
    with pytest.raises(InputError, match="pip install lightgbm"):
        import_library("lightgbm")


def test_an_installed_library_imports():
    pytest.importorskip("lightgbm")
    assert import_library("lightgbm").__name__ == "lightgbm"
