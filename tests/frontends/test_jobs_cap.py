"""A pool on this machine starts no more workers than its cores, nor than its memory holds
copies of the model's first stage: --jobs 64 on a small machine says so in one line and
answers with the workers it has. A query's solver threads (--threads 64) are capped to the
cores of the machine that answers it likewise, in a note."""

from __future__ import annotations

from pathlib import Path

import pytest

import treesens
from treesens.compiler.memory_estimate import ModelSize, estimate_mb
from treesens.questions import ask, cores
from treesens.questions.cores import capped_threads
from treesens.questions.executors.machine_cap import capped_workers
from treesens.tests.conftest import treesens_here

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MODEL = str(EXAMPLES / "breast_cancer_xgb.json")


@pytest.fixture(scope="module")
def ensemble():
    return treesens.load_model(MODEL)


def test_jobs_within_the_cores_start_as_asked():
    capped = capped_workers(2, cores=4)
    assert (capped.workers, capped.why) == (2, None)


def test_jobs_above_the_cores_start_one_worker_per_core():
    capped = capped_workers(64, cores=2)
    assert capped.workers == 2
    assert capped.why.startswith("64 jobs asked for, 2 workers started, one per core")


def test_jobs_past_the_memory_start_as_many_as_it_holds(ensemble):
    need = estimate_mb(ModelSize.of(ensemble))
    capped = capped_workers(4, ensemble, cores=8, free_mb=2.5 * need)
    assert capped.workers == 2
    assert "as many as the memory available holds" in capped.why


def test_memory_too_short_for_two_workers_still_starts_one(ensemble):
    assert capped_workers(4, ensemble, cores=8, free_mb=10.0).workers == 1


def test_memory_that_holds_every_worker_caps_nothing(ensemble):
    need = estimate_mb(ModelSize.of(ensemble))
    assert capped_workers(4, ensemble, cores=8, free_mb=4 * need).why is None


def test_sweep_jobs_above_the_cores_says_so_and_answers():
    p = treesens_here(
        "sweep", MODEL, "--features", "mean_radius", "--gap", "0.2", "--jobs", "999",
        "--table", "none",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "treesens: warning: 999 jobs asked for, " in p.stderr
    assert "done: 1 insensitive" in p.stderr


def test_threads_within_the_cores_run_as_asked():
    assert capped_threads(2, cores=4) == cores.Capped(2)


def test_threads_above_the_cores_run_one_per_core():
    capped = capped_threads(64, cores=2)
    assert capped.workers == 2
    assert capped.why.startswith("64 solver threads asked for, 2 threads used, one per core")


@pytest.fixture
def one_core(monkeypatch):
    monkeypatch.setattr(cores, "usable_cores", lambda: 1)


def test_a_check_with_threads_above_the_cores_says_so_in_a_note(one_core):
    res = treesens.check(MODEL, vary="mean_texture", gap=0.2, threads=4)
    assert any(n.startswith("4 solver threads asked for, 1 thread used") for n in res.notes)


def test_a_check_with_threads_above_the_cores_solves_with_one_per_core(one_core, monkeypatch):
    seen = []
    solve = ask.solve_query
    monkeypatch.setattr(ask, "solve_query", lambda e, q, **k: seen.append(q) or solve(e, q, **k))
    treesens.check(MODEL, vary="mean_texture", gap=0.2, threads=4)
    assert [q.plan.threads for q in seen] == [1]


def test_a_sweep_with_threads_above_the_cores_says_so_once(one_core):
    p = treesens_here(
        "sweep", MODEL, "--features", "mean_radius,mean_texture", "--threads", "4",
        "--table", "none",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert p.stderr.count("4 solver threads asked for, 1 thread used") == 1
