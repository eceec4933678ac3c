"""The encoding as the first reduction (compiler/chain.py: KantchelianEncoding) and the
chain it heads (sensitivity_chain)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from treesens.compiler.chain import KantchelianEncoding, SensitivityQuestion, sensitivity_chain
from treesens.compiler.encode import Encoding, encode, gap_row_terms
from treesens.compiler.invert import Witness, values_for_pair, witness_from_pair
from treesens.compiler.ir import check_constraint
from treesens.compiler.passes import Chain, Compiled, passes_for
from treesens.compiler.query import DEFAULT_PASSES, KANT_PASSES
from treesens.compiler.replay import meets
from treesens.tests.oracle import brute_force_witness
from treesens.tests.pass_cases import query, two_feature_ensemble

X1, X2 = np.array([0.0, 0.0]), np.array([0.0, 2.0])  # raw 1.75 and -0.25


def _question(vary=("x1",), passes=DEFAULT_PASSES) -> SensitivityQuestion:
    return SensitivityQuestion(two_feature_ensemble(), query(vary, passes=passes))


def test_encoding_pass_gives_the_problem_encode_gives():
    qn = _question()
    compiled, _ = KantchelianEncoding().apply(qn)
    assert compiled.problem == encode(qn.ensemble, qn.query)[0]


def test_encoding_pass_inverse_data_is_the_encoding_of_its_problem():
    compiled, enc = KantchelianEncoding().apply(_question())
    assert isinstance(enc, Encoding) and compiled.encoding is enc


def test_encoding_pass_inverts_the_values_of_a_pair_to_a_witness_on_the_same_leaves():
    compiled, enc = KantchelianEncoding().apply(_question())
    values = values_for_pair(enc, X1, X2, compiled.problem.n_vars)
    w = KantchelianEncoding().invert(values, enc)
    ens = enc.ensemble
    assert (ens.leaf_indices(np.stack([w.x1, w.x2])) == ens.leaf_indices(np.stack([X1, X2]))).all()


def test_encoding_pass_inverts_to_the_leaves_the_values_choose():
    compiled, enc = KantchelianEncoding().apply(_question())
    values = values_for_pair(enc, X1, X2, compiled.problem.n_vars)
    w = KantchelianEncoding().invert(values, enc)
    assert [w.leaves[0].tolist(), w.leaves[1].tolist()] == [[3, 1], [4, 2]]


def test_encoding_pass_picks_a_preferred_value_that_fits():
    compiled, enc = KantchelianEncoding().apply(_question())
    values = values_for_pair(enc, X1, X2, compiled.problem.n_vars)
    w = KantchelianEncoding(prefer={1: [0.3]}).invert(values, enc)
    assert w.x1[1] == 0.3


def test_encoding_has_no_field_of_a_pass():
    names = {f.name for f in dataclasses.fields(Encoding)}
    assert not names & {"unaffected", "pair", "pair_const", "pair_rhs"}


def test_encoding_stats_count_the_unaffected_leaves():
    _, enc = KantchelianEncoding().apply(_question())
    assert enc.stats == {"trees": 2, "leaves": 5, "unaffected_leaves": 1}


def test_gap_row_terms_weigh_each_leaf_by_the_row():
    per_tree, const = gap_row_terms(two_feature_ensemble(), (-1.0,))
    assert per_tree == {0: {1: -2.0, 3: -1.0, 4: 1.0}, 1: {1: -0.5, 2: 0.5}} and const == -0.25


@pytest.mark.parametrize("passes", [DEFAULT_PASSES, KANT_PASSES, frozenset()])
def test_sensitivity_chain_is_the_encoding_then_passes_for(passes):
    chain = sensitivity_chain(passes)
    assert chain.names == ["encode", *(p.name for p in passes_for(passes))]


@pytest.mark.parametrize("passes", [DEFAULT_PASSES, KANT_PASSES, frozenset()])
def test_sensitivity_chain_compiles_what_encode_then_passes_for_compile(passes):
    qn = _question(passes=passes)
    compiled, _ = sensitivity_chain(passes).apply(qn)
    problem, enc = encode(qn.ensemble, qn.query)
    expected, _ = Chain(passes_for(passes)).apply(Compiled(problem, enc))
    assert compiled.problem == expected.problem


def test_sensitivity_chain_inverts_solver_values_to_a_witness():
    chain = sensitivity_chain(DEFAULT_PASSES)
    compiled, inverse = chain.apply(_question())
    values = values_for_pair(compiled.encoding, X1, X2, compiled.problem.n_vars)
    w = chain.invert(values, inverse)
    expected = witness_from_pair(compiled.encoding, X1, X2)
    assert isinstance(w, Witness) and w.intervals == expected.intervals


def test_sensitivity_chain_decodes_a_feasible_point_to_a_pair_that_meets_the_gap():
    qn = _question()
    x1, x2 = brute_force_witness(qn.ensemble, qn.query)
    chain = sensitivity_chain(DEFAULT_PASSES)
    compiled, inverse = chain.apply(qn)
    values = values_for_pair(compiled.encoding, x1, x2, compiled.problem.n_vars)
    assert all(check_constraint(c, values) for c in compiled.problem.constraints)
    w, ens = chain.invert(values, inverse), qn.ensemble
    X = np.stack([w.x1, w.x2])
    proba, raw = ens.proba(X), ens.raw(X)
    assert meets(ens, qn.query, proba[0], raw[0], 0) and meets(ens, qn.query, proba[1], raw[1], 1)
