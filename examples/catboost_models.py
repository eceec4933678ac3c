"""CatBoost models from Python: a classifier on scikit-learn's breast-cancer data and a
regressor on its diabetes data, saved as .cbm files and read back, then asked whether
changing one feature alone can flip the classifier's decision with confidence, or move
the regressor's prediction from at least A to at most B.

    python examples/catboost_models.py

Needs CatBoost (``pip install 'treesens[catboost]'``). The models are trained here and
saved in a temporary folder; the classifier's feature bounds come from the shipped
breast_cancer_details.csv, the regressor's from its training data.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd
from catboost import CatBoostClassifier, CatBoostRegressor
from sklearn.datasets import load_breast_cancer, load_diabetes

import treesens

HERE = Path(__file__).resolve().parent
QUIET = {"verbose": 0, "allow_writing_files": False, "thread_count": 1, "random_seed": 0}


def main() -> None:
    cancer = load_breast_cancer()
    x = pd.DataFrame(cancer.data, columns=[n.replace(" ", "_") for n in cancer.feature_names])
    classifier = CatBoostClassifier(iterations=20, depth=3, **QUIET).fit(x, cancer.target)
    diabetes = load_diabetes(as_frame=True)
    regressor = CatBoostRegressor(iterations=20, depth=3, **QUIET)
    regressor.fit(diabetes.data, diabetes.target)
    with tempfile.TemporaryDirectory() as tmp:
        classifier.save_model(f"{tmp}/cancer.cbm")
        regressor.save_model(f"{tmp}/diabetes.cbm")
        model = treesens.load_model(f"{tmp}/cancer.cbm", details=HERE / "breast_cancer_details.csv")
        for feature in ("mean_texture", "worst_concave_points"):
            r = treesens.check(model, vary=[feature], gap=0.2, timeout=60)
            print(f"classifier, {feature}: {r.status}", r.outputs or "")
        model = treesens.load_model(f"{tmp}/diabetes.cbm", data=diabetes.data, bounds="data")
        for feature in ("sex", "bmi"):
            r = treesens.check(model, vary=[feature], above=200, below=120, timeout=60)
            print(f"regressor, {feature}: {r.status}", r.outputs or "")


if __name__ == "__main__":
    main()
