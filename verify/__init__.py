"""``treesens verify``: re-check a certificate of "insensitive" (docs/certificates.md).

This package shares no code with the rest of treesens: it reads the model through its
library's own API (XGBoost's JSON model, LightGBM's ``dump_model``, scikit-learn's trees
from a ``.skops`` file: models_xgboost.py, models_lightgbm.py, models_sklearn.py, each
reading into models.py's Model; HistGradientBoosting, CatBoost's JSON export of a
``.cbm``, ONNX graphs read with ``onnx`` and scikit-learn pipelines, whose stated column
maps it confirms with the pipeline's own transform: models_*.py), recomputes every bound
of the proof from the trees and checks that the proof's boxes cover the pair space.
``tests/package/test_layers.py`` keeps it apart.
"""

import sys
import types
from pathlib import Path

from .check import CertificateError, ModelUnreadable, Verdict, verify_file


class CheckerPackage(types.ModuleType):
    """This package, callable: ``treesens.verify("c.json")``, as a reader of
    ``treesens verify c.json`` writes it, is ``verify_file("c.json")``; the package stays
    one to import from (``from treesens.verify import verify_file``)."""

    def __call__(
        self,
        path: str | Path,
        model_path: str | Path | None = None,
        *,
        model: str | Path | None = None,
    ) -> Verdict:
        return verify_file(path, model_path, model=model)


sys.modules[__name__].__class__ = CheckerPackage

__all__ = ["CertificateError", "ModelUnreadable", "Verdict", "verify_file"]
