"""A multiclass XGBoost dump of num_parallel_tree P > 1 (boosted random forests, or
num_parallel_tree set) orders each round's trees by class, P of each in turn: tree i adds
to class (i // P) mod K. A dump records neither P nor the trees' classes (its trees are a
list, 'booster[i]:' headers numbering them), so P is stated as the class count is
(load_model's num_parallel_tree=, --num-parallel-tree, the .sens model line's), and the
load line says the P it assumed; read as 'tree i adds to class i mod K', a dump of P = 2
predicted other classes than its booster."""

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
K, P, ROUNDS = 3, 2, 3


@pytest.fixture(scope="module")
def booster():
    rng = np.random.default_rng(7)
    X = rng.uniform(size=(400, 3))
    z = X[:, 0] + X[:, 1] - X[:, 2] - 0.5
    y = (z > -0.3).astype(int) + (z > 0.3)
    params = {
        "objective": "multi:softprob", "num_class": K, "num_parallel_tree": P,
        "max_depth": 3, "eta": 0.5, "subsample": 0.7, "colsample_bynode": 0.7,
        "nthread": 1, "seed": 1,
    }  # fmt: skip
    return xgb.train(params, xgb.DMatrix(X, y), ROUNDS)


def _stated(booster, **more):
    raw = json.loads(booster.save_raw("json"))["learner"]["learner_model_param"]["base_score"]
    scores = tuple(float(v) for v in raw.strip("[]").split(","))
    return dict(objective="multi:softprob", n_classes=K, base_score=scores, **more)


def _rows():
    return np.random.default_rng(0).uniform(-0.2, 1.2, size=(2000, 3))


def _library(booster, X):
    return booster.predict(xgb.DMatrix(X))


@pytest.fixture(params=["json", "text"])
def dump(request, booster, tmp_path):
    if request.param == "text":
        booster.dump_model(str(tmp_path / "dump.txt"))  # 'booster[i]:' headers
        return tmp_path / "dump.txt"
    path = tmp_path / "dump.json"
    path.write_text("[" + ",".join(booster.get_dump(dump_format="json")) + "]")
    return path


def test_a_dump_read_with_its_num_parallel_tree_predicts_as_its_booster(booster, dump):
    ens = load_model(dump, **_stated(booster, num_parallel_tree=P))
    X = _rows()
    assert np.allclose(ens.proba(X), _library(booster, X), rtol=1e-6, atol=1e-6)


def test_a_dump_read_without_it_misreads_the_trees_classes(booster, dump):
    ens = load_model(dump, **_stated(booster))
    X = _rows()
    assert not np.allclose(ens.proba(X), _library(booster, X), atol=1e-3)


def test_the_booster_its_witnesses_replay_on_predicts_as_the_dumped_one(booster, dump):
    ens = load_model(dump, **_stated(booster, num_parallel_tree=P))
    replayed = booster_from_bytes(ens.replayer.model_bytes())
    X = xgb.DMatrix(_rows())
    assert np.allclose(replayed.predict(X), booster.predict(X), rtol=1e-6, atol=1e-6)


def test_the_load_line_says_the_num_parallel_tree_it_assumed(booster, dump):
    ens = load_model(dump, **_stated(booster))
    assert f"tree i adding to class i mod {K}, num_parallel_tree 1 (assumed)" in ens.source
    assert "--num-parallel-tree" in ens.source


def test_the_load_line_says_the_num_parallel_tree_given(booster, dump):
    ens = load_model(dump, **_stated(booster, num_parallel_tree=P))
    assert f"tree i adding to class (i // {P}) mod {K}, num_parallel_tree {P}," in ens.source


def test_the_command_line_reads_num_parallel_tree(booster, dump, capfd):
    scores = ",".join(repr(b) for b in _stated(booster)["base_score"])
    argv = ["check", str(dump), "--vary", "f0", "--classes", "0,1", "--gap", "1.5"]
    flags = ["--objective", "multi:softprob", "--num-class", str(K), f"--base-score={scores}"]
    assert main([*argv, *flags, "--num-parallel-tree", str(P)]) in (0, 1)
    said = capfd.readouterr()
    assert f"(i // {P}) mod {K}, num_parallel_tree {P}" in said.out + said.err


def test_a_sens_model_line_states_num_parallel_tree(booster, dump, tmp_path):
    scores = ", ".join(repr(b) for b in _stated(booster)["base_score"])
    line = (
        f'model "{dump.name}" objective multi:softprob num_class {K} num_parallel_tree {P} '
        f"base_score {scores}"
    )
    sens = tmp_path / "q.sens"
    sens.write_text(f"{line}\nquery q {{\n  vary f0\n  classes 0 -> 1\n  gap 1.5\n}}\n")
    ens = load_queries(sens).ensemble
    X = _rows()
    assert np.allclose(ens.proba(X), _library(booster, X), rtol=1e-6, atol=1e-6)
    assert line in format_sens(parse(sens.read_text()))


def test_classes_times_parallel_trees_that_do_not_divide_the_trees_are_refused(booster, dump):
    with pytest.raises(InputError, match=f"num_class {K} times num_parallel_tree 4 does not"):
        load_model(dump, **_stated(booster, num_parallel_tree=4))


def test_a_num_parallel_tree_below_one_is_refused(booster, dump):
    with pytest.raises(InputError, match="num_parallel_tree must be a whole number >= 1"):
        load_model(dump, **_stated(booster, num_parallel_tree=0))


def test_a_certificate_of_a_dump_of_parallel_trees_is_refused(dump):
    # one base score: the checker would read that, not the trees' classes
    ens = load_model(dump, objective="multi:softprob", n_classes=K, num_parallel_tree=P)
    assert "num_parallel_tree > 1" in dump_refusal(ens)


def test_num_parallel_tree_given_to_a_native_model_is_refused(booster, tmp_path):
    path = tmp_path / "model.json"
    booster.save_model(path)
    with pytest.raises(InputError, match="num_parallel_tree is read only for"):
        load_model(path, num_parallel_tree=P)
