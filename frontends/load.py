"""Load any supported model (a path or an in-memory object) into the Ensemble IR."""

from __future__ import annotations

import math
from pathlib import Path

from ..compiler.ensemble import Ensemble
from ..compiler.errors import InputError, UnsupportedModelError

FORMATS = ("auto", "xgboost", "xgboost-dump", "lightgbm", "sklearn")
# a model file states its number of features as a number: beyond this, a few bytes would
# make treesens build millions of features (and run out of memory)
MAX_FEATURES = 1_000_000


def load_model(
    model,
    *,
    format: str = "auto",
    details=None,
    base_score: float | None = None,
    n_classes: int | None = None,
    data=None,
    label: str = "label",
    auto_details: bool = True,
) -> Ensemble:
    """A model file path, or a fitted XGBoost / LightGBM / scikit-learn model object.

    ``details``: a feature,name,lb,ub CSV; ``data``: a CSV whose columns name the features
    of a model that has only generic names (f0, Column_0, x0, ...). With ``auto_details``, a
    details file beside a model file (``<model>_details.csv``, ``<model minus its last
    _part>_details.csv`` or ``details.csv``) is used when it names exactly the model's
    features in the model's order (its bounds keep witnesses inside the data's domain).
    """
    if base_score is not None and not (math.isfinite(base_score) and 0.0 < base_score < 1.0):
        raise InputError(f"base_score {base_score:g} must be a probability in (0, 1)")
    if isinstance(model, Ensemble):
        ens = model
    elif isinstance(model, (str, Path)):
        ens = _load_path(Path(model), format, base_score, n_classes)
    else:
        ens = _load_object(model)
    if data is not None:
        from .details import apply_data_names

        ens = apply_data_names(ens, data, label)
    if details is None and auto_details and isinstance(model, (str, Path)):
        details = _details_beside(Path(model), ens)
        if details is not None:
            from dataclasses import replace

            ens = replace(ens, source=f"{ens.source} (bounds from {details})")
    if details is not None:
        from .details import apply_details

        ens = apply_details(ens, details)
    return ens


def details_candidates(path: Path) -> list[Path]:
    """Where a model's details file may sit beside it, most specific first: for
    ``wine_xgb.json``, ``wine_xgb_details.csv``, ``wine_details.csv``, ``details.csv``."""
    stem = path.name.split(".")[0]
    names = [f"{stem}_details.csv"]
    if "_" in stem:
        names.append(f"{stem.rsplit('_', 1)[0]}_details.csv")
    names.append("details.csv")
    return [path.parent / n for n in dict.fromkeys(names)]


def _details_beside(path: Path, ens: Ensemble) -> Path | None:
    """The first details file beside the model that declares exactly its features, in
    order (a file naming other features belongs to another model and is skipped)."""
    import csv

    for cand in details_candidates(path):
        if not cand.is_file():
            continue
        try:
            rows = list(csv.DictReader(cand.read_text().splitlines()))
            names = [r["name"].strip() for r in sorted(rows, key=lambda r: int(r["feature"]))]
        except (OSError, UnicodeDecodeError, KeyError, ValueError, AttributeError):
            continue
        if names == ens.feature_names:
            return cand
    return None


def _load_path(path: Path, fmt: str, base_score, n_classes) -> Ensemble:
    if fmt not in FORMATS:
        raise InputError(f"unknown model format {fmt!r} (use one of {', '.join(FORMATS)})")
    where = str(path)
    if not path.exists():
        raise InputError("model file not found", where)
    if path.is_dir():
        raise InputError("is a directory, not a model file", where)
    if path.stat().st_size == 0:
        raise InputError("model file is empty", where)
    suffix = path.suffix.lower()
    if fmt == "auto":
        fmt = _sniff(path, suffix)
    if fmt in ("xgboost", "xgboost-dump"):
        from . import xgboost as xgbf

        return xgbf.load_path(
            path, base_score=base_score, n_classes=n_classes, dump=fmt == "xgboost-dump"
        )
    if base_score is not None:
        raise InputError(
            "base_score is read only for an XGBoost text dump; this model records its own", where
        )
    if fmt == "lightgbm":
        try:
            from . import lightgbm as lgbf
        except ImportError:
            raise UnsupportedModelError("LightGBM models are not supported yet", where) from None
        return lgbf.load_path(path)
    if fmt == "sklearn":
        try:
            from . import sklearn as skf
        except ImportError:
            raise UnsupportedModelError(
                "scikit-learn model files are not supported yet", where
            ) from None
        return skf.load_path(path)
    raise InputError(
        f"cannot tell the model format; pass --format ({', '.join(FORMATS[1:])})", where
    )


def _sniff(path: Path, suffix: str) -> str:
    if suffix in (".ubj", ".ubjson", ".model", ".bst", ".xgb"):
        return "xgboost"
    if suffix in (".joblib", ".pkl", ".pickle", ".skops"):
        return "sklearn"
    head = path.open("rb").read(4096)
    try:
        text = head.decode("utf-8", errors="strict").lstrip()
    except UnicodeDecodeError:
        return "xgboost" if suffix != ".txt" else "unknown"
    if text.startswith("tree\n") or text.startswith("tree\r\n") or "\nversion=v" in text[:200]:
        return "lightgbm"
    if (
        text.startswith("{")
        and ('"tree_info"' in text or text.replace(" ", "").startswith('{"name":"tree"'))
        and '"learner"' not in text
    ):
        return "lightgbm"
    if text.startswith("{") or text.startswith("["):
        return "xgboost"
    return "unknown"


def _load_object(obj) -> Ensemble:
    mod = type(obj).__module__ or ""
    name = type(obj).__name__
    if mod.startswith("xgboost"):
        from . import xgboost as xgbf

        if name == "Booster":
            return xgbf.from_booster(obj)
        return xgbf.from_estimator(obj)
    if mod.startswith("lightgbm"):
        try:
            from . import lightgbm as lgbf
        except ImportError:
            raise UnsupportedModelError("LightGBM models are not supported yet") from None
        return lgbf.from_object(obj)
    if mod.startswith("sklearn"):
        try:
            from . import sklearn as skf
        except ImportError:
            raise UnsupportedModelError("scikit-learn models are not supported yet") from None
        return skf.from_estimator(obj)
    raise UnsupportedModelError(f"cannot read a model of type {mod}.{name}")
