"""The box search over every feature kind, side by side with another checkout (issue 46).

    python bench/box_kinds.py --base /work/base [--timeout 20] [--out FILE]

Runs the same "insensitive?" checks (default plan: heuristic, box search, CP-SAT) with
this checkout's code and with the one at ``--base`` (its parent on PYTHONPATH), one
worker process per side and batch, on:

* ``tiny``: 80 held-out tiny IR models (tests/feature_kinds.py ``kinds_ensemble``,
  seeds 500-579, none of which a test uses): a categorical f0, a may-be-missing f1 and a
  numeric f2; each feature varied at gaps 0.1 and 0.3;
* ``lgbm-cat`` and ``xgb-cat``: LightGBM and XGBoost models trained here on the adult
  benchmark's data (/work/shared/benchmarks/adult) with its 8 categorical columns as
  categorical splits (their codes) and NaN in 15% of age and hours-per-week (declared
  may be missing); every feature varied at gap 0.3. The paper's models themselves have
  no categorical split and no missing-value routing (their categories are scaled codes,
  split by thresholds: the box search covered them before).

Prints one JSON line per query and side, then per batch and side: answers, "insensitive"
proved by the box search, by the solver, and wall / CPU seconds (this process's and its
solver processes').
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]  # this checkout (the package treesens)
ADULT = Path("/work/shared/benchmarks/adult")
MODELS = Path("/tmp/box_kinds_models")
CATEGORICAL = [
    "workclass",
    "education",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "native-country",
]
MISSING = ["age", "hours-per-week"]
LIBRARY_GAP = 0.3


def _adult():
    import numpy as np
    import pandas as pd

    df = pd.read_csv(ADULT / "train.csv")
    cats = json.loads((ADULT / "encoding_map.json").read_text())
    for c in CATEGORICAL:  # scaled codes back to codes 0..n-1
        df[c] = np.rint(df[c] * (len(cats[c]) - 1)).astype(int)
    rng = np.random.default_rng(0)
    for c in MISSING:
        df.loc[rng.random(len(df)) < 0.15, c] = np.nan
    return df.drop(columns="label"), df["label"].to_numpy()


def train_models() -> dict[str, Path]:
    """The two library models with categorical splits and NaN (trained once)."""
    MODELS.mkdir(exist_ok=True)
    paths = {"lgbm-cat": MODELS / "adult_lgbm_cat.txt", "xgb-cat": MODELS / "adult_xgb_cat.json"}
    if all(p.exists() for p in paths.values()):
        return paths
    import lightgbm as lgb
    import pandas as pd
    import xgboost as xgb

    X, y = _adult()
    params = dict(objective="binary", num_leaves=15, verbose=-1, max_cat_to_onehot=1, seed=0)
    ds = lgb.Dataset(X.to_numpy(), y, feature_name=list(X.columns), categorical_feature=CATEGORICAL)
    lgb.train(params, ds, 100).save_model(paths["lgbm-cat"])
    Xc = X.copy()
    for c in CATEGORICAL:
        Xc[c] = pd.Categorical(Xc[c], categories=sorted(Xc[c].unique()))
    est = xgb.XGBClassifier(
        n_estimators=100, max_depth=4, enable_categorical=True, tree_method="hist",
        max_cat_to_onehot=1, random_state=0,
    )  # fmt: skip
    est.fit(Xc, y)
    est.get_booster().save_model(paths["xgb-cat"])
    return paths


def _cpu() -> float:
    """CPU seconds so far of this process, its ended children and its solver processes."""
    from treesens.backends.worker import live_pids

    ended = resource.getrusage(resource.RUSAGE_CHILDREN)
    running = 0.0
    for pid in live_pids():
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            running += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            pass
    return time.process_time() + ended.ru_utime + ended.ru_stime + running


def _queries(batch: str, kinds_file: str):
    """(label, ensemble, query) of a batch."""
    import importlib.util

    from treesens.compiler.plan import Plan
    from treesens.compiler.query import Gap, Query

    if batch == "tiny":
        spec = importlib.util.spec_from_file_location("feature_kinds", kinds_file)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for seed in range(500, 580):
            ens = mod.kinds_ensemble(seed, 5, 3, lightgbm_like=seed % 2 == 0)
            for f in ("f0", "f1", "f2"):
                for g in (0.1, 0.3):
                    yield f"s{seed}:{f}:g{g}", ens, Query(vary=(f,), gap=Gap(g))
        return
    import treesens
    from treesens.readers.details import declare

    ens = declare(treesens.load_model(str(train_models()[batch])), missing=MISSING)
    for f in ens.feature_names:
        yield f, ens, Query(vary=(f,), gap=Gap(LIBRARY_GAP), plan=Plan(timeout=1.0))


def worker(batch: str, timeout: float, kinds_file: str) -> None:
    from treesens.backends.worker import shutdown
    from treesens.driver import solve_query

    for label, ens, q in _queries(batch, kinds_file):
        q = q.planned(timeout=timeout, threads=1)
        t0, c0 = time.time(), _cpu()
        r = solve_query(ens, q)
        wall, cpu = time.time() - t0, _cpu() - c0
        box = (r.stats or {}).get("box_search", {})
        line = {
            "query": label,
            "status": str(r.status),
            "proved_by": r.proof.by if r.proof is not None else None,
            "found_by": (r.stats or {}).get("found_by"),
            "box_status": box.get("status"),
            "wall": round(wall, 3),
            "cpu": round(cpu, 3),
        }
        print(json.dumps(line), flush=True)
    shutdown()


def _side(root: Path, batch: str, timeout: float) -> list[dict]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", batch]
    cmd += ["--timeout", str(timeout), "--kinds", str(HERE / "tests" / "feature_kinds.py")]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise SystemExit(f"{root} {batch}: {p.stderr.strip().splitlines()[-1:]}")
    return [json.loads(s) for s in p.stdout.splitlines() if s.startswith("{")]


def summary(rows: list[dict]) -> dict:
    box = "box search"
    ins = [r for r in rows if r["status"] == "insensitive"]
    return {
        "queries": len(rows),
        "insensitive": len(ins),
        "by_boxes": sum(r["proved_by"] == box for r in ins),
        "by_solver": sum(r["proved_by"] not in (None, box) for r in ins),
        "unproved": sum(r["proved_by"] is None for r in ins),
        "sensitive": sum(r["status"] == "sensitive" for r in rows),
        "unknown": sum(r["status"] not in ("sensitive", "insensitive") for r in rows),
        "wall": round(sum(r["wall"] for r in rows), 1),
        "cpu": round(sum(r["cpu"] for r in rows), 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default="/work/base", help="the other checkout's parent")
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--batches", default="tiny,lgbm-cat,xgb-cat")
    ap.add_argument("--out", default=None, help="the JSON lines, also written here")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--kinds", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        worker(a.worker, a.timeout, a.kinds)
        return
    train_models()
    sides = {"base": Path(a.base), "this": HERE.parent}
    lines: list[str] = []
    for batch in a.batches.split(","):
        for name, root in sides.items():
            rows = _side(root, batch, a.timeout)
            done = [{"batch": batch, "side": name, **r} for r in rows]
            done.append({"batch": batch, "side": name, "summary": summary(rows)})
            for d in done:
                print(json.dumps(d), flush=True)
                lines.append(json.dumps(d))
            if a.out:
                Path(a.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
