"""Every regression case saved under ``tests/regressions/cases`` (by the differential
campaign, ``tests/campaigns/test_differential_campaign.py``) is replayed against the brute-force
library oracle: same model file, same feature declarations, same query, backend and
passes. A case whose ``known_issue`` is set is expected to fail (an ``AssertionError``: the
disagreement itself) until that issue is fixed (``xfail``, not strict: an XPASS in the
report means the issue is gone, and the field can be cleared). The other tests check the saving mechanism itself.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest

from treesens.backends.registry import available
from treesens.compiler.plan import Plan
from treesens.compiler.query import PASS_NAMES, Gap, Query
from treesens.driver import solve_query
from treesens.tests.oracle import IRReplayer
from treesens.tests.regressions import harness as H

CASES = H.load_cases()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_saved_case_agrees_with_the_oracle(case, request):
    q = case.query()
    if not available(q.plan.backend):
        pytest.skip(f"backend {q.plan.backend} is not installed")
    if case.data.get("known_issue"):
        # only the known disagreement is expected: a case that no longer loads or crashes
        # the replay is a new failure
        request.applymarker(
            pytest.mark.xfail(reason=case.data["known_issue"], strict=False, raises=AssertionError)
        )
    oracle, r, problems = H.replay_case(case)
    assert oracle.sensitive == case.data["oracle"]["sensitive"], "the model loads differently"
    assert not problems, f"{r.status}: " + "; ".join(problems)


def test_cases_folder_may_be_empty_or_absent(tmp_path):
    assert H.load_cases(tmp_path / "absent") == []
    (tmp_path / "empty").mkdir()
    assert H.load_cases(tmp_path / "empty") == []


def _small(family: str, seed: int, tmp_path):
    rng = np.random.default_rng(seed)
    for shrink in range(4):
        spec = H.make_model(family, rng, tmp_path / f"{family}-{shrink}", shrink)
        ens = spec.load()
        if H.grid_size(ens) <= 20_000:
            return spec, ens
    pytest.skip(f"no small {family} model from seed {seed}")


@pytest.mark.parametrize(
    "family,seed", [("xgb-binary", 3), ("lgb-multi", 1), ("sk-hgb", 5), ("sk-rf", 2)]
)
def test_a_saved_case_round_trips(family, seed, tmp_path):
    """Model file, declarations and query come back identical, and replay agrees."""
    spec, ens = _small(family, seed, tmp_path)
    names = ens.feature_names
    if ens.n_classes == 2 and ens.n_outputs == 1:
        q = Query(vary=(names[0],), gap=Gap(0.1), plan=Plan(timeout=60.0, options=H.NO_HEURISTIC))
    else:
        q = Query(vary=(names[0],), gap=Gap(1.5), classes=(0, "any"), plan=Plan(timeout=60.0))
    q = q.planned(passes=frozenset({"ordering", "aff"}))
    oracle = H.library_oracle(ens, q)
    r = solve_query(ens, q)
    assert H.check_result(ens, q, oracle, r) == []
    cases = tmp_path / "cases"
    d = H.save_case(spec.path, ens, q, oracle, r, [], origin=f"test-{family}", cases_dir=cases)
    assert (d / "case.json").is_file()
    [case] = H.load_cases(cases)
    assert case.folder == d
    assert case.query() == q
    back = case.ensemble()
    assert back.features == ens.features
    X = H.build_grid(ens, names).X
    assert np.array_equal(back.raw(X), ens.raw(X))
    assert np.array_equal(back.replayer.predict_proba(X), ens.replayer.predict_proba(X))
    oracle2, r2, problems = H.replay_case(case)
    assert problems == [], problems
    assert oracle2.sensitive == oracle.sensitive == (r2.status == "sensitive")
    w = json.loads((d / "case.json").read_text())["oracle"]["witness"]
    if oracle.witness is not None:  # NaN kept as "nan" in JSON
        assert all(
            (isinstance(v, str) and math.isnan(float(v))) or v == float(x)
            for v, x in zip(w[0], oracle.witness[0])
        )


def test_a_failing_run_is_saved_and_replayed(tmp_path, monkeypatch):
    """The campaign saves a failing run on its own; the saved case replays."""
    real = H.check_result
    calls = []

    def flaky(ens, q, oracle, r):
        calls.append(q.plan.backend)
        return ["injected: a made-up problem"] if len(calls) == 1 else real(ens, q, oracle, r)

    monkeypatch.setattr(H, "check_result", flaky)
    cases = tmp_path / "cases"
    meta, records = H.campaign_ensemble(
        4, seed=0, n_queries=1, backends=["cpsat"], workdir=tmp_path / "w", cases_dir=cases
    )
    assert len(records) == 2 and records[0].problems == ["injected: a made-up problem"]
    assert records[0].saved and not records[1].problems
    [case] = H.load_cases(cases)
    assert case.data["observed"]["problems"] == ["injected: a made-up problem"]
    assert case.data["known_issue"].startswith("untriaged")
    assert case.data["model_file"] in {p.name for p in case.folder.iterdir()}
    monkeypatch.setattr(H, "check_result", real)
    oracle, r, problems = H.replay_case(case)
    assert problems == [] and oracle.sensitive == meta["queries"][0]["oracle"]


def test_oracle_handles_categories_missing_values_and_zero():
    """The library oracle's values: every category code, NaN when declared, LightGBM's
    zero band on its own; and it agrees with tests/oracle.py where both apply."""
    from treesens.tests.oracle import brute_force_sensitive, random_ensemble

    for seed in range(8):
        ens = random_ensemble(seed, 3, 2, 2, 3, leaf_scale=1.5)
        e2 = replace(ens, replayer=IRReplayer(ens))
        for g in (0.0, 0.1, 0.3):
            q = Query(vary=("f0",), gap=Gap(g))
            assert H.library_oracle(e2, q).sensitive == brute_force_sensitive(ens, q)
    feat = H.Feature("c", "categorical", 0.0, 4.0, may_be_missing=True)
    t = H.Tree(
        feature=[0, -1, -1],
        threshold=[0.0, 0, 0],
        left=[1, -1, -1],
        right=[2, -1, -1],
        default_left=[True, False, False],
        value=np.array([[0.0], [1.0], [-1.0]]),
        outputs=(0,),
        categories=(frozenset({1, 3}), None, None),
    )
    ens = H.Ensemble((t,), (feat,), 2, (0.0,), "logistic")
    cands = H.candidate_values(ens, 0)
    assert {0.0, 1.0, 2.0, 3.0, 4.0} <= set(cands) and math.isnan(cands[-1])
    assert H.feature_values(ens, 0) == [0.0, 1.0]  # NaN goes left, as code 1 does
    right = replace(ens, trees=(replace(t, default_left=[False, False, False]),))
    assert H.feature_values(right, 0) == [0.0, 1.0]  # ... or right, as code 0 does
    one = replace(right, features=(replace(feat, lb=1.0, ub=1.0),))
    v = H.feature_values(one, 0)  # code 1 goes left, NaN right: both kept
    assert v[0] == 1.0 and math.isnan(v[1]) and len(v) == 2
    zt = H.Tree(
        feature=[0, -1, -1],
        threshold=[0.5, 0, 0],
        left=[1, -1, -1],
        right=[2, -1, -1],
        default_left=[False, False, False],
        value=np.array([[0.0], [1.0], [-1.0]]),
        outputs=(0,),
        missing=[1, 0, 0],  # MISSING_ZERO: 0.0 takes the default side
    )
    zens = H.Ensemble((zt,), (H.Feature("z"),), 2, (0.0,), "logistic", "<=", "float64z")
    zv = H.feature_values(zens, 0)
    # 0.0 goes right (default), other values <= 0.5 left, the rest right
    assert len(zv) == 2 and any(v == 0.0 for v in zv) and any(0 < abs(v) <= 0.5 for v in zv)
    assert set(PASS_NAMES) == set().union(*H.ALL_PASS_SETS) and len(H.ALL_PASS_SETS) == 16


def test_the_library_oracle_tries_a_lower_bound_whose_float32_lies_below_it():
    from treesens.tests.oracle import random_ensemble

    ens = random_ensemble(0, 2, 2, 3, 3, op="<=", cast="float32")
    feats = tuple(replace(f, lb=-0.2) if i == 0 else f for i, f in enumerate(ens.features))
    values = H.candidate_values(ens.with_features(feats), 0)
    assert float(np.float32(-0.2)) < -0.2 and -0.2 in values
