"""A max-gap search's progress reads as progress: the lines while it runs give the bracket
so far, marked as searching, and the line that ends a query gives its final answer."""

from __future__ import annotations

import io
import json
import re

from treesens.answers.phrases import lower_text, max_gap_searching, upper_text
from treesens.answers.result import Result
from treesens.compiler.plan import Plan
from treesens.compiler.query import Query
from treesens.questions.max_gap import max_gap_query
from treesens.readers.load import load_model
from treesens.tests.conftest import treesens_here
from treesens.tests.report.conftest import MODEL
from treesens.views.progress import Lines


def _ranked(lower, upper, proven: bool, status: str = "sensitive") -> Result:
    r = Result(query="site", status=status, backend="cpsat", features=["site"], gap=0.0)
    r.max_gap = {"lower": lower, "upper": upper, "tolerance": 1e-3, "proven": proven}
    return r


def _line(res: Result) -> str:
    out = io.StringIO()
    Lines(7, out).advance(res)
    return out.getvalue().strip()


def test_a_max_gap_querys_line_gives_its_final_proven_bounds():
    line = _line(_ranked(0.3489, 0.3498, proven=True))
    assert line.startswith("[1/7] site: max gap 0.3489 (proven within 0.001: [0.3489, 0.3498])")


def test_a_max_gap_left_open_says_so_in_its_line():
    assert "max gap in [0.2846, 0.305], not proven" in _line(_ranked(0.2846, 0.305, proven=False))


def test_a_max_gap_without_a_pair_says_none_in_its_line():
    line = _line(_ranked(None, 1e-4, proven=True, status="insensitive"))
    assert "site: max gap none (proven: no pair reaches 0.0001)" in line


def test_a_plain_check_line_still_gives_its_status():
    r = Result(query="site", status="insensitive", backend="cpsat", features=["site"], gap=0.2)
    assert _line(r).startswith("[1/7] site: insensitive (")


def test_an_unknown_querys_line_says_what_ended_it():
    # was "[2/3] Partner: unknown (0.50s)" on churn lgbm_t1000_l63 at --timeout 0.5
    r = Result(query="site", status="unknown", backend="cpsat", features=["site"], gap=0.2)
    r.message = (
        "time limit reached before the solver's stage: building the pair tables reached the "
        "time limit (48,822 leaves)"
    )
    assert _line(r).startswith(
        "[1/7] site: unknown (time limit reached before the solver's stage) ("
    )


def test_an_unknown_querys_long_message_is_left_to_its_result():
    r = Result(query="site", status="unknown", backend="cpsat", features=["site"], gap=0.2)
    r.message = "x" * 80
    assert _line(r).startswith("[1/7] site: unknown (0")


def _search_lines(box_search: bool) -> list[str]:
    ens = load_model(str(MODEL))
    q = Query(vary=("worst_radius",), plan=Plan(timeout=60.0))
    q = q.planned(options=q.plan.options.with_(box_search=box_search))
    lines: list[str] = []
    max_gap_query(ens, q, tolerance=1e-3, log=lines.append)
    # without a first run's notes on making the kernel ready (compiling it, or waiting for
    # another process compiling it, and how long that took)
    return [
        s
        for s in lines
        if "compiling the box search" not in s and "not counted in the time limit" not in s
    ]


def test_the_bisections_lines_are_the_bracket_so_far():
    lines = _search_lines(box_search=False)
    assert lines and all(s.startswith("max gap so far ") and "(searching" in s for s in lines)


def test_the_box_searchs_lines_are_the_bracket_so_far():
    lines = _search_lines(box_search=True)
    # before a first pair, the bracket is an upper bound alone
    so_far = ("max gap so far in [", "max gap so far at most ")
    assert lines and all(s.startswith(so_far) and "searching" in s for s in lines)


def test_the_box_searchs_lines_say_the_seconds_left_of_its_time_limit():
    # was "(searching, 286,720 boxes)": how far, not what is left
    lines = _search_lines(box_search=True)
    left = [int(re.search(r", (\d+)s left\)$", s)[1]) for s in lines]
    assert left and all(0 <= n <= 60 for n in left)


def test_the_bisections_lines_say_the_seconds_left_of_its_time_limit():
    lines = _search_lines(box_search=False)
    assert lines and all(re.search(r"\(searching, gap .*, \d+s left\)$", s) for s in lines)


def test_a_search_without_a_time_limit_says_no_seconds_left():
    line = max_gap_searching("gap", 0.1, 0.3, "3 boxes", float("inf"))
    assert line == "max gap so far in [0.1, 0.3] (searching, 3 boxes)"


def test_the_cli_sweeps_last_line_per_feature_is_its_stored_answer():
    p = treesens_here(
        "sweep", MODEL, "--max-gap", "--features", "mean_texture", "--json", "--timeout", "30"
    )
    assert p.returncode == 0, p.stderr
    (res,) = [json.loads(s) for s in p.stdout.splitlines()]
    mg = res["max_gap"]
    assert mg["proven"]
    # the bounds as the line rounds them: the lower one down, the upper one up
    low, high = lower_text(mg["lower"]), upper_text(mg["upper"])
    final = f"[1/1] mean_texture: max gap {low} (proven within 0.001: "
    assert f"{final}[{low}, {high}])" in p.stderr
    progress = [
        s
        for s in p.stderr.splitlines()
        if s.startswith("  mean_texture:") and not s.startswith("  mean_texture: max gap: ")
    ]  # without the notes on making the kernel ready ("max gap: compiled ...")
    assert progress and all("so far" in s and "searching" in s for s in progress)
