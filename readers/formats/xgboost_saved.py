"""The command line's replays load an XGBoost model from libxgboost's own binary save of it.

libxgboost parses a model's JSON in about 50 ms per 300 trees (most of a replay's cost) and
its binary form (UBJ) in about 8. The first replay of a model file loads its bytes as
they are and keeps what the library saves of the model it loaded
(``XGBoosterSaveModelToBuffer``, UBJ: the same trees, values and parameters, bit for bit;
XGBoost's JSON and UBJ forms of a model are one model); later commands on the same bytes
load that. An entry is named by the SHA-256 of the model's bytes and the library's
version, and starts with the SHA-256 of what follows: an entry that does not match is
ignored (the model's own bytes are loaded, and the entry written again). Kept beside
the model cache (readers/model_cache.py: ``TREESENS_MODEL_CACHE=0`` turns both off).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from pathlib import Path

from ..model_cache import cache_dir
from .xgboost_capi import CApiBooster, CApiError

MAX_ENTRIES = 64


def entry_path(blob: bytes, version: str) -> Path | None:
    folder = cache_dir()
    if folder is None:
        return None
    key = hashlib.sha256(blob).hexdigest()
    return folder.parent / "xgboost-saved" / f"{key}-{version}.ubj"


def booster(lib, blob: bytes, version: str) -> CApiBooster:
    """libxgboost's Booster of the model ``blob``: from its saved form kept by an earlier
    command on the same bytes, else from ``blob`` (and its saved form kept)."""
    entry = entry_path(blob, version)
    if entry is not None:
        saved = _read(entry)
        if saved is not None:
            with contextlib.suppress(CApiError):
                return CApiBooster(lib, saved)
    b = CApiBooster(lib, blob)  # its errors are the model's: the caller reports them
    if entry is not None:
        with contextlib.suppress(CApiError):
            _write(entry, b.saved())
    return b


def _read(entry: Path) -> bytes | None:
    try:
        data = entry.read_bytes()
    except OSError:
        return None
    digest, saved = data[:32], data[32:]
    return saved if len(data) > 32 and hashlib.sha256(saved).digest() == digest else None


def _write(entry: Path, saved: bytes) -> None:
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        fd, part = tempfile.mkstemp(dir=entry.parent, suffix=".part")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(hashlib.sha256(saved).digest() + saved)
        os.replace(part, entry)  # whole or absent
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(part)
        return
    _prune(entry.parent)


def _prune(folder: Path) -> None:
    """At most MAX_ENTRIES entries: the least recently written go first."""
    with contextlib.suppress(OSError):
        entries = sorted(folder.glob("*.ubj"), key=lambda p: p.stat().st_mtime)
        for old in entries[:-MAX_ENTRIES]:
            with contextlib.suppress(OSError):
                old.unlink()
