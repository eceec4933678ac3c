"""XGBoost -> Ensemble IR.

Reads XGBoost's native JSON (also what UBJ and in-memory models save as), and the
text-dump JSON list (``get_dump(dump_format="json")``). Facts this relies on:

* a numeric split sends ``float32(x) < threshold`` to the "yes" (left) child, NaN to
  ``default_left``'s side; thresholds and leaf values are float32;
* a leaf's value is its ``split_conditions`` entry (``base_weights`` is not the leaf
  value in re-saved models);
* ``base_score`` is stored in probability space for ``binary:logistic`` (margin offset
  = logit(base_score)), as a margin for ``binary:logitraw`` and ``multi:soft*``; it may
  be a scalar or a bracketed vector (xgboost >= 3);
* for a categorical split the listed categories go RIGHT; the IR wants "in set -> yes",
  so children are swapped (and the default direction with them);
* tree i adds to class ``tree_info[i]``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..compiler.ensemble import LOGISTIC, SOFTMAX, Ensemble, Feature, Tree, logit
from ..compiler.errors import InputError, UnsupportedModelError
from .libraries import import_library
from .load import MAX_FEATURES

SUPPORTED = (
    "binary:logistic",
    "binary:logitraw",
    "reg:logistic",
    "multi:softprob",
    "multi:softmax",
)


def _f32(x) -> float:
    return float(np.float32(x))


def _parse_base_score(raw) -> list[float]:
    if isinstance(raw, (int, float)):
        return [float(raw)]
    s = str(raw).strip()
    if s.startswith("["):
        s = s[1:-1]
    try:
        return [float(v) for v in s.split(",") if v.strip()]
    except ValueError:
        raise InputError(f"cannot read base_score {raw!r}") from None


class XGBoostReplayer:
    """xgboost's own predict. ``booster`` may be a Booster or a callable that loads one:
    loading (and importing xgboost, ~2 s) is deferred until a witness needs checking."""

    library = "xgboost"

    def __init__(self, booster, objective: str, n_classes: int, where: str | None = None):
        self._booster = booster
        self.objective = objective
        self.n_classes = n_classes
        self.where = where

    @property
    def booster(self):
        if callable(self._booster) and not hasattr(self._booster, "predict"):
            self._booster = self._booster()
        return self._booster

    def _dm(self, X):
        xgb = import_library("xgboost")

        return xgb.DMatrix(
            np.asarray(X, dtype=np.float64),
            feature_names=self.booster.feature_names,
            feature_types=self.booster.feature_types,
            missing=np.nan,
        )

    def _predict(self, X, **kw) -> np.ndarray:
        xgb = import_library("xgboost")
        try:
            return np.asarray(self.booster.predict(self._dm(X), **kw), dtype=np.float64)
        except xgb.core.XGBoostError as e:  # a model file xgboost loads but cannot use
            msg = str(e).strip().splitlines()[0] if str(e).strip() else "failed"
            raise InputError(
                f"xgboost cannot predict with this model: {msg[:200]}", self.where
            ) from None

    def predict_raw(self, X) -> np.ndarray:
        return self._predict(X, output_margin=True).reshape(len(X), -1)

    def predict_proba(self, X) -> np.ndarray:
        if self.objective == "multi:softmax":
            raw = self.predict_raw(X)
            z = np.exp(raw - raw.max(axis=1, keepdims=True))
            return z / z.sum(axis=1, keepdims=True)
        p = self._predict(X)
        if self.objective == "binary:logitraw":
            p = 1.0 / (1.0 + np.exp(-p))
        if p.ndim == 1:
            return np.stack([1.0 - p, p], axis=1)
        return p


# ---------------------------------------------------------------------------------
# native JSON


_MALFORMED = (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError)


def from_native_json(model: dict, where: str, booster=None) -> Ensemble:
    try:
        return _from_native_json(model, where, booster)
    except _MALFORMED as e:
        raise InputError(
            f"malformed XGBoost model ({type(e).__name__}: {str(e)[:120]})", where
        ) from None


def _from_native_json(model: dict, where: str, booster=None) -> Ensemble:
    try:
        learner = model["learner"]
        obj = learner["objective"]["name"]
        gb = learner["gradient_booster"]
        lmp = learner["learner_model_param"]
    except (KeyError, TypeError) as e:
        raise InputError(f"not an XGBoost model: missing {e}", where) from None
    if obj not in SUPPORTED:
        raise UnsupportedModelError(
            f"objective {obj!r} is not a classifier treesens supports (supported: {', '.join(SUPPORTED)})",
            where,
        )
    booster_name = gb.get("name")
    if booster_name == "dart":
        raise UnsupportedModelError(
            "DART boosters are not supported (their trees are weighted at predict time)", where
        )
    if booster_name != "gbtree":
        raise UnsupportedModelError(f"booster {booster_name!r} is not a tree ensemble", where)
    m = gb["model"]
    trees_json = m.get("trees", [])
    tree_info = m.get("tree_info", [0] * len(trees_json))
    # xgboost's predict follows these without bounds checks (a bad one crashes the process)
    T = len(trees_json)
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
    n_feat = int(lmp.get("num_feature", 0))
    if not 0 <= n_feat <= MAX_FEATURES:
        raise InputError(
            f"num_feature={n_feat}: treesens reads at most {MAX_FEATURES:,} features", where
        )
    num_class = int(lmp.get("num_class", 0) or 0)
    if int(lmp.get("num_target", 1) or 1) > 1:
        raise UnsupportedModelError("multi-output (num_target > 1) models are not supported", where)
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
    bs = _parse_base_score(lmp.get("base_score", "0.5"))

    if obj.startswith("multi:"):
        n_classes = max(num_class, 1)
        if n_classes > max(T, 2):  # every class has trees (and a huge count fills the memory)
            raise InputError(f"num_class={num_class} but the model has {T} trees", where)
        link = SOFTMAX
        intercept = tuple(_f32(b) for b in (bs if len(bs) == n_classes else bs[:1] * n_classes))
    else:
        n_classes = 2
        link = LOGISTIC
        b0 = _f32(bs[0])
        if obj in ("binary:logistic", "reg:logistic"):
            if not 0.0 < b0 < 1.0:
                raise InputError(f"base_score {b0} is not a probability", where)
            intercept = (logit(b0),)
        else:
            intercept = (b0,)

    trees = []
    for ti, tj in enumerate(trees_json):
        try:
            if int(tj.get("id", ti)) != ti:  # xgboost puts tree j at its id (a gap crashes)
                raise ValueError(f"its id is {tj.get('id')}")
            if not 0 <= int(tree_info[ti]) < (n_classes if n_classes > 2 else 1):
                raise ValueError(f"it adds to class {tree_info[ti]}")  # xgboost: out of bounds
            trees.append(_native_tree(tj, int(tree_info[ti]) if n_classes > 2 else 0, n_feat))
        except (KeyError, ValueError, IndexError, TypeError) as e:
            raise InputError(f"tree {ti} is malformed: {e}", where) from None
    features = tuple(
        _feature(names[i], types[i] if i < len(types) else "float") for i in range(n_feat)
    )
    replayer = None
    if booster is not None:
        replayer = XGBoostReplayer(booster, obj, n_classes, where)
    return Ensemble(
        trees=tuple(trees),
        features=features,
        n_classes=n_classes,
        intercept=intercept,
        link=link,
        op="<",
        cast="float32",
        source=f"xgboost:{where}",
        replayer=replayer,
    )


def _feature(name: str, ftype: str) -> Feature:
    kind = {"int": "integer", "i": "binary", "c": "categorical"}.get(ftype, "real")
    return Feature(name=str(name), kind=kind)


def _native_tree(tj: dict, cls: int, n_feat: int) -> Tree:
    tp = tj.get("tree_param", {})
    if int(tp.get("size_leaf_vector", "1") or 1) > 1:
        raise ValueError("vector leaves (multi_strategy=multi_output_tree) are not supported")
    left = np.asarray(tj["left_children"], dtype=np.int64)
    right = np.asarray(tj["right_children"], dtype=np.int64)
    n = len(left)
    feat = np.asarray(tj["split_indices"], dtype=np.int64)
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
    if (feat[~is_leaf] >= n_feat).any() or (feat[~is_leaf] < 0).any():
        raise ValueError(
            f"split on feature index {int(feat[~is_leaf].max())} but the model has {n_feat} features"
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
    return Tree(
        feature=feature,
        threshold=threshold,
        left=L,
        right=R,
        default_left=D,
        value=value,
        outputs=(cls,),
        categories=categories,
    )


# ---------------------------------------------------------------------------------
# text dump (list of nested trees)


def from_dump(
    trees_json: list,
    where: str,
    n_classes: int = 2,
    base_score: float | None = None,
    n_features: int | None = None,
) -> Ensemble:
    try:
        return _from_dump(trees_json, where, n_classes, base_score, n_features)
    except _MALFORMED as e:
        raise InputError(
            f"malformed XGBoost tree dump ({type(e).__name__}: {str(e)[:120]})", where
        ) from None


def _from_dump(
    trees_json: list,
    where: str,
    n_classes: int = 2,
    base_score: float | None = None,
    n_features: int | None = None,
) -> Ensemble:
    if not isinstance(trees_json, list) or not trees_json:
        raise InputError("an XGBoost dump must be a non-empty JSON list of trees", where)
    flat = []
    max_f = -1
    for ti, root in enumerate(trees_json):
        try:
            t, mf = _dump_tree(root)
        except (KeyError, ValueError, TypeError) as e:
            raise InputError(f"tree {ti} of the dump is malformed: {e}", where) from None
        flat.append(t)
        max_f = max(max_f, mf)
    n_feat = n_features if n_features is not None else max_f + 1
    if n_feat > MAX_FEATURES:
        raise InputError(
            f"the dump splits on feature {max_f}: treesens reads at most {MAX_FEATURES:,} features",
            where,
        )
    if max_f >= n_feat:
        raise InputError(
            f"the dump splits on feature {max_f} but {n_feat} features were declared", where
        )
    C = n_classes
    trees = []
    for ti, (feature, threshold, left, right, dleft, value) in enumerate(flat):
        cls = ti % C if C > 2 else 0
        trees.append(
            Tree(
                feature=feature,
                threshold=threshold,
                left=left,
                right=right,
                default_left=dleft,
                value=value,
                outputs=(cls,),
            )
        )
    bs = 0.5 if base_score is None else float(base_score)
    if C > 2:
        link, intercept = SOFTMAX, tuple([_f32(bs)] * C)
    else:
        link, intercept = LOGISTIC, (logit(_f32(bs)),)
    features = tuple(Feature(f"f{i}") for i in range(n_feat))
    ens = Ensemble(
        tuple(trees),
        features,
        n_classes=max(C, 2),
        intercept=intercept,
        link=link,
        op="<",
        cast="float32",
        source=f"xgboost-dump:{where}",
    )
    obj = "multi:softprob" if C > 2 else "binary:logistic"
    replayer = XGBoostReplayer(
        lambda: booster_from_ensemble(ens, base_score=bs), obj, ens.n_classes
    )
    return Ensemble(
        ens.trees,
        ens.features,
        ens.n_classes,
        ens.intercept,
        ens.link,
        ens.op,
        ens.cast,
        ens.scale,
        ens.source,
        replayer,
    )


def _feature_id(split) -> int:
    if isinstance(split, int):
        return split
    s = str(split)
    if s.startswith("f") and s[1:].isdigit():
        return int(s[1:])
    if s.isdigit():
        return int(s)
    raise ValueError(f"cannot read feature {split!r} (expected an index or f<index>)")


def _dump_tree(root: dict):
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
    max_f = -1
    for nid, nd in nodes.items():
        i = index[nid]
        if "leaf" in nd:
            value[i] = _f32(nd["leaf"])
            continue
        f = _feature_id(nd["split"])
        feature[i] = f
        max_f = max(max_f, f)
        threshold[i] = _f32(nd.get("split_condition", 0.0))
        yes, no = int(nd["yes"]), int(nd["no"])
        if yes not in index or no not in index:
            raise ValueError(f"node {nid} points to a missing child")
        left[i], right[i] = index[yes], index[no]
        dleft[i] = int(nd.get("missing", yes)) == yes
    return (feature, threshold, left, right, dleft, value), max_f


def booster_from_ensemble(ens: Ensemble, base_score: float = 0.5):
    """An xgboost Booster with exactly the ensemble's trees (used to replay dumps)."""
    xgb = import_library("xgboost")

    trees = []
    for ti, t in enumerate(ens.trees):
        n = t.n_nodes
        leaf = t.feature < 0
        parents = [2147483647] * n
        for i in range(n):
            if not leaf[i]:
                parents[int(t.left[i])] = i
                parents[int(t.right[i])] = i
        cond = np.where(leaf, t.value[:, 0], t.threshold)
        trees.append(
            {
                "base_weights": [0.0] * n,
                "categories": [],
                "categories_nodes": [],
                "categories_segments": [],
                "categories_sizes": [],
                "default_left": [int(d) for d in t.default_left],
                "id": ti,
                "left_children": [int(v) for v in t.left],
                "loss_changes": [0.0] * n,
                "parents": parents,
                "right_children": [int(v) for v in t.right],
                "split_conditions": [float(v) for v in cond],
                "split_indices": [max(int(v), 0) for v in t.feature],
                "split_type": [0] * n,
                "sum_hessian": [1.0] * n,
                "tree_param": {
                    "num_deleted": "0",
                    "num_feature": str(ens.n_features),
                    "num_nodes": str(n),
                    "size_leaf_vector": "1",
                },
            }
        )
    C = ens.n_classes
    model = {
        "learner": {
            "attributes": {},
            "feature_names": [],
            "feature_types": [],
            "gradient_booster": {
                "model": {
                    "gbtree_model_param": {"num_parallel_tree": "1", "num_trees": str(len(trees))},
                    "iteration_indptr": list(range(0, len(trees) + 1, max(1, C if C > 2 else 1))),
                    "tree_info": [int(t.outputs[0]) for t in ens.trees],
                    "trees": trees,
                },
                "name": "gbtree",
            },
            "learner_model_param": {
                "base_score": repr(float(base_score)),
                "boost_from_average": "0",
                "num_class": str(C if C > 2 else 0),
                "num_feature": str(ens.n_features),
                "num_target": "1",
            },
            "objective": (
                {"name": "multi:softprob", "softmax_multiclass_param": {"num_class": str(C)}}
                if C > 2
                else {"name": "binary:logistic", "reg_loss_param": {"scale_pos_weight": "1"}}
            ),
        },
        "version": [2, 0, 3],
    }
    booster = xgb.Booster()
    booster.load_model(bytearray(json.dumps(model).encode()))
    return booster


# ---------------------------------------------------------------------------------
# entry points


def load_path(
    path: Path, base_score: float | None = None, n_classes: int | None = None, dump: bool = False
) -> Ensemble:
    """An XGBoost model file; ``dump``: the caller said it is a text dump (a JSON list of
    trees), the only form whose base_score is not recorded in the file."""
    where = str(path)

    def native() -> None:
        if dump:
            raise InputError(
                "a native XGBoost model, not a text dump (drop the dump format)", where
            )
        if base_score is not None:
            raise InputError(
                "base_score is read only for a text dump (a JSON list of trees); "
                "a native XGBoost model records its own",
                where,
            )

    suffix = path.suffix.lower()
    blob = path.read_bytes()
    head = blob.lstrip()[:2]
    if suffix == ".json" or head[:1] == b"[" or head == b'{"':
        try:
            text = blob.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError("not a text JSON file (binary content)", where) from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise InputError(
                f"invalid JSON at line {e.lineno} column {e.colno}: {e.msg}", where
            ) from None
        if isinstance(data, list):
            return from_dump(data, where, n_classes=n_classes or 2, base_score=base_score)
        if not isinstance(data, dict) or "learner" not in data:
            raise InputError(
                "JSON is neither an XGBoost model (no 'learner') nor a tree dump (a list)", where
            )
        native()
        return from_native_json(data, where, booster=lambda: _load_booster(path))
    if head[:1] == b"{":
        # UBJ: read and checked here like JSON, before xgboost (which crashes on some
        # malformed models) loads it to replay a witness
        data = _ubj_decode(blob, where)
        if not isinstance(data, dict) or "learner" not in data:
            raise InputError("UBJ is not an XGBoost model (no 'learner')", where)
        native()
        return from_native_json(data, where, booster=lambda: _load_booster(path))
    native()
    booster = _load_booster(path)
    return from_booster(booster, where)


_UBJ_NUMBERS = {
    b"i": ">i1",
    b"U": ">u1",
    b"I": ">i2",
    b"l": ">i4",
    b"L": ">i8",
    b"d": ">f4",
    b"D": ">f8",
}


def _ubj_decode(blob: bytes, where: str):
    """Universal Binary JSON as XGBoost writes it (typed arrays ``[$d#L...`` included)."""
    pos = 0

    def fail(msg: str):
        raise InputError(f"malformed UBJ at byte {pos}: {msg}", where)

    def take(n: int) -> bytes:
        nonlocal pos
        if n < 0 or pos + n > len(blob):
            fail("unexpected end of file")
        pos += n
        return blob[pos - n : pos]

    def number(marker: bytes):
        dt = np.dtype(_UBJ_NUMBERS[marker])
        v = np.frombuffer(take(dt.itemsize), dtype=dt)[0]
        return float(v) if dt.kind == "f" else int(v)

    def count() -> int:
        marker = take(1)
        if marker not in _UBJ_NUMBERS or marker in (b"d", b"D"):
            fail(f"expected a length, found {marker!r}")
        n = number(marker)
        if not 0 <= n <= len(blob) - pos:
            fail(f"length {n} runs past the end of the file")
        return n

    def text() -> str:
        try:
            return take(count()).decode("utf-8")
        except UnicodeDecodeError:
            fail("a string is not UTF-8")

    def value(marker: bytes, depth: int):
        if depth > 64:
            fail("nested too deeply")
        if marker in _UBJ_NUMBERS:
            return number(marker)
        if marker in (b"S", b"H"):
            return text()
        if marker == b"C":
            return take(1).decode("latin-1")
        if marker in (b"T", b"F"):
            return marker == b"T"
        if marker == b"Z":
            return None
        if marker in (b"[", b"{"):
            return container(marker, depth + 1)
        fail(f"unknown marker {marker!r}")

    def container(open_: bytes, depth: int):
        is_obj = open_ == b"{"
        typ = n = None
        if blob[pos : pos + 1] == b"$":
            take(1)
            typ = take(1)
            if blob[pos : pos + 1] != b"#":
                fail("a typed container needs a count")
        if blob[pos : pos + 1] == b"#":
            take(1)
            n = count()
        if typ is not None and typ in _UBJ_NUMBERS and not is_obj:
            dt = np.dtype(_UBJ_NUMBERS[typ])
            return np.frombuffer(take(n * dt.itemsize), dtype=dt).tolist()
        out: dict | list = {} if is_obj else []
        k = 0
        while n is None or k < n:
            if n is None and blob[pos : pos + 1] == (b"}" if is_obj else b"]"):
                take(1)
                break
            k += 1
            key = text() if is_obj else None
            item = value(typ if typ is not None else take(1), depth)
            if is_obj:
                out[key] = item
            else:
                out.append(item)
        return out

    return value(take(1), 0)


def _load_booster(path: Path):
    xgb = import_library("xgboost")

    try:
        return xgb.Booster(model_file=str(path))
    except xgb.core.XGBoostError as e:
        msg = str(e).strip().splitlines()[0] if str(e).strip() else "unreadable"
        raise InputError(f"xgboost cannot load this model: {msg[:200]}", str(path)) from None
    except UnicodeDecodeError:  # xgboost's message quotes the file's bytes
        raise InputError(
            "xgboost cannot load this model: not a JSON, UBJ or binary XGBoost model", str(path)
        ) from None


def from_booster(booster, where: str = "<Booster>") -> Ensemble:
    raw = booster.save_raw(raw_format="json")
    data = json.loads(bytes(raw).decode())
    return from_native_json(data, where, booster=booster)


def from_estimator(est) -> Ensemble:
    try:
        booster = est.get_booster()
    except Exception as e:  # noqa: BLE001 - sklearn raises NotFittedError
        raise InputError(f"the XGBoost estimator is not fitted: {e}") from None
    if type(est).__name__ in ("XGBRegressor", "XGBRanker", "XGBRFRegressor"):
        raise UnsupportedModelError(f"{type(est).__name__} is not a classifier")
    return from_booster(booster, f"<{type(est).__name__}>")
