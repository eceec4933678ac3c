"""The witness plot: a sensitive result's pair, feature by feature, against each
feature's range and (given data) the data's distribution, with P(x1), P(x2) and the gap.

Each row is a feature; its axis runs over the feature's range, from 0 (lower end) to 1
(upper end): the declared bounds where the model has them, else the data's range, else
the span of the model's thresholds on the feature, widened to take in the pair. Rows: the
varied features (and any other where x1 != x2) first, then the others in model order; past
``max_features`` rows only the features whose x1 lies farthest from the middle of the data
(or of the range) are kept, and the x axis's label names what is left out."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..answers.phrases import prediction_condition
from ..answers.result import Result
from ..compiler.dataset import Dataset
from ..compiler.ensemble import Ensemble, Feature, bounds_from_data, proof_domain
from ..compiler.errors import InputError, suggests_keywords
from ..readers.data import DEFAULT_LABEL, load_data, not_a_table
from .plot_common import (
    VERDICT_COLOURS,
    X1_COLOUR,
    X2_COLOUR,
    as_result,
    check_plot_path,
    figure_and_axes,
    max_gap_of,
    pair_gap,
    probability_text,
    save,
)
from .result_view import data_row_words

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

DEFAULT_MAX_FEATURES = 20
_VARIED_BAND = "#fff2a8"
SAME_COLOUR = "0.2"  # a feature where x1 = x2
NEAREST_COLOUR = "#6a3d9a"  # the data row nearest the pair (stats.nearest_row)
_LIST_OMITTED = 12  # omitted features named in the label; the rest are counted
_SHARE_AREA = 420.0  # a category's disc: this many points squared for all of the rows


@dataclass(frozen=True)
class Ranges:
    """Per feature, the span a row's axis covers, and where its ends came from."""

    lo: np.ndarray
    hi: np.ndarray
    known: np.ndarray  # bool: a bound, the data or a threshold gave an end
    sources: tuple[str, ...]  # the sources used, for the label

    def position(self, x: np.ndarray, feature: int | None = None) -> np.ndarray:
        """Where values lie in their range: one per feature, or all of ``feature``."""
        if feature is None:
            return (x - self.lo) / (self.hi - self.lo)
        return (x - self.lo[feature]) / (self.hi[feature] - self.lo[feature])


@dataclass(frozen=True)
class Pair:
    """A result's two inputs, as the result shows them and as numbers to place."""

    names: list[str]
    shown1: list  # values as the result shows them: numbers, category names, None (missing)
    shown2: list
    x1: np.ndarray  # as numbers: category codes, NaN for missing or an unknown category
    x2: np.ndarray
    varied: frozenset[str]
    changed: frozenset[str]  # where x1 != x2
    nearest: np.ndarray | None = None  # the data row nearest the pair's region, as numbers
    nearest_index: int | None = None
    categories: tuple = ()  # per feature: its category names, or None


def pair_of(r: Result, model: Ensemble | None) -> Pair:
    names = list(r.witness["x1"])
    shown1 = [r.witness["x1"][n] for n in names]
    shown2 = [r.witness["x2"][n] for n in names]
    features = model.features if model is not None else [None] * len(names)
    x1 = np.array([_number(v, f) for v, f in zip(shown1, features, strict=True)])
    x2 = np.array([_number(v, f) for v, f in zip(shown2, features, strict=True)])
    changed = frozenset(n for n, a, b in zip(names, shown1, shown2, strict=True) if not _same(a, b))
    near = (r.stats or {}).get("nearest_row") or {}
    values = near.get("values")
    nearest = None
    if isinstance(values, Mapping):
        nearest = np.array(
            [_number(values.get(n), f) for n, f in zip(names, features, strict=True)]
        )
    index = near.get("index") if nearest is not None else None
    cats = tuple(f.categories if f is not None else None for f in features)
    return Pair(names, shown1, shown2, x1, x2, frozenset(r.features), changed, nearest, index, cats)


def _same(a, b) -> bool:
    """Equal shown values (two NaNs are the same missing value)."""
    nan = isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)
    return a == b or nan


def _number(value, feature: Feature | None) -> float:
    """A shown value as a number: a category name becomes its code (NaN if unknown)."""
    if value is None:
        return math.nan
    if isinstance(value, str):
        cats = list(feature.categories or ()) if feature is not None else []
        return float(cats.index(value)) if value in cats else math.nan
    return float(value)


@suggests_keywords()
def plot_witness(
    result: Result | Mapping[str, Any],
    data=None,
    ax: Axes | None = None,
    path: str | Path | None = None,
    *,
    model: Ensemble | None = None,
    label: str = DEFAULT_LABEL,
    max_features: int | None = DEFAULT_MAX_FEATURES,
) -> Figure:
    """Draw a result's pair of inputs feature by feature; returns the matplotlib Figure.

    ``data``: a DataFrame, a CSV / Parquet path, an array (the model's feature order) or a
    loaded data set: each feature's distribution is drawn behind the pair (median, 25-75 %
    and 5-95 % of the rows). ``model``: the loaded model, for its declared bounds and
    thresholds (without it the rows span the data, or the pair's own values).
    ``ax``: draw into these axes (else a new figure); ``path``: also write the figure there
    (.png, .svg, .pdf). ``max_features``: at most this many rows (None: every feature).
    A result without a pair (insensitive, unknown, error) draws a figure saying so."""
    r = as_result(result)
    if path is not None:
        check_plot_path(path)  # before the drawing
    if max_features is not None and max_features < 1:
        raise InputError(f"max_features must be at least 1, not {max_features}")
    if not r.witness:
        fig, ax = figure_and_axes(ax, (8.0, 2.6))
        _draw_no_pair(ax, r)
        save(fig, path)
        return fig
    if model is not None and list(model.feature_names) != list(r.witness["x1"]):
        raise InputError("the model's features are not the result's: pass the model it answers")
    pair = pair_of(r, model)
    columns = data_matrix(data, pair.names, model, label)
    ranges = feature_ranges(model, columns, pair.x1, pair.x2)
    marked = pair.varied | pair.changed
    score = _extremeness(pair.x1, ranges, columns)
    rows = chosen_rows(pair.names, marked, score, max_features)
    fig, ax = figure_and_axes(ax, (10.0, 0.34 * len(rows) + 2.4))
    legend_lines = _draw_rows(ax, pair, rows, ranges, columns)
    ax.set_title(_title(r), loc="left", fontsize=10, pad=10 + 12 * legend_lines)
    label_text = _x_label(pair.names, rows, ranges, max_features, len(marked), columns)
    ax.set_xlabel(label_text, fontsize=9)
    save(fig, path)
    return fig


def data_matrix(
    data, names: Sequence[str], model: Ensemble | None, label: str
) -> np.ndarray | None:
    """The data's rows as an array with one column per feature of ``names`` (NaN where the
    data has no column of that name), or None without data."""
    if data is None:
        return None
    if model is not None:
        return np.asarray(load_data(data, model, label).X, dtype=float)
    import pandas as pd

    if isinstance(data, (str, Path)):
        p = Path(data)
        if not p.is_file():
            raise InputError("data file not found", str(data))
        frame = pd.read_parquet(p) if p.suffix.lower() in (".parquet", ".pq") else pd.read_csv(p)
    elif isinstance(data, Dataset):
        frame = pd.DataFrame(np.asarray(data.X), columns=list(data.names))
    elif isinstance(data, pd.DataFrame):
        frame = data
    else:
        try:
            arr = np.asarray(data, dtype=float)
        except (TypeError, ValueError):  # a dict (float() of it), a list of words
            arr = np.asarray(math.nan)  # no table: named by its type below
        if arr.ndim != 2 or arr.shape[1] != len(names):
            raise InputError(
                f"data as an array needs one column per feature ({len(names)}), "
                f"got {not_a_table(data, arr)}"
            )
        return arr
    cols = {str(c).strip(): c for c in frame.columns}
    out = np.full((len(frame), len(names)), np.nan)
    for f, n in enumerate(names):
        if n in cols:
            out[:, f] = pd.to_numeric(frame[cols[n]], errors="coerce").to_numpy(dtype=float)
    return out


def declared_span(feature: Feature) -> tuple[float, float]:
    """A feature's declared bounds (a categorical one with named categories: their codes),
    NaN where unbounded."""
    lb, ub = feature.lb, feature.ub
    if feature.kind == "categorical" and feature.categories:
        lb = lb if math.isfinite(lb) else 0.0
        ub = ub if math.isfinite(ub) else float(len(feature.categories) - 1)
    return (lb if math.isfinite(lb) else np.nan, ub if math.isfinite(ub) else np.nan)


def threshold_span(model: Ensemble) -> tuple[np.ndarray, np.ndarray]:
    """The smallest and largest numeric threshold on each feature (NaN: none)."""
    lo = np.full(model.n_features, np.inf)
    hi = np.full(model.n_features, -np.inf)
    for t in model.trees:
        split = t.feature >= 0
        if t.categories is not None:
            split &= np.array([c is None for c in t.categories])
        np.minimum.at(lo, t.feature[split], t.threshold[split])
        np.maximum.at(hi, t.feature[split], t.threshold[split])
    return np.where(np.isfinite(lo), lo, np.nan), np.where(np.isfinite(hi), hi, np.nan)


def feature_ranges(
    model: Ensemble | None, columns: np.ndarray | None, x1: np.ndarray, x2: np.ndarray
) -> Ranges:
    """Each end of each feature's span: its declared bound when finite, else the data's,
    else the model's threshold span; widened to hold the pair; never empty."""
    n = len(x1)
    nan = np.full(n, np.nan)
    candidates: list[tuple[str, np.ndarray, np.ndarray]] = []
    if model is not None:
        lb, ub = np.array([declared_span(f) for f in model.features]).T
        # bounds narrowed to the data when the model was loaded are the data's range
        origin = "the data" if bounds_from_data(model.source) else "declared bounds"
        candidates.append((origin, lb, ub))
    if columns is not None and columns.size:
        seen = ~np.all(np.isnan(columns), axis=0)
        d_lo, d_hi = nan.copy(), nan.copy()
        d_lo[seen] = np.nanmin(columns[:, seen], axis=0)
        d_hi[seen] = np.nanmax(columns[:, seen], axis=0)
        candidates.append(("the data", d_lo, d_hi))
    if model is not None:
        candidates.append(("the model's thresholds", *threshold_span(model)))
    lo, hi, used = nan.copy(), nan.copy(), []
    for source, c_lo, c_hi in candidates:
        take_lo, take_hi = np.isnan(lo) & ~np.isnan(c_lo), np.isnan(hi) & ~np.isnan(c_hi)
        lo[take_lo], hi[take_hi] = c_lo[take_lo], c_hi[take_hi]
        if (take_lo.any() or take_hi.any()) and source not in used:
            used.append(source)
    known = ~np.isnan(lo) | ~np.isnan(hi)
    pair_lo, pair_hi = np.fmin(x1, x2), np.fmax(x1, x2)
    if ((pair_lo < lo) | (pair_hi > hi)).any():
        used.append("the pair (where it lies outside)")
    lo, hi = np.fmin(lo, pair_lo), np.fmax(hi, pair_hi)
    lo, hi = np.where(np.isnan(lo), 0.0, lo), np.where(np.isnan(hi), 1.0, hi)
    flat = hi <= lo
    pad = np.where(lo == 0.0, 0.5, np.abs(lo) * 0.1)
    lo, hi = np.where(flat, lo - pad, lo), np.where(flat, hi + pad, hi)
    return Ranges(lo, hi, known, tuple(used))


def _extremeness(x1: np.ndarray, ranges: Ranges, columns: np.ndarray | None) -> np.ndarray:
    """How far x1 lies from the middle: of the data (its quantile), else of the range."""
    pos = ranges.position(x1)
    score = np.abs(np.nan_to_num(pos, nan=0.5) - 0.5)
    if columns is None:
        return score
    for f in range(len(x1)):
        col = columns[:, f]
        col = col[~np.isnan(col)]
        if col.size and not math.isnan(x1[f]):
            q = np.mean(col < x1[f]) + 0.5 * np.mean(col == x1[f])
            score[f] = abs(q - 0.5)
    return score


def chosen_rows(
    names: Sequence[str], marked: set[str], score: np.ndarray, max_features: int | None
) -> list[int]:
    """The features drawn, top row first: the marked ones (varied or changed), then as many
    of the others as fit, the most extreme first chosen but drawn in model order."""
    first = [i for i, n in enumerate(names) if n in marked]
    rest = [i for i, n in enumerate(names) if n not in marked]
    room = len(rest) if max_features is None else max(0, max_features - len(first))
    if room < len(rest):
        keep = set(sorted(rest, key=lambda i: (-score[i], i))[:room])
        rest = [i for i in rest if i in keep]
    return first + rest


def _draw_rows(ax, pair: Pair, rows: list[int], ranges: Ranges, columns) -> int:
    """The rows, their labels and the legend; returns the legend's number of lines."""
    from matplotlib.transforms import blended_transform_factory

    n = len(rows)
    right = blended_transform_factory(ax.transAxes, ax.transData)
    ax.axvline(0.0, color="0.6", lw=0.8, zorder=0)
    ax.axvline(1.0, color="0.6", lw=0.8, zorder=0)
    for y, f in enumerate(rows):
        name = pair.names[f]
        cats = pair.categories[f] if f < len(pair.categories) else None
        if name in pair.varied:
            ax.axhspan(y - 0.5, y + 0.5, color=_VARIED_BAND, zorder=0, lw=0)
        if cats:  # its categories by name where their codes lie, not a numeric axis
            _draw_categories(ax, y, cats, ranges, f, None if columns is None else columns[:, f])
        elif columns is not None:
            _draw_distribution(ax, y, ranges.position(columns[:, f], f))
        p1, p2 = ranges.position(np.array([pair.x1[f], pair.x2[f]]), f)
        if name in pair.changed and not (math.isnan(p1) or math.isnan(p2)):
            ax.annotate(
                "",
                xy=(p2, y),
                xytext=(p1, y),
                arrowprops={"arrowstyle": "->", "color": "0.25", "lw": 1.2},
                zorder=3,
            )
        if pair.nearest is not None:
            near = ranges.position(pair.nearest[f : f + 1], f)
            ax.plot(near, [y], "x", color=NEAREST_COLOUR, ms=6, mew=1.5, zorder=3)
        if name in pair.changed:
            ax.plot([p1], [y], "o", color=X1_COLOUR, ms=7, zorder=4)
            ax.plot([p2], [y], "D", color=X2_COLOUR, ms=6, zorder=5)
        else:
            ax.plot([p1], [y], "o", color=SAME_COLOUR, ms=6, zorder=4)
        ax.text(
            1.02, y, _value_text(pair, ranges, f),
            transform=right, va="center", ha="left", fontsize=8,
        )  # fmt: skip
    ax.set_yticks(range(n), [pair.names[f] for f in rows], fontsize=8)
    for tick, f in zip(ax.get_yticklabels(), rows, strict=True):
        if pair.names[f] in pair.varied:
            tick.set_fontweight("bold")
        if pair.names[f] in pair.changed:
            tick.set_color("#8b0000")
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_xlim(-0.05, 1.05)
    ax.set_xticks([0.0, 0.25, 0.5, 0.75, 1.0], ["lower end", "", "", "", "upper end"])
    return _legend(ax, pair, columns is not None, [pair.categories[f] for f in rows])


def _draw_categories(ax, y: float, cats, ranges: Ranges, f: int, column) -> None:
    """A categorical row: a tick and the name of each category at its code's place, and
    (given data) a disc per category whose area is its share of the rows."""
    codes = np.arange(len(cats), dtype=float)
    pos = ranges.position(codes, f)
    inside = (pos >= -1e-9) & (pos <= 1 + 1e-9)
    ax.plot(pos[inside], [y] * int(inside.sum()), "|", color="0.55", ms=8, zorder=1)
    for k in np.flatnonzero(inside):
        ax.text(
            pos[k], y + 0.3, str(cats[k]), ha="center", va="center", fontsize=6.5,
            color="0.3", clip_on=True, zorder=2,
        )  # fmt: skip
    if column is None:
        return
    seen = column[~np.isnan(column)]
    if not seen.size:
        return
    share = np.array([np.mean(seen == k) for k in codes])
    drawn = inside & (share > 0)
    ax.scatter(
        pos[drawn], [y] * int(drawn.sum()), s=_SHARE_AREA * share[drawn], color="0.75", zorder=1
    )


def _draw_distribution(ax, y: float, pos: np.ndarray) -> None:
    pos = pos[~np.isnan(pos)]
    if not pos.size:
        return
    q05, q25, q50, q75, q95 = np.percentile(pos, [5, 25, 50, 75, 95])
    ax.plot([q05, q95], [y, y], color="0.7", lw=1.2, solid_capstyle="butt", zorder=1)
    ax.plot([q25, q75], [y, y], color="0.78", lw=6, solid_capstyle="butt", zorder=1)
    ax.plot([q50], [y], "|", color="0.35", ms=9, mew=1.5, zorder=2)


def _value_text(pair: Pair, ranges: Ranges, f: int) -> str:
    v1, v2 = pair.shown1[f], pair.shown2[f]
    val = _shown(v1) if _same(v1, v2) else f"{_shown(v1)} \u2192 {_shown(v2)}"
    cats = pair.categories[f] if f < len(pair.categories) else None
    if cats:  # a categorical feature: its categories, not their codes
        listed = ", ".join(cats[:6]) + (", ..." if len(cats) > 6 else "")
        return f"{val}   {{{listed}}}"
    if not ranges.known[f]:
        return f"{val}   [range unknown]"
    return f"{val}   [{_num(ranges.lo[f])}, {_num(ranges.hi[f])}]"


def _shown(v) -> str:
    """A value as the right margin writes it (a category by its name)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "missing"
    return v if isinstance(v, str) else _num(v)


def _num(v: float) -> str:
    return f"{v:.4g}"


def _legend(ax, pair: Pair, with_data: bool, drawn_categories=()) -> int:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [
        Line2D([], [], marker="o", color=X1_COLOUR, ls="", label="x1"),
        Line2D([], [], marker="D", color=X2_COLOUR, ls="", label="x2"),
        Line2D([], [], marker="o", color=SAME_COLOUR, ls="", label="x1 = x2"),
    ]
    if pair.varied:
        handles.append(Patch(color=_VARIED_BAND, label="varied feature"))
    if pair.nearest is not None:
        row = data_row_words(pair.nearest_index) if pair.nearest_index is not None else "data row"
        handles.append(
            Line2D([], [], marker="x", color=NEAREST_COLOUR, ls="", label=f"nearest {row}")
        )
    categorical = any(drawn_categories)
    numeric = not all(drawn_categories)
    if with_data and numeric:
        handles.append(Line2D([], [], color="0.78", lw=6, label="data: 25-75 %, median"))
        handles.append(Line2D([], [], color="0.7", lw=1.2, label="data: 5-95 %"))
    if with_data and categorical:
        handles.append(
            Line2D([], [], marker="o", color="0.75", ls="", label="data: share per category")
        )
    ncol = len(handles) if len(handles) <= 5 else (len(handles) + 1) // 2
    ax.legend(
        handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=ncol,
        fontsize=8, frameon=False, borderaxespad=0.2,
    )  # fmt: skip
    return math.ceil(len(handles) / ncol)


def _where(r: Result) -> str:
    """The query's constraints as the user wrote them (" where x1.age <= 30"), or ""."""
    return f" where {' and '.join(r.where)}" if r.where else ""


def _title(r: Result) -> str:
    g = pair_gap(r.outputs)
    feats = ", ".join(r.features)
    head = f"{str(r.status).upper()} to {feats}{_where(r)}"
    if g is None:
        return head
    change = f"largest change {r.gap:g}" if r.max_gap else f"change asked {r.gap:g}"
    asked = {"prob": f"gap asked {r.gap:g}", "change": change}.get(
        r.gap_kind, f"margin gap asked {r.gap:g}"
    )
    if r.threshold:  # a regressor's threshold form: the two bounds asked
        asked = f"{prediction_condition(r, 'g')} asked"
    parts = [asked, f"achieved {g.achieved:.3g}"]
    top = max_gap_of(r)
    if top is not None:
        parts.append(f"max gap {top:.3g}")
    if r.distance is not None:
        parts.append(f"distance to data {r.distance:.3g}")
    return f"{head}: {probability_text(g)}\n{', '.join(parts)}"


def _x_label(names, rows, ranges: Ranges, max_features, n_marked: int, columns) -> str:
    """What the axis measures, where the ranges come from, and what is left out."""
    text = "position in the feature's range; right: x1 \u2192 x2 [range]"
    with_data = columns is not None
    no_data = int(np.all(np.isnan(columns), axis=0).sum()) if with_data else 0
    if no_data:
        text += f"; the data has no values for {no_data} of the {len(names)} features"
    if ranges.sources:
        text += "; ranges from " + ", ".join(ranges.sources)
    unknown = int(np.count_nonzero(~ranges.known))
    if unknown:
        text += (
            f"; {unknown} feature{'s have' if unknown > 1 else ' has'} no known range "
            "(pass model= or data=): the pair's values only"
        )
    omitted = [names[i] for i in range(len(names)) if i not in set(rows)]
    if omitted:
        listed = ", ".join(omitted[:_LIST_OMITTED])
        middle = "the data" if with_data else "its range"
        more = f" and {len(omitted) - _LIST_OMITTED} more" if len(omitted) > _LIST_OMITTED else ""
        text += (
            f"\n{len(rows)} of {len(names)} features shown (max_features={max_features}): the "
            f"varied ones and the {len(rows) - n_marked} others whose x1 is farthest from the "
            f"middle of {middle}; omitted: {listed}{more}"
        )
    return "\n".join(textwrap.fill(line, 130) for line in text.split("\n"))


def _draw_no_pair(ax, r: Result) -> None:
    """The figure of a result without a pair: its verdict and what it means."""
    feats = ", ".join(r.features)
    meaning = {
        "insensitive": (
            f"proved: no two inputs {proof_domain(r.model or '')}{_where(r)}, differing only "
            f"in {feats}, reach gap {r.gap:g}"
        ),
        "unknown": "no pair found and no proof within the time limit",
        "error": f"the query ended in error: {r.error or r.message}",
    }.get(str(r.status), r.message or "no pair of inputs")
    ax.set_axis_off()
    head = f"{str(r.status).upper()} to {feats}{_where(r)}"
    ax.set_title(textwrap.fill(f"{head}: no pair to draw", 100), loc="left", fontsize=10)
    ax.text(
        0.02, 0.5, textwrap.fill(meaning, 100), transform=ax.transAxes, va="center",
        fontsize=10, color=VERDICT_COLOURS.get(str(r.status), "black"),
    )  # fmt: skip
