"""The outputs docs/ shows after an example are what the example prints now, numbers
aside (times and the last digits of a gap vary by machine): the verdict lines and table
headers of the examples on the shipped models, each matched to the same line of a run.
docs/certificates.md's verdict line showed `backend cpsat` where the box search proves
it, and docs/max-gap.md a sweep's table without the `proof` column it has."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from treesens.tests.conftest import treesens_here

REPO = Path(__file__).resolve().parents[2]
BC = REPO / "examples" / "breast_cancer_xgb.json"
SWEPT = "mean_texture,worst_radius,worst_area,mean_concave_points,mean_radius,worst_concave_points"

pytest.importorskip("xgboost")


def _shape(line: str) -> str:
    """A line with its numbers as N and its runs of spaces as one, and without the compile
    time a verdict line leaves out where it rounds to 0.00s, nor the wait for the box
    search's compiled kernels a loaded machine adds."""
    shape = re.sub(r" +", " ", re.sub(r"-?\d+(\.\d+)?(e-?\d+)?", "N", line)).strip()
    shape = shape.replace("; box search compiled Ns, not counted in the time limit", "")
    return shape.replace("compile Ns, ", "")


def _doc_line(doc: str, start: str) -> str:
    """The first line of the doc that begins so (its example's output comes first)."""
    return _printed_line((REPO / "docs" / doc).read_text(), start)


def _printed_line(text: str, start: str) -> str:
    return next(ln for ln in text.splitlines() if ln.startswith(start))


CASES = {
    "certificates.md": (
        ["check", BC, "--vary", "worst_symmetry", "--gap", "0.1", "--certificate", "c.json"],
        "INSENSITIVE varying worst_symmetry",
    ),
    "max-gap.md": (["check", BC, "--vary", "worst_radius", "--max-gap"], "SENSITIVE varying"),
    "max-gap.md table": (
        ["sweep", BC, "--max-gap", "--timeout", "120", "--table", "markdown"]
        + ["--features", SWEPT],
        "| features |",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_docs_output_line_is_what_its_example_prints(case, tmp_path):
    argv, start = CASES[case]
    p = treesens_here(*argv, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert _shape(_doc_line(case.split()[0], start)) == _shape(_printed_line(p.stdout, start))


def test_the_python_guide_s_printed_result_is_what_print_prints():
    import xgboost
    from sklearn.datasets import load_breast_cancer

    import treesens

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    est = xgboost.XGBClassifier(n_estimators=20, max_depth=3).fit(X, y)
    model = treesens.load_model(est, data=X, bounds="data")
    r = treesens.check(model, vary=["worst radius"], gap=0.1, data=X, timeout=60)
    for start in ("SENSITIVE varying", "feature   ", "mean radius ", "probabilities "):
        assert _shape(_doc_line("python.md", start)) == _shape(_printed_line(str(r), start))
    assert _shape(_doc_line("python.md", "# Result(")) == _shape(f"# {r!r}")
