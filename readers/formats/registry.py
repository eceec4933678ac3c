"""The model formats treesens reads: one line each in ``_REGISTERED``.

Adding a format is adding its module (a class implementing ``base.ModelFormat``) and one
line here (docs/extending.md shows how). ``register`` adds one at run time (a plugin, a
test). The order is the order of ``--format``'s list and of sniffing, with formats that
set ``sniff_last`` asked after the others.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...compiler.ensemble import Ensemble
from . import sniffing
from .base import ModelFormat


class Deferred:
    """A built-in format whose module is imported when it first reads a model (or is
    asked for anything beyond its class attributes, stated here, and its sniff, in
    sniffing.py): telling an XGBoost file's format and reading it import no ONNX,
    CatBoost, LightGBM or scikit-learn reader (tests/frontends/test_model_formats.py
    checks these attributes against the classes')."""

    def __init__(
        self,
        where: str,
        sniff: Callable[[bytes, str], bool],
        make: Callable[[type], ModelFormat] | None = None,
        **attributes: Any,
    ) -> None:
        self.where = where  # "module:Class", the module relative to this package
        self._sniff = sniff
        self._make = make or (lambda cls: cls())
        self._format: ModelFormat | None = None
        for key in ("name", "description", "suffixes", "sniff_last", "takes_base_score"):
            setattr(self, key, attributes.pop(key))
        self.generic_names = attributes.pop("generic_names")
        if attributes:
            raise TypeError(f"unknown format attributes {sorted(attributes)}")

    def sniff(self, head: bytes, suffix: str) -> bool:
        return self._sniff(head, suffix)

    def loaded(self) -> ModelFormat:
        """The format itself (its module imported on the first call)."""
        if self._format is None:
            module, cls = self.where.split(":")
            self._format = self._make(getattr(importlib.import_module(module, __package__), cls))
        return self._format

    def __getattr__(self, attr: str) -> Any:  # load_path, load_object, replayer, ...
        if attr.startswith("_"):
            raise AttributeError(attr)
        return getattr(self.loaded(), attr)

    def __repr__(self) -> str:
        return f"<format {self.name} ({self.where}, imported when it reads)>"


def registered() -> tuple[ModelFormat, ...]:
    return tuple(_REGISTERED)


_REGISTERED: list[ModelFormat] = [
    Deferred(
        ".xgboost_native:XGBoostFormat",
        sniffing.xgboost,
        name="xgboost",
        description="a native XGBoost model",
        suffixes=(".ubj", ".ubjson", ".model", ".bst", ".xgb"),
        sniff_last=True,  # any JSON, and binary content other formats do not claim
        takes_base_score=True,  # of a JSON list of trees (a dump)
        generic_names="f{}",
    ),
    Deferred(
        ".xgboost_dump:XGBoostDumpFormat",
        sniffing.xgboost_dump,
        name="xgboost-dump",
        description="an XGBoost tree dump",
        suffixes=(),
        sniff_last=False,
        takes_base_score=True,
        generic_names="f{}",
    ),
    Deferred(
        ".lightgbm:LightGBMFormat",
        sniffing.lightgbm,
        name="lightgbm",
        description="a LightGBM model",
        suffixes=(),
        sniff_last=False,
        takes_base_score=False,
        generic_names="Column_{}",
    ),
    Deferred(
        ".catboost:CatBoostFormat",
        sniffing.catboost,
        name="catboost",
        description="a CatBoost model",
        suffixes=(".cbm",),
        sniff_last=False,
        takes_base_score=False,
        generic_names="{}",
    ),
    Deferred(
        ".onnx:OnnxFormat",
        sniffing.onnx,
        name="onnx",
        description="an ONNX model",
        suffixes=(".onnx",),
        sniff_last=False,
        takes_base_score=False,
        generic_names="f{}",
    ),
    # a scikit-learn file or Pipeline may hold a model another format reads: it asks them
    Deferred(
        ".sklearn:SklearnFormat",
        sniffing.sklearn,
        lambda cls: cls(registered),
        name="sklearn",
        description="a scikit-learn model",
        suffixes=(".joblib", ".pkl", ".pickle", ".skops"),
        sniff_last=False,
        takes_base_score=False,
        generic_names="x{}",
    ),
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
    """The format of a model file: scikit-learn's for a pickle whatever its suffix (its
    reader refuses it unless trusted), else the one claiming its suffix, else the first
    whose ``sniff`` accepts its first 4 KiB (formats with ``sniff_last`` last); None:
    unknown."""
    suffix = path.suffix.lower()
    with path.open("rb") as fh:
        head = fh.read(4096)
    # a model.bin from joblib.dump: refused as a pickle, not misread by its suffix
    if sniffing.looks_like_pickle(head):
        return by_name("sklearn")
    for fmt in _REGISTERED:
        if suffix in fmt.suffixes:
            return fmt
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
