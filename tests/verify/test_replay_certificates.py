"""A box the float32 relaxation keeps open but the library's own scores rule out: a pair
on the gap's boundary (a near miss), certified as a ``replay`` step that the checker
confirms with the library (every tree's value is fixed on the box)."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

import treesens
from treesens.questions.certify import certify
from treesens.questions.query_build import make_query
from treesens.search.box_search import FOUND, box_search
from treesens.search.pair_boxes import pair_tables
from treesens.search.pair_scope import pair_encoding
from treesens.tests.verify.tampering import tampered
from treesens.verify import verify_file


def _pair_found(ens, gap: float) -> tuple[bool, float]:
    enc = pair_encoding(ens, make_query(["f0"], margin_gap=gap))
    out = box_search(enc, pair_tables(enc), time.time() + 60, [])
    return out.status == FOUND, enc.relax


@pytest.fixture(scope="module")
def near_miss(tmp_path_factory):
    """A tiny XGBoost model, and a certificate of a margin gap just above the largest
    one a pair reaches: within the relaxation, so its box is replayed, not pruned."""
    import xgboost

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(400, 4))
    y = (X[:, 0] + 0.3 * X[:, 1] + 0.05 * X[:, 2] > 0.7).astype(int)
    folder = tmp_path_factory.mktemp("replay")
    model = folder / "model.json"
    xgboost.XGBClassifier(n_estimators=8, max_depth=3).fit(X, y).get_booster().save_model(model)
    ens = treesens.load_model(str(model))
    lo, hi = 0.0, 10.0  # the edge: the largest gap the relaxed search still finds
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _pair_found(ens, mid)[0] else (lo, mid)
    relax = _pair_found(ens, lo)[1]
    gap = lo - relax / 2  # above the largest gap, within the relaxation
    path = folder / "certificate.json"
    done = certify(ens, make_query(["f0"], margin_gap=gap), path, model, 60)
    return path, done, relax


def test_a_near_miss_box_is_certified_as_a_replayed_box(near_miss):
    path, done, _ = near_miss
    steps = [s[0] for s in json.loads(path.read_text())["parts"][0]["proof"]]
    assert done.verified and steps.count("replay") >= 1


def test_the_checker_rejects_a_replayed_pair_outside_its_box(near_miss, tmp_path):
    def move_x1(doc):
        step = next(s for s in doc["parts"][0]["proof"] if s[0] == "replay")
        step[1][0] = -1e6  # f0, the varied feature, far below every threshold

    verdict = verify_file(tampered(near_miss[0], tmp_path, move_x1))
    assert not verdict.valid and "outside the box" in verdict.message


def test_the_checker_rejects_a_replayed_pair_the_library_scores_as_meeting_the_gap(
    near_miss, tmp_path, monkeypatch
):
    from treesens.answers.verdict import NearMiss
    from treesens.questions import certify as certify_module

    # a replay that wrongly calls every pair a near miss, at a gap the pairs do reach
    monkeypatch.setattr(certify_module, "check_pair", lambda e, q, enc, w: NearMiss(w, (0,)))
    path, _, relax = near_miss
    model = json.loads(path.read_text())["model"]["file"]
    ens = treesens.load_model(str(path.parent / model))
    gap = json.loads(path.read_text())["question"]["claim"]["gap"] - 10 * relax
    done = certify(
        ens, make_query(["f0"], margin_gap=gap), tmp_path / "c.json", path.parent / model, 60
    )
    assert done.written and not done.verified
    assert "meet every row" in done.reason
