"""Objects of kinds treesens does not read: one line saying what is supported, never a
library's own message."""

from __future__ import annotations

import types

import pytest

import treesens
from treesens.compiler.errors import UnsupportedModelError


def test_an_unsupported_object_names_what_is_supported():
    with pytest.raises(UnsupportedModelError, match="treesens reads XGBoost"):
        treesens.load_model(types.SimpleNamespace(predict=None))
