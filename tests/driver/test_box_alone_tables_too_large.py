"""A box search alone (``--backend boxes``) whose pair tables are too large for the memory
limit, or for the tables' cap, is an error that says what to do: a solver backend, which
builds no tables, or (the memory limit's) a larger limit."""

from __future__ import annotations

import pytest

import treesens
from treesens.search import box_answers
from treesens.search.pair_boxes import PairTablesTooLarge
from treesens.tests.driver.test_work_budget import MODEL


@pytest.mark.parametrize(
    "too_large",
    [
        "the pair tables would hold more than the 1,513 MB the memory limit leaves above the "
        "model's estimate",
        "the pair tables need more than 4,096 MB",
    ],
    ids=["memory limit", "table cap"],
)
def test_a_box_search_alone_whose_tables_are_too_large_says_what_to_do(monkeypatch, too_large):
    """adult lgbm_t1000_l255 --vary fnlwgt --backend boxes: 'error: the pair tables would
    hold more than the 1,513 MB the memory limit leaves ...', after 58 s, without the fix."""

    def building(*args, **kw):
        raise PairTablesTooLarge(too_large)

    monkeypatch.setattr(box_answers, "pair_tables", building)
    res = treesens.check(MODEL, vary="radius_error", gap=0.1, backend="boxes", heuristic=False)
    assert res.status == "error" and res.error.startswith(too_large)
    assert "--backend cpsat" in res.error
    assert ("--memory-mb" in res.error) == ("memory limit" in too_large)
