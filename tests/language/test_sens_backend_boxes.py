"""``backend boxes`` in a .sens file: the box search is named as a backend there too, as
on the command line (docs/backends.md, "--backend boxes")."""

from __future__ import annotations

from pathlib import Path

from treesens.interfaces.sens_run import run_file

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_a_query_with_backend_boxes_is_answered_by_the_box_search(tmp_path):
    p = tmp_path / "boxes.sens"
    p.write_text(
        f'model "{EXAMPLES / "breast_cancer_xgb.json"}"\n'
        f'features from "{EXAMPLES / "breast_cancer_details.csv"}"\n'
        "query q {\n  vary mean_texture\n  gap 0.2\n  timeout 30s\n  backend boxes\n}\n"
    )
    [r] = run_file(p)
    assert (r.backend, r.status in ("sensitive", "insensitive")) == ("boxes", True)
