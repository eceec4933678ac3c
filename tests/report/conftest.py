"""A small report of the shipped breast-cancer example, made once for the module's tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from treesens.questions.report import report

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MODEL = EXAMPLES / "breast_cancer_xgb.json"
ROWS = EXAMPLES / "breast_cancer_rows.csv"
RANKED = ["mean_texture", "worst_radius", "mean_radius"]


@pytest.fixture(scope="session")
def small_report(tmp_path_factory):
    results = tmp_path_factory.mktemp("report") / "bc.jsonl"
    return report(
        str(MODEL),
        str(ROWS),
        features=RANKED,
        protected=["mean_texture"],
        gap=0.2,
        budget=300,  # a cap 10x above what it takes: a loaded machine still closes it all
        results=results,
        command="treesens report ...",
        progress=False,
    )
