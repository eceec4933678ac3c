"""How results and models read: one-line reprs, str(result) as the CLI's witness table,
HTML for Jupyter with every name escaped."""

from __future__ import annotations

import io
import subprocess
import sys

from treesens.answers.result import Result
from treesens.compiler.ensemble import LOGISTIC, Ensemble, Feature, ModelOrigin, Tree


def _result(**kw) -> Result:
    base = dict(
        query="age",
        status="sensitive",
        backend="cpsat",
        features=["age"],
        gap=0.2,
        witness={"x1": {"age": 30.0, "<b>pay": 1.5}, "x2": {"age": 61.0, "<b>pay": 1.5}},
        outputs={"x1": [0.2, 0.8], "x2": [0.75, 0.25]},
        validated=True,
        time={"compile": 0.1, "solve": 0.2, "total": 0.35},
    )
    return Result(**(base | kw))


def _ensemble(n_features: int, name: str = "f{}") -> Ensemble:
    tree = Tree(
        feature=[0, -1, -1],
        threshold=[0.5, 0, 0],
        left=[1, -1, -1],
        right=[2, -1, -1],
        default_left=[True, True, True],
        value=[[0.0], [-1.0], [1.0]],
        outputs=(0,),
    )
    feats = tuple(Feature(name.format(i)) for i in range(n_features))
    return Ensemble(
        (tree,) * 3, feats, 2, (0.0,), LOGISTIC, origin=ModelOrigin("xgboost", "m.json")
    )


def test_a_result_repr_is_one_line_with_status_features_gap_probabilities_and_time():
    text = repr(_result())
    assert text == (
        "Result(sensitive, features=age, gap=0.2, P(x1)=[0.200, 0.800], "
        "P(x2)=[0.750, 0.250], 0.35s)"
    )


def test_the_headline_names_the_search_that_found_the_pair_when_not_the_backend():
    line = str(_result(stats={"found_by": "heuristic"})).splitlines()[0]
    assert "g=0.2, backend cpsat, pair found by heuristic, 0.35s" in line


def test_the_headline_of_a_pair_the_backend_found_names_the_backend_alone():
    line = str(_result(stats={"found_by": "cpsat"})).splitlines()[0]
    assert "backend cpsat, 0.35s" in line and "found by" not in line


def _insensitive(by: str) -> Result:
    from treesens.answers.proof import Proof

    return _result(status="insensitive", witness=None, outputs=None, proof=Proof(by))


def test_the_headline_of_an_answer_the_box_search_proved_opens_with_the_prover():
    line = str(_insensitive("box search")).splitlines()[0]
    assert "g=0.2, proved by the box search (backend cpsat asked), 0.35s" in line
    assert line.endswith("; not independently checked")


def test_the_headline_of_an_answer_its_backend_proved_names_the_backend_then_the_prover():
    line = str(_insensitive("cpsat")).splitlines()[0]
    assert "g=0.2, backend cpsat, 0.35s" in line
    assert line.endswith("; proved by CP-SAT, not independently checked")


def test_the_headline_gives_the_compile_and_solve_times():
    line = str(_result()).splitlines()[0]
    assert "0.35s (compile 0.10s, solve 0.20s)" in line


def test_the_headline_leaves_out_a_compile_that_took_no_time():
    line = str(_result(time={"compile": 0.001, "solve": 0.2, "total": 0.35})).splitlines()[0]
    assert "0.35s (solve 0.20s)" in line and "compile" not in line


def test_a_result_repr_stays_under_200_characters_for_many_features():
    names = [f"feature_number_{i}" for i in range(100)]
    assert len(repr(_result(features=names, query=",".join(names)))) < 200


def test_str_of_a_result_is_the_witness_table_with_the_varied_feature_marked():
    lines = str(_result()).splitlines()
    assert lines[0].startswith("SENSITIVE varying age, g=0.2, backend cpsat")
    assert any(line.split()[:3] == ["age", "30", "61"] and "<- varied" in line for line in lines)
    assert "replay-checked with the library's predict" in lines[-1]


def test_the_witness_tables_lines_end_at_their_last_character():
    # as the command line writes it to a file: the mark column, empty on rows not
    # varied, padded every line with spaces
    from rich.console import Console

    from treesens.views.result_view import render_result

    buf = io.StringIO()
    render_result(_result(), console=Console(file=buf, width=80, color_system=None))
    lines = buf.getvalue().splitlines()
    table = [ln for ln in lines if ln.split()[:1] in (["feature"], ["age"], ["<b>pay"])]
    assert len(table) == 3 and all(ln == ln.rstrip() for ln in table)


def test_the_headline_says_features_a_query_is_named_after_once():
    res = _result(query="age,pay", features=["age", "pay"])
    assert str(res).splitlines()[0].startswith("SENSITIVE varying age, pay, g=0.2")
    assert "SENSITIVE</b> varying <b>age, pay</b>, g=0.2" in res._repr_html_()


def test_the_headline_says_features_a_query_is_named_after_in_another_order_once():
    # --vary pay,age: the features come in the model's order, the name as given
    res = _result(query="pay,age", features=["age", "pay"])
    assert str(res).splitlines()[0].startswith("SENSITIVE varying age, pay, g=0.2")


def test_the_headline_names_a_query_named_otherwise_before_its_features():
    res = _result(query="older_patients")
    assert str(res).splitlines()[0].startswith("SENSITIVE (older_patients) varying age, g=0.2")
    assert "(older_patients)</span> varying <b>age</b>" in res._repr_html_()


def test_str_of_a_result_keeps_a_long_feature_name_whole():
    name = "a_feature_name_far_longer_than_any_terminal_is_wide_" * 4
    res = _result(witness={"x1": {"age": 1.0, name: 2.0}, "x2": {"age": 3.0, name: 2.0}})
    assert name in str(res)


def test_str_of_a_result_reads_brackets_in_a_name_as_text_not_markup():
    res = _result(witness={"x1": {"[red]age": 1.0}, "x2": {"[red]age": 2.0}})
    assert "[red]age" in str(res)


def test_str_of_a_result_without_a_witness_is_its_verdict_line():
    text = str(_result(status="insensitive", witness=None, outputs=None, validated=False))
    assert text.startswith("INSENSITIVE varying age") and len(text.splitlines()) == 1


def test_str_of_a_result_is_the_views_drawing_when_only_answers_is_imported():
    # answers/ sits below views/: the package root hands the drawing down as it imports
    code = (
        "from treesens.answers.result import Result\n"
        "r = Result('q', 'sensitive', 'cpsat', ['age'], 0.2,"
        " witness={'x1': {'age': 30.0}, 'x2': {'age': 61.0}})\n"
        "print(str(r)); print(r._repr_html_())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "<- varied" in out.stdout and "<table>" in out.stdout


def test_the_html_of_a_result_is_a_table_with_one_row_per_feature():
    page = _result()._repr_html_()
    assert page.count("<tr") == 3  # the header and two features


def test_the_html_of_a_result_escapes_feature_names():
    page = _result()._repr_html_()
    assert "&lt;b&gt;pay" in page and "<b>pay" not in page


def test_the_html_of_a_result_without_a_witness_has_no_table():
    page = _result(status="unknown", witness=None, outputs=None)._repr_html_()
    assert "<table>" not in page and "UNKNOWN" in page


def test_the_html_of_a_result_shows_the_distance_to_the_data():
    assert "distance to data: 0.1250" in _result(distance=0.125)._repr_html_()


def test_an_ensemble_repr_names_library_trees_depth_classes_and_features():
    assert (
        repr(_ensemble(3))
        == "Ensemble(xgboost, 3 trees, depth 1, 2 classes, 3 features: f0, f1, f2)"
    )


def test_an_ensemble_repr_is_one_line_under_200_characters_for_many_features():
    text = repr(_ensemble(500, "a_rather_long_feature_name_{}"))
    assert len(text) < 200 and "\n" not in text and text.endswith(", ...)")


def test_a_tree_repr_is_its_size_not_its_arrays():
    assert repr(_ensemble(1).trees[0]) == "Tree(3 nodes, depth 1, outputs [0])"


def test_a_result_repr_shows_the_distance_when_there_is_one():
    assert "distance=0.125" in repr(_result(distance=0.125))


def test_a_result_without_probabilities_leaves_them_out_of_its_repr():
    assert "P(x1)" not in repr(_result(outputs=None, witness=None))
