"""Certificates of an audit's rows (the ``flip`` claim) on the formats beyond XGBoost and
LightGBM: CatBoost (numeric, and one-hot categories named by the data), ONNX (skl2onnx's
boosting and forest, onnxmltools' LightGBM), scikit-learn's HistGradientBoosting and
RandomForest (``.skops``), a pipeline with a one-hot encoder and a scaler, and an XGBoost
model whose one-hot columns are folded into one feature (``groups``); each binary and of
3 classes. Per model, 16 rows audited: every row a brute force over the domain's cells
(the library's own predict) finds not flippable is certified and verifies, and no other
row is; a copy with x1 moved to a flipped row of the same decision, or a box dropped, is
rejected."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from treesens.compiler.audit import Target
from treesens.compiler.query import Gap
from treesens.questions.audit import answer_blocks, make_spec, make_target
from treesens.questions.audit_certificates import certify_rows
from treesens.readers.data import load_data
from treesens.readers.load import load_model
from treesens.tests.audit_oracle import brute_force_flippable
from treesens.tests.verify.tampering import tampered
from treesens.verify import verify_file

GAP = {2: 0.1, 3: 1.2}  # a binary gap, a multiclass ratio
ROWS = 16
NUMERIC = ["catboost", "hgb", "forest", "onnx-boosting", "onnx-forest", "onnx-lightgbm"]
CODED = ["catboost-one-hot", "pipeline", "groups"]  # vary colour (coded) and z
COLOURS = ["red", "green", "blue", "grey"]


def _numeric(k: int, n: int = 300) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(n, 4)).astype(np.float32)
    y = (2 * X[:, 0] + X[:, 1] + 0.5 * X[:, 3] + 0.2 * rng.normal(size=n) > 1.75).astype(int)
    return X, (y + (X[:, 2] > 0.5) if k == 3 else y)


def _coded(k: int, n: int = 300) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "colour": rng.choice(COLOURS, n),
            "age": rng.uniform(18, 80, n),
            "size": rng.uniform(0, 1, n),
            "z": rng.uniform(0, 1, n),
        }
    )
    score = df.age + 14 * (df.colour == "red") - 12 * (df.colour == "blue") + 30 * df["size"]
    score = score + 3 * df.z + rng.normal(0, 3, n)
    return df, (np.digitize(score, [55, 75]) if k == 3 else (score > 65).astype(int).to_numpy())


def _skops(est, X, y, path: Path) -> Path:
    import skops.io

    skops.io.dump(est.fit(X, y), path)
    return path


def _train_numeric(kind: str, k: int, folder: Path) -> Path:
    from sklearn.ensemble import (
        GradientBoostingClassifier,
        HistGradientBoostingClassifier,
        RandomForestClassifier,
    )

    X, y = _numeric(k)
    forest = RandomForestClassifier(n_estimators=5, max_depth=4, random_state=0)
    if kind == "catboost":
        import catboost

        est = catboost.CatBoostClassifier(
            iterations=8, depth=3, verbose=0, allow_writing_files=False, random_seed=0
        )
        est.fit(X, y).save_model(str(folder / "model.cbm"))
        return folder / "model.cbm"
    if kind == "hgb":
        hgb = HistGradientBoostingClassifier(max_iter=8, max_depth=3, learning_rate=0.5)
        return _skops(hgb, X, y, folder / "model.skops")
    if kind == "forest":
        return _skops(forest, X, y, folder / "model.skops")
    from treesens.tests.frontends import onnx_models as om

    if kind == "onnx-lightgbm":
        import lightgbm

        est = lightgbm.LGBMClassifier(n_estimators=8, num_leaves=6, verbose=-1).fit(X, y)
        blob = om.onnxmltools_model(est, X.shape[1], zipmap=False)
    else:
        boosting = GradientBoostingClassifier(n_estimators=8, max_depth=3, learning_rate=0.5)
        est = forest if kind == "onnx-forest" else boosting
        blob = om.sklearn_onnx(est.fit(X, y), X, options={"zipmap": False})
    (folder / "model.onnx").write_bytes(blob)
    return folder / "model.onnx"


def _train_coded(kind: str, k: int, folder: Path) -> tuple[Path, dict, pd.DataFrame]:
    """(the model file, load_model's arguments, the rows as the model reads them)."""
    df, y = _coded(k)
    if kind == "catboost-one-hot":
        import catboost

        est = catboost.CatBoostClassifier(
            iterations=8, depth=3, one_hot_max_size=10, verbose=0, allow_writing_files=False
        )
        est.fit(df, y, cat_features=["colour"]).save_model(str(folder / "model.cbm"))
        df.assign(label=y).to_csv(folder / "data.csv", index=False)
        return folder / "model.cbm", {"data": str(folder / "data.csv")}, df
    if kind == "groups":
        import xgboost

        onehot = pd.get_dummies(df.colour, prefix="colour").astype(float)
        X = pd.concat([onehot, df[["age", "size", "z"]]], axis=1)
        est = xgboost.XGBClassifier(n_estimators=8, max_depth=3).fit(X, y)
        est.get_booster().save_model(folder / "model.json")
        return folder / "model.json", {"groups": {"colour": list(onehot.columns)}}, X
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    columns = ColumnTransformer(
        [("onehot", OneHotEncoder(), ["colour"]), ("scaled", StandardScaler(), ["age"])],
        remainder="passthrough",
    )
    gb = GradientBoostingClassifier(n_estimators=8, max_depth=3, learning_rate=0.5)
    pipe = Pipeline([("columns", columns), ("model", gb)])
    return _skops(pipe, df, y, folder / "model.skops"), {}, df


SLOW = pytest.mark.slow  # a pipeline's maps: the boundaries of its scaled columns, bisected
CASES = [
    pytest.param((kind, k), id=f"{kind}-{k}", marks=[SLOW] if kind == "pipeline" else [])
    for kind in NUMERIC + CODED
    for k in (2, 3)
]


@pytest.fixture(scope="module", params=CASES)
def audited(request, tmp_path_factory):
    """(model file, ensemble, the rows, the audit's answers, the certificates' folder,
    row -> "" or why not) of the case's model: 16 rows audited, each that does not flip
    certified."""
    kind, k = request.param
    folder = tmp_path_factory.mktemp(f"{kind}-{k}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind in NUMERIC:
            path, kw = _train_numeric(kind, k, folder), {}
            ens = load_model(path)
            rows = pd.DataFrame(_numeric(k)[0][:ROWS].astype(float), columns=ens.feature_names)
            vary = [ens.feature_names[1], ens.feature_names[3]]
        else:
            path, kw, rows = _train_coded(kind, k, folder)
            ens, vary = load_model(path, **kw), ["colour", "z"]
    ds = load_data(rows[:ROWS], ens)
    spec = make_spec(ens, ds, vary, make_target(ens, GAP[k]))
    [(_, ans)] = list(answer_blocks(ens, ds, spec, np.arange(ROWS)))
    lines = [
        {"row": i, "status": "insensitive" if s == "not flippable" else s, "decision": d}
        for i, (s, d) in enumerate(zip(ans.status, ans.decision))
    ]
    outcome = certify_rows(ens, spec, ds.X, lines, folder / "certs", path, 30.0)
    return ens, vary, k, ds.X, ans, folder / "certs", outcome


def test_the_rows_certified_are_those_brute_force_finds_not_flippable(audited):
    ens, vary, k, X, ans, certs, outcome = audited
    flips = brute_force_flippable(ens, X, vary, Target(Gap(GAP[k])))
    assert any(flips) and not all(flips)
    assert sorted(outcome) == [i for i, f in enumerate(flips) if not f]
    assert {row: why for row, why in outcome.items() if why} == {}


def test_every_row_certificate_verifies(audited):
    ens, vary, k, X, ans, certs, outcome = audited
    for row in outcome:
        verdict = verify_file(certs / f"row-{row}.json")
        assert verdict.valid, (row, verdict.message)


def _flipped_twin(audited) -> tuple[Path, np.ndarray]:
    """A certified row's certificate and a flipped row of the same decision."""
    ens, vary, k, X, ans, certs, outcome = audited
    flipped = [i for i, s in enumerate(ans.status) if s == "flippable"]
    for row in outcome:
        same = [i for i in flipped if ans.decision[i] == ans.decision[row]]
        if same:
            return certs / f"row-{row}.json", X[same[0]]
    pytest.fail("no flipped row shares a certified row's decision")


def test_x1_moved_to_a_flipped_row_of_the_same_decision_is_rejected(audited, tmp_path):
    cert, flipped = _flipped_twin(audited)

    def move(doc):
        for f, d in enumerate(doc["question"]["domain"]):
            point = d.get("x1", d)
            v = float(flipped[f])
            point.update(lb=v, ub=v)
            if "codes" in point:
                point["codes"] = [int(v)]

    verdict = verify_file(tampered(cert, tmp_path, move))
    assert not verdict.valid


def test_a_row_certificate_with_a_box_dropped_is_rejected(audited, tmp_path):
    ens, vary, k, X, ans, certs, outcome = audited

    def drop(doc):
        proof = doc["parts"][-1]["proof"]
        del proof[max(i for i, s in enumerate(proof) if s[0] != "split")]

    verdict = verify_file(tampered(certs / f"row-{next(iter(outcome))}.json", tmp_path, drop))
    assert not verdict.valid
