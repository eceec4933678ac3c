"""Questions about tiny CatBoost models with one-hot categorical features (a city and a
size, named by the data) agree with brute force over every category and threshold cell:
sensitive just below the exact best gap or change, with a witness that names its
categories and that catboost replays on those names, insensitive just above it. On the
command line ``--data`` names the categories of a ``.cbm``; bad input exits with 2."""

from __future__ import annotations

import json

import numpy as np
import pytest

import treesens
from treesens.compiler.ensemble import Ensemble
from treesens.compiler.errors import InputError
from treesens.questions.query_build import make_query
from treesens.tests.conftest import json_lines, treesens_here
from treesens.tests.frontends.catboost_category_models import (
    CATS,
    CITIES,
    COMMON,
    NAMES,
    fit,
    frame,
    library_output,
)
from treesens.tests.oracle import (
    brute_force_best_above,
    brute_force_largest_change,
    brute_force_sensitive,
    cell_grid,
)

catboost = pytest.importorskip("catboost")
pd = pytest.importorskip("pandas")

OPTS = {"box_search": False, "heuristic": False, "timeout": 60}  # the solver answers


def _loaded(kind: str, bounds: str = "auto"):
    est = fit(kind)
    return est, treesens.load_model(est, data=frame()[0], bounds=bounds)


def _best_gap(ens: Ensemble, vary: list[str]) -> float:
    X, ns, nv = cell_grid(ens, vary)
    p = ens.proba(X)[:, 1].reshape(ns, nv)
    return float(np.minimum(p.max(axis=1) - 0.5, 0.5 - p.min(axis=1)).max())


def _replays(est, r) -> None:
    """The witness names its categories, and its outputs are catboost's predictions on
    rows holding those names."""
    assert r.status == "sensitive" and r.validated
    for copy in ("x1", "x2"):
        w = r.witness[copy]
        assert w["city"] in (*CITIES, "<other>") and w["size"] in ("1", "2", "3", "<other>")
        lib = library_output(est, pd.DataFrame([w])[NAMES])[0]
        np.testing.assert_allclose(r.outputs[copy], lib, rtol=0, atol=1e-12)


@pytest.mark.parametrize("vary", ["city", "size", "age"])
def test_binary_gap_agrees_with_brute_force_either_side_of_the_best(vary):
    est, ens = _loaded("binary")
    best = _best_gap(ens, [vary])
    assert 0.0 < best < 0.5
    below, above = best - 1e-4, best + 1e-4
    assert brute_force_sensitive(ens, make_query([vary], gap=below))
    assert not brute_force_sensitive(ens, make_query([vary], gap=above))
    _replays(est, treesens.check(ens, [vary], gap=below, **OPTS))
    assert treesens.check(ens, [vary], gap=above, **OPTS).status == "insensitive"


def test_a_witness_varying_the_city_changes_its_name():
    est, ens = _loaded("binary")
    r = treesens.check(ens, ["city"], gap=_best_gap(ens, ["city"]) - 1e-4, **OPTS)
    _replays(est, r)
    assert r.witness["x1"]["city"] != r.witness["x2"]["city"]
    assert r.witness["x1"]["size"] == r.witness["x2"]["size"]


def test_max_gap_over_the_city_is_the_brute_force_best_with_a_replayed_pair():
    est, ens = _loaded("binary")
    r = treesens.max_gap(ens, vary=["city"], timeout=60)
    best = _best_gap(ens, ["city"])
    assert r.max_gap["proven"]
    assert r.max_gap["lower"] <= best + 1e-9 and best <= r.max_gap["upper"] + 1e-9
    _replays(est, r)


def test_without_data_bounds_other_is_a_category_the_answers_cover():
    est, ens = _loaded("binary", bounds="none")
    assert ens.features[0].ub == 4.0  # Lille, Lyon, Nice, Paris, <other>
    best = _best_gap(ens, ["city"])
    assert best >= _best_gap(_loaded("binary")[1], ["city"])
    _replays(est, treesens.check(ens, ["city"], gap=best - 1e-4, **OPTS))
    assert treesens.check(ens, ["city"], gap=best + 1e-4, **OPTS).status == "insensitive"


def test_multiclass_answers_agree_with_brute_force_over_gaps():
    est, ens = _loaded("multiclass")
    seen = set()
    for vary, classes in (("city", ("0", "any")), ("size", ("2", "0"))):
        for gap in (1.0, 1.5, 2.0, 3.0, 5.0, 10.0):
            query = make_query([vary], gap=gap, classes=classes)
            expected = brute_force_sensitive(ens, query)
            r = treesens.check(ens, [vary], gap=gap, classes=classes, **OPTS)
            assert r.status == ("sensitive" if expected else "insensitive"), (vary, gap)
            if expected:
                _replays(est, r)
            seen.add(expected)
    assert seen == {True, False}  # the gaps straddle the best


@pytest.mark.parametrize("vary", ["city", "size"])
def test_regressor_delta_agrees_with_brute_force_either_side_of_the_largest_change(vary):
    est, ens = _loaded("regression")
    best = brute_force_largest_change(ens, [vary])
    assert best > 0
    eps = 1e-4 * max(1.0, best)
    r = treesens.check(ens, [vary], delta=best - eps, **OPTS)
    _replays(est, r)
    assert abs(r.outputs["x1"][0] - r.outputs["x2"][0]) >= best - eps
    assert treesens.check(ens, [vary], delta=best + eps, **OPTS).status == "insensitive"


def test_poisson_threshold_form_agrees_with_brute_force_either_side_of_the_best():
    est, ens = _loaded("poisson")
    b, best = brute_force_best_above(ens, ["city"])
    eps = 1e-4 * max(1.0, abs(best))
    r = treesens.check(ens, ["city"], above=best - eps, below=b, **OPTS)
    _replays(est, r)
    assert r.outputs["x1"][0] >= best - eps and r.outputs["x2"][0] <= b
    assert treesens.check(ens, ["city"], above=best + eps, below=b, **OPTS).status == "insensitive"


def test_regressor_max_gap_over_the_city_is_the_brute_force_largest_change():
    est, ens = _loaded("regression")
    r = treesens.max_gap(ens, vary=["city"], timeout=60)
    best = brute_force_largest_change(ens, ["city"])
    assert r.max_gap["proven"]
    assert r.max_gap["lower"] <= best + 1e-9 and best <= r.max_gap["upper"] + 1e-9
    _replays(est, r)


def test_without_data_a_question_is_refused_before_solving_naming_the_feature(monkeypatch):
    from treesens.questions import ask

    monkeypatch.setattr(ask, "solve_query", lambda *a, **k: pytest.fail("solved"))
    ens = treesens.load_model(fit("binary"))  # no data: the model's hashes have no names
    with pytest.raises(InputError, match="^feature 'city' has \\d+ categories .* by their hash"):
        treesens.check(ens, ["age"], gap=0.01, **OPTS)


def test_without_data_a_sweep_is_refused_saying_to_give_data():
    ens = treesens.load_model(fit("binary"))
    with pytest.raises(InputError, match=r"give the data that names them \(--data"):
        treesens.sweep(ens, features=["city", "age"], gap=0.01, **OPTS)


def test_a_replay_needing_a_category_nobody_named_is_still_an_error_not_a_verdict():
    """The refusal aside (data whose bounds leave no unnamed category), a witness that
    holds one is never replayed: an error naming the category."""
    from treesens.readers.formats.catboost_categories import replay_rows

    hf = treesens.load_model(fit("binary")).replayer.hashed[0]
    with pytest.raises(InputError, match="has no known name"):
        replay_rows((hf,), np.array([[1.0, 30.0, 0.0, 5.0]]))


# ---- the command line on a saved .cbm and a CSV of named categories ---------------------


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cbm_categories")
    fit("binary").save_model(str(folder / "clf.cbm"))
    fit("regression").save_model(str(folder / "reg.cbm"))
    df, score = frame()
    df.assign(label=(score > 1.0).astype(int)).to_csv(folder / "data.csv", index=False)
    df.head(12).to_csv(folder / "rows.csv", index=False)
    return folder


def _replayed_by_catboost(path, line: dict) -> None:
    model = catboost.CatBoost()
    model.load_model(str(path))
    kind = {"clf.cbm": "Probability", "reg.cbm": "RawFormulaVal"}[path.name]
    for copy in ("x1", "x2"):
        w = line["witness"][copy]
        assert w["city"] in CITIES
        lib = np.atleast_1d(model.predict(pd.DataFrame([w])[NAMES], prediction_type=kind)[0])
        np.testing.assert_allclose(line["outputs"][copy], lib, rtol=0, atol=1e-12)


def test_cli_check_names_the_categories_of_a_cbm_by_data(saved):
    args = ("--vary", "city", "--gap", "0.1", "--data", saved / "data.csv", "--json")
    p = treesens_here("check", saved / "clf.cbm", *args)
    assert p.returncode == 0, p.stderr
    line = json.loads(p.stdout)
    assert line["status"] == "sensitive" and line["validated"]
    _replayed_by_catboost(saved / "clf.cbm", line)


def test_cli_delta_on_a_cbm_regressor_varying_a_category(saved):
    args = ("--vary", "city", "--delta", "0.3", "--data", saved / "data.csv", "--json")
    p = treesens_here("check", saved / "reg.cbm", *args)
    assert p.returncode == 0, p.stderr
    line = json.loads(p.stdout)
    assert line["status"] == "sensitive" and line["validated"]
    _replayed_by_catboost(saved / "reg.cbm", line)


def test_cli_sweep_answers_every_feature_of_a_cbm_with_categories(saved):
    args = ("--gap", "0.1", "--data", saved / "data.csv", "--json")
    p = treesens_here("sweep", saved / "clf.cbm", *args)
    assert p.returncode == 0, p.stderr
    lines = json_lines(p.stdout)
    assert sorted(d["query"] for d in lines) == sorted(NAMES)
    assert {d["query"]: d["status"] for d in lines}["city"] == "sensitive"
    for line in lines:
        if line["status"] == "sensitive":
            _replayed_by_catboost(saved / "clf.cbm", line)


def test_cli_audit_reads_rows_of_named_categories(saved):
    args = ("--data", saved / "rows.csv", "--vary", "city", "--gap", "0.1", "--json")
    p = treesens_here("audit", saved / "clf.cbm", *args)
    assert p.returncode == 0, p.stderr
    lines = json_lines(p.stdout)
    assert [d["row"] for d in lines] == list(range(12))
    assert any(d["status"] == "sensitive" for d in lines)
    for line in lines:
        if line["status"] == "sensitive":
            _replayed_by_catboost(saved / "clf.cbm", line)


def test_cli_exits_2_in_one_line_on_a_ctr_model(tmp_path):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.uniform(size=300), "shop": rng.choice(list("abcdefghij"), 300)})
    y = (df.shop.isin(list("abcd")) ^ (df.a > 0.5)).astype(int)
    est = catboost.CatBoostClassifier(iterations=3, depth=2, one_hot_max_size=2, **COMMON)
    est.fit(df, y, cat_features=["shop"]).save_model(str(tmp_path / "ctr.cbm"))
    p = treesens_here("check", tmp_path / "ctr.cbm", "--vary", "a", "--gap", "0.1")
    assert p.returncode == 2
    assert len(p.stderr.strip().splitlines()) == 1
    assert "shop into CTR statistics" in p.stderr and "ctr.cbm" in p.stderr


def test_cli_exits_2_in_one_line_on_a_number_that_is_no_category(saved, tmp_path):
    df, _ = frame(20)
    df["size"] = df["size"].astype(float)
    df.loc[4, "size"] = 2.5
    df.to_csv(tmp_path / "bad.csv", index=False)
    args = ("--vary", "city", "--gap", "0.1", "--data", tmp_path / "bad.csv")
    p = treesens_here("check", saved / "clf.cbm", *args)
    assert p.returncode == 2
    assert len(p.stderr.strip().splitlines()) == 1
    assert "'2.5' is not a category" in p.stderr or "2.5 is not a category" in p.stderr


def test_a_sens_files_data_names_the_categories_of_a_cbm(saved):
    path = saved / "data.sens"
    path.write_text('model "clf.cbm"\ndata "data.csv"\n\nquery one {\n  vary city\n  gap 0.1\n}\n')
    p = treesens_here("run", path, "--json", cwd=saved)
    assert p.returncode == 0, p.stderr
    (line,) = json_lines(p.stdout)
    assert line["status"] == "sensitive" and line["validated"]
    _replayed_by_catboost(saved / "clf.cbm", line)


def test_a_sens_file_declares_the_categories_of_a_cbm_by_name(saved):
    path = saved / "declared.sens"
    path.write_text(
        'model "clf.cbm"\nfeature city: categorical {"Paris", "Lyon", "Nice", "Lille"}\n'
        'feature size: categorical {"1", "2", "3"}\n\n'
        "query one {\n  vary city\n  gap 0.1\n}\n"
    )
    p = treesens_here("run", path, "--json", cwd=saved)
    assert p.returncode == 0, p.stderr
    (line,) = json_lines(p.stdout)
    assert line["status"] == "sensitive" and line["validated"]
    _replayed_by_catboost(saved / "clf.cbm", line)


def test_declared_categories_are_the_values_a_feature_takes():
    from treesens.readers.formats.catboost_categories import declared_categories

    ens = declared_categories(treesens.load_model(fit("binary")), {"city": ["Paris", "Nice"]}, "x")
    city = ens.features[0]
    assert city.categories[:3] == ("Nice", "Paris", "<other>")
    assert (city.lb, city.ub) == (0.0, 1.0)


def test_cli_check_of_a_cbm_without_data_exits_2_in_one_line_naming_the_feature(saved):
    p = treesens_here("check", saved / "clf.cbm", "--vary", "city", "--gap", "0.1")
    assert p.returncode == 2, p.stdout + p.stderr
    (line,) = p.stderr.strip().splitlines()[-1:]
    assert "feature 'city'" in line and "--data ROWS.csv" in line
    assert "Traceback" not in p.stderr


# ---- wrapped: inside a scikit-learn Pipeline, under folded one-hot groups ---------------


def _never_solved(monkeypatch):
    from treesens.questions import ask

    monkeypatch.setattr(ask, "solve_query", lambda *a, **k: pytest.fail("solved"))


def _in_a_pipeline():
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OrdinalEncoder, StandardScaler

    df, score = frame()
    pre = ColumnTransformer(
        [("cat", OrdinalEncoder(dtype=np.int64), CATS), ("num", StandardScaler(), ["age"])],
        verbose_feature_names_out=False,
    ).set_output(transform="pandas")
    est = catboost.CatBoostClassifier(
        iterations=3, depth=2, border_count=8, one_hot_max_size=10, cat_features=CATS, **COMMON
    )
    pipe = Pipeline([("pre", pre), ("cb", est)])
    return pipe.fit(df[[*CATS, "age"]], (score > 1.0).astype(int))


def test_a_catboost_model_in_a_pipeline_is_refused_before_solving(monkeypatch):
    _never_solved(monkeypatch)
    ens = treesens.load_model(_in_a_pipeline())
    with pytest.raises(InputError, match="cannot name them through a scikit-learn Pipeline"):
        treesens.check(ens, ["city"], gap=0.05, **OPTS)


def _with_groups():
    df, score = frame()
    race = np.random.default_rng(1).choice(["A", "B", "C"], len(df))
    for c in "ABC":
        df[f"race_{c}"] = (race == c).astype(int)
    y = (score + (race == "B") * 0.7 > 1.0).astype(int)
    est = catboost.CatBoostClassifier(
        iterations=4, depth=2, border_count=8, one_hot_max_size=10, **COMMON
    )
    return est.fit(df, y, cat_features=CATS), df


def test_a_catboost_model_with_folded_groups_is_refused_without_data(monkeypatch):
    _never_solved(monkeypatch)
    est, _ = _with_groups()
    ens = treesens.load_model(est, groups="race=race_A,race_B,race_C")
    with pytest.raises(InputError, match=r"'city' has \d+ categories .* give the data"):
        treesens.check(ens, ["race"], gap=0.02, **OPTS)


def test_a_catboost_model_with_folded_groups_and_data_is_answered():
    est, df = _with_groups()
    ens = treesens.load_model(est, groups="race=race_A,race_B,race_C", data=df)
    r = treesens.check(ens, ["race"], gap=0.02, **OPTS)
    assert r.status == "sensitive" and r.validated
