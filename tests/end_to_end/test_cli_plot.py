"""``check --plot`` and ``sweep --plot`` on the shipped example model: a PNG is written
(a figure saying so when there is no pair), stdout keeps its format, and a plot file that
cannot be written fails with exit 2 before anything is solved."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from treesens.tests.conftest import json_lines, treesens_here

pytestmark = pytest.mark.filterwarnings("error")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MODEL = EXAMPLES / "breast_cancer_xgb.json"


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def test_check_plot_writes_the_witness_png(tmp_path):
    path = tmp_path / "witness.png"
    p = treesens_here("check", MODEL, "--vary", "mean_texture", "--gap", "0.2", "--plot", path)
    assert p.returncode == 0, p.stderr
    assert "SENSITIVE" in p.stdout
    width, height = png_size(path)
    assert width >= 600 and height >= 400
    assert f"plot written to {path}" in p.stderr


def test_check_plot_keeps_json_on_stdout(tmp_path):
    path = tmp_path / "witness.png"
    p = treesens_here(
        "check", MODEL, "--vary", "mean_texture", "--gap", "0.2", "--json", "--plot", path
    )
    assert p.returncode == 0, p.stderr
    (line,) = json_lines(p.stdout)
    assert line["status"] == "sensitive"
    assert path.is_file()


def test_check_plot_with_data_writes_the_png(tmp_path):
    import pandas as pd
    from sklearn.datasets import load_breast_cancer

    from treesens.readers.load import load_model

    names = load_model(MODEL).feature_names
    csv = tmp_path / "rows.csv"
    pd.DataFrame(load_breast_cancer().data, columns=names).to_csv(csv, index=False)
    path = tmp_path / "witness.png"
    p = treesens_here(
        "check", MODEL, "--vary", "mean_texture", "--gap", "0.2", "--data", csv, "--plot", path
    )
    assert p.returncode == 0, p.stderr
    assert png_size(path)[1] >= 400


def test_check_plot_without_a_pair_writes_a_figure_and_says_so(tmp_path):
    path = tmp_path / "none.png"
    p = treesens_here("check", MODEL, "--vary", "mean_radius", "--gap", "0.2", "--plot", path)
    assert p.returncode == 0, p.stderr
    assert "INSENSITIVE" in p.stdout
    assert png_size(path)[0] >= 300
    assert "insensitive, no pair to draw" in p.stderr


def test_check_plot_with_an_unknown_suffix_exits_2_before_solving(tmp_path):
    p = treesens_here("check", MODEL, "--vary", "mean_texture", "--plot", tmp_path / "w.txt")
    assert p.returncode == 2
    assert "w.txt" in p.stderr and "plot file" in p.stderr
    assert "solving" not in p.stderr and "Traceback" not in p.stderr


def test_check_plot_under_a_file_exits_2(tmp_path):
    (tmp_path / "no").write_text("")
    p = treesens_here("check", MODEL, "--vary", "mean_texture", "--plot", tmp_path / "no/w.png")
    assert p.returncode == 2
    assert "cannot make its folder" in p.stderr and "Traceback" not in p.stderr


def test_sweep_plot_writes_the_sweep_png(tmp_path):
    path = tmp_path / "sweep.png"
    p = treesens_here(
        "sweep", MODEL, "--features", "mean_texture,worst_area", "--gap", "0.2",
        "--table", "none", "--plot", path,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    width, height = png_size(path)
    assert width >= 500 and height >= 150
    assert f"plot written to {path}" in p.stderr


def test_sweep_plot_under_a_file_exits_2_before_running(tmp_path):
    (tmp_path / "no").write_text("")
    p = treesens_here("sweep", MODEL, "--features", "mean_texture", "--plot", tmp_path / "no/s.png")
    assert p.returncode == 2
    assert "cannot make its folder" in p.stderr and "sweep of" not in p.stderr
