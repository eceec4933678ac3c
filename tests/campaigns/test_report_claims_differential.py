"""Every claim a report makes (questions/report.py) holds by the library's own predict:
random XGBoost and LightGBM binary classifiers of 3 or 4 features (an integer column,
values missing on some seeds), reported on 30 rows with one or two protected features at
a random gap. Each ranked max gap brackets the largest gap of the library's predict on a
grid of every routing signature (tests/regressions/harness.py); each protected feature's
answer is that grid's (sensitive only at or below its best gap, with a replayed pair;
insensitive only above it); its audit's 'all' count of flippable rows is the audit
oracle's (tests/audit_oracle.py: every interval value of the feature, by predict), and
the pair the page shows from an audited row (questions/report._audit_pair) meets the
gap by predict. Hunt behind it: 60 reports (about 210 ranked max gaps, 90 protected
features' checks and audits): no disagreement."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.compiler.audit import Target
from treesens.compiler.query import Gap
from treesens.tests.audit_oracle import brute_force_flippable
from treesens.tests.max_gap_oracle import max_gap_problems
from treesens.tests.regressions import harness as H

N_ROWS = 30


def _data(rng, n, n_features, missing):
    X = rng.uniform(size=(n, n_features))
    X[:, 1] = rng.integers(0, 4, n)
    z = X @ rng.normal(size=n_features) + 0.5 * rng.normal(size=n)
    y = (z > np.median(z)).astype(int)
    if missing:
        X[rng.random(X.shape) < 0.1] = np.nan
    return X, y


def _model(seed, folder):
    rng = np.random.default_rng([5521, seed])
    n_features = int(rng.integers(3, 5))
    X, y = _data(rng, 300, n_features, missing=bool(seed % 3 == 0))
    n_trees, depth = int(rng.integers(2, 8)), int(rng.integers(2, 4))
    if seed % 2:
        import lightgbm as lgb

        params = {"objective": "binary", "num_leaves": 2**depth, "min_data_in_leaf": 10}
        params |= {"learning_rate": 0.5, "verbose": -1, "num_threads": 1}
        booster = lgb.train(params, lgb.Dataset(X, y), n_trees)
        path = folder / "model.txt"
        booster.save_model(str(path))
        predict = booster.predict
    else:
        import xgboost as xgb

        params = {"objective": "binary:logistic", "max_depth": depth, "eta": 0.5, "nthread": 1}
        booster = xgb.train(params, xgb.DMatrix(X, y), n_trees)
        path = folder / "model.json"
        booster.save_model(path)
        predict = lambda Z: booster.predict(xgb.DMatrix(Z))  # noqa: E731
    rows, labels = _data(rng, N_ROWS, n_features, missing=bool(seed % 3 == 0))
    frame = pd.DataFrame(rows, columns=[f"f{i}" for i in range(n_features)])
    frame["label"] = labels
    frame.to_csv(folder / "rows.csv", index=False)
    gap = float(rng.uniform(0.02, 0.3))
    protected = [str(f) for f in rng.choice(frame.columns[:-1], int(rng.integers(1, 3)), False)]
    return path, folder / "rows.csv", gap, protected, predict, rows


def _best_gap(ens, predict, feature) -> float:
    grid = H.build_grid(ens, [feature])
    p = np.asarray(predict(grid.X), dtype=float).reshape(grid.ns, grid.nv)
    return float(np.max(np.minimum(p.max(axis=1) - 0.5, 0.5 - p.min(axis=1))))


def _protected_problems(ens, predict, rows, found, gap, best) -> list[str]:
    r, f = found.check, found.feature
    probs = []
    if r.status == "sensitive" and (best < gap - 1e-7 or not r.validated):
        probs.append(f"{f}: sensitive at {gap} where the best gap is {best}")
    if r.status == "insensitive" and best >= gap + 1e-7:
        probs.append(f"{f}: insensitive at {gap} where the best gap is {best}")
    target = Target(gap=Gap(gap))
    want = sum(brute_force_flippable(ens, rows, [f], target))
    (every,) = [t for t in found.audit_table if t["group"] == "all"]
    if every["unknown"] == 0 and every["flippable"] != want:
        probs.append(f"{f}: audit says {every['flippable']} flippable rows, predict {want}")
    pair = found.audit_pair
    if pair is not None:
        x1 = rows[pair["row"]]
        x2 = x1.copy()
        x2[ens.feature_names.index(f)] = float(pair["x2"])
        p1, p2 = np.asarray(predict(np.stack([x1, x2])), dtype=float)
        if not (abs(p1 - pair["p_row"]) < 1e-5 and abs(p2 - pair["p_x2"]) < 1e-5):
            probs.append(f"{f}: the page's pair {pair} predicts {p1}, {p2}")
        if not (max(p1, p2) >= 0.5 + gap and min(p1, p2) <= 0.5 - gap):
            probs.append(f"{f}: the page's pair {pair} does not meet gap {gap}")
    return probs


def _report_claims_hold(seed: int, folder) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        path, data, gap, protected, predict, rows = _model(seed, folder)
        rep = treesens.report(
            str(path), str(data), protected=protected, gap=gap, budget=20, progress=False
        )
    ens = rep.model
    probs = []
    for r in rep.ranking:
        (f,) = r.features
        best = _best_gap(ens, predict, f)
        probs += [f"ranked {f}: {p}" for p in max_gap_problems(best, r, ens)]
    for found in rep.protected:
        best = _best_gap(ens, predict, found.feature)
        probs += _protected_problems(ens, predict, rows, found, gap, best)
    assert not probs, (seed, gap, protected, probs)


@pytest.mark.parametrize("seed", range(1))
def test_a_report_s_claims_hold_by_the_library_s_predict(seed, tmp_path):
    _report_claims_hold(seed, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(1, 30))
def test_more_reports_claims_hold_by_the_library_s_predict(seed, tmp_path):
    _report_claims_hold(seed, tmp_path)
