"""An ensemble's fingerprint (Ensemble.fingerprint) keys what reuses earlier answers: a
sweep's or an audit's resume lines (``stats.asked.ensemble``) and the structures kept
between commands. Two ensembles that can answer differently differ in it: each field
that changes an answer changes it."""

from __future__ import annotations

import pickle
from dataclasses import replace

import pytest

import treesens
from treesens.compiler.ensemble import (
    IDENTITY,
    LOGISTIC,
    MISSING_ZERO,
    SOFTMAX,
    Ensemble,
    Feature,
    Tree,
)


def _tree(threshold: float = 0.5, categories=None, **kw) -> Tree:
    args = dict(
        feature=[0, -1, -1],
        threshold=[threshold, 0.0, 0.0],
        left=[1, 0, 0],
        right=[2, 0, 0],
        default_left=[True, False, False],
        value=[[0.0], [-1.0], [1.0]],
        outputs=(0,),
        categories=categories,
    )
    return Tree(**(args | kw))


def _ens(**kw) -> Ensemble:
    args = dict(
        trees=(_tree(), _tree(0.25)),
        features=(Feature("a", lb=0.0, ub=1.0), Feature("b", lb=0.0, ub=1.0)),
        n_classes=2,
        intercept=(0.0,),
        link=LOGISTIC,
    )
    return Ensemble(**(args | kw))


def _with_feature(**kw) -> Ensemble:
    base = _ens()
    return base.with_features((replace(base.features[0], **kw), base.features[1]))


def _with_tree(**kw) -> Ensemble:
    return _ens(trees=(_tree(**kw), _tree(0.25)))


_CATEGORICAL = (Feature("a", kind="categorical", lb=0, ub=3, categories=("p", "q", "r", "s")),)

# each: an ensemble differing from _ens() (or the given base) in one field only
OTHERS = {
    "sums": lambda: _ens(sums="float32"),
    "op": lambda: _ens(op="<="),
    "cast": lambda: _ens(cast="float64"),
    "intercept": lambda: _ens(intercept=(0.5,)),
    "scale": lambda: _ens(scale=0.5),
    "link": lambda: _ens(n_classes=0, link=IDENTITY),
    "probability": lambda: _ens(probability=True),
    "feature name": lambda: _with_feature(name="c"),
    "feature lb": lambda: _with_feature(lb=0.25),
    "feature ub": lambda: _with_feature(ub=0.75),
    "feature kind": lambda: _with_feature(kind="integer"),
    "may_be_missing": lambda: _with_feature(may_be_missing=True),
    "threshold": lambda: _with_tree(threshold=0.75),
    "default_left": lambda: _with_tree(default_left=[False, False, False]),
    "missing": lambda: _with_tree(missing=[MISSING_ZERO, 0, 0]),
    "leaf value": lambda: _with_tree(value=[[0.0], [-1.0], [2.0]]),
    "tree order": lambda: _ens(trees=(_tree(0.25), _tree())),
}


@pytest.mark.parametrize("field", sorted(OTHERS))
def test_two_ensembles_differing_only_in_one_field_have_different_fingerprints(field):
    assert OTHERS[field]().fingerprint() != _ens().fingerprint()


def _categorical(**kw) -> Ensemble:
    feature = replace(_CATEGORICAL[0], **{k: v for k, v in kw.items() if k != "routed"})
    routed = kw.get("routed", frozenset({1}))
    tree = _tree(categories=(routed, None, None))
    return _ens(trees=(tree,), features=(feature, Feature("b", lb=0.0, ub=1.0)))


@pytest.mark.parametrize(
    "change",
    [
        {"routed": frozenset({1, 2})},
        {"categories": ("p", "q", "s", "r")},
        {"category_values": (1, 2, 3, 4)},
    ],
    ids=["category routing", "category names", "category values"],
)
def test_two_categorical_ensembles_differing_only_in_one_field_have_different_fingerprints(
    change,
):
    assert _categorical(**change).fingerprint() != _categorical().fingerprint()


def test_a_category_value_read_as_a_number_and_as_a_string_differ():
    one = _categorical(category_values=(1, 2, 3, 4))
    assert _categorical(category_values=("1", "2", "3", "4")).fingerprint() != one.fingerprint()


@pytest.mark.parametrize("outputs", [(1,), (2,)])
def test_two_multiclass_ensembles_differing_only_in_a_trees_output_have_different_fingerprints(
    outputs,
):
    def softmax(out: tuple[int, ...]) -> Ensemble:
        return _ens(n_classes=3, link=SOFTMAX, intercept=(0.0,) * 3, trees=(_tree(outputs=out),))

    assert softmax(outputs).fingerprint() != softmax((0,)).fingerprint()


def test_an_ensemble_pickled_with_an_earlier_fingerprint_computes_its_own():
    """An Ensemble pickled by a treesens whose fingerprint hashed less carries that
    fingerprint in its state: it is not the one this treesens matches on."""
    ens = _ens(sums="float32")
    state = pickle.loads(pickle.dumps(ens))
    object.__setattr__(state, "_fingerprint", _ens().fingerprint())  # the old attribute
    assert pickle.loads(pickle.dumps(state)).fingerprint() == ens.fingerprint()


def test_a_float32_sums_sweep_does_not_reuse_a_float64_sums_models_resume_lines(tmp_path):
    log = tmp_path / "r.jsonl"
    first = _ens()
    treesens.sweep(first, out=log, gap=0.3, timeout=30)
    assert len(log.read_text().splitlines()) == 2
    second = replace(first, sums="float32")
    with pytest.warns(UserWarning, match="another model"):
        treesens.sweep(second, resume=log, out=log, gap=0.3, timeout=30)
    assert len(log.read_text().splitlines()) == 4  # both asked again, appended


def test_fingerprints_are_hexadecimal_sha256s():
    fp = _ens().fingerprint()
    assert len(fp) == 64 and set(fp) <= set("0123456789abcdef")
