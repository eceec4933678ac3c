"""An output file's folder, made where it is missing (as pytest's --junitxml makes it):
every flag that names a file to write (report, sweep and audit's --out, --resume,
--table-out, --plot, check's --certificate, test's --junit, emit's -o) takes a path in a
folder not there yet, as the --certificates folders are made."""

from __future__ import annotations

from pathlib import Path

from ..compiler.errors import InputError
from .results_log import os_error_text


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
