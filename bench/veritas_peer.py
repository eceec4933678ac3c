"""Veritas (dtai-veritas) as a peer: sensitivity posed as an output maximisation.

The pair (x1, x2) lives in one concatenated feature space: the features outside F are
shared (ids 0..n-1, read by both copies), and each feature of F gets a second id
(n + j) read only by copy 2. Two posings (``params["pose"]``), built from treesens'
Ensemble IR (``treesens.load_model``):

* ``sum`` (the paper's): one single-output AddTree, maximised,

      binary:      m(x1) - m(x2)                                   (target 2*delta)
      multiclass:  [r_c1(x1) - r_c2(x1)] + [r_c2(x2) - r_c1(x2)]    (target 2*eta)

  a relaxation: a pair meeting the gap reaches the target, but a state reaching it
  need not meet both sides.
* ``sides`` (exact): a multi-output AddTree searched with MULTI_MAX_MAX_OUTPUT_DIFF,
  whose objective ``out_0 - max_k out_k`` is the smallest side margin minus its target
  (binary: min(m(x1) - delta, -m(x2) - delta); multiclass: every r_c1(x1) - r_c(x1) and
  r_c2(x2) - r_c(x2) against log eta), so a state reaches 0 iff its pair meets the gap.

In both:

* **insensitive** only when Veritas' search runs out of states whose upper bound
  reaches the target (states below ``target - 1e-6`` are pruned, unless
  ``prune=False``; then the top of the open list must drop below it), with every
  solution found on the way checked and rejected;
* **sensitive** only for a pair that meets BOTH sides of the gap under the library's own
  predict (xgboost): every Veritas solution is a box on which every tree's leaf is fixed,
  so one point per box (its lower corner) represents it exactly.

Anything else (time limit, memory) is ``unknown``. Binary logistic and softmax models.
"""

from __future__ import annotations

import math
import time

import numpy as np

TOL = 1e-6


def build_pair_addtree(ens, varied: list[int], coefs: tuple[np.ndarray, np.ndarray]):
    """One REGR AddTree: sum over copies c of coefs[c] . raw(x_c), copy 2's varied
    features renamed n + j."""
    import veritas

    at = veritas.AddTree(1, veritas.AddTreeType.REGR)
    at.set_base_score(0, sum(float(np.dot(coef, np.asarray(ens.intercept))) for coef in coefs))
    _add_tree_copies(at, ens, varied, [(0, c, coef) for c, coef in enumerate(coefs)])
    return at


def build_sides_addtree(ens, varied: list[int], sides: list[tuple[int, np.ndarray]], target):
    """One multi-output AddTree for MULTI_MAX_MAX_OUTPUT_DIFF, whose objective
    ``out_0 - max_k out_k`` is ``min_k (coef_k . raw(x_copy_k)) - target``: output 0 is
    empty, output k+1 is minus side k."""
    import veritas

    at = veritas.AddTree(len(sides) + 1, veritas.AddTreeType.REGR)
    for k, (_, coef) in enumerate(sides):
        at.set_base_score(k + 1, -float(np.dot(coef, np.asarray(ens.intercept))) + target)
    _add_tree_copies(at, ens, varied, [(k + 1, c, -coef) for k, (c, coef) in enumerate(sides)])
    return at


def _add_tree_copies(at, ens, varied: list[int], terms: list[tuple[int, int, np.ndarray]]):
    """Add ``coef . leaves(x_copy)`` to output ``out`` for every term (out, copy, coef):
    each tree of the ensemble once per copy that some term reads, with a leaf value for
    every such term; copy 1's varied features are renamed n + j."""
    n = ens.n_features
    rename2 = {f: n + j for j, f in enumerate(varied)}
    for c in (0, 1):
        fmap = rename2 if c == 1 else {}
        for t in ens.trees:
            w = [
                (out, np.array([coef[o] for o in t.outputs]) * ens.scale)
                for out, copy, coef in terms
                if copy == c
            ]
            w = [(out, v) for out, v in w if np.any(v)]
            if not w:
                continue
            if t.categories is not None and any(cat is not None for cat in t.categories):
                raise ValueError("categorical splits are not supported by the Veritas peer")
            vt = at.add_tree()
            stack = [(0, vt.root())]
            while stack:
                node, vnode = stack.pop()
                f = int(t.feature[node])
                if f < 0:
                    for out, v in w:
                        vt.set_leaf_value(vnode, out, float(np.dot(v, t.value[node])))
                    continue
                vt.split(vnode, fmap.get(f, f), _split_value(ens, float(t.threshold[node])))
                stack.append((int(t.left[node]), vt.left(vnode)))
                stack.append((int(t.right[node]), vt.right(vnode)))


def _split_value(ens, t: float) -> float:
    """Veritas tests ``x < v`` in float64; the IR tests ``cast(x) op t``. Returned v makes
    the two agree for the values we pick (thresholds themselves and interval corners)."""
    if ens.op == "<=":
        return float(np.nextafter(t, np.inf))  # x <= t  <=>  x < next(t) for float64 x
    return t


def _point(iv, lb: float, ub: float) -> float:
    lo, hi = float(iv.lo), float(iv.hi)
    if math.isfinite(lo):
        return lo
    if math.isfinite(lb) and lb < hi:
        return lb
    if math.isfinite(hi):
        return float(np.nextafter(np.float32(hi), np.float32(-np.inf)))
    return 0.0 if ub >= 0 else ub


def run_veritas(inst: dict, timeout: float, params: dict | None = None) -> dict:
    """One benchmark instance: load its model, then ``verify`` with xgboost's predict."""
    import resource

    import treesens

    t0 = time.time()
    u0 = resource.getrusage(resource.RUSAGE_SELF)
    ens = treesens.load_model(inst["model_path"], details=inst["details_path"])
    out = verify(
        ens,
        list(inst["features"]),
        float(inst["gap"]),
        inst.get("classes"),
        t0 + timeout - time.time(),
        params,
        predict_proba=ens.replayer.predict_proba,
    )
    total = time.time() - t0
    u1 = resource.getrusage(resource.RUSAGE_SELF)
    out["time"] = {
        "compile": out["time"]["compile"] + (total - out["time"]["total"]),
        "solve": out["time"]["solve"],
        "total": total,
        "cpu": (u1.ru_utime + u1.ru_stime) - (u0.ru_utime + u0.ru_stime),
    }
    return out


def verify(
    ens,
    features: list[str],
    g: float,
    classes,
    timeout: float,
    params: dict | None = None,
    predict_proba=None,
) -> dict:
    """Sensitivity of ``ens`` to ``features`` at gap ``g`` by Veritas' search.

    ``params``: ``pose`` ("sum": the paper's relaxation, default; "sides": exact),
    ``focal_eps`` (default Veritas' 0.8) and ``prune`` (default True: drop states whose
    bound is below the target). ``predict_proba`` replays each candidate pair (default:
    the IR's own ``ens.proba``)."""
    import veritas

    t0 = time.time()
    predict_proba = predict_proba or ens.proba
    names = ens.feature_names
    varied = [names.index(f) for f in features]
    n = ens.n_features
    binary = ens.n_outputs == 1
    params = params or {}
    sides_pose = params.get("pose", "sum") == "sides"
    if binary:
        side_target = math.log((0.5 + g) / (0.5 - g))
        coefs = (np.array([1.0]), np.array([-1.0]))
        sides = [(0, coefs[0]), (1, coefs[1])]
    else:
        c1, c2 = classes
        side_target = math.log(g)
        a = np.zeros(ens.n_outputs)
        a[c1], a[c2] = 1.0, -1.0
        coefs = (a, -a)
        sides = []
        for copy, mine in ((0, c1), (1, c2)):
            for c in range(ens.n_outputs):
                if c != mine:
                    v = np.zeros(ens.n_outputs)
                    v[mine], v[c] = 1.0, -1.0
                    sides.append((copy, v))
    if sides_pose:
        # exact: the objective is min over sides of (side margin - target), >= 0 iff a pair
        at = build_sides_addtree(ens, varied, sides, side_target)
        target = 0.0
        heuristic = veritas.HeuristicType.MULTI_MAX_MAX_OUTPUT_DIFF
    else:
        # the paper's relaxation: the sum of the two sides' margins against twice the target
        at = build_pair_addtree(ens, varied, coefs)
        target = 2 * side_target
        heuristic = veritas.HeuristicType.MAX_OUTPUT
    lbs = [f.lb for f in ens.features] + [ens.features[f].lb for f in varied]
    ubs = [f.ub for f in ens.features] + [ens.features[f].ub for f in varied]
    prune_box = []
    for lb, ub in zip(lbs, ubs):
        lo = lb if math.isfinite(lb) else -math.inf
        hi = float(np.nextafter(ub, np.inf)) if math.isfinite(ub) else math.inf
        prune_box.append(veritas.Interval(lo, hi))
    cfg = veritas.Config(heuristic)
    if params.get("prune", True):
        cfg.ignore_state_when_worse_than = target - TOL
    if "focal_eps" in params:
        cfg.focal_eps = float(params["focal_eps"])
    cfg.stop_when_optimal = False
    cfg.max_memory = 4 * 1024**3
    search = cfg.get_search(at, prune_box)
    t_build = time.time() - t0
    checked = 0
    status, message, best = "unknown", "time limit reached", None
    outputs = None
    while True:
        left = t0 + timeout - time.time()
        if left <= 0:
            break
        reason = search.step_for(min(1.0, left), 1000)
        while checked < search.num_solutions():
            sol = search.get_solution(checked)
            checked += 1
            best = sol.output if best is None else max(best, sol.output)
            if sol.output < target - TOL:
                continue
            box = sol.box()
            x = np.array(
                [
                    _point(box[i], lbs[i], ubs[i])
                    if i in box
                    else _point(veritas.Interval(), lbs[i], ubs[i])
                    for i in range(n + len(varied))
                ]
            )
            x1 = x[:n].copy()
            x2 = x[:n].copy()
            for j, f in enumerate(varied):
                x2[f] = x[n + j]
            P = np.asarray(predict_proba(np.stack([x1, x2])), dtype=np.float64)
            if _meets(P, g, binary, classes):
                status, message = "sensitive", f"pair found after {checked} solutions"
                outputs = {"x1": P[0].tolist(), "x2": P[1].tolist()}
                break
        if status == "sensitive":
            break
        if (
            reason == veritas.StopReason.NO_MORE_OPEN
            or search.num_open() == 0
            or search.current_bounds().top_of_open < target - TOL
        ):
            status = "insensitive"
            message = f"no state reaches the target {target:.4g} ({checked} solutions checked, none meets both sides)"
            break
        if reason == veritas.StopReason.OUT_OF_MEMORY:
            message = "out of memory"
            break
    total = time.time() - t0
    try:
        b = search.current_bounds()
        bounds = {"atleast": b.atleast, "best": b.best, "top_of_open": b.top_of_open}
    except Exception:  # pragma: no cover - bounds are informational
        bounds = None
    return {
        "status": status,
        "validated": status == "sensitive",
        "distance": None,
        "time": {"compile": t_build, "solve": total - t_build, "total": total},
        "message": message,
        "error": None,
        "veritas": {
            "target": target,
            "solutions": checked,
            "best_output": best,
            "bounds": bounds,
            "outputs": outputs,
        },
    }


def _meets(P: np.ndarray, g: float, binary: bool, classes) -> bool:
    if binary:
        return bool(P[0, 1] >= 0.5 + g and P[1, 1] <= 0.5 - g)
    c1, c2 = classes
    ok1 = all(P[0, c1] >= g * P[0, c] for c in range(P.shape[1]) if c != c1)
    ok2 = all(P[1, c2] >= g * P[1, c] for c in range(P.shape[1]) if c != c2)
    return bool(ok1 and ok2)
