"""A pipeline certificate names, per column the final model reads, the input it is
computed from, and the checker confirms each stated boundary or image by varying that
input. A column that does not change with the named input confirms every infinite
boundary (its test holds, or fails, at both ends) and constant images, whatever the
column's own input does: naming another input turns the column's tests into constants.
Such a certificate, made from the proof of a model whose nodes on the column always take
the side the base row takes, claimed a sensitive feature insensitive and was accepted;
the checker now requires the column to change with the input it is said to come from."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.answers.result import SENSITIVE
from treesens.questions.certify import certify
from treesens.questions.query_build import make_query
from treesens.tests.verify.test_pipeline_certificates import write_pipeline
from treesens.verify import verify_file

pytest.importorskip("skops")

GAP = 0.1


def _certificate_of(ens, vary: str, trees, model: Path, out: Path) -> dict:
    """The certificate of ``vary`` being insensitive in ``ens`` with ``trees`` instead
    of its own (a proof of another model, with the pipeline's honest maps)."""
    fake = dataclasses.replace(ens, trees=tuple(trees))
    made = certify(fake, make_query([vary], gap=GAP), out, str(model), 60, verify=False)
    assert made.written, made
    return json.loads(out.read_text())


def _rewritten(doc: dict, out: Path) -> Path:
    out.write_text(json.dumps(doc))
    return out


def _bound(b) -> float:
    return float(str(b).replace("inf", "Infinity"))


def test_a_scaled_column_restated_on_another_input_at_infinite_boundaries_is_rejected(tmp_path):
    model = write_pipeline(tmp_path)
    ens = treesens.load_model(str(model))
    income = ens.feature_names.index("income")
    assert treesens.check(ens, vary="income", gap=GAP).status == SENSITIVE
    trees = []  # every node on income takes the side income = 0 takes
    for t in ens.trees:
        th = t.threshold.copy()
        on = np.flatnonzero(t.feature == income)
        th[on] = np.where(th[on] > 0.0, np.inf, -np.inf)
        trees.append(dataclasses.replace(t, threshold=th))
    doc = _certificate_of(ens, "income", trees, model, tmp_path / "c.json")
    for col in doc["maps"]:
        if col["input"] == income and col["boundaries"]:
            col["input"] = ens.feature_names.index("age")  # income's column: unchanged
            col.pop("map", None)
            col["boundaries"] = [
                [t, "inf" if _bound(b) > 0.0 else "-inf"] for t, b in col["boundaries"]
            ]
    verdict = verify_file(_rewritten(doc, tmp_path / "false.json"))
    assert not verdict.valid
    assert "column 1 does not change with input 0" in verdict.message


def _two_colours(folder: Path) -> Path:
    """One-hot colour and shade (the same three names), then a GradientBoosting model
    that reads colour by its red column."""
    import skops.io
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    rng = np.random.default_rng(0)
    names = ["blue", "green", "red"]
    df = pd.DataFrame({"colour": rng.choice(names, 400), "shade": rng.choice(names, 400)})
    score = 2.0 * (df.colour == "red") + 0.5 * (df.shade == "blue") + rng.normal(0, 0.5, 400)
    encode = ColumnTransformer([("onehot", OneHotEncoder(), ["colour", "shade"])])
    gb = GradientBoostingClassifier(n_estimators=5, max_depth=2, random_state=0)
    path = folder / "colours.skops"
    skops.io.dump(make_pipeline(encode, gb).fit(df, (score > 1).astype(int)), path)
    return path


def test_a_one_hot_column_restated_on_another_input_with_equal_images_is_rejected(tmp_path):
    model = _two_colours(tmp_path)
    ens = treesens.load_model(str(model))
    assert treesens.check(ens, vary="colour", gap=GAP).status == SENSITIVE
    red = frozenset({2})  # colour's codes: blue 0, green 1, red 2
    trees = []  # every node on colour's red column takes the side blue (the base) takes
    for t in ens.trees:
        cats = list(t.categories)
        for n, c in enumerate(cats):
            if t.feature[n] == 0 and c in (red, frozenset({0, 1})):
                cats[n] = frozenset({0, 1, 2}) if 0 in c else frozenset()
        trees.append(dataclasses.replace(t, categories=tuple(cats)))
    doc = _certificate_of(ens, "colour", trees, model, tmp_path / "c.json")
    col = next(c for c in doc["maps"] if c["input"] == 0 and c["values"] == [0.0, 0.0, 1.0])
    col["input"], col["values"] = 1, [0.0, 0.0, 0.0]  # colour is blue as shade varies
    verdict = verify_file(_rewritten(doc, tmp_path / "false.json"))
    assert not verdict.valid
    assert "does not change with input 1" in verdict.message


def test_an_imputer_of_a_number_is_not_checked(tmp_path):
    """It maps that number to its fill: the column does not rise with its input there,
    which a boundary's two points do not see."""
    import skops.io
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline

    from treesens.verify.models import ModelError
    from treesens.verify.models_pipeline import read_pipeline

    rng = np.random.default_rng(0)
    X = rng.integers(-1, 5, size=(200, 2)).astype(float)
    fill = SimpleImputer(missing_values=-1.0, strategy="constant", fill_value=9.0)
    gb = GradientBoostingClassifier(n_estimators=2, max_depth=1)
    skops.io.dump(make_pipeline(fill, gb).fit(X, X[:, 0] > 2), tmp_path / "p.skops")
    with pytest.raises(ModelError, match="SimpleImputer of a number"):
        read_pipeline(str(tmp_path / "p.skops"), [])


def test_an_honest_column_whose_boundaries_are_all_infinite_verifies(tmp_path):
    """hours is clipped to [0, 0.1] (a MinMaxScaler whose range was narrowed after the
    fit), below every threshold on its column: each test holds whatever hours is, so the
    certificate states infinite boundaries, and the column changes with hours."""
    import skops.io
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MinMaxScaler, StandardScaler

    from treesens.answers.result import INSENSITIVE
    from treesens.tests.verify.test_pipeline_certificates import NAMES, _data

    X, y = _data(0)
    ranged = MinMaxScaler(clip=True)
    ct = ColumnTransformer([("scaled", StandardScaler(), NAMES[:2]), ("ranged", ranged, NAMES[2:])])
    gb = GradientBoostingClassifier(n_estimators=4, max_depth=2, learning_rate=0.5)
    pipe = make_pipeline(ct, gb).fit(pd.DataFrame(X, columns=NAMES), y)
    pipe[0].named_transformers_["ranged"].feature_range = (0.0, 0.1)
    skops.io.dump(pipe, tmp_path / "p.skops")
    out = tmp_path / "hours.json"
    res = treesens.check(str(tmp_path / "p.skops"), vary="hours", gap=GAP, certificate=out)
    hours = [c for c in json.loads(out.read_text())["maps"] if c["input"] == 2]
    stated = [_bound(b) for c in hours for _, b in c["boundaries"]]
    assert stated and all(math.isinf(b) for b in stated)
    assert res.status == INSENSITIVE and res.proof.checked, res.proof
