"""The library's own raw scores, for a certificate's ``replay`` boxes.

A box of the pair space on which every tree's value is fixed (each input reaches, in
every tree, leaves of one value) gives every pair in it the library's outputs for one
of them. Where the float32 relaxation keeps a bound from ruling such a box out (a pair
on the gap's boundary), the certificate names a pair of the box, and the checker asks the
library itself for its raw scores: when they miss the claim's condition, so does every
pair of the box. Only libraries whose predict gives the raw scores are replayed.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .models import Model, ModelError

# (2, n_features) inputs -> (2, n_outputs) raw scores, in the checker's raw units
RawScores = Callable[[np.ndarray], np.ndarray]


def library_raw(path: str, library: str, model: Model) -> RawScores:
    """The library's raw scores of a model file; ModelError for a library not replayed."""
    if library == "xgboost":
        import xgboost

        booster = xgboost.Booster(model_file=path)

        def scores(X: np.ndarray) -> np.ndarray:
            data = xgboost.DMatrix(X, feature_names=booster.feature_names)
            out = booster.predict(data, output_margin=True)
            return _per_output(out, model)

        return scores
    if library == "lightgbm":
        import lightgbm

        lgb = lightgbm.Booster(model_file=path)
        return lambda X: _per_output(lgb.predict(X, raw_score=True), model)
    raise ModelError(
        f"the checker replays pairs on XGBoost and LightGBM models only, not {library}"
    )


def _per_output(out, model: Model) -> np.ndarray:
    raw = np.asarray(out, dtype=np.float64).reshape(2, -1)
    if raw.shape[1] != model.n_outputs:
        raise ModelError(
            f"the library gives {raw.shape[1]} scores per input, not {model.n_outputs}"
        )
    return raw / model.margin_per_logit
