"""Train the example models shipped in examples/ from data that scikit-learn ships.

    python examples/train_examples.py

Writes, with feature names taken from the datasets (spaces replaced by underscores):

* breast_cancer_xgb.json, breast_cancer_details.csv: binary, XGBoost, 60 trees of depth 4;
* breast_cancer_deep_xgb.json: the same data, 100 trees of depth 6: the second model of
  contract.sens, a deeper retrain that breaks one of its expectations (it lets
  radius_error alone flip a decision at gap 0.1);
* wine_xgb.json, wine_details.csv: 3 classes, XGBoost multi:softprob, 20 rounds of depth 3;
* diabetes_lgbm.txt, diabetes_details.csv, diabetes.csv: binary, LightGBM, 40 trees of at
  most 8 leaves, on scikit-learn's diabetes data with the label "disease progression above
  its median"; sex is recoded to 0/1 and the blood serum columns s1..s6 get their names;
  diabetes.csv is the data itself (for data-aware queries);
* iris_lgbm.txt, iris_details.csv: 3 classes, LightGBM, 10 rounds of at most 4 leaves.

Deterministic (fixed seeds, one thread). scikit-learn models are shown by
sklearn_forest.py, which trains one in memory: a pickled estimator is tied to the
scikit-learn version that wrote it, so none is shipped.
"""

from __future__ import annotations

from pathlib import Path

import lightgbm as lgb
import numpy as np
import xgboost as xgb
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris, load_wine
from sklearn.utils import Bunch

HERE = Path(__file__).resolve().parent


def _names(ds) -> list[str]:
    return [
        n.replace(" ", "_").replace("/", "_").replace("(", "").replace(")", "")
        for n in ds.feature_names
    ]


def write_details(ds, path: Path, kinds: dict[str, str] | None = None) -> None:
    """feature,name,lb,ub[,kind]: the bounds are the data's range, so witnesses stay
    plausible."""
    kinds = kinds or {}
    lines = ["feature,name,lb,ub" + (",kind" if kinds else "")]
    for i, n in enumerate(_names(ds)):
        col = ds.data[:, i]
        kind = f",{kinds.get(n, 'real')}" if kinds else ""
        lines.append(f"{i},{n},{col.min():.6g},{col.max():.6g}{kind}")
    path.write_text("\n".join(lines) + "\n")


def write_data(ds, path: Path) -> None:
    """The data set as a CSV: the features by name, then the label column `label`."""
    lines = [",".join([*_names(ds), "label"])]
    for row, y in zip(ds.data, ds.target):
        lines.append(",".join(f"{v:.6g}" for v in row) + f",{int(y)}")
    path.write_text("\n".join(lines) + "\n")


def train(ds, stem: str, details: bool = True, **params) -> Path:
    """Fit XGBoost on a scikit-learn dataset; write STEM_xgb.json and (``details``)
    STEM_details.csv."""
    clf = xgb.XGBClassifier(
        learning_rate=0.3, random_state=0, n_jobs=1, tree_method="exact", **params
    )
    clf.fit(ds.data.astype(np.float64), ds.target)
    booster = clf.get_booster()
    booster.feature_names = _names(ds)
    out = HERE / f"{stem}_xgb.json"
    booster.save_model(out)
    if details:
        write_details(ds, HERE / f"{stem}_details.csv")
    return out


def train_breast_cancer() -> Path:
    return train(load_breast_cancer(), "breast_cancer", n_estimators=60, max_depth=4)


def train_breast_cancer_deep() -> Path:
    return train(
        load_breast_cancer(), "breast_cancer_deep", details=False, n_estimators=100, max_depth=6
    )


def train_wine() -> Path:
    return train(load_wine(), "wine", n_estimators=20, max_depth=3, objective="multi:softprob")


def train_lightgbm(ds, stem: str, **params) -> Path:
    """Fit LightGBM on a scikit-learn dataset; write STEM_lgbm.txt and STEM_details.csv."""
    clf = lgb.LGBMClassifier(random_state=0, n_jobs=1, deterministic=True, verbose=-1, **params)
    clf.fit(ds.data.astype(np.float64), ds.target, feature_name=_names(ds))
    out = HERE / f"{stem}_lgbm.txt"
    clf.booster_.save_model(out)
    return out


DIABETES_NAMES = ["age", "sex", "bmi", "bp", "tc", "ldl", "hdl", "tch", "ltg", "glucose"]


def diabetes() -> Bunch:
    """scikit-learn's diabetes data, made a binary task: is the disease progression a year
    later above its median? sex (1 or 2 in the source) becomes 0 or 1."""
    raw = load_diabetes(scaled=False)
    x = raw.data.copy()
    x[:, 1] -= 1
    y = (raw.target > np.median(raw.target)).astype(int)
    return Bunch(data=x, target=y, feature_names=DIABETES_NAMES)


def train_diabetes() -> Path:
    ds = diabetes()
    out = train_lightgbm(ds, "diabetes", n_estimators=40, num_leaves=8, min_child_samples=10)
    write_details(ds, HERE / "diabetes_details.csv", {"age": "integer", "sex": "binary"})
    write_data(ds, HERE / "diabetes.csv")
    return out


def train_iris() -> Path:
    ds = load_iris()
    out = train_lightgbm(ds, "iris", n_estimators=10, num_leaves=4, min_child_samples=5)
    write_details(ds, HERE / "iris_details.csv")
    return out


if __name__ == "__main__":
    for p in (
        train_breast_cancer(),
        train_breast_cancer_deep(),
        train_wine(),
        train_diabetes(),
        train_iris(),
    ):
        print(f"wrote {p.relative_to(HERE.parent)}")
