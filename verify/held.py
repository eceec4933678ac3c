"""The model readings the checker keeps between certificates in one process, so that
certificates of one model (an audit's rows, ``treesens verify DIR``) read its file once.

A reading is held under the SHA-256 the checker computed of the file's bytes (never the
one a certificate states) and the certificate's fields the reading depends on; a file
whose bytes change has another hash, so it is read again, and a reading during which the
file changed (hashed again after it) is not kept and fails the certificate. The readings
of ``FILES`` model files are held, the least recently used let go first.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from .models import ModelError

FILES = 2  # model files whose readings are held at once
PER_FILE = 8  # readings held per file (each set of stated fields one)


class ModelChanged(ModelError):
    """The model file's bytes changed while the checker read it."""


def file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()  # the bytes not held after


def key_of(*fields) -> str:
    """Fields a reading depends on (a certificate's: JSON values) as one key."""
    return json.dumps(fields, sort_keys=True, allow_nan=True, default=repr)


class Held:
    def __init__(self, files: int = FILES, per_file: int = PER_FILE):
        self.files, self.per_file = files, per_file
        # sha256 -> [(key, model or None, reading)], most recently used last
        self._by_file: OrderedDict[str, list] = OrderedDict()
        self.reads = 0  # readings made (not found held): what the tests count

    def get(self, digest: str, path: Path, key: str, read: Callable, model=None):
        """The reading of the file of bytes ``digest`` (at ``path``) under ``key`` (and
        ``model``, compared by equality, for a reading made of a model: the library's
        scores), made by ``read()`` unless held. ModelChanged when the file's bytes
        are not ``digest``'s after a reading."""
        held = self._by_file.get(digest)
        if held is not None:
            self._by_file.move_to_end(digest)
            for k, m, reading in held:
                if k == key and (m is model or m == model):
                    return reading
        reading = read()
        self.reads += 1
        try:
            after = file_hash(path)
        except OSError as e:
            raise ModelChanged(f"{path} went while the checker read it ({e.strerror})") from None
        if after != digest:
            raise ModelChanged(f"{path} changed while the checker read it")
        held = self._by_file.setdefault(digest, [])
        self._by_file.move_to_end(digest)
        held.append((key, model, reading))
        del held[: -self.per_file]
        while len(self._by_file) > self.files:
            self._by_file.popitem(last=False)
        return reading

    def clear(self) -> None:
        self._by_file.clear()


HELD = Held()
