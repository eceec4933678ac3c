"""A certificate changed on purpose: the tamper tests' one way to write a changed copy."""

from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MODEL = REPO / "examples" / "breast_cancer_xgb.json"


def worst_symmetry_certificate(folder: Path) -> Path:
    """The shipped breast-cancer model's certificate that worst_symmetry alone does not
    reach gap 0.1, written by the CLI into ``folder`` and checked valid."""
    from treesens.tests.conftest import treesens_here
    from treesens.verify import verify_file

    out = folder / "c.json"
    p = treesens_here(
        "check", MODEL, "--vary", "worst_symmetry", "--gap", "0.1", "--certificate", out
    )
    assert p.returncode == 0 and verify_file(out).valid, p.stderr
    return out


def tampered(certificate: Path, folder: Path, change) -> Path:
    """A copy of ``certificate`` in ``folder`` with ``change(doc)`` applied to its JSON."""
    doc = json.loads(certificate.read_text())
    change(doc)
    out = folder / "tampered.json"
    out.write_text(json.dumps(doc))
    return out


def drop_last_box(doc: dict) -> None:
    """The proof's last pruned box removed (its first part's)."""
    proof = doc["parts"][0]["proof"]
    del proof[max(i for i, s in enumerate(proof) if s[0] == "prune")]


def claiming_gap(gap: float):
    """A change stating the claim's gap as ``gap``."""

    def change(doc: dict) -> None:
        doc["question"]["claim"]["gap"] = gap

    return change


def checker_raw(m, row) -> float:
    """A row's raw score as the checker's model ``m`` reads it (``goes_left`` per node)."""
    from treesens.verify.pair_space import goes_left

    out = m.offset
    for t in m.trees:
        n = 0
        while t.feature[n] >= 0:
            n = t.left[n] if goes_left(m, t, n, float(row[t.feature[n]])) else t.right[n]
        out += t.value[n]
    return out
