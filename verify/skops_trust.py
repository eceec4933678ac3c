"""Which types of a ``.skops`` file the checker lets skops load.

skops builds each object its file's schema (``schema.json``) describes, and loads only
the types the caller trusts. The checker trusts scikit-learn's and NumPy's classes, and
of the functions a file may name, only ``sklearn.utils.validation.check_array``, the one
a fitted HistGradientBoosting with categorical features holds: its ``_preprocessor``
(a ColumnTransformer) passes the numeric columns through a FunctionTransformer whose
``func`` is ``functools.partial(check_array, dtype=[numpy.float64],
ensure_all_finite=False)``. A ``functools.partial`` binds arguments to a function, so
trusting it at large would let a file make any trusted function a call with arguments of
its choice; the checker trusts a partial only when the schema shows exactly that one:
``check_array``, no positional arguments, keywords among ``dtype`` (NumPy float types),
``ensure_all_finite`` / ``force_all_finite`` (true or false), no ``__dict__``. Calling it
only validates and converts an array.

skops reuses the object of an ``__id__`` it has already built wherever that ``__id__``
appears again, whatever the node there states; so every node a vetted partial consists
of must be the same, in content, wherever its ``__id__`` appears in the schema.
"""

from __future__ import annotations

import json
import zipfile
from collections import defaultdict

from .models import ModelError

TRUSTED_PREFIXES = ("sklearn.", "numpy.")
CHECK_ARRAY = "sklearn.utils.validation.check_array"
PARTIAL = "functools.partial"
FLOAT_TYPES = ("float64", "float32")
FLAGS = ("ensure_all_finite", "force_all_finite")


def trusted_types(path: str, untrusted: list[str]) -> list[str]:
    """The types of ``untrusted`` (skops' ``get_untrusted_types`` of the file) the
    checker lets skops load; ModelError naming the first one it does not trust."""
    foreign = [t for t in untrusted if not t.startswith(TRUSTED_PREFIXES) and t != PARTIAL]
    if foreign:
        raise ModelError(f"the file holds types the checker does not trust: {foreign[:3]}")
    nodes = _nodes(path)
    functions = sorted(
        {_name(n) for n in nodes if n.get("__loader__") == "FunctionNode"} - {CHECK_ARRAY}
    )
    if functions:
        raise ModelError(f"the file holds functions the checker does not call: {functions[:3]}")
    partials = [n for n in nodes if n.get("__loader__") == "PartialNode" or _name(n) == PARTIAL]
    if partials:
        by_id = defaultdict(list)
        for n in nodes:
            if "__id__" in n:
                by_id[n["__id__"]].append(n)
        for p in partials:
            _vet_partial(p, by_id)
    return list(untrusted)


def _nodes(path: str) -> list[dict]:
    """Every node of the file's schema (a dict with a ``__loader__``)."""
    try:
        with zipfile.ZipFile(path) as z:
            schema = json.loads(z.read("schema.json"))
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as e:
        raise ModelError(f"not a readable .skops file ({type(e).__name__})") from None
    return _subtree(schema)


def _name(node: dict) -> str:
    return f"{node.get('__module__')}.{node.get('__class__')}"


def _vet_partial(p: dict, by_id: dict) -> None:
    """ModelError unless ``p`` is exactly the partial of check_array described above."""
    why = _partial_refusal(p)
    if why is None:
        for n in _subtree(p):
            if "__id__" in n and any(m != n for m in by_id[n["__id__"]]):
                why = "one of its objects stands for another elsewhere in the file"
                break
    if why is not None:
        raise ModelError(
            f"the file holds a functools.partial the checker does not trust ({why}): it "
            "trusts only functools.partial(check_array, dtype=[float64], "
            "ensure_all_finite=False), as HistGradientBoosting writes it"
        )


def _partial_refusal(p: dict) -> str | None:
    if _name(p) != PARTIAL or p.get("__loader__") != "PartialNode":
        return "not a plain partial"
    content = p.get("content", {})
    if set(content) != {"func", "args", "kwds", "namespace"}:
        return "unexpected parts"
    func, args, kwds, namespace = (content[k] for k in ("func", "args", "kwds", "namespace"))
    if func.get("__loader__") != "FunctionNode" or _name(func) != CHECK_ARRAY:
        return f"its function is {_name(func)}"
    if args.get("__loader__") != "TupleNode" or args.get("content") != []:
        return "it binds positional arguments"
    if not _is_json(namespace, ("null", "{}")):
        return "it has a __dict__"
    if kwds.get("__loader__") != "DictNode":
        return "its keywords are not a dict"
    key_types = kwds.get("key_types", {}).get("content")
    if not isinstance(key_types, list) or any(_name(t) != "builtins.str" for t in key_types):
        return "its keywords are not named by strings"
    keys = kwds.get("content", {})
    if not set(keys) <= {"dtype", *FLAGS}:
        return f"it binds {sorted(set(keys) - {'dtype', *FLAGS})}"
    for key, value in keys.items():
        if key in FLAGS and not _is_json(value, ("true", "false")):
            return f"{key} is not true or false"
        if key == "dtype" and not _float_types(value):
            return "its dtype is not a NumPy float type"
    return None


def _is_json(node: dict, allowed: tuple[str, ...]) -> bool:
    return node.get("__loader__") == "JsonNode" and node.get("content") in allowed


def _float_types(node: dict) -> bool:
    """A NumPy float type, or a list of them."""
    if node.get("__loader__") == "ListNode":
        items = node.get("content")
        return isinstance(items, list) and bool(items) and all(map(_float_type, items))
    return _float_type(node)


def _float_type(node) -> bool:
    return (
        isinstance(node, dict)
        and node.get("__loader__") == "TypeNode"
        and node.get("__module__") == "numpy"
        and node.get("__class__") in FLOAT_TYPES
    )


def _subtree(node) -> list[dict]:
    """Every node (a dict with a ``__loader__``) within ``node``, itself included."""
    out, stack = [], [node]
    while stack:
        o = stack.pop()
        if isinstance(o, dict):
            if "__loader__" in o:
                out.append(o)
            stack.extend(o.values())
        elif isinstance(o, list):
            stack.extend(o)
    return out
