"""Universal Binary JSON (UBJ), as XGBoost saves models (``.ubj``).

The file is decoded and checked here like a JSON model before xgboost, which crashes on
some malformed models, is given it to replay a witness.
"""

from __future__ import annotations

from typing import Any, NoReturn

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
    reader = _Reader(blob, where)
    return reader.value(reader.take(1), 0)


class _Reader:
    """A position in a UBJ blob, and how to read each kind of value from there."""

    def __init__(self, blob: bytes, where: str):
        self.blob, self.where, self.pos = blob, where, 0

    def fail(self, msg: str) -> NoReturn:
        raise InputError(f"malformed UBJ at byte {self.pos}: {msg}", self.where)

    def peek(self) -> bytes:
        return self.blob[self.pos : self.pos + 1]

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.blob):
            self.fail("unexpected end of file")
        self.pos += n
        return self.blob[self.pos - n : self.pos]

    def number(self, marker: bytes) -> int | float:
        dt = np.dtype(_UBJ_NUMBERS[marker])
        v = np.frombuffer(self.take(dt.itemsize), dtype=dt)[0]
        return float(v) if dt.kind == "f" else int(v)

    def count(self) -> int:
        marker = self.take(1)
        if marker not in _UBJ_NUMBERS or marker in (b"d", b"D"):
            self.fail(f"expected a length, found {marker!r}")
        n = self.number(marker)
        if not 0 <= n <= len(self.blob) - self.pos:
            self.fail(f"length {n} runs past the end of the file")
        return n

    def text(self) -> str:
        try:
            return self.take(self.count()).decode("utf-8")
        except UnicodeDecodeError:
            self.fail("a string is not UTF-8")

    def value(self, marker: bytes, depth: int) -> Any:
        if depth > 64:
            self.fail("nested too deeply")
        if marker in _UBJ_NUMBERS:
            return self.number(marker)
        if marker in (b"S", b"H"):
            return self.text()
        if marker == b"C":
            return self.take(1).decode("latin-1")
        if marker in (b"T", b"F"):
            return marker == b"T"
        if marker == b"Z":
            return None
        if marker in (b"[", b"{"):
            return self.container(marker, depth + 1)
        self.fail(f"unknown marker {marker!r}")

    def container(self, open_: bytes, depth: int) -> dict | list:
        is_obj = open_ == b"{"
        typ = n = None
        if self.peek() == b"$":
            self.take(1)
            typ = self.take(1)
            if self.peek() != b"#":
                self.fail("a typed container needs a count")
        if self.peek() == b"#":
            self.take(1)
            n = self.count()
        if typ is not None and typ in _UBJ_NUMBERS and not is_obj:
            dt = np.dtype(_UBJ_NUMBERS[typ])
            return np.frombuffer(self.take(n * dt.itemsize), dtype=dt).tolist()
        out: dict | list = {} if is_obj else []
        k = 0
        while n is None or k < n:
            if n is None and self.peek() == (b"}" if is_obj else b"]"):
                self.take(1)
                break
            k += 1
            key = self.text() if is_obj else None
            item = self.value(typ if typ is not None else self.take(1), depth)
            if is_obj:
                out[key] = item
            else:
                out.append(item)
        return out
