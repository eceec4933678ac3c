"""A scikit-learn ``Pipeline`` (preprocessing steps, then a tree ensemble) as one
Ensemble over the pipeline's *input* columns, in the user's units and names.

The final estimator is read by its own format into trees over the transformed columns.
Each transformed column depends on one input column (every supported step maps columns
one by one, steps.py); which one, and how, is asked of the fitted preprocessing itself:
a numeric input is a nondecreasing map (its thresholds fold, fold.py), an encoded input
gives each category a value. Witnesses are replayed through the whole pipeline's
``predict_proba`` on a DataFrame of the two rows.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import numpy as np

from ...compiler.ensemble import Ensemble, Feature, ModelOrigin, raw_category_values
from ...compiler.errors import InputError, UnsupportedModelError
from ..formats.base import OneCallAtATime
from ..load_notes import step as load_step
from .fold import ColumnMap, check_nondecreasing, fold, last_accepted
from .known_categories import as_known_categories
from .sparse import as_model_input, reads_absent_as_missing, refuse_zeros_read_apart
from .steps import PASS, branch_steps, encoder_of, is_identity, refuse, step_name

# inputs that show which transformed columns a numeric input reaches (a clipping
# MinMaxScaler is flat on most of the line, so the probes span many scales)
BIGGEST = float(np.finfo(np.float64).max)
PROBES = np.array([0.0, 0.5, 2.5, 7.0] + [s * 10.0**k for k in range(-3, 10, 2) for s in (1, -1)])


def fold_pipeline(pipe: Any, load_final: Callable[[Any], Ensemble], where: str) -> Ensemble:
    """The ensemble of a fitted Pipeline whose last step is a supported tree model;
    ``load_final`` reads that model into the IR (over the transformed columns)."""
    steps = [s for _, s in pipe.steps]
    final, pre = steps[-1], [s for s in steps[:-1] if s not in PASS]
    if final in PASS:
        raise UnsupportedModelError("the Pipeline ends in 'passthrough', not a model", where)
    try:
        return _fold(pipe, pre, final, load_final, where)
    except PreprocessingFailed as e:
        raise InputError(f"the Pipeline's preprocessing fails on probe rows: {e}", where) from None


def _fold(pipe, pre, final, load_final, where: str) -> Ensemble:
    inner = load_final(final)
    features, maps = features_and_maps(pipe, inner, where)
    names = _input_names(pipe)
    categories = _input_columns(pre, _n_inputs(pipe, where), where)
    probe = _Probe(pipe, names, categories)
    summary = " -> ".join([*(_describe(s) for s in pre), type(final).__name__])
    imputed = [f.name for f in features if f.may_be_missing]
    if imputed:  # NaN is one of their values (the imputer fills it), which a pair may use
        summary += f"; may be missing (imputed): {', '.join(imputed)}"
    words = (
        f"loading {where}: folding the pipeline's preprocessing ("
        + (", ".join(_describe(s) for s in pre) or "none")
        + f") into the thresholds of its {len(inner.trees):,} trees..."
    )
    try:
        with load_step(words):  # a bisection through the preprocessing: seconds
            return fold(
                inner,
                features,
                maps,
                replayer=PipelineReplayer(pipe, names, categories, probe.as_frame, inner.replayer),
                source=f"pipeline:{where} ({summary}; trees from {inner.source})",
                origin=ModelOrigin("pipeline", where),
                evaluate=numeric_columns,  # a bisection step's columns in one transform
            )
    except UnsupportedModelError as e:
        if e.where is not None:
            raise
        raise UnsupportedModelError(e.message, where) from None


def features_and_maps(
    pipe: Any, inner: Ensemble, where: str
) -> tuple[list[Feature], list[ColumnMap]]:
    """The pipeline's input features, and how each column ``inner`` (its final model's
    ensemble) reads follows from them, asked of the fitted preprocessing."""
    pre = [s for _, s in pipe.steps[:-1] if s not in PASS]
    categories = _input_columns(pre, _n_inputs(pipe, where), where)
    names = _input_names(pipe)
    probe = _Probe(pipe, names, categories)
    width = probe.transform(probe.rows(0, [probe.ref[0]])).shape[1]
    if width != inner.n_features:
        raise InputError(
            f"the preprocessing makes {width} columns, the {type(pipe.steps[-1][1]).__name__} "
            f"reads {inner.n_features}",
            where,
        )
    features, maps = _features_and_maps(probe, names, categories, width, where)
    if step_name(pipe.steps[-1][1]).startswith("HistGradientBoosting"):
        maps = [as_known_categories(inner, j, m) for j, m in enumerate(maps)]
    if probe.absent_missing and probe.sparse_output():
        refuse_zeros_read_apart(inner, features, maps, where)
    return features, maps


def input_categories(pipe: Any, where: str) -> dict[int, tuple]:
    """Per input column an encoder reads, its categories in code order (raw values)."""
    pre = [s for _, s in pipe.steps[:-1] if s not in PASS]
    return _input_columns(pre, _n_inputs(pipe, where), where)


def _fitted_input(pipe: Any, attribute: str) -> Any:
    """The Pipeline's ``n_features_in_`` or ``feature_names_in_``: scikit-learn asks its
    first step, which a leading 'passthrough' step does not have; then the first step
    that is not one, which reads the same columns (None: not fitted, or no names)."""
    given = getattr(pipe, attribute, None)
    if given is not None:
        return given
    first = next((s for _, s in pipe.steps if s not in PASS), None)
    return getattr(first, attribute, None)


def _n_inputs(pipe: Any, where: str) -> int:
    n = _fitted_input(pipe, "n_features_in_")
    if n is None:
        raise InputError("the Pipeline is not fitted", where)
    return int(n)


def _input_names(pipe: Any) -> list[str]:
    names = _fitted_input(pipe, "feature_names_in_")
    if names is not None:
        return [str(n) for n in names]
    return [f"x{i}" for i in range(int(_fitted_input(pipe, "n_features_in_")))]


def preprocessed(pipe: Any, rows: Any) -> Any:
    """What the Pipeline's final model reads of ``rows``: its steps before it applied
    (a Pipeline of the model alone, or of 'passthrough' steps and it: the rows)."""
    if all(s in PASS for _, s in pipe.steps[:-1]):
        return rows
    return pipe[:-1].transform(rows)


def _describe(step: Any) -> str:
    if step_name(step) != "ColumnTransformer":
        return step_name(step)
    parts = [_branch_name(t) for _, t, _ in step.transformers_]
    return f"ColumnTransformer[{', '.join(parts)}]"


def _branch_name(trans: Any) -> str:
    if is_identity(trans):  # a dropped remainder reads "drop", not "passthrough"
        return "drop" if trans == "drop" else "passthrough"
    if step_name(trans) == "Pipeline":
        return "+".join(step_name(s) for _, s in trans.steps)
    return step_name(trans)


def _input_columns(pre: list[Any], n: int, where: str) -> dict[int, tuple]:
    """Which input columns an encoder reads, with its categories in code order; every
    step checked to be supported. Encoders must see the user's columns: in the first step
    (a ColumnTransformer's branch, or the step)."""
    categories: dict[int, tuple] = {}
    for k, step in enumerate(pre):
        branches = _branches(step, n, where)
        for steps, cols in branches:
            enc = encoder_of(steps)
            if enc is not None and k > 0:
                raise refuse(enc, where, " after the pipeline's first step")
            if enc is not None:
                for i, c in enumerate(cols):
                    categories[c] = tuple(enc.categories_[i])
    return categories


def _branches(step: Any, n: int, where: str) -> list[tuple[list[Any], list[int]]]:
    """(steps, input column indices) of each branch of a step."""
    if step_name(step) != "ColumnTransformer":
        return [(branch_steps(step, where), list(range(n)))]
    out = []
    for name, trans, cols in step.transformers_:
        out.append((branch_steps(trans, where), _resolve(step, name, cols, n, where)))
    return out


def _resolve(ct: Any, name: str, cols: Any, n: int, where: str) -> list[int]:
    """A ColumnTransformer branch's input columns as indices."""
    found = getattr(ct, "_transformer_to_input_indices", {}).get(name)
    if found is not None:
        return [int(i) for i in found]
    names = [str(c) for c in getattr(ct, "feature_names_in_", [])]
    items = cols if isinstance(cols, (list, tuple, np.ndarray)) else [cols]
    if isinstance(cols, slice):
        return list(range(n))[cols]
    if len(items) and isinstance(items[0], (bool, np.bool_)):
        return [i for i, keep in enumerate(items) if keep]
    try:
        return [names.index(c) if isinstance(c, str) else int(c) for c in items]
    except (ValueError, TypeError):
        raise UnsupportedModelError(
            f"cannot tell which columns the ColumnTransformer branch {name!r} reads", where
        ) from None


class _Probe:
    """Runs the fitted preprocessing on rows that differ from a reference row in one
    input column."""

    def __init__(self, pipe: Any, names: list[str], categories: dict[int, tuple]):
        self.pipe = pipe
        self.names = names
        self.categories = categories
        self.as_frame = _fitted_input(pipe, "feature_names_in_") is not None
        self.ref = [categories[i][0] if i in categories else 0.0 for i in range(len(names))]
        self._limits: dict[int, tuple[float, float]] | None = None
        self.absent_missing = reads_absent_as_missing(pipe.steps[-1][1])

    def limits(self, i: int) -> tuple[float, float]:
        """The inputs of numeric column ``i`` the preprocessing takes, ``[lo, hi]``: all
        of them for a scaler alone, but a chain of two refuses the largest doubles (the
        first sends them to infinity, which the second's input check rejects). Each map
        is nondecreasing, so what lies beyond an end routes as the end does: the forwards
        clip to these (the fold's first and last intervals)."""
        if self._limits is None:
            with np.errstate(over="ignore", invalid="ignore"):  # the probes overflow
                self._limits = self._find_limits()
        return self._limits.get(i, (-np.inf, np.inf))

    def _find_limits(self) -> dict[int, tuple[float, float]]:
        numeric = [i for i in range(len(self.names)) if i not in self.categories]
        ends = [-BIGGEST, BIGGEST]
        cols = {n: [self.ref[i]] * (2 * len(numeric)) for i, n in enumerate(self.names)}
        for k, i in enumerate(numeric):
            cols[self.names[i]][2 * k : 2 * k + 2] = ends
        if self._takes(make_frame(cols, self.names, self.as_frame)):
            return {}  # one transform: every column takes every double (no chain)
        out = {}
        for i in numeric:
            lo, hi = (
                last_accepted(lambda x, i=i: self._takes(self.rows(i, [x])), 0.0, end)
                for end in ends
            )
            out[i] = (lo, hi)
        return out

    def sparse_output(self) -> bool:
        """Whether the preprocessing outputs a sparse matrix (fixed at fit)."""
        return hasattr(preprocessed(self.pipe, self.rows(0, [self.ref[0]])), "toarray")

    def taken(self, column: int, value) -> np.ndarray | None:
        """The preprocessing's output row where input ``column`` holds ``value``, or None
        where it refuses that value (an encoder's unknown category)."""
        try:
            return self.transform(self.rows(column, [value]), as_read=True)[0]
        except PreprocessingFailed:
            return None

    def _takes(self, rows) -> bool:
        try:
            self.transform(rows, finite=False)
        except PreprocessingFailed:
            return False
        return True

    def rows(self, column: int, values) -> Any:
        cols = {n: [self.ref[i]] * len(values) for i, n in enumerate(self.names)}
        cols[self.names[column]] = list(values)
        return make_frame(cols, self.names, self.as_frame)

    def columns(self, pairs: list[tuple[_NumericColumn, np.ndarray]]) -> list[np.ndarray]:
        """Each ``forward(x)`` of ``pairs``, this probe's numeric columns without NaN, by
        one transform of all their rows (the preprocessing works row by row)."""
        total = sum(len(x) for _, x in pairs)
        cols = {n: [self.ref[i]] * total for i, n in enumerate(self.names)}
        at = 0
        for f, x in pairs:
            x = np.clip(np.asarray(x, dtype=np.float64), *self.limits(f.i))
            cols[self.names[f.i]][at : at + len(x)] = x.tolist()
            at += len(x)
        out = self.transform(make_frame(cols, self.names, self.as_frame), finite=False)
        starts = np.cumsum([0] + [len(x) for _, x in pairs]).tolist()
        return [out[a:b, f.j] for (f, _), a, b in zip(pairs, starts, starts[1:], strict=False)]

    def transform(self, rows, finite: bool = True, as_read: bool = False) -> np.ndarray:
        """The preprocessing's output; ``finite``: refuse infinite values (the probe rows
        are ordinary numbers; the fold's bisection reaches the largest doubles).
        ``as_read``: as the final model reads it (sparse.as_model_input: XGBoost reads
        the zeros a sparse output leaves out as missing); else a sparse output's zeros
        are 0 (a numeric column's map, which the fold needs nondecreasing)."""
        try:
            out = preprocessed(self.pipe, rows)
            out = as_model_input(out, as_read and self.absent_missing)
        except Exception as e:  # noqa: BLE001 - a tampered step raises anything
            raise PreprocessingFailed(f"{type(e).__name__}: {str(e)[:200]}") from None
        if out.ndim != 2 or (finite and np.isinf(out).any()):
            raise PreprocessingFailed("it makes values that are not finite numbers")
        return out


def numeric_columns(pairs: list[tuple[Any, np.ndarray]]) -> list[np.ndarray]:
    """Each ``forward(x)`` of ``pairs`` (fold.Evaluate): one transform of all their rows
    where they are one probe's numeric columns at numbers (a bisection step's), else each
    forward in turn."""
    probes = {id(f.probe) for f, _ in pairs if isinstance(f, _NumericColumn)}
    numeric = all(isinstance(f, _NumericColumn) for f, _ in pairs) and len(probes) == 1
    if not numeric or any(np.isnan(x).any() for _, x in pairs):
        return [f(x) for f, x in pairs]
    return pairs[0][0].probe.columns(pairs)


class PreprocessingFailed(Exception):
    """The fitted preprocessing cannot transform the rows treesens probes it with."""


def make_frame(cols: dict[str, list], names: list[str], as_frame: bool):
    """Rows as the pipeline takes them: a DataFrame, or an array for one fitted on one."""
    import pandas as pd

    df = pd.DataFrame({n: cols[n] for n in names}, columns=names)
    return df if as_frame else df.to_numpy()


def _features_and_maps(probe, names, categories, width, where):
    owner: dict[int, int] = {}
    features, maps_of = [], {}
    base = probe.transform(probe.rows(0, [probe.ref[0]]))[0]
    read = probe.transform(probe.rows(0, [probe.ref[0]]), as_read=True)[0]
    imputed: set[int] = set()
    for i, name in enumerate(names):
        if i in categories:
            values = probe.transform(probe.rows(i, list(categories[i])), as_read=True)
            at_nan = probe.taken(i, np.nan)
            labels = tuple(_label(v) for v in categories[i])
            shown = raw_category_values(categories[i])
            ub = float(len(labels) - 1)
            features.append(Feature(name, "categorical", 0.0, ub, labels, category_values=shown))
        else:
            values = probe.transform(probe.rows(i, [*PROBES, np.nan]))
            if _imputed(values):
                imputed.add(i)
            features.append(Feature(name, may_be_missing=i in imputed))
        for j in _varying(values).tolist():
            if j in owner:
                raise UnsupportedModelError(
                    f"transformed column {j} depends on both {names[owner[j]]!r} and {name!r}",
                    where,
                )
            owner[j] = i
            if i in categories:
                missing = None if at_nan is None else float(at_nan[j])
                maps_of[j] = ColumnMap(
                    i, values=tuple(float(v) for v in values[:, j]), missing=missing
                )
            else:
                forward = _NumericColumn(probe, i, j, i in imputed)
                check_nondecreasing(forward, name, PROBES, where)
                maps_of[j] = ColumnMap(i, forward=forward)
    if np.isnan(base[[j for j in range(width) if j not in maps_of]]).any():
        raise InputError("a transformed column is missing (NaN) whatever the input", where)
    maps = [maps_of.get(j, ColumnMap(0, constant=float(read[j]))) for j in range(width)]
    return features, maps


def _imputed(values: np.ndarray) -> bool:
    """Whether a numeric input is read at NaN: ``values`` are the preprocessing's output
    at the probes, the last row at NaN. Every supported step but the imputer passes NaN
    through (scikit-learn's scalers do), so a column that depends on the input and holds
    a number at NaN was filled by an imputer, in whichever step it is, or is its
    missing-value indicator (SimpleImputer's add_indicator: 1.0 at NaN only)."""
    reached = _varying(values)
    return bool((~np.isnan(values[-1, reached])).any())


def _varying(values: np.ndarray) -> np.ndarray:
    """The transformed columns whose value differs between the probe rows, NaN a value
    of its own (an OrdinalEncoder codes the category it learned from missing values as
    NaN): a column that is NaN for one category reads that input."""
    first = values[:1]
    same = (values == first) | (np.isnan(values) & np.isnan(first))
    return np.flatnonzero(~same.all(axis=0))


def _label(value: Any) -> str:
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


class _NumericColumn:
    """Transformed column ``j`` as a function of input column ``i`` (the fitted
    preprocessing computes it); NaN stays NaN unless an imputer fills it."""

    def __init__(self, probe: _Probe, i: int, j: int, imputed: bool):
        self.probe, self.i, self.j, self.imputed = probe, i, j, imputed

    def __call__(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        out = np.full(x.shape, np.nan)
        ok = ~np.isnan(x) | self.imputed
        if ok.any():
            rows = self.probe.rows(self.i, np.clip(x[ok], *self.probe.limits(self.i)))
            out[ok] = self.probe.transform(rows, finite=False)[:, self.j]
        return out


def single_threaded(est: Any) -> Any:
    """``est`` predicting on one thread: a shallow copy with ``n_jobs=1`` of a
    scikit-learn estimator that has another ``n_jobs`` (a Pipeline: a copy whose final
    step is so); ``est`` itself otherwise, and never modified. A forest on several
    threads adds its trees' probabilities in the order the threads finish, so its
    predict_proba differs by an ulp from call to call; on one thread it adds them in
    the trees' order, as treesens' model of it does, and a replayed pair gets the same
    answer every time."""
    if not type(est).__module__.startswith("sklearn."):
        return est  # another library's n_jobs (XGBoost's set_params reaches its booster)
    if type(est).__name__ == "Pipeline" and est.steps:
        name, final = est.steps[-1]
        one = single_threaded(final)
        if one is final:
            return est
        out = copy.copy(est)
        out.steps = [*est.steps[:-1], (name, one)]
        return out
    n_jobs = est.get_params(deep=False).get("n_jobs", 1)
    if n_jobs == 1:
        return est
    out = copy.copy(est)
    out.set_params(n_jobs=1)
    return out


def one_openmp_thread(est: Any) -> AbstractContextManager:
    """A context in which ``est`` (a Pipeline: its final step) predicts on one OpenMP
    thread, where it is a HistGradientBoosting model, whose predict opens a parallel
    region per tree: on a machine whose cores are busy each region waits for its threads,
    and a 500-tree model's predict of one row took 16-19 s (6 CPU s) at a load of 15 on
    2 cores, 0.03 s on one thread (its rows are what the threads share: the numbers are
    the same). Other estimators: nothing."""
    if type(est).__name__ == "Pipeline" and est.steps:
        est = est.steps[-1][1]
    if not type(est).__name__.startswith("HistGradientBoosting"):
        return nullcontext()
    return _openmp().limit(limits=1, user_api="openmp")


@functools.cache
def _openmp() -> Any:
    """threadpoolctl's controller of the OpenMP runtimes loaded (made once: each new one
    looks them up again, about 20 ms)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


class PipelineReplayer(OneCallAtATime):
    """The user's pipeline's own predict, on user rows (category codes become the
    encoder's categories); a forest at its end predicts on one thread
    (``single_threaded``)."""

    library = "sklearn pipeline"

    def __init__(self, pipe, names, categories, as_frame: bool, inner):
        pipe = single_threaded(pipe)
        self.pipe, self.names, self.categories = pipe, list(names), dict(categories)
        self.as_frame, self.inner = as_frame, inner

    def frame(self, X) -> Any:
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        cols: dict[str, list] = {}
        for i, name in enumerate(self.names):
            if i in self.categories:
                cats = self.categories[i]
                values = [cats[int(v)] if v == v else np.nan for v in X[:, i]]
                # names stay an object column, as the encoder was fitted on, also
                # when every row holds the category learned from missing values (NaN)
                named = any(isinstance(c, str) for c in cats)
                cols[name] = np.array(values, dtype=object) if named else values
            else:
                cols[name] = X[:, i].tolist()
        return make_frame(cols, self.names, self.as_frame)

    def predict_proba(self, X) -> np.ndarray:
        with one_openmp_thread(self.pipe):
            p = np.asarray(self.pipe.predict_proba(self.frame(X)), dtype=np.float64)
        # the columns that are the final model's classes (CatBoost: class_names may list
        # classes absent from the training data)
        trained = getattr(self.inner, "trained_classes", None)
        return p if trained is None else trained(p)

    def predict(self, X) -> np.ndarray:
        with one_openmp_thread(self.pipe):
            return np.asarray(self.pipe.predict(self.frame(X)), dtype=np.float64).reshape(-1)

    def predict_raw(self, X) -> np.ndarray:
        out = preprocessed(self.pipe, self.frame(X))
        return self.inner.predict_raw(as_model_input(out, reads_absent_as_missing(self.pipe[-1])))
