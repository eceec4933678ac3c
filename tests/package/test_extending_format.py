"""docs/extending.md, "Adding a model format": its worked example runs as written.

The code blocks of that section are read from the document and run in order: the
format's module, its run-time registration, and the check of a model in that format.
"""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

from treesens.readers import formats, load

DOC = Path(__file__).resolve().parents[2] / "docs" / "extending.md"


def _section(title: str) -> str:
    text = DOC.read_text()
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", _section("Adding a model format"), re.S)


@pytest.fixture
def example(tmp_path):
    """The example's module, imported as ``tinytree_example``; its format unregistered after."""
    module_code, register_code, _ = _blocks("python")
    module = types.ModuleType("tinytree_example")
    sys.modules[module.__name__] = module
    try:
        exec(compile(module_code, "docs/extending.md:tinytree", "exec"), module.__dict__)
        exec(compile(register_code, "docs/extending.md:register", "exec"), module.__dict__)
        yield module
    finally:
        formats.unregister("tinytree")
        del sys.modules[module.__name__]


@pytest.fixture
def model_file(tmp_path):
    [model_json] = _blocks("json")
    path = tmp_path / "credit.json"
    path.write_text(model_json)
    return path


def test_the_registry_line_is_one_line():
    [line] = [b.strip() for b in _blocks("text")]
    assert line == "TinyTreeFormat(),"


def test_the_example_format_is_registered(example):
    assert "tinytree" in load.FORMATS
    assert isinstance(formats.by_name("tinytree"), formats.ModelFormat)


def test_the_example_model_is_sniffed_and_checked_end_to_end(example, model_file):
    *_, usage = _blocks("python")
    exec(compile(usage, "docs/extending.md:usage", "exec"), {"model_file": model_file})


def test_the_example_format_is_chosen_by_name_too(example, model_file):
    ens = load.load_model(model_file, format="tinytree")
    assert ens.source.startswith("tinytree:") and ens.feature_names == ["age", "income", "debt"]


def test_a_malformed_example_model_is_one_input_error(example, tmp_path):
    from treesens.compiler.errors import InputError

    path = tmp_path / "bad.tiny"
    path.write_text('{"tinytree": 1, "features": ["a"], "trees": [[{"f": 3, "t": 1}]]}')
    with pytest.raises(InputError, match="bad.tiny: malformed TinyTree model"):
        load.load_model(path)


def test_a_registered_name_cannot_be_registered_twice(example):
    with pytest.raises(ValueError, match="already registered"):
        formats.register(example.TinyTreeFormat())
