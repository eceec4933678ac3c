"""treesens: is a tree ensemble sensitive to a set of features?

>>> import treesens
>>> model = treesens.load_model("model.json")                    # doctest: +SKIP
>>> treesens.check(model, vary=["sex"], gap=0.2).status          # doctest: +SKIP
'sensitive'
"""

from .compiler.ensemble import Ensemble, Feature, Tree
from .compiler.errors import InputError, TreesensError
from .compiler.query import Gap, Query
from .compiler.result import Result
from .frontends.api import check
from .frontends.load import load_model
from .frontends.sens import run_file
from .frontends.sweep import results_frame, sweep

__version__ = "0.1.0"

__all__ = [
    "Ensemble",
    "Feature",
    "Tree",
    "Gap",
    "Query",
    "Result",
    "InputError",
    "TreesensError",
    "check",
    "load_model",
    "sweep",
    "results_frame",
    "run_file",
    "__version__",
]
