"""Veritas (dtai-veritas) as a peer: sensitivity posed as an output maximisation.

The pair (x1, x2) lives in one concatenated feature space: the features outside F are
shared (ids 0..n-1, read by both copies), and each feature of F gets a second id
(n + j) read only by copy 2. One single-output Veritas AddTree holds

    binary:      m(x1) - m(x2)                                   (target 2*delta)
    multiclass:  [r_c1(x1) - r_c2(x1)] + [r_c2(x2) - r_c1(x2)]    (target 2*eta)

built from treesens' Ensemble IR (``treesens.load_model``). Any pair meeting the gap
has objective >= target, so:

* **insensitive** only when Veritas' search runs out of states whose upper bound
  reaches the target (states below ``target - 1e-6`` are ignored), with every solution
  found on the way checked and rejected: the maximum over the rest is below 2*delta;
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

    n = ens.n_features
    rename2 = {f: n + j for j, f in enumerate(varied)}
    at = veritas.AddTree(1, veritas.AddTreeType.REGR)
    base = 0.0
    for c, coef in enumerate(coefs):
        base += float(np.dot(coef, np.asarray(ens.intercept)))
        fmap = rename2 if c == 1 else {}
        for t in ens.trees:
            w = np.array([coef[o] for o in t.outputs]) * ens.scale
            if not np.any(w):
                continue
            if t.categories is not None and any(cat is not None for cat in t.categories):
                raise ValueError("categorical splits are not supported by the Veritas peer")
            vt = at.add_tree()
            stack = [(0, vt.root())]
            while stack:
                node, vnode = stack.pop()
                f = int(t.feature[node])
                if f < 0:
                    vt.set_leaf_value(vnode, 0, float(np.dot(w, t.value[node])))
                    continue
                vt.split(vnode, fmap.get(f, f), _split_value(ens, float(t.threshold[node])))
                stack.append((int(t.left[node]), vt.left(vnode)))
                stack.append((int(t.right[node]), vt.right(vnode)))
    at.set_base_score(0, base)
    return at


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


def run_veritas(inst: dict, timeout: float) -> dict:
    import resource

    import veritas

    import treesens

    t0 = time.time()
    u0 = resource.getrusage(resource.RUSAGE_SELF)
    ens = treesens.load_model(inst["model_path"], details=inst["details_path"])
    names = ens.feature_names
    varied = [names.index(f) for f in inst["features"]]
    n = ens.n_features
    g = float(inst["gap"])
    binary = ens.n_outputs == 1
    if binary:
        target = 2 * math.log((0.5 + g) / (0.5 - g))
        coefs = (np.array([1.0]), np.array([-1.0]))
    else:
        c1, c2 = inst["classes"]
        target = 2 * math.log(g)
        a = np.zeros(ens.n_outputs)
        a[c1], a[c2] = 1.0, -1.0
        coefs = (a, -a)
    at = build_pair_addtree(ens, varied, coefs)
    lbs = [f.lb for f in ens.features] + [ens.features[f].lb for f in varied]
    ubs = [f.ub for f in ens.features] + [ens.features[f].ub for f in varied]
    prune_box = []
    for lb, ub in zip(lbs, ubs):
        lo = lb if math.isfinite(lb) else -math.inf
        hi = float(np.nextafter(ub, np.inf)) if math.isfinite(ub) else math.inf
        prune_box.append(veritas.Interval(lo, hi))
    cfg = veritas.Config(veritas.HeuristicType.MAX_OUTPUT)
    cfg.ignore_state_when_worse_than = target - TOL
    cfg.stop_when_optimal = False
    cfg.max_memory = 4 * 1024**3
    search = cfg.get_search(at, prune_box)
    t_build = time.time() - t0
    rep = ens.replayer
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
            P = np.asarray(rep.predict_proba(np.stack([x1, x2])), dtype=np.float64)
            if _meets(P, g, binary, inst.get("classes")):
                status, message = "sensitive", f"pair found after {checked} solutions"
                outputs = {"x1": P[0].tolist(), "x2": P[1].tolist()}
                break
        if status == "sensitive":
            break
        if reason in (veritas.StopReason.NO_MORE_OPEN,) or search.num_open() == 0:
            status = "insensitive"
            message = f"no state reaches 2*delta={target:.4g} ({checked} solutions checked, none meets both sides)"
            break
        if reason == veritas.StopReason.OUT_OF_MEMORY:
            message = "out of memory"
            break
    total = time.time() - t0
    u1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (u1.ru_utime + u1.ru_stime) - (u0.ru_utime + u0.ru_stime)
    try:
        b = search.current_bounds()
        bounds = {"atleast": b.atleast, "best": b.best, "top_of_open": b.top_of_open}
    except Exception:  # pragma: no cover - bounds are informational
        bounds = None
    return {
        "status": status,
        "validated": status == "sensitive",
        "distance": None,
        "time": {"compile": t_build, "solve": total - t_build, "total": total, "cpu": cpu},
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
