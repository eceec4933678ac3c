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

from .check import CertificateError, ModelUnreadable, Verdict, verify_file

__all__ = ["CertificateError", "ModelUnreadable", "Verdict", "verify_file"]
