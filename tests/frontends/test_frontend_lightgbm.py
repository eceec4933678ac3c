"""LightGBM frontend: the IR's own evaluation equals LightGBM's predict, for every format.

Rows: random, exactly on every threshold (and one ulp either side), NaN, zeros and
values inside LightGBM's zero band, every category plus unseen and negative codes.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

lgb = pytest.importorskip("lightgbm")

from treesens.compiler.errors import InputError, UnsupportedModelError  # noqa: E402
from treesens.readers.formats import lightgbm as lf  # noqa: E402
from treesens.readers.load import load_model  # noqa: E402
from treesens.tests.conftest import treesens_here  # noqa: E402

TOL = 1e-6


def _data(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X[:, 2] = rng.integers(0, 8, n)
    X[rng.random(n) < 0.15, 1] = np.nan
    X[rng.random(n) < 0.15, 3] = 0.0
    y = (np.isin(X[:, 2], [0, 4, 6]) ^ (X[:, 0] > 0.5) | np.isnan(X[:, 1])).astype(int)
    y3 = y + (X[:, 3] > 0.8)
    return X, y, y3


def probe_rows(ens, n_features, seed=1, cat=(2,), n_codes=8):
    """Random rows, threshold rows (+-1 ulp), NaN rows, zero-band rows, every category."""
    rng = np.random.default_rng(seed)
    rows = [rng.normal(size=(200, n_features))]
    for c in cat:
        rows[0][:, c] = rng.integers(0, n_codes, 200)
    base = rows[0][:1].copy()
    for t in ens.trees:
        for k in range(t.n_nodes):
            if t.feature[k] < 0 or t.is_categorical(k) or not np.isfinite(t.threshold[k]):
                continue
            th = float(t.threshold[k])
            for v in (th, np.nextafter(th, -np.inf), np.nextafter(th, np.inf)):
                r = base.copy()
                r[0, t.feature[k]] = v
                rows.append(r)
    nan = rows[0][:40].copy()
    nan[::2, 0] = np.nan
    nan[1::2, 1] = np.nan
    nan[::3, 3] = np.nan
    rows.append(nan)
    z = rows[0][:8].copy()
    z[:, 3] = [
        0.0,
        -0.0,
        1e-36,
        -1e-36,
        float(np.float32(1e-35)),
        np.nextafter(float(np.float32(1e-35)), 1),
        1e-30,
        -float(np.float32(1e-35)),
    ]
    rows.append(z)
    for c in cat:
        cr = np.repeat(rows[0][:1], n_codes + 4, axis=0)
        cr[:, c] = list(range(n_codes)) + [n_codes + 3, -1, np.nan, 2.5]
        rows.append(cr)
    return np.concatenate(rows)


def assert_matches(ens, X):
    rep = ens.replayer
    d_raw = np.abs(ens.raw(X) - rep.predict_raw(X)).max()
    d_p = np.abs(ens.proba(X) - rep.predict_proba(X)).max()
    assert d_raw <= TOL, f"raw differs by {d_raw}"
    assert d_p <= TOL, f"probabilities differ by {d_p}"


PARAMS = {
    "binary": dict(objective="binary"),
    "zero_as_missing": dict(objective="binary", zero_as_missing=True),
    "no_missing": dict(objective="binary", use_missing=False),
    "multiclass": dict(objective="multiclass", num_class=3),
    "rf": dict(objective="binary", boosting="rf", bagging_freq=1, bagging_fraction=0.7),
    "sigmoid2": dict(objective="binary", sigmoid=2.0),
    "xentropy": dict(objective="cross_entropy"),
}


def _train(kind, rounds=12):
    X, y, y3 = _data()
    params = dict(
        verbose=-1,
        num_leaves=7,
        max_depth=3,
        min_data_per_group=5,
        cat_smooth=1,
        max_cat_to_onehot=1,
        **PARAMS[kind],
    )
    yy = y3 if kind == "multiclass" else y
    return lgb.train(params, lgb.Dataset(X, yy, categorical_feature=[2]), rounds)


@pytest.mark.parametrize("kind", sorted(PARAMS))
def test_booster_text_and_dump_match_predict(kind, tmp_path):
    b = _train(kind)
    text_path = tmp_path / "m.txt"
    b.save_model(str(text_path))
    dump_path = tmp_path / "m.json"
    dump_path.write_text(json.dumps(b.dump_model()))
    variants = [
        lf.from_object(b),
        load_model(text_path),
        load_model(dump_path),
        lf.from_object(b.dump_model()),
    ]
    X = probe_rows(variants[0], 4)
    for ens in variants:
        assert ens.op == "<=" and ens.cast == "float64z"
        assert ens.features[2].kind == "categorical"
        assert any(t.categories is not None for t in ens.trees), "expected categorical splits"
        assert_matches(ens, X)
    if kind == "multiclass":
        assert variants[0].n_classes == 3 and variants[0].n_outputs == 3
    if kind == "rf":
        assert variants[0].scale == pytest.approx(1.0 / 12)


def test_lgbm_classifier_and_pandas_categories():
    pd = pytest.importorskip("pandas")
    X, y, _ = _data()
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    names = np.array(list("pqrstuvw"))
    df["c"] = pd.Categorical(names[X[:, 2].astype(int)], categories=list(names))
    m = lgb.LGBMClassifier(
        n_estimators=10,
        num_leaves=7,
        max_depth=3,
        min_data_per_group=5,
        cat_smooth=1,
        max_cat_to_onehot=1,
        verbose=-1,
    ).fit(df, y)
    ens = load_model(m)
    assert ens.feature_names == ["a", "b", "c", "d"]
    assert ens.features[2].categories == tuple(names)
    Xp = probe_rows(ens, 4)
    Xp = Xp[
        (np.isnan(Xp[:, 2])) | ((Xp[:, 2] >= 0) & (Xp[:, 2] < 8) & (Xp[:, 2] == np.floor(Xp[:, 2])))
    ]
    assert_matches(ens, Xp)


def test_single_leaf_trees():
    X, y, _ = _data()
    b = lgb.train(
        dict(objective="binary", verbose=-1, num_leaves=4, min_gain_to_split=1e9),
        lgb.Dataset(X, y),
        3,
    )
    ens = lf.from_object(b)
    assert all(t.n_nodes == 1 for t in ens.trees)
    assert_matches(ens, probe_rows(ens, 4))
    # a single-leaf tree between split trees (spliced into the text by hand)
    text = _train("binary", rounds=3).model_to_string()
    head, rest = text.split("Tree=1\n", 1)
    rest = rest.split("Tree=2\n", 1)[1]
    head = (
        "\n".join(line for line in head.splitlines() if not line.startswith("tree_sizes=")) + "\n"
    )
    text = (
        head
        + "Tree=1\nnum_leaves=1\nnum_cat=0\nleaf_value=0.125\nis_linear=0\nshrinkage=1\n\n\nTree=2\n"
        + rest
    )
    ens2 = lf.from_text(text)
    assert [t.n_nodes == 1 for t in ens2.trees] == [False, True, False]
    assert_matches(ens2, probe_rows(ens2, 4))


def test_rejects_unsupported_objectives_and_bad_files(tmp_path):
    X, y, _ = _data(300)
    with pytest.raises(UnsupportedModelError):
        load_model(lgb.LGBMRanker(n_estimators=2, verbose=-1).fit(X, y, group=[300]))
    b = lgb.train(dict(objective="lambdarank", verbose=-1), lgb.Dataset(X, y, group=[300]), 2)
    p = tmp_path / "reg.txt"
    b.save_model(str(p))
    with pytest.raises(UnsupportedModelError, match="objective"):
        load_model(p)
    bad = tmp_path / "bad.txt"
    bad.write_text(
        "tree\nversion=v4\nnum_class=1\nobjective=binary sigmoid:1\nfeature_names=a\nmax_feature_idx=0\n"
        "Tree=0\nnum_leaves=2\nsplit_feature=3\nthreshold=0.5\ndecision_type=2\nleft_child=-1\n"
        "right_child=-2\nleaf_value=1 2\n\nend of trees\n"
    )
    with pytest.raises(InputError, match="tree 0"):
        load_model(bad, format="lightgbm")


def test_shipped_text_model_matches_predict(shared_dir):
    pd = pytest.importorskip("pandas")
    path = shared_dir / "formats" / "lightgbm_multiclass_or_binary.txt"
    ens = load_model(path)
    assert ens.n_classes == 2 and ens.n_features == 20 and ens.link == "logistic"
    df = pd.read_csv(shared_dir / "churn" / "train.csv")
    X = df.drop(columns="label").to_numpy(dtype=float)[:300]
    rows = [X]
    for t in ens.trees[:20]:
        for k in range(t.n_nodes):
            if t.feature[k] >= 0:
                r = X[:1].copy()
                r[0, t.feature[k]] = t.threshold[k]
                rows.append(r)
    nan = X[:20].copy()
    nan[:, ::3] = np.nan
    rows.append(nan)
    assert_matches(ens, np.concatenate(rows))


def test_shipped_text_model_check(shared_dir):
    import treesens

    path = shared_dir / "formats" / "lightgbm_multiclass_or_binary.txt"
    r = treesens.check(str(path), vary=["tenure"], gap=0.2, timeout=60)
    assert r.status == "sensitive" and r.validated, (r.status, r.error, r.message)
    assert r.outputs["x1"][1] >= 0.7 and r.outputs["x2"][1] <= 0.3


def test_churn_lgbm_classifier_check(shared_dir):
    pd = pytest.importorskip("pandas")
    import treesens

    df = pd.read_csv(shared_dir / "churn" / "train.csv")
    X, y = df.drop(columns="label"), df["label"].to_numpy()
    m = lgb.LGBMClassifier(n_estimators=30, max_depth=4, num_leaves=12, verbose=-1).fit(X, y)
    for f in ("tenure", "Contract"):
        r = treesens.check(m, vary=[f], gap=0.2, timeout=60)
        assert r.status == "sensitive" and r.validated, (f, r.status, r.error)
        p = m.predict_proba(pd.DataFrame([r.witness["x1"], r.witness["x2"]]))[:, 1]
        assert p[0] >= 0.7 and p[1] <= 0.3


def test_lightgbms_parse_warnings_go_to_stderr_so_json_stdout_stays_clean(tmp_path, capsys):
    import re

    from treesens.interfaces.cli.main import main

    X, y, _ = _data(200)
    params = {"objective": "binary", "verbose": 0, "num_leaves": 4}  # warnings on (global)
    booster = lgb.train(params, lgb.Dataset(X, y), 2)
    lines = booster.model_to_string().splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("threshold="))
    lines[i] = re.sub(r"=[^ ]+", "=1e400", lines[i], count=1)  # LightGBM warns: overflow
    path = tmp_path / "m.txt"
    path.write_text("\n".join(lines) + "\n")
    capsys.readouterr()  # what training printed
    main(["check", str(path), "--vary", "Column_0", "--gap", "0.1", "--json", "--timeout", "30"])
    out, err = capsys.readouterr()
    assert json.loads(out)["status"] in ("sensitive", "insensitive")
    assert "[LightGBM]" in err, (out, err)


def test_a_bound_between_two_category_codes_leaves_no_value_lightgbm_would_truncate():
    # LightGBM predicts 4.5 as category 4 (it truncates a categorical value to an int)
    # where the IR's categorical test holds of whole codes only; a check reads a
    # categorical feature's whole codes alone, so no answer rests on 4.5
    from treesens.compiler.plan import Plan
    from treesens.compiler.query import FeatureBound, Gap, Query
    from treesens.driver import solve_query

    b = _train("binary")
    ens = load_model(b)
    row = _data()[0][:1].copy()
    at_4, at_4_5 = row.copy(), row.copy()
    at_4[0, 2], at_4_5[0, 2] = 4.0, 4.5
    assert b.predict(at_4_5, raw_score=True) == b.predict(at_4, raw_score=True)
    q = Query(
        vary=(ens.feature_names[2],),
        gap=Gap(0.1),
        bounds=(FeatureBound(ens.feature_names[2], 4.2, 4.8, (1,)),),
        plan=Plan(timeout=10),
    )
    with pytest.raises(InputError, match="no category code"):
        solve_query(ens, q)


def _linear_tree_dump(folder, objective: str):
    X = np.random.default_rng(0).uniform(size=(300, 3))
    y = X[:, 0] + 2 * X[:, 1] * X[:, 2]
    labels = (y > 1).astype(int) if objective == "binary" else y
    params = {"objective": objective, "linear_tree": True, "num_leaves": 4, "verbose": -1}
    path = folder / "linear.json"
    path.write_text(json.dumps(lgb.train(params, lgb.Dataset(X, labels), 2).dump_model()))
    return path


@pytest.mark.parametrize("objective", ["regression", "binary"])
def test_a_dump_json_of_linear_trees_is_refused_naming_linear_tree(objective, tmp_path):
    """dump_model() writes a linear leaf's leaf_const and leaf_coeff beside its
    leaf_value; the reader took leaf_value alone, and its replay (a booster rebuilt from
    that reading) agreed with it."""
    with pytest.raises(UnsupportedModelError, match=r"linear trees \(linear_tree=true\)"):
        load_model(_linear_tree_dump(tmp_path, objective))


def test_the_command_line_refuses_a_linear_tree_dump_in_one_line(tmp_path):
    r = treesens_here(
        "check",
        str(_linear_tree_dump(tmp_path, "regression")),
        "--vary",
        "Column_0",
        "--delta",
        "0.1",
    )
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "linear_tree=false" in lines[0], r.stderr


def test_a_model_of_a_custom_objective_is_refused_naming_it(tmp_path):
    """Its file has no objective line; the refusal said "objective '' is not one
    treesens supports"."""
    X = np.random.default_rng(0).uniform(size=(200, 2))
    y = (X[:, 0] > 0.5).astype(float)

    def logistic(raw, data):
        p = 1 / (1 + np.exp(-raw))
        return p - data.get_label(), p * (1 - p)

    params = {"objective": logistic, "num_leaves": 4, "verbose": -1}
    lgb.train(params, lgb.Dataset(X, y), 2).save_model(tmp_path / "custom.txt")
    with pytest.raises(UnsupportedModelError, match="names no objective .*custom one"):
        load_model(tmp_path / "custom.txt")
