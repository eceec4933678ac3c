"""XGBoost tree dumps -> IR: ``get_dump(dump_format="json")`` (a JSON list of nested
trees) and the text dump (``get_dump()``, ``dump_model(path)``: ``booster[i]:`` then one
``id:[f<t] yes=,no=,missing=`` or ``id:leaf=`` line per node).

A dump records neither the base score nor (the text form) the number of classes: the
caller gives them (``LoadOptions``; defaults 0.5 and 2). Features are named f0, f1, ...;
a booster with feature names dumps splits on names, numbered by a details file's names
(``LoadOptions.feature_names``).
Witnesses are replayed on a Booster synthesised from the IR (``xgboost_replay``).
"""

from __future__ import annotations

import functools
import numbers
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ...compiler.ensemble import Ensemble, Feature, ModelOrigin, Tree
from ...compiler.errors import InputError, UnsupportedModelError, closest
from . import sniffing
from .base import MAX_FEATURES, LoadOptions, malformed_as_input_error, not_xgboost_json, read_json
from .xgboost_objectives import KNOWN, PROBABILITY, REGRESSION, outputs
from .xgboost_replay import XGBoostReplayer, native_model_bytes

# a dump implies at least this many features whatever its size (see dump_feature_bound)
DUMP_FEATURES_FLOOR = 10_000
# how XGBoost computes, whether its model is read from a dump or from its own file: a
# split sends x < t left, on the input cast to float32; the trees' values are added one
# after the other in float32
XGBOOST_ARITHMETIC = {"op": "<", "cast": "float32", "sums": "float32"}


def _f32(x) -> float:
    return float(np.float32(x))


def from_dump(
    trees_json: list,
    where: str,
    n_classes: int | None = None,
    base_score: float | tuple[float, ...] | None = None,
    n_features: int | None = None,
    file_bytes: int | None = None,
    names: tuple[str | None, ...] | None = None,
    objective: str | None = None,
    parallel: int | None = None,
) -> Ensemble:
    """The ensemble of a dump's trees. A dump declares no number of features: it is the
    largest feature index + 1 (or ``n_features``), bounded by the size of the file it was
    read from (``file_bytes``; see :func:`dump_feature_bound`). A dump of a booster with
    feature names splits on names: ``names`` (a details file's, at their indices) gives
    their indices, and the features are named so. Nor does a dump record its objective,
    class count or base score: ``objective`` (default binary:logistic, or multi:softprob
    when ``n_classes`` > 2), ``n_classes`` (a multi: objective's), ``parallel`` (its
    num_parallel_tree P, default 1: tree i adds to class (i // P) mod n_classes, as XGBoost
    grows a round's P trees of each class in turn) and ``base_score`` (default 0.5; one
    number, or one per class) say them."""
    if not isinstance(trees_json, list) or not trees_json:
        raise InputError("an XGBoost dump must be a non-empty JSON list of trees", where)
    with malformed_as_input_error("XGBoost tree dump", where):
        said = (objective, n_classes, base_score, parallel)
        reading = DumpReading.of(*said, len(trees_json), where)
        ens = _from_dump(trees_json, where, reading, n_features, file_bytes, names)
    # the replayer makes the Booster's model from the IR when a witness needs it
    recipe = functools.partial(native_model_bytes, ens, reading.stored, reading.objective)
    replayer = XGBoostReplayer(recipe, reading.objective, ens.n_classes, where)
    return replace(ens, source=f"{ens.source} ({reading.said()})", replayer=replayer)


def _check_class_count(n_classes, where: str) -> None:
    """A stated class count is a whole number, 0 or more (XGBoost writes num_class 0 for a
    model of one output)."""
    if n_classes is None:
        return
    if isinstance(n_classes, bool) or not isinstance(n_classes, numbers.Integral) or n_classes < 0:
        raise InputError(f"num_class {n_classes!r} is not a number of classes", where)


# how to say what a dump does not record: the .sens model line's words (load_model's,
# n_classes for num_class) and the command line's flags
SAY_OTHERWISE = (
    "a dump records neither its objective nor its base score nor its num_parallel_tree: say "
    "them with objective, num_class, base_score, num_parallel_tree (--objective, "
    "--num-class, --base-score, --num-parallel-tree)"
)


@dataclass(frozen=True)
class DumpReading:
    """What a dump is read as: its objective, classes, base score as XGBoost stores it
    (``stored``: a number, or one per class), and which of them were assumed."""

    objective: str
    n_classes: int
    stored: float | tuple[float, ...]
    assumed: tuple[str, ...]  # of objective, base_score, num_parallel_tree: those not given
    parallel: int = 1  # num_parallel_tree: a round's trees of each class, in turn

    @classmethod
    def of(
        cls, objective, n_classes, base_score, parallel, n_trees: int, where: str
    ) -> DumpReading:
        if objective is not None and objective not in KNOWN:
            raise InputError(
                f"objective {objective!r} is not one treesens reads "
                f"(one of {', '.join(KNOWN)}){closest(objective, KNOWN)}",
                where,
            )
        _check_class_count(n_classes, where)
        C = n_classes or 2
        obj = objective or ("multi:softprob" if C > 2 else "binary:logistic")
        multi = obj.startswith("multi:")
        if multi and n_classes is None:
            raise InputError(
                f"objective {obj} needs the number of classes: give num_class (--num-class)", where
            )
        if multi and n_classes < 2:  # 0 (a one-output model's num_class) is not two classes
            raise InputError(
                f"num_class {n_classes}: the objective {obj} needs 2 classes or more", where
            )
        if not multi and C > 2:
            raise InputError(f"num_class {C}, but the objective {obj} has one output", where)
        P = _parallel(parallel, where)
        if multi and (C < 2 or n_trees % (C * P)):
            per = f"num_class {C}" + (f" times num_parallel_tree {P}" if P > 1 else "")
            raise InputError(
                f"{per} does not divide the dump's {n_trees} trees (a multiclass dump has "
                f"num_parallel_tree trees per class each round, tree i adding to class "
                f"(i // num_parallel_tree) mod {C})",
                where,
            )
        bs = base_score if base_score is not None else 0.5
        many = isinstance(bs, (tuple, list))
        if many and len(bs) != (C if multi else 1) and len(bs) != 1:
            raise InputError(
                f"{len(bs)} base scores for {C if multi else 1} output"
                f"{'s' if multi else ''}: give one, or one per class",
                where,
            )
        stored = (
            tuple(float(b) for b in bs) if many and len(bs) > 1 else float(bs[0] if many else bs)
        )
        said = [("objective", objective), ("base_score", base_score)]
        if multi:  # one output's trees are summed, whatever their order
            said.append(("num_parallel_tree", parallel))
        assumed = tuple(name for name, value in said if value is None)
        return cls(obj, C if multi else (0 if obj in REGRESSION else 2), stored, assumed, P)

    def tree_class(self, i: int) -> int:
        """The class tree ``i`` of a multiclass dump adds to."""
        return (i // self.parallel) % self.n_classes

    def said(self) -> str:
        """The load line's words on what the dump was read as."""
        P, C = self.parallel, self.n_classes
        per = (
            f"{C} classes, tree i adding to class "
            + (f"(i // {P}) mod {C}" if P > 1 else f"i mod {C}")
            + f", num_parallel_tree {P}"
            + (" (assumed)" if "num_parallel_tree" in self.assumed else "")
            if self.objective.startswith("multi:")
            else "one margin per tree, summed"
        )
        bs = self.stored
        shown = ",".join(f"{b:g}" for b in bs) if isinstance(bs, tuple) else f"{bs:g}"
        objective = f"objective {self.objective}" + (
            " (assumed)" if "objective" in self.assumed else ""
        )
        base = f"base_score {shown}" + (" (assumed)" if "base_score" in self.assumed else "")
        told = f"read as {objective}, {per}, {base}"
        return f"{told}; {SAY_OTHERWISE}" if self.assumed else f"{told}: as given"


def _from_dump(trees_json, where, reading: DumpReading, n_features, file_bytes, names=None):
    flat = []
    max_f, max_at = -1, (0, 0)
    reader = _FeatureIds(names)
    for ti, root in enumerate(trees_json):
        try:
            t, mf, node = _dump_tree(root, reader)
        except NamedFeature as e:
            raise InputError(f"tree {ti}: {e}", where) from None
        except UnsupportedModelError as e:
            raise UnsupportedModelError(f"tree {ti}: {e.message}", where) from None
        except (KeyError, ValueError, TypeError) as e:
            raise InputError(f"tree {ti} of the dump is malformed: {e}", where) from None
        flat.append(t)
        if mf > max_f:
            max_f, max_at = mf, (ti, node)
    if n_features is None and file_bytes is not None:
        _check_feature_bound(max_f, max_at, file_bytes, where)
    n_feat = n_features if n_features is not None else max_f + 1
    if reader.named:  # every feature the details file names
        n_feat = max(n_feat, len(names))
    if n_feat > MAX_FEATURES:
        raise InputError(
            f"the dump implies {n_feat:,} features: treesens reads at most {MAX_FEATURES:,}",
            where,
        )
    if max_f >= n_feat:
        raise InputError(
            f"the dump splits on feature {max_f} but {n_feat} features were declared", where
        )
    bs = list(reading.stored) if isinstance(reading.stored, tuple) else [reading.stored]
    multi = reading.objective.startswith("multi:")
    n_classes, link, intercept = outputs(
        reading.objective, reading.n_classes if multi else 0, bs, len(flat), where
    )
    # tree i adds to class (i // P) mod C; _dump_tree gives its node arrays in Tree's order
    multi_out = len(intercept) > 1
    trees = [
        Tree(*arrays, outputs=(reading.tree_class(ti) if multi_out else 0,))
        for ti, arrays in enumerate(flat)
    ]
    if reader.named:  # the features the details file names, the others generic
        named = [*names, *[None] * (n_feat - len(names))]
        features = tuple(Feature(named[i] or f"f{i}") for i in range(n_feat))
    else:
        features = tuple(Feature(f"f{i}") for i in range(n_feat))
    return Ensemble(
        tuple(trees),
        features,
        n_classes=n_classes,
        intercept=intercept,
        link=link,
        **XGBOOST_ARITHMETIC,
        origin=ModelOrigin("xgboost-dump", where),
        probability=reading.objective in PROBABILITY,
    )


def _parallel(parallel, where: str) -> int:
    """A dump's num_parallel_tree as given (None: 1), a whole number >= 1."""
    if parallel is None:
        return 1
    if isinstance(parallel, bool) or not isinstance(parallel, int) or parallel < 1:
        raise InputError(f"num_parallel_tree must be a whole number >= 1, not {parallel!r}", where)
    return parallel


def dump_refusal(ens: Ensemble) -> str | None:
    """Why the certificate checker cannot read a dump as treesens read it (None: it can):
    it reads a dump as binary:logistic, or multi:softprob of one base score."""
    objective = getattr(ens.replayer, "objective", None)
    if ens.is_regressor or objective in REGRESSION:
        return "the checker reads XGBoost dumps of classifiers only (give the JSON model)"
    multi = objective in ("multi:softprob", "multi:softmax")
    if objective != "binary:logistic" and not multi:
        return (
            f"the checker reads a dump as binary:logistic or multi:softprob, not {objective} "
            "(give the JSON model)"
        )
    if multi and len(set(ens.intercept)) > 1:
        return "the checker reads a dump of one base score, not one per class (give the JSON model)"
    C = len(ens.intercept)
    if multi and any(t.outputs != (i % C,) for i, t in enumerate(ens.trees)):
        return (
            "the checker reads a multiclass dump's tree i as class i mod num_class, and this "
            "one was read with num_parallel_tree > 1 (give the JSON model)"
        )
    return None


def dump_feature_bound(file_bytes: int) -> int:
    """The most features a dump of ``file_bytes`` bytes may imply: one per byte, and at
    least DUMP_FEATURES_FLOOR. Each feature costs treesens per-feature work and memory
    (about 40 microseconds and 1 KB), so a few bytes naming a huge index would cost
    seconds to minutes and gigabytes; a model that really has that many inputs declares
    them (XGBoost's JSON and UBJ files: num_feature)."""
    return max(DUMP_FEATURES_FLOOR, file_bytes)


def _check_feature_bound(max_f: int, at: tuple[int, int], file_bytes: int, where: str) -> None:
    bound = dump_feature_bound(file_bytes)
    if max_f >= bound:
        ti, node = at
        raise InputError(
            f"tree {ti} node {node} splits on feature {max_f}, which would make a model "
            f"on {max_f + 1:,} features from a dump of {file_bytes:,} bytes (a dump declares "
            f"no number of features; treesens takes at most {bound:,} from a file this size): "
            "load the model's native JSON or UBJ file, which declares num_feature",
            where,
        )


# a leaf of a list of values: a tree of multi_strategy='multi_output_tree' (the native
# reader refuses it alike)
VECTOR_LEAVES = (
    "its leaves hold vectors (multi_strategy='multi_output_tree'), which are not supported: "
    "train with multi_strategy='one_output_per_tree', the default"
)


class NamedFeature(ValueError):
    """A split names a feature whose index nothing given says."""


class _FeatureIds:
    """A split's feature index: an index or f<index>, or a name at its index in
    ``names`` (a details file's); ``named``: some split named its feature."""

    def __init__(self, names: tuple[str | None, ...] | None):
        self.index = {n: i for i, n in enumerate(names or ()) if n is not None}
        self.given = names is not None
        self.named = False

    def __call__(self, split) -> int:
        if isinstance(split, int):
            return split
        s = str(split)
        if s.startswith("f") and s[1:].isdigit():
            return int(s[1:])
        if s.isdigit():
            return int(s)
        if s in self.index:
            self.named = True
            return self.index[s]
        if self.given:
            raise NamedFeature(
                f"the dump splits on feature {s!r}, which the details file does not name"
                f"{closest(s, self.index)}"
            )
        raise NamedFeature(
            f"the dump names its features ({s!r}), which a dump does not number: give a "
            "details file naming each feature at its index (--details; in a .sens file, "
            "`features from`), or load the booster's own model file "
            "(Booster.save_model('model.json'))"
        )


def _dump_tree(root: dict, feature_id=None):
    feature_id = feature_id or _FeatureIds(None)
    nodes: dict[int, dict] = {}
    stack = [root]
    while stack:
        nd = stack.pop()
        nid = int(nd["nodeid"])
        if nid in nodes:
            raise ValueError(f"node id {nid} appears twice")
        nodes[nid] = nd
        for ch in nd.get("children", []) or []:
            stack.append(ch)
    ids = sorted(nodes)
    index = {nid: i for i, nid in enumerate(ids)}
    # the root must be index 0
    if int(root["nodeid"]) != ids[0]:
        index = {
            int(root["nodeid"]): 0,
            **{nid: i + 1 for i, nid in enumerate(x for x in ids if x != int(root["nodeid"]))},
        }
    n = len(ids)
    feature = np.full(n, -1, dtype=np.int64)
    threshold = np.zeros(n)
    left = np.full(n, -1, dtype=np.int64)
    right = np.full(n, -1, dtype=np.int64)
    dleft = np.zeros(n, dtype=bool)
    value = np.zeros(n)
    max_f, max_node = -1, 0
    for nid, nd in nodes.items():
        i = index[nid]
        if "leaf" in nd:
            if isinstance(nd["leaf"], list):
                raise UnsupportedModelError(VECTOR_LEAVES)
            value[i] = _f32(nd["leaf"])
            continue
        f = feature_id(nd["split"])
        feature[i] = f
        if f > max_f:
            max_f, max_node = f, nid
        threshold[i] = _f32(nd.get("split_condition", 0.0))
        yes, no = int(nd["yes"]), int(nd["no"])
        if yes not in index or no not in index:
            raise ValueError(f"node {nid} points to a missing child")
        left[i], right[i] = index[yes], index[no]
        dleft[i] = int(nd.get("missing", yes)) == yes
    return (feature, threshold, left, right, dleft, value), max_f, max_node


# ---------------------------------------------------------------------------------
# the text dump

_TEXT_SPLIT = re.compile(
    r"(\d+):\[([^<\]]+)<([^\]]+)\] yes=(\d+),no=(\d+)(?:,missing=(\d+))?(?:,gain=[^,]*)?(?:,cover=.*)?"
)
_TEXT_LEAF = re.compile(r"(\d+):leaf=([^,\s]+)(?:,cover=.*)?")


def parse_text_dump(text: str, where: str) -> list[dict]:
    """A text dump as the JSON dump's nested trees (nodeid, split, split_condition, yes,
    no, missing, children / leaf)."""
    flat: list[dict[int, dict]] = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("booster["):
            flat.append({})
            continue
        if not flat:
            raise InputError(f"line {lineno}: expected booster[0]:", where)
        m = _TEXT_SPLIT.fullmatch(line)
        leaf = _TEXT_LEAF.fullmatch(line) if m is None else None
        if m is not None:
            nid, split, cond, yes, no, missing = m.groups()
            node = {"nodeid": int(nid), "split": split, "split_condition": float(cond)}
            node.update(yes=int(yes), no=int(no), missing=int(missing or yes))
        elif leaf is not None:
            node = {"nodeid": int(leaf.group(1)), "leaf": float(leaf.group(2))}
        else:
            raise InputError(f"line {lineno}: not a node of an XGBoost text dump", where)
        if node["nodeid"] in flat[-1]:
            raise InputError(f"line {lineno}: node {node['nodeid']} appears twice", where)
        flat[-1][node["nodeid"]] = node
    return [_nest(nodes, ti, where) for ti, nodes in enumerate(flat)]


def _nest(nodes: dict[int, dict], ti: int, where: str) -> dict:
    if 0 not in nodes:
        raise InputError(f"tree {ti} of the dump has no node 0", where)
    for nd in nodes.values():
        if "leaf" not in nd:
            kids = (nd["yes"], nd["no"])
            if any(k not in nodes for k in kids):
                raise InputError(f"tree {ti}: node {nd['nodeid']} points to a missing child", where)
            nd["children"] = [nodes[k] for k in kids]
    return nodes[0]


def is_json(path: Path, blob: bytes) -> bool:
    """Is an XGBoost file (``blob`` its content) read as JSON: named .json, or starting as a
    JSON list or object does (UBJ starts with '{' too, but not with '{"')?"""
    head = blob.lstrip()[:2]
    return path.suffix.lower() == ".json" or head[:1] == b"[" or head == b'{"'


def dump_or_model(blob: bytes, where: str, options: LoadOptions) -> Ensemble | dict:
    """An XGBoost JSON file: the ensemble of a tree dump (a list of trees), or the content
    of a native model (a dict with 'learner'); anything else is one InputError."""
    data = read_json(blob, where, "not a text JSON file (binary content)")
    if isinstance(data, list):
        return _dump_ensemble(data, where, options, blob)
    if not isinstance(data, dict) or "learner" not in data:
        raise not_xgboost_json(data, where)
    return data


def _dump_ensemble(trees: list, where: str, options: LoadOptions, blob: bytes) -> Ensemble:
    return from_dump(
        trees,
        where,
        options.n_classes,
        options.base_score,
        file_bytes=len(blob),
        names=options.feature_names,
        objective=options.objective,
        parallel=options.num_parallel_tree,
    )


def load_dump(path: Path, options: LoadOptions) -> Ensemble:
    """A tree dump file: the JSON list of trees, or the text dump."""
    where = str(path)
    blob = path.read_bytes()
    if is_json(path, blob):
        if isinstance(data := dump_or_model(blob, where, options), Ensemble):
            return data
    elif sniffing.looks_like_text_dump(blob[:64].decode("utf-8", errors="replace")):
        try:
            text = blob.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError("a text dump that is not UTF-8", where) from None
        return _dump_ensemble(parse_text_dump(text, where), where, options, blob)
    raise InputError("a native XGBoost model, not a text dump (drop the dump format)", where)


class XGBoostDumpFormat:
    """XGBoost's tree dumps: a JSON list of nested trees, or the text dump."""

    name = "xgboost-dump"
    description = "an XGBoost tree dump"
    suffixes = ()
    sniff_last = False
    takes_base_score = True
    generic_names = "f{}"
    replayer = XGBoostReplayer

    def sniff(self, head: bytes, suffix: str) -> bool:
        return sniffing.xgboost_dump(head, suffix)

    def load_path(self, path: Path, options: LoadOptions) -> Ensemble:
        return load_dump(path, options)

    def load_object(self, obj: Any) -> Ensemble | None:
        return None
