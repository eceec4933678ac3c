"""Which leaves a set of varied features can lead to (the paper's affected leaves).

A leaf is *affected* when one of its ancestors tests a varied feature; two inputs that
differ only in varied features reach the same unaffected leaves. The encoding reports
how many leaves are unaffected, and the UnAff, Aff and Obj passes build on the sets.
"""

from __future__ import annotations

import weakref

from .ensemble import Ensemble, Tree

_LAST: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def affected_leaves(tree: Tree, varying: frozenset[int]) -> frozenset[int]:
    """The leaves with at least one ancestor that tests a varied feature."""
    out = set()
    stack = [(0, False)]
    while stack:
        n, hit = stack.pop()
        if tree.feature[n] < 0:
            if hit:
                out.add(n)
            continue
        h = hit or int(tree.feature[n]) in varying
        stack.append((int(tree.left[n]), h))
        stack.append((int(tree.right[n]), h))
    return frozenset(out)


def unaffected_leaves(ens: Ensemble, varying: frozenset[int]) -> tuple[frozenset[int], ...]:
    """Per tree, the leaves no varied feature leads to. The last set asked is remembered
    per model: the encoding and three passes ask for the same one."""
    varying = frozenset(varying)
    last = _LAST.get(ens)
    if last is not None and last[0] == varying:
        return last[1]
    out = tuple(frozenset(t.leaves()) - affected_leaves(t, varying) for t in ens.trees)
    _LAST[ens] = (varying, out)
    return out
