"""Replaying witnesses with catboost's own predict, and catboost's own view of a model.

A replayer carries the model as catboost saves it (``.cbm`` bytes), so it pickles with
the standard library and answers in a process that never saw the model file; the model
is loaded from the bytes on first use and cached (it is not pickled). The bytes are
always ones catboost wrote itself (a user's ``.cbm`` file is first read, and saved again,
by a child process: catboost_reader.py), since catboost's reader does not check all it
reads. A categorical feature's codes reach catboost as the names of their categories
(catboost_categories.py).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ...compiler.errors import InputError
from ..libraries import import_library
from .base import LazyLibraryModel
from .catboost_categories import HashedFeature, replay_rows


class CatBoostReplayer(LazyLibraryModel):
    """catboost's own predict on a model loaded from ``model_bytes`` (``.cbm``).

    ``prediction_type``: what catboost's regressor ``predict`` returns by default for the
    model's loss ("Exponent" for Poisson and Tweedie, else "RawFormulaVal"), or
    "Probability" for a probability model (CrossEntropy), whose prediction is P(class 1)."""

    library = "catboost"
    _cached = "_model"

    def __init__(
        self,
        model_bytes: bytes,
        n_classes: int,
        prediction_type: str = "RawFormulaVal",
        where: str | None = None,
        model: Any = None,
        hashed: tuple[HashedFeature, ...] = (),
        classes: tuple[int, ...] | None = None,
    ):
        super().__init__(model)
        # the columns of catboost's predictions that are the model's classes (None: all):
        # class_names may list classes absent from the training data (probability 0)
        self.classes = classes
        self.model_bytes = model_bytes
        self.n_classes = n_classes
        self.prediction_type = prediction_type
        self.where = where
        self.hashed = hashed  # categorical features: codes are given to catboost as names

    def with_hashed(self, hashed: tuple[HashedFeature, ...]) -> CatBoostReplayer:
        """The same model, with other names for the codes of its categorical features."""
        model = self._model
        return CatBoostReplayer(
            self.model_bytes,
            self.n_classes,
            self.prediction_type,
            self.where,
            model,
            hashed,
            self.classes,
        )

    def trained_classes(self, out: np.ndarray) -> np.ndarray:
        """The columns of catboost's (n, columns) predictions that are the model's classes."""
        return out if self.classes is None else out[:, list(self.classes)]

    def _build(self) -> Any:
        return model_from_bytes(self.model_bytes, self.where)

    @property
    def model(self) -> Any:
        return self._library_model()

    def _predict(self, X, prediction_type: str) -> np.ndarray:
        cb = import_library("catboost")
        X = np.asarray(X, dtype=np.float64)
        if self.hashed:
            X = replay_rows(self.hashed, np.atleast_2d(X))
        try:
            out = self.model.predict(X, prediction_type=prediction_type, thread_count=1)
        except (cb.CatBoostError, ValueError, TypeError) as e:
            raise InputError(
                f"catboost cannot predict with this model: {_first_line(e)}", self.where
            ) from None
        return np.asarray(out, dtype=np.float64)

    def predict_raw(self, X) -> np.ndarray:
        return self.trained_classes(self._predict(X, "RawFormulaVal").reshape(len(X), -1))

    def predict(self, X) -> np.ndarray:
        """A regressor's predictions, (n,): what ``CatBoostRegressor.predict`` returns (a
        probability model's: P(class 1))."""
        out = self._predict(X, self.prediction_type)
        if self.prediction_type == "Probability":
            return out.reshape(len(X), -1)[:, -1]
        return out.reshape(len(X))

    def predict_proba(self, X) -> np.ndarray:
        return self.trained_classes(self._predict(X, "Probability").reshape(len(X), -1))


def _first_line(e: Exception) -> str:
    s = str(e).strip()
    return s.splitlines()[0][:200] if s else type(e).__name__


def model_from_bytes(blob: bytes, where: str | None = None) -> Any:
    """A ``catboost.CatBoost`` loaded from ``.cbm`` bytes, or one InputError."""
    cb = import_library("catboost")
    model = cb.CatBoost()
    try:
        model.load_model(blob=bytes(blob))
    except Exception as e:  # noqa: BLE001 - CatBoostError, and the wrapper's own errors
        raise InputError(f"catboost cannot load this model: {_first_line(e)}", where) from None
    return model


def model_from_json_file(path: Path, where: str) -> Any:
    """A ``catboost.CatBoost`` loaded by catboost's reader of its JSON models."""
    cb = import_library("catboost")
    model = cb.CatBoost()
    try:
        model.load_model(str(path), format="json")
    except Exception as e:  # noqa: BLE001 - CatBoostError, and the wrapper's own errors
        raise InputError(f"catboost cannot load this model: {_first_line(e)}", where) from None
    return model


def saved(model: Any, where: str) -> tuple[dict, bytes]:
    """(the model's JSON as catboost exports it, its ``.cbm`` bytes), written by catboost
    into a temporary directory."""
    with tempfile.TemporaryDirectory(prefix="treesens-catboost-") as tmp:
        json_path, cbm_path = Path(tmp) / "model.json", Path(tmp) / "model.cbm"
        try:
            model.save_model(str(json_path), format="json")
            model.save_model(str(cbm_path), format="cbm")
        except Exception as e:  # noqa: BLE001 - CatBoostError, and the wrapper's own errors
            raise InputError(
                f"catboost cannot export this model: {_first_line(e)}", where
            ) from None
        try:
            exported = json.loads(json_path.read_text())
        except (UnicodeDecodeError, ValueError, RecursionError) as e:
            raise InputError(f"catboost exported unreadable JSON: {e}", where) from None
        return exported, cbm_path.read_bytes()
