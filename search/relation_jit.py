"""relation_boxes.meets_arrays compiled (numba) for the kernel of gap_kernel_jit.py: a
child of a split on a relation's column that no pair of its ranks meets is dropped as a
box under the floor is. Imported with the kernel only."""

import numba

from . import relation_boxes
from .kernel_cache import compiled_from
from .relation_boxes import meets_arrays

compiled_from(__file__, relation_boxes)

part = numba.njit(cache=True, nogil=True, inline="always")
meets = part(meets_arrays)


@part
def child_meets(table, same, lo, hi, c, rr, on_yes):
    """Whether the child of the box lo, hi split on column c at rank rr (its yes side
    when ``on_yes``) meets the relations; lo and hi as they were after."""
    keep_lo, keep_hi = lo[c], hi[c]
    if on_yes:
        hi[c] = rr
    else:
        lo[c] = rr
    ok = meets(table, same, lo, hi)
    lo[c], hi[c] = keep_lo, keep_hi
    return ok


@part
def relation_bounds(rels, lo, hi, c, rr, uy, un, neg):
    """The children's bounds uy, un, each ``neg`` where the relations ``rels`` (table,
    same) drop that child; as they are without relations."""
    table, same = rels
    if table.shape[0] == 0:
        return uy, un
    if not child_meets(table, same, lo, hi, c, rr, True):
        uy = neg
    if not child_meets(table, same, lo, hi, c, rr, False):
        un = neg
    return uy, un
