"""An audit's rows with missing values, and their ``flip`` certificates, against the
library's own predict: XGBoost and LightGBM (zero-as-missing too) models trained on data
with NaN, binary and multiclass, audited on rows that miss some values through
``treesens.audit(..., certificates=DIR)``. Every row's answer is brute force's (x2: the
row with F set to one value per threshold cell within the data's range, NaN where the
data has it: the domain the audit takes from the data); every certified row is one no x2
flips, and its certificate verifies; the certificate of a row that does not flip, made
to state a row of the same decision that does flip, is refused by the checker.
test_audit_row_certificates.py asks the same of rows without missing values."""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.compiler.audit import Target
from treesens.compiler.ensemble import Feature
from treesens.compiler.query import Gap
from treesens.readers.load import load_model
from treesens.tests.audit_oracle import brute_force_flippable
from treesens.verify import verify_file

SEEDS = int(os.environ.get("TS_AUDIT_MISSING_SEEDS", "3"))
SLOW_SEEDS = int(os.environ.get("TS_AUDIT_MISSING_SLOW_SEEDS", "40"))
ROWS = 20


def _model(seed: int, folder):
    """A model file trained on data with NaN, its rows (the first ROWS, NaN kept), the
    varied features and the gap."""
    rng = np.random.default_rng([seed, 808])
    k = int(rng.integers(3, 5))
    X = rng.normal(size=(60, k))
    X[:, 1] = np.round(X[:, 1])
    y = (X[:, 0] + 0.7 * X[:, 1] - 0.5 * X[:, 2] > 0).astype(int)
    if rng.random() < 0.4:
        y = y + (X[:, 2] > 0.5)
    X[rng.random(X.shape) < 0.15] = np.nan
    trees = int(rng.integers(3, 10))
    if rng.random() < 0.5:
        xgb = pytest.importorskip("xgboost")
        m = xgb.XGBClassifier(n_estimators=trees, max_depth=int(rng.integers(2, 4)), n_jobs=1)
        path = folder / "model.json"
        m.set_params(learning_rate=0.5).fit(X, y).save_model(path)
    else:
        lgb = pytest.importorskip("lightgbm")
        zero = bool(rng.random() < 0.3)
        m = lgb.LGBMClassifier(
            n_estimators=trees, num_leaves=6, min_child_samples=3, verbose=-1, n_jobs=1
        )
        path = folder / "model.txt"
        m.set_params(zero_as_missing=zero).fit(X, y).booster_.save_model(str(path))
    ens = load_model(path)
    vary = sorted(rng.choice(ens.feature_names, size=int(rng.integers(1, 3)), replace=False))
    multi = ens.n_classes > 2
    gap = float(rng.choice([1.2, 1.5, 2.0] if multi else [0.05, 0.1, 0.2]))
    return path, ens, X[:ROWS], [str(v) for v in vary], gap


def _as_the_data_declares(ens, rows):
    """The features as the audit reads them from its rows: their range, whole numbers
    where every value is one, may be missing where one is NaN."""

    def declared(f, col):
        seen = col[~np.isnan(col)]
        whole = bool(np.all(seen == np.round(seen)))
        kind = "integer" if whole else "real"
        lb, ub = float(seen.min()), float(seen.max())
        return Feature(f.name, kind, lb=lb, ub=ub, may_be_missing=bool(np.isnan(col).any()))

    return ens.with_features(tuple(declared(f, rows[:, i]) for i, f in enumerate(ens.features)))


def _stating(cert: dict, row: np.ndarray) -> dict:
    """The certificate with its row (x1 and the shared features) made ``row``."""
    out = json.loads(json.dumps(cert))
    for item, v in zip(out["question"]["domain"], row):
        at = item.get("x1", item)
        if np.isnan(v):
            at.update({"lb": "inf", "ub": "-inf", "missing": True})
        else:
            at.update({"lb": float(v), "ub": float(v)})
            at.pop("missing", None)
            at["integer"] = at.get("integer", False) and float(v) == round(float(v))
    return out


def _audit_agrees(seed: int, folder) -> None:
    path, ens, rows, vary, gap = _model(seed, folder)
    certs = folder / "certs"
    df = pd.DataFrame(rows, columns=ens.feature_names)
    out = treesens.audit(path, df, vary, gap=gap, certificates=certs, certify_budget=30)
    flips = brute_force_flippable(_as_the_data_declares(ens, rows), rows, vary, Target(Gap(gap)))
    assert [s == "flippable" for s in out["status"]] == flips, (vary, gap)
    outcome = out.attrs["certificates"]
    assert sorted(r for r, why in outcome.items() if why == "") == [
        i for i, f in enumerate(flips) if not f
    ]
    decisions = list(out["decision"])
    for row in outcome:
        file = certs / f"row-{row}.json"
        assert verify_file(file).valid, row
        flipping = [i for i, f in enumerate(flips) if f and decisions[i] == decisions[row]]
        if flipping:
            false = folder / f"row-{row}-states-{flipping[0]}.json"
            false.write_text(json.dumps(_stating(json.loads(file.read_text()), rows[flipping[0]])))
            assert not verify_file(false).valid, (row, flipping[0])


@pytest.mark.parametrize("seed", range(SEEDS))
def test_audited_rows_with_missing_values_agree_with_the_library_and_certify_true_claims(
    seed, tmp_path
):
    _audit_agrees(seed, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(SEEDS, SEEDS + SLOW_SEEDS))
def test_more_audited_rows_with_missing_values_agree_and_certify_true_claims(seed, tmp_path):
    _audit_agrees(seed, tmp_path)
