"""A certificate's JSON read as ``json.loads`` reads it, its proofs' steps held as arrays.

A proof of a production-size model has hundreds of thousands of steps (adult
xgb_t1000_d8's sex: 375,507 boxes, a 26 MB file); ``json.loads`` holds each as a Python
list of three objects, about 170 bytes a step. Here each proof (a part's ``proof``, or
version 1's top-level one) is read a step at a time, by the ``json`` module's own
scanner, and kept as ``Steps``: the steps of the two common shapes, ``["split", column,
number]`` and ``["prune", name, number]``, in arrays (13 bytes a step), any other step as
it was read. ``Steps`` gives back, step by step, the lists ``json.loads`` gives; the
rest of the document is read as ``json.loads`` reads it, with the same errors (a
``ValueError``, or a ``RecursionError``) for what is not JSON.
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Iterator

WHITESPACE = re.compile(r"[ \t\n\r]*")  # JSON's, as json.decoder's
SPLIT, PRUNE, OTHER = 0, 1, 2  # a step's kind in ``Steps.kinds``
KIND_NAMES = ("split", "prune")
MAX_COLUMN = 2**31 - 1  # a split's column held in an int32; a larger one stays as read
CHUNK = 1 << 12  # steps converted back to Python at a time when iterated


class Steps:
    """A proof's steps: ``kinds`` (SPLIT, PRUNE or OTHER), per step ``index`` (a split's
    column, a prune's row name's place in ``names``) and ``number`` (its third item),
    and the OTHER steps as read, by their place. Read as a sequence, it gives each step
    as the list ``json.loads`` gives."""

    def __init__(self) -> None:
        self.kinds = array("b")
        self.index = array("i")
        self.number = array("d")
        self.names: list[str] = []
        self._name_at: dict[str, int] = {}
        self.others: dict[int, object] = {}

    def append(self, step) -> None:
        """One step, as ``json.loads`` reads it."""
        kind, index, number = OTHER, 0, 0.0
        if type(step) is list and len(step) == 3 and type(step[2]) is float:
            head, mid = step[0], step[1]
            if head == "split" and type(mid) is int and 0 <= mid <= MAX_COLUMN:
                kind, index, number = SPLIT, mid, step[2]
            elif head == "prune" and type(mid) is str:
                at = self._name_at.get(mid)
                if at is None:
                    at = self._name_at[mid] = len(self.names)
                    self.names.append(mid)
                kind, index, number = PRUNE, at, step[2]
        if kind == OTHER:
            self.others[len(self.kinds)] = step
        self.kinds.append(kind)
        self.index.append(index)
        self.number.append(number)

    def __len__(self) -> int:
        return len(self.kinds)

    def __getitem__(self, i: int):
        if not -len(self) <= i < len(self):
            raise IndexError("step index out of range")
        i %= len(self)
        kind = self.kinds[i]
        if kind == OTHER:
            return self.others[i]
        mid = self.index[i] if kind == SPLIT else self.names[self.index[i]]
        return [KIND_NAMES[kind], mid, self.number[i]]

    def __iter__(self) -> Iterator:
        for start in range(0, len(self), CHUNK):
            end = min(start + CHUNK, len(self))
            rows = zip(self.kinds[start:end], self.index[start:end], self.number[start:end])
            for i, (kind, index, number) in enumerate(rows, start):
                if kind == SPLIT:
                    yield ["split", index, number]
                elif kind == PRUNE:
                    yield ["prune", self.names[index], number]
                else:
                    yield self.others[i]

    def kinds_present(self) -> set:
        """The first items of the steps that are lists with one (``_kind``'s values)."""
        out = {KIND_NAMES[k] for k in set(self.kinds) if k != OTHER}
        out |= {s[0] for s in self.others.values() if isinstance(s, list) and s}
        return out


def read_certificate(text: str):
    """``json.loads(text)``, each proof's steps as ``Steps`` (a document whose top level
    is not an object: ``json.loads``'s value)."""
    start = WHITESPACE.match(text, 0).end()
    if not text.startswith("{", start):
        return json.loads(text)
    scan = json.JSONDecoder().scan_once
    doc, end = _object(text, start, scan, {"parts": _parts, "proof": _proof})
    end = WHITESPACE.match(text, end).end()
    if end != len(text):
        raise json.JSONDecodeError("Extra data", text, end)
    return doc


def _object(text: str, i: int, scan, readers: dict) -> tuple[dict, int]:
    """The object at ``text[i] == "{"`` and the place after it; the value of a key in
    ``readers`` read by its reader (text, place, scan) -> (value, place after)."""
    out: dict = {}
    i = WHITESPACE.match(text, i + 1).end()
    if text.startswith("}", i):
        return out, i + 1
    while True:
        if not text.startswith('"', i):
            raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, i)
        key, i = _value(text, i, scan)
        i = WHITESPACE.match(text, i).end()
        if not text.startswith(":", i):
            raise json.JSONDecodeError("Expecting ':' delimiter", text, i)
        i = WHITESPACE.match(text, i + 1).end()
        out[key], i = readers.get(key, _value)(text, i, scan)
        i = WHITESPACE.match(text, i).end()
        if text.startswith("}", i):
            return out, i + 1
        if not text.startswith(",", i):
            raise json.JSONDecodeError("Expecting ',' delimiter", text, i)
        i = WHITESPACE.match(text, i + 1).end()


def _value(text: str, i: int, scan) -> tuple[object, int]:
    """The JSON value at ``text[i]``, by the ``json`` module's scanner."""
    try:
        return scan(text, i)
    except StopIteration as e:
        raise json.JSONDecodeError("Expecting value", text, e.value) from None


def _parts(text: str, i: int, scan) -> tuple[object, int]:
    """A document's ``parts``: an array's objects read with their proofs as ``Steps``."""
    if not text.startswith("[", i):
        return _value(text, i, scan)
    out: list = []

    def part(text: str, i: int, scan) -> tuple[object, int]:
        if text.startswith("{", i):
            return _object(text, i, scan, {"proof": _proof})
        return _value(text, i, scan)

    return out, _array(text, i, scan, part, out.append)


def _proof(text: str, i: int, scan) -> tuple[object, int]:
    """A proof: an array's steps as ``Steps``."""
    if not text.startswith("[", i):
        return _value(text, i, scan)
    steps = Steps()
    return steps, _array(text, i, scan, _value, steps.append)


def _array(text: str, i: int, scan, read, keep) -> int:
    """The place after the array at ``text[i] == "["``; each item read by ``read``
    (text, place, scan) -> (value, place after), and passed to ``keep``."""
    i = WHITESPACE.match(text, i + 1).end()
    if text.startswith("]", i):
        return i + 1
    while True:
        value, i = read(text, i, scan)
        keep(value)
        i = WHITESPACE.match(text, i).end()
        if text.startswith("]", i):
            return i + 1
        if not text.startswith(",", i):
            raise json.JSONDecodeError("Expecting ',' delimiter", text, i)
        i = WHITESPACE.match(text, i + 1).end()
