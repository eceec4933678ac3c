"""Soundness under pressure (issue 9, item 3): a differential campaign over hundreds of
small models trained by the real libraries, against a brute-force oracle that asks the
library's own predict.

Every model (``harness.make_model``) is trained on random data with 2-4 features (real,
integer, binary, categorical where the library has categorical splits, NaN where it
accepts missing values), few trees and shallow depth, one family after the other:
XGBoost binary (``binary:logistic``, ``binary:logitraw``, ``reg:logistic``) and
multiclass (``multi:softprob``, ``multi:softmax``), saved as JSON or UBJ; LightGBM
binary and multiclass (gbdt or rf, zero-as-missing, sigmoid), saved as text or
``dump_model()`` JSON; scikit-learn RandomForest, ExtraTrees, GradientBoosting
(log-loss / exponential, init='zero'), HistGradientBoosting and DecisionTree, saved
with joblib. Features get declarations as a user would write them (kinds, bounds,
may-be-missing, category names). Every model is loaded from its file, as the CLI does.

Each query (by default 2 per model) has a gap around the exact best gap the library
allows (exactly it, one ulp either side, 1e-7 either side), a little off it, or a fixed
value, and is run on every installed backend, the pass combination cycling so that each
backend sees all 16 combinations within 16 queries, plus once in the default
configuration (CP-SAT, all passes, heuristic on). A run passes when:

* its status is the oracle's ("insensitive" never when the library's predict meets the
  gap on some pair; no error, no unknown; gurobi may refuse a model over its license's
  size limit, with that message);
* a "sensitive" answer is validated, its pair is admissible, equal outside the varied
  features, and meets the gap when the library's predict is asked again here;
* the IR's evaluation and the library's predict agree on the whole grid.

A failing run is saved as a regression case under ``tests/regressions/cases`` (the model
file and ``case.json``), replayed by ``tests/campaigns/test_regressions.py`` in the normal suite.

    python -m pytest -m slow tests/campaigns/test_differential_campaign.py

Environment: ``TS_CAMPAIGN_SIZE`` (models, default 360), ``TS_CAMPAIGN_SEED`` (0),
``TS_CAMPAIGN_QUERIES`` (per model, 2), ``TS_CAMPAIGN_BACKENDS`` (comma-separated; default:
every installed one), ``TS_CAMPAIGN_SAVE=0`` (do not save cases), ``TS_REGRESSIONS_DIR``
(where cases go), ``TS_CAMPAIGN_REPORT`` (a JSON file for the summary).
"""

from __future__ import annotations

import collections
import json
import os
import time

import pytest

from treesens.backends.registry import BACKENDS, available
from treesens.tests.regressions import harness as H

pytestmark = pytest.mark.slow

SIZE = int(os.environ.get("TS_CAMPAIGN_SIZE", "360"))
SEED = int(os.environ.get("TS_CAMPAIGN_SEED", "0"))
QUERIES = int(os.environ.get("TS_CAMPAIGN_QUERIES", "2"))
SAVE = os.environ.get("TS_CAMPAIGN_SAVE", "1") != "0"
REPORT = os.environ.get("TS_CAMPAIGN_REPORT")


def _backends() -> list[str]:
    env = os.environ.get("TS_CAMPAIGN_BACKENDS")
    names = [b.strip() for b in env.split(",") if b.strip()] if env else list(BACKENDS)
    return [b for b in names if available(b)]


BACKEND_NAMES = _backends()
_META: list[dict] = []
_RECORDS: list[H.RunRecord] = []
_STARTED = time.time()


@pytest.mark.parametrize(
    "index", range(SIZE), ids=lambda i: f"{i}-{H.FAMILIES[i % len(H.FAMILIES)]}"
)
def test_campaign_model(index, tmp_path):
    assert BACKEND_NAMES, "no backend installed"
    meta, recs = H.campaign_ensemble(
        index,
        seed=SEED,
        n_queries=QUERIES,
        backends=BACKEND_NAMES,
        workdir=tmp_path,
        save=SAVE,
    )
    _META.append(meta)
    _RECORDS.extend(recs)
    bad = [r for r in recs if r.problems]
    assert not bad, "\n".join(
        f"[{r.family} #{r.index}] {r.query} on {r.backend} (passes {r.passes}, heuristic "
        f"{'on' if r.heuristic else 'off'}): {r.status}, oracle "
        f"{'sensitive' if r.oracle else 'insensitive'}: {'; '.join(r.problems)}"
        + (f" -> saved {r.saved}" if r.saved else "")
        for r in bad
    )


def summary(meta: list[dict], records: list[H.RunRecord]) -> dict:
    queries = [q for m in meta for q in m["queries"]]
    failing = [r for r in records if r.problems]
    by_class = collections.Counter(H._problem_class(p) for r in failing for p in r.problems)
    return {
        "seed": SEED,
        "models": len(meta),
        "families": dict(collections.Counter(m["family"] for m in meta)),
        "queries": len(queries),
        "queries_sensitive": sum(q["oracle"] for q in queries),
        "queries_near_best_gap": sum("fixed" not in q["note"] for q in queries),
        "queries_ir_and_library_verdicts_differ": sum(
            q["oracle"] != q["ir_oracle"] for q in queries
        ),
        "queries_with_missing": sum(any(m["missing"]) for m in meta for _ in m["queries"]),
        "queries_with_categorical": sum(
            "categorical" in m["kinds"] for m in meta for _ in m["queries"]
        ),
        "grid_rows_max": max((q["rows"] for q in queries), default=0),
        "runs": len(records),
        "runs_by_backend": dict(collections.Counter(r.backend for r in records)),
        "pass_sets_by_backend": {
            b: len({r.passes for r in records if r.backend == b and not r.heuristic})
            for b in {r.backend for r in records}
        },
        "statuses": dict(collections.Counter(r.status for r in records)),
        "failing_runs": len(failing),
        "failing_models": len({r.index for r in failing}),
        "problems_by_class": dict(by_class),
        "saved_cases": sorted({r.saved for r in failing if r.saved}),
        "solve_seconds": round(sum(r.seconds for r in records), 1),
        "wall_seconds": round(time.time() - _STARTED, 1),
    }


def test_campaign_summary():
    """Runs last: the campaign's figures (printed; written to TS_CAMPAIGN_REPORT)."""
    if not _META:
        pytest.skip("no campaign model ran in this session")
    s = summary(_META, _RECORDS)
    text = json.dumps(s, indent=2, default=str)
    print(text)
    if REPORT:
        with open(REPORT, "w") as fh:
            fh.write(text + "\n")
            for m in _META:  # one line per model (its queries and the oracle's answers)
                fh.write(json.dumps({"model": m}, default=str) + "\n")
            for r in _RECORDS:  # one line per failing run
                if r.problems:
                    fh.write(json.dumps({"failing_run": r.__dict__}, default=str) + "\n")
    if len(_META) == SIZE and len(H.ALL_PASS_SETS) <= SIZE * QUERIES:
        for b in BACKEND_NAMES:
            assert s["pass_sets_by_backend"].get(b) == len(H.ALL_PASS_SETS), b
