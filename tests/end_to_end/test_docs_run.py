"""Every code block of README.md and docs/ runs as written, in the environment it names.

A fenced block's info string says where it runs: ``python`` and ``bash`` blocks run here
(in a fresh interpreter / shell, from a copy of the repository's examples/ with
``../shared`` beside it, as a clone in CI has); a second word names another environment,
where this test does not run it: ``setup`` (a fresh machine's installation: the README's
commands), ``cluster`` (a Dask / Ray cluster or a job scheduler), ``long`` (runs of
hours). ``text`` blocks are not code: outputs, grammars, command synopses. The python
blocks of one file run in order in one interpreter, as a notebook would. docs/extending.md's
blocks are run by tests/package/test_extending_*.py, with the plugins they define.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
RUN_HERE = ("python", "bash")
ELSEWHERE = ("setup", "cluster", "long")
KNOWN = ("text", "json", "csv", "sens", "")
RUN_ELSEWHERE_FILES = ("extending.md",)

FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```\s*$", re.S | re.M)


def _blocks(path: Path) -> list[tuple[str, str, int]]:
    """(info string, code, line) of each fenced block."""
    text = path.read_text()
    return [
        (m.group(1).strip(), m.group(2), text.count("\n", 0, m.start()) + 1)
        for m in FENCE.finditer(text)
    ]


def _runs_here(info: str) -> bool:
    words = info.split()
    return bool(words) and words[0] in RUN_HERE and len(words) == 1


def _cases(kind: str) -> list:
    out = []
    for path in DOCS:
        if path.name in RUN_ELSEWHERE_FILES:
            continue
        blocks = [(code, line) for info, code, line in _blocks(path) if info == kind]
        if kind == "python" and blocks:
            out.append(pytest.param(path, blocks, id=path.name))
        if kind == "bash":
            out += [pytest.param(path, [b], id=f"{path.name}:{b[1]}") for b in blocks]
    return out


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """A folder as a user's clone has it: examples/ and docs/img/, ../shared beside it, and a
    ``treesens`` command that runs the checkout being tested."""
    root = tmp_path_factory.mktemp("docs")
    work = root / "clone"
    shutil.copytree(REPO / "examples", work / "examples", ignore=shutil.ignore_patterns("__py*"))
    (work / "docs" / "img").mkdir(parents=True)
    if SHARED.is_dir():
        (root / "shared").symlink_to(SHARED)
    bin_dir = root / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "treesens"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m treesens.interfaces.cli.main "$@"\n')
    shim.chmod(0o755)
    return work


def _env(clone: Path) -> dict:
    env = dict(os.environ)
    env["PATH"] = f"{clone.parent / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["MPLBACKEND"] = "Agg"
    return env


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_every_code_block_says_where_it_runs(path):
    for info, _, line in _blocks(path):
        words = info.split()
        first = words[0] if words else ""
        where = words[1] if len(words) > 1 else None
        ok = (first in RUN_HERE and where in (None, *ELSEWHERE)) or (first in KNOWN and not where)
        assert ok, f"{path.name}:{line}: the block '```{info}' says neither what nor where"


@pytest.mark.parametrize(("path", "blocks"), _cases("python"))
def test_the_python_blocks_run_in_order(path, blocks, clone):
    script = "\n\n".join(code for code, _ in blocks)
    proc = subprocess.run(
        [sys.executable, "-c", script],
        cwd=clone,
        env=_env(clone),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, f"{path.name}:\n{proc.stderr[-3000:]}"


@pytest.mark.parametrize(("path", "blocks"), _cases("bash"))
def test_the_bash_blocks_run(path, blocks, clone):
    ((code, line),) = blocks
    proc = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", code],
        cwd=clone,
        env=_env(clone),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, f"{path.name}:{line}:\n{proc.stderr[-3000:]}"
    assert "Traceback" not in proc.stderr
