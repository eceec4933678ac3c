"""The model formats treesens reads: one line each in ``_REGISTERED``.

Adding a format is adding its module (a class implementing ``base.ModelFormat``) and one
line here (docs/extending.md shows how). ``register`` adds one at run time (a plugin, a
test). The order is the order of ``--format``'s list and of sniffing, with formats that
set ``sniff_last`` asked after the others.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...compiler.ensemble import Ensemble
from .base import ModelFormat
from .catboost import CatBoostFormat
from .lightgbm import LightGBMFormat
from .onnx import OnnxFormat
from .sklearn import SklearnFormat
from .xgboost_dump import XGBoostDumpFormat
from .xgboost_native import XGBoostFormat


def registered() -> tuple[ModelFormat, ...]:
    return tuple(_REGISTERED)


_REGISTERED: list[ModelFormat] = [
    XGBoostFormat(),
    XGBoostDumpFormat(),
    LightGBMFormat(),
    CatBoostFormat(),
    OnnxFormat(),
    # a scikit-learn file or Pipeline may hold a model another format reads: it asks them
    SklearnFormat(registered),
]

AUTO = "auto"  # the format name that asks treesens to tell the format from the file


def register(fmt: ModelFormat) -> None:
    """Add a format (after the built-in ones); its name must be new."""
    if not isinstance(fmt, ModelFormat):
        raise TypeError(f"{fmt!r} does not implement the ModelFormat protocol")
    if fmt.name == AUTO or fmt.name in format_names():
        raise ValueError(f"a model format named {fmt.name!r} is already registered")
    _REGISTERED.append(fmt)


def unregister(name: str) -> None:
    """Remove the format called ``name`` (one added with ``register``)."""
    _REGISTERED[:] = [f for f in _REGISTERED if f.name != name]


def format_names() -> tuple[str, ...]:
    """The names of the registered formats, in registry order (without ``auto``)."""
    return tuple(f.name for f in _REGISTERED)


def by_name(name: str) -> ModelFormat | None:
    return next((f for f in _REGISTERED if f.name == name), None)


SUPPORTED = (
    "treesens reads XGBoost (.json, .ubj, JSON tree dumps), LightGBM (.txt), CatBoost "
    "(.cbm, JSON), scikit-learn tree ensembles (.skops; pickles with --trust-pickle) and "
    "ONNX tree ensembles (.onnx), and fitted XGBoost, LightGBM, CatBoost and scikit-learn "
    "models in Python"
)


def sniff(path: Path) -> ModelFormat | None:
    """The format of a model file: the one claiming its suffix, else the first whose
    ``sniff`` accepts its first 4 KiB (formats with ``sniff_last`` last); None: unknown."""
    suffix = path.suffix.lower()
    for fmt in _REGISTERED:
        if suffix in fmt.suffixes:
            return fmt
    with path.open("rb") as fh:
        head = fh.read(4096)
    ordered = sorted(_REGISTERED, key=lambda f: f.sniff_last)  # stable: registry order
    return next((f for f in ordered if f.sniff(head, suffix)), None)


def load_object(obj: Any) -> Ensemble | None:
    """A fitted in-memory model read by the first format that knows it, or None."""
    for fmt in _REGISTERED:
        ens = fmt.load_object(obj)
        if ens is not None:
            return ens
    return None


def generic_names() -> tuple[str, ...]:
    """The patterns of the placeholder feature names libraries give (``f{}`` for f0, ...)."""
    pats = (f.generic_names for f in _REGISTERED if f.generic_names is not None)
    return tuple(dict.fromkeys(pats))
