"""Model formats: each module reads one family of model files into the Ensemble IR.

``base`` defines the protocol (``ModelFormat``) and the load options; ``registry`` lists
the formats. XGBoost is split by form: ``xgboost_native`` (JSON, UBJ via ``ubj``, the old
binary format, in-memory models), ``xgboost_dump`` (JSON and text tree dumps) and
``xgboost_replay`` (the replayer, and Boosters synthesised from the IR). ``lightgbm``
reads LightGBM's model text and ``dump_model()`` JSON (replayed by ``lightgbm_replay``);
``catboost`` reads CatBoost's ``.cbm`` and JSON models (replayed by ``catboost_replay``);
``sklearn`` reads fitted scikit-learn estimators (skops files, or trusted pickles).
``onnx`` reads ONNX tree ensembles (``onnx_operator``: the operator's attributes,
``onnx_trees``: its trees, ``onnx_scoring``: its classes and link, ``onnx_replay``:
onnxruntime's predict).
"""

from .base import MAX_FEATURES, LoadOptions, ModelFormat
from .registry import (
    AUTO,
    SUPPORTED,
    by_name,
    format_names,
    generic_names,
    load_object,
    register,
    registered,
    sniff,
    unregister,
)

__all__ = [
    "AUTO",
    "SUPPORTED",
    "MAX_FEATURES",
    "LoadOptions",
    "ModelFormat",
    "by_name",
    "format_names",
    "generic_names",
    "load_object",
    "register",
    "registered",
    "sniff",
    "unregister",
]
