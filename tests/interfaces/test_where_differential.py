"""``where=`` texts against a brute force that reads the texts' comparisons itself: a
check's answer, and a max gap's bounds around the largest gap the texts allow.

Random constraints are written as a user writes them (``x1.f0 < 0.25``, ``f1 >= 2``,
``-1 <= x2.f2 <= 0.5``, ``f0 in [a, b]``, ``x1.f1 <= x2.f1``, a value first as in
``0.5 > x2.f0``), at and next to the model's thresholds, on real, integer and binary
features and each library's comparison. The oracle never sees the FeatureBounds the
language builds (a strict bound made the next float or whole number): it applies each
comparison to candidate values (one per class of values no split or written value tells
apart, and the values either side of each) with numpy's own ``<``, ``<=``, ``==``, and
asks the ensemble's evaluation for the gap. Every installed backend must agree; a
"sensitive" pair must meet the written comparisons; an InputError (constraints that
leave nothing, or hold the varied features equal) only where brute force finds no pair.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import replace

import numpy as np
import pytest

import treesens
from treesens.backends.registry import BACKENDS, available
from treesens.compiler.ensemble import Feature
from treesens.compiler.errors import InputError
from treesens.tests.compiler.test_feature_constraints import OPS, _values
from treesens.tests.max_gap_oracle import max_gap_problems
from treesens.tests.oracle import feature_thresholds, random_ensemble

SEEDS = int(os.environ.get("TS_WHERE_SEEDS", "6"))
SLOW_SEEDS = int(os.environ.get("TS_WHERE_SLOW_SEEDS", "40"))
FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "=="}
COMPARISONS = [("<", "float32"), ("<=", "float32"), ("<=", "float64")]
# the box search alone refuses a query it does not describe (per-input bounds on a
# feature both inputs share): an error naming a solver backend, not an answer
# the solver alone, no quick search before it
SOLVER_ONLY = {"heuristic": False, "box_search": False}
REFUSALS = {"boxes": "the box search does not describe this query"}


def _installed() -> list[str]:
    return [b for b in BACKENDS if available(b)]


def _value(rng, ths: list[float], kind: str) -> float:
    """A number to compare with: a threshold, or next to one, or outside them all."""
    t = float(rng.choice(sorted(set(ths) | {-3.0, 3.0})))
    v = t + float(rng.choice([0.0, 0.0, -0.5, 0.25, 0.5, 1.0]))
    return float(round(v)) if kind != "real" and rng.random() < 0.5 else v


def _random_where(rng, ens, vary, kind: str) -> tuple[list[str], list[tuple]]:
    """Texts, and what each says: ("bound", feature, copies, op, value) or ("rel", f, op)
    meaning x1.f op x2.f."""
    names, ths = ens.feature_names, feature_thresholds(ens)
    texts, said = [], []
    for _ in range(int(rng.integers(1, 4))):
        f = int(rng.integers(ens.n_features))
        name, form = names[f], int(rng.integers(6))
        prefix, copies = [("x1.", (1,)), ("x2.", (2,)), ("", (1, 2))][int(rng.integers(3))]
        a, b = sorted((_value(rng, ths[f], kind), _value(rng, ths[f], kind)))
        op = str(rng.choice(["<", "<=", ">", ">=", "=="]))
        if form == 0 and name in vary:  # a relation, either way round
            left = int(rng.integers(1, 3))
            texts.append(f"x{left}.{name} {op} x{3 - left}.{name}")
            said.append(("rel", f, op if left == 1 else FLIP[op]))
        elif form == 1:  # the value first
            texts.append(f"{a!r} {op} {prefix}{name}")
            said.append(("bound", f, copies, FLIP[op], a))
        elif form == 2:  # a chain
            lop, hop = (str(rng.choice(["<", "<="])) for _ in range(2))
            texts.append(f"{a!r} {lop} {prefix}{name} {hop} {b!r}")
            said += [("bound", f, copies, FLIP[lop], a), ("bound", f, copies, hop, b)]
        elif form == 3:
            texts.append(f"{prefix}{name} in [{a!r}, {b!r}]")
            said += [("bound", f, copies, ">=", a), ("bound", f, copies, "<=", b)]
        else:
            texts.append(f"{prefix}{name} {op} {a!r}")
            said.append(("bound", f, copies, op, a))
    return texts, said


def _holds(said, f: int, copy: int, x: np.ndarray) -> np.ndarray:
    """Whether each value of ``x`` (feature f, input ``copy``) meets the written bounds."""
    ok = np.ones(len(x), dtype=bool)
    for s in said:
        if s[0] == "bound" and s[1] == f and copy in s[2]:
            ok &= OPS[s[3]](x, s[4])
    return ok


def _pair_space(ens, vary, said):
    """The pairs the written comparisons allow: P(class 1) of each shared row (down) and
    x1's and x2's varied rows (across), and which (x1, x2) varied rows the relations
    allow; None when none."""
    names, ths = ens.feature_names, feature_thresholds(ens)
    varying = sorted(names.index(v) for v in vary)
    shared = [f for f in range(ens.n_features) if f not in varying]
    ends = {f: sorted({s[4] for s in said if s[0] == "bound" and s[1] == f}) for f in range(3)}
    vals = {f: np.array(_values(ens, f, ths[f], ends[f])) for f in range(ens.n_features)}
    for f, feat in enumerate(ens.features):  # a missing value: no bound or order holds of it
        if feat.may_be_missing:
            vals[f] = np.append(vals[f], np.nan)
    if any(s[0] == "rel" and s[1] in shared and s[2] in ("<", ">") for s in said):
        return None
    S = [vals[f][_holds(said, f, 1, vals[f]) & _holds(said, f, 2, vals[f])] for f in shared]
    V = [[vals[f][_holds(said, f, c, vals[f])] for f in varying] for c in (1, 2)]
    S = np.array(list(itertools.product(*S)), dtype=float).reshape(-1, len(shared))
    V1, V2 = (np.array(list(itertools.product(*v)), dtype=float) for v in V)
    if not (len(S) and V1.size and V2.size):
        return None
    V1, V2 = V1.reshape(-1, len(varying)), V2.reshape(-1, len(varying))
    R = np.ones((len(V1), len(V2)), dtype=bool)
    for s in said:
        if s[0] == "rel" and s[1] in varying:
            k = varying.index(s[1])
            R &= OPS[s[2]](V1[:, k][:, None], V2[:, k][None, :])

    def proba(Vc):
        X = np.empty((len(S) * len(Vc), ens.n_features))
        X[:, shared] = np.repeat(S, len(Vc), axis=0)
        X[:, varying] = np.tile(Vc, (len(S), 1))
        return ens.proba(X)[:, 1].reshape(len(S), len(Vc))

    return proba(V1), proba(V2), R


def brute_where(ens, vary, said, gap: float) -> bool:
    """Whether some pair equal outside ``vary`` meets the written comparisons and the gap."""
    space = _pair_space(ens, vary, said)
    if space is None:
        return False
    p1, p2, R = space
    reach = ((p1 >= 0.5 + gap).astype(np.int64) @ R.astype(np.int64)) > 0
    return bool((reach & (p2 <= 0.5 - gap)).any())


def largest_gap_where(ens, vary, said) -> float:
    """The largest gap of a pair the written comparisons allow (x1 the one decided 1);
    negative when no pair meets g = 0, -1 when they allow none."""
    space = _pair_space(ens, vary, said)
    if space is None or not space[2].any():
        return -1.0
    p1, p2, R = space
    best = np.minimum(p1[:, :, None] - 0.5, 0.5 - p2[:, None, :])
    return float(np.where(R[None], best, -np.inf).max())


def _meets_written(said, varying, w) -> bool:
    """Whether a witness meets the written comparisons (a relation on a feature both
    inputs share holds, a missing value too: brute_where never asks it)."""
    x1, x2 = np.asarray(w.x1, dtype=float), np.asarray(w.x2, dtype=float)
    for s in said:
        if s[0] == "rel" and s[1] in varying and not OPS[s[2]](x1[s[1]], x2[s[1]]):
            return False
        if s[0] == "bound":
            for copy, x in ((1, x1), (2, x2)):
                if copy in s[2] and not OPS[s[3]](x[s[1]], s[4]):
                    return False
    return True


def _varied(ens, vary) -> list[int]:
    return [ens.feature_names.index(v) for v in vary]


def _case(seed: int):
    rng = np.random.default_rng(7000 + seed)
    kind = ["real", "integer", "binary"][seed % 3]
    op, cast = COMPARISONS[(seed // 3) % 3]
    ens = random_ensemble(
        rng,
        n_trees=int(rng.integers(2, 6)),
        depth=int(rng.integers(1, 4)),
        n_features=3,
        n_thresholds=3,
        integer_features=kind != "real",
        op=op,
        cast=cast,
        leaf_scale=1.0,
    )
    missing = rng.random(3) < (0.5 if seed % 4 >= 2 else 0.0)  # NaN routed by default_left
    ens = ens.with_features(
        tuple(
            Feature(f.name, "binary", may_be_missing=bool(m))
            if kind == "binary"
            else replace(f, may_be_missing=bool(m))
            for f, m in zip(ens.features, missing)
        )
    )
    vary = sorted(rng.choice(ens.feature_names, size=int(rng.integers(1, 3)), replace=False))
    texts, said = _random_where(rng, ens, vary, kind)
    return ens, [str(v) for v in vary], texts, said, float(rng.choice([0.02, 0.05, 0.1, 0.2]))


def _agree(seed: int, backends: list[str]) -> None:
    """Seeds alternate: the default stages (heuristic, box search, solver), and the
    backend's own answer (``SOLVER_ONLY``; the box search alone keeps its stage)."""
    ens, vary, texts, said, gap = _case(seed)
    expected = brute_where(ens, vary, said, gap)
    for b in backends:
        own = SOLVER_ONLY if seed % 2 and b != "boxes" else {}
        try:
            r = treesens.check(ens, vary, gap=gap, where=texts, backend=b, timeout=30, **own)
        except InputError as e:
            assert not expected, f"{texts}: InputError {e} where brute force finds a pair"
            continue
        if r.status == "error" and b in REFUSALS and REFUSALS[b] in (r.error or ""):
            continue
        if r.status == "error" and b == "gurobi" and "license" in (r.error or "").lower():
            continue
        got = (r.status, r.error)
        assert r.status == ("sensitive" if expected else "insensitive"), (b, texts, vary, got)
        if expected:
            assert r.validated and _meets_written(said, _varied(ens, vary), r.witness_arrays), (
                b,
                texts,
                r.witness,
            )


def _largest_gap_agrees(seed: int) -> None:
    ens, vary, texts, said, _ = _case(seed)
    exact = largest_gap_where(ens, vary, said)
    try:
        r = treesens.max_gap(ens, vary, where=texts, timeout=60)
    except InputError as e:
        assert exact < 0, f"{texts}: InputError {e} where a pair reaches {exact}"
        return
    assert not max_gap_problems(exact, r, ens), (
        texts,
        vary,
        exact,
        max_gap_problems(exact, r, ens),
    )


@pytest.mark.parametrize("seed", range(SEEDS))
def test_where_texts_agree_with_brute_force_on_the_written_comparisons(seed):
    _agree(seed, ["cpsat", "boxes"] if seed % 4 < 2 else ["highs", "z3"])


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(SEEDS, SEEDS + SLOW_SEEDS))
def test_where_texts_agree_with_brute_force_on_every_installed_backend(seed):
    _agree(seed, _installed())


@pytest.mark.parametrize("seed", range(SEEDS))
def test_a_max_gap_under_where_texts_brackets_the_largest_gap_they_allow(seed):
    _largest_gap_agrees(seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(SEEDS, SEEDS + SLOW_SEEDS))
def test_more_max_gaps_under_where_texts_bracket_the_largest_gap_they_allow(seed):
    _largest_gap_agrees(seed)
