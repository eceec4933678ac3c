"""CatBoost models from Python: a classifier on scikit-learn's breast-cancer data and a
regressor on its diabetes data, saved as .cbm files and read back, then asked whether
changing one feature alone can flip the classifier's decision with confidence, or move
the regressor's prediction from at least A to at most B; and a regressor whose ``sex``
is a categorical feature ("female", "male"), whose categories the data names (CatBoost
keeps only a hash of each), asked by how much changing ``sex`` alone can move it.

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
        rows = diabetes.data.assign(
            sex=diabetes.data.sex.gt(0).map({True: "male", False: "female"})
        )
        by_sex = CatBoostRegressor(iterations=20, depth=3, one_hot_max_size=2, **QUIET)
        by_sex.fit(rows, diabetes.target, cat_features=["sex"])
        by_sex.save_model(f"{tmp}/diabetes_sex.cbm")
        model = treesens.load_model(f"{tmp}/diabetes_sex.cbm", data=rows)  # names the sexes
        r = treesens.max_gap(model, vary=["sex"], timeout=60)
        sexes = r.witness and (r.witness["x1"]["sex"], r.witness["x2"]["sex"])
        print(f"regressor by sex: at most {r.max_gap['upper']:.2f} apart", sexes or "")


if __name__ == "__main__":
    main()
