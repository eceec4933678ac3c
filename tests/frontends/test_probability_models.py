"""Models whose prediction is P(class 1) (XGBoost ``reg:logistic``, LightGBM
``cross_entropy``, CatBoost ``CrossEntropy``) load as a binary classifier, and the
question picks the reading: the binary questions (a gap, the largest probability gap, the
audit's flip) are answered as a binary classifier, the regressor questions (a change by
delta, the threshold form) as a regressor whose link is the sigmoid. Each answer agrees
with brute force in its reading on a tiny model of every such objective, every pair
replayed by the library's predict; a reg:logistic model answers the binary questions as
the same model trained with binary:logistic does."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.compiler.audit import Target
from treesens.compiler.ensemble import LOGISTIC, SIGMOID
from treesens.compiler.errors import UnsupportedModelError
from treesens.compiler.query import Gap
from treesens.questions.certify import certify
from treesens.questions.query_build import make_query
from treesens.tests.audit_oracle import brute_force_flippable
from treesens.tests.conftest import json_lines, treesens_here
from treesens.tests.max_gap_oracle import exact_max_gap, max_gap_problems
from treesens.tests.oracle import (
    brute_force_best_above,
    brute_force_largest_change,
    brute_force_sensitive,
    feature_thresholds,
    interval_values,
)
from treesens.verify import verify_file

xgb = pytest.importorskip("xgboost")
lgb = pytest.importorskip("lightgbm")


def _data(n: int = 200, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows, the probability of class 1, and 0/1 labels drawn with it."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    p = 1.0 / (1.0 + np.exp(-(2.0 * X[:, 0] + X[:, 1] * X[:, 2])))
    return X, p, (rng.random(n) < p).astype(float)


def _xgboost():
    X, _, y = _data()
    est = xgb.XGBRegressor(n_estimators=4, max_depth=2, objective="reg:logistic", nthread=1)
    return est.fit(X, y), lambda rows: est.predict(rows)


def _lightgbm():
    X, p, _ = _data()
    est = lgb.LGBMRegressor(
        n_estimators=4,
        num_leaves=6,
        min_child_samples=5,
        learning_rate=0.5,
        objective="cross_entropy",
        verbose=-1,
        num_threads=1,
    )
    return est.fit(X, p), lambda rows: est.predict(rows)


def _catboost():
    cb = pytest.importorskip("catboost")
    X, p, _ = _data()
    est = cb.CatBoostClassifier(
        iterations=4,
        depth=2,
        learning_rate=0.5,
        loss_function="CrossEntropy",
        verbose=0,
        thread_count=1,
        allow_writing_files=False,
    )
    return est.fit(X, p), lambda rows: est.predict_proba(rows)[:, 1]


TINY = {
    "xgboost-reg:logistic": _xgboost,
    "lightgbm-cross_entropy": _lightgbm,
    "catboost-CrossEntropy": _catboost,
}
F = "f0"  # the feature that moves the probability most, as the files name it


@functools.cache
def _model(name: str):
    """The estimator, its library's P(class 1), the Ensemble as it loads, and the name
    it gives the first feature."""
    est, prob = TINY[name]()
    ens = treesens.load_model(est)
    return est, prob, ens, ens.feature_names[0]


def _rows(ens) -> np.ndarray:
    """Random rows and rows on (and a float next to) every threshold."""
    rng = np.random.default_rng(1)
    R = rng.normal(size=(50, ens.n_features))
    rows = [R]
    for f, ths in enumerate(feature_thresholds(ens)):
        for th in ths:
            for v in (th, np.nextafter(th, -np.inf), np.nextafter(th, np.inf)):
                r = R[:1].copy()
                r[0, f] = v
                rows.append(r)
    return np.concatenate(rows)


def _either_side(best: float) -> tuple[float, float]:
    eps = 1e-3 * max(1e-3, abs(best))
    return best - eps, best + eps


@pytest.mark.parametrize("name", sorted(TINY))
def test_loads_as_a_binary_classifier_whose_probability_is_the_libraries_prediction(name):
    _, prob, ens, f = _model(name)
    assert ens.probability and (ens.n_classes, ens.n_outputs, ens.link) == (2, 1, LOGISTIC)
    X = _rows(ens)
    np.testing.assert_allclose(ens.proba(X)[:, 1], prob(X), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(ens.replayer.predict_proba(X)[:, 1], prob(X))


@pytest.mark.parametrize("name", sorted(TINY))
def test_regressor_reading_predicts_the_same_probability_through_the_sigmoid(name):
    _, prob, ens, f = _model(name)
    reg = ens.as_regressor()
    assert (reg.n_classes, reg.link, reg.trees) == (0, SIGMOID, ens.trees)
    X = _rows(ens)
    np.testing.assert_allclose(reg.predict(X), prob(X), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(reg.replayer.predict(X), prob(X))


def test_both_readings_are_one_model_by_fingerprint():
    _, _, ens, f = _model("xgboost-reg:logistic")
    assert ens.as_regressor().fingerprint() == ens.fingerprint()
    assert ens.as_regressor().as_classifier() is ens


@pytest.mark.parametrize("name", sorted(TINY))
def test_gap_agrees_with_brute_force_either_side_of_the_largest_gap(name):
    _, prob, ens, f = _model(name)
    best = exact_max_gap(ens, [f])
    assert best > 0.05  # the tiny model is sensitive to f0 at some gap
    for g in _either_side(best):
        expected = brute_force_sensitive(ens, make_query([f], gap=g))
        r = treesens.check(ens, vary=[f], gap=g)
        assert r.status == ("sensitive" if expected else "insensitive")
        if expected:
            x1, x2 = (np.array([list(r.witness[x].values())]) for x in ("x1", "x2"))
            assert r.validated and prob(x1)[0] >= 0.5 + g and prob(x2)[0] <= 0.5 - g


@pytest.mark.parametrize("name", sorted(TINY))
def test_max_gap_is_the_probability_gap_brute_force_finds(name):
    _, _, ens, f = _model(name)
    r = treesens.max_gap(ens, vary=[f])
    assert r.max_gap["kind"] == "prob" and r.gap_kind == "prob"
    assert max_gap_problems(exact_max_gap(ens, [f]), r, ens) == []


@pytest.mark.parametrize("name", sorted(TINY))
def test_delta_agrees_with_brute_force_either_side_of_the_largest_change(name):
    _, prob, ens, f = _model(name)
    below, above = _either_side(brute_force_largest_change(ens.as_regressor(), [f]))
    reached = treesens.check(ens, vary=[f], delta=below)
    assert reached.status == "sensitive" and reached.validated
    x1, x2 = (np.array([list(reached.witness[x].values())]) for x in ("x1", "x2"))
    assert abs(prob(x1)[0] - prob(x2)[0]) >= below
    assert reached.outputs["x1"] == [float(prob(x1)[0])]  # the prediction, not [1 - P, P]
    assert treesens.check(ens, vary=[f], delta=above).status == "insensitive"


@pytest.mark.parametrize("name", sorted(TINY))
def test_threshold_form_agrees_with_brute_force(name):
    _, prob, ens, f = _model(name)
    b, best = brute_force_best_above(ens.as_regressor(), [f])
    below, above = _either_side(best)
    reached = treesens.check(ens, vary=[f], above=below, below=b)
    assert reached.status == "sensitive" and reached.validated
    x1 = np.array([list(reached.witness["x1"].values())])
    assert prob(x1)[0] >= below
    assert treesens.check(ens, vary=[f], above=above, below=b).status == "insensitive"


def test_max_gap_of_the_regressor_reading_is_the_largest_change():
    _, _, ens, f = _model("xgboost-reg:logistic")
    r = treesens.max_gap(ens.as_regressor(), vary=[f])
    best = brute_force_largest_change(ens.as_regressor(), [f])
    assert r.max_gap["kind"] == "change" and r.max_gap["proven"]
    assert r.max_gap["lower"] - 1e-6 <= best <= r.max_gap["upper"] + 1e-6


@pytest.mark.parametrize("name", sorted(TINY))
def test_audit_gap_agrees_with_brute_force_per_row(name):
    _, _, ens, _ = _model(name)
    X = _data(40, seed=3)[0]
    f, g, expected = _mixed_audit(ens, X)
    df = treesens.audit(ens, X, [f], gap=g)
    assert list(df["status"] == "flippable") == expected
    assert set(df["decision"]) <= {0, 1}


def _mixed_audit(ens, X) -> tuple[str, float, list[bool]]:
    """A feature and a gap at which some rows flip and others do not, as brute force
    finds them, with its answers."""
    for f in ens.feature_names:
        best = exact_max_gap(ens, [f])
        for g in (0.5 * best, 0.7 * best, 0.9 * best):
            expected = brute_force_flippable(ens, X, [f], Target(Gap(g)))
            if g > 0 and any(expected) and not all(expected):
                return f, g, expected
    pytest.fail("every row flips, or none, at every gap tried")


@pytest.mark.parametrize("name", sorted(TINY))
def test_audit_delta_reaches_the_predictions_enumeration_finds(name):
    _, _, ens, f = _model(name)
    X = _data(20, seed=4)[0]
    df = treesens.audit(ens, X, [f], delta=0.1)
    values = interval_values(ens, 0, feature_thresholds(ens)[0], "independent")
    for i, row in enumerate(X):
        grid = np.repeat(row[None, :], len(values), axis=0)
        grid[:, 0] = values
        pred = ens.as_regressor().predict(grid)
        assert df["reach_low"][i] == pytest.approx(pred.min(), abs=1e-6)
        assert df["reach_high"][i] == pytest.approx(pred.max(), abs=1e-6)
        moved = max(pred.max() - df["decision"][i], df["decision"][i] - pred.min())
        assert (df["status"][i] == "flippable") == (moved >= 0.1)


# ---- the command line: reg:logistic as binary:logistic (and LightGBM's, CatBoost's) -------


@pytest.fixture(scope="module")
def twins(tmp_path_factory):
    """One model trained with reg:logistic and with binary:logistic on the same 0/1
    labels (the same trees), saved as files, and rows to audit."""
    X, _, y = _data()
    folder = tmp_path_factory.mktemp("twins")
    paths = {}
    for objective in ("reg:logistic", "binary:logistic"):
        params = {"objective": objective, "max_depth": 2, "nthread": 1}
        booster = xgb.train(params, xgb.DMatrix(X, label=y), num_boost_round=4)
        paths[objective] = folder / f"{objective.split(':')[0]}.json"
        booster.save_model(paths[objective])
    rows = folder / "rows.csv"
    pd.DataFrame(_data(40, seed=3)[0], columns=["f0", "f1", "f2"]).assign(label=0).to_csv(
        rows, index=False
    )
    return paths, rows


def _lightgbm_twins(X, y, folder) -> dict:
    paths = {}
    for objective in ("cross_entropy", "binary"):
        params = {"objective": objective, "num_leaves": 6, "min_child_samples": 5}
        params.update(learning_rate=0.5, seed=0, num_threads=1, verbose=-1)
        booster = lgb.train(params, lgb.Dataset(X, label=y), num_boost_round=4)
        paths[objective] = folder / f"{objective}.txt"
        booster.save_model(paths[objective])
    return paths


def _catboost_twins(X, y, folder) -> dict:
    cb = pytest.importorskip("catboost")
    paths = {}
    for loss in ("CrossEntropy", "Logloss"):
        est = cb.CatBoostClassifier(
            iterations=4,
            depth=2,
            learning_rate=0.5,
            loss_function=loss,
            random_seed=0,
            verbose=0,
            thread_count=1,
            allow_writing_files=False,
        )
        paths[loss] = folder / f"{loss}.cbm"
        est.fit(X, y).save_model(str(paths[loss]))
    return paths


# the probability objective and the binary objective it is trained as a twin of
TWIN_OBJECTIVES = {
    "lightgbm": (_lightgbm_twins, "cross_entropy", "binary"),
    "catboost": (_catboost_twins, "CrossEntropy", "Logloss"),
}


@pytest.fixture(scope="module", params=sorted(TWIN_OBJECTIVES))
def library_twins(request, tmp_path_factory):
    """LightGBM's cross_entropy and binary, CatBoost's CrossEntropy and Logloss: one
    model trained with each of the pair on the same 0/1 labels with the same seed and
    parameters (the same trees); the files (probability objective, binary objective),
    the name the files give the first feature, and rows to audit."""
    make, probability, binary = TWIN_OBJECTIVES[request.param]
    X, _, y = _data()
    folder = tmp_path_factory.mktemp(request.param)
    paths = make(X, y, folder)
    names = treesens.load_model(paths[binary]).feature_names
    rows = folder / "rows.csv"
    pd.DataFrame(_data(40, seed=3)[0], columns=names).assign(label=0).to_csv(rows, index=False)
    return paths[probability], paths[binary], names[0], rows


def _answers(path, *flags, command="check", vary=F) -> list[dict]:
    p = treesens_here(command, path, "--vary", vary, *flags, "--json")
    assert p.returncode in (0, 1), p.stderr
    return [
        {k: d.get(k) for k in ("status", "gap", "gap_kind", "max_gap", "witness", "row")}
        for d in json_lines(p.stdout)
    ]


@pytest.mark.parametrize(
    "flags",
    [("--gap", "0.3"), ("--gap", "0.05"), ("--max-gap",)],
    ids=["gap-insensitive", "gap-sensitive", "max-gap"],
)
def test_cli_check_answers_reg_logistic_as_binary_logistic(twins, flags):
    paths, _ = twins
    reg = _answers(paths["reg:logistic"], *flags)
    assert reg == _answers(paths["binary:logistic"], *flags)
    if "--max-gap" in flags:
        assert reg[0]["max_gap"]["kind"] == "prob" and reg[0]["gap_kind"] == "prob"


def test_cli_audit_gap_answers_reg_logistic_as_binary_logistic(twins):
    paths, rows = twins
    flags = ("--data", rows, "--gap", "0.2")
    reg = _answers(paths["reg:logistic"], *flags, command="audit")
    assert reg == _answers(paths["binary:logistic"], *flags, command="audit")
    assert {d["status"] for d in reg} == {"sensitive", "insensitive"}


def test_cli_delta_answers_reg_logistic_as_a_regressor(twins):
    paths, _ = twins
    p = treesens_here("check", paths["reg:logistic"], "--vary", F, "--delta", "0.05", "--json")
    assert p.returncode == 0, p.stderr
    (d,) = json_lines(p.stdout)
    assert d["status"] == "sensitive" and d["delta"]["at_least"] == 0.05
    assert abs(d["outputs"]["x1"][0] - d["outputs"]["x2"][0]) >= 0.05


@pytest.mark.parametrize(
    "flags",
    [("--gap", "0.45"), ("--gap", "0.05"), ("--max-gap",)],
    ids=["gap-insensitive", "gap-sensitive", "max-gap"],
)
def test_cli_check_answers_a_probability_objective_as_its_binary_twin(library_twins, flags):
    probability, binary, f, _ = library_twins
    got = _answers(probability, *flags, vary=f)
    assert got == _answers(binary, *flags, vary=f)
    assert got[0]["status"] == ("insensitive" if "0.45" in flags else "sensitive")
    if "--max-gap" in flags:
        assert got[0]["max_gap"]["kind"] == "prob" and got[0]["max_gap"]["proven"]


def test_cli_audit_gap_answers_a_probability_objective_as_its_binary_twin(library_twins):
    probability, binary, f, rows = library_twins
    flags = ("--data", rows, "--gap", "0.2")
    got = _answers(probability, *flags, command="audit", vary=f)
    assert got == _answers(binary, *flags, command="audit", vary=f)
    assert {d["status"] for d in got} == {"sensitive", "insensitive"}


def test_cli_delta_answers_a_probability_objective_as_a_regressor(library_twins):
    probability, _, f, _ = library_twins
    p = treesens_here("check", probability, "--vary", f, "--delta", "0.05", "--json")
    assert p.returncode == 0, p.stderr
    (d,) = json_lines(p.stdout)
    assert d["status"] == "sensitive" and d["validated"] and d["delta"]["at_least"] == 0.05
    assert abs(d["outputs"]["x1"][0] - d["outputs"]["x2"][0]) >= 0.05


@pytest.mark.parametrize(
    "flags,reading",
    [
        (("--gap", "0.3"), "read as a binary classifier, or as a regressor with --delta D"),
        (("--delta", "0.05"), "read as a regressor (link sigmoid), or as a binary classifier"),
    ],
    ids=["gap", "delta"],
)
def test_cli_loaded_line_of_a_probability_objective_says_its_reading(library_twins, flags, reading):
    probability, binary, f, _ = library_twins
    p = treesens_here("check", probability, "--vary", f, *flags)
    assert p.returncode in (0, 1), p.stderr
    assert f"P(class 1) {reading}" in p.stderr.splitlines()[0]


def test_cli_delta_on_binary_logistic_stays_refused(twins):
    paths, _ = twins
    p = treesens_here("check", paths["binary:logistic"], "--vary", F, "--delta", "0.05")
    assert p.returncode == 2
    assert (
        "--delta (a change of the prediction) is for regressors; give a gap (--gap G)" in p.stderr
    )


@pytest.mark.parametrize(
    "flags,line",
    [
        (
            ("--gap", "0.3"),
            "P(class 1) read as a binary classifier, or as a regressor with --delta D or "
            "--above A --below B",
        ),
        (
            ("--delta", "0.05"),
            "P(class 1) read as a regressor (link sigmoid), or as a binary classifier with "
            "--gap G or --max-gap",
        ),
    ],
    ids=["gap", "delta"],
)
def test_cli_loaded_line_says_the_reading_and_how_to_ask_the_other(twins, flags, line):
    paths, _ = twins
    p = treesens_here("check", paths["reg:logistic"], "--vary", F, *flags)
    assert p.returncode in (0, 1), p.stderr
    assert line in p.stderr.splitlines()[0]


@pytest.mark.parametrize(
    "flags,line",
    [
        (
            ("--gap", "0.2"),
            "note: P(class 1) read as a binary classifier, or as a regressor with --delta D",
        ),
        (
            ("--delta", "0.05"),
            "note: P(class 1) read as a regressor (link sigmoid), or as a binary classifier "
            "with --gap G",
        ),
    ],
    ids=["gap", "delta"],
)
def test_cli_audit_says_the_reading_and_how_to_ask_the_other(twins, flags, line):
    paths, rows = twins
    p = treesens_here("audit", paths["reg:logistic"], "--data", rows, "--vary", F, *flags)
    assert p.returncode == 0, p.stderr
    assert line in p.stderr.splitlines()


def test_cli_audit_of_a_binary_classifier_says_no_reading(twins):
    paths, rows = twins
    p = treesens_here(
        "audit", paths["binary:logistic"], "--data", rows, "--vary", F, "--gap", "0.2"
    )
    assert p.returncode == 0, p.stderr
    assert "read as" not in p.stderr


@pytest.mark.parametrize(
    "model,flags,reading",
    [
        (
            "reg:logistic",
            ("--gap", "0.3"),
            " (P(class 1) read as a binary classifier, or as a regressor with --delta D or --above A --below B)",
        ),
        (
            "reg:logistic",
            ("--delta", "0.05"),
            " (P(class 1) read as a regressor (link sigmoid), or as a binary classifier with --gap G or --max-gap)",
        ),
        ("binary:logistic", ("--gap", "0.3"), ""),
    ],
    ids=["gap", "delta", "binary-logistic"],
)
def test_cli_sweep_line_says_the_reading_and_how_to_ask_the_other(twins, model, flags, reading):
    paths, _ = twins
    p = treesens_here("sweep", paths[model], "--features", F, *flags)
    assert p.returncode in (0, 1), p.stderr
    assert p.stderr.splitlines()[0].startswith(f"sweep of xgboost:{paths[model]}{reading}: 1 query")


def test_contract_judges_reg_logistic_as_binary_logistic(twins, tmp_path):
    paths, rows = twins
    body = (
        "query largest {\n  vary f0\n  expect max gap <= 0.1\n}\n"
        "query flips {\n  vary f0\n  gap 0.05\n  expect sensitive\n}\n"
        "query never {\n  vary f1\n  gap 0.3\n  expect insensitive\n}\n"
        "audit rows {\n  vary f0\n  gap 0.2\n  expect audit flippable <= 50%\n}\n"
    )
    lines = {}
    for objective, path in paths.items():
        sens = tmp_path / f"{objective.split(':')[0]}.sens"
        sens.write_text(f'model "{path}"\ndata "{rows}"\n{body}')
        p = treesens_here("test", sens)
        assert p.returncode in (0, 1), p.stderr
        lines[objective] = p.stdout.splitlines()[:-1]  # all but the summary line
    assert lines["reg:logistic"] == lines["binary:logistic"]
    assert [line.split()[0] for line in lines["reg:logistic"]] == ["FAIL", "PASS", "PASS", "FAIL"]


def test_sens_file_asks_each_block_in_its_reading(twins, tmp_path):
    paths, rows = twins
    sens = tmp_path / "both.sens"
    sens.write_text(
        f'model "{paths["reg:logistic"]}"\n'
        "query as_classifier {\n  vary f0\n  gap 0.05\n}\n"
        "query as_regressor {\n  vary f0\n  gap delta 0.05\n}\n"
        "query largest {\n  vary f0\n  gap max\n}\n"
        f'audit rows_flip {{\n  data "{rows}"\n  vary f0\n  gap 0.2\n}}\n'
        f'audit rows_move {{\n  data "{rows}"\n  vary f0\n  gap delta 0.05\n}}\n'
    )
    audits = {}
    results = treesens.run_file(
        sens, on_audit=lambda plan, lines, _s: audits.update({plan.name: lines})
    )
    got = {r.query: r for r in results}
    assert [len(got[q].outputs["x1"]) for q in ("as_classifier", "as_regressor")] == [2, 1]
    assert {got[q].status for q in ("as_classifier", "as_regressor")} == {"sensitive"}
    assert got["largest"].max_gap["kind"] == "prob"
    assert {d["decision"] for d in audits["rows_flip"]} <= {0, 1}
    assert all("delta" not in d for d in audits["rows_flip"])
    assert all(d["delta"]["at_least"] == 0.05 for d in audits["rows_move"])


@pytest.mark.parametrize("name", ["xgboost-reg:logistic", "lightgbm-cross_entropy"])
def test_certificate_of_a_probability_model_is_verified(name, tmp_path):
    est, _, _, _ = _model(name)
    path = tmp_path / ("model.json" if name.startswith("xgboost") else "model.txt")
    if name.startswith("xgboost"):
        est.get_booster().save_model(path)
    else:
        est.booster_.save_model(path)
    ens = treesens.load_model(path)
    f = ens.feature_names[1]
    done = certify(ens, make_query([f], gap=0.45), tmp_path / "c.json", path, 60)
    assert done.written, done.message
    verdict = verify_file(tmp_path / "c.json")
    assert verdict.valid, verdict.message


def test_lightgbm_cross_entropy_lambda_is_refused_as_no_probability(tmp_path):
    X, p, _ = _data()
    est = lgb.LGBMRegressor(n_estimators=2, objective="cross_entropy_lambda", verbose=-1)
    path = tmp_path / "m.txt"
    est.fit(X, p).booster_.save_model(path)
    with pytest.raises(UnsupportedModelError, match=r"log\(1 \+ exp\(raw score\)\)"):
        treesens.load_model(path)
