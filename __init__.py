"""treesens: is a tree ensemble sensitive to a set of features?

>>> import treesens
>>> model = treesens.load_model("model.json")                    # doctest: +SKIP
>>> treesens.check(model, vary=["sex"], gap=0.2).status          # doctest: +SKIP
'sensitive'
"""

from __future__ import annotations

# The names below are loaded when first used (PEP 562), so that a command or a program
# that needs one part (``treesens check``, ``from treesens.questions.batch import ...``)
# does not pay for the others' imports (the .sens grammar alone takes about a second).
# Absolute module names: pytest imports this file (the repository root is the package)
# under the checkout directory's name, which need not be "treesens" nor even an identifier.
import importlib
from typing import TYPE_CHECKING, Any

from treesens.answers.result import Drawing, drawn_by

if TYPE_CHECKING:
    from treesens.answers.result import Result
    from treesens.compiler.ensemble import Ensemble, Feature, Tree
    from treesens.compiler.errors import InputError, TreesensError
    from treesens.compiler.query import Gap, Plan, Query, Question
    from treesens.interfaces.api import check, check_many, compare, max_gap, report, sweep
    from treesens.interfaces.expect_api import (
        expect_audit,
        expect_insensitive,
        expect_max_gap,
        expect_sensitive,
    )
    from treesens.interfaces.sens_run import run_file
    from treesens.questions.audit import audit, summary
    from treesens.questions.sweep import results_frame
    from treesens.readers.load import load_model
    from treesens.readers.plugins import load_plugin
    from treesens.views.plot_sweep import plot_sweep
    from treesens.views.plot_witness import plot_witness

_WHERE = {
    "Result": "treesens.answers.result",
    "Ensemble": "treesens.compiler.ensemble",
    "Feature": "treesens.compiler.ensemble",
    "Tree": "treesens.compiler.ensemble",
    "InputError": "treesens.compiler.errors",
    "TreesensError": "treesens.compiler.errors",
    "Gap": "treesens.compiler.query",
    "Plan": "treesens.compiler.query",
    "Query": "treesens.compiler.query",
    "Question": "treesens.compiler.query",
    "check": "treesens.interfaces.api",
    "check_many": "treesens.interfaces.api",
    "compare": "treesens.interfaces.api",
    "max_gap": "treesens.interfaces.api",
    "report": "treesens.interfaces.api",
    "sweep": "treesens.interfaces.api",
    "expect_audit": "treesens.interfaces.expect_api",
    "expect_insensitive": "treesens.interfaces.expect_api",
    "expect_max_gap": "treesens.interfaces.expect_api",
    "expect_sensitive": "treesens.interfaces.expect_api",
    "run_file": "treesens.interfaces.sens_run",
    "audit": "treesens.questions.audit",
    "summary": "treesens.questions.audit",
    "results_frame": "treesens.questions.sweep",
    "load_model": "treesens.readers.load",
    "load_plugin": "treesens.readers.plugins",
    "plot_sweep": "treesens.views.plot_sweep",
    "plot_witness": "treesens.views.plot_witness",
    "result_html": "treesens.views.result_view",
    "result_text": "treesens.views.result_view",
}


# packages a user calls by the name of their command: treesens.verify("c.json")
_PACKAGES = {"verify": "treesens.verify"}


def __getattr__(name: str) -> Any:
    if name in _PACKAGES:
        return importlib.import_module(_PACKAGES[name])  # importing sets it on this package
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE) | set(_PACKAGES))


def _text(result: Result) -> str:
    from treesens.views.result_view import result_text

    return result_text(result)


def _html(result: Result) -> str:
    from treesens.views.result_view import result_html

    return result_html(result)


# how str(result) and Jupyter draw a Result: the views' drawing (imported when first
# drawn), handed down to answers/
drawn_by(Drawing(_text, _html))

__version__ = "0.1.0"

__all__ = [
    "Ensemble",
    "Feature",
    "Tree",
    "Gap",
    "Query",
    "Question",
    "Plan",
    "Result",
    "InputError",
    "TreesensError",
    "check",
    "check_many",
    "compare",
    "max_gap",
    "report",
    "audit",
    "summary",
    "expect_insensitive",
    "expect_sensitive",
    "expect_max_gap",
    "expect_audit",
    "load_model",
    "load_plugin",
    "sweep",
    "results_frame",
    "plot_witness",
    "plot_sweep",
    "run_file",
    "__version__",
]
