"""The checker's walk with live sets (verify/walk.py) gives ``Checker.run``'s verdict, to
the message, on certificates as written and tampered with."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import treesens
from treesens.questions.certify import certify
from treesens.questions.query_build import make_query
from treesens.tests.verify.tampering import drop_last_box, tampered
from treesens.verify import check, verify_file, walk
from treesens.verify.walk import LiveTable, subtree_needs

REPO = Path(__file__).resolve().parents[2]
# insensitive answers whose proofs have a few dozen boxes (XGBoost; LightGBM)
ASKED = [("breast_cancer_xgb.json", "worst_symmetry", 0.1), ("diabetes_lgbm.txt", "ldl", 0.3)]


@pytest.fixture(scope="module", params=ASKED, ids=lambda a: a[0])
def certificate(request, tmp_path_factory) -> Path:
    name, feature, gap = request.param
    model = REPO / "examples" / name
    out = tmp_path_factory.mktemp("walk") / "c.json"
    ens = treesens.load_model(model)
    done = certify(ens, make_query([feature], gap=gap), out, model, 120, verify=False)
    assert done.written, done.message
    return out


def _lower_the_last_bound(doc):
    step = [s for s in doc["parts"][0]["proof"] if s[0] == "prune"][-1]
    step[2] -= 0.5


def _raise_a_bound_past_its_threshold(doc):
    step = next(s for s in doc["parts"][0]["proof"] if s[0] == "prune")
    step[2] = 10.0


def _move_the_last_split(doc):
    step = [s for s in doc["parts"][0]["proof"] if s[0] == "split"][-1]
    step[2] = step[2] + 1.0 if isinstance(step[2], float) else step[2]


def _swap_the_first_two_boxes(doc):
    proof = doc["parts"][0]["proof"]
    first = [i for i, s in enumerate(proof) if s[0] == "prune"][:2]
    if len(first) == 2:
        i, j = first
        proof[i], proof[j] = proof[j], proof[i]


def _as_written(doc):
    pass


CHANGES = [
    _as_written,
    drop_last_box,
    _lower_the_last_bound,
    _raise_a_bound_past_its_threshold,
    _move_the_last_split,
    _swap_the_first_two_boxes,
]


@pytest.mark.parametrize("compiled", [False, True], ids=["numpy", "compiled"])
@pytest.mark.parametrize("change", CHANGES, ids=lambda f: f.__name__.strip("_"))
def test_the_walk_gives_checker_runs_verdict(certificate, change, compiled, tmp_path, monkeypatch):
    if compiled:  # walk_jit.py's steps, as a large proof is walked
        pytest.importorskip("numba")
        monkeypatch.setattr(walk, "COMPILED_FROM", 0)
    path = tampered(certificate, tmp_path, change)
    walked = verify_file(path)
    monkeypatch.setattr(check, "Walker", lambda checker: checker)  # Checker.run walks
    assert walked == verify_file(path)


def test_a_certificate_as_written_is_accepted_by_the_walk(certificate):
    assert verify_file(certificate).valid


def test_a_tampered_certificate_is_rejected_by_the_walk(certificate, tmp_path):
    assert not verify_file(tampered(certificate, tmp_path, _lower_the_last_bound)).valid


def test_the_walk_narrows_a_table_only_where_its_subtree_prunes_with_it():
    proof = [
        ["split", 0, 1.0],
        ["split", 1, 2.0],
        ["prune", "x1", -1.0],
        ["prune", "sum", -1.0],
        ["prune", "sum", -1.0],
    ]
    assert subtree_needs(proof, {"sum": 0, "x1": 1}) == [0b11, 0b11, 0b10, 0b01, 0b01]


def test_a_proof_that_is_no_tree_needs_every_table():
    proof = [["prune", "sum", -1.0], ["prune", "x1", -1.0]]
    assert subtree_needs(proof, {"sum": 0, "x1": 1}) == [0b11, 0b11]


def test_the_certificate_is_big_enough_to_walk_more_than_one_box(certificate):
    doc = json.loads(certificate.read_text())
    assert len(doc["parts"][0]["proof"]) > 3


def test_a_bound_beyond_float32_rounds_to_its_float32_neighbour_without_a_warning():
    import warnings

    import numpy as np

    from treesens.verify.rounding import f32_down, f32_up

    top = float(np.finfo(np.float32).max)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow warning would reach verify's stderr
        assert (f32_down(1e308), f32_up(1e308)) == (top, float("inf"))
        assert (f32_down(-1e308), f32_up(-1e308)) == (float("-inf"), -top)


def _random_table(rng, boxes: int, trees: int):
    from treesens.verify.box_checks import _Table

    lo = rng.choice([-np.inf, 0.0, 1.0, 2.0, np.nan, np.inf], size=(boxes, 2))
    hi = rng.choice([-np.inf, 1.0, 2.0, 3.0, np.nan, np.inf], size=(boxes, 2))
    nan = rng.random((boxes, 2)) < 0.3
    value = rng.choice([-1.0, 0.5, 2.0, np.nan], size=boxes, p=[0.3, 0.3, 0.3, 0.1])
    sizes = rng.multinomial(boxes - trees, [1 / trees] * trees) + 1
    starts = np.cumsum([0, *sizes[:-1]]).astype(np.int64)
    return _Table(lo, hi, nan, value, starts, False)


def test_the_compiled_steps_give_numpys_live_boxes_and_maxima_nan_included():
    pytest.importorskip("numba")
    from treesens.verify import walk_jit

    rng = np.random.default_rng(7)
    for _ in range(200):
        table = _random_table(rng, 40, 6)
        plain, compiled = LiveTable(table), walk.CompiledLiveTable(table, walk_jit)
        live = np.sort(rng.choice(40, size=rng.integers(0, 41), replace=False))
        sides = [
            (*rng.choice([-np.inf, 0.5, 1.0, 2.0, np.nan], size=2), bool(rng.random() < 0.5))
            if rng.random() < 0.8
            else None
            for _ in range(2)
        ]
        c = int(rng.integers(2))
        got, want = compiled.split(live, c, sides), plain.split(live, c, sides)
        assert all(np.array_equal(a, b) for a, b in zip(got, want, strict=True))
        assert np.array_equal(compiled.bound(live), plain.bound(live), equal_nan=True)


def _walkers(monkeypatch) -> list:
    """The Walkers verify_file makes, kept to look at once it is done."""
    made = []

    def kept(checker):
        made.append(walk.Walker(checker))
        return made[-1]

    monkeypatch.setattr(check, "Walker", kept)
    return made


@pytest.mark.parametrize("compiled", [False, True], ids=["numpy", "compiled"])
def test_the_walk_keeps_no_row_table_beside_its_copy_by_columns(certificate, compiled, monkeypatch):
    if compiled:
        pytest.importorskip("numba")
        monkeypatch.setattr(walk, "COMPILED_FROM", 0)
    made = _walkers(monkeypatch)
    assert verify_file(certificate).valid
    assert made[0].tables and not made[0].ch._tables


def test_the_compiled_walk_holds_its_boxes_ends_once(certificate, monkeypatch):
    pytest.importorskip("numba")
    monkeypatch.setattr(walk, "COMPILED_FROM", 0)
    made = _walkers(monkeypatch)
    verify_file(certificate)
    live = next(iter(made[0].tables.values()))
    assert live.ends.size and not hasattr(live, "lo") and not hasattr(live, "hi")


def test_a_tree_s_leaf_boxes_as_arrays_are_its_leaf_boxes(certificate, monkeypatch):
    made = _walkers(monkeypatch)
    verify_file(certificate)
    ch = made[0].ch
    assert ch._leaves
    for (ti, k), held in ch._leaves.items():
        boxes = ch._leaf_boxes(ch.m.trees[ti], k)
        assert held.nodes.tolist() == [b[0] for b in boxes]
        for j, name in enumerate(("lo", "hi", "nan"), start=1):
            assert [list(row) for row in getattr(held, name)] == [list(b[j]) for b in boxes]
