"""bench/instances.py: the multiclass and multi-feature tiers (instances from
../shared/benchmarks; skipped without it)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
try:
    import instances  # noqa: E402  (bench/ modules import each other by plain name)
finally:
    sys.path.remove(str(BENCH))

if not instances.SHARED.is_dir():
    pytest.skip(f"{instances.SHARED} not found", allow_module_level=True)


def test_multiclass_tier_asks_the_papers_raw_gaps_as_eta_equals_ln_g():
    gaps = {i.gap for i in instances.multiclass_tier(models=["iris_t100_d5"])}
    assert sorted(round(math.log(g), 3) for g in gaps) == [0.5, 1.0, 1.5]


def test_multiclass_tier_has_every_ordered_class_pair_and_every_class_against_any():
    insts = instances.multiclass_tier(models=["iris_t100_d5"], gaps=(2.0,))
    pairs = {i.classes for i in insts}
    assert pairs == {
        (0, 1),
        (0, 2),
        (1, 0),
        (1, 2),
        (2, 0),
        (2, 1),
        (0, "any"),
        (1, "any"),
        (2, "any"),
    }


def test_multiclass_tier_instances_are_in_the_multiclass_suite():
    assert {i.suite for i in instances.multiclass_tier(models=["iris_t100_d5"])} == {"multiclass"}


def test_feature_pairs_are_the_same_on_every_call():
    a = instances.feature_pairs(models=["pimadiabetes_t200_d5"])
    assert a == instances.feature_pairs(models=["pimadiabetes_t200_d5"])


def test_feature_pairs_are_distinct_pairs_of_two_features_per_gap():
    insts = instances.feature_pairs(models=["pimadiabetes_t200_d5"], per_model=4, gaps=(0.2,))
    assert len({i.features for i in insts}) == 4
    assert all(len(i.features) == 2 and i.features[0] != i.features[1] for i in insts)


def test_a_models_feature_pairs_do_not_depend_on_the_other_models_asked():
    alone = instances.feature_pairs(models=["pimadiabetes_t200_d5"])
    both = instances.feature_pairs(models=["pimadiabetes_t200_d5", "breast_cancer_robust"])
    assert [i for i in both if i.model == "pimadiabetes_t200_d5"] == alone


def test_the_quick_tier_lists_ensense_when_its_code_is_here():
    _, configs, _ = instances.tier("quick")
    present = (instances.ENSENSE_DIR / "src" / "sensitive.py").is_file()
    assert ("ensense" in configs) == present
