"""docs/plots.md and README's "Pictures": the witness-plot snippet runs as written, from a
folder holding the shipped examples, and writes its PNG without a warning."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.filterwarnings("error")

REPO = Path(__file__).resolve().parents[2]


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, re.S)


@pytest.fixture
def in_a_clone(tmp_path, monkeypatch) -> Path:
    (tmp_path / "examples").symlink_to(REPO / "examples")
    (tmp_path / "docs" / "img").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_docs_witness_snippet_writes_its_png(in_a_clone):
    block = python_blocks((REPO / "docs" / "plots.md").read_text())[0]
    exec(compile(block, "docs/plots.md:witness", "exec"), {})
    assert (in_a_clone / "witness.png").read_bytes()[:4] == b"\x89PNG"


def test_readme_pictures_snippet_writes_the_committed_image_path(in_a_clone):
    text = (REPO / "README.md").read_text()
    section = text[text.index("### Pictures") : text.index("### Models")]
    (block,) = python_blocks(section)
    exec(compile(block, "README.md:pictures", "exec"), {})
    image = "docs/img/witness-breast-cancer.png"
    assert f"]({image})" in section and (REPO / image).is_file()
    assert (in_a_clone / image).read_bytes()[:4] == b"\x89PNG"
