"""A witness table of hundreds of features (binary_mnist's 1,000-tree model: 665 rows
for a pair varying six pixels) buried the varied features a screen or more up. Past
``MAX_SHOWN_ROWS`` the console shows the varied and changed features and counts the
others, which hold x1's value in both inputs and stay whole in --json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from treesens.interfaces.cli.main import main
from treesens.views import result_view

MODEL = str(Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_xgb.json")
ASK = ["check", MODEL, "--vary", "worst_area", "--gap", "0.3"]  # a pair, 30 features


@pytest.fixture
def narrow(monkeypatch):
    monkeypatch.setattr(result_view, "MAX_SHOWN_ROWS", 10)


def test_a_wide_witness_table_shows_the_varied_features_and_counts_the_rest(narrow, capsys):
    main(ASK)
    out = capsys.readouterr().out
    assert "<- varied" in out and "mean_radius " not in out
    assert "other features, each the same in x1 and x2, not shown (30 in all: --json" in out


def test_the_json_of_a_wide_witness_keeps_every_feature(narrow, capsys):
    main([*ASK, "--json"])
    assert len(json.loads(capsys.readouterr().out)["witness"]["x1"]) == 30


def test_a_table_within_the_limit_shows_every_feature(capsys):
    main(ASK)
    out = capsys.readouterr().out
    assert "mean_radius " in out and "not shown" not in out
