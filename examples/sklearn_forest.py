"""A scikit-learn model from Python: train a small RandomForest on scikit-learn's
breast-cancer data and ask, for two features, whether changing that feature alone can
flip its decision with confidence.

    python examples/sklearn_forest.py

Needs nothing beyond treesens' own dependencies. The forest is trained in memory (a
fitted estimator needs no file); the feature bounds come from the shipped
breast_cancer_details.csv.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier

import treesens

HERE = Path(__file__).resolve().parent


def main() -> None:
    ds = load_breast_cancer()
    names = [n.replace(" ", "_") for n in ds.feature_names]
    x = pd.DataFrame(ds.data, columns=names)
    forest = RandomForestClassifier(n_estimators=20, max_depth=4, random_state=0, n_jobs=1)
    forest.fit(x, ds.target)
    model = treesens.load_model(forest, details=HERE / "breast_cancer_details.csv")
    for feature in ("mean_texture", "worst_concave_points"):
        r = treesens.check(model, vary=[feature], gap=0.2, timeout=60)
        print(f"{feature}: {r.status}", r.outputs or "")


if __name__ == "__main__":
    main()
