"""Certificates of an audit's rows over category codes, a feature that may be missing and
LightGBM's zero band (tests/verify/test_coded_certificates.py's models: f0 codes 0..3,
f1 may be missing, f2 in [0, 1]): varying f0 and f1 (x2 takes every code and NaN), every
row brute force finds not flippable is certified and verifies, each row's codes stated
as one code of x1's domain, a missing f1 as NaN alone (bounds holding no number, and
missing); a row missing a category code is refused, saying so."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from treesens.compiler.audit import Target
from treesens.compiler.query import Gap
from treesens.questions.audit import answer_blocks, make_spec, make_target
from treesens.questions.audit_certificates import certify_rows
from treesens.questions.audit_solve import row_query
from treesens.questions.certify import model_refusal
from treesens.readers.data import load_data
from treesens.tests.audit_oracle import brute_force_flippable
from treesens.tests.verify.test_coded_certificates import _frame, _model, _train
from treesens.verify import verify_file

KINDS = ["xgboost", "lightgbm-nan", "lightgbm-zero", "hgb-nan", "forest-nan"]
VARY = ["f0", "f1"]
GAP = 0.05


def _rows(with_nan: bool = False) -> np.ndarray:
    frame, _ = _frame()
    X = frame.assign(f0=frame["f0"].cat.codes.astype(float)).to_numpy(dtype=float)
    keep = np.isnan(X[:, 1]) if with_nan else ~np.isnan(X[:, 1])
    return X[keep][:8]


def _audited(kind: str, folder, X: np.ndarray):
    path = _train(kind, folder)
    ens = _model(path)
    ds = load_data(pd.DataFrame(X, columns=ens.feature_names), ens)
    spec = make_spec(ens, ds, VARY, make_target(ens, GAP))
    [(_, ans)] = list(answer_blocks(ens, ds, spec, np.arange(len(X))))
    lines = [
        {"row": i, "status": "insensitive" if s == "not flippable" else s, "decision": d}
        for i, (s, d) in enumerate(zip(ans.status, ans.decision))
    ]
    outcome = certify_rows(ens, spec, X, lines, folder / "certs", path, 30.0)
    return ens, outcome


@pytest.mark.slow  # 1-33 s a model (the checker's replay of each row, loading its library)
@pytest.mark.parametrize("missing", [False, True], ids=["f1 a number", "f1 missing"])
@pytest.mark.parametrize("kind", KINDS)
def test_every_coded_row_brute_force_finds_not_flippable_is_certified(kind, missing, tmp_path):
    X = _rows(missing)
    ens, outcome = _audited(kind, tmp_path, X)
    flips = brute_force_flippable(ens, X, VARY, Target(Gap(GAP)))
    assert sorted(outcome) == [i for i, f in enumerate(flips) if not f] != []
    for row, why in outcome.items():
        cert = tmp_path / "certs" / f"row-{row}.json"
        assert why == "" and verify_file(cert).valid
        x1 = json.loads(cert.read_text())["question"]["domain"][0]["x1"]
        assert x1["lb"] == x1["ub"] == X[row, 0]
        assert x1.get("codes", [int(X[row, 0])]) == [int(X[row, 0])]  # one code, where coded
        f1 = json.loads(cert.read_text())["question"]["domain"][1]["x1"]
        assert (f1["lb"], f1["ub"], f1.get("missing")) == (
            ("inf", "-inf", True) if missing else (X[row, 1], X[row, 1], None)
        )


def test_a_row_missing_a_category_code_is_refused_saying_so(tmp_path):
    path = _train("lightgbm-nan", tmp_path)
    ens, X = _model(path), _rows()
    ds = load_data(pd.DataFrame(X, columns=ens.feature_names), ens)
    spec = make_spec(ens, ds, VARY, make_target(ens, GAP))
    row = X[0].copy()
    row[0] = np.nan  # f0's codes: a domain lists codes, none of them NaN
    why = model_refusal(ens, row_query(ens, spec, row, 0, 10), path)
    assert why is not None and "no value of f0" in why
