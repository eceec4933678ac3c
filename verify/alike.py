"""The ``alike`` step: a box closed because x1 and x2 reach the same leaf in every tree,
so that the library predicts both alike (a regressor's change, a classifier's gap).

A pair (x1, x2) is equal outside the varied features, and both lie in the certificate's
domain. Where no tree splits on a varied feature within its bounds, every node sends x1
and x2 the same way (a node on a shared feature reads one value; a node on a varied
feature sends all of its domain one way), so both reach the same leaf in every tree. The
library's prediction is a function of the leaves reached: both inputs get the same one,
a change of 0, and the claim's D is above 0 (a change is claimed by D > 0, which the
claim's rows check): no pair of the box meets the change, whatever the link. A
classifier's claim is closed alike where one prediction cannot meet it: a binary gap
above 0, a multiclass one above a ratio of 1 or a margin of 0 (``_one_prediction_misses``).

The step ``["alike", varied, bounds]`` names the varied features (their indices in the
model's order, each once, in order) and their bounds as the domain states them
(``[lb, ub]`` each, numbers or ``"inf"`` / ``"-inf"``). The checker requires both to be
the certificate's own (``question.vary`` and ``question.domain``), then walks every tree
from its root over the domain, routing each feature's values as the library routes them
(pair_space.py ``PairSpace._route``: its test, NaN's side, LightGBM's zero band, category
codes), down both sides of a node on a shared feature (each side with the values it
gets) and, at every node it reaches on a varied feature, requires all of that feature's
domain on one side. The walk does not depend on the box: the step holds wherever it
closes one (treesens writes it as a part's whole proof, one box).
"""

from __future__ import annotations

import math

from .claims import Claim

INF = math.inf


def alike_refusal(ch, step: list) -> str | None:
    """Why an ``["alike", varied, bounds]`` step does not close its box (None: it does),
    for the Checker ``ch`` of the certificate's model, domain and claim."""
    claim: Claim | None = ch.claim
    if claim is None or not _one_prediction_misses(claim, ch.m.n_outputs):
        return (
            "an alike step rules out a change by more than 0, a binary gap above 0 or a "
            "multiclass one above a ratio of 1 (a margin of 0) alone"
        )
    varied = sorted(ch.varied)
    if ch.inputs:  # the walk below reads one domain per feature for both inputs
        return "an alike step is stated of varied features whose inputs share their domain"
    if step[1] != varied or any(type(f) is not int for f in step[1]):
        named = [ch.m.features[f] for f in varied]
        return f"its features {step[1]!r} are not the varied ones {varied!r} ({named})"
    bounds = step[2]
    if not isinstance(bounds, list) or len(bounds) != len(varied):
        return "its bounds are not one [lb, ub] per varied feature"
    for f, stated in zip(varied, bounds):
        d = ch.domain[f]
        if _bounds(stated) != (d.lb, d.ub):
            return (
                f"it states the bounds {stated!r} of {ch.m.features[f]!r}, and the domain "
                f"[{d.lb:g}, {d.ub:g}]"
            )
    if not ch.alike_walk:  # the walk of every tree, once per checker
        ch.alike_walk.append(_split_within(ch))
    return ch.alike_walk[0]


def _one_prediction_misses(claim: Claim, n_outputs: int) -> bool:
    """Whether no pair whose two inputs get one prediction meets the claim's condition: a
    change by D > 0; a binary gap g > 0 (P(x1) >= 0.5 + g > 0.5 - g >= P(x2), or the
    margin's raw(x1) >= g > -g >= raw(x2)); a multiclass gap between two different
    classes (every part's: claims.required_parts) above a ratio r of 1 (x1's class c1
    leads c2 by r and x2's c2 leads c1 by r: P_c1 >= r^2 P_c1, so P_c1 = 0 and likewise
    every other class, probabilities summing to 0) or a margin m above 0 (c1 over c2 by
    m and c2 over c1 by m)."""
    if claim.kind == "change":
        return claim.value > 0.0
    if n_outputs == 1 or claim.gap_kind == "margin":
        return claim.value > 0.0
    return claim.value > 1.0


def _bounds(stated) -> tuple[float, float] | None:
    """A stated ``[lb, ub]`` as numbers (None: not such a pair)."""
    if not isinstance(stated, list) or len(stated) != 2:
        return None
    out = []
    for v in stated:
        if isinstance(v, bool) or not isinstance(v, (int, float, str)):
            return None
        try:
            out.append(float(v.replace("inf", "Infinity")) if isinstance(v, str) else float(v))
        except ValueError:
            return None
    return out[0], out[1]


def _split_within(ch) -> str | None:
    """The first node of a tree, reached within the domain, that sends a varied
    feature's domain down both sides (None: no tree has one)."""
    for ti, t in enumerate(ch.m.trees):
        stack: list = [(0, {})]
        while stack:
            n, parts = stack.pop()
            f = int(t.feature[n])
            if f < 0:
                continue
            part = parts[f] if f in parts else _domain_part(ch, f)
            yes, no = ([p for p in side if _holds(ch, f, p)] for side in ch._route(t, n, part))
            if f in ch.varied:
                if yes and no:
                    d = ch.domain[f]
                    return (
                        f"tree {ti} splits {ch.m.features[f]!r} (node {n}) within its "
                        f"domain [{d.lb:g}, {d.ub:g}]: x1 and x2 may reach different leaves"
                    )
                if yes or no:  # all of its domain one way: x1's value and x2's alike
                    stack.append((t.left[n] if yes else t.right[n], parts))
                continue
            stack.extend((t.right[n], {**parts, f: p}) for p in no)
            stack.extend((t.left[n], {**parts, f: p}) for p in yes)
    return None


def _domain_part(ch, f: int) -> tuple:
    """Feature f's domain as a box part (lo, hi, nan): its code positions, else its
    interval in the library's test's form."""
    d = ch.domain[f]
    lo, hi = (0, len(d.codes)) if d.codes is not None else ch._domain_interval(f)
    return lo, hi, d.missing


def _holds(ch, f: int, part: tuple) -> bool:
    """Whether a routed piece of feature f holds a value of its domain (NaN, or a
    number the normalised interval keeps)."""
    lo, hi, nan = part
    a, b = ch._norm_part(f, lo, hi)
    return bool(nan) or a < b
