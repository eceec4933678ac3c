"""Broken .sens files: `treesens run` prints exactly FILE:LINE:COL: message, the line and a
caret on stderr, and exits 2. Uses the models shipped in examples/ (no ../shared)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from treesens.interfaces.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
BC = EXAMPLES / "breast_cancer_xgb.json"
BC_DETAILS = EXAMPLES / "breast_cancer_details.csv"
WINE = EXAMPLES / "wine_xgb.json"
WINE_DETAILS = EXAMPLES / "wine_details.csv"
ROWS = EXAMPLES / "breast_cancer_rows.csv"

pytestmark = pytest.mark.skipif(
    not BC.exists() or not WINE.exists(), reason="shipped example models missing"
)


def _bc(body: str) -> str:
    return f'model "{BC}"\nfeatures from "{BC_DETAILS}"\n{body}'


def _wine(body: str) -> str:
    return f'model "{WINE}"\nfeatures from "{WINE_DETAILS}"\n{body}'


# (file text, expected stderr lines with {F} for the file name and {D} for its folder)
CASES = {
    # the next line's keyword was read as the feature: "unknown expectation 'max'"
    "vary_each_of_listing_nothing": (
        _bc("sweep s {\n  vary each of\n  expect max gap <= 0.1\n}\n"),
        [
            "{F}:4:3: this vary lists no feature (the next line's 'expect' was read as one): "
            "write its features on the vary's line, vary FEATURE[, FEATURE...]",
            "  vary each of",
            "  ^",
        ],
    ),
    "vary_listing_nothing": (
        _bc("query q {\n  vary\n  gap 0.1\n}\n"),
        [
            "{F}:4:3: this vary lists no feature (the next line's 'gap' was read as one): "
            "write its features on the vary's line, vary FEATURE[, FEATURE...]",
            "  vary",
            "  ^",
        ],
    ),
    "unclosed_block": (
        _bc("query texture {\n  vary mean_texture\n  gap 0.2\n"),
        [
            "{F}:3:15: unclosed block: the '{' of query texture is never closed (missing '}')",
            "query texture {",
            "              ^",
        ],
    ),
    "block_not_closed_before_next": (
        _bc("query a {\n  vary mean_texture\nquery b {\n  vary mean_radius\n}\n"),
        [
            "{F}:5:1: unexpected 'query' inside the query a opened at line 3 (missing '}'?)",
            "query b {",
            "^",
        ],
    ),
    "unknown_feature": (
        _bc("query q {\n  vary mean_textur\n}\n"),
        [
            "{F}:4:8: unknown feature 'mean_textur' (did you mean 'mean_texture', 'mean_symmetry', "
            "'mean_perimeter'?)",
            "  vary mean_textur",
            "       ^",
        ],
    ),
    "unknown_feature_in_constraint": (
        _bc("query q {\n  vary mean_texture\n  where x1.worst_radus <= 20\n}\n"),
        [
            "{F}:5:12: unknown feature 'worst_radus' (did you mean 'worst_radius', 'worst_area', "
            "'worst_fractal_dimension'?)",
            "  where x1.worst_radus <= 20",
            "           ^",
        ],
    ),
    # was "a relation compares one feature between x1 and x2 (got 'worst_radus' and ...)"
    # was "unexpected number 1; expected 'all', 'each', 'subsets', a \"quoted string\", a name"
    "vary_by_index": (
        _bc("query q {\n  vary mean_radius, 1\n}\n"),
        [
            "{F}:4:21: unexpected number 1: a .sens file names its features (vary NAME), where "
            "--vary and the API's vary= also take an index",
            "  vary mean_radius, 1",
            "                    ^",
        ],
    ),
    "unknown_feature_in_relation": (
        _bc("query q {\n  vary mean_texture\n  where x1.worst_radius <= x2.worst_radus\n}\n"),
        [
            "{F}:5:31: unknown feature 'worst_radus' (did you mean 'worst_radius', 'worst_area', "
            "'worst_fractal_dimension'?)",
            "  where x1.worst_radius <= x2.worst_radus",
            "                              ^",
        ],
    ),
    "relation_between_two_features": (
        _bc("query q {\n  vary mean_texture\n  where x1.worst_radius <= x2.worst_area\n}\n"),
        [
            "{F}:5:28: a relation compares one feature between x1 and x2 "
            "(got 'worst_radius' and 'worst_area')",
            "  where x1.worst_radius <= x2.worst_area",
            "                           ^",
        ],
    ),
    "binary_gap_out_of_range": (
        _bc("query q {\n  vary mean_texture\n  gap 0.5\n}\n"),
        [
            "{F}:5:3: gap 0.5 out of range: a binary gap g needs 0 <= g < 0.5 (P(x1) >= 0.5+g and P(x2) <= 0.5-g)",
            "  gap 0.5",
            "  ^",
        ],
    ),
    "binary_gap_written_as_a_percents_number": (
        _bc("query q {\n  vary mean_texture\n  gap 20\n}\n"),
        [
            "{F}:5:3: gap 20 out of range: a binary gap g needs 0 <= g < 0.5 (P(x1) >= 0.5+g and P(x2) <= 0.5-g); a percent? 20% is written 0.2",
            "  gap 20",
            "  ^",
        ],
    ),
    "max_gap_written_as_the_flag": (
        _bc("query q {\n  vary mean_texture\n  max_gap\n}\n"),
        [
            "{F}:5:3: unexpected 'max_gap': a .sens query asks for its max gap with 'gap max' (as --max-gap on the command line; 'gap max tolerance 0.01' to set it)",
            "  max_gap",
            "  ^",
        ],
    ),
    "gap_from_defaults_out_of_range": (
        _bc("defaults {\n  gap 0.75\n}\nquery q {\n  vary mean_texture\n}\n"),
        [
            "{F}:4:3: gap 0.75 out of range: a binary gap g needs 0 <= g < 0.5 (P(x1) >= 0.5+g and P(x2) <= 0.5-g)",
            "  gap 0.75",
            "  ^",
        ],
    ),
    "multiclass_gap_out_of_range": (
        _wine("query q {\n  vary alcohol\n  classes 0 -> 1\n  gap 0.2\n}\n"),
        [
            "{F}:6:3: gap 0.2 out of range: a multiclass gap is a probability ratio g >= 1 "
            "(P(c1) >= g * P(c) for every other class c)",
            "  gap 0.2",
            "  ^",
        ],
    ),
    "multiclass_without_classes": (
        _wine("query q {\n  vary alcohol\n  gap 1.5\n}\n"),
        [
            "{F}:3:7: the model has 3 classes: say which two to compare (classes C1 -> C2; C2 may be 'any')",
            "query q {",
            "      ^",
        ],
    ),
    "class_out_of_range": (
        _wine("query q {\n  vary alcohol\n  classes 0 -> 3\n  gap 1.5\n}\n"),
        [
            "{F}:5:3: classes 0 -> 3: class 3 out of range: the model has classes 0..2",
            "  classes 0 -> 3",
            "  ^",
        ],
    ),
    "classes_on_binary_model": (
        _bc("query q {\n  vary mean_texture\n  classes 0 -> 1\n}\n"),
        [
            "{F}:5:3: classes given, but the model is binary (classes 0 and 1); drop them",
            "  classes 0 -> 1",
            "  ^",
        ],
    ),
    "missing_model_file": (
        'model "nope/model.json"\nquery q {\n  vary a\n}\n',
        [
            "{F}:1:7: model file not found: {D}/nope/model.json",
            'model "nope/model.json"',
            "      ^",
        ],
    ),
    "missing_details_file": (
        f'model "{BC}"\nfeatures from "details.csv"\nquery q {{\n  vary a\n}}\n',
        [
            "{F}:2:15: features file not found: {D}/details.csv",
            'features from "details.csv"',
            "              ^",
        ],
    ),
    "missing_data_file": (
        _bc('data "train.csv" label label\nquery q {\n  vary mean_texture\n}\n'),
        ["{F}:3:6: data file not found: {D}/train.csv", 'data "train.csv" label label', "     ^"],
    ),
    "label_column_not_in_the_data": (
        _bc(f'data "{ROWS}" label target\nquery q {{\n  vary mean_texture\n}}\n'),
        [
            "{F}:3:1: no label column 'target' (did you mean 'label'?) (the columns not the "
            "model's features: label)",
            f'data "{ROWS}" label target',
            "^",
        ],
    ),
    "audit_label_column_not_in_the_data": (
        _bc(f'audit w {{\n  data "{ROWS}" label lbl\n  vary worst_texture\n}}\n'),
        [
            "{F}:4:3: no label column 'lbl' (did you mean 'label'?) (the columns not the "
            "model's features: label)",
            f'  data "{ROWS}" label lbl',
            "  ^",
        ],
    ),
    "syntax_error": (
        _bc("query q {\n  vary mean_texture\n  gap = 0.2\n}\n"),
        [
            "{F}:5:7: unexpected '='; expected 'above', 'delta', 'margin', 'max', a number",
            "  gap = 0.2",
            "      ^",
        ],
    ),
    "unknown_category": (
        _bc(
            "feature mean_texture: categorical in [0, 1] {low, high}\nquery q {\n  vary mean_radius\n"
            "  fix mean_texture = medium\n}\n"
        ),
        [
            "{F}:6:22: 'medium' is not a category of 'mean_texture'",
            "  fix mean_texture = medium",
            "                     ^",
        ],
    ),
    "fixed_value_outside_bounds": (
        _bc("query q {\n  vary mean_texture\n  fix x1.mean_radius = 50\n}\n"),
        [
            "{F}:5:3: 50 is outside the declared range of 'mean_radius', [6.981, 28.11]",
            "  fix x1.mean_radius = 50",
            "  ^",
        ],
    ),
    "bound_at_infinity": (
        _bc(
            "feature mean_radius in [-inf, inf]\nquery q {\n  vary mean_texture\n"
            "  where mean_radius in [-inf, -inf]\n}\n"
        ),
        [
            "{F}:6:9: no value of 'mean_radius' lies in [-inf, -inf]: inputs are finite",
            "  where mean_radius in [-inf, -inf]",
            "        ^",
        ],
    ),
    "negative_margin_gap": (
        _bc("query q {\n  vary mean_texture\n  gap margin -1\n}\n"),
        ["{F}:5:3: margin gap -1 must be >= 0", "  gap margin -1", "  ^"],
    ),
    "varied_feature_fixed": (
        _bc("query q {\n  vary mean_texture\n  fix mean_texture = 15\n}\n"),
        [
            "{F}:5:3: x1 and x2 cannot differ: the bounds and relations hold every varied "
            "feature ('mean_texture') to one value for both inputs, so any answer would be "
            "vacuous; vary another feature or drop them",
            "  fix mean_texture = 15",
            "  ^",
        ],
    ),
    "varied_features_held_equal": (
        _bc(
            "query q {\n  vary mean_texture, worst_texture\n"
            "  where x1.mean_texture == x2.mean_texture\n  where worst_texture in [20, 20]\n}\n"
        ),
        [
            "{F}:6:9: x1 and x2 cannot differ: the bounds and relations hold every varied "
            "feature ('mean_texture', 'worst_texture') to one value for both inputs, so any "
            "answer would be vacuous; vary another feature or drop them",
            "  where worst_texture in [20, 20]",
            "        ^",
        ],
    ),
    "strict_relation_on_fixed_feature": (
        _bc("query q {\n  vary mean_texture\n  where x1.mean_radius < x2.mean_radius\n}\n"),
        [
            "{F}:5:9: x1.mean_radius < x2.mean_radius cannot hold: 'mean_radius' is not varied, so x1 and x2 "
            "share its value",
            "  where x1.mean_radius < x2.mean_radius",
            "        ^",
        ],
    ),
    "strict_relation_on_a_feature_a_sweep_query_does_not_vary": (
        _bc(
            "sweep s {\n  vary each of mean_texture, mean_radius\n"
            "  where x1.mean_radius < x2.mean_radius\n}\n"
        ),
        [
            "{F}:5:9: x1.mean_radius < x2.mean_radius cannot hold: 'mean_radius' is not varied in "
            "s/mean_texture, so x1 and x2 share its value",
            "  where x1.mean_radius < x2.mean_radius",
            "        ^",
        ],
    ),
    "contradicting_relations_point_at_the_later_one": (
        _bc(
            "query q {\n  vary mean_texture\n  where x1.mean_texture < x2.mean_texture\n"
            "  where x1.mean_texture > x2.mean_texture\n}\n"
        ),
        [
            "{F}:6:9: the relations on 'mean_texture' contradict each other: x1.mean_texture > "
            "x2.mean_texture here, x1.mean_texture < x2.mean_texture at line 5",
            "  where x1.mean_texture > x2.mean_texture",
            "        ^",
        ],
    ),
    "heuristic_effort_that_is_not_positive": (
        _bc("query q {\n  vary mean_texture\n  option heuristic_effort = 0\n}\n"),
        [
            "{F}:5:29: option 'heuristic_effort' takes a positive number, not 0",
            "  option heuristic_effort = 0",
            "                            ^",
        ],
    ),
    "fix_to_a_number_that_overflows": (
        _bc("query q {\n  vary mean_texture\n  fix x1.mean_radius = 1e400\n}\n"),
        [
            "{F}:5:24: 'mean_radius' cannot equal inf: give a finite number",
            "  fix x1.mean_radius = 1e400",
            "                       ^",
        ],
    ),
    "group_named_twice": (
        _bc(
            "group g = mean_radius, mean_texture\ngroup g = mean_area, mean_perimeter\n"
            "query q {\n  vary mean_texture\n}\n"
        ),
        [
            "{F}:4:7: a second group named 'g' (the first is at line 3)",
            "group g = mean_area, mean_perimeter",
            "      ^",
        ],
    ),
    "seed_beyond_32_bits": (
        _bc("query q {\n  vary mean_texture\n  seed 2147483648\n}\n"),
        [
            "{F}:5:3: seed takes a whole number from 0 to 2147483647, not 2147483648",
            "  seed 2147483648",
            "  ^",
        ],
    ),
    "threshold_form_above_below_below": (
        _bc("query q {\n  vary mean_texture\n  gap above 1 below 5\n}\n"),
        [
            "{F}:5:3: gap above 1 below 5: the threshold form needs A >= B (with A < B, one "
            "input whose prediction lies in [A, B] is both x1 and x2, nothing changed)",
            "  gap above 1 below 5",
            "  ^",
        ],
    ),
    "data_aware_parameter_of_the_wrong_kind": (
        _bc('query q {\n  vary mean_texture\n  data_aware prob prob_empty = "never"\n}\n'),
        [
            '{F}:5:32: prob_empty takes smooth or forbid, not "never"',
            '  data_aware prob prob_empty = "never"',
            "                               ^",
        ],
    ),
    "relation_the_bounds_rule_out": (
        _bc(
            "query q {\n  vary mean_texture\n  where x1.mean_texture >= 20\n"
            "  where x2.mean_texture <= 15\n  where x1.mean_texture <= x2.mean_texture\n}\n"
        ),
        [
            "{F}:7:9: x1.mean_texture <= x2.mean_texture cannot hold within the bounds "
            "(x1.mean_texture in [20, 39.28], x2.mean_texture in [9.71, 15])",
            "  where x1.mean_texture <= x2.mean_texture",
            "        ^",
        ],
    ),
    "contradicting_relations_from_defaults_and_query": (
        _bc(
            "defaults {\n  where x1.mean_texture <= x2.mean_texture\n}\nquery q {\n"
            "  vary mean_texture\n  where x2.mean_texture < x1.mean_texture\n}\n"
        ),
        [
            "{F}:8:9: the relations on 'mean_texture' contradict each other: x2.mean_texture < "
            "x1.mean_texture here, x1.mean_texture <= x2.mean_texture at line 4",
            "  where x2.mean_texture < x1.mean_texture",
            "        ^",
        ],
    ),
    "contradicting_categories_are_named_as_written": (
        _bc(
            "feature mean_texture: categorical in [0, 2] {low, mid, high}\nquery q {\n"
            '  vary mean_radius\n  fix mean_texture = low\n  where mean_texture == "high"\n}\n'
        ),
        [
            '{F}:7:9: the bounds on mean_texture leave no value: this one asks for "high", but '
            'the one at line 6 asks for "low"',
            '  where mean_texture == "high"',
            "        ^",
        ],
    ),
    "a_relation_the_categories_rule_out_names_them": (
        _bc(
            "feature mean_texture: categorical in [0, 2] {low, mid, high}\nquery q {\n"
            '  vary mean_texture\n  where x1.mean_texture == "high"\n'
            "  where x1.mean_texture < x2.mean_texture\n}\n"
        ),
        [
            "{F}:7:9: x1.mean_texture < x2.mean_texture cannot hold within the bounds "
            '(x1.mean_texture is "high", x2.mean_texture is one of "low", "mid", "high")',
            "  where x1.mean_texture < x2.mean_texture",
            "        ^",
        ],
    ),
    "contradicting_fixed_values_on_one_line": (
        _bc("query q {\n  vary mean_texture\n  where mean_radius == 10 and mean_radius == 11\n}\n"),
        [
            "{F}:5:31: the bounds on mean_radius leave no value: this one asks for 11, but the one "
            "earlier on this line asks for 10",
            "  where mean_radius == 10 and mean_radius == 11",
            "                              ^",
        ],
    ),
    "contradicting_bounds_on_the_two_inputs_of_a_shared_feature": (
        _bc(
            "defaults {\n  where mean_radius in [10, 20]\n}\nquery q {\n  vary mean_texture\n"
            "  where mean_radius >= 12\n  fix x2.mean_radius = 11\n}\n"
        ),
        [
            "{F}:9:3: the bounds on mean_radius leave no value: this one asks for 11, but the ones "
            "at lines 4, 8 leave [12, 20] ('mean_radius' is not varied, so x1 and x2 share its "
            "value)",
            "  fix x2.mean_radius = 11",
            "  ^",
        ],
    ),
    "binary_kind_over_details_bounds_without_0_or_1": (
        _bc("feature mean_radius: binary\nquery q {\n  vary mean_radius\n}\n"),
        [
            "{F}:3:1: feature 'mean_radius': a binary feature takes 0 or 1, but its bounds are "
            "[6.981, 28.11] (from {BCD}); give bounds to replace them "
            "(feature mean_radius: binary in [0, 1])",
            "feature mean_radius: binary",
            "^",
        ],
    ),
    "unknown_option_name": (
        _bc("query q {\n  vary mean_texture\n  option heuristc = false\n}\n"),
        [
            "{F}:5:3: unknown option 'heuristc' (did you mean 'heuristic', 'heuristic_effort'?); "
            "known: heuristic, progress, heuristic_effort, box_search, memory_mb",
            "  option heuristc = false",
            "  ^",
        ],
    ),
    "option_heuristic_not_a_boolean": (
        _bc("defaults {\n  option heuristic = no\n}\nquery q {\n  vary mean_texture\n}\n"),
        [
            "{F}:4:22: option 'heuristic' takes true or false, not no",
            "  option heuristic = no",
            "                     ^",
        ],
    ),
    "data_aware_parameter_given_as_option": (
        _bc("query q {\n  vary mean_texture\n  option clause_width = 3\n}\n"),
        [
            "{F}:5:3: option 'clause_width': a data-aware parameter: give it on the data_aware "
            "line (data_aware clause clause_width = ...)",
            "  option clause_width = 3",
            "  ^",
        ],
    ),
    "data_aware_parameter_with_mode_none": (
        _bc("query q {\n  vary mean_texture\n  data_aware none clause_width = 3\n}\n"),
        [
            "{F}:5:19: clause_width has no effect with data_aware none: it is a parameter of the "
            "clause and probclause modes",
            "  data_aware none clause_width = 3",
            "                  ^",
        ],
    ),
    "clause_parameter_with_mode_prob": (
        _bc("query q {\n  vary mean_texture\n  data_aware prob max_clauses = 9\n}\n"),
        [
            "{F}:5:19: max_clauses has no effect with data_aware prob: it is a parameter of the "
            "clause and probclause modes",
            "  data_aware prob max_clauses = 9",
            "                  ^",
        ],
    ),
    "prob_alpha_with_prob_empty_forbid": (
        _bc(
            "query q {\n  vary mean_texture\n  data_aware prob prob_empty = forbid, prob_alpha = 2\n}\n"
        ),
        [
            "{F}:5:40: prob_alpha has no effect with prob_empty = forbid: the intervals with "
            "data use plain frequencies (no smoothing)",
            "  data_aware prob prob_empty = forbid, prob_alpha = 2",
            "                                       ^",
        ],
    ),
    "format_xgboost_dump_on_a_native_model": (
        f'model "{BC}" format xgboost-dump\nquery q {{\n  vary mean_texture\n}}\n',
        [
            f"{{F}}:1:{len(str(BC)) + 10}: format xgboost-dump, but the file is a native XGBoost "
            "model, not a text dump (a JSON list of trees); drop 'format xgboost-dump' (the "
            "format is read from the file)",
            f'model "{BC}" format xgboost-dump',
            " " * (len(str(BC)) + 9) + "^",
        ],
    ),
    "base_score_on_a_native_model": (
        f'model "{BC}" base_score 0.3\nquery q {{\n  vary mean_texture\n}}\n',
        [
            f"{{F}}:1:{len(str(BC)) + 10}: base_score is only for XGBoost text dumps, which do "
            "not store it; the file is a native XGBoost model, which has its own: drop "
            "'base_score 0.3'",
            f'model "{BC}" base_score 0.3',
            " " * (len(str(BC)) + 9) + "^",
        ],
    ),
    "unknown_backend": (
        _bc("query q {\n  vary mean_texture\n  backend gurobbi\n}\n"),
        [
            "{F}:5:3: unknown backend 'gurobbi' (did you mean 'gurobi'?); known: cpsat, cbc, "
            "highs, gurobi, z3, boxes, race (or race:NAME+NAME to race those)",
            "  backend gurobbi",
            "  ^",
        ],
    ),
    "a_sweep_listing_a_feature_twice": (
        _bc("sweep s {\n  vary each of mean_texture, mean_texture\n}\n"),
        [
            "{F}:4:30: feature 'mean_texture' listed twice",
            "  vary each of mean_texture, mean_texture",
            "                             ^",
        ],
    ),
    "a_sweep_listing_a_feature_set_twice_in_another_order": (
        _bc(
            "sweep s {\n  vary each of {mean_texture, mean_radius}, {mean_radius, mean_texture}\n}\n"
        ),
        [
            "{F}:4:45: feature set {mean_radius, mean_texture} listed twice",
            "  vary each of {mean_texture, mean_radius}, {mean_radius, mean_texture}",
            "                                            ^",
        ],
    ),
    "unknown_feature_declared": (
        _bc("feature mean_textur: real\nquery q {\n  vary mean_texture\n}\n"),
        [
            "{F}:3:9: unknown feature 'mean_textur' (did you mean 'mean_texture', 'mean_symmetry', "
            "'mean_perimeter'?)",
            "feature mean_textur: real",
            "        ^",
        ],
    ),
    "a_varied_feature_its_declared_bounds_hold_to_one_value": (
        _bc("feature radius_error in [0.5, 0.5]\nquery q {\n  vary radius_error\n}\n"),
        [
            "{F}:5:3: x1 and x2 cannot differ: the bounds and relations hold every varied "
            "feature ('radius_error') to one value for both inputs, so any answer would be "
            "vacuous; vary another feature or drop them",
            "  vary radius_error",
            "  ^",
        ],
    ),
    "bounds_from_data_without_data": (
        _bc("bounds from data\nquery q {\n  vary mean_texture\n}\n"),
        [
            "{F}:3:1: 'bounds from data' narrows each feature to its column's range in the data: "
            'add a line  data "train.csv"',
            "bounds from data",
            "^",
        ],
    ),
    "bounds_from_data_with_data_outside_a_feature_line": (
        _bc(
            f'data "{ROWS}"\nbounds from data\nfeature radius_error in [0.2, 0.3]\n'
            "query q {\n  vary mean_texture\n}\n"
        ),
        [
            f"{{F}}:5:1: cannot use the data: {ROWS}: feature 'radius_error': the data's values "
            "[0.1199, 1.509] leave its declared bounds [0.2, 0.3]",
            "feature radius_error in [0.2, 0.3]",
            "^",
        ],
    ),
    "a_keyword_written_as_its_flag": (
        _bc(f'data "{ROWS}"\nquery q {{\n  vary mean_texture\n  data-aware prob\n}}\n'),
        [
            "{F}:6:3: unexpected 'data-aware' (did you mean 'data_aware'? a .sens keyword joins "
            "its words with '_' where a command-line flag has '-')",
            "  data-aware prob",
            "  ^",
        ],
    ),
    "a_name_with_a_space_written_unquoted_in_vary": (
        _bc("query q {\n  vary mean_radius, fixed acidity\n}\n"),
        [
            "{F}:4:27: unexpected 'acidity' after 'fixed': a name with a space in it is quoted "
            "(\"fixed acidity\"), and the names of a list are separated by ','",
            "  vary mean_radius, fixed acidity",
            "                          ^",
        ],
    ),
    "a_name_with_a_space_written_unquoted_in_where": (
        _bc("query q {\n  vary mean_radius\n  where x1.fixed acidity <= 2\n}\n"),
        [
            "{F}:5:18: unexpected 'acidity' after 'fixed': a name with a space in it is quoted "
            '("fixed acidity")',
            "  where x1.fixed acidity <= 2",
            "                 ^",
        ],
    ),
    "a_misspelt_keyword_after_a_name_is_not_read_as_a_spaced_name": (
        _bc("query q {\n  vary mean_radius timout 5s\n}\n"),
        [
            "{F}:4:20: unexpected 'timout' (did you mean 'timeout'?); expected ',', 'backend', "
            "'baseline', 'budget', 'by', 'classes', 'data', ..., '}'",
            "  vary mean_radius timout 5s",
            "                   ^",
        ],
    ),
    "a_category_name_given_to_an_integer_feature": (
        _bc(
            'feature mean_radius: integer\nquery q {\n  vary mean_texture\n  fix mean_radius = "big"\n}\n'
        ),
        [
            "{F}:6:21: 'mean_radius' is an integer feature: give a number, not \"big\"",
            '  fix mean_radius = "big"',
            "                    ^",
        ],
    ),
    "a_model_line_keyword_written_as_its_flag": (
        f'model "{BC}"\nnum-class 2\nquery q {{\n  vary mean_texture\n}}\n',
        [
            "{F}:2:1: unexpected 'num-class' (did you mean 'num_class'? a .sens keyword joins "
            "its words with '_' where a command-line flag has '-')",
            "num-class 2",
            "^",
        ],
    ),
    # was "unexpected '='; expected 'in', a comparison (<=, <, >=, >, ==, !=)"
    "a_single_equals_in_a_comparison": (
        _bc("query q {\n  vary mean_texture\n  where mean_radius = 12\n}\n"),
        [
            "{F}:5:21: unexpected '=': a comparison tests equality with '==' (age == 30)",
            "  where mean_radius = 12",
            "                    ^",
        ],
    ),
    # was "unexpected character '/'"
    "a_model_path_left_unquoted": (
        "model /models/m.json\nquery q { vary a }\n",
        [
            "{F}:1:7: unexpected character '/': a path is quoted (model \"path/to/file\")",
            "model /models/m.json",
            "      ^",
        ],
    ),
    # was "unexpected character ';'"
    "a_statement_ended_by_a_semicolon": (
        _bc("query q { vary mean_texture; gap 0.2 }\n"),
        [
            "{F}:3:28: unexpected character ';': statements are set apart by a new line or a space",
            "query q { vary mean_texture; gap 0.2 }",
            "                           ^",
        ],
    ),
    # was "unexpected character '/'"
    "a_comment_begun_with_two_slashes": (
        _bc("query q { vary mean_texture  // texture\n}\n"),
        [
            "{F}:3:30: unexpected '//': a comment starts with '#'",
            "query q { vary mean_texture  // texture",
            "                             ^",
        ],
    ),
    # was "unexpected character '('"
    "a_range_in_parentheses": (
        _bc("query q { vary mean_texture\n where mean_radius in (10, 15) }\n"),
        [
            "{F}:4:23: unexpected character '(': a range is written in square brackets "
            "(in [10, 15])",
            " where mean_radius in (10, 15) }",
            "                      ^",
        ],
    ),
    # was "unexpected ','; expected 'backend', 'baseline', ..."
    "a_gap_with_a_decimal_comma": (
        _bc("query q { vary mean_texture\n gap 0,2 }\n"),
        [
            "{F}:4:7: unexpected ',' after 0: a number's decimals follow a '.' (0.2, not 0,2)",
            " gap 0,2 }",
            "      ^",
        ],
    ),
    # was "unexpected 's'; expected 'backend', 'baseline', ..."
    "a_timeout_s_unit_set_apart": (
        _bc("query q { vary mean_texture\n timeout 10 s }\n"),
        [
            "{F}:4:13: unexpected 's': a duration's unit follows its number with no space "
            "(timeout 10s)",
            " timeout 10 s }",
            "            ^",
        ],
    ),
    # was "unexpected ','; expected '->'"
    "a_class_pair_separated_by_a_comma": (
        _bc("query q { vary mean_texture\n classes 0,1 }\n"),
        [
            "{F}:4:11: unexpected ',': a class pair is written with '->' (classes 0 -> 1)",
            " classes 0,1 }",
            "          ^",
        ],
    ),
    # was "unexpected 'or' (did you mean 'work'?)"
    "constraints_joined_by_or": (
        _bc(
            "query q {\n  vary mean_texture\n  where x1.mean_radius <= 12 or x2.mean_radius >= 14\n}\n"
        ),
        [
            "{F}:5:30: unexpected 'or': the constraints of a where clause all hold at once, "
            "joined by 'and'; for one or another, ask a query for each",
            "  where x1.mean_radius <= 12 or x2.mean_radius >= 14",
            "                             ^",
        ],
    ),
    # was "unexpected character '&'"
    "constraints_joined_by_ampersands": (
        _bc(
            "query q {\n  vary mean_texture\n  where x1.mean_radius <= 12 && x2.mean_radius >= 14\n}\n"
        ),
        [
            "{F}:5:30: unexpected '&&': constraints are joined by 'and'",
            "  where x1.mean_radius <= 12 && x2.mean_radius >= 14",
            "                             ^",
        ],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_broken_file(name, tmp_path, capsys):
    text, expected = CASES[name]
    path = tmp_path / f"{name}.sens"
    path.write_text(text)
    code = main(["run", str(path), "--list"])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    want = [
        line.replace("{F}", str(path))
        .replace("{D}", str(tmp_path))
        .replace("{BCD}", str(BC_DETAILS))
        for line in expected
    ]
    assert err.splitlines() == want


def test_an_audits_class_out_of_range_is_named_as_its_classes_line(tmp_path, capsys):
    rows = tmp_path / "iris_rows.csv"
    rows.write_text("sepal_length_cm,sepal_width_cm,petal_length_cm,petal_width_cm\n5,3,1.4,0.2\n")
    path = tmp_path / "a.sens"
    iris = EXAMPLES / "iris_lgbm.txt"
    path.write_text(
        f'model "{iris}"\naudit a {{\n  data "{rows}"\n  vary petal_length_cm\n'
        "  gap 2\n  classes any -> 3\n}\n"
    )
    assert main(["run", str(path), "--list"]) == 2
    assert capsys.readouterr().err.splitlines()[0] == (
        f"{path}:6:3: classes any -> 3: class 3 out of range: the model has classes 0..2"
    )


def test_missing_sens_file(tmp_path, capsys):
    code = main(["run", str(tmp_path / "none.sens")])
    _, err = capsys.readouterr()
    assert code == 2
    assert err.strip() == f"treesens: error: {tmp_path / 'none.sens'}: query file not found"


def test_unknown_query_name(tmp_path, capsys):
    path = tmp_path / "q.sens"
    path.write_text(_bc("query texture {\n  vary mean_texture\n}\n"))
    code = main(["run", str(path), "--query", "textur"])
    _, err = capsys.readouterr()
    assert code == 2
    assert err.strip() == (
        f"treesens: error: {path}: no query named 'textur' (did you mean 'texture'?); "
        "the file has: texture"
    )


def test_fmt_reports_syntax_errors_too(tmp_path, capsys):
    path = tmp_path / "bad.sens"
    path.write_text('model "m.json"\nquery q {\n  vary a\n')
    code = main(["fmt", str(path)])
    _, err = capsys.readouterr()
    assert code == 2
    assert (
        err.splitlines()[0]
        == f"{path}:2:9: unclosed block: the '{{' of query q is never closed (missing '}}')"
    )


def test_a_model_given_instead_of_a_sens_file_is_named_as_one(capsys):
    code = main(["run", str(BC), "--list"])
    _, err = capsys.readouterr()
    assert code == 2
    lines = err.splitlines()
    assert lines[0] == (
        f"{BC}:1:1: this looks like a model file, not a .sens query file (to ask about a model "
        "directly: treesens check MODEL --vary FEATURE ...; the .sens language: docs/language.md)"
    )
    assert lines[1:] == [BC.read_text()[:97] + "...", "^"]


@pytest.mark.parametrize("command", ["run", "test", "fmt"])
def test_a_data_file_given_instead_of_a_sens_file_is_named_as_one(command, capsys):
    rows = EXAMPLES / "breast_cancer_rows.csv"
    assert main([command, str(rows)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"treesens: error: {rows}: a data file, not a .sens query file: ")


def test_error_context_is_cut_to_100_characters_around_the_column(tmp_path, capsys):
    names = [row.split(",")[1] for row in BC_DETAILS.read_text().splitlines()[1:]]
    others = ", ".join(n for n in names if n != "mean_radius")  # the error near the line's end
    assert len(others) > 300
    path = tmp_path / "long.sens"
    path.write_text(_bc(f"query q {{\n  vary {others}, mean_textur, mean_radius\n}}\n"))
    code = main(["run", str(path), "--list"])
    _, err = capsys.readouterr()
    assert code == 2
    head, src, caret = err.splitlines()
    assert head.startswith(f"{path}:4:{8 + len(others) + 2}: unknown feature 'mean_textur'")
    assert len(src) == 100 and src.startswith("...") and not src.endswith("...")
    assert src[len(caret) - 1 :].startswith("mean_textur, mean_radius")


def _clause_file_case(tmp_path, clauses_doc: str) -> Path:
    (tmp_path / "c.json").write_text(clauses_doc)
    path = tmp_path / "q.sens"
    path.write_text(
        _bc(
            f'data "{ROWS}" label label\nquery q {{\n  vary mean_texture\n  gap 0.2\n'
            '  data_aware clause clauses = "c.json"\n}\n'
        )
    )
    return path


def test_a_clauses_file_naming_an_unknown_feature_stops_the_file_at_its_place(tmp_path, capsys):
    doc = (
        '{"clauses": [{"literals": [{"feature": "mean_radius", "lo": 30, "hi": null}]},'
        ' {"literals": [{"feature": "mean_radiuss", "lo": 40, "hi": null}]}]}'
    )
    path = _clause_file_case(tmp_path, doc)
    code = main(["run", str(path), "--list"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.splitlines()[0] == (
        f"{path}:7:21: {tmp_path / 'c.json'}: clause 1: unknown feature 'mean_radiuss' "
        "(did you mean 'mean_radius', 'mean_fractal_dimension', 'worst_radius'?)"
    )


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be"])
def test_a_sens_file_saved_as_utf16_is_named_utf16(tmp_path, capsys, encoding):
    path = tmp_path / "q.sens"
    text = 'model "m.json"\nquery q {\n  vary x\n}\n'
    bom = b"\xfe\xff" if encoding == "utf-16-be" else b""  # utf-16 writes its own BOM
    path.write_bytes(bom + text.encode(encoding))
    code = main(["run", str(path), "--list"])
    _, err = capsys.readouterr()
    assert code == 2
    assert err.strip() == (
        f"treesens: error: {path}:1:1: the file is UTF-16 text, not UTF-8 (save the file as UTF-8)"
    )


def test_a_clauses_file_that_is_not_one_stops_the_file_at_its_place(tmp_path, capsys):
    path = _clause_file_case(tmp_path, '{"clauses": 3}')
    code = main(["run", str(path), "--list"])
    _, err = capsys.readouterr()
    assert code == 2
    assert err.splitlines()[0].startswith(f"{path}:7:21: {tmp_path / 'c.json'}: not a clauses")


@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_a_sens_file_that_is_not_utf8_names_line_and_column(tmp_path, capsys, bom):
    path = tmp_path / "latin1.sens"
    path.write_bytes(bom + b'model "m.json"\nquery q {\n  vary caf\xe9\n}\n')
    code = main(["run", str(path), "--list"])
    _, err = capsys.readouterr()
    assert code == 2
    assert err.strip() == (
        f"treesens: error: {path}:3:11: byte 0xe9 is not UTF-8 text (save the file as UTF-8)"
    )


def test_a_path_written_from_the_working_directory_says_paths_are_the_files_own(
    tmp_path, capsys, monkeypatch
):
    (tmp_path / "models").mkdir()
    shutil.copy(BC, tmp_path / "models" / "bc.json")
    (tmp_path / "queries").mkdir()
    sens = tmp_path / "queries" / "q.sens"
    sens.write_text('model "models/bc.json"\nquery q {\n  vary mean_texture\n}\n')
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(sens), "--list"]) == 2
    assert capsys.readouterr().err.splitlines()[0] == (
        f"{sens}:1:7: model file not found: {tmp_path}/queries/models/bc.json (a .sens file's "
        "paths are relative to its own folder, not the working directory, where "
        f"'models/bc.json' is {tmp_path}/models/bc.json)"
    )


def test_a_path_found_nowhere_is_said_not_found_alone(tmp_path, capsys, monkeypatch):
    sens = tmp_path / "q.sens"
    sens.write_text(f'model "{BC}"\ndata "rows.csv"\nquery q {{\n  vary mean_texture\n}}\n')
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(sens), "--list"]) == 2
    assert capsys.readouterr().err.splitlines()[0] == (
        f"{sens}:2:6: data file not found: {tmp_path}/rows.csv"
    )
