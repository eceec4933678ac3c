"""Replaying witnesses with lightgbm's own predict.

A replayer carries the model text LightGBM loaded, so it pickles with the standard
library and answers in a process that never saw the model file; the Booster is rebuilt
from the text on first use and cached (it is not pickled).
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from ...compiler.errors import InputError
from ..libraries import import_library


class LightGBMReplayer:
    """lightgbm's own predict on a Booster loaded from ``model_text`` (what LightGBM was
    given to load). It pickles as that text; the Booster is rebuilt on first use."""

    library = "lightgbm"

    def __init__(self, model_text: str, n_classes: int, raw_scale: float = 1.0, booster=None):
        self.model_text = model_text
        self.n_classes = n_classes
        # the IR's raw score is the library's raw_score times this (sigmoid parameter;
        # random-forest mode, where raw_score=True returns the sum, not the mean)
        self.raw_scale = raw_scale
        self._booster = booster
        self._lock = threading.Lock()

    @property
    def booster(self) -> Any:
        with self._lock:
            if self._booster is None:
                self._booster = booster_from_string(self.model_text, "<LightGBM model>")
            return self._booster

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_booster"] = None
        del state["_lock"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

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
        return lgb.Booster(model_str=text)
    except Exception as e:  # noqa: BLE001 - LightGBMError and friends
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise InputError(f"lightgbm cannot load this model: {msg[:200]}", where) from None
