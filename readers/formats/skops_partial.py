"""The one ``functools.partial`` treesens lets a ``.skops`` file hold.

A fitted HistGradientBoosting with categorical features keeps, in its ``_preprocessor``
(a ColumnTransformer), a FunctionTransformer whose ``func`` is
``functools.partial(sklearn.utils.validation.check_array, dtype=[numpy.float64],
ensure_all_finite=False)``. A partial binds arguments to a function, so trusting the
type at large would let a file turn any trusted function into a call with arguments of
its choice. treesens trusts a file's partials only when its schema (``schema.json``)
shows each to be exactly that one: ``check_array``, no positional arguments, keywords
among ``dtype`` (NumPy float types) and ``ensure_all_finite`` / ``force_all_finite``
(true or false) named by strings, no ``__dict__``; and, as skops reuses the object of an
``__id__`` it has built wherever that ``__id__`` appears again, each node of the partial
the same wherever its ``__id__`` appears. (The certificate checker, verify/skops_trust.py,
makes the same check with code of its own.)
"""

from __future__ import annotations

import json
import zipfile
from collections import defaultdict

PARTIAL = "functools.partial"
CHECK_ARRAY = "sklearn.utils.validation.check_array"
FLAGS = ("ensure_all_finite", "force_all_finite")


def partial_refusal(path: str) -> str | None:
    """Why the file's partials are not all the trusted one (None: they are)."""
    try:
        with zipfile.ZipFile(path) as z:
            schema = json.loads(z.read("schema.json"))
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as e:
        return f"its schema cannot be read ({type(e).__name__})"
    nodes = _within(schema)
    same_id: dict = defaultdict(list)
    for n in nodes:
        if "__id__" in n:
            same_id[n["__id__"]].append(n)
    for p in (n for n in nodes if n.get("__loader__") == "PartialNode" or _name(n) == PARTIAL):
        why = _refusal(p)
        if why is None and any(
            m != n for n in _within(p) if "__id__" in n for m in same_id[n["__id__"]]
        ):
            why = "one of its objects stands for another elsewhere in the file"
        if why is not None:
            return why
    return None


def _name(node: dict) -> str:
    return f"{node.get('__module__')}.{node.get('__class__')}"


def _within(root) -> list[dict]:
    out, stack = [], [root]
    while stack:
        o = stack.pop()
        if isinstance(o, dict):
            if "__loader__" in o:
                out.append(o)
            stack.extend(o.values())
        elif isinstance(o, list):
            stack.extend(o)
    return out


def _refusal(p: dict) -> str | None:
    content = p.get("content", {})
    if p.get("__loader__") != "PartialNode" or set(content) != {
        "func",
        "args",
        "kwds",
        "namespace",
    }:
        return "not a plain partial"
    func, args, kwds, namespace = (content[k] for k in ("func", "args", "kwds", "namespace"))
    if func.get("__loader__") != "FunctionNode" or _name(func) != CHECK_ARRAY:
        return f"a partial of {_name(func)}"
    if args.get("__loader__") != "TupleNode" or args.get("content") != []:
        return "a partial with positional arguments"
    if namespace.get("__loader__") != "JsonNode" or namespace.get("content") not in ("null", "{}"):
        return "a partial with a __dict__"
    key_types = kwds.get("key_types", {}).get("content")
    keys = kwds.get("content")
    if kwds.get("__loader__") != "DictNode" or not isinstance(keys, dict):
        return "a partial whose keywords are not a dict"
    if not isinstance(key_types, list) or any(_name(t) != "builtins.str" for t in key_types):
        return "a partial whose keywords are not named by strings"
    for key, value in keys.items():
        if key in FLAGS:
            if value.get("__loader__") != "JsonNode" or value.get("content") not in (
                "true",
                "false",
            ):
                return f"a partial binding {key} to something else than true or false"
        elif key != "dtype" or not _float_types(value):
            return f"a partial binding {key}"
    return None


def _float_types(node: dict) -> bool:
    items = node.get("content") if node.get("__loader__") == "ListNode" else [node]
    return (
        isinstance(items, list)
        and bool(items)
        and all(
            isinstance(t, dict)
            and t.get("__loader__") == "TypeNode"
            and t.get("__module__") == "numpy"
            and t.get("__class__") in ("float64", "float32")
            for t in items
        )
    )
