"""A query's bounds that hold for both inputs alike are read as narrower feature domains
(compiler/bounds_as_domains.py): the box search, the max gap's compiled search and
certificates then take the query. Checked against brute force on models built in the IR
and on the library's own predict of trained models with categorical features and
missing values; a certificate states the narrowed domains, and one that states the
declared domains instead is rejected."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from treesens.compiler.bounds_as_domains import bounds_as_domains
from treesens.compiler.ensemble import Feature
from treesens.compiler.errors import InputError
from treesens.compiler.passes.feature_constraints import constraint_violations
from treesens.compiler.plan import Plan
from treesens.compiler.query import FeatureBound, FeatureRelation, Gap, Query
from treesens.driver import solve_query
from treesens.interfaces.cli.main import main
from treesens.questions.max_gap import max_gap_query
from treesens.tests.compiler.test_feature_constraints import brute
from treesens.tests.oracle import feature_thresholds, random_ensemble
from treesens.tests.regressions import harness as H

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TOLERANCE = 1e-3


def _ens(seed: int = 1, kind: str = "real"):
    ens = random_ensemble(np.random.default_rng(seed), 4, 2, 3, 3, integer_features=kind != "real")
    if kind == "binary":
        ens = ens.with_features(tuple(Feature(f.name, "binary") for f in ens.features))
    return ens


def test_a_bound_on_both_inputs_is_the_feature_s_domain():
    ens = _ens()
    narrowed, q = bounds_as_domains(ens, Query(vary=("f0",), bounds=(FeatureBound("f1", -1, 1),)))
    assert (narrowed.features[1].lb, narrowed.features[1].ub) == (-1, 1)
    assert q.bounds == ()


def test_a_bound_on_x1_of_a_shared_feature_holds_for_both_inputs():
    ens = _ens()
    q = Query(vary=("f0",), bounds=(FeatureBound("f1", -1, 1, (1,)),))
    assert bounds_as_domains(ens, q) is not None


def test_a_bound_on_one_input_of_a_varied_feature_is_no_domain():
    ens = _ens()
    q = Query(vary=("f0",), bounds=(FeatureBound("f0", -1, 1, (1,)),))
    assert bounds_as_domains(ens, q) is None


def test_relations_leave_the_bounds_to_the_solvers():
    ens = _ens()
    q = Query(
        vary=("f0",),
        bounds=(FeatureBound("f1", -1, 1),),
        relations=(FeatureRelation("f0", 1, "<=", 2),),
    )
    assert bounds_as_domains(ens, q) is None


def test_a_bound_on_a_feature_that_may_be_missing_leaves_it_never_missing():
    ens = _ens()
    ens = ens.with_features(tuple(replace(f, may_be_missing=True) for f in ens.features))
    narrowed, _ = bounds_as_domains(ens, Query(vary=("f0",), bounds=(FeatureBound("f1", -1, 1),)))
    assert not narrowed.features[1].may_be_missing and narrowed.features[2].may_be_missing


def test_bounds_that_leave_a_split_feature_no_value_are_left_to_the_solvers():
    ens = _ens(kind="integer")
    split = next(f for f, ths in enumerate(feature_thresholds(ens)) if ths)
    q = Query(vary=("f0",), bounds=(FeatureBound(ens.feature_names[split], 0.2, 0.4),))
    assert bounds_as_domains(ens, q) is None


def _alike_bounds(rng, ens, kind: str) -> tuple[FeatureBound, ...]:
    """One or two bounds on random features, the same for both inputs."""
    ths = feature_thresholds(ens)
    out = []
    for _ in range(int(rng.integers(1, 3))):
        f = int(rng.integers(ens.n_features))
        pts = sorted(set(ths[f]) | {-3.0, 3.0})
        lo = float(rng.choice(pts)) + float(rng.choice([-0.5, 0.0, 0.25]))
        hi = lo + float(rng.choice([0.0, 0.5, 1.0, 2.0]))
        if kind == "integer":
            lo, hi = float(math.floor(lo)), float(math.floor(hi))
        out.append(FeatureBound(ens.feature_names[f], lo, hi))
    return tuple(out)


def _boxes_alone(q: Query) -> Query:
    return q.planned(backend="boxes", timeout=20.0)


@pytest.mark.parametrize("kind", ["real", "integer", "binary"])
@pytest.mark.parametrize("seed", range(6))
def test_the_box_search_answers_checks_under_bounds_as_brute_force_does(kind, seed):
    rng = np.random.default_rng([2026, 11, 28, seed, len(kind)])
    ens = _ens(1000 + seed, kind)
    for _ in range(4):
        vary = (str(rng.choice(ens.feature_names)),)
        q = Query(vary=vary, gap=Gap(float(rng.choice([0.02, 0.05, 0.1]))))
        q = q.with_(bounds=_alike_bounds(rng, ens, kind))
        if bounds_as_domains(ens, q) is None:  # bounds that leave nothing: the solvers'
            continue
        try:
            r = solve_query(ens, _boxes_alone(q))
        except InputError:  # bounds that leave no pair apart: refused, never answered
            assert not brute(ens, q), q
            continue
        assert r.backend == "boxes" and r.status in ("sensitive", "insensitive"), (q, r.error)
        assert (r.status == "sensitive") == brute(ens, q), q
        if r.status == "sensitive":
            w = r.witness_arrays
            assert not constraint_violations(ens, q, w.x1, w.x2), q


def _brute_max_gap(ens, q: Query) -> float:
    """The largest min(P(x1) - 0.5, 0.5 - P(x2)) by the library's predict over pairs within
    the bounds (x1 and x2 equal outside the varied feature; a bounded feature is never
    missing), one value per class of values no split or bound end tells apart."""
    bounded = {b.feature for b in q.bounds}
    narrowed = ens.with_features(
        tuple(
            replace(f, lb=max(f.lb, b.lo), ub=min(f.ub, b.hi), may_be_missing=False)
            if f.name in bounded
            else f
            for f in ens.features
            for b in [_one_bound(q, f.name)]
        )
    )
    grid = H.build_grid(narrowed, q.vary)
    return H.best_gap(narrowed, grid, q.with_(bounds=()), "prob")


def _one_bound(q: Query, name: str) -> FeatureBound:
    lo, hi = -math.inf, math.inf
    for b in q.bounds:
        if b.feature == name:
            lo, hi = max(lo, b.lo), min(hi, b.hi)
    return FeatureBound(name, lo, hi)


def _library_model(family: str, seed: int, tmp_path: Path):
    spec = H.make_model(family, np.random.default_rng([47, seed]), tmp_path, shrink=1)
    return spec.load()


def binary_library_model(family: str, seed: int, tmp_path: Path):
    """A trained binary classifier of ``family`` (skipped where the family's draw is
    another kind of model)."""
    ens = _library_model(family, seed, tmp_path)
    if ens.n_outputs != 1 or ens.is_regressor:
        pytest.skip("a binary classifier's probability gap")
    return ens


def _library_bounds(rng, ens) -> tuple[FeatureBound, ...]:
    """A bound on one or two features within their declared ranges: a category code (or
    two), or a numeric range between two of the oracle's values."""
    out = []
    for f in rng.choice(ens.n_features, size=min(2, ens.n_features), replace=False).tolist():
        feat = ens.features[f]
        vals = sorted(v for v in H.feature_values(ens, f) if not math.isnan(v))
        if len(vals) < 2:
            continue
        a, b = sorted(rng.choice(len(vals), size=2, replace=False).tolist())
        out.append(FeatureBound(feat.name, float(vals[a]), float(vals[b])))
    return tuple(out)


def holds_the_gap(ens, q: Query, exact: float) -> None:
    """The max gap's box search brackets ``exact`` within the tolerance, and its pair
    lies within each input's bounds."""
    r = max_gap_query(ens, q, tolerance=TOLERANCE)
    m = r.max_gap
    assert m["method"] == "boxes", m
    assert m["upper"] >= exact - 1e-12, (q, m, exact)
    if r.status == "sensitive":
        assert m["proven"] and exact - TOLERANCE <= m["lower"] <= exact + 1e-12, (q, m, exact)
        w = r.witness_arrays
        assert not constraint_violations(ens, q, w.x1, w.x2), q
    else:
        assert exact < TOLERANCE, (q, m, exact)


@pytest.mark.parametrize("family", ["xgb-binary", "lgb-binary", "sk-hgb", "sk-rf"])
@pytest.mark.parametrize("seed", range(3))
def test_max_gap_under_bounds_is_the_library_s_within_the_tolerance(family, seed, tmp_path):
    ens = binary_library_model(family, seed, tmp_path)
    rng = np.random.default_rng([48, seed])
    vary = (str(rng.choice(ens.feature_names)),)
    q = Query(vary=vary, bounds=_library_bounds(rng, ens), plan=Plan(timeout=30.0))
    if bounds_as_domains(ens, q) is None:
        pytest.skip("these bounds are not domains")
    exact = _brute_max_gap(ens, q)
    try:
        holds_the_gap(ens, q, exact)
    except InputError:  # the bounds hold the varied feature to one value
        return


CONTRACT = """model "{model}"
features from "{details}"
query aged {{
  vary sex
  gap 0.3
  where age in [40, 60] and bmi <= 25
  expect insensitive
}}
"""


@pytest.fixture
def bounded_certificate(tmp_path, capsys) -> Path:
    """The certificate of 'no pair reaches 0.3 varying sex, aged 40-60 with a BMI of 25 at
    most' on the shipped diabetes model (whose largest gap is 0.33 without the bounds,
    0.24 with them)."""
    sens = tmp_path / "aged.sens"
    sens.write_text(
        CONTRACT.format(
            model=EXAMPLES / "diabetes_lgbm.txt", details=EXAMPLES / "diabetes_details.csv"
        )
    )
    assert main(["test", str(sens), "--certificates", str(tmp_path / "certs")]) == 0
    capsys.readouterr()
    return tmp_path / "certs" / "aged.json"


def test_an_insensitive_answer_under_bounds_is_certified(bounded_certificate, capsys):
    assert main(["verify", str(bounded_certificate)]) == 0
    assert capsys.readouterr().out.startswith("VALID")


def test_the_certificate_states_the_bounds_as_the_features_domains(bounded_certificate):
    doc = json.loads(bounded_certificate.read_text())
    domain = dict(zip(doc["question"]["features"], doc["question"]["domain"], strict=True))
    assert (domain["age"]["lb"], domain["age"]["ub"]) == (40.0, 60.0)
    assert domain["bmi"]["ub"] == 25.0


def test_the_certificate_with_the_declared_domains_is_rejected(bounded_certificate, capsys):
    doc = json.loads(bounded_certificate.read_text())
    names = doc["question"]["features"]
    for name, d in zip(names, doc["question"]["domain"], strict=True):
        if name in ("age", "bmi"):  # the details' ranges: 19-79, 18-42.2
            d["lb"], d["ub"] = (19.0, 79.0) if name == "age" else (18.0, 42.2)
    bounded_certificate.write_text(json.dumps(doc))
    assert main(["verify", str(bounded_certificate)]) == 1
    assert capsys.readouterr().out.startswith("INVALID")
