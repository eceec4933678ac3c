"""The package runs on Python 3.10, as pyproject says: no name that only 3.11 has."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# the package's own modules: its folders with an __init__.py (not tests or bench, and not
# a virtual environment that a user made inside the clone)
LIBRARY = [ROOT / "__init__.py"] + [
    p
    for room in ROOT.iterdir()
    if (room / "__init__.py").is_file() and room.name not in ("tests", "bench")
    for p in room.rglob("*.py")
]
# names and syntax new in Python 3.11
ONLY_311 = re.compile(
    r"\bStrEnum\b(?!`)|\bimport tomllib\b|\bfrom tomllib\b|\bExceptionGroup\b|"
    r"\bexcept\*|from datetime import [^\n]*\bUTC\b|\bdatetime\.UTC\b|"
    r"from typing import [^\n]*\bSelf\b|\bReprEnum\b"
)


def test_pyproject_and_readme_say_python_3_10():
    assert 'requires-python = ">=3.10"' in (ROOT / "pyproject.toml").read_text()


def test_no_library_module_uses_a_name_python_3_10_lacks():
    bad = []
    for path in LIBRARY:
        for n, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            if ONLY_311.search(code) and '"""' not in code and "``" not in code:
                bad.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not bad, "\n".join(bad)


def test_a_string_enum_prints_and_formats_as_its_value():
    from treesens.answers.result import Status

    assert str(Status.SENSITIVE) == "sensitive" and f"{Status.SENSITIVE:>10}" == " sensitive"
    assert {"sensitive": 1}[Status.SENSITIVE] == 1
