"""A .sens file's `features from` file is the one its answers say the model is bounded
by, even where a details file lies beside the model: the file beside was loaded first,
and every answer said "bounds from" it, though the file named bounded the features."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from treesens.language import load_queries

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def beside(tmp_path) -> Path:
    """A folder with the example model, its details file beside it, and mine.csv, whose
    mean_texture is [30, 31]."""
    shutil.copy(EXAMPLES / "breast_cancer_xgb.json", tmp_path)
    shutil.copy(EXAMPLES / "breast_cancer_details.csv", tmp_path)
    text = (EXAMPLES / "breast_cancer_details.csv").read_text()
    text = text.replace("1,mean_texture,9.71,39.28", "1,mean_texture,30,31")
    (tmp_path / "mine.csv").write_text(text)
    sens = tmp_path / "q.sens"
    sens.write_text(
        'model "breast_cancer_xgb.json"\nfeatures from "mine.csv"\n'
        "query q {\n  vary mean_texture\n}\n"
    )
    return sens


def test_the_model_is_said_to_be_bounded_by_the_file_the_sens_file_names(beside):
    source = load_queries(beside).ensemble.source
    assert "mine.csv" in source and "breast_cancer_details.csv" not in source
