"""CatBoost models with one-hot categorical features load into the IR with their
categories by name: the data given with the model names them (catboost maps each name
to the hash its splits test), ``<other>`` stands for every category the model never
split on, and a hash no name maps to stays an unnamed code. The IR's evaluation equals
catboost's predict on rows with category names, for every category and every threshold
cell; features CatBoost turns into CTR statistics are refused in one line."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

import treesens
from treesens.compiler.errors import InputError, UnsupportedModelError
from treesens.readers.formats.catboost import _ctr_reason
from treesens.tests.frontends.catboost_category_models import (
    CITIES,
    COMMON,
    fit,
    frame,
    library_output,
    named_rows,
    replayable,
)
from treesens.tests.oracle import cell_grid

catboost = pytest.importorskip("catboost")
pd = pytest.importorskip("pandas")


def _sources(est, tmp_path) -> dict:
    est.save_model(str(tmp_path / "m.cbm"))
    est.save_model(str(tmp_path / "m.json"), format="json")
    return {"object": est, "cbm": tmp_path / "m.cbm", "json": tmp_path / "m.json"}


def _every_cell(ens) -> np.ndarray:
    """A row per combination of categories and threshold cells (the named ones)."""
    X, _, _ = cell_grid(ens, [ens.feature_names[0]])  # every row, whatever varies
    return replayable(ens, X)


def _ir_output(ens, X) -> np.ndarray:
    return ens.predict(X)[:, None] if ens.is_regressor else ens.proba(X)


def test_without_data_a_categorys_codes_are_other_and_the_models_hashes():
    ens = treesens.load_model(fit("binary"))
    city = ens.features[0]
    assert city.kind == "categorical"
    assert city.categories[0] == "<other>"
    assert len(city.categories) > 1
    assert all(c.startswith("<catboost hash ") for c in city.categories[1:])


def test_data_names_the_categories_sorted_then_other():
    ens = treesens.load_model(fit("binary"), data=frame()[0])
    assert ens.features[0].categories == ("Lille", "Lyon", "Nice", "Paris", "<other>")


def test_data_naming_none_of_a_features_learned_categories_is_warned_of():
    from treesens.compiler.errors import TreesensWarning

    df = frame()[0].assign(city=lambda d: d.city.str.upper())  # PARIS for Paris, ...
    with pytest.warns(TreesensWarning, match="column 'city': none of its values .* learned"):
        treesens.load_model(fit("binary"), data=df)


def test_integer_categories_are_named_by_their_decimal_text():
    ens = treesens.load_model(fit("binary"), data=frame()[0])
    assert ens.features[2].categories == ("1", "2", "3", "<other>")


def test_the_source_says_which_data_named_the_categories(tmp_path):
    df, _ = frame()
    df.to_csv(tmp_path / "rows.csv", index=False)
    ens = treesens.load_model(_sources(fit("binary"), tmp_path)["cbm"], data=tmp_path / "rows.csv")
    assert f"categories named by {tmp_path / 'rows.csv'}" in ens.source


@pytest.mark.parametrize("source", ["object", "cbm", "json"])
@pytest.mark.parametrize("kind", ["binary", "multiclass", "regression", "poisson"])
def test_every_category_and_cell_evaluates_as_catboost_predicts(tmp_path, kind, source):
    est = fit(kind)
    ens = treesens.load_model(_sources(est, tmp_path)[source], data=frame()[0], bounds="none")
    X = _every_cell(ens)
    assert len(X) >= 5 * 4  # every city (and <other>) with every size, at least
    lib = library_output(est, named_rows(ens, X))
    np.testing.assert_allclose(_ir_output(ens, X), lib, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("grow", ["Depthwise", "Lossguide"])
def test_non_symmetric_trees_with_categories_evaluate_as_catboost_predicts(tmp_path, grow):
    for kind in ("multiclass", "regression"):
        est = fit(kind, depth=3, grow=grow)
        for source in _sources(est, tmp_path).values():
            ens = treesens.load_model(source, data=frame()[0], bounds="none")
            X = _every_cell(ens)
            lib = library_output(est, named_rows(ens, X))
            np.testing.assert_allclose(_ir_output(ens, X), lib, rtol=1e-12, atol=1e-12)


def test_the_replayer_gives_catboost_the_category_names():
    est = fit("binary")
    ens = treesens.load_model(est, data=frame()[0], bounds="none")
    X = _every_cell(ens)
    np.testing.assert_array_equal(
        ens.replayer.predict_proba(X), est.predict_proba(named_rows(ens, X))
    )


def test_other_is_a_category_catboost_never_split_on():
    est = fit("binary")
    ens = treesens.load_model(est, data=frame()[0], bounds="none")
    other = ens.features[0].categories.index("<other>")
    X = _every_cell(ens)
    X = X[X[:, 0] == other]
    unseen = named_rows(ens, X).assign(city="Marseille")
    np.testing.assert_array_equal(ens.proba(X), est.predict_proba(unseen))


def test_a_category_the_data_does_not_name_stays_an_unnamed_code():
    df, _ = frame()
    ens = treesens.load_model(fit("binary"), data=df[df.city != "Paris"], bounds="none")
    cats = ens.features[0].categories
    assert cats[:4] == ("Lille", "Lyon", "Nice", "<other>")
    assert any(c.startswith("<catboost hash ") for c in cats[4:])


def test_a_pair_needing_an_unnamed_category_cannot_be_replayed():
    df, _ = frame()
    ens = treesens.load_model(fit("binary"), data=df[df.city != "Paris"], bounds="none")
    code = len(ens.features[0].categories) - 1  # the last: an unnamed hash
    X = np.array([[code, 50.0, 0.0, 10.0]])
    with pytest.raises(InputError, match="has no known name .* give data that holds it"):
        ens.replayer.predict_proba(X)


def test_bounds_from_the_data_keep_a_feature_to_the_datas_categories():
    df, _ = frame()
    ens = treesens.load_model(fit("binary"), data=df[df.city != "Paris"])
    city = ens.features[0]
    assert (city.lb, city.ub) == (0.0, 2.0)  # Lille, Lyon, Nice
    assert city.categories[3] == "<other>"


def test_data_rows_read_their_categories_by_name():
    from treesens.readers.data import load_data

    df, _ = frame(20, seed=3)
    ens = treesens.load_model(fit("binary"), data=frame()[0])
    ds = load_data(df, ens)
    names = [ens.features[0].categories[int(c)] for c in ds.X[:, 0]]
    sizes = [ens.features[2].categories[int(c)] for c in ds.X[:, 2]]
    assert names == df.city.tolist()
    assert sizes == [str(s) for s in df["size"]]


def test_a_category_not_named_at_loading_is_one_input_error_saying_what_to_do():
    from treesens.readers.data import load_data

    ens = treesens.load_model(fit("binary"))
    with pytest.raises(
        InputError, match=r"category '\w+' was not named when the model was loaded"
    ) as e:
        load_data(frame(5)[0], ens)
    assert "\n" not in str(e.value)


def test_a_fractional_number_in_a_categorical_column_is_one_input_error():
    df, _ = frame()
    df["size"] = df["size"].astype(float)
    df.loc[3, "size"] = 1.5
    with pytest.raises(InputError, match="1.5 is not a category"):
        treesens.load_model(fit("binary"), data=df)


def test_a_name_with_white_space_around_it_is_one_input_error():
    df, _ = frame()
    df.loc[0, "city"] = " Paris"
    with pytest.raises(InputError, match="white space around it"):
        treesens.load_model(fit("binary"), data=df)


def test_a_named_model_pickles_and_replays_with_names_in_a_fresh_state(tmp_path):
    est = fit("multiclass")
    ens = treesens.load_model(_sources(est, tmp_path)["cbm"], data=frame()[0], bounds="none")
    copy = pickle.loads(pickle.dumps(ens))
    assert copy.replayer._model is None
    X = _every_cell(ens)
    np.testing.assert_array_equal(
        copy.replayer.predict_proba(X), est.predict_proba(named_rows(ens, X))
    )
    assert copy.fingerprint() == ens.fingerprint()


def test_the_ir_has_no_node_for_a_second_value_of_a_decided_category(tmp_path):
    # an oblivious tree testing city == Paris, then city == Nice: Paris decides the second
    est = fit("binary")
    path = _sources(est, tmp_path)["json"]
    model = json.loads(path.read_text())
    cat = model["features_info"]["categorical_features"][0]
    assert len(cat["values"]) >= 2
    base = sum(len(f["borders"]) for f in model["features_info"]["float_features"])

    def split(k: int) -> dict:
        return {
            "cat_feature_index": 0,
            "split_index": base + k,
            "split_type": "OneHotFeature",
            "value": cat["values"][k],
        }

    model["oblivious_trees"] = [
        {
            "leaf_values": [1.0, 2.0, 3.0, 4.0],
            "leaf_weights": [1, 1, 1, 1],
            "splits": [split(0), split(1)],
        }
    ]
    path.write_text(json.dumps(model))
    ens = treesens.load_model(path)
    assert ens.trees[0].n_nodes == 5  # both bits 1 cannot happen
    X = _every_cell(treesens.load_model(path, data=frame()[0], bounds="none"))
    named = treesens.load_model(path, data=frame()[0], bounds="none")
    np.testing.assert_allclose(named.proba(X), named.replayer.predict_proba(X), rtol=0, atol=1e-12)


def _mixed_model():
    """city one-hot (4 categories), size turned into CTR statistics (one_hot_max_size 3
    and a target that needs it)."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "city": rng.choice(CITIES[:2], 400),
            "a": rng.uniform(size=400),
            "size": rng.choice([f"s{i}" for i in range(12)], 400),
        }
    )
    y = (df.city.eq("Paris") ^ df["size"].isin(["s1", "s3", "s5", "s7"])).astype(int)
    est = catboost.CatBoostClassifier(iterations=4, depth=2, one_hot_max_size=3, **COMMON)
    return est.fit(df, y, cat_features=["city", "size"])


def test_a_ctr_feature_beside_a_one_hot_one_is_refused_naming_it_alone(tmp_path):
    est = _mixed_model()
    for source in _sources(est, tmp_path).values():
        with pytest.raises(UnsupportedModelError, match=r"turns size into CTR statistics") as e:
            treesens.load_model(source)
        assert "\n" not in str(e.value) and "city" not in str(e.value)


def test_a_one_hot_split_naming_another_value_than_its_index_is_refused(tmp_path):
    path = _sources(fit("binary"), tmp_path)["json"]
    model = json.loads(path.read_text())
    split = next(
        s
        for t in model["oblivious_trees"]
        for s in t["splits"]
        if s["split_type"] == "OneHotFeature"
    )
    split["value"] += 1
    path.write_text(json.dumps(model))
    with pytest.raises(InputError, match="not the feature and value its split_index names"):
        treesens.load_model(path)


def test_one_hot_values_out_of_order_are_refused(tmp_path):
    path = _sources(fit("binary"), tmp_path)["json"]
    model = json.loads(path.read_text())
    cat = model["features_info"]["categorical_features"][0]
    cat["values"] = cat["values"][::-1]
    path.write_text(json.dumps(model))
    with pytest.raises(InputError, match="values are not increasing"):
        treesens.load_model(path)


def test_flat_feature_indices_that_are_not_the_columns_are_refused(tmp_path):
    path = _sources(fit("binary"), tmp_path)["json"]
    model = json.loads(path.read_text())
    model["features_info"]["categorical_features"][0]["flat_feature_index"] = 1
    path.write_text(json.dumps(model))
    with pytest.raises(InputError, match="flat_feature_index are not their places"):
        treesens.load_model(path)


def test_a_model_fitted_on_an_array_is_named_by_the_datas_columns_in_order():
    df, score = frame()
    est = catboost.CatBoostClassifier(iterations=3, depth=2, one_hot_max_size=10, **COMMON)
    est.fit(df.to_numpy(dtype=object), (score > 1.0).astype(int), cat_features=[0, 2])
    ens = treesens.load_model(est, data=df)
    assert ens.feature_names == list(df.columns)
    assert ens.features[0].categories == ("Lille", "Lyon", "Nice", "Paris", "<other>")
    X = _every_cell(ens)
    rows = named_rows(ens, X).to_numpy(dtype=object)
    np.testing.assert_allclose(ens.proba(X), est.predict_proba(rows), rtol=0, atol=1e-12)


def test_integer_categories_read_by_name_beside_an_inferred_one_hot_group():
    from treesens.readers.data import load_data

    df, score = frame()
    df["color_red"] = (np.arange(len(df)) % 2).astype(float)
    df["color_blue"] = 1.0 - df["color_red"]
    est = catboost.CatBoostClassifier(iterations=3, depth=2, one_hot_max_size=10, **COMMON)
    est.fit(df, (score + df.color_red > 1.0).astype(int), cat_features=["city", "size"])
    ens = treesens.load_model(est, data=df)  # bounds from data: groups inferred
    assert "color" in ens.feature_names and "color_red" not in ens.feature_names
    ds = load_data(df, ens)
    size = ens.features[ens.feature_index("size")]
    read = [size.categories[int(c)] for c in ds.X[:, ens.feature_index("size")]]
    assert read == [str(s) for s in df["size"]]


def test_a_ctr_refusal_names_the_counted_features_apart_from_those_only_combined_and_the_fix():
    """As a churn model of 500 trees states them: Contract (3 categories) counted, gender
    (2, one-hot at the default one_hot_max_size of 2) only within combinations with it."""

    def element(i, how):
        return {"cat_feature_index": i, "combination_element": how}

    cats = [
        {"feature_index": 0, "feature_id": "gender"},
        {"feature_index": 1, "feature_id": "Contract"},
    ]
    ctrs = [
        {"elements": [element(1, "cat_feature_value")]},
        {"elements": [element(0, "cat_feature_exact_value"), element(1, "cat_feature_value")]},
    ]
    why = _ctr_reason({"categorical_features": cats, "ctrs": ctrs})
    assert "turns Contract into CTR statistics" in why
    assert "combinations of them with gender" in why
    assert "retrain with one_hot_max_size at least" in why


def test_a_model_retrained_with_one_hot_max_size_above_every_feature_s_categories_loads():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"sex": rng.choice(["F", "M"], 600), "plan": rng.choice(list("abcdef"), 600)})
    y = (df.sex.eq("F") ^ df.plan.isin(["a", "c", "e"])).astype(int)
    counted = catboost.CatBoostClassifier(iterations=20, depth=3, **COMMON)
    with pytest.raises(UnsupportedModelError, match=r"turns plan into CTR statistics"):
        treesens.load_model(counted.fit(df, y, cat_features=["sex", "plan"]))
    fixed = catboost.CatBoostClassifier(iterations=20, depth=3, one_hot_max_size=6, **COMMON)
    assert treesens.load_model(fixed.fit(df, y, cat_features=["sex", "plan"])).n_features == 2
