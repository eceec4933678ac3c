"""Replaying witnesses with xgboost's own predict, and Boosters synthesised from the IR.

A replayer carries the model's bytes (the file's, or a saved Booster's) or a picklable
recipe that makes them, so it pickles with the standard library and answers in a process
that never saw the model file. The Booster is built from them on first use (importing
xgboost takes ~2 s) and cached; it is not pickled. In a process that asked for lean
imports (the command line), the Booster is libxgboost's own, called without the Python
package (xgboost_capi.py: the same predict, without the package's 0.5 s import).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ...compiler.ensemble import Ensemble
from ...compiler.errors import InputError
from ..libraries import import_library, lean_imports
from . import xgboost_saved
from .base import LazyLibraryModel
from .xgboost_capi import CApiBooster, CApiError, find_library, version


class XGBoostReplayer(LazyLibraryModel):
    """xgboost's own predict on a Booster made from ``model`` (JSON or UBJ bytes, or a
    function returning them) or given as ``booster`` (then saved as UBJ when pickled)."""

    library = "xgboost"
    _cached = "_booster"

    def __init__(
        self,
        model: bytes | Callable[[], bytes] | None,
        objective: str,
        n_classes: int,
        where: str | None = None,
        booster: Any = None,
    ):
        if model is None and booster is None:
            raise ValueError("an XGBoost replayer needs the model's bytes or a Booster")
        super().__init__(booster)
        self._model = model
        self.objective = objective
        self.n_classes = n_classes
        self.where = where

    def model_bytes(self) -> bytes:
        """The model as xgboost saves it (made now if it was a recipe or a Booster)."""
        if callable(self._model):
            self._model = self._model()
        if self._model is None:
            self._model = bytes(self._booster.save_raw(raw_format="ubj"))
        return self._model

    def _build(self) -> Any:
        lib = find_library() if lean_imports() else None
        if lib is not None:
            try:  # from the library's own saved form, when an earlier command kept it
                return xgboost_saved.booster(lib, self.model_bytes(), version(lib))
            except CApiError as e:
                raise InputError(
                    f"xgboost cannot load this model: {_first_line(e, 'unreadable')}", self.where
                ) from None
        return booster_from_bytes(self.model_bytes(), self.where)

    def _picklable(self, state: dict) -> None:
        if state["_model"] is None:
            state["_model"] = self.model_bytes()

    @property
    def booster(self) -> Any:
        return self._library_model()

    def _dm(self, X):
        xgb = import_library("xgboost")

        return xgb.DMatrix(
            np.asarray(X, dtype=np.float64),
            feature_names=self.booster.feature_names,
            feature_types=self.booster.feature_types,
            missing=np.nan,
        )

    def _predict(self, X, **kw) -> np.ndarray:
        booster = self.booster
        if isinstance(booster, CApiBooster):
            try:
                return booster.predict(X, **kw)
            except CApiError as e:
                raise InputError(
                    f"xgboost cannot predict with this model: {_first_line(e, 'failed')}",
                    self.where,
                ) from None
        xgb = import_library("xgboost")
        try:
            return np.asarray(self.booster.predict(self._dm(X), **kw), dtype=np.float64)
        except xgb.core.XGBoostError as e:  # a model file xgboost loads but cannot use
            raise InputError(
                f"xgboost cannot predict with this model: {_first_line(e, 'failed')}", self.where
            ) from None

    def predict_raw(self, X) -> np.ndarray:
        return self._predict(X, output_margin=True).reshape(len(X), -1)

    def predict(self, X) -> np.ndarray:
        """A regressor's predictions (prediction space), (n,)."""
        return self._predict(X).reshape(len(X))

    def predict_proba(self, X) -> np.ndarray:
        if self.objective == "multi:softmax":
            raw = self.predict_raw(X)
            z = np.exp(raw - raw.max(axis=1, keepdims=True))
            return z / z.sum(axis=1, keepdims=True)
        p = self._predict(X)
        if self.objective == "binary:logitraw":
            p = 1.0 / (1.0 + np.exp(-p))
        if p.ndim == 1:
            return np.stack([1.0 - p, p], axis=1)
        return p


def _first_line(e: Exception, default: str) -> str:
    """The first line of libxgboost's message, without the clock time and source line it
    starts with ("[06:59:07] /workspace/src/common/json.cc:409: Unknown construct ...")."""
    s = str(e).strip()
    return _LOG_PREFIX.sub("", s.splitlines()[0])[:200] if s else default


# the start of libxgboost's log lines: the time, then its source file and line
_LOG_PREFIX = re.compile(r"^\[\d\d:\d\d:\d\d\] \S+:\d+: ")


def booster_from_bytes(blob: bytes, where: str | None = None) -> Any:
    """A Booster from a model's bytes (JSON, UBJ or xgboost's old binary format)."""
    xgb = import_library("xgboost")

    booster = xgb.Booster()
    try:
        booster.load_model(bytearray(blob))
    except xgb.core.XGBoostError as e:
        raise InputError(
            f"xgboost cannot load this model: {_first_line(e, 'unreadable')}", where
        ) from None
    except UnicodeDecodeError:  # xgboost's message quotes the file's bytes
        raise InputError(
            "xgboost cannot load this model: not a JSON, UBJ or binary XGBoost model", where
        ) from None
    return booster


def native_model(
    ens: Ensemble, base_score: float | tuple[float, ...] = 0.5, objective: str | None = None
) -> dict:
    """XGBoost's native JSON of a model with exactly the ensemble's (numeric) trees, of
    ``objective`` (default: binary:logistic, or multi:softprob of more than 2 classes) and
    ``base_score`` (one number, or one per class) as XGBoost stores them."""
    C = ens.n_classes
    multi = ens.n_outputs > 1
    objective = objective or ("multi:softprob" if multi else "binary:logistic")
    if isinstance(base_score, (tuple, list)):
        bs = "[" + ",".join(repr(float(b)) for b in base_score) + "]"
    else:
        bs = repr(float(base_score))
    trees = [_native_tree(t, ti, ens.n_features) for ti, t in enumerate(ens.trees)]
    return {
        "learner": {
            "attributes": {},
            "feature_names": [],
            "feature_types": [],
            "gradient_booster": {
                "model": {
                    "gbtree_model_param": {"num_parallel_tree": "1", "num_trees": str(len(trees))},
                    "iteration_indptr": list(range(0, len(trees) + 1, C if multi else 1)),
                    "tree_info": [int(t.outputs[0]) for t in ens.trees],
                    "trees": trees,
                },
                "name": "gbtree",
            },
            "learner_model_param": {
                "base_score": bs,
                "boost_from_average": "0",
                "num_class": str(C if multi else 0),
                "num_feature": str(ens.n_features),
                "num_target": "1",
            },
            "objective": {"name": objective, **_objective_params(objective, C)},
        },
        "version": [2, 0, 3],
    }


def _objective_params(objective: str, n_classes: int) -> dict:
    """The parameters XGBoost saves beside an objective's name (its predict reads none of
    them, but loading wants them)."""
    if objective.startswith("multi:"):
        return {"softmax_multiclass_param": {"num_class": str(n_classes)}}
    if objective == "reg:pseudohubererror":
        return {"pseudo_huber_param": {"huber_slope": "1"}}
    if objective == "count:poisson":
        return {"poisson_regression_param": {"max_delta_step": "0.7"}}
    if objective == "reg:tweedie":
        return {"tweedie_regression_param": {"tweedie_variance_power": "1.5"}}
    if objective == "reg:quantileerror":
        return {"quantile_loss_param": {"quantile_alpha": "[5E-1]"}}
    if objective in ("reg:absoluteerror", "reg:squaredlogerror"):
        return {}
    return {"reg_loss_param": {"scale_pos_weight": "1"}}


def _native_tree(t, ti: int, n_features: int) -> dict:
    n = t.n_nodes
    leaf = t.feature < 0
    parents = [2147483647] * n
    for i in range(n):
        if not leaf[i]:
            parents[int(t.left[i])] = i
            parents[int(t.right[i])] = i
    cond = np.where(leaf, t.value[:, 0], t.threshold)
    return {
        "base_weights": [0.0] * n,
        "categories": [],
        "categories_nodes": [],
        "categories_segments": [],
        "categories_sizes": [],
        "default_left": [int(d) for d in t.default_left],
        "id": ti,
        "left_children": [int(v) for v in t.left],
        "loss_changes": [0.0] * n,
        "parents": parents,
        "right_children": [int(v) for v in t.right],
        "split_conditions": [float(v) for v in cond],
        "split_indices": [max(int(v), 0) for v in t.feature],
        "split_type": [0] * n,
        "sum_hessian": [1.0] * n,
        "tree_param": {
            "num_deleted": "0",
            "num_feature": str(n_features),
            "num_nodes": str(n),
            "size_leaf_vector": "1",
        },
    }


def native_model_bytes(
    ens: Ensemble, base_score: float | tuple[float, ...] = 0.5, objective: str | None = None
) -> bytes:
    """``native_model`` as the JSON bytes xgboost loads (a picklable replay recipe)."""
    return json.dumps(native_model(ens, base_score, objective)).encode()


def booster_from_ensemble(ens: Ensemble, base_score: float = 0.5) -> Any:
    """An xgboost Booster with exactly the ensemble's trees (used to replay dumps)."""
    return booster_from_bytes(native_model_bytes(ens, base_score))
