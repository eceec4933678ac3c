"""Conformance: every installed backend gives the same, known answer.

Known-answer instances -- tiny hand-built ensembles, the paper's subset-sum
construction, and random tiny ensembles checked by the brute-force oracle -- are solved
on every installed backend from ONE compilation per query, through the pipeline (worker
process, invert, replay). Gurobi runs here only on tiny models (its size-limited license
accepts up to 2000 variables and constraints); it is skipped when gurobipy is missing.
Then the CLI: ``compare`` (agreement, and the disagreement alarm), ``emit`` (the SMT-LIB
file solves with standalone z3 to the status ``check`` reports), and ``--backend race``.
"""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

from treesens.backends.registry import BACKENDS, available
from treesens.compiler.ensemble import LOGISTIC, Ensemble, Feature, Tree
from treesens.compiler.plan import Plan
from treesens.compiler.query import ANY, Gap, Query
from treesens.driver import compile_query, solve_query
from treesens.tests.conftest import treesens_here
from treesens.tests.oracle import (
    brute_force_sensitive,
    random_ensemble,
    subset_sum_ensemble,
    subset_sum_exists,
)

ALL = ["cpsat", "cbc", "highs", "gurobi", "z3"]


def _backend_params():
    out = []
    for b in ALL:
        marks = []
        if not available(b):
            why = {
                "gurobi": "gurobipy is not installed",
                "z3": "z3-solver is not installed",
                "cpsat": "ortools is not installed",
            }.get(b, "python-mip (or highspy) is not installed")
            marks.append(pytest.mark.skip(reason=why))
        out.append(pytest.param(b, marks=marks, id=b))
    return out


BACKEND_PARAMS = _backend_params()
NO_HEURISTIC = (("heuristic", False),)  # make the backend itself answer


def _solve(ens, q, backend, cq=None):
    r = solve_query(ens, q.planned(backend=backend), compiled=cq)
    return r


def _expect(r, sensitive: bool, ens, q):
    assert r.status in ("sensitive", "insensitive"), (r.backend, r.status, r.error, r.message)
    assert r.status == ("sensitive" if sensitive else "insensitive"), (
        r.backend,
        r.status,
        r.message,
    )
    if sensitive:
        assert r.validated
        _check_witness(ens, q, r)


def _check_witness(ens, q, r):
    names = ens.feature_names
    x1 = np.array([r.witness["x1"][n] for n in names], dtype=np.float64)
    x2 = np.array([r.witness["x2"][n] for n in names], dtype=np.float64)
    for i, n in enumerate(names):
        if n not in q.vary:
            assert x1[i] == x2[i], f"witness differs on {n}, which is not varied"
    p = ens.proba(np.stack([x1, x2]))
    if ens.n_classes == 2 and q.gap.kind == "prob":
        assert p[0, 1] >= 0.5 + q.gap.value and p[1, 1] <= 0.5 - q.gap.value


# --- tiny hand-built ensembles -----------------------------------------------------------
def _stump(f: int, t: float, yes: float, no: float) -> Tree:
    return Tree(
        feature=[f, -1, -1],
        threshold=[t, 0.0, 0.0],
        left=[1, -1, -1],
        right=[2, -1, -1],
        default_left=[True, False, False],
        value=np.array([[0.0], [yes], [no]]),
        outputs=(0,),
    )


def _depth2(f: int, t: float, g: int, u: float, vals) -> Tree:
    """x_f < t ? (x_g < u ? v0 : v1) : (x_g < u ? v2 : v3)."""
    return Tree(
        feature=[f, g, -1, -1, g, -1, -1],
        threshold=[t, u, 0, 0, u, 0, 0],
        left=[1, 2, -1, -1, 5, -1, -1],
        right=[4, 3, -1, -1, 6, -1, -1],
        default_left=[True] * 7,
        value=np.array([[0.0], [0.0], [vals[0]], [vals[1]], [0.0], [vals[2]], [vals[3]]]),
        outputs=(0,),
    )


def _ens(trees, n_features: int, intercept: float = 0.0, name: str = "hand") -> Ensemble:
    feats = tuple(Feature(f"f{i}", "real") for i in range(n_features))
    return Ensemble(
        trees=tuple(trees),
        features=feats,
        n_classes=2,
        intercept=(intercept,),
        link=LOGISTIC,
        op="<",
        cast="float32",
        source=name,
        replayer=None,
    )


# (name, ensemble, vary, gap, sensitive?)
HAND = [
    # one stump: f0 decides everything (sigmoid(2) = 0.88 >= 0.7)
    ("stump-f0", _ens([_stump(0, 0.5, 2.0, -2.0)], 2), ("f0",), 0.2, True),
    ("stump-f1", _ens([_stump(0, 0.5, 2.0, -2.0)], 2), ("f1",), 0.2, False),
    # the gap is too large for one stump of +-1 (sigmoid(1) = 0.73 < 0.8)
    ("stump-gap", _ens([_stump(0, 0.5, 1.0, -1.0)], 2), ("f0",), 0.3, False),
    # two trees on f0 that must agree (shared threshold chain): 1.5 + 1.5 vs -1.5 - 1.5
    ("chain", _ens([_stump(0, 0.5, 1.5, -1.5), _stump(0, 0.25, 1.5, -1.5)], 1), ("f0",), 0.4, True),
    # contradictory thresholds: t0 needs f0 < 0.25 for +, t1 needs f0 >= 0.75 for +
    (
        "contradiction",
        _ens([_stump(0, 0.25, 1.0, -1.0), _stump(0, 0.75, -1.0, 1.0)], 1),
        ("f0",),
        0.2,
        False,
    ),
    # an interaction: f1 only matters when f0 >= 0.5, f0 fixed and shared
    ("interaction", _ens([_depth2(0, 0.5, 1, 0.5, [0.1, 0.1, 3.0, -3.0])], 2), ("f1",), 0.4, True),
    (
        "interaction-off",
        _ens([_depth2(0, 0.5, 1, 0.5, [0.1, 0.1, 0.3, -0.3])], 2),
        ("f1",),
        0.2,
        False,
    ),
    # the intercept pushes everything up: nothing reaches P <= 0.3
    ("intercept", _ens([_stump(0, 0.5, 1.0, -1.0)], 1, intercept=2.5), ("f0",), 0.2, False),
]


@pytest.mark.parametrize("backend", BACKEND_PARAMS)
@pytest.mark.parametrize("name,ens,vary,gap,sensitive", HAND, ids=[h[0] for h in HAND])
def test_hand_built_ensembles(backend, name, ens, vary, gap, sensitive):
    q = Query(vary=vary, gap=Gap(gap), plan=Plan(timeout=30.0, options=NO_HEURISTIC))
    assert brute_force_sensitive(ens, q) is sensitive  # the hand-computed answer is right
    _expect(_solve(ens, q, backend), sensitive, ens, q)


# --- subset sum (the paper's hardness construction) ----------------------------------------
SUBSET = [
    ([3, 5, 7], 12),
    ([3, 5, 7], 11),
    ([2, 4, 6, 8], 9),
    ([3, 34, 4, 12, 5, 2], 9),
    ([3, 34, 4, 12, 5, 2], 30),
    ([6, 10, 15], 31),
]


@pytest.mark.parametrize("backend", BACKEND_PARAMS)
@pytest.mark.parametrize("numbers,k", SUBSET, ids=[f"{n}-{k}" for n, k in SUBSET])
def test_subset_sum(backend, numbers, k):
    ens = subset_sum_ensemble(numbers, k)
    q = Query(vary=("f'",), gap=Gap(0.25, "margin"), plan=Plan(timeout=30.0, options=NO_HEURISTIC))
    _expect(_solve(ens, q, backend), subset_sum_exists(numbers, k), ens, q)


# --- random tiny ensembles against the brute-force oracle ----------------------------------
def _random_instance(seed: int):
    rng = np.random.default_rng(seed)
    n_classes = 3 if seed % 4 == 3 else 2
    n_trees = int(rng.integers(2, 5)) * (n_classes if n_classes > 2 else 1)
    depth = int(rng.integers(1, 4))
    n_features = int(rng.integers(2, 5))
    ens = random_ensemble(
        rng,
        n_trees,
        depth,
        n_features,
        int(rng.integers(1, 4)),
        n_classes,
        leaf_scale=1.0,
        integer_features=bool(seed % 2),
    )
    k = int(rng.integers(1, n_features + 1))
    vary = tuple(sorted(rng.choice(ens.feature_names, size=k, replace=False).tolist()))
    if n_classes == 2:
        gap, classes = Gap(float(rng.choice([0.0, 0.1, 0.2, 0.3]))), None
    else:
        c1 = int(rng.integers(0, 3))
        # "any other class" is encoded with implications: exercises them on every backend
        c2 = ANY if seed % 8 == 3 else int((c1 + 1 + rng.integers(0, 2)) % 3)
        gap, classes = Gap(float(rng.choice([1.0, 1.5, 2.0]))), (c1, c2)
    return ens, Query(
        vary=vary, gap=gap, classes=classes, plan=Plan(timeout=30.0, options=NO_HEURISTIC)
    )


SEEDS = list(range(16))


@functools.cache
def _oracle(seed: int):
    ens, q = _random_instance(seed)
    return ens, q, brute_force_sensitive(ens, q), compile_query(ens, q)


@pytest.mark.parametrize("backend", BACKEND_PARAMS)
@pytest.mark.parametrize("seed", SEEDS)
def test_random_tiny_ensembles_agree_with_the_oracle(backend, seed):
    ens, q, expected, cq = _oracle(seed)
    _expect(_solve(ens, q, backend, cq), expected, ens, q)


def test_the_random_instances_cover_both_answers_and_implications():
    answers = {_oracle(s)[2] for s in SEEDS}
    assert answers == {True, False}
    assert any(_oracle(s)[3].compiled.problem.stats().get("Implication") for s in SEEDS)


# --- race ---------------------------------------------------------------------------------
def _installed():
    return [b for b in ALL if available(b)]


@pytest.mark.skipif(
    len([b for b in ALL if available(b)]) < 2, reason="a race needs two installed backends"
)
@pytest.mark.parametrize("numbers,k", [([3, 5, 7], 12), ([3, 5, 7], 11)])
def test_race_returns_the_first_proven_answer(numbers, k):
    ens = subset_sum_ensemble(numbers, k)
    names = _installed()[:3]
    q = Query(
        vary=("f'",),
        gap=Gap(0.25, "margin"),
        plan=Plan(timeout=30.0, options=NO_HEURISTIC, backend="race:" + ",".join(names)),
    )
    r = solve_query(ens, q)
    _expect(r, subset_sum_exists(numbers, k), ens, q)
    assert r.backend in names and set(r.stats["race"]) == set(names)
    # the losers' workers may start again for the next query
    r2 = solve_query(ens, q)
    assert r2.status == r.status


def test_race_with_an_unknown_backend_is_bad_input():
    from treesens.compiler.errors import InputError

    ens = subset_sum_ensemble([3, 5], 8)
    with pytest.raises(InputError, match="unknown backend"):
        solve_query(
            ens,
            Query(vary=("f'",), gap=Gap(0.25, "margin"), plan=Plan(backend="race:cpsat,nosuch")),
        )


# --- CLI: compare and emit on the example model shipped in the repository -------------------
REPO = __import__("pathlib").Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "breast_cancer_xgb.json"
needs_example = pytest.mark.skipif(
    not EXAMPLE.exists(), reason="examples/breast_cancer_xgb.json not built"
)


def _cli(*args):
    return treesens_here(*args)


@needs_example
@pytest.mark.parametrize("feature,gap", [("worst_radius", 0.2), ("mean_radius", 0.45)])
def test_compare_json_every_backend_agrees(feature, gap):
    out = _cli("compare", EXAMPLE, "--vary", feature, "--gap", gap, "--json", "--timeout", 120)
    lines = [json.loads(x) for x in out.stdout.splitlines()]
    assert out.returncode == 0, out.stderr
    assert {d["backend"] for d in lines} == set(_installed())
    statuses = {
        d["status"]
        for d in lines
        if not (d["status"] == "error" and "license refused" in d["error"])
    }
    assert len(statuses) == 1 and statuses <= {"sensitive", "insensitive"}, lines
    for d in lines:
        if d["status"] == "sensitive":
            assert d["validated"] and d["witness"]


@needs_example
def test_compare_table_and_backend_subset():
    out = _cli(
        "compare", EXAMPLE, "--vary", "worst_radius", "--backends", _installed()[0], "--timeout", 60
    )
    assert out.returncode == 0, out.stderr
    assert _installed()[0] in out.stdout and "replayed" in out.stdout


def test_compare_flags_disagreement():
    from treesens.answers.result import Result
    from treesens.interfaces.cli.compare import disagreement

    a = Result(query="q", status="sensitive", backend="a", features=[], gap=0.2, validated=True)
    b = Result(query="q", status="insensitive", backend="b", features=[], gap=0.2)
    c = Result(query="q", status="unknown", backend="c", features=[], gap=0.2)
    assert disagreement([a, b, c]) and "DISAGREE" in disagreement([a, b])
    assert disagreement([a, c]) is None and disagreement([b, c]) is None


def test_compare_rejects_unknown_backends_and_sens_without_support(tmp_path):
    out = _cli("compare", EXAMPLE, "--vary", "worst_radius", "--backends", "cpsat,nosuch")
    assert out.returncode == 2 and "unknown backend" in out.stderr
    out = _cli("compare", EXAMPLE, "--query", "q1", "--vary", "worst_radius")
    assert out.returncode == 2 and ".sens" in out.stderr


@needs_example
@pytest.mark.skipif(not available("z3"), reason="z3-solver is not installed")
@pytest.mark.parametrize("feature,gap", [("worst_radius", 0.2), ("mean_radius", 0.45)])
def test_emitted_smt2_solves_in_standalone_z3_like_check(feature, gap, tmp_path):
    f = tmp_path / "q.smt2"
    out = _cli("emit", EXAMPLE, "--vary", feature, "--gap", gap, "--format", "smt2", "-o", f)
    assert out.returncode == 0, out.stderr
    chk = _cli("check", EXAMPLE, "--vary", feature, "--gap", gap, "--json", "--timeout", 120)
    status = json.loads(chk.stdout)["status"]
    assert status in ("sensitive", "insensitive")
    z3bin = shutil.which("z3")
    if z3bin:
        got = subprocess.run(
            [z3bin, str(f)], capture_output=True, text=True, timeout=120
        ).stdout.strip()
    else:
        code = f"import z3; s = z3.Solver(); s.from_file({str(f)!r}); print(s.check())"
        got = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
        ).stdout.strip()
    assert got == {"sensitive": "sat", "insensitive": "unsat"}[status]


@needs_example
@pytest.mark.skipif(not available("highs"), reason="highspy is not installed")
@pytest.mark.parametrize("fmt", ["lp", "mps"])
def test_emitted_lp_and_mps_read_by_highs(fmt, tmp_path):
    f = tmp_path / f"q.{fmt}"
    out = _cli("emit", EXAMPLE, "--vary", "mean_radius", "--gap", 0.45, "-o", f)
    assert out.returncode == 0, out.stderr
    code = (
        "import highspy, sys; h = highspy.Highs(); h.setOptionValue('output_flag', False); "
        "assert h.readModel(sys.argv[1]) == highspy.HighsStatus.kOk; "
        "print(h.getNumCol(), h.getNumRow())"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, str(f)], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, r.stderr
    cols, rows = map(int, r.stdout.split())
    assert cols > 0 and rows > 0


def test_emit_needs_a_format():
    out = _cli("emit", EXAMPLE, "--vary", "worst_radius", "-o", "x.txt")
    assert out.returncode == 2 and "--format" in out.stderr


def test_registry_has_no_race_entry_but_race_is_accepted():
    from treesens.driver import is_race

    assert "race" not in BACKENDS and is_race("race") and is_race("race:cpsat,z3")
