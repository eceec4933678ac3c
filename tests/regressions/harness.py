"""The differential campaign's machinery: random small models of every frontend, a
brute-force oracle that asks the library's own predict, the checks of one pipeline run,
and regression cases saved to / replayed from this folder.

Used by ``tests/campaigns/test_differential_campaign.py`` (the slow campaign) and
``tests/campaigns/test_regressions.py`` (replays every saved case in the normal suite).

The oracle (``library_oracle``) extends ``tests/oracle.py`` to what real models have:

* one value per *routing signature* of every feature: the candidates of
  ``oracle.py`` (each threshold, its float32/float64 neighbours, integers around it,
  the bounds) plus 0.0 and LightGBM's zero band, every category code, and NaN for a
  feature declared ``may_be_missing``; two values with the same signature are routed
  alike at every split of the IR, so one is kept (signatures come from the IR's own
  evaluation, ``Ensemble.leaf_indices``, never from ``compiler/domain.py``);
* the grid of every combination is evaluated with the **library's predict** (the
  replayer), which is the truth the pipeline promises to agree with; the IR's own
  evaluation of the grid must agree with the library (``ir_library_gap``);
* the decision conditions are written out here, vectorised (not ``replay.meets``).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import shutil
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from treesens.compiler.ensemble import LOGISTIC, PROBA, ZERO_BAND, Ensemble, Feature, Tree
from treesens.compiler.plan import Plan
from treesens.compiler.query import ANY, MAX_RATIO, PASS_NAMES, Gap, Query

HERE = Path(__file__).resolve().parent
CASES_DIR = HERE / "cases"
MAX_ROWS = 400_000  # grids larger than this are not enumerated
CHUNK = 100_000
IR_TOL = 1e-5  # |library proba - IR proba| beyond this on a grid row is a frontend mismatch

ALL_PASS_SETS = [
    frozenset(c) for r in range(len(PASS_NAMES) + 1) for c in itertools.combinations(PASS_NAMES, r)
]


# =======================================================================================
# the oracle
# =======================================================================================
def _split_nodes(ens: Ensemble, f: int) -> list[tuple[Tree, int]]:
    out = []
    for t in ens.trees:
        for n in np.flatnonzero(t.feature == f).tolist():
            out.append((t, n))
    return out


def _single_node(t: Tree, n: int) -> Tree:
    """Node n of t alone, with leaf 1 for "left" and leaf 2 for "right"."""
    return Tree(
        feature=[t.feature[n], -1, -1],
        threshold=[t.threshold[n], 0.0, 0.0],
        left=[1, -1, -1],
        right=[2, -1, -1],
        default_left=[bool(t.default_left[n]), False, False],
        value=np.zeros((3, len(t.outputs))),
        outputs=t.outputs,
        missing=None if t.missing is None else [int(t.missing[n]), 0, 0],
        categories=None if t.categories is None else (t.categories[n], None, None),
    )


def signatures(ens: Ensemble, f: int, values: list[float]) -> list[tuple[int, ...]]:
    """How the IR routes each value of feature f at every split on f (its own evaluation)."""
    nodes = _split_nodes(ens, f)
    if not nodes:
        return [() for _ in values]
    sub = replace(ens, trees=tuple(_single_node(t, n) for t, n in nodes), replayer=None)
    X = np.zeros((len(values), ens.n_features))
    X[:, f] = values
    return [tuple(r) for r in sub.leaf_indices(X).tolist()]


def _admissible(feat: Feature, v: float) -> bool:
    if math.isnan(v):
        return feat.may_be_missing
    if not math.isfinite(v) or v < feat.lb or v > feat.ub:
        return False
    return not (feat.integral and v != math.floor(v))


def candidate_values(ens: Ensemble, f: int) -> list[float]:
    """Every value worth trying for feature f (admissible, as the library reads it)."""
    from treesens.tests.oracle import _raw_candidates

    feat = ens.features[f]
    nodes = _split_nodes(ens, f)
    numeric = sorted({float(t.threshold[n]) for t, n in nodes if not t.is_categorical(n)})
    numeric = [t for t in numeric if math.isfinite(t)]  # x <= inf: no value to try near it
    codes: set[int] = set()
    for t, n in nodes:
        if t.is_categorical(n):
            codes |= set(t.categories[n])
    relaxed = replace(feat, lb=-math.inf, ub=math.inf)  # bounds are applied below
    raw = list(_raw_candidates(ens, relaxed, numeric))
    raw += [0.0, -0.0, 1e-36, -1e-36, ZERO_BAND, -ZERO_BAND, 2 * ZERO_BAND, -2 * ZERO_BAND]
    raw += [float(np.nextafter(ZERO_BAND, math.inf)), float(np.nextafter(-ZERO_BAND, -math.inf))]
    if feat.kind == "categorical" or codes:
        top = max(codes | {int(math.ceil(t)) for t in numeric if abs(t) < 1e6} | {0})
        n_cat = len(feat.categories) if feat.categories else 0
        # two codes past the last any split lists: where the splits list every code below
        # it, a pair of unlisted codes under x1.c < x2.c takes both
        raw += [float(c) for c in range(-1, max(top, n_cat - 1) + 3)]
    for b in (feat.lb, feat.ub):
        if math.isfinite(b):
            raw += [b, float(math.floor(b)), float(math.ceil(b))]
    if math.isfinite(feat.lb) and math.isfinite(feat.ub):
        raw.append((feat.lb + feat.ub) / 2.0)
    out = []
    for v in raw:
        if not math.isfinite(v):
            continue
        c = float(ens.cast_value(v))
        if _admissible(feat, c):
            out.append(c)
        elif _admissible(feat, v):  # a bound whose float32 lies past it (-0.2 of [-0.2, 1])
            out.append(v)
        if _in_zero_band(ens, v) and _admissible(feat, v):  # read as 0, an input of its own
            out.append(v)
    if feat.may_be_missing:
        out.append(math.nan)
    return out


def _in_zero_band(ens: Ensemble, v: float) -> bool:
    """Whether ``v`` is a value of LightGBM's zero band other than 0, which the library
    reads as 0 (``cast_value``) but which is an input of its own: a pair under x1.f < x2.f
    may take two of them."""
    return ens.cast == "float64z" and v != 0.0 and abs(v) <= ZERO_BAND


def feature_values(ens: Ensemble, f: int) -> list[float]:
    """One admissible value per routing signature of feature f (NaN last)."""
    cands = candidate_values(ens, f)
    nums = sorted({v for v in cands if not math.isnan(v)}, key=lambda v: (abs(v), v))
    nans = [v for v in cands if math.isnan(v)][:1]
    ordered = nums + nans
    if not ordered:
        raise ValueError(f"feature {ens.features[f].name!r} has no admissible value")
    seen: dict[tuple[int, ...], float] = {}
    for v, sig in zip(ordered, signatures(ens, f, ordered)):
        seen.setdefault(sig, v)
    return list(seen.values())


def _grid(values: list[list[float]]) -> np.ndarray:
    if not values:
        return np.zeros((1, 0))
    return np.array(list(itertools.product(*values)), dtype=np.float64).reshape(-1, len(values))


@dataclass
class Grid:
    """Every combination of feature values, shared part x varied part, with the library's
    and the IR's outputs on every row."""

    ens: Ensemble
    varying: list[int]
    X: np.ndarray  # (ns * nv, n_features); row s * nv + v
    ns: int
    nv: int
    lib_proba: np.ndarray
    lib_raw: np.ndarray
    ir_proba: np.ndarray
    ir_raw: np.ndarray

    @property
    def binary(self) -> bool:
        return self.ens.n_classes == 2 and self.ens.n_outputs == 1

    def ir_library_gap(self) -> tuple[float, np.ndarray | None, np.ndarray, np.ndarray]:
        """Largest |library - IR| probability difference over the grid, and also over
        probe rows: a few grid rows with each feature set to every candidate value (the
        grid keeps one value per IR signature, so a value the library routes otherwise
        than the IR would be missed). Returns (gap, row, library proba, IR proba)."""
        if not len(self.X):
            return 0.0, None, np.zeros(0), np.zeros(0)
        base = self.X[np.unique(np.linspace(0, len(self.X) - 1, 8).astype(int))]
        probes = []
        for f in range(self.ens.n_features):
            for v in candidate_values(self.ens, f):
                rows = base.copy()
                rows[:, f] = v
                probes.append(rows)
        P = np.concatenate(probes)
        rep = self.ens.replayer
        X = np.concatenate([self.X, P])
        lib = np.concatenate(
            [self.lib_proba, np.asarray(rep.predict_proba(P), dtype=np.float64).reshape(len(P), -1)]
        )
        ir = np.concatenate([self.ir_proba, self.ens.proba(P)])
        d = np.abs(lib - ir).max(axis=1)
        i = int(np.argmax(d))
        return float(d[i]), X[i], lib[i], ir[i]


def grid_size(ens: Ensemble) -> int:
    n = 1
    for f in range(ens.n_features):
        n *= len(feature_values(ens, f))
    return n


def build_grid(ens: Ensemble, vary, values=None) -> Grid:
    names = ens.feature_names
    varying = sorted(names.index(v) if isinstance(v, str) else int(v) for v in vary)
    shared = [f for f in range(ens.n_features) if f not in varying]
    vals = values or {f: feature_values(ens, f) for f in range(ens.n_features)}
    S = _grid([vals[f] for f in shared])
    V = _grid([vals[f] for f in varying])
    ns, nv = len(S), len(V)
    if ns * nv > MAX_ROWS:
        raise ValueError(f"grid too large: {ns} x {nv} rows")
    X = np.empty((ns * nv, ens.n_features))
    X[:, shared] = np.repeat(S, nv, axis=0)
    X[:, varying] = np.tile(V, (ns, 1))
    rep = ens.replayer
    if rep is None:
        raise ValueError("the library oracle needs an ensemble with a replayer")
    lp, lr, ip, ir = [], [], [], []
    for s in range(0, len(X), CHUNK):
        Xs = X[s : s + CHUNK]
        lp.append(np.asarray(rep.predict_proba(Xs), dtype=np.float64).reshape(len(Xs), -1))
        lr.append(np.asarray(rep.predict_raw(Xs), dtype=np.float64).reshape(len(Xs), -1))
        ip.append(ens.proba(Xs))
        ir.append(ens.raw(Xs))
    cat = np.concatenate
    return Grid(ens, varying, X, ns, nv, cat(lp), cat(lr), cat(ip), cat(ir))


def _class_of(ens: Ensemble, c):
    return ANY if c in (ANY, None) else int(c)


def side_ok(ens: Ensemble, gap: Gap, proba: np.ndarray, raw: np.ndarray) -> np.ndarray:
    """Binary: (n, 2) bool, column 0 "x1's side" (P >= 0.5+g), column 1 "x2's side".
    Multiclass: (n, C) bool, column c "class c beats every other class by the gap"."""
    proba = np.atleast_2d(proba)
    raw = np.atleast_2d(raw)
    g = gap.value
    if ens.n_classes == 2 and ens.n_outputs == 1:
        if gap.kind == "margin" and ens.link == LOGISTIC:
            r = raw[:, 0]
            return np.stack([r >= g, r <= -g], axis=1)
        p = proba[:, 1]
        return np.stack([p >= 0.5 + g, p <= 0.5 - g], axis=1)
    C = ens.n_classes
    out = np.zeros((len(proba), C), dtype=bool)
    for c in range(C):
        others = [k for k in range(C) if k != c]
        if gap.kind == "prob":
            # g * max_k P_k == max_k (g * P_k): rounding is monotone
            out[:, c] = proba[:, c] >= g * proba[:, others].max(axis=1)
        else:
            # raw_c - max_k raw_k == min_k (raw_c - raw_k): rounding is monotone
            out[:, c] = raw[:, c] - raw[:, others].max(axis=1) >= g
    return out


def pair_ok(ens: Ensemble, q: Query, ok1: np.ndarray, ok2: np.ndarray) -> np.ndarray:
    """Does a shared row admit the pair? ok1 / ok2: (ns, k) "some varied value of copy 1 /
    copy 2 meets column k" (columns as in ``side_ok``)."""
    if ens.n_classes == 2 and ens.n_outputs == 1:
        return ok1[:, 0] & ok2[:, 1]
    C = ens.n_classes
    c1, c2 = (_class_of(ens, c) for c in q.classes)
    if c1 != ANY and c2 != ANY:
        return ok1[:, c1] & ok2[:, c2]
    if c1 != ANY:
        return ok1[:, c1] & ok2[:, [k for k in range(C) if k != c1]].any(axis=1)
    if c2 != ANY:
        return ok1[:, [k for k in range(C) if k != c2]].any(axis=1) & ok2[:, c2]
    # any -> any other: two different classes, each met by some varied value
    return ok1.any(axis=1) & ok2.any(axis=1) & ((ok1 | ok2).sum(axis=1) >= 2)


@dataclass
class OracleAnswer:
    sensitive: bool
    witness: tuple[np.ndarray, np.ndarray] | None
    rows: int
    ir_sensitive: bool  # the same question asked of the IR's evaluation
    ir_library_gap: float  # largest |library - IR| probability on the grid and probe rows
    ir_library_note: str = ""  # where, when above IR_TOL


def library_oracle(ens: Ensemble, q: Query, grid: Grid | None = None) -> OracleAnswer:
    """Is there a pair, by the library's predict over every combination of values?"""
    if q.bounds or q.relations:
        raise NotImplementedError("the oracle does not handle extra bounds or relations")
    grid = grid or build_grid(ens, q.vary)
    ans = []
    for proba, raw in ((grid.lib_proba, grid.lib_raw), (grid.ir_proba, grid.ir_raw)):
        ok = side_ok(ens, q.gap, proba, raw).reshape(grid.ns, grid.nv, -1)
        anyv = ok.any(axis=1)
        both = pair_ok(ens, q, anyv, anyv)
        ans.append((both, ok))
    both, ok = ans[0]
    witness = None
    if both.any():
        s = int(np.flatnonzero(both)[0])
        witness = _pick_witness(ens, q, grid, s, ok[s])
    gap, row, lib, ir = grid.ir_library_gap()
    note = ""
    if gap > IR_TOL:
        note = (
            f"the IR and the library's predict differ by {gap:.3g} on {_fmt(row)}: "
            f"library {lib.tolist()}, IR {ir.tolist()}"
        )
    return OracleAnswer(bool(both.any()), witness, len(grid.X), bool(ans[1][0].any()), gap, note)


def _pick_witness(ens, q, grid: Grid, s: int, ok: np.ndarray):
    row = lambda v: grid.X[s * grid.nv + v].copy()  # noqa: E731
    if grid.binary:
        return row(int(np.flatnonzero(ok[:, 0])[0])), row(int(np.flatnonzero(ok[:, 1])[0]))
    C = ens.n_classes
    c1, c2 = (_class_of(ens, c) for c in q.classes)
    for a in range(C) if c1 == ANY else [c1]:
        for b in range(C) if c2 == ANY else [c2]:
            if a != b and ok[:, a].any() and ok[:, b].any():
                return row(int(np.flatnonzero(ok[:, a])[0])), row(int(np.flatnonzero(ok[:, b])[0]))
    return None


def best_gap(ens: Ensemble, grid: Grid, q: Query, kind: str) -> float:
    """The largest gap (of the kind) for which the library grid still has a pair."""
    P, R = grid.lib_proba, grid.lib_raw
    if grid.binary:
        if kind == "margin" and ens.link == LOGISTIC:
            hi, lo = R[:, 0], -R[:, 0]
        else:
            hi, lo = P[:, 1] - 0.5, 0.5 - P[:, 1]
        hi = hi.reshape(grid.ns, grid.nv).max(axis=1)
        lo = lo.reshape(grid.ns, grid.nv).max(axis=1)
        return float(np.max(np.minimum(hi, lo)))
    C = ens.n_classes
    score = np.empty((len(P), C))
    for c in range(C):
        others = [k for k in range(C) if k != c]
        if kind == "prob":
            with np.errstate(divide="ignore", invalid="ignore"):
                score[:, c] = P[:, c] / P[:, others].max(axis=1)
        else:
            score[:, c] = R[:, c] - R[:, others].max(axis=1)
    score = np.nan_to_num(score, nan=0.0)  # 0/0; x/0 stays inf
    best = score.reshape(grid.ns, grid.nv, C).max(axis=1)  # (ns, C)
    c1, c2 = (_class_of(ens, c) for c in q.classes)
    pairs = [
        (a, b)
        for a in (range(C) if c1 == ANY else [c1])
        for b in (range(C) if c2 == ANY else [c2])
        if a != b
    ]
    return float(max(np.max(np.minimum(best[:, a], best[:, b])) for a, b in pairs))


# =======================================================================================
# checking one pipeline run
# =======================================================================================
GUROBI_LIMIT = "license refused the model as too large"


def check_result(ens: Ensemble, q: Query, oracle: OracleAnswer, r) -> list[str]:
    """Problems with one pipeline result, given the oracle's answer (empty: all good)."""
    probs = []
    if r.status == "error":
        if q.plan.backend == "gurobi" and GUROBI_LIMIT in (r.error or ""):
            n_v, n_c = r.stats.get("vars", 0), r.stats.get("constraints", 0)
            if n_v > 2000 or n_c > 2000:
                return []
            probs.append(f"gurobi refused a model within its limits ({n_v} vars, {n_c} rows)")
            return probs
        return [f"error: {r.error}"]
    if r.status == "unknown":
        return [f"unknown: {r.message}"]
    if r.status == "insensitive" and oracle.sensitive:
        probs.append(
            "UNSOUND: insensitive, but the library's predict meets the gap on "
            f"x1={_fmt(oracle.witness[0])}, x2={_fmt(oracle.witness[1])}"
        )
    if r.status == "sensitive":
        probs += check_witness(ens, q, r)
        if not oracle.sensitive and not probs:
            probs.append(
                "sensitive with a witness the library confirms, but the oracle's grid has no "
                "pair (an oracle blind spot)"
            )
    return probs


def _fmt(x) -> str:
    return "[" + ", ".join("nan" if v != v else f"{v!r}" for v in np.asarray(x).tolist()) + "]"


def check_witness(ens: Ensemble, q: Query, r) -> list[str]:
    """The witness of a 'sensitive' answer: validated, admissible, equal outside the
    varied features, and meeting the gap by the library's own predict (asked again here)."""
    probs = []
    if not r.validated:
        probs.append("sensitive but not validated")
    w = getattr(r, "witness_arrays", None)
    if w is None:
        return probs + ["sensitive without a witness"]
    x1, x2 = np.asarray(w.x1, dtype=np.float64), np.asarray(w.x2, dtype=np.float64)
    vary = {ens.feature_index(v) for v in q.vary}
    for f, feat in enumerate(ens.features):
        for x in (x1, x2):
            if not _admissible(feat, float(x[f])):
                probs.append(f"witness value {x[f]!r} of {feat.name} is not admissible")
        if f not in vary and not (x1[f] == x2[f] or (math.isnan(x1[f]) and math.isnan(x2[f]))):
            probs.append(f"witness differs on {feat.name}, which is not varied")
    X = np.stack([x1, x2])
    rep = ens.replayer
    proba = np.asarray(rep.predict_proba(X), dtype=np.float64).reshape(2, -1)
    raw = np.asarray(rep.predict_raw(X), dtype=np.float64).reshape(2, -1)
    ok = side_ok(ens, q.gap, proba, raw)
    if ens.n_classes == 2 and ens.n_outputs == 1:
        good = bool(ok[0, 0] and ok[1, 1])
    else:
        c1, c2 = (_class_of(ens, c) for c in q.classes)
        a = [c1] if c1 != ANY else [c for c in range(ens.n_classes) if c2 == ANY or c != c2]
        good = False
        for ca in a:
            if not ok[0, ca]:
                continue
            b = [c2] if c2 != ANY else [c for c in range(ens.n_classes) if c != ca]
            good = good or any(ok[1, cb] for cb in b)
    if not good:
        probs.append(
            f"the library's predict rejects the witness: x1 {proba[0].tolist()}, "
            f"x2 {proba[1].tolist()}"
        )
    outs = r.outputs or {}
    for i, k in enumerate(("x1", "x2")):
        if k not in outs or not np.allclose(outs[k], proba[i], rtol=0, atol=1e-12):
            probs.append(f"reported outputs of {k} differ from the library's predict")
    return probs


# =======================================================================================
# random models of every frontend
# =======================================================================================
FAMILIES = (
    "xgb-binary",
    "xgb-multi",
    "lgb-binary",
    "lgb-multi",
    "sk-rf",
    "sk-et",
    "sk-gb",
    "sk-hgb",
    "sk-dt",
)


@dataclass
class ModelSpec:
    """A trained model saved to a file, and the feature declarations to put on it."""

    family: str
    path: Path
    declarations: tuple[Feature, ...] = ()  # replaces the loaded features (same names)
    info: dict = field(default_factory=dict)

    def load(self) -> Ensemble:
        return load_ensemble(self.path, self.declarations)


def load_ensemble(path: Path, declarations=()) -> Ensemble:
    from treesens.readers.load import load_model

    # the campaign's own scikit-learn models are joblib files it wrote itself
    ens = load_model(str(path), auto_details=False, trust_pickle=True)
    if declarations:
        if [f.name for f in declarations] != ens.feature_names:
            raise ValueError("the declarations name other features than the model")
        ens = ens.with_features(tuple(declarations))
    return ens


def _columns(rng, n: int, n_features: int, allow_cat: bool, allow_nan: bool):
    """Random columns: kinds, values (NaN where missing), and a label score."""
    kinds = []
    X = np.empty((n, n_features))
    score = np.zeros(n)
    for j in range(n_features):
        kind = rng.choice(
            ["real", "real", "integer", "binary"] + (["categorical"] if allow_cat else [])
        )
        if kind == "real":
            col = np.round(rng.normal(0, rng.choice([0.5, 1.0, 3.0]), n), int(rng.integers(1, 4)))
            eff = rng.normal() * np.tanh(col * rng.normal()) + rng.normal() * (col > rng.normal())
        elif kind == "integer":
            col = rng.integers(int(rng.integers(-5, 1)), int(rng.integers(2, 8)), n).astype(float)
            eff = rng.normal(size=int(col.max() - col.min()) + 1)[(col - col.min()).astype(int)]
        elif kind == "binary":
            col = rng.integers(0, 2, n).astype(float)
            eff = rng.normal() * col
        else:
            k = int(rng.integers(3, 7))
            col = rng.integers(0, k, n).astype(float)
            eff = rng.normal(0, 1.5, size=k)[col.astype(int)]
        score += eff
        kinds.append(str(kind))
        X[:, j] = col
    if n_features >= 2:
        a, b = rng.choice(n_features, 2, replace=False)
        score += rng.normal() * (X[:, a] > np.median(X[:, a])) * (X[:, b] > np.median(X[:, b]))
    nan_cols = []
    if allow_nan:
        for j in range(n_features):
            if kinds[j] != "binary" and rng.random() < 0.35:
                miss = rng.random(n) < rng.uniform(0.1, 0.3)
                X[miss, j] = np.nan
                score += rng.normal() * miss
                nan_cols.append(j)
    return kinds, X, score, nan_cols


def _labels(rng, score: np.ndarray, n_classes: int, X: np.ndarray) -> np.ndarray:
    n = len(score)
    noisy = score + rng.normal(0, 0.5, n)
    if n_classes == 2:
        y = (noisy > np.median(noisy)).astype(int)
    else:
        other = np.nan_to_num(X) @ rng.normal(size=X.shape[1])
        z = np.stack([noisy, other, -noisy - other] + [rng.normal(size=n)] * (n_classes - 3), 1)
        y = np.argmax(z[:, :n_classes] + rng.gumbel(size=(n, n_classes)) * 0.5, axis=1)
    for c in range(n_classes):  # every class present
        if not (y == c).any():
            y[rng.choice(n, 5, replace=False)] = c
    return y


def make_model(family: str, rng: np.random.Generator, workdir: Path, shrink: int = 0) -> ModelSpec:
    """Train one small model of ``family`` on random data and save it under workdir."""
    workdir.mkdir(parents=True, exist_ok=True)
    n_features = int(rng.integers(2, 5)) if shrink < 2 else 2
    n_rows = int(rng.integers(150, 400))
    n_trees = max(1, int(rng.integers(2, 9)) - 2 * shrink)
    depth = max(1, int(rng.integers(1, 5)) - shrink)
    multi = family.endswith("-multi") or (
        family.startswith("sk-") and family != "sk-dt" and rng.random() < 0.4
    )
    n_classes = int(rng.integers(3, 5)) if multi else 2
    allow_cat = family.startswith(("xgb", "lgb")) or family == "sk-hgb"
    allow_nan = family not in ("sk-gb",)
    kinds, X, score, nan_cols = _columns(rng, n_rows, n_features, allow_cat, allow_nan)
    if family != "sk-hgb" and not family.startswith(("xgb", "lgb")):
        kinds = ["real" if k == "categorical" else k for k in kinds]
    y = _labels(rng, score, n_classes, X)
    info = {
        "family": family,
        "n_features": n_features,
        "n_trees": n_trees,
        "depth": depth,
        "n_classes": n_classes,
        "kinds": kinds,
        "nan_cols": nan_cols,
        "rows": n_rows,
    }
    seed = int(rng.integers(2**31))
    cats = [j for j, k in enumerate(kinds) if k == "categorical"]
    if family.startswith("xgb"):
        path = _train_xgb(rng, X, y, kinds, cats, n_classes, n_trees, depth, seed, workdir, info)
    elif family.startswith("lgb"):
        path = _train_lgb(rng, X, y, cats, n_classes, n_trees, depth, seed, workdir, info)
    else:
        path = _train_sklearn(rng, family, X, y, cats, n_trees, depth, seed, workdir, info)
    ens = load_ensemble(path)
    decl = _declarations(rng, ens, X, kinds, nan_cols, family)
    return ModelSpec(family, path, decl, info)


def _train_xgb(rng, X, y, kinds, cats, n_classes, n_trees, depth, seed, workdir, info) -> Path:
    import pandas as pd
    import xgboost as xgb

    cols = {}
    for j, k in enumerate(kinds):
        if k == "categorical":
            # integer categories 0..k-1: the code of a category is its value
            codes = np.where(np.isnan(X[:, j]), -1, np.nan_to_num(X[:, j])).astype(int)
            cols[f"f{j}"] = pd.Categorical.from_codes(
                codes, categories=list(range(codes.max() + 1))
            )
        elif k == "integer" and not np.isnan(X[:, j]).any() and rng.random() < 0.5:
            cols[f"f{j}"] = X[:, j].astype(np.int64)  # feature type "int"
        else:
            cols[f"f{j}"] = X[:, j]
    df = pd.DataFrame(cols)
    params = dict(
        max_depth=depth,
        learning_rate=float(rng.choice([0.3, 0.7, 1.0, 1.5])),
        tree_method="hist" if cats or rng.random() < 0.7 else "exact",
        seed=seed,
        nthread=1,
        min_child_weight=float(rng.choice([0.0, 1.0])),
        max_bin=int(rng.choice([8, 32, 256])),
    )
    if cats:
        params["max_cat_to_onehot"] = int(rng.choice([1, 4]))
    if n_classes > 2:
        params["objective"] = str(rng.choice(["multi:softprob"] * 4 + ["multi:softmax"]))
        params["num_class"] = n_classes
    else:
        params["objective"] = str(
            rng.choice(["binary:logistic"] * 5 + ["binary:logitraw", "reg:logistic"])
        )
        if rng.random() < 0.3:
            params["base_score"] = float(rng.choice([0.2, 0.5, 0.8]))
    info["params"] = {k: v for k, v in params.items() if k != "seed"}
    dm = xgb.DMatrix(df, label=y, enable_categorical=bool(cats), missing=np.nan)
    booster = xgb.train(params, dm, num_boost_round=n_trees)
    path = workdir / ("model.ubj" if rng.random() < 0.25 else "model.json")
    booster.save_model(str(path))
    return path


def _train_lgb(rng, X, y, cats, n_classes, n_trees, depth, seed, workdir, info) -> Path:
    import lightgbm as lgb

    params = dict(
        objective="binary" if n_classes == 2 else "multiclass",
        num_leaves=max(2, 2**depth),
        max_depth=depth,
        learning_rate=float(rng.choice([0.3, 0.7, 1.0])),
        min_data_in_leaf=int(rng.choice([3, 10])),
        min_data_per_group=3,
        cat_smooth=1.0,
        max_cat_to_onehot=int(rng.choice([1, 4])),
        zero_as_missing=bool(rng.random() < 0.25),
        use_missing=bool(rng.random() < 0.9),
        max_bin=int(rng.choice([7, 31, 255])),
        seed=seed,
        deterministic=True,
        num_threads=1,
        verbose=-1,
    )
    if n_classes > 2:
        params["num_class"] = n_classes
    elif rng.random() < 0.2:
        params["sigmoid"] = float(rng.choice([0.5, 2.0]))
    if rng.random() < 0.15:
        params.update(boosting="rf", bagging_fraction=0.7, bagging_freq=1)
    info["params"] = {k: v for k, v in params.items() if k != "seed"}
    ds = lgb.Dataset(
        X, y, categorical_feature=cats or "auto", feature_name=[f"f{j}" for j in range(X.shape[1])]
    )
    booster = lgb.train(params, ds, num_boost_round=n_trees)
    if rng.random() < 0.2:
        path = workdir / "model_dump.json"
        path.write_text(json.dumps(booster.dump_model()))
    else:
        path = workdir / "model.txt"
        booster.save_model(str(path))
    return path


def _train_sklearn(rng, family, X, y, cats, n_trees, depth, seed, workdir, info) -> Path:
    import joblib
    from sklearn.ensemble import (
        ExtraTreesClassifier,
        GradientBoostingClassifier,
        HistGradientBoostingClassifier,
        RandomForestClassifier,
    )
    from sklearn.tree import DecisionTreeClassifier

    if family == "sk-rf":
        est = RandomForestClassifier(
            n_estimators=n_trees,
            max_depth=depth,
            max_features=rng.choice([None, "sqrt"]),
            bootstrap=bool(rng.random() < 0.7),
            random_state=seed,
        )
    elif family == "sk-et":
        est = ExtraTreesClassifier(
            n_estimators=n_trees,
            max_depth=depth,
            max_features=rng.choice([None, "sqrt"]),
            random_state=seed,
        )
    elif family == "sk-gb":
        binary = len(set(y.tolist())) == 2
        est = GradientBoostingClassifier(
            n_estimators=n_trees,
            max_depth=depth,
            learning_rate=float(rng.choice([0.3, 1.0])),
            loss="exponential" if binary and rng.random() < 0.3 else "log_loss",
            init="zero" if rng.random() < 0.2 else None,
            random_state=seed,
        )
    elif family == "sk-hgb":
        est = HistGradientBoostingClassifier(
            max_iter=n_trees,
            max_depth=depth + 1,
            max_leaf_nodes=max(2, 2**depth),
            learning_rate=float(rng.choice([0.3, 1.0])),
            categorical_features=cats or None,
            early_stopping=False,
            max_bins=int(rng.choice([15, 255])),
            min_samples_leaf=int(rng.choice([5, 20])),
            random_state=seed,
        )
    else:
        est = DecisionTreeClassifier(max_depth=depth + 1, random_state=seed)
    if family == "sk-gb":
        X = np.nan_to_num(X, nan=0.0)
    est.fit(X, y)
    info["params"] = {k: str(v) for k, v in est.get_params().items() if v is not None}
    path = workdir / "model.joblib"
    joblib.dump(est, str(path))
    return path


def _accepts_nan(ens: Ensemble) -> bool:
    try:
        x = np.full((1, ens.n_features), np.nan)
        p = np.asarray(ens.replayer.predict_proba(x), dtype=np.float64)
        return bool(np.isfinite(p).all())
    except Exception:  # noqa: BLE001 - the library refuses NaN
        return False


def _declarations(rng, ens: Ensemble, X, kinds, nan_cols, family) -> tuple[Feature, ...]:
    """Kinds, bounds, missing values and category names, as a user would declare them."""
    nan_ok = _accepts_nan(ens)
    feats = []
    for j, feat in enumerate(ens.features):
        col = X[:, j]
        lo, hi = float(np.nanmin(col)), float(np.nanmax(col))
        kind, lb, ub, cats = feat.kind, feat.lb, feat.ub, feat.categories
        if kinds[j] == "binary" and rng.random() < 0.8:
            kind, lb, ub = "binary", 0.0, 1.0
        elif kinds[j] == "integer" and kind != "categorical":
            kind = "integer" if rng.random() < 0.8 else kind
            if rng.random() < 0.6:
                lb, ub = lo, hi
        elif kinds[j] == "categorical" or kind == "categorical":
            kind = "categorical"
            if cats is None and rng.random() < 0.5:
                cats = tuple(f"k{c}" for c in range(int(hi) + 1))
            if cats is not None:
                lb, ub = 0.0, float(len(cats) - 1)
        else:
            u = rng.random()
            if u < 0.3:
                lb, ub = lo, hi
            elif u < 0.45:
                a, b = sorted(rng.uniform(lo, hi, 2).tolist())
                lb, ub = float(np.round(a, 2)), float(np.round(b, 2))
            elif u < 0.55:
                lb = float(np.round(np.nanmedian(col), 1))
        missing = nan_ok and (
            (j in nan_cols and rng.random() < 0.8) or (j not in nan_cols and rng.random() < 0.15)
        )
        if lb > ub:
            lb, ub = ub, lb
        feats.append(
            Feature(feat.name, kind, lb, ub, categories=cats, may_be_missing=bool(missing))
        )
    return tuple(feats)


# =======================================================================================
# queries
# =======================================================================================
NO_HEURISTIC = (("heuristic", False),)


def make_queries(rng, ens: Ensemble, values: dict, n_queries: int) -> list[tuple[Query, str]]:
    """Queries with gaps around the exact best gap the library allows (sharp tests of the
    relaxations), a little off it, and at random; each with a note of how it was chosen."""
    out = []
    names = ens.feature_names
    binary = ens.n_classes == 2 and ens.n_outputs == 1
    for _ in range(n_queries):
        k = int(rng.integers(1, len(names) + 1)) if rng.random() < 0.3 else 1
        vary = tuple(sorted(rng.choice(names, size=k, replace=False).tolist()))
        kind = "margin" if rng.random() < 0.25 else "prob"
        classes = None
        if not binary:
            C = ens.n_classes
            u = rng.random()
            c1, c2 = (int(v) for v in rng.choice(C, 2, replace=False))
            if u < 0.55:
                classes = (c1, c2)
            elif u < 0.75:
                classes = (c1, ANY)
            elif u < 0.9:
                classes = (ANY, c2)
            else:
                classes = (ANY, ANY)
        probe = Query(vary=vary, gap=Gap(1.0 if not binary else 0.0, kind), classes=classes)
        grid = build_grid(ens, vary, values)
        best = best_gap(ens, grid, probe, kind)
        lo_ok = 0.0 if binary or kind == "margin" else 1.0
        hi_ok = 0.4999 if binary and (kind == "prob" or ens.link != LOGISTIC) else math.inf
        if classes is not None and ANY in classes:
            lo_ok = 0.05 if kind == "margin" else 1.05  # no ties: "any other" is then exact
        if not binary:
            # a pure leaf makes a ratio infinite; gaps beyond these are another campaign
            # (and treesens refuses a margin gap above ln(MAX_RATIO))
            hi_ok = 1e4 if kind == "prob" else min(50.0, math.log(MAX_RATIO))
            if kind == "margin" and ens.link == PROBA:
                hi_ok = 0.999  # a difference of probabilities: a margin gap of 1 is refused
        u = rng.random()
        if u < 0.55 and lo_ok <= best <= hi_ok:
            how = str(rng.choice(["exact", "next-up", "next-down", "1e-7-up", "1e-7-down"]))
            g = {
                "exact": best,
                "next-up": float(np.nextafter(best, math.inf)),
                "next-down": float(np.nextafter(best, -math.inf)),
                "1e-7-up": best + 1e-7 * max(1.0, abs(best)),
                "1e-7-down": best - 1e-7 * max(1.0, abs(best)),
            }[how]
            note = f"best {best!r}, {how}"
        elif u < 0.8 and lo_ok <= best <= hi_ok:
            d = float(rng.choice([0.005, 0.02, 0.1]))
            g = best + d if rng.random() < 0.5 else best - d
            note = f"best {best!r}, {g - best:+.3g}"
        else:
            if binary:
                g = float(rng.choice([0.0, 0.05, 0.1, 0.2, 0.3, 0.45]))
            elif kind == "prob":
                g = float(rng.choice([1.0, 1.2, 1.5, 2.0, 4.0, 100.0]))
            else:
                g = float(rng.choice([0.0, 0.2, 0.5, 1.0, 2.0]))
            note = f"best {best!r}, fixed"
        g = min(max(g, lo_ok), hi_ok)
        q = Query(vary=vary, gap=Gap(float(g), kind), classes=classes, plan=Plan(timeout=60.0))
        out.append((q, note))
    return out


def run_configs(query_index: int, backends: list[str]) -> list[tuple[str, frozenset, tuple]]:
    """(backend, passes, options) for one query: every backend once, with the pass
    combination cycling so that every backend sees all 16 within 16 queries; plus the
    default configuration (CP-SAT, all passes, heuristic on)."""
    out = []
    for b, name in enumerate(backends):
        passes = ALL_PASS_SETS[(query_index + 7 * b) % len(ALL_PASS_SETS)]
        out.append((name, passes, NO_HEURISTIC))
    out.append(("cpsat" if "cpsat" in backends else backends[0], frozenset(PASS_NAMES), ()))
    return out


# =======================================================================================
# regression cases
# =======================================================================================
def _num(x: float):
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def _unnum(x) -> float:
    return float(x)  # also "inf", "-inf", "nan"


def _feature_json(f: Feature) -> dict:
    return {
        "name": f.name,
        "kind": f.kind,
        "lb": _num(f.lb),
        "ub": _num(f.ub),
        "categories": list(f.categories) if f.categories is not None else None,
        "may_be_missing": f.may_be_missing,
    }


def _feature_from(d: dict) -> Feature:
    cats = d.get("categories")
    return Feature(
        d["name"],
        d["kind"],
        _unnum(d["lb"]),
        _unnum(d["ub"]),
        categories=tuple(cats) if cats is not None else None,
        may_be_missing=bool(d.get("may_be_missing", False)),
    )


def query_json(q: Query) -> dict:
    return {
        "vary": list(q.vary),
        "gap": q.gap.value,
        "gap_kind": q.gap.kind,
        "classes": list(q.classes) if q.classes is not None else None,
        "passes": sorted(q.plan.passes),
        "backend": q.plan.backend,
        "timeout": q.plan.timeout,
        "seed": q.plan.seed,
        "options": dict(q.plan.options),
    }


def query_from(d: dict) -> Query:
    return Query(
        vary=tuple(d["vary"]),
        gap=Gap(float(d["gap"]), d.get("gap_kind", "prob")),
        classes=tuple(d["classes"]) if d.get("classes") is not None else None,
        plan=Plan(
            passes=frozenset(d.get("passes", PASS_NAMES)),
            backend=d.get("backend", "cpsat"),
            timeout=float(d.get("timeout", 60.0)),
            seed=int(d.get("seed", 0)),
            options=tuple(sorted((d.get("options") or {}).items())),
        ),
    )


def save_case(
    spec_path: Path,
    ens: Ensemble,
    q: Query,
    oracle: OracleAnswer,
    result,
    problems: list[str],
    *,
    origin: str,
    cases_dir: Path | None = None,
    known_issue: str | None = "untriaged: saved by the differential campaign",
) -> Path:
    """Save the model file and the query as a regression case; returns its folder."""
    cases_dir = Path(cases_dir or os.environ.get("TS_REGRESSIONS_DIR") or CASES_DIR)
    qj = query_json(q)
    key = hashlib.sha1(
        (Path(spec_path).read_bytes().hex()[:4096] + json.dumps(qj, sort_keys=True)).encode()
    ).hexdigest()[:10]
    d = cases_dir / f"{origin.replace(':', '-').replace('/', '-')}-{key}"
    d.mkdir(parents=True, exist_ok=True)
    model_name = "model" + "".join(Path(spec_path).suffixes)
    shutil.copyfile(spec_path, d / model_name)
    case = {
        "origin": origin,
        "saved": time.strftime("%Y-%m-%d %H:%M:%S"),
        "model_file": model_name,
        "features": [_feature_json(f) for f in ens.features],
        "query": qj,
        "oracle": {
            "sensitive": oracle.sensitive,
            "witness": None
            if oracle.witness is None
            else [[_num(v) for v in w] for w in oracle.witness],
        },
        "observed": {
            "status": getattr(result, "status", None),
            "error": getattr(result, "error", None),
            "message": getattr(result, "message", None),
            "witness": getattr(result, "witness", None),
            "problems": problems,
        },
        "known_issue": known_issue,
    }
    (d / "case.json").write_text(json.dumps(case, indent=2, default=str) + "\n")
    return d


@dataclass
class Case:
    folder: Path
    data: dict

    @property
    def name(self) -> str:
        return self.folder.name

    def ensemble(self) -> Ensemble:
        feats = tuple(_feature_from(d) for d in self.data["features"])
        return load_ensemble(self.folder / self.data["model_file"], feats)

    def query(self) -> Query:
        return query_from(self.data["query"])


def load_cases(cases_dir: Path | None = None) -> list[Case]:
    cases_dir = Path(cases_dir or os.environ.get("TS_REGRESSIONS_DIR") or CASES_DIR)
    if not cases_dir.is_dir():
        return []
    out = []
    for p in sorted(cases_dir.glob("*/case.json")):
        out.append(Case(p.parent, json.loads(p.read_text())))
    return out


def replay_case(case: Case) -> tuple[OracleAnswer, object, list[str]]:
    """Run a saved case again: (oracle answer, pipeline result, problems)."""
    from treesens.driver import solve_query

    ens = case.ensemble()
    q = case.query()
    oracle = library_oracle(ens, q)
    r = solve_query(ens, q)
    probs = check_result(ens, q, oracle, r)
    if oracle.ir_library_note:
        probs.insert(0, "IR-LIBRARY: " + oracle.ir_library_note)
    return oracle, r, probs


# =======================================================================================
# one ensemble of the campaign
# =======================================================================================
def campaign_model(index: int, seed: int, workdir: Path) -> tuple[ModelSpec, Ensemble, dict]:
    """The index-th model of the campaign (family by index, everything else by seed):
    retrained smaller (up to 3 times) when its grid would be too large to enumerate."""
    family = FAMILIES[index % len(FAMILIES)]
    for shrink in range(4):
        rng = np.random.default_rng([seed, index, shrink])
        spec = make_model(family, rng, workdir / f"try{shrink}", shrink)
        ens = spec.load()
        values = {f: feature_values(ens, f) for f in range(ens.n_features)}
        if math.prod(len(v) for v in values.values()) <= MAX_ROWS:
            break
    else:
        raise RuntimeError(f"model {index} ({family}): grid too large even when shrunk")
    spec.info["rng"] = rng
    return spec, ens, values


@dataclass
class RunRecord:
    index: int
    family: str
    query: str
    backend: str
    passes: str
    heuristic: bool
    oracle: bool
    status: str
    seconds: float
    problems: list[str]
    saved: str | None = None


def _problem_class(p: str) -> str:
    return p.split(":", 1)[0].split(" ", 1)[0]


def campaign_ensemble(
    index: int,
    *,
    seed: int,
    n_queries: int,
    backends: list[str],
    workdir: Path,
    save: bool = True,
    cases_dir: Path | None = None,
) -> tuple[dict, list[RunRecord]]:
    """Train the index-th model, ask n_queries queries of it on every backend (and the
    default configuration), compare with the library oracle; save failures as cases."""
    from treesens.driver import solve_query

    spec, ens, values = campaign_model(index, seed, workdir)
    rng = spec.info.pop("rng")
    queries = make_queries(rng, ens, values, n_queries)
    records: list[RunRecord] = []
    meta = {
        "index": index,
        "family": spec.family,
        "file": spec.path.name,
        "trees": len(ens.trees),
        "leaves": ens.n_leaves(),
        "features": ens.n_features,
        "classes": ens.n_classes,
        "kinds": [f.kind for f in ens.features],
        "missing": [f.may_be_missing for f in ens.features],
        "queries": [],
    }
    for j, (q, note) in enumerate(queries):
        grid = build_grid(ens, q.vary, values)
        oracle = library_oracle(ens, q, grid)
        meta["queries"].append(
            {
                "vary": list(q.vary),
                "gap": q.gap.value,
                "kind": q.gap.kind,
                "classes": q.classes,
                "note": note,
                "oracle": oracle.sensitive,
                "ir_oracle": oracle.ir_sensitive,
                "rows": oracle.rows,
                "ir_library_gap": oracle.ir_library_gap,
            }
        )
        saved_kinds: set[str] = set()
        mismatch = ["IR-LIBRARY: " + oracle.ir_library_note] if oracle.ir_library_note else []
        for backend, passes, options in run_configs(index * n_queries + j, backends):
            qq = q.planned(backend=backend, passes=passes, options=options)
            t0 = time.time()
            try:
                r = solve_query(ens, qq)
                probs = check_result(ens, qq, oracle, r)
                status = r.status
            except Exception as e:  # noqa: BLE001 - a crash is a finding too
                r, status = None, "crash"
                probs = [f"crash: {type(e).__name__}: {e}"]
            probs = mismatch + probs
            rec = RunRecord(
                index,
                spec.family,
                f"{','.join(q.vary)} g={q.gap} classes={q.classes} ({note})",
                backend,
                "+".join(sorted(passes)) or "none",
                not options,
                oracle.sensitive,
                status,
                time.time() - t0,
                probs,
            )
            if probs and save:
                kinds = {_problem_class(p) for p in probs}
                if not kinds <= saved_kinds:
                    saved_kinds |= kinds
                    d = save_case(
                        spec.path,
                        ens,
                        qq,
                        oracle,
                        r,
                        probs,
                        origin=f"campaign-s{seed}-i{index}-q{j}-{backend}",
                        cases_dir=cases_dir,
                    )
                    rec.saved = str(d)
            records.append(rec)
    return meta, records
