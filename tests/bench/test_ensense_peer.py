"""bench/ensense_peer.py: what is ours around the Ensense peer (the question in its terms,
reading its output, counting its pairs, its time limit), without running Ensense; one
slow test runs it when ../shared/peers/ensense and its Python are here."""

from __future__ import annotations

import importlib.util
import math
import os
import sys
import time
from pathlib import Path

import numpy as np
import pytest

CHECKOUT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location(
    "bench_ensense_peer", CHECKOUT / "bench" / "ensense_peer.py"
)
peer = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = peer  # its dataclasses look their module up
spec.loader.exec_module(peer)


def logit(p: float) -> float:
    return math.log(p / (1 - p))


# ---- the question in Ensense's terms ------------------------------------------------
def test_output_gap_is_half_plus_minus_g_when_it_reads_the_real_base_score():
    lo, hi = peer.output_gap(0.2, logit(0.3), ensense_base=0.3)
    assert (lo, hi) == pytest.approx((0.3, 0.7))


def test_output_gap_moves_the_margin_it_asks_by_the_base_score_it_cannot_read():
    m0 = logit(0.2408)  # adult's real offset; Ensense reads 0.5 (offset 0)
    lo, hi = peer.output_gap(0.2, m0, ensense_base=0.5)
    # Ensense asks leaves >= logit(HI) - 0; the model's margin is then logit(0.7)
    assert logit(hi) + m0 == pytest.approx(logit(0.7))
    assert logit(lo) + m0 == pytest.approx(logit(0.3))


def test_a_bracketed_xgboost_3_base_score_is_read_as_one_half():
    assert peer.ensense_base_score("[2.65E-1]") == 0.5


def test_a_plain_base_score_string_is_read_as_its_value():
    assert peer.ensense_base_score("3.482E-1") == pytest.approx(0.3482)


def test_argv_passes_feature_indices_the_gap_and_the_pb_solver():
    argv = peer.ensense_argv("py", "m.json", [3, 7], (0.25, 0.75), "d.csv")
    assert argv == [
        "py", "-u", "src/sensitive.py", "m.json", "--features", "3", "7",
        "--output_gap", "0.25", "0.75", "--solver", "pb", "--details", "d.csv",
    ]  # fmt: skip


def test_argv_leaves_out_details_when_the_model_has_none():
    assert "--details" not in peer.ensense_argv("py", "m.json", [0], (0.3, 0.7), None)


def test_a_text_dump_is_replaced_by_its_native_json_twin(tmp_path):
    (tmp_path / "0004.json").write_text("[]")
    (tmp_path / "0004.resaved.json").write_text("{}")
    assert peer.ensense_model_file(str(tmp_path / "0004.json")) == str(
        tmp_path / "0004.resaved.json"
    )


def test_a_native_model_without_a_twin_is_passed_as_it_is(tmp_path):
    (tmp_path / "m.json").write_text("{}")
    assert peer.ensense_model_file(str(tmp_path / "m.json")) == str(tmp_path / "m.json")


# ---- reading its output -----------------------------------------------------------
SENSITIVE_OUTPUT = """# Base score: 0.5
Query 0:
# Time: : 3.87
Sensitive: [0]
Sensitive sample 1:[ 0.47 , 0.9 , 0.0 ]
Sensitive sample 2:[ 0.58 , 0.9 , 0.0 ]
Output values: [0.59 0.40]
"""


def test_a_printed_pair_is_read_as_a_sensitive_claim_with_both_samples():
    claim = peer.parse_output(SENSITIVE_OUTPUT)
    assert (claim.status, claim.x1, claim.x2) == ("sensitive", (0.47, 0.9, 0.0), (0.58, 0.9, 0.0))


def test_insensitive_followed_by_the_features_is_an_insensitive_claim():
    assert peer.parse_output("Query 0:\n# Time: : 0.01\nInsensitive [4]\n").status == "insensitive"


def test_its_exception_path_printing_features_then_insensitive_is_an_error():
    claim = peer.parse_output("Query 0:\nz3 exception: out of memory\n[4] Insensitive\nTime 2 s\n")
    assert claim.status == "error"
    assert "out of memory" in claim.message


def test_output_without_an_answer_is_unknown():
    assert peer.parse_output("# Base score: 0.5\nQuery 0:\n").status == "unknown"


def test_a_sample_that_is_not_numbers_is_an_error():
    text = "Sensitive sample 1:[ a , b ]\nSensitive sample 2:[ 1 , 2 ]\n"
    assert peer.parse_output(text).status == "error"


# ---- counting its pairs -----------------------------------------------------------
def proba_of_first_feature(X):
    """A stand-in for the model's predict: P(class 1) = x[0]."""
    p = np.asarray(X)[:, 0]
    return np.stack([1 - p, p], axis=1)


def test_a_pair_meeting_both_sides_of_the_gap_counts():
    ok, _ = peer.replay_pair([0.8, 1.0], [0.2, 1.0], [0], 0.2, proba_of_first_feature, 2)
    assert ok


def test_a_pair_in_the_other_order_counts():
    ok, _ = peer.replay_pair([0.2, 1.0], [0.8, 1.0], [0], 0.2, proba_of_first_feature, 2)
    assert ok


def test_a_pair_missing_one_side_of_the_gap_does_not_count():
    ok, why = peer.replay_pair([0.6, 1.0], [0.2, 1.0], [0], 0.2, proba_of_first_feature, 2)
    assert not ok and "misses the gap" in why


def test_a_pair_differing_outside_the_varied_features_does_not_count():
    ok, why = peer.replay_pair([0.8, 1.0], [0.2, 0.0], [0], 0.2, proba_of_first_feature, 2)
    assert not ok and "outside" in why


def test_a_pair_of_the_wrong_length_does_not_count():
    ok, _ = peer.replay_pair([0.8], [0.2], [0], 0.2, proba_of_first_feature, 2)
    assert not ok


def test_a_pair_with_a_nan_does_not_count():
    ok, _ = peer.replay_pair([0.8, math.nan], [0.2, math.nan], [0], 0.2, proba_of_first_feature, 2)
    assert not ok


# ---- its time limit ---------------------------------------------------------------
def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "zombie" not in state


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_the_limit_kills_its_whole_process_group():
    code = (
        "import subprocess, time; p = subprocess.Popen(['sleep', '30']); "
        "print(p.pid, flush=True); time.sleep(30)"
    )
    t0 = time.time()
    out, killed, _, _ = peer._run_killed_at([sys.executable, "-c", code], CHECKOUT, 2.0)
    assert killed and time.time() - t0 < 10
    child = int(out.split()[0])
    end = time.time() + 10.0  # killed, it is gone once the kernel has ended it
    while _alive(child) and time.time() < end:
        time.sleep(0.05)
    assert not _alive(child)


def test_an_interpreter_given_in_the_environment_is_used(monkeypatch):
    monkeypatch.setenv(peer.PYTHON_ENV, "/some/python")
    assert peer.ensense_python() == "/some/python"


def test_an_interpreter_without_its_dependencies_is_reported_in_one_line():
    _, why = peer.probe(sys.executable + "-does-not-exist")
    assert why and "\n" not in why


# ---- Ensense itself (slow) ----------------------------------------------------------
SHARED = CHECKOUT.parent / "shared"


@pytest.mark.slow
def test_ensense_answers_a_small_instance_and_its_answer_is_recorded():
    if os.environ.get("TREESENS_SHARED"):
        shared = Path(os.environ["TREESENS_SHARED"])
    else:
        shared = SHARED if SHARED.is_dir() else Path("/work/shared")
    why = peer.unavailable()
    if why or not (shared / "benchmarks").is_dir():
        pytest.skip(f"Ensense cannot run here: {why or 'no benchmarks'}")
    model = shared / "benchmarks" / "chen2019" / "breast_cancer_robust"
    inst = {
        "model_path": str(model / "0004.json"),
        "details_path": str(model / "breast_cancer_details.csv"),
        "features": ["f4"],
        "gap": 0.2,
    }
    out = peer.run_ensense(inst, 120.0)
    assert out["status"] in ("sensitive", "insensitive")
    assert out["ensense"]["argv"][:3] == [
        "-u",
        "src/sensitive.py",
        str(model / "0004.resaved.json"),
    ]
