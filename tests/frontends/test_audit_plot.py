"""The audit's picture reads whole: the histogram's label inside the image, and its
counts of rows on whole-number ticks."""

from __future__ import annotations

from pathlib import Path

import pytest

from treesens.interfaces.cli.main import main

matplotlib = pytest.importorskip("matplotlib")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def figure(tmp_path_factory):
    """The figure `treesens audit --plot` draws (six rows flippable by worst_texture)."""
    import matplotlib.pyplot as plt

    kept, close = [], plt.close
    plt.close = lambda fig=None: kept.append(fig)
    try:
        png = tmp_path_factory.mktemp("plot") / "a.png"
        argv = ["audit", str(EXAMPLES / "breast_cancer_xgb.json")]
        argv += ["--data", str(EXAMPLES / "breast_cancer_rows.csv"), "--vary", "worst_texture"]
        assert main([*argv, "--gap", "0.1", "--plot", str(png)]) == 0
    finally:
        plt.close = close
    fig = kept[-1]
    fig.canvas.draw()
    yield fig
    close(fig)


def test_the_histogram_s_label_lies_inside_the_image(figure):
    right = figure.axes[1]
    box = right.xaxis.label.get_window_extent(figure.canvas.get_renderer())
    width = figure.get_size_inches()[0] * figure.dpi
    assert box.x0 >= 0 and box.x1 <= width, (box.x0, box.x1, width)


def test_the_histogram_counts_rows_on_whole_number_ticks(figure):
    ticks = figure.axes[1].get_yticks()
    assert all(float(t).is_integer() for t in ticks), ticks
