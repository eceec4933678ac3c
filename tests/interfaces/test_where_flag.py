"""``--where CONSTRAINT`` on the command line: the constraints a .sens query's where clause
writes, read by the language's parser, reach check, sweep and max gap; a mistake in one
is one line naming it, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from treesens.backends.registry import available
from treesens.interfaces.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MODEL = str(EXAMPLES / "breast_cancer_xgb.json")

CLAUSES = [
    "x1.mean_radius <= 12",
    "x1.mean_texture <= x2.mean_texture",
    "10 <= mean_radius < 15 and x2.worst_area > 600",
    "mean_radius in [10, 15]",
    "x1.mean_texture >= x2.mean_texture and mean_radius == 12",
]


def _flag_query(args: list[str]):
    """The query ``treesens check MODEL ARGS`` asks (the CLI's own flag reading)."""
    from treesens.interfaces.cli.common import load_from_args, query_from_args
    from treesens.interfaces.cli.main import build_parser

    ns = build_parser().parse_args(["check", MODEL, *args])
    return query_from_args(ns, load_from_args(ns))


def _sens_query(tmp_path: Path, where: str):
    from treesens.language import load_queries

    f = tmp_path / "q.sens"
    f.write_text(f'model "{MODEL}"\nquery q {{\n  vary mean_texture\n  where {where}\n}}\n')
    (q,) = load_queries(f).select("q")
    return q


@pytest.mark.parametrize("where", CLAUSES)
def test_a_where_flag_asks_the_constraints_the_sens_where_clause_does(tmp_path, where):
    flag = _flag_query(["--vary", "mean_texture", "--where", where])
    sens = _sens_query(tmp_path, where)
    assert (flag.bounds, flag.relations) == (sens.bounds, sens.relations)


def test_several_where_flags_add_up_as_one_clause_joined_by_and(tmp_path):
    flag = _flag_query(["--vary", "mean_texture", "--where", CLAUSES[0], "--where", CLAUSES[1]])
    sens = _sens_query(tmp_path, f"{CLAUSES[0]} and {CLAUSES[1]}")
    assert (flag.bounds, flag.relations) == (sens.bounds, sens.relations)


def _answer(capsys, args: list[str]) -> dict:
    assert main([*args, "--json"]) in (0, 1)
    return json.loads(capsys.readouterr().out.splitlines()[-1])


def test_a_check_with_where_answers_as_the_sens_query_with_it(capsys, tmp_path):
    base = ["check", MODEL, "--vary", "mean_texture", "--gap", "0.2", "--timeout", "30"]
    free = _answer(capsys, base)
    bounded = _answer(capsys, [*base, "--where", "x2.mean_texture <= 12"])
    f = tmp_path / "q.sens"
    f.write_text(
        f'model "{MODEL}"\nquery q {{\n  vary mean_texture\n  gap 0.2\n  timeout 30s\n'
        "  where x2.mean_texture <= 12\n}\n"
    )
    from_file = _answer(capsys, ["run", str(f)])
    assert free["status"] == "sensitive" and free["witness"]["x2"]["mean_texture"] > 12
    assert bounded["status"] == from_file["status"]
    if bounded["witness"] is not None:
        assert bounded["witness"]["x2"]["mean_texture"] <= 12


def test_a_max_gap_with_a_where_relation_is_directional(capsys):
    args = ["check", MODEL, "--vary", "mean_texture", "--max-gap", "--timeout", "60"]
    r = _answer(capsys, [*args, "--where", "x1.mean_texture <= x2.mean_texture"])
    assert r["max_gap"] is not None
    assert any(
        "a relation between the inputs makes the max gap directional" in n for n in r["notes"]
    )
    x1, x2 = r["witness"]["x1"]["mean_texture"], r["witness"]["x2"]["mean_texture"]
    assert x1 <= x2


def test_a_sweep_leaves_out_the_features_a_where_flag_holds_to_one_value(capsys):
    args = ["sweep", MODEL, "--where", "mean_radius == 12", "--subsets", "1", "--timeout", "10"]
    assert main([*args, "--json", "--table", "none"]) in (0, 1)
    out, err = capsys.readouterr()
    varied = [json.loads(ln)["features"] for ln in out.splitlines()]
    assert ["mean_radius"] not in varied and len(varied) == 29
    assert "left out (the --where constraints hold them to one value" in err


@pytest.mark.parametrize(
    "where, says",
    [
        ("x1.mean_textur <= 12", "unknown feature 'mean_textur' (did you mean 'mean_texture'"),
        ("x1.mean_texture <=", "the constraints end early"),
        ("x3.mean_texture <= 12", "unknown input 'x3'"),
        ("mean_texture <= 12 } query z { vary mean_radius", "give constraints only"),
        ("", "give one line of constraints"),
        ("x1.mean_radius < x2.mean_radius", "'mean_radius' is not varied"),
        ("mean_texture == 15", "x1 and x2 cannot differ"),
        ("mean_radius in [15, 10]", "empty range"),
        ('mean_radius == "big"', "give a number"),
    ],
)
def test_a_bad_where_flag_is_one_line_naming_it_and_exit_2(capsys, where, says):
    assert main(["check", MODEL, "--vary", "mean_texture", "--where", where]) == 2
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"treesens: error: --where {where!r}: ")
    assert says in lines[0]


def test_where_flags_that_contradict_each_other_are_one_line(capsys):
    args = ["--where", "mean_radius < 10", "--where", "mean_radius > 12"]
    assert main(["check", MODEL, "--vary", "mean_texture", *args]) == 2
    (line,) = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert "--where 'mean_radius < 10 and mean_radius > 12'" in line and "leave no value" in line


def test_a_where_flag_with_a_sens_file_is_refused_there(capsys):
    sens = str(EXAMPLES / "breast_cancer.sens")
    assert main(["compare", sens, "--where", "mean_radius <= 12"]) == 2
    assert "--where is for a model file" in capsys.readouterr().err


def test_not_equal_on_a_numeric_feature_is_one_line_before_loading_the_line(capsys):
    assert (
        main(
            [
                "check",
                MODEL,
                "--vary",
                "mean_texture",
                "--where",
                "x1.mean_texture != x2.mean_texture",
            ]
        )
        == 2
    )
    (line,) = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert "'!=' compares categorical features only ('mean_texture' is real)" in line


# ---- the constraints said where the answer says its domain --------------------------

INSENSITIVE_ARGS = ["--vary", "mean_texture", "--gap", "0.45", "--timeout", "60"]


def test_a_box_search_proof_says_the_where_constraints_as_written(capsys):
    args = ["--where", "x1.mean_radius <=12", "--where", "mean_area in [200, 900]"]
    r = _answer(capsys, ["check", MODEL, *INSENSITIVE_ARGS, *args])
    assert r["status"] == "insensitive"
    assert (
        "within the declared bounds where x1.mean_radius <=12 and mean_area in [200, 900] "
        "meets the gap" in r["message"]
    )


# found without importing highspy: imported into the test process, it makes a later
# in-process import of ortools fail (tests/backends/test_cpsat_guide_row.py)
@pytest.mark.skipif(not available("highs"), reason="highspy not installed")
def test_a_solvers_proof_says_the_where_constraints_as_written(capsys):
    solver = ["--backend", "highs", "--no-box-search", "--no-heuristic"]
    r = _answer(
        capsys, ["check", MODEL, *INSENSITIVE_ARGS, *solver, "--where", "x1.mean_radius <= 12"]
    )
    assert r["status"] == "insensitive"
    assert "no pair within the declared bounds where x1.mean_radius <= 12 meets" in r["message"]


def test_a_sens_proof_says_its_where_clause_and_fixes_as_the_file_writes_them(capsys, tmp_path):
    f = tmp_path / "q.sens"
    f.write_text(
        f'model "{MODEL}"\ndefaults {{\n  where mean_area in [200,900]\n}}\n'
        "query q {\n  vary mean_texture\n  gap 0.45\n  fix x1.mean_radius = 11\n"
        "  where x1.mean_texture <= x2.mean_texture and worst_area > 300\n}\n"
    )
    r = _answer(capsys, ["run", str(f)])
    assert r["status"] == "insensitive"
    assert (
        "where mean_area in [200,900] and x1.mean_radius = 11 and x1.mean_texture <= "
        "x2.mean_texture and worst_area > 300 meets" in r["message"]
    )


def test_a_sens_constraint_over_two_lines_is_said_as_the_file_writes_it(capsys, tmp_path):
    f = tmp_path / "q.sens"
    f.write_text(
        f'model "{MODEL}"\nquery q {{\n  vary mean_texture\n  gap 0.45\n'
        "  where mean_area in [200,  # the smallest\n     900.0] and x1.mean_radius <=12\n}\n"
    )
    r = _answer(capsys, ["run", str(f)])
    assert r["where"] == ["mean_area in [200, 900.0]", "x1.mean_radius <=12"]
    assert "where mean_area in [200, 900.0] and x1.mean_radius <=12 meets" in r["message"]


def test_emit_header_says_the_where_constraints_as_written(capsys):
    args = ["emit", MODEL, "--vary", "mean_texture", "--format", "lp"]
    assert main([*args, "--where", "x1.mean_radius <= 12"]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert "vary mean_texture, gap 0.2 where x1.mean_radius <= 12; model" in header


# ---- the Python API's where= keyword --------------------------------------------------


@pytest.mark.parametrize("where", CLAUSES)
def test_the_api_where_keyword_asks_the_constraints_the_flag_does(where):
    from treesens.interfaces.api import query_of

    flag = _flag_query(["--vary", "mean_texture", "--where", where])
    _, q, _ = query_of(MODEL, ["mean_texture"], "", {"where": where}, "check")
    assert (q.bounds, q.relations) == (flag.bounds, flag.relations)


def test_a_where_keyword_list_asks_what_several_flags_do():
    from treesens.interfaces.api import query_of

    flag = _flag_query(["--vary", "mean_texture", "--where", CLAUSES[0], "--where", CLAUSES[1]])
    _, q, _ = query_of(MODEL, ["mean_texture"], "", {"where": CLAUSES[:2]}, "check")
    assert (q.bounds, q.relations) == (flag.bounds, flag.relations)


def test_an_api_check_with_where_says_the_constraints_in_its_proof():
    import treesens

    r = treesens.check(MODEL, ["mean_texture"], gap=0.45, where="x1.mean_radius <= 12")
    assert r.status == "insensitive" and "where x1.mean_radius <= 12 meets" in r.message


def test_an_api_max_gap_with_a_where_relation_is_directional():
    import treesens

    r = treesens.max_gap(MODEL, ["mean_texture"], where="x1.mean_texture <= x2.mean_texture")
    assert r.witness["x1"]["mean_texture"] <= r.witness["x2"]["mean_texture"]


def test_an_api_sweep_leaves_out_the_features_its_where_holds_to_one_value():
    import treesens

    with pytest.warns(UserWarning, match="leaves out .* one value for both inputs.*: mean_radius"):
        rs = treesens.sweep(MODEL, where="mean_radius == 12", timeout=10, progress=False)
    assert ["mean_radius"] not in [r.features for r in rs] and len(rs) == 29


def test_a_bad_where_keyword_is_an_input_error_naming_it():
    import treesens
    from treesens.compiler.errors import InputError

    with pytest.raises(InputError, match=r"^where='x1\.mean_textur <= 12': unknown feature"):
        treesens.check(MODEL, ["mean_texture"], where="x1.mean_textur <= 12")


def test_a_where_flag_with_a_single_equals_is_told_the_comparison_is_double(capsys):
    model = str(EXAMPLES / "breast_cancer_xgb.json")
    argv = ["check", model, "--vary", "mean_texture", "--where", "mean_radius = 12"]
    assert main(argv) == 2
    assert "unexpected '=': a comparison tests equality with '==' (age == 30)" in (
        capsys.readouterr().err
    )
