"""The query-option table (compiler/options.py): every option reaches the CLI, the API and
.sens; the data-aware modes round-trip; QueryOptions is a typed, frozen record that still
reads as (name, value) pairs."""

from __future__ import annotations

import inspect
import json
import pickle

import pytest

from treesens.compiler.errors import InputError
from treesens.compiler.options import (
    MODE_NAMES,
    OPTIONS,
    SENS_DATA,
    SENS_DATA_AWARE,
    SENS_OPTION,
    SETTINGS,
    DataAwareMode,
    QueryOptions,
)
from treesens.compiler.plan import Plan
from treesens.compiler.query import Gap, GapKind, Query
from treesens.interfaces import api
from treesens.interfaces.cli.common import data_options
from treesens.interfaces.cli.main import build_parser
from treesens.language import KEYWORDS, SensError, parse
from treesens.language.check import check_options

EXAMPLE = __import__("pathlib").Path(__file__).parents[2] / "examples" / "breast_cancer_xgb.json"

# a value each option takes on the command line, and the value it becomes
CLI_VALUES = {
    "data": (["--data", "d.csv"], "d.csv"),
    "memory_mb": (["--memory-mb", "3000"], 3000),
    "label": (["--data", "d.csv", "--label", "y"], "y"),
    "clause_width": (["--clause-width", "3"], 3),
    "max_clauses": (["--max-clauses", "7"], 7),
    "clause_time": (["--clause-time", "2.5"], 2.5),
    "clauses": (["--clauses", "c.json"], "c.json"),
    "clause_cache": (["--no-clause-cache"], False),
    "prob_alpha": (["--prob-alpha", "0.5"], 0.5),
    "prob_empty": (["--prob-empty", "forbid"], "forbid"),
    "stall_time": (["--stall-time", "30"], 30.0),
    "optimise_time": (["--optimise-time", "20"], 20.0),
    "optimality_gap": (["--optimality-gap", "0.01"], 0.01),
    "heuristic": (["--no-heuristic"], False),
    "progress": (["--progress"], True),
    "heuristic_effort": (["--heuristic-effort", "2"], 2.0),
    "box_search": (["--no-box-search"], False),
    "solver_params": (["--solver-param", "linearization_level=2"], (("linearization_level", 2),)),
}
# a value each option takes in .sens
SENS_VALUES = {
    "memory_mb": "3000",
    "clause_width": "3",
    "max_clauses": "7",
    "clause_time": "2.5",
    "clauses": '"c.json"',
    "clause_cache": "false",
    "prob_alpha": "0.5",
    "prob_empty": "forbid",
    "stall_time": "30",
    "optimise_time": "20",
    "optimality_gap": "0.01",
    "heuristic": "false",
    "progress": "true",
    "heuristic_effort": "2",
    "box_search": "false",
}


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _cli_options(argv: list[str]) -> QueryOptions:
    args = build_parser().parse_args(["check", "m.json", "--vary", "a", *argv])
    return QueryOptions.of({k: v for k, v in data_options(args).items() if v is not None})


def test_the_table_names_every_field_of_query_options():
    assert [o.name for o in OPTIONS] == list(QueryOptions.__dataclass_fields__)


@pytest.mark.parametrize(
    "spec", [o for o in OPTIONS if o.default not in (None, False, (), "")], ids=lambda o: o.name
)
def test_every_option_with_a_default_says_it_in_its_help(spec):
    assert "default" in spec.help


@pytest.mark.parametrize("spec", [o for o in OPTIONS if o.choices], ids=lambda o: o.name)
def test_every_option_of_a_few_choices_names_them_in_its_help(spec):
    assert all(choice in spec.help for choice in spec.choices)


@pytest.mark.parametrize("spec", OPTIONS, ids=lambda o: o.name)
def test_every_option_is_set_by_its_cli_flag(spec):
    argv, value = CLI_VALUES[spec.name]
    flag = "--solver-param" if spec.name == "solver_params" else _flag(spec.name)
    assert flag in argv or flag.replace("--", "--no-", 1) in argv
    mode = ["--data-aware", spec.modes[0].value] if spec.modes else []
    assert getattr(_cli_options(argv + mode), spec.name) == value


@pytest.mark.parametrize("spec", [o for o in OPTIONS if o.modes], ids=lambda o: o.name)
def test_a_data_aware_flag_with_a_mode_it_does_not_act_in_is_refused(spec):
    argv, _ = CLI_VALUES[spec.name]
    other = next(m for m in DataAwareMode if m not in spec.modes)
    with pytest.raises(InputError, match=f"has no effect with --data-aware {other.value}"):
        _cli_options([*argv, "--data-aware", other.value])


@pytest.mark.parametrize("spec", [o for o in OPTIONS if o.modes], ids=lambda o: o.name)
def test_a_data_aware_keyword_of_the_api_with_a_mode_it_does_not_act_in_is_refused(spec):
    """As its flag is: ``check(..., clause_width=3)`` without a clause mode would be
    ignored without a word."""
    _, value = CLI_VALUES[spec.name]
    other = next(m for m in DataAwareMode if m not in spec.modes)
    with pytest.raises(InputError, match=f"{spec.name} has no effect with data_aware {other}"):
        api.check(EXAMPLE, ["mean_texture"], data_aware=other.value, **{spec.name: value})


def test_prob_alpha_with_prob_empty_forbid_is_refused_by_the_api():
    with pytest.raises(InputError, match="prob_alpha has no effect with prob_empty forbid"):
        api.check(EXAMPLE, ["mean_texture"], data_aware="prob", prob_empty="forbid", prob_alpha=2)


@pytest.mark.parametrize("spec", OPTIONS, ids=lambda o: o.name)
def test_every_option_is_a_keyword_of_the_api(spec):
    assert spec.name in inspect.signature(api.check).parameters


@pytest.mark.parametrize("spec", OPTIONS, ids=lambda o: o.name)
def test_every_option_is_set_in_sens_or_refused_with_its_reason(spec):
    head = 'model "m.json"\ndata "d.csv" label y\n'
    if spec.sens == SENS_OPTION:
        ast = parse(head + f"query q {{ vary a option {spec.name} = {SENS_VALUES[spec.name]} }}")
        check_options(ast)
    elif spec.sens == SENS_DATA_AWARE:
        mode = spec.modes[0].value
        parse(
            head + f"query q {{ vary a data_aware {mode} {spec.name} = {SENS_VALUES[spec.name]} }}"
        )
    elif spec.sens == SENS_DATA:
        assert spec.sens_key in ("data", "label")
    else:
        assert spec.why_not_in_sens
        ast = parse(head + f"query q {{ vary a option {spec.name} = 1 }}")
        with pytest.raises(SensError, match="cannot be set from a .sens file"):
            check_options(ast)


@pytest.mark.parametrize(
    "spec", [o for o in OPTIONS if o.sens == SENS_OPTION], ids=lambda o: o.name
)
def test_a_sens_option_with_a_bad_value_is_refused(spec):
    ast = parse(f'model "m.json"\nquery q {{ vary a option {spec.name} = "x" }}')
    with pytest.raises(SensError, match=f"option '{spec.name}' takes"):
        check_options(ast)


@pytest.mark.parametrize("mode", list(DataAwareMode), ids=str)
def test_a_data_aware_mode_round_trips_through_its_name(mode):
    assert DataAwareMode.parse(str(mode)) is mode
    assert DataAwareMode(mode.value) is mode
    assert pickle.loads(pickle.dumps(mode)) is mode


def test_data_aware_mode_names_are_the_enum_values():
    assert MODE_NAMES == ("none", "prob", "clause", "probclause")


def test_data_aware_mode_aliases_parse():
    assert DataAwareMode.parse("clause+prob") is DataAwareMode.PROBCLAUSE
    assert DataAwareMode.parse("OFF") is DataAwareMode.NONE


def test_an_unknown_data_aware_mode_is_an_input_error():
    with pytest.raises(InputError, match="unknown data-aware mode 'probclaus'"):
        DataAwareMode.parse("probclaus")


def test_a_query_holds_its_mode_as_the_enum_and_compares_equal_to_its_name():
    q = Query(vary=("a",), plan=Plan(data_aware="prob"))
    assert q.plan.data_aware is DataAwareMode.PROB and q.plan.data_aware == "prob"


def test_a_query_holds_its_options_as_a_record():
    q = Query(vary=("a",), plan=Plan(options=(("heuristic", False), ("heuristic_effort", 2.0))))
    assert isinstance(q.plan.options, QueryOptions)
    assert q.plan.options.heuristic is False and q.plan.options.heuristic_effort == 2.0


def test_query_options_read_as_name_value_pairs():
    q = Query(vary=("a",), plan=Plan(options={"heuristic": False}))
    assert dict(q.plan.options) == {"heuristic": False}
    assert dict(q.plan.options).get("heuristic_effort", 1.0) == 1.0


def test_query_options_give_the_default_of_an_option_not_given():
    assert QueryOptions().value("max_clauses") == 50


def test_query_options_are_hashable_and_picklable():
    opts = QueryOptions.of({"solver_params": [("a", 1)], "heuristic": False})
    assert hash(opts) == hash(pickle.loads(pickle.dumps(opts)))
    assert pickle.loads(pickle.dumps(opts)) == opts


def test_an_unknown_option_name_is_an_input_error():
    with pytest.raises(InputError, match="unknown query option 'heuristc'"):
        QueryOptions.of({"heuristc": False})


def test_make_query_checks_option_values_against_the_table():
    with pytest.raises(InputError, match="clause_width takes a whole number"):
        api.make_query(["a"], options={"clause_width": 0})


@pytest.mark.parametrize("kind", list(GapKind), ids=str)
def test_a_gap_kind_round_trips_through_its_name(kind):
    assert GapKind(str(kind)) is kind
    assert pickle.loads(pickle.dumps(kind)) is kind


def test_a_gap_holds_its_kind_as_the_enum_and_compares_equal_to_its_name():
    g = Gap(0.3, "margin")
    assert g.kind is GapKind.MARGIN and g.kind == "margin"


def test_an_enum_finds_the_entry_of_its_name_in_a_dict():
    assert {"margin": 1}[GapKind.MARGIN] == 1 and {"clause": 2}[DataAwareMode.CLAUSE] == 2


def test_an_enum_is_written_to_json_as_its_name():
    assert json.dumps([GapKind.PROB, DataAwareMode.PROBCLAUSE]) == '["prob", "probclause"]'


@pytest.mark.parametrize("spec", SETTINGS, ids=lambda o: o.name)
def test_every_query_setting_has_a_cli_flag_an_api_keyword_and_a_sens_statement(spec):
    flags = build_parser()._subparsers._group_actions[0].choices["check"]._option_string_actions
    assert _flag(spec.name) in flags
    assert spec.name in inspect.signature(api.check).parameters
    assert spec.sens_key in KEYWORDS


@pytest.mark.parametrize("spec", SETTINGS, ids=lambda o: o.name)
def test_every_query_setting_defaults_alike_in_the_query_the_cli_and_the_api(spec):
    args = build_parser().parse_args(["check", "m.json", "--vary", "a"])
    assert getattr(Query(vary=("a",)).plan, spec.name) == spec.default
    assert getattr(args, spec.name) == spec.default
    assert inspect.signature(api.check).parameters[spec.name].default == spec.default


def test_prob_alpha_with_prob_empty_forbid_is_refused_on_the_command_line():
    argv = ["--data-aware", "prob", "--prob-empty", "forbid", "--prob-alpha", "2"]
    with pytest.raises(InputError, match="--prob-alpha has no effect with --prob-empty forbid"):
        _cli_options(argv)


@pytest.mark.parametrize("seed", [-1, 2**31, 10**20])
def test_a_seed_no_solver_takes_is_an_input_error(seed):
    from treesens.questions.query_build import make_plan

    with pytest.raises(InputError, match="seed takes a whole number from 0 to 2147483647"):
        make_plan(seed=seed)


def test_solver_params_given_as_a_dict_are_its_pairs():
    opts = QueryOptions.of({"solver_params": {"linearization_level": 2}})
    assert opts.solver_params == (("linearization_level", 2),)


@pytest.mark.parametrize("given", ["x", [1, 2], [("a", 1, 2)]])
def test_solver_params_neither_a_dict_nor_pairs_are_an_input_error(given):
    with pytest.raises(InputError, match="solver_params: give a dict"):
        QueryOptions.of({"solver_params": given})


@pytest.mark.parametrize("threads", ["x", 1.5, 0, 65536])
def test_threads_that_are_not_a_whole_number_from_1_to_1024_are_an_input_error(threads):
    from treesens.questions.query_build import make_plan

    with pytest.raises(InputError, match="threads takes a whole number from 1 to 1024"):
        make_plan(threads=threads)


@pytest.mark.parametrize("gap", [[0.1], "abc", True])
def test_a_gap_that_is_not_a_number_is_an_input_error(gap):
    from treesens.questions.query_build import gap_of

    with pytest.raises(InputError, match="gap must be a number"):
        gap_of(gap, None, None)
