"""HistGradientBoosting with categorical features from a ``.skops`` file: its
``_preprocessor`` holds ``functools.partial(check_array, dtype=[float64],
ensure_all_finite=False)``, the one partial treesens and the checker trust (each with
code of its own: readers/formats/skops_partial.py, verify/skops_trust.py). Such a model
is read, its insensitive answers and max-gap bounds certified and verified, its replayed
pairs scored with its categories; a file whose partial is any other, or whose partial's
objects stand for others elsewhere in the file, is refused in one line."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.compiler.errors import InputError
from treesens.compiler.query import Gap, Query
from treesens.readers.details import declare
from treesens.tests.oracle import brute_force_sensitive
from treesens.tests.verify.tampering import checker_raw, claiming_gap, drop_last_box, tampered
from treesens.verify import verify_file
from treesens.verify.models import ModelError, read_model
from treesens.verify.replay import library_raw

CATEGORIES = [2.0, 5.0, 7.0, 9.0]  # code k is the k-th


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    import skops.io
    from sklearn.ensemble import HistGradientBoostingClassifier

    rng = np.random.default_rng(0)
    n = 400
    X = pd.DataFrame({"f0": rng.choice(CATEGORIES, n), "f1": rng.uniform(0, 1, n)})
    X.loc[rng.random(n) < 0.15, "f1"] = np.nan
    s = np.nan_to_num(X["f1"].to_numpy(), nan=0.5) + 0.3 * X["f0"].isin([5.0, 9.0])
    y = (s + rng.normal(0, 0.05, n) > 0.65).astype(int)
    est = HistGradientBoostingClassifier(
        max_iter=4, max_depth=3, learning_rate=0.5, categorical_features=[0]
    )
    path = tmp_path_factory.mktemp("hgb") / "categorical.skops"
    skops.io.dump(est.fit(X, y), path)
    return path


def _ens(path: Path):
    return declare(treesens.load_model(str(path)), missing=["f1"])


def test_treesens_reads_the_categorical_feature_from_the_file(model):
    f0 = treesens.load_model(str(model)).features[0]
    assert f0.kind == "categorical" and len(f0.categories) == len(CATEGORIES)


def test_the_checker_reads_the_file_and_routes_codes_as_scikit_learn_routes_categories(model):
    import skops.io

    m = read_model(str(model), "sklearn")
    assert any(c is not None for t in m.trees for c in t.cats or ())
    est = skops.io.load(model, trusted=skops.io.get_untrusted_types(file=str(model)))
    f1 = [np.nan, 0.0, 0.3, 0.5, 0.7, 1.0]
    codes = [[float(k), v] for k in range(len(CATEGORIES)) for v in f1]
    rows = pd.DataFrame([[CATEGORIES[int(k)], v] for k, v in codes], columns=["f0", "f1"])
    np.testing.assert_allclose(
        [checker_raw(m, r) for r in codes], est.decision_function(rows), rtol=1e-9, atol=1e-9
    )


def test_the_replay_gives_the_categorys_score_for_its_code(model):
    m = read_model(str(model), "sklearn")
    X = np.array([[0.0, 0.4], [3.0, np.nan]])
    got = library_raw(str(model), "sklearn", m)(X)[:, 0]
    np.testing.assert_allclose(got, [checker_raw(m, x) for x in X], rtol=1e-9, atol=1e-9)


@pytest.fixture(scope="module")
def max_gap(model, tmp_path_factory):
    out = tmp_path_factory.mktemp("certificates") / "f0.json"
    r = treesens.max_gap(_ens(model), vary=["f0"], certificate=out)
    assert r.proof.checked, r.proof.why_not
    return out, r.max_gap


def test_a_max_gap_bound_over_the_codes_is_certified_and_verified(max_gap):
    out, mg = max_gap
    assert mg["lower"] > 0.05  # the model does read f0
    doc = json.loads(out.read_text())
    assert doc["question"]["domain"][0]["codes"] == list(range(len(CATEGORIES)))
    assert verify_file(out).valid


def test_an_insensitive_answer_above_the_max_gap_is_certified(model, max_gap, tmp_path):
    gap = round(max_gap[1]["upper"] + 0.01, 3)
    out = tmp_path / "c.json"
    r = treesens.check(_ens(model), vary=["f0"], gap=gap, certificate=out)
    assert r.status == "insensitive" and r.proof.checked, r.proof.why_not


def test_a_certificate_with_a_box_removed_is_rejected(max_gap, tmp_path):
    assert not verify_file(tampered(max_gap[0], tmp_path, drop_last_box)).valid


def test_a_certificate_claiming_a_gap_brute_force_reaches_is_rejected(model, max_gap, tmp_path):
    out, mg = max_gap
    false_gap = round(mg["lower"] * 0.999, 6)
    assert brute_force_sensitive(_ens(model), Query(vary=("f0",), gap=Gap(false_gap)))

    assert not verify_file(tampered(out, tmp_path, claiming_gap(false_gap))).valid


# ---- a partial other than HistGradientBoosting's is refused ---------------------------
def _edited(model: Path, folder: Path, change) -> Path:
    """A copy of the .skops file with ``change(schema)`` applied to its schema."""
    out = folder / "edited.skops"
    with zipfile.ZipFile(model) as z, zipfile.ZipFile(out, "w") as w:
        for name in z.namelist():
            data = z.read(name)
            if name == "schema.json":
                schema = json.loads(data)
                change(schema)
                data = json.dumps(schema).encode()
            w.writestr(name, data)
    return out


def _partials(o) -> list[dict]:
    """The schema's partial nodes (the estimator's ``transformers`` and
    ``transformers_`` copies)."""
    if isinstance(o, dict):
        if o.get("__loader__") == "PartialNode":
            return [o]
        return [p for v in o.values() for p in _partials(v)]
    if isinstance(o, list):
        return [p for v in o for p in _partials(v)]
    return []


def _another_function(schema):
    for p in _partials(schema):
        p["content"]["func"].update({"__class__": "save", "__module__": "numpy"})


def _another_keyword(schema):
    kwds = _partials(schema)[0]["content"]["kwds"]
    kwds["content"]["accept_sparse"] = {
        "__class__": "str", "__module__": "builtins", "__loader__": "JsonNode",
        "content": "true", "is_json": True,
    }  # fmt: skip
    kwds["key_types"]["content"].append(kwds["key_types"]["content"][0])


def _aliased_dtype(schema):
    """An attribute put first in the estimator, under the __id__ of the partial's dtype
    list but holding another type: skops builds it first and gives the partial that
    object wherever the __id__ appears again."""
    dtype = _partials(schema)[0]["content"]["kwds"]["content"]["dtype"]
    other = {**dtype, "content": [{**dtype["content"][0], "__class__": "int64"}]}
    attributes = schema["content"]
    attributes["content"] = {"aaa": other, **attributes["content"]}
    attributes["key_types"]["content"].insert(0, attributes["key_types"]["content"][0])


EDITS = {
    "another function": (_another_function, "numpy.save"),
    "another keyword": (_another_keyword, "accept_sparse"),
    "an aliased object": (_aliased_dtype, "stands for another"),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_the_checker_refuses_a_partial_other_than_hgbs_in_one_line(edit, model, tmp_path):
    change, said = EDITS[edit]
    with pytest.raises(ModelError, match=said) as e:
        read_model(str(_edited(model, tmp_path, change)), "sklearn")
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("edit", list(EDITS))
def test_treesens_refuses_a_partial_other_than_hgbs_in_one_line(edit, model, tmp_path):
    change, said = EDITS[edit]
    with pytest.raises(InputError, match=said) as e:
        treesens.load_model(str(_edited(model, tmp_path, change)))
    assert "\n" not in str(e.value)
