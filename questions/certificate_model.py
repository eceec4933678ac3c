"""The model file a certificate names, and the refusal, before any question is asked,
of a certificate asked of a model that has none (built in memory, or its file gone):
the checker reads the model's file with the model's own library."""

from __future__ import annotations

from pathlib import Path

from ..compiler.ensemble import Ensemble
from ..compiler.errors import InputError


def model_file_of(model, ens: Ensemble) -> str | Path | None:
    """The file a certificate names: the model given as a path, or the file a loaded
    Ensemble was read from (None: an in-memory model, which the checker cannot read)."""
    if isinstance(model, (str, Path)):
        return model
    where = ens.origin.file if ens.origin is not None else ""
    return where if where and Path(where).is_file() else None


def refuse_without_model_file(model, ens: Ensemble, keyword: str) -> None:
    """An InputError where ``keyword`` (certificate=, certificates=) is asked of a model
    with no file the checker can read, saying why and what to do."""
    if model_file_of(model, ens) is not None:
        return
    where = ens.origin.file if ens.origin is not None else ""
    if where and not where.startswith("<"):  # an in-memory model's reads "<XGBClassifier>"
        has = f"its file {where} is gone"
    else:
        has = f"the model given is in memory ({where or type(model).__name__})"
    raise InputError(
        f"{keyword} needs the model's file, which the checker reads with the model's "
        f"library, and {has}: save the model and give its path (docs/certificates.md)"
    )
