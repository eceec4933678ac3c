"""An audit's row certificates under a work budget per row (``work N`` in an audit
block, ``--work N``, ``audit(..., work=N)``) end on the boxes their search visits, as the
rows' own answers do, not on the seconds, which are only a net: the same contract gives
the same certificates on an idle and a loaded machine."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.interfaces.cli.main import main
from treesens.questions.audit import answer_blocks, make_spec, make_target
from treesens.questions.audit_certificates import certify_rows
from treesens.readers.data import load_data
from treesens.readers.load import load_model

ROWS = 30
WORK = 2  # boxes: most rows' anchored search closes in one, one needs four


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    """A small XGBoost model, its audit's lines on ``ROWS`` rows varying x1 and x3."""
    xgb = pytest.importorskip("xgboost")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    y = (2 * X[:, 0] + X[:, 1] + 0.5 * X[:, 3] > 0).astype(int)
    path = tmp_path_factory.mktemp("work_certs") / "model.json"
    xgb.XGBClassifier(n_estimators=30, max_depth=4).fit(X, y).save_model(path)
    ens = load_model(path)
    ds = load_data(pd.DataFrame(X[:ROWS], columns=ens.feature_names), ens)
    spec = make_spec(ens, ds, ["f1", "f3"], make_target(ens, 0.1))
    [(_, ans)] = list(answer_blocks(ens, ds, spec, np.arange(ROWS)))
    lines = [
        {"row": i, "status": "insensitive" if s == "not flippable" else s, "decision": d}
        for i, (s, d) in enumerate(zip(ans.status, ans.decision))
    ]
    return path, ens, spec, ds.X, lines


def test_a_row_certificate_ends_on_the_rows_work_budget_not_its_seconds(audited, tmp_path):
    path, ens, spec, X, lines = audited
    clocked = certify_rows(ens, spec, X, lines, tmp_path / "clock", path, 30.0)
    counted = certify_rows(ens, spec, X, lines, tmp_path / "work", path, 30.0, work=WORK)
    assert not any(clocked.values())
    assert any(f"work budget of {WORK} boxes" in why for why in counted.values())


def test_a_row_certificate_within_its_work_budget_is_the_one_the_clock_gives(audited, tmp_path):
    path, ens, spec, X, lines = audited
    clocked = certify_rows(ens, spec, X, lines, tmp_path / "clock", path, 30.0)
    counted = certify_rows(ens, spec, X, lines, tmp_path / "work", path, 30.0, work=10**6)
    assert counted == clocked and not any(clocked.values())


def test_the_python_audit_gives_its_work_budget_to_the_row_certificates(audited, tmp_path):
    path, ens, spec, X, lines = audited
    data = pd.DataFrame(X, columns=ens.feature_names)
    df = treesens.audit(path, data, ["f1", "f3"], gap=0.1, work=WORK, certificates=tmp_path)
    reasons = df.attrs["certificates"].values()
    assert any(f"work budget of {WORK} boxes" in why for why in reasons)


@pytest.fixture
def data_file(audited, tmp_path):
    path, ens, spec, X, lines = audited
    out = tmp_path / "rows.csv"
    pd.DataFrame(X, columns=ens.feature_names).to_csv(out, index=False)
    return out


def test_the_command_gives_its_work_budget_to_the_row_certificates(audited, data_file, capsys):
    path, certs = audited[0], data_file.parent / "certs"
    argv = ["audit", str(path), "--data", str(data_file), "--vary", "f1,f3", "--gap", "0.1"]
    assert main([*argv, "--work", str(WORK), "--certificates", str(certs)]) == 0
    assert f"work budget of {WORK} boxes" in capsys.readouterr().err


def test_an_audit_block_gives_its_work_budget_to_the_row_certificates(audited, data_file, capsys):
    path, certs = audited[0], data_file.parent / "certs"
    sens = data_file.parent / "c.sens"
    block = f'audit rows {{\n  data "{data_file}"\n  vary f1, f3\n  gap 0.1\n  work {WORK}\n'
    sens.write_text(f'model "{path}"\n{block}  expect audit flippable <= 100%\n}}\n')
    main(["test", str(sens), "--certificates", str(certs), "-v"])
    said = capsys.readouterr()
    assert f"work budget of {WORK} boxes" in said.out + said.err
