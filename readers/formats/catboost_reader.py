"""Reading a ``.cbm`` file in a child process, so that a file catboost's reader crashes on
takes the child down, not treesens.

catboost's ``.cbm`` reader does not check everything it reads: a few bytes inserted into
a model of categorical features (or, more rarely, of numeric ones) make it read a string
past its buffer and crash the process (seen by tests/frontends/test_catboost_hostile.py).
So a ``.cbm`` file is read by a child process that loads it with catboost and saves it
again, as JSON and as ``.cbm``; treesens then checks the JSON as it checks any CatBoost
JSON, and loads only the ``.cbm`` catboost wrote itself. The child lives as long as
treesens (catboost takes a second or two to import) and is started again after a crash.
"""

from __future__ import annotations

import atexit
import json
import os
import struct
import subprocess
import sys
import threading
from typing import IO

from ...compiler.errors import InputError

READ_TIMEOUT = 600.0  # seconds catboost may take to read and save one .cbm file

# the child: reads (length, .cbm bytes) from stdin, answers on its own copy of stdout
# (catboost's messages go to /dev/null): b"OK" + JSON + .cbm, or b"ER" + a message
_CHILD = r"""
import os, struct, sys, tempfile
out = os.fdopen(os.dup(1), "wb")
null = os.open(os.devnull, os.O_WRONLY)
os.dup2(null, 1)
os.dup2(null, 2)
import catboost
inp = sys.stdin.buffer

def send(tag, *parts):
    out.write(tag + b"".join(struct.pack("<Q", len(p)) + p for p in parts))
    out.flush()

while True:
    head = inp.read(8)
    if len(head) < 8:
        break
    blob = inp.read(struct.unpack("<Q", head)[0])
    with tempfile.TemporaryDirectory(prefix="treesens-cbm-") as tmp:
        src, js, cbm = (os.path.join(tmp, n) for n in ("in.cbm", "out.json", "out.cbm"))
        with open(src, "wb") as f:
            f.write(blob)
        try:
            model = catboost.CatBoost()
            model.load_model(src, format="cbm")
            model.save_model(js, format="json")
            model.save_model(cbm, format="cbm")
        except Exception as e:
            lines = str(e).strip().splitlines()
            send(b"ER", (lines[0][:200] if lines else type(e).__name__).encode())
            continue
        with open(js, "rb") as f, open(cbm, "rb") as g:
            send(b"OK", f.read(), g.read())
"""


class _Reader:
    """The child process (one per treesens process: a forked process starts its own)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.proc: subprocess.Popen | None = None
        self.owner = 0

    def read(self, blob: bytes, where: str) -> tuple[dict, bytes]:
        with self.lock:
            proc = self._child()
            # a file that keeps catboost's reader busy is stopped as one that crashes it
            watchdog = threading.Timer(READ_TIMEOUT, proc.kill)
            watchdog.start()
            try:
                proc.stdin.write(struct.pack("<Q", len(blob)) + blob)
                proc.stdin.flush()
                tag = _exactly(proc.stdout, 2)
                parts = [_part(proc.stdout) for _ in range(2 if tag == b"OK" else 1)]
            except (OSError, EOFError, struct.error):
                self._crashed()
                what = (
                    f"did not finish reading this file in {READ_TIMEOUT:g} s"
                    if watchdog.finished.is_set()
                    else "crashed on this file"
                )
                raise InputError(
                    f"catboost's reader {what} (a broken .cbm, or one made to crash it)",
                    where,
                ) from None
            finally:
                watchdog.cancel()
        if tag != b"OK":
            message = parts[0].decode("utf-8", "replace")
            raise InputError(f"catboost cannot load this model: {message}", where)
        try:
            exported = json.loads(parts[0])
        except (UnicodeDecodeError, ValueError, RecursionError) as e:
            raise InputError(f"catboost exported unreadable JSON: {e}", where) from None
        return exported, parts[1]

    def _child(self) -> subprocess.Popen:
        if self.proc is None or self.owner != os.getpid() or self.proc.poll() is not None:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", _CHILD],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
            self.owner = os.getpid()
        return self.proc

    def _crashed(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None:
            proc.kill()
            proc.wait()

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None and self.owner == os.getpid():
            try:
                proc.stdin.close()
                proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()


def _exactly(stream: IO[bytes], n: int) -> bytes:
    data = stream.read(n)
    if len(data) != n:
        raise EOFError("the child ended")
    return data


def _part(stream: IO[bytes]) -> bytes:
    (n,) = struct.unpack("<Q", _exactly(stream, 8))
    return _exactly(stream, n)


_READER = _Reader()
atexit.register(_READER.close)


def read_cbm(blob: bytes, where: str) -> tuple[dict, bytes]:
    """(the model's JSON, its ``.cbm`` bytes as catboost writes them) of the ``.cbm`` file
    ``blob``, read by catboost in the child process; one InputError when catboost cannot
    read it or crashes reading it."""
    return _READER.read(bytes(blob), where)
