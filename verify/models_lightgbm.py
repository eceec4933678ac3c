"""LightGBM's models as the checker reads them (verify/models.py's Model): the model file
through LightGBM's Booster (``dump_model``), each threshold read exactly from the model's
text, and LightGBM's reading of NaN and of values near zero."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np

from .models import Model, ModelError, library_read, nested_tree

LIGHTGBM_REGRESSION = ("regression", "regression_l1", "huber", "fair", "quantile", "mape")
# and those whose prediction is exp(raw score) (log link)
LIGHTGBM_EXP = ("poisson", "gamma", "tweedie")


def lightgbm_booster(path: str):
    """LightGBM's Booster of a model file, given its text without the header's
    ``tree_sizes`` line: LightGBM parses the trees in parallel at the offsets that line
    lists, and aborts the whole process ("terminate called") when an edit to a tree has
    made them wrong; without it, it reads the same trees one after the other."""
    import lightgbm

    def load():
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        first = re.search(r"(?m)^Tree=", text)
        head, trees = (text[: first.start()], text[first.start() :]) if first else (text, "")
        return lightgbm.Booster(model_str=re.sub(r"(?m)^tree_sizes=.*$", "", head) + trees)

    return library_read("lightgbm", load)


def read_lightgbm(path: str) -> Model:
    booster = lightgbm_booster(path)
    doc = booster.dump_model()
    exact = _text_thresholds(booster.model_to_string())
    objective = str(doc.get("objective", ""))
    # cross_entropy predicts P(class 1) = sigmoid(raw), as binary does
    name = objective.split()[0] if objective.split() else ""
    if "sqrt" in objective.split():  # reg_sqrt: the prediction is sign(raw) raw^2
        raise ModelError(f"objective {objective}: a regression on the square root")
    n_class = int(doc.get("num_class", 1))
    trees = [
        nested_tree(t["tree_structure"], lambda node, i=i: _lightgbm_node(node, exact[i]))
        for i, t in enumerate(doc["tree_info"])
    ]
    if doc.get("average_output"):  # random-forest mode: the raw score is the mean over
        # iterations, each of num_tree_per_iteration trees (raw_score divides the sum)
        per_iteration = max(1, int(doc.get("num_tree_per_iteration", n_class)))
        scale = 1.0 / max(1, len(trees) // per_iteration)
        trees = [replace(t, value=[v * scale for v in t.value]) for t in trees]
    names = list(doc["feature_names"])
    if name == "multiclass" and n_class > 1:  # softmax; tree i adds to class i mod K
        trees = [replace(t, output=i % n_class) for i, t in enumerate(trees)]
        return Model(
            trees, 0.0, "<=", names, 1.0, link="softmax", offsets=(0.0,) * n_class, **LIGHTGBM_READS
        )
    if name in LIGHTGBM_REGRESSION and n_class == 1:
        return Model(
            trees, 0.0, "<=", names, 1.0, link="identity", task="regressor", **LIGHTGBM_READS
        )
    if name in LIGHTGBM_EXP and n_class == 1:
        return Model(trees, 0.0, "<=", names, 1.0, link="exp", task="regressor", **LIGHTGBM_READS)
    if name not in ("binary", "cross_entropy", "xentropy") or n_class != 1:
        raise ModelError(
            f"objective {objective}: the checker reads binary, cross_entropy, multiclass "
            f"and regression ({', '.join(LIGHTGBM_REGRESSION + LIGHTGBM_EXP)}) models"
        )
    sigmoid = 1.0
    for part in objective.split():
        if part.startswith("sigmoid:"):
            sigmoid = float(part.split(":", 1)[1])
    return Model(trees, 0.0, "<=", names, sigmoid, **LIGHTGBM_READS)


# LightGBM's predictor reads |x| <= kZeroThreshold (1e-35f, compared as a double) as 0.0
LIGHTGBM_READS = {"zero_band": float(np.float32(1e-35)), "reads_nan": True}


# dump_model() writes a threshold beyond +-1e300 as +-1e300 (LightGBM's AvoidInf): the
# model's text holds it as it is ("inf" in a split of the numbers from NaN, which sends
# every number left)
DUMP_CLAMP = 1e300


def _text_thresholds(text: str) -> list[list[float]]:
    """Per tree of a LightGBM model's text, its nodes' thresholds by split index."""
    out = []
    for block in re.split(r"(?m)^Tree=", text)[1:]:
        line = re.search(r"(?m)^threshold=(.*)$", block)
        out.append([float(v) for v in line.group(1).split()] if line else [])
    return out


def _lightgbm_node(node: dict, exact: list[float]):
    """A node of ``dump_model()``: ``x <= threshold`` goes left; NaN by ``missing_type``
    (None: read as 0.0; Zero: NaN and the zero band to the default side; NaN: NaN to the
    default side); a categorical node (``==``) sends the codes its threshold lists
    (``a||b||c``) left, and NaN, negative and unlisted values right. ``exact``: the
    tree's thresholds in the model's text, for those the dump clamps."""
    if "leaf_value" in node:
        if "leaf_coeff" in node:  # a linear tree's leaf: leaf_const + coefficients x inputs
            raise ModelError("linear trees (linear_tree): the checker reads one value per leaf")
        return float(node["leaf_value"])
    feature = int(node["split_feature"])
    kids = node["left_child"], node["right_child"]
    if node.get("decision_type") == "==":
        codes = frozenset(int(c) for c in str(node["threshold"]).split("||"))
        return feature, 0.0, *kids, (False, "nan", codes)
    if node.get("decision_type") != "<=":
        raise ModelError(f"decision type {node.get('decision_type')!r} is not checked")
    mode = {"None": "none", "Zero": "zero", "NaN": "nan"}.get(str(node.get("missing_type")))
    if mode is None:
        raise ModelError(f"missing type {node.get('missing_type')!r} is not checked")
    side = bool(node.get("default_left", False))
    threshold = float(node["threshold"])
    if abs(threshold) >= DUMP_CLAMP:
        threshold = exact[int(node["split_index"])]
    return feature, threshold, *kids, (side, mode, None)
