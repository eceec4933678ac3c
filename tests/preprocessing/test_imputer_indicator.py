"""A SimpleImputer with ``add_indicator=True`` appends, after the imputed columns, a
column per input it saw missing at fit (``indicator_.features_``): 1.0 where the input is
NaN. The indicator depends on its input alone and reads it at NaN only, so the pipeline
folds into the trees as before: on a grid of whole numbers and NaN, the folded model
agrees with the pipeline's predict_proba on every row, and each feature's check agrees
with enumerating the grid, its witness replayed by the pipeline."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.answers.result import INSENSITIVE, SENSITIVE
from treesens.compiler.errors import UnsupportedModelError
from treesens.tests.preprocessing.nan_grid import (
    COLUMNS,
    GRID,
    assert_check_agrees_with_the_grid,
    assert_folded_model_agrees_on_the_grid,
    brute_force_sensitive,
    fitted_and_folded,
)
from treesens.verify import verify_file

pytest.importorskip("sklearn")

GAP = 0.1


def _training(n: int = 800) -> tuple[pd.DataFrame, np.ndarray]:
    """a matters only by being missing, b by its value and by being missing; c, never
    missing at fit, gets no indicator."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({c: rng.integers(0, 6, n).astype(float) for c in COLUMNS})
    miss_a, miss_b = rng.random(n) < 0.3, rng.random(n) < 0.15
    score = 2.0 * miss_a + 1.5 * (df.b > 2) - 1.0 * miss_b - 0.3 * (df.c > 3)
    y = (score + rng.normal(0, 0.5, n) > 1.2).astype(int).to_numpy()
    df.loc[miss_a, "a"] = np.nan
    df.loc[miss_b, "b"] = np.nan
    return df, y


def _imputer_alone():
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline

    clf = GradientBoostingClassifier(n_estimators=15, max_depth=2, random_state=0)
    return make_pipeline(SimpleImputer(strategy="median", add_indicator=True), clf)


def _scaled_in_a_column_transformer():
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    branch = make_pipeline(SimpleImputer(add_indicator=True), StandardScaler())
    clf = RandomForestClassifier(n_estimators=6, max_depth=4, random_state=0)
    return make_pipeline(ColumnTransformer([("num", branch, COLUMNS)]), clf)


PIPELINES = {
    "imputer": _imputer_alone,
    "imputer+scaler in a ColumnTransformer": _scaled_in_a_column_transformer,
}


@pytest.fixture(scope="module", params=sorted(PIPELINES))
def fitted(request):
    return fitted_and_folded(PIPELINES[request.param], _training())


def _indicator_of(pipe):
    imputer = (
        pipe[0] if type(pipe[0]).__name__ == "SimpleImputer" else pipe[0].transformers_[0][1][0]
    )
    return imputer.indicator_.features_.tolist()


def test_the_indicators_are_of_the_inputs_missing_at_fit_and_the_trees_read_them(fitted):
    pipe, _ = fitted
    assert _indicator_of(pipe) == [0, 1]  # a and b; c had no NaN at fit
    assert pipe[-1].feature_importances_[3] > 0  # a's indicator: a matters only by it


def test_the_folded_model_agrees_with_the_pipeline_on_every_row_of_the_grid(fitted):
    pipe, ens = fitted
    assert_folded_model_agrees_on_the_grid(pipe, ens)


@pytest.mark.parametrize("vary", COLUMNS)
def test_each_check_agrees_with_enumerating_the_grid_and_its_witness_replays(fitted, vary):
    pipe, ens = fitted
    assert_check_agrees_with_the_grid(pipe, ens, vary, GAP)


def test_a_missing_value_alone_can_flip_a_decision(fitted):
    """a matters only by being missing: its witness pair is NaN and a number."""
    _, ens = fitted
    res = treesens.check(ens, vary="a", gap=GAP, timeout=60)
    pair = [res.witness[x]["a"] for x in ("x1", "x2")]
    assert res.status == SENSITIVE and sum(v is None or v != v for v in pair) == 1


def test_an_indicator_before_an_encoder_is_refused_naming_it():
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OrdinalEncoder

    df, y = _training()
    branch = make_pipeline(SimpleImputer(add_indicator=True), OrdinalEncoder())
    pre = ColumnTransformer([("cat", branch, ["a"])], remainder="passthrough")
    pipe = make_pipeline(pre, RandomForestClassifier(n_estimators=2, random_state=0)).fit(df, y)
    with pytest.raises(UnsupportedModelError, match="'SimpleImputer'.* add_indicator=True before"):
        treesens.load_model(pipe)


@pytest.fixture(scope="module")
def dumped(fitted, tmp_path_factory):
    """The fitted pipeline in a .skops file (the checker's reading)."""
    sio = pytest.importorskip("skops.io")
    path = tmp_path_factory.mktemp("indicator") / "pipe.skops"
    sio.dump(fitted[0], path)
    return path


@pytest.mark.parametrize("vary", COLUMNS)
def test_each_insensitive_answer_on_the_grid_gets_a_certificate_the_checker_accepts(
    dumped, vary, tmp_path
):
    """The indicator column of an input states its boundaries (infinite: 0.0 on every
    number) and its image of NaN (1.0), which the transform confirms; the grid's
    enumeration agrees with each answer."""
    path = dumped
    pipe = treesens.load_model(str(path)).replayer.pipe
    for gap in (0.1, 0.2, 0.3):
        expected = brute_force_sensitive(pipe.predict_proba(GRID)[:, 1], vary, gap)
        out = tmp_path / f"{gap}.json"
        res = treesens.check(
            str(path), vary=vary, gap=gap, data=GRID, bounds="data", certificate=out
        )
        assert res.status == (SENSITIVE if expected else INSENSITIVE), (gap, res)
        assert res.status == SENSITIVE or (res.proof.checked and verify_file(out).valid)


def _insensitive_certificate(tmp_path) -> tuple[Path, dict]:
    """c's certificate at gap 0.3 of the imputer alone, and its indicator column of a."""
    sio = pytest.importorskip("skops.io")
    df, y = _training()
    path = tmp_path / "pipe.skops"
    sio.dump(_imputer_alone().fit(df, y), path)
    out = tmp_path / "c.json"
    res = treesens.check(str(path), vary="c", gap=0.3, certificate=out)
    assert res.status == INSENSITIVE and res.proof.checked, res.proof
    doc = json.loads(out.read_text())
    return out, doc


def _indicator_column(doc: dict) -> dict:
    return doc["maps"][3]  # after the three imputed columns: a's indicator


def test_an_indicator_column_states_infinite_boundaries_and_one_at_nan(tmp_path):
    _, doc = _insensitive_certificate(tmp_path)
    column = _indicator_column(doc)
    assert column["input"] == 0 and column["nan"] == 1.0
    assert {b for _, b in column["boundaries"]} <= {"inf", "-inf"}


def test_a_false_certificate_naming_another_input_for_an_indicator_column_is_rejected(
    tmp_path,
):
    """a matters only by being missing (sensitive at gap 0.2, its witness replayed). A
    proof that a is insensitive, made from the model whose nodes on a's indicator send
    NaN where the numbers go, with the indicator stated as b's (b may be missing too; the
    column keeps 0.0 when b is NaN): every stated number is confirmed by varying b, and
    before the checker required the column to change with its input it was VALID."""
    import dataclasses

    from treesens.questions.certify import certify
    from treesens.questions.query_build import make_query

    out, _ = _insensitive_certificate(tmp_path)
    path = tmp_path / "pipe.skops"
    ens = treesens.load_model(str(path))
    assert treesens.check(ens, vary="a", gap=0.2).validated
    trees = []
    for t in ens.trees:  # a's indicator nodes: threshold +-inf, NaN on the other side
        default_left = t.default_left.copy()
        on = (t.feature == 0) & np.isinf(t.threshold)
        default_left[on] = t.threshold[on] > 0
        trees.append(dataclasses.replace(t, default_left=default_left))
    fake = dataclasses.replace(ens, trees=tuple(trees))
    made = certify(fake, make_query(["a"], gap=0.2), out, str(path), 60, verify=False)
    assert made.written, made
    doc = json.loads(out.read_text())
    _indicator_column(doc).update(input=1, nan=0.0)
    out.write_text(json.dumps(doc))
    verdict = verify_file(out)
    assert not verdict.valid and "column 3 does not change with input 1" in verdict.message


def test_a_certificate_with_an_indicators_image_of_nan_changed_is_rejected(tmp_path):
    out, doc = _insensitive_certificate(tmp_path)
    _indicator_column(doc)["nan"] = 0.0
    out.write_text(json.dumps(doc))
    verdict = verify_file(out)
    assert not verdict.valid and "image of a missing input 0" in verdict.message
