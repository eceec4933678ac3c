"""The library's own raw scores (or probabilities), for a certificate's ``replay`` boxes.

A box of the pair space on which every tree's value is fixed (each input reaches, in
every tree, leaves of one value) gives every pair in it the library's outputs for one
of them. Where the float32 relaxation keeps a bound from ruling such a box out (a pair
on the gap's boundary), the certificate names a pair of the box, and the checker asks the
library itself for its raw scores: when they miss the claim's condition, so does every
pair of the box. A probability claim on a library that computes P in float32 is judged
on its probabilities instead (``library_proba``: the claim is of P as the library
computes it). The raw scores, in the trees' units (the sum of the leaves and the
offset, before any link), per library:

* XGBoost: ``predict(output_margin=True)``; LightGBM: ``predict(raw_score=True)`` (in
  random-forest mode divided by the number of iterations: its score is their mean);
* scikit-learn (a ``.skops`` file, loaded as the checker's reader loads it, and a
  Pipeline of it): a boosting classifier's ``decision_function``, a forest
  classifier's ``predict_proba`` (binary: class 1's), a regressor's ``predict``; a
  pipeline's coded input given as the raw category its certificate states for the code;
* CatBoost: ``predict(prediction_type="RawFormulaVal")``, a one-hot feature's code given
  as the category the certificate names for it;
* ONNX: onnxruntime's scores of the tree-ensemble node itself (its output made a graph
  output; post_transform set to NONE: the link after the sum, which a row does not read),
  on one thread, as treesens' replay (the trees' float32 sum split over threads rounds
  otherwise).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .models import Model, ModelError

# (2, n_features) inputs -> (2, n_outputs) raw scores, in the checker's raw units
RawScores = Callable[[np.ndarray], np.ndarray]


def library_raw(
    path: str, library: str, model: Model, maps=None, categories: dict | None = None
) -> RawScores:
    """The library's raw scores of a model file (``maps``: a pipeline certificate's, for
    the raw categories of its coded inputs; ``categories``: a CatBoost certificate's
    category of each code); ModelError for a library not replayed."""
    if library == "xgboost":
        import xgboost

        booster = xgboost.Booster(model_file=path)

        def scores(X: np.ndarray) -> np.ndarray:
            data = xgboost.DMatrix(X, feature_names=booster.feature_names)
            out = booster.predict(data, output_margin=True)
            return per_output(out, model)

        return scores
    if library == "lightgbm":
        from .models_lightgbm import lightgbm_booster

        lgb = lightgbm_booster(path)
        # random-forest mode: raw_score is the sum over iterations, the model's score
        # (what predict's link reads, and the checker's trees) their mean
        scale = 1.0
        if lgb.dump_model(num_iteration=1).get("average_output"):
            scale = 1.0 / max(1, lgb.current_iteration())
        return lambda X: per_output(lgb.predict(X, raw_score=True) * scale, model)
    if library in ("sklearn", "sklearn-pipeline"):
        from .replay_formats import sklearn_raw

        return sklearn_raw(path, library, model, maps)
    if library == "catboost":
        from .replay_formats import catboost_raw

        return catboost_raw(path, model, categories or {})
    if library == "onnx":
        from .replay_formats import onnx_raw

        return onnx_raw(path, model)
    raise ModelError(f"the checker replays no pairs on {library} models")


def library_proba(path: str, library: str, model: Model) -> RawScores:
    """The library's probabilities of a pair as its predict computes them from the raw
    scores in float32 (``Model.float32_link``): (2, 1) P(class 1) of a binary model, else
    (2, classes). XGBoost's ``predict`` (binary:logistic, reg:logistic, multi:softprob);
    onnxruntime's scores of the tree-ensemble node after its post_transform (LOGISTIC,
    SOFTMAX), on one thread. ModelError for another library."""
    if library == "xgboost":
        import xgboost

        booster = xgboost.Booster(model_file=path)

        def proba(X: np.ndarray) -> np.ndarray:
            data = xgboost.DMatrix(X, feature_names=booster.feature_names)
            return per_output(booster.predict(data), model)

        return proba
    if library == "onnx":
        from .replay_formats import onnx_raw

        return onnx_raw(path, model, post_transform=True)
    raise ModelError(f"the checker replays no pairs on {library} models")


def per_output(out, model: Model) -> np.ndarray:
    """The library's scores of the two inputs, one column per output (already in the
    trees' raw units: LightGBM's ``sigmoid:`` scales the margin after the sum)."""
    raw = np.asarray(out, dtype=np.float64).reshape(2, -1)
    if model.library_columns is not None and raw.shape[1] > max(model.library_columns):
        raw = raw[:, list(model.library_columns)]
    if raw.shape[1] != model.n_outputs:
        raise ModelError(
            f"the library gives {raw.shape[1]} scores per input, not {model.n_outputs}"
        )
    return raw
