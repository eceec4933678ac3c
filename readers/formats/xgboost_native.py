"""XGBoost's native model (JSON, UBJ, old binary; a Booster; a fitted XGBClassifier) -> IR.

Facts this relies on:

* a numeric split sends ``float32(x) < threshold`` to the "yes" (left) child, NaN to
  ``default_left``'s side; thresholds and leaf values are float32;
* a leaf's value is its ``split_conditions`` entry (``base_weights`` is not the leaf
  value in re-saved models);
* ``base_score`` is stored in probability space for ``binary:logistic`` and
  ``reg:logistic`` (margin offset = logit(base_score)), as a margin for
  ``binary:logitraw`` and ``multi:soft*``; it may be a scalar or a bracketed vector
  (xgboost >= 3);
* ``reg:logistic`` predicts sigmoid(margin), as ``binary:logistic`` predicts P(class 1):
  a probability model (compiler/readings.py), read as a binary classifier or as a
  regressor; ``binary:logitraw`` predicts the margin, a binary classifier's;
* for a categorical split the listed categories go RIGHT; the IR wants "in set -> yes",
  so children are swapped (and the default direction with them);
* tree i adds to class ``tree_info[i]``.

A JSON list of trees is a tree dump (``xgboost_dump``); this format hands it over.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ...compiler.ensemble import (
    SOFTMAX,
    Ensemble,
    Feature,
    ModelOrigin,
    Tree,
    raw_category_values,
)
from ...compiler.errors import InputError, TreesensWarning, UnsupportedModelError
from . import sniffing, ubj, xgboost_dump
from .base import (
    DEFAULT_OPTIONS,
    DUMP_OPTIONS,
    MAX_FEATURES,
    LoadOptions,
    malformed_as_input_error,
    module_of,
)
from .xgboost_objectives import PROBABILITY, REGRESSION, SUPPORTED
from .xgboost_objectives import outputs as _outputs
from .xgboost_replay import XGBoostReplayer, booster_from_bytes


def _f32(x) -> float:
    return float(np.float32(x))


def _parse_base_score(raw, where: str) -> list[float]:
    if isinstance(raw, (int, float)):
        return [float(raw)]
    s = str(raw).strip()
    if s.startswith("["):
        s = s[1:-1]
    try:
        return [float(v) for v in s.split(",") if v.strip()]
    except ValueError:
        raise InputError(f"cannot read base_score {raw!r}: not a number", where) from None


def from_native_json(
    model: dict, where: str, model_bytes: bytes | None = None, booster: Any = None
) -> Ensemble:
    """The ensemble of a native model; with ``model_bytes`` (what xgboost loads) or a
    ``booster``, it carries a replayer."""
    with malformed_as_input_error("XGBoost model", where):
        return _from_native_json(model, where, model_bytes, booster)


def _from_native_json(model: dict, where: str, model_bytes, booster) -> Ensemble:
    obj, m, lmp = _learner(model, where)
    learner = model["learner"]
    trees_json = m.get("trees", [])
    tree_info = m.get("tree_info", [0] * len(trees_json))
    if isinstance(trees_json, list) and any(_vector_leaves(tj) for tj in trees_json):
        raise UnsupportedModelError(
            "trees with vector leaves (multi_strategy='multi_output_tree') are not supported: "
            "train with multi_strategy='one_output_per_tree', the default",
            where,
        )
    T = _checked_tree_count(m, where)
    n_feat = int(lmp.get("num_feature", 0))
    if not 0 <= n_feat <= MAX_FEATURES:
        raise InputError(
            f"num_feature={n_feat}: treesens reads at most {MAX_FEATURES:,} features", where
        )
    num_class = int(lmp.get("num_class", 0) or 0)
    targets = int(lmp.get("num_target", 1) or 1)
    if targets > 1 and obj == "reg:quantileerror":
        raise UnsupportedModelError(
            f"reg:quantileerror of {targets} quantile_alpha values (one output each) is not "
            "supported: train one model per quantile_alpha",
            where,
        )
    if targets > 1:
        raise UnsupportedModelError("multi-output (num_target > 1) models are not supported", where)
    names, types = _names_and_types(learner, n_feat, where)
    bs = _parse_base_score(lmp.get("base_score", "0.5"), where)
    n_classes, link, intercept = _outputs(obj, num_class, bs, T, where)
    trees = []
    # a softmax has one output per class, two classes too (multi:softprob, num_class=2)
    outputs = n_classes if link == SOFTMAX else 1
    for ti, tj in enumerate(trees_json):
        try:
            if int(tj.get("id", ti)) != ti:  # xgboost puts tree j at its id (a gap crashes)
                raise ValueError(f"its id is {tj.get('id')}")
            if not 0 <= int(tree_info[ti]) < outputs:
                raise ValueError(f"it adds to class {tree_info[ti]}")  # xgboost: out of bounds
            trees.append(_native_tree(tj, int(tree_info[ti]) if outputs > 1 else 0, n_feat))
        except KeyError as e:  # str(e) alone is the bare key: 'split_conditions'
            raise InputError(f"tree {ti} is malformed: it has no field {e}", where) from None
        except (ValueError, IndexError, TypeError) as e:
            raise InputError(f"tree {ti} is malformed: {e}", where) from None
    cats = recorded_categories(m, n_feat)
    features = tuple(
        _feature(names[i], types[i] if i < len(types) else "float", cats[i]) for i in range(n_feat)
    )
    replayer = None
    if model_bytes is not None or booster is not None:
        replayer = XGBoostReplayer(model_bytes, obj, n_classes, where, booster=booster)
    return Ensemble(
        trees=tuple(trees),
        features=features,
        n_classes=n_classes,
        intercept=intercept,
        link=link,
        **xgboost_dump.XGBOOST_ARITHMETIC,
        origin=ModelOrigin("xgboost", where),
        replayer=replayer,
        probability=obj in PROBABILITY,
    )


def _learner(model: dict, where: str) -> tuple[str, dict, dict]:
    """(objective, the gbtree model, learner_model_param) of a supported classifier."""
    try:
        learner = model["learner"]
        obj = learner["objective"]["name"]
        gb = learner["gradient_booster"]
        lmp = learner["learner_model_param"]
    except (KeyError, TypeError) as e:
        raise InputError(f"not an XGBoost model: missing {e}", where) from None
    if obj not in SUPPORTED and obj not in REGRESSION:
        known = ", ".join((*SUPPORTED, *REGRESSION))
        raise UnsupportedModelError(
            f"objective {obj!r} is not one treesens supports (supported: {known})",
            where,
        )
    booster_name = gb.get("name")
    if booster_name == "dart":
        raise UnsupportedModelError(
            "DART boosters are not supported (their trees are weighted at predict time)", where
        )
    if booster_name != "gbtree":
        raise UnsupportedModelError(f"booster {booster_name!r} is not a tree ensemble", where)
    return obj, gb["model"], lmp


def _checked_tree_count(m: dict, where: str) -> int:
    """The number of trees, checked against the counts xgboost's predict follows without
    bounds checks (a bad one crashes the process)."""
    T = len(m.get("trees", []))
    indptr = [int(v) for v in m.get("iteration_indptr", [0, T])]
    gtp = m.get("gbtree_model_param", {})
    if (
        indptr[0] != 0
        or indptr[-1] != T
        or any(a > b for a, b in zip(indptr, indptr[1:]))
        or int(gtp.get("num_trees", T)) != T
        or int(gtp.get("num_parallel_tree", 1)) < 1
    ):
        raise InputError(
            f"the tree counts (iteration_indptr, num_trees) disagree with its {T} trees", where
        )
    return T


def _names_and_types(learner: dict, n_feat: int, where: str) -> tuple[list, list]:
    names = list(learner.get("feature_names") or [])
    types = list(learner.get("feature_types") or [])
    bad = [t for t in types if t not in ("int", "float", "i", "q", "c")]
    if bad:  # xgboost loads the model, then refuses to predict with it
        raise InputError(
            f"unknown feature type {bad[0]!r} (xgboost knows int, float, i, q, c)", where
        )
    if not all(isinstance(nm, str) and nm and not set(nm) & set("[]<") for nm in names):
        # xgboost loads such a model, then refuses to predict with it
        raise InputError("a feature name is empty, not a string, or has [, ] or <", where)
    if not names:
        names = [f"f{i}" for i in range(n_feat)]
    if len(names) != n_feat:
        raise InputError(f"model lists {len(names)} feature names for {n_feat} features", where)
    return names, types


def _feature(name: str, ftype: str, categories: tuple | None = None) -> Feature:
    kind = {"int": "integer", "i": "binary", "c": "categorical"}.get(ftype, "real")
    if kind != "categorical" or categories is None:
        return Feature(name=str(name), kind=kind)
    names = tuple(c if isinstance(c, str) else _number_name(c) for c in categories)
    shown = raw_category_values(categories)
    return Feature(name=str(name), kind=kind, categories=names, category_values=shown)


def recorded_categories(model: dict, n_feat: int) -> list[tuple | None]:
    """Per feature, its categories in code order, as XGBoost (3.1 and later) records
    them for a model fitted on pandas ``category`` columns (``cats.enc``: numbers as
    they are, strings as UTF-8 bytes cut at ``offsets``); None where the model records
    none."""
    out: list[tuple | None] = [None] * n_feat
    enc = (model.get("cats") or {}).get("enc") or []
    segments = (model.get("cats") or {}).get("feature_segments") or []
    try:
        for f, e in enumerate(enc[:n_feat]):
            values = e.get("values") or []
            if "offsets" in e:
                cut = e["offsets"]
                raw = [bytes(v & 0xFF for v in values[a:b]) for a, b in zip(cut, cut[1:])]
                names = tuple(r.decode("utf-8", errors="replace") for r in raw)
            else:
                names = tuple(values)
            if names and (not segments or len(names) == segments[f + 1] - segments[f]):
                out[f] = names
    except (AttributeError, TypeError, ValueError, IndexError):
        return [None] * n_feat  # an unexpected layout: categories stay codes
    return out


def _number_name(v) -> str:
    return str(int(v)) if float(v).is_integer() else str(v)


def _vector_leaves(tj) -> bool:
    """Whether a tree's leaves hold a vector (XGBoost's multi_output_tree)."""
    try:
        return int(tj.get("tree_param", {}).get("size_leaf_vector", "1") or 1) > 1
    except (AttributeError, TypeError, ValueError):
        return False  # a malformed tree: its own reading says how


def _native_tree(tj: dict, cls: int, n_feat: int) -> Tree:
    left = np.asarray(tj["left_children"], dtype=np.int64)
    right = np.asarray(tj["right_children"], dtype=np.int64)
    n = len(left)
    feat = np.asarray(tj["split_indices"], dtype=np.int64)
    with np.errstate(over="ignore"):  # a value beyond float32 becomes inf: check_finite names it
        cond = np.asarray(tj["split_conditions"], dtype=np.float32).astype(np.float64)
    dleft = np.asarray(tj.get("default_left", [0] * n), dtype=bool)
    stype = np.asarray(tj.get("split_type", [0] * n), dtype=np.int64)
    if not (len(right) == len(feat) == len(cond) == n):
        raise ValueError("node arrays of different lengths")
    is_leaf = left == -1
    if ((left >= n) | (right >= n) | ((left < 0) & ~is_leaf)).any():
        raise ValueError("child index out of range")
    # xgboost follows parents and the category arrays without bounds checks (a bad one
    # crashes the process when it loads the model to replay a witness)
    parents = np.asarray(tj.get("parents", [0] * n), dtype=np.int64)
    if parents.shape != (n,) or ((parents[1:] < 0) | (parents[1:] >= n)).any():
        raise ValueError("parent index out of range")
    cats_all, nodes, segs, sizes = (
        np.asarray(tj.get(k, []), dtype=np.int64).reshape(-1)
        for k in ("categories", "categories_nodes", "categories_segments", "categories_sizes")
    )
    if (
        stype.shape != (n,)
        or ((stype != 0) & (stype != 1)).any()
        or not len(nodes) == len(segs) == len(sizes)
        or ((nodes < 0) | (nodes >= n) | (segs < 0) | (sizes < 0)).any()
        or (segs + sizes > len(cats_all)).any()
        or ((cats_all < 0) | (cats_all >= 2**24)).any()
    ):
        raise ValueError("categorical split arrays out of range")
    bad = np.flatnonzero(~is_leaf & ((feat >= n_feat) | (feat < 0)))
    if len(bad):
        raise ValueError(
            f"node {int(bad[0])} splits on feature index {int(feat[bad[0]])} "
            f"but the model has {n_feat} features (0..{n_feat - 1})"
        )
    over = np.flatnonzero(~is_leaf & (stype == 0) & np.isinf(cond))
    if len(over):  # xgboost never writes one; its far side no input xgboost takes reaches
        i = int(over[0])
        raise ValueError(
            f"node {i}: the split threshold {tj['split_conditions'][i]!r} is beyond "
            "float32's range, in which XGBoost stores it (as infinite)"
        )
    feature = np.where(is_leaf, -1, feat)
    threshold = np.where(is_leaf, 0.0, cond)
    value = np.where(is_leaf, cond, 0.0)
    categories = None
    L, R, D = left.copy(), right.copy(), dleft.copy()
    if (stype[~is_leaf] == 1).any():
        cat_list: list = [None] * n
        for nd, sg, sz in zip(nodes, segs, sizes):
            cat_list[int(nd)] = frozenset(int(c) for c in cats_all[int(sg) : int(sg) + int(sz)])
        for i in np.flatnonzero((stype == 1) & ~is_leaf):
            if cat_list[i] is None:  # xgboost's predict aborts on these
                raise ValueError(f"categorical split node {i} lists no categories")
            # listed categories go right in XGBoost: make them the "yes" branch
            L[i], R[i] = right[i], left[i]
            D[i] = not dleft[i]
        categories = tuple(cat_list)
    L = np.where(is_leaf, -1, L)
    R = np.where(is_leaf, -1, R)
    return Tree(feature, threshold, L, R, D, value, outputs=(cls,), categories=categories)


# ---------------------------------------------------------------------------------
# entry points


def load_path(path: Path, options: LoadOptions = DEFAULT_OPTIONS, dump: bool = False) -> Ensemble:
    """An XGBoost model file; ``dump``: the caller said it is a tree dump, the only form
    whose base_score is not recorded in the file."""
    where = str(path)

    def native() -> None:
        if dump:
            raise InputError(
                "a native XGBoost model, not a text dump (drop the dump format)", where
            )
        said = [k for k in DUMP_OPTIONS if getattr(options, k) is not None]
        if said:
            raise InputError(
                f"{DUMP_OPTIONS[said[0]]} is read only for a text dump (a JSON list of trees); "
                "a native XGBoost model records its own",
                where,
            )

    blob = path.read_bytes()
    if xgboost_dump.is_json(path, blob):
        data = xgboost_dump.dump_or_model(blob, where, options)
        if isinstance(data, Ensemble):
            return data
        native()
        return _warned_if_stopped_early(from_native_json(data, where, model_bytes=blob), data)
    if blob.lstrip()[:1] == b"{":
        data = ubj.decode(blob, where)
        if not isinstance(data, dict) or "learner" not in data:
            raise InputError("UBJ is not an XGBoost model (no 'learner')", where)
        native()
        return _warned_if_stopped_early(from_native_json(data, where, model_bytes=blob), data)
    native()
    return from_booster(booster_from_bytes(blob, where), where, file=True)


def _warned_if_stopped_early(ens: Ensemble, model: dict, booster: bool = False) -> Ensemble:
    """A model saved after early stopping records ``best_iteration``: treesens reads every
    round, as Booster.predict does by default, but an XGBClassifier loading the file
    predicts with the first best_iteration + 1, and so does a Booster asked with
    ``iteration_range=(0, best_iteration + 1)`` (xgboost's advice after early stopping);
    which one the user deploys the model cannot say. ``booster``: an in-memory Booster."""
    try:
        best = int(model["learner"]["attributes"]["best_iteration"])
    except (KeyError, TypeError, ValueError):
        return ens
    rounds = _rounds(model, len(ens.trees), ens.n_outputs)
    if 0 <= best < rounds - 1:
        others = (
            "xgboost's advice after early stopping, iteration_range=(0, best_iteration + 1), "
            f"predicts with the first {best + 1}; to ask about those, give "
            "booster[: best_iteration + 1]"
            if booster
            else f"an XGBClassifier or XGBRegressor loading it predicts with the first {best + 1}; "
            "to ask about those, give the fitted estimator, or save booster[: best_iteration + 1]"
        )
        warnings.warn(
            f"{ens.source}: the {'Booster' if booster else 'file'} records early stopping "
            f"(best_iteration {best}): treesens reads all {rounds} rounds, as Booster.predict "
            f"does by default, where {others}",
            TreesensWarning,
            stacklevel=2,
        )
    return ens


def _rounds(model: dict, n_trees: int, n_outputs: int) -> int:
    """The boosting rounds a native model holds (best_iteration counts these): a round is
    a tree per output, times num_parallel_tree (a forest's trees per round)."""
    m = model["learner"]["gradient_booster"]["model"]
    indptr = m.get("iteration_indptr")
    if isinstance(indptr, list) and len(indptr) > 1:
        return len(indptr) - 1
    parallel = int(m.get("gbtree_model_param", {}).get("num_parallel_tree", 1) or 1)
    return n_trees // max(n_outputs * parallel, 1)


def from_booster(booster: Any, where: str = "<Booster>", file: bool = False) -> Ensemble:
    """A Booster's ensemble; ``file``: loaded from a model file (the old binary format)."""
    raw = booster.save_raw(raw_format="json")
    data = json.loads(bytes(raw).decode())
    ens = from_native_json(data, where, booster=booster)
    return _warned_if_stopped_early(ens, data, booster=not file)


def from_estimator(est: Any) -> Ensemble:
    try:
        booster = est.get_booster()
    except Exception as e:  # noqa: BLE001 - sklearn raises NotFittedError
        raise InputError(f"the XGBoost estimator is not fitted: {e}") from None
    if type(est).__name__ in ("XGBRanker",):
        raise UnsupportedModelError(f"{type(est).__name__} is not a classifier or regressor")
    where = f"<{type(est).__name__}>"
    _refuse_numeric_missing(est, where)
    _refuse_margin_as_probability(est, where)
    rounds = predicted_rounds(est)
    if rounds is None or rounds >= booster.num_boosted_rounds():
        return from_booster(booster, where)
    model = _first_rounds(booster, rounds)
    return from_native_json(model, where, model_bytes=json.dumps(model).encode())


def _refuse_numeric_missing(est: Any, where: str) -> None:
    """An estimator's ``missing`` other than NaN makes its predict read that number as
    missing, which the booster (and so the IR and its replay) does not know."""
    missing = getattr(est, "missing", np.nan)
    try:
        is_nan = missing is None or bool(np.isnan(float(missing)))
    except (TypeError, ValueError):
        is_nan = False
    if not is_nan:
        raise UnsupportedModelError(
            f"missing={missing!r}: its predict reads the value {missing!r} as missing, "
            "which treesens does not (it reads NaN as missing): fit with the default "
            f"missing=np.nan, with NaN where the data holds {missing!r}",
            where,
        )


def _refuse_margin_as_probability(est: Any, where: str) -> None:
    """An XGBClassifier (or XGBRFClassifier) trained with binary:logitraw returns the margin from its
    predict_proba (xgboost: "Unsupported by predict_proba()") and predicts class 1 where
    that margin exceeds 0.5, where treesens reads P(class 1) = sigmoid(margin): its answers
    would not be about the probabilities this object gives."""
    if hasattr(est, "predict_proba") and getattr(est, "objective", None) == "binary:logitraw":
        raise UnsupportedModelError(
            f"{type(est).__name__} with objective='binary:logitraw': its predict_proba returns the "
            "margin, not a probability, and its predict thresholds that margin at 0.5, where "
            "treesens reads P(class 1) = sigmoid(margin); to ask about that probability, give "
            "its booster (est.get_booster()) or the file it saves",
            where,
        )


def predicted_rounds(est: Any) -> int | None:
    """How many rounds an estimator's predict uses after early stopping:
    ``best_iteration + 1`` (xgboost's sklearn predict takes that iteration range by
    default), not every round its booster holds; None when it was not early-stopped."""
    try:
        best = est.best_iteration
    except AttributeError:  # not early-stopped
        return None
    if best is None or getattr(est, "booster", None) not in (None, "gbtree"):
        return None
    return int(best) + 1


def _first_rounds(booster: Any, rounds: int) -> dict:
    """The booster's first ``rounds`` rounds as a native JSON model, with the category
    names the whole model records (xgboost's slicing leaves them out)."""
    part = json.loads(bytes(booster[:rounds].save_raw(raw_format="json")).decode())
    whole = json.loads(bytes(booster.save_raw(raw_format="json")).decode())
    try:
        cats = whole["learner"]["gradient_booster"]["model"].get("cats")
        if cats:
            part["learner"]["gradient_booster"]["model"]["cats"] = cats
    except (KeyError, TypeError, AttributeError):
        pass  # another layout: categories stay codes
    return part


class XGBoostFormat:
    """XGBoost's native model: JSON, UBJ or the old binary format, a Booster, a fitted
    XGBClassifier; a JSON list of trees is read as a tree dump."""

    name = "xgboost"
    description = "a native XGBoost model"
    suffixes = (".ubj", ".ubjson", ".model", ".bst", ".xgb")
    sniff_last = True  # any JSON, and binary content other formats do not claim
    takes_base_score = True  # of a JSON list of trees (a dump)
    generic_names = "f{}"
    replayer = XGBoostReplayer

    def sniff(self, head: bytes, suffix: str) -> bool:
        return sniffing.xgboost(head, suffix)

    def load_path(self, path: Path, options: LoadOptions) -> Ensemble:
        return load_path(path, options)

    def load_object(self, obj: Any) -> Ensemble | None:
        if not module_of(obj).startswith("xgboost"):
            return None
        if type(obj).__name__ == "Booster":
            return from_booster(obj)
        return from_estimator(obj)
