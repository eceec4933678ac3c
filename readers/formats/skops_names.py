"""Which names a ``.skops`` file may hold for treesens to load it.

skops loads only the types its caller trusts (``get_untrusted_types`` lists a file's
others). Loading builds objects without calling them, but answering a question calls the
model's own methods, and a scikit-learn pipeline calls what it holds: a
FunctionTransformer calls its ``func`` with the input and keywords the file chose. So
treesens trusts scikit-learn's, NumPy's and Python's *classes* (their code is the
libraries', and what a file sets is data), NumPy's ufuncs (elementwise arithmetic such
as ``numpy.log1p``), scikit-learn's ``check_array`` (it validates and converts an array,
whatever its keywords; HistGradientBoosting's partial holds it) and the one
``functools.partial`` skops_partial.py vets; never another function a file names, such
as ``builtins.exec`` or ``numpy.save``.
"""

from __future__ import annotations

import builtins
import importlib
import inspect

import numpy as np

PREFIXES = ("sklearn.", "numpy.", "builtins.")
FUNCTIONS = ("sklearn.utils.validation.check_array",)


def untrusted_names(names: list[str]) -> list[str]:
    """The names of ``names`` (skops' untrusted types of a file, the partial aside)
    treesens does not let skops load: outside scikit-learn, NumPy and builtins, or not a
    class nor a NumPy ufunc."""
    return [n for n in names if not _trusted(n)]


def _trusted(name: str) -> bool:
    if name in FUNCTIONS:
        return True
    if not name.startswith(PREFIXES):
        return False
    obj = _resolve(name)
    if obj is None:
        return False
    return inspect.isclass(obj) or isinstance(obj, np.ufunc)


def _resolve(name: str):
    """The object a dotted name of scikit-learn, NumPy or builtins names (None: none);
    imports only modules of those installed packages."""
    module, _, attr = name.rpartition(".")
    if module == "builtins":
        return getattr(builtins, attr, None)
    try:
        return getattr(importlib.import_module(module), attr, None)
    except ImportError:
        return None
