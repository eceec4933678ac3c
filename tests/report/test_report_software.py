"""The report's "Software:" line names the libraries that took part, with their versions,
and no other: the model's own library, the solvers that ran, numpy and pandas."""

from __future__ import annotations

import re
from importlib import metadata

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.compiler.usage import Usage, watching
from treesens.questions.software import MODEL, SOLVER, model_packages, software, version_of
from treesens.tests.conftest import run_treesens
from treesens.tests.report.conftest import EXAMPLES, ROWS
from treesens.tests.report.conftest import MODEL as XGB_MODEL
from treesens.views.report_html import render

MODEL_LIBRARIES = ("xgboost", "lightgbm", "catboost", "scikit-learn", "onnx")


def _software_line(page: str) -> str:
    (line,) = re.findall(r"<p>Software: ([^<]*)</p>", page)
    return line


def _named(line: str) -> set[str]:
    return {lib for lib in MODEL_LIBRARIES if re.search(rf"\b{re.escape(lib)} \d", line)}


def test_an_xgboost_report_names_xgboost_with_its_version(small_report):
    import xgboost

    assert f"xgboost {xgboost.__version__}" in _software_line(render(small_report))


def test_an_xgboost_report_names_no_other_model_library(small_report):
    assert _named(_software_line(render(small_report))) == {"xgboost"}


def test_the_cli_report_of_an_xgboost_model_names_xgboost_only(tmp_path):
    out = tmp_path / "r.html"
    p = run_treesens(
        "report", XGB_MODEL, "--data", ROWS, "--features", "mean_texture",
        "--budget", "5", "--out", out, "--no-progress",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert _named(_software_line(out.read_text())) == {"xgboost"}


def test_a_lightgbm_model_is_read_and_replayed_with_lightgbm():
    ens = treesens.load_model(EXAMPLES / "diabetes_lgbm.txt")
    libs = [lib for lib in software(ens, Usage()) if lib.role == MODEL]
    assert [(lib.name, lib.version) for lib in libs] == [("lightgbm", metadata.version("lightgbm"))]


def test_a_pipeline_is_replayed_with_scikit_learn_and_its_final_models_library():
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler
    from xgboost import XGBClassifier

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(100, 2)), columns=["a", "b"])
    y = (X["a"] > 0).astype(int)
    pipe = Pipeline([("scale", StandardScaler()), ("clf", XGBClassifier(n_estimators=3))])
    ens = treesens.load_model(pipe.fit(X, y))
    assert model_packages(ens.replayer) == ("scikit-learn", "xgboost")


def test_xgboost_has_a_version_under_either_of_its_distributions():
    import xgboost

    assert version_of("xgboost") == xgboost.__version__


def test_no_solver_is_named_when_none_ran():
    ens = treesens.load_model(XGB_MODEL)
    assert not [lib for lib in software(ens, Usage()) if lib.role == SOLVER]


@pytest.mark.parametrize("backend_runs", [True, False])
def test_cp_sat_is_noted_exactly_when_its_solver_ran(backend_runs):
    ens = treesens.load_model(XGB_MODEL)
    with watching() as used:
        r = treesens.check(
            ens, vary="mean_texture", gap=0.2, heuristic=not backend_runs, box_search=False
        )
    assert r.stats["found_by"] == ("cpsat" if backend_runs else "heuristic")
    assert used.solvers == ({"cpsat"} if backend_runs else set())


def test_the_report_names_the_version_of_the_treesens_that_ran_installed_or_not(small_report):
    """Run from a clone (``python -m treesens``, not installed), the page still names it."""
    assert f"treesens {treesens.__version__};" in _software_line(render(small_report))
