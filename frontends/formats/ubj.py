"""Universal Binary JSON (UBJ), as XGBoost saves models (``.ubj``).

The file is decoded and checked here like a JSON model before xgboost, which crashes on
some malformed models, is given it to replay a witness.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...compiler.errors import InputError

_UBJ_NUMBERS = {
    b"i": ">i1",
    b"U": ">u1",
    b"I": ">i2",
    b"l": ">i4",
    b"L": ">i8",
    b"d": ">f4",
    b"D": ">f8",
}


def decode(blob: bytes, where: str) -> Any:
    """Universal Binary JSON as XGBoost writes it (typed arrays ``[$d#L...`` included)."""
    pos = 0

    def fail(msg: str):
        raise InputError(f"malformed UBJ at byte {pos}: {msg}", where)

    def take(n: int) -> bytes:
        nonlocal pos
        if n < 0 or pos + n > len(blob):
            fail("unexpected end of file")
        pos += n
        return blob[pos - n : pos]

    def number(marker: bytes):
        dt = np.dtype(_UBJ_NUMBERS[marker])
        v = np.frombuffer(take(dt.itemsize), dtype=dt)[0]
        return float(v) if dt.kind == "f" else int(v)

    def count() -> int:
        marker = take(1)
        if marker not in _UBJ_NUMBERS or marker in (b"d", b"D"):
            fail(f"expected a length, found {marker!r}")
        n = number(marker)
        if not 0 <= n <= len(blob) - pos:
            fail(f"length {n} runs past the end of the file")
        return n

    def text() -> str:
        try:
            return take(count()).decode("utf-8")
        except UnicodeDecodeError:
            fail("a string is not UTF-8")

    def value(marker: bytes, depth: int):
        if depth > 64:
            fail("nested too deeply")
        if marker in _UBJ_NUMBERS:
            return number(marker)
        if marker in (b"S", b"H"):
            return text()
        if marker == b"C":
            return take(1).decode("latin-1")
        if marker in (b"T", b"F"):
            return marker == b"T"
        if marker == b"Z":
            return None
        if marker in (b"[", b"{"):
            return container(marker, depth + 1)
        fail(f"unknown marker {marker!r}")

    def container(open_: bytes, depth: int):
        is_obj = open_ == b"{"
        typ = n = None
        if blob[pos : pos + 1] == b"$":
            take(1)
            typ = take(1)
            if blob[pos : pos + 1] != b"#":
                fail("a typed container needs a count")
        if blob[pos : pos + 1] == b"#":
            take(1)
            n = count()
        if typ is not None and typ in _UBJ_NUMBERS and not is_obj:
            dt = np.dtype(_UBJ_NUMBERS[typ])
            return np.frombuffer(take(n * dt.itemsize), dtype=dt).tolist()
        out: dict | list = {} if is_obj else []
        k = 0
        while n is None or k < n:
            if n is None and blob[pos : pos + 1] == (b"}" if is_obj else b"]"):
                take(1)
                break
            k += 1
            key = text() if is_obj else None
            item = value(typ if typ is not None else take(1), depth)
            if is_obj:
                out[key] = item
            else:
                out.append(item)
        return out

    return value(take(1), 0)
