"""A certificate's line counts its proof's boxes as `treesens verify` does: the leaves of
the proof's tree (the boxes that cover the pair space), not its splits too."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from treesens.interfaces.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MODEL = str(EXAMPLES / "breast_cancer_xgb.json")


def _count(pattern: str, text: str) -> int:
    m = re.search(pattern, text)
    assert m is not None, text
    return int(m[1].replace(",", ""))


# the answer's own proof (certify_recorded.py), and a second search's after CP-SAT's
@pytest.mark.parametrize("proved_by", [[], ["--no-box-search"]], ids=["own", "second"])
def test_the_certificate_line_counts_the_boxes_verify_says_cover_the_pair_space(
    proved_by, tmp_path, capsys
):
    cert = str(tmp_path / "c.json")
    args = ["check", MODEL, "--vary", "worst_symmetry", "--gap", "0.1", "--certificate", cert]
    assert main(args + proved_by) == 0
    written = _count(r"certificate written to \S+ \(([\d,]+) box", capsys.readouterr().err)
    assert main(["verify", cert]) == 0
    assert written == _count(r"([\d,]+) box(?:es)? covers? the pair space", capsys.readouterr().out)
