"""Data-aware checks (``data_aware`` clause, prob, probclause; ``prob_empty`` smooth or
forbid) on the differential campaign's binary models (XGBoost, LightGBM, scikit-learn's
trees, forests and HistGradientBoosting; categorical and may-be-missing features), with
data drawn from a few values of each feature (so that it leaves cavities and empty
intervals), at brute force's largest gap and a fixed one, against the library's predict
over the grid of every routing signature:

* the data never decide "insensitive": it is answered only where brute force over all
  inputs finds no pair;
* a pair replays on the library's predict, differs only in the varied features and
  meets the gap;
* where the data's restrictions were kept (``stats.data_restrictions_dropped`` unset),
  no input of the pair lies in a learned cavity (``clauses`` written to a file, a box
  read as the library's comparison routes: ``lo <= x < hi``, ``lo < x <= hi`` for a
  ``<=`` model), and with ``prob_empty=forbid`` every value of the pair lies in a
  threshold interval that holds a data row, and is NaN only where a data row misses it;
* the distance to the data is at most the pair's own point's distance to the nearest
  row, over the features outside vary."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.compiler.query import Gap, Query
from treesens.tests.campaigns.test_constrained_backends_differential import _Pairs
from treesens.tests.regressions import harness as H

SEEDS = int(os.environ.get("TS_DATA_AWARE_SEEDS", "2"))
SLOW_SEEDS = int(os.environ.get("TS_DATA_AWARE_SLOW_SEEDS", "40"))
FAMILIES = ("xgb-binary", "lgb-binary", "sk-hgb", "sk-rf", "sk-dt", "sk-et")
MODES = (
    {"data_aware": "clause"},
    {"data_aware": "prob"},
    {"data_aware": "prob", "prob_empty": "forbid"},
    {"data_aware": "probclause", "prob_empty": "forbid"},
)


def _model(seed: int, folder):
    rng = np.random.default_rng([2026, 11, 29, 7, seed])
    spec = H.make_model(FAMILIES[seed % len(FAMILIES)], rng, folder, shrink=1)
    return spec.load(), spec.family, rng


def _data(ens, rng) -> pd.DataFrame:
    """Rows drawn from a random few of each feature's grid values, unevenly."""
    n = int(rng.integers(40, 200))
    cols = {}
    for f, feat in enumerate(ens.features):
        vals = H.feature_values(ens, f)
        k = int(rng.integers(1, len(vals) + 1))
        some = np.asarray(vals)[rng.choice(len(vals), size=k, replace=False)]
        cols[feat.name] = some[rng.choice(k, size=n, p=rng.dirichlet(np.ones(k)))]
    return pd.DataFrame(cols).assign(label=0)


def _in_box(ens, x: np.ndarray, box: dict) -> bool:
    names = ens.feature_names
    for lit in box["literals"]:
        v = float(ens.cast_value(x[names.index(lit["feature"])]))
        lo = -math.inf if lit["lo"] is None else lit["lo"]
        hi = math.inf if lit["hi"] is None else lit["hi"]
        inside = lo < v <= hi if ens.op == "<=" else lo <= v < hi
        if not inside:
            return False
    return True


def _pair_problems(ens, q: Query, r, data: pd.DataFrame, mode: dict, clauses) -> list[str]:
    out = H.check_witness(ens, q, r)
    w = r.witness_arrays
    x1, x2 = np.asarray(w.x1, dtype=np.float64), np.asarray(w.x2, dtype=np.float64)
    names = ens.feature_names
    if not r.stats.get("data_restrictions_dropped"):
        if clauses is not None:
            for box in json.loads(clauses.read_text())["clauses"]:
                out += [
                    f"{k} lies in the cavity {box}"
                    for k, x in (("x1", x1), ("x2", x2))
                    if _in_box(ens, x, box)
                ]
        if mode.get("prob_empty") == "forbid":
            for f in range(ens.n_features):
                column = data[names[f]].astype(float)
                seen = set(H.signatures(ens, f, column.tolist()))
                for k, x in (("x1", x1), ("x2", x2)):
                    if math.isnan(x[f]):
                        if not column.isna().any():
                            out.append(f"{k}.{names[f]} is NaN, which no row has")
                    elif H.signatures(ens, f, [x[f]])[0] not in seen:
                        out.append(f"{k}.{names[f]} = {x[f]!r} lies in an interval with no row")
    shared = [f for f in range(ens.n_features) if names[f] not in q.vary]
    rows = data[[names[f] for f in shared]].to_numpy(dtype=np.float64)
    if (
        shared
        and r.distance is not None
        and not np.isnan(rows).any()
        and not np.isnan(x1[shared]).any()
    ):
        span = rows.max(axis=0) - rows.min(axis=0)
        span[span == 0] = 1.0
        own = float(np.sqrt((((rows - x1[shared]) / span) ** 2).sum(axis=1)).min())
        if r.distance > own + 1e-9:
            out.append(f"distance {r.distance!r} above the pair's own point's {own!r}")
    return out


def _agrees(seed: int, folder) -> None:
    ens, family, rng = _model(seed, folder)
    if not (ens.n_classes == 2 and ens.n_outputs == 1):
        pytest.skip("a multiclass model")
    data = _data(ens, rng)
    names = ens.feature_names
    k = min(len(names), int(rng.integers(1, 3)))
    q = Query(vary=tuple(sorted(rng.choice(names, size=k, replace=False).tolist())))
    values = {f: H.feature_values(ens, f) for f in range(ens.n_features)}
    pairs = _Pairs(ens, q, values)
    if not pairs.fits:
        pytest.skip("a grid too large to enumerate")
    gaps = [float(rng.choice([0.05, 0.15, 0.3]))]
    best = pairs.best_binary_gap("prob")
    if 0.0 <= best < 0.4999:
        gaps.append(best)
    problems = []
    for g in gaps:
        truth = pairs.sensitive(ens, q.with_(gap=Gap(g)))
        for i, mode in enumerate(MODES):
            clauses = folder / f"clauses{i}_{g}.json" if "clause" in mode["data_aware"] else None
            kw = dict(mode, clause_time=3, clauses=str(clauses)) if clauses else dict(mode)
            if "prob" in mode["data_aware"]:
                kw["optimise_time"] = 2
            r = treesens.check(ens, vary=list(q.vary), gap=g, data=data, timeout=60, **kw)
            said = f"{mode} gap {g!r} (best {best!r}): {r.status}"
            if r.status == "insensitive" and truth:
                problems.append(f"{said}, and brute force has a pair over all inputs")
            elif r.status == "sensitive":
                problems += [
                    f"{said}: {p}"
                    for p in _pair_problems(ens, q.with_(gap=Gap(g)), r, data, mode, clauses)
                ]
            elif r.status == "error":
                problems.append(f"{said}: {r.error}")
    assert not problems, (family, q.vary, problems)


@pytest.mark.parametrize("seed", range(SEEDS))
def test_data_aware_checks_agree_with_brute_force_and_keep_to_the_data(seed, tmp_path):
    _agrees(seed, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(SEEDS, SEEDS + SLOW_SEEDS))
def test_more_data_aware_checks_agree_with_brute_force_and_keep_to_the_data(seed, tmp_path):
    _agrees(seed, tmp_path)
