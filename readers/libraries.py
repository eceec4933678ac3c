"""Importing the model libraries (xgboost, lightgbm) for loading and replaying models.

Both libraries import scikit-learn at start-up only to define their scikit-learn wrappers
(``XGBClassifier``, ``LGBMClassifier``), which treesens' replay does not use; that costs
1-2 s per command. The command-line tool owns its process, so it asks for a lean import:
scikit-learn is hidden while the library is imported (its wrappers are then unavailable
in this process; ``Booster`` and its predictions are the same). Library users calling
the Python API get ordinary imports, and nothing is hidden once scikit-learn is loaded.
With lean imports, XGBoost's replay does not import the package at all: it calls the
package's shared library (formats/xgboost_capi.py).
"""

from __future__ import annotations

import importlib
import sys

from ..compiler.errors import InputError

_lean = False

# what to install when a model's library is missing (xgboost is an extra: pyproject.toml)
INSTALL_HINT = {
    "xgboost": "pip install xgboost-cpu, or xgboost for GPU support",
    "lightgbm": "pip install lightgbm",
    "catboost": "pip install 'treesens[catboost]'",
    "onnx": "pip install 'treesens[onnx]'",
    "onnxruntime": "pip install 'treesens[onnx]'",
}


def prefer_lean_imports() -> None:
    """Called by the command-line entry point only."""
    global _lean
    _lean = True


def lean_imports() -> bool:
    """Whether this process asked for lean imports (the command line)."""
    return _lean


def import_library(name: str):
    """``import name`` (xgboost or lightgbm), lean when the CLI asked for it; a missing
    library is an input error that says what to install."""
    try:
        return _import(name)
    except ModuleNotFoundError as e:
        if e.name != name:
            raise
        hint = INSTALL_HINT.get(name, f"pip install {name}")
        raise InputError(
            f"this model needs the {name} package, which is not installed: {hint}"
        ) from None


def _import(name: str):
    if name in sys.modules or not _lean or "sklearn" in sys.modules:
        return importlib.import_module(name)
    sys.modules["sklearn"] = None  # `import sklearn...` now fails at once, as if absent
    try:
        return importlib.import_module(name)
    finally:
        if "sklearn" in sys.modules and sys.modules["sklearn"] is None:
            del sys.modules["sklearn"]
