"""Resolving a parsed ``.sens`` file: its paths (relative to its folder), the model, the
features file, the data, the feature declarations, then the Query objects of its blocks
(build.py) -> a SensFile."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..compiler.ensemble import Ensemble
from ..compiler.errors import FEATURES, InputError, closest
from ..compiler.query import Query
from ..readers.data import load_data, no_label, say_data_notes
from ..readers.details import apply_data_names, apply_details
from ..readers.formats.catboost_categories import (
    categories_from_data,
    declared_categories,
    hashed_names,
)
from ..readers.formats.registry import by_name
from ..readers.load import (
    FORMATS,
    bounds_from_data,
    groups_with_bounds,
    load_model,
    missing_from_data,
    say_unstated_bounds,
    shown_base_score,
    with_groups,
)
from ..readers.plugins import load_plugin
from .ast import (
    AuditBlock,
    BoundsFromData,
    Budget,
    DataDecl,
    Defaults,
    DetailsDecl,
    Expect,
    FeatureDecl,
    GroupDecl,
    GroupsInfer,
    GroupsNone,
    Jobs,
    ModelDecl,
    PluginDecl,
    QueryBlock,
    SensAST,
    SweepBlock,
    Vary,
    VaryAll,
    VaryEachFeature,
    VaryEachOf,
    VarySubsets,
)
from .audit_block import AuditPlan, build_audit
from .build import BlockBuilder, csv_header, not_found, resolve_path
from .check import check_options
from .expectations import check_audit_by
from .inputs import with_inputs
from .parse import parse_file
from .show import fmt_name

VARY = (Vary, VaryAll, VaryEachFeature, VaryEachOf, VarySubsets)


@dataclass
class SensFile:
    """A checked ``.sens`` file: the model (with declarations applied) and its queries."""

    path: Path
    ast: SensAST
    model_path: Path
    model_format: str
    details_path: Path | None
    data_path: Path | None
    label: str | None
    ensemble: object  # compiler.ensemble.Ensemble
    queries: list[Query]
    groups: dict[str, list[str]]  # query / sweep block name -> the names of its queries
    # sweep block name -> its 'jobs' (or that of defaults; None: not set); how the
    # queries run, not what they ask, so it is kept here and not in the queries
    sweep_jobs: dict[str, int | None] = field(default_factory=dict)
    # sweep block name -> its 'budget' in seconds (or that of defaults; None: not set),
    # the time its queries take in all (questions/sweep_budget.py)
    sweep_budget: dict[str, float | None] = field(default_factory=dict)
    # audit block name -> its plan (rows, what is asked, out file), in file order
    audits: dict[str, AuditPlan] = field(default_factory=dict)
    # query or audit block name -> what must hold of its answer (``expect``), file order
    expectations: dict[str, Expect] = field(default_factory=dict)

    def select(self, name: str | None) -> list[Query]:
        """Every query, or those of one block (a query or a sweep), or one expanded query
        (none when ``name`` is an audit block)."""
        if name is None:
            return list(self.queries)
        if name in self.audits:
            return []
        if name in self.groups:
            wanted = set(self.groups[name])
            return [q for q in self.queries if q.name in wanted]
        for q in self.queries:
            if q.name == name:
                return [q]
        blocks = list(self.groups) + list(self.audits)
        known = list(dict.fromkeys(blocks + [q.name for q in self.queries]))
        raise InputError(
            f"no query named {name!r}{closest(name, known)}; the file has: {', '.join(blocks)}",
            str(self.path),
        )

    def select_audits(self, name: str | None) -> list[AuditPlan]:
        """Every audit block's plan, or the one named ``name`` (none for another name)."""
        if name is None:
            return list(self.audits.values())
        return [self.audits[name]] if name in self.audits else []


def load_queries(
    path: str | Path,
    *,
    load_model: bool = True,
    model: str | Path | None = None,
    data: str | Path | None = None,
    trust_pickle: bool = False,
) -> SensFile:
    """Parse, check and resolve a ``.sens`` file; relative paths are against its folder.
    ``model`` / ``data``: files that replace the file's own (``treesens test --model``);
    ``trust_pickle``: its model may be a pickle, as its model line's ``trust_pickle``."""
    ast = parse_file(path)
    if model is not None or data is not None or trust_pickle:
        ast = with_inputs(ast, model, data, trust_pickle)
    return resolve(ast, Path(path).resolve().parent, load_model=load_model)


def _show_path(p: Path) -> str:
    return os.path.normpath(str(p))


@dataclass(frozen=True)
class _Paths:
    model: Path
    format: str
    details: Path | None
    data: Path | None
    label: str | None
    # the label column the data line names, not a column of the data (said once the
    # model's features are known: the label column is among the others)
    missing_label: str | None = None


def _paths(ast: SensAST, base: Path) -> _Paths:
    """The files a .sens file names, checked to exist; the label column of its data."""
    model = next(it for it in ast.items if isinstance(it, ModelDecl))
    details = next((it for it in ast.items if isinstance(it, DetailsDecl)), None)
    data = next((it for it in ast.items if isinstance(it, DataDecl)), None)
    fmt = model.format or "auto"
    if fmt not in FORMATS:
        raise ast.error(
            f"unknown model format {fmt!r}{closest(fmt, FORMATS)}; known: {', '.join(FORMATS)}",
            model,
        )
    for decl, what in ((model, "model"), (details, "features"), (data, "data")):
        if decl is not None and not decl.path.value.strip():  # "" is the .sens file's folder
            raise ast.error(f"the {what} file's path is empty: name the file", decl.path)
    model_path = resolve_path(base, model.path.value)
    if not model_path.exists():
        raise ast.error(not_found("model file", model_path, model.path.value), model.path)
    if model_path.is_dir():
        raise ast.error(f"model path is a directory: {_show_path(model_path)}", model.path)
    details_path = data_path = None
    if details is not None:
        details_path = resolve_path(base, details.path.value)
        if not details_path.is_file():
            raise ast.error(
                not_found("features file", details_path, details.path.value), details.path
            )
    label = missing = None
    if data is not None:
        data_path = resolve_path(base, data.path.value)
        if not data_path.is_file():
            raise ast.error(not_found("data file", data_path, data.path.value), data.path)
        label = data.label if data.label is not None else "label"
        header = csv_header(data_path)
        if header is not None and label not in header:
            # no label column: fine, unless one was asked for
            missing = None if data.label is None else label
            label = None
    narrow = next((it for it in ast.items if isinstance(it, BoundsFromData)), None)
    if narrow is not None and data is None:
        raise ast.error(
            "'bounds from data' narrows each feature to its column's range in the data: "
            'add a line  data "train.csv"',
            narrow,
        )
    return _Paths(model_path, fmt, details_path, data_path, label, missing)


def _features_of(ast: SensAST, paths: _Paths) -> list[str]:
    """The model's feature names, for the guess at a label column the data lacks; none
    where the model does not load without it (generic names the data's columns give,
    the label column among them)."""
    try:
        return _load_ensemble(ast, paths).feature_names
    except InputError:
        return []


def _no_label(ast: SensAST, paths: _Paths, features) -> InputError:
    """The error of a data line's label column that the data lacks, at the data line."""
    header = csv_header(paths.data) or []
    data = next(it for it in ast.items if isinstance(it, DataDecl))
    return ast.error(no_label(paths.missing_label, header, set(features)), data)


def resolve(ast: SensAST, base: Path, *, load_model: bool = True) -> SensFile:
    """The SensFile of a parsed file; ``load_model=False``: check the paths and options
    only (no model, no queries)."""
    paths = _paths(ast, base)
    check_options(ast)
    # the file and the files it names (then the label column and what the file asks)
    named = (Path(ast.filename), ast, paths.model, paths.format, paths.details, paths.data)
    if not load_model:  # (a label column the data lacks: said with the model's features)
        return SensFile(*named, paths.label, None, [], {}, sweep_jobs(ast), sweep_budget(ast))
    _load_plugins(ast, base)
    if paths.missing_label is not None:
        raise _no_label(ast, paths, _features_of(ast, paths))
    ens = _load_ensemble(ast, paths)
    if not ast.filename.startswith("<"):
        ens = ens.with_input("sens", ast.filename)
    defaults = next((it for it in ast.items if isinstance(it, Defaults)), Defaults(()))
    builder = BlockBuilder(ast, ens, defaults, paths.data, paths.label, base)
    queries: list[Query] = []
    groups: dict[str, list[str]] = {}
    audits: dict[str, AuditPlan] = {}
    expectations: dict[str, Expect] = {}
    made_by: dict[int, QueryBlock | SweepBlock] = {}  # id of a query -> its block
    for it in ast.items:
        expect = next((st for st in getattr(it, "body", ()) if isinstance(st, Expect)), None)
        if isinstance(it, (QueryBlock, SweepBlock)):
            qs = builder.expand(it)
            made_by.update((id(q), it) for q in qs)
            groups[it.name.text] = [q.name for q in qs]
            queries += qs
            if expect is not None:
                expectations.update((q.name, expect) for q in qs)
        elif isinstance(it, AuditBlock):
            file_data = (paths.data, paths.label)
            audits[it.name.text] = build_audit(ast, ens, defaults, it, base, file_data)
            if expect is not None:
                check_audit_by(ast, ens, audits[it.name.text], expect)
                expectations[it.name.text] = expect
    names: set[str] = set(audits)
    for q in queries:
        if q.name in names:
            block = made_by[id(q)]
            vary = next((st for st in block.body if isinstance(st, VARY)), None)
            raise ast.error(
                f"two queries end up named {q.name!r} (rename a block, or list each "
                "feature set once)",
                vary or block.name,
            )
        names.add(q.name)
    # the data's notes once the file is known good (the audits' data and the file's)
    file_rows = [] if paths.data is None else [load_data(str(paths.data), ens, paths.label)]
    say_data_notes(*file_rows, *(a.data for a in audits.values()))
    runs = (sweep_jobs(ast), sweep_budget(ast))
    return SensFile(*named, paths.label, ens, queries, groups, *runs, audits, expectations)


def _load_plugins(ast: SensAST, base: Path) -> None:
    """The file's ``plugin`` lines, imported (relative paths against its folder) before
    its model and queries: the kinds, formats and backends they register."""
    for it in ast.items:
        if isinstance(it, PluginDecl):
            path = it.path.value
            where = resolve_path(base, path) if path.endswith(".py") else path
            try:
                load_plugin(where)
            except InputError as e:
                raise ast.error(e.message, it.path) from None


def _per_sweep(ast: SensAST, setting: type, value: str) -> dict:
    """Each sweep block's ``setting`` (its ``value`` field): its own, else that of
    defaults, else None."""
    defaults = next((it for it in ast.items if isinstance(it, Defaults)), Defaults(()))

    def of(body: tuple):
        return next((getattr(st, value) for st in body if isinstance(st, setting)), None)

    default = of(defaults.body)
    each = {it.name.text: of(it.body) for it in ast.items if isinstance(it, SweepBlock)}
    return {name: default if own is None else own for name, own in each.items()}


def sweep_jobs(ast: SensAST) -> dict[str, int | None]:
    """Each sweep block's ``jobs``: its own, else that of defaults, else None."""
    return _per_sweep(ast, Jobs, "n")


def sweep_budget(ast: SensAST) -> dict[str, float | None]:
    """Each sweep block's ``budget`` (seconds): its own, else that of defaults, else None."""
    return _per_sweep(ast, Budget, "seconds")


def _load_ensemble(ast: SensAST, paths: _Paths) -> Ensemble:
    """The model, named and bounded by the features file, the data and the declarations."""
    model = next(it for it in ast.items if isinstance(it, ModelDecl))
    details = next((it for it in ast.items if isinstance(it, DetailsDecl)), None)
    data = next((it for it in ast.items if isinstance(it, DataDecl)), None)
    model_path, fmt, details_path = paths.model, paths.format, paths.details
    data_path, label = paths.data, paths.label
    try:
        ens = load_model(
            str(model_path),
            format=fmt,
            base_score=model.base_score,
            objective=model.objective,
            n_classes=model.num_class,
            num_parallel_tree=model.num_parallel_tree,
            trust_pickle=model.trust_pickle,
            auto_details=details_path is None,  # the file's `features from`, not one beside
            _dump_names_from=details_path,  # a dump splitting on names: numbered by them
            _note=False,  # said below, of the bounds the feature lines and the data leave
        )
    except InputError as e:
        said = (model.base_score, model.objective, model.num_class, model.num_parallel_tree)
        dump_said = said != (None, None, None, None)
        if dump_said or model.format == "xgboost-dump":
            # the loader refuses a dump's settings on another model: say which, and where
            try:
                plain = load_model(str(model_path), trust_pickle=model.trust_pickle)
            except InputError:
                plain = None
            if plain is not None:
                _check_model_options(ast, model, plain)
        raise ast.error(f"cannot load the model: {e}", model.path) from None
    if data_path is not None and details_path is None:
        try:  # a model with generic names (f0, Column_0, x0, ...) is named by the data
            ens = apply_data_names(ens, str(data_path), label)
        except InputError as e:
            raise ast.error(f"cannot use the data: {e}", data.path) from None
    if details_path is not None:
        try:
            ens = apply_details(ens, details_path)
        except InputError as e:
            raise ast.error(str(e), details.path) from None
        ens = replace(ens, source=f"{ens.source} (bounds from {details_path})")  # as --details
    if data_path is not None:
        try:  # CatBoost's categorical features: the data's values name their categories
            ens = categories_from_data(ens, str(data_path), label)
        except InputError as e:
            raise ast.error(f"cannot use the data: {e}", data.path) from None
        try:  # a column holding NaN: its feature may be missing (unless the file says)
            missing = missing_from_data(ens, str(data_path), label, details_path)
        except InputError as e:
            raise ast.error(f"cannot use the data: {e}", data.path) from None
        ens = missing.ensemble
        if missing.names:
            ens = replace(ens, source=f"{ens.source} ({missing.words()})")
    ens = _with_groups(ast, ens, data_path, label)
    ens = _apply_declarations(ast, ens)
    if data_path is not None:
        _check_data(ast, data, ens, data_path, label)
    ens = _bounds_from_data(ast, ens, paths)
    if details_path is not None:  # bounds left out: said of what the feature lines left
        say_unstated_bounds(ens, details_path, details.path.value)
    elif (found := dict(ens.inputs).get("details")) is not None:  # found beside the model
        say_unstated_bounds(ens, found)
    return ens


def _with_groups(ast: SensAST, ens: Ensemble, data_path, label) -> Ensemble:
    """The model with the file's one-hot groups: its ``group`` lines, ``groups infer`` or
    ``groups none``; without any, those ``bounds from data`` infers (as ``--bounds data``)."""
    decls = [it for it in ast.items if isinstance(it, GroupDecl)]
    modes = [it for it in ast.items if isinstance(it, (GroupsInfer, GroupsNone))]
    said = ["'groups infer'" if isinstance(m, GroupsInfer) else "'groups none'" for m in modes]
    if len(said) + bool(decls) > 1:
        both = " and ".join(said + ["'group' lines"] * bool(decls))
        raise ast.error(f"{both}: use one or the other", modes[-1])
    if modes and isinstance(modes[0], GroupsNone):
        return ens
    if modes:
        if data_path is None:
            raise ast.error(
                "'groups infer' finds the groups in the data: add a data line", modes[0]
            )
        spec, at = "infer", modes[0]
    elif decls:
        first_of: dict = {}
        for d in decls:
            if d.name.text in first_of:
                line = first_of[d.name.text].pos.line
                raise ast.error(
                    f"a second group named {d.name.text!r} (the first is at line {line})", d.name
                )
            first_of[d.name.text] = d
        spec = {d.name.text: _group_spec(d) for d in decls}
        at = decls[0]
    else:
        narrow = next((it for it in ast.items if isinstance(it, BoundsFromData)), None)
        spec, at = groups_with_bounds(None, narrow is not None), narrow
        if spec is None:
            return ens
    try:
        return with_groups(ens, spec, None if data_path is None else str(data_path), label)
    except InputError as e:
        raise ast.error(str(e), at) from None


def _group_spec(d: GroupDecl) -> dict:
    spec: dict = {"columns": [c.text for c in d.columns]}
    if d.dropped is not None:
        spec["dropped"] = d.dropped.text
    return spec


def _check_model_options(ast: SensAST, model: ModelDecl, ens) -> None:
    """``format xgboost-dump`` and ``base_score`` only mean something for an XGBoost text
    dump (a JSON list of trees): the loader reads any other model by its content and
    takes the model's own base_score, so on another model they would be ignored."""
    family = ens.origin.format if ens.origin is not None else ""
    if family == "xgboost-dump":
        return
    fmt = by_name(family)
    kind = fmt.description if fmt is not None else "not an XGBoost text dump"
    if model.format == "xgboost-dump":
        raise ast.error(
            f"format xgboost-dump, but the file is {kind}, not a text dump (a JSON list of "
            "trees); drop 'format xgboost-dump' (the format is read from the file)",
            model.format_pos or model,
        )
    if model.base_score is not None:
        raise ast.error(
            f"base_score is only for XGBoost text dumps, which do not store it; the file is "
            f"{kind}, which has its own: drop 'base_score {shown_base_score(model.base_score)}'",
            model.base_score_pos or model,
        )
    given = [
        word
        for word, value in (
            ("objective", model.objective),
            ("num_class", model.num_class),
            ("num_parallel_tree", model.num_parallel_tree),
        )
        if value is not None
    ]
    said = given[0] if given else ""
    if given:
        raise ast.error(
            f"{said} is only for XGBoost text dumps, which do not store it; the file is "
            f"{kind}, which has its own: drop '{said}'",
            model,
        )


def _bounds_from_data(ast: SensAST, ens: Ensemble, paths: _Paths) -> Ensemble:
    """``bounds from data``: each feature's bounds narrowed to its column's range in the
    file's data, as ``--bounds data`` narrows them (load_model's own step): within the
    bounds the features file and the feature lines declare, which the data must not leave
    (as with ``--details``), and the model's source says so ("bounds from data ...")."""
    narrow = next((it for it in ast.items if isinstance(it, BoundsFromData)), None)
    if narrow is None:
        return ens
    try:
        return bounds_from_data(ens, str(paths.data), paths.label)
    except InputError as e:
        # data outside a feature line's bounds: at that line (else at this statement)
        at = next(
            (
                d
                for d in ast.items
                if isinstance(d, FeatureDecl)
                and d.lo is not None
                and e.message.startswith(f"feature {d.name.text!r}:")
            ),
            narrow,
        )
        raise ast.error(f"cannot use the data: {e}", at) from None


def _check_data(ast: SensAST, decl, ens, path: Path, label) -> None:
    """Read the data now, so that a column that does not match the model is reported here."""
    try:
        load_data(str(path), ens, label)
    except InputError as e:
        raise ast.error(f"cannot use the data: {e}", decl.path) from None


def _bounds_source(details, ens) -> str:
    """Where a feature's bounds came from, as words after them: the features file, the
    details file found beside the model, or nothing (the model's own)."""
    if details is not None:
        return f" (from {details.path.value})"
    m = re.search(r"\(bounds from (.+)\)$", str(getattr(ens, "source", "")))
    return f" (from {Path(m.group(1)).name}, found beside the model)" if m else ""


def _refuse_codes_outside(ast: SensAST, d, f, src: str) -> None:
    """Categories named on a feature make it their codes 0..n-1; bounds that hold none of
    them (mean_texture in [9.71, 39.28]) say the model reads the feature as a number, and
    an answer over codes no input holds would be vacuous (it was "insensitive")."""
    top = len(d.categories) - 1
    if f.lb <= top and f.ub >= 0:
        return
    raise ast.error(
        f"feature {d.name.text!r}: its categories would be the codes 0..{top}, but its "
        f"bounds [{f.lb:g}, {f.ub:g}]{src} hold none of them: name categories only for a "
        "feature whose values are codes 0, 1, ... (or give bounds to replace these)",
        d,
    )


def _apply_declarations(ast: SensAST, ens):
    decls = [it for it in ast.items if isinstance(it, FeatureDecl)]
    details = next((it for it in ast.items if isinstance(it, DetailsDecl)), None)
    if not decls:
        return ens
    names = ens.feature_names
    hashed = hashed_names(ens)  # CatBoost's: categories declared by name, hashed by catboost
    for d in decls:
        if d.categories is not None and d.name.text in hashed:
            try:
                ens = declared_categories(ens, {d.name.text: d.categories}, ast.filename)
            except InputError as e:
                raise ast.error(e.message, d) from None
    feats = list(ens.features)
    for d in decls:
        n = d.name.text
        if n not in names:
            raise ast.error(f"unknown feature {n!r}{closest(n, names, listing=FEATURES)}", d.name)
        i = names.index(n)
        f = feats[i]
        kw = {}
        if d.kind is not None:
            kw["kind"] = d.kind
        if d.categories is not None and n not in hashed:
            kw["kind"] = "categorical"
            kw["categories"] = tuple(d.categories)
            kw["lb"], kw["ub"] = 0.0, float(len(d.categories) - 1)
        if d.lo is not None:
            kw["lb"], kw["ub"] = d.lo, d.hi
        # a kind alone keeps the bounds (from the features file or the model), bounds alone
        # keep the kind; a binary feature keeps 0 and 1 inside its bounds, so they must
        # hold one of them (as the features file requires)
        lb, ub = kw.get("lb", f.lb), kw.get("ub", f.ub)
        if d.categories is not None and n not in hashed and d.lo is None:
            _refuse_codes_outside(ast, d, f, _bounds_source(details, ens))
        if kw.get("kind", f.kind) == "binary" and (lb > 1 or ub < 0):
            src = _bounds_source(details, ens)
            if d.lo is None:
                raise ast.error(
                    f"feature {n!r}: a binary feature takes 0 or 1, but its bounds are "
                    f"[{lb:g}, {ub:g}]{src}; give bounds to replace them "
                    f"(feature {fmt_name(n)}: binary in [0, 1])",
                    d,
                )
            raise ast.error(
                f"feature {n!r} is binary{src}: it takes 0 or 1, not values in [{lb:g}, {ub:g}]",
                d,
            )
        try:
            feats[i] = replace(f, **kw)
        except ValueError as e:
            raise ast.error(str(e).removeprefix(f"feature {n!r}: "), d) from None
    return ens.with_features(tuple(feats))
