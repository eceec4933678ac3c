"""Train the scale tier: the models a team would ship, on the paper's benchmark data.

From each dataset's ``train.csv`` in the shared benchmarks (adult, churn, german credit:
min-max scaled to [0, 1], categorical columns as scaled codes, column ``label`` the class,
as the benchmarks' README describes; used as they are), seven classifiers with fixed seeds:

| key | model | file |
|---|---|---|
| xgb_t1000_d8 | XGBoost, 1,000 trees of depth 8 | native JSON |
| xgb_t2000_d6 | XGBoost, 2,000 trees of depth 6 | native JSON |
| lgbm_t1000_l63 | LightGBM, 1,000 trees of 63 leaves | text model |
| lgbm_t1000_l255 | LightGBM, 1,000 trees of 255 leaves | text model |
| rf_t500 | scikit-learn RandomForest, 500 trees grown to the end | skops |
| hgb | scikit-learn HistGradientBoosting at its defaults | skops |
| cat_i1000 | CatBoost, 1,000 iterations (depth 6, its default) | .cbm |

Everything else is the library's default. The files go to ``OUT/DATASET/DATASET_KEY.EXT``,
with the dataset's ``details.csv`` (names and [0, 1] bounds) copied beside them, which
treesens then reads as it reads the benchmark models' (README, ``--details``)::

    python bench/models/train_scale.py [--datasets adult,churn,german_credit]
        [--models xgb_t1000_d8,...] [--trees N] [--jobs 1] [--out bench/results/scale-models]

``--trees N`` caps every model's trees (iterations) at N, for a quick end-to-end try.
The default output folder is under bench/results/ (git-ignored): models are not committed.
A model already in OUT is kept (``--force`` trains it again). Each model trained adds a
line to ``OUT/trained.jsonl``: its path, training seconds, accuracy on ``test.csv``, size.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent
# as bench/instances.py finds it, without importing treesens
SHARED = Path(os.environ.get("TREESENS_SHARED", BENCH.parent.parent / "shared")) / "benchmarks"

DATASETS = ("adult", "churn", "german_credit")
DEFAULT_OUT = BENCH / "results" / "scale-models"
SEED = 0


@dataclass(frozen=True)
class Spec:
    key: str
    library: str
    trees: int
    ext: str
    what: str


SPECS = {
    s.key: s
    for s in (
        Spec("xgb_t1000_d8", "xgboost", 1000, "json", "XGBoost, 1,000 trees, depth 8"),
        Spec("xgb_t2000_d6", "xgboost", 2000, "json", "XGBoost, 2,000 trees, depth 6"),
        Spec("lgbm_t1000_l63", "lightgbm", 1000, "txt", "LightGBM, 1,000 trees, 63 leaves"),
        Spec("lgbm_t1000_l255", "lightgbm", 1000, "txt", "LightGBM, 1,000 trees, 255 leaves"),
        Spec("rf_t500", "sklearn", 500, "skops", "RandomForest, 500 deep trees"),
        Spec("hgb", "sklearn", 100, "skops", "HistGradientBoosting, defaults"),
        Spec("cat_i1000", "catboost", 1000, "cbm", "CatBoost, 1,000 iterations, depth 6"),
    )
}


def model_path(out: Path, dataset: str, key: str) -> Path:
    return out / dataset / f"{dataset}_{key}.{SPECS[key].ext}"


def load_train(dataset: str):
    import pandas as pd

    df = pd.read_csv(SHARED / dataset / "train.csv")
    return df.drop(columns=["label"]), df["label"].astype(int)


def fit(key: str, X, y, trees: int | None, jobs: int):
    """The fitted estimator of ``key`` (``trees`` caps its trees when given)."""
    n = SPECS[key].trees if trees is None else min(trees, SPECS[key].trees)
    if key.startswith("xgb"):
        import xgboost as xgb

        depth = int(key.rsplit("_d", 1)[1])
        est = xgb.XGBClassifier(n_estimators=n, max_depth=depth, random_state=SEED, n_jobs=jobs)
    elif key.startswith("lgbm"):
        import lightgbm as lgb

        leaves = int(key.rsplit("_l", 1)[1])
        est = lgb.LGBMClassifier(
            n_estimators=n,
            num_leaves=leaves,
            random_state=SEED,
            n_jobs=jobs,
            deterministic=True,
            force_row_wise=True,
            verbose=-1,
        )
    elif key == "rf_t500":
        from sklearn.ensemble import RandomForestClassifier

        est = RandomForestClassifier(n_estimators=n, random_state=SEED, n_jobs=jobs)
    elif key == "hgb":
        from sklearn.ensemble import HistGradientBoostingClassifier

        est = HistGradientBoostingClassifier(random_state=SEED)
        if trees is not None:
            est.set_params(max_iter=n)
    elif key == "cat_i1000":
        from catboost import CatBoostClassifier

        est = CatBoostClassifier(
            iterations=n,
            random_seed=SEED,
            thread_count=jobs,
            verbose=0,
            allow_writing_files=False,
        )
    else:
        raise KeyError(key)
    return est.fit(X, y)


def save(key: str, est, path: Path) -> None:
    lib = SPECS[key].library
    if lib == "xgboost":
        est.get_booster().save_model(path)
    elif lib == "lightgbm":
        est.booster_.save_model(path)
    elif lib == "catboost":
        est.save_model(str(path))
    else:
        import skops.io as sio

        sio.dump(est, path)


def train(
    datasets, keys, out: Path, trees: int | None = None, jobs: int = 1, force: bool = False
) -> list[dict]:
    """Train and save; returns one record per model (path, seconds, test accuracy)."""
    import pandas as pd

    records = []
    for ds in datasets:
        X, y = load_train(ds)
        test = pd.read_csv(SHARED / ds / "test.csv")  # adult's label column is "income"
        X_te, y_te = test[list(X.columns)], test.iloc[:, -1].astype(int)
        (out / ds).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SHARED / ds / "details.csv", out / ds / "details.csv")
        for key in keys:
            path = model_path(out, ds, key)
            if path.exists() and not force:
                print(f"{path}: kept (--force trains it again)", file=sys.stderr)
                continue
            t0 = time.perf_counter()
            est = fit(key, X, y, trees, jobs)
            fit_s = time.perf_counter() - t0
            save(key, est, path)
            acc = float((est.predict(X_te).astype(int).ravel() == y_te.to_numpy()).mean())
            rec = {
                "dataset": ds,
                "model": key,
                "path": str(path),
                "fit_s": round(fit_s, 1),
                "test_accuracy": round(acc, 4),
                "mb": round(path.stat().st_size / 2**20, 1),
            }
            print(json.dumps(rec), file=sys.stderr)
            with open(out / "trained.jsonl", "a") as fh:
                fh.write(json.dumps(rec) + "\n")
            records.append(rec)
    return records


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--models", default=",".join(SPECS), help="keys: " + ", ".join(SPECS))
    ap.add_argument("--trees", type=int, default=None, help="cap every model at N trees")
    ap.add_argument("--jobs", type=int, default=1, help="training threads")
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    ap.add_argument("--force", action="store_true", help="train models already in --out again")
    args = ap.parse_args(argv)
    datasets = [d for d in args.datasets.split(",") if d]
    keys = [k for k in args.models.split(",") if k]
    for d in datasets:
        if d not in DATASETS:
            ap.error(f"unknown dataset {d!r}; known: {', '.join(DATASETS)}")
        if not (SHARED / d / "train.csv").exists():
            ap.error(
                f"{SHARED / d / 'train.csv'} not found (the shared benchmarks, or TREESENS_SHARED)"
            )
    for k in keys:
        if k not in SPECS:
            ap.error(f"unknown model {k!r}; known: {', '.join(SPECS)}")
    train(datasets, keys, Path(args.out), args.trees, args.jobs, args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
