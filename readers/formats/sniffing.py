"""How each built-in format recognises a file by its first 4 KiB (``ModelFormat.sniff``),
apart from its reader: telling a file's format loads no reader (registry.py imports a
format's module only when it reads)."""

from __future__ import annotations

from .base import head_text


def looks_like_text_dump(text: str) -> bool:
    """An XGBoost text dump (``booster[0]:`` ...)."""
    return text.lstrip().startswith("booster[")


def xgboost(head: bytes, suffix: str) -> bool:
    """A native XGBoost model: any JSON, or binary content (UBJ, the old format)."""
    text = head_text(head)
    if text is None:
        return suffix != ".txt"
    return text.startswith(("{", "["))


def xgboost_dump(head: bytes, suffix: str) -> bool:
    text = head.decode("utf-8", errors="replace").lstrip()
    return text.startswith("[") or looks_like_text_dump(text)


def lightgbm(head: bytes, suffix: str) -> bool:
    text = head_text(head)
    if text is None:
        return False
    if text.startswith(("tree\n", "tree\r\n")) or "\nversion=v" in text[:200]:
        return True
    return (
        text.startswith("{")
        and ('"tree_info"' in text or text.replace(" ", "").startswith('{"name":"tree"'))
        and '"learner"' not in text
    )


def catboost(head: bytes, suffix: str) -> bool:
    if head.startswith(b"CBM1"):
        return True
    text = head.lstrip()
    # catboost writes its keys in order: ctr_data, features_info, model_info, ...
    return text.startswith(b"{") and any(
        key in text[:400] for key in (b'"features_info"', b'"ctr_data"', b'"oblivious_trees"')
    )


def onnx(head: bytes, suffix: str) -> bool:
    # a ModelProto starts with its ir_version (field 1, a varint) and names its
    # producer (skl2onnx, OnnxMLTools) or the ai.onnx.ml domain near the start
    return head[:1] == b"\x08" and b"onnx" in head[:200].lower()


def sklearn(head: bytes, suffix: str) -> bool:
    return False  # known by its suffix only: a pickle is not read to find out


def looks_like_pickle(head: bytes) -> bool:
    """A pickle of protocol 2 to 5 (how joblib and pickle save models), told by its first
    two bytes only (PROTO and its version): nothing of it is unpickled."""
    return len(head) >= 2 and head[0] == 0x80 and 2 <= head[1] <= 5


def plainly(head: bytes) -> str | None:
    """The built-in format whose model the first 4 KiB plainly hold, whatever the file's
    name (None: no format's marks): what a file given with the wrong ``--format`` is said
    to look like. Stricter than the sniffs above, which take any JSON or binary content
    other formats leave for XGBoost: here XGBoost's native model must name its
    ``learner``."""
    if looks_like_pickle(head) or head.startswith(b"PK\x03\x04"):  # skops writes a zip
        return "sklearn"
    if catboost(head, ""):
        return "catboost"
    if onnx(head, ""):
        return "onnx"
    if lightgbm(head, ""):
        return "lightgbm"
    text = head_text(head)
    if text is not None and (text.startswith("[") or looks_like_text_dump(text)):
        return "xgboost-dump"
    if b"learner" in head:  # JSON's "learner" key, or UBJ's
        return "xgboost"
    return None
