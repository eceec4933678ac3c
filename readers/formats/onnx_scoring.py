"""An ONNX tree-ensemble operator's scores -> the IR's classes, link and intercept.

onnxruntime's scoring (checked in tests/frontends/test_onnx_ir.py): a class or target
score is ``base_values + sum of leaf weights`` (AVERAGE: the sum over the number of trees),
summed in the weights' precision, then post-transformed: NONE, LOGISTIC (the sigmoid),
SOFTMAX; SOFTMAX_ZERO gives a class whose score is within 1e-7 of 0 the probability 0
(read as SOFTMAX only when no score can come that close); PROBIT is an approximation
onnxruntime computes in float32 (refused). A regressor's LOGISTIC / SOFTMAX is not applied
to one target, and TreeEnsemble's post_transform codes are read with LOGISTIC and SOFTMAX
swapped against the specification (onnxruntime 1.32): both refused.

A binary classifier whose weights all go to class id 0 has one score s: its probabilities
are ``[1 - s, s]`` when every weight is >= 0 and the post_transform NONE (random
forests), ``[sigmoid(-s), sigmoid(s)]`` with LOGISTIC (boosting); one storing class 1's
weight on every leaf of some tree is scored like a multiclass one (NONE or SOFTMAX); other
layouts switch between one and two scores row by row, and are refused. With LOGISTIC,
onnxruntime takes each of two scores' sigmoid: where every leaf gives class 0 minus class
1's weight and no base value is stated (CatBoost's export), that is ``[sigmoid(-s1),
sigmoid(s1)]``, read as one score, class 1's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...compiler.ensemble import IDENTITY, LOGISTIC, PROBA, SOFTMAX
from ...compiler.errors import InputError, UnsupportedModelError
from .onnx_operator import CLASSIFIER, ENSEMBLE, Operator
from .onnx_trees import LEAF, Node, OnnxTree

# SOFTMAX_ZERO treats a score within this of 0 as no score
SOFTMAX_ZERO_BAND = 1e-7


@dataclass(frozen=True)
class Scoring:
    """The IR's view of the scores: classes (0: a regressor), link, intercept, tree weight;
    ``one_score``: a binary operator with one score (its weights under class id 0), which
    onnxruntime puts in column 1 of its outputs."""

    n_classes: int
    link: str
    intercept: tuple[float, ...]
    scale: float = 1.0
    one_score: bool = False
    score_class: int = 0  # the class id whose weights make the one score


def _weights(op: Operator) -> list[float]:
    return [w for t in op.trees for n in t.nodes.values() for w in n.weights.values()]


def scoring_of(op: Operator, where: str) -> Scoring:
    """How the operator's scores make the IR's outputs; refusals name the file."""
    post = op.post_transform
    if post == "PROBIT":
        raise UnsupportedModelError(
            "post_transform PROBIT is computed by onnxruntime with an approximation the "
            "IR cannot state exactly",
            where,
        )
    if op.aggregate not in ("SUM", "AVERAGE"):
        raise UnsupportedModelError(
            f"aggregate_function {op.aggregate} is not a sum of the trees", where
        )
    if op.op_type == ENSEMBLE and post != "NONE":
        raise UnsupportedModelError(
            f"TreeEnsemble with post_transform {post}: onnxruntime reads this operator's "
            "codes for LOGISTIC and SOFTMAX the other way round from the ONNX specification",
            where,
        )
    if op.aggregate == "AVERAGE" and op.op_type == CLASSIFIER:
        raise UnsupportedModelError("a classifier averaging its trees", where)
    scale = 1.0 / len(op.trees) if op.aggregate == "AVERAGE" else 1.0
    if op.op_type == CLASSIFIER or (op.op_type == ENSEMBLE and op.n_outputs > 1):
        return _classes(op, scale, where)
    if op.n_outputs != 1:
        raise UnsupportedModelError(f"{op.n_outputs} targets: treesens reads one", where)
    if len(op.base_values) > 1:
        raise InputError(f"{len(op.base_values)} base_values for one target", where)
    if post != "NONE":  # onnxruntime does not apply LOGISTIC / SOFTMAX to one target
        raise UnsupportedModelError(
            f"post_transform {post} on a regressor of one target, which onnxruntime "
            "leaves unapplied (its predictions are the raw scores)",
            where,
        )
    return Scoring(0, IDENTITY, (op.base_values[0] if op.base_values else 0.0,), scale)


def _classes(op: Operator, scale: float, where: str) -> Scoring:
    C, post, base = op.n_outputs, op.post_transform, op.base_values
    if C < 2:
        raise UnsupportedModelError(f"a classifier of {C} class", where)
    nonneg = all(w >= 0 for w in _weights(op)) and all(b >= 0 for b in base)
    used = {o for t in op.trees for n in t.nodes.values() for o in n.weights}
    if C == 2 and used <= {0}:  # one score s: P(class 1) is s, or sigmoid(s)
        if len(base) > 1:
            raise UnsupportedModelError(
                "a binary classifier with one score and two base_values", where
            )
        b = (base[0] if base else 0.0,)
        if post == "LOGISTIC":
            return Scoring(2, LOGISTIC, b, scale, one_score=True)
        if post == "NONE" and nonneg:
            return Scoring(2, PROBA, b, scale, one_score=True)
        raise UnsupportedModelError(
            f"a binary classifier with one score, post_transform {post} and "
            f"{'weights >= 0' if nonneg else 'negative weights'}: onnxruntime's outputs "
            "are then no probabilities",
            where,
        )
    if C == 2 and not _always_scored(op, 1):
        raise UnsupportedModelError(
            "a binary classifier scoring class 1 on some leaves only (onnxruntime then "
            "switches between one and two scores row by row)",
            where,
        )
    if C == 2 and post == "LOGISTIC" and not base and _opposite_scores(op):
        return Scoring(2, LOGISTIC, (0.0,), scale, one_score=True, score_class=1)
    if len(base) not in (0, C) and not (C == 2 and len(base) == 1):
        raise InputError(f"{len(base)} base_values for {C} classes", where)
    if C == 2 and len(base) == 2:
        raise UnsupportedModelError(
            "a binary classifier with two scores and two base_values (onnxruntime then "
            "scores class 0 as minus class 1)",
            where,
        )
    intercept = tuple(base) + (0.0,) * (C - len(base))
    if post == "SOFTMAX_ZERO" and not _away_from_zero(op, intercept, scale):
        raise UnsupportedModelError(
            "post_transform SOFTMAX_ZERO, with class scores that can be 0 (onnxruntime "
            "then gives them probability 0, unlike a softmax)",
            where,
        )
    if post in ("SOFTMAX", "SOFTMAX_ZERO"):
        return Scoring(C, SOFTMAX, intercept, scale)
    if post == "NONE" and nonneg:
        return Scoring(C, PROBA, intercept, scale)
    raise UnsupportedModelError(
        f"a classifier with post_transform {post}"
        + ("" if nonneg else " and negative weights")
        + ": its outputs are no probabilities",
        where,
    )


def _always_scored(op: Operator, cls: int) -> bool:
    """Does every row get a weight for class ``cls`` (some tree has one on every leaf)?"""
    for t in op.trees:
        leaves = [n for n in _reachable(t) if n.mode == LEAF]
        if leaves and all(cls in n.weights for n in leaves):
            return True
    return False


def _opposite_scores(op: Operator) -> bool:
    """Does every leaf weigh class 0 and class 1, class 0's weight minus class 1's?"""
    for t in op.trees:
        for n in _reachable(t):
            if n.mode == LEAF and (set(n.weights) != {0, 1} or n.weights[0] != -n.weights[1]):
                return False
    return True


def one_score_trees(op: Operator, scoring: Scoring) -> list[OnnxTree]:
    """The operator's trees with the one score's weights under class id 0."""
    if scoring.score_class == 0:
        return op.trees
    c = scoring.score_class
    return [
        replace(
            t,
            nodes={
                k: replace(n, weights={0: n.weights[c]}) if n.mode == LEAF and c in n.weights else n
                for k, n in t.nodes.items()
            },
        )
        for t in op.trees
    ]


def _reachable(tree: OnnxTree) -> list[Node]:
    out, stack, seen = [], [tree.root], set()
    while stack:
        k = stack.pop()
        if k in seen or k not in tree.nodes:
            continue
        seen.add(k)
        n = tree.nodes[k]
        out.append(n)
        if n.mode != LEAF:
            stack += [n.true, n.false]
    return out


def _away_from_zero(op: Operator, intercept: tuple[float, ...], scale: float) -> bool:
    """Is every class score, over all leaf combinations, farther than the SOFTMAX_ZERO
    band from 0 (with room for float32 sums)?"""
    for c, b in enumerate(intercept):
        lo = hi = 0.0
        for t in op.trees:
            vals = [n.weights.get(c, 0.0) for n in _reachable(t) if n.mode == LEAF]
            lo, hi = lo + min(vals, default=0.0), hi + max(vals, default=0.0)
        lo, hi = b + scale * lo, b + scale * hi
        room = SOFTMAX_ZERO_BAND + 1e-6 * (abs(lo) + abs(hi) + 1.0)
        if lo - room <= 0.0 <= hi + room:
            return False
    return True
