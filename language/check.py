"""Checks of a parsed ``.sens`` file that need no model: the structure of the file and
of its blocks, the values of settings, and the ``option`` / data-aware parameters (read
from the option table, compiler/options.py)."""

from __future__ import annotations

import math

from ..backends.registry import BACKENDS, SEARCH_METHODS
from ..compiler.errors import InputError, closest
from ..compiler.options import (
    DATA_AWARE_PARAMS,
    MODE_NAMES,
    OPTION_BY_NAME,
    OPTIONS,
    SENS_DATA,
    SENS_DATA_AWARE,
    SENS_OPTION,
    DataAwareMode,
    seed_problem,
    threads_problem,
    timeout_problem,
    work_problem,
)
from ..compiler.query import ANY
from ..driver import is_race
from ..driver.race_spec import race_in_list_problem, unknown_backend
from ..questions.query_build import A_BELOW_B, parse_passes
from ..readers.load import base_score_problem, shown_base_score
from . import ast as nodes
from .expectations import check_expectations
from .show import fmt_duration, py_value, show, show_value

SETTING_NAMES = {
    nodes.GapSetting: "gap",
    nodes.Classes: "classes",
    nodes.Backend: "backend",
    nodes.Timeout: "timeout",
    nodes.Work: "work",
    nodes.Threads: "threads",
    nodes.Jobs: "jobs",
    nodes.Budget: "budget",
    nodes.Seed: "seed",
    nodes.Passes: "passes",
    nodes.Baseline: "passes",  # one or the other
    nodes.DataAware: "data_aware",
    nodes.KindSetting: "kind",
    nodes.Expect: "expect",
}
VARY_TYPES = (nodes.Vary, nodes.VaryAll, nodes.VaryEachFeature, nodes.VaryEachOf, nodes.VarySubsets)
AUDIT_ONLY = {nodes.Rows: "data", nodes.By: "by", nodes.Limit: "limit", nodes.Out: "out"}
AUDIT_STATEMENTS = (
    *VARY_TYPES,
    nodes.GapSetting,
    nodes.Classes,
    nodes.Timeout,
    nodes.Work,
    nodes.Jobs,
    nodes.Expect,
    *AUDIT_ONLY,
)
_SWEEP_VARY = (nodes.VaryEachFeature, nodes.VaryEachOf, nodes.VarySubsets)
_CONSTRAINTS = (nodes.Where, nodes.Fix)


def check_structure(ast: nodes.SensAST) -> None:
    seen: dict[str, nodes.Node] = {}
    blocks: dict[str, nodes.Node] = {}
    decls: dict[str, nodes.Node] = {}
    for it in ast.items:
        kind = {
            nodes.ModelDecl: "model",
            nodes.DataDecl: "data",
            nodes.BoundsFromData: "bounds from data",
            nodes.DetailsDecl: "features from",
            nodes.Defaults: "defaults",
            nodes.GroupsInfer: "groups infer",
            nodes.GroupsNone: "groups none",
        }.get(type(it))
        if kind is not None:
            if kind in seen:
                raise ast.error(
                    f"a second '{kind}' statement (the first is at line {seen[kind].pos.line}); "
                    "a file has at most one",
                    it,
                )
            seen[kind] = it
        if isinstance(it, nodes.ModelDecl) and base_score_problem(it.base_score, it.objective):
            raise ast.error(
                f"base_score {shown_base_score(it.base_score)} "
                f"{base_score_problem(it.base_score, it.objective)}",
                it.base_score_pos or it,
            )
        if isinstance(it, nodes.FeatureDecl):
            _check_feature_decl(ast, it, decls)
        if isinstance(it, (nodes.Defaults, nodes.QueryBlock, nodes.SweepBlock, nodes.AuditBlock)):
            _check_block(ast, it)
        if isinstance(it, (nodes.QueryBlock, nodes.SweepBlock, nodes.AuditBlock)):
            name = it.name.text
            if not name:
                raise ast.error("empty query name", it.name)
            if name in blocks:
                raise ast.error(
                    f"a second block named {name!r} (the first is at line {blocks[name].pos.line})",
                    it.name,
                )
            blocks[name] = it
    check_expectations(ast)
    if "model" not in seen:
        raise ast.error('no model: add a line  model "path/to/model.json"', nodes.Pos(1, 1, 1, 1))
    if not blocks:
        raise ast.error(
            "no query: add a block  query NAME { vary FEATURE }  (or an audit block)",
            nodes.Pos(1, 1, 1, 1),
        )


def _check_feature_decl(ast: nodes.SensAST, d: nodes.FeatureDecl, decls: dict) -> None:
    n = d.name.text
    if n in decls:
        raise ast.error(
            f"feature {n!r} declared twice (the first is at line {decls[n].pos.line})", d.name
        )
    decls[n] = d
    if d.kind is None and d.lo is None and d.categories is None:
        raise ast.error(
            f"feature {n!r}: say what to declare (': KIND', 'in [LO, HI]' or categories)", d
        )
    if d.lo is not None and (math.isnan(d.lo) or math.isnan(d.hi) or d.lo > d.hi):
        raise ast.error(f"feature {n!r}: lower bound {d.lo:g} is above upper bound {d.hi:g}", d)
    if d.categories is not None:
        if d.kind not in (None, "categorical"):
            raise ast.error(f"feature {n!r}: only a categorical feature has category names", d)
        dup = sorted({c for c in d.categories if d.categories.count(c) > 1})
        if dup:
            raise ast.error(f"feature {n!r}: category {dup[0]!r} listed twice", d)
    if d.kind == "binary" and d.lo is not None and (d.lo > 1 or d.hi < 0):
        raise ast.error(
            f"feature {n!r}: a binary feature takes 0 or 1, not values in [{d.lo:g}, {d.hi:g}]", d
        )


def _check_audit_statement(ast: nodes.SensAST, kind: str, st) -> None:
    """Audit settings only in an audit block, and an audit block only with them."""
    if isinstance(st, nodes.Rows) and kind != "audit":
        raise ast.error(
            "'data' in a block names the rows of an audit; the file's data is a line of its "
            'own, outside the blocks (data "train.csv")',
            st,
        )
    if isinstance(st, tuple(AUDIT_ONLY)) and kind != "audit":
        word = AUDIT_ONLY[type(st)]
        raise ast.error(
            f"'{word}' is an audit setting: write it in an audit block (audit NAME {{ ... }})",
            st,
        )
    if kind == "audit" and not isinstance(st, AUDIT_STATEMENTS):
        word = _statement_word(st)
        raise ast.error(
            f"'{word}' is not an audit setting; an audit takes "
            "vary, gap, classes, timeout, jobs, data, by, limit, out and expect",
            st,
        )
    if kind == "audit" and isinstance(st, VARY_TYPES) and not isinstance(st, nodes.Vary):
        raise ast.error(
            "an audit varies a list of features (vary A, B); for every feature at once "
            "name them all",
            st,
        )
    if kind == "audit" and isinstance(st, nodes.Classes) and st.c1 != ANY:
        raise ast.error(
            f"an audit's x1 is the row itself, whatever its class: write classes any -> {st.c2}",
            st,
        )
    if isinstance(st, nodes.Limit) and st.n < 1:
        raise ast.error("limit must be at least 1", st)


def _check_sweep_setting(ast: nodes.SensAST, kind: str, st) -> None:
    """How a sweep's queries run: ``jobs`` not in a query, ``budget`` in neither a query
    nor an audit (an audit's rows each have their own time limit)."""
    if isinstance(st, nodes.Jobs) and kind == "query":
        raise ast.error(
            "'jobs' sets how many queries of a sweep run at once: write it in a sweep "
            "or in defaults, not in a query",
            st,
        )
    if isinstance(st, nodes.Budget) and kind in ("query", "audit"):
        raise ast.error(
            "'budget' is the time a sweep's queries take in all: write it in a sweep or "
            f"in defaults, not in {'a query' if kind == 'query' else 'an audit'}",
            st,
        )


def _statement_word(st) -> str:
    if isinstance(st, nodes.Where):
        return "where"
    if isinstance(st, nodes.Fix):
        return "fix"
    if isinstance(st, nodes.OptionSetting):
        return "option"
    return SETTING_NAMES.get(type(st), type(st).__name__.lower())


def _check_block(ast: nodes.SensAST, blk) -> None:
    kind = {
        nodes.Defaults: "defaults",
        nodes.QueryBlock: "query",
        nodes.SweepBlock: "sweep",
        nodes.AuditBlock: "audit",
    }[type(blk)]
    where_first: dict[str, nodes.Node] = {}
    vary = None
    opts: dict[str, nodes.Node] = {}
    for st in blk.body:
        _check_sweep_setting(ast, kind, st)
        _check_audit_statement(ast, kind, st)
        if isinstance(st, VARY_TYPES):
            if kind == "defaults":
                raise ast.error("'vary' belongs in a query or a sweep, not in defaults", st)
            if vary is not None:
                raise ast.error(
                    f"a second 'vary' in this {kind} (the first is at line {vary.pos.line})", st
                )
            vary = st
            if kind == "query" and isinstance(st, _SWEEP_VARY):
                word = "each" if not isinstance(st, nodes.VarySubsets) else "subsets"
                raise ast.error(
                    f"'vary {word} ...' makes several queries: write it in a sweep block "
                    f"(sweep {blk.name.text} {{ ... }})",
                    st,
                )
            if kind == "sweep" and not isinstance(st, _SWEEP_VARY):
                raise ast.error(
                    "a sweep varies 'each feature', 'each of A, B, {C, D}' or "
                    "'subsets of K [from A, B, ...]'; for one query write a query block",
                    st,
                )
            _check_vary(ast, st)
            continue
        key = SETTING_NAMES.get(type(st)) or AUDIT_ONLY.get(type(st))
        if key is not None:
            if key in where_first:
                raise ast.error(
                    f"'{key}' is set twice in this {kind} (the first is at line "
                    f"{where_first[key].pos.line})",
                    st,
                )
            where_first[key] = st
            _check_setting(ast, st)
        elif isinstance(st, nodes.OptionSetting):
            if st.name in opts:
                raise ast.error(f"option {st.name!r} is set twice in this {kind}", st)
            opts[st.name] = st
        elif isinstance(st, nodes.Where):
            for c in st.items:
                check_constraint(ast, c)
        elif isinstance(st, nodes.Fix):
            pass
    if kind != "defaults" and vary is None:
        hint = "vary each feature" if kind == "sweep" else "vary FEATURE[, FEATURE...]"
        raise ast.error(f"{kind} {blk.name.text!r} has no 'vary' ({hint})", blk.name)


def _check_vary(ast: nodes.SensAST, st) -> None:
    names: list[nodes.Name] = []
    if isinstance(st, nodes.Vary):
        names = list(st.names)
    elif isinstance(st, nodes.VaryEachOf):
        asked: set[frozenset] = set()
        for it in st.items:
            names += list(it.names) if isinstance(it, nodes.FeatureSet) else [it]
            if isinstance(it, nodes.FeatureSet):
                _no_dups(ast, it.names)
            _no_second_query(ast, it, asked)
    elif isinstance(st, nodes.VarySubsets):
        if st.k < 1:
            raise ast.error("subsets of 0 features: k must be at least 1", st)
        if st.sample is not None and st.sample < 1:
            raise ast.error("sample must be at least 1", st)
        if st.sample is not None and st.sample > 100_000:  # as many as a sweep may make
            raise ast.error(f"sample {st.sample} makes too many queries (at most 100000)", st)
        if st.pool is not None:
            _no_dups(ast, st.pool)
            if st.k > len(st.pool):
                raise ast.error(
                    f"subsets of {st.k} from a list of {len(st.pool)} features: there are none", st
                )
        return
    if isinstance(st, nodes.Vary):
        _no_dups(ast, names)


def _no_second_query(ast: nodes.SensAST, item, asked: set[frozenset]) -> None:
    """A feature (or a feature set, in any order) of ``vary each of`` listed twice would
    ask its query twice: an error at the second."""
    names = item.names if isinstance(item, nodes.FeatureSet) else (item,)
    key = frozenset(n.text for n in names)
    if key in asked:
        shown = (
            f"feature set {{{', '.join(n.text for n in names)}}}"
            if isinstance(item, nodes.FeatureSet)
            else f"feature {item.text!r}"
        )
        raise ast.error(f"{shown} listed twice", item)
    asked.add(key)


def _no_dups(ast: nodes.SensAST, names) -> None:
    seen = set()
    for n in names:
        if n.text in seen:
            raise ast.error(f"feature {n.text!r} listed twice", n)
        seen.add(n.text)


def _check_setting(ast: nodes.SensAST, st) -> None:
    if isinstance(st, nodes.GapSetting) and st.kind == "max":
        if st.value is not None and not (math.isfinite(st.value) and 0 < st.value < 0.5):
            raise ast.error(f"max-gap tolerance {st.value:g} must be in (0, 0.5)", st)
    elif isinstance(st, nodes.GapSetting) and st.kind == "delta":
        if not (math.isfinite(st.value) and st.value > 0):
            raise ast.error(f"gap delta {st.value:g} must be a finite number above 0", st)
    elif isinstance(st, nodes.GapSetting) and st.kind == "threshold":
        if not (math.isfinite(st.value) and math.isfinite(st.below)):
            raise ast.error("gap above A below B: both must be finite numbers", st)
        if st.value < st.below:
            raise ast.error(
                f"gap above {st.value:g} below {st.below:g}: the threshold form needs A >= B "
                f"({A_BELOW_B})",
                st,
            )
    elif isinstance(st, nodes.GapSetting):
        if not math.isfinite(st.value):
            raise ast.error(f"gap {st.value:g} is not a finite number", st)
        if st.value < 0:
            what = "margin gap" if st.kind == "margin" else "gap"
            raise ast.error(f"{what} {st.value:g} must be >= 0", st)
    elif isinstance(st, nodes.Classes):
        if st.c1 != ANY and st.c1 == st.c2:
            raise ast.error(f"classes must differ (got {st.c1} twice)", st)
    elif isinstance(st, nodes.Backend):
        known = [*BACKENDS, *SEARCH_METHODS]  # a search method (boxes) is named as one
        for i, b in enumerate(st.names):
            if b not in known and not is_race(b):
                raise ast.error(unknown_backend(b, in_list=True), st)
            if is_race(b) and race_in_list_problem(b, st.names[i + 1 :]):
                raise ast.error(race_in_list_problem(b, st.names[i + 1 :]), st)
            if b in st.names[:i]:
                raise ast.error(f"backend {b!r} listed twice", st)
    elif isinstance(st, nodes.Timeout):
        if timeout_problem(st.seconds):
            raise ast.error(f"timeout {timeout_problem(st.seconds)}", st)
    elif isinstance(st, nodes.Work):
        if work_problem(st.units):
            raise ast.error(f"work {work_problem(st.units)}, not {st.units:g}", st)
    elif isinstance(st, nodes.Threads):
        if threads_problem(st.n):
            raise ast.error(f"threads {threads_problem(st.n)}, not {st.n}", st)
    elif isinstance(st, nodes.Seed):
        if seed_problem(st.n):
            raise ast.error(f"seed {seed_problem(st.n)}, not {st.n}", st)
    elif isinstance(st, nodes.Jobs):
        if st.n < 1:
            raise ast.error("jobs must be at least 1", st)
    elif isinstance(st, nodes.Budget):
        if not math.isfinite(st.seconds):
            raise ast.error("budget: too large a number of seconds to be a duration", st)
        if st.seconds <= 0:
            raise ast.error(
                f"budget {fmt_duration(st.seconds)}: a sweep's budget is a duration above 0", st
            )
    elif isinstance(st, nodes.Passes):
        try:
            parse_passes(",".join(st.items))
        except InputError as e:
            raise ast.error(e.message, st) from None
    elif isinstance(st, nodes.Baseline):
        if st.name.lower() != "kant":
            raise ast.error(f"unknown baseline {st.name!r} (known: kant)", st)
    elif isinstance(st, nodes.DataAware):
        _check_data_aware(ast, st)
    elif isinstance(st, nodes.KindSetting):
        names = [p.name for p in st.params]
        twice = [n for i, n in enumerate(names) if n in names[:i]]
        if twice:
            raise ast.error(f"parameter {twice[0]!r} given twice", st)


def _check_data_aware(ast: nodes.SensAST, st: nodes.DataAware) -> None:
    if st.mode not in MODE_NAMES:
        raise ast.error(
            f"unknown data-aware mode {st.mode!r}{closest(st.mode, MODE_NAMES)}; "
            f"known: {', '.join(MODE_NAMES)}",
            st,
        )
    mode = DataAwareMode(st.mode)
    seen = set()
    for p in st.params:
        if p.name in seen:
            raise ast.error(f"parameter {p.name!r} given twice", p)
        if p.name not in DATA_AWARE_PARAMS:
            raise ast.error(
                f"unknown data-aware parameter {p.name!r}{closest(p.name, DATA_AWARE_PARAMS)}; "
                f"known: {', '.join(DATA_AWARE_PARAMS)}",
                p,
            )
        modes = OPTION_BY_NAME[p.name].modes
        if mode not in modes:
            raise ast.error(
                f"{p.name} has no effect with data_aware {st.mode}: it is a parameter of "
                f"the {' and '.join(m.value for m in modes)} modes",
                p,
            )
        bad = OPTION_BY_NAME[p.name].check(py_value(p.value))
        if bad:
            raise ast.error(f"{p.name} {bad}, not {show_value(p.value)}", p.value)
        seen.add(p.name)
    given = {p.name: py_value(p.value) for p in st.params}
    if "prob_alpha" in given and given.get("prob_empty") == "forbid":
        raise ast.error(
            "prob_alpha has no effect with prob_empty = forbid: the intervals with data use "
            "plain frequencies (no smoothing)",
            next(p for p in st.params if p.name == "prob_alpha"),
        )


def check_constraint(ast: nodes.SensAST, c) -> None:
    if isinstance(c, nodes.InRange):
        if math.isnan(c.lo.value) or math.isnan(c.hi.value) or c.lo.value > c.hi.value:
            raise ast.error(
                f"empty range [{c.lo.value:g}, {c.hi.value:g}]: the lower end is above the upper", c
            )
        return
    for a, op, b in zip(c.operands, c.ops, c.operands[1:]):
        for side in (a, b):
            if (
                isinstance(side, nodes.Ref)
                and side.copy is None
                and side.name.text.lower() == "nan"
            ):
                raise ast.error(
                    f"{side.name.text}: a comparison with NaN holds for no input; compare with "
                    "a number",
                    side,
                )
        if not _is_featureish(a) and not _is_featureish(b):
            words = [show(x) for x in (a, b) if show(x).lstrip("+") in ("inf", "true", "false")]
            named = f'; a feature named {words[0]} is quoted: "{words[0]}"' if words else ""
            raise ast.error(
                f"this compares two values ({show(a)} {op} {show(b)}); one side must be a "
                f"feature (x1.NAME, x2.NAME or NAME){named}",
                a,
            )
        if isinstance(a, nodes.Ref) and isinstance(b, nodes.Ref):
            if a.copy is None or b.copy is None:
                raise ast.error(
                    f"a relation compares x1 with x2: write x1.{a.name.text} {op} x2.{b.name.text}",
                    a,
                )
            if a.copy == b.copy:
                raise ast.error(
                    f"this relation compares x{a.copy} with itself; compare x1 with x2", a
                )


def _is_featureish(x) -> bool:
    return isinstance(x, (nodes.Ref, nodes.Text))


def _sens_option_names() -> tuple[str, ...]:
    return tuple(o.name for o in OPTIONS if o.sens == SENS_OPTION)


def _elsewhere(name: str) -> str | None:
    """Why ``option NAME`` is refused for an option that is set another way (None: it is
    not such an option)."""
    spec = OPTION_BY_NAME.get(name)
    if spec is None or spec.sens == SENS_OPTION:
        return None
    if spec.sens == SENS_DATA and name == "data":
        return 'the data file is given by a line  data "train.csv"'
    if spec.sens == SENS_DATA:
        return 'the label column is given by the data line:  data "train.csv" label NAME'
    if spec.sens == SENS_DATA_AWARE:
        return (
            f"a data-aware parameter: give it on the data_aware line "
            f"(data_aware {spec.modes[0].value} {name} = ...)"
        )
    return spec.why_not_in_sens


def check_options(ast: nodes.SensAST) -> None:
    """``option NAME = VALUE`` sets one of the Plan.options the compiler reads; any other
    name would be ignored (a typo, or an option that has its own statement)."""
    known = _sens_option_names()
    for blk in ast.items:
        if not isinstance(blk, (nodes.Defaults, nodes.QueryBlock, nodes.SweepBlock)):
            continue
        for st in blk.body:
            if not isinstance(st, nodes.OptionSetting):
                continue
            why = _elsewhere(st.name)
            if why is not None:
                raise ast.error(f"option {st.name!r}: {why}", st)
            if st.name not in known:
                raise ast.error(
                    f"unknown option {st.name!r}{closest(st.name, known)}; "
                    f"known: {', '.join(known)}",
                    st,
                )
            bad = OPTION_BY_NAME[st.name].check(py_value(st.value))
            if bad:
                raise ast.error(f"option {st.name!r} {bad}, not {show_value(st.value)}", st.value)
