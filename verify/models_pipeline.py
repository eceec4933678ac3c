"""A scikit-learn Pipeline of per-column scalers before a tree model, as the checker sees
it: the final model's trees, with each test on a transformed column restated on the
pipeline input it comes from, at the boundaries the certificate states.

The certificate states, per column the final model reads, its ``input``, the affine map
a scaler applies (``map``: [shift, scale], x -> (x - shift) / scale) when it is one, and
per threshold t of the model on the column the boundary b where the model's test
``cast(column) op t`` stops holding. The checker confirms every stated number by calling
the pipeline's own transform (on rows where only that input changes):

* the steps are ones that map each column on its own through a nondecreasing function
  (StandardScaler, MinMaxScaler, MaxAbsScaler, RobustScaler, SimpleImputer (the identity
  on the numbers a certificate's domain holds: one of NaN; one of a number only before an
  encoder, which reads its input at the stated categories alone), passthrough, and
  ColumnTransformers and Pipelines of them); so a column depends on one input through a monotone map, and once
  the test holds at the double before b and fails at b, the map rises there and the
  test holds exactly for x < b (``-inf`` / ``inf``: it fails / holds at both the smallest
  and the largest double, so everywhere, whichever way the map runs);
* the stated map agrees with the transform at 0, 1 and every finite boundary;
* a column whose stated boundaries are all infinite changes with the stated input (at
  the largest doubles or NaN): the column of another input, constant as this one
  varies, would confirm any infinite boundary (and an encoded column's images differ).

The model over the inputs then tests ``x < b`` in float64, as the proof's splits do.

A column an encoder makes from a categorical input (OneHotEncoder, OrdinalEncoder) is
stated by the input's ``categories`` (raw values, in code order: code k is the k-th) and
the column's ``values``, its image of each code. The checker confirms every image with
the transform (on rows where that input takes each category), and a test of the model on
the column becomes a categorical node on the input: the codes whose image passes go left.

A column of an input that may be missing (an imputer fills it) states ``nan``, its value
when the input is NaN; the checker confirms it with the transform, and a node on the
column sends NaN where its test sends that value. NaN is read for such inputs only.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from .models import Model, ModelError, Tree
from .models_sklearn import load_skops, sklearn_model

PER_COLUMN = ("StandardScaler", "MinMaxScaler", "MaxAbsScaler", "RobustScaler", "SimpleImputer")
ENCODERS = ("OneHotEncoder", "OrdinalEncoder")  # each column from one input's category
BIG = float(np.finfo(np.float64).max)


def read_pipeline(path: str, maps) -> Model:
    pipe = load_skops(path)
    if type(pipe).__name__ != "Pipeline":
        raise ModelError(f"{type(pipe).__name__}: a pipeline certificate names a Pipeline")
    for _, step in pipe.steps[:-1]:
        _check_step(step)
    inner = sklearn_model(pipe.steps[-1][1])
    if not isinstance(maps, list) or len(maps) != int(pipe.steps[-1][1].n_features_in_):
        raise ModelError("the certificate states no map for every column the model reads")
    names = [str(c) for c in _fitted(pipe, "feature_names_in_", [])] or [
        f"x{i}" for i in range(int(_fitted(pipe, "n_features_in_", 0)))
    ]
    categories = _categories(maps, len(names))
    encoded = _encoded_inputs(pipe, names)
    if categories != encoded:
        raise ModelError(
            "the certificate's encoded columns are not the pipeline's: every column an "
            "encoder makes states the encoder's categories, and only those do"
        )
    probe = _Probe(pipe, names, categories)
    boundary: dict[tuple[int, float], float] = {}
    images: dict[int, list[float]] = {}
    nan_images: dict[int, float] = {}  # per column of an input that may be missing
    inputs = []
    for j, col in enumerate(maps):
        i = int(col["input"])
        if not 0 <= i < len(names):
            raise ModelError(f"column {j}: input {i} is not one of the pipeline's")
        inputs.append(i)
        if "values" in col:
            images[j] = _confirm_images(probe, i, j, col["values"])
            if len(set(images[j])) < 2:
                raise _names_another_input(i, j)
            if "nan" in col:  # a missing input the pipeline encodes (an imputer fills it)
                nan_images[j] = _confirm_nan_image(probe, i, j, col["nan"])
            continue
        stated = [(float(t), _bound(b)) for t, b in col["boundaries"]]
        _confirm_boundaries(probe, inner, i, j, stated)
        if stated and not any(math.isfinite(b) for _, b in stated):
            _confirm_reads(probe, i, j)
        boundary.update(((j, t), b) for t, b in stated)
        if col.get("map") is not None:
            _confirm_map(probe, i, j, col["map"], [b for _, b in stated])
        if "nan" in col:
            nan_images[j] = _confirm_nan_image(probe, i, j, col["nan"])
    trees = [_restated(t, inputs, boundary, images, inner, nan_images) for t in inner.trees]
    # NaN is read for an input whose every column states its image (an input no column
    # is computed from is read by no node)
    nan_inputs = frozenset(
        i for i in range(len(names)) if all(j in nan_images for j, k in enumerate(inputs) if k == i)
    )
    # the final model's scoring (offsets, link, task: binary, multiclass or regressor) over
    # the pipeline's inputs, compared as doubles against the boundaries; an input's codes
    # are its stated categories; NaN is read for the inputs whose columns state their
    # image of NaN (the side each node sends that image to), no other
    return replace(
        inner,
        trees=trees,
        test="<",
        features=names,
        float32=False,
        zero_band=0.0,
        reads_nan=bool(nan_inputs),
        nan_features=nan_inputs,
        known_codes={i: len(c) for i, c in categories.items()},
    )


def _passthrough(step) -> bool:
    return isinstance(step, str) or step is None  # "passthrough" (_check_step read it)


def _fitted(pipe, attribute: str, default):
    """The Pipeline's ``n_features_in_`` or ``feature_names_in_``, which scikit-learn asks
    of its first step: a leading "passthrough" has none, the first other step reads the
    same columns."""
    given = getattr(pipe, attribute, None)
    if given is not None:
        return given
    first = next((s for _, s in pipe.steps if not _passthrough(s)), None)
    given = getattr(first, attribute, None)
    return default if given is None else given


def _categories(maps: list, n_inputs: int) -> dict[int, list]:
    """Per categorical input, its raw categories in code order, as every column made from
    it states them (the same list each time)."""
    out: dict[int, list] = {}
    for j, col in enumerate(maps):
        if "values" not in col:
            continue
        i, cats = int(col["input"]), col.get("categories")
        if not isinstance(cats, list) or not cats or any(isinstance(c, (list, dict)) for c in cats):
            raise ModelError(f"column {j}: an encoded column states its input's categories")
        if out.setdefault(i, cats) != cats:
            raise ModelError(f"column {j}: input {i}'s categories differ between its columns")
        if len(col["values"]) != len(cats):
            raise ModelError(f"column {j}: one image per category expected")
    return out


def _encoded_inputs(pipe, names: list[str]) -> dict[int, list]:
    """Per input an encoder of the pipeline's first step reads, the encoder's categories
    (as a certificate states them); an encoder in a later step is not read."""
    out: dict[int, list] = {}
    for k, (_, step) in enumerate(pipe.steps[:-1]):
        branches = (
            [(t, _indices(step, c, names)) for _, t, c in step.transformers_]
            if type(step).__name__ == "ColumnTransformer"
            else [(step, list(range(len(names))))]
        )
        for trans, cols in branches:
            enc = [s for s in _leaves(trans) if type(s).__name__ in ENCODERS]
            if not enc:
                continue
            if k > 0 or len(enc) > 1:
                raise ModelError("an encoder after the pipeline's first step is not read")
            for j, i in enumerate(cols):
                out[i] = [_stated(c) for c in enc[0].categories_[j]]
    return out


def _leaves(step) -> list:
    if type(step).__name__ == "Pipeline":
        return [s for _, inner in step.steps for s in _leaves(inner)]
    return [step]


def _indices(ct, cols, names: list[str]) -> list[int]:
    """The input indices a ColumnTransformer branch reads."""
    if isinstance(cols, slice):
        return list(range(len(names)))[cols]
    cols = list(np.atleast_1d(np.asarray(cols, dtype=object)))
    if cols and isinstance(cols[0], (bool, np.bool_)):
        return [i for i, b in enumerate(cols) if b]
    return [names.index(str(c)) if isinstance(c, str) else int(c) for c in cols]


def _stated(category) -> str | float:
    """A category as a certificate states it: a string, or a number."""
    return str(category) if isinstance(category, (str, np.str_)) else float(category)


def _confirm_images(probe: _Probe, i: int, j: int, stated) -> list[float]:
    """The column's stated image of each code, confirmed by the transform."""
    want = [float(v) for v in stated]
    got = probe.column(i, j, probe.categories[i])
    if not np.array_equal(got, np.array(want)):
        raise ModelError(
            f"the pipeline's transform does not confirm column {j}'s images of input {i}'s "
            "categories"
        )
    return want


def _check_step(step, encoded: bool = False) -> None:
    """``encoded``: a later step of the same Pipeline is an encoder, which reads this
    step's column as its input's categories (confirmed image by image, _confirm_images)."""
    name = type(step).__name__
    if not (isinstance(step, str) or step is None) and not type(step).__module__.startswith(
        "sklearn."
    ):
        raise ModelError(f"pipeline step {name} is not scikit-learn's")
    if isinstance(step, str) or step is None:
        if step in ("passthrough", "drop", None):
            return
    elif name in ENCODERS:
        return
    elif name in PER_COLUMN:
        if name == "SimpleImputer" and _fills_a_number(step) and not encoded:
            raise ModelError("a SimpleImputer of a number (missing_values) is not checked")
        if name == "MinMaxScaler" and not step.feature_range[0] < step.feature_range[1]:
            raise ModelError("a MinMaxScaler whose range decreases")
        return
    elif name == "FunctionTransformer" and getattr(step, "func", 0) is None:
        return  # how a fitted ColumnTransformer keeps remainder="passthrough"
    elif name == "ColumnTransformer":
        for _, trans, _ in step.transformers_:
            _check_step(trans)
        return
    elif name == "Pipeline":
        inner = [s for _, s in step.steps]
        for k, s in enumerate(inner):
            _check_step(s, any(type(e).__name__ in ENCODERS for e in inner[k + 1 :]))
        return
    raise ModelError(
        f"pipeline step {name}: the checker reads per-column scalers and imputers "
        "(one-hot columns are not checked)"
    )


def _fills_a_number(imputer) -> bool:
    """An imputer whose ``missing_values`` is a number, which it maps to its fill: not
    the identity on the numbers (one of NaN, a string or None is)."""
    missing = getattr(imputer, "missing_values", math.nan)
    number = isinstance(missing, (int, float, np.number)) and not isinstance(missing, bool)
    return number and not math.isnan(missing)


class _Probe:
    """The pipeline's transform on rows where one input takes the given values."""

    def __init__(self, pipe, names: list[str], categories: dict[int, list]):
        # no step before the model but "passthrough": the model reads the inputs
        bare = all(_passthrough(s) for _, s in pipe.steps[:-1])
        self.pre, self.names, self.categories = None if bare else pipe[:-1], names, categories
        self.frame = _fitted(pipe, "feature_names_in_", None) is not None
        # the other inputs: 0, a categorical one its first category
        self.base = [categories[i][0] if i in categories else 0.0 for i in range(len(names))]

    def column(self, i: int, j: int, values: list) -> np.ndarray:
        import pandas as pd

        cols = {n: [self.base[k]] * len(values) for k, n in enumerate(self.names)}
        cols[self.names[i]] = list(values)
        X = pd.DataFrame(cols, columns=self.names)
        if not self.frame:
            X = X.to_numpy()
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                out = np.asarray(X) if self.pre is None else self.pre.transform(X)
        except Exception as e:  # noqa: BLE001 - a tampered step raises anything
            raise ModelError(
                f"the pipeline's transform fails on rows varying input {i} "
                f"({type(e).__name__}: {str(e)[:120]})"
            ) from None
        out = out.toarray() if hasattr(out, "toarray") else out
        return np.asarray(out, dtype=np.float64)[:, j]


def _holds(inner: Model, v: float, t: float) -> bool:
    if inner.float32:
        with np.errstate(over="ignore"):
            v = float(np.float32(v))
    return v < t if inner.test == "<" else v <= t


def _confirm_boundaries(probe: _Probe, inner: Model, i: int, j: int, stated: list) -> None:
    """Each (t, b): the test holds at the double before b and fails at b (one transform
    of all the points)."""
    points, want, of = [], [], []
    for t, b in stated:
        # an infinite boundary: the test holds (fails) at both ends of the line, so
        # everywhere, whichever way a (tampered) map runs
        if b == math.inf:
            xs, ys = [-BIG, BIG], [True, True]
        elif b == -math.inf:
            xs, ys = [-BIG, BIG], [False, False]
        else:
            xs, ys = [float(np.nextafter(b, -math.inf)), b], [True, False]
        points += xs
        want += ys
        of += [(t, b)] * len(xs)
    if not points:
        return
    for v, w, (t, b) in zip(probe.column(i, j, points), want, of, strict=True):
        if _holds(inner, v, t) != w:
            raise ModelError(
                f"the pipeline's transform does not confirm column {j}'s boundary {b!r} "
                f"(input {i}) for the threshold {t!r}"
            )


def _confirm_reads(probe: _Probe, i: int, j: int) -> None:
    """Column j changes with input i: between the largest doubles of either sign, or at
    NaN (a missing-value indicator). Every boundary it states is infinite, which the
    column of another input confirms too (unchanged while input i is varied, its test
    holds or fails at both ends) though the test changes with that input; a column that
    changes with input i is computed from it and from no other (each step maps each
    column on its own)."""
    at = probe.column(i, j, [-BIG, BIG, math.nan])
    if np.all((at == at[0]) | (np.isnan(at) & np.isnan(at[0]))):
        raise _names_another_input(i, j)


def _names_another_input(i: int, j: int) -> ModelError:
    return ModelError(
        f"column {j} does not change with input {i}, the input the certificate states it "
        "is computed from"
    )


def _confirm_map(probe: _Probe, i: int, j: int, stated, boundaries: list[float]) -> None:
    shift, scale = float(stated[0]), float(stated[1])
    xs = [0.0, 1.0, *(b for b in boundaries if math.isfinite(b))]
    got = probe.column(i, j, xs)
    want = (np.array(xs) - shift) / scale
    if not np.allclose(got, want, rtol=1e-9, atol=1e-9):
        raise ModelError(
            f"the pipeline's transform does not confirm column {j}'s stated map "
            f"x -> (x - {shift!r}) / {scale!r}"
        )


def _confirm_nan_image(probe: _Probe, i: int, j: int, stated) -> float:
    """Column j's stated value when input i is NaN (a number, or "nan": NaN reaches the
    model), confirmed by the transform."""
    want = _bound(stated) if stated != "nan" else math.nan
    (got,) = probe.column(i, j, [math.nan])
    if not (got == want or (math.isnan(got) and math.isnan(want))):
        raise ModelError(
            f"the pipeline's transform does not confirm column {j}'s image of a missing "
            f"input {i} ({stated!r}; the transform gives {got!r})"
        )
    return want


def _restated(
    t: Tree,
    inputs: list[int],
    boundary: dict,
    images: dict,
    inner: Model,
    nan_images: dict | None = None,
) -> Tree:
    from .pair_space import goes_left  # the final model's routing of one value

    feature, threshold = list(t.feature), list(t.threshold)
    cats: list[frozenset[int] | None] = [None] * len(feature)
    # NaN of an input goes where the node sends its column's image of NaN
    default_left = list(t.default_left) if t.default_left is not None else [True] * len(feature)
    missing = list(t.missing) if t.missing is not None else ["nan"] * len(feature)
    for n, j in enumerate(t.feature):
        if j >= 0 and j in (nan_images or {}):
            default_left[n], missing[n] = goes_left(inner, t, n, nan_images[j]), "nan"
    for n, j in enumerate(t.feature):
        if j < 0:
            continue
        if t.cats is not None and t.cats[n] is not None:  # a code of the model's own encoder
            raise ModelError(f"a categorical split of the pipeline's model on column {j}")
        if j in images:  # the codes whose image passes the model's test go left
            th = float(t.threshold[n])
            cats[n] = frozenset(k for k, v in enumerate(images[j]) if _holds(inner, v, th))
            feature[n], threshold[n] = inputs[j], 0.0
            continue
        b = boundary.get((j, float(t.threshold[n])))
        if b is None:
            raise ModelError(
                f"the certificate states no boundary for column {j} at {t.threshold[n]!r}"
            )
        feature[n], threshold[n] = inputs[j], b
    coded = any(c is not None for c in cats)
    return replace(
        t,
        feature=feature,
        threshold=threshold,
        cats=cats if coded else None,
        default_left=default_left,
        missing=missing,
    )


def _bound(v) -> float:
    return float(v) if not isinstance(v, str) else float(v.replace("inf", "Infinity"))
