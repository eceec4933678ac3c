"""An XGBoost dump records neither its objective, nor its number of classes, nor its base
score: read with them stated (load_model's objective=, n_classes=, base_score=; the CLI's
--objective, --num-class, --base-score; the .sens model line's), a dump of each objective
trained here predicts as the booster it was dumped from, and the Booster its witnesses
are replayed on does too; a dump read with none stated is read as before, a binary
logistic classifier of base score 0.5."""

from __future__ import annotations

import json

import numpy as np
import pytest

from treesens import load_model
from treesens.compiler.errors import InputError
from treesens.interfaces.cli.main import main
from treesens.language.fmt import format_sens
from treesens.language.parse import parse
from treesens.language.resolve import load_queries
from treesens.readers.formats.xgboost_dump import dump_refusal
from treesens.readers.formats.xgboost_replay import booster_from_bytes

xgb = pytest.importorskip("xgboost")

# objective: (extra parameters, labels, what the IR's output is compared with)
OBJECTIVES = {
    "binary:logistic": ({}, "binary", "proba"),
    "binary:logitraw": ({}, "binary", "margin"),
    "reg:logistic": ({}, "prob", "proba"),
    "reg:squarederror": ({}, "reg", "predict"),
    "count:poisson": ({}, "count", "predict"),
    "reg:tweedie": ({"tweedie_variance_power": 1.3}, "positive", "predict"),
    "reg:gamma": ({}, "positive", "predict"),
    "multi:softprob": ({"num_class": 3}, "multi", "proba"),
    "multi:softmax": ({"num_class": 3}, "multi", "proba"),
}


def _data():
    rng = np.random.default_rng(5)
    X = rng.uniform(size=(300, 3))
    z = X[:, 0] + X[:, 1] + X[:, 2] - 1.5
    noisy = z + 0.3 * rng.normal(size=len(X))
    return X, {
        "binary": (noisy > 0).astype(int),
        "prob": 1 / (1 + np.exp(-3 * noisy)),
        "reg": 3 * noisy,
        "positive": np.exp(noisy) + 0.1,
        "count": rng.poisson(np.exp(z + 1)).astype(float),
        "multi": (z > -0.3).astype(int) + (z > 0.3),
    }


def _trained(objective):
    params, labels, _ = OBJECTIVES[objective]
    X, ys = _data()
    params = {"objective": objective, "max_depth": 3, "eta": 0.5, "nthread": 1, **params}
    return xgb.train(params, xgb.DMatrix(X, ys[labels]), 3)


def _stored_base_score(booster):
    """The base score the booster's own file records (one per class of a multiclass
    model, as XGBoost 3 learns them)."""
    raw = json.loads(booster.save_raw("json"))["learner"]["learner_model_param"]["base_score"]
    values = [float(v) for v in raw.strip("[]").split(",")]
    return values[0] if len(values) == 1 else tuple(values)


def _dump(booster, path):
    path.write_text("[" + ",".join(booster.get_dump(dump_format="json")) + "]")
    return path


def _library(booster, how, X):
    if how == "margin":  # logitraw: its prediction is the margin, whose P is its sigmoid
        return 1 / (1 + np.exp(-booster.predict(xgb.DMatrix(X), output_margin=True)))
    margin = booster.predict(xgb.DMatrix(X), output_margin=True)
    if margin.ndim == 2:  # a multiclass model's P, of softprob and softmax alike
        e = np.exp(margin - margin.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    return booster.predict(xgb.DMatrix(X))


def _ours(ens, how, X):
    if how == "predict":
        return ens.predict(X).reshape(-1)
    P = ens.proba(X)
    return P[:, 1] if P.shape[1] == 2 else P


def _stated(booster, objective):
    classes = OBJECTIVES[objective][0].get("num_class")
    return dict(objective=objective, n_classes=classes, base_score=_stored_base_score(booster))


def _rows():
    return np.random.default_rng(0).uniform(-0.2, 1.2, size=(2000, 3))


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_a_dump_read_with_its_objective_stated_predicts_as_its_booster(tmp_path, objective):
    booster = _trained(objective)
    ens = load_model(_dump(booster, tmp_path / "dump.json"), **_stated(booster, objective))
    how, X = OBJECTIVES[objective][2], _rows()
    assert np.allclose(_ours(ens, how, X), _library(booster, how, X), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_the_booster_a_stated_dump_replays_on_predicts_as_the_dumped_one(tmp_path, objective):
    booster = _trained(objective)
    ens = load_model(_dump(booster, tmp_path / "dump.json"), **_stated(booster, objective))
    replayed = booster_from_bytes(ens.replayer.model_bytes())
    X = xgb.DMatrix(_rows())
    assert np.allclose(replayed.predict(X), booster.predict(X), rtol=1e-6, atol=1e-6)


def test_a_dump_read_with_nothing_stated_is_a_logistic_classifier_of_base_score_one_half(
    tmp_path,
):
    X, ys = _data()
    params = {"objective": "binary:logistic", "base_score": 0.5, "max_depth": 3, "nthread": 1}
    booster = xgb.train(params, xgb.DMatrix(X, ys["binary"]), 3)
    ens = load_model(_dump(booster, tmp_path / "dump.json"))
    assert np.allclose(_ours(ens, "proba", _rows()), _library(booster, "proba", _rows()))


def test_the_load_line_of_a_dump_read_with_nothing_stated_says_what_it_assumes(tmp_path):
    ens = load_model(_dump(_trained("binary:logistic"), tmp_path / "dump.json"))
    assert "read as objective binary:logistic (assumed), one margin per tree" in ens.source
    assert "base_score 0.5 (assumed)" in ens.source
    assert (
        "say them with objective, num_class, base_score, num_parallel_tree (--objective"
        in ens.source
    )


def _multiclass_cli(tmp_path, *flags):
    booster = _trained("multi:softprob")
    dump = str(_dump(booster, tmp_path / "dump.json"))
    return main(["check", dump, "--vary", "f0", "--classes", "0,1", "--gap", "1.5", *flags])


def test_a_multiclass_dump_is_read_on_the_command_line_with_its_classes_stated(tmp_path, capfd):
    booster = _trained("multi:softprob")
    scores = ",".join(repr(b) for b in _stored_base_score(booster))
    flags = ["--objective", "multi:softprob", "--num-class", "3", f"--base-score={scores}"]
    assert _multiclass_cli(tmp_path, *flags) in (0, 1)
    said = capfd.readouterr()
    assert "read as objective multi:softprob, 3 classes" in said.out + said.err
    assert "9 trees, 3 features, 3 classes" in said.out + said.err


def test_a_class_count_that_does_not_divide_the_dump_s_trees_is_one_line(tmp_path, capsys):
    assert _multiclass_cli(tmp_path, "--objective", "multi:softprob", "--num-class", "4") == 2
    (line,) = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert "num_class 4 does not divide the dump's 9 trees" in line


def test_a_sens_model_line_states_a_dump_s_objective_classes_and_base_scores(tmp_path):
    booster = _trained("multi:softprob")
    _dump(booster, tmp_path / "dump.json")
    scores = ", ".join(repr(b) for b in _stored_base_score(booster))
    line = f'model "dump.json" objective multi:softprob num_class 3 base_score {scores}'
    sens = tmp_path / "q.sens"
    sens.write_text(f"{line}\nquery q {{\n  vary f0\n  classes 0 -> 1\n  gap 1.5\n}}\n")
    ens = load_queries(sens).ensemble
    X = _rows()
    assert np.allclose(_ours(ens, "proba", X), _library(booster, "proba", X), atol=1e-6)
    assert line in format_sens(parse(sens.read_text()))


def test_an_objective_given_to_a_native_model_is_refused(tmp_path):
    path = tmp_path / "model.json"
    _trained("binary:logistic").save_model(path)
    with pytest.raises(InputError, match="objective is read only for a text dump"):
        load_model(path, objective="reg:squarederror")


def test_a_certificate_of_a_dump_read_as_logitraw_is_refused_naming_the_objective(tmp_path):
    booster = _trained("binary:logitraw")
    path = _dump(booster, tmp_path / "dump.json")
    ens = load_model(path, **_stated(booster, "binary:logitraw"))
    assert "not binary:logitraw" in dump_refusal(ens)


def test_a_class_count_given_to_a_native_model_is_refused(tmp_path, capsys):
    path = tmp_path / "model.json"
    _trained("binary:logistic").save_model(path)
    assert main(["check", str(path), "--vary", "f0", "--gap", "0.3", "--num-class", "3"]) == 2
    (line,) = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert "num_class is read only for a text dump" in line


def test_a_class_count_beside_an_objective_of_one_output_is_refused(tmp_path):
    path = _dump(_trained("multi:softprob"), tmp_path / "dump.json")
    with pytest.raises(InputError, match="num_class 3, but the objective reg:squarederror"):
        load_model(path, objective="reg:squarederror", n_classes=3)


@pytest.mark.parametrize("objective", ["multi:softprob", "count:poisson"])
def test_a_text_dump_read_with_its_objective_stated_predicts_as_its_booster(tmp_path, objective):
    booster = _trained(objective)
    booster.dump_model(str(tmp_path / "dump.txt"))
    ens = load_model(tmp_path / "dump.txt", **_stated(booster, objective))
    how, X = OBJECTIVES[objective][2], _rows()
    assert np.allclose(_ours(ens, how, X), _library(booster, how, X), rtol=1e-6, atol=1e-6)


def test_a_multiclass_dump_stated_of_no_classes_is_refused_not_read_as_two(tmp_path):
    # a 3-class dump of 2 rounds (6 trees), whose num_class 0 was read as 2 classes
    X, ys = _data()
    params = {"objective": "multi:softprob", "num_class": 3, "max_depth": 2, "nthread": 1}
    path = _dump(xgb.train(params, xgb.DMatrix(X, ys["multi"]), 2), tmp_path / "dump.json")
    with pytest.raises(InputError, match="num_class 0: the objective multi:softprob needs 2"):
        load_model(path, objective="multi:softprob", n_classes=0)


@pytest.mark.parametrize("count", [-3, 2.5, True])
def test_a_class_count_that_is_no_number_of_classes_is_refused_naming_it(tmp_path, count):
    path = _dump(_trained("multi:softprob"), tmp_path / "dump.json")
    with pytest.raises(InputError, match=f"num_class {count!r} is not a number of classes"):
        load_model(path, objective="multi:softprob", n_classes=count)
