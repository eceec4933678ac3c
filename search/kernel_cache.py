"""numba's disk cache of the search's kernels, stamped with every file they compile from.

numba stamps a cached function with the bytes of its own file alone, but a kernel
compiles in the functions and constants it imports from other files (gap_kernel_jit's
run: gap_heap_jit's heap, relation_jit's bounds, gap_kernel.SPLIT_TIE), so a change to one
of those alone kept running the old machine code from the cache (heap_shed broken on
purpose in gap_heap_jit.py still ran as before on a warm cache). A kernel file names the
modules it compiles from (``compiled_from``) before its first cached function; the stamp
of its functions is then a hash of its own bytes and those of every module it names, and
of theirs in turn. Imported by the kernel files only (it imports numba)."""

from __future__ import annotations

import hashlib
import os
from types import ModuleType

from numba.core import caching

_SOURCES: dict[str, tuple[str, ...]] = {}  # a kernel file -> the files it compiles from


def compiled_from(py_file: str, *modules: ModuleType) -> None:
    """Declare that the cached functions of ``py_file`` compile in code or constants of
    ``modules``: their cache is renewed when any of those files changes. Call it before
    the file's first ``numba.njit(cache=True)`` function is made."""
    _install()
    _SOURCES[_key(py_file)] = tuple(_key(m.__file__) for m in modules)


def stamp(py_file: str) -> bytes:
    """The cache stamp of a kernel file's functions: a hash of the bytes of every file
    it compiles from (its own included, and what those compile from in turn)."""
    h = hashlib.sha256()
    for path in _closure(_key(py_file)):
        with open(path, "rb") as f:
            data = f.read()
        h.update(os.path.basename(path).encode() + len(data).to_bytes(8, "little"))
        h.update(data)
    return h.digest()


def _key(path: str) -> str:
    return os.path.realpath(path)


def _closure(path: str) -> list[str]:
    seen: set[str] = set()
    todo = [path]
    while todo:
        p = todo.pop()
        if p not in seen:
            seen.add(p)
            todo.extend(_SOURCES.get(p, ()))
    return sorted(seen)


class _Stamped:
    """A numba cache locator for the files registered here (None for any other file, so
    numba's own locators take those): numba's own place, this module's stamp."""

    _py_file: str

    @classmethod
    def from_function(cls, py_func, py_file):
        if _key(py_file) not in _SOURCES:
            return None
        return super().from_function(py_func, py_file)

    def get_source_stamp(self):
        return stamp(self._py_file)


class _UserProvided(_Stamped, caching.UserProvidedCacheLocator):
    pass


class _InTree(_Stamped, caching.InTreeCacheLocator):
    pass


class _UserWide(_Stamped, caching.UserWideCacheLocator):
    pass


def _install() -> None:
    """Put the stamped locators ahead of numba's own, in numba's order of places (a
    NUMBA_CACHE_DIR first, then beside the file, then the user's cache folder)."""
    classes = caching.CacheImpl._locator_classes
    if _UserProvided not in classes:
        classes[:0] = [_UserProvided, _InTree, _UserWide]
