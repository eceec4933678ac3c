"""Ensense (the reference paper's own tool) as a peer: an external program, its pairs replayed.

Ensense is GPLv3 and lives in ../shared/peers/ensense (PROVENANCE.md there): nothing here
imports or copies it. Each run starts

    PYTHON src/sensitive.py MODEL --features I [J ...] --output_gap LO HI --solver pb [--details CSV]

in its folder, in a Python that has its dependencies (``TREESENS_ENSENSE_PYTHON``, or the
venv ``python bench/ensense_peer.py --setup`` makes under ~/.cache/treesens-bench), in a
process group of its own that is killed at the time limit (``--timeout`` is ignored on its
``pb`` path). Binary models only.

* Gaps: Ensense turns ``--output_gap LO HI`` into logits and subtracts logit(b), b the
  base_score as it reads it (``float()`` of the model's string, 0.5 when that fails, as
  it does on XGBoost 3's ``'[2.65E-1]'``). To ask treesens' question, P(x1) >= 0.5 + g and
  P(x2) <= 0.5 - g under the model's real margin offset m0, pass
  HI = sigmoid(logit(0.5 + g) - m0 + logit(b)) and LO = sigmoid(logit(0.5 - g) - m0 + logit(b)).
* Answers: a printed pair counts only when it replays: x1 and x2 agree outside F and,
  under the model's own predict (xgboost's), one of them has P >= 0.5 + g and the other
  P <= 0.5 - g. A pair that does not is an *invalid pair* (status ``sensitive``,
  ``validated`` false: not solved). "Insensitive" is taken as printed (a proof cannot be
  replayed; bench/report.py lists disagreements with the other configurations).
* Time: from its start to its exit, minus its start-up (its interpreter importing its
  dependencies, measured in a separate process of the same Python just before, which
  also reads the base_score string its xgboost gives), so that it compares with
  treesens' time, which excludes imports; its CPU time likewise (minus that start-up's).
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
_SHARED = Path(os.environ.get("TREESENS_SHARED", HERE.parent.parent / "shared"))
ENSENSE_DIR = Path(os.environ.get("TREESENS_ENSENSE_DIR", _SHARED / "peers" / "ensense"))
PYTHON_ENV = "TREESENS_ENSENSE_PYTHON"
VENV = (
    Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    / "treesens-bench"
    / "ensense-venv"
)
# what its `pb` path imports (sensitive.py imports milp.py, hence gurobipy and scikit-learn,
# whatever the solver), at the versions PROVENANCE.md records; xgboost-cpu is xgboost
# without the CUDA libraries
REQUIREMENTS = (
    "xgboost-cpu==3.1.1",
    "z3-solver==4.15.3.0",
    "numpy<2.4",
    "pandas==2.3.3",
    "scikit-learn==1.7.2",
    "scipy==1.16.2",
    "lightgbm==4.6.0",
    "matplotlib==3.10.7",
    "gurobipy==12.0.3",
    "joblib==1.5.2",
    "tqdm==4.67.1",
    "graphviz==0.21",
    "xyplot==0.2.0",
)
IMPORTS = (
    "xgboost",
    "z3",
    "numpy",
    "pandas",
    "sklearn",
    "scipy",
    "lightgbm",
    "matplotlib.pyplot",
    "gurobipy",
    "joblib",
    "tqdm",
    "graphviz",
    "xyplot",
)


def ensense_python() -> str | None:
    """The interpreter to run Ensense with: $TREESENS_ENSENSE_PYTHON, else the cached venv's."""
    given = os.environ.get(PYTHON_ENV)
    if given:
        return given
    venv_python = VENV / "bin" / "python"
    return str(venv_python) if venv_python.exists() else None


# run by Ensense's interpreter: how long importing its dependencies takes, then the
# base_score string its xgboost gives for the model (what Ensense itself reads)
_PROBE = """
import json, sys, time
t0 = time.time()
import {imports}
seconds, cpu = time.time() - t0, time.process_time()
base = None
if len(sys.argv) > 1:
    config = json.loads(xgboost.Booster(model_file=sys.argv[1]).save_config())
    base = config["learner"]["learner_model_param"]["base_score"]
print(json.dumps({{"seconds": seconds, "cpu": cpu, "base_score": base}}))
"""


@dataclass(frozen=True)
class Probe:
    seconds: float  # importing Ensense's dependencies in its interpreter
    cpu: float  # CPU time of its interpreter's start and those imports
    base_score: str | None  # the model's base_score string as its xgboost gives it


def probe(python: str, model_file: str | None = None) -> tuple[Probe | None, str | None]:
    """(Probe, None), or (None, why Ensense's interpreter cannot run it)."""
    import json

    code = _PROBE.format(imports=", ".join(IMPORTS))
    try:
        p = subprocess.run(
            [python, "-c", code, *([model_file] if model_file else [])],
            capture_output=True,
            text=True,
            timeout=300,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"{python}: {e}"
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["import failed"])[-1]
        return None, f"{python}: {last}"
    d = json.loads(p.stdout.strip().splitlines()[-1])
    return Probe(float(d["seconds"]), float(d["cpu"]), d["base_score"]), None


def unavailable() -> str | None:
    """None when Ensense can run here, else one line saying what is missing."""
    if not (ENSENSE_DIR / "src" / "sensitive.py").is_file():
        return f"{ENSENSE_DIR}/src/sensitive.py not found"
    python = ensense_python()
    if python is None:
        return (
            f"no Python with its dependencies (set {PYTHON_ENV}, or make one with "
            "`python bench/ensense_peer.py --setup`)"
        )
    _, why = probe(python)
    return why


def setup_venv(path: Path = VENV) -> str:
    """Make the venv with Ensense's dependencies (PyPI); return its python."""
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    python = str(path / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "-q", *REQUIREMENTS], check=True)
    return python


# ---- the question, in Ensense's terms -----------------------------------------------
def _logit(p: float) -> float:
    return math.log(p / (1.0 - p))


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))


def ensense_base_score(text: str | None) -> float:
    """The base_score as Ensense reads it: ``float()`` of the stored string, else 0.5."""
    try:
        return float(text)
    except (TypeError, ValueError):
        return 0.5


def output_gap(g: float, margin_offset: float, ensense_base: float = 0.5) -> tuple[float, float]:
    """(LO, HI) for ``--output_gap`` so that Ensense asks P(x1) >= 0.5 + g and
    P(x2) <= 0.5 - g of a model whose real margin offset is ``margin_offset``."""
    shift = _logit(ensense_base) - margin_offset
    return _sigmoid(_logit(0.5 - g) + shift), _sigmoid(_logit(0.5 + g) + shift)


def ensense_model_file(model_path: str) -> str:
    """The file Ensense loads: chen2019's text dumps have a native-JSON twin
    (NNNN.resaved.json, the same model) that xgboost can load."""
    p = Path(model_path)
    twin = p.with_name(p.stem + ".resaved.json")
    return str(twin) if twin.exists() else str(p)


def ensense_argv(
    python: str,
    model_file: str,
    features: Sequence[int],
    gap: tuple[float, float],
    details: str | None,
    precision: float | None = None,
    clauses: str | None = None,
) -> list[str]:
    argv = [python, "-u", "src/sensitive.py", model_file, "--features", *map(str, features)]
    argv += ["--output_gap", repr(gap[0]), repr(gap[1]), "--solver", "pb"]
    if details:
        argv += ["--details", details]
    if precision:
        argv += ["--precision", repr(float(precision))]
    if clauses:  # its data-aware clause mode (bench/ensense_clauses.py)
        argv += ["--in_distro_clauses", clauses]
    return argv


# ---- its answer -----------------------------------------------------------------------
@dataclass(frozen=True)
class Claim:
    """What Ensense printed: ``sensitive`` (with its pair), ``insensitive``, ``error``
    (its solver raised; it then prints "[F] Insensitive", which is not an answer) or
    ``unknown`` (no answer: killed at the limit)."""

    status: str
    x1: tuple[float, ...] | None = None
    x2: tuple[float, ...] | None = None
    message: str = ""


_SAMPLE = re.compile(r"^Sensitive sample ([12]):\s*\[(.*)\]\s*$")


def _numbers(body: str) -> tuple[float, ...]:
    return tuple(float(v) for v in body.split(",") if v.strip())


def parse_output(text: str) -> Claim:
    samples: dict[str, tuple[float, ...]] = {}
    lines = text.splitlines()
    for k, line in enumerate(lines):
        line = line.strip()
        m = _SAMPLE.match(line)
        if m:
            try:
                samples[m.group(1)] = _numbers(m.group(2))
            except ValueError:
                return Claim("error", message=f"unreadable sample: {line[:200]}")
        elif line.startswith("Insensitive"):
            return Claim("insensitive")
        elif re.fullmatch(r"\[[\d ,]*\] Insensitive", line):
            why = lines[k - 1].strip() if k else ""
            return Claim("error", message=f"its solver raised: {why[:200]}")
    if "1" in samples and "2" in samples:
        return Claim("sensitive", samples["1"], samples["2"])
    return Claim("unknown", message="no answer")


def replay_pair(
    x1: Sequence[float],
    x2: Sequence[float],
    varied: Sequence[int],
    g: float,
    predict_proba: Callable[[np.ndarray], np.ndarray],
    n_features: int,
) -> tuple[bool, str]:
    """(valid, why): a pair counts when x1, x2 have n_features finite values, agree
    outside ``varied`` and the model's own predict puts one at P >= 0.5 + g and the other
    at P <= 0.5 - g (either order: the question is symmetric)."""
    a, b = np.asarray(x1, dtype=np.float64), np.asarray(x2, dtype=np.float64)
    if a.shape != (n_features,) or b.shape != (n_features,):
        return False, f"pair has {a.size}/{b.size} values, the model {n_features} features"
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        return False, "pair has a non-finite value"
    fixed = np.ones(n_features, dtype=bool)
    fixed[list(varied)] = False
    if np.any(a[fixed] != b[fixed]):
        return False, "x1 and x2 differ outside the varied features"
    p = np.asarray(predict_proba(np.stack([a, b])), dtype=np.float64)[:, -1]
    if (p[0] >= 0.5 + g and p[1] <= 0.5 - g) or (p[1] >= 0.5 + g and p[0] <= 0.5 - g):
        return True, f"replayed: P = {p[0]:.4f}, {p[1]:.4f}"
    return False, f"misses the gap on replay: P = {p[0]:.4f}, {p[1]:.4f} (g = {g:g})"


# ---- one benchmark run ------------------------------------------------------------------
def _children_cpu() -> float:
    import resource

    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def _run_killed_at(argv: list[str], cwd: Path, limit: float) -> tuple[str, bool, float, float]:
    """(stdout + stderr, killed, seconds, CPU seconds of it and the children it waited
    for): ``argv`` in a process group of its own, the whole group killed at ``limit``."""
    c0 = _children_cpu()
    t0 = time.time()
    p = subprocess.Popen(
        argv,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        env=dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore"),
    )
    killed = False
    try:
        out, _ = p.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        killed = True
        with contextlib.suppress(ProcessLookupError, PermissionError):  # it just ended
            os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
    wall = time.time() - t0
    cpu = _children_cpu() - c0
    with contextlib.suppress(ProcessLookupError, PermissionError):  # what it left behind
        os.killpg(p.pid, signal.SIGKILL)
    return out, killed, wall, cpu


def run_ensense(inst: dict, timeout: float, params: dict | None = None) -> dict:
    """One benchmark instance: Ensense's answer, its pair replayed with the model's predict."""
    import treesens

    params = params or {}
    python = ensense_python()
    if python is None:
        raise RuntimeError(unavailable() or "no Python for Ensense")
    model_file = ensense_model_file(inst["model_path"])
    found, why = probe(python, model_file)
    if found is None:
        raise RuntimeError(why)
    startup = found.seconds
    ens = treesens.load_model(inst["model_path"], details=inst["details_path"])
    if ens.n_outputs != 1:
        raise ValueError("the Ensense peer takes binary models only")
    varied = [ens.feature_names.index(f) for f in inst["features"]]
    g = float(inst["gap"])
    gap = output_gap(g, float(ens.intercept[0]), ensense_base_score(found.base_score))
    clauses = params.get("in_distro_clauses")
    argv = ensense_argv(
        python, model_file, varied, gap, inst["details_path"], params.get("precision"), clauses
    )
    out, killed, wall, cpu = _run_killed_at(argv, ENSENSE_DIR, timeout + startup)
    total = max(wall - startup, 0.0)
    claim = Claim("unknown", message="killed at the time limit") if killed else parse_output(out)
    valid, why = False, claim.message
    if claim.status == "sensitive":
        valid, why = replay_pair(
            claim.x1, claim.x2, varied, g, ens.replayer.predict_proba, ens.n_features
        )
    status = claim.status
    pair = {"pair": [claim.x1, claim.x2]} if clauses and claim.status == "sensitive" else {}
    return {
        **pair,
        "status": status,
        "validated": valid,
        "distance": None,
        "time": {
            "total": total,
            "cpu": max(cpu - found.cpu, 0.0),
            "wall": wall,
            "startup": startup,
        },
        "message": why,
        "error": claim.message if status == "error" else None,
        "ensense": {
            "argv": argv[1:],
            "output_gap": list(gap),
            "base_score_read": found.base_score,
            "invalid_pair": claim.status == "sensitive" and not valid,
            "tail": out.strip().splitlines()[-6:],
        },
    }


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description="Ensense as a bench peer: set up or check.")
    ap.add_argument("--setup", action="store_true", help=f"make the venv {VENV}")
    args = ap.parse_args(argv)
    if args.setup:
        print(setup_venv())
    why = unavailable()
    print(f"ensense: {why}" if why else f"ensense: ready ({ensense_python()})")
    return 1 if why else 0


if __name__ == "__main__":
    raise SystemExit(main())
