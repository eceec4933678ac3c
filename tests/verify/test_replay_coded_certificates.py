"""Replayed boxes over category codes and NaN (version 3): a near miss of a model with a
categorical feature is certified as a ``replay`` step the checker confirms with the
library, and the checker admits a replayed pair's value into a box part (lo, hi, nan)
only as the part holds it: NaN where the part holds NaN, a code whose place in the
domain's list lies in the part's run of codes."""

from __future__ import annotations

import json
import math
import time

import pytest

from treesens.questions.certificate_steps import _values
from treesens.questions.certify import certify
from treesens.questions.query_build import make_query
from treesens.search.box_search import FOUND, box_search
from treesens.search.pair_boxes import pair_tables
from treesens.search.pair_scope import pair_encoding
from treesens.tests.verify.tampering import tampered
from treesens.tests.verify.test_coded_certificates import _model, _train
from treesens.verify import verify_file
from treesens.verify.box_checks import Checker
from treesens.verify.domain import EMPTY, INF
from treesens.verify.models import Model, Tree


def _pair_found(ens, gap: float) -> tuple[bool, float]:
    enc = pair_encoding(ens, make_query(["f0"], margin_gap=gap))
    out = box_search(enc, pair_tables(enc), time.time() + 60, [])
    return out.status == FOUND, enc.relax


@pytest.fixture(scope="module", params=["xgboost", "lightgbm-nan"])
def coded_near_miss(request, tmp_path_factory):
    """A model trained on a categorical f0 and an f1 with NaN, and a certificate of a
    margin gap over f0 just above the largest one a pair reaches: within the
    relaxation, so its boxes on the gap's boundary are replayed, not pruned."""
    folder = tmp_path_factory.mktemp(request.param)
    model = _train(request.param, folder)
    ens = _model(model)
    lo, hi = 0.0, 20.0  # the edge: the largest gap the relaxed search still finds
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _pair_found(ens, mid)[0] else (lo, mid)
    gap = lo - _pair_found(ens, lo)[1] / 2  # above the largest gap, within the relaxation
    path = folder / "certificate.json"
    done = certify(ens, make_query(["f0"], margin_gap=gap), path, model, 60)
    return path, done


def _first_replay(doc: dict) -> list:
    return next(s for s in doc["parts"][0]["proof"] if s[0] == "replay")


def test_a_near_miss_over_category_codes_is_certified_as_a_replayed_box(coded_near_miss):
    path, done = coded_near_miss
    doc = json.loads(path.read_text())
    replays = [s for s in doc["parts"][0]["proof"] if s[0] == "replay"]
    assert done.verified and replays
    assert doc["question"]["domain"][0]["codes"] and doc["question"]["domain"][1]["missing"]


def test_the_checker_rejects_a_replayed_value_that_is_not_a_code(coded_near_miss, tmp_path):
    def not_a_code(doc):
        _first_replay(doc)[1][0] = 1.5  # f0's codes are 0..3

    verdict = verify_file(tampered(coded_near_miss[0], tmp_path, not_a_code))
    assert not verdict.valid and "outside the box or the domain" in verdict.message


def test_the_checker_rejects_a_replayed_nan_on_a_feature_that_cannot_be_missing(
    coded_near_miss, tmp_path
):
    def missing_code(doc):
        _first_replay(doc)[1][0] = "nan"

    verdict = verify_file(tampered(coded_near_miss[0], tmp_path, missing_code))
    assert not verdict.valid and "outside the box or the domain" in verdict.message


def _checker() -> Checker:
    """A one-tree model over f0 (codes 2, 0, 1, in that order) and f1 (may be missing)."""
    tree = Tree(
        feature=[1, -1, -1],
        threshold=[0.5, 0.0, 0.0],
        left=[1, -1, -1],
        right=[2, -1, -1],
        value=[0.0, 1.0, 2.0],
        default_left=[True, False, False],
        missing=["nan"] * 3,
    )
    m = Model([tree], 0.0, "<", ["f0", "f1"], 1.0, reads_nan=True)
    domain = [
        {"lb": 0, "ub": 2, "integer": True, "codes": [2, 0, 1]},
        {"lb": -1, "ub": 1, "integer": False, "missing": True},
    ]
    return Checker(m, {"vary": ["f0"], "domain": domain}, [[0, 1], [0, 2], [1, None]], 3)


def test_a_replayed_nan_lies_only_in_a_box_part_that_holds_nan():
    checker = _checker()  # f1's column is the third (f0 has one per input)
    assert checker._admits(2, (-INF, INF, True), math.nan)
    assert checker._admits(2, (*EMPTY, True), math.nan)
    assert not checker._admits(2, (-INF, INF, False), math.nan)


def test_a_replayed_code_lies_in_a_box_part_by_its_place_in_the_domains_list():
    checker = _checker()
    # the part (0, 2): the first two codes of the list [2, 0, 1]
    assert checker._admits(0, (0, 2, False), 2.0) and checker._admits(0, (0, 2, False), 0.0)
    assert not checker._admits(0, (0, 2, False), 1.0)


def test_a_replayed_number_on_a_coded_feature_must_be_one_of_its_codes():
    checker = _checker()
    assert not checker._admits(0, (-INF, INF, False), 3.0)
    assert not checker._admits(0, (-INF, INF, False), 0.5)


def test_a_replayed_pair_writes_nan_as_the_string_nan():
    assert _values([math.nan, math.inf, 0.25]) == ["nan", "inf", 0.25]
