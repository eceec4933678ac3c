"""An XGBoost dump read with its objective, class count and base score(s) stated is
answered as the booster it was dumped from predicts: random boosters of every objective
a dump reads (values missing in training, 2 to 10 rounds of depth 2 to 4, a base score
set or learnt, per class for a multiclass model), dumped as JSON or as text and loaded
with what the booster's own file records, must equal its predict on random rows; a check
just below and just above the best gap (ratio, change) of the booster's predict on a
grid of every routing signature says sensitive and insensitive, and the max gap brackets
that best (tests/campaigns/test_model_variants.py's oracle, asked of the dump). Hunt behind it: 350 boosters, no disagreement; it found a num_class 0
read as 2 classes (readers/formats/xgboost_dump._check_class_count).

Boosters of num_parallel_tree P = 2 or 3 (each round's P trees of a class in turn, which
a dump does not record), multiclass and binary, dumped and read with P stated, are
answered the same way. Hunt behind it: 120 boosters of P 1 to 3, each read with P unsaid
and stated 1, 2, 3, 4 and 6 (720 loads): every load with the booster's own P (and every
binary load, whatever P: one output's trees are summed) equals its predict; a wrong P is
refused where K x P does not divide the trees, and read as another model where it does
(the load line names the P it read with, "(assumed)" when unsaid: the dump cannot tell)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import treesens
from treesens.tests.campaigns.test_model_variants import _answers_agree, _softmax

xgb = pytest.importorskip("xgboost")

# objective: (kind the answers read, labels, extra parameters)
OBJECTIVES = {
    "binary:logistic": ("binary", "binary", {}),
    "binary:logitraw": ("binary", "binary", {}),
    "reg:logistic": ("binary", "prob", {}),
    "reg:squarederror": ("reg", "reg", {}),
    "reg:absoluteerror": ("reg", "reg", {}),
    "reg:pseudohubererror": ("reg", "reg", {"huber_slope": 2.0}),
    "reg:quantileerror": ("reg", "reg", {"quantile_alpha": 0.7}),
    "reg:squaredlogerror": ("reg", "positive", {}),
    "count:poisson": ("reg", "count", {}),
    "reg:tweedie": ("reg", "positive", {"tweedie_variance_power": 1.5}),
    "reg:gamma": ("reg", "positive", {}),
    "multi:softprob": ("multi", "multi", {}),
    "multi:softmax": ("multi", "multi", {}),
}
NAMES = sorted(OBJECTIVES)


def _data(rng, n_classes):
    X = rng.uniform(size=(300, 3))
    X[:, 2] = rng.integers(0, 5, len(X))
    X[rng.random(X.shape) < 0.1] = np.nan
    z = np.nan_to_num(X[:, 0] + X[:, 1] - 1 + 0.2 * X[:, 2] - 0.4, nan=0.3)
    noisy = z + 0.3 * rng.normal(size=len(X))
    cuts = np.quantile(z, np.linspace(0, 1, n_classes + 1)[1:-1])
    return X, {
        "binary": (noisy > 0).astype(int),
        "prob": 1 / (1 + np.exp(-3 * noisy)),
        "reg": 3 * noisy,
        "positive": np.exp(noisy) + 0.1,
        "count": rng.poisson(np.exp(z + 1)).astype(float),
        "multi": np.searchsorted(cuts, z),
    }


def _booster(seed: int):
    rng = np.random.default_rng([4417, seed])
    objective = NAMES[seed % len(NAMES)]
    kind, labels, extra = OBJECTIVES[objective]
    n_classes = int(rng.integers(3, 5)) if kind == "multi" else None
    X, ys = _data(rng, n_classes or 2)
    params = {"objective": objective, "max_depth": int(rng.integers(2, 5)), "nthread": 1}
    params |= {"eta": float(rng.uniform(0.2, 0.8)), **extra}
    if n_classes:
        params["num_class"] = n_classes
    if rng.random() < 0.4 and kind != "multi":  # a base score set, else learnt
        params["base_score"] = {"binary": 0.3, "reg": 1.7}[kind]
    booster = xgb.train(params, xgb.DMatrix(X, ys[labels]), int(rng.integers(2, 11)))
    return booster, objective, kind, n_classes, bool(rng.random() < 0.5)


def _stored_base_score(booster):
    raw = json.loads(booster.save_raw("json"))["learner"]["learner_model_param"]["base_score"]
    values = [float(v) for v in raw.strip("[]").split(",")]
    return values[0] if len(values) == 1 else tuple(values)


def _dump(booster, folder, text: bool):
    if text:
        path = folder / "dump.txt"
        booster.dump_model(str(path))
    else:
        path = folder / "dump.json"
        path.write_text("[" + ",".join(booster.get_dump(dump_format="json")) + "]")
    return path


def _predict(booster, objective, kind):
    def predict(Z):
        # a dump names the features its trees split on: a last one none reads is not in it
        Z = np.pad(Z, ((0, 0), (0, booster.num_features() - Z.shape[1])))
        margin = booster.predict(xgb.DMatrix(Z), output_margin=True)
        if kind == "multi":
            return _softmax(margin)
        if objective == "binary:logitraw":  # the margin is its output: P is its sigmoid
            return 1 / (1 + np.exp(-margin))
        return booster.predict(xgb.DMatrix(Z))

    return predict


def _ours(ens, kind, X):
    if kind == "reg":
        return ens.predict(X).reshape(-1)
    return ens.proba(X)[:, 1] if kind == "binary" else ens.proba(X)


def _predicted_as_its_booster(ens, booster, objective, kind, seed: int):
    """The booster's predict, once ours agrees with it on 1,000 random rows (a tenth of
    the values missing, the third feature whole)."""
    predict = _predict(booster, objective, kind)
    rows = np.random.default_rng(seed).uniform(-0.2, 1.2, size=(1000, 3))
    rows[:, 2] = np.floor(rows[:, 2] * 5)
    rows[np.random.default_rng(seed + 1).random(rows.shape) < 0.1] = np.nan
    lib = np.asarray(predict(rows), dtype=float)
    rows = rows[:, : ens.n_features]
    assert np.allclose(_ours(ens, kind, rows).reshape(lib.shape), lib, rtol=1e-5, atol=1e-6)
    return predict


def _dump_answered_as_its_booster(seed: int, folder) -> None:
    booster, objective, kind, n_classes, text = _booster(seed)
    path = _dump(booster, folder, text)
    stated = dict(objective=objective, n_classes=n_classes, base_score=_stored_base_score(booster))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ens = treesens.load_model(path, **stated)
        predict = _predicted_as_its_booster(ens, booster, objective, kind, seed)
        names = ens.feature_names
        problems = [
            p for vary in ([names[0]], names[1:]) for p in _answers_agree(ens, kind, predict, vary)
        ]
    assert not problems, (seed, objective, n_classes, text, problems)


@pytest.mark.parametrize("seed", range(4))
def test_a_dump_read_with_its_objective_stated_is_answered_as_its_booster_predicts(seed, tmp_path):
    _dump_answered_as_its_booster(seed, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4, 44))
def test_more_dumps_read_with_their_objective_stated_are_answered_as_their_booster_predicts(
    seed, tmp_path
):
    _dump_answered_as_its_booster(seed, tmp_path)


def _parallel_booster(seed: int):
    """A booster of num_parallel_tree 2 or 3: multiclass (softprob or softmax) or binary."""
    rng = np.random.default_rng([4418, seed])
    objective = ["multi:softprob", "multi:softmax", "binary:logistic"][seed % 3]
    kind = "binary" if objective.startswith("binary") else "multi"
    n_classes = int(rng.integers(3, 5)) if kind == "multi" else None
    X, ys = _data(rng, n_classes or 2)
    params = {"objective": objective, "max_depth": int(rng.integers(1, 4)), "nthread": 1}
    params |= {"num_parallel_tree": 2 + seed % 2, "subsample": 0.7, "colsample_bynode": 0.7}
    params |= {"eta": float(rng.uniform(0.2, 0.8)), "seed": seed}
    if n_classes:
        params["num_class"] = n_classes
    booster = xgb.train(params, xgb.DMatrix(X, ys[kind]), int(rng.integers(1, 4)))
    return booster, objective, kind, n_classes, params["num_parallel_tree"], bool(seed % 4 < 2)


def _parallel_dump_answered_as_its_booster(seed: int, folder) -> None:
    booster, objective, kind, n_classes, P, text = _parallel_booster(seed)
    path = _dump(booster, folder, text)
    stated = dict(objective=objective, n_classes=n_classes, num_parallel_tree=P)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ens = treesens.load_model(path, base_score=_stored_base_score(booster), **stated)
        predict = _predicted_as_its_booster(ens, booster, objective, kind, seed)
        problems = _answers_agree(ens, kind, predict, ens.feature_names[:1])
    assert not problems, (seed, objective, n_classes, P, text, problems)


@pytest.mark.parametrize("seed", range(2))
def test_a_dump_of_parallel_trees_read_with_its_num_parallel_tree_is_answered_as_its_booster(
    seed, tmp_path
):
    _parallel_dump_answered_as_its_booster(seed, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(2, 40))
def test_more_dumps_of_parallel_trees_are_answered_as_their_booster_predicts(seed, tmp_path):
    _parallel_dump_answered_as_its_booster(seed, tmp_path)
