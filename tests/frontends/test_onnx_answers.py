"""Questions about tiny ONNX models agree with brute force (every threshold cell enumerated
on the IR): sensitive just below the exact best gap (or threshold), with the witness
replayed by onnxruntime, and insensitive just above it; skl2onnx and onnxmltools models,
binary, multiclass and regression. ``check``, ``sweep`` and ``audit`` answer an ONNX file of
a scikit-learn RandomForest and of an XGBoost model on the command line with witnesses
onnxruntime replays."""

from __future__ import annotations

import json

import numpy as np
import pytest

import treesens
from treesens.compiler.ensemble import Ensemble
from treesens.questions.query_build import make_query
from treesens.tests.conftest import json_lines, treesens_here
from treesens.tests.frontends import onnx_models as om
from treesens.tests.oracle import (
    brute_force_best_above,
    brute_force_largest_change,
    brute_force_sensitive,
    cell_grid,
)

ort = pytest.importorskip("onnxruntime")
sk_ensemble = pytest.importorskip("sklearn.ensemble")
pytest.importorskip("skl2onnx")

NAMES = ["f0", "f1", "f2"]
OPTS = {"box_search": False, "heuristic": False, "timeout": 60}  # the solver answers
X, YB, Y3, YR = om.data(150)


def _tiny(kind: str) -> bytes:
    if kind == "forest":
        est = sk_ensemble.RandomForestClassifier(3, max_depth=2, random_state=0).fit(X, YB)
        return om.sklearn_onnx(est, X)
    if kind == "boosting-multiclass":
        gb = sk_ensemble.GradientBoostingClassifier(n_estimators=2, max_depth=2, random_state=0)
        return om.sklearn_onnx(gb.fit(X, Y3), X)
    if kind == "forest-regressor":
        est = sk_ensemble.RandomForestRegressor(3, max_depth=2, random_state=0).fit(X, YR)
        return om.sklearn_onnx(est, X)
    if kind == "catboost":  # CatBoost's own export: two opposite scores, LOGISTIC
        catboost = pytest.importorskip("catboost")
        est = catboost.CatBoostClassifier(iterations=3, depth=2, verbose=0, random_seed=0)
        return catboost_onnx(est.fit(X, YB))
    pytest.importorskip("onnxmltools")
    if kind.startswith("xgboost"):
        xgb = pytest.importorskip("xgboost")
        small = {"n_estimators": 3, "max_depth": 2, "nthread": 1}
        est = (
            xgb.XGBRegressor(**small) if kind == "xgboost-regressor" else xgb.XGBClassifier(**small)
        )
        return om.onnxmltools_model(est.fit(X, YR if kind == "xgboost-regressor" else YB), 3)
    lgb = pytest.importorskip("lightgbm")
    est = lgb.LGBMClassifier(n_estimators=3, num_leaves=4, verbose=-1, num_threads=1)
    return om.onnxmltools_model(est.fit(X, YB), 3)


def catboost_onnx(est) -> bytes:
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "cb.onnx"
        est.save_model(str(path), format="onnx")
        return path.read_bytes()


def _load(tmp_path, kind: str) -> tuple[Ensemble, bytes]:
    blob = _tiny(kind)
    return treesens.load_model(om.write(tmp_path, f"{kind}.onnx", blob)), blob


def onnxruntime_outputs(blob: bytes, row: dict) -> np.ndarray:
    """What onnxruntime itself computes for a witness (the probabilities, or the
    prediction), independently of treesens' replayer."""
    s = ort.InferenceSession(blob, providers=["CPUExecutionProvider"])
    x = np.array([[row[n] for n in NAMES]], dtype=np.float32)
    got = dict(zip((o.name for o in s.get_outputs()), s.run(None, {s.get_inputs()[0].name: x})))
    for value in got.values():
        if isinstance(value, list):  # a ZipMap's {label: probability}
            return np.array([value[0][k] for k in sorted(value[0])], dtype=np.float64)
        if value.dtype == np.float32:
            return value[0].astype(np.float64)
    raise AssertionError(f"no scores among {list(got)}")


def _replayed(blob: bytes, witness: dict, outputs: dict) -> None:
    for copy in ("x1", "x2"):
        lib = onnxruntime_outputs(blob, witness[copy])
        np.testing.assert_allclose(outputs[copy], lib, rtol=0, atol=1e-7)


def _best_gap(ens: Ensemble, vary: list[str]) -> float:
    """The largest g with a pair P(1) >= 0.5 + g, P(1) <= 0.5 - g equal outside ``vary``."""
    G, ns, nv = cell_grid(ens, vary)
    p = ens.proba(G)[:, 1].reshape(ns, nv)
    return float(np.minimum(p.max(axis=1) - 0.5, 0.5 - p.min(axis=1)).max())


@pytest.mark.parametrize("kind", ["forest", "xgboost", "lightgbm", "catboost"])
def test_binary_gap_agrees_with_brute_force_either_side_of_the_best(tmp_path, kind):
    ens, blob = _load(tmp_path, kind)
    vary = ["f0"]
    best = _best_gap(ens, vary)
    assert 0.0 < best < 0.5
    below, above = best - 1e-4, best + 1e-4
    assert brute_force_sensitive(ens, make_query(vary, gap=below))
    assert not brute_force_sensitive(ens, make_query(vary, gap=above))
    r = treesens.check(ens, vary, gap=below, **OPTS)
    assert (r.status, r.validated) == ("sensitive", True)
    _replayed(blob, r.witness, r.outputs)
    assert treesens.check(ens, vary, gap=above, **OPTS).status == "insensitive"


@pytest.mark.parametrize("kind", ["forest", "xgboost", "catboost"])
def test_max_gap_is_the_brute_force_best_with_a_replayed_pair(tmp_path, kind):
    ens, blob = _load(tmp_path, kind)
    r = treesens.max_gap(ens, vary=["f0"], timeout=60)
    best = _best_gap(ens, ["f0"])
    assert r.max_gap["proven"]
    # the lower bound is onnxruntime's gap, computed in float32
    assert r.max_gap["lower"] <= best + 1e-6 and best <= r.max_gap["upper"] + 1e-9
    assert r.max_gap["lower"] >= best - 1e-6
    assert r.validated
    _replayed(blob, r.witness, r.outputs)


@pytest.mark.parametrize("kind", ["xgboost", "lightgbm"])
def test_a_margin_gap_agrees_with_brute_force_and_onnxruntime_raw_scores(tmp_path, kind):
    ens, blob = _load(tmp_path, kind)
    G, ns, nv = cell_grid(ens, ["f0"])
    raw = ens.raw(G)[:, 0].reshape(ns, nv)
    best = float(np.minimum(raw.max(axis=1), -raw.min(axis=1)).max())
    assert best > 0
    below, above = best - 1e-4, best + 1e-4
    assert brute_force_sensitive(ens, make_query(["f0"], margin_gap=below))
    assert not brute_force_sensitive(ens, make_query(["f0"], margin_gap=above))
    r = treesens.check(ens, ["f0"], margin_gap=below, **OPTS)
    assert (r.status, r.validated) == ("sensitive", True)
    X2 = np.array([[r.witness[c][n] for n in NAMES] for c in ("x1", "x2")])
    lib_raw = ens.replayer.predict_raw(X2)[:, 0]  # onnxruntime with post_transform NONE
    assert lib_raw[0] >= below and lib_raw[1] <= -below
    assert treesens.check(ens, ["f0"], margin_gap=above, **OPTS).status == "insensitive"


def test_multiclass_answers_agree_with_brute_force_over_gaps(tmp_path):
    ens, blob = _load(tmp_path, "boosting-multiclass")
    seen = set()
    for vary, classes in (("f0", ("0", "any")), ("f0", ("2", "0"))):
        for gap in (1.0, 1.5, 2.0, 3.0, 5.0, 10.0):
            expected = brute_force_sensitive(ens, make_query([vary], gap=gap, classes=classes))
            r = treesens.check(ens, [vary], gap=gap, classes=classes, **OPTS)
            assert r.status == ("sensitive" if expected else "insensitive"), (vary, gap)
            if expected:
                assert r.validated
                _replayed(blob, r.witness, r.outputs)
            seen.add(expected)
    assert seen == {True, False}  # the gaps straddle the best


_best_above = brute_force_best_above


@pytest.mark.parametrize("kind", ["forest-regressor", "xgboost-regressor"])
def test_regressor_threshold_form_agrees_with_brute_force_either_side_of_the_best(tmp_path, kind):
    ens, blob = _load(tmp_path, kind)
    b, best = _best_above(ens, ["f0"])
    eps = 1e-4 * max(1.0, abs(best))
    r = treesens.check(ens, ["f0"], above=best - eps, below=b, **OPTS)
    assert (r.status, r.validated) == ("sensitive", True)
    _replayed(blob, r.witness, r.outputs)
    assert r.outputs["x1"][0] >= best - eps and r.outputs["x2"][0] <= b
    above = treesens.check(ens, ["f0"], above=best + eps, below=b, **OPTS)
    assert above.status == "insensitive"


@pytest.mark.parametrize("kind", ["forest-regressor", "xgboost-regressor"])
def test_regressor_delta_agrees_with_brute_force_either_side_of_the_largest_change(tmp_path, kind):
    ens, blob = _load(tmp_path, kind)
    best = brute_force_largest_change(ens, ["f0"])
    eps = 1e-4 * max(1.0, best)
    r = treesens.check(ens, ["f0"], delta=best - eps, **OPTS)
    assert (r.status, r.validated) == ("sensitive", True)
    _replayed(blob, r.witness, r.outputs)
    assert abs(r.outputs["x1"][0] - r.outputs["x2"][0]) >= best - eps
    assert treesens.check(ens, ["f0"], delta=best + eps, **OPTS).status == "insensitive"


@pytest.mark.parametrize("kind", ["forest-regressor", "xgboost-regressor"])
def test_regressor_max_gap_is_the_brute_force_largest_change_with_a_replayed_pair(tmp_path, kind):
    ens, blob = _load(tmp_path, kind)
    r = treesens.max_gap(ens, vary=["f0"], timeout=60)
    best = brute_force_largest_change(ens, ["f0"])
    assert r.max_gap["proven"]
    # the lower bound is onnxruntime's change, computed in float32
    assert abs(r.max_gap["lower"] - best) <= 1e-5 * max(1.0, best)
    assert best <= r.max_gap["upper"] + 1e-9
    _replayed(blob, r.witness, r.outputs)


# ---- the command line on ONNX files -------------------------------------------------------


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("onnx")
    for kind in ("forest", "xgboost", "forest-regressor"):
        om.write(folder, f"{kind}.onnx", _tiny(kind))
    Xr, yr, _, _ = om.data(8, seed=3)
    rows = ["f0,f1,f2,label"] + [
        ",".join(map(repr, map(float, x))) + f",{y}" for x, y in zip(Xr, yr)
    ]
    (folder / "rows.csv").write_text("\n".join(rows) + "\n")
    return folder


@pytest.mark.parametrize("model", ["forest.onnx", "xgboost.onnx"])
def test_cli_check_answers_an_onnx_file_with_a_replayed_witness(saved, model):
    p = treesens_here("check", saved / model, "--vary", "f0", "--gap", "0.05", "--json")
    assert p.returncode == 0, p.stderr
    line = json.loads(p.stdout)
    assert line["status"] == "sensitive" and line["validated"]
    _replayed((saved / model).read_bytes(), line["witness"], line["outputs"])


@pytest.mark.parametrize("model", ["forest.onnx", "xgboost.onnx"])
def test_cli_sweep_answers_an_onnx_file_with_replayed_witnesses(saved, model):
    p = treesens_here("sweep", saved / model, "--gap", "0.05", "--json")
    assert p.returncode == 0, p.stderr
    lines = json_lines(p.stdout)
    assert [d["query"] for d in lines] == NAMES
    assert {d["query"]: d["status"] for d in lines}["f0"] == "sensitive"
    for line in lines:
        if line["status"] == "sensitive":
            assert line["validated"]
            _replayed((saved / model).read_bytes(), line["witness"], line["outputs"])


@pytest.mark.parametrize("model", ["forest.onnx", "xgboost.onnx"])
def test_cli_audit_answers_an_onnx_file_row_by_row(saved, model):
    args = ("--data", saved / "rows.csv", "--vary", "f0", "--gap", "0.05", "--json")
    p = treesens_here("audit", saved / model, *args)
    assert p.returncode == 0, p.stderr
    lines = json_lines(p.stdout)
    assert [d["row"] for d in lines] == list(range(8))
    assert any(d["status"] == "sensitive" for d in lines)
    for line in lines:
        if line["status"] == "sensitive":
            assert line["validated"]
            _replayed((saved / model).read_bytes(), line["witness"], line["outputs"])


@pytest.mark.parametrize("command", ["check", "sweep", "audit"])
def test_cli_delta_answers_an_onnx_regressor_with_replayed_witnesses(saved, command):
    args = {"check": ("--vary", "f0"), "sweep": (), "audit": ("--vary", "f0", "--data")}
    extra = (saved / "rows.csv",) if command == "audit" else ()
    model = saved / "forest-regressor.onnx"
    p = treesens_here(command, model, *args[command], *extra, "--delta", "0.3", "--json")
    assert p.returncode == 0, p.stderr
    lines = json_lines(p.stdout)
    assert any(d["status"] == "sensitive" for d in lines)
    for line in lines:
        if line["status"] == "sensitive":
            assert line["validated"]
            assert abs(line["outputs"]["x1"][0] - line["outputs"]["x2"][0]) >= 0.3
            _replayed(model.read_bytes(), line["witness"], line["outputs"])


def test_a_sens_file_names_an_onnx_model_and_the_onnx_format(saved):
    path = saved / "q.sens"
    path.write_text('model "forest.onnx"\nformat onnx\n\nquery one {\n  vary f0\n  gap 0.05\n}\n')
    p = treesens_here("run", path, "--json", cwd=saved)
    assert p.returncode == 0, p.stderr
    (line,) = json_lines(p.stdout)
    assert line["status"] == "sensitive" and line["validated"]
    _replayed((saved / "forest.onnx").read_bytes(), line["witness"], line["outputs"])


def test_a_sweep_in_worker_processes_replays_with_onnxruntime_there(saved):
    p = treesens_here("sweep", saved / "xgboost.onnx", "--gap", "0.05", "--jobs", "2", "--json")
    assert p.returncode == 0, p.stderr
    lines = json_lines(p.stdout)
    assert sorted(d["query"] for d in lines) == NAMES
    for line in lines:
        if line["status"] == "sensitive":
            assert line["validated"]
            _replayed((saved / "xgboost.onnx").read_bytes(), line["witness"], line["outputs"])
