"""ONNX models from Python: a scikit-learn RandomForest on the breast-cancer data written
by skl2onnx, and an XGBoost regressor on the diabetes data written by onnxmltools, saved
as .onnx files and read back, then asked whether changing one feature alone can flip the
forest's decision with confidence, or move the regressor's prediction from at least A to
at most B. Every witness is replayed by onnxruntime.

    python examples/onnx_models.py

Needs ``pip install 'treesens[onnx]' skl2onnx onnxmltools``. The models are trained here
and saved in a temporary folder; the forest's feature names and bounds come from the
shipped breast_cancer_details.csv, the regressor's from its training data.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import xgboost
from onnxmltools import convert_xgboost
from onnxmltools.convert.common.data_types import FloatTensorType
from skl2onnx import to_onnx
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.ensemble import RandomForestClassifier

import treesens

HERE = Path(__file__).resolve().parent


def main() -> None:
    X, y = load_breast_cancer(return_X_y=True)
    X = X.astype(np.float32)
    forest = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0).fit(X, y)
    diabetes = load_diabetes(as_frame=True)
    regressor = xgboost.XGBRegressor(n_estimators=20, max_depth=3, nthread=1)
    regressor.fit(diabetes.data, diabetes.target)
    regressor.get_booster().feature_names = None  # onnxmltools wants f0, f1, ...
    n = diabetes.data.shape[1]
    with tempfile.TemporaryDirectory() as tmp:
        Path(f"{tmp}/cancer.onnx").write_bytes(to_onnx(forest, X[:1]).SerializeToString())
        onnx_regressor = convert_xgboost(
            regressor, initial_types=[("x", FloatTensorType([None, n]))]
        )
        Path(f"{tmp}/diabetes.onnx").write_bytes(onnx_regressor.SerializeToString())
        model = treesens.load_model(
            f"{tmp}/cancer.onnx", details=HERE / "breast_cancer_details.csv"
        )
        for feature in ("mean_texture", "worst_radius"):
            r = treesens.check(model, vary=[feature], gap=0.1, timeout=60)
            print(f"forest, {feature}: {r.status}", r.outputs or "")
        model = treesens.load_model(f"{tmp}/diabetes.onnx", data=diabetes.data, bounds="data")
        for feature in ("sex", "bmi"):
            r = treesens.check(model, vary=[feature], above=200, below=120, timeout=60)
            print(f"regressor, {feature}: {r.status}", r.outputs or "")


if __name__ == "__main__":
    main()
