"""Building the Query objects of a checked ``.sens`` file's blocks against its model:
settings (defaults, then the block), constraints, the feature sets a sweep expands to,
and the consistency of the constraints (compiler/query.py), reported where they are
written."""

from __future__ import annotations

import csv
import itertools
import json
import math
import os
import random
import warnings
from pathlib import Path

from ..answers.phrases import NOT_DESCRIBED
from ..compiler.cavities import check_clause_features, clauses_from_document
from ..compiler.encode import held_to_one_value
from ..compiler.ensemble import Ensemble, held_reason
from ..compiler.errors import FEATURES, InputError, TreesensWarning, binary_gap_range, closest
from ..compiler.kinds import check_kind, resolve_condition
from ..compiler.options import (
    DEFAULT_BACKEND,
    DEFAULT_SEED,
    DEFAULT_THREADS,
    DEFAULT_TIMEOUT,
    DataAwareMode,
)
from ..compiler.query import (
    ANY,
    FLIP,
    FeatureBound,
    FeatureRelation,
    Query,
    Question,
    bounds_by_copy,
    check_relations_within_bounds,
    held_by_constraints,
    no_value_in,
    relations_by_feature,
)
from ..compiler.readings import read_as
from ..questions.query_build import query_from_keywords
from .ast import (
    Baseline,
    Bool,
    Defaults,
    FeatureSet,
    Fix,
    GapSetting,
    InRange,
    Name,
    Node,
    Num,
    OptionSetting,
    Passes,
    QueryBlock,
    Ref,
    SensAST,
    SweepBlock,
    Text,
    Vary,
    VaryAll,
    VaryEachFeature,
    VaryEachOf,
    VarySubsets,
    Where,
)
from .check import SETTING_NAMES, VARY_TYPES
from .errors import SensError
from .expectations import check_expect_limit
from .show import fmt_constraint, fmt_name, fmt_ref, py_value, show_range, show_value


def resolve_path(base: Path, p: str) -> Path:
    """A path of the file, relative to the file's folder unless absolute."""
    q = Path(p).expanduser()
    return q if q.is_absolute() else (base / q)


def not_found(what: str, resolved: Path, written: str) -> str:
    """``'model file not found: PATH'``, and where the path as written names a file from
    the working directory, that a .sens file's paths are relative to its own folder."""
    shown = os.path.normpath(str(resolved))
    here = Path(written).expanduser()
    if here.is_absolute() or not here.exists() or here.resolve() == resolved.resolve():
        return f"{what} not found: {shown}"
    return (
        f"{what} not found: {shown} (a .sens file's paths are relative to its own folder, "
        f"not the working directory, where {written!r} is {os.path.normpath(here.resolve())})"
    )


def class_out_of_range(cls_st, n_classes: int) -> str | None:
    """The error of a classes line naming a class the model lacks, the line as .sens
    writes it (``classes 0 -> 3: class 3 out of range: ...``), or None."""
    for c in (cls_st.c1, cls_st.c2):
        if c != ANY and not 0 <= c < n_classes:
            return (
                f"classes {cls_st.c1} -> {cls_st.c2}: class {c} out of range: the model has "
                f"classes 0..{n_classes - 1}"
            )
    return None


def csv_header(path: Path) -> list[str] | None:
    """The header row of a CSV data file (None: not a CSV, or unreadable)."""
    if path.suffix.lower() not in (".csv", ".txt", ".tsv"):
        return None
    try:
        with path.open(newline="") as f:
            row = next(csv.reader(f), None)
    except (OSError, UnicodeDecodeError):
        return None
    return [c.strip() for c in row] if row else None


class BlockBuilder:
    """Effective settings of a block (defaults, then the block) and Query building."""

    def __init__(
        self,
        ast: SensAST,
        ens: Ensemble,
        defaults: Defaults,
        data_path: Path | None,
        label: str | None,
        base: Path,
    ):
        self.ast, self.ens, self.defaults, self.base = ast, ens, defaults, base
        self.data_path, self.label = data_path, label
        self.names = ens.feature_names
        self.binary = ens.n_classes == 2 and ens.n_outputs == 1
        self.places: dict[int, Node] = {}  # id of a FeatureBound / FeatureRelation -> its node

    def err(self, msg: str, at) -> SensError:
        return self.ast.error(msg, at)

    def feature(self, n: Name) -> str:
        if n.text not in self.names:
            raise self.err(
                f"unknown feature {n.text!r}{closest(n.text, self.names, listing=FEATURES)}", n
            )
        return n.text

    # ---- settings ----
    def settings(self, blk) -> dict:
        eff: dict = {}
        for src in (self.defaults.body, blk.body):
            for st in src:
                key = SETTING_NAMES.get(type(st))
                if key is not None:
                    eff[key] = st
        expect, gap = eff.get("expect"), eff.get("gap")
        if expect is not None and expect.kind == "max_gap" and (gap is None or gap.kind != "max"):
            # the block asks for its largest gap (a gap from defaults gives way)
            eff["gap"] = GapSetting(None, "max", pos=expect.pos)
        kind = eff.get("kind")
        if (
            kind is not None
            and kind.name == "max_gap"
            and any(st is gap for st in self.defaults.body)
        ):
            del eff["gap"]  # the block searches the gap itself, as `gap max` replaces it
        return eff

    def options(self, blk) -> dict:
        out: dict = {}
        for src in (self.defaults.body, blk.body):
            for st in src:
                if isinstance(st, OptionSetting):
                    out[st.name] = py_value(st.value)
        return out

    def constraints(self, blk) -> tuple[tuple[FeatureBound, ...], tuple[FeatureRelation, ...]]:
        """The bounds and relations of a block (defaults first); ``self.places`` maps each
        (by identity) to the constraint it comes from, for messages."""
        bounds: list[FeatureBound] = []
        rels: list[FeatureRelation] = []
        for src in (self.defaults.body, blk.body):
            for st in src:
                if isinstance(st, Fix):
                    f = self.feature(st.ref.name)
                    v = self.value_for(f, st.value)
                    bounds.append(self.bound(st, f, v, v, st.ref.copy))
                elif isinstance(st, Where):
                    for c in st.items:
                        self.constraint(c, bounds, rels)
        return tuple(bounds), tuple(rels)

    def where_texts(self, blk) -> tuple[str, ...]:
        """The block's constraints (defaults first) as the file writes them, for messages
        (``Question.where``): each constraint of a where clause, each fix without its
        keyword (``x1.sex = 0``)."""
        out: list[str] = []
        for src in (self.defaults.body, blk.body):
            for st in src:
                if isinstance(st, Where):
                    out += [self.written(c, fmt_constraint(c)) for c in st.items]
                elif isinstance(st, Fix):
                    fix = self.written(st, f"fix {fmt_ref(st.ref)} = {show_value(st.value)}")
                    out.append(fix.removeprefix("fix").strip())
        return tuple(out)

    def written(self, node: Node, shown: str) -> str:
        """A node's text in the file, its lines joined by one space (a comment between
        them left out); ``shown`` (its canonical form) where the file does not hold it or
        a line of it both quotes and comments (a '#' that may be in a quoted name)."""
        pos, lines = node.pos, self.ast.source.splitlines()
        if pos is None or pos.end_line > len(lines) or pos.end_line < pos.line:
            return shown
        part = lines[pos.line - 1 : pos.end_line]
        part[-1] = part[-1][: pos.end_column - 1]
        part[0] = part[0][pos.column - 1 :]
        if len(part) > 1:
            if any("#" in ln and ('"' in ln or "'" in ln) for ln in part):
                return shown
            part = [ln.split("#", 1)[0] for ln in part]
        return " ".join(" ".join(part).split()) or shown

    def place(self, x) -> Node:
        return self.places[id(x)]

    def line_of(self, x) -> int:
        pos = self.place(x).pos
        return pos.line if pos is not None else 1

    def in_file_order(self, xs) -> list:
        def key(x):
            pos = self.place(x).pos
            return (pos.line, pos.column) if pos is not None else (0, 0)

        return sorted(xs, key=key)

    def check_consistent(self, fs, where: str, bounds, rels, vary: Node) -> None:
        """The contradictions the feature-constraints pass would find when it compiles the
        query (the same functions of compiler/query.py), found here so that they point at
        the later of the conflicting constraints, before anything is solved.
        ``where``: " in QUERY" for a sweep's query, else ""; ``vary``: the block's vary
        statement, the place of a problem no constraint makes (the declared bounds, or
        the data's range, hold the varied features to one value)."""
        varying = frozenset(self.names.index(f) for f in fs)

        def query(bs=(), rs=()) -> Query:
            return Query(vary=tuple(fs), bounds=tuple(bs), relations=tuple(rs))

        for r in self.in_file_order(rels):
            if r.op in ("<", ">") and r.feature not in fs:
                raise self.err(
                    f"x{r.left}.{r.feature} {r.op} x{r.right}.{r.feature} cannot hold: "
                    f"{r.feature!r} is not varied{where}, so x1 and x2 share its value",
                    self.place(r),
                )
        try:
            relations_by_feature(self.ens, query(rs=rels))
        except InputError:
            self.relations_contradict(self.in_file_order(rels), query)
        if any(
            no_value_in(self.ens.features[f], lo, hi)
            for (f, _), (lo, hi) in bounds_by_copy(self.ens, query(bs=bounds), varying).items()
        ):
            self.bounds_contradict(self.in_file_order(bounds), query, varying, where)
        try:
            q = query(bs=bounds, rs=rels)
            check_relations_within_bounds(
                self.ens,
                varying,
                relations_by_feature(self.ens, q),
                bounds_by_copy(self.ens, q, varying),
            )
        except InputError as e:
            # point at the last relation on the feature named first in the message; where
            # the varied features are held equal, at the last constraint on one of them
            named = [r for r in self.in_file_order(rels) if f"x1.{r.feature} " in str(e)]
            on_f = [x for x in self.in_file_order([*bounds, *rels]) if x.feature in fs]
            made_by = named or on_f or self.in_file_order(rels)
            at = self.place(made_by[-1]) if made_by else vary
            raise self.err(f"{e}{where}", at) from None

    def at_lines(self, xs, here: int) -> str:
        """Where earlier constraints are: "at line 5", "at lines 4, 5", "earlier on this line"."""
        lines = sorted({self.line_of(x) for x in xs})
        if lines == [here]:
            return "earlier on this line"
        s = "s" if len(lines) > 1 else ""
        return f"at line{s} {', '.join(map(str, lines))}"

    def relations_contradict(self, rels: list, query) -> None:
        """Report the first relation (in file order) that contradicts the earlier ones."""

        def show(r) -> str:
            return f"x{r.left}.{r.feature} {r.op} x{r.right}.{r.feature}"

        for k in range(1, len(rels) + 1):
            try:
                relations_by_feature(self.ens, query(rs=rels[:k]))
            except InputError:
                r = rels[k - 1]
                here = self.line_of(r)
                before = [e for e in rels[: k - 1] if e.feature == r.feature]
                raise self.err(
                    f"the relations on {r.feature!r} contradict each other: {show(r)} here, "
                    f"{' and '.join(map(show, before))} {self.at_lines(before, here)}",
                    self.place(r),
                ) from None

    def bounds_contradict(self, bounds: list, query, varying, where: str) -> None:
        """Report the first bound (in file order) that leaves a feature no value."""
        for k in range(1, len(bounds) + 1):
            found = bounds_by_copy(self.ens, query(bs=bounds[:k]), varying)
            for (f, c), (lo, hi) in sorted(found.items()):
                feat = self.ens.features[f]
                what = no_value_in(feat, lo, hi)
                if what is None:
                    continue
                b, name, cats = bounds[k - 1], self.names[f], feat.categories
                before = [
                    e
                    for e in bounds[: k - 1]
                    if e.feature == name and (f not in varying or c + 1 in e.copies)
                ]
                if len(before) == 1:
                    e = before[0]
                    other = f"the one {self.at_lines(before, self.line_of(b))} asks for "
                    other += show_range(e.lo, e.hi, cats)
                elif before:
                    plo, phi = bounds_by_copy(self.ens, query(bs=before), varying)[(f, c)]
                    other = f"the ones {self.at_lines(before, self.line_of(b))} leave "
                    other += show_range(plo, phi, cats)
                else:
                    other = f"it is declared in {show_range(feat.lb, feat.ub, cats)}"
                shared = ""
                if f not in varying and any(len(e.copies) == 1 for e in [b, *before]):
                    shared = f" ({name!r} is not varied{where}, so x1 and x2 share its value)"
                who = f"x{c + 1}.{name}" if f in varying else name
                raise self.err(
                    f"the bounds on {who} leave no {what}: this one asks for "
                    f"{show_range(b.lo, b.hi, cats)}, but {other}{shared}",
                    self.place(b),
                )

    def bound(self, at, f: str, lo: float, hi: float, copy) -> FeatureBound:
        feat = self.ens.features[self.names.index(f)]
        if lo > hi:
            raise self.err(
                f"no value of {f!r} meets this (lower end {lo:g} is above upper end {hi:g})", at
            )
        if lo == math.inf or hi == -math.inf:
            raise self.err(f"no value of {f!r} lies in [{lo:g}, {hi:g}]: inputs are finite", at)
        if lo == hi and not feat.lb <= lo <= feat.ub:
            raise self.err(
                f"{lo:g} is outside the declared range of {f!r}, [{feat.lb:g}, {feat.ub:g}]", at
            )
        if hi < feat.lb or lo > feat.ub:
            raise self.err(
                f"{f!r} is declared in [{feat.lb:g}, {feat.ub:g}]: no value of it lies in "
                f"[{lo:g}, {hi:g}]",
                at,
            )
        if (
            feat.integral
            and math.isfinite(lo)
            and math.isfinite(hi)
            and math.ceil(lo) > math.floor(hi)
        ):
            raise self.err(f"{f!r} is {feat.kind}: no whole value lies in [{lo:g}, {hi:g}]", at)
        b = FeatureBound(f, lo, hi, (1, 2) if copy is None else (copy,))
        self.places[id(b)] = at
        return b

    def value_for(self, f: str, v, *, finite: bool = True) -> float:
        """``finite=False``: an infinite number is taken (a bound, ``x1.f >= -inf``)."""
        feat = self.ens.features[self.names.index(f)]
        if isinstance(v, Num):
            if finite and not math.isfinite(v.value):  # 1e400 reads as inf: no input holds it
                raise self.err(f"{f!r} cannot equal {v.value:g}: give a finite number", v)
            return v.value
        if isinstance(v, Bool):
            return 1.0 if v.value else 0.0
        text = v.value
        if feat.categories:
            if text in feat.categories:
                return float(feat.categories.index(text))
            raise self.err(
                f"{text!r} is not a category of {f!r}{closest(text, feat.categories)}", v
            )
        if feat.kind == "categorical":
            raise self.err(
                f"{f!r} has no category names: declare them "
                f"(feature {fmt_name(f)}: categorical {{...}}) or give the code",
                v,
            )
        kind = f"an {feat.kind}" if feat.kind == "integer" else f"a {feat.kind}"
        raise self.err(f"{f!r} is {kind} feature: give a number, not {json.dumps(text)}", v)

    def constraint(self, c, bounds: list, rels: list) -> None:
        if isinstance(c, InRange):
            f = self.feature(c.ref.name)
            bounds.append(self.bound(c, f, c.lo.value, c.hi.value, c.ref.copy))
            return
        ops = list(c.ops)
        operands = list(c.operands)
        # a quoted string next to a categorical feature is a category; elsewhere a feature
        refs = [x for x in operands if isinstance(x, Ref)]
        for i, x in enumerate(operands):
            if isinstance(x, Text):
                cat_ref = any(
                    self.is_categorical(r) and x.value in (self.feat_of(r).categories or ())
                    for r in refs
                )
                if not cat_ref and x.value in self.names:
                    operands[i] = Ref(Name(x.value, pos=x.pos), None, pos=x.pos)
        for a, op, b in zip(operands, ops, operands[1:]):
            if isinstance(a, Ref) and isinstance(b, Ref):
                # each name is known before the two are compared: a misspelt one is said so
                fa, fb = self.feature(a.name), self.feature(b.name)
                if a.copy is None or b.copy is None or a.copy == b.copy:
                    raise self.err(
                        "a relation compares one feature between x1 and x2 (x1.NAME <= x2.NAME)", a
                    )
                if fa != fb:
                    raise self.err(
                        "a relation compares one feature between x1 and x2 "
                        f"(got {fa!r} and {fb!r})",
                        b,
                    )
                if op == "!=" and not self.is_categorical(a):  # as the compile refuses it
                    raise self.err(
                        f"x1.{fa} != x2.{fa}: '!=' compares categorical features only "
                        f"({fa!r} is {self.feat_of(a).kind})",
                        a,
                    )
                rels.append(self.relation(c, fa, a.copy, op, b.copy))
                continue
            if op == "!=":
                raise self.err("'!=' compares a feature between x1 and x2 (x1.NAME != x2.NAME)", a)
            if isinstance(b, Ref):  # value op ref: flip to ref op' value
                a, b, op = b, a, FLIP[op]
            if not isinstance(a, Ref):
                text = next((x for x in (a, b) if isinstance(x, Text)), None)
                if text is not None:  # a quoted name that is no feature
                    self.feature(Name(text.value, pos=text.pos))
                raise self.err("one side of a comparison must be a feature", a)
            f = self.feature(a.name)
            v = self.value_for(f, b, finite=op == "==")
            feat = self.ens.features[self.names.index(f)]
            lo, hi = -math.inf, math.inf
            if op == "==":
                lo = hi = v
            elif op == "<=" or (op == "<" and math.isinf(v)):
                hi = v
            elif op == ">=" or (op == ">" and math.isinf(v)):
                lo = v
            elif op == "<":
                hi = math.ceil(v) - 1.0 if feat.integral else math.nextafter(v, -math.inf)
            elif op == ">":
                lo = math.floor(v) + 1.0 if feat.integral else math.nextafter(v, math.inf)
            bounds.append(self.bound(c, f, lo, hi, a.copy))

    def relation(self, at, f: str, left: int, op: str, right: int) -> FeatureRelation:
        r = FeatureRelation(f, left, op, right)
        self.places[id(r)] = at
        return r

    def is_categorical(self, r: Ref) -> bool:
        return r.name.text in self.names and self.feat_of(r).kind == "categorical"

    def feat_of(self, r: Ref):
        return self.ens.features[self.names.index(r.name.text)]

    # ---- queries ----
    def expand(self, blk) -> list[Query]:
        vary = next(st for st in blk.body if isinstance(st, VARY_TYPES))
        eff = self.settings(blk)
        bounds, rels = self.constraints(blk)
        every = self.names
        if isinstance(vary, VaryEachFeature) or (
            isinstance(vary, VarySubsets) and vary.pool is None
        ):
            every = self.sweepable(blk, bounds, rels)
        sets = self.vary_sets(blk, vary, eff, every)
        base_name = blk.name.text
        out = []
        backends = eff["backend"].names if "backend" in eff else (DEFAULT_BACKEND,)
        for fs in sets:
            name = base_name if isinstance(blk, QueryBlock) else f"{base_name}/{'+'.join(fs)}"
            self.check_consistent(
                fs, f" in {name}" if isinstance(blk, SweepBlock) else "", bounds, rels, vary
            )
            for b in backends:
                qname = name if len(backends) == 1 else f"{name}@{b}"
                q = self.query(blk, eff, fs, qname, b, bounds, rels)
                out.append(q)
        return out

    def sweepable(self, blk, bounds, rels) -> list[str]:
        """The features a sweep over every feature varies (``vary each feature``, ``vary
        subsets of K``): all but those the block's constraints (``fix sex = 1``) or the
        declared bounds hold to one value for both inputs, whose queries would be vacuous;
        a warning names them. A sweep that names such a feature is an error (a query's)."""
        if not isinstance(blk, SweepBlock):
            return list(self.names)
        by_bounds, by_rules = [], []
        for f, name in enumerate(self.names):
            try:
                q = Query(vary=(name,), bounds=bounds, relations=rels)
                if held_to_one_value(self.ens, f) is not None:
                    by_bounds.append(name)
                elif held_by_constraints(self.ens, q, f):
                    by_rules.append(name)
            except InputError:
                continue  # contradictory constraints: check_consistent reports them
        held = by_bounds + by_rules
        if held and len(held) < len(self.names):
            why = [f"{', '.join(by_bounds)} ({held_reason(self.ens)})"] if by_bounds else []
            if by_rules:
                why.append(
                    f"{', '.join(by_rules)} (its constraints hold them to one value for both inputs)"
                )
            warnings.warn(
                f"{self.ast.filename}: sweep {blk.name.text} leaves out {'; '.join(why)}",
                TreesensWarning,
                stacklevel=2,
            )
            return [n for n in self.names if n not in held]
        return list(self.names)

    def vary_sets(self, blk, vary, eff, every: list[str]) -> list[tuple[str, ...]]:
        """The feature sets of the block's ``vary``; ``every``: the features a sweep over
        all of them takes (``sweepable``)."""
        if isinstance(vary, Vary):
            return [tuple(self.feature(n) for n in vary.names)]
        if isinstance(vary, VaryAll):
            return [tuple(self.names)]
        if isinstance(vary, VaryEachFeature):
            return [(n,) for n in every]
        if isinstance(vary, VaryEachOf):
            out = []
            for it in vary.items:
                if isinstance(it, FeatureSet):
                    out.append(tuple(self.feature(n) for n in it.names))
                else:
                    out.append((self.feature(it),))
            return out
        pool = [self.feature(n) for n in vary.pool] if vary.pool is not None else list(every)
        k = vary.k
        if k > len(pool):
            raise self.err(f"subsets of {k} features, but there are only {len(pool)}", vary)
        total = math.comb(len(pool), k)
        if vary.sample is None or vary.sample >= total:
            if total > 100_000:
                raise self.err(
                    f"subsets of {k} of {len(pool)} features make {total} queries; add 'sample N'",
                    vary,
                )
            return [tuple(c) for c in itertools.combinations(pool, k)]
        seed = eff["seed"].n if "seed" in eff else DEFAULT_SEED
        rng = random.Random(seed)
        chosen: set[tuple[int, ...]] = set()
        while len(chosen) < vary.sample:
            chosen.add(tuple(sorted(rng.sample(range(len(pool)), k))))
        return [tuple(pool[i] for i in c) for c in sorted(chosen)]

    def query(self, blk, eff, fs, name, backend, bounds, rels) -> Query:
        gap_st = eff.get("gap")
        cls_st = eff.get("classes")
        kind, params = self.kind(eff)
        largest = gap_st is not None and gap_st.kind == "max"
        if largest:  # the max_gap kind, which asks no gap of its own
            kind, params = self.max_gap_kind(gap_st, eff.get("kind"), params)
            # its search starts at no gap (binary 0, multiclass the ratio 1; a
            # regressor's change asks nothing of the pair until the search does; a
            # probability model's largest gap is its binary classifier reading's)
            if self.ens.is_regressor:
                gap_st = None
            else:
                gap_st = GapSetting(0.0 if self.binary else 1.0, "prob", pos=gap_st.pos)
        self.check_gap_and_classes(blk, gap_st, cls_st, largest)
        if "expect" in eff:
            check_expect_limit(self.ast, self.ens, eff["expect"])
        if largest:
            gap_st = None
        passes = baseline = None
        pst = eff.get("passes")
        if isinstance(pst, Passes):
            passes = ",".join(pst.items)
        elif isinstance(pst, Baseline):
            baseline = pst.name
        da = eff.get("data_aware")
        mode = DataAwareMode(da.mode) if da is not None else DataAwareMode.NONE
        options = self.query_options(blk, da, mode)
        kw = dict(
            kind=kind,
            params=params,
            gap=gap_st.value if gap_st is not None and gap_st.kind == "prob" else None,
            margin_gap=gap_st.value if gap_st is not None and gap_st.kind == "margin" else None,
            above=gap_st.value if gap_st is not None and gap_st.kind == "threshold" else None,
            below=gap_st.below if gap_st is not None and gap_st.kind == "threshold" else None,
            delta=gap_st.value if gap_st is not None and gap_st.kind == "delta" else None,
            direction=gap_st.direction if gap_st is not None and gap_st.kind == "delta" else None,
            classes=(cls_st.c1, cls_st.c2) if cls_st is not None else None,
            passes=passes,
            baseline=baseline,
            backend=backend,
            timeout=eff["timeout"].seconds if "timeout" in eff else DEFAULT_TIMEOUT,
            work=eff["work"].units if "work" in eff else None,
            threads=eff["threads"].n if "threads" in eff else DEFAULT_THREADS,
            seed=eff["seed"].n if "seed" in eff else DEFAULT_SEED,
        )
        try:
            q = query_from_keywords(list(fs), kw, name=name)
        except InputError as e:
            raise self.err(e.message, blk.name) from None
        # options (data, data-aware parameters, option NAME = VALUE) are set here, after
        # make_query, so they reach the Query whatever make_query accepts
        q = q.with_(bounds=bounds, relations=rels, where=self.where_texts(blk))
        q = q.planned(options=options, data_aware=mode)
        try:
            resolve_condition(self.ens, q)
        except InputError as e:
            raise self.err(
                e.message, cls_st or eff.get("gap") or eff.get("kind") or blk.name
            ) from None
        if largest and self.ens.n_outputs > 1 and (bounds or rels):
            from ..questions.max_gap import multiclass_refusal  # the box search's modules

            try:
                why = multiclass_refusal(self.ens, q)
            except InputError as e:
                raise self.err(e.message, eff.get("gap") or blk.name) from None
            if why is not None:
                raise self.err(
                    f"gap max on a multiclass model: {NOT_DESCRIBED} ({why}); ask a ratio "
                    "instead (gap 1.5)",
                    eff.get("gap") or blk.name,
                )
        return q

    def kind(self, eff) -> tuple[str | None, tuple]:
        """The block's ``kind NAME p = v, ...`` line: the kind and its parameters."""
        st = eff.get("kind")
        if st is None:
            return None, ()
        params = tuple((p.name, py_value(p.value)) for p in st.params)
        try:
            check_kind(Question(vary=(), kind=st.name, params=params))
        except InputError as e:
            raise self.err(e.message, st) from None
        return st.name, params

    def max_gap_kind(self, gap_st, kind_st, params) -> tuple[str, tuple]:
        """``gap max [tolerance T]``: the max_gap kind with its tolerance."""
        if kind_st is not None and kind_st.name != "max_gap":
            raise self.err(f"'gap max' asks the max_gap kind: drop 'kind {kind_st.name}'", kind_st)
        if gap_st.value is not None:
            params = (*(p for p in params if p[0] != "tolerance"), ("tolerance", gap_st.value))
        return "max_gap", params

    def query_options(self, blk, da, mode: DataAwareMode) -> dict:
        """The Plan.options of a block: option NAME = VALUE, the data_aware parameters,
        the data file and its label."""
        options = self.options(blk)
        if da is not None:
            for p in da.params:
                v = py_value(p.value)
                if p.name == "clauses" and isinstance(v, str):  # a file: relative to the .sens file
                    v = str(resolve_path(self.base, v))
                    self.check_clause_file(v, p)
                options[p.name] = v
        if self.data_path is not None:
            options.setdefault("data", str(self.data_path))
            if self.label is not None:
                options.setdefault("label", self.label)
        elif mode != DataAwareMode.NONE:
            raise self.err(
                f'data-aware mode {mode.value!r} needs data: add a line  data "train.csv"', da
            )
        return options

    def check_clause_file(self, path: str, at) -> None:
        """A clauses file the block reads (one that exists: else it is written) holds
        clauses over the model's features, checked before anything runs."""
        if not Path(path).exists():
            return
        try:
            clauses = clauses_from_document(json.loads(Path(path).read_text()), path)
            check_clause_features(self.ens, clauses, path)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise self.err(f"{path}: cannot read clauses: {e}", at) from None
        except InputError as e:
            raise self.err(str(e), at) from None

    def check_gap_and_classes(self, blk, gap_st, cls_st, largest: bool = False) -> None:
        """The gap and classes a block gives suit the model (binary, multiclass or a
        regressor; a probability model reads as the gap asks: compiler/readings.py)."""
        threshold = gap_st is not None and gap_st.kind in ("threshold", "delta")
        ens = read_as(self.ens, threshold if gap_st is not None else None)
        if ens.is_regressor and gap_st is None and largest:
            return
        if ens.is_regressor != threshold:
            raise self.err(
                "the model is a regressor: give 'gap delta D' (|f(x1) - f(x2)| >= D), 'gap "
                "above A below B' (f(x1) >= A, f(x2) <= B) or 'gap max'"
                if ens.is_regressor
                else "'gap delta D' and 'gap above A below B' are for regressors; give a gap",
                gap_st or blk.name,
            )
        if threshold:
            if cls_st is not None:
                raise self.err("classes given, but the model is a regressor; drop them", cls_st)
            return
        if self.binary:
            if cls_st is not None:
                raise self.err(
                    "classes given, but the model is binary (classes 0 and 1); drop them", cls_st
                )
            if gap_st is not None and gap_st.kind == "prob" and not (0.0 <= gap_st.value < 0.5):
                raise self.err(
                    binary_gap_range(gap_st.value, "P(x1) >= 0.5+g and P(x2) <= 0.5-g"), gap_st
                )
        else:
            C = self.ens.n_classes
            if cls_st is None:
                raise self.err(
                    f"the model has {C} classes: say which two to compare "
                    "(classes C1 -> C2; C2 may be 'any')",
                    blk.name,
                )
            out_of_range = class_out_of_range(cls_st, C)
            if out_of_range is not None:
                raise self.err(out_of_range, cls_st)
            if gap_st is None:
                raise self.err(
                    "a multiclass query needs a gap: a probability ratio g >= 1 (gap 1.5) "
                    "or a margin (gap margin 0.4)",
                    blk.name,
                )
            if gap_st.kind == "prob" and gap_st.value < 1.0:
                raise self.err(
                    f"gap {gap_st.value:g} out of range: a multiclass gap is a probability ratio "
                    "g >= 1 (P(c1) >= g * P(c) for every other class c)",
                    gap_st,
                )
