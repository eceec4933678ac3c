"""Errors a user can act on. Anything else escaping is a bug."""

from __future__ import annotations

import difflib
import functools
import inspect
import json
import math
import re
import stat
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar


class TreesensError(Exception):
    """Base class: a problem treesens can explain in one line."""


class InputError(TreesensError):
    """Bad input: a file, flag or query that cannot be used (exit code 2).

    ``where`` names the file (and place) the problem is in.
    """

    def __init__(self, message: str, where: str | None = None):
        self.message = message
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)


class UnsupportedModelError(InputError):
    """A model of a kind treesens does not handle (regressor, ranking, DART, ...)."""


# the ``listing`` of closest() for unknown feature names
FEATURES = "known features"

# what a user who asks for constraints by a flag or keyword is told: they are written in
# a .sens file only
CONSTRAINT_WORDS = ("where", "fix", "constraint", "constraints")
CONSTRAINTS_IN_SENS = (
    "constraints are given with where='x1.age <= 30' (a text or a list, as a .sens query's "
    "where clause writes them; fix f = v is where='f == v'; docs/language.md, 'Constraints')"
)
# ... and a user who tries a flag other than --where for them on the command line
CONSTRAINTS_BY_FLAG = (
    "constraints are given with --where CONSTRAINT, as a .sens file's where clause writes "
    "them (fix f = v is --where 'f == v'; docs/language.md, 'Constraints')"
)


def _near_key(name: str) -> str:
    """A name with the differences that hardly count taken out: case, and spaces,
    underscores and hyphens (``Mean Radius`` and ``mean_radius`` are near)."""
    return re.sub(r"[\s_\-]+", "_", name.strip()).lower()


def near_matches(
    name: str, candidates: Iterable[str], n: int = 3, *, loose: bool = True
) -> list[str]:
    """The candidates closest to ``name``: those that differ from it only in case and
    spaces, underscores or hyphens first, then (``loose``) difflib's close matches."""
    by_key: dict[str, list[str]] = {}
    for c in candidates:
        by_key.setdefault(_near_key(str(c)), []).append(str(c))
    key = _near_key(str(name))
    got = list(by_key.get(key, []))
    for k in difflib.get_close_matches(key, list(by_key), n=n, cutoff=0.5) if loose else ():
        got += [c for c in by_key[k] if c not in got]
    return got[:n]


def not_utf8(e: UnicodeDecodeError, where: str, column: bool = False) -> InputError:
    """The error of a file that is not UTF-8 text, at the line (and ``column``) of its
    first bad byte (``e`` from decoding the file's bytes)."""
    before = e.object[: e.start]
    newline = b"\n"
    at = f"{where}:{before.count(newline) + 1}"
    if column:
        at += f":{len(before) - before.rfind(newline)}"
    bad = e.object[e.start]
    if e.start == 0 and bytes(e.object[:2]) in _UTF16_BOMS:  # Windows' "Unicode" is UTF-16
        return InputError("the file is UTF-16 text, not UTF-8 (save the file as UTF-8)", at)
    for magic, what in _BINARY_KINDS:  # "byte 0x8b is not UTF-8" said nothing of a .csv.gz
        if bytes(e.object[: len(magic)]) == magic:
            return InputError(f"{what}, not text: {_BINARY_FIX}", where)
    return InputError(f"byte {bad:#04x} is not UTF-8 text (save the file as UTF-8)", at)


_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
# files that are not text, by their first bytes, as a text file's reader names them
_BINARY_KINDS = (
    (b"\x1f\x8b", "a gzip-compressed file"),
    (b"BZh", "a bzip2-compressed file"),
    (b"\xfd7zXZ\x00", "an xz-compressed file"),
    (b"PK\x03\x04", "a zip archive (an .xlsx workbook is one)"),
    (b"\xd0\xcf\x11\xe0", "an Excel .xls workbook"),
    (b"PAR1", "a Parquet file"),
)
_BINARY_FIX = "give the file it holds, saved as UTF-8 text (a CSV: comma-separated)"


_SPECIAL_FILES = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def not_a_regular_file(mode: int, what: str) -> str | None:
    """The error text of a path whose ``mode`` (its ``st_mode``) is not a regular file's,
    naming what it is (``what``: the file it should be, "model file"), else None: a FIFO,
    socket or device is read as empty (its size is 0) or blocks a read."""
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _SPECIAL_FILES if test(mode)), "a special file")
    return f"is {kind}, not a regular file; give the {what} itself"


def closest(name: str, candidates: Iterable[str], n: int = 3, *, listing: str | None = None) -> str:
    """A 'did you mean' suffix for unknown names, or an empty string.

    With ``listing`` (say "known features"), a name with no close match gets the start of
    the candidates' list instead: " (known features: a, b, c, ... 30 in all)".
    """
    cand = [str(c) for c in candidates]
    got = near_matches(name, cand, n)
    if got:
        return f" (did you mean {', '.join(repr(g) for g in got)}?)"
    if listing is None or not cand:
        return ""
    return f" ({listing}: {name_list(cand)})"


# a duration as a .sens file writes one: seconds, or a number with a suffix ms, s, m or h
_DURATION = re.compile(r"((?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*(ms|s|m|h)?")
_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


def duration_seconds(text: str) -> float | None:
    """The seconds a duration stands for ('30', '1e3', '30s', '2m', '1.5h'); None where
    ``text`` is none."""
    d = _DURATION.fullmatch(text.strip())
    return None if d is None else float(d.group(1)) * _SECONDS[d.group(2)]


def as_number_hint(text) -> str:
    """For a percent where a number goes ('20%'), the number it stands for: "; 20% is
    written 0.2" (a gap is a probability's, 0.2 not 20); for a duration with its unit
    ('10s', '2m', as a .sens file writes one), its seconds: "; 2m is written 120
    (seconds)"; else ""."""
    if not isinstance(text, str):
        return ""
    seconds = duration_seconds(text)
    if seconds is not None and text.strip()[-1:].isalpha():  # a unit, not a bare number
        return f"; {text.strip()} is written {seconds:g} (seconds)"
    body = text.strip().removesuffix("%").strip()
    if body == text.strip():
        return ""
    try:
        value = float(body)
    except ValueError:
        return ""
    return f"; {text.strip()} is written {value / 100:g}"


def binary_gap_range(value: float, meaning: str) -> str:
    """The error of a binary gap outside [0, 0.5): ``meaning`` says what g asks, and a gap
    from 1 to 50 is asked whether it is a percent ("20 ... (a percent? 20% is 0.2)")."""
    text = f"gap {value:g} out of range: a binary gap g needs 0 <= g < 0.5 ({meaning})"
    if 1 <= value < 50:
        text += f"; a percent? {value:g}% is written {value / 100:g}"
    return text


def name_list(names: Iterable[object], max_names: int = 8, max_chars: int = 80) -> str:
    """``a, b, c`` or, for a long list, its start: ``a, b, c, ... 30 in all``."""
    names = [str(x) for x in names]
    shown: list[str] = []
    for x in names:
        if len(shown) == max_names or (shown and len(", ".join(shown + [x])) > max_chars):
            break
        shown.append(x)
    if len(shown) == len(names):
        return ", ".join(shown)
    return f"{', '.join(shown)}, ... {len(names)} in all"


def category_range(categories: tuple[str, ...] | None, lo: float, hi: float) -> str | None:
    """The categories of codes ``lo`` .. ``hi`` by the names a user writes: ``"Sud"``, or
    ``one of "Nord", "Ouest"``; None for a feature without names or a range of no code
    (a message then shows the numbers)."""
    if not categories:
        return None
    first, last = math.ceil(max(lo, 0)), math.floor(min(hi, len(categories) - 1))
    if first > last:
        return None
    names = [json.dumps(c, ensure_ascii=False) for c in categories[first : last + 1]]
    return names[0] if len(names) == 1 else f"one of {name_list(names, max_names=6)}"


# the interface a user speaks, which messages name settings in: Python keywords (the
# default: the API, notebooks) or the command line's flags (set by the CLI while it runs)
PYTHON, COMMAND_LINE = "python", "command line"
_SPOKEN: ContextVar[str] = ContextVar("treesens_spoken", default=PYTHON)


@contextmanager
def speaking(interface: str) -> Iterator[None]:
    """Messages raised inside name settings as ``interface`` spells them."""
    token = _SPOKEN.set(interface)
    try:
        yield
    finally:
        _SPOKEN.reset(token)


def spelled(python: str, flag: str) -> str:
    """A setting named in a message as the user's interface spells it: the Python
    keyword (``classes=(C1, C2)``) or, on the command line, the flag (``--classes C1,C2``)."""
    return flag if _SPOKEN.get() == COMMAND_LINE else python


def setting(keyword: str, value) -> str:
    """A setting and the value a user gave it, as their interface spells it: ``above=0.3``
    or, on the command line, ``--above 0.3`` (a number as ``:g`` writes it)."""
    v = f"{value:g}" if isinstance(value, float) else str(value)
    return spelled(f"{keyword}={v}", f"--{keyword.replace('_', '-')} {v}")


class TreesensWarning(UserWarning):
    """Something a user should know that does not stop the run (the CLI prints it as one
    line: ``treesens: warning: ...``)."""


class DataNote(TreesensWarning):
    """A note on the data's columns (one the model does not use, a feature no tree reads
    that the data lacks): said once by every route that reads data, the CLI's as a line
    ``note: ...``, the API's and a .sens run's as this warning."""


class DetailsNote(DataNote):
    """A note on a details table: the bounds it leaves out without saying so (an empty
    cell, a missing lb or ub column), said as a data note is."""


# the notes said so far within ``notes_once`` (None: outside it)
NOTES_SAID: ContextVar[set[str] | None] = ContextVar("data_notes_said", default=None)


@contextmanager
def notes_once():
    """Within it (a command line's command, a report), each data note is said once
    however many routes read the data (readers/data.py, ``say_data_notes``): a report's
    ranking, checks and audits each read it, and said its note at each (a warning is
    shown once per place it is raised)."""
    token = NOTES_SAID.set(set()) if NOTES_SAID.get() is None else None
    try:
        yield
    finally:
        if token is not None:
            NOTES_SAID.reset(token)


def say_note(note: str, category: type[DataNote] = DataNote) -> None:
    """One note as a ``category`` warning: once per session under Python's default
    filter; within ``notes_once``, once in all."""
    said = NOTES_SAID.get()
    if said is not None:
        if note in said:
            return
        said.add(note)
    warnings.warn(note, category, stacklevel=3)


def suggests_keywords(also: Callable | None = None) -> Callable:
    """Decorate a function so that a keyword it does not take is Python's TypeError with
    the closest one it takes (``audit(timout=3)``: did you mean 'timeout'?). ``also``: a
    function its ``**keywords`` go to, whose keywords it takes too (expect_audit's
    audit)."""

    def decorate(fn: Callable) -> Callable:
        known = _keyword_names(fn) | (_keyword_names(also) if also is not None else set())

        @functools.wraps(fn)
        def call(*args, **keywords):
            for k in keywords:
                if k not in known:
                    raise TypeError(
                        f"{fn.__name__}() got an unexpected keyword argument {k!r}"
                        f"{keyword_synonym(k, known) or closest(k, sorted(known))}"
                    )
            return fn(*args, **keywords)

        return call

    return decorate


# a keyword one function takes for what another names otherwise: the file to write is
# sweep's and report's out=, the plots' path=
_SYNONYMS = {"out": ("path",), "path": ("out",), "output": ("out", "path"), "file": ("out", "path")}


def keyword_synonym(keyword: str, known) -> str:
    """ " (did you mean 'path'? ...)" for a keyword another function takes for what this
    one names otherwise (``plot_sweep(out=)``); else ""."""
    other = next((s for s in _SYNONYMS.get(keyword, ()) if s in known), None)
    return f" (did you mean {other!r}? here the file to write is {other}=)" if other else ""


def _keyword_names(fn: Callable) -> set[str]:
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return {p.name for p in inspect.signature(fn).parameters.values() if p.kind in kinds}
