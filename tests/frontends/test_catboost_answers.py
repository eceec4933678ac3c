"""Questions about tiny CatBoost models agree with brute force (every threshold cell
enumerated on the IR): sensitive just below the exact best gap (or threshold), with the
witness replayed by catboost, and insensitive just above it; binary, multiclass and
regression. ``check``, ``sweep`` and ``audit`` answer a saved ``.cbm`` on the command
line with witnesses catboost replays."""

from __future__ import annotations

import json

import numpy as np
import pytest

import treesens
from treesens.compiler.ensemble import Ensemble
from treesens.questions.query_build import make_query
from treesens.tests.conftest import json_lines, treesens_here
from treesens.tests.oracle import (
    brute_force_best_above,
    brute_force_largest_change,
    brute_force_sensitive,
    cell_grid,
)

catboost = pytest.importorskip("catboost")
pd = pytest.importorskip("pandas")

COMMON = {"verbose": 0, "allow_writing_files": False, "thread_count": 1, "random_seed": 0}
NAMES = ["age", "income", "debt"]
OPTS = {"box_search": False, "heuristic": False, "timeout": 60}  # the solver answers


def _frame(n: int = 150, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 3))
    y = X[:, 0] + 0.5 * X[:, 1] + 0.1 * rng.normal(size=n)
    return pd.DataFrame(X, columns=NAMES), y


def _tiny(kind: str):
    frame, y = _frame()
    small = {"iterations": 3, "depth": 2, "border_count": 8, **COMMON}
    if kind == "binary":
        return catboost.CatBoostClassifier(**small).fit(frame, y > 0.7)
    if kind == "multiclass":
        labels = (y > 0.5).astype(int) + (y > 0.9)
        return catboost.CatBoostClassifier(loss_function="MultiClass", **small).fit(frame, labels)
    loss = {"regression": "RMSE", "poisson": "Poisson"}[kind]
    target = np.exp(y) if loss == "Poisson" else y
    return catboost.CatBoostRegressor(loss_function=loss, **small).fit(frame, target)


def _best_gap(ens: Ensemble, vary: list[str]) -> float:
    """The largest g with a pair P(1) >= 0.5 + g, P(1) <= 0.5 - g equal outside ``vary``."""
    X, ns, nv = cell_grid(ens, vary)
    p = ens.proba(X)[:, 1].reshape(ns, nv)
    return float(np.minimum(p.max(axis=1) - 0.5, 0.5 - p.min(axis=1)).max())


def _replays(est, r) -> None:
    """The witness's outputs are catboost's own predictions for it."""
    assert r.status == "sensitive" and r.validated
    for copy in ("x1", "x2"):
        row = pd.DataFrame([r.witness[copy]])[NAMES]
        lib = est.predict_proba(row)[0] if hasattr(est, "predict_proba") else est.predict(row)
        np.testing.assert_allclose(r.outputs[copy], np.atleast_1d(lib), rtol=0, atol=1e-12)


@pytest.mark.parametrize("vary", ["age", "income"])
def test_binary_gap_agrees_with_brute_force_either_side_of_the_best(vary):
    est = _tiny("binary")
    ens = treesens.load_model(est)
    best = _best_gap(ens, [vary])
    assert 0.0 < best < 0.5
    below, above = best - 1e-4, best + 1e-4
    assert brute_force_sensitive(ens, make_query([vary], gap=below))
    assert not brute_force_sensitive(ens, make_query([vary], gap=above))
    _replays(est, treesens.check(ens, [vary], gap=below, **OPTS))
    assert treesens.check(ens, [vary], gap=above, **OPTS).status == "insensitive"


@pytest.mark.parametrize("vary", ["age", "income"])
def test_max_gap_is_the_brute_force_best_with_a_replayed_pair(vary):
    est = _tiny("binary")
    ens = treesens.load_model(est)
    r = treesens.max_gap(ens, vary=[vary], timeout=60)
    best = _best_gap(ens, [vary])
    assert r.max_gap["proven"]
    assert r.max_gap["lower"] <= best + 1e-9 and best <= r.max_gap["upper"] + 1e-9
    _replays(est, r)


def test_binary_insensitive_feature_agrees_with_brute_force():
    est = _tiny("binary")
    ens = treesens.load_model(est)
    r = treesens.check(ens, ["debt"], gap=0.05, **OPTS)
    assert r.status == "insensitive"
    assert not brute_force_sensitive(ens, make_query(["debt"], gap=0.05))


def test_multiclass_answers_agree_with_brute_force_over_gaps():
    est = _tiny("multiclass")
    ens = treesens.load_model(est)
    seen = set()
    for vary, classes in (("age", ("0", "any")), ("income", ("2", "0"))):
        for gap in (1.0, 1.5, 2.0, 3.0, 5.0, 10.0):
            query = make_query([vary], gap=gap, classes=classes)
            expected = brute_force_sensitive(ens, query)
            r = treesens.check(ens, [vary], gap=gap, classes=classes, **OPTS)
            assert r.status == ("sensitive" if expected else "insensitive"), (vary, gap)
            if expected:
                _replays(est, r)
            seen.add(expected)
    assert seen == {True, False}  # the gaps straddle the best


# a MultiClass model of two one-split trees: the first reads the shared feature and adds
# 0 or SHIFT to every class, leaving each class difference (what a gap row reads) as it
# is; the second reads the varied one, class 0 by LEAD on its low side, class 1 by 3 on
# its high side. catboost's float sums of the shifted leaves differ from the others'
LEAD, SHIFT = 1.7538858562880193, 2.1677009770660103


def _shifted_multiclass(path, low_shift: bool = False) -> None:
    X = np.array([[a, b] for a in range(4) for b in range(4)] * 5, dtype=float)
    y = (X[:, 0] >= 2).astype(int) + (X[:, 1] >= 2)
    est = catboost.CatBoostClassifier(iterations=2, depth=1, loss_function="MultiClass", **COMMON)
    est.fit(X, y).save_model(str(path), format="json")
    doc = json.loads(path.read_text())
    borders = [f["borders"] for f in doc["features_info"]["float_features"]]
    shifts = [SHIFT] * 3 + [0.0] * 3 if low_shift else [0.0] * 3 + [SHIFT] * 3
    for tree, f, leaves in ((0, 1, shifts), (1, 0, [LEAD, 0.0, 0.0, 0.0, 3.0, 0.0])):
        split = {"border": borders[f][0], "float_feature_index": f, "split_type": "FloatFeature"}
        split["split_index"] = sum(len(b) for b in borders[:f])
        doc["oblivious_trees"][tree].update(splits=[split], leaf_values=leaves)
    path.write_text(json.dumps(doc))


def _class_0_meets(p, gap: float) -> bool:
    return bool(p[0] >= gap * p[1] and p[0] >= gap * p[2])


def test_a_near_miss_of_leaves_shifted_in_every_class_does_not_rule_its_box_out(tmp_path):
    # the box search ruled out the box of a pair catboost's sums put an ulp short of the
    # ratio, on its lower corner; the same box holds the shifted pair, which meets it
    path = tmp_path / "m.json"
    _shifted_multiclass(path)
    est = catboost.CatBoostClassifier().load_model(str(path), format="json")
    low, high = est.predict_proba(np.array([[0.0, 0.0], [0.0, 3.0]]))
    if low[0] / low[1] > high[0] / high[1]:  # the lower corner (the shared feature low) misses
        _shifted_multiclass(path, low_shift=True)
        est = catboost.CatBoostClassifier().load_model(str(path), format="json")
        low, high = est.predict_proba(np.array([[0.0, 0.0], [0.0, 3.0]]))
    gap = float(high[0] / high[1])
    while not _class_0_meets(high, gap):
        gap = float(np.nextafter(gap, 0.0))
    assert not _class_0_meets(low, gap)
    vary = treesens.load_model(str(path)).feature_names[0]
    alone = treesens.check(str(path), [vary], gap=gap, classes=(0, 1), backend="boxes")
    assert alone.status != "insensitive"
    r = treesens.check(str(path), [vary], gap=gap, classes=(0, 1))
    assert r.status == "sensitive" and r.validated


_best_above = brute_force_best_above


@pytest.mark.parametrize("kind", ["regression", "poisson"])
def test_regressor_threshold_form_agrees_with_brute_force_either_side_of_the_best(kind):
    est = _tiny(kind)
    ens = treesens.load_model(est)
    b, best = _best_above(ens, ["age"])
    eps = 1e-4 * max(1.0, abs(best))
    r = treesens.check(ens, ["age"], above=best - eps, below=b, **OPTS)
    _replays(est, r)
    assert r.outputs["x1"][0] >= best - eps and r.outputs["x2"][0] <= b
    assert treesens.check(ens, ["age"], above=best + eps, below=b, **OPTS).status == "insensitive"


@pytest.mark.parametrize("search", ["solver", "box search"])
def test_regressor_delta_agrees_with_brute_force_either_side_of_the_largest_change(search):
    est = _tiny("regression")
    ens = treesens.load_model(est)
    best = brute_force_largest_change(ens, ["age"])
    eps = 1e-4 * max(1.0, best)
    opts = OPTS if search == "solver" else {"timeout": 60}
    r = treesens.check(ens, ["age"], delta=best - eps, **opts)
    _replays(est, r)
    assert abs(r.outputs["x1"][0] - r.outputs["x2"][0]) >= best - eps
    assert treesens.check(ens, ["age"], delta=best + eps, **opts).status == "insensitive"


def test_regressor_max_gap_is_the_brute_force_largest_change_with_a_replayed_pair():
    est = _tiny("regression")
    ens = treesens.load_model(est)
    r = treesens.max_gap(ens, vary=["age"], timeout=60)
    best = brute_force_largest_change(ens, ["age"])
    assert r.max_gap["proven"]
    assert r.max_gap["lower"] <= best + 1e-9 and best <= r.max_gap["upper"] + 1e-9
    _replays(est, r)


# ---- the command line on saved .cbm models ----------------------------------------------


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cbm")
    _tiny("binary").save_model(str(folder / "clf.cbm"))
    _tiny("regression").save_model(str(folder / "reg.cbm"))
    frame, y = _frame(8, seed=3)
    frame.assign(label=(y > 0.7).astype(int)).to_csv(folder / "rows.csv", index=False)
    return folder


def _replayed_by_catboost(path, line: dict) -> None:
    model = catboost.CatBoost()
    model.load_model(str(path))
    for copy in ("x1", "x2"):
        row = pd.DataFrame([line["witness"][copy]])[NAMES]
        kind = {"clf.cbm": "Probability", "reg.cbm": "RawFormulaVal"}[path.name]
        lib = np.atleast_1d(model.predict(row, prediction_type=kind)[0])
        np.testing.assert_allclose(line["outputs"][copy], lib, rtol=0, atol=1e-12)


def test_cli_check_answers_a_cbm_classifier_with_a_replayed_witness(saved):
    p = treesens_here("check", saved / "clf.cbm", "--vary", "age", "--gap", "0.1", "--json")
    assert p.returncode == 0, p.stderr
    line = json.loads(p.stdout)
    assert line["status"] == "sensitive" and line["validated"]
    _replayed_by_catboost(saved / "clf.cbm", line)


def test_cli_check_answers_a_cbm_regressor_above_and_below(saved):
    args = ("--vary", "age", "--above", "0.9", "--below", "0.5", "--json")
    p = treesens_here("check", saved / "reg.cbm", *args)
    assert p.returncode == 0, p.stderr
    line = json.loads(p.stdout)
    assert line["status"] == "sensitive" and line["validated"]
    assert line["threshold"] == [0.9, 0.5]
    _replayed_by_catboost(saved / "reg.cbm", line)


@pytest.mark.parametrize(
    "model, question",
    [("clf.cbm", ("--gap", "0.1")), ("reg.cbm", ("--above", "0.9", "--below", "0.5"))],
)
def test_cli_sweep_answers_a_cbm_with_replayed_witnesses(saved, model, question):
    p = treesens_here("sweep", saved / model, *question, "--json")
    assert p.returncode == 0, p.stderr
    lines = json_lines(p.stdout)
    assert [d["query"] for d in lines] == NAMES
    assert {d["query"]: d["status"] for d in lines}["age"] == "sensitive"
    for line in lines:
        if line["status"] == "sensitive":
            assert line["validated"]
            _replayed_by_catboost(saved / model, line)


def test_cli_audit_answers_a_cbm_classifier_row_by_row(saved):
    args = ("--data", saved / "rows.csv", "--vary", "age", "--gap", "0.1", "--json")
    p = treesens_here("audit", saved / "clf.cbm", *args)
    assert p.returncode == 0, p.stderr
    lines = json_lines(p.stdout)
    assert [d["row"] for d in lines] == list(range(8))
    assert any(d["status"] == "sensitive" for d in lines)
    for line in lines:
        if line["status"] == "sensitive":
            assert line["validated"]
            _replayed_by_catboost(saved / "clf.cbm", line)


@pytest.mark.parametrize("command", ["check", "sweep"])
def test_cli_delta_answers_a_cbm_regressor_with_replayed_witnesses(saved, command):
    vary = ("--vary", "age") if command == "check" else ()
    p = treesens_here(command, saved / "reg.cbm", *vary, "--delta", "0.3", "--json")
    assert p.returncode == 0, p.stderr
    lines = json_lines(p.stdout)
    assert {d["query"]: d["status"] for d in lines}["age"] == "sensitive"
    for line in lines:
        if line["status"] == "sensitive":
            assert line["validated"]
            assert abs(line["outputs"]["x1"][0] - line["outputs"]["x2"][0]) >= 0.3
            _replayed_by_catboost(saved / "reg.cbm", line)


def test_cli_audit_answers_a_cbm_regressor_row_by_row_with_delta(saved):
    args = ("--data", saved / "rows.csv", "--vary", "age", "--delta", "0.3", "--json")
    p = treesens_here("audit", saved / "reg.cbm", *args)
    assert p.returncode == 0, p.stderr
    lines = json_lines(p.stdout)
    assert [d["row"] for d in lines] == list(range(8))
    assert any(d["status"] == "sensitive" for d in lines)
    for line in lines:
        if line["status"] == "sensitive":
            assert line["validated"]
            _replayed_by_catboost(saved / "reg.cbm", line)


def test_a_sens_file_names_a_cbm_model_and_the_catboost_format(saved):
    path = saved / "q.sens"
    path.write_text('model "clf.cbm"\nformat catboost\n\nquery one {\n  vary age\n  gap 0.1\n}\n')
    p = treesens_here("run", path, "--json", cwd=saved)
    assert p.returncode == 0, p.stderr
    (line,) = json_lines(p.stdout)
    assert line["status"] == "sensitive" and line["validated"]
    _replayed_by_catboost(saved / "clf.cbm", line)
