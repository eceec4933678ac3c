"""A certificate's JSON written piece by piece: the bytes ``json.dumps(doc,
allow_nan=False)`` gives, plus a newline, without the whole document held as one string
or its proof as one list.

A proof of a production-size model has hundreds of thousands of steps (adult
xgb_t1000_d8's sex: 375,507 boxes, a 26 MB file); ``json.dumps`` of it held its steps as
Python lists and the encoder's pieces of all of them at once, about 400 MB. Here a
part's ``proof`` may be any iterable of steps (questions/certificate_steps.py ``proof_part`` gives
a generator over the proof's tree): its steps are converted and written
``STEPS_PER_PIECE`` at a time.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path

# steps encoded per write: a few MB of text at a time
STEPS_PER_PIECE = 1 << 14


def write_json(path: str | Path, doc: dict) -> None:
    """Write ``doc`` to ``path`` as ``json.dumps(doc, allow_nan=False) + "\\n"``, its
    parts' proofs (``doc["parts"][i]["proof"]``, iterables) step by step; a file left
    half written by an error (a NaN, say) is removed before the error is raised."""
    try:
        with open(path, "w", encoding="utf-8") as fh:
            for piece in document_pieces(doc):
                fh.write(piece)
            fh.write("\n")
    except BaseException:
        Path(path).unlink(missing_ok=True)
        raise


def document_pieces(doc: dict) -> Iterator[str]:
    """``doc``'s JSON text in pieces, the separators of ``json.dumps``'s defaults."""
    yield "{"
    for i, (key, value) in enumerate(doc.items()):
        yield (", " if i else "") + json.dumps(key) + ": "
        if key == "parts":
            yield from _parts(value)
        else:
            yield _dumps(value)
    yield "}"


def _parts(parts: list[dict]) -> Iterator[str]:
    yield "["
    for i, part in enumerate(parts):
        yield ", {" if i else "{"
        for j, (key, value) in enumerate(part.items()):
            yield (", " if j else "") + json.dumps(key) + ": "
            if key == "proof":
                yield from _steps(value)
            else:
                yield _dumps(value)
        yield "}"
    yield "]"


def _steps(steps: Iterable) -> Iterator[str]:
    """A list's JSON, ``STEPS_PER_PIECE`` of its items encoded at a time."""
    yield "["
    it, first = iter(steps), True
    while chunk := list(islice(it, STEPS_PER_PIECE)):
        yield ("" if first else ", ") + _dumps(chunk)[1:-1]
        first = False
    yield "]"


def _dumps(value) -> str:
    return json.dumps(value, allow_nan=False)
