"""Ensense's data-aware clause mode as a bench peer: its own clauses, its pair replayed and
measured against the data with treesens' distance.

Ensense (GPLv3, ../shared/peers/ensense, run as an external program only) learns
"in-distribution" clauses from a data file with ``src/learn-data.py`` and restricts its
search with them (``src/sensitive.py ... --solver pb --in_distro_clauses FILE``; on its
``pb`` path a clause that mentions a varied feature is not used). Its probability
objective (``--prob``) lives on its ``milp`` path only, which needs full Gurobi, so only
the clause mode runs here. Each model's clauses are learned once (``learn-data.py
--max_clauses 50``, the same cap as treesens' default) and cached under
~/.cache/treesens-bench/ensense-clauses/; a run's time excludes that learning, as the
data-aware tier's treesens runs use cached cavity clauses.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

try:
    from .ensense_peer import ENSENSE_DIR, VENV, _run_killed_at, ensense_python, run_ensense
except ImportError:  # run as a script: bench/ is on sys.path
    from ensense_peer import ENSENSE_DIR, VENV, _run_killed_at, ensense_python, run_ensense

CLAUSE_DIR = VENV.parent / "ensense-clauses"
MAX_CLAUSES = 50
LEARN_LIMIT = 1800.0  # seconds: learning is killed (and nothing cached) past this


def clause_file(inst: dict) -> Path:
    """Ensense's clauses for the instance's model and data: learned once, then cached."""
    model = Path(inst["model_path"])
    out = CLAUSE_DIR / f"{model.parent.name}-{model.stem}-n{MAX_CLAUSES}"
    done = out.with_suffix(".txt")  # learn-data.py writes OUTPUT.txt
    if done.is_file():
        return done
    python = ensense_python()
    if python is None:
        raise RuntimeError("no Python for Ensense (python bench/ensense_peer.py --setup)")
    CLAUSE_DIR.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    argv = [python, "-u", "src/learn-data.py", "--data", inst["data_path"], "--model"]
    argv += [str(model), "--output", str(partial), "--max_clauses", str(MAX_CLAUSES)]
    if inst.get("details_path"):
        argv += ["--details", inst["details_path"]]
    text, killed, _, _ = _run_killed_at(argv, ENSENSE_DIR, LEARN_LIMIT)
    learned = partial.with_suffix(partial.suffix + ".txt")
    if killed or not learned.is_file():
        raise RuntimeError(f"learn-data.py gave no clauses: {text.strip()[-300:]}")
    os.replace(learned, done)
    return done


def pair_distance(inst: dict, x1, x2) -> float:
    """treesens' distance to the data of the pair's region (docs/data-aware.md)."""
    import treesens
    from treesens.compiler.distance import distance_to_data
    from treesens.readers.data import load_data

    ens = treesens.load_model(inst["model_path"], details=inst["details_path"])
    data = load_data(inst["data_path"], ens)
    leaves = ens.leaf_indices(np.asarray([x1, x2], dtype=np.float64))
    varied = {ens.feature_names.index(f) for f in inst["features"]}
    _, ranges = data.ranges()
    return float(distance_to_data(ens, [leaves[0], leaves[1]], varied, data.X, ranges)[0])


def run_ensense_clauses(inst: dict, timeout: float, params: dict | None = None) -> dict:
    """One run of Ensense's clause mode: ``run_ensense`` with its clause file; the distance
    of its pair (measured whether or not the pair replays; ``validated`` says which)."""
    params = dict(params or {})
    params["in_distro_clauses"] = str(clause_file(inst))
    out = run_ensense(inst, timeout, params)
    pair = out.pop("pair", None)
    if pair is not None:
        out["distance"] = pair_distance(inst, *pair)
    return out
