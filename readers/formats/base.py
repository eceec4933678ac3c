"""What a model format is to treesens: the protocol every format module implements.

A format reads one family of model files (and, optionally, fitted in-memory objects) into
the Ensemble IR, and gives the ensemble a replayer: the library's own predict, with which
every witness is checked. ``registry.py`` lists the formats; ``load.py`` asks them.
"""

from __future__ import annotations

import functools
import json
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from ...compiler.ensemble import Ensemble
from ...compiler.errors import InputError, TreesensWarning

# a model file states its number of features as a number: beyond this, a few bytes would
# make treesens build millions of features (and run out of memory)
MAX_FEATURES = 1_000_000

# suffixes of files that unpickle (and so may run code) when loaded
PICKLE_SUFFIXES = (".pkl", ".pickle", ".joblib")


@dataclass(frozen=True)
class LoadOptions:
    """What a caller may say about a model file besides its path.

    ``objective``, ``base_score`` (one number, or one per class), ``n_classes`` and
    ``num_parallel_tree``: of an XGBoost tree dump, which does not record them;
    ``trust_pickle``: the caller accepts that a pickled model runs code while it loads;
    ``feature_names``: the names a details file gives, at their indices (None where it
    gives none): a dump that names its features in its splits reads their indices here.
    """

    base_score: float | tuple[float, ...] | None = None
    n_classes: int | None = None
    trust_pickle: bool = False
    feature_names: tuple[str | None, ...] | None = None
    objective: str | None = None
    num_parallel_tree: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.trust_pickle, bool):  # "no" would trust: a pickle runs code
            raise InputError(f"trust_pickle takes True or False, not {self.trust_pickle!r}")


DEFAULT_OPTIONS = LoadOptions()
# the load options only a dump reads (it records none of them), as the caller names them
DUMP_OPTIONS = {
    "base_score": "base_score",
    "objective": "objective",
    "n_classes": "num_class",
    "num_parallel_tree": "num_parallel_tree",
}


@runtime_checkable
class ModelFormat(Protocol):
    """One model format. Implementations are small classes with class attributes.

    ``name``: what ``--format`` and a ``.sens`` file's ``format`` call it.
    ``description``: what a model of the format is, for messages ("a LightGBM model").
    ``suffixes``: file suffixes that are this format whatever their content.
    ``sniff_last``: the format claims broad content (any JSON, any binary), so formats
    with a narrower claim are asked first.
    ``takes_base_score``: the format reads the ``base_score`` load option.
    ``generic_names``: how the library names features when the file names none
    (``"f{}"`` for f0, f1, ...), or None.
    ``replayer``: the class of the replayers its ensembles carry (they pickle).
    """

    name: ClassVar[str]
    description: ClassVar[str]
    suffixes: ClassVar[tuple[str, ...]]
    sniff_last: ClassVar[bool]
    takes_base_score: ClassVar[bool]
    generic_names: ClassVar[str | None]
    replayer: ClassVar[type | None]

    def sniff(self, head: bytes, suffix: str) -> bool:
        """Is a file that starts with ``head`` (its first 4 KiB) and has ``suffix``
        (lower case, with its dot) of this format?"""
        ...

    def load_path(self, path: Path, options: LoadOptions) -> Ensemble:
        """The model in a file; raises InputError / UnsupportedModelError naming it."""
        ...

    def load_object(self, obj: Any) -> Ensemble | None:
        """A fitted in-memory model of this format's library, or None: not mine."""
        ...


def head_text(head: bytes) -> str | None:
    """A file's head as text for sniffing (leading white space dropped), or None: not UTF-8."""
    try:
        return head.decode("utf-8", errors="strict").lstrip()
    except UnicodeDecodeError:
        return None


def module_of(obj: Any) -> str:
    """The module that defines an object's type (``xgboost.core`` for a Booster)."""
    return type(obj).__module__ or ""


# Python's JSON reader recurses once per nesting level, up to the interpreter's recursion
# limit (1,000 by default); a JSON tree dump nests two levels per tree level
JSON_TOO_DEEP = (
    "JSON nested more than 1,000 levels deep, the limit treesens reads (a JSON tree dump "
    "nests two levels per tree level: a deeper tree loads from the text dump)"
)


def parse_json(text: str, where: str) -> Any:
    """The content of a JSON text, or one InputError naming ``where`` (where the JSON is
    invalid, or that it nests deeper than Python reads)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        # what it expected next is past the text's end, or a string runs to it
        cut = e.pos >= len(text.rstrip()) or e.msg.startswith("Unterminated string")
        if cut and text.strip():
            lines = text.count("\n") + 1
            raise InputError(
                f"the JSON ends before it is complete (at line {lines:,}, "
                f"after {len(text):,} characters): the file is cut short (a copy or download "
                "not finished?)",
                where,
            ) from None
        raise InputError(
            f"invalid JSON at line {e.lineno} column {e.colno}: {e.msg}", where
        ) from None
    except RecursionError:
        raise InputError(JSON_TOO_DEEP, where) from None


def byte_order_mark(head: bytes) -> str | None:
    """What a model file starting with a byte order mark is told (None: it has none):
    neither treesens nor the model's library reads one."""
    if not head.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        return None
    kind = "UTF-8" if head.startswith(b"\xef") else "UTF-16"
    return (
        f"the file starts with a {kind} byte order mark (as an editor or PowerShell writes "
        "one), which the model's library does not read either: save it as UTF-8 without "
        "a byte order mark"
    )


def read_json(blob: bytes, where: str, not_text: str) -> Any:
    """The content of a JSON file, or one InputError naming ``where``: ``not_text`` when
    the file is not UTF-8 text (a byte order mark said as such), else as
    :func:`parse_json` says."""
    if (bom := byte_order_mark(blob[:3])) is not None:
        raise InputError(bom, where)
    try:
        text = blob.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(not_text, where) from None
    return parse_json(text, where)


def not_xgboost_json(data, where: str) -> InputError:
    """The error for a JSON file that is no XGBoost model: CatBoost's JSON named as such."""
    if isinstance(data, dict) and "features_info" in data:
        return InputError("this is a CatBoost model (JSON): read it with --format catboost", where)
    return InputError(
        "JSON is neither an XGBoost model (no 'learner') nor a tree dump (a list)", where
    )


# what reading a model's content raises when the content is malformed (a missing key, a
# value of the wrong type, an index out of range): one InputError naming the file instead
MALFORMED = (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError)


@contextmanager
def malformed_as_input_error(what: str, where: str) -> Iterator[None]:
    """A MALFORMED error inside becomes ``malformed WHAT (ErrorType: message)`` at ``where``."""
    try:
        yield
    except MALFORMED as e:
        raise InputError(f"malformed {what} ({type(e).__name__}: {str(e)[:120]})", where) from None


# the replayers' calls into their library, made one at a time (OneCallAtATime)
REPLAY_CALLS = ("predict", "predict_raw", "predict_proba")
_MAKING_LOCK = threading.Lock()


def _call_lock(replayer) -> threading.RLock:
    lock = replayer.__dict__.get("_calls")
    if lock is None:
        with _MAKING_LOCK:
            lock = replayer.__dict__.setdefault("_calls", threading.RLock())
    return lock


def _one_at_a_time(method: Callable) -> Callable:
    @functools.wraps(method)
    def call(self, *args, **kwargs):
        with _call_lock(self):  # re-entered when predict_proba calls predict_raw
            return method(self, *args, **kwargs)

    call.one_at_a_time = True
    return call


class OneCallAtATime:
    """Base of the replayers: a subclass's ``predict``, ``predict_raw`` and
    ``predict_proba`` run one at a time per replayer. The box search replays pairs in
    its thread while a backend's loop (or a race) replays in another, and not every
    library documents its model object as safe to predict with from two threads."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name in REPLAY_CALLS:
            method = cls.__dict__.get(name)
            if method is not None and not getattr(method, "one_at_a_time", False):
                setattr(cls, name, _one_at_a_time(method))

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_calls", None)  # a lock: made again on the first call
        return state


class LazyLibraryModel(OneCallAtATime):
    """Base of the replayers that hold the library's own model object (a Booster, an
    estimator): made by ``_build()`` from what the replayer pickles, on first use (once:
    threads share a replayer) and never pickled itself. ``_cached`` names the attribute
    that holds it; ``_picklable(state)`` readies a pickle's state."""

    _cached: ClassVar[str]

    def __init__(self, model: Any = None):
        setattr(self, self._cached, model)
        self._lock = threading.Lock()

    def _build(self) -> Any:
        raise NotImplementedError

    def _picklable(self, state: dict) -> None:
        """Make ``state`` (a copy of the replayer's attributes) fit to pickle: add what
        ``_build`` needs, drop what is made again."""

    def _library_model(self) -> Any:
        with self._lock:
            if getattr(self, self._cached) is None:
                setattr(self, self._cached, self._build())
            return getattr(self, self._cached)

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        self._picklable(state)
        state[self._cached] = None
        del state["_lock"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()


def warn_if_classes_are_not_positions(labels, where: str) -> None:
    """A multiclass model whose labels are not 0..k-1 ([0, 2, 5]): treesens numbers its
    classes by position (class 1 is label 2), which a number asked may not mean. Labels
    0..k-1 as text ("0", "1", "2", read from a CSV) mean their positions: no warning. A
    binary model whose labels are others (["hire", "reject"]) says whose probability
    P(class 1) is (False / True need no word)."""
    if labels is None or len(labels) < 2:
        return
    listed = [v.item() if hasattr(v, "item") else v for v in labels]
    positions = range(len(listed))
    if listed == list(positions) or [str(v) for v in listed] == [str(i) for i in positions]:
        return
    shown = ", ".join(map(str, listed[:6])) + (", ..." if len(listed) > 6 else "")
    if len(listed) == 2:  # binary: the gap and the audit read P(class 1), the second label's
        if [str(v).lower() for v in listed] not in (["false", "true"], ["0.0", "1.0"]):
            warnings.warn(
                f"{where}: the model's class labels are [{shown}]; P(class 1), which the gap "
                f"and the audit's decisions read, is the probability of label {listed[1]}",
                TreesensWarning,
                stacklevel=3,
            )
        return
    warnings.warn(
        f"{where}: the model's class labels are [{shown}]; classes are asked and shown by "
        f"position 0..{len(listed) - 1} (class 1 is label {listed[1]})",
        TreesensWarning,
        stacklevel=3,
    )
