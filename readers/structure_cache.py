"""The command line keeps each model's encoding structure (compiler/encode.py
``ensemble_structure``: every feature's threshold intervals and the value a witness shows
in each) between commands, as it keeps parsed models (model_cache.py): a model's second
check skips most of its compile.

An entry is named by the SHA-256 of the ensemble's fingerprint (its trees, features and
bounds, comparison: everything a structure is computed from) and of the code of
readers/ and compiler/ (model_cache.code_fingerprint), so an edited module or another
model never reads it. Entries are written whole (a rename) and at most MAX_ENTRIES are
kept; ``TREESENS_MODEL_CACHE=0`` turns it off with the model cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import tempfile
from pathlib import Path

from ..compiler import encode
from ..compiler.ensemble import Ensemble
from .libraries import lean_imports
from .model_cache import cache_dir, code_fingerprint

MAX_ENTRIES = 64


class StructureFiles:
    """A folder of structures, one pickle per ensemble fingerprint (encode.StructureStore)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self._code: bytes | None = None

    def entry(self, ens: Ensemble) -> Path:
        if self._code is None:
            self._code = code_fingerprint()
        key = hashlib.sha256(self._code + ens.fingerprint().encode()).hexdigest()
        return self.folder / f"{key}.pickle"

    def load(self, ens: Ensemble) -> encode.StructureParts | None:
        try:
            parts = pickle.loads(self.entry(ens).read_bytes())
        except Exception:  # noqa: BLE001 - missing, partial or stale: computed again
            return None
        ok = isinstance(parts, tuple) and len(parts) == 3 and isinstance(parts[0], dict)
        return parts if ok else None

    def save(self, ens: Ensemble, parts: encode.StructureParts) -> None:
        try:
            blob = pickle.dumps(parts, protocol=pickle.HIGHEST_PROTOCOL)
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, part = tempfile.mkstemp(dir=self.folder, suffix=".part")
        except (OSError, pickle.PicklingError, TypeError, AttributeError):
            return
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(blob)
            os.replace(part, self.entry(ens))  # whole or absent
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(part)
            return
        with contextlib.suppress(OSError):
            entries = sorted(self.folder.glob("*.pickle"), key=lambda p: p.stat().st_mtime_ns)
            for old in entries[: max(0, len(entries) - MAX_ENTRIES)]:
                old.unlink()


def keep_structures() -> None:
    """In a process that asked for lean imports (the command line, as the model cache),
    structures outlive the process, unless the cache is off."""
    folder = cache_dir() if lean_imports() else None
    if folder is not None:
        encode.keep_structures_in(StructureFiles(folder.parent / "structures"))
