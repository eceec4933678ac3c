"""Data with missing values (issue 44, item 12): a column that holds NaN makes its
feature possibly missing, a kind from the data said in the model's source line; a
details file that declares the feature's ``missing`` wins; a model whose library's
predict refuses NaN is one clear error. Witnesses with NaN are replayed by the library,
and answers agree with the brute-force oracle, which takes NaN as one more value."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.compiler.audit import Target
from treesens.compiler.errors import InputError
from treesens.compiler.query import Gap
from treesens.questions.query_build import make_query
from treesens.tests.audit_oracle import brute_force_flippable
from treesens.tests.conftest import treesens_here
from treesens.tests.oracle import brute_force_sensitive

xgb = pytest.importorskip("xgboost")
lgb = pytest.importorskip("lightgbm")
sk_ensemble = pytest.importorskip("sklearn.ensemble")
sk_tree = pytest.importorskip("sklearn.tree")

FEATURES = ["a", "b", "c"]


def _frame(seed: int = 0, n: int = 300, nan_decides: bool = False) -> pd.DataFrame:
    """Rows with a fifth of column a missing; ``nan_decides``: half of it, and the label
    is whether a is missing (then only NaN against a number moves the prediction on a)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 10.0, size=(n, 3))
    gone = rng.random(n) < (0.5 if nan_decides else 0.2)
    y = gone.astype(int) if nan_decides else (X[:, 0] + X[:, 1] > 10.0).astype(int)
    X[gone, 0] = np.nan
    return pd.DataFrame(X, columns=FEATURES).assign(label=y)


TRAINERS = {
    "xgboost": lambda: xgb.XGBClassifier(n_estimators=4, max_depth=2, nthread=1),
    "lightgbm": lambda: lgb.LGBMClassifier(
        n_estimators=4, max_depth=2, num_leaves=4, learning_rate=0.5, verbose=-1
    ),
    "hist-boosting": lambda: sk_ensemble.HistGradientBoostingClassifier(
        max_iter=4, max_depth=2, learning_rate=0.5
    ),
    "decision-tree": lambda: sk_tree.DecisionTreeClassifier(max_depth=3, random_state=0),
    "random-forest": lambda: sk_ensemble.RandomForestClassifier(3, max_depth=2, random_state=0),
}


def _fit(name: str, df: pd.DataFrame):
    return TRAINERS[name]().fit(df[FEATURES], df["label"])


def test_a_column_holding_nan_makes_its_feature_possibly_missing():
    df = _frame()
    ens = treesens.load_model(_fit("xgboost", df), data=df)
    assert [f.may_be_missing for f in ens.features] == [True, False, False]


def test_the_model_source_names_the_features_the_data_made_possibly_missing():
    df = _frame()
    ens = treesens.load_model(_fit("xgboost", df), data=df)
    assert "possibly missing: a" in ens.source and "bounds and kinds from data" in ens.source


def test_without_bounds_from_the_data_the_source_still_names_them():
    df = _frame()
    ens = treesens.load_model(_fit("xgboost", df), data=df, bounds="none")
    assert ens.features[0].may_be_missing
    assert "possibly missing from data <DataFrame>: a" in ens.source


def test_a_details_file_declaring_the_feature_never_missing_wins():
    df = _frame()
    details = pd.DataFrame(
        {"feature": [0, 1, 2], "name": FEATURES, "lb": ["", "", ""], "ub": ["", "", ""]}
    ).assign(missing=["false", "", ""])
    with pytest.raises(InputError, match="declares the feature never missing"):
        treesens.load_model(_fit("xgboost", df), data=df, details=details)


def test_a_details_file_without_a_word_on_missing_lets_the_data_say():
    df = _frame()
    details = pd.DataFrame({"feature": [0, 1, 2], "name": FEATURES, "lb": [0, 0, 0]})
    ens = treesens.load_model(_fit("xgboost", df), data=df, details=details)
    assert ens.features[0].may_be_missing and "possibly missing from data" in ens.source


def test_a_model_whose_library_refuses_nan_is_one_clear_error():
    df = _frame()
    est = sk_ensemble.GradientBoostingClassifier(n_estimators=3).fit(
        df[FEATURES].fillna(0.0), df["label"]
    )
    with pytest.raises(
        InputError,
        match=r"column 'a', row \d+: missing value \(NaN; \d+ rows? in all\); this model cannot take",
    ):
        treesens.load_model(est, data=df)


def test_details_declaring_a_feature_missing_for_a_model_that_refuses_nan_is_one_clear_error():
    # was taken: "insensitive" over inputs the model cannot score, its certificate refused
    df = _frame()
    est = sk_ensemble.GradientBoostingClassifier(n_estimators=3).fit(
        df[FEATURES].fillna(0.0), df["label"]
    )
    details = pd.DataFrame(
        {"feature": [0, 1, 2], "name": FEATURES, "lb": 0, "ub": 10, "missing": [False, True, False]}
    )
    with pytest.raises(
        InputError, match=r"^<details DataFrame>:3: feature 'b' declared missing.*refuses NaN"
    ):
        treesens.load_model(est, details=details)


def test_details_declaring_a_feature_missing_for_a_model_that_takes_nan_are_taken():
    df = _frame()
    est = sk_ensemble.RandomForestClassifier(n_estimators=3).fit(df[FEATURES], df["label"])
    details = pd.DataFrame(
        {"feature": [0, 1, 2], "name": FEATURES, "lb": 0, "ub": 10, "missing": [False, True, False]}
    )
    assert treesens.load_model(est, details=details).features[1].may_be_missing


def test_cli_check_with_data_holding_nan_answers(tmp_path):
    df = _frame()
    _fit("xgboost", df).save_model(tmp_path / "m.json")
    df.to_csv(tmp_path / "rows.csv", index=False)
    r = treesens_here(
        "check", "m.json", "--data", "rows.csv", "--vary", "b", "--gap", "0.2", cwd=tmp_path
    )
    assert r.returncode == 0, r.stderr
    assert "possibly missing: a" in r.stderr and "SENSITIVE" in r.stdout


@pytest.mark.parametrize("name", sorted(TRAINERS))
def test_a_witness_with_nan_is_the_librarys_own_answer(name):
    """Here only NaN against a number moves the prediction on a: the pair must use it,
    and the library's predict of the reported inputs gives the reported outputs."""
    df = _frame(nan_decides=True)
    est = _fit(name, df)
    r = treesens.check(est, vary=["a"], gap=0.1, data=df, timeout=60)
    assert r.status == "sensitive" and r.validated
    assert None in (r.witness["x1"]["a"], r.witness["x2"]["a"])
    for x in ("x1", "x2"):
        row = [math.nan if v is None else v for v in r.witness[x].values()]
        got = est.predict_proba(pd.DataFrame([row], columns=FEATURES))[0]
        assert got.tolist() == pytest.approx(r.outputs[x], abs=1e-6)


def test_without_missing_values_the_same_model_is_insensitive_to_a():
    df = _frame(nan_decides=True)
    est = _fit("xgboost", df)
    clean = df.dropna()
    r = treesens.check(est, vary=["a"], gap=0.1, data=clean, timeout=60)
    assert r.status == "insensitive"


@pytest.mark.parametrize("name", ["xgboost", "lightgbm", "hist-boosting", "decision-tree"])
@pytest.mark.parametrize("seed", [0, 1])
def test_answers_with_missing_values_agree_with_brute_force(name, seed):
    df = _frame(seed=seed, nan_decides=seed == 1)
    ens = treesens.load_model(_fit(name, df), data=df)
    for f in FEATURES:
        for gap in (0.05, 0.2, 0.35):
            q = make_query([f], gap=gap)
            got = treesens.check(ens, vary=[f], gap=gap, timeout=60).status
            assert got == ("sensitive" if brute_force_sensitive(ens, q) else "insensitive")


def test_audit_of_rows_with_missing_values_agrees_with_brute_force():
    df = _frame(seed=2)
    ens = treesens.load_model(_fit("xgboost", df), data=df)
    rows = df.head(60)
    audited = treesens.audit(ens, rows, ["a"], gap=0.1)
    X = rows[FEATURES].to_numpy(dtype=float)
    expected = brute_force_flippable(ens, X, ["a"], Target(Gap(0.1)))
    assert (audited["status"] == "flippable").tolist() == expected
    assert any(expected) and np.isnan(X[:, 0]).any()


def _witness_with_nan():
    df = _frame(nan_decides=True)
    return treesens.check(_fit("xgboost", df), vary=["a"], gap=0.1, data=df, timeout=60)


def _witness_line(text: str, name: str) -> list[str]:
    return next(line.split() for line in text.splitlines() if line.split()[:1] == [name])


def test_a_missing_value_reads_missing_in_the_witness_table():
    r = _witness_with_nan()
    cells = _witness_line(str(r), "a")
    assert "missing" in cells[1:3] and "None" not in cells


def test_a_missing_value_reads_missing_in_the_html_witness_table():
    html = _witness_with_nan()._repr_html_()
    assert '<td style="text-align:right">missing</td>' in html and ">None<" not in html


def test_a_missing_value_stays_null_in_the_json():
    r = _witness_with_nan()
    assert None in (r.to_dict()["witness"]["x1"]["a"], r.to_dict()["witness"]["x2"]["a"])


def test_cli_witness_table_shows_a_missing_value_as_missing(tmp_path):
    df = _frame(nan_decides=True)
    _fit("xgboost", df).save_model(tmp_path / "m.json")
    df.to_csv(tmp_path / "rows.csv", index=False)
    r = treesens_here(
        "check", "m.json", "--data", "rows.csv", "--vary", "a", "--gap", "0.1", cwd=tmp_path
    )
    assert r.returncode == 0, r.stderr
    cells = _witness_line(r.stdout, "a")
    assert "missing" in cells[1:3] and "None" not in cells
