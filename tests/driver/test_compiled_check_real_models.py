"""The compiled check from a check's first box (compiled_check.HAND_OVER = 0) on small
models the real libraries trained on random data with missing values, categorical
splits, integer and bounded features (tests/regressions/harness.py's families: XGBoost,
LightGBM and scikit-learn, binary and multiclass): its answers agree with the brute-force
oracle that asks the library's own predict, and the certificate of an "insensitive"
answer verifies."""

from __future__ import annotations

import pytest

import treesens
from treesens.search import compiled_check
from treesens.tests.regressions import harness as H
from treesens.verify import verify_file

SEED = 1002


@pytest.fixture(autouse=True)
def every_table(monkeypatch):
    monkeypatch.setattr(compiled_check, "HAND_OVER", 0)


def _keywords(q) -> dict:
    kw = {"margin_gap" if q.gap.kind == "margin" else "gap": q.gap.value, "timeout": 60}
    return kw | ({"classes": tuple(q.classes)} if q.classes is not None else {})


@pytest.mark.parametrize("index", range(len(H.FAMILIES)), ids=lambda i: H.FAMILIES[i])
def test_the_compiled_check_agrees_with_the_library_oracle_and_certifies(index, tmp_path):
    spec, ens, values = H.campaign_model(index, SEED, tmp_path)
    for j, (q, note) in enumerate(H.make_queries(spec.info.pop("rng"), ens, values, 3)):
        oracle = H.library_oracle(ens, q, H.build_grid(ens, q.vary, values))
        out = tmp_path / f"c{j}.json"
        r = treesens.check(ens, list(q.vary), certificate=out, **_keywords(q))
        assert not H.check_result(ens, q, oracle, r), (q, note)
        if out.exists():
            assert r.status == "insensitive" and verify_file(out).valid, (q, note)
