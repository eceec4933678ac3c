"""The results log: the JSON-lines file a sweep or an audit appends its answers to, one
line each, flushed as they come, and resumes from.

One rule for a line an interruption cut short (the last line, without its newline): it
is not an answer. Reading skips it; appending removes it first, so the question it would
have answered is asked again and no later line is glued to it. A complete line that is
not an answer is the reader's to judge (``check``).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ..compiler.errors import InputError
from .output_folder import make_folder_of, os_error_text, refuse_folder_name


def read_log(path: str | Path | None, check: Callable[[object, int], dict | None]) -> list[dict]:
    """The answers of a log, in order (a missing file holds none). ``check(value, line)``
    gets each complete line's parsed JSON (None when it is not JSON) and returns the
    answer, or None to skip the line (it may warn, or raise an InputError)."""
    if path is None:
        return []
    try:
        text = Path(path).read_text(encoding="utf-8-sig")  # an editor may add a BOM
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as e:
        why = os_error_text(e) if isinstance(e, OSError) else "not a text file"
        raise InputError(f"cannot read: {why}", str(path)) from None
    out = []
    for n, line in enumerate(text.splitlines(keepends=True), 1):
        if not line.endswith("\n"):
            break  # cut short by an interruption: not an answer
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            value = None
        answer = check(value, n)
        if answer is not None:
            out.append(answer)
    return out


def drop_cut_line(path: Path) -> None:
    """Remove a last line an interruption cut short."""
    if not path.is_file():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        path.write_bytes(data[: data.rfind(b"\n") + 1])


def refuse_other_file(path: str | Path, where: str | None = None, of: str | None = None) -> None:
    """An input error where ``path`` is a file whose first line is no JSON line: no
    results log (a .sens file, a CSV given as --out by a slip), which appending would
    change, its cut last line dropped; with ``of="sweep"`` (a sweep's --resume), also an
    audit's log (its lines name a row), which the sweep would reuse nothing from.
    ``where``: the flag naming it (default: the path)."""
    try:
        with open(path, encoding="utf-8-sig") as fh:
            first = next((line for line in fh if line.strip()), "")
    except (OSError, UnicodeDecodeError):
        return  # reading it again says why, or appending does
    if not first.endswith("\n"):
        return  # a first line cut short: a log an interruption left
    try:
        line = json.loads(first)
    except json.JSONDecodeError:
        raise InputError(
            "its first line is not a JSON line: the file holds no results, and this run "
            "would append its own to it; give a new file",
            where or str(path),
        ) from None
    if of == "sweep" and isinstance(line, dict) and "row" in line:
        raise InputError(
            "holds an audit's rows (its lines name a 'row'), not a sweep's results: the "
            "sweep would reuse none of them and append its own to them; give it a file of "
            "its own",
            where or str(path),
        )


@contextmanager
def appending(path: str | Path | None) -> Iterator[Callable[[str], None]]:
    """``append(text)``: write whole lines to the log and flush them (nothing without a
    path); a cut last line is removed first. A full disk or an I/O error is an input
    error naming the file, and so is a file that is no log (``refuse_other_file``)."""
    if path is None:
        yield lambda text: None
        return
    refuse_folder_name(path, str(path))
    path = Path(path)
    if path.is_file():
        refuse_other_file(path)
    make_folder_of(path, str(path))  # as every output's (questions/output_folder.py)
    try:
        drop_cut_line(path)
        fh = open(path, "a", encoding="utf-8")  # noqa: SIM115 - kept open while answers come
    except OSError as e:
        raise InputError(f"cannot write: {os_error_text(e)}", str(path)) from None

    def append(text: str) -> None:
        write_flushed(fh, text, path)

    try:
        yield append
    finally:
        with contextlib.suppress(OSError):  # what it could not flush, append reported
            fh.close()


def write_flushed(fh, text: str, path) -> None:
    """Write ``text`` to an open log and flush it; an error names the file."""
    try:
        fh.write(text)
        fh.flush()
    except OSError as e:
        raise InputError(f"cannot write: {os_error_text(e)}", str(path)) from None
