"""The sweep plot (treesens.plot_sweep): one bar per query, coloured by verdict, as long
as the gap reached, longest first; rendered to PNG and read back from the Figure."""

from __future__ import annotations

import struct

import pytest
from matplotlib.colors import to_rgba

import treesens
from treesens.answers.result import Result, Status
from treesens.compiler.errors import InputError
from treesens.views.plot_common import VERDICT_COLOURS
from treesens.views.plot_sweep import sweep_bars

pytestmark = pytest.mark.filterwarnings("error")


def result(name: str, status: str, p1: float | None = None, p2: float | None = None, **kw):
    pair = p1 is not None
    return Result(
        query=name,
        status=Status(status),
        backend="cpsat",
        features=[name],
        gap=0.2,
        witness={"x1": {name: 0.0}, "x2": {name: 1.0}} if pair else None,
        outputs={"x1": [1 - p1, p1], "x2": [1 - p2, p2]} if pair else None,
        **kw,
    )


@pytest.fixture
def results() -> list[Result]:
    return [
        result("a", "insensitive"),
        result("b", "sensitive", 0.8, 0.25),  # achieves min(0.3, 0.25) = 0.25
        result("c", "unknown"),
        result("d", "sensitive", 0.95, 0.1),  # achieves 0.4
        result("e", "error", error="boom"),
    ]


def bars_of(fig):
    ax = fig.axes[0]
    return ax, list(ax.patches)


def test_one_bar_per_query(results):
    _, bars = bars_of(treesens.plot_sweep(results))
    assert len(bars) == len(results)


def test_one_tick_label_per_query_longest_first(results):
    ax, _ = bars_of(treesens.plot_sweep(results))
    assert [t.get_text() for t in ax.get_yticklabels()] == ["d", "b", "c", "a", "e"]


def test_bars_are_coloured_by_verdict(results):
    ax, bars = bars_of(treesens.plot_sweep(results))
    statuses = {"a": "insensitive", "b": "sensitive", "c": "unknown", "d": "sensitive"}
    statuses["e"] = "error"
    for tick, bar in zip(ax.get_yticklabels(), bars, strict=True):
        assert bar.get_facecolor() == to_rgba(VERDICT_COLOURS[statuses[tick.get_text()]])


def test_bar_length_is_the_gap_the_pair_achieves(results):
    _, bars = bars_of(treesens.plot_sweep(results))
    assert [round(b.get_width(), 9) for b in bars] == [0.4, 0.25, 0.0, 0.0, 0.0]


def test_bar_length_is_the_max_gap_when_the_result_has_one():
    r = result("b", "sensitive", 0.8, 0.25)
    r.stats["max_gap"] = {"value": 0.33, "tolerance": 1e-3}
    (bar,) = sweep_bars([r])
    assert bar.length == pytest.approx(0.33) and bar.is_max and bar.note == "max 0.33"


def test_max_gap_as_a_result_attribute_is_used():
    r = result("a", "insensitive")
    r.max_gap = 0.12  # a field another version of Result may carry
    assert sweep_bars([r])[0].length == pytest.approx(0.12)


def test_verdict_is_written_beside_a_bar_without_a_pair(results):
    ax, _ = bars_of(treesens.plot_sweep(results))
    notes = [t.get_text() for t in ax.texts]
    assert "insensitive at 0.2" in notes and "error" in notes
    assert any(n.startswith("unknown") for n in notes)


def test_legend_names_the_verdicts_present(results):
    ax, _ = bars_of(treesens.plot_sweep(results[:2]))
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["sensitive", "insensitive", "gap asked (0.2)"]


def test_dashed_line_at_the_gap_asked(results):
    ax, _ = bars_of(treesens.plot_sweep(results))
    (line,) = ax.get_lines()
    assert line.get_xdata()[0] == pytest.approx(0.2) and line.get_linestyle() == "--"


def test_axis_labels_say_what_the_bars_measure(results):
    ax, _ = bars_of(treesens.plot_sweep(results))
    assert "gap" in ax.get_xlabel() and "P(x1)" in ax.get_xlabel()
    assert ax.get_ylabel() == "query (features varied)"


def test_title_counts_the_verdicts(results):
    title = treesens.plot_sweep(results).axes[0].get_title("left")
    assert title.startswith("sweep: 5 queries") and "2 sensitive" in title


def test_multiclass_bars_measure_the_probability_ratio():
    r = result("m", "sensitive", 0.5, 0.5)
    r.outputs = {"x1": [0.6, 0.3, 0.1], "x2": [0.1, 0.2, 0.7]}
    fig = treesens.plot_sweep([r])
    assert fig.axes[0].patches[0].get_width() == pytest.approx(2.0)
    assert "ratio" in fig.axes[0].get_xlabel()


def test_results_as_json_dicts_draw_the_same(results):
    a = [b.get_width() for b in treesens.plot_sweep(results).axes[0].patches]
    dicts = [r.to_dict() for r in results]
    assert [b.get_width() for b in treesens.plot_sweep(dicts).axes[0].patches] == a


def test_a_sweep_out_files_path_draws_its_results(results, tmp_path):
    # a path was iterated as its characters: "expected a treesens Result, got str"
    a = [b.get_width() for b in treesens.plot_sweep(results).axes[0].patches]
    log = tmp_path / "sweep.jsonl"
    log.write_text("".join(r.to_json() + "\n" for r in results))
    assert [b.get_width() for b in treesens.plot_sweep(str(log)).axes[0].patches] == a


def test_an_audits_file_given_to_plot_sweep_is_named_as_one(tmp_path):
    log = tmp_path / "rows.jsonl"
    log.write_text('{"query": "sex", "row": 0, "status": "insensitive"}\n')
    with pytest.raises(InputError, match=r"rows\.jsonl: holds an audit's rows"):
        treesens.plot_sweep(log)


def test_a_file_of_no_results_given_to_plot_sweep_is_refused(tmp_path):
    log = tmp_path / "rows.csv"
    log.write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match=r"rows\.csv: holds no sweep results"):
        treesens.plot_sweep(log)


def test_png_is_written_with_a_sensible_size(results, tmp_path):
    path = tmp_path / "sweep.png"
    treesens.plot_sweep(results, path=path)
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", head[16:24])
    assert 500 <= width <= 3000 and 150 <= height <= 3000


def test_height_grows_with_the_number_of_queries():
    few = treesens.plot_sweep([result(f"f{i}", "insensitive") for i in range(3)])
    many = treesens.plot_sweep([result(f"f{i}", "insensitive") for i in range(40)])
    assert many.get_figheight() > 3 * few.get_figheight()


def test_no_results_is_refused():
    with pytest.raises(InputError, match="no results"):
        treesens.plot_sweep([])


def test_something_else_than_a_result_is_refused():
    with pytest.raises(InputError, match="Result"):
        treesens.plot_sweep(["mean_texture"])


def test_draws_into_the_given_axes(results):
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.add_subplot()
    assert treesens.plot_sweep(results, ax=ax) is fig
    assert len(ax.patches) == len(results)


def test_infinite_ratio_is_drawn_just_past_the_longest_finite_bar():
    inf = result("i", "sensitive", 0.5, 0.5)
    inf.outputs = {"x1": [1.0, 0.0, 0.0], "x2": [0.0, 0.0, 1.0]}
    finite = result("f", "sensitive", 0.5, 0.5)
    finite.outputs = {"x1": [0.6, 0.3, 0.1], "x2": [0.1, 0.2, 0.7]}
    bars = sweep_bars([finite, inf])
    assert [b.label for b in bars] == ["i", "f"]
    assert bars[0].length == pytest.approx(1.15 * 2.0) and bars[0].note == "inf"


def test_all_insensitive_axis_spans_the_gap_asked():
    fig = treesens.plot_sweep([result("a", "insensitive"), result("b", "insensitive")])
    assert fig.axes[0].get_xlim() == pytest.approx((0.0, 0.26))


def _of_model(r: Result, fingerprint: str, model: str) -> Result:
    r.model, r.stats["asked"] = model, {"ensemble": fingerprint}
    return r


def test_results_of_two_models_are_refused_naming_them():
    """Two sweeps appended to one out= file: one figure would mix their bars."""
    rs = [
        _of_model(result("a", "sensitive", 0.8, 0.2), "f1", "xgboost:one.json"),
        _of_model(result("a", "insensitive"), "f2", "xgboost:two.json"),
    ]
    with pytest.raises(InputError, match=r"^the results are of 2 models \(xgboost:one.json; "):
        treesens.plot_sweep([r.to_dict() for r in rs])


def test_one_model_given_by_two_paths_is_one_model():
    rs = [
        _of_model(result("a", "sensitive", 0.8, 0.2), "f1", "xgboost:one.json"),
        _of_model(result("b", "insensitive"), "f1", "xgboost:moved/one.json"),
    ]
    assert len(treesens.plot_sweep(rs).axes[0].patches) == 2


def test_a_query_asked_at_two_gaps_is_refused():
    rs = [result("a", "sensitive", 0.8, 0.2), result("a", "insensitive")]
    rs[1].gap = 0.3
    with pytest.raises(
        InputError, match="^query 'a' is there asked at gap 0.2 on cpsat and at gap 0.3 on cpsat"
    ):
        treesens.plot_sweep(rs)


def test_a_query_answered_again_at_the_same_gap_is_drawn_once_by_its_last_result():
    """resume= runs an error again and appends the new answer to the same file."""
    rs = [result("a", "error", error="boom"), result("b", "insensitive")]
    rs.append(result("a", "sensitive", 0.95, 0.1))
    ax, bars = bars_of(treesens.plot_sweep(rs))
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b"]
    assert bars[0].get_width() == pytest.approx(0.4)


def test_a_results_file_two_models_swept_into_is_refused_not_plotted_mixed(tmp_path):
    """README's sweep, then docs/plots.md's, in one folder: out= appends to sweep.jsonl."""
    import json
    from pathlib import Path

    examples = Path(treesens.__file__).parent / "examples"
    out = tmp_path / "sweep.jsonl"
    kw = {"features": ["mean_texture"], "out": out, "progress": False, "timeout": 30}
    treesens.sweep(str(examples / "breast_cancer_xgb.json"), **kw)
    with pytest.warns(UserWarning, match="holds results of another model"):  # and goes on
        treesens.sweep(str(examples / "breast_cancer_deep_xgb.json"), **kw)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 2
    with pytest.raises(InputError, match="^the results are of 2 models"):
        treesens.plot_sweep(lines)


def test_one_query_on_two_backends_is_refused_not_drawn_as_one_bar():
    """compare's results: one query answered by each backend."""
    rs = [result("a", "sensitive", 0.8, 0.2), result("a", "sensitive", 0.9, 0.1)]
    rs[1].backend = "highs"
    with pytest.raises(InputError, match="^query 'a' is there asked at gap 0.2 on cpsat and at"):
        treesens.plot_sweep(rs)


def test_one_model_name_with_two_fingerprints_is_refused_saying_the_name_does_not_tell_them_apart():
    """A model retrained in place, or a sweep resumed across a fingerprint change: the
    lines' 'model' is one name, so 'plot the lines whose model names it' would not help."""
    rs = [
        _of_model(result("a", "sensitive", 0.8, 0.2), "f1", "xgboost:one.json"),
        _of_model(result("b", "insensitive"), "f2", "xgboost:one.json"),
    ]
    with pytest.raises(
        InputError, match=r"^the results are of 2 models named xgboost:one.json \(other trees"
    ):
        treesens.plot_sweep(rs)


def test_a_query_of_any_two_classes_answered_again_is_drawn_once_not_refused_as_asked_twice():
    """resume= runs an unknown again: its result names the classes asked ('any', 'any'),
    the new pair's the two it was found in; one question all the same."""

    def multiclass(status: str, classes: list, pair: bool) -> Result:
        r = Result(query="a", status=Status(status), backend="cpsat", features=["a"], gap=2.0)
        r.classes, r.stats["asked"] = classes, {"ensemble": "f1", "classes": ["any", "any"]}
        if pair:
            r.witness = {"x1": {"a": 0.0}, "x2": {"a": 1.0}}
            r.outputs = {"x1": [0.8, 0.1, 0.1], "x2": [0.1, 0.8, 0.1]}
        return r

    rs = [multiclass("unknown", ["any", "any"], False), multiclass("sensitive", [0, 1], True)]
    ax, bars = bars_of(treesens.plot_sweep(rs))
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a"] and len(bars) == 1


def test_a_max_gap_query_that_failed_then_was_answered_is_drawn_once_by_its_answer():
    """A failed task's max-gap result has no bounds (error_result): it asked the max gap
    all the same (stats.asked.max_gap), and resume= answers it again."""
    failed = result("a", "error", error="task failed: killed")
    found = result("a", "sensitive", 0.95, 0.1)
    found.max_gap = {"lower": 0.4, "upper": 0.41, "tolerance": 0.001, "proven": False}
    for r in (failed, found):
        r.stats["asked"] = {"ensemble": "f1", "max_gap": 0.001}
    ax, bars = bars_of(treesens.plot_sweep([failed, found]))
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a"] and len(bars) == 1
