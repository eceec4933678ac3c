"""Regressors load into the Ensemble IR (n_classes 0, one output, a regression link) and
the IR's predictions agree with the library's predict, on random rows, rows with missing
values and rows placed exactly on (and one float next to) every threshold. The threshold
form (f(x1) >= a, f(x2) <= b) agrees with brute force; the questions not defined for
regressors are refused in one line."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

import treesens
from treesens.compiler.ensemble import EXP, IDENTITY, SIGMOID, Ensemble
from treesens.compiler.errors import InputError, UnsupportedModelError
from treesens.tests.conftest import treesens_here

xgb = pytest.importorskip("xgboost")
sk_ensemble = pytest.importorskip("sklearn.ensemble")
sk_tree = pytest.importorskip("sklearn.tree")
lgb = pytest.importorskip("lightgbm")


def _data(n: int = 300, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = 2.0 * X[:, 0] + X[:, 1] + 0.1 * rng.normal(size=n)
    return X, y


def _probe_rows(ens: Ensemble, nan: bool) -> np.ndarray:
    rng = np.random.default_rng(1)
    R = rng.normal(size=(100, ens.n_features))
    rows = [R]
    for t in ens.trees:
        for k in np.flatnonzero(t.feature >= 0):
            th = float(t.threshold[k])
            for v in (
                th,
                np.nextafter(th, -np.inf),
                np.nextafter(th, np.inf),
                float(np.nextafter(np.float32(th), np.float32(np.inf))),
                float(np.nextafter(np.float32(th), np.float32(-np.inf))),
            ):
                r = R[:1].copy()
                r[0, t.feature[k]] = v
                rows.append(r)
    if nan:
        m = R[:20].copy()
        m[:, 0] = np.nan
        m[::2, 1] = np.nan
        rows.append(m)
    return np.concatenate(rows)


def _assert_agrees(ens: Ensemble, est, nan: bool = True) -> None:
    X = _probe_rows(ens, nan)
    lib = np.asarray(est.predict(X), dtype=np.float64)
    # the libraries sum in float32 (xgboost) or float64 (scikit-learn)
    np.testing.assert_allclose(ens.predict(X), lib, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ens.replayer.predict(X), lib, rtol=0, atol=0)


XGB_OBJECTIVES = {
    "reg:squarederror": IDENTITY,
    "reg:absoluteerror": IDENTITY,
    "reg:pseudohubererror": IDENTITY,
    "reg:quantileerror": IDENTITY,
    "reg:squaredlogerror": IDENTITY,
    "count:poisson": EXP,
    "reg:gamma": EXP,
    "reg:tweedie": EXP,
    "reg:logistic": SIGMOID,
}


def _xgb_regressor(objective: str, **params):
    X, y = _data()
    if XGB_OBJECTIVES[objective] == EXP or objective == "reg:squaredlogerror":
        y = np.exp(y / 3.0) + 0.1
    if XGB_OBJECTIVES[objective] == SIGMOID:
        y = 1.0 / (1.0 + np.exp(-y))
    if objective == "reg:quantileerror":
        params = {"quantile_alpha": 0.7, **params}
    est = xgb.XGBRegressor(n_estimators=6, max_depth=3, objective=objective, nthread=1, **params)
    return est.fit(X, y)


@pytest.mark.parametrize("objective", sorted(XGB_OBJECTIVES))
def test_xgboost_regressor_predictions_match_xgboost(objective):
    est = _xgb_regressor(objective)
    _assert_agrees(treesens.load_model(est), est)


@pytest.mark.parametrize("objective", sorted(XGB_OBJECTIVES))
def test_xgboost_regressor_has_its_objectives_link(objective):
    # reg:logistic loads as a binary classifier: its regressor reading has the link
    ens = treesens.load_model(_xgb_regressor(objective))
    ens = ens.as_regressor() if ens.probability else ens
    assert (ens.n_classes, ens.n_outputs, ens.link) == (0, 1, XGB_OBJECTIVES[objective])


def test_xgboost_quantile_regressor_of_several_alphas_is_refused_naming_them():
    est = _xgb_regressor("reg:quantileerror", quantile_alpha=[0.2, 0.8])
    with pytest.raises(UnsupportedModelError, match="2 quantile_alpha values"):
        treesens.load_model(est)


def test_xgboost_regressor_saved_as_json_matches_xgboost(tmp_path):
    est = _xgb_regressor("reg:squarederror")
    path = tmp_path / "r.json"
    est.save_model(path)
    _assert_agrees(treesens.load_model(path), est)


LGB_OBJECTIVES = {
    "regression": IDENTITY,
    "regression_l1": IDENTITY,
    "huber": IDENTITY,
    "quantile": IDENTITY,
    "poisson": EXP,
    "gamma": EXP,
    "tweedie": EXP,
}


def _lgb_regressor(objective: str):
    X, y = _data()
    X[::7, 1] = np.nan
    if LGB_OBJECTIVES[objective] == EXP:
        y = np.exp(y / 3.0) + 0.1
    return lgb.LGBMRegressor(
        n_estimators=6, max_depth=2, objective=objective, verbose=-1, num_threads=1
    ).fit(X, y)


@pytest.mark.parametrize("objective", sorted(LGB_OBJECTIVES))
def test_lightgbm_regressor_predictions_match_lightgbm(objective):
    est = _lgb_regressor(objective)
    _assert_agrees(treesens.load_model(est), est)


@pytest.mark.parametrize("objective", sorted(LGB_OBJECTIVES))
def test_lightgbm_regressor_has_its_objectives_link(objective):
    ens = treesens.load_model(_lgb_regressor(objective))
    assert (ens.n_classes, ens.n_outputs, ens.link) == (0, 1, LGB_OBJECTIVES[objective])


def test_lightgbm_regressor_saved_as_text_matches_lightgbm(tmp_path):
    est = _lgb_regressor("regression")
    path = tmp_path / "r.txt"
    est.booster_.save_model(str(path))
    _assert_agrees(treesens.load_model(path), est)


SKLEARN_REGRESSORS = {
    "DecisionTreeRegressor": lambda: sk_tree.DecisionTreeRegressor(max_depth=3),
    "ExtraTreeRegressor": lambda: sk_tree.ExtraTreeRegressor(max_depth=3, random_state=0),
    "RandomForestRegressor": lambda: sk_ensemble.RandomForestRegressor(
        4, max_depth=3, random_state=0
    ),
    "ExtraTreesRegressor": lambda: sk_ensemble.ExtraTreesRegressor(4, max_depth=3, random_state=0),
    "HistGradientBoostingRegressor": lambda: sk_ensemble.HistGradientBoostingRegressor(
        max_iter=4, max_depth=2
    ),
    "HistGradientBoostingRegressor-poisson": lambda: sk_ensemble.HistGradientBoostingRegressor(
        max_iter=4, max_depth=2, loss="poisson"
    ),
    "GradientBoostingRegressor": lambda: sk_ensemble.GradientBoostingRegressor(
        n_estimators=5, max_depth=2, random_state=0
    ),
}


@pytest.mark.parametrize("name", sorted(SKLEARN_REGRESSORS))
def test_sklearn_regressor_predictions_match_sklearn(name):
    X, y = _data()
    est = SKLEARN_REGRESSORS[name]().fit(X, np.exp(y / 3.0) if "poisson" in name else y)
    # fitted without missing values, their predict refuses NaN
    _assert_agrees(treesens.load_model(est), est, nan=False)


def test_sklearn_regressor_is_an_identity_regressor():
    X, y = _data()
    ens = treesens.load_model(sk_ensemble.RandomForestRegressor(3, max_depth=2).fit(X, y))
    assert (ens.n_classes, ens.link, ens.scale) == (0, IDENTITY, 1.0 / 3)


def test_regressor_has_no_class_probabilities():
    X, y = _data()
    ens = treesens.load_model(sk_tree.DecisionTreeRegressor(max_depth=2).fit(X, y))
    with pytest.raises(ValueError, match="regressor"):
        ens.proba(X[:2])


def test_regression_link_needs_zero_classes():
    X, y = _data()
    ens = treesens.load_model(sk_tree.DecisionTreeRegressor(max_depth=2).fit(X, y))
    with pytest.raises(ValueError, match="n_classes 0"):
        Ensemble(ens.trees, ens.features, n_classes=2, intercept=(0.0,), link=IDENTITY)


def test_max_gap_on_a_log_link_regressor_is_its_largest_change():
    ens = treesens.load_model(_xgb_regressor("count:poisson"))
    r = treesens.max_gap(ens, vary=["f0"], tolerance=1e-3)
    assert r.max_gap["kind"] == "change" and r.max_gap["proven"]


def test_max_gap_of_a_regressor_says_its_gap_field_holds_the_change():
    ens = treesens.load_model(_xgb_regressor("reg:squarederror"))
    r = treesens.max_gap(ens, vary=["f0"], tolerance=1e-3)
    assert r.gap_kind == "change" and r.gap == r.max_gap["lower"]


def test_max_gap_sweep_of_a_regressor_reuses_its_own_answers(tmp_path):
    ens = treesens.load_model(_xgb_regressor("reg:squarederror"))
    out = tmp_path / "gaps.jsonl"
    first = treesens.sweep(ens, features=["f0", "f1"], max_gap=True, out=out)
    again = treesens.sweep(ens, features=["f0", "f1"], max_gap=True, resume=out)
    assert [r.max_gap for r in again] == [r.max_gap for r in first]
    assert len(out.read_text().splitlines()) == 2  # nothing asked twice


def test_audit_on_a_regressor_without_delta_is_refused():
    X, y = _data()
    ens = treesens.load_model(_xgb_regressor("reg:squarederror"))
    with pytest.raises(InputError, match="regressor: give delta"):
        treesens.audit(ens, X[:5], vary=["f0"])


# ---- the threshold form f(x1) >= a, f(x2) <= b against brute force ---------------------


TINY = {
    "xgboost-squarederror": lambda X, y: xgb.XGBRegressor(
        n_estimators=3, max_depth=2, nthread=1
    ).fit(X, y),
    "xgboost-poisson": lambda X, y: xgb.XGBRegressor(
        n_estimators=3, max_depth=2, nthread=1, objective="count:poisson"
    ).fit(X, np.exp(y / 3.0)),
    "lightgbm-regression": lambda X, y: lgb.LGBMRegressor(
        n_estimators=3, max_depth=2, verbose=-1, num_threads=1
    ).fit(X, y),
    "lightgbm-gamma": lambda X, y: lgb.LGBMRegressor(
        n_estimators=3, max_depth=2, verbose=-1, num_threads=1, objective="gamma"
    ).fit(X, np.exp(y / 3.0)),
    "sklearn-hist-boosting": lambda X, y: sk_ensemble.HistGradientBoostingRegressor(
        max_iter=4, max_depth=2, learning_rate=0.5
    ).fit(X, y),
    "sklearn-tree": lambda X, y: sk_tree.DecisionTreeRegressor(max_depth=3).fit(X, y),
    "sklearn-forest": lambda X, y: sk_ensemble.RandomForestRegressor(
        3, max_depth=2, random_state=0
    ).fit(X, y),
    "sklearn-extra-trees": lambda X, y: sk_ensemble.ExtraTreesRegressor(
        3, max_depth=2, random_state=0
    ).fit(X, y),
    "sklearn-boosting": lambda X, y: sk_ensemble.GradientBoostingRegressor(
        n_estimators=3, max_depth=2, random_state=0
    ).fit(X, y),
}


from treesens.tests.oracle import brute_force_best_above  # noqa: E402

_best_above = brute_force_best_above


@pytest.mark.parametrize("backend", ["cpsat", "highs"])
@pytest.mark.parametrize("name", sorted(TINY))
def test_threshold_form_agrees_with_brute_force_either_side_of_the_best(name, backend):
    X, y = _data(120)
    ens = treesens.load_model(TINY[name](X, y))
    name0 = ens.feature_names[0]
    b, best = _best_above(ens, [name0])
    eps = 1e-3 * max(1.0, abs(best))
    opts = {"box_search": False, "heuristic": False}
    below_best = treesens.check(
        ens, vary=[name0], above=best - eps, below=b, backend=backend, **opts
    )
    assert below_best.status == "sensitive" and below_best.validated
    f1, f2 = below_best.outputs["x1"][0], below_best.outputs["x2"][0]
    assert f1 >= best - eps and f2 <= b
    above_best = treesens.check(
        ens, vary=[name0], above=best + eps, below=b, backend=backend, **opts
    )
    assert above_best.status == "insensitive"


def test_threshold_form_witness_is_the_librarys_prediction():
    X, y = _data(120)
    est = TINY["xgboost-squarederror"](X, y)
    ens = treesens.load_model(est)
    b, best = _best_above(ens, ["f0"])
    r = treesens.check(ens, vary=["f0"], above=best - 1e-3, below=b)
    x1 = np.array([list(r.witness["x1"].values())], dtype=np.float64)
    assert r.outputs["x1"][0] == float(est.predict(x1)[0])


def test_regressor_without_threshold_form_is_refused_naming_the_keywords():
    ens = treesens.load_model(_xgb_regressor("reg:squarederror"))
    with pytest.raises(InputError, match="delta=D .* above=A, below=B"):
        treesens.check(ens, vary=["f0"])


def test_threshold_form_on_a_classifier_is_refused():
    X, y = _data()
    est = xgb.XGBClassifier(n_estimators=2, max_depth=2, nthread=1).fit(X, y > 0)
    with pytest.raises(InputError, match="for regressors"):
        treesens.check(est, vary=["f0"], above=1.0, below=0.0)


def test_threshold_form_needs_both_thresholds():
    ens = treesens.load_model(_xgb_regressor("reg:squarederror"))
    with pytest.raises(InputError, match="above=1 needs below=B too"):
        treesens.check(ens, vary=["f0"], above=1.0)


def test_a_threshold_form_with_above_below_below_is_an_input_error():
    ens = treesens.load_model(_xgb_regressor("reg:squarederror"))
    with pytest.raises(
        InputError, match=r"above=1 and below=5: the threshold form needs above >= below"
    ):
        treesens.check(ens, vary=["f0"], above=1.0, below=5.0)


def test_log_link_threshold_must_be_positive():
    ens = treesens.load_model(_xgb_regressor("count:poisson"))
    with pytest.raises(InputError, match="positive"):
        treesens.check(ens, vary=["f0"], above=1.0, below=0.0)


def test_threshold_result_states_the_thresholds_not_a_gap():
    r = treesens.check(_xgb_regressor("reg:squarederror"), vary=["f0"], above=1.0, below=-1.0)
    assert r.threshold == [1.0, -1.0] and "f(x1) >= 1, f(x2) <= -1" in str(r)


def _run_sens(tmp_path, body: str) -> subprocess.CompletedProcess:
    _xgb_regressor("reg:squarederror").save_model(tmp_path / "r.json")
    path = tmp_path / "q.sens"
    path.write_text('model "r.json"\n\n' + body)
    return treesens_here("run", path, "--json", cwd=tmp_path)


def test_sens_threshold_form_answers_a_regressor(tmp_path):
    r = _run_sens(tmp_path, "query one {\n  vary f0\n  gap above 1 below -1\n}\n")
    assert r.returncode == 0 and '"threshold": [1.0, -1.0]' in r.stdout
    assert '"status": "sensitive"' in r.stdout


def test_sens_regressor_without_threshold_form_is_an_error_with_its_place(tmp_path):
    r = _run_sens(tmp_path, "query one {\n  vary f0\n}\n")
    assert r.returncode == 2 and "q.sens:3" in r.stderr and "gap above A below B" in r.stderr


def test_sens_delta_answers_a_regressor_in_its_direction(tmp_path):
    r = _run_sens(tmp_path, "query one {\n  vary f0\n  gap delta 0.5 down\n}\n")
    assert r.returncode == 0, r.stderr
    assert '"delta": {"at_least": 0.5, "direction": "down"}' in r.stdout
    assert '"status": "sensitive"' in r.stdout


@pytest.mark.parametrize("direction,sign", [("up", 1.0), ("down", -1.0)])
def test_sens_delta_direction_reads_from_x1_to_x2(tmp_path, direction, sign):
    """``gap delta D up``: the prediction goes up from x1 to x2, as ``--direction up``."""
    r = _run_sens(tmp_path, f"query one {{\n  vary f0\n  gap delta 0.5 {direction}\n}}\n")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.splitlines()[0])["outputs"]
    assert sign * (out["x2"][0] - out["x1"][0]) >= 0.5


def test_sens_gap_max_gives_a_regressors_largest_change(tmp_path):
    r = _run_sens(tmp_path, "query one {\n  vary f0\n  gap max\n}\n")
    assert r.returncode == 0, r.stderr
    assert '"kind": "change"' in r.stdout and '"proven": true' in r.stdout


def test_sens_delta_on_a_classifier_is_an_error_with_its_place(tmp_path):
    X, y = _data()
    xgb.XGBClassifier(n_estimators=2, max_depth=2).fit(X, y > 0).save_model(tmp_path / "c.json")
    path = tmp_path / "q.sens"
    path.write_text('model "c.json"\n\nquery one {\n  vary f0\n  gap delta 1\n}\n')
    r = treesens_here("run", path, cwd=tmp_path)
    assert r.returncode == 2 and "q.sens:5" in r.stderr and "for regressors" in r.stderr
    assert "--" not in r.stderr  # a .sens file has words, not the command line's flags


def test_sens_delta_round_trips_through_fmt():
    from treesens.language import format_sens, parse

    text = 'model "r.json"\n\nquery one {\n  vary f0\n  gap delta 0.5 up\n}\n'
    assert format_sens(parse(text)) == text


def test_sens_audit_block_with_delta_answers_a_regressors_rows(tmp_path):
    import pandas as pd

    X, y = _data(30)
    pd.DataFrame(X, columns=["f0", "f1", "f2"]).assign(label=y).to_csv(
        tmp_path / "rows.csv", index=False
    )
    r = _run_sens(tmp_path, 'audit rows {\n  data "rows.csv"\n  vary f0\n  gap delta 0.5\n}\n')
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stdout.splitlines() if line.startswith("{")]
    assert len(lines) == 30 and all('"reach": [' in line for line in lines)


# ---- what a regressor's result says its gap is ------------------------------------------


def test_a_regressor_s_delta_check_says_its_gap_is_the_change_asked():
    d = treesens.check(_xgb_regressor("reg:squarederror"), vary=["f0"], delta=0.5).to_dict()
    assert (d["gap"], d["gap_kind"]) == (0.5, "change")
    assert d["delta"] == {"at_least": 0.5, "direction": "either"}


def test_a_regressor_s_refused_delta_check_says_its_gap_is_the_change_asked():
    r = treesens.check(_xgb_regressor("reg:squarederror"), vary=["f0"], delta=0.5, memory_mb=1)
    assert r.status == "error" and (r.gap, r.gap_kind) == (0.5, "change")


def test_a_regressor_s_audit_rows_say_their_gap_is_the_change_asked(tmp_path):
    import pandas as pd

    X, y = _data(5)
    pd.DataFrame(X, columns=["f0", "f1", "f2"]).assign(label=y).to_csv(
        tmp_path / "rows.csv", index=False
    )
    r = _run_sens(tmp_path, 'audit rows {\n  data "rows.csv"\n  vary f0\n  gap delta 0.5\n}\n')
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    assert len(rows) == 5 and {(d["gap"], d["gap_kind"]) for d in rows} == {(0.5, "change")}


def test_a_regressor_s_audit_block_resumes_its_out_file(tmp_path):
    import pandas as pd

    X, y = _data(5)
    pd.DataFrame(X, columns=["f0", "f1", "f2"]).assign(label=y).to_csv(
        tmp_path / "rows.csv", index=False
    )
    body = 'audit rows {\n  data "rows.csv"\n  vary f0\n  gap delta 0.5\n  out "rows.jsonl"\n}\n'
    first = _run_sens(tmp_path, body)
    again = _run_sens(tmp_path, body)
    assert first.returncode == 0 and again.returncode == 0, again.stderr
    assert len((tmp_path / "rows.jsonl").read_text().splitlines()) == 5  # none asked twice


def test_a_regressor_s_audit_block_refuses_an_out_file_of_another_direction(tmp_path):
    """A row that can move up by delta may not move down by it: not the same verdict."""
    import pandas as pd

    X, y = _data(5)
    pd.DataFrame(X, columns=["f0", "f1", "f2"]).assign(label=y).to_csv(
        tmp_path / "rows.csv", index=False
    )
    body = 'audit rows {\n  data "rows.csv"\n  vary f0\n  gap delta 0.5 WAY\n  out "o.jsonl"\n}\n'
    assert _run_sens(tmp_path, body.replace("WAY", "up")).returncode == 0
    again = _run_sens(tmp_path, body.replace("WAY", "down"))
    assert again.returncode == 2 and "'direction': 'up'" in again.stderr, again.stderr


def test_a_delta_sweep_of_a_regressor_reuses_its_own_answers(tmp_path):
    ens = treesens.load_model(_xgb_regressor("reg:squarederror"))
    out = tmp_path / "changes.jsonl"
    first = treesens.sweep(ens, features=["f0", "f1"], delta=0.5, out=out)
    again = treesens.sweep(ens, features=["f0", "f1"], delta=0.5, resume=out)
    assert [r.status for r in again] == [r.status for r in first]
    assert len(out.read_text().splitlines()) == 2  # nothing asked twice
    assert all(json.loads(line)["gap_kind"] == "change" for line in out.read_text().splitlines())


def test_a_regressor_s_threshold_check_says_its_gap_is_the_least_change_asked():
    r = treesens.check(_xgb_regressor("reg:squarederror"), vary=["f0"], above=0.5, below=-0.5)
    d = r.to_dict()
    assert (d["gap"], d["gap_kind"], d["threshold"]) == (1.0, "threshold", [0.5, -0.5])


def test_a_regressor_s_threshold_sweep_says_its_gap_is_the_least_change_asked():
    ens = treesens.load_model(_xgb_regressor("reg:squarederror"))
    results = treesens.sweep(ens, features=["f0", "f1"], above=0.5, below=-0.5)
    assert {(r.gap, r.gap_kind) for r in results} == {(1.0, "threshold")}


def _old_format(out, tmp_path):
    """``out``'s lines as an older treesens wrote a regressor's: gap 0.2, gap_kind prob."""
    old = tmp_path / "old.jsonl"
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    old.write_text("".join(json.dumps({**d, "gap": 0.2, "gap_kind": "prob"}) + "\n" for d in lines))
    return old


def test_a_delta_sweep_reuses_the_lines_an_older_treesens_wrote(tmp_path):
    ens = treesens.load_model(_xgb_regressor("reg:squarederror"))
    out = tmp_path / "changes.jsonl"
    treesens.sweep(ens, features=["f0", "f1"], delta=0.5, out=out)
    old = _old_format(out, tmp_path)
    again = treesens.sweep(ens, features=["f0", "f1"], delta=0.5, resume=old)
    assert len(old.read_text().splitlines()) == 2  # nothing asked again
    assert {(r.gap, r.gap_kind) for r in again} == {(0.5, "change")}


def test_a_delta_sweep_does_not_reuse_a_change_in_the_other_direction(tmp_path):
    ens = treesens.load_model(_xgb_regressor("reg:squarederror"))
    out = tmp_path / "changes.jsonl"
    treesens.sweep(ens, features=["f0"], delta=0.5, direction="up", out=out)
    treesens.sweep(ens, features=["f0"], delta=0.5, direction="down", resume=out)
    assert len(out.read_text().splitlines()) == 2  # asked again


def test_a_threshold_sweep_does_not_reuse_another_threshold_s_answers(tmp_path):
    ens = treesens.load_model(_xgb_regressor("reg:squarederror"))
    out = tmp_path / "thresholds.jsonl"
    treesens.sweep(ens, features=["f0"], above=1.0, below=0.0, out=out)
    treesens.sweep(ens, features=["f0"], above=2.0, below=1.0, resume=out)
    assert len(out.read_text().splitlines()) == 2  # asked again


def test_a_regressor_query_refused_with_an_error_records_its_delta_as_its_answer_would():
    """An error line reads as the question asked again on resume= (plot_sweep draws the
    two as one query): its delta is recorded, as an answer's is."""
    from treesens.compiler.plan import Plan
    from treesens.compiler.query import Query
    from treesens.questions.ask import refused

    ens = treesens.load_model(_xgb_regressor("reg:squarederror"))
    q = Query(vary=("f0",), delta=0.5, plan=Plan(timeout=30))
    res = refused(ens, q, "over the contract's limit")
    assert res.status == "error" and res.delta == {"at_least": 0.5, "direction": "either"}
