"""xgboost's own predict through its shared library, without its Python package.

``import xgboost`` imports scipy.sparse (and its array-API layer, numpy.testing, ...): about
0.5-0.6 CPU s, more than the rest of a single ``treesens check`` on most models. The
prediction itself is libxgboost's: the Python package's ``Booster.predict`` is a thin
ctypes wrapper over ``XGBoosterPredictFromDMatrix``. The command line (which asked for lean
imports, readers/libraries.py) replays witnesses with the same calls made here, in the order
the Python package makes them, on the library the package ships:

* ``Booster()``: ``XGBoosterCreate`` with no DMatrix, then ``validate_parameters`` set
  (``XGBoosterSetParam(..., "True")``, as ``set_param`` writes a bool), then
  ``XGBoosterLoadModelFromBuffer`` with the model's bytes, and one thread (``nthread``;
  the package's default is every core, which changes no prediction, only its cost);
* ``DMatrix(X, missing=nan, feature_names=..., feature_types=...)`` of a float64 array:
  ``XGDMatrixCreateFromDense`` with the array's ``__array_interface__`` and
  ``{"missing": NaN, "nthread": 1, "data_split_mode": 0}``, then the Booster's feature
  names and types set on it (``XGDMatrixSetStrFeatureInfo``);
* ``predict(dm, output_margin=...)``: ``XGBoosterPredictFromDMatrix`` with ``{"type": 0 or
  1, "training": false, "iteration_begin": 0, "iteration_end": 0, "strict_shape": false}``;
  the float32 result copied out in the shape the library gives.

tests/frontends/test_xgboost_capi.py checks that the scores equal the Python package's,
bit for bit. ``find_library()`` is None (and the Python package is used) when the package's
library is not where the package installs it or its version is not the package's.
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import threading
from pathlib import Path

import numpy as np

from ..libraries import lean_imports

_u64 = ctypes.c_uint64
_LOCK = threading.Lock()
_LIB: list = []  # [the loaded library or None], once per process


class CApiError(Exception):
    """libxgboost returned an error; the message is its ``XGBGetLastError``."""


def library_path() -> Path | None:
    """Where the installed xgboost package keeps its shared library (not imported)."""
    try:
        spec = importlib.util.find_spec("xgboost")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        for name in ("libxgboost.so", "libxgboost.dylib", "xgboost.dll"):
            p = Path(root) / "lib" / name
            if p.is_file():
                return p
    return None


def _package_version(lib_path: Path) -> tuple[int, ...] | None:
    """The version of the Python package beside the library (its VERSION file)."""
    try:
        text = (lib_path.parent.parent / "VERSION").read_text(encoding="ascii").strip()
        return tuple(int(p) for p in text.split("-")[0].split(".")[:3])
    except (OSError, ValueError):
        return None


def find_library():
    """The package's libxgboost, loaded once; None when it cannot stand in for the package
    (not found, not loadable, or not the package's version)."""
    with _LOCK:
        if not _LIB:
            _LIB.append(_load())
        return _LIB[0]


def _load():
    path = library_path()
    if path is None:
        return None
    try:
        lib = ctypes.cdll.LoadLibrary(str(path))
    except OSError:
        return None
    lib.XGBGetLastError.restype = ctypes.c_char_p
    v = [ctypes.c_int() for _ in range(3)]
    lib.XGBoostVersion(*(ctypes.byref(x) for x in v))
    if _package_version(path) != tuple(x.value for x in v):
        return None
    if lean_imports():
        # one thread by default in this process (the command line), as each Booster here
        # has: else the model's load runs a parallel loop on every core, and OpenMP's
        # thread then spins after it (about 0.01 CPU s per replay, the same scores); an
        # older library without the setting is left as it is
        lib.XGBSetGlobalConfig(json.dumps({"nthread": 1}).encode())
    return lib


def version(lib) -> str:
    """The library's version, as ``3.2.0``."""
    v = [ctypes.c_int() for _ in range(3)]
    lib.XGBoostVersion(*(ctypes.byref(x) for x in v))
    return ".".join(str(x.value) for x in v)


def _check(lib, ret: int) -> None:
    if ret != 0:
        raise CApiError(lib.XGBGetLastError().decode("utf-8", "replace"))


def _c_strings(items: list[str]):
    return (ctypes.c_char_p * len(items))(*(s.encode() for s in items))


class CApiBooster:
    """A Booster held by libxgboost: loaded from a model's bytes, predicting float64 rows."""

    def __init__(self, lib, blob: bytes):
        self._lib = lib
        self._handle = ctypes.c_void_p()
        _check(lib, lib.XGBoosterCreate(None, _u64(0), ctypes.byref(self._handle)))
        _check(lib, lib.XGBoosterSetParam(self._handle, b"validate_parameters", b"True"))
        # one thread: a replay predicts two rows, and starting OpenMP's threads costs
        # ~0.05 CPU s per call (more on a loaded machine); each row's sum over the trees is
        # the same whatever the thread count
        _check(lib, lib.XGBoosterSetParam(self._handle, b"nthread", b"1"))
        buf = bytearray(blob)
        ptr = (ctypes.c_char * len(buf)).from_buffer(buf)
        _check(lib, lib.XGBoosterLoadModelFromBuffer(self._handle, ptr, _u64(len(buf))))
        _check(lib, lib.XGBoosterSetParam(self._handle, b"nthread", b"1"))  # kept by a load?
        self.feature_names = self._feature_info(b"feature_name")
        self.feature_types = self._feature_info(b"feature_type")

    def saved(self) -> bytes:
        """The model as libxgboost saves it in its binary form (UBJ,
        ``XGBoosterSaveModelToBuffer``): what ``save_raw(raw_format="ubj")`` returns."""
        n = _u64()
        out = ctypes.POINTER(ctypes.c_char)()
        cfg = json.dumps({"format": "ubj"}).encode()
        lib = self._lib
        _check(
            lib,
            lib.XGBoosterSaveModelToBuffer(self._handle, cfg, ctypes.byref(n), ctypes.byref(out)),
        )
        return ctypes.string_at(out, n.value)

    def _feature_info(self, field: bytes) -> list[str] | None:
        n = _u64()
        arr = ctypes.POINTER(ctypes.c_char_p)()
        lib = self._lib
        _check(
            lib,
            lib.XGBoosterGetStrFeatureInfo(self._handle, field, ctypes.byref(n), ctypes.byref(arr)),
        )
        out = [arr[i].decode() for i in range(n.value)]
        return out or None

    def _dmatrix(self, X: np.ndarray) -> ctypes.c_void_p:
        lib = self._lib
        inf = json.dumps(X.__array_interface__).encode()
        cfg = json.dumps({"missing": float("nan"), "nthread": 1, "data_split_mode": 0})
        dm = ctypes.c_void_p()
        _check(lib, lib.XGDMatrixCreateFromDense(inf, cfg.encode(), ctypes.byref(dm)))
        try:
            for field, info in (
                (b"feature_name", self.feature_names),
                (b"feature_type", self.feature_types),
            ):
                if info is not None:
                    _check(
                        lib,
                        lib.XGDMatrixSetStrFeatureInfo(
                            dm, field, _c_strings(info), _u64(len(info))
                        ),
                    )
        except CApiError:
            lib.XGDMatrixFree(dm)
            raise
        return dm

    def predict(self, X, output_margin: bool = False) -> np.ndarray:
        """The library's predictions of rows ``X`` (float32 values, as float64)."""
        lib = self._lib
        X = np.ascontiguousarray(X, dtype=np.float64)
        dm = self._dmatrix(X)
        try:
            cfg = {
                "type": 1 if output_margin else 0,
                "training": False,
                "iteration_begin": 0,
                "iteration_end": 0,
                "strict_shape": False,
            }
            shape = ctypes.POINTER(_u64)()
            dims = _u64()
            preds = ctypes.POINTER(ctypes.c_float)()
            _check(
                lib,
                lib.XGBoosterPredictFromDMatrix(
                    self._handle,
                    dm,
                    json.dumps(cfg).encode(),
                    ctypes.byref(shape),
                    ctypes.byref(dims),
                    ctypes.byref(preds),
                ),
            )
            dims_t = tuple(int(shape[i]) for i in range(dims.value))
            n = int(np.prod(dims_t)) if dims_t else 0
            # copied out of the library's buffer (numpy.ctypeslib would cost an import)
            out = np.frombuffer(ctypes.string_at(preds, 4 * n), dtype=np.float32)
            return out.reshape(dims_t).astype(np.float64)
        finally:
            lib.XGDMatrixFree(dm)

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle is not None and handle.value:
            self._lib.XGBoosterFree(handle)
            self._handle = None
