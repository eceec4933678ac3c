"""docs/extending.md, "Adding a query kind": its worked example runs as written.

The kind's module is the section's first code block, written to a plugin file; the
Python block, the command and the `.sens` file run it on examples/breast_cancer_xgb.json,
each touching no file but the plugin's. The kind's answers agree with enumerating the
eps-box around a row with the library's own predict, and a pass that is not written for
a kind refuses it in one line (or, optional, is skipped).
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.compiler.errors import InputError
from treesens.compiler.kinds import kind_names, unregister_kind
from treesens.compiler.plan import Plan
from treesens.compiler.query import Query
from treesens.driver import solve_query
from treesens.interfaces.sens_run import run_file
from treesens.readers import plugins
from treesens.readers.data import dataset_for
from treesens.tests.oracle import feature_thresholds, interval_values

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "extending.md"
ROWS = ROOT / "examples" / "breast_cancer_rows.csv"
VARY = ("worst_texture", "worst_radius")


def _blocks(kind: str) -> list[str]:
    text = DOC.read_text()
    start = text.index("## Adding a query kind\n")
    end = text.find("\n## ", start + 1)
    return re.findall(rf"```{kind}\n(.*?)```", text[start:end], re.S)


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """A folder holding the plugin file and the examples, as a user's clone has them."""
    where = tmp_path_factory.mktemp("kind")
    (where / "robust_kind.py").write_text(_blocks("python")[0])
    (where / "examples").symlink_to(ROOT / "examples")
    return where


@pytest.fixture(scope="module")
def kind(folder):
    """The example kind, loaded as a plugin (and forgotten after these tests)."""
    path = folder / "robust_kind.py"
    try:
        yield treesens.load_plugin(path)
    finally:
        unregister_kind("robust")
        plugins._LOADED.pop(str(path.resolve()), None)


@pytest.fixture(scope="module")
def model():
    return treesens.load_model(str(ROOT / "examples" / "breast_cancer_xgb.json"))


def _rows(model) -> pd.DataFrame:
    return pd.read_csv(ROWS)[list(model.feature_names)]


def _query(x: np.ndarray, eps: float) -> Query:
    return Query(
        vary=VARY, kind="robust", params={"anchor": tuple(float(v) for v in x), "eps": eps}
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


def test_the_python_block_runs_as_written(kind, folder, capsys, monkeypatch):
    monkeypatch.chdir(folder)
    exec(compile(_blocks("python")[1], "docs/extending.md:usage", "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("1.0 insensitive") and lines[1].startswith("5.0 sensitive")


def test_the_command_runs_the_kind_from_its_plugin_file(folder):
    command = _blocks("bash")[0].replace("\\\n", " ").split()
    assert command[0] == "treesens"
    main = [sys.executable, "-m", "treesens.interfaces.cli.main"]
    p = subprocess.run(main + command[1:], cwd=folder, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["status"] == "sensitive" and r["validated"]


def test_the_sens_file_runs_the_kind_from_its_plugin_line(kind, folder):
    path = folder / "robust.sens"
    path.write_text(_blocks("sens")[0])
    (r,) = run_file(path)
    assert (r.query, r.status, r.validated) == ("row_40", "sensitive", True)


def test_the_example_kind_is_registered_by_its_plugin(kind):
    assert "robust" in kind_names()


def test_a_kind_parameter_it_does_not_take_is_one_input_error(kind, model):
    with pytest.raises(InputError, match="the robust kind takes no parameter 'epsilon'"):
        treesens.check(model, list(VARY), kind="robust", params={"epsilon": 1.0})


@pytest.mark.parametrize("row", [40, 135, 157])
@pytest.mark.parametrize("eps", [1.0, 5.0, 20.0])
def test_robust_kind_agrees_with_enumerating_the_box(kind, model, row, eps):
    x = _rows(model).iloc[row].to_numpy(float)
    decided = int(model.replayer.predict_proba(x[None, :])[0, 1] >= 0.5)
    r = solve_query(model, _query(x, eps))
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
    q = _query(x, 5.0).planned(data_aware="prob", options={"data": str(ROWS)})
    with pytest.raises(InputError, match="pass does not take robust queries"):
        solve_query(model, q, data=dataset_for(model, q))


def test_an_unknown_kind_is_one_input_error(model):
    with pytest.raises(InputError, match="unknown query kind 'nope'"):
        solve_query(model, Query(vary=VARY, kind="nope"))


def test_an_unknown_kind_named_to_the_api_is_one_input_error(model):
    with pytest.raises(InputError, match="unknown query kind 'nope'"):
        treesens.check(model, list(VARY), kind="nope")


def test_a_plan_is_apart_from_its_question():
    q = Query(vary=VARY, plan=Plan(timeout=5.0))
    assert q.question == Query(vary=VARY).question and q.plan.timeout == 5.0
