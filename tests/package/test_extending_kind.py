"""docs/extending.md, "Adding a query kind": its worked example runs as written.

The kind's module is read from the section's first code block and the usage block runs
on examples/breast_cancer_xgb.json; the kind's answers agree with enumerating the
eps-box around a row with the library's own predict, and a pass that is not written for
a kind refuses it in one line (or, optional, is skipped).
"""

from __future__ import annotations

import itertools
import re
import sys
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.compiler.errors import InputError
from treesens.compiler.kinds import kind_names, unregister_kind
from treesens.compiler.query import Query
from treesens.driver import solve_query
from treesens.frontends.data import dataset_for
from treesens.tests.oracle import feature_thresholds, interval_values

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "extending.md"
VARY = ("worst_texture", "worst_radius")


def _blocks() -> list[str]:
    text = DOC.read_text()
    start = text.index("## Adding a query kind\n")
    end = text.find("\n## ", start + 1)
    return re.findall(r"```python\n(.*?)```", text[start:end], re.S)


@pytest.fixture(scope="module")
def kind():
    """The example kind's module, imported (and its kind registered) for the tests."""
    module = types.ModuleType("robust_kind_example")
    sys.modules[module.__name__] = module
    try:
        exec(compile(_blocks()[0], "docs/extending.md:robust", "exec"), module.__dict__)
        yield module
    finally:
        unregister_kind("robust")
        del sys.modules[module.__name__]


@pytest.fixture(scope="module")
def model():
    return treesens.load_model(str(ROOT / "examples" / "breast_cancer_xgb.json"))


def _rows(model) -> pd.DataFrame:
    return pd.read_csv(ROOT / "examples" / "breast_cancer_rows.csv")[list(model.feature_names)]


def _query(x: np.ndarray, eps: float, decided: int) -> Query:
    return Query(
        vary=VARY,
        kind="robust",
        params=(("anchor", tuple(float(v) for v in x)), ("eps", eps), ("decision", decided)),
    )


def _flips_in_box(model, x: np.ndarray, eps: float, decided: int, gap: float = 0.2) -> bool:
    """Whether some x2 in the eps-box on VARY (x elsewhere) is decided otherwise with the
    gap: one value per threshold interval of each feature, clipped into the box."""
    ths = feature_thresholds(model)
    idx = [model.feature_names.index(n) for n in VARY]
    values = [
        sorted(
            {float(np.clip(v, x[f] - eps, x[f] + eps)) for v in interval_values(model, f, ths[f])}
        )
        for f in idx
    ]
    X = np.repeat(x[None, :], np.prod([len(v) for v in values]), axis=0)
    X[:, idx] = np.array(list(itertools.product(*values)))
    p = model.replayer.predict_proba(X)[:, 1]
    return bool((p <= 0.5 - gap).any() if decided == 1 else (p >= 0.5 + gap).any())


def test_the_usage_block_runs_as_written(kind, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    exec(compile(_blocks()[1], "docs/extending.md:usage", "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("1.0 insensitive") and lines[1].startswith("5.0 sensitive")


def test_the_example_kind_is_registered_by_its_module(kind):
    assert "robust" in kind_names()


@pytest.mark.parametrize("row", [40, 135, 157])
@pytest.mark.parametrize("eps", [1.0, 5.0, 20.0])
def test_robust_kind_agrees_with_enumerating_the_box(kind, model, row, eps):
    x = _rows(model).iloc[row].to_numpy(float)
    decided = int(model.replayer.predict_proba(x[None, :])[0, 1] >= 0.5)
    r = solve_query(model, _query(x, eps, decided))
    assert r.status == ("sensitive" if _flips_in_box(model, x, eps, decided) else "insensitive")
    if r.status == "sensitive":
        assert r.validated
        x2 = r.witness["x2"]
        for name in VARY:
            f = model.feature_names.index(name)
            assert abs(x2[name] - x[f]) <= eps
        assert all(r.witness["x1"][n] == x[f] for f, n in enumerate(model.feature_names))


def test_a_pass_not_written_for_a_kind_refuses_it_in_one_line(kind, model):
    """The data-aware passes take pair and change questions only."""
    x = _rows(model).iloc[40].to_numpy(float)
    q = _query(x, 5.0, 0).with_(
        data_aware="prob", options={"data": str(ROOT / "examples" / "breast_cancer_rows.csv")}
    )
    with pytest.raises(InputError, match="pass does not take robust queries"):
        solve_query(model, q, data=dataset_for(model, q))


def test_an_unknown_kind_is_one_input_error(model):
    with pytest.raises(InputError, match="unknown query kind 'nope'"):
        solve_query(model, Query(vary=VARY, kind="nope"))
