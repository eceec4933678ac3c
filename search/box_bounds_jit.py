"""A box's bound from its trees' maxima, and the rows a split must separate: the parts of
gap_kernel_jit.py's search that add up or look over every tree of a box (numba, inlined
into their callers there). Imported on first use only, as gap_kernel_jit.py is."""

from . import gap_heap_jit
from .gap_heap_jit import part
from .kernel_cache import compiled_from

compiled_from(__file__, gap_heap_jit)

_POS = 1e300


@part
def row_term(s, r, thresholds, first_sum):
    """Row r's term of a bound (bound()) from its sum over the trees s."""
    term = s - thresholds[r]
    return term / 2.0 if r >= first_sum else term


@part
def bound(top, over, walked, nw, thresholds, first_sum):
    """The box's bound from its per-tree maxima: top's, but over's for the first nw
    trees of walked (a child's, after a split walked them again). Summed in tree order
    whichever array a tree's maximum is read from, so a box has one bound."""
    if top.shape[1] == 3:  # the three sums side by side (children_bounds)
        s0, s1, s2 = 0.0, 0.0, 0.0
        j = 0
        for t in range(top.shape[0]):
            src = top
            if j < nw and walked[j] == t:
                src = over
                j += 1
            s0 += src[t, 0]
            s1 += src[t, 1]
            s2 += src[t, 2]
        u = min(row_term(s0, 0, thresholds, first_sum), row_term(s1, 1, thresholds, first_sum))
        return min(u, row_term(s2, 2, thresholds, first_sum))
    u = _POS
    for r in range(top.shape[1]):
        s = 0.0
        j = 0
        for t in range(top.shape[0]):
            if j < nw and walked[j] == t:
                s += over[t, r]
                j += 1
            else:
                s += top[t, r]
        term = s - thresholds[r]
        if r >= first_sum:
            term /= 2.0
        if term < u:
            u = term
    return u


@part
def children_bounds(top, walked, nw, scratch, thresholds, first_sum, u):
    """A split's two children's bounds, each at most u: bound() of ytop's and of
    ntop's (scratch[0], scratch[2]) for the first nw trees of walked. With three rows
    (two inputs' and their pair sums'), the six sums are added up in one pass, each in
    tree order as bound() adds it (the same bits), their chains of additions side by
    side in registers, rather than one row after the other (bench/reports/scale-tier.md,
    "The lazy kernel's CPU per box on OnlineBackup")."""
    ytop, ntop = scratch[0], scratch[2]
    if top.shape[1] != 3:
        uy = min(bound(top, ytop, walked, nw, thresholds, first_sum), u)
        un = min(bound(top, ntop, walked, nw, thresholds, first_sum), u)
        return uy, un
    y0, y1, y2, n0, n1, n2 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    j = 0
    for t in range(top.shape[0]):
        if j < nw and walked[j] == t:
            y0 += ytop[t, 0]
            y1 += ytop[t, 1]
            y2 += ytop[t, 2]
            n0 += ntop[t, 0]
            n1 += ntop[t, 1]
            n2 += ntop[t, 2]
            j += 1
        else:
            a, b, c = top[t, 0], top[t, 1], top[t, 2]
            y0 += a
            y1 += b
            y2 += c
            n0 += a
            n1 += b
            n2 += c
    uy = min(row_term(y0, 0, thresholds, first_sum), row_term(y1, 1, thresholds, first_sum))
    uy = min(uy, row_term(y2, 2, thresholds, first_sum), u)
    un = min(row_term(n0, 0, thresholds, first_sum), row_term(n1, 1, thresholds, first_sum))
    un = min(un, row_term(n2, 2, thresholds, first_sum), u)
    return uy, un


@part
def open_rows(top, low, first_sum):
    """The rows a split must separate: the pair-sum rows while some tree's still differ
    over the box, then every row; -1 when no tree's differ (the box is resolved)."""
    rows = top.shape[1]
    for start in (first_sum, 0):
        if start >= rows:
            continue
        for t in range(top.shape[0]):
            for r in range(start, rows):
                if top[t, r] > low[t, r]:
                    return start
    return -1


@part
def is_open(top, low, t, start):
    """Whether tree t's rows from ``start`` still differ over the box."""
    for r in range(start, top.shape[1]):  # noqa: SIM110 - a loop numba compiles
        if top[t, r] > low[t, r]:
            return True
    return False


@part
def rows_above_sums(top, thresholds, first_sum):
    """Whether every row's term is above every pair-sum row's half (the box's bound is
    the pair sums'): only then may a dive leave the trees outside F unwalked, since they
    add 0 to a pair sum."""
    rows = top.shape[1]
    if first_sum >= rows:
        return False
    if rows == 3:  # the three sums side by side, as children_bounds adds them
        s0, s1, s2 = 0.0, 0.0, 0.0
        for t in range(top.shape[0]):
            s0 += top[t, 0]
            s1 += top[t, 1]
            s2 += top[t, 2]
        terms = (s0 - thresholds[0], s1 - thresholds[1], s2 - thresholds[2])
        least_row, least_sum = _POS, _POS
        for r in range(3):
            if r >= first_sum:
                least_sum = min(least_sum, terms[r] / 2.0)
            else:
                least_row = min(least_row, terms[r])
        return least_row > least_sum
    least_row, least_sum = _POS, _POS
    for r in range(rows):
        s = 0.0
        for t in range(top.shape[0]):
            s += top[t, r]
        term = s - thresholds[r]
        if r >= first_sum:
            least_sum = min(least_sum, term / 2.0)
        else:
            least_row = min(least_row, term)
    return least_row > least_sum
