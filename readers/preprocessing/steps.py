"""The scikit-learn preprocessing steps a pipeline may hold, and what each does to the
user's columns: a *numeric* step maps each column through a nondecreasing function
(scalers, the imputer), or marks where it is missing (the imputer's add_indicator
columns: 1.0 where the input is NaN); an *encoder* turns each column into a categorical feature with
the encoder's categories. Every step maps each column on its own, which is what lets the
pipeline fold into the trees (fold.py)."""

from __future__ import annotations

from typing import Any

from ...compiler.errors import UnsupportedModelError

NUMERIC = ("StandardScaler", "MinMaxScaler", "MaxAbsScaler", "RobustScaler", "SimpleImputer")
ENCODERS = ("OneHotEncoder", "OrdinalEncoder")
PASS = ("passthrough", "drop", None)
SUPPORTED_STEPS = (*NUMERIC, *ENCODERS, "ColumnTransformer", "passthrough", "drop")


def step_name(step: Any) -> str:
    return step if isinstance(step, str) or step is None else type(step).__name__


def refuse(step: Any, where: str, why: str = "") -> UnsupportedModelError:
    return UnsupportedModelError(
        f"pipeline step {step_name(step)!r} is not supported{why} "
        f"(supported: {', '.join(SUPPORTED_STEPS)}, and Pipelines of them)",
        where,
    )


def is_identity(step: Any) -> bool:
    """ "passthrough", "drop", None, or a FunctionTransformer without a function (how a
    fitted ColumnTransformer keeps ``remainder="passthrough"``)."""
    if isinstance(step, str) or step is None:
        return step in PASS
    return step_name(step) == "FunctionTransformer" and getattr(step, "func", 0) is None


def branch_steps(trans: Any, where: str) -> list[Any]:
    """The steps of one ColumnTransformer branch (a step or a Pipeline of steps), each
    checked to be supported; "drop" and "passthrough" give no steps."""
    if is_identity(trans):
        return []
    steps = [s for _, s in trans.steps] if type(trans).__name__ == "Pipeline" else [trans]
    for k, s in enumerate(steps):
        name = step_name(s)
        if is_identity(s):
            continue
        if name not in (*NUMERIC, *ENCODERS):
            raise refuse(s, where)
        indicator = next((p for p in steps[:k] if indicates(p)), None)
        if name in ENCODERS and indicator is not None:
            raise refuse(indicator, where, " with add_indicator=True before an encoder")
        if name in ENCODERS and any(step_name(p) not in ("SimpleImputer", None) for p in steps[:k]):
            raise refuse(s, where, " after a step other than SimpleImputer")
        if name == "SimpleImputer" and not imputes_nan(s) and encoder_of(steps) is None:
            raise refuse(s, where, f" with missing_values={s.missing_values!r} on numbers")
        if name == "OneHotEncoder" and _has_infrequent(s):
            raise refuse(s, where, " with infrequent categories (min_frequency, max_categories)")
    return [s for s in steps if not is_identity(s)]


def imputes_nan(step: Any) -> bool:
    """A SimpleImputer fills NaN (its default ``missing_values``). One that fills another
    number maps that number to its fill: a numeric column no longer rises with its input
    (before an encoder, the categories are the encoder's, whatever the imputer filled)."""
    missing = getattr(step, "missing_values", None)
    return isinstance(missing, float) and missing != missing


def indicates(step: Any) -> bool:
    """A SimpleImputer that appends a missing-value indicator column per input it saw
    missing at fit (``indicator_.features_``): 1.0 where the input is NaN. Each depends
    on its input alone, as the imputed column does (pipeline.py probes every numeric
    input at NaN, which the scalers before an imputer pass through, to find it); an
    encoder after it would read the indicators as inputs of its own."""
    return step_name(step) == "SimpleImputer" and bool(getattr(step, "add_indicator", False))


def _has_infrequent(encoder: Any) -> bool:
    found = getattr(encoder, "infrequent_categories_", None)
    return found is not None and any(c is not None for c in found)


def encoder_of(steps: list[Any]) -> Any | None:
    """The encoder among a branch's steps, or None (a numeric branch)."""
    return next((s for s in steps if step_name(s) in ENCODERS), None)
