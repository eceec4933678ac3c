"""Train the example models shipped in examples/ from data that scikit-learn ships.

    python examples/train_examples.py

Writes breast_cancer_xgb.json and breast_cancer_details.csv (binary, XGBoost, 60 trees of depth 4) and
wine_xgb.json (3 classes, multi:softprob, 20 rounds of depth 3), with feature names
taken from the datasets (spaces replaced by underscores). Deterministic (fixed seeds).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import xgboost as xgb
from sklearn.datasets import load_breast_cancer, load_wine

HERE = Path(__file__).resolve().parent


def _names(ds) -> list[str]:
    return [
        n.replace(" ", "_").replace("/", "_").replace("(", "").replace(")", "")
        for n in ds.feature_names
    ]


def write_details(ds, path: Path) -> None:
    """feature,name,lb,ub: the bounds are the data's range, so witnesses stay plausible."""
    lines = ["feature,name,lb,ub"]
    for i, n in enumerate(_names(ds)):
        col = ds.data[:, i]
        lines.append(f"{i},{n},{col.min():.6g},{col.max():.6g}")
    path.write_text("\n".join(lines) + "\n")


def train(ds, stem: str, **params) -> Path:
    """Fit XGBoost on a scikit-learn dataset; write STEM_xgb.json and STEM_details.csv."""
    clf = xgb.XGBClassifier(
        learning_rate=0.3, random_state=0, n_jobs=1, tree_method="exact", **params
    )
    clf.fit(ds.data.astype(np.float64), ds.target)
    booster = clf.get_booster()
    booster.feature_names = _names(ds)
    out = HERE / f"{stem}_xgb.json"
    booster.save_model(out)
    write_details(ds, HERE / f"{stem}_details.csv")
    return out


def train_breast_cancer() -> Path:
    return train(load_breast_cancer(), "breast_cancer", n_estimators=60, max_depth=4)


def train_wine() -> Path:
    return train(load_wine(), "wine", n_estimators=20, max_depth=3, objective="multi:softprob")


if __name__ == "__main__":
    for p in (train_breast_cancer(), train_wine()):
        print(f"wrote {p.relative_to(HERE.parent)}")
