"""Certificates of scikit-learn pipelines (per-column scalers and one-hot encoders before
a tree model): the certificate states each column's input, map and boundaries (an encoded
column: its input's categories and its image of each), the checker confirms them with the
pipeline's own transform, and a tampered certificate or pipeline is rejected."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

import treesens
from treesens.questions.certify import certify
from treesens.questions.query_build import make_query
from treesens.tests.conftest import treesens_here
from treesens.tests.oracle import binary_gap_reached, cell_grid
from treesens.tests.verify.tampering import drop_last_box, tampered
from treesens.verify import verify_file

NAMES = ["age", "income", "hours"]


def _data(seed: int):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 10, size=(400, 3))
    y = (X[:, 0] + 0.4 * X[:, 1] * (X[:, 2] > 5) + rng.normal(size=400) > 8).astype(int)
    return X, y


def write_pipeline(folder: Path, seed: int = 0, mean_shift: float = 0.0, size: int = 4) -> Path:
    """A Pipeline over a DataFrame: StandardScaler on age and income, MinMaxScaler on
    hours, then a GradientBoostingClassifier; ``mean_shift`` moves the fitted mean."""
    import pandas as pd
    import skops.io
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import MinMaxScaler, StandardScaler

    X, y = _data(seed)
    ct = ColumnTransformer(
        [("scaled", StandardScaler(), ["age", "income"]), ("ranged", MinMaxScaler(), ["hours"])]
    )
    gb = GradientBoostingClassifier(n_estimators=size, max_depth=2, learning_rate=0.5)
    pipe = Pipeline([("columns", ct), ("model", gb)]).fit(pd.DataFrame(X, columns=NAMES), y)
    pipe.named_steps["columns"].named_transformers_["scaled"].mean_ += mean_shift
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"pipeline{seed}-{mean_shift}.skops"
    skops.io.dump(pipe, path)
    return path


def write_forest_pipeline(folder: Path, seed: int) -> Path:
    """StandardScaler on a NumPy array, then a RandomForestClassifier."""
    import skops.io
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = _data(seed)
    forest = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=seed)
    path = folder / f"forest{seed}.skops"
    skops.io.dump(make_pipeline(StandardScaler(), forest).fit(X, y), path)
    return path


def certificates(path: Path, folder: Path, gaps=(0.2, 0.3, 0.4)):
    ens = treesens.load_model(str(path))
    for f in ens.feature_names:
        for gap in gaps:
            out = folder / f"{path.stem}-{f}-{gap}.json"
            if certify(ens, make_query([f], gap=gap), out, str(path), 60).verified:
                yield f, gap, out


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    return write_pipeline(tmp_path_factory.mktemp("pipeline"))


@pytest.fixture(scope="module")
def certificate(model: Path) -> Path:
    found = [c for _, _, c in certificates(model, model.parent)]
    assert found, "no feature of the pipeline is certified at any gap"
    return max(found, key=lambda c: len(json.loads(c.read_text())["parts"][0]["proof"]))


def _tampered(certificate: Path, change) -> Path:
    return tampered(certificate, certificate.parent, change)


def _scaled_column(doc) -> dict:
    return next(c for c in doc["maps"] if c["input"] == 0 and c["boundaries"])


def test_a_pipeline_certificate_verifies_with_treesens_verify(certificate):
    p = treesens_here("verify", certificate)
    assert p.returncode == 0 and "VALID" in p.stdout, p.stdout + p.stderr


def test_the_certificate_states_a_scalers_map_as_numbers(certificate):
    shift, scale = _scaled_column(json.loads(certificate.read_text()))["map"]
    X, _ = _data(0)
    assert shift == pytest.approx(X[:, 0].mean()) and scale == pytest.approx(X[:, 0].std())


def test_a_certificate_with_a_changed_scaler_mean_is_rejected(certificate):
    def shift_the_mean(doc):
        _scaled_column(doc)["map"][0] += 0.5

    verdict = verify_file(_tampered(certificate, shift_the_mean))
    assert not verdict.valid and "stated map" in verdict.message


def test_a_certificate_with_a_boundary_moved_is_rejected(certificate):
    def move_a_boundary(doc):
        _scaled_column(doc)["boundaries"][0][1] += 0.25

    verdict = verify_file(_tampered(certificate, move_a_boundary))
    assert not verdict.valid and "boundary" in verdict.message


def test_a_certificate_naming_the_wrong_input_for_a_column_is_rejected(certificate):
    def other_input(doc):
        _scaled_column(doc)["input"] = 2

    assert not verify_file(_tampered(certificate, other_input)).valid


def test_a_pipeline_certificate_stating_an_input_may_be_missing_is_rejected(certificate):
    """The final model's NaN sides are those of its columns, not of the pipeline's inputs
    (an imputer fills NaN in): the checker reads no NaN of a pipeline."""

    def may_be_missing(doc):
        doc["version"] = 3
        for d in doc["question"]["domain"]:
            d["missing"] = True

    verdict = verify_file(_tampered(certificate, may_be_missing))
    assert not verdict.valid and "missing values" in verdict.message


def test_a_pipeline_certificate_with_a_box_removed_is_rejected(certificate):
    assert not verify_file(_tampered(certificate, drop_last_box)).valid


def test_a_pipeline_certificate_for_a_smaller_gap_is_rejected(certificate):
    def smaller_gap(doc):
        doc["question"]["claim"]["gap"] = 0.0

    assert not verify_file(_tampered(certificate, smaller_gap)).valid


def _naming(certificate: Path, other: Path) -> Path:
    def name_other(doc):
        doc["model"]["file"] = str(other)
        doc["model"]["sha256"] = hashlib.sha256(other.read_bytes()).hexdigest()

    return _tampered(certificate, name_other)


def test_a_pipeline_whose_scaler_mean_changed_is_rejected(model, certificate):
    """The same pipeline with its fitted mean moved, the certificate's hash updated: the
    transform no longer confirms the stated map."""
    other = write_pipeline(model.parent / "shifted", mean_shift=0.5)
    verdict = verify_file(_naming(certificate, other))
    assert not verdict.valid and "transform does not confirm" in verdict.message


def test_a_pipeline_with_a_step_changed_is_rejected(model, certificate):
    """The scalers swapped for a OneHotEncoder (the checker reads per-column scalers)."""
    import pandas as pd
    import skops.io
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder

    pipe = skops.io.load(model, trusted=skops.io.get_untrusted_types(file=model))
    X, y = _data(0)
    ct = ColumnTransformer([("onehot", OneHotEncoder(), ["age"])], remainder="passthrough")
    changed = Pipeline([("columns", ct), ("model", pipe.named_steps["model"])])
    changed.fit(pd.DataFrame(np.round(X), columns=NAMES), y)
    other = model.parent / "changed.skops"
    skops.io.dump(changed, other)
    assert not verify_file(_naming(certificate, other)).valid


def write_onehot_pipeline(folder: Path, task: str = "binary") -> tuple[Path, object]:
    """A OneHotEncoder on colour (red, blue, green), a StandardScaler on age, size passed
    through, then a GradientBoostingClassifier (``task`` "multiclass": of three classes;
    "regressor": a GradientBoostingRegressor of the score); and the rows it was fitted on."""
    import pandas as pd
    import skops.io
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "age": rng.uniform(18, 80, 300),
            "colour": rng.choice(["red", "blue", "green"], 300),
            "size": rng.uniform(0, 1, 300),
        }
    )
    score = df.age + 6 * (df.colour == "red") + 30 * df["size"] + rng.normal(0, 3, 300)
    y = (score > 65).astype(int)
    if task != "binary":
        y = score if task == "regressor" else np.digitize(score, [55, 75])
    ct = ColumnTransformer(
        [("onehot", OneHotEncoder(), ["colour"]), ("scaled", StandardScaler(), ["age"])],
        remainder="passthrough",
    )
    kind = GradientBoostingRegressor if task == "regressor" else GradientBoostingClassifier
    gb = kind(n_estimators=6, max_depth=2, learning_rate=0.5, random_state=0)
    pipe = Pipeline([("columns", ct), ("model", gb)]).fit(df, y)
    path = folder / ("onehot.skops" if task == "binary" else f"onehot-{task}.skops")
    skops.io.dump(pipe, path)
    return path, df.assign(label=y)


@pytest.fixture(scope="module")
def onehot(tmp_path_factory) -> tuple[Path, Path]:
    """The one-hot pipeline and a max-gap certificate of its colour."""
    folder = tmp_path_factory.mktemp("onehot")
    path, _ = write_onehot_pipeline(folder)
    out = folder / "colour.max-gap.json"
    r = treesens.max_gap(str(path), vary=["colour"], certificate=out)
    assert r.proof.checked, r.proof.why_not
    return path, out


def test_a_one_hot_certificate_states_each_categorys_image(onehot):
    doc = json.loads(onehot[1].read_text())
    encoded = [m for m in doc["maps"] if "values" in m]
    assert [m["values"] for m in encoded] == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    assert all(m["categories"] == ["blue", "green", "red"] for m in encoded)
    assert doc["question"]["domain"][1]["codes"] == [0, 1, 2]


def test_every_insensitive_answer_on_a_one_hot_pipeline_is_certified(onehot, tmp_path):
    checked = 0
    for vary in ("colour", "age", "size"):
        for gap in (0.02, 0.1, 0.4):
            out = tmp_path / f"{vary}-{gap}.json"
            r = treesens.check(str(onehot[0]), vary=[vary], gap=gap, certificate=out)
            if r.status == "insensitive":
                assert r.proof.checked and verify_file(out).valid, (vary, gap, r.proof)
                checked += 1
    assert checked > 0


def test_a_one_hot_certificate_with_an_image_changed_is_rejected(onehot, tmp_path):
    def swap_images(doc):
        m = next(m for m in doc["maps"] if "values" in m)
        m["values"] = m["values"][::-1]

    verdict = verify_file(tampered(onehot[1], tmp_path, swap_images), model_path=str(onehot[0]))
    assert not verdict.valid and "does not confirm" in verdict.message


def test_a_one_hot_certificate_with_a_category_renamed_is_rejected(onehot, tmp_path):
    def rename(doc):
        for m in doc["maps"]:
            if "values" in m:
                m["categories"] = ["blue", "green", "purple"]

    assert not verify_file(tampered(onehot[1], tmp_path, rename), model_path=str(onehot[0])).valid


def test_a_one_hot_certificate_stating_an_encoded_column_as_numeric_is_rejected(onehot, tmp_path):
    """An encoder's column restated as a number with boundaries (its map is no monotone
    map of a number): the checker finds the encoder itself and rejects it."""

    def as_numeric(doc):
        for j, m in enumerate(doc["maps"]):
            if "values" in m:
                doc["maps"][j] = {"input": m["input"], "boundaries": [[0.5, "inf"]]}

    verdict = verify_file(tampered(onehot[1], tmp_path, as_numeric), model_path=str(onehot[0]))
    assert not verdict.valid and "encoded columns" in verdict.message


def test_a_one_hot_certificate_with_a_box_removed_is_rejected(onehot, tmp_path):
    changed = tampered(onehot[1], tmp_path, drop_last_box)
    assert not verify_file(changed, model_path=str(onehot[0])).valid


def test_a_report_on_a_one_hot_pipeline_certifies_its_insensitive_protected_features(tmp_path):
    from treesens.questions.report import report
    from treesens.views.report_html import render

    path, rows = write_onehot_pipeline(tmp_path)
    data = tmp_path / "rows.csv"
    rows.to_csv(data, index=False)
    rep = report(
        str(path), str(data), label="label", features=["colour"], protected=["colour"],
        gap=0.1, budget=120, certificates=tmp_path / "certs", progress=False,
    )  # fmt: skip
    (finding,) = rep.protected
    check = finding.check
    assert check.status == "insensitive" and check.proof.checked, check.proof
    assert verify_file(check.proof.certificate).valid
    (ranked,) = rep.ranking
    assert ranked.proof.checked, ranked.proof
    assert rep.missing_certificates == []
    assert "verified" in render(rep)


def _largest_change(ens, vary: str) -> float:
    """The brute force of a max gap, by the pipeline's own predict over one point per
    threshold cell (codes for colour): a regressor's largest change; a multiclass
    model's largest ratio r with x1 decided c1 and x2 decided c2 != c1, each by r."""
    X, ns, nv = cell_grid(ens, [vary])
    if ens.is_regressor:
        f = ens.replayer.predict(X).reshape(ns, nv)
        return float((f.max(axis=1) - f.min(axis=1)).max())
    p = np.sort(ens.replayer.predict_proba(X), axis=1)
    top = ens.replayer.predict_proba(X).argmax(axis=1).reshape(ns, nv)
    ratio = (p[:, -1] / p[:, -2]).reshape(ns, nv)
    best = 1.0
    for s in range(ns):
        by_class = {c: ratio[s][top[s] == c].max() for c in set(top[s].tolist())}
        if len(by_class) > 1:
            best = max(best, sorted(by_class.values())[-2])
    return best


def _classes(task: str) -> dict:
    return {"classes": ("any", "any")} if task == "multiclass" else {}


@pytest.mark.parametrize("task", ["multiclass", "regressor"])
def test_a_one_hot_pipelines_multiclass_or_regressor_max_gap_bound_is_certified(task, tmp_path):
    """A one-hot pipeline ending in a multiclass classifier or a regressor: the max gap
    of colour (codes) gets a version-3 certificate treesens verify accepts, whose bound
    lies above what the pipeline's own predict reaches."""
    path, _ = write_onehot_pipeline(tmp_path, task)
    out = tmp_path / "colour.max-gap.json"
    r = treesens.max_gap(str(path), vary=["colour"], certificate=out, **_classes(task))
    assert r.proof.checked and verify_file(out).valid, r.proof.why_not
    doc = json.loads(out.read_text())
    assert doc["version"] == 3 and doc["question"]["domain"][1]["codes"] == [0, 1, 2]
    assert _largest_change(treesens.load_model(str(path)), "colour") < r.proof.bound


@pytest.mark.parametrize("task", ["multiclass", "regressor"])
def test_a_one_hot_multiclass_or_regressor_certificate_with_images_swapped_is_rejected(
    task, tmp_path
):
    path, _ = write_onehot_pipeline(tmp_path, task)
    out = tmp_path / "colour.max-gap.json"
    r = treesens.max_gap(str(path), vary=["colour"], certificate=out, **_classes(task))
    assert r.proof.checked, r.proof.why_not

    def swap_images(doc):
        m = next(m for m in doc["maps"] if "values" in m)
        m["values"] = m["values"][::-1]

    assert not verify_file(tampered(out, tmp_path, swap_images), model_path=str(path)).valid


def test_a_categorical_split_of_a_pipelines_own_model_is_refused():
    """The final model's own categorical node (a HistGradientBoosting with categorical
    features) tests its encoder's codes, not a boundary on the input: never restated."""
    from treesens.verify.models import Model, ModelError, Tree
    from treesens.verify.models_pipeline import _restated

    tree = Tree(
        feature=[0, -1, -1], threshold=[0.0] * 3, left=[1, -1, -1], right=[2, -1, -1],
        value=[0.0, 1.0, -1.0], cats=[frozenset({1}), None, None],
    )  # fmt: skip
    inner = Model([tree], 0.0, "<=", ["c"], 1.0)
    with pytest.raises(ModelError, match="categorical split of the pipeline's model"):
        _restated(tree, [0], {(0, 0.0): 0.5}, {}, inner)


@pytest.mark.parametrize("kind", ["scalers", "forest"])
def test_no_verified_pipeline_certificate_has_a_pair_the_pipeline_predicts(kind, tmp_path):
    """The brute-force differential: the pipeline's own predict_proba over one point per
    threshold cell (in the inputs' units) finds no pair meeting a certified gap."""
    checked = 0
    for seed in (2,):
        if kind == "scalers":
            path = write_pipeline(tmp_path, seed=seed, size=3)
        else:
            path = write_forest_pipeline(tmp_path, seed)
        ens = treesens.load_model(str(path))
        for feature, gap, _ in certificates(path, tmp_path):
            assert not binary_gap_reached(ens, feature, gap)
            checked += 1
    assert checked > 0


def test_an_infinite_boundary_on_a_decreasing_map_is_rejected(tmp_path):
    """A scaler tampered to run backwards (a negative scale) holds the test at the largest
    double but not at the smallest: "holds everywhere" is not confirmed."""
    import skops.io
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from treesens.verify.models import ModelError
    from treesens.verify.models_pipeline import read_pipeline

    X, y = _data(0)
    pipe = make_pipeline(StandardScaler(), GradientBoostingClassifier(n_estimators=2))
    pipe.fit(X[:, :1], y)
    pipe[0].scale_ = -pipe[0].scale_
    path = tmp_path / "backwards.skops"
    skops.io.dump(pipe, path)
    tree = pipe[-1].estimators_[0, 0].tree_
    thresholds = sorted({float(t) for t in tree.threshold[tree.feature >= 0]})
    maps = [{"input": 0, "boundaries": [[t, "inf"] for t in thresholds]}]
    with pytest.raises(ModelError, match="does not confirm"):
        read_pipeline(str(path), maps)


def test_a_report_on_a_pipeline_certifies_its_max_gaps_and_says_so_on_the_page(model, tmp_path):
    import pandas as pd

    from treesens.questions.report import report
    from treesens.views.report_html import render

    X, y = _data(0)
    rows = tmp_path / "rows.csv"
    pd.DataFrame(X, columns=NAMES).assign(label=y).to_csv(rows, index=False)
    rep = report(
        str(model), str(rows), label="label", features=["hours"], budget=60,
        certificates=tmp_path / "certs", progress=False,
    )  # fmt: skip
    (ranked,) = rep.ranking
    assert ranked.proof.checked, ranked.proof
    assert verify_file(ranked.proof.certificate).valid
    assert rep.missing_certificates == []
    assert f"certified: no pair reaches a gap of {ranked.proof.bound:g}" in render(rep)


def test_a_pipeline_ending_in_a_poisson_regressors_change_is_certified_and_verified(tmp_path):
    """Its prediction is exp(raw): its boxes are ``link`` steps over the pipeline's
    inputs, the final model's link read from its loss."""
    import skops.io
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = _data(0)
    hgb = HistGradientBoostingRegressor(max_iter=3, max_depth=2, loss="poisson")
    path = tmp_path / "poisson.skops"
    skops.io.dump(make_pipeline(StandardScaler(), hgb).fit(X, 1.0 + X[:, 0] + y), path)
    ens = treesens.load_model(str(path))
    q = make_query([ens.feature_names[2]], delta=100.0)
    done = certify(ens, q, tmp_path / "c.json", path, 60)
    assert done.verified, done.message


def test_a_category_learned_from_missing_values_leaves_the_answer_uncertified(tmp_path):
    """OneHotEncoder fitted on a column with NaN has the category nan, which the
    certificate's JSON does not state: the proof is kept, not certified, and says why."""
    import pandas as pd
    import skops.io
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder
    from sklearn.tree import DecisionTreeClassifier

    X, y = _data(0)
    df = pd.DataFrame(X, columns=NAMES).assign(site=np.array(["a", "b", None] * 134)[:400])
    ct = ColumnTransformer([("site", OneHotEncoder(), ["site"])], remainder="passthrough")
    path = tmp_path / "missing-site.skops"
    skops.io.dump(
        make_pipeline(ct, DecisionTreeClassifier(max_depth=3, random_state=0)).fit(df, y), path
    )
    res = treesens.check(str(path), vary="site", gap=0.45, certificate=str(tmp_path / "c.json"))
    assert res.status == "insensitive" and not res.proof.checked
    assert "learned from missing values" in res.proof.why_not


# a Pipeline with no preprocessing: the model alone, or behind a 'passthrough' step
NO_PREPROCESSING = {"model alone": [], "passthrough first": ["passthrough"]}


def _bare_certificate(tmp_path: Path, pre: list) -> Path:
    import pandas as pd
    import skops.io
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import Pipeline

    rng = np.random.default_rng(3)
    df = pd.DataFrame(rng.random((120, 2)), columns=["a", "b"])
    y = (df.a + 0.3 * df.b > 0.6).astype(int).to_numpy()
    forest = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0)
    steps = [*((f"s{i}", s) for i, s in enumerate(pre)), ("model", forest)]
    path = tmp_path / "bare.skops"
    skops.io.dump(Pipeline(steps).fit(df, y), path)
    out = tmp_path / "bare.json"
    assert treesens.check(str(path), ["b"], gap=0.4, certificate=out).proof.checked
    return out


@pytest.mark.parametrize("pre", NO_PREPROCESSING.values(), ids=NO_PREPROCESSING.keys())
def test_a_certificate_of_a_pipeline_without_preprocessing_verifies(pre, tmp_path):
    verdict = verify_file(_bare_certificate(tmp_path, pre))
    assert verdict.valid, verdict.message


@pytest.mark.parametrize("pre", NO_PREPROCESSING.values(), ids=NO_PREPROCESSING.keys())
def test_a_pipeline_without_preprocessing_whose_boundary_moved_is_rejected(pre, tmp_path):
    def move_a_boundary(doc):
        doc["maps"][1]["boundaries"][0][1] += 0.25

    certificate = _bare_certificate(tmp_path, pre)
    verdict = verify_file(tampered(certificate, tmp_path, move_a_boundary))
    assert not verdict.valid and "boundary" in verdict.message


def test_a_pipeline_whose_transform_fails_is_rejected_in_one_line(tmp_path):
    """The certificate renamed to the same forest behind a scaler whose fitted mean has
    three values for two columns: its transform raises, the verdict says so."""
    import skops.io
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    certificate = _bare_certificate(tmp_path, [])
    bare = tmp_path / "bare.skops"
    pipe = skops.io.load(bare, trusted=skops.io.get_untrusted_types(file=bare))
    scaler = StandardScaler().fit(np.zeros((3, 2)))
    scaler.mean_ = np.zeros(3)
    other = tmp_path / "broken.skops"
    skops.io.dump(Pipeline([("scale", scaler), ("model", pipe.steps[-1][1])]), other)
    verdict = verify_file(_naming(certificate, other))
    assert not verdict.valid and "transform fails" in verdict.message
    assert "\n" not in verdict.message
