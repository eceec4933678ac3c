"""A missing value that the library reads as a number outside the feature's declared
bounds (LightGBM's missing_type None reads NaN as 0.0, Zero sends it where 0.0 goes;
here 0.0 lies below the lower bound 0.3, as 0.0 lies below adult fnlwgt's 0.00176).

NaN is an input of its own, allowed only where a feature is declared (or the data
shows it) possibly missing, whatever the library's missing type: then the pair may use
it, and every answer agrees with the library's predict over one value per routing
signature of each feature within the bounds, NaN included (tests/regressions/harness.py's
grid); undeclared, no answer uses it."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.compiler.audit import Target
from treesens.compiler.ensemble import MISSING_NONE, MISSING_ZERO
from treesens.compiler.query import Gap, Query
from treesens.tests.audit_oracle import brute_force_flippable
from treesens.tests.max_gap_oracle import max_gap_problems
from treesens.tests.regressions import harness as H
from treesens.verify.check import verify_file

lgb = pytest.importorskip("lightgbm")

FEATURES = ["a", "b", "c"]
LOWER = 0.3  # a's declared lower bound: NaN's reading 0.0 lies below it
MODES = {"None": MISSING_NONE, "Zero": MISSING_ZERO}


def _frame(seed: int = 0, n: int = 400) -> pd.DataFrame:
    """Rows without a missing value whose label follows a < 0.1 (below the bounds) and
    b > 0.6."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 3))
    y = (X[:, 0] < 0.1) ^ (X[:, 1] > 0.6) ^ (rng.random(n) < 0.05)
    return pd.DataFrame(X, columns=FEATURES).assign(label=y.astype(int))


def _model(tmp_path, mode: str = "None", seed: int = 0):
    """A LightGBM model file of missing_type ``mode`` (trained without NaN: None; with
    zero_as_missing: Zero)."""
    df = _frame(seed)
    est = lgb.LGBMClassifier(
        n_estimators=8, num_leaves=6, learning_rate=0.5, min_child_samples=5, verbose=-1,
        random_state=seed, zero_as_missing=mode == "Zero",
    )  # fmt: skip
    est.fit(df[FEATURES], df["label"])
    path = tmp_path / f"m_{mode}_{seed}.txt"
    est.booster_.save_model(str(path))
    return path


def _details(tmp_path, missing: str) -> str:
    """a in [LOWER, 1] (its missing column ``missing``), b and c in [0, 1]."""
    path = tmp_path / f"details_{missing or 'none'}.csv"
    path.write_text(
        f"feature,name,lb,ub,missing\n0,a,{LOWER},1,{missing}\n1,b,0,1,false\n2,c,0,1,false\n",
        encoding="utf-8",
    )
    return str(path)


def _library_best_gap(ens, vary) -> float:
    grid = H.build_grid(ens, vary)
    return H.best_gap(ens, grid, Query(vary=tuple(vary), gap=Gap(0.0)), "prob")


@pytest.mark.parametrize("mode", sorted(MODES))
def test_the_model_reads_missing_values_by_its_missing_type(tmp_path, mode):
    ens = treesens.load_model(_model(tmp_path, mode), details=_details(tmp_path, "true"))
    used = {int(m) for t in ens.trees for m, f in zip(t.missing, t.feature) if f == 0}
    assert used == {MODES[mode]}


def test_a_missing_type_alone_makes_no_feature_possibly_missing(tmp_path):
    ens = treesens.load_model(_model(tmp_path), details=_details(tmp_path, ""))
    assert not any(f.may_be_missing for f in ens.features)


def test_undeclared_the_gap_that_only_nan_reaches_is_insensitive(tmp_path):
    """Within a's bounds the library's best gap is 0.288; NaN read as 0.0 reaches 0.452."""
    r = treesens.check(
        _model(tmp_path), vary=["a"], gap=0.35, details=_details(tmp_path, ""), timeout=60
    )
    assert r.status == "insensitive"


def test_declared_missing_the_pair_reaches_that_gap_with_nan(tmp_path):
    r = treesens.check(
        _model(tmp_path), vary=["a"], gap=0.35, details=_details(tmp_path, "true"), timeout=60
    )
    assert r.status == "sensitive" and r.validated
    assert None in (r.witness["x1"]["a"], r.witness["x2"]["a"])


def test_a_witness_with_nan_replays_to_the_librarys_own_outputs(tmp_path):
    path = _model(tmp_path)
    r = treesens.check(path, vary=["a"], gap=0.35, details=_details(tmp_path, "true"), timeout=60)
    booster = lgb.Booster(model_file=str(path))
    for x in ("x1", "x2"):
        row = [math.nan if v is None else v for v in r.witness[x].values()]
        p = float(booster.predict(np.array([row]))[0])
        assert [1.0 - p, p] == pytest.approx(r.outputs[x], abs=1e-9)


def test_every_number_of_a_witness_lies_within_the_declared_bounds(tmp_path):
    r = treesens.check(
        _model(tmp_path), vary=["a"], gap=0.35, details=_details(tmp_path, "true"), timeout=60
    )
    numbers = [r.witness[x]["a"] for x in ("x1", "x2") if r.witness[x]["a"] is not None]
    assert all(LOWER <= v <= 1.0 for v in numbers)


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("missing", ["true", ""])
@pytest.mark.parametrize("vary", [("a",), ("b",), ("a", "b")])
def test_answers_agree_with_the_librarys_predict_on_both_sides_of_the_best_gap(
    tmp_path, mode, missing, vary
):
    path, details = _model(tmp_path, mode), _details(tmp_path, missing)
    best = _library_best_gap(treesens.load_model(path, details=details), vary)
    for gap in (best - 1e-4, best + 1e-4):
        r = treesens.check(path, vary=list(vary), gap=gap, details=details, timeout=60)
        assert r.status == ("sensitive" if gap <= best else "insensitive"), (gap, best)


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("vary", [("a",), ("a", "b")])
def test_the_max_gap_holds_the_librarys_best_gap_over_nan(tmp_path, mode, vary):
    path, details = _model(tmp_path, mode), _details(tmp_path, "true")
    ens = treesens.load_model(path, details=details)
    best = _library_best_gap(ens, vary)
    r = treesens.max_gap(path, vary=list(vary), details=details, timeout=60)
    assert max_gap_problems(best, r, ens) == []


def test_the_certificate_of_no_pair_above_the_best_gap_covers_nan(tmp_path):
    path, details = _model(tmp_path), _details(tmp_path, "true")
    best = _library_best_gap(treesens.load_model(path, details=details), ("a",))
    cert = tmp_path / "proof.json"
    r = treesens.check(
        path, vary=["a"], gap=best + 1e-4, details=details, timeout=60, certificate=cert
    )
    verdict = verify_file(cert, str(path))
    assert r.status == "insensitive" and verdict.valid and verdict.domain[0]["missing"]


@pytest.mark.parametrize("mode", sorted(MODES))
def test_an_audit_of_rows_missing_a_agrees_with_the_librarys_predict(tmp_path, mode):
    """Rows with a at LOWER or more, or NaN (the data makes it possibly missing and
    bounds it from LOWER: NaN's reading 0.0 lies below); some flip on a, some not."""
    df = _frame(seed=1)
    df = df[df["a"] >= LOWER].copy()
    df.loc[np.random.default_rng(1).random(len(df)) < 0.25, "a"] = np.nan
    rows = df.head(60)
    ens = treesens.load_model(_model(tmp_path, mode), data=df)
    audited = treesens.audit(ens, rows, ["a"], gap=0.4)
    X = rows[FEATURES].to_numpy(dtype=float)
    expected = brute_force_flippable(ens, X, ["a"], Target(Gap(0.4)))
    assert (audited["status"] == "flippable").tolist() == expected
    assert any(expected) and not all(expected) and np.isnan(X[:, 0]).any()
    assert ens.features[0].may_be_missing and ens.features[0].lb >= LOWER
