"""Certificates of HistGradientBoosting (.skops), CatBoost (.cbm) and ONNX models: the
independent checker reads each through its own library (verify/models_*.py), accepts
the box search's proof, rejects tampered copies, and never accepts a certificate for a
pair the library's own predict shows (the brute-force differential)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import treesens
from treesens.questions.certify import certify
from treesens.questions.query_build import make_query
from treesens.tests.conftest import treesens_here
from treesens.tests.oracle import binary_gap_reached
from treesens.tests.verify.tampering import drop_last_box, tampered
from treesens.verify import verify_file

FORMATS = ["hgb", "catboost", "onnx-boosting", "onnx-forest", "onnx-catboost"]
GAPS = (0.05, 0.1, 0.2, 0.3, 0.4)


def _data(seed: int, n_features: int = 3):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(400, n_features)).astype(np.float32)
    score = X[:, 0] + 0.4 * X[:, 1] * (X[:, 2] > 0.5) + 0.1 * rng.normal(size=len(X))
    return X, (score > 0.8).astype(int)


def write_model(kind: str, folder: Path, seed: int = 0, size: int = 4) -> Path:
    """A small binary model file of ``kind`` trained on ``_data(seed)``."""
    X, y = _data(seed)
    folder.mkdir(parents=True, exist_ok=True)
    if kind == "hgb":
        import skops.io
        from sklearn.ensemble import HistGradientBoostingClassifier

        est = HistGradientBoostingClassifier(max_iter=size, max_depth=3, learning_rate=0.5)
        path = folder / f"hgb{seed}.skops"
        skops.io.dump(est.fit(X, y), path)
        return path
    if kind in ("catboost", "onnx-catboost"):  # CatBoost's .cbm, or its own ONNX export
        import catboost

        est = catboost.CatBoostClassifier(
            iterations=size, depth=2, verbose=0, allow_writing_files=False, random_seed=seed
        )
        if kind == "onnx-catboost":
            path = folder / f"{kind}{seed}.onnx"
            est.fit(X, y).save_model(str(path), format="onnx")
            return path
        path = folder / f"catboost{seed}.cbm"
        est.fit(X, y).save_model(str(path))
        return path
    from skl2onnx import to_onnx
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier

    if kind == "onnx-boosting":
        est = GradientBoostingClassifier(n_estimators=size, max_depth=2, learning_rate=0.5)
    else:
        est = RandomForestClassifier(n_estimators=size, max_depth=3, random_state=seed)
    onx = to_onnx(est.fit(X, y), X[:1], options={"zipmap": False})
    path = folder / f"{kind}{seed}.onnx"
    path.write_bytes(onx.SerializeToString())
    return path


def certificates(path: Path, folder: Path):
    """Every (feature, gap, certificate) the box search proves and the checker accepts."""
    ens = treesens.load_model(str(path))
    for f in ens.feature_names:
        for gap in GAPS:
            out = folder / f"{path.stem}-{f}-{gap}.json"
            done = certify(ens, make_query([f], gap=gap), out, str(path), 60)
            if done.verified:
                yield f, gap, out


@pytest.fixture(scope="module", params=FORMATS)
def model(request, tmp_path_factory) -> Path:
    return write_model(request.param, tmp_path_factory.mktemp(request.param))


@pytest.fixture(scope="module")
def certificate(model: Path) -> Path:
    """The model's verified certificate with the most boxes."""
    found = list(certificates(model, model.parent))
    assert found, "no feature of the tiny model is certified at any gap"
    return max(
        (c for _, _, c in found), key=lambda c: len(json.loads(c.read_text())["parts"][0]["proof"])
    )


def _tampered(certificate: Path, change) -> Path:
    return tampered(certificate, certificate.parent, change)


def test_a_certificate_of_each_format_verifies_with_treesens_verify(certificate):
    p = treesens_here("verify", certificate)
    assert p.returncode == 0 and "VALID" in p.stdout, p.stdout + p.stderr


def test_the_certificate_names_the_models_library(model, certificate):
    library = json.loads(certificate.read_text())["model"]["library"]
    assert library == {".skops": "sklearn", ".cbm": "catboost", ".onnx": "onnx"}[model.suffix]


def test_a_certificate_with_a_box_removed_is_rejected(certificate):
    assert not verify_file(_tampered(certificate, drop_last_box)).valid


def test_a_certificate_with_a_bound_changed_is_rejected(certificate):
    def lower_a_bound(doc):
        step = next(s for s in doc["parts"][0]["proof"] if s[0] == "prune")
        step[2] -= 0.05

    verdict = verify_file(_tampered(certificate, lower_a_bound))
    assert not verdict.valid and "states" in verdict.message


def test_a_certificate_for_a_smaller_gap_is_rejected(certificate):
    def smaller_gap(doc):
        doc["question"]["claim"]["gap"] = 0.0

    assert not verify_file(_tampered(certificate, smaller_gap)).valid


def test_a_certificate_checked_against_another_model_file_is_rejected(model, certificate):
    other = write_model(_kind(model), model.parent / "other", seed=1)
    verdict = verify_file(certificate, str(other))
    assert not verdict.valid and "not the model" in verdict.message


def test_a_certificate_rewritten_to_name_another_model_is_rejected(model, certificate):
    """The other model's file and hash, the proof of the first: its bounds are not the
    other model's."""
    import hashlib

    other = write_model(_kind(model), model.parent / "other", seed=1, size=6)

    def name_other(doc):
        doc["model"]["file"] = str(other)
        doc["model"]["sha256"] = hashlib.sha256(other.read_bytes()).hexdigest()

    assert not verify_file(_tampered(certificate, name_other)).valid


def _kind(model: Path) -> str:
    return next(k for k in FORMATS if model.stem.startswith(k))


@pytest.mark.parametrize("kind", FORMATS)
def test_no_verified_certificate_of_a_tiny_model_has_a_pair_its_library_predicts(kind, tmp_path):
    """The brute-force differential: on tiny models of each format, for every feature
    and gap the checker accepts a certificate for, the library's own predict over one
    point per threshold cell finds no pair meeting the gap."""
    checked = 0
    for seed in (2, 3):
        path = write_model(kind, tmp_path, seed=seed, size=3)
        ens = treesens.load_model(str(path))
        for feature, gap, _ in certificates(path, tmp_path):
            assert not binary_gap_reached(ens, feature, gap)
            checked += 1
    assert checked > 0


def test_the_checker_refuses_a_catboost_categorical_feature_whose_categories_are_unnamed(
    tmp_path,
):
    import catboost
    import pandas as pd

    from treesens.verify.models import ModelError, read_model

    X, y = _data(0)
    df = pd.DataFrame({"x": X[:, 0], "colour": np.where(X[:, 1] > 0.5, "red", "blue")})
    est = catboost.CatBoostClassifier(iterations=3, depth=2, verbose=0, allow_writing_files=False)
    path = tmp_path / "categorical.cbm"
    est.fit(df, y, cat_features=["colour"]).save_model(str(path))
    with pytest.raises(ModelError, match="'colour': the certificate's domain names no") as e:
        read_model(str(path), "catboost")
    assert "\n" not in str(e.value)


def _onnxmltools_xgboost(folder: Path, objective: str) -> Path:
    """An XGBoost model of ``objective`` through onnxmltools (one input [N, 3])."""
    import onnxmltools
    import xgboost
    from onnxmltools.convert.common.data_types import FloatTensorType

    X, y = _data(0)
    if objective == "multi:softprob":
        est = xgboost.XGBClassifier(n_estimators=3, max_depth=2, learning_rate=0.8)
        est.fit(X, y + (X[:, 2] > 0.7))
    else:
        est = xgboost.XGBRegressor(n_estimators=3, max_depth=2, objective=objective)
        est.fit(X, 1.0 + X[:, 0] + y)
    onx = onnxmltools.convert_xgboost(est, initial_types=[("input", FloatTensorType([None, 3]))])
    path = folder / f"{objective.replace(':', '-')}.onnx"
    path.write_bytes(onx.SerializeToString())
    return path


@pytest.mark.parametrize("objective", ["multi:softprob", "reg:squarederror"])
def test_an_onnxmltools_xgboost_model_is_certified_and_verified(objective, tmp_path):
    path = _onnxmltools_xgboost(tmp_path, objective)
    ens = treesens.load_model(str(path))
    if objective.startswith("multi"):
        q = make_query(["f0"], gap=1e5, classes=("any", "any"))
    else:
        q = make_query(["f0"], delta=10.0, direction="either")
    done = certify(ens, q, tmp_path / "c.json", path, 60)
    assert done.verified, done.message


def test_the_checker_refuses_an_onnx_regressor_with_an_exp_after_its_trees(tmp_path):
    """onnxmltools writes XGBoost's reg:gamma as a TreeEnsembleRegressor, then Exp and Mul:
    the checker reads one tree operator with nothing computing on its scores."""
    from treesens.verify.models import ModelError, read_model

    path = _onnxmltools_xgboost(tmp_path, "reg:gamma")
    with pytest.raises(ModelError, match="the checker reads a graph of one TreeEnsemble"):
        read_model(str(path), "onnx")


def test_a_catboost_model_given_as_json_gets_no_certificate_and_says_to_use_the_cbm(tmp_path):
    import catboost

    X, y = _data(0)
    est = catboost.CatBoostClassifier(iterations=3, depth=2, verbose=0, allow_writing_files=False)
    path = tmp_path / "model.json"
    est.fit(X, y).save_model(str(path), format="json")
    ens = treesens.load_model(str(path))
    done = certify(ens, make_query([ens.feature_names[2]], gap=0.4), tmp_path / "c", path, 60)
    assert not done.written and ".cbm file" in done.message


@pytest.mark.parametrize("kind", ["catboost", "onnx-boosting"])
def test_cli_check_writes_a_certificate_that_verify_accepts(kind, tmp_path):
    path = write_model(kind, tmp_path)
    feature, gap, _ = next(certificates(path, tmp_path))
    out = tmp_path / "cli.json"
    p = treesens_here("check", path, "--vary", feature, "--gap", str(gap), "--certificate", out)
    assert p.returncode == 0 and "certified: " in p.stdout, p.stdout + p.stderr
    assert treesens_here("verify", out).returncode == 0


def _columns_onnx(folder: Path) -> Path:
    """A Pipeline of a passthrough ColumnTransformer and gradient boosting over a
    DataFrame's columns a, b, c, written by skl2onnx: a Concat of three inputs [N, 1]."""
    import pandas as pd
    from skl2onnx import to_onnx
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.pipeline import Pipeline

    X, y = _data(0)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    ct = ColumnTransformer([("columns", "passthrough", ["a", "b", "c"])])
    gb = GradientBoostingClassifier(n_estimators=3, max_depth=2, learning_rate=0.5)
    pipe = Pipeline([("columns", ct), ("model", gb)]).fit(df, y)
    path = folder / "columns.onnx"
    path.write_bytes(to_onnx(pipe, df[:1], options={"zipmap": False}).SerializeToString())
    return path


def test_an_onnx_graph_joining_named_inputs_is_certified_with_their_names(tmp_path):
    path = _columns_onnx(tmp_path)
    feature, _, certificate = next(certificates(path, tmp_path))
    assert json.loads(certificate.read_text())["question"]["features"] == ["a", "b", "c"]
    assert verify_file(certificate).valid


def test_an_onnx_graph_the_checker_does_not_read_gets_no_certificate_and_says_why(tmp_path):
    """An input the trees do not read, beside the Concat of those they do: treesens reads
    the graph, the checker (one input, or a Concat of all) does not, and certify says so
    before any search."""
    import onnx

    graph = onnx.load_model(str(_columns_onnx(tmp_path)))
    graph.graph.input.append(
        onnx.helper.make_tensor_value_info("unused", onnx.TensorProto.FLOAT, [None, 1])
    )
    other = tmp_path / "extra-input.onnx"
    other.write_bytes(graph.SerializeToString())
    ens = treesens.load_model(str(other))
    done = certify(ens, make_query(["c"], gap=0.4), tmp_path / "c.json", other, 60)
    assert not done.written and "the checker does not read this model" in done.message


def test_a_catboost_poisson_regressors_change_is_certified_by_link_steps(tmp_path):
    """CatBoost's Poisson predicts exp(raw): its boxes are ``link`` steps, which the
    checker reads from the .cbm (its loss names the link)."""
    import catboost

    X, y = _data(0)
    est = catboost.CatBoostRegressor(
        iterations=3, depth=2, verbose=0, allow_writing_files=False, loss_function="Poisson"
    )
    path = tmp_path / "poisson.cbm"
    est.fit(X, y + 1).save_model(str(path))
    ens = treesens.load_model(str(path))
    done = certify(
        ens, make_query([ens.feature_names[2]], delta=100.0), tmp_path / "c.json", path, 60
    )
    assert done.verified, done.message
    steps = json.loads((tmp_path / "c.json").read_text())["parts"][0]["proof"]
    assert {s[0] for s in steps} <= {"split", "link"}


def test_a_lightgbm_random_forest_max_gap_certificate_is_verified(tmp_path):
    """LightGBM's random-forest mode averages its trees: the checker reads the mean, so
    the box search's proof of the upper bound is accepted."""
    import lightgbm

    X, y = _data(0)
    est = lightgbm.LGBMClassifier(
        boosting_type="rf", n_estimators=5, num_leaves=4, subsample=0.8, subsample_freq=1
    )
    path = tmp_path / "forest.txt"
    est.set_params(verbose=-1).fit(X, y).booster_.save_model(path)
    r = treesens.max_gap(str(path), vary=["Column_0"], certificate=str(tmp_path / "c.json"))
    assert r.proof.checked, r.proof.why_not
