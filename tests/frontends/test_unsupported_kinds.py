"""Model files and objects of kinds treesens does not read: one line saying what they
are and what is supported, never a library's own message."""

from __future__ import annotations

import types

import pytest

import treesens
from treesens.compiler.errors import UnsupportedModelError
from treesens.tests.conftest import run_treesens


def test_an_onnx_file_is_named_in_one_line(tmp_path):
    path = tmp_path / "m.onnx"
    path.write_bytes(b"\x08\x07\x12\x07skl2onnx" + bytes(64))
    p = run_treesens("check", path, "--vary", "f0")
    assert p.returncode == 2 and "an ONNX model" in p.stderr and "treesens reads" in p.stderr


def test_an_unsupported_object_names_what_is_supported():
    with pytest.raises(UnsupportedModelError, match="treesens reads XGBoost"):
        treesens.load_model(types.SimpleNamespace(predict=None))
