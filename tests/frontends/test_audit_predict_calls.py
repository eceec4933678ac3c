"""An audit's enumeration asks the library's predict in calls of at most
``CALL_TREE_VISITS`` rows times trees (compiler/audit.py): between two calls the main thread
is back in Python, where Ctrl-C is heard at once instead of after one long call."""

from __future__ import annotations

import numpy as np
import pandas as pd

from treesens.compiler import audit as audit_module
from treesens.compiler.audit import Target, audit_rows, in_calls
from treesens.compiler.query import Gap
from treesens.readers.load import load_model
from treesens.tests.frontends.test_audit import BC_DETAILS, BC_MODEL, _breast_cancer_frame


def test_rows_asked_in_calls_come_back_in_order():
    X = np.arange(10.0).reshape(5, 2)
    sizes: list[int] = []

    def predict(part):
        sizes.append(len(part))
        return part * 2

    assert np.array_equal(in_calls(predict, X, 2), X * 2)
    assert sizes == [2, 2, 1]


def test_no_predict_call_of_an_audit_passes_its_row_times_trees_limit(monkeypatch):
    ens = load_model(str(BC_MODEL), details=str(BC_DETAILS))
    X = _breast_cancer_frame(ens).drop(columns="label").to_numpy()[:20]
    target = Target(Gap(0.1))
    whole = audit_rows(ens, X, ["worst_texture"], target, {})
    limit = 50 * len(ens.trees)
    monkeypatch.setattr(audit_module, "CALL_TREE_VISITS", limit)
    sizes: list[int] = []
    real = audit_module.library_output

    def counted(ens_, X_, **kw):
        sizes.append(len(X_))
        return real(ens_, X_, **kw)

    monkeypatch.setattr(audit_module, "library_output", counted)
    split = audit_rows(ens, X, ["worst_texture"], target, {})
    assert max(sizes) == 50 and len(sizes) > 3
    assert split.status == whole.status
    assert pd.DataFrame(split.x2).equals(pd.DataFrame(whole.x2))
