"""A scikit-learn Pipeline audited in the user's own columns: one-hot encode a
categorical column and scale the numeric ones, train gradient boosting on scikit-learn's
diabetes data (progression above the median or not), and ask whether ``sex`` alone can
flip a confident decision, how large that change can be, and which rows it flips.

    python examples/pipeline_diabetes.py

Needs nothing beyond treesens' own dependencies. The pipeline is given to treesens as
it is: its features are the pipeline's input columns (sex with its categories, the
others in their raw units), and every witness is replayed through the whole pipeline.
The data codes sex as 1 and 2 (the dataset does not say which is which).
"""

from __future__ import annotations

from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_diabetes
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

import treesens


def main() -> None:
    d = load_diabetes(as_frame=True, scaled=False)
    X = d.data.assign(sex=d.data["sex"].map({1.0: "sex 1", 2.0: "sex 2"}))
    y = (d.target > d.target.median()).astype(int)
    numeric = [c for c in X.columns if c != "sex"]
    pre = ColumnTransformer(
        [("sex", OneHotEncoder(), ["sex"]), ("numeric", StandardScaler(), numeric)]
    )
    clf = HistGradientBoostingClassifier(max_iter=30, max_depth=3, random_state=0)
    pipe = Pipeline([("pre", pre), ("clf", clf)]).fit(X, y)

    model = treesens.load_model(pipe, data=X, bounds="data")
    print(model)
    r = treesens.check(model, vary="sex", gap=0.1, timeout=60)
    print(r)
    m = treesens.max_gap(model, "sex", timeout=60)
    g = m.max_gap["lower"]
    print(f"largest gap from sex alone: {g:.3f} (P = {0.5 + g:.3f} against {0.5 - g:.3f})")
    rows = treesens.audit(model, X.head(40).assign(label=y.head(40)), "sex", gap=0.1)
    print(rows["status"].value_counts().to_string())


if __name__ == "__main__":
    main()
