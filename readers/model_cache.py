"""The command line's cache of parsed model files: a model read once is unpickled after.

Reading a 300-tree XGBoost JSON into the IR takes about 0.1 CPU s, a tenth of a
single ``treesens check``; unpickling the IR takes about 0.01 s. The command line
(lean imports, readers/libraries.py) keeps each XGBoost or LightGBM model file it reads
under ``~/.cache/treesens/models`` (``$TREESENS_CACHE/models`` when set, as for the
learned clauses; ``$XDG_CACHE_HOME``; ``TREESENS_MODEL_CACHE=0`` turns the cache off). An entry is found only
by the SHA-256 of everything the parse depends on:

* the file's bytes, the path as given (the model's ``source`` names it) and the format;
* the load options (a dump's base score, its number of classes);
* treesens' version and the size and modification time of every module of ``readers/``
  and ``compiler/`` (the code that parses and the IR it makes: an edited reader never
  meets an entry of the old one).

Only a load that warned nothing is kept (a cached load could not warn again), and only
when the file still holds the bytes its key was made of; the folder keeps the 64 entries
last written. The
entries are pickles: the folder is the user's, trusted as their home is. An entry that
cannot be read or unpickled is ignored and the file parsed; one that cannot be written
is skipped.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path

from .. import __version__
from ..compiler.ensemble import Ensemble
from .formats.base import LoadOptions
from .libraries import lean_imports

CACHED_FORMATS = ("xgboost", "lightgbm")
MAX_ENTRIES = 64  # models kept (each about 1.5 times its file)
_ROOT = Path(__file__).resolve().parent.parent  # the treesens package
_CODE = ("readers", "compiler")


def cache_dir() -> Path | None:
    """Where the entries live; None when the cache is off."""
    if os.environ.get("TREESENS_MODEL_CACHE", "1").strip().lower() in ("0", "off", "no", "false"):
        return None
    given = os.environ.get("TREESENS_CACHE")  # as the learned clauses' (driver/clauses.py)
    if given:
        return Path(given) / "models"
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "treesens" / "models"


def code_fingerprint() -> bytes:
    """The parsing code's identity: each module's path, size and modification time."""
    found: list[tuple[str, int, int]] = []
    for sub in _CODE:
        folders = [_ROOT / sub]
        while folders:  # os.scandir: the command pays this on every load
            with os.scandir(folders.pop()) as entries:
                for e in entries:
                    if e.is_dir():
                        folders.append(Path(e.path))
                    elif e.name.endswith(".py"):
                        st = e.stat()
                        found.append((os.path.relpath(e.path, _ROOT), st.st_size, st.st_mtime_ns))
    h = hashlib.sha256(__version__.encode())
    for rel, size, mtime in sorted(found):
        h.update(f"{rel}:{size}:{mtime};".encode())
    return h.digest()


def entry_key(fmt_name: str, path: Path, blob: bytes, options: LoadOptions) -> str:
    h = hashlib.sha256(code_fingerprint())
    for part in (fmt_name, str(path), repr(options)):
        h.update(part.encode() + b"\0")
    h.update(hashlib.sha256(blob).digest())
    return h.hexdigest()


def cached_load(
    fmt_name: str, path: Path, options: LoadOptions, load: Callable[[], Ensemble]
) -> Ensemble:
    """``load()``, or its result kept from an earlier command on the same file."""
    folder = cache_dir() if lean_imports() and fmt_name in CACHED_FORMATS else None
    if folder is None:
        return load()
    try:
        blob = path.read_bytes()
        entry = folder / f"{entry_key(fmt_name, path, blob, options)}.pickle"
    except OSError:
        return load()
    try:
        ens = pickle.loads(entry.read_bytes())
        if isinstance(ens, Ensemble):
            return ens
    except Exception:  # noqa: BLE001 - a missing, partial or stale entry: parse the file
        pass
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        ens = load()
    for w in said:  # shown as they would have been, after the load
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if not said and _unchanged(path, blob):  # the file the key names is the one parsed
        _write(folder, entry, ens)
    return ens


def _unchanged(path: Path, blob: bytes) -> bool:
    try:
        return path.read_bytes() == blob
    except OSError:
        return False


def _write(folder: Path, entry: Path, ens: Ensemble) -> None:
    try:
        blob = pickle.dumps(ens, protocol=pickle.HIGHEST_PROTOCOL)
        folder.mkdir(parents=True, exist_ok=True)
        fd, part = tempfile.mkstemp(dir=folder, suffix=".part")
    except (OSError, pickle.PicklingError, TypeError, AttributeError):
        return
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
        os.replace(part, entry)  # whole or absent: a reader never sees a partial entry
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(part)
        return
    _prune(folder)


def _prune(folder: Path) -> None:
    """At most MAX_ENTRIES entries: the least recently written go first."""
    with contextlib.suppress(OSError):
        entries = sorted(folder.glob("*.pickle"), key=lambda p: p.stat().st_mtime_ns)
        for old in entries[: max(0, len(entries) - MAX_ENTRIES)]:
            old.unlink()
