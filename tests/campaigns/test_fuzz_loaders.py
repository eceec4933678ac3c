"""Fuzzing the model loaders and the CSV readers: every input loads or raises InputError.

Small real models are trained here (tiny random data, fixed seeds) and their files are
broken on purpose: LightGBM text models and dump_model() JSON (truncated, junk bytes,
numbers and tokens replaced, lines deleted, header and tree arrays changed), scikit-learn
joblib/pickle files (tree arrays of wrong shapes and values inside a real fitted
estimator, attributes replaced, estimators of the wrong class, truncated pickles), XGBoost
UBJ files (the JSON fuzzer of test_hostile_models.py does not reach the UBJ reader), and
details / data CSV files. Whatever loads must evaluate.

Budget: a quick, deterministic run by default (CI); ``TS_FUZZ_EXAMPLES=N`` sets the number
of examples of every fuzzer for a longer campaign (docs/reliability.md).
"""

from __future__ import annotations

import copy
import itertools
import json
import pickle
import re
import struct
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import treesens
from treesens.compiler.errors import InputError
from treesens.readers.data import load_data
from treesens.readers.details import apply_data_names, apply_details, declare
from treesens.tests.fuzzing import event, fuzz_settings, json_paths

_COUNTER = itertools.count()


class Fixture(list):
    """A fixture's list of models, shown short in hypothesis' reports."""

    def __repr__(self) -> str:
        return f"<{len(self)} items>"


class FixtureDict(dict):
    def __repr__(self) -> str:
        return f"<{', '.join(self)}>"


def _fresh(folder, suffix: str):
    """A new file name per example (the data loader caches by path, size and mtime)."""
    return folder / f"fuzz{next(_COUNTER)}{suffix}"


def _rows(n_features: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    X = np.concatenate([np.zeros((1, n_features)), rng.normal(size=(4, n_features)) * 3])
    X = np.concatenate([X, np.full((1, n_features), np.nan), np.arange(n_features)[None, :]])
    return X


def loads_or_input_error(path, **kw):
    """The Ensemble, or None when the loader said InputError; what loads must evaluate."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ens = treesens.load_model(path, **kw)
        except InputError as e:
            assert str(e).strip() and "\n" not in str(e).strip(), f"not one line: {e}"
            event(f"InputError: {type(e).__name__}")
            return None
        event("loaded")
        X = _rows(ens.n_features)
        raw = ens.raw(X)
        assert raw.shape == (len(X), ens.n_outputs)
        ens.proba(X)
        if ens.replayer is not None:  # the library's own predict, used to check witnesses
            try:  # xgboost loads a model only when a witness needs replaying
                Xr = X[~np.isnan(X).any(axis=1)]  # NaN only for features declared missing
                ens.replayer.predict_raw(Xr)
                ens.replayer.predict_proba(Xr)
            except InputError as e:
                assert "\n" not in str(e).strip(), f"not one line: {e}"
                event("InputError when replaying")
    return ens


# small draws shared by the fuzzers
_special_tokens = [
    "nan",
    "-nan",
    "NaN",
    "inf",
    "-inf",
    "1e400",
    "-1e400",
    "0",
    "-0",
    "1",
    "-1",
    "2",
    "3",
    "-2",
    "4",
    "8",
    "31",
    "32",
    "4294967295",
    "4294967296",
    "2147483647",
    "2147483648",
    "-2147483649",
    "18446744073709551616",
    "99999999999999999999",
    "0.5",
    "1e-320",
    "",
    " ",
    "abc",
    "0x10",
    "1,2",
    "=",
    "\x00",
    "é",
]
_token = st.one_of(
    st.sampled_from(_special_tokens),
    st.integers(-4, 40).map(str),
    st.floats().map(repr),
    st.text(max_size=4),
)


def _bytes_mutation(data, blob: bytes) -> bytes:
    """Truncate, insert junk, overwrite or delete a few bytes."""
    kind = data.draw(st.sampled_from(["truncate", "insert", "overwrite", "delete", "flip"]))
    i = data.draw(st.integers(0, len(blob)))
    if kind == "truncate":
        return blob[:i]
    junk = data.draw(st.binary(min_size=1, max_size=16))
    if kind == "insert":
        return blob[:i] + junk + blob[i:]
    if kind == "overwrite":
        return blob[:i] + junk + blob[i + len(junk) :]
    if kind == "delete":
        return blob[:i] + blob[i + len(junk) :]
    if i == len(blob):
        return blob
    return blob[:i] + bytes([blob[i] ^ (1 << data.draw(st.integers(0, 7)))]) + blob[i + 1 :]


# ---------------------------------------------------------------------------------------
# LightGBM


def _lgb_data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    X[:, 2] = rng.integers(0, 6, n)
    X[rng.random(n) < 0.1, 1] = np.nan
    y = (np.isin(X[:, 2], [1, 3, 4]) ^ (X[:, 0] > 0.8)).astype(int)
    return X, y


@pytest.fixture(scope="module")
def lgb_texts() -> list[str]:
    """A binary model with categorical and missing-value splits, and a 3-class model."""
    lgb = pytest.importorskip("lightgbm")
    X, y = _lgb_data()
    common = {"verbose": -1, "num_threads": 1, "seed": 0, "deterministic": True}
    binary = lgb.train(
        {
            "objective": "binary",
            "num_leaves": 4,
            "min_data_in_leaf": 5,
            "min_data_per_group": 5,
            "cat_smooth": 1,
            "max_cat_to_onehot": 2,
            **common,
        },
        lgb.Dataset(X, y, categorical_feature=[2]),
        num_boost_round=3,
    )
    y3 = y + (X[:, 0] > 0)
    multi = lgb.train(
        {
            "objective": "multiclass",
            "num_class": 3,
            "num_leaves": 3,
            "min_data_in_leaf": 5,
            **common,
        },
        lgb.Dataset(X, y3),
        num_boost_round=2,
    )
    texts = Fixture([binary.model_to_string(), multi.model_to_string()])
    assert "cat_threshold=" in texts[0]
    return texts


@pytest.fixture(scope="module")
def lgb_dumps(lgb_texts) -> list[dict]:
    import lightgbm as lgb

    return Fixture(lgb.Booster(model_str=t).dump_model() for t in lgb_texts)


def _lgb_probe_rows() -> np.ndarray:
    """Rows with every category code (and an unseen one), NaN and zeros."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 3)) * 2
    X[:, 2] = np.arange(60) % 7
    X[::7, 1] = np.nan
    X[::11, 0] = 0.0
    return X


LGB_KEYS = [
    "version",
    "num_class",
    "num_tree_per_iteration",
    "label_index",
    "max_feature_idx",
    "objective",
    "average_output",
    "feature_names",
    "feature_infos",
    "tree_sizes",
    "Tree",
    "num_leaves",
    "num_cat",
    "split_feature",
    "threshold",
    "decision_type",
    "left_child",
    "right_child",
    "leaf_value",
    "cat_boundaries",
    "cat_threshold",
    "is_linear",
    "shrinkage",
    "pandas_categorical",
]


def _new_value(data, old: str) -> str:
    """A replacement for the value of a ``key=value`` line."""
    parts = old.split(" ")
    kind = data.draw(st.sampled_from(["token", "one", "drop", "dup", "ints"]))
    if kind == "token":
        return data.draw(_token)
    i = data.draw(st.integers(0, len(parts) - 1))
    if kind == "one":
        parts[i] = data.draw(_token)
    elif kind == "drop":
        del parts[i]
    elif kind == "dup":
        parts.insert(i, parts[i])
    else:
        n = max(len(parts) + data.draw(st.integers(-1, 1)), 0)
        parts = [str(data.draw(st.integers(-5, 12))) for _ in range(n)]
    return " ".join(parts)


def _mutate_lgb_text(data, text: str) -> bytes:
    lines = text.split("\n")
    for _ in range(data.draw(st.integers(1, 3))):
        kind = data.draw(
            st.sampled_from(
                ["key", "key", "key", "line", "delete", "dup", "swap", "insert", "bytes"]
            )
        )
        if kind == "bytes":
            return _bytes_mutation(data, "\n".join(lines).encode())
        i = data.draw(st.integers(0, len(lines) - 1))
        j = data.draw(st.integers(0, len(lines) - 1))
        if kind == "key":
            key = data.draw(st.sampled_from(LGB_KEYS))
            hits = [
                k
                for k, ln in enumerate(lines)
                if ln.startswith(key + "=") or ln.startswith(key + ":")
            ]
            if not hits:
                lines.insert(i, f"{key}={data.draw(_token)}")
                continue
            k = data.draw(st.sampled_from(hits))
            head, sep, old = re.split(r"([=:])", lines[k], maxsplit=1)
            lines[k] = head + sep + _new_value(data, old)
        elif kind == "line":
            if "=" in lines[i]:
                head, _, old = lines[i].partition("=")
                lines[i] = head + "=" + _new_value(data, old)
        elif kind == "delete":
            del lines[i]
        elif kind == "dup":
            lines.insert(j, lines[i])
        elif kind == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        else:
            lines.insert(i, data.draw(_token) + data.draw(st.sampled_from(["", "=", "=1", "=-1"])))
        if not lines:
            lines = [""]
    return "\n".join(lines).encode("utf-8", "surrogatepass")


@fuzz_settings(250)
@given(data=st.data())
def test_fuzzed_lightgbm_text_loads_or_raises_an_input_error(tmp_path, lgb_texts, data):
    text = data.draw(st.sampled_from(lgb_texts))
    path = _fresh(tmp_path, ".txt")
    path.write_bytes(_mutate_lgb_text(data, text))
    ens = loads_or_input_error(path, format="lightgbm")
    if ens is not None:  # LightGBM reads the same model from the file as treesens
        X = _lgb_probe_rows()
        for f, feat in enumerate(ens.features):
            if feat.kind == "categorical":  # the IR's domain: whole codes
                X[:, f] = np.round(X[:, f])
        assert np.allclose(ens.raw(X), ens.replayer.predict_raw(X), atol=1e-6, equal_nan=True)


_json_junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 10**6),
    st.sampled_from([2**31, 2**63, -(2**63), 10**30]),
    st.floats(allow_nan=True),
    st.text(max_size=5),
    st.sampled_from(["==", "<=", "1||2", "||", "-1||40", "NaN", "Zero", "None"]),
    st.lists(st.integers(-2, 5), max_size=4),
    st.builds(dict),  # a new object each time: no cycles
    st.builds(list),
)


def _mutate_json(data, model):
    m = copy.deepcopy(model)
    paths = json_paths(m)[1:]
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(paths))
        parent = m
        try:
            for k in path[:-1]:
                parent = parent[k]
            if data.draw(st.booleans()) and isinstance(parent, dict):
                parent.pop(path[-1], None)
            else:
                parent[path[-1]] = data.draw(_json_junk)
        except (KeyError, IndexError, TypeError):
            continue
    return m


@fuzz_settings(200)
@given(data=st.data())
def test_fuzzed_lightgbm_dump_json_loads_or_raises_an_input_error(tmp_path, lgb_dumps, data):
    m = _mutate_json(data, data.draw(st.sampled_from(lgb_dumps)))
    path = _fresh(tmp_path, ".json")
    path.write_text(json.dumps(m))
    loads_or_input_error(path, format="lightgbm")


# ---------------------------------------------------------------------------------------
# XGBoost UBJ


def ubj(x) -> bytes:
    """UBJSON as XGBoost reads it (lengths and keys as int64 'L')."""

    def length(n: int) -> bytes:
        return b"L" + struct.pack(">q", n)

    if x is None:
        return b"Z"
    if x is True:
        return b"T"
    if x is False:
        return b"F"
    if isinstance(x, int):
        if -(2**31) <= x < 2**31:
            return b"l" + struct.pack(">i", x)
        return b"L" + struct.pack(">q", max(min(x, 2**63 - 1), -(2**63)))
    if isinstance(x, float):
        return b"D" + struct.pack(">d", x)
    if isinstance(x, str):
        b = x.encode("utf-8", "surrogatepass")
        return b"S" + length(len(b)) + b
    if isinstance(x, list):
        return b"[" + b"".join(ubj(v) for v in x) + b"]"
    if isinstance(x, dict):
        out = b"{"
        for k, v in x.items():
            kb = str(k).encode("utf-8", "surrogatepass")
            out += length(len(kb)) + kb + ubj(v)
        return out + b"}"
    raise TypeError(type(x))


@pytest.fixture(scope="module")
def xgb_models() -> list:
    """(native JSON, UBJ bytes as xgboost saves them) of a binary model with a categorical
    feature and of a 3-class model."""
    xgb = pytest.importorskip("xgboost")
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = rng.random((120, 3))
    X[:, 2] = rng.integers(0, 5, 120)
    X[rng.random(120) < 0.1, 1] = np.nan
    y = ((X[:, 0] > 0.5) ^ np.isin(X[:, 2], [1, 3])).astype(int)
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": pd.Categorical(X[:, 2].astype(int))})
    out = Fixture()
    for params, data in (
        ({"objective": "binary:logistic"}, xgb.DMatrix(frame, label=y, enable_categorical=True)),
        (
            {"objective": "multi:softprob", "num_class": 3},
            xgb.DMatrix(X, label=y + (X[:, 0] > 0.7)),
        ),
    ):
        b = xgb.train({"max_depth": 2, "eta": 0.5, "nthread": 1, **params}, data, num_boost_round=2)
        out.append(Fixture([json.loads(bytes(b.save_raw("json"))), bytes(b.save_raw("ubj"))]))
    assert 1 in out[0][0]["learner"]["gradient_booster"]["model"]["trees"][0]["split_type"]
    return out


def test_ubj_encoder_writes_what_xgboost_reads(tmp_path, xgb_models):
    model, _ = xgb_models[0]
    path = tmp_path / "m.ubj"
    path.write_bytes(ubj(model))
    ens = treesens.load_model(path)
    X = np.random.default_rng(1).random((20, 3))
    X[:, 2] = np.arange(20) % 5  # category codes
    assert np.allclose(ens.raw(X), ens.replayer.predict_raw(X), atol=1e-5)


@fuzz_settings(250)
@given(data=st.data())
def test_fuzzed_xgboost_ubj_structure_loads_or_raises_an_input_error(tmp_path, xgb_models, data):
    model, _ = data.draw(st.sampled_from(xgb_models))
    path = _fresh(tmp_path, ".ubj")
    path.write_bytes(ubj(_mutate_json(data, model)))
    loads_or_input_error(path)


@fuzz_settings(300)
@given(data=st.data())
def test_fuzzed_xgboost_ubj_bytes_load_or_raise_an_input_error(tmp_path, xgb_models, data):
    _, blob = data.draw(st.sampled_from(xgb_models))
    for _ in range(data.draw(st.integers(1, 3))):
        blob = _bytes_mutation(data, blob)
    path = _fresh(tmp_path, data.draw(st.sampled_from([".ubj", ".model", ".bst"])))
    path.write_bytes(blob)
    loads_or_input_error(path)


# ---------------------------------------------------------------------------------------
# scikit-learn joblib / pickle files


@pytest.fixture(scope="module")
def sk_models() -> dict:
    """Small fitted estimators of every supported kind (NaN in the data, a categorical)."""
    from sklearn.ensemble import (
        ExtraTreesClassifier,
        GradientBoostingClassifier,
        HistGradientBoostingClassifier,
        RandomForestClassifier,
    )
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    X[:, 2] = rng.integers(0, 4, 120)
    y = (X[:, 0] + (X[:, 2] == 1) > 0.5).astype(int)
    y3 = y + (X[:, 1] > 0.3)
    Xn = X.copy()
    Xn[rng.random(120) < 0.1, 1] = np.nan
    return FixtureDict(
        {
            "tree": DecisionTreeClassifier(max_depth=3, random_state=0).fit(Xn, y),
            "forest": RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(
                Xn, y3
            ),
            "extra": ExtraTreesClassifier(n_estimators=2, max_depth=2, random_state=0).fit(X, y),
            "gb": GradientBoostingClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y),
            "gb3": GradientBoostingClassifier(n_estimators=2, max_depth=2, random_state=0).fit(
                X, y3
            ),
            "hgb": HistGradientBoostingClassifier(
                max_iter=3, max_depth=2, categorical_features=[2], random_state=0
            ).fit(Xn, y),
            "hgb3": HistGradientBoostingClassifier(max_iter=2, max_depth=2, random_state=0).fit(
                Xn, y3
            ),
        }
    )


@pytest.fixture(scope="module")
def sk_others(sk_models) -> list:
    """Objects a model file may hold that are not a supported classifier or regressor."""
    import lightgbm as lgb
    from sklearn.cluster import KMeans
    from sklearn.decomposition import PCA
    from sklearn.ensemble import (
        AdaBoostClassifier,
        IsolationForest,
    )
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    small = {"n_estimators": 2, "random_state": 0}
    return Fixture(
        [
            IsolationForest(**small).fit(X),
            AdaBoostClassifier(**small).fit(X, y),
            LogisticRegression().fit(X, y),
            KMeans(n_clusters=2, n_init=1, random_state=0).fit(X),
            Pipeline([("p", PCA(2)), ("t", DecisionTreeClassifier(max_depth=2))]).fit(X, y),
            Pipeline([("s", StandardScaler()), ("m", LogisticRegression())]).fit(X, y),
            DecisionTreeClassifier(),  # not fitted
            DecisionTreeClassifier(max_depth=2).fit(X, np.zeros(60, dtype=int)),  # one class
            DecisionTreeClassifier(max_depth=2).fit(X, np.stack([y, 1 - y], axis=1)),  # 2 outputs
            lgb.LGBMRanker(n_estimators=2, verbose=-1, num_threads=1).fit(X, y, group=[60]),
            None,
            3,
            "model",
            [1, 2],
            {"tree_": 1},
            np.zeros(3),
        ]
    )


class _Reduced:
    """Pickles as ``cls(*args)`` then ``__setstate__(state)``, with no trace of this class."""

    def __init__(self, cls, args, state):
        self.cls, self.args, self.state = cls, args, state

    def __reduce__(self):
        return (self.cls, self.args, self.state)


def _tree_holders(est) -> list:
    """The (sub-)estimators with a ``tree_`` attribute."""
    if hasattr(est, "tree_"):
        return [est]
    subs = getattr(est, "estimators_", None)
    if subs is None:
        return []
    return [e for e in np.asarray(subs, dtype=object).ravel() if hasattr(e, "tree_")]


_int_junk = st.one_of(st.integers(-3, 12), st.sampled_from([2**31 - 1, -(2**31), 2**62, -(2**62)]))
_float_junk = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, -0.0, 1e308, -2.0])
)


def _junk_array(data, like: np.ndarray) -> np.ndarray:
    """An array of a wrong shape, dtype or content in place of ``like``."""
    kind = data.draw(st.sampled_from(["short", "long", "dtype", "ndim", "empty", "content"]))
    if kind == "short":
        return like[: data.draw(st.integers(0, max(len(like) - 1, 0)))]
    if kind == "long":
        return np.concatenate([like, like[-1:]])
    if kind == "dtype" and like.dtype.names:  # a record without its last field
        from numpy.lib import recfunctions

        return recfunctions.repack_fields(like[list(like.dtype.names[:-1])])
    if kind == "dtype":
        return like.astype(data.draw(st.sampled_from([np.float32, np.int32, object, np.uint8])))
    if kind == "ndim":
        return like.reshape(-1) if like.ndim > 1 else like[:, None]
    if kind == "empty":
        return like[:0]
    if like.dtype.names:
        return _mutate_nodes(data, like) if len(like) else like
    out = like.copy()
    if out.size:
        flat = out.reshape(-1)
        i = data.draw(st.integers(0, flat.size - 1))
        if out.dtype.kind in "iu":
            info = np.iinfo(out.dtype)
            flat[i] = min(max(data.draw(_int_junk), info.min), info.max)
        else:
            flat[i] = data.draw(_float_junk)
    return out


def _mutate_nodes(data, nodes: np.ndarray) -> np.ndarray:
    """Change fields of a few nodes of a structured node array (sklearn or HGB)."""
    nodes = nodes.copy()
    for _ in range(data.draw(st.integers(1, 3))):
        field = data.draw(st.sampled_from(nodes.dtype.names))
        i = data.draw(st.integers(0, len(nodes) - 1))
        kind = nodes.dtype[field].kind
        v = data.draw(_int_junk if kind in "iu" else _float_junk)
        if kind in "iu":
            info = np.iinfo(nodes.dtype[field])
            v = int(min(max(v, info.min), info.max))
        nodes[field][i] = v
    return nodes


def _mutate_tree_state(data, holder) -> None:
    cls, args, state = holder.tree_.__reduce__()
    args, state = list(args), dict(state)
    kind = data.draw(st.sampled_from(["nodes", "nodes", "values", "arrays", "count", "args"]))
    if kind == "nodes":
        state["nodes"] = _mutate_nodes(data, state["nodes"])
    elif kind == "values":
        state["values"] = _junk_array(data, state["values"])
    elif kind == "arrays":
        key = data.draw(st.sampled_from(["nodes", "values"]))
        state[key] = _junk_array(data, state[key])
    elif kind == "count":
        key = data.draw(st.sampled_from(["node_count", "max_depth"]))
        state[key] = data.draw(_int_junk)
    else:
        i = data.draw(st.integers(0, 2))
        args[i] = (
            np.asarray([data.draw(st.integers(0, 5))], dtype=np.intp)
            if i == 1
            else data.draw(st.integers(0, 5))
        )
    holder.tree_ = _Reduced(cls, tuple(args), state)


def _mutate_hgb(data, est) -> None:
    it = data.draw(st.integers(0, len(est._predictors) - 1))
    k = data.draw(st.integers(0, len(est._predictors[it]) - 1))
    pred = est._predictors[it][k]
    kind = data.draw(st.sampled_from(["nodes", "nodes", "array", "bitsets", "baseline"]))
    if kind == "nodes":
        pred.nodes = _mutate_nodes(data, pred.nodes)
    elif kind == "array":
        pred.nodes = _junk_array(data, pred.nodes)
    elif kind == "bitsets":
        pred.raw_left_cat_bitsets = _junk_array(data, np.asarray(pred.raw_left_cat_bitsets))
    else:
        est._baseline_prediction = _junk_array(data, np.asarray(est._baseline_prediction))


_attr_junk = st.one_of(
    st.sampled_from([None, 0, -1, 2, 10**6, 0.5, float("nan"), "x", "zero", True, (), {}, []]),
    st.sampled_from(
        [np.zeros(0), np.array([[1, 2], [3, 4]]), np.array(["a", "b"]), np.array([0, 1, 2, 3])]
    ),
)


def _mutate_attribute(data, est) -> None:
    targets = [est] + _tree_holders(est)[:1]
    obj = data.draw(st.sampled_from(targets))
    name = data.draw(st.sampled_from(sorted(vars(obj))))
    if data.draw(st.booleans()):
        delattr(obj, name)
    else:
        setattr(obj, name, data.draw(_attr_junk))


def _swap_class(data, est, sk_models):
    """The attributes of ``est`` in an estimator of another supported class."""
    cls = type(data.draw(st.sampled_from(sorted(sk_models.values(), key=repr))))
    other = cls.__new__(cls)
    other.__dict__.update(vars(est))
    return other


@fuzz_settings(100)
@given(data=st.data())
def test_fuzzed_sklearn_pickle_loads_or_raises_an_input_error(tmp_path, sk_models, data):
    name = data.draw(st.sampled_from(sorted(sk_models)))
    est = copy.deepcopy(sk_models[name])
    kind = data.draw(st.sampled_from(["tree", "tree", "attribute", "class"]))
    if kind == "tree" and name.startswith("hgb"):
        _mutate_hgb(data, est)
    elif kind == "tree":
        holder = data.draw(st.sampled_from(_tree_holders(est)))
        _mutate_tree_state(data, holder)
    elif kind == "attribute":
        _mutate_attribute(data, est)
    else:
        est = _swap_class(data, est, sk_models)
    event(f"{kind} mutation")
    path = _fresh(tmp_path, data.draw(st.sampled_from([".pkl", ".joblib", ".pickle"])))
    path.write_bytes(pickle.dumps(est, protocol=data.draw(st.integers(2, 5))))
    ens = loads_or_input_error(path, trust_pickle=True)
    if ens is not None:  # scikit-learn predicts with the model treesens read
        X = np.random.default_rng(5).normal(size=(40, ens.n_features))
        X[:, 2] = np.arange(40) % 4  # the HistGradientBoosting category codes
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert np.allclose(ens.raw(X), ens.replayer.predict_raw(X), atol=1e-6)


@fuzz_settings(150)
@given(data=st.data())
def test_truncated_sklearn_pickle_loads_or_raises_an_input_error(tmp_path, sk_models, data):
    """Truncated only: other byte damage makes pickle run other code (pickles are code,
    the README says to load only trusted ones) and can crash numpy or joblib themselves."""
    import joblib

    est = sk_models[data.draw(st.sampled_from(sorted(sk_models)))]
    src = _fresh(tmp_path, ".joblib")
    if data.draw(st.booleans()):
        joblib.dump(est, src)
        blob = src.read_bytes()
    else:
        blob = pickle.dumps(est)
    path = _fresh(tmp_path, data.draw(st.sampled_from([".pkl", ".joblib"])))
    path.write_bytes(blob[: data.draw(st.integers(0, len(blob) - 1))])
    loads_or_input_error(path, trust_pickle=True)


def test_files_holding_other_objects_raise_an_input_error(tmp_path, sk_others):
    for i, obj in enumerate(sk_others):
        path = tmp_path / f"other{i}.joblib"
        path.write_bytes(pickle.dumps(obj))
        with pytest.raises(InputError, match=str(path)):
            treesens.load_model(path, trust_pickle=True)


# ---------------------------------------------------------------------------------------
# details and data CSV files


@pytest.fixture(scope="module")
def small_ens():
    """A 3-feature XGBoost ensemble with generic names f0, f1, f2."""
    xgb = pytest.importorskip("xgboost")
    rng = np.random.default_rng(0)
    X = rng.random((80, 3))
    y = (X[:, 0] + X[:, 1] > 1).astype(int)
    params = {"max_depth": 2, "nthread": 1, "objective": "binary:logistic"}
    b = xgb.train(params, xgb.DMatrix(X, label=y), num_boost_round=2)
    ens = treesens.load_model(b)
    assert ens.feature_names == ["f0", "f1", "f2"]
    return Fixture([ens])


DETAILS = """feature,name,lb,ub,kind,missing
0,age,18,100,integer,false
1,income,-1e3,1e6,real,true
2,colour,0,2,categorical,no
"""
DATA = """f0,f1,f2,label
0.5,1.25,a,1
0.25,,c,0
1,3.5,b,1
"""
DATA_BY_ORDER = """a,b,c,label
0.5,1.25,2,1
0.25,7,0,0
"""
_cell = st.one_of(
    st.sampled_from(
        [
            "",
            " ",
            "nan",
            "NaN",
            "inf",
            "-inf",
            "1e400",
            "-1",
            "3",
            "0",
            "99999999999999999999",
            "1" * 400,
            "abc",
            '"',
            '""',
            '"a,b"',
            "true",
            "True",
            "yes",
            "\x00",
            "é",
            "1_000",
            "0x10",
            " 1 ",
            "-0",
            "None",
            "NA",
            "null",
            "label",
            "f0",
            "f1 ",
            " f2",
            "binary",
            "categorical",
            "feature",
            "name",
            "lb",
            "ub",
            "kind",
            "missing",
            "a",
            "b",
        ]
    ),
    st.text(max_size=5),
    st.floats().map(repr),
)


_COLUMN_VALUES = {  # plausible values of each column, wrong in some rows
    "feature": ["0", "1", "2", "3", "-1", "1.0", "01", " 2"],
    "name": ["age", "income", "colour", "f0", "f1", "f2", "label", "a b", ""],
    "lb": ["0", "1", "2", "18", "-1e3", "inf", "-inf", "nan", "", "1e400"],
    "ub": ["0", "1", "2", "100", "1e6", "inf", "-inf", "nan", "", "0.5"],
    "kind": ["real", "integer", "binary", "categorical", "Binary", "bool", ""],
    "missing": ["true", "false", "yes", "no", "1", "0", "maybe", ""],
    "f0": ["0", "0.5", "", "nan", "inf", "a", "1e400", "True"],
    "f1": ["0", "1.25", "", "nan", "-inf", "b", "NA"],
    "f2": ["a", "b", "c", "d", "0", "2", "2.5", "-1", "", "nan"],
    "label": ["0", "1", "", "x"],
}


def _mutate_csv(data, text: str) -> bytes:
    lines = text.splitlines()
    header = lines[0].split(",")
    for _ in range(data.draw(st.integers(1, 4))):
        kind = data.draw(
            st.sampled_from(["cell", "cell", "cell", "drop_col", "add_col", "line", "bytes"])
        )
        i = data.draw(st.integers(0, len(lines) - 1)) if lines else 0
        if kind == "bytes":
            return _bytes_mutation(data, ("\n".join(lines) + "\n").encode())
        if not lines:
            lines = [""]
        cells = lines[i].split(",")
        j = data.draw(st.integers(0, len(cells) - 1))
        if kind == "cell":
            column = header[j] if i > 0 and j < len(header) else None
            pool = _COLUMN_VALUES.get(column)
            cells[j] = data.draw(
                st.sampled_from(pool) if pool and data.draw(st.booleans()) else _cell
            )
        elif kind == "drop_col":
            del cells[j]
        elif kind == "add_col":
            cells.insert(j, data.draw(_cell))
        else:
            op = data.draw(st.sampled_from(["delete", "dup", "swap", "blank"]))
            k = data.draw(st.integers(0, len(lines) - 1))
            if op == "delete":
                del lines[i]
                continue
            if op == "dup":
                lines.insert(k, lines[i])
            elif op == "swap":
                lines[i], lines[k] = lines[k], lines[i]
            else:
                lines.insert(k, data.draw(st.sampled_from(["", ",", ",,,", "   "])))
            continue
        lines[i] = ",".join(cells)
    return ("\n".join(lines) + data.draw(st.sampled_from(["\n", "", "\r\n"]))).encode(
        "utf-8", "surrogatepass"
    )


@fuzz_settings(300)
@given(data=st.data())
def test_fuzzed_details_csv_applies_or_raises_an_input_error(tmp_path, small_ens, data):
    path = _fresh(tmp_path, ".csv")
    path.write_bytes(_mutate_csv(data, DETAILS))
    try:
        ens = apply_details(small_ens[0], path)
    except InputError as e:
        event("InputError")
        assert "\n" not in str(e).strip()
        return
    event("applied")
    for f in ens.features:
        assert f.lb <= f.ub


@fuzz_settings(250)
@given(data=st.data())
def test_fuzzed_data_csv_loads_or_raises_an_input_error(tmp_path, small_ens, data):
    ens = small_ens[0]
    if data.draw(st.booleans()):
        ens = declare(ens, missing=["f1"], categories={"f2": ["a", "b", "c"]})
    path = _fresh(tmp_path, data.draw(st.sampled_from([".csv", ".csv", ".txt", ".parquet"])))
    path.write_bytes(_mutate_csv(data, data.draw(st.sampled_from([DATA, DATA_BY_ORDER]))))
    label = data.draw(st.sampled_from(["label", "label", None, "f0", "nope"]))
    try:
        named = apply_data_names(ens, path, label)
        ds = load_data(path, named, label)
    except InputError as e:
        event("InputError")
        assert "\n" not in str(e).strip()
        return
    event("loaded")
    assert ds.X.shape == (ds.n_rows, ens.n_features)
    assert not np.isinf(ds.X).any()
    with warnings.catch_warnings():  # numpy warns about columns that are all NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        ds.prefer()
        ds.ranges()


# ---------------------------------------------------------------------------------------
# regression tests: the minimal inputs the fuzzers found


def _write(tmp_path, name: str, content) -> object:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


def _edit(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def test_lightgbm_text_with_stale_tree_sizes_loads(tmp_path, lgb_texts):
    # was: LightGBM parsed the trees in parallel at the stale offsets and aborted the process
    text = lgb_texts[1]
    line = next(ln for ln in text.splitlines() if ln.startswith("leaf_value="))
    path = _write(tmp_path, "m.txt", _edit(text, line, line + "000"))  # same numbers, longer
    ens = treesens.load_model(path, format="lightgbm")
    X = _lgb_probe_rows()
    assert np.allclose(ens.raw(X), ens.replayer.predict_raw(X), atol=1e-6, equal_nan=True)


def test_lightgbm_parameter_line_without_colon_loads(tmp_path, lgb_texts):
    # was: LightGBM's reader of the training parameters read past a list on it (it crashed
    # now and then); LightGBM is no longer given what follows the trees
    from treesens.readers.formats.lightgbm import _for_lightgbm

    text = _edit(lgb_texts[1], "parameters:\n", "parameters:\nnan\n")
    given_to_lightgbm = _for_lightgbm(text)
    assert "nan\n" not in given_to_lightgbm and "tree_sizes=" not in given_to_lightgbm
    ens = treesens.load_model(_write(tmp_path, "m.txt", text), format="lightgbm")
    ens.replayer.predict_raw(_lgb_probe_rows())


def test_lightgbm_empty_num_tree_per_iteration_is_an_input_error(tmp_path, lgb_texts):
    # was: LightGBM read it as 0 and divided by it (SIGFPE)
    text = _edit(lgb_texts[0], "num_tree_per_iteration=1", "num_tree_per_iteration=")
    with pytest.raises(InputError, match="num_tree_per_iteration="):
        treesens.load_model(_write(tmp_path, "m.txt", text), format="lightgbm")


def test_lightgbm_num_class_below_trees_per_iteration_is_an_input_error(tmp_path, lgb_texts):
    # was: LightGBM's predict wrote 3 scores into a row of 1 (heap corruption)
    text = _edit(lgb_texts[1], "num_class=3\n", "num_class=1\n")
    with pytest.raises(InputError, match="num_class=1 but num_tree_per_iteration=3"):
        treesens.load_model(_write(tmp_path, "m.txt", text), format="lightgbm")


def test_cli_reports_a_malformed_model_in_one_line_with_exit_code_2(tmp_path, lgb_texts):
    from treesens.tests.conftest import treesens_here

    text = _edit(lgb_texts[1], "num_class=3\n", "num_class=1\n")
    path = _write(tmp_path, "m.txt", text)
    r = treesens_here("check", path, "--format", "lightgbm", "--vary", "Column_0")
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0 and str(path) in r.stderr, r.stderr


def test_lightgbm_child_index_in_other_digits_is_an_input_error(tmp_path, lgb_texts):
    # was: Python read '\u0662' as 2, LightGBM as 0 (the root): its predict looped forever
    line = next(ln for ln in lgb_texts[0].splitlines() if ln.startswith("left_child="))
    text = _edit(lgb_texts[0], line, "left_child=\u0662" + line[len("left_child=") + 1 :])
    with pytest.raises(InputError, match="not a whole number"):
        treesens.load_model(_write(tmp_path, "m.txt", text), format="lightgbm")


def test_lightgbm_repeated_feature_names_are_an_input_error(tmp_path, lgb_texts):
    # was: ValueError from the Ensemble
    text = _edit(lgb_texts[0], "feature_names=Column_0 Column_1 Column_2", "feature_names=a a a")
    with pytest.raises(InputError, match="duplicate feature names: a"):
        treesens.load_model(_write(tmp_path, "m.txt", text), format="lightgbm")


def test_lightgbm_sigmoid_that_is_no_number_is_an_input_error(tmp_path, lgb_texts):
    # was: ValueError from float()
    text = _edit(lgb_texts[0], "objective=binary sigmoid:1", "objective=binary sigmoid:abc")
    with pytest.raises(InputError, match="sigmoid must be a positive number"):
        treesens.load_model(_write(tmp_path, "m.txt", text), format="lightgbm")


def test_lightgbm_tree_without_its_header_line_is_an_input_error(tmp_path, lgb_texts):
    # was: treesens read tree 1 into tree 0, LightGBM kept tree 0: different models
    text = _edit(lgb_texts[0], "Tree=1\n", "")
    with pytest.raises(InputError, match="after the end of tree 0"):
        treesens.load_model(_write(tmp_path, "m.txt", text), format="lightgbm")


def test_lightgbm_trees_that_are_not_whole_iterations_are_an_input_error(tmp_path, lgb_texts):
    # was: treesens summed 5 trees; LightGBM predicts with whole iterations (3 of them).
    # Without its tree_sizes line, which a tree removed by hand leaves stale (refused first)
    text = re.sub(r"tree_sizes=[^\n]*\n", "", _edit(lgb_texts[1], "Tree=0\n", ""))
    with pytest.raises(InputError, match="5 trees are not whole iterations of 3 trees"):
        treesens.load_model(_write(tmp_path, "m.txt", text), format="lightgbm")


def test_lightgbm_text_cut_inside_a_tree_is_an_input_error(tmp_path, lgb_texts):
    # LightGBM's tree reader would look for the '=' past the end of the text
    text = lgb_texts[0][: lgb_texts[0].index("leaf_value=") + len("leaf_val")]
    with pytest.raises(InputError, match="expected key=value in tree 0"):
        treesens.load_model(_write(tmp_path, "m.txt", text), format="lightgbm")


def test_lightgbm_text_with_a_nul_byte_is_an_input_error(tmp_path, lgb_texts):
    text = _edit(lgb_texts[0], "leaf_value=", "leaf_value=\x00")
    with pytest.raises(InputError, match="NUL byte"):
        treesens.load_model(_write(tmp_path, "m.txt", text), format="lightgbm")


def test_lightgbm_dump_with_feature_infos_of_the_wrong_type_is_an_input_error(tmp_path, lgb_dumps):
    # was: AttributeError
    m = copy.deepcopy(lgb_dumps[0])
    m["feature_infos"]["Column_0"] = True
    with pytest.raises(InputError, match="not a LightGBM dump_model"):
        treesens.load_model(_write(tmp_path, "m.json", json.dumps(m)), format="lightgbm")


def test_lightgbm_dump_with_a_negative_category_is_an_input_error(tmp_path, lgb_dumps):
    # was: -1 set bit 31 of the bitset, a category the dump does not list
    m = copy.deepcopy(lgb_dumps[0])
    node = m["tree_info"][0]["tree_structure"]
    assert node["decision_type"] == "=="
    node["threshold"] = "-1||3"
    with pytest.raises(InputError, match="category code out of range"):
        treesens.load_model(_write(tmp_path, "m.json", json.dumps(m)), format="lightgbm")


def _xgb_tree(model: dict, i: int = 0) -> dict:
    return model["learner"]["gradient_booster"]["model"]["trees"][i]


def _xgb_load(tmp_path, model: dict, suffix: str = ".json"):
    blob = json.dumps(model) if suffix == ".json" else ubj(model)
    return treesens.load_model(_write(tmp_path, "m" + suffix, blob))


@pytest.mark.parametrize("suffix", [".json", ".ubj"])
def test_xgboost_parent_that_is_no_node_is_an_input_error(tmp_path, xgb_models, suffix):
    # was: xgboost crashed loading it (to replay a witness, or at once for UBJ)
    m = copy.deepcopy(xgb_models[1][0])
    _xgb_tree(m, 1)["parents"][2] = -1
    with pytest.raises(InputError, match="parent index out of range"):
        _xgb_load(tmp_path, m, suffix)


def test_xgboost_huge_num_feature_is_an_input_error(tmp_path, xgb_models):
    # was: treesens named 2^31 features f0, f1, ... until the machine ran out of memory
    m = copy.deepcopy(xgb_models[1][0])
    m["learner"]["learner_model_param"]["num_feature"] = str(2**31)
    with pytest.raises(InputError, match="num_feature=2147483648: treesens reads at most"):
        _xgb_load(tmp_path, m)


def test_xgboost_huge_num_class_is_an_input_error(tmp_path, xgb_models):
    # was: a list of 2^31 intercepts
    m = copy.deepcopy(xgb_models[1][0])
    m["learner"]["learner_model_param"]["num_class"] = str(2**31)
    with pytest.raises(InputError, match="num_class=2147483648 but the model has 6 trees"):
        _xgb_load(tmp_path, m)


def test_xgboost_dump_splitting_on_a_huge_feature_index_is_an_input_error(tmp_path):
    dump = [
        {
            "nodeid": 0,
            "split": "f2147483647",
            "split_condition": 0.5,
            "yes": 1,
            "no": 2,
            "missing": 1,
            "children": [{"nodeid": 1, "leaf": 0.1}, {"nodeid": 2, "leaf": -0.1}],
        }
    ]
    with pytest.raises(InputError, match="splits on feature 2147483647"):
        treesens.load_model(_write(tmp_path, "d.json", json.dumps(dump)))


def test_lightgbm_huge_max_feature_idx_is_an_input_error(tmp_path, lgb_texts):
    text = _edit(lgb_texts[0], "max_feature_idx=2", "max_feature_idx=2147483646")
    text = _edit(text, "feature_names=Column_0 Column_1 Column_2\n", "")
    with pytest.raises(InputError, match="max_feature_idx=2147483646: treesens reads at most"):
        treesens.load_model(_write(tmp_path, "m.txt", text), format="lightgbm")


def test_pickled_estimator_with_huge_n_features_in_is_an_input_error(tmp_path, sk_models):
    est = copy.deepcopy(sk_models["tree"])
    est.n_features_in_ = 2**31
    with pytest.raises(InputError, match="n_features_in_=2147483648"):
        treesens.load_model(_write(tmp_path, "m.pkl", pickle.dumps(est)), trust_pickle=True)


def test_xgboost_tree_id_out_of_place_is_an_input_error(tmp_path, xgb_models):
    # was: xgboost left a gap in its tree list and crashed predicting
    m = copy.deepcopy(xgb_models[1][0])
    _xgb_tree(m, 2)["id"] = 1
    with pytest.raises(InputError, match="tree 2 is malformed: its id is 1"):
        _xgb_load(tmp_path, m, ".ubj")


def test_xgboost_binary_tree_adding_to_class_1_is_an_input_error(tmp_path, xgb_models):
    # was: xgboost's predict wrote past its output row (abort)
    m = copy.deepcopy(xgb_models[0][0])
    m["learner"]["gradient_booster"]["model"]["tree_info"][1] = 1
    with pytest.raises(InputError, match="it adds to class 1"):
        _xgb_load(tmp_path, m, ".ubj")


def test_xgboost_categorical_split_without_categories_is_an_input_error(tmp_path, xgb_models):
    # was: xgboost's predict aborted
    m = copy.deepcopy(xgb_models[0][0])
    tree = next(
        t for t in m["learner"]["gradient_booster"]["model"]["trees"] if 0 in t["split_type"][:1]
    )
    tree["split_type"][0] = 1
    with pytest.raises(InputError, match="split node 0 lists no categories"):
        _xgb_load(tmp_path, m, ".ubj")


def test_xgboost_category_segment_past_the_list_is_an_input_error(tmp_path, xgb_models):
    # was: xgboost read past the category list (crash)
    m = copy.deepcopy(xgb_models[0][0])
    tree = _xgb_tree(m, 0)
    tree["categories"] = tree["categories"][:-1]
    with pytest.raises(InputError, match="categorical split arrays out of range"):
        _xgb_load(tmp_path, m, ".ubj")


def test_xgboost_iteration_indptr_past_the_trees_is_an_input_error(tmp_path, xgb_models):
    # was: xgboost's predict read past its tree list (crash)
    m = copy.deepcopy(xgb_models[1][0])
    m["learner"]["gradient_booster"]["model"]["iteration_indptr"][0] = 2**63 - 1
    with pytest.raises(InputError, match="iteration_indptr"):
        _xgb_load(tmp_path, m, ".ubj")


def test_xgboost_unknown_feature_type_is_an_input_error(tmp_path, xgb_models):
    # was: XGBoostError from xgboost's DMatrix when replaying a witness
    m = copy.deepcopy(xgb_models[1][0])
    m["learner"]["feature_types"] = ["", "float", "float"]
    m["learner"]["feature_names"] = ["a", "b", "c"]
    with pytest.raises(InputError, match="unknown feature type ''"):
        _xgb_load(tmp_path, m, ".ubj")


def test_xgboost_feature_name_xgboost_refuses_is_an_input_error(tmp_path, xgb_models):
    # was: ValueError from xgboost's DMatrix when replaying a witness
    m = copy.deepcopy(xgb_models[0][0])
    m["learner"]["feature_names"][0] = "<="
    with pytest.raises(InputError, match=r"has \[, \] or <"):
        _xgb_load(tmp_path, m, ".ubj")


def test_ubj_tree_array_holding_a_list_is_an_input_error(tmp_path, xgb_models):
    # read and checked by treesens now: xgboost crashed on such UBJ models
    m = copy.deepcopy(xgb_models[1][0])
    _xgb_tree(m, 0)["default_left"][1] = []
    with pytest.raises(InputError, match="tree 0 is malformed"):
        _xgb_load(tmp_path, m, ".ubj")


def test_binary_model_file_of_unknown_bytes_is_an_input_error(tmp_path, xgb_models):
    # was: UnicodeDecodeError inside xgboost's error message
    path = _write(tmp_path, "m.ubj", b"\x80" + xgb_models[0][1])
    with pytest.raises(InputError, match="xgboost cannot load this model"):
        treesens.load_model(path)


def test_xgboost_s_refusal_is_said_without_its_clock_time_and_source_line(tmp_path):
    path = _write(tmp_path, "m.ubj", b"cos\nsystem\n")  # no JSON, UBJ or binary model
    with pytest.raises(InputError) as e:
        treesens.load_model(path)
    assert "xgboost cannot load this model: Unknown construct" in e.value.message
    assert ".cc:" not in e.value.message and not re.search(r"\[\d\d:\d\d", e.value.message)


def _tree_state(est, **fields):
    """``est`` with ``tree_`` holding node fields changed: {field: {node: value}}."""
    est = copy.deepcopy(est)
    cls, args, state = est.tree_.__reduce__()
    state = dict(state)
    nodes = state["nodes"].copy()
    for field, changes in fields.items():
        for i, v in changes.items():
            nodes[field][i] = v
    state["nodes"] = nodes
    est.tree_ = _Reduced(cls, args, state)
    return est


def test_pickled_tree_whose_split_node_points_nowhere_is_an_input_error(tmp_path, sk_models):
    # was: treesens read the node as a leaf; scikit-learn followed it and crashed
    tree = sk_models["tree"]
    leaf = int(np.flatnonzero(tree.tree_.children_left == -1)[0])
    est = _tree_state(tree, left_child={leaf: 2**31 - 1})
    path = _write(tmp_path, "m.pkl", pickle.dumps(est))
    with pytest.raises(InputError, match=f"split node {leaf} has child 2147483647"):
        treesens.load_model(path, trust_pickle=True)


def test_pickled_estimator_without_an_attribute_predict_needs_is_an_input_error(
    tmp_path, sk_models
):
    # was: AttributeError from scikit-learn's predict when replaying a witness
    est = copy.deepcopy(sk_models["extra"])
    del est.estimators_[0].n_classes_
    path = _write(tmp_path, "m.pkl", pickle.dumps(est))
    with pytest.raises(InputError, match="scikit-learn cannot predict"):
        treesens.load_model(path, trust_pickle=True)


def test_pickled_tree_with_leaf_fractions_not_summing_to_1_is_an_input_error(tmp_path, sk_models):
    # was: treesens divided by the sum, scikit-learn does not: different models
    est = copy.deepcopy(sk_models["tree"])
    cls, args, state = est.tree_.__reduce__()
    state = dict(state)
    state["values"] = state["values"].copy()
    state["values"][-1, 0, :] = [1.0, -2.0]
    est.tree_ = _Reduced(cls, args, state)
    path = _write(tmp_path, "m.pkl", pickle.dumps(est))
    with pytest.raises(InputError, match="not probabilities summing to 1"):
        treesens.load_model(path, trust_pickle=True)


def test_pickled_forest_without_trees_is_an_input_error(tmp_path, sk_models):
    # was: ZeroDivisionError (the mean over no trees)
    est = copy.deepcopy(sk_models["extra"])
    est.estimators_ = []
    with pytest.raises(InputError, match="the ExtraTreesClassifier has no trees"):
        treesens.load_model(_write(tmp_path, "m.pkl", pickle.dumps(est)), trust_pickle=True)


def test_pickled_gradient_boosting_with_nan_learning_rate_is_an_input_error(tmp_path, sk_models):
    est = copy.deepcopy(sk_models["gb"])
    est.learning_rate = float("nan")
    path = _write(tmp_path, "m.pkl", pickle.dumps(est))
    with pytest.raises(InputError, match="not finite"):
        treesens.load_model(path, trust_pickle=True)


def test_details_binary_feature_with_bounds_above_1_is_an_input_error(tmp_path, small_ens):
    # was: ValueError from Feature
    path = _write(tmp_path, "d.csv", "feature,name,lb,ub,kind\n0,age,18,100,binary\n")
    with pytest.raises(InputError, match=r"d.csv:2: a binary feature takes 0 or 1"):
        apply_details(small_ens[0], path)


def test_data_with_a_400_digit_number_is_an_input_error(tmp_path, small_ens):
    # was: OverflowError converting it to a float
    path = _write(tmp_path, "d.csv", "a,b,c,label\n" + "1" * 400 + ",1,2,1\n0.5,,0,0\n")
    with pytest.raises(InputError, match=r"d\.csv:2: column 'a': infinite value"):
        load_data(path, apply_data_names(small_ens[0], path, "label"), "label")


def test_parquet_without_a_reader_is_a_one_line_input_error(tmp_path, small_ens):
    # was: pandas' message over five lines
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("pyarrow is installed")
    path = _write(tmp_path, "d.parquet", b"PAR1 not really")
    with pytest.raises(InputError) as e:
        load_data(path, small_ens[0], "label")
    assert "pip install pyarrow" in str(e.value) and "\n" not in str(e.value)


def test_details_error_after_a_quoted_multiline_field_names_the_row_s_own_line(tmp_path, small_ens):
    # was: line numbers counted rows, so every row after the two-line name was off by one
    text = 'feature,name,lb,ub\n0,"two\nlines",0,1\n1,b,0,1\n2,c,5,1\n'
    path = _write(tmp_path, "d.csv", text)
    with pytest.raises(InputError, match=r"d.csv:5: lower bound 5 is above upper bound 1"):
        apply_details(small_ens[0], path)


# ---------------------------------------------------------------------------------------
# non-finite numbers and depth bombs

_NON_FINITE = [float("nan"), float("inf"), -float("inf"), 1e308, -1e308, 3.5e38, 1e31, -1e31]


def _is_number(v) -> bool:
    """A JSON number, or a number written as a string (XGBoost's "5E-1")."""
    if isinstance(v, str):
        return re.fullmatch(r"[-+]?[0-9.]+(E[-+]?[0-9]+)?", v, re.I) is not None
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _number_slots(x) -> list[tuple]:
    """(container, key) of every number of a JSON document (every list item, not three)."""
    out, stack = [], [x]
    while stack:
        c = stack.pop()
        items = c.items() if isinstance(c, dict) else enumerate(c) if isinstance(c, list) else ()
        for k, v in items:
            if _is_number(v):
                out.append((c, k))
            elif isinstance(v, (dict, list)):
                stack.append(v)
    return out


def _with_non_finite(data, model):
    m = copy.deepcopy(model)
    slots = _number_slots(m)
    for _ in range(data.draw(st.integers(1, 3))):
        c, k = data.draw(st.sampled_from(slots))
        v = data.draw(st.sampled_from(_NON_FINITE))
        c[k] = str(v) if isinstance(c[k], str) else v
    return m


def loads_finite_or_input_error(path, **kw) -> None:
    """A model with non-finite numbers loads to finite outputs, silently, or is one
    InputError line."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        try:
            ens = treesens.load_model(path, **kw)
        except InputError as e:
            assert str(e).strip() and "\n" not in str(e).strip(), f"not one line: {e}"
            event("InputError")
            return
        event("loaded")
        X = _rows(ens.n_features)
        assert np.isfinite(ens.raw(X[~np.isnan(X).any(axis=1)])).all()


@fuzz_settings(150)
@given(data=st.data())
def test_xgboost_json_with_non_finite_numbers_loads_finite_or_raises(tmp_path, xgb_models, data):
    model, _ = data.draw(st.sampled_from(xgb_models))
    path = _fresh(tmp_path, ".json")
    path.write_text(json.dumps(_with_non_finite(data, model)))
    loads_finite_or_input_error(path)


@fuzz_settings(150)
@given(data=st.data())
def test_lightgbm_dump_with_non_finite_numbers_loads_finite_or_raises(tmp_path, lgb_dumps, data):
    path = _fresh(tmp_path, ".json")
    path.write_text(json.dumps(_with_non_finite(data, data.draw(st.sampled_from(lgb_dumps)))))
    loads_finite_or_input_error(path, format="lightgbm")


@pytest.mark.parametrize("fmt", ["auto", "xgboost", "xgboost-dump", "lightgbm"])
@pytest.mark.parametrize("depth", [990, 5_000, 200_000])
@pytest.mark.parametrize("bracket", ["[]", '{"a":}'])
def test_json_depth_bombs_raise_one_input_error(tmp_path, fmt, depth, bracket):
    opens, closes = (bracket[0], bracket[1]) if bracket == "[]" else ('{"a":', "}")
    path = _fresh(tmp_path, ".json")
    path.write_text(opens * depth + ("0" if bracket != "[]" else "") + closes * depth)
    with pytest.raises(InputError) as e:
        treesens.load_model(path, format=fmt)
    assert "\n" not in str(e.value).strip()
