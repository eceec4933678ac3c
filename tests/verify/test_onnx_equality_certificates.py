"""Certificates on ONNX tree ensembles with equality modes (BRANCH_EQ, BRANCH_NEQ, as
onnxmltools writes LightGBM's categorical splits): the checker expands each equality
chain with its own code (verify/models_onnx.py), its trees route every point, the
numbers either side of it (in the input's precision) and NaN as onnxruntime does, and an
insensitive answer and a max-gap bound on the chains' feature are certified and
verified; tampered copies are rejected, and onnxruntime on a grid over the points and
the brute-force oracle agree with every certified claim.

The two models, built node by node: a binary TreeEnsembleClassifier (float input,
post_transform LOGISTIC) and a TreeEnsembleRegressor (double input), each of two trees
on f0 (chains of equalities) and f1 (BRANCH_LEQ):

* tree 0: ``f0 == 1 ? A : f0 != 2 ? (f0 == 0 ? C : f1 <= 0.5 ? D : E) : B``, NaN
  taking C (its node's missing_value_tracks_true);
* tree 1: ``f1 <= 0.25 ? (f0 == 2 ? G : f0 != 3 ? (f0 == 2 ? H : I) : J) : F``: the
  second ``f0 == 2`` no number reaches (its leaf H is large: reaching it would show),
  NaN goes on through the BRANCH_NEQ (flag set or not) to I.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import treesens
from treesens.compiler.query import Gap, Query
from treesens.readers.details import declare
from treesens.tests.frontends import onnx_models as om
from treesens.tests.oracle import brute_force_largest_change, brute_force_sensitive
from treesens.tests.verify.tampering import checker_raw, drop_last_box, tampered
from treesens.verify import verify_file
from treesens.verify.models import ModelError, read_model

EQ, NEQ, LEQ = "BRANCH_EQ", "BRANCH_NEQ", "BRANCH_LEQ"
COLUMNS = (
    "nodes_treeids",
    "nodes_nodeids",
    "nodes_modes",
    "nodes_featureids",
    "nodes_values",
    "nodes_truenodeids",
    "nodes_falsenodeids",
    "nodes_missing_value_tracks_true",
)


def _leaf(n: int) -> tuple:
    return (n, "LEAF", 0, 0.0, 0, 0, 0)


# (node, mode, feature, threshold, true, false, missing_value_tracks_true)
TREES = [
    [
        (0, EQ, 0, 1.0, 4, 1, 0),
        (1, NEQ, 0, 2.0, 2, 5, 0),
        (2, EQ, 0, 0.0, 6, 3, 1),
        (3, LEQ, 1, 0.5, 7, 8, 0),
        *map(_leaf, range(4, 9)),
    ],
    [
        (0, LEQ, 1, 0.25, 1, 4, 1),
        (1, EQ, 0, 2.0, 5, 2, 0),
        (2, NEQ, 0, 3.0, 3, 6, 1),
        (3, EQ, 0, 2.0, 7, 8, 0),
        *map(_leaf, range(4, 9)),
    ],
]
# (tree, leaf, weight)
LEAVES = [(0, 4, 0.8), (0, 5, -0.6), (0, 6, 0.3), (0, 7, -0.2), (0, 8, 0.1)]
LEAVES += [(1, 4, 0.2), (1, 5, -0.5), (1, 6, 0.6), (1, 7, 5.0), (1, 8, 0.0)]
POINTS = (0.0, 1.0, 2.0, 3.0)
KINDS = ("classifier", "regressor")
GAP, DELTA = 0.25, 2.0  # insensitive answers (varying f0) near the max gaps, 0.19 and 1.9


def _nodes() -> dict:
    nodes: dict[str, list] = {c: [] for c in COLUMNS}
    for tid, tree in enumerate(TREES):
        for row in tree:
            for column, v in zip(COLUMNS, (tid, *row), strict=True):
                nodes[column].append(v)
    return nodes


def _blob(kind: str) -> bytes:
    trees = [t for t, _, _ in LEAVES]
    if kind == "classifier":
        weights = [(n, 0, w) for _, n, w in LEAVES]
        return om.classifier(_nodes(), weights, post="LOGISTIC", class_treeids=trees)
    weights = [(n, w, t) for t, n, w in LEAVES]
    return om.regressor(_nodes(), weights, base=[0.5], in_type=om.DOUBLE)


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("equality")
    out = {}
    for kind in KINDS:
        out[kind] = folder / f"{kind}.onnx"
        out[kind].write_bytes(_blob(kind))
    return out


def _ensemble(path: Path):
    """The model as treesens reads it, f0 declared may-be-missing."""
    return declare(treesens.load_model(str(path)), missing=["f0"])


def _precision(kind: str):
    return np.float32 if kind == "classifier" else np.float64


def _grid(kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Values of f0 (every point, the numbers either side of it in the input's
    precision, NaN, far values) and of f1 (its thresholds likewise, NaN)."""
    p = _precision(kind)

    def around(ts) -> list[float]:
        out = [np.nan, -5.0, 5.0]
        for t in ts:
            t = p(t)
            out += [float(t), float(np.nextafter(t, p(-np.inf))), float(np.nextafter(t, p(np.inf)))]
        return out

    return np.array(around(POINTS), dtype=p), np.array(around((0.25, 0.5)), dtype=p)


def _rows(kind: str) -> np.ndarray:
    f0, f1 = _grid(kind)
    return np.array([[a, b] for b in f1 for a in f0], dtype=_precision(kind))


def _onnxruntime(path: Path, kind: str, X: np.ndarray, raw: bool = False) -> np.ndarray:
    """onnxruntime's prediction of each row: the regressor's, the classifier's P(class
    1), or with ``raw`` its score (post_transform NONE)."""
    import onnx
    import onnxruntime

    model = onnx.load_model(str(path))
    if raw:
        op = next(n for n in model.graph.node if n.op_type.startswith("TreeEnsemble"))
        next(a for a in op.attribute if a.name == "post_transform").s = b"NONE"
    session = onnxruntime.InferenceSession(model.SerializeToString())
    out = session.run(None, {session.get_inputs()[0].name: X})
    scores = out[0] if kind == "regressor" else out[1]
    if isinstance(scores, list):  # a ZipMap's one dict per row, by class
        scores = [[d[k] for k in sorted(d)] for d in scores]
    return np.asarray(scores)[:, -1].astype(np.float64)


@pytest.mark.parametrize("kind", KINDS)
def test_the_checkers_expanded_chains_route_every_point_as_onnxruntime_does(kind, models):
    m = read_model(str(models[kind]), "onnx", test="<=")
    X = _rows(kind)
    got = [checker_raw(m, r) for r in X.astype(np.float64)]
    want = _onnxruntime(models[kind], kind, X, raw=True)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)


def test_the_checker_reads_a_chain_under_the_strict_test_too(models):
    """A certificate stating ``test`` "<" gets each point's ``x < t`` and ``x <= t`` as
    ``x < t`` and ``x < above(t)``: the same routing."""
    m = read_model(str(models["classifier"]), "onnx", test="<")
    X = _rows("classifier")
    got = [checker_raw(m, r) for r in X.astype(np.float64)]
    want = _onnxruntime(models["classifier"], "classifier", X, raw=True)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)


@pytest.mark.parametrize("test", ["<=", "<"])
@pytest.mark.parametrize(
    "points, modes, tracks",
    [
        ((3.0, 1.0, 2.0), (EQ, EQ, EQ), (0, 1, 0)),
        ((0.0, 5.0, 0.0, -2.5), (EQ, NEQ, EQ, NEQ), (0, 1, 0, 0)),
        ((1.0, 0.1, 7.0), (NEQ, EQ, EQ), (1, 0, 1)),
        ((1.0, 2.0, 1.0), (EQ, EQ, EQ), (0, 0, 0)),
        ((2.0, 2.0), (NEQ, NEQ), (1, 1)),
        ((0.0, -0.0, 5.0), (EQ, EQ, NEQ), (0, 0, 1)),
        ((4.0, 1.0), (EQ, EQ), (1, 1)),
    ],
)
def test_every_chain_shape_routes_as_onnxruntime_does(tmp_path, points, modes, tracks, test):
    """One chain on f0 (point i's "equal" child a leaf of its own, the rest a split on f1
    at 0.5): repeated points (0.0 and -0.0 too), BRANCH_NEQ first or last, NaN sent to a
    point or on to the rest, under either test."""
    k = len(points)
    nodes = om.equality_chain_nodes(points, modes, tracks)
    weights = [(k + i, 0, 0.1 * (i + 1)) for i in range(k)] + [(2 * k + 1, 0, 0.8), (2 * k + 2, 0, 0.9)]  # fmt: skip
    path = tmp_path / "chain.onnx"
    path.write_bytes(om.classifier(nodes, weights))
    m = read_model(str(path), "onnx", test=test)
    values = [np.nan, -9.0, 9.0]
    for t in map(np.float32, points):
        values += [t, np.nextafter(t, np.float32(-9)), np.nextafter(t, np.float32(9))]
    X = np.array([[v, w] for v in values for w in (0.25, 0.75, np.nan)], dtype=np.float32)
    got = [checker_raw(m, r) for r in X.astype(np.float64)]
    want = _onnxruntime(path, "classifier", X, raw=True)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)


def test_a_chain_sending_nan_to_a_point_no_number_reaches_is_refused_in_one_line(tmp_path):
    """``f0 == 1 ? A : f0 == 1 ? B : C`` with NaN sent to B (the flag of the second
    node): no box of numbers holds B, so the checker refuses the model."""
    tree = [(0, EQ, 0, 1.0, 3, 1, 0), (1, EQ, 0, 1.0, 4, 2, 1), (2, LEQ, 1, 0.5, 5, 6, 0)]
    rows = [*tree, *map(_leaf, range(3, 7))]
    nodes: dict[str, list] = {c: [] for c in COLUMNS}
    for row in rows:
        for column, v in zip(COLUMNS, (0, *row), strict=True):
            nodes[column].append(v)
    path = tmp_path / "nan.onnx"
    path.write_bytes(om.classifier(nodes, [(n, 0, 0.1 * n) for n in range(3, 7)], post="LOGISTIC"))
    with pytest.raises(ModelError, match="node 1 sends NaN to a child no number reaches") as e:
        read_model(str(path), "onnx")
    assert "\n" not in str(e.value)


def _claim(kind: str, value: float) -> dict:
    return {"gap": value} if kind == "classifier" else {"delta": value, "direction": "either"}


@pytest.fixture(scope="module")
def certified(models, tmp_path_factory) -> dict[str, dict]:
    """Per kind: the certificate of the insensitive answer (GAP or DELTA, varying f0)
    and of the max gap's upper bound, with the results."""
    folder = tmp_path_factory.mktemp("certificates")
    out = {}
    for kind in KINDS:
        ens = _ensemble(models[kind])
        answer, bound = folder / f"{kind}.json", folder / f"{kind}.max-gap.json"
        value = GAP if kind == "classifier" else DELTA
        r = treesens.check(ens, vary=["f0"], certificate=answer, **_claim(kind, value))
        mg = treesens.max_gap(ens, vary=["f0"], certificate=bound)
        out[kind] = {"answer": answer, "result": r, "bound": bound, "max_gap": mg}
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_an_insensitive_answer_on_equality_chains_is_certified_and_verified(kind, certified):
    c = certified[kind]
    assert c["result"].status == "insensitive"
    assert c["result"].proof.checked, c["result"].proof.why_not
    verdict = verify_file(c["answer"])
    assert verdict.valid and "f0 may be missing" in verdict.message, verdict.message


@pytest.mark.parametrize("kind", KINDS)
def test_a_max_gap_bound_on_equality_chains_is_certified_and_verified(kind, certified):
    mg = certified[kind]["max_gap"]
    assert mg.max_gap["proven"] and mg.proof.checked, mg.proof.why_not
    verdict = verify_file(certified[kind]["bound"])
    assert verdict.valid and "max gap's upper bound" in verdict.message, verdict.message


@pytest.mark.parametrize("kind", KINDS)
def test_the_proof_splits_at_the_points_of_a_chain(kind, certified):
    """The box search's splits on f0 (pair columns 0 and 1) include a point t and the
    number below it in the input's precision (the expansion's ``x <= below(t)`` and
    ``x <= t``), and NaN: the checker verified such proofs above. (A max gap's bound is
    certified from its own compiled search's boxes, split where its rule chose.)"""
    certificate = "answer"
    doc = json.loads(certified[kind][certificate].read_text())
    steps = [s for part in doc["parts"] for s in part["proof"] if s[0] == "split"]
    splits = {s[2] for s in steps if s[1] in (0, 1)}
    p = _precision(kind)
    assert any(t in splits and float(np.nextafter(p(t), p(-1))) in splits for t in POINTS)
    assert "nan" in splits


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("certificate", ["answer", "bound"])
def test_a_certificate_with_a_box_removed_is_rejected(kind, certificate, certified, tmp_path):
    path = certified[kind][certificate]
    assert not verify_file(tampered(path, tmp_path, drop_last_box)).valid


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("certificate", ["answer", "bound"])
def test_a_certificate_with_a_bound_lowered_is_rejected(kind, certificate, certified, tmp_path):
    def lower(doc):
        step = next(s for s in doc["parts"][0]["proof"] if s[0] == "prune")
        step[2] -= 0.01

    path = certified[kind][certificate]
    assert not verify_file(tampered(path, tmp_path, lower)).valid


def _reached(kind: str, path: Path) -> float:
    """The largest gap (classifier) or change (regressor) a pair reaches on the grid,
    by onnxruntime: pairs differ in f0 alone, f0 over every point, either side and NaN."""
    f0, f1 = _grid(kind)
    X = _rows(kind)
    pred = _onnxruntime(path, kind, X).reshape(len(f1), len(f0))
    hi, lo = pred.max(axis=1), pred.min(axis=1)
    if kind == "classifier":
        return float(np.minimum(hi - 0.5, 0.5 - lo).max())
    return float((hi - lo).max())


@pytest.mark.parametrize("kind", KINDS)
def test_onnxruntime_on_the_grid_of_points_agrees_with_every_certified_claim(
    kind, models, certified
):
    """No pair reaches the insensitive answer's claim nor the certified bound U'; the
    max gap's reported pair reaches its lower bound (the grid holds every cell)."""
    reached = _reached(kind, models[kind])
    claim = json.loads(certified[kind]["bound"].read_text())["question"]["claim"]
    bound = claim["gap"] if kind == "classifier" else claim["delta"]
    assert reached < (GAP if kind == "classifier" else DELTA)
    assert reached < bound
    assert reached == pytest.approx(certified[kind]["max_gap"].max_gap["lower"], abs=1e-6)


@pytest.mark.parametrize("kind", KINDS)
def test_brute_force_agrees_with_every_certified_claim(kind, models, certified):
    ens = _ensemble(models[kind])
    claim = json.loads(certified[kind]["bound"].read_text())["question"]["claim"]
    lower = certified[kind]["max_gap"].max_gap["lower"]
    if kind == "classifier":
        assert not brute_force_sensitive(ens, Query(vary=("f0",), gap=Gap(GAP)))
        assert not brute_force_sensitive(ens, Query(vary=("f0",), gap=Gap(claim["gap"])))
        assert brute_force_sensitive(ens, Query(vary=("f0",), gap=Gap(lower * 0.999)))
    else:
        largest = brute_force_largest_change(ens, ["f0"])
        assert largest < DELTA and largest < claim["delta"]
        assert largest == pytest.approx(lower, abs=1e-6)


@pytest.mark.parametrize("kind", KINDS)
def test_a_certificate_claiming_a_bound_brute_force_reaches_is_rejected(
    kind, models, certified, tmp_path
):
    lower = certified[kind]["max_gap"].max_gap["lower"]
    false_value = round(lower * 0.999, 6)
    ens = _ensemble(models[kind])
    if kind == "classifier":
        assert brute_force_sensitive(ens, Query(vary=("f0",), gap=Gap(false_value)))
    else:
        assert brute_force_largest_change(ens, ["f0"]) > false_value

    def claim_false_value(doc):
        doc["question"]["claim"]["gap" if kind == "classifier" else "delta"] = false_value

    assert not verify_file(tampered(certified[kind]["bound"], tmp_path, claim_false_value)).valid


# ---- a LightGBM categorical split, as onnxmltools writes it ----------------------------
@pytest.fixture(scope="module")
def lightgbm_categorical(tmp_path_factory) -> Path:
    """onnxmltools' model of a LightGBM classifier with a categorical feature f2 (codes
    0..11): its splits on f2 are chains of BRANCH_EQ."""
    lgb = pytest.importorskip("lightgbm")
    pytest.importorskip("onnxmltools")
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(600, 3)).astype(np.float32)
    X[:, 2] = rng.integers(0, 12, 600)
    y = ((X[:, 2] % 3 == 0) ^ (X[:, 0] > 0.5)).astype(int)
    est = lgb.LGBMClassifier(
        n_estimators=4,
        num_leaves=4,
        verbose=-1,
        num_threads=1,
        min_child_samples=5,
        max_cat_to_onehot=64,
        cat_smooth=1,
        min_data_per_group=2,
    ).fit(X, y, categorical_feature=[2])
    path = tmp_path_factory.mktemp("lightgbm") / "categorical.onnx"
    path.write_bytes(om.onnxmltools_model(est, 3))
    return path


def test_a_lightgbm_categorical_split_routes_as_onnxruntime_does(lightgbm_categorical):
    import onnx

    model = onnx.load_model(str(lightgbm_categorical))
    op = next(n for n in model.graph.node if n.op_type.startswith("TreeEnsemble"))
    assert b"BRANCH_EQ" in next(a for a in op.attribute if a.name == "nodes_modes").strings
    m = read_model(str(lightgbm_categorical), "onnx")
    codes = [np.nan, *np.arange(-1.0, 13.0, 0.5), float(np.nextafter(np.float32(3), np.float32(9)))]
    X = np.array([[a, 0.5, c] for a in (0.25, 0.75) for c in codes], dtype=np.float32)
    got = [checker_raw(m, r) for r in X.astype(np.float64)]
    want = _onnxruntime(lightgbm_categorical, "classifier", X, raw=True)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)


def test_a_lightgbm_categorical_features_max_gap_is_certified_and_verified(
    lightgbm_categorical, tmp_path
):
    r = treesens.max_gap(
        treesens.load_model(str(lightgbm_categorical)), vary=["f2"], certificate=tmp_path / "c.json"
    )
    assert r.max_gap["proven"] and r.proof.checked, r.proof.why_not
    assert verify_file(tmp_path / "c.json").valid
