"""The max gap of a multiclass forest (averaged probabilities: search/forest_ratio.py),
box searches at fixed ratios, against the exact largest ratio by enumeration."""

from __future__ import annotations

import numpy as np
import pytest

import treesens
from treesens.compiler.plan import Plan
from treesens.compiler.query import Query
from treesens.questions.max_gap import max_gap_query
from treesens.tests.max_gap_oracle import exact_max_ratio, max_ratio_problems

sklearn = pytest.importorskip("sklearn")
CLASSES = [(0, 1), (1, "any"), ("any", 2), ("any", "any")]


def _forest(seed: int, extra: bool | None = None):
    from sklearn.datasets import load_iris
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier

    X, y = load_iris(return_X_y=True)
    extra = seed % 2 == 1 if extra is None else extra
    kind = ExtraTreesClassifier if extra else RandomForestClassifier
    est = kind(n_estimators=4, max_depth=3, max_features=2, random_state=seed).fit(X, y)
    return treesens.load_model(est)


@pytest.mark.parametrize("seed", range(12))
def test_a_multiclass_forest_s_max_gap_holds_the_exact_ratio_within_the_tolerance(seed):
    ens = _forest(seed)
    classes = CLASSES[seed % 4]
    vary = (ens.feature_names[seed % 4],)
    q = Query(vary=vary, classes=classes, plan=Plan(timeout=60.0))
    with np.errstate(over="ignore"):
        r = max_gap_query(ens, q, tolerance=[1e-4, 1e-3, 1e-2][seed % 3])
        assert r.max_gap["method"] == "boxes" and r.max_gap["proven"], r.max_gap
        assert not max_ratio_problems(exact_max_ratio(ens, vary, classes), r)


def test_a_class_a_forest_gives_probability_0_shows_the_largest_float_as_its_ratio():
    # a random forest of seed 3 varying petal width: its other classes reach probability 0
    ens = _forest(3, extra=False)
    q = Query(vary=(ens.feature_names[3],), classes=("any", "any"), plan=Plan(timeout=60.0))
    r = max_gap_query(ens, q)
    assert r.max_gap["lower"] == r.max_gap["upper"] == np.finfo(float).max


def test_a_multiclass_forest_s_max_gap_stopped_in_its_first_table_build_says_so():
    import time

    ens = _forest(0)
    q = Query(vary=(ens.feature_names[2],), classes=(0, 1), plan=Plan(timeout=60.0))
    r = max_gap_query(ens, q, deadline=time.time() - 1.0)
    assert r.status == "unknown" and r.max_gap["stopped_by"] == "table build"


def test_a_multiclass_forest_s_max_gap_stopped_in_its_table_build_bounds_the_ratio_above_its_pair():
    import time

    # its bound was a binary model's, at most 0.5: a ratio below any pair's
    ens = _forest(0)
    q = Query(vary=(ens.feature_names[2],), classes=(1, 2), plan=Plan(timeout=60.0))
    r = max_gap_query(ens, q, deadline=time.time() - 1.0)
    assert r.max_gap["upper"] >= exact_max_ratio(ens, q.vary, q.classes) > 1.0


def test_a_multiclass_forest_s_later_table_build_past_the_deadline_keeps_the_bounds(
    monkeypatch,
):
    from treesens.search import forest_ratio
    from treesens.search.pair_boxes import PairTablesPastDeadline

    built = []
    real = forest_ratio.pair_tables

    def second_build_too_late(enc, **kw):
        built.append(1)
        if len(built) > 1:
            raise PairTablesPastDeadline(0)
        return real(enc, **kw)

    monkeypatch.setattr(forest_ratio, "pair_tables", second_build_too_late)
    ens = _forest(0)
    q = Query(vary=(ens.feature_names[0],), classes=(0, 1), plan=Plan(timeout=60.0))
    r = max_gap_query(ens, q, tolerance=1e-4)
    assert len(built) == 2 and not r.max_gap["proven"]
    assert r.max_gap["lower"] is not None and r.status == "sensitive"


def test_a_multiclass_forest_s_tables_are_held_to_what_the_memory_limit_leaves():
    from treesens.compiler.errors import InputError

    ens = _forest(0)
    q = Query(vary=(ens.feature_names[2],), classes=(0, 1), plan=Plan(timeout=60.0))
    with pytest.raises(InputError, match="multiclass model"):
        max_gap_query(ens, q, memory_bytes=1)
