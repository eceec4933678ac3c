"""IntegerScaling: integer rows for CP-SAT that keep every real solution."""

from __future__ import annotations

import itertools

from treesens.compiler.ir import ProblemBuilder, check_constraint
from treesens.compiler.passes.base import Compiled
from treesens.compiler.passes.scaling import IntegerScaling


def _scaled(coefs, sense, rhs):
    b = ProblemBuilder()
    xs = [b.var(f"x{i}") for i in range(len(coefs))]
    b.linear(xs, coefs, sense, rhs)
    out, _ = IntegerScaling().apply(Compiled(b.build(), None))
    return out.problem.constraints[0]


def _points(n):
    return [list(p) for p in itertools.product((0, 1), repeat=n)]


def test_a_right_hand_side_no_point_can_miss_is_brought_into_int64_range():
    row = _scaled((0.75, -0.5), ">=", -5.6e28)
    assert abs(row.rhs) < 2**40
    assert all(check_constraint(row, p) for p in _points(2))


def test_a_right_hand_side_no_point_can_reach_stays_unreachable():
    row = _scaled((0.75, -0.5), ">=", 3e30)
    assert abs(row.rhs) < 2**40
    assert not any(check_constraint(row, p) for p in _points(2))


def test_huge_integer_coefficients_are_scaled_down():
    row = _scaled((2.8e28, 1.0), "<=", 1e28)
    assert max(abs(k) for k in row.coefs) < 2**40


def test_every_point_meeting_the_real_row_meets_the_scaled_row():
    coefs, rhs = (0.3, -1.7, 2.25), 0.55
    row = _scaled(coefs, ">=", rhs)
    for p in _points(3):
        if sum(k * x for k, x in zip(coefs, p)) >= rhs:
            assert check_constraint(row, p)


def test_a_scaled_objective_records_the_factor_that_recovers_its_value():
    from treesens.compiler.ir import Objective

    b = ProblemBuilder()
    xs = [b.var(f"x{i}") for i in range(2)]
    b.linear(xs, (1.0, 1.0), "<=", 2.0)
    obj = Objective("max", tuple(xs), (0.3, -1.7), 0.25, "optimize")
    out, _ = IntegerScaling().apply(Compiled(b.build(obj), None))
    scaled, scale = out.problem.objective, out.problem.notes.objective_scale
    point = (1, 1)
    value = sum(k * x for k, x in zip(scaled.coefs, point)) + scaled.constant
    assert abs(value / scale - (0.3 - 1.7 + 0.25)) < 1e-6
