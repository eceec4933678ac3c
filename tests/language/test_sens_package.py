"""The .sens package: keywords read from the grammar, formatting modes, and the
query-consistency checks of compiler/query.py it shares with the feature-constraints pass."""

from __future__ import annotations

import math
import re
from importlib.resources import files

import pytest

from treesens import language as sens
from treesens.compiler.ensemble import Feature
from treesens.compiler.errors import InputError
from treesens.compiler.query import (
    FeatureBound,
    FeatureRelation,
    Query,
    bounds_by_copy,
    check_relations_within_bounds,
    no_value_in,
    relations_by_feature,
)
from treesens.language.grammar import KEYWORDS, TOP_KEYWORDS, parser
from treesens.language.show import CONSERVATIVE, PLAIN, fmt_name
from treesens.tests.oracle import random_ensemble

GRAMMAR = files("treesens.language").joinpath("sens.lark").read_text()


def _quoted_words() -> set[str]:
    """The words the grammar file writes in quotes (anonymous keywords, KIND, BOOL, ANY)."""
    code = "\n".join(line.split("//")[0] for line in GRAMMAR.splitlines())
    return {w for w in re.findall(r'"([A-Za-z_]+)"', code)}


def test_every_quoted_word_of_the_grammar_is_a_keyword():
    assert _quoted_words() <= KEYWORDS


def test_every_keyword_is_a_quoted_word_of_the_grammar_or_inf():
    assert KEYWORDS - _quoted_words() == {"inf"}


@pytest.mark.parametrize("word", sorted(KEYWORDS))
def test_every_keyword_is_lexed_by_a_terminal_other_than_a_name(word):
    lexers = [
        t.name
        for t in parser().terminals
        if re.fullmatch(t.pattern.to_regexp(), word) and t.name not in ("NAME", "PASS", "MODE")
    ]
    assert lexers


def test_the_package_keeps_the_keywords_name():
    assert sens.KEYWORDS is KEYWORDS


def test_the_plain_mode_writes_a_keyword_named_feature_bare():
    assert fmt_name("gap", mode=PLAIN) == "gap"


def test_the_conservative_mode_quotes_a_keyword_named_feature():
    assert fmt_name("gap", mode=CONSERVATIVE) == '"gap"'


@pytest.mark.parametrize("word", sorted(KEYWORDS))
def test_a_feature_named_like_a_keyword_formats_back_to_the_same_file(word):
    text = f'model "m.json"\nquery q {{\n  vary "{word}"\n  where x1."{word}" <= x2."{word}"\n}}\n'
    ast = sens.parse(text)
    assert sens.parse(sens.format_sens(ast)) == ast


def test_format_sens_leaves_no_state_behind():
    ast = sens.parse('model "m.json"\nquery q {\n  vary "vary", a\n}\n')
    assert sens.format_sens(ast) == sens.format_sens(ast)


# ---- compiler/query.py: consistency of bounds and relations ------------------------------


@pytest.fixture(scope="module")
def ens():
    return random_ensemble(3, n_trees=2, depth=2, n_features=3, n_thresholds=2)


def test_opposite_strict_relations_contradict(ens):
    f = ens.feature_names[0]
    q = Query(vary=(f,), relations=(FeatureRelation(f, 1, "<", 2), FeatureRelation(f, 1, ">", 2)))
    with pytest.raises(InputError, match="contradict each other"):
        relations_by_feature(ens, q)


def test_two_weak_relations_make_an_equality(ens):
    f = ens.feature_names[0]
    q = Query(vary=(f,), relations=(FeatureRelation(f, 1, "<=", 2), FeatureRelation(f, 2, "<=", 1)))
    assert relations_by_feature(ens, q) == {0: [(0, 1, "==")]}


def test_bounds_of_a_fixed_feature_apply_to_both_inputs(ens):
    f = ens.feature_names[1]
    q = Query(vary=(ens.feature_names[0],), bounds=(FeatureBound(f, 0.0, 0.5, (1,)),))
    got = bounds_by_copy(ens, q, frozenset({0}))
    assert set(got) == {(1, 0), (1, 1)}


def test_a_relation_the_bounds_rule_out_is_an_input_error(ens):
    f = ens.feature_names[0]
    lb, ub = ens.features[0].lb, ens.features[0].ub
    mid = (max(lb, -10.0) + min(ub, 10.0)) / 2
    q = Query(
        vary=(f,),
        bounds=(FeatureBound(f, mid + 1, math.inf, (1,)), FeatureBound(f, -math.inf, mid, (2,))),
        relations=(FeatureRelation(f, 1, "<=", 2),),
    )
    varying = frozenset({0})
    with pytest.raises(InputError, match="cannot hold within the bounds"):
        check_relations_within_bounds(
            ens, varying, relations_by_feature(ens, q), bounds_by_copy(ens, q, varying)
        )


def test_an_integer_feature_has_no_whole_value_in_an_open_unit_interval():
    feat = Feature("n", "integer", 0.0, 10.0)
    assert no_value_in(feat, 1.2, 1.8) == "whole value"


def test_an_empty_interval_has_no_value():
    assert no_value_in(Feature("x", "real", 0.0, 1.0), 0.7, 0.3) == "value"


def test_the_top_level_keywords_are_read_from_the_grammar():
    top = {"model", "data", "features", "feature", "group", "groups", "defaults", "query"}
    top |= {"sweep", "audit", "plugin", "bounds"}
    assert top == TOP_KEYWORDS
