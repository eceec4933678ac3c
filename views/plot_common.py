"""What the witness and sweep plots share: the verdict colours, the gap a pair achieves,
and figures that live outside pyplot (drawn and saved with Agg, so nothing needs a
display and nothing stays open after a file is written)."""

from __future__ import annotations

import functools
import io
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..answers.result import (
    ERROR,
    INSENSITIVE,
    SENSITIVE,
    UNKNOWN,
    Result,
    Status,
    result_from_dict,
)
from ..compiler.errors import InputError
from ..questions.output_folder import make_folder_of

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# the CLI's colours for the verdicts (render.py): red sensitive, green insensitive
VERDICT_COLOURS: dict[str, str] = {
    SENSITIVE: "#d62728",
    INSENSITIVE: "#2ca02c",
    UNKNOWN: "#e6a100",
    ERROR: "#9467bd",
}
X1_COLOUR = "#1f77b4"
X2_COLOUR = "#ff7f0e"
# the formats a plot file may have (matplotlib's Agg and vector writers)
PLOT_SUFFIXES = (".png", ".svg", ".pdf", ".jpg", ".jpeg")


def as_result(result: Result | Mapping[str, Any]) -> Result:
    """A Result from a Result or its JSON form (a line of ``sweep --out``, parsed)."""
    if isinstance(result, Result):
        return result
    if isinstance(result, Mapping):
        r = result_from_dict({k: v for k, v in result.items() if k != "witness_arrays"})
        r.status = Status(r.status)
        return r
    raise InputError(f"expected a treesens Result (or its dict), got {type(result).__name__}")


@dataclass(frozen=True)
class PairGap:
    """How far apart a pair's decisions are, read from its probabilities.

    Binary: ``p1``, ``p2`` are P(class 1) of x1 and x2 and ``achieved`` is the largest g
    with P(x1) >= 0.5 + g and P(x2) <= 0.5 - g. Multiclass: ``p1``, ``p2`` are the
    probabilities of each input's predicted class and ``achieved`` the largest ratio g
    with which both predicted classes beat every other class."""

    p1: float
    p2: float
    class1: int | None  # None: binary (the probability of class 1)
    class2: int | None
    achieved: float

    @property
    def unit(self) -> str:
        return "probability gap" if self.class1 is None else "probability ratio"


def pair_gap(outputs: Mapping[str, Any] | None) -> PairGap | None:
    """The PairGap of a result's ``outputs`` ({"x1": [...], "x2": [...]}), or None."""
    if not outputs or outputs.get("x1") is None or outputs.get("x2") is None:
        return None
    o1 = np.asarray(outputs["x1"], dtype=float)
    o2 = np.asarray(outputs["x2"], dtype=float)
    if o1.size <= 2:
        p1, p2 = float(o1[-1]), float(o2[-1])
        return PairGap(p1, p2, None, None, min(p1 - 0.5, 0.5 - p2))
    c1, c2 = int(np.argmax(o1)), int(np.argmax(o2))
    return PairGap(float(o1[c1]), float(o2[c2]), c1, c2, min(_ratio(o1, c1), _ratio(o2, c2)))


def _ratio(p: np.ndarray, c: int) -> float:
    other = float(np.max(np.delete(p, c)))
    return math.inf if other <= 0 else float(p[c]) / other


def max_gap_of(result: Result) -> float | None:
    """The largest gap at which the model is sensitive to the result's features, when the
    result carries one (a ``max_gap`` field or ``stats["max_gap"]``: a number, or a dict
    with ``value``), else None."""
    value = getattr(result, "max_gap", None)
    if value is None:
        value = (result.stats or {}).get("max_gap")
    if isinstance(value, Mapping):
        value = value.get("value")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def probability_text(g: PairGap) -> str:
    """``P(x1) = 0.771, P(x2) = 0.291`` (multiclass: with each input's predicted class)."""
    if g.class1 is None:
        return f"P(x1) = {g.p1:.3f}, P(x2) = {g.p2:.3f}"
    return f"P(x1) = {g.p1:.3f} (class {g.class1}), P(x2) = {g.p2:.3f} (class {g.class2})"


def check_plot_path(path: str | Path) -> Path:
    """A plot file that can be written: a known image suffix, not a directory (its folder
    made where missing)."""
    p = Path(path)
    if p.suffix.lower() not in PLOT_SUFFIXES:
        raise InputError(
            f"a plot file ends in {', '.join(PLOT_SUFFIXES)} (the suffix picks the format)",
            str(path),
        )
    if p.is_dir():
        raise InputError("is a directory", str(path))
    make_folder_of(p, str(path))
    return p


def figure_and_axes(ax: Axes | None, size: tuple[float, float]) -> tuple[Figure, Axes]:
    """The caller's axes and their figure, or a new figure of ``size`` inches that pyplot
    does not know (rendered by Agg; in Jupyter it displays as the value of a cell)."""
    if ax is not None:
        return ax.get_figure(), ax
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, layout="constrained")
    FigureCanvasAgg(fig)
    # Jupyter shows a figure as PNG through pyplot's hook, which a figure made without
    # pyplot may lack; this one shows either way (the hook, when set, is asked first)
    fig._repr_png_ = functools.partial(png_bytes, fig)
    return fig, fig.add_subplot()


def png_bytes(fig: Figure, dpi: int = 100) -> bytes:
    """The figure as PNG bytes."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def save(fig: Figure, path: str | Path | None, dpi: int = 110) -> None:
    """Write ``fig`` to ``path`` (its suffix picks the format); nothing when None."""
    if path is None:
        return
    p = check_plot_path(path)
    try:
        fig.savefig(p, dpi=dpi)
    except OSError as e:
        raise InputError(f"cannot write the plot: {e.strerror or e}", str(path)) from None
