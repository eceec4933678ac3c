"""Replaying witnesses with lightgbm's own predict.

A replayer carries the model text LightGBM loaded, so it pickles with the standard
library and answers in a process that never saw the model file; the Booster is rebuilt
from the text on first use and cached (it is not pickled).
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

import numpy as np

from ...compiler.errors import InputError
from ..libraries import import_library
from .base import LazyLibraryModel


class LightGBMReplayer(LazyLibraryModel):
    """lightgbm's own predict on a Booster loaded from ``model_text`` (what LightGBM was
    given to load). It pickles as that text; the Booster is rebuilt on first use."""

    library = "lightgbm"
    _cached = "_booster"

    def __init__(self, model_text: str, n_classes: int, raw_scale: float = 1.0, booster=None):
        super().__init__(booster)
        self.model_text = model_text
        self.n_classes = n_classes
        # the IR's raw score is the library's raw_score times this (sigmoid parameter;
        # random-forest mode, where raw_score=True returns the sum, not the mean)
        self.raw_scale = raw_scale

    def _build(self) -> Any:
        return booster_from_string(self.model_text, "<LightGBM model>")

    @property
    def booster(self) -> Any:
        return self._library_model()

    def predict_raw(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        r = np.asarray(self.booster.predict(X, raw_score=True), dtype=np.float64)
        return r.reshape(len(X), -1) * self.raw_scale

    def predict(self, X) -> np.ndarray:
        """A regressor's predictions, (n,)."""
        X = np.asarray(X, dtype=np.float64)
        return np.asarray(self.booster.predict(X), dtype=np.float64).reshape(len(X))

    def predict_proba(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        p = np.asarray(self.booster.predict(X), dtype=np.float64)
        if p.ndim == 1:
            return np.stack([1.0 - p, p], axis=1)
        return p


def booster_from_string(text: str, where: str | None = None) -> Any:
    """A Booster from a model text, or one InputError naming ``where``."""
    lgb = import_library("lightgbm")

    try:
        # LightGBM prints its warnings while parsing (a number that overflows) with
        # print(): on stderr, so that stdout holds only the answers (--json)
        with contextlib.redirect_stdout(sys.stderr):
            return lgb.Booster(model_str=text)
    except Exception as e:  # noqa: BLE001 - LightGBMError and friends
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise InputError(f"lightgbm cannot load this model: {msg[:200]}", where) from None
