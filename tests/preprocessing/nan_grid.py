"""A grid of whole numbers and NaN over three columns, exhaustive for pipelines fitted
on such data: the folded model is compared with the pipeline on every row, and a check
with enumerating the grid."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

import treesens
from treesens.answers.result import INSENSITIVE, SENSITIVE

COLUMNS = ["a", "b", "c"]
GRID = pd.DataFrame(
    list(itertools.product([np.nan, *map(float, range(6))], repeat=3)), columns=COLUMNS
)


def assert_folded_model_agrees_on_the_grid(pipe, ens) -> None:
    got = ens.proba(GRID.to_numpy(dtype=float))  # the trees summed in another order: ulps
    assert np.allclose(got, pipe.predict_proba(GRID), rtol=0, atol=1e-12)


def brute_force_sensitive(p: np.ndarray, vary: str, gap: float) -> bool:
    """Some two rows of the grid that differ in ``vary`` alone are ``gap`` either side."""
    shared = [GRID[c].fillna(-1.0) for c in COLUMNS if c != vary]  # NaN: a value of its own
    groups = pd.Series(p).groupby(shared)
    return bool(((groups.max() >= 0.5 + gap) & (groups.min() <= 0.5 - gap)).any())


def assert_check_agrees_with_the_grid(pipe, ens, vary: str, gap: float) -> None:
    """The check answers as enumerating the grid, and its witness replays by the pipeline."""
    expected = brute_force_sensitive(pipe.predict_proba(GRID)[:, 1], vary, gap)
    res = treesens.check(ens, vary=vary, gap=gap, timeout=60)
    assert res.status == (SENSITIVE if expected else INSENSITIVE), res
    if res.status == SENSITIVE:
        rows = pd.DataFrame([res.witness["x1"], res.witness["x2"]])[COLUMNS].astype(float)
        q1, q2 = pipe.predict_proba(rows)[:, 1]
        assert q1 >= 0.5 + gap and q2 <= 0.5 - gap and res.validated


def fitted_and_folded(make, training: tuple[pd.DataFrame, np.ndarray]):
    """The pipeline ``make()`` fitted on ``training``, and its folded model with the
    grid's bounds."""
    pipe = make().fit(*training)
    return pipe, treesens.load_model(pipe, data=GRID, bounds="data")
