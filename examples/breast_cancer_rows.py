"""Write breast_cancer_rows.csv, the rows audited by breast_cancer_audit.sens: the first
200 rows of scikit-learn's breast-cancer data, with the feature names of
breast_cancer_xgb.json and the label column ``label`` (1 = benign).

    python examples/breast_cancer_rows.py
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from sklearn.datasets import load_breast_cancer

HERE = Path(__file__).resolve().parent
ROWS = 200


def main() -> None:
    ds = load_breast_cancer()
    names = [n.replace(" ", "_") for n in ds.feature_names]
    df = pd.DataFrame(ds.data[:ROWS], columns=names)
    df["label"] = ds.target[:ROWS]
    path = HERE / "breast_cancer_rows.csv"
    df.to_csv(path, index=False, float_format="%.6g")
    print(f"wrote {path.name}: {ROWS} rows, {len(names)} features and label")


if __name__ == "__main__":
    main()
