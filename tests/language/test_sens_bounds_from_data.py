"""`bounds from data`: a .sens file narrows each feature to its column's range in the
file's data, as `--bounds data` does on the command line, and its answers say they hold
within the data's range. Uses the model and rows shipped in examples/."""

from __future__ import annotations

from pathlib import Path

import pytest

from treesens.interfaces.cli.main import main
from treesens.language import SensError, load_queries
from treesens.readers.load import load_model

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
BC = EXAMPLES / "breast_cancer_xgb.json"
BC_DETAILS = EXAMPLES / "breast_cancer_details.csv"
ROWS = EXAMPLES / "breast_cancer_rows.csv"

pytest.importorskip("xgboost")


def _sens(tmp_path, head: str) -> Path:
    path = tmp_path / "b.sens"
    query = "query q {\n  vary radius_error\n  gap 0.1\n}\n"
    path.write_text(f'model "{BC}"\nfeatures from "{BC_DETAILS}"\n{head}{query}')
    return path


def _bounds(ens) -> list[tuple]:
    return [(f.name, f.kind, f.lb, f.ub) for f in ens.features]


def _first_rows(tmp_path, n: int) -> Path:
    rows = tmp_path / "first.csv"
    rows.write_text("\n".join(ROWS.read_text().splitlines()[: n + 1]) + "\n")
    return rows


def test_bounds_from_data_narrows_the_features_as_bounds_data_does(tmp_path):
    sf = load_queries(_sens(tmp_path, f'data "{ROWS}"\nbounds from data\n'))
    assert _bounds(sf.ensemble) == _bounds(
        load_model(BC, details=BC_DETAILS, data=ROWS, bounds="data")
    )


def test_a_data_line_alone_keeps_the_declared_bounds(tmp_path):
    sf = load_queries(_sens(tmp_path, f'data "{ROWS}"\n'))
    assert _bounds(sf.ensemble) == _bounds(load_model(BC, details=BC_DETAILS))


def test_the_bounds_come_from_data_given_in_place_of_the_file_s(tmp_path):
    first = _first_rows(tmp_path, 40)
    sf = load_queries(_sens(tmp_path, f'data "{ROWS}"\nbounds from data\n'), data=first)
    assert _bounds(sf.ensemble) == _bounds(
        load_model(BC, details=BC_DETAILS, data=first, bounds="data")
    )


def test_bounds_from_data_may_stand_before_the_data_line(tmp_path):
    sf = load_queries(_sens(tmp_path, f'bounds from data\ndata "{ROWS}"\n'))
    assert _bounds(sf.ensemble) == _bounds(
        load_model(BC, details=BC_DETAILS, data=ROWS, bounds="data")
    )


def test_a_feature_line_s_bounds_hold_the_data_s_range_within_them(tmp_path):
    head = f'data "{ROWS}"\nbounds from data\nfeature radius_error in [0, 10]\n'
    f = load_queries(_sens(tmp_path, head)).ensemble.features[10]
    assert (f.name, f.lb, f.ub) == ("radius_error", 0.1199, 1.509)


def test_an_answer_says_it_holds_within_the_data_s_range(tmp_path, capsys):
    assert main(["run", str(_sens(tmp_path, f'data "{ROWS}"\nbounds from data\n'))]) == 0
    assert "no box of the pair space within the data's range" in capsys.readouterr().out


def test_an_answer_without_it_says_it_holds_within_the_declared_bounds(tmp_path, capsys):
    assert main(["run", str(_sens(tmp_path, f'data "{ROWS}"\n'))]) == 0
    assert "no box of the pair space within the declared bounds" in capsys.readouterr().out


def test_the_loaded_line_names_the_data_the_bounds_come_from(tmp_path, capsys):
    assert main(["run", str(_sens(tmp_path, f'data "{ROWS}"\nbounds from data\n'))]) == 0
    assert f"(bounds from data {ROWS}, 200 rows)" in capsys.readouterr().err


def test_a_varied_column_one_value_in_every_row_is_an_error_naming_the_data(tmp_path):
    rows = tmp_path / "one_value.csv"
    lines = ROWS.read_text().splitlines()[:11]
    col = lines[0].split(",").index("radius_error")
    rows.write_text(
        "\n".join(
            [lines[0]]
            + [
                ",".join(v if i != col else "0.5" for i, v in enumerate(line.split(",")))
                for line in lines[1:]
            ]
        )
        + "\n"
    )
    with pytest.raises(SensError, match=r"b.sens:\d+:3: .*one_value.csv: column 'radius_error'"):
        load_queries(_sens(tmp_path, f'data "{rows}"\nbounds from data\n'))
