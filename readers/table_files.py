"""Data files as tables: CSV (every row checked to have the header's number of fields)
and Parquet, read by pandas."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np

from ..compiler.dataset import TableRows
from ..compiler.errors import InputError, not_a_regular_file, not_utf8


def file_stat(path: Path) -> os.stat_result:
    try:
        st = path.stat()
    except OSError:
        raise InputError("data file not found", str(path)) from None
    if path.is_dir():
        raise InputError("is a directory, not a data file", str(path))
    if (special := not_a_regular_file(st.st_mode, "data file")) is not None:
        raise InputError(special, str(path))
    if st.st_size == 0:
        raise InputError("data file is empty", str(path))
    return st


PARQUET_MAGIC = b"PAR1"


def is_parquet(path: Path) -> bool:
    """A Parquet file by its name, or by its first bytes whatever its name (``rows.dat``,
    a download saved without its suffix), which the CSV reader would misread."""
    if path.suffix.lower() in (".parquet", ".pq"):
        return True
    try:
        with path.open("rb") as fh:
            return fh.read(len(PARQUET_MAGIC)) == PARQUET_MAGIC
    except OSError:
        return False


_HEADERS: dict[tuple, tuple[list[str], np.ndarray]] = {}


def csv_header(path: Path) -> list[str]:
    """The header of a CSV file (names stripped), after checking that every row has as
    many fields as the header (pandas would fill a short row with missing values and take
    the first column of rows one field longer for an index, shifting the others)."""
    return list(_scanned(path)[0])


def csv_row_lines(path: Path) -> np.ndarray:
    """The line in a CSV file (from 1, the header's counted) where each row below the
    header starts, blank lines skipped as pandas skips them."""
    return _scanned(path)[1]


def table_rows(path: Path, n_rows: int) -> TableRows:
    """Where the ``n_rows`` rows read from a data file are: a CSV's at their lines (by
    number where pandas read other rows than the scan found)."""
    if is_parquet(path):
        return TableRows(str(path))
    lines = csv_row_lines(path)
    return TableRows(str(path), lines if len(lines) == n_rows else None)


def _scanned(path: Path) -> tuple[list[str], np.ndarray]:
    st = path.stat()
    key = (str(path.resolve()), st.st_mtime_ns, st.st_size)
    if key not in _HEADERS:
        _HEADERS[key] = _scan_csv(path)
    return _HEADERS[key]


def _scan_csv(path: Path) -> tuple[list[str], np.ndarray]:
    header: list[str] | None = None
    lines: list[int] = []
    reader = None
    try:
        with path.open(encoding="utf-8-sig", newline="") as fh:
            reader = csv.reader(fh, skipinitialspace=True)
            start = 1  # the line the next row starts on (a quoted field may span lines)
            for row in reader:
                first, start = start, reader.line_num + 1
                if not row or (len(row) == 1 and not row[0].strip()):
                    continue  # a blank line, which pandas skips too
                if header is None:
                    header = [c.strip() for c in row]
                    _check_not_json(header, f"{path}:{reader.line_num}")
                    check_separator(header, f"{path}:{reader.line_num}")
                    named = [c for c in header if c]
                    dup = next((c for c in named if named.count(c) > 1), None)
                    if dup is not None:
                        raise InputError(
                            f"column name {dup!r} appears twice", f"{path}:{reader.line_num}"
                        )
                elif len(row) != len(header):
                    raise InputError(
                        f"{len(row)} field{'s' if len(row) != 1 else ''}, "
                        f"the header has {len(header)}",
                        f"{path}:{reader.line_num}",
                    )
                else:
                    lines.append(first)
    except UnicodeDecodeError:
        raise _not_utf8(path) from None
    except (csv.Error, OSError) as e:
        line = f":{reader.line_num}" if reader is not None and reader.line_num else ""
        raise InputError(f"cannot read: {_first_line(e)}", f"{path}{line}") from None
    if header is None:
        raise InputError("no header row (the data file holds only blank lines)", str(path))
    return header, np.asarray(lines, dtype=np.int64)  # 8 bytes a row, not a tuple's 36


def _check_not_json(header: list[str], where: str) -> None:
    """A header that opens a JSON object or list: a JSON file (a model, given as data)."""
    if header and header[0].startswith(("{", "[")):
        raise InputError(
            "a JSON file (a model?), not a data file: treesens reads data from CSV or "
            "Parquet files",
            where,
        )


def check_separator(header: list[str], where: str) -> None:
    """A header of one field holding ';' or a tab: a file another separator splits (a
    spreadsheet's CSV export with decimal commas), which every row would misread."""
    sep = next((c for c in (";", "\t") if len(header) == 1 and c in header[0]), None)
    if sep is not None:
        shown = "';'" if sep == ";" else "a tab"
        raise InputError(
            f"the header is one field holding {shown}: treesens reads comma-separated "
            f"files (decimal points, not commas); save the file with ',' as the separator",
            where,
        )


def _not_utf8(path: Path) -> InputError:
    """The error of a file that is not UTF-8 text, at the line of its first bad byte."""
    try:
        path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        return not_utf8(e, str(path))
    return InputError("cannot read: not UTF-8 text", str(path))


def _first_line(e: Exception) -> str:
    return str(e).splitlines()[0] if str(e).strip() else type(e).__name__


def read_table(path: Path):
    """A CSV or Parquet file as a DataFrame, every problem one InputError naming the
    file (and the line of a CSV row)."""
    import pandas as pd

    file_stat(path)
    try:
        if is_parquet(path):
            try:
                return pd.read_parquet(path)
            except ImportError:  # pandas' message runs over several lines
                raise InputError(
                    "reading Parquet needs pyarrow or fastparquet (pip install pyarrow)", str(path)
                ) from None
        csv_header(path)
        return pd.read_csv(path, skipinitialspace=True)
    except InputError:
        raise
    except (
        pd.errors.ParserError,
        pd.errors.EmptyDataError,
        UnicodeDecodeError,
        OSError,
        ValueError,
    ) as e:
        raise InputError(f"cannot read: {_first_line(e)}", str(path)) from None
