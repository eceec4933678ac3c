"""The software that took part in a report, with versions, for its provenance: Python and
treesens, the library that reads and replays the model (a pipeline's: scikit-learn and
its final model's library), the solvers that ran, the compiled box search's numba, and
the data and array libraries. Nothing that did not take part is named."""

from __future__ import annotations

import platform
from dataclasses import dataclass
from importlib import metadata

from .. import __version__
from ..backends.registry import BACKENDS
from ..compiler.ensemble import Ensemble
from ..compiler.usage import Usage

# the packages a replayer's ``library`` reads and replays a model with
REPLAY_PACKAGES: dict[str, tuple[str, ...]] = {
    "xgboost": ("xgboost",),
    "lightgbm": ("lightgbm",),
    "catboost": ("catboost",),
    "onnxruntime": ("onnx", "onnxruntime"),
    "sklearn": ("scikit-learn",),
    "sklearn pipeline": ("scikit-learn",),
}
# a package installed under another distribution name (XGBoost's CPU build), or imported
# under another name than it is installed (z3)
DISTRIBUTIONS: dict[str, tuple[str, ...]] = {
    "xgboost": ("xgboost", "xgboost-cpu"),
    "z3": ("z3-solver",),
}
PYTHON, TREESENS, MODEL, SOLVER, SEARCH, DATA = (
    "python",
    "treesens",
    "model",
    "solver",
    "search",
    "data",
)


@dataclass(frozen=True)
class Library:
    name: str
    version: str
    role: str  # PYTHON, TREESENS, MODEL, SOLVER, SEARCH or DATA
    detail: str = ""  # e.g. the solver's backend, "CP-SAT"


def version_of(package: str) -> str | None:
    """The installed version of ``package`` (None: not installed)."""
    for dist in DISTRIBUTIONS.get(package, (package,)):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None


def model_packages(replayer) -> tuple[str, ...]:
    """The packages that read and replay a model, from its replayer (a pipeline's or a
    one-hot group's replayer wraps the final model's, as ``inner``)."""
    out: list[str] = []
    while replayer is not None:
        out += REPLAY_PACKAGES.get(getattr(replayer, "library", None), ())
        replayer = getattr(replayer, "inner", None)
    return tuple(dict.fromkeys(out))


def software(ens: Ensemble, usage: Usage) -> list[Library]:
    """What took part in answering questions about ``ens`` while ``usage`` watched."""
    out = [
        Library("Python", platform.python_version(), PYTHON),
        Library("treesens", __version__, TREESENS),  # the code that ran, installed or a clone
    ]
    for p in model_packages(ens.replayer):
        out.append(Library(p, version_of(p) or "?", MODEL))
    solvers: dict[str, list[str]] = {}  # package -> the backends that ran on it
    for backend in sorted(usage.solvers):
        info = BACKENDS.get(backend)
        for p in info.requires if info is not None else ():
            solvers.setdefault(p, []).append(info.description or backend)
    for p, used_by in solvers.items():
        out.append(Library(p, version_of(p) or "?", SOLVER, "; ".join(used_by)))
    if usage.compiled_search:
        out.append(Library("numba", version_of("numba") or "?", SEARCH))
    out += [Library(p, version_of(p) or "?", DATA) for p in ("numpy", "pandas")]
    return out
