"""``where x1.race != x2.race``: the two inputs take different categories."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from treesens.answers.result import INSENSITIVE, SENSITIVE
from treesens.interfaces.sens_run import run_query
from treesens.language import SensError, load_queries

GAP = 0.1
RACES, AGES, HOURS = ["A", "B", "C"], range(0, 10), range(0, 6)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    from xgboost import XGBClassifier

    d = tmp_path_factory.mktemp("ne")
    rng = np.random.default_rng(5)
    n = 600
    df = pd.DataFrame(
        {
            "race": rng.choice(RACES, n),
            "age": rng.integers(0, 10, n),
            "hours": rng.integers(0, 6, n),
        }
    )
    score = (df.race == "B") * 1.2 + 0.2 * df.age - 0.3 * df.hours + rng.normal(0, 0.5, n)
    X = pd.get_dummies(df, dtype=float)
    model = XGBClassifier(n_estimators=10, max_depth=3, n_jobs=1).fit(X, score > 1.0)
    model.save_model(d / "m.json")
    grid = pd.DataFrame(list(itertools.product(RACES, AGES, HOURS)), columns=df.columns)
    pd.get_dummies(grid, dtype=float).to_csv(d / "grid.csv", index=False)
    p = model.predict_proba(pd.get_dummies(grid, dtype=float)[X.columns])[:, 1]
    return d, grid.assign(p=p)


def _run(d, where: str):
    (d / "q.sens").write_text(
        f'model "m.json"\ndata "grid.csv"\ngroups infer\n'
        f"query q {{ vary race, age  gap {GAP}  where {where} }}\n"
    )
    sf = load_queries(d / "q.sens")
    return run_query(sf, sf.queries[0])


def _brute_force(grid: pd.DataFrame, same_race: bool) -> bool:
    for _, g in grid.groupby("hours"):
        high = g[g.p >= 0.5 + GAP]
        low = g[g.p <= 0.5 - GAP]
        for r1, r2 in itertools.product(set(high.race), set(low.race)):
            if (r1 == r2) == same_race:
                return True
    return False


@pytest.mark.parametrize("op", ["!=", "=="])
def test_a_race_relation_agrees_with_enumerating_the_users_space(files, op):
    d, grid = files
    res = _run(d, f"x1.race {op} x2.race")
    expected = _brute_force(grid, same_race=op == "==")
    assert res.status == (SENSITIVE if expected else INSENSITIVE)
    if res.status == SENSITIVE:
        x1, x2 = res.witness["x1"], res.witness["x2"]
        assert (x1["race"] != x2["race"]) == (op == "!=")
        assert res.validated


def test_not_equal_on_a_numeric_feature_is_an_error_at_its_place(files):
    d, _ = files
    with pytest.raises(
        SensError, match=r"q.sens:4:\d+: x1.age != x2.age: .*categorical features only"
    ):
        _run(d, "x1.age != x2.age")


def test_not_equal_to_a_value_is_an_error_at_its_place(files):
    d, _ = files
    with pytest.raises(SensError, match=r"q.sens:4:.*'!=' compares a feature between x1 and x2"):
        _run(d, 'x1.race != "A"')
