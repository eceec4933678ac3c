"""The ``audit`` block of .sens: it parses and round-trips through fmt, bad blocks are
reported at FILE:LINE:COL with exit 2, and `treesens run` answers it with the same code
(and the same lines and summary) as `treesens audit`. Uses the models in examples/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from treesens.interfaces.cli.main import main
from treesens.interfaces.sens_run import run_file
from treesens.language import AuditBlock, format_sens, load_queries, parse
from treesens.tests.conftest import json_lines, treesens_here

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
BC = EXAMPLES / "breast_cancer_xgb.json"
BC_DETAILS = EXAMPLES / "breast_cancer_details.csv"
ROWS = EXAMPLES / "breast_cancer_rows.csv"
WINE = EXAMPLES / "wine_xgb.json"
WINE_DETAILS = EXAMPLES / "wine_details.csv"


def _bc(body: str) -> str:
    return f'model "{BC}"\nfeatures from "{BC_DETAILS}"\n{body}'


def _write(tmp_path, text: str, name: str = "a.sens") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


AUDIT = f'audit rows {{\n  data "{ROWS}"\n  vary worst_texture\n  gap 0.1\n  limit 40\n}}\n'


def test_audit_block_parses_with_every_setting():
    text = _bc(
        "audit rows {\n"
        '  data "rows.csv" label label\n'
        "  vary worst_texture, worst_radius\n"
        "  gap margin 0.4\n"
        "  timeout 30s\n"
        "  jobs 2\n"
        "  by label\n"
        "  limit 100\n"
        '  out "rows.jsonl"\n'
        "}\n"
    )
    [blk] = [it for it in parse(text).items if isinstance(it, AuditBlock)]
    assert blk.name.text == "rows"
    assert len(blk.body) == 8


def test_audit_block_round_trips_through_fmt():
    text = _bc(
        '# rows\naudit  rows {  data "r.csv"\n vary a,b  # two\n gap 0.1\n by  a\n limit 3\n'
        ' out "o.jsonl"\n}\n'
    )
    ast = parse(text)
    canon = format_sens(ast)
    assert parse(canon) == ast
    assert format_sens(parse(canon)) == canon
    assert "audit rows {\n" in canon and '  out "o.jsonl"\n' in canon


@pytest.mark.parametrize(
    "body, where, message",
    [
        ("audit r {\n  vary a\n  backend cpsat\n}\n", "5:3", "'backend' is not an audit setting"),
        ("audit r {\n  vary all\n}\n", "4:3", "an audit varies a list of features"),
        ("query q {\n  vary a\n  by a\n}\n", "5:3", "'by' is an audit setting"),
        ("audit r {\n  vary a\n  limit 0\n}\n", "5:3", "limit must be at least 1"),
        ("audit r {\n  vary a\n  where a < 3\n}\n", "5:3", "'where' is not an audit setting"),
        ("audit r {\n  vary a\n  limit 2\n  limit 3\n}\n", "6:3", "'limit' is set twice"),
        ("audit r {\n  gap 0.1\n}\n", "3:7", "audit 'r' has no 'vary'"),
        ('query q {\n  vary a\n  data "x.csv"\n}\n', "5:3", "names the rows of an audit"),
    ],
)
def test_bad_audit_block_is_reported_at_its_place(tmp_path, capsys, body, where, message):
    path = _write(tmp_path, _bc(body))
    assert main(["run", str(path), "--list"]) == 2
    first = capsys.readouterr().err.splitlines()[0]
    assert first.startswith(f"{path}:{where}: ") and message in first


@pytest.mark.parametrize(
    "body, where, message",
    [
        (f'audit r {{\n  data "{ROWS}"\n  vary worst_textur\n}}\n', "5:8", "unknown feature"),
        ('audit r {\n  data "nope.csv"\n  vary worst_texture\n}\n', "4:8", "data file not found"),
        ("audit r {\n  vary worst_texture\n}\n", "3:7", "needs rows"),
        (f'audit r {{\n  data "{ROWS}"\n  vary worst_texture\n  gap 0.6\n}}\n', "6:3", "gap 0.6"),
        (f'audit r {{\n  data "{ROWS}"\n  vary worst_texture\n  by nosuch\n}}\n', "6:6", "by"),
        (
            f'audit r {{\n  data "{ROWS}"\n  vary worst_texture\n  classes any -> 1\n}}\n',
            "6:3",
            "the model is binary",
        ),
    ],
)
def test_audit_block_problems_found_with_the_model_are_reported_at_their_place(
    tmp_path, capsys, body, where, message
):
    path = _write(tmp_path, _bc(body))
    assert main(["run", str(path), "--list"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"{path}:{where}: ") and message in err[0]
    assert err[-1].strip() == "^"


def test_multiclass_audit_names_x2_class_as_any_to_c(tmp_path, capsys):
    body = "\naudit r {\n  vary alcohol\n  classes 1 -> 2\n}\n"
    path = _write(tmp_path, f'model "{WINE}"\nfeatures from "{WINE_DETAILS}"{body}')
    assert main(["run", str(path), "--list"]) == 2
    assert "write classes any -> 2" in capsys.readouterr().err


def test_run_prints_the_summary_of_treesens_audit(tmp_path):
    path = _write(tmp_path, _bc(AUDIT))
    p = treesens_here("run", path)
    assert p.returncode == 0, p.stderr
    cli = treesens_here(
        "audit",
        BC,
        "--details",
        BC_DETAILS,
        "--data",
        ROWS,
        "--vary",
        "worst_texture",
        "--gap",
        "0.1",
        "--limit",
        "40",
    )
    assert p.stdout.splitlines()[1:] == cli.stdout.splitlines()[1:]  # the table
    assert p.stdout.startswith("audit of ")


def test_a_file_of_audits_only_ends_with_a_done_line_counting_them(tmp_path):
    p = treesens_here("run", _write(tmp_path, _bc(AUDIT)))
    assert p.returncode == 0, p.stderr
    assert p.stderr.splitlines()[-1].startswith("done: 1 audit (")


def test_run_json_prints_the_row_lines_of_treesens_audit(tmp_path):
    path = _write(tmp_path, _bc(AUDIT))
    got = json_lines(treesens_here("run", path, "--json").stdout)
    cli = treesens_here(
        "audit",
        BC,
        "--details",
        BC_DETAILS,
        "--data",
        ROWS,
        "--vary",
        "worst_texture",
        "--gap",
        "0.1",
        "--limit",
        "40",
        "--json",
    )
    # the same answers; the model's source and the input files are written as each
    # frontend was given them
    drop = lambda d: {k: v for k, v in d.items() if k not in ("time", "model", "inputs")}  # noqa: E731
    assert [drop(d) for d in got] == [drop(d) for d in json_lines(cli.stdout)]


def test_run_query_selects_one_audit(tmp_path):
    path = _write(tmp_path, _bc("query q {\n  vary worst_texture\n}\n" + AUDIT))
    lines = json_lines(treesens_here("run", path, "--json", "--query", "rows").stdout)
    assert [d["row"] for d in lines] == list(range(40))


def test_out_file_is_resumed_by_a_second_run(tmp_path):
    body = AUDIT.replace("  limit 40\n", '  limit 40\n  out "rows.jsonl"\n')
    path = _write(tmp_path, _bc(body))
    sf = load_queries(path)
    first = run_file(path)
    assert first == [] and (tmp_path / "rows.jsonl").exists()
    text = (tmp_path / "rows.jsonl").read_text()
    assert len(text.splitlines()) == 40
    seen = {}
    run_file(path, on_audit=lambda plan, lines, s: seen.update({plan.name: lines}))
    assert (tmp_path / "rows.jsonl").read_text() == text  # nothing answered twice
    assert [d["row"] for d in seen["rows"]] == list(range(40))
    assert sf.audits["rows"].run.resume == str(tmp_path / "rows.jsonl")


def test_out_file_of_another_audit_is_refused(tmp_path, capsys):
    body = AUDIT.replace("  limit 40\n", '  limit 5\n  out "rows.jsonl"\n')
    path = _write(tmp_path, _bc(body))
    assert main(["run", str(path)]) == 0
    path.write_text(_bc(body.replace("gap 0.1", "gap 0.2")))
    assert main(["run", str(path)]) == 2
    assert "holds the answers of another audit" in capsys.readouterr().err


def test_jobs_in_defaults_runs_the_audit_on_two_workers(tmp_path):
    path = _write(tmp_path, _bc("defaults {\n  jobs 2\n}\n" + AUDIT))
    sf = load_queries(path)
    assert sf.audits["rows"].run.jobs == 2
    seen = {}
    run_file(path, on_audit=lambda plan, lines, s: seen.update({plan.name: lines}))
    one = json_lines(treesens_here("run", path, "--json", "--jobs", "1").stdout)
    key = lambda d: (d["row"], d["status"])  # noqa: E731
    assert sorted(map(key, seen["rows"])) == sorted(map(key, one))


def test_audit_block_takes_the_file_data_line_when_it_names_none(tmp_path):
    text = _bc(f'data "{ROWS}"\naudit rows {{\n  vary worst_texture\n  limit 3\n}}\n')
    sf = load_queries(_write(tmp_path, text))
    plan = sf.audits["rows"]
    assert plan.run.n_rows == 3 and plan.label == "label"
    assert json.loads(json.dumps(plan.listing())).startswith("rows\taudit")


def test_out_file_of_the_same_audit_on_other_rows_is_refused(tmp_path, capsys):
    """The block's data file edited between runs: its row indices mean other rows."""
    rows = tmp_path / "rows.csv"
    lines = ROWS.read_text().splitlines()
    rows.write_text("\n".join(lines) + "\n")
    body = AUDIT.replace(str(ROWS), str(rows)).replace("limit 40", 'limit 5\n  out "o.jsonl"')
    path = _write(tmp_path, _bc(body))
    assert main(["run", str(path)]) == 0
    rows.write_text("\n".join([lines[0], *lines[:0:-1]]) + "\n")  # the rows reversed
    assert main(["run", str(path)]) == 2
    assert "(row 0: other data (" in capsys.readouterr().err


def test_run_notes_out_file_rows_answered_again_for_want_of_a_record(tmp_path, capsys):
    body = AUDIT.replace("  limit 40\n", '  limit 5\n  out "o.jsonl"\n')
    path = _write(tmp_path, _bc(body))
    assert main(["run", str(path)]) == 0
    out = tmp_path / "o.jsonl"
    old = [json.loads(x) for x in out.read_text().splitlines()]
    for d in old:
        del d["stats"]["asked"]
    out.write_text("".join(json.dumps(d) + "\n" for d in old))
    capsys.readouterr()
    assert main(["run", str(path)]) == 0
    assert "5 rows' lines record no model and data fingerprint" in capsys.readouterr().err
    assert len(out.read_text().splitlines()) == 10
