"""Library code stays in small pieces: no function over 90 lines, no file over 750 lines
(library = every layer of tests/package/test_layers.py, and verify/, the checker that
stands apart from them), and no layer holds more than 30% of the library's lines."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from treesens.tests.package.layers import LAYERS

LIBRARY = (*LAYERS, "verify")  # the checker of certificates keeps the rules too

ROOT = Path(__file__).resolve().parents[2]
MAX_LAYER_SHARE = 0.30
MAX_FUNCTION_LINES = 90
MAX_FILE_LINES = 750


def _files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name


def _long_functions(path: Path, limit: int) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    return [
        f"{_name(path)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno - node.lineno + 1 > limit
    ]


@pytest.mark.parametrize("package", LIBRARY)
def test_no_library_function_is_longer_than_90_lines(package):
    long = [f for path in _files(package) for f in _long_functions(path, MAX_FUNCTION_LINES)]
    assert not long, "\n".join(long)


@pytest.mark.parametrize("package", LIBRARY)
def test_no_library_file_is_longer_than_750_lines(package):
    long = [
        f"{path.relative_to(ROOT)} ({n} lines)"
        for path in _files(package)
        if (n := len(path.read_text().splitlines())) > MAX_FILE_LINES
    ]
    assert not long, "\n".join(long)


def _lines(package: str) -> int:
    return sum(len(path.read_text().splitlines()) for path in _files(package))


def test_no_layer_holds_more_than_30_percent_of_the_library():
    lines = {package: _lines(package) for package in LIBRARY}
    total = sum(lines.values())
    big = {p: round(n / total, 3) for p, n in lines.items() if n > MAX_LAYER_SHARE * total}
    assert not big, big


def test_the_length_check_counts_a_function_from_def_to_its_last_line(tmp_path):
    path = tmp_path / "probe.py"
    path.write_text("def f():\n" + "    x = 1\n" * 3 + "\n\ndef g():\n    pass\n")
    assert _long_functions(path, 3) == ["probe.py:1 f (4 lines)"]


def test_error_results_are_built_by_the_one_constructor():
    """Every "error" Result comes from answers.result.error_result (one set of fields)."""
    built = []
    for package in ("driver", "questions", "interfaces"):
        for path in _files(package):
            if re.search(r"\bResult\([^)]*status=ERROR", path.read_text()):
                built.append(str(path.relative_to(ROOT)))
    assert built == []
