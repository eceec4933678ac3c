"""`inf` and `-inf` are numbers in a .sens file: a bound at an infinite end holds every
input (`x1.f >= -inf`, `f < inf`), where it was refused as "'f' cannot equal -inf";
a bound no finite input meets, and equality with an infinity, stay errors."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from treesens.language import SensError, load_queries

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
BC = EXAMPLES / "breast_cancer_xgb.json"
BC_DETAILS = EXAMPLES / "breast_cancer_details.csv"


def _load(tmp_path, where: str):
    sens = tmp_path / "q.sens"
    sens.write_text(
        f'model "{BC}"\nfeatures from "{BC_DETAILS}"\n'
        f"query q {{\n  vary mean_texture\n  where {where}\n}}\n"
    )
    return load_queries(sens).queries[0]


@pytest.mark.parametrize(
    "where",
    [
        "x1.mean_radius >= -inf and x2.mean_radius <= inf",
        "mean_radius > -inf and mean_radius < +inf",
        "-inf <= mean_radius",
        "mean_radius <= 1e400",
    ],
)
def test_a_bound_at_an_infinite_end_holds_every_input(tmp_path, where):
    q = _load(tmp_path, where)
    assert all(math.isinf(b.lo) and math.isinf(b.hi) for b in q.bounds)


@pytest.mark.parametrize(
    "where, said",
    [
        ("x1.mean_radius >= inf", "no value of 'mean_radius' lies in [inf, inf]"),
        ("mean_radius < -inf", "no value of 'mean_radius' lies in [-inf, -inf]"),
        ("mean_radius == -inf", "'mean_radius' cannot equal -inf: give a finite number"),
    ],
)
def test_a_bound_no_finite_input_meets_is_an_error_at_its_place(tmp_path, where, said):
    with pytest.raises(SensError, match=r"q\.sens:5:\d+: " + said.replace("[", r"\[")):
        _load(tmp_path, where)
