"""An audit of an integer feature that LightGBM splits at 1e300 (its split of the numbers
from NaN: x <= 1e300 for every number): the cell above the split holds the floats past
1e300, each an integer, so the audit's cells of the feature (compiler/audit.
feature_cells, from compiler/domain.candidates) hold a value there, 1e300's next float,
where c + 1 is c itself. Held against the IR's own evaluation of the x2 it reports."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

import treesens
from treesens.compiler.audit import feature_cells
from treesens.compiler.ensemble import LOGISTIC, Ensemble, Feature, ModelOrigin
from treesens.tests.oracle import _stump

GAP = 0.1


def _model() -> Ensemble:
    """a <= 1e300 (every number: -1, above it +3), a <= 2 (-1, else +1), b <= 0.5."""
    trees = (_stump(0, 1e300, 3.0, -1.0), _stump(0, 2.0, 1.0, -1.0), _stump(1, 0.5, 0.5, -0.5))
    return Ensemble(
        trees=trees,
        features=(Feature("a", "integer"), Feature("b", "real")),
        n_classes=2,
        intercept=(0.0,),
        link=LOGISTIC,
        op="<=",
        cast="float64",
        origin=ModelOrigin("test", "a split at 1e300"),
        replayer=None,
    )


def test_an_integer_cell_above_a_split_at_1e300_holds_a_value():
    cells = feature_cells(_model(), 0, 1.0)
    assert max(cells.hi) == math.inf and max(cells.lo) > 1e300


def test_a_row_that_flips_only_past_1e300_is_flippable_by_an_x2_that_flips():
    ens = _model()
    df = pd.DataFrame({"a": [0.0], "b": [0.0]})  # a = 3 gives P 0.38: only a > 1e300 flips
    out = treesens.audit(ens, df, vary=["a"], gap=GAP)
    assert out["status"].astype(str).tolist() == ["flippable"]
    x2 = np.array([[float(out["x2_a"][0]), 0.0]])
    assert x2[0, 0] > 1e300 and ens.proba(x2)[0, 1] >= 0.5 + GAP
