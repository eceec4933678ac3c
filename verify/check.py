"""Re-check a certificate of "insensitive" against the model, from the trees up.

The proof is a binary tree of splits over the pair space (one column per feature
outside the varied set, two per varied feature: one per input), so its leaves cover the
whole space by construction; the checker walks it and, at every leaf (a pruned box),
recomputes the bound of the named gap row from the model's trees and requires it below
the row's threshold:

* ``x1``: the largest score x1 can reach in the box is below the gap's margin;
* ``x2``: the smallest score x2 can reach is above minus the margin;
* ``sum``: the largest m(x1) - m(x2) over pairs in the box is below twice the margin
  (a tree that reads no varied feature adds the same leaf to both inputs).

Scores are relaxed by a bound on float32 accumulation, as any sound proof must be.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from .claims import Row, claim_of, part_key, part_rows, required_parts
from .models import Model, ModelError, Tree, read_model

FORMAT = "treesens-certificate"
VERSIONS = (1, 2)  # 1: binary probability gaps only (a ``proof``); 2: every claim (``parts``)
INF = math.inf


@dataclass(frozen=True)
class Verdict:
    valid: bool
    message: str
    boxes: int = 0


class CertificateError(Exception):
    """The file is not a certificate that can be checked (bad input, exit code 2)."""


class ModelUnreadable(CertificateError):
    """The model file the certificate names (or the one given) cannot be read."""


@dataclass(frozen=True)
class Domain:
    lb: float
    ub: float
    integer: bool


def verify_file(path: str | Path, model_path: str | None = None) -> Verdict:
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CertificateError(f"{path}: not a readable certificate ({e})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise CertificateError(f"{path}: not a treesens certificate (format {FORMAT!r})")
    try:
        return _verify(doc, model_path, Path(path).parent)
    except (KeyError, TypeError, ValueError, IndexError) as e:
        return Verdict(False, f"malformed certificate: {type(e).__name__}: {e}")


def named_model(stated: str, folder: Path) -> Path:
    """The model a certificate names: a relative path is read from the certificate's
    folder (where treesens writes it from), else, for a certificate written by an
    earlier treesens, from the working directory."""
    p = Path(stated)
    if p.is_absolute():
        return p
    beside = folder / p
    return beside if beside.exists() or not p.exists() else p


def _verify(doc: dict, model_path: str | None, folder: Path) -> Verdict:
    m = doc["model"]
    path = Path(model_path) if model_path else named_model(m["file"], folder)
    try:
        data = path.read_bytes()
    except OSError as e:
        given = "" if model_path else " (the path the certificate names, from its folder)"
        raise ModelUnreadable(f"{path}{given}: cannot read the model ({e.strerror})") from None
    if hashlib.sha256(data).hexdigest() != m["sha256"]:
        return Verdict(False, f"{path} is not the model the certificate was written for")
    try:
        model = read_model(
            str(path),
            m["library"],
            float(m.get("base_score", 0.5)),
            m.get("test", "<="),
            doc.get("maps"),
            int(m.get("num_class", 1)),
        )
    except ModelError as e:
        return Verdict(False, f"cannot check this model: {e}")
    q = doc["question"]
    if m["library"] == "xgboost-dump":  # a dump names no features: the certificate's
        if len(q["features"]) < len(model.features):
            return Verdict(False, "the model reads more features than the certificate names")
        model = replace(model, features=list(q["features"]))
    if list(q["features"]) != model.features:
        return Verdict(False, "the certificate's features are not the model's")
    return _check_claim(doc, model)


def _check_claim(doc: dict, model: Model) -> Verdict:
    """Walk every part of the proof the claim needs, with the rows the checker derives
    from the claim (verify/claims.py)."""
    version = int(doc.get("version", 1))
    if version not in VERSIONS:
        raise CertificateError(f"certificate version {version}: this checker reads 1 and 2")
    claim = claim_of(doc)
    parts = doc["parts"] if version >= 2 else [{"proof": doc["proof"]}]
    need = required_parts(model, claim)
    keys = [part_key(model, claim, part) for part in parts]
    if sorted(keys) != sorted(need) or len(set(keys)) != len(keys):
        shown = ", ".join(_key_text(k) for k in need)
        return Verdict(False, f"the proof's parts are not the ones the claim needs ({shown})")
    checker = Checker(model, doc["question"], doc["columns"])
    boxes = 0
    for part, key in zip(parts, keys, strict=True):
        verdict = checker.run(part["proof"], part_rows(model, claim, part))
        if not verdict.valid:
            where = f"classes {_key_text(key)}: " if key else ""
            return replace(verdict, message=where + verdict.message)
        boxes += verdict.boxes
    meets = "none meets the change" if claim.kind == "change" else "none meets the gap"
    if len(parts) > 1:
        message = (
            f"{len(parts)} proofs, one per class pair, of {boxes:,} boxes in all: each "
            f"covers the pair space, {meets}"
        )
    else:
        covers = "box covers" if boxes == 1 else "boxes cover"
        message = f"{boxes:,} {covers} the pair space, {meets}"
    if claim.max_gap_upper:
        message += f"; a max gap's upper bound: {claim.describe()}"
    elif version >= 2:
        message += f"; {claim.describe()}"
    return Verdict(True, message, boxes)


def _key_text(key: tuple) -> str:
    return f"{key[0]} -> {key[1]}" if key else "the one part"


def _bound(v) -> float:
    return float(v) if not isinstance(v, str) else float(v.replace("inf", "Infinity"))


class Checker:
    def __init__(self, model: Model, question: dict, columns: list):
        self.m = model
        names = model.features
        self.varied = {names.index(v) for v in question["vary"]}
        self.domain = [
            Domain(_bound(d["lb"]), _bound(d["ub"]), bool(d["integer"])) for d in question["domain"]
        ]
        if len(self.domain) != len(names):
            raise ValueError("one domain entry per feature expected")
        self.columns = [(int(f), c) for f, c in columns]
        self.col_of = [{}, {}]  # per input: feature -> column
        for i, (f, c) in enumerate(self.columns):
            for k in (0, 1):
                if c is None or c == k + 1:
                    self.col_of[k][f] = i
        for k in (0, 1):
            if sorted(self.col_of[k]) != list(range(len(names))):
                raise ValueError("the columns do not cover every feature of both inputs")
            if any(
                (self.columns[self.col_of[k][f]][1] is None) == (f in self.varied)
                for f in range(len(names))
            ):
                raise ValueError("a varied feature must have a column per input")
        self.eps = self._relaxation()
        self.reads_varied = [_reads(t, self.varied) for t in model.trees]
        self._tables: dict[tuple, _Table] = {}
        self._leaves: dict[tuple[int, int], list] = {}

    def _relaxation(self) -> float:
        """How far the library's accumulation may move one raw score (in raw units):
        2^-20 of its largest sum, or for a float32 sum taken tree by tree (XGBoost),
        2^-24 of every partial sum's bound and of the result's, when that is larger; the
        largest over the outputs."""
        s = self.m.margin_per_logit
        worst = 0.0
        for k in range(self.m.n_outputs):
            tops = [_top(t, k) * s for t in self.m.trees]
            offset = abs(self.m.offset_of(k)) * s
            relax = 2.0**-20 * (sum(tops) + offset)
            if self.m.float32_sums:
                partial, err = offset, 0.0
                for top in tops:
                    if top:
                        partial += top
                        err += 2.0**-24 * partial
                relax = max(relax, err + 2.0**-24 * partial)
            worst = max(worst, relax)
        return (worst + 1e-7) / s

    # ---- intervals, normalised so that two meet iff max(lo) < min(hi) ----------
    def _norm(self, f: int, lo: float, hi: float) -> tuple[float, float]:
        """An interval of the library's test ([lo, hi) for "<", (lo, hi] for "<=") of
        feature f, as the same set of admissible values with integer ends for an
        integer feature; two normalised intervals share a value iff max lo < min hi."""
        if not self.domain[f].integer:
            return lo, hi
        if self.m.test == "<":  # [lo, hi) holds the integers [ceil lo, ceil hi)
            return _ceil(lo), _ceil(hi)
        return _floor(lo), _floor(hi)  # (lo, hi] holds (floor lo, floor hi]

    def _domain_interval(self, f: int) -> tuple[float, float]:
        d = self.domain[f]
        lb, ub = d.lb, d.ub
        if self.m.float32:  # the library compares float32(x): x in [lb, ub] maps here
            lb, ub = _f32_down(lb), _f32_up(ub)
        if self.m.test == "<":  # [lb, ub] as [lb, after(ub))
            lo, hi = lb, (_after32(ub) if self.m.float32 else _after(ub))
        else:  # [lb, ub] as (before(lb), ub]
            lo, hi = (_before32(lb) if self.m.float32 else _before(lb)), ub
        return self._norm(f, lo, hi)

    def _split(self, lo: float, hi: float, t: float):
        """The (yes, no) parts of an interval at threshold t (the test holds on yes)."""
        return (lo, min(hi, t)), (max(lo, t), hi)

    # ---- the leaves as boxes of the pair space ----------------------------------
    def _leaf_boxes(self, t: Tree, k: int) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """Every leaf input k can reach within the domain, with its box (normalised
        per column of the pair space)."""
        n_cols = len(self.columns)
        lo0 = np.array([self._domain_interval(f)[0] for f, _ in self.columns])
        hi0 = np.array([self._domain_interval(f)[1] for f, _ in self.columns])
        out = []
        stack = [(0, {})]
        while stack:
            n, path = stack.pop()
            f = t.feature[n]
            if f < 0:
                lo, hi = lo0.copy(), hi0.copy()
                for g, (a, b) in path.items():
                    c = self.col_of[k][g]
                    na, nb = self._norm(g, a, b)
                    lo[c], hi[c] = max(lo[c], na), min(hi[c], nb)
                if np.all(lo < hi):
                    out.append((n, lo, hi))
                continue
            a, b = path.get(f, (-INF, INF))
            yes, no = self._split(a, b, t.threshold[n])
            stack.append((t.right[n], {**path, f: no}))
            stack.append((t.left[n], {**path, f: yes}))
        assert n_cols == len(lo0)
        return out

    def _boxes(self, ti: int, k: int) -> list:
        if (ti, k) not in self._leaves:
            self._leaves[ti, k] = self._leaf_boxes(self.m.trees[ti], k)
        return self._leaves[ti, k]

    def _table(self, row: Row) -> _Table:
        """The row's leaves (or leaf pairs) of every tree as boxes with their weight in
        the row; a tree that adds nothing to it is left out."""
        key = (row.a, row.b)
        if key in self._tables:
            return self._tables[key]
        trees = []
        for ti, t in enumerate(self.m.trees):
            wa, wb = _weights(t, row.a), _weights(t, row.b)
            if wa is None and wb is None:
                continue
            if wb is None:
                trees.append([(lo, hi, wa[n]) for n, lo, hi in self._boxes(ti, 0)])
            elif wa is None:
                trees.append([(lo, hi, wb[n]) for n, lo, hi in self._boxes(ti, 1)])
            elif not self.reads_varied[ti]:  # both inputs reach the same leaf
                if all(wa[n] + wb[n] == 0.0 for n, _, _ in self._boxes(ti, 0)):
                    continue  # opposite weights: the tree drops out
                trees.append([(lo, hi, wa[n] + wb[n]) for n, lo, hi in self._boxes(ti, 0)])
            else:
                pairs = []
                for n1, lo1, hi1 in self._boxes(ti, 0):
                    for n2, lo2, hi2 in self._boxes(ti, 1):
                        lo = self._pair_side(lo1, lo2, np.maximum)
                        hi = self._pair_side(hi1, hi2, np.minimum)
                        if np.all(lo < hi):
                            pairs.append((lo, hi, wa[n1] + wb[n2]))
                trees.append(pairs)
        self._tables[key] = _Table.of(trees)
        return self._tables[key]

    def _offset(self, row: Row) -> float:
        out = 0.0
        for coefs in (row.a, row.b):
            for k, c in enumerate(coefs or ()):
                out += c * self.m.offset_of(k)
        return out

    def _pair_side(self, a: np.ndarray, b: np.ndarray, meet) -> np.ndarray:
        """A leaf pair's box: x1's leaf bounds the columns of input 1, x2's those of
        input 2, both the shared columns."""
        out = meet(a, b)
        for i, (_, c) in enumerate(self.columns):
            if c == 1:
                out[i] = a[i]
            elif c == 2:
                out[i] = b[i]
        return out

    # ---- the walk -------------------------------------------------------------
    def run(self, proof: list, rows: dict[str, Row]) -> Verdict:
        """Walk one part of the proof: its splits must partition the pair space, and at
        each pruned box the named row's bound, recomputed, must be the stated one and lie
        below the row's threshold (its right-hand side less the relaxation)."""
        threshold = {name: r.rhs - self.eps * r.weight for name, r in rows.items()}
        box = [(-INF, INF)] * len(self.columns)
        stack = [box]
        pruned = 0
        for i, step in enumerate(proof):
            if not stack:
                return Verdict(False, f"step {i}: the proof goes on after covering the space")
            box = stack.pop()
            if step[0] == "split":
                c, t = int(step[1]), float(step[2])
                yes, no = self._split(*box[c], t)
                no_box, yes_box = list(box), list(box)
                yes_box[c], no_box[c] = yes, no
                stack.append(no_box)
                stack.append(yes_box)
                continue
            name = step[1]
            if step[0] != "prune" or name not in rows:
                return Verdict(False, f"step {i}: unknown step {step!r}")
            row = rows[name]
            lo = np.array([self._norm(f, *box[c])[0] for c, (f, _) in enumerate(self.columns)])
            hi = np.array([self._norm(f, *box[c])[1] for c, (f, _) in enumerate(self.columns)])
            bound = self._offset(row) + self._table(row).bound(lo, hi)
            stated = float(step[2]) / self.m.margin_per_logit  # logit units -> raw
            # the stated bound must be the recomputed one (the offset may be read with a
            # float32 rounding's difference: within the relaxation)
            if not math.isclose(bound, stated, rel_tol=1e-6, abs_tol=self.eps * row.weight):
                return Verdict(
                    False,
                    f"box {pruned} (step {i}): its {name} bound is {bound:.9g}, not the "
                    f"{stated:.9g} the certificate states",
                    pruned,
                )
            if not bound < threshold[name]:
                return Verdict(
                    False,
                    f"box {pruned} (step {i}): its {name} bound {bound:.9g} does not "
                    f"reach below {threshold[name]:.9g}",
                    pruned,
                )
            pruned += 1
        if stack:
            return Verdict(False, f"the proof leaves {len(stack)} boxes of the pair space open")
        covers = "box covers" if pruned == 1 else "boxes cover"
        return Verdict(True, f"{pruned:,} {covers} the pair space, none meets the gap", pruned)


def _reads(t: Tree, varied: set[int]) -> bool:
    return any(f in varied for f in t.feature if f >= 0)


def _top(t: Tree, k: int) -> float:
    """The tree's largest |value| on output k (0 when it adds nothing to k)."""
    if t.values is not None:
        return max((abs(v[k]) for v in t.values), default=0.0)
    return max((abs(v) for v in t.value), default=0.0) if t.output == k else 0.0


def _weights(t: Tree, coefs: tuple[float, ...] | None) -> list[float] | None:
    """Per node, the leaf's weight in a row's side (None: the tree adds nothing to it)."""
    if coefs is None:
        return None
    if t.values is not None:
        if not any(coefs):
            return None
        return [sum(c * v for c, v in zip(coefs, vals, strict=True)) for vals in t.values]
    c = coefs[t.output] if t.output < len(coefs) else 0.0
    if c == 0.0:
        return None
    return [c * v for v in t.value]


@dataclass(frozen=True)
class _Table:
    """Boxes with values, grouped by tree: the bound on a box is the sum over trees of
    the largest value among the tree's boxes that meet it."""

    lo: np.ndarray  # [boxes, columns]
    hi: np.ndarray
    value: np.ndarray  # [boxes]
    starts: np.ndarray  # first box of each tree
    empty_tree: bool  # some tree has no box at all: nothing is reachable

    @classmethod
    def of(cls, trees: list[list]) -> _Table:
        trees = [t for t in trees]
        flat = [b for t in trees for b in t]
        if not flat:
            z = np.zeros((0, 0))
            return cls(z, z, np.zeros(0), np.zeros(0, dtype=np.int64), bool(trees))
        lo = np.array([b[0] for b in flat])
        hi = np.array([b[1] for b in flat])
        value = np.array([b[2] for b in flat], dtype=np.float64)
        sizes = [len(t) for t in trees]
        starts = np.cumsum([0, *sizes[:-1]]).astype(np.int64)
        return cls(lo, hi, value, starts, any(n == 0 for n in sizes))

    def bound(self, lo: np.ndarray, hi: np.ndarray) -> float:
        if self.empty_tree:
            return -INF
        if self.value.size == 0:
            return 0.0
        cut = (lo > -INF) | (hi < INF)  # only the columns the box narrows can exclude
        live = np.all(
            np.maximum(self.lo[:, cut], lo[cut]) < np.minimum(self.hi[:, cut], hi[cut]), axis=1
        )
        top = np.maximum.reduceat(np.where(live, self.value, -INF), self.starts)
        return float(top.sum())


def _ceil(v: float) -> float:
    return float(math.ceil(v)) if math.isfinite(v) else v


def _floor(v: float) -> float:
    return float(math.floor(v)) if math.isfinite(v) else v


def _before(v: float) -> float:
    return float(np.nextafter(v, -INF)) if math.isfinite(v) else v


def _after(v: float) -> float:
    return float(np.nextafter(v, INF)) if math.isfinite(v) else v


def _before32(v: float) -> float:
    if not math.isfinite(v):
        return v
    return float(np.nextafter(np.float32(v), np.float32(-np.inf)))


def _after32(v: float) -> float:
    if not math.isfinite(v):
        return v
    return float(np.nextafter(np.float32(v), np.float32(np.inf)))


def _f32_down(v: float) -> float:
    if not math.isfinite(v):
        return v
    x = np.float32(v)
    return float(x if float(x) <= v else np.nextafter(x, np.float32(-np.inf)))


def _f32_up(v: float) -> float:
    if not math.isfinite(v):
        return v
    x = np.float32(v)
    return float(x if float(x) >= v else np.nextafter(x, np.float32(np.inf)))
