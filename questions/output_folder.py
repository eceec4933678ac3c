"""An output file's folder, made where it is missing (as pytest's --junitxml makes it):
every flag that names a file to write (report, sweep and audit's --out, --resume,
--table-out, --plot, check's --certificate, test's --junit, emit's -o) takes a path in a
folder not there yet, as the --certificates folders are made."""

from __future__ import annotations

import os
from pathlib import Path

from ..compiler.errors import InputError


def os_error_text(e: OSError) -> str:
    text = e.strerror or str(e)
    return text[:1].lower() + text[1:]


def refuse_folder_name(path: str | Path, where: str) -> None:
    """A file to write named as a folder (``out="res/"``) is refused: the trailing '/'
    would be dropped and a file named ``res`` written, where a file inside was meant."""
    if str(path).endswith(("/", os.sep)):
        raise InputError("names a folder (it ends in '/'): give a file's name", where)


def writable_file(path: str | Path, where: str) -> None:
    """Can ``path`` be written (created if missing, and removed again; its folder made
    where missing)? An input error naming ``where`` otherwise: asked before a long run
    whose result goes there."""
    refuse_folder_name(path, where)
    path = Path(path)
    if path.is_dir():
        raise InputError("is a directory", where)
    make_folder_of(path, where)
    existed = path.exists()
    try:
        with open(path, "a"):
            pass
    except OSError as e:
        raise InputError(os_error_text(e), where) from None
    if not existed:
        path.unlink(missing_ok=True)


def make_folder_of(path: str | Path, where: str) -> None:
    """Make ``path``'s folder and those above it where missing; an input error naming
    ``where`` (the flag and the file) when it cannot be made."""
    folder = Path(path).parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"cannot make its folder {folder}: {os_error_text(e)}", where) from None


def make_folder(folder: str | Path, where: str) -> Path:
    """Make the folder ``folder`` (a --certificates DIR) and those above it where missing;
    an input error naming ``where`` when a file stands in its way or it cannot be made."""
    folder = Path(folder)
    if folder.is_file():
        raise InputError("a file, not a folder", where)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"cannot make the folder: {os_error_text(e)}", where) from None
    return folder
