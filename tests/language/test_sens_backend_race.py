"""A race on a .sens file's backend line, written as ``--backend`` and compare's
``--backends`` write it: ``race:NAME+NAME`` (the line's commas separate the backends)."""

from __future__ import annotations

from pathlib import Path

import pytest

from treesens.backends.registry import available
from treesens.interfaces.sens_run import run_file

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.skipif(not available("highs"), reason="highs not installed")
def test_a_race_beside_a_backend_is_one_more_run_of_the_query_answered_by_its_winner(tmp_path):
    p = tmp_path / "race.sens"
    p.write_text(
        f'model "{EXAMPLES / "breast_cancer_xgb.json"}"\n'
        f'features from "{EXAMPLES / "breast_cancer_details.csv"}"\n'
        "query q {\n  vary mean_texture\n  timeout 30s\n  backend cpsat, race:cpsat+highs\n}\n"
    )
    plain, race = run_file(p)
    assert (plain.query, race.query) == ("q@cpsat", "q@race:cpsat+highs")
    assert sorted(race.stats["race"]) == ["cpsat", "highs"]
    assert race.status == plain.status
