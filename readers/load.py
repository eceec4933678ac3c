"""Load any supported model (a path or an in-memory object) into the Ensemble IR."""

from __future__ import annotations

import csv
import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..compiler.dataset import TableRows
from ..compiler.ensemble import Ensemble
from ..compiler.errors import (
    DetailsNote,
    InputError,
    TreesensWarning,
    UnsupportedModelError,
    name_list,
    not_a_regular_file,
    say_note,
    suggests_keywords,
)
from . import formats
from .data import label_column, load_data, missing_value_error
from .details import (
    apply_data_names,
    apply_details,
    apply_details_text,
    declared_missing,
    details_names,
    nan_refused,
    unstated_bounds_note,
)
from .finite import check_finite
from .formats import sniffing
from .formats.base import DUMP_OPTIONS, LoadOptions, byte_order_mark, head_text
from .load_notes import step as load_step
from .model_cache import cached_load


def __getattr__(name: str) -> Any:
    # ``FORMATS``: "auto" and the registered formats' names, read when asked (a format
    # registered at run time is included)
    if name == "FORMATS":
        return (formats.AUTO, *formats.format_names())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# a model file at least this large takes seconds to load (a 170 MB .skops file: 8 s): the
# Python API logs it before it loads (the "treesens" logger, INFO); the command line says
# any load that runs past load_notes.AFTER seconds (a step of the load)
LOADING_NOTE_BYTES = 50_000_000


def loading_words(model, at_least: int | None = None) -> str | None:
    """``loading FILE (N MB)...`` when ``model`` is a file of at least ``at_least`` bytes
    (default LOADING_NOTE_BYTES), else None (a smaller file, an object, no file: the load
    says what is wrong)."""
    try:
        size = Path(model).stat().st_size
    except (OSError, TypeError, ValueError):
        return None
    limit = LOADING_NOTE_BYTES if at_least is None else at_least
    if size < 50e3:  # "0.0 MB" said of a 2 KB pickle whose imports took the seconds
        shown = f"{max(size / 1e3, 1):.0f} KB"
    else:
        shown = f"{size / 1e6:,.0f} MB" if size >= 10e6 else f"{size / 1e6:.1f} MB"
    return f"loading {model} ({shown})..." if size >= limit else None


def _log_loading(model) -> None:
    """The API's word on a large model file, before it loads: nothing else is said for
    seconds (logging is imported only then: the command line says it itself)."""
    words = loading_words(model)
    if words is not None:
        import logging

        logging.getLogger("treesens").info(words)


# a model saved with none of its trees (0 rounds, or LightGBM's save_model(start_iteration=)
# past the last): as scikit-learn's ensembles of no trees are refused
NO_TREES = (
    "the model has no trees: it predicts one constant, which no feature moves; "
    "save the model with its trained trees"
)


def base_score_problem(value, objective: str | None = None) -> str | None:
    """What is wrong with a text dump's base_score (None: nothing, or not given): one
    number or one per class, a probability in (0, 1) for the logistic objectives (the
    default), positive for a log link, any number else."""
    if value is None:
        return None
    values = value if isinstance(value, (tuple, list)) else (value,)
    if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in values):
        return "must be a number"
    logistic = objective in (None, "binary:logistic", "reg:logistic")
    if logistic and not all(0.0 < v < 1.0 for v in values):
        return "must be a probability in (0, 1)"
    exp_link = objective in ("count:poisson", "reg:gamma", "reg:tweedie")
    if exp_link and not all(v > 0.0 for v in values):
        return f"must be positive (the mean prediction of {objective}'s log link)"
    return None


def shown_base_score(value) -> str:
    """A base score as given: one number, or numbers joined by commas."""
    values = value if isinstance(value, (tuple, list)) else (value,)
    return ",".join(f"{v:g}" for v in values)


def _checked_base_score(base_score, objective):
    """A dump's base score as given (a list as a tuple), or the one line of what is wrong."""
    if base_score_problem(base_score, objective):
        shown = shown_base_score(base_score)
        raise InputError(f"base_score {shown} {base_score_problem(base_score, objective)}")
    return tuple(base_score) if isinstance(base_score, list) else base_score


def _checked_groups(groups, data):
    """load_model's ``groups`` as it reads them: "none" is none, "infer" needs data."""
    if groups == "none":
        return {}
    if groups == "infer" and data is None:
        raise InputError('groups="infer" finds the groups in data: give data=')
    return groups


@suggests_keywords()
def load_model(
    model,
    *,
    format: str = "auto",
    details=None,
    base_score: float | tuple[float, ...] | None = None,
    n_classes: int | None = None,
    objective: str | None = None,
    num_parallel_tree: int | None = None,
    data=None,
    label: str = "label",
    auto_details: bool = True,
    trust_pickle: bool = False,
    bounds: str = "auto",
    groups=None,
    _note: bool = True,
    _dump_names_from=None,
) -> Ensemble:
    """A model file path, or a fitted XGBoost / LightGBM / scikit-learn model object.

    ``details``: a feature,name,lb,ub[,kind][,missing] CSV path, or a pandas DataFrame with
    those columns. ``data`` (a CSV / Parquet path, a DataFrame, or an array with the
    features in model order): its columns name the features of a model that has only
    generic names (f0, Column_0, x0, ...). ``bounds``: ``"data"`` narrows each feature's
    bounds to the smallest and largest value of its column in ``data`` (within any declared
    bounds), so witnesses stay inside the data's range; the model's ``source`` says so
    (``Result.model``). ``"none"`` leaves them as the model and details declare them
    (without details: all reals). ``"auto"`` (the default) is ``"data"`` when data is
    given to a model file or object and no details declare bounds, else ``"none"``. With ``auto_details``, a
    details file beside a model file (``<model>_details.csv``, ``<model minus its last
    _part>_details.csv`` or ``details.csv``) is used when it names exactly the model's
    features in the model's order (its bounds keep witnesses inside the data's domain).
    ``trust_pickle``: load a joblib / pickle file, which runs code the file chooses while
    it loads (a fitted estimator given in memory needs no such trust). ``groups``: one-hot
    columns that encode one categorical feature, ``{"race": ["race_A", "race_B"]}`` (or
    ``{"race": {"columns": [...], "dropped": "C"}}``, or the text ``"race=race_A,race_B;
    sex=..."``, ``"race=race_B,race_C dropped A"``), or ``"infer"`` (from ``data``:
    columns sharing a prefix whose rows each hold exactly one 1, or at most one 1 with a
    dropped category; the default with ``bounds="data"``; ``groups={}`` or ``"none"`` for
    none); each group becomes one feature whose values are its categories (docs/pipelines.md).
    ``objective``, ``n_classes``, ``base_score`` (one, or one per class), ``num_parallel_tree``:
    an XGBoost dump's, which it does not record (binary:logistic, 0.5, 1; docs/python.md).
    ``_note=False``: no note on the bounds the details leave out (``say_unstated_bounds``:
    a caller that declares more bounds after, a .sens file, says it then).
    ``_dump_names_from``: a details file that only numbers the features an XGBoost dump
    splits on by name (a caller that applies the details after, a .sens file's
    ``features from``).
    """
    base_score = _checked_base_score(base_score, objective)
    label = label_column(label)
    _check_bounds_keyword(bounds, data)
    groups = _checked_groups(groups, data)
    auto = bounds == "auto"
    if auto:
        bounds = "data" if data is not None and not isinstance(model, Ensemble) else "none"
    if isinstance(model, Ensemble):
        ens = model
    elif isinstance(model, (str, Path)):
        named_by = details if details is not None else _dump_names_from
        names = details_names(named_by) if named_by is not None else None  # a dump's
        options = LoadOptions(
            base_score, n_classes, trust_pickle, names, objective, num_parallel_tree
        )
        ens = _load_path(Path(model), format, options)
    else:
        ens = _load_object(model)
    _check_usable(ens, str(model) if isinstance(model, (str, Path)) else ens.source)
    if isinstance(model, (str, Path)):
        ens = ens.with_input("model", str(model))
    if details is not None:  # names the features first: the data's columns must match them
        ens = _with_details(ens, details)
    if data is not None and not _is_array(data):
        from .formats.catboost_categories import categories_from_data

        ens = apply_data_names(ens, data, label)
        ens = categories_from_data(ens, data, label)  # CatBoost's categories, by name
    if details is None and auto_details and isinstance(model, (str, Path)):
        ens, details = _with_details_beside(ens, Path(model))
    missing: MissingFromData | None = None
    if data is not None:  # before anything reads the data for its values
        missing = missing_from_data(ens, data, label, details)
        ens = missing.ensemble
    if bounds == "data" and details is not None and auto:
        bounds = "none"  # declared bounds win over the default
    groups = groups_with_bounds(groups, bounds == "data")
    if groups is not None:
        ens = with_groups(ens, groups, data, label)
    return _bounded(ens, bounds == "data", data, label, missing, details if _note else None)


def _check_bounds_keyword(bounds, data) -> None:
    if bounds not in BOUNDS:
        raise InputError(f"bounds={bounds!r}: use one of {', '.join(map(repr, BOUNDS))}")
    if bounds == "data" and data is None:
        raise InputError('bounds="data" takes the bounds from data: give data=')


def _with_details_beside(ens: Ensemble, model: Path) -> tuple[Ensemble, Path | None]:
    """``ens`` declared by the details file found beside its model file (named in its
    source), and that file; unchanged and None where none is found."""
    found = _details_beside(model, ens)
    if found is None:
        return ens, None
    ens = apply_details(ens, found)
    return replace(ens, source=f"{ens.source} (bounds from {found})"), found


def _bounded(ens: Ensemble, from_data: bool, data, label, missing, details) -> Ensemble:
    """``ens`` with its last bounds, the data's range where they come from the data (the
    features it made possibly missing named in its source), and the note on the bounds
    the details left out where it is still unbounded."""
    if from_data:
        ens = bounds_from_data(ens, data, label, missing.names if missing else ())
    elif missing is not None and missing.names:
        ens = replace(ens, source=f"{ens.source} ({missing.words()})")
    say_unstated_bounds(ens, details)
    return ens


def say_unstated_bounds(ens: Ensemble, details, shown: str | None = None) -> None:
    """The note on the bounds a details table (a path or a DataFrame, or None: no note;
    named ``shown``, by default as given) leaves out by an empty cell or a missing column,
    where ``ens`` is still unbounded (``unstated_bounds_note``)."""
    if details is None:
        return
    if shown is None:
        shown = str(details) if isinstance(details, (str, Path)) else "<details DataFrame>"
    note = unstated_bounds_note(ens, details, shown)
    if note is not None:
        say_note(note, DetailsNote)


# where a model's feature bounds come from: its declarations alone, or also the data
BOUNDS = ("auto", "data", "none")
DETAILS_COLUMNS = "feature,name,lb,ub[,kind][,missing]"
GROUPS_HELP = (
    "one-hot columns that encode one categorical feature: 'infer' (from the data: columns "
    "sharing a prefix whose rows each hold one 1, or at most one 1 and some rows none: a "
    "dropped category; the default with bounds from data), "
    "'race=race_A,race_B,race_C;sex=sex_F,sex_M' (a category without a column: "
    "'race=race_B,race_C dropped A'), 'none' (no groups), or a mapping {'race': [columns]}"
)


def _check_usable(ens: Ensemble, where: str) -> None:
    """Finite numbers (``check_finite``) and at least one tree, which every search indexes."""
    check_finite(ens, where)
    if not ens.trees:
        raise InputError(NO_TREES, where)


def groups_with_bounds(groups, from_data: bool):
    """The one-hot groups a model takes: those given (``{}``: none), else, when its bounds
    come from the data (``--bounds data``, ``bounds="data"``, a .sens file's ``bounds from
    data``), ``"infer"``: the data shows which columns are one-hot groups."""
    if groups is None and from_data:
        return "infer"
    return groups


def _is_array(data) -> bool:
    """Data without column names (a numpy array, a list of rows): model order."""
    return not isinstance(data, (str, Path)) and not hasattr(data, "columns")


def _with_details(ens: Ensemble, details) -> Ensemble:
    """Declarations from a details CSV path (named in the source, as one found beside
    the model) or a DataFrame of the same columns."""
    if isinstance(details, (str, Path)):
        ens = apply_details(ens, details)
        return replace(ens, source=f"{ens.source} (bounds from {details})")
    if hasattr(details, "to_csv") and hasattr(details, "columns"):
        return apply_details_text(ens, details.to_csv(index=False), "<details DataFrame>")
    raise InputError(
        f"details takes a CSV path or a pandas DataFrame with columns {DETAILS_COLUMNS}, "
        f"not a {type(details).__name__}"
    )


def with_groups(ens: Ensemble, groups, data, label: str = "label") -> Ensemble:
    """``ens`` with its one-hot groups (declared, or ``"infer"``red from data) folded
    into one categorical feature each."""
    # (imported here: a model without groups or data needs none of it)
    from .preprocessing.groups import (
        declared_groups,
        fold_groups,
        groups_from_text,
        inferred_groups,
    )

    if groups == "infer":
        found = inferred_groups(ens, load_data(data, ens, label).X)
        return fold_groups(ens, found, f"inferred from {_data_name(data)}")
    if isinstance(groups, str):
        groups = groups_from_text(groups)
    if not isinstance(groups, Mapping):
        raise InputError(
            f'groups takes a mapping of group name to columns or "infer", not a {type(groups).__name__}'
        )
    return fold_groups(ens, declared_groups(ens, groups), "declared")


def _data_name(data) -> str:
    return str(data) if isinstance(data, (str, Path)) else f"<{type(data).__name__}>"


@dataclass(frozen=True)
class MissingFromData:
    """The model with each feature whose column in the data holds a missing value made
    possibly missing (``names``), and the data's name for messages."""

    ensemble: Ensemble
    names: tuple[str, ...]
    source: str

    def words(self) -> str:
        return f"possibly missing from data {self.source}: {name_list(self.names)}"


def missing_from_data(ens: Ensemble, data, label: str = "label", details=None) -> MissingFromData:
    """Each feature whose column in ``data`` holds a missing value (NaN) made possibly
    missing, as XGBoost, LightGBM, CatBoost and scikit-learn's trees route NaN, unless
    ``details`` (a CSV path or DataFrame) declares its ``missing``: declared false, NaN in
    its column is an error. A model whose library's predict refuses NaN is an error
    naming the column."""
    ds = load_data(data, ens, label, missing_ok=True)
    nan = np.isnan(ds.X)
    declared = declared_missing(details)
    feats = list(ens.features)
    made: list[int] = []
    for f in np.flatnonzero(nan.any(axis=0)).tolist():
        feat = feats[f]
        if feat.may_be_missing:
            continue
        if feat.name in declared:
            raise missing_value_error(
                ds.rows,
                feat.name,
                np.flatnonzero(nan[:, f]),
                "the details file declares the feature never missing (missing false): drop "
                "those rows or declare it missing",
            )
        feats[f] = replace(feat, may_be_missing=True)
        made.append(f)
    if made:
        _check_takes_missing(ens, ds.X, nan, made, ds.rows)
    out = ens.with_features(tuple(feats)) if made else ens
    return MissingFromData(out, tuple(feats[f].name for f in made), ds.source)


def _check_takes_missing(
    ens: Ensemble, X: np.ndarray, nan: np.ndarray, made: list[int], rows: TableRows
) -> None:
    """Ask the library's predict about a data row with NaN in every feature of ``made``:
    a model whose library refuses NaN (scikit-learn's GradientBoosting, say) cannot be
    asked about such data."""
    rep = ens.replayer
    if rep is None:  # the IR is the model: it routes NaN by each node's default
        return
    first = int(np.flatnonzero(nan[:, made].any(axis=1))[0])
    why = nan_refused(ens, X[first], made)
    if why is not None:
        raise missing_value_error(
            rows,
            ens.features[made[0]].name,
            np.flatnonzero(nan[:, made[0]]),
            f"this model cannot take missing values (its library's predict refuses NaN: "
            f"{why}); drop or impute those rows",
        )


def bounds_from_data(
    ens: Ensemble, data, label: str = "label", may_miss: tuple[str, ...] = ()
) -> Ensemble:
    """Each feature's bounds narrowed to its column's smallest and largest value in the
    data (a feature whose column is all missing, or absent, keeps its bounds), and each real
    feature whose values are all 0 or 1 made binary, all integers integer. Data outside
    a declared bound is an InputError: the data and the declarations disagree.
    ``may_miss``: the features the data made possibly missing (``missing_from_data``),
    named with the kinds in the model's source."""
    dataset = load_data(data, ens, label)
    missing = np.isnan(dataset.X)
    lo = np.where(missing, np.inf, dataset.X).min(axis=0)
    hi = np.where(missing, -np.inf, dataset.X).max(axis=0)
    feats = list(ens.features)
    kinds: dict[str, list[str]] = {}
    for i, f in enumerate(feats):
        if lo[i] > hi[i] or f.name in dataset.filled:  # no value in the data
            continue
        if lo[i] < f.lb or hi[i] > f.ub:
            raise InputError(
                f"feature {f.name!r}: the data's values [{lo[i]:g}, {hi[i]:g}] leave its "
                f"declared bounds [{f.lb:g}, {f.ub:g}]",
                dataset.source,
            )
        kind = _kind_of(f, dataset.X[~missing[:, i], i])
        if kind != f.kind:
            kinds.setdefault(kind, []).append(f.name)
        feats[i] = replace(f, kind=kind, lb=float(lo[i]), ub=float(hi[i]))
    warn_if_thresholds_miss_the_data(ens, lo, hi, dataset.source)
    if may_miss:
        kinds["possibly missing"] = list(may_miss)
    out = ens.with_features(tuple(feats))
    rows = f"{dataset.n_rows} row{'s' if dataset.n_rows != 1 else ''}"
    inferred = "".join(f"; {k}: {name_list(v)}" for k, v in sorted(kinds.items()))
    what = "bounds and kinds" if kinds else "bounds"
    return replace(
        out, source=f"{ens.source} ({what} from data {dataset.source}, {rows}{inferred})"
    )


def warn_if_thresholds_miss_the_data(ens: Ensemble, lo, hi, source: str) -> None:
    """Warn when, on most of the numeric features the trees split, no threshold lies in
    the data's range: the model was likely trained on transformed columns (the last step
    of a Pipeline) and the data is in raw units, so bounds from it describe other inputs."""
    ths: dict[int, list[float]] = {}
    for t in ens.trees:
        for n in np.flatnonzero(t.feature >= 0).tolist():
            if not t.is_categorical(n):
                ths.setdefault(int(t.feature[n]), []).append(float(t.threshold[n]))
    checked = [f for f in ths if lo[f] < hi[f] and ens.features[f].kind == "real"]
    missed = [f for f in checked if not any(lo[f] <= x <= hi[f] for x in ths[f])]
    if len(missed) < 2 or len(missed) * 2 < len(checked):
        return
    f = missed[0]
    warnings.warn(
        f"{source}: on {len(missed)} of {len(checked)} features no threshold of the model "
        f"lies in the data's range (e.g. {ens.features[f].name!r}: data [{lo[f]:g}, "
        f"{hi[f]:g}], thresholds [{min(ths[f]):g}, {max(ths[f]):g}]); was the model "
        "trained on transformed columns? Give the whole Pipeline, or data in the model's units",
        TreesensWarning,
        stacklevel=4,
    )


def _kind_of(f, values: np.ndarray) -> str:
    """A real feature's kind as its data shows it: binary (only 0 and 1), integer
    (only whole numbers), else real. Declared kinds stay."""
    if f.kind != "real" or values.size == 0:
        return f.kind
    if np.isin(values, (0.0, 1.0)).all():
        return "binary"
    return "integer" if (np.floor(values) == values).all() else "real"


def details_candidates(path: Path) -> list[Path]:
    """Where a model's details file may sit beside it, most specific first: for
    ``wine_xgb.json``, ``wine_xgb_details.csv``, ``wine_details.csv``, ``details.csv``."""
    stem = path.name.split(".")[0]
    names = [f"{stem}_details.csv"]
    if "_" in stem:
        names.append(f"{stem.rsplit('_', 1)[0]}_details.csv")
    names.append("details.csv")
    return [path.parent / n for n in dict.fromkeys(names)]


def _details_beside(path: Path, ens: Ensemble) -> Path | None:
    """The first details file beside the model that declares exactly its features, in
    order (a file naming other features belongs to another model and is skipped)."""
    for cand in details_candidates(path):
        if not cand.is_file():
            continue
        try:
            rows = list(csv.DictReader(cand.read_text(encoding="utf-8-sig").splitlines()))
            names = [r["name"].strip() for r in sorted(rows, key=lambda r: int(r["feature"]))]
        except (OSError, UnicodeDecodeError, KeyError, ValueError, AttributeError):
            continue
        if names == ens.feature_names:
            return cand
    return None


def _load_path(path: Path, name: str, options: LoadOptions) -> Ensemble:
    known = (formats.AUTO, *formats.format_names())
    if name not in known:
        raise InputError(f"unknown model format {name!r} (use one of {', '.join(known)})")
    where = str(path)
    if not path.exists():
        raise InputError("model file not found", where)
    if path.is_dir():
        raise InputError("is a directory, not a model file", where)
    st = path.stat()
    if (special := not_a_regular_file(st.st_mode, "model file")) is not None:
        raise InputError(special, where)
    if st.st_size == 0:
        raise InputError("model file is empty", where)
    _log_loading(path)
    fmt = formats.by_name(name) if name != formats.AUTO else formats.sniff(path)
    if fmt is None:
        raise InputError(
            _not_a_model(path)
            or f"cannot tell the model format; pass --format ({', '.join(known[1:])})",
            where,
        )
    said = [k for k in DUMP_OPTIONS if getattr(options, k) is not None]
    if said and not fmt.takes_base_score:
        raise InputError(
            f"{DUMP_OPTIONS[said[0]]} is read only for an XGBoost text dump; this model records "
            "its own",
            where,
        )
    try:
        with load_step(loading_words(path, at_least=0) or f"loading {path}..."):
            return cached_load(fmt.name, path, options, lambda: fmt.load_path(path, options))
    except InputError:
        if name == formats.AUTO:
            if fmt.name == "xgboost" and (unknown := _no_format_known(path)) is not None:
                raise InputError(unknown, where) from None
            raise
        other = _another_format(path, fmt)
        if other is None:
            raise
        raise InputError(
            f"not {fmt.description}: it looks like {other.description}: give --format "
            f"{other.name}, or leave --format out to tell the format from the file",
            where,
        ) from None


def _no_format_known(path: Path) -> str | None:
    """What a file read as XGBoost's (the reader of binary content no other format marks,
    and of .model, .bst files) is not, when xgboost failed to read it and nothing of it
    is a model's: no format's marks, no opening brace (JSON's, UBJ's), no text and no byte
    order mark (said apart). None: xgboost's own message says more."""
    with path.open("rb") as fh:
        head = fh.read(4096)
    if sniffing.plainly(head) is not None or head.lstrip()[:1] in (b"{", b"["):
        return None
    if head_text(head[:4000]) is not None or byte_order_mark(head[:3]) is not None:
        return None
    return (
        "not a model file: binary content that is no XGBoost model (JSON or UBJ) nor any "
        f"other format's; {formats.SUPPORTED}"
    )


def _another_format(path: Path, fmt) -> formats.ModelFormat | None:
    """The format a file read with ``fmt`` (given by --format) failed to be read as
    plainly is, when another (formats/sniffing.plainly; a dump counts as XGBoost's, whose
    reader reads dumps too), or None."""
    with path.open("rb") as fh:
        seen = sniffing.plainly(fh.read(4096))
    if seen is None or seen == fmt.name or (fmt.name, seen) == ("xgboost", "xgboost-dump"):
        return None
    return formats.by_name(seen)


def _not_a_model(path: Path) -> str | None:
    """What a file given as a model is when its name says it is a query file or data."""
    suffix = path.suffix.lower()
    if suffix == ".sens":
        return "a .sens query file, not a model: run it with treesens run FILE.sens"
    if suffix == ".csv" and _details_header(path):
        return (
            f"a details file ({DETAILS_COLUMNS}: the features' names and bounds), not a "
            "model: give it with --details (details=), after the model"
        )
    if suffix in (".csv", ".parquet"):
        return "a data file, not a model: give it with --data (data=), after the model"
    try:
        with path.open("rb") as fh:
            head = fh.read(3)
    except OSError:
        return None
    return byte_order_mark(head)


def _details_header(path: Path) -> bool:
    """Whether a CSV file's first line is a details file's header: it names the columns
    a details file needs, ``feature`` and ``name`` (readers/details.py)."""
    try:
        with path.open(encoding="utf-8-sig", newline="") as fh:
            first = next(csv.reader(fh, skipinitialspace=True), [])
    except (OSError, UnicodeDecodeError, csv.Error):
        return False
    return {"feature", "name"} <= {c.strip() for c in first}


def _load_object(obj: Any) -> Ensemble:
    ens = formats.load_object(obj)
    if ens is None:
        raise UnsupportedModelError(
            f"cannot read a model of type {type(obj).__module__}.{type(obj).__name__}; "
            f"{formats.SUPPORTED}"
        )
    return ens
