"""Train the 10-class stand-ins for the paper's image models (covtype, fashion, mnist).

scikit-learn's digits (1,797 8x8 images, pixels 0-16, 10 classes), split 75/25 with a
fixed seed; XGBoost and LightGBM, 100 rounds of depth-6 trees per class. Writes
``digits_xgb_t100_d6.json``, ``digits_lgbm_t100_d6.txt``, ``details.csv`` (pixel bounds
0-16, integer) and ``test.csv`` beside this file::

    python bench/models/digits/train.py
"""

from __future__ import annotations

from pathlib import Path

import lightgbm as lgb
import numpy as np
import pandas as pd
import xgboost as xgb
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

HERE = Path(__file__).resolve().parent
ROUNDS, DEPTH, SEED = 100, 6, 0


def main() -> None:
    digits = load_digits()
    names = [f"px{r}_{c}" for r in range(8) for c in range(8)]
    X = pd.DataFrame(digits.data, columns=names)
    X_tr, X_te, y_tr, y_te = train_test_split(
        X, digits.target, test_size=0.25, random_state=SEED, stratify=digits.target
    )
    booster = xgb.XGBClassifier(
        n_estimators=ROUNDS, max_depth=DEPTH, learning_rate=0.3, random_state=SEED
    ).fit(X_tr, y_tr)
    booster.get_booster().save_model(HERE / f"digits_xgb_t{ROUNDS}_d{DEPTH}.json")
    light = lgb.LGBMClassifier(
        n_estimators=ROUNDS,
        max_depth=DEPTH,
        num_leaves=2**DEPTH,
        random_state=SEED,
        verbose=-1,
    ).fit(X_tr, y_tr)
    light.booster_.save_model(HERE / f"digits_lgbm_t{ROUNDS}_d{DEPTH}.txt")
    details = {"feature": range(64), "name": names, "lb": 0, "ub": 16, "kind": "integer"}
    pd.DataFrame(details).to_csv(HERE / "details.csv", index=False)
    test = X_te.assign(label=y_te)
    test.to_csv(HERE / "test.csv", index=False)
    for name, model in (("xgboost", booster), ("lightgbm", light)):
        acc = float(np.mean(model.predict(X_te) == y_te))
        print(f"{name}: test accuracy {acc:.3f}")


if __name__ == "__main__":
    main()
