"""CatBoost models (``.cbm``, CatBoost JSON, fitted estimators) load into the Ensemble IR,
and the IR's own evaluation equals catboost's predict: on random rows, on rows placed
exactly on every border and one float32 / float64 step beside it, and on rows with
NaN (nan_mode Min and Max); for binary, multiclass and regression losses, oblivious and
non-symmetric trees. The replayer is catboost's predict itself."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

import treesens
from treesens.compiler.ensemble import EXP, IDENTITY, LOGISTIC, SOFTMAX, Ensemble
from treesens.compiler.errors import InputError, UnsupportedModelError

catboost = pytest.importorskip("catboost")
# probe rows hold 1e39, which is inf in float32 for catboost as for the IR
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")

COMMON = {"verbose": 0, "allow_writing_files": False, "thread_count": 1, "random_seed": 0}


def _data(n: int = 200, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 3))
    X[::5, 1] = np.nan
    X[::7, 0] = np.nan
    y = 2.0 * X[:, 2] + np.nan_to_num(X[:, 0]) + 0.1
    return X, y


def _classifier(loss: str = "Logloss", nan_mode: str = "Min", grow: str = "SymmetricTree"):
    X, y = _data()
    labels = (y > 1.3).astype(int) + (y > 2.0) if loss == "MultiClass" else (y > 1.5).astype(int)
    if loss == "CrossEntropy":
        labels = np.clip(y / 3.2, 0, 1)
    est = catboost.CatBoostClassifier(
        iterations=4, depth=3, loss_function=loss, nan_mode=nan_mode, grow_policy=grow, **COMMON
    )
    return est.fit(X, labels)


def _regressor(loss: str = "RMSE", nan_mode: str = "Min", grow: str = "SymmetricTree"):
    X, y = _data()
    est = catboost.CatBoostRegressor(
        iterations=4, depth=3, loss_function=loss, nan_mode=nan_mode, grow_policy=grow, **COMMON
    )
    return est.fit(X, y)


def _probe_rows(ens: Ensemble) -> np.ndarray:
    rng = np.random.default_rng(1)
    R = rng.uniform(-0.2, 1.2, size=(100, ens.n_features))
    rows = [R]
    for t in ens.trees:
        for k in np.flatnonzero(t.feature >= 0):
            th = float(t.threshold[k])
            with np.errstate(over="ignore"):  # nan_mode Max adds a border at float32's max
                up = float(np.nextafter(np.float32(th), np.float32(np.inf)))
            down = float(np.nextafter(np.float32(th), np.float32(-np.inf)))
            for v in (th, up, down, np.nextafter(th, np.inf), np.nextafter(th, -np.inf)):
                r = R[:1].copy()
                r[0, t.feature[k]] = v
                rows.append(r)
    m = R[:20].copy()
    m[:, 0] = np.nan
    m[::2, 1] = np.nan
    m[::3, 2] = np.nan  # a feature trained without NaN (nan_value_treatment AsIs)
    rows.append(m)
    rows.append(
        np.array([[np.inf] * ens.n_features, [-np.inf] * ens.n_features, [1e39] * ens.n_features])
    )
    return np.concatenate(rows)


def _sources(est, tmp_path):
    est.save_model(str(tmp_path / "m.cbm"))
    est.save_model(str(tmp_path / "m.json"), format="json")
    return {"object": est, "cbm": tmp_path / "m.cbm", "json": tmp_path / "m.json"}


def _assert_classifier_agrees(ens: Ensemble, est) -> None:
    X = _probe_rows(ens)
    lib = est.predict_proba(X)
    # catboost sums leaves in double, as the IR does: equal to rounding
    # (a JSON model's leaf values are decimals: catboost reads them back to within an ulp)
    np.testing.assert_allclose(ens.proba(X), lib, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ens.replayer.predict_proba(X), lib, rtol=0, atol=1e-12)
    raw = est.predict(X, prediction_type="RawFormulaVal").reshape(len(X), -1)
    np.testing.assert_allclose(ens.raw(X), raw, rtol=0, atol=1e-12)


def _assert_regressor_agrees(ens: Ensemble, est) -> None:
    X = _probe_rows(ens)
    lib = est.predict(X)
    np.testing.assert_allclose(ens.predict(X), lib, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ens.replayer.predict(X), lib, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("source", ["object", "cbm", "json"])
@pytest.mark.parametrize("nan_mode", ["Min", "Max"])
@pytest.mark.parametrize("loss", ["Logloss", "CrossEntropy", "MultiClass"])
def test_classifier_probabilities_match_catboost(tmp_path, loss, nan_mode, source):
    est = _classifier(loss, nan_mode)
    _assert_classifier_agrees(treesens.load_model(_sources(est, tmp_path)[source]), est)


REGRESSION = {
    "RMSE": IDENTITY,
    "MAE": IDENTITY,
    "Quantile:alpha=0.3": IDENTITY,
    "Poisson": EXP,
    "Tweedie:variance_power=1.5": EXP,
}


@pytest.mark.parametrize("source", ["object", "cbm", "json"])
@pytest.mark.parametrize("loss", sorted(REGRESSION))
def test_regressor_predictions_match_catboost(tmp_path, loss, source):
    est = _regressor(loss, "Max")
    _assert_regressor_agrees(treesens.load_model(_sources(est, tmp_path)[source]), est)


@pytest.mark.parametrize("grow", ["Depthwise", "Lossguide"])
def test_non_symmetric_trees_match_catboost(tmp_path, grow):
    for est, agrees in (
        (_classifier("MultiClass", "Max", grow), _assert_classifier_agrees),
        (_regressor("RMSE", "Min", grow), _assert_regressor_agrees),
    ):
        for source in _sources(est, tmp_path).values():
            agrees(treesens.load_model(source), est)


@pytest.mark.parametrize("loss", sorted(REGRESSION))
def test_regressor_has_its_losss_link(loss):
    ens = treesens.load_model(_regressor(loss))
    assert (ens.n_classes, ens.n_outputs, ens.link) == (0, 1, REGRESSION[loss])


def test_binary_classifier_is_logistic_with_one_output():
    ens = treesens.load_model(_classifier())
    assert (ens.n_classes, ens.n_outputs, ens.link) == (2, 1, LOGISTIC)


def test_multiclass_classifier_is_softmax_with_an_output_per_class():
    ens = treesens.load_model(_classifier("MultiClass"))
    assert (ens.n_classes, ens.n_outputs, ens.link) == (3, 3, SOFTMAX)
    assert all(t.outputs == (0, 1, 2) for t in ens.trees)


def test_comparison_is_float32_at_most_the_border():
    ens = treesens.load_model(_classifier())
    assert (ens.op, ens.cast) == ("<=", "float32")


def test_scale_and_bias_are_the_intercept_and_scale(tmp_path):
    est = _regressor()
    path = tmp_path / "m.json"
    est.save_model(str(path), format="json")
    model = json.loads(path.read_text())
    model["scale_and_bias"] = [0.5, [3.25]]
    path.write_text(json.dumps(model))
    ens = treesens.load_model(path)
    assert (ens.scale, ens.intercept) == (0.5, (3.25,))
    X = _probe_rows(ens)
    np.testing.assert_allclose(ens.predict(X), ens.replayer.predict(X), rtol=0, atol=1e-12)


def test_multiclass_bias_is_one_intercept_per_class(tmp_path):
    est = _classifier("MultiClass")
    path = tmp_path / "m.json"
    est.save_model(str(path), format="json")
    model = json.loads(path.read_text())
    model["scale_and_bias"] = [1.5, [0.25, -1.0, 2.0]]
    path.write_text(json.dumps(model))
    ens = treesens.load_model(path)
    assert (ens.scale, ens.intercept) == (1.5, (0.25, -1.0, 2.0))
    X = _probe_rows(ens)
    np.testing.assert_allclose(ens.proba(X), ens.replayer.predict_proba(X), rtol=0, atol=1e-12)


def test_a_path_an_earlier_split_decides_has_no_node(tmp_path):
    est = _regressor()
    path = tmp_path / "m.json"
    est.save_model(str(path), format="json")
    model = json.loads(path.read_text())
    floats = model["features_info"]["float_features"]
    first = len(floats[0]["borders"]) + len(floats[1]["borders"])  # split_index of f2's first
    borders = floats[2]["borders"]
    assert len(borders) >= 2

    def split(k: int) -> dict:
        border = borders[k]
        return {"border": border, "float_feature_index": 2, "split_index": first + k}

    tree = model["oblivious_trees"][0]
    tree["splits"] = [
        {**split(len(borders) - 1), "split_type": "FloatFeature"},
        {**split(0), "split_type": "FloatFeature"},
    ]
    # the first split gives bit 0 of the leaf index: leaf 1 (x > high, x <= low) is unreachable
    tree["leaf_values"] = [1.0, 2.0, 3.0, 4.0]
    tree["leaf_weights"] = [1, 1, 1, 1]
    model["oblivious_trees"] = [tree]
    path.write_text(json.dumps(model))
    ens = treesens.load_model(path)
    assert ens.trees[0].n_nodes == 5  # not the 7 of a full tree of depth 2
    assert sorted(ens.trees[0].value[ens.trees[0].leaves(), 0]) == [1.0, 3.0, 4.0]
    X = _probe_rows(ens)
    np.testing.assert_allclose(ens.predict(X), ens.replayer.predict(X), rtol=0, atol=1e-12)


def test_unnamed_features_are_named_as_catboost_names_them():
    est = _classifier()
    assert treesens.load_model(est).feature_names == est.feature_names_ == ["0", "1", "2"]


def test_named_features_keep_their_names():
    pd = pytest.importorskip("pandas")
    X, y = _data()
    frame = pd.DataFrame(X, columns=["age", "income", "debt"])
    est = catboost.CatBoostClassifier(iterations=2, depth=2, **COMMON).fit(frame, y > 1.5)
    assert treesens.load_model(est).feature_names == ["age", "income", "debt"]


def test_a_loaded_model_pickles_and_replays_in_a_fresh_state(tmp_path):
    est = _classifier("MultiClass")
    ens = treesens.load_model(_sources(est, tmp_path)["cbm"])
    copy = pickle.loads(pickle.dumps(ens))
    assert copy.replayer._model is None  # rebuilt from the .cbm bytes on first use
    X = _probe_rows(ens)
    np.testing.assert_array_equal(copy.replayer.predict_proba(X), est.predict_proba(X))
    assert copy.fingerprint() == ens.fingerprint()


def test_a_cbm_file_s_trees_are_read_into_the_ir_once(tmp_path, monkeypatch):
    """Its checks before catboost loads it here and its replayer share one reading, where
    the JSON was read twice (0.65 CPU s of a 1,000-iteration model's load)."""
    from treesens.readers.formats import catboost as reader

    est, read, read_json = _classifier(), [], reader._from_json
    monkeypatch.setattr(reader, "_from_json", lambda *a: read.append(a) or read_json(*a))
    ens = treesens.load_model(_sources(est, tmp_path)["cbm"])
    assert len(read) == 1
    X = _probe_rows(ens)
    np.testing.assert_array_equal(ens.replayer.predict_proba(X), est.predict_proba(X))


def test_the_format_is_sniffed_from_content(tmp_path):
    est = _classifier()
    (tmp_path / "model.bin").write_bytes(_sources(est, tmp_path)["cbm"].read_bytes())
    (tmp_path / "model.txt").write_text((tmp_path / "m.json").read_text())
    from treesens.readers import formats

    assert formats.sniff(tmp_path / "model.bin").name == "catboost"
    assert formats.sniff(tmp_path / "model.txt").name == "catboost"


def test_an_unfitted_estimator_is_an_input_error():
    with pytest.raises(InputError, match="not fitted"):
        treesens.load_model(catboost.CatBoostClassifier(**COMMON))


def test_a_ranker_is_unsupported():
    X, y = _data()
    est = catboost.CatBoostRanker(iterations=2, depth=2, **COMMON)
    est.fit(X, y, group_id=np.arange(len(X)) // 10)
    with pytest.raises(UnsupportedModelError, match="not a classifier or regressor"):
        treesens.load_model(est)


def test_a_one_vs_all_multiclass_is_unsupported_by_name():
    X, y = _data()
    est = catboost.CatBoostClassifier(
        iterations=2, depth=2, loss_function="MultiClassOneVsAll", **COMMON
    ).fit(X, (y > 1.3).astype(int) + (y > 2.0))
    with pytest.raises(UnsupportedModelError, match="'MultiClassOneVsAll' is not one treesens"):
        treesens.load_model(est)


def _categorical_model(one_hot_max_size: int):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.uniform(size=300), "city": rng.choice(list("abcdefgh"), 300)})
    y = (frame.city.isin(list("abc")) | (frame.a > 0.7)).astype(int)
    est = catboost.CatBoostClassifier(
        iterations=3, depth=2, one_hot_max_size=one_hot_max_size, **COMMON
    )
    return est.fit(frame, y, cat_features=["city"])


def test_a_ctr_feature_is_refused_in_one_line_naming_it(tmp_path):
    est = _categorical_model(one_hot_max_size=2)
    for source in _sources(est, tmp_path).values():
        with pytest.raises(UnsupportedModelError, match="turns city into CTR statistics") as e:
            treesens.load_model(source)
        assert "\n" not in str(e.value)


def test_a_joblib_saved_model_loads_when_trusted(tmp_path):
    joblib = pytest.importorskip("joblib")
    est = _classifier()
    joblib.dump(est, tmp_path / "m.joblib")
    ens = treesens.load_model(tmp_path / "m.joblib", trust_pickle=True)
    assert ens.source.startswith("catboost:")
    _assert_classifier_agrees(ens, est)


def test_a_pipeline_ending_in_catboost_answers_with_a_replayed_pair():
    pipeline = pytest.importorskip("sklearn.pipeline")
    preprocessing = pytest.importorskip("sklearn.preprocessing")
    X, y = _data()
    X = np.nan_to_num(X)
    est = pipeline.make_pipeline(
        preprocessing.StandardScaler(),
        catboost.CatBoostClassifier(iterations=3, depth=2, **COMMON),
    ).fit(X, y > 1.5)
    ens = treesens.load_model(est)
    r = treesens.check(ens, [ens.feature_names[2]], gap=0.1, timeout=60)
    assert r.status == "sensitive" and r.validated
    x1 = np.array([list(r.witness["x1"].values())])
    np.testing.assert_allclose(r.outputs["x1"], est.predict_proba(x1)[0], rtol=0, atol=1e-12)


def _multiclass_labelled(labels) -> object:
    """A tiny MultiClass model whose three classes are ``labels`` (catboost sorts them)."""
    X, y = _data(n=60)
    classes = np.asarray(labels)[np.minimum((X[:, 2] * 3).astype(int), 2)]
    return catboost.CatBoostClassifier(
        iterations=2, depth=2, loss_function="MultiClass", **COMMON
    ).fit(X, classes)


@pytest.mark.parametrize("source", ["object", "cbm", "json"])
def test_a_multiclass_model_labelled_1_2_3_warns_how_classes_are_numbered(tmp_path, source):
    from treesens.compiler.errors import TreesensWarning

    model = _sources(_multiclass_labelled([1, 2, 3]), tmp_path)[source]
    with pytest.warns(TreesensWarning, match=r"class labels are \[1, 2, 3\].*class 1 is label 2"):
        treesens.load_model(model)


def test_a_multiclass_model_with_string_labels_warns_how_classes_are_numbered():
    from treesens.compiler.errors import TreesensWarning

    est = _multiclass_labelled(["cat", "ant", "bee"])
    with pytest.warns(TreesensWarning, match=r"class labels are \[ant, bee, cat\].*is label bee"):
        treesens.load_model(est)


@pytest.mark.parametrize("source", ["object", "cbm", "json"])
def test_a_multiclass_model_labelled_0_to_k_minus_1_does_not_warn(tmp_path, source):
    import warnings

    from treesens.compiler.errors import TreesensWarning

    model = _sources(_multiclass_labelled([0, 1, 2]), tmp_path)[source]
    with warnings.catch_warnings():
        warnings.simplefilter("error", TreesensWarning)
        assert treesens.load_model(model).n_classes == 3


def _absent_class(names=(0, 1, 2, 3), labels=(0, 1, 3)) -> object:
    """A tiny MultiClass model whose ``class_names`` list a class no training row has."""
    X, y = _data(n=60)
    classes = np.asarray(labels)[np.minimum((X[:, 2] * 3).astype(int), 2)]
    return catboost.CatBoostClassifier(
        iterations=2, depth=2, loss_function="MultiClass", class_names=list(names), **COMMON
    ).fit(X, classes)


@pytest.mark.parametrize("source", ["object", "cbm", "json"])
def test_a_class_listed_in_class_names_but_absent_from_training_is_left_out(tmp_path, source):
    est = _absent_class()
    with pytest.warns(UserWarning):
        ens = treesens.load_model(_sources(est, tmp_path)[source])
    assert ens.n_classes == 3
    X = _probe_rows(ens)
    lib = est.predict_proba(X)
    assert np.all(lib[:, 2] < 1e-300)  # catboost's probability of the absent label 2
    np.testing.assert_allclose(ens.proba(X), lib[:, [0, 1, 3]], rtol=0, atol=1e-12)
    np.testing.assert_allclose(ens.replayer.predict_proba(X), lib[:, [0, 1, 3]], atol=1e-12)


def test_a_class_absent_from_training_is_named_in_a_warning_with_the_labels_by_position():
    from treesens.compiler.errors import TreesensWarning

    with pytest.warns(
        TreesensWarning,
        match=r"gives the others \(2\) probability 0.*0\.\.2 "
        r"\(labels \[0, 1, 3\]\)",
    ):
        treesens.load_model(_absent_class())


def _a_pair_in_the_trained_columns(ens, est) -> None:
    """A pair for classes any, any is found and validated, its outputs the columns of
    ``est.predict_proba`` of the trained classes (0, 1, 3; class name 2 absent)."""
    r = treesens.check(ens, [ens.feature_names[2]], gap=1.5, classes=("any", "any"), timeout=60)
    assert r.status == "sensitive" and r.validated
    x1 = np.array([list(r.witness["x1"].values())])
    np.testing.assert_allclose(r.outputs["x1"], est.predict_proba(x1)[0, [0, 1, 3]], atol=1e-12)


def test_a_model_with_an_absent_class_answers_with_a_pair_replayed_by_catboost():
    est = _absent_class(labels=(3, 0, 1))
    with pytest.warns(UserWarning):
        ens = treesens.load_model(est)
    _a_pair_in_the_trained_columns(ens, est)


def _absent_class_pipeline():
    """A scaler and a CatBoost classifier whose class_names list 2, which no row has."""
    pipeline = pytest.importorskip("sklearn.pipeline")
    preprocessing = pytest.importorskip("sklearn.preprocessing")
    X, _ = _data(n=60)
    X = np.nan_to_num(X)
    labels = np.asarray([0, 1, 3])[np.minimum((X[:, 2] * 3).astype(int), 2)]
    return pipeline.make_pipeline(
        preprocessing.StandardScaler(),
        catboost.CatBoostClassifier(
            iterations=2, depth=2, loss_function="MultiClass", class_names=[0, 1, 2, 3], **COMMON
        ),
    ).fit(X, labels)


def test_a_pipeline_ending_in_a_model_with_an_absent_class_answers_with_a_replayed_pair():
    est = _absent_class_pipeline()
    with pytest.warns(UserWarning):
        ens = treesens.load_model(est)
    _a_pair_in_the_trained_columns(ens, est)  # predict_proba has a column per class name


def test_a_pipeline_whose_library_gives_a_column_per_class_name_validates_no_pair(monkeypatch):
    """Without taking the trained classes' columns, the pipeline's predict_proba has
    one column more than the model's classes: the replay refuses it (it once validated
    pairs on misaligned columns)."""
    est = _absent_class_pipeline()
    with pytest.warns(UserWarning):
        ens = treesens.load_model(est)
    rep = ens.replayer
    monkeypatch.setattr(rep, "predict_proba", lambda X: rep.pipe.predict_proba(rep.frame(X)))
    r = treesens.check(ens, [ens.feature_names[2]], gap=1.5, classes=("any", "any"), timeout=60)
    assert r.status == "error" and not r.validated
    assert "predict_proba gives 4 columns, treesens' model of it 3 (one per class)" in r.error
