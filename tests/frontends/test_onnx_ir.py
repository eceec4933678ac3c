"""ONNX tree ensembles load into the Ensemble IR, and the IR's own evaluation (proba, raw,
predict) equals onnxruntime's on random rows, rows with NaN, and rows placed exactly on
every threshold and one float32 / float64 step either side: for the models skl2onnx and
onnxmltools write (scikit-learn, XGBoost, LightGBM; binary, multiclass, regression) and
for operators built node by node (every node mode and NaN track, double inputs, a Cast in
front, ZipMap, string labels, averaged regressors, the ai.onnx.ml 5 TreeEnsemble)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import treesens
from treesens.compiler.ensemble import IDENTITY, LOGISTIC, PROBA, SOFTMAX, Ensemble
from treesens.compiler.errors import UnsupportedModelError
from treesens.tests.frontends import onnx_models as om

sk_ensemble = pytest.importorskip("sklearn.ensemble")
sk_tree = pytest.importorskip("sklearn.tree")
pytest.importorskip("skl2onnx")

X, YB, Y3, YR = om.data()

# onnxruntime sums leaf weights in float32, the IR in float64
TOL = 2e-6


def _agrees(ens: Ensemble, blob: bytes) -> None:
    rows = om.probe_rows(ens, om.onnx_thresholds(blob))
    rep = ens.replayer
    if ens.is_regressor:
        np.testing.assert_allclose(ens.predict(rows), rep.predict(rows), rtol=TOL, atol=TOL)
    else:
        np.testing.assert_allclose(ens.proba(rows), rep.predict_proba(rows), rtol=0, atol=TOL)
    np.testing.assert_allclose(ens.raw(rows), rep.predict_raw(rows), rtol=TOL, atol=TOL)


def _load(tmp_path, blob: bytes, name: str = "m.onnx") -> Ensemble:
    return treesens.load_model(om.write(tmp_path, name, blob))


SKLEARN = {
    "DecisionTreeClassifier": lambda: sk_tree.DecisionTreeClassifier(max_depth=3, random_state=0),
    "RandomForestClassifier": lambda: sk_ensemble.RandomForestClassifier(
        3, max_depth=3, random_state=0
    ),
    "ExtraTreesClassifier": lambda: sk_ensemble.ExtraTreesClassifier(
        3, max_depth=3, random_state=0
    ),
    "GradientBoostingClassifier": lambda: sk_ensemble.GradientBoostingClassifier(
        n_estimators=3, max_depth=2, random_state=0
    ),
    "HistGradientBoostingClassifier": lambda: sk_ensemble.HistGradientBoostingClassifier(
        max_iter=3, max_depth=2
    ),
}


@pytest.mark.parametrize("kind", sorted(SKLEARN))
@pytest.mark.parametrize("classes", [2, 3])
def test_skl2onnx_classifier_matches_onnxruntime(tmp_path, kind, classes):
    est = SKLEARN[kind]().fit(X, YB if classes == 2 else Y3)
    blob = om.sklearn_onnx(est, X)
    ens = _load(tmp_path, blob)
    assert (ens.n_classes, ens.op, ens.cast) == (classes, "<=", "float32")
    _agrees(ens, blob)


def test_skl2onnx_forest_is_a_mean_of_probabilities(tmp_path):
    est = SKLEARN["RandomForestClassifier"]().fit(X, YB)
    ens = _load(tmp_path, om.sklearn_onnx(est, X))
    assert (ens.link, ens.n_outputs) == (PROBA, 1)


def test_skl2onnx_boosting_is_logistic_and_softmax(tmp_path):
    gb = SKLEARN["GradientBoostingClassifier"]
    assert _load(tmp_path, om.sklearn_onnx(gb().fit(X, YB), X), "b.onnx").link == LOGISTIC
    assert _load(tmp_path, om.sklearn_onnx(gb().fit(X, Y3), X), "m.onnx").link == SOFTMAX


def test_skl2onnx_classifier_without_zipmap_matches_onnxruntime(tmp_path):
    est = SKLEARN["RandomForestClassifier"]().fit(X, Y3)
    blob = om.sklearn_onnx(est, X, options={"zipmap": False})
    _agrees(_load(tmp_path, blob), blob)


def test_skl2onnx_string_labels_match_onnxruntime(tmp_path):
    est = SKLEARN["DecisionTreeClassifier"]().fit(X, np.array(["no", "yes"])[YB])
    blob = om.sklearn_onnx(est, X)
    _agrees(_load(tmp_path, blob), blob)


def test_skl2onnx_double_input_compares_doubles(tmp_path):
    est = SKLEARN["RandomForestClassifier"]().fit(X, YB)
    blob = om.sklearn_onnx(est, X.astype(np.float64))
    ens = _load(tmp_path, blob)
    assert ens.cast == "float64"
    _agrees(ens, blob)


SKLEARN_REGRESSORS = {
    "DecisionTreeRegressor": lambda: sk_tree.DecisionTreeRegressor(max_depth=3),
    "RandomForestRegressor": lambda: sk_ensemble.RandomForestRegressor(
        3, max_depth=3, random_state=0
    ),
    "ExtraTreesRegressor": lambda: sk_ensemble.ExtraTreesRegressor(3, max_depth=3, random_state=0),
    "GradientBoostingRegressor": lambda: sk_ensemble.GradientBoostingRegressor(
        n_estimators=3, max_depth=2
    ),
    "HistGradientBoostingRegressor": lambda: sk_ensemble.HistGradientBoostingRegressor(
        max_iter=3, max_depth=2
    ),
}


@pytest.mark.parametrize("kind", sorted(SKLEARN_REGRESSORS))
def test_skl2onnx_regressor_matches_onnxruntime(tmp_path, kind):
    est = SKLEARN_REGRESSORS[kind]().fit(X, YR)
    blob = om.sklearn_onnx(est, X)
    ens = _load(tmp_path, blob)
    assert (ens.n_classes, ens.link) == (0, IDENTITY)
    _agrees(ens, blob)


def _xgb(kind: str):
    xgb = pytest.importorskip("xgboost")
    if kind == "regressor":
        return xgb.XGBRegressor(n_estimators=3, max_depth=2, nthread=1).fit(X, YR)
    return xgb.XGBClassifier(n_estimators=3, max_depth=2, nthread=1).fit(
        X, YB if kind == "binary" else Y3
    )


def _lgb(kind: str):
    lgb = pytest.importorskip("lightgbm")
    kw = dict(n_estimators=3, num_leaves=4, verbose=-1, num_threads=1, min_child_samples=5)
    if kind == "regressor":
        return lgb.LGBMRegressor(**kw).fit(X, YR)
    return lgb.LGBMClassifier(**kw).fit(X, YB if kind == "binary" else Y3)


@pytest.mark.parametrize("kind", ["binary", "multiclass", "regressor"])
@pytest.mark.parametrize("library", ["xgboost", "lightgbm"])
def test_onnxmltools_model_matches_onnxruntime(tmp_path, library, kind):
    pytest.importorskip("onnxmltools")
    est = (_xgb if library == "xgboost" else _lgb)(kind)
    blob = om.onnxmltools_model(est, X.shape[1])
    ens = _load(tmp_path, blob)
    expected = {"binary": LOGISTIC, "multiclass": SOFTMAX, "regressor": IDENTITY}[kind]
    assert ens.link == expected
    assert ens.op == ("<" if library == "xgboost" else "<=")  # BRANCH_LT / BRANCH_LEQ
    _agrees(ens, blob)


def test_onnxmltools_lightgbm_with_missing_values_matches_onnxruntime(tmp_path):
    pytest.importorskip("onnxmltools")
    lgb = pytest.importorskip("lightgbm")
    Xm = X.copy()
    Xm[::5, 0] = np.nan
    est = lgb.LGBMClassifier(n_estimators=3, num_leaves=4, verbose=-1, num_threads=1).fit(Xm, YB)
    blob = om.onnxmltools_model(est, X.shape[1])
    _agrees(_load(tmp_path, blob), blob)


@pytest.mark.parametrize("kind", ["binary", "multiclass"])
def test_onnxmltools_lightgbm_without_zipmap_reads_its_product_by_one(tmp_path, kind):
    pytest.importorskip("onnxmltools")
    onnx = pytest.importorskip("onnx")
    blob = om.onnxmltools_model(_lgb(kind), X.shape[1], zipmap=False)
    assert "Mul" in {n.op_type for n in onnx.load_model_from_string(blob).graph.node}
    _agrees(_load(tmp_path, blob), blob)


def test_a_product_by_another_constant_is_refused(tmp_path):
    pytest.importorskip("onnxmltools")
    onnx = pytest.importorskip("onnx")
    blob = om.onnxmltools_model(_lgb("binary"), X.shape[1], zipmap=False)
    model = onnx.load_model_from_string(blob)
    factor = next(n.input[1] for n in model.graph.node if n.op_type == "Mul")
    (one,) = [i for i in model.graph.initializer if i.name == factor]
    one.CopyFrom(onnx.numpy_helper.from_array(np.array([2.0], dtype=np.float32), factor))
    om.refused(tmp_path, model.SerializeToString(), "operator Mul", kind=UnsupportedModelError)


MODES = ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"]


@pytest.mark.parametrize("tracks", [0, 1])
@pytest.mark.parametrize("mode", MODES)
def test_every_node_mode_and_nan_track_matches_onnxruntime(tmp_path, mode, tracks):
    t = float(np.float32(0.3))
    blob = om.classifier(om.stump_nodes(mode, t, tracks), [(1, 0, 0.25), (2, 0, 0.75)])
    ens = _load(tmp_path, blob)
    _agrees(ens, blob)
    on = np.array([[t, 0.0], [np.nan, 0.0]])
    np.testing.assert_array_equal(ens.proba(on), ens.replayer.predict_proba(on).astype(float))


@pytest.mark.parametrize("ir_op", ["<", "<="])
def test_mixed_modes_map_onto_one_comparison(tmp_path, ir_op):
    # two of three splits decide the ensemble's comparison; the third is shifted onto it
    modes = (
        ("BRANCH_LT", "BRANCH_GTE", "BRANCH_LEQ")
        if ir_op == "<"
        else ("BRANCH_LEQ", "BRANCH_GT", "BRANCH_LT")
    )
    nodes = om.two_level_nodes(modes, (0.5, 0.25, 0.7), tracks=(1, 0, 1))
    w = [(2, 0, 0.1), (3, 0, 0.4), (5, 0, 0.6), (6, 0, 0.9)]
    blob = om.classifier(nodes, w)
    ens = _load(tmp_path, blob)
    assert ens.op == ir_op
    _agrees(ens, blob)


def test_equality_splits_below_others_match_onnxruntime(tmp_path):
    nodes = om.two_level_nodes(("BRANCH_EQ", "BRANCH_NEQ", "BRANCH_LEQ"), (2.0, 0.0, 0.5))
    w = [(2, 0, 0.1), (3, 0, 0.4), (5, 0, 0.6), (6, 0, 0.9)]
    blob = om.classifier(nodes, w)
    ens = _load(tmp_path, blob)
    _agrees(ens, blob)
    rows = np.array([[2.0, 0.0], [2.0, -0.0], [2.0, 1.0], [1.0, 0.0], [np.nan, 0.0]])
    np.testing.assert_allclose(ens.proba(rows), ens.replayer.predict_proba(rows), atol=TOL)


@pytest.mark.parametrize(
    "points, modes, tracks",
    [
        ((3.0, 1.0, 2.0), ("BRANCH_EQ",) * 3, (0, 1, 0)),
        (
            (0.0, 5.0, 0.0, -2.5),
            ("BRANCH_EQ", "BRANCH_NEQ", "BRANCH_EQ", "BRANCH_NEQ"),
            (0, 1, 0, 0),
        ),
        ((1.0, 0.1, 7.0), ("BRANCH_NEQ", "BRANCH_EQ", "BRANCH_EQ"), (1, 0, 1)),
    ],
)
def test_equality_chains_match_onnxruntime(tmp_path, points, modes, tracks):
    k = len(points)
    nodes = om.equality_chain_nodes(points, modes, tracks)
    weights = [(k + i, 0, 0.05 * (i + 1)) for i in range(k)] + [
        (2 * k + 1, 0, 0.8),
        (2 * k + 2, 0, 0.9),
    ]
    blob = om.classifier(nodes, weights)
    ens = _load(tmp_path, blob)
    _agrees(ens, blob)
    values = sorted({float(np.float32(p)) for p in points} | {-0.0, -1.0, 2.5, 9.0, np.nan})
    rows = np.array([[v, w] for v in values for w in (0.25, 0.75)])
    np.testing.assert_allclose(ens.proba(rows), ens.replayer.predict_proba(rows), atol=TOL)


def test_a_lightgbm_categorical_split_stays_linear_in_its_categories(tmp_path):
    pytest.importorskip("onnxmltools")
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(0)
    Xc = rng.uniform(size=(600, 3)).astype(np.float32)
    Xc[:, 2] = rng.integers(0, 40, 600)
    y = ((Xc[:, 2] % 3 == 0) ^ (Xc[:, 0] > 0.5)).astype(int)
    est = lgb.LGBMClassifier(
        n_estimators=3,
        num_leaves=4,
        verbose=-1,
        num_threads=1,
        min_child_samples=5,
        max_cat_to_onehot=64,
        cat_smooth=1,
        min_data_per_group=2,
    ).fit(Xc, y, categorical_feature=[2])
    blob = om.onnxmltools_model(est, 3)
    ens = _load(tmp_path, blob)
    n_onnx = len(om.onnx_thresholds(blob))
    assert sum(int((t.feature >= 0).sum()) for t in ens.trees) <= 2 * n_onnx + 8
    _agrees(ens, blob)
    rows = np.array([[0.3, 0.5, c] for c in np.arange(-1.0, 41.0, 0.5)] + [[0.3, 0.5, np.nan]])
    np.testing.assert_allclose(ens.proba(rows), ens.replayer.predict_proba(rows), atol=TOL)


def test_double_input_compares_in_double(tmp_path):
    t = float(np.float32(0.1))
    blob = om.classifier(
        om.stump_nodes("BRANCH_LT", t), [(1, 0, 0.25), (2, 0, 0.75)], in_type=om.DOUBLE
    )
    ens = _load(tmp_path, blob)
    assert ens.cast == "float64"
    just_below = np.array([[np.nextafter(t, -1.0), 0.0]])  # the same float32 as t
    assert ens.proba(just_below)[0, 1] == pytest.approx(0.25)
    _agrees(ens, blob)


@pytest.mark.parametrize("to, cast", [(om.FLOAT, "float32"), (om.DOUBLE, "float64")])
def test_a_cast_in_front_sets_the_comparison_precision(tmp_path, to, cast):
    blob = om.classifier(om.stump_nodes("BRANCH_LEQ", 0.1), [(1, 0, 0.25), (2, 0, 0.75)])
    blob = om.with_cast_in_front(blob, to=to)
    ens = _load(tmp_path, blob)
    assert ens.cast == cast
    _agrees(ens, blob)


def test_zipmap_output_is_read_in_label_order(tmp_path):
    nodes = om.two_level_nodes(("BRANCH_LEQ",) * 3, (0.5, 0.25, 0.7))
    w = [
        (n, c, v)
        for n, vs in (
            (2, (0.2, 0.5, 0.3)),
            (3, (0.6, 0.2, 0.2)),
            (5, (0.1, 0.1, 0.8)),
            (6, (0.3, 0.3, 0.4)),
        )
        for c, v in enumerate(vs)
    ]
    blob = om.classifier(nodes, w, labels=("b", "a", "c"), zipmap=True)
    ens = _load(tmp_path, blob)
    assert (ens.n_classes, ens.link) == (3, PROBA)
    _agrees(ens, blob)


def test_binary_with_both_class_weights_matches_onnxruntime(tmp_path):
    w = [(1, 0, 0.7), (1, 1, 0.3), (2, 0, 0.2), (2, 1, 0.8)]
    for post, link in (("NONE", PROBA), ("SOFTMAX", SOFTMAX)):
        blob = om.classifier(
            om.stump_nodes(), w, post=post, base=[0.1] if post == "SOFTMAX" else None
        )
        ens = _load(tmp_path, blob, f"{post}.onnx")
        assert (ens.link, ens.n_outputs) == (link, 2)
        _agrees(ens, blob)


def test_binary_one_score_logistic_with_base_value_matches_onnxruntime(tmp_path):
    blob = om.classifier(
        om.stump_nodes(), [(1, 0, -0.3), (2, 0, 0.7)], post="LOGISTIC", base=[0.25]
    )
    ens = _load(tmp_path, blob)
    assert (ens.link, ens.intercept) == (LOGISTIC, (0.25,))
    _agrees(ens, blob)


def test_binary_with_opposite_scores_and_logistic_is_class_1s_sigmoid(tmp_path):
    # CatBoost's ONNX export: each leaf gives class 0 minus class 1's weight, and
    # onnxruntime's LOGISTIC takes each score's sigmoid, so P(class 1) = sigmoid(s1)
    w = [(1, 0, 0.3), (1, 1, -0.3), (2, 0, -0.7), (2, 1, 0.7)]
    blob = om.classifier(om.stump_nodes(), w, post="LOGISTIC")
    ens = _load(tmp_path, blob)
    assert (ens.n_classes, ens.link, ens.n_outputs, ens.intercept) == (2, LOGISTIC, 1, (0.0,))
    _agrees(ens, blob)


def test_catboost_onnx_binary_classifier_matches_onnxruntime(tmp_path):
    catboost = pytest.importorskip("catboost")
    est = catboost.CatBoostClassifier(iterations=4, depth=2, verbose=0, random_seed=0)
    est.fit(X, YB)
    path = tmp_path / "cb.onnx"
    est.save_model(str(path), format="onnx")
    ens = treesens.load_model(path)
    assert (ens.n_classes, ens.link) == (2, LOGISTIC)
    _agrees(ens, path.read_bytes())
    np.testing.assert_allclose(ens.proba(X[:50]), est.predict_proba(X[:50]), atol=TOL)


def test_softmax_zero_is_a_softmax_when_no_score_can_be_zero(tmp_path):
    w = [
        (n, c, v)
        for n, c, v in (
            (1, 0, 0.5),
            (1, 1, 1.5),
            (1, 2, 2.0),
            (2, 0, 1.0),
            (2, 1, 0.5),
            (2, 2, 0.25),
        )
    ]
    blob = om.classifier(om.stump_nodes(), w, labels=(0, 1, 2), post="SOFTMAX_ZERO")
    ens = _load(tmp_path, blob)
    assert ens.link == SOFTMAX
    _agrees(ens, blob)


@pytest.mark.parametrize("aggregate, scale", [("SUM", 1.0), ("AVERAGE", 0.5)])
def test_regressor_aggregates_and_base_value_match_onnxruntime(tmp_path, aggregate, scale):
    nodes = om.stump_nodes("BRANCH_GT", 0.5)
    second = om.stump_nodes("BRANCH_LEQ", 0.25)
    second["nodes_treeids"] = [1, 1, 1]
    second["nodes_featureids"] = [1, 1, 1]
    both = {k: nodes[k] + second[k] for k in nodes}
    w = [(1, 1.0, 0), (2, 3.0, 0), (1, -2.0, 1), (2, 5.0, 1)]
    blob = om.regressor(both, w, base=[0.5], aggregate=aggregate)
    ens = _load(tmp_path, blob)
    assert (len(ens.trees), ens.scale, ens.intercept) == (2, scale, (0.5,))
    _agrees(ens, blob)


def test_tree_ensemble_v5_matches_onnxruntime(tmp_path):
    # tree 0: x0 < 0.5 ? leaf 0 : (x1 >= 0.25 ? leaf 1 : leaf 2); tree 1: x1 <= 0.75
    blob = om.tree_ensemble_v5(
        modes=[1, 2, 0],
        splits=[0.5, 0.25, 0.75],
        features=[0, 1, 1],
        true_ids=[0, 1, 3],
        true_leaf=[1, 1, 1],
        false_ids=[1, 2, 4],
        false_leaf=[0, 1, 1],
        leaf_weights=[1.0, 2.0, -1.0, 0.5, 4.0],
        roots=[0, 2],
        tracks=[1, 0, 0],
    )
    ens = _load(tmp_path, blob)
    assert (len(ens.trees), ens.n_classes) == (2, 0)
    _agrees(ens, blob)


def test_tree_ensemble_v5_of_several_targets_is_a_classifier(tmp_path):
    # one tree per class on x0 <= 0.5 / x1 < 0.25, leaves scoring classes 0, 1, 2
    blob = om.tree_ensemble_v5(
        modes=[0, 1, 0],
        splits=[0.5, 0.25, 0.75],
        features=[0, 1, 0],
        true_ids=[0, 2, 4],
        true_leaf=[1, 1, 1],
        false_ids=[1, 3, 5],
        false_leaf=[1, 1, 1],
        leaf_weights=[0.5, 0.125, 0.25, 0.75, 0.25, 0.125],
        targets=[0, 0, 1, 1, 2, 2],
        roots=[0, 1, 2],
    )
    ens = _load(tmp_path, blob)
    assert (ens.n_classes, ens.link) == (3, PROBA)
    _agrees(ens, blob)


def test_a_loaded_model_pickles_and_replays_in_its_new_life(tmp_path):
    est = SKLEARN["GradientBoostingClassifier"]().fit(X, Y3)
    blob = om.sklearn_onnx(est, X)
    ens = pickle.loads(pickle.dumps(_load(tmp_path, blob)))
    _agrees(ens, blob)


def test_an_onnx_model_proto_in_memory_loads(tmp_path):
    est = SKLEARN["RandomForestClassifier"]().fit(X, YB)
    blob = om.sklearn_onnx(est, X)
    ens = treesens.load_model(om.onnx.load_model_from_string(blob))
    _agrees(ens, blob)


@pytest.mark.parametrize("mode", ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GT"])
@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_double_thresholds_and_weights_as_tensors_match_onnxruntime(tmp_path, mode, kind):
    # 0.1 and 0.7 are no float32 numbers: compared as doubles, exactly
    thresholds = [0.1, 0.7, 0.0, 0.0, 0.3, 0.0, 0.0]
    nodes = om.two_level_nodes((mode, "BRANCH_LEQ", "BRANCH_LT"), (0.1, 0.7, 0.3))
    if kind == "classifier":
        w = [(2, 0, 0.1), (3, 0, 0.4), (5, 0, 0.6), (6, 0, 0.9)]
        blob = om.classifier(nodes, w)
    else:
        blob = om.regressor(nodes, [(2, 0.1), (3, 0.4), (5, 0.6), (6, 0.9)], base=[0.25])
    blob = om.with_double_tensors(blob, thresholds)
    ens = _load(tmp_path, blob)
    assert ens.cast == "float64" and 0.1 in ens.trees[0].threshold.tolist()
    _agrees(ens, blob)
    rows = np.array([[t, t] for t in (0.1, 0.7, *np.nextafter([0.1, 0.7], [-1.0, 2.0]))])
    out = ens.predict(rows) if ens.is_regressor else ens.proba(rows)
    lib = ens.replayer.predict(rows) if ens.is_regressor else ens.replayer.predict_proba(rows)
    np.testing.assert_allclose(out, lib, atol=TOL)


@pytest.mark.parametrize(
    "labels, shown",
    [
        ([0, 2, 5], r"\[0, 2, 5\].*class 1 is label 2"),
        (["cat", "ant", "bee"], r"\[ant, bee, cat\]"),
    ],
)
def test_a_multiclass_model_whose_labels_are_not_positions_warns(tmp_path, labels, shown):
    from treesens.compiler.errors import TreesensWarning

    est = SKLEARN["RandomForestClassifier"]().fit(X, np.asarray(labels)[Y3])
    blob = om.sklearn_onnx(est, X)
    with pytest.warns(TreesensWarning, match=r"m\.onnx: the model's class labels are " + shown):
        _load(tmp_path, blob)


def test_a_multiclass_model_labelled_0_to_k_minus_1_does_not_warn(tmp_path):
    import warnings

    from treesens.compiler.errors import TreesensWarning

    blob = om.sklearn_onnx(SKLEARN["RandomForestClassifier"]().fit(X, Y3), X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TreesensWarning)
        assert _load(tmp_path, blob).n_classes == 3


ON_AND_BEYOND_INF = [-np.inf, -3e38, 0.0, 3e38, 1e39, np.inf, np.nan]  # 1e39: inf in float32


@pytest.mark.parametrize("tracks", [0, 1])
@pytest.mark.parametrize("threshold", [np.inf, -np.inf])
@pytest.mark.parametrize("mode", MODES[:4])
def test_an_infinite_threshold_matches_onnxruntime(tmp_path, mode, threshold, tracks):
    blob = om.classifier(om.stump_nodes(mode, threshold, tracks), [(1, 0, 0.25), (2, 0, 0.75)])
    ens = _load(tmp_path, blob)
    _agrees(ens, blob)
    on = np.array([[v, 0.0] for v in ON_AND_BEYOND_INF])
    np.testing.assert_array_equal(ens.proba(on), ens.replayer.predict_proba(on).astype(float))


def test_histgradientboosting_trained_with_nan_matches_onnxruntime(tmp_path):
    # NaN decides the label: a split of NaN from every number, which skl2onnx writes at inf
    rng = np.random.default_rng(0)
    Xn = rng.random((400, 3)).astype(np.float32)
    Xn[rng.random(400) < 0.3, 0] = np.nan
    y = np.isnan(Xn[:, 0]) ^ (Xn[:, 1] > 0.5)
    est = sk_ensemble.HistGradientBoostingClassifier(max_iter=5, max_depth=3).fit(Xn, y)
    blob = om.sklearn_onnx(est, Xn, options={id(est): {"zipmap": False}})
    assert np.inf in [t for _, t in om.onnx_thresholds(blob)]
    _agrees(_load(tmp_path, blob), blob)


def test_splits_at_inf_and_at_minus_inf_that_need_both_comparisons_are_refused(tmp_path):
    # x <= inf (every number) needs "<=", x < -inf (no number) needs "<"
    nodes = om.two_level_nodes(("BRANCH_LEQ", "BRANCH_LT", "BRANCH_LEQ"), (np.inf, -np.inf, 0.5))
    blob = om.classifier(nodes, [(2, 0, 0.1), (3, 0, 0.4), (5, 0, 0.6), (6, 0, 0.9)])
    om.refused(tmp_path, blob, "inf and at -inf", kind=treesens.InputError)
