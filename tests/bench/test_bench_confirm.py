"""bench/confirm.py: how a second solver's runs confirm (or contradict) proofs of insensitivity."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(CHECKOUT / "bench"))  # confirm.py imports report.py beside it
spec = importlib.util.spec_from_file_location("bench_confirm", CHECKOUT / "bench" / "confirm.py")
confirm = importlib.util.module_from_spec(spec)
spec.loader.exec_module(confirm)


def run(instance, config, status, *, validated=True):
    return {
        "instance": instance,
        "config": config,
        "status": status,
        "validated": validated,
        "time": {"total": 1.0},
    }


def keyed(*runs):
    return {(r["instance"], r["config"]): r for r in runs}


REF = keyed(run("a", "default", "insensitive"), run("s", "default", "sensitive"))


def verdict_of(*others):
    return confirm.classify(REF, keyed(*REF.values(), *others), "default")


def test_only_the_references_insensitive_answers_are_checked():
    assert set(verdict_of()) == {"a"}


def test_another_solvers_proof_confirms():
    assert verdict_of(run("a", "highs", "insensitive"))["a"][0] == "confirmed"


def test_a_validated_pair_is_a_disagreement_even_beside_a_confirming_proof():
    v = verdict_of(run("a", "highs", "insensitive"), run("a", "z3", "sensitive"))
    assert v["a"][0] == "disagreeing"


def test_a_pair_failing_the_replay_check_is_not_evidence():
    v = verdict_of(run("a", "ensense", "sensitive", validated=False))
    assert v["a"][0] == "not confirmed"


def test_timeouts_alone_leave_the_answer_not_confirmed():
    v = verdict_of(run("a", "highs", "unknown"), run("a", "z3", "unknown"))
    assert v["a"][0] == "not confirmed"


def test_the_reference_configuration_does_not_confirm_itself():
    ref = keyed(run("a", "default", "insensitive"))
    assert confirm.classify(ref, ref, "default")["a"][0] == "not confirmed"


def test_unconfirmed_file_lists_the_ids_for_the_next_solver(tmp_path):
    ref_file = tmp_path / "ref.jsonl"
    ref_file.write_text(
        "".join(
            json.dumps(r) + "\n"
            for r in [run("a", "default", "insensitive"), run("b", "default", "insensitive")]
        )
    )
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps(run("a", "highs", "insensitive")) + "\n")
    left = tmp_path / "left.txt"
    assert confirm.main([str(ref_file), str(other), "--unconfirmed", str(left)]) == 0
    assert left.read_text() == "b\n"


def test_report_counts_each_verdict():
    text = confirm.report(verdict_of(run("a", "highs", "insensitive")), "default in ref.jsonl")
    assert "| 1 | 1 | 0 | 0 |" in text
