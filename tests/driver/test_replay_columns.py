"""A library whose outputs have another number of columns than treesens' model of it
(its classes, a regressor's one prediction, one raw score per output) validates no pair:
every replay asks it through compiler.replay.library_output, which refuses it, and the
query ends in error as on any disagreement, the message naming both counts."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from treesens.compiler.audit import Target, audit_rows
from treesens.compiler.ensemble import IDENTITY
from treesens.compiler.plan import Plan
from treesens.compiler.query import Gap, GapKind, Query
from treesens.compiler.replay import OutputsMisaligned
from treesens.driver import solve_query
from treesens.questions import max_gap as M
from treesens.readers.load import load_model
from treesens.tests.oracle import IRReplayer, brute_force_sensitive, random_ensemble

WINE = Path(__file__).resolve().parents[2] / "examples" / "wine_xgb.json"


class _Widened:
    """Another replayer's outputs, with a column of zeros added to (or, ``drop``, the
    last column taken from) the ones named in ``calls``."""

    library = "fake"

    def __init__(self, inner, calls=("predict_proba",), drop: bool = False):
        self.inner, self.calls, self.drop = inner, calls, drop

    def _out(self, call: str, X):
        out = np.asarray(getattr(self.inner, call)(X), dtype=np.float64).reshape(len(X), -1)
        if call not in self.calls:
            return out
        return out[:, :-1] if self.drop else np.hstack([out, np.zeros((len(X), 1))])

    def predict_proba(self, X):
        return self._out("predict_proba", X)

    def predict_raw(self, X):
        return self._out("predict_raw", X)

    def predict(self, X):
        return self._out("predict", X)


def _sensitive_binary(gap: Gap | None = None):
    gap = gap or Gap(0.05)
    for seed in range(50):
        ens = random_ensemble(seed, n_trees=4, depth=2, n_features=2, n_thresholds=2)
        q = Query(vary=("f0",), gap=gap, plan=Plan(timeout=30))
        if brute_force_sensitive(ens, q):
            return ens, q
    raise AssertionError("no sensitive tiny ensemble found")


def _with(ens, **kw):
    return dataclasses.replace(ens, replayer=_Widened(IRReplayer(ens), **kw))


def test_a_binary_library_with_an_extra_probability_column_validates_no_pair():
    ens, q = _sensitive_binary()
    res = solve_query(_with(ens), q)
    assert res.status == "error" and not res.validated and res.outputs is None
    assert "predict_proba gives 3 columns, treesens' model of it 2 (one per class)" in res.error


def test_the_same_binary_library_without_the_extra_column_validates_the_pair():
    ens, q = _sensitive_binary()
    res = solve_query(dataclasses.replace(ens, replayer=IRReplayer(ens)), q)
    assert res.status == "sensitive" and res.validated and len(res.outputs["x1"]) == 2


def test_library_raw_scores_of_another_width_validate_no_margin_pair():
    ens, q = _sensitive_binary(Gap(0.1, GapKind.MARGIN))
    res = solve_query(_with(ens, calls=("predict_raw",)), q)
    assert res.status == "error" and not res.validated
    assert "predict_raw gives 2 columns, treesens' model of it 1 (one per output)" in res.error


def test_a_regressor_library_giving_two_columns_validates_no_pair():
    ens, _ = _sensitive_binary()
    reg = dataclasses.replace(ens, n_classes=0, link=IDENTITY)
    q = Query(vary=("f0",), delta=1e-3, plan=Plan(timeout=30))
    assert solve_query(dataclasses.replace(reg, replayer=IRReplayer(reg)), q).status == "sensitive"
    res = solve_query(_with(reg, calls=("predict",)), q)
    assert res.status == "error" and not res.validated
    assert "predict gives 2 columns, treesens' model of it 1 (its prediction)" in res.error


def test_a_real_multiclass_model_whose_library_misses_a_class_column_validates_no_pair():
    ens = load_model(str(WINE))
    q = Query(vary=("proline",), gap=Gap(2.0), classes=(0, 1), plan=Plan(timeout=60))
    assert solve_query(ens, q).validated  # the model as it is: a replayed pair
    res = solve_query(dataclasses.replace(ens, replayer=_Widened(ens.replayer, drop=True)), q)
    assert res.status == "error" and not res.validated
    assert "predict_proba gives 2 columns, treesens' model of it 3 (one per class)" in res.error


def test_a_max_gap_search_on_a_library_with_an_extra_column_ends_in_error():
    ens, _ = _sensitive_binary()
    res = M.max_gap_query(_with(ens), Query(vary=("f0",), plan=Plan(timeout=60.0)))
    assert res.status == "error" and not res.validated
    assert "predict_proba gives 3 columns" in res.error


def test_the_audit_counts_no_flip_on_a_library_with_an_extra_column():
    ens, _ = _sensitive_binary()
    X = np.random.default_rng(0).normal(size=(5, ens.n_features))
    with pytest.raises(OutputsMisaligned, match="gives 3 columns, treesens' model of it 2"):
        audit_rows(_with(ens), X, ("f0",), Target(Gap(0.05)), {})


class _Raising(IRReplayer):
    """A library whose predict_proba refuses the rows, as scikit-learn refuses a value too
    large for float32."""

    def predict_proba(self, X):
        raise ValueError("Input X contains a value too large for dtype('float32').")


def test_a_library_raising_on_the_pair_ends_the_query_in_error_not_a_traceback():
    ens, q = _sensitive_binary()
    res = solve_query(dataclasses.replace(ens, replayer=_Raising(ens)), q)
    assert res.status == "error" and not res.validated
    assert "the library's predict_proba raised on the pair (ValueError: Input X" in res.error
