"""The witness plot (treesens.plot_witness): rendered to PNG, and its content read back
from the Figure (rows, title, labels, markers, ranges)."""

from __future__ import annotations

import math
import struct
from pathlib import Path

import numpy as np
import pytest

import treesens
from treesens.answers.result import Result, Status
from treesens.compiler.ensemble import Feature
from treesens.compiler.errors import InputError
from treesens.views.plot_common import X1_COLOUR, X2_COLOUR
from treesens.views.plot_witness import (
    chosen_rows,
    declared_span,
    feature_ranges,
    threshold_span,
)

pytestmark = pytest.mark.filterwarnings("error")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def model():
    return treesens.load_model(
        EXAMPLES / "breast_cancer_xgb.json", details=EXAMPLES / "breast_cancer_details.csv"
    )


@pytest.fixture(scope="module")
def frame(model):
    import pandas as pd
    from sklearn.datasets import load_breast_cancer

    return pd.DataFrame(load_breast_cancer().data, columns=model.feature_names)


def sensitive(model, varied=("mean_texture",), outputs=None) -> Result:
    """A sensitive result on the example model: x1 mid-range (worst_area at its upper
    bound), x2 = x1 but the varied features at their lower bounds."""
    x1 = {f.name: (f.lb + f.ub) / 2 for f in model.features}
    x1["worst_area"] = model.features[model.feature_index("worst_area")].ub
    x2 = dict(x1)
    for name in varied:
        x2[name] = model.features[model.feature_index(name)].lb
    return Result(
        query="+".join(varied),
        status=Status.SENSITIVE,
        backend="cpsat",
        features=list(varied),
        gap=0.2,
        witness={"x1": x1, "x2": x2},
        outputs=outputs or {"x1": [0.2, 0.8], "x2": [0.75, 0.25]},
        validated=True,
    )


def rows_of(fig) -> list[str]:
    return [t.get_text() for t in fig.axes[0].get_yticklabels()]


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def test_png_is_written_with_a_sensible_size(model, tmp_path):
    path = tmp_path / "w.png"
    treesens.plot_witness(sensitive(model), model=model, path=path)
    width, height = png_size(path)
    assert 600 <= width <= 3000 and 300 <= height <= 4000


def test_returns_a_matplotlib_figure(model):
    from matplotlib.figure import Figure

    assert isinstance(treesens.plot_witness(sensitive(model), model=model), Figure)


def test_title_gives_p_x1_p_x2_and_the_gaps(model):
    title = treesens.plot_witness(sensitive(model), model=model).axes[0].get_title("left")
    assert "P(x1) = 0.800" in title and "P(x2) = 0.250" in title
    assert "gap asked 0.2" in title and "achieved 0.25" in title


def test_title_gives_the_max_gap_when_the_result_has_one(model):
    r = sensitive(model)
    r.stats["max_gap"] = 0.31
    assert "max gap 0.31" in treesens.plot_witness(r, model=model).axes[0].get_title("left")


def test_x_axis_label_says_position_in_the_feature_range(model):
    label = treesens.plot_witness(sensitive(model), model=model).axes[0].get_xlabel()
    assert label.startswith("position in the feature's range")
    assert "ranges from declared bounds" in label


def test_varied_feature_is_the_top_row_in_bold(model):
    fig = treesens.plot_witness(sensitive(model, ("worst_texture",)), model=model)
    ticks = fig.axes[0].get_yticklabels()
    assert ticks[0].get_text() == "worst_texture"
    assert ticks[0].get_fontweight() == "bold"
    assert all(t.get_fontweight() != "bold" for t in ticks[1:])


def test_changed_feature_has_an_x1_and_an_x2_marker(model):
    fig = treesens.plot_witness(sensitive(model), model=model)
    colours = [ln.get_color() for ln in fig.axes[0].get_lines()]
    assert colours.count(X1_COLOUR) == 1 and colours.count(X2_COLOUR) == 1


def test_changed_feature_values_written_beside_its_row(model):
    fig = treesens.plot_witness(sensitive(model), model=model)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert any(t.startswith("24.5 \u2192 9.71") for t in texts), texts


def test_at_most_max_features_rows(model):
    fig = treesens.plot_witness(sensitive(model), model=model, max_features=8)
    assert len(rows_of(fig)) == 8


def test_omitted_features_are_named_in_the_x_label(model):
    fig = treesens.plot_witness(sensitive(model), model=model, max_features=25)
    shown = set(rows_of(fig))
    omitted = [n for n in model.feature_names if n not in shown]
    label = fig.axes[0].get_xlabel().replace("\n", " ")
    assert "25 of 30 features shown" in label
    assert all(n in label for n in omitted)


def test_max_features_none_shows_every_feature(model):
    fig = treesens.plot_witness(sensitive(model), model=model, max_features=None)
    assert sorted(rows_of(fig)) == sorted(model.feature_names)


def test_the_most_extreme_feature_is_kept(model):
    fig = treesens.plot_witness(sensitive(model), model=model, max_features=2)
    assert rows_of(fig) == ["mean_texture", "worst_area"]


def test_varied_features_are_kept_beyond_max_features(model):
    varied = ("mean_texture", "mean_radius", "area_error")
    fig = treesens.plot_witness(sensitive(model, varied), model=model, max_features=1)
    assert rows_of(fig) == ["mean_radius", "mean_texture", "area_error"]


def test_max_features_below_one_is_refused(model):
    with pytest.raises(InputError, match="max_features"):
        treesens.plot_witness(sensitive(model), max_features=0)


def test_chosen_rows_marked_first_then_model_order():
    score = np.array([0.0, 0.4, 0.1, 0.3, 0.2])
    assert chosen_rows(list("abcde"), {"c"}, score, 3) == [2, 1, 3]


def test_ranges_are_the_declared_bounds(model):
    r = sensitive(model)
    x1 = np.array(list(r.witness["x1"].values()))
    ranges = feature_ranges(model, None, x1, x1)
    assert ranges.lo.tolist() == [f.lb for f in model.features]
    assert ranges.hi.tolist() == [f.ub for f in model.features]


def test_ranges_from_the_data_where_no_bound_is_declared(model, frame):
    bare = treesens.load_model(EXAMPLES / "breast_cancer_xgb.json", auto_details=False)
    x = frame.to_numpy()[0]
    ranges = feature_ranges(bare, frame.to_numpy(), x, x)
    assert np.allclose(ranges.lo, frame.min().to_numpy())
    assert np.allclose(ranges.hi, frame.max().to_numpy())
    assert ranges.sources == ("the data",)


def test_ranges_from_the_thresholds_without_bounds_or_data():
    bare = treesens.load_model(EXAMPLES / "breast_cancer_xgb.json", auto_details=False)
    lo, hi = threshold_span(bare)
    mid = np.where(np.isnan(lo), 0.0, (lo + hi) / 2)
    ranges = feature_ranges(bare, None, mid, mid)
    used = ~np.isnan(lo) & (hi > lo)  # a single threshold is padded
    assert np.allclose(ranges.lo[used], lo[used]) and np.allclose(ranges.hi[used], hi[used])
    assert "the model's thresholds" in ranges.sources


def test_ranges_take_in_a_pair_outside_them(model):
    x = np.array([f.ub + 5.0 for f in model.features])
    ranges = feature_ranges(model, None, x, x)
    assert np.allclose(ranges.hi, x)
    assert any(s.startswith("the pair") for s in ranges.sources)


def test_without_model_or_data_the_label_says_ranges_are_unknown(model):
    label = treesens.plot_witness(sensitive(model)).axes[0].get_xlabel().replace("\n", " ")
    assert "30 features have no known range" in label


def test_data_distribution_is_in_the_legend(model, frame):
    fig = treesens.plot_witness(sensitive(model), data=frame, model=model)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "data: 5-95 %" in labels and "data: 25-75 %, median" in labels


def test_data_distribution_is_one_strip_per_row(model, frame):
    with_data = treesens.plot_witness(sensitive(model), data=frame, model=model)
    without = treesens.plot_witness(sensitive(model), model=model)
    extra = len(with_data.axes[0].get_lines()) - len(without.axes[0].get_lines())
    assert extra == 3 * len(rows_of(with_data))  # 5-95 %, 25-75 %, median


def test_data_as_dataframe_path_or_array_draws_the_same_rows(model, frame, tmp_path):
    csv = tmp_path / "rows.csv"
    frame.to_csv(csv, index=False)
    r = sensitive(model)
    got = [
        rows_of(treesens.plot_witness(r, data=d, max_features=6))
        for d in (frame, csv, frame.to_numpy())
    ]
    assert got[0] == got[1] == got[2]


def test_without_a_model_data_columns_are_matched_by_name(model, frame):
    shuffled = frame[list(reversed(frame.columns))]
    r = sensitive(model)
    assert rows_of(treesens.plot_witness(r, data=shuffled, max_features=6)) == rows_of(
        treesens.plot_witness(r, data=frame, max_features=6)
    )


@pytest.mark.parametrize(("data", "named"), [({"mean_radius": [14.0]}, "dict"), (5, "int")])
def test_data_that_is_no_table_is_refused_naming_its_type(model, data, named):
    # a dict was TypeError: float() argument must be a string or a real number
    with pytest.raises(InputError, match=rf"one column per feature \(30\), got {named}\b"):
        treesens.plot_witness(sensitive(model), data=data)


def test_extreme_rows_chosen_by_the_data_quantile(model, frame):
    r = sensitive(model)
    r.witness["x1"]["mean_smoothness"] = float(frame["mean_smoothness"].max())
    fig = treesens.plot_witness(r, data=frame, model=model, max_features=3)
    assert "mean_smoothness" in rows_of(fig)


def test_model_of_other_features_is_refused(model):
    wine = treesens.load_model(EXAMPLES / "wine_xgb.json")
    with pytest.raises(InputError, match="model's features"):
        treesens.plot_witness(sensitive(model), model=wine)


def test_result_as_a_dict_draws_the_same(model):
    r = sensitive(model)
    a = treesens.plot_witness(r, model=model).axes[0].get_title("left")
    b = treesens.plot_witness(r.to_dict(), model=model).axes[0].get_title("left")
    assert a == b


def test_insensitive_result_draws_a_figure_that_says_so(tmp_path):
    r = Result(query="f", status=Status.INSENSITIVE, backend="cpsat", features=["f"], gap=0.2)
    path = tmp_path / "none.png"
    fig = treesens.plot_witness(r, path=path)
    assert "INSENSITIVE" in fig.axes[0].get_title("left")
    assert "proved" in fig.axes[0].texts[0].get_text()
    assert png_size(path)[0] > 300


def test_unknown_result_says_no_answer_in_the_time_limit():
    r = Result(query="f", status=Status.UNKNOWN, backend="cpsat", features=["f"], gap=0.2)
    assert "time limit" in treesens.plot_witness(r).axes[0].texts[0].get_text()


def test_missing_value_is_written_as_missing(model):
    r = sensitive(model)
    r.witness["x1"]["mean_area"] = r.witness["x2"]["mean_area"] = math.nan
    fig = treesens.plot_witness(r, model=model, max_features=None)
    assert any(t.get_text().startswith("missing") for t in fig.axes[0].texts)


def test_multiclass_title_names_each_input_class():
    wine = treesens.load_model(EXAMPLES / "wine_xgb.json")
    x = {n: 1.0 for n in wine.feature_names}
    r = Result(
        query="proline",
        status=Status.SENSITIVE,
        backend="cpsat",
        features=["proline"],
        gap=1.5,
        witness={"x1": x, "x2": {**x, "proline": 2.0}},
        outputs={"x1": [0.6, 0.3, 0.1], "x2": [0.1, 0.1, 0.8]},
    )
    title = treesens.plot_witness(r, model=wine).axes[0].get_title("left")
    assert "P(x1) = 0.600 (class 0)" in title and "P(x2) = 0.800 (class 2)" in title
    assert "achieved 2" in title


def test_draws_into_the_given_axes(model):
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.add_subplot()
    assert treesens.plot_witness(sensitive(model), ax=ax, model=model) is fig
    assert ax.get_yticklabels()[0].get_text() == "mean_texture"


def test_leaves_pyplot_alone(model, tmp_path):
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    treesens.plot_witness(sensitive(model), model=model, path=tmp_path / "w.png")
    assert plt.get_fignums() == before


def test_plot_file_with_an_unknown_suffix_is_refused(model, tmp_path):
    with pytest.raises(InputError, match="plot file"):
        treesens.plot_witness(sensitive(model), path=tmp_path / "w.txt")


def test_svg_is_written(model, tmp_path):
    path = tmp_path / "w.svg"
    treesens.plot_witness(sensitive(model), model=model, path=path)
    assert path.read_text()[:200].find("<svg") >= 0 or "<svg" in path.read_text()


def test_declared_span_of_named_categories_is_their_codes():
    feat = Feature("colour", kind="categorical", categories=("red", "green", "blue"))
    assert declared_span(feat) == (0.0, 2.0)


def test_declared_span_unbounded_is_nan():
    lo, hi = declared_span(Feature("x"))
    assert math.isnan(lo) and math.isnan(hi)


def test_category_names_are_placed_by_their_code_and_written_by_name():
    feats = (
        Feature("colour", kind="categorical", categories=("red", "green", "blue")),
        Feature("size", lb=0.0, ub=10.0),
    )
    model = treesens.load_model(EXAMPLES / "breast_cancer_xgb.json").with_features(
        feats + tuple(Feature(f"f{i}") for i in range(28))
    )
    names = model.feature_names
    x1 = {n: 1.0 for n in names} | {"colour": "red", "size": 5.0}
    r = Result(
        query="colour",
        status=Status.SENSITIVE,
        backend="cpsat",
        features=["colour"],
        gap=0.2,
        witness={"x1": x1, "x2": {**x1, "colour": "blue"}},
        outputs={"x1": [0.2, 0.8], "x2": [0.8, 0.2]},
    )
    fig = treesens.plot_witness(r, model=model, max_features=2)
    texts = [t.get_text() for t in fig.axes[0].texts if t.get_text()]
    assert "red \u2192 blue   {red, green, blue}" in texts
    x1_marker = next(ln for ln in fig.axes[0].get_lines() if ln.get_color() == X1_COLOUR)
    assert x1_marker.get_xdata()[0] == 0.0


def test_nearest_data_row_is_marked_on_every_row(model):
    r = sensitive(model)
    r.stats["nearest_row"] = {"index": 7, "values": dict(r.witness["x2"])}
    fig = treesens.plot_witness(r, model=model, max_features=5)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "nearest data row 8 (index 7)" in labels
    crosses = [ln for ln in fig.axes[0].get_lines() if ln.get_marker() == "x"]
    assert len(crosses) == 5


def test_data_without_columns_for_some_features_is_said(model, frame):
    partial = frame.drop(columns=["mean_radius", "mean_area"])
    fig = treesens.plot_witness(sensitive(model), data=partial)
    label = fig.axes[0].get_xlabel().replace("\n", " ")
    assert "the data has no values for 2 of the 30 features" in label


def test_ranges_from_bounds_taken_from_the_data_are_said_to_come_from_the_data(frame):
    from_data = treesens.load_model(
        EXAMPLES / "breast_cancer_xgb.json", data=frame, auto_details=False
    )
    x = frame.to_numpy()[0]
    assert feature_ranges(from_data, None, x, x).sources == ("the data",)


def _colour_result(model) -> Result:
    x1 = {n: 1.0 for n in model.feature_names} | {"colour": "red", "size": 5.0}
    return Result(
        query="colour",
        status=Status.SENSITIVE,
        backend="cpsat",
        features=["colour"],
        gap=0.2,
        witness={"x1": x1, "x2": {**x1, "colour": "blue"}},
        outputs={"x1": [0.2, 0.8], "x2": [0.8, 0.2]},
    )


@pytest.fixture(scope="module")
def colour_model():
    feats = (
        Feature("colour", kind="categorical", categories=("red", "green", "blue")),
        Feature("size", lb=0.0, ub=10.0),
    )
    return treesens.load_model(EXAMPLES / "breast_cancer_xgb.json").with_features(
        feats + tuple(Feature(f"f{i}") for i in range(28))
    )


def test_a_categorical_row_names_each_category_where_its_code_lies(colour_model):
    fig = treesens.plot_witness(_colour_result(colour_model), model=colour_model, max_features=2)
    named = {t.get_text(): t.get_position()[0] for t in fig.axes[0].texts}
    assert (named["red"], named["green"], named["blue"]) == (0.0, 0.5, 1.0)


def test_a_categorical_rows_data_is_drawn_as_shares_of_its_categories(colour_model):
    data = np.ones((4, colour_model.n_features))
    data[:, 0] = [0, 0, 0, 2]  # red, red, red, blue
    fig = treesens.plot_witness(
        _colour_result(colour_model), data=data, model=colour_model, max_features=1
    )
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "data: share per category" in labels and "data: 5-95 %" not in labels
    (discs,) = fig.axes[0].collections
    assert discs.get_sizes().tolist() == pytest.approx([420 * 0.75, 420 * 0.25])


def test_a_proof_figure_says_the_querys_constraints_as_written():
    r = treesens.check(
        EXAMPLES / "breast_cancer_xgb.json", "mean_texture", gap=0.45, where="x1.mean_radius <=12"
    )
    assert r.status == "insensitive"
    fig = treesens.plot_witness(r)
    assert "where x1.mean_radius <=12" in fig.axes[0].get_title("left")
    assert "where x1.mean_radius <=12" in fig.axes[0].texts[0].get_text()


def test_a_pair_figure_says_the_querys_constraints_as_written(model):
    r = treesens.check(model, "mean_texture", gap=0.1, where="x1.mean_radius <= 12")
    assert r.status == "sensitive"
    title = treesens.plot_witness(r, model=model).axes[0].get_title("left")
    assert title.startswith("SENSITIVE to mean_texture where x1.mean_radius <= 12")
