"""An XGBoost dump of a booster with feature names splits on those names, which a dump
does not number: a .sens file's `features from` numbers them, as --details and
load_model(details=) do (the .sens file said "give a details file (--details)" though it
gave one)."""

from __future__ import annotations

import numpy as np
import pytest
import xgboost as xgb

from treesens.language import SensError, load_queries

NAMES = ("age", "income", "score")


@pytest.fixture
def named(tmp_path):
    """A booster with feature names, its JSON and text dumps, a details file naming the
    features at their indices, and the booster's own predict on a few rows."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] - X[:, 2] > 0).astype(int)
    params = {"max_depth": 3, "nthread": 1, "objective": "binary:logistic", "base_score": 0.5}
    booster = xgb.train(params, xgb.DMatrix(X, label=y, feature_names=list(NAMES)), 4)
    booster.dump_model(str(tmp_path / "named.json"), dump_format="json")
    booster.dump_model(str(tmp_path / "named.txt"))
    (tmp_path / "details.csv").write_text(
        "feature,name,lb,ub\n" + "".join(f"{i},{n},-3,3\n" for i, n in enumerate(NAMES))
    )
    rows = rng.normal(size=(40, 3))
    return tmp_path, rows, booster.predict(xgb.DMatrix(rows, feature_names=list(NAMES)))


def _sens(folder, model: str, features_from: bool):
    lines = [f'model "{model}"']
    if features_from:
        lines.append('features from "details.csv"')
    lines.append("query q {\n  vary age\n}")
    (folder / "q.sens").write_text("\n".join(lines) + "\n")
    return folder / "q.sens"


@pytest.mark.parametrize("dump", ["named.json", "named.txt"])
def test_a_named_dump_is_read_with_the_features_from_file_numbering_its_names(named, dump):
    folder, rows, expected = named
    ens = load_queries(_sens(folder, dump, features_from=True)).ensemble
    assert tuple(ens.feature_names) == NAMES
    assert np.allclose(ens.replayer.predict_proba(rows)[:, 1], expected, atol=1e-6)


def test_a_named_dump_without_features_from_asks_for_it_at_the_model_line(named):
    folder, _, _ = named
    with pytest.raises(SensError, match=r"q\.sens:1:7: .*in a \.sens file, `features from`"):
        load_queries(_sens(folder, "named.json", features_from=False))
