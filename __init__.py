"""treesens: is a tree ensemble sensitive to a set of features?

>>> import treesens
>>> model = treesens.load_model("model.json")                    # doctest: +SKIP
>>> treesens.check(model, vary=["sex"], gap=0.2).status          # doctest: +SKIP
'sensitive'
"""

# absolute imports: pytest imports this file (the repository root is the package) under the
# checkout directory's name, which need not be "treesens" nor even an identifier
from treesens.answers.result import Drawing, Result, drawn_by
from treesens.compiler.ensemble import Ensemble, Feature, Tree
from treesens.compiler.errors import InputError, TreesensError
from treesens.compiler.query import Gap, Plan, Query, Question
from treesens.interfaces.api import check, compare, max_gap, report, sweep
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
from treesens.views.result_view import result_html, result_text

# how str(result) and Jupyter draw a Result: the views' drawing, handed down to answers/
drawn_by(Drawing(result_text, result_html))

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
