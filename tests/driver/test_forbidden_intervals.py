"""``prob_empty = forbid``: intervals with no data row are forbidden while that leaves a
pair; when the driver drops the forbidden rows (they left none), an empty interval is
still the least likely place for the pair (compiler/passes/data_aware.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from treesens.interfaces.sens_run import run_file

xgb = pytest.importorskip("xgboost")


@pytest.fixture(scope="module")
def cavity_model(tmp_path_factory):
    """A model whose decision needs a > 0.5 and b > 0.8, and data with no row where both
    hold (b in [0.7, 0.95] is empty, and above it only a < 0.4): the pairs at the gap
    lie in intervals some row has (b above 0.95) and in empty ones (b in [0.8, 0.95])."""
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(3000, 3))
    y = ((X[:, 0] > 0.5) & (X[:, 1] > 0.8)).astype(int)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    model = xgb.XGBClassifier(n_estimators=10, max_depth=3, learning_rate=0.5).fit(frame, y)
    d = tmp_path_factory.mktemp("cavity")
    model.save_model(d / "m.json")
    keep = (X[:, 1] < 0.7) | ((X[:, 1] > 0.95) & (X[:, 0] < 0.4))
    frame[keep].assign(label=y[keep]).to_csv(d / "rows.csv", index=False)
    return d


def _ask(folder, mode: str):
    p = folder / f"{mode}.sens"
    p.write_text(
        'model "m.json"\ndata "rows.csv"\n'
        f"query q {{\n  vary a\n  gap 0.2\n  data_aware {mode} prob_empty = forbid\n}}\n"
    )
    [r] = run_file(p)
    return r


def test_with_its_forbidden_rows_dropped_the_pair_still_lies_in_intervals_with_data(
    cavity_model,
):
    r = _ask(cavity_model, "probclause")
    assert r.status == "sensitive" and r.stats["data_restrictions_dropped"]
    assert r.distance == 0.0


def test_dropping_the_forbidden_rows_finds_the_pair_the_utility_alone_prefers(cavity_model):
    prob, probclause = _ask(cavity_model, "prob"), _ask(cavity_model, "probclause")
    assert probclause.stats["objective"] == pytest.approx(prob.stats["objective"])
