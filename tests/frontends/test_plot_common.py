"""What the plots share: the gap a pair achieves, the max gap a result may carry, and the
plot file's checks."""

from __future__ import annotations

import math

import pytest

from treesens.answers.result import Result, Status
from treesens.compiler.errors import InputError
from treesens.views.plot_common import (
    as_result,
    check_plot_path,
    figure_and_axes,
    max_gap_of,
    pair_gap,
    probability_text,
)

pytestmark = pytest.mark.filterwarnings("error")


def bare(**kw) -> Result:
    return Result(
        query="f", status=Status.SENSITIVE, backend="cpsat", features=["f"], gap=0.2, **kw
    )


def test_binary_achieved_gap_is_the_smaller_distance_from_one_half():
    g = pair_gap({"x1": [0.2, 0.8], "x2": [0.75, 0.25]})
    assert (g.p1, g.p2, g.achieved) == (0.8, 0.25, pytest.approx(0.25))
    assert g.class1 is None and g.unit == "probability gap"


def test_multiclass_achieved_gap_is_the_smaller_winning_ratio():
    g = pair_gap({"x1": [0.6, 0.3, 0.1], "x2": [0.1, 0.2, 0.7]})
    assert (g.class1, g.class2) == (0, 2)
    assert g.achieved == pytest.approx(2.0) and g.unit == "probability ratio"


def test_multiclass_ratio_over_a_zero_probability_is_infinite():
    g = pair_gap({"x1": [1.0, 0.0, 0.0], "x2": [0.0, 0.0, 1.0]})
    assert math.isinf(g.achieved)


def test_no_outputs_no_pair_gap():
    assert pair_gap(None) is None and pair_gap({"x1": None, "x2": None}) is None


def test_probability_text_binary_and_multiclass():
    assert probability_text(pair_gap({"x1": [0.2, 0.8], "x2": [0.7, 0.3]})) == (
        "P(x1) = 0.800, P(x2) = 0.300"
    )
    multi = probability_text(pair_gap({"x1": [0.6, 0.3, 0.1], "x2": [0.1, 0.2, 0.7]}))
    assert multi == "P(x1) = 0.600 (class 0), P(x2) = 0.700 (class 2)"


def test_max_gap_absent_is_none():
    assert max_gap_of(bare()) is None


def test_max_gap_read_from_stats_number_or_dict():
    assert max_gap_of(bare(stats={"max_gap": 0.3})) == 0.3
    assert max_gap_of(bare(stats={"max_gap": {"value": 0.25, "tolerance": 0.001}})) == 0.25


def test_max_gap_that_is_not_a_finite_number_is_ignored():
    assert max_gap_of(bare(stats={"max_gap": "0.3"})) is None
    assert max_gap_of(bare(stats={"max_gap": math.inf})) is None
    assert max_gap_of(bare(stats={"max_gap": True})) is None


def test_as_result_takes_the_json_form():
    r = as_result(
        {"query": "f", "status": "unknown", "backend": "z3", "features": ["f"], "gap": 0.1}
    )
    assert r.status is Status.UNKNOWN and r.backend == "z3"


def test_plot_path_suffix_must_be_an_image_format(tmp_path):
    with pytest.raises(InputError, match="ends in .png"):
        check_plot_path(tmp_path / "plot.csv")


def test_plot_path_folder_is_made_where_missing(tmp_path):
    check_plot_path(tmp_path / "no" / "plot.png")
    assert (tmp_path / "no").is_dir()


def test_plot_path_folder_that_cannot_be_made_is_an_input_error(tmp_path):
    (tmp_path / "a_file").write_text("")
    with pytest.raises(InputError, match="cannot make its folder"):
        check_plot_path(tmp_path / "a_file" / "plot.png")


def test_plot_path_may_not_be_a_directory(tmp_path):
    d = tmp_path / "d.png"
    d.mkdir()
    with pytest.raises(InputError, match="directory"):
        check_plot_path(d)


def test_new_figure_shows_as_png_in_ipython():
    formatters = pytest.importorskip("IPython.core.formatters")
    fig, _ = figure_and_axes(None, (3.0, 2.0))
    data, _ = formatters.DisplayFormatter().format(fig)
    assert data["image/png"][:8] == b"\x89PNG\r\n\x1a\n"


def test_new_figure_pickles():
    import pickle

    fig, ax = figure_and_axes(None, (3.0, 2.0))
    ax.set_title("t")
    again = pickle.loads(pickle.dumps(fig))
    assert again.axes[0].get_title() == "t"
    assert again._repr_png_()[:8] == b"\x89PNG\r\n\x1a\n"


def test_given_axes_are_drawn_into_and_their_figure_returned():
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.add_subplot()
    assert figure_and_axes(ax, (3.0, 2.0)) == (fig, ax)


def test_importing_treesens_does_not_import_matplotlib():
    import subprocess
    import sys

    code = "import sys, treesens; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
