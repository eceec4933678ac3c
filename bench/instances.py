"""The benchmark instances, generated from ../shared/benchmarks, and the configurations.

An instance is a model, the features F that may vary, a gap and (multiclass) a class
pair; its id is a readable string ``model|F1+F2|g=0.2[|c=1,2]``. A configuration is how
it is solved (treesens with some passes / backend / heuristic, or the Veritas peer).
"""

from __future__ import annotations

import itertools
import math
import os
import random
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

try:
    from .ensense_peer import ENSENSE_DIR
except ImportError:  # run as a script: bench/ is on sys.path
    from ensense_peer import ENSENSE_DIR

from treesens.backends.search_schedule import SCHEDULE

HERE = Path(__file__).resolve().parent
SHARED = Path(os.environ.get("TREESENS_SHARED", HERE.parent.parent / "shared")) / "benchmarks"

# (key, model file, details csv) relative to SHARED; the paper's binary table (models 1-10)
_C = "chen2019"
BINARY_MODELS = [
    (
        "breast_cancer_robust",
        f"{_C}/breast_cancer_robust/0004.json",
        f"{_C}/breast_cancer_robust/breast_cancer_details.csv",
    ),
    # this dump's trees read features 0..8 only, so the 11-row details file does not fit it
    ("breast_cancer_unrobust", f"{_C}/breast_cancer_unrobust/0004.json", None),
    (
        "diabetes_robust",
        f"{_C}/diabetes_robust/0020.json",
        f"{_C}/diabetes_robust/diabetes_details.csv",
    ),
    (
        "diabetes_unrobust",
        f"{_C}/diabetes_unrobust/0020.json",
        f"{_C}/diabetes_robust/diabetes_details.csv",
    ),
    ("ijcnn_robust", f"{_C}/ijcnn_robust/0060.json", f"{_C}/ijcnn_robust/ijcnn_details.csv"),
    ("ijcnn_unrobust", f"{_C}/ijcnn_unrobust/0060.json", f"{_C}/ijcnn_robust/ijcnn_details.csv"),
]
for _ds, _sizes in (
    ("adult", [(t, d) for t in (200, 300, 500) for d in (5, 6)]),
    ("churn", [(t, d) for t in (200, 300, 500) for d in (5, 6)]),
    ("pimadiabetes", [(t, d) for t in (200, 300, 500) for d in (5, 6)]),
    ("german_credit", [(t, d) for t in (500, 800) for d in (5, 6)]),
):
    for _t, _d in _sizes:
        BINARY_MODELS.append(
            (f"{_ds}_t{_t}_d{_d}", f"{_ds}/{_ds}_t{_t}_d{_d}.json", f"{_ds}/details.csv")
        )

MULTICLASS_MODELS = [
    ("iris_t100_d5", "iris/iris_t100_d5.json", "iris/details.csv"),
    (
        "winequality_red_t100_d5",
        "winequality_red/winequality_red_t100_d5.json",
        "winequality_red/details.csv",
    ),
    (
        "winequality_red_t100_d6",
        "winequality_red/winequality_red_t100_d6.json",
        "winequality_red/details.csv",
    ),
]

# 10-class stand-ins for the paper's image models (bench/models/digits/train.py); their
# paths are absolute, so ``SHARED / path`` leaves them as they are
_DIGITS = HERE / "models" / "digits"
DIGITS_MODELS = [
    ("digits_xgb_t100_d6", str(_DIGITS / "digits_xgb_t100_d6.json"), str(_DIGITS / "details.csv")),
    ("digits_lgbm_t100_d6", str(_DIGITS / "digits_lgbm_t100_d6.txt"), str(_DIGITS / "details.csv")),
]

MODELS = {k: (m, d) for k, m, d in BINARY_MODELS + MULTICLASS_MODELS + DIGITS_MODELS}
BINARY_GAPS = (0.1, 0.2, 0.3)
MULTICLASS_GAP = 2.0  # P(c1) >= 2 * P(c) for every other class c (eta = ln 2)
# The paper's gaps {0.5, 1, 1.5} are raw-margin gaps (binary: delta = logit(0.5 + g), so
# about g = 0.12, 0.23, 0.32); its multiclass constraint (Gap-multi) puts eta = ln g in
# the same place, so the multiclass tier asks eta in {0.5, 1, 1.5}, i.e. g = e^eta.
PAPER_MULTICLASS_GAPS = tuple(round(math.exp(eta), 4) for eta in (0.5, 1.0, 1.5))
ANY = "any"  # a class placeholder: (c1, "any") is c1 against every other class


@dataclass(frozen=True)
class Instance:
    model: str  # key of MODELS
    features: tuple[str, ...]
    gap: float
    classes: tuple[int | str, int | str] | None = None
    suite: str = "single"  # single | multiclass | multi

    @property
    def id(self) -> str:
        s = f"{self.model}|{'+'.join(self.features)}|g={self.gap:g}"
        return s + (f"|c={self.classes[0]},{self.classes[1]}" if self.classes else "")

    @property
    def paths(self) -> tuple[str, str | None]:
        m, d = MODELS[self.model]
        return str(SHARED / m), (str(SHARED / d) if d else None)

    @property
    def data_path(self) -> str | None:
        """The model's training data (train.csv beside it), when the benchmarks have it."""
        path = (SHARED / MODELS[self.model][0]).parent / "train.csv"
        return str(path) if path.is_file() else None

    def to_dict(self) -> dict:
        d = asdict(self)
        d["id"] = self.id
        d["model_path"], d["details_path"] = self.paths
        d["data_path"] = self.data_path
        return d


@dataclass(frozen=True)
class Config:
    name: str
    kind: str = "treesens"  # treesens | veritas | ensense | ensense-clause
    passes: str | None = None  # None: default; "-unaff": default minus one; "none"
    baseline: str | None = None
    backend: str = "cpsat"
    heuristic: bool = True
    heuristic_effort: float = 1.0  # the heuristic's work bound, a multiple of the default
    # the box search before CP-SAT (search/boxes.py); None: as ``heuristic`` (it runs
    # only with the heuristic: the configurations without it measure the encoding alone)
    box_search: bool | None = None
    params: tuple[tuple[str, object], ...] = ()  # CP-SAT parameters (SatParameters fields)
    note: str = ""
    # with the instance's train.csv as data: "none" measures the witness's distance only,
    # "prob" / "clause" / "probclause" also steer the search (docs/data-aware.md)
    data_aware: str | None = None


CONFIGS = {
    c.name: c
    for c in [
        Config("default", note="all passes, pre-solver heuristic, CP-SAT"),
        Config(
            "default-noheur", heuristic=False, note="all passes, no heuristic (the encoding alone)"
        ),
        Config("default-nobox", box_search=False, note="default without the box search"),
        Config("kant", baseline="kant", heuristic=False, note="Kantchelian baseline, no heuristic"),
        Config("no-unaff", passes="-unaff", heuristic=False, note="default-noheur minus UnAff"),
        Config("no-aff", passes="-aff", heuristic=False, note="default-noheur minus Aff"),
        Config("no-obj", passes="-obj", heuristic=False, note="default-noheur minus Obj"),
        # Veritas peers (bench/veritas_peer.py): "veritas" is the posing the paper uses
        # (max m(x1) - m(x2)); "veritas-sides-eps0" the exact posing with greedy
        # dives, the one of the screened settings that finds pairs (docs/benchmarks.md,
        # "Why the defaults are what they are")
        Config("veritas", kind="veritas", note="dtai-veritas best-first search on m(x1)-m(x2)"),
        Config(
            "veritas-eps0",
            kind="veritas",
            params=(("focal_eps", 0.0), ("prune", False)),
            note="veritas, focal_eps 0 (greedy dives), no pruning below the target",
        ),
        Config(
            "veritas-eps0-prune",
            kind="veritas",
            params=(("focal_eps", 0.0),),
            note="veritas, focal_eps 0, states below the target pruned",
        ),
        Config(
            "veritas-sides",
            kind="veritas",
            params=(("pose", "sides"),),
            note="veritas, exact posing min(m(x1), -m(x2)) >= delta (multi-output max-max)",
        ),
        Config(
            "veritas-sides-eps0",
            kind="veritas",
            params=(("pose", "sides"), ("focal_eps", 0.0), ("prune", False)),
            note="veritas, exact posing, focal_eps 0 (greedy dives), no pruning",
        ),
        Config(
            "veritas-sides-eps05",
            kind="veritas",
            params=(("pose", "sides"), ("focal_eps", 0.5)),
            note="veritas-sides, focal_eps 0.5",
        ),
        Config(
            "veritas-eps05",
            kind="veritas",
            params=(("focal_eps", 0.5), ("prune", False)),
            note="veritas, focal_eps 0.5, no pruning below the target",
        ),
        # the paper's tool, `sensitive.py --solver pb` in its own Python (bench/ensense_peer.py)
        Config("ensense", kind="ensense", note="Ensense (the paper's tool), --solver pb, replayed"),
    ]
}
# the data-aware tier: the default pipeline with the instance's train.csv as data
for _mode, _note in (
    ("none", "data given, search unchanged (the witness's distance measured)"),
    ("prob", "utility objective (optimising)"),
    ("clause", "cavity clauses (learned once per model, cached)"),
    ("probclause", "cavity clauses and the utility objective"),
):
    CONFIGS[f"data-{_mode}"] = Config(f"data-{_mode}", data_aware=_mode, note=_note)
CONFIGS["ensense-clause"] = Config(
    "ensense-clause",
    kind="ensense-clause",
    note="Ensense's clause mode (learn-data.py clauses, --solver pb), replayed, distance measured",
)
DATA_AWARE_CONFIGS = ["data-prob", "data-clause", "data-probclause"]
# one configuration per installed non-default backend (all passes, no heuristic, so
# they compare with default-noheur)
# CP-SAT parameter candidates for the default backend (all passes, no heuristic: they
# compare with default-noheur); `bench/run.py --configs default-noheur,cpsat-*`
for _name, _params in {
    "cpsat-lin0": (("linearization_level", 0),),
    "cpsat-lin2": (("linearization_level", 2),),
    # treesens sets cp_model_probing_level 0 (chosen from these runs); CP-SAT's own is 2
    "cpsat-probe2": (("cp_model_probing_level", 2),),
    "cpsat-fixed": (("search_branching", 1),),  # FIXED_SEARCH: the model's variable order
    "cpsat-pseudocost": (("search_branching", 4),),  # PSEUDO_COST_SEARCH
    "cpsat-nopresolve": (("cp_model_presolve", False),),
    # CP-SAT's portfolio (core, LNS, feasibility jump, ...): 8 threads on the job's one core
    "cpsat-w8": (("num_workers", 8),),
    "cpsat-interleave": (("interleave_search", True),),
}.items():
    CONFIGS[_name] = Config(
        _name, heuristic=False, params=_params, note=f"default-noheur with CP-SAT {_params}"
    )
_SCHEDULE = {phase.name: phase for phase in SCHEDULE}
# the same candidates inside the default pipeline (heuristic first)
for _name, _params in {
    "default-nopresolve": (("cp_model_presolve", False),),
    "default-probe2": (("cp_model_probing_level", 2),),
    "default-w8": (("num_workers", 8),),
    # CP-SAT's subsolvers (LP and no-LP searches, core, LNS, feasibility jump) taking
    # turns in ONE thread, deterministically
    "default-interleave": (("interleave_search", True),),
    # two of the portfolio's searches alone (they found the portfolio's pairs on the
    # hardest queries): branching on the LP's reduced costs over the full LP relaxation,
    # and core-based optimisation without LP
    "default-lpsearch": _SCHEDULE["lp-branching"].params,
    "default-core": _SCHEDULE["core"].params,
    # CP-SAT's default search for the whole limit (the default before the schedule): any
    # search parameter, here set to CP-SAT's own default value, replaces the schedule
    "default-single": (("search_branching", "AUTOMATIC_SEARCH"),),
}.items():
    CONFIGS[_name] = Config(_name, params=_params, note=f"default with CP-SAT {_params}")
# the default with the heuristic's work bound scaled (more or fewer restarts before
# CP-SAT); default-effort0.1 is 50 row-tree evaluations per leaf, the default of older
# results files (docs/benchmarks.md, "Names that changed meaning")
for _effort in (0.1, 0.3, 2, 3):
    CONFIGS[f"default-effort{_effort:g}"] = Config(
        f"default-effort{_effort:g}",
        heuristic_effort=float(_effort),
        note=f"default with {_effort:g}x the heuristic's work bound",
    )
for _b in ("cbc", "highs", "gurobi", "z3"):
    CONFIGS[_b] = Config(
        _b, backend=_b, heuristic=False, note=f"all passes, no heuristic, backend {_b}"
    )
# the paper's ablation on a MILP solver: HiGHS with the default passes minus one, and
# the Kantchelian baseline (compare with `highs`, the encoding alone on HiGHS)
for _name, _passes, _baseline in (
    ("highs-kant", None, "kant"),
    ("highs-no-unaff", "-unaff", None),
    ("highs-no-aff", "-aff", None),
    ("highs-no-obj", "-obj", None),
):
    CONFIGS[_name] = Config(
        _name,
        backend="highs",
        passes=_passes,
        baseline=_baseline,
        heuristic=False,
        note=f"{_name.removeprefix('highs-')} on HiGHS, no heuristic",
    )
ABLATION_CONFIGS_HIGHS = ["highs", "highs-kant", "highs-no-unaff", "highs-no-aff", "highs-no-obj"]


def installed_backends() -> list[str]:
    from treesens.backends.registry import BACKENDS, available

    return [b for b in BACKENDS if available(b)]


def _used_features(model_key: str) -> tuple[list[str], int]:
    """Names of the features some split of the model tests (chen2019's unused index 0 and
    features no tree reads would be trivially insensitive instances)."""
    import treesens

    m, d = MODELS[model_key]
    ens = treesens.load_model(str(SHARED / m), details=str(SHARED / d) if d else None)
    used = set()
    for t in ens.trees:
        used.update(int(f) for f in t.feature[t.feature >= 0])
    return [ens.feature_names[f] for f in sorted(used)], ens.n_classes


_FEATURE_CACHE: dict[str, tuple[list[str], int]] = {}


def used_features(model_key: str) -> tuple[list[str], int]:
    if model_key not in _FEATURE_CACHE:
        _FEATURE_CACHE[model_key] = _used_features(model_key)
    return _FEATURE_CACHE[model_key]


def _chosen(table: list, models) -> Iterator[tuple[str, list[str], int]]:
    """The key, used features and number of classes of each model of ``table`` that
    ``models`` names (None: every model)."""
    for key, _, _ in table:
        if models is None or key in models:
            feats, k = used_features(key)
            yield key, feats, k


def single_feature(
    models=None, gaps=BINARY_GAPS, features_per_model: int | None = None
) -> list[Instance]:
    out = []
    for key, feats, _ in _chosen(BINARY_MODELS, models):
        if features_per_model is not None:
            feats = _spread(feats, features_per_model)
        for g in gaps:
            out.extend(Instance(key, (f,), g) for f in feats)
    return out


def multiclass(models=None, gap=MULTICLASS_GAP) -> list[Instance]:
    out = []
    for key, feats, k in _chosen(MULTICLASS_MODELS, models):
        for f in feats:
            for c1, c2 in itertools.permutations(range(k), 2):
                out.append(Instance(key, (f,), gap, (c1, c2), suite="multiclass"))
    return out


def multi_feature(models=None, sizes=(2, 3, 4, 5), gap=0.2, seed=0) -> list[Instance]:
    """As in the paper's multi-feature experiment: per binary model and size m, as many
    random subsets of m features as the model has (used) features."""
    rng = random.Random(seed)
    out = []
    for key, feats, _ in _chosen(BINARY_MODELS, models):
        for m in sizes:
            if m > len(feats):
                continue
            seen = set()
            for _ in range(len(feats)):
                s = tuple(sorted(rng.sample(feats, m), key=feats.index))
                if s not in seen:
                    seen.add(s)
                    out.append(Instance(key, s, gap, suite="multi"))
    return out


def multiclass_tier(models=None, gaps=PAPER_MULTICLASS_GAPS) -> list[Instance]:
    """The multiclass tier: every multiclass model (the paper's and the digits stand-ins)
    x every used feature x every ordered class pair (c1, c2) and every (c1, any) x the
    paper's gaps (``PAPER_MULTICLASS_GAPS``)."""
    out = []
    for key, feats, k in _chosen(MULTICLASS_MODELS + DIGITS_MODELS, models):
        pairs = list(itertools.permutations(range(k), 2)) + [(c, ANY) for c in range(k)]
        for g in gaps:
            for f in feats:
                out.extend(Instance(key, (f,), g, pair, suite="multiclass") for pair in pairs)
    return out


def feature_pairs(models=None, per_model: int = 4, gaps=BINARY_GAPS, seed=0) -> list[Instance]:
    """The multi-feature tier: per binary model, ``per_model`` distinct pairs of used
    features drawn with ``random.Random(seed)`` (the same pairs on every run), x gaps."""
    out = []
    for key, feats, _ in _chosen(BINARY_MODELS, models):
        every = list(itertools.combinations(feats, 2))
        rng = random.Random(f"{seed}|{key}")  # per model: adding a model changes no other pair
        for pair in rng.sample(every, min(per_model, len(every))):
            out.extend(Instance(key, pair, g, suite="multi") for g in gaps)
    return out


def _spread(items: list, k: int) -> list:
    """k items spread evenly over the list (deterministic)."""
    if k >= len(items):
        return list(items)
    step = len(items) / k
    return [items[int(i * step)] for i in range(k)]


# ---- tiers ------------------------------------------------------------------------
# treesens' default, Kant and the paper's ablations side by side (the ablations and Kant
# run without the heuristic: compare them with default-noheur)
ABLATION_CONFIGS = ["default", "default-noheur", "kant", "no-unaff", "no-aff", "no-obj"]
TIERS = ("quick", "multiclass", "digits", "multi", "full", "data-aware")
# the shipped binary models with a train.csv
DATA_MODELS = tuple(
    k
    for k, m, _ in BINARY_MODELS
    if m.split("/")[0] in ("adult", "churn", "pimadiabetes", "german_credit")
)
QUICK_MODELS = ("breast_cancer_robust", "diabetes_robust", "pimadiabetes_t200_d5", "adult_t200_d5")


def _peer_configs() -> list[str]:
    """The peers a tier adds when they are present here (run.py skips one whose
    dependencies are missing, with one line saying so)."""
    return ["ensense"] if (ENSENSE_DIR / "src" / "sensitive.py").is_file() else []


def tier(name: str, suites=None) -> tuple[list[Instance], list[str], float]:
    """(instances, configuration names, per-instance time limit) of a tier."""
    if name == "quick":
        insts = single_feature(QUICK_MODELS, gaps=(0.2,), features_per_model=3)
        return insts, ["default", "kant", "no-aff"] + _peer_configs(), 60.0
    if name == "multiclass":
        return multiclass_tier(), list(ABLATION_CONFIGS), 60.0
    if name == "digits":
        digits = [key for key, _, _ in DIGITS_MODELS]
        return multiclass_tier(digits), ["default", "kant"], 600.0
    if name == "multi":
        return feature_pairs(), list(ABLATION_CONFIGS), 60.0
    if name == "data-aware":
        # sample: bench/instance-lists/sample-data-aware.txt (sensitive instances of the full tier)
        return single_feature(DATA_MODELS, gaps=(0.2,)), list(DATA_AWARE_CONFIGS), 120.0
    if name == "full":
        suites = suites or ("single", "multiclass", "multi")
        insts = []
        if "single" in suites:
            insts += single_feature()
        if "multiclass" in suites:
            insts += multiclass()
        if "multi" in suites:
            insts += multi_feature()
        configs = ["default", "default-noheur", "kant", "no-unaff", "no-aff", "no-obj"]
        configs += ["veritas", "veritas-sides-eps0"]
        configs += [b for b in installed_backends() if b != "cpsat"]
        return insts, configs, 600.0
    raise ValueError(f"unknown tier {name!r} ({', '.join(TIERS)})")
