"""`gap max`: how sensitive, asked in a .sens query or sweep."""

from __future__ import annotations

from pathlib import Path

import pytest

import treesens
from treesens.interfaces.cli.main import main
from treesens.interfaces.sens_run import run_file
from treesens.language import format_sens, load_queries, parse

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
BC = EXAMPLES / "breast_cancer_xgb.json"
BC_DETAILS = EXAMPLES / "breast_cancer_details.csv"
ROWS = EXAMPLES / "breast_cancer_rows.csv"
WINE = EXAMPLES / "wine_xgb.json"
WINE_DETAILS = EXAMPLES / "wine_details.csv"


def _write(tmp_path, body: str, model=BC, details=BC_DETAILS) -> Path:
    path = tmp_path / "a.sens"
    path.write_text(f'model "{model}"\nfeatures from "{details}"\n{body}')
    return path


def test_gap_max_query_answers_what_the_api_max_gap_answers(tmp_path):
    path = _write(tmp_path, "query t {\n  vary mean_texture\n  gap max\n}\n")
    (res,) = run_file(path)
    api = treesens.max_gap(str(BC), ["mean_texture"], details=str(BC_DETAILS))
    assert res.max_gap["proven"] and api.max_gap["proven"]
    assert res.max_gap["lower"] == pytest.approx(api.max_gap["lower"], abs=1e-4)
    assert res.max_gap["tolerance"] == api.max_gap["tolerance"]


def test_gap_max_tolerance_reaches_every_query_of_a_sweep(tmp_path):
    body = "sweep s {\n  vary each of mean_texture, worst_radius\n  gap max tolerance 1e-3\n}\n"
    results = run_file(_write(tmp_path, body))
    assert [r.max_gap["tolerance"] for r in results] == [1e-3, 1e-3]


def test_gap_max_on_a_multiclass_model_asks_the_largest_ratio(tmp_path):
    body = "query p {\n  vary proline\n  classes 0 -> 1\n  gap max\n  timeout 60\n}\n"
    (res,) = run_file(_write(tmp_path, body, WINE, WINE_DETAILS))
    assert res.max_gap["kind"] == "ratio"
    assert res.max_gap["lower"] is None or res.max_gap["lower"] >= 1.0


def test_gap_max_round_trips_through_fmt():
    text = 'model "m.json"\nquery q {\n  vary a\n  gap max tolerance 0.001\n}\n'
    assert "gap max tolerance 0.001" in format_sens(parse(text))
    assert "  gap max\n" in format_sens(parse(text.replace(" tolerance 0.001", "")))


def test_a_gap_max_query_is_listed_as_one_query(tmp_path):
    sf = load_queries(_write(tmp_path, "query t {\n  vary mean_texture\n  gap max\n}\n"))
    assert [(q.name, q.kind) for q in sf.queries] == [("t", "max_gap")]


def test_a_tolerance_out_of_range_is_reported_at_its_place(tmp_path, capsys):
    path = _write(tmp_path, "query t {\n  vary mean_texture\n  gap max tolerance 0.7\n}\n")
    assert main(["run", str(path), "--list"]) == 2
    first = capsys.readouterr().err.splitlines()[0]
    assert first.startswith(f"{path}:5:3: ") and "tolerance 0.7" in first


def test_an_audit_refuses_gap_max(tmp_path, capsys):
    body = f'audit r {{\n  data "{ROWS}"\n  vary worst_texture\n  gap max\n}}\n'
    path = _write(tmp_path, body)
    assert main(["run", str(path), "--list"]) == 2
    assert "'gap max' is for queries and sweeps" in capsys.readouterr().err


def test_gap_max_on_a_multiclass_model_with_a_relation_is_answered_by_the_box_search(tmp_path):
    body = "query p {\n  vary proline\n  classes 0 -> 1\n  gap max\n"
    body += "  where x1.proline <= x2.proline\n  timeout 60\n}\n"
    (res,) = run_file(_write(tmp_path, body, WINE, WINE_DETAILS))
    assert res.max_gap["kind"] == "ratio" and res.max_gap["method"] == "boxes"
    w = res.witness_arrays
    assert w is None or w.x1[12] <= w.x2[12]


def _coded_softmax_file(folder: Path) -> Path:
    """The 3-class LightGBM model of an array whose column 0 holds codes 0..11 no name
    declares (test_uncovered_combinations.coded_softmax), saved to ``folder``."""
    from treesens.tests.campaigns.test_uncovered_combinations import coded_softmax_booster

    booster = coded_softmax_booster()
    path = folder / "coded.txt"
    booster.save_model(str(path))
    return path


def test_gap_max_on_a_multiclass_model_refused_is_an_error_at_its_line_naming_why(tmp_path, capsys):
    # codes 13 and 14 are in no split's list: the box search takes no such bound
    body = "query p {\n  vary Column_0\n  classes 0 -> 1\n  gap max\n"
    body += "  where x1.Column_0 in [12.5, 14]\n}\n"
    path = tmp_path / "a.sens"
    path.write_text(f'model "{_coded_softmax_file(tmp_path)}"\n{body}')
    assert main(["run", str(path), "--list"]) == 2
    first = capsys.readouterr().err.splitlines()[0]
    assert first.startswith(f"{path}:5:3: ") and "ask a ratio" in first
    assert "over category codes no split lists" in first


def test_a_multiclass_gap_max_refusal_is_one_sentence_without_nested_parentheses(tmp_path, capsys):
    body = "query p {\n  vary Column_0\n  classes 0 -> 1\n  gap max\n"
    body += "  where x1.Column_0 in [12.5, 14]\n}\n"
    path = tmp_path / "a.sens"
    path.write_text(f'model "{_coded_softmax_file(tmp_path)}"\n{body}')
    main(["run", str(path), "--list"])
    first = capsys.readouterr().err.splitlines()[0]
    depth = deepest = 0
    for ch in first:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        deepest = max(deepest, depth)
    assert deepest == 1, first


def test_gap_max_on_a_multiclass_model_with_a_bound_the_box_search_takes_is_answered(tmp_path):
    # a bound on a feature outside the varied set: read as that feature's domain
    body = "query p {\n  vary proline\n  classes 0 -> 1\n  gap max\n  where x1.alcohol <= 13\n"
    body += "  timeout 60\n}\n"
    (res,) = run_file(_write(tmp_path, body, WINE, WINE_DETAILS))
    assert res.max_gap["kind"] == "ratio" and res.max_gap["proven"]
