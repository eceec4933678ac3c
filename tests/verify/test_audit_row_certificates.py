"""Certificates of an audit's rows that do not flip (the anchored question: x1 the row on
every feature, x2 the row outside F; the ``flip`` claim, version 4): a row of a small
trained XGBoost or LightGBM model (binary and 3-class) that brute force finds not
flippable is certified and verifies, and every row certified is one brute force finds
not flippable; a copy with x1's point moved to a flipped row, a domain outside F widened,
a box dropped or x2's decision turned to the row's own is rejected; a flipped row gets no
certificate, its witness as before; a row of a regressor or outside its declared bounds
is refused, saying why."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.compiler.audit import Target
from treesens.compiler.query import Gap
from treesens.questions.audit import answer_blocks, make_spec, make_target
from treesens.questions.audit_certificates import certify_rows
from treesens.questions.audit_solve import row_query
from treesens.questions.certify import (
    ANCHORED_REGRESSOR,
    ANCHORED_UNRANKED,
    certify,
    model_refusal,
)
from treesens.readers.data import load_data
from treesens.readers.load import load_model
from treesens.tests.audit_oracle import brute_force_flippable
from treesens.tests.verify.tampering import tampered
from treesens.verify import verify_file

GAP = {2: 0.1, 3: 1.2}  # a binary gap, a multiclass ratio
VARIED = (1, 3)  # the features of F, by index (LightGBM names them Column_i)


def _toy(k: int, n: int = 60):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 4))
    y = (2 * X[:, 0] + X[:, 1] + 0.5 * X[:, 3] > 0).astype(int)
    return X, (y + (X[:, 2] > 0.5) if k == 3 else y)


def _vary(ens) -> list[str]:
    return [ens.feature_names[f] for f in VARIED]


def _train(lib: str, k: int, folder: Path) -> Path:
    X, y = _toy(k)
    if lib == "xgboost":
        xgb = pytest.importorskip("xgboost")
        m = xgb.XGBClassifier(n_estimators=12, max_depth=3, learning_rate=0.5).fit(X, y)
        path = folder / f"{lib}{k}.json"
        m.save_model(path)
    else:
        lgb = pytest.importorskip("lightgbm")
        m = lgb.LGBMClassifier(n_estimators=12, num_leaves=6, min_child_samples=3, verbose=-1)
        path = folder / f"{lib}{k}.txt"
        m.fit(X, y).booster_.save_model(str(path))
    return path


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    """Per (library, classes): the model file, the audit's lines of 16 rows, its spec,
    the rows, and a certificate (row -> "" or why not) of each row that does not flip."""
    folder = tmp_path_factory.mktemp("audit_rows")
    out = {}
    for lib in ("xgboost", "lightgbm"):
        for k in (2, 3):
            path = _train(lib, k, folder)
            ens = load_model(path)
            X = _toy(k)[0][:16]
            ds = load_data(pd.DataFrame(X, columns=ens.feature_names), ens)
            spec = make_spec(ens, ds, _vary(ens), make_target(ens, GAP[k]))
            [(_, ans)] = list(answer_blocks(ens, ds, spec, np.arange(len(X))))
            lines = [
                {"row": i, "status": "insensitive" if s == "not flippable" else s, "decision": d}
                for i, (s, d) in enumerate(zip(ans.status, ans.decision))
            ]
            certs = folder / f"{lib}{k}"
            outcome = certify_rows(ens, spec, X, lines, certs, path, 30.0)
            out[lib, k] = (path, ens, spec, X, ans, certs, outcome)
    return out


CASES = [(lib, k) for lib in ("xgboost", "lightgbm") for k in (2, 3)]


@pytest.mark.parametrize("case", CASES)
def test_every_row_brute_force_finds_not_flippable_is_certified_and_verifies(audited, case):
    path, ens, spec, X, ans, certs, outcome = audited[case]
    flips = brute_force_flippable(ens, X, _vary(ens), Target(Gap(GAP[case[1]])))
    assert not all(flips)
    assert sorted(outcome) == [i for i, f in enumerate(flips) if not f]
    for row, why in outcome.items():
        assert why == ""
        assert verify_file(certs / f"row-{row}.json").valid


@pytest.mark.parametrize("case", CASES)
def test_a_flipped_row_gets_no_certificate_and_keeps_its_witness(audited, case):
    path, ens, spec, X, ans, certs, outcome = audited[case]
    flipped = [i for i, s in enumerate(ans.status) if s == "flippable"]
    assert flipped and not set(flipped) & set(outcome)
    i = flipped[0]
    assert not np.isnan(ans.x2[i]).any()
    done = certify(ens, row_query(ens, spec, X[i], ans.decision[i], 30), certs / "f.json", path, 30)
    assert not done.written and "found a pair" in done.reason


def _one(audited, case=("xgboost", 2)):
    path, ens, spec, X, ans, certs, outcome = audited[case]
    row = next(iter(outcome))
    return certs / f"row-{row}.json", X, ans


def test_x1_moved_to_a_flipped_row_is_rejected(audited, tmp_path):
    cert, X, ans = _one(audited)
    flipped = X[list(ans.status).index("flippable")]

    def move(doc):
        for f, d in enumerate(doc["question"]["domain"]):
            for point in (d["x1"],) if "x1" in d else (d,):
                point["lb"] = point["ub"] = float(flipped[f])

    assert not verify_file(tampered(cert, tmp_path, move)).valid


def test_a_domain_outside_F_widened_is_rejected(audited, tmp_path):
    cert, _, _ = _one(audited)

    def widen(doc):
        doc["question"]["domain"][0].update(lb="-inf", ub="inf")

    assert not verify_file(tampered(cert, tmp_path, widen)).valid


def test_x2_s_domain_widened_alone_on_a_feature_outside_F_is_rejected(audited, tmp_path):
    cert, _, _ = _one(audited)

    def widen(doc):
        point = doc["question"]["domain"][0]
        doc["question"]["domain"][0] = {"x1": point, "x2": {**point, "lb": "-inf", "ub": "inf"}}

    verdict = verify_file(tampered(cert, tmp_path, widen))
    assert not verdict.valid and "shared feature" in verdict.message


def test_its_claim_is_the_flip_with_x2_free_on_F(audited, tmp_path):
    cert, _, _ = _one(audited)
    doc = json.loads(cert.read_text())
    assert doc["question"]["domain"][1]["x2"]["lb"] == "-inf"  # x2 free on F
    assert doc["question"]["claim"]["kind"] == "flip"


@pytest.fixture(scope="module")
def split(tmp_path_factory):
    """An XGBoost model of sin(3 f0) (30 trees), whose per-tree maxima over f0 lie in
    different cells: rows whose proofs split x2's f0 column; the audit of 40 rows, vary
    f0 at gap 0.2, and its certificates."""
    xgb = pytest.importorskip("xgboost")
    folder = tmp_path_factory.mktemp("split")
    rng = np.random.default_rng(1)
    X = rng.uniform(-2, 2, size=(400, 3))
    y = np.sin(3 * X[:, 0]) + 0.8 * X[:, 1] + 0.2 * rng.normal(size=400) > 0.6
    path = folder / "sin.json"
    xgb.XGBClassifier(n_estimators=30, max_depth=3, learning_rate=0.3).fit(X, y).save_model(path)
    ens, X = load_model(path), X[:40]
    ds = load_data(pd.DataFrame(X, columns=ens.feature_names), ens)
    spec = make_spec(ens, ds, ["f0"], make_target(ens, 0.2))
    [(_, ans)] = list(answer_blocks(ens, ds, spec, np.arange(len(X))))
    lines = [
        {"row": i, "status": "insensitive" if s == "not flippable" else s, "decision": d}
        for i, (s, d) in enumerate(zip(ans.status, ans.decision))
    ]
    outcome = certify_rows(ens, spec, X, lines, folder / "certs", path, 30.0)
    return ens, X, folder / "certs", outcome


def test_proofs_that_split_x2_s_column_verify_where_brute_force_finds_no_flip(split):
    ens, X, certs, outcome = split
    flips = brute_force_flippable(ens, X, ["f0"], Target(Gap(0.2)))
    assert sorted(outcome) == [i for i, f in enumerate(flips) if not f]
    steps = {
        r: json.loads((certs / f"row-{r}.json").read_text())["parts"][0]["proof"] for r in outcome
    }
    assert any(len(p) > 1 for p in steps.values())  # a split, not the root box alone
    assert all(why == "" for why in outcome.values())


def test_a_box_dropped_is_rejected(split, tmp_path):
    ens, X, certs, outcome = split
    for r in outcome:
        cert = certs / f"row-{r}.json"
        if len(json.loads(cert.read_text())["parts"][0]["proof"]) > 1:
            break

    def drop(doc):
        proof = doc["parts"][0]["proof"]
        del proof[max(i for i, s in enumerate(proof) if s[0] == "prune")]

    verdict = verify_file(tampered(cert, tmp_path, drop))
    assert not verdict.valid and "open" in verdict.message


def test_a_flip_to_the_row_s_own_decision_is_rejected_though_its_proof_holds(audited, tmp_path):
    """Asked with the other decision, the row's anchored question is x2 reaching the row's
    own decision at gap 0.45 (P(x2) <= 0.05 of a row at P above it, varying f2): no x2
    does, the proof holds, and only the row's decision by the library tells it wrong."""
    path, ens, _, X, _, _, _ = audited["xgboost", 2]
    ds = load_data(pd.DataFrame(X, columns=ens.feature_names), ens)
    spec = make_spec(ens, ds, [ens.feature_names[2]], make_target(ens, 0.45))
    P = ens.proba(X)[:, 1]
    forged = []
    for i in np.flatnonzero((P > 0.06) & (P < 0.5)):
        q = row_query(ens, spec, X[i], 1, 10)  # the row is decided 0
        done = certify(ens, q, tmp_path / f"r{i}.json", path, 10)
        forged += [done] if done.written else []
    assert forged
    assert all(not d.verified and "decided 0 by the library" in d.reason for d in forged)


def test_a_regressor_s_row_is_refused_saying_so(tmp_path):
    xgb = pytest.importorskip("xgboost")
    X, y = _toy(2)
    path = tmp_path / "r.json"
    xgb.XGBRegressor(n_estimators=4, max_depth=2).fit(X, X[:, 0]).save_model(path)
    ens = load_model(path)
    ds = load_data(pd.DataFrame(X, columns=ens.feature_names), ens)
    spec = make_spec(ens, ds, _vary(ens), make_target(ens, delta=0.5))
    assert model_refusal(ens, row_query(ens, spec, X[0], 0.0, 10), path) == ANCHORED_REGRESSOR


def test_a_row_outside_its_declared_bounds_is_refused_saying_so(audited, tmp_path):
    path, ens, spec, X, ans, certs, outcome = audited["xgboost", 2]
    feats = list(ens.features)
    feats[2] = feats[2].__class__(feats[2].name, feats[2].kind, -10.0, 10.0)
    bounded = ens.with_features(tuple(feats))
    row = X[0].copy()
    row[2] = 50.0  # no rank of its own: the box search does not take the row
    done = certify(bounded, row_query(bounded, spec, row, 1, 10), tmp_path / "c.json", path, 10)
    assert not done.written and done.reason == ANCHORED_UNRANKED


def test_the_api_s_anchored_check_certifies_from_the_answer_s_own_proof(audited, tmp_path):
    path, ens, spec, X, ans, certs, outcome = audited["lightgbm", 2]
    row = next(iter(outcome))
    params = {"anchor": [float(v) for v in X[row]], "decision": int(ans.decision[row])}
    res = treesens.check(
        str(path), vary=_vary(ens), gap=GAP[2], kind="anchored", params=params,
        certificate=tmp_path / "c.json",
    )  # fmt: skip
    assert res.status == "insensitive" and res.proof.checked
    assert json.loads((tmp_path / "c.json").read_text())["question"]["claim"]["kind"] == "flip"


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_the_audit_command_writes_a_verified_certificate_per_row_that_does_not_flip(tmp_path):
    from treesens.tests.conftest import treesens_here

    p = treesens_here(
        "audit", EXAMPLES / "breast_cancer_xgb.json", "--data",
        EXAMPLES / "breast_cancer_rows.csv", "--vary", "mean_texture", "--gap", "0.1",
        "--limit", "3", "--json", "--certificates", tmp_path / "certs",
    )  # fmt: skip
    lines = [json.loads(line) for line in p.stdout.splitlines()]
    kept = {d["row"] for d in lines if d["status"] == "insensitive"}
    assert p.returncode == 0 and kept
    assert {int(f.stem[4:]) for f in (tmp_path / "certs").glob("row-*.json")} == kept
    assert all(verify_file(f).valid for f in (tmp_path / "certs").glob("*.json"))
    assert f"certificates: {len(kept)} of {len(kept)} rows that do not flip" in p.stderr


def test_the_audit_s_certificates_folder_given_as_a_file_is_one_line_and_exit_2(tmp_path):
    from treesens.tests.conftest import treesens_here

    (tmp_path / "f").write_text("")
    p = treesens_here(
        "audit", EXAMPLES / "breast_cancer_xgb.json", "--data",
        EXAMPLES / "breast_cancer_rows.csv", "--vary", "mean_texture",
        "--certificates", tmp_path / "f",
    )  # fmt: skip
    assert p.returncode == 2 and "a file, not a folder" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_a_row_certificate_s_verdict_says_its_other_features_are_at_the_row_s_values(tmp_path):
    # 29 features outside F: counted, not listed, and each one a point, the row's value
    path = EXAMPLES / "breast_cancer_xgb.json"
    ens = load_model(path)
    ds = load_data(str(EXAMPLES / "breast_cancer_rows.csv"), ens)
    spec = make_spec(ens, ds, ["mean_texture"], make_target(ens, 0.2))
    [(_, ans)] = list(answer_blocks(ens, ds, spec, np.arange(1)))
    assert ans.status[0] == "not flippable"
    line = {"row": 0, "status": "insensitive", "decision": ans.decision[0]}
    certify_rows(ens, spec, ds.X[:1], [line], tmp_path, path, 30.0)
    said = verify_file(tmp_path / "row-0.json").message
    assert "the other 29 features at the row's values" in said


def _depth(t, n: int = 0) -> int:
    return 0 if t.feature[n] < 0 else 1 + max(_depth(t, t.left[n]), _depth(t, t.right[n]))


def test_the_checker_walks_a_tree_that_reads_no_feature_of_F_along_the_row_s_path_alone(
    tmp_path, monkeypatch
):
    """x2 is the row outside F: in a tree that reads no feature of F, the checker routes
    x2 one node a level (at most the tree's depth), not through every node of the tree."""
    xgb = pytest.importorskip("xgboost")
    from treesens.verify.box_checks import Checker
    from treesens.verify.models import read_model

    X, y = _toy(2, 400)
    path = tmp_path / "deep.json"
    xgb.XGBClassifier(n_estimators=10, max_depth=5).fit(X, y).save_model(path)
    ens, m = load_model(path), read_model(str(path), "xgboost")
    ds = load_data(pd.DataFrame(X, columns=ens.feature_names), ens)
    spec = make_spec(ens, ds, ["f2"], make_target(ens, 0.1))  # y does not read f2
    decision = int(ens.proba(X[:1])[0, 1] >= 0.5)
    done = certify(ens, row_query(ens, spec, X[0], decision, 30), tmp_path / "c.json", path, 30)
    assert done.verified, done.message
    reads_f2 = [2 in t.feature for t in m.trees]
    internal = [sum(1 for f in t.feature if f >= 0) for t in m.trees]
    most = sum(internal[i] if reads_f2[i] else _depth(t) for i, t in enumerate(m.trees))
    assert most < sum(internal)  # some tree off F holds nodes off the row's path
    routed = []
    route = Checker._route
    monkeypatch.setattr(Checker, "_route", lambda self, *a: routed.append(1) or route(self, *a))
    assert verify_file(tmp_path / "c.json").valid
    assert 0 < len(routed) <= most


def test_the_rows_of_one_model_rank_each_tree_once_for_their_certificates(
    audited, tmp_path, monkeypatch
):
    from treesens.search import anchored_boxes, pair_boxes

    path, _, _, X, ans, _, outcome = audited["xgboost", 2]
    ens = load_model(path)  # a fresh model: nothing of it ranked yet
    ds = load_data(pd.DataFrame(X, columns=ens.feature_names), ens)
    spec = make_spec(ens, ds, _vary(ens), make_target(ens, GAP[2]))
    calls = []

    def counted(*a):
        calls.append(1)
        return ranked_tree(*a)

    ranked_tree = anchored_boxes.ranked_tree
    monkeypatch.setattr(anchored_boxes, "ranked_tree", counted)
    monkeypatch.setattr(pair_boxes, "_ranked_tree", counted)  # a tree ranked where built
    lines = [{"row": r, "status": "insensitive", "decision": ans.decision[r]} for r in outcome]
    done = certify_rows(ens, spec, X, lines, tmp_path, path, 30.0)
    assert len(done) >= 3 and all(why == "" for why in done.values())
    # once per tree for the boxes' builder, at most once more for the compiled walk
    assert len(calls) <= 2 * len(ens.trees)


@pytest.mark.parametrize("lib", ["xgboost", "lightgbm"])
def test_a_row_of_the_class_x2_is_asked_gets_no_certificate_and_says_why(audited, lib, tmp_path):
    """An audit asking x2 of class 2 (audit --classes 2, a report's class pair 0,2): a row
    of class 2 has no flip to certify, and the other rows are still certified (it was
    "classes must differ (got 2 twice)", which ended the audit or the report's section)."""
    path, ens, _, X, _, _, _ = audited[lib, 3]
    ds = load_data(pd.DataFrame(X, columns=ens.feature_names), ens)
    spec = make_spec(ens, ds, _vary(ens), make_target(ens, GAP[3], classes=2))
    [(_, ans)] = list(answer_blocks(ens, ds, spec, np.arange(len(X))))
    lines = [
        {"row": i, "status": "insensitive" if s == "not flippable" else s, "decision": d}
        for i, (s, d) in enumerate(zip(ans.status, ans.decision))
    ]
    own = [d["row"] for d in lines if d["decision"] == 2 and d["status"] == "insensitive"]
    assert own  # some rows are of class 2 and so do not flip to it
    outcome = certify_rows(ens, spec, X, lines, tmp_path, path, 30.0)
    for row in own:
        assert outcome[row] == "the row is of class 2, the class x2 is asked: no flip to certify"
    others = [r for r, why in outcome.items() if r not in own]
    assert others and all(outcome[r] == "" for r in others)
