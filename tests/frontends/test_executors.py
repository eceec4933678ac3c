"""Executors: the local process pool, dask and ray run a sweep's queries with the same
verdicts as the sequential sweep; a task whose worker dies or that raises is retried once,
then reported; nothing is lost or duplicated; --shard partitions the sweep exactly."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import treesens
from treesens.answers.result import ERROR
from treesens.compiler.errors import InputError
from treesens.questions.ask import Task
from treesens.questions.campaign import answer_all
from treesens.questions.executors import Failure, make_executor, parse_executor
from treesens.questions.query_build import query_from_keywords
from treesens.questions.sweep import parse_shard, shard_of
from treesens.tests import executor_tasks as tasks
from treesens.tests.conftest import treesens_here

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
BENCH = Path(__file__).resolve().parents[2] / "bench"
MODEL = str(EXAMPLES / "breast_cancer_xgb.json")
DETAILS = str(EXAMPLES / "breast_cancer_details.csv")
FEATURES = ["mean_radius", "mean_texture", "mean_perimeter", "mean_area"]
QUERY = {"gap": 0.2, "timeout": 30}


def _engine(kind: str):
    """The executor ``kind`` on 2 local workers, or a skip when its extra is missing."""
    module = {"local": None, "dask": "distributed", "ray": "ray"}[kind]
    if module and importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} not installed (pip install 'treesens[{kind}]')")
    return make_executor(kind, 2)


@pytest.fixture(scope="module", params=["local", "dask", "ray"])
def engine(request):
    ex = _engine(request.param)
    yield ex
    ex.close()


@pytest.fixture(scope="module")
def ensemble():
    return treesens.load_model(MODEL, details=DETAILS)


@pytest.fixture(scope="module")
def sequential(ensemble):
    return treesens.sweep(ensemble, features=FEATURES, **QUERY)


def _outcomes(engine, fn, shared, n=4) -> dict:
    seen = list(engine.run(fn, shared, list(range(n))))
    indices = [i for i, _ in seen]
    assert sorted(indices) == list(range(n)), f"lost or duplicated: {indices}"
    return dict(seen)


@pytest.fixture(scope="module")
def swept(engine, ensemble):
    return treesens.sweep(ensemble, features=FEATURES, executor=engine, **QUERY)


def test_sweep_on_the_executor_gives_the_sequential_verdicts(swept, sequential):
    assert [r.query for r in swept] == FEATURES
    assert [r.status for r in swept] == [r.status for r in sequential]


def test_witnesses_found_on_the_executor_are_replay_validated(swept):
    assert all(r.validated for r in swept if r.status == "sensitive")


def test_an_audit_on_the_executor_gives_the_answers_of_one_job(engine, ensemble):
    """On the module's engine (a dask or ray cluster started once for the file's tests)."""
    from treesens.questions.audit import audit
    from treesens.tests.frontends.test_audit import _breast_cancer_frame

    df = _breast_cancer_frame(ensemble).head(24)
    one = audit(ensemble, df, ["worst_texture"], gap=0.1)
    there = audit(ensemble, df, ["worst_texture"], gap=0.1, executor=engine)
    pd.testing.assert_frame_equal(one, there)


def test_every_task_answers_once(engine, tmp_path):
    assert _outcomes(engine, tasks.double, str(tmp_path)) == {i: 2 * i for i in range(4)}


def test_a_task_whose_worker_dies_once_is_retried(engine, tmp_path):
    assert _outcomes(engine, tasks.die_once, str(tmp_path)) == {i: 2 * i for i in range(4)}


def test_a_task_that_always_kills_its_worker_is_reported_and_the_others_answer(engine, tmp_path):
    out = _outcomes(engine, tasks.die_always, str(tmp_path))
    assert isinstance(out[0], Failure)
    assert {i: out[i] for i in (1, 2, 3)} == {1: 2, 2: 4, 3: 6}


def test_a_task_that_raises_once_is_retried(engine, tmp_path):
    assert _outcomes(engine, tasks.raise_once, str(tmp_path)) == {i: 2 * i for i in range(4)}


def test_a_task_that_always_raises_is_reported_with_its_error(engine, tmp_path):
    out = _outcomes(engine, tasks.raise_always, str(tmp_path))
    assert isinstance(out[0], Failure) and "always fails" in out[0].message
    assert out[3] == 6


class _FailingExecutor:
    """Reports every task as failed, in reverse order."""

    workers = 1

    def run(self, fn, shared, items):
        for i in reversed(range(len(items))):
            yield i, Failure("worker lost")

    def close(self):
        pass


def test_a_failed_task_becomes_an_error_result_of_its_query(ensemble):
    from treesens.interfaces.api import make_query

    seen = []
    tasks = [Task.of(ensemble, make_query([f], gap=0.2)) for f in ("mean_radius", "mean_area")]
    results = answer_all(ensemble, tasks, on_result=seen.append, executor=_FailingExecutor())
    assert [r.query for r in results] == ["mean_radius", "mean_area"]
    assert [r.query for r in seen] == ["mean_area", "mean_radius"]
    assert all(r.status == ERROR and "worker lost" in r.error for r in results)


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_shards_partition_the_queries_exactly(n):
    items = list(range(10))
    parts = [shard_of(items, (i, n)) for i in range(n)]
    assert sorted(x for p in parts for x in p) == items


@pytest.mark.parametrize("text", ["2/2", "-1/3", "a/b", "3"])
def test_a_shard_outside_its_count_is_an_input_error(text):
    with pytest.raises(InputError):
        parse_shard(text)


def test_executor_specs_name_a_kind_and_an_optional_address():
    assert parse_executor("dask=tcp://h:8786") == ("dask", "tcp://h:8786")
    assert parse_executor("ray") == ("ray", None)


def test_an_unknown_executor_is_an_input_error():
    with pytest.raises(InputError, match="unknown executor"):
        parse_executor("spark")


def test_a_dask_address_where_no_scheduler_answers_is_an_input_error(monkeypatch):
    pytest.importorskip("distributed")
    from treesens.questions.executors import dask

    monkeypatch.setattr(dask, "CONNECT_SECONDS", 1.0)
    with pytest.raises(InputError, match="no Dask scheduler answers there"):
        make_executor("dask=tcp://127.0.0.1:1")


def test_a_dask_address_where_no_scheduler_answers_gives_up_after_its_own_connect_timeout():
    """5 s, as Ray's, not Dask's 30 s (distributed.comm.timeouts.connect)."""
    pytest.importorskip("distributed")
    t0 = time.monotonic()
    with pytest.raises(InputError, match=r"after 5 s"):
        make_executor("dask=tcp://127.0.0.1:1")
    assert time.monotonic() - t0 < 15


def _sweep(*args: str) -> subprocess.CompletedProcess:
    return treesens_here(
        "sweep", MODEL, "--details", DETAILS, "--features", ",".join(FEATURES),
        "--gap", "0.2", "--timeout", "30", *args,
    )  # fmt: skip


def _queries(path: Path) -> list[str]:
    return [json.loads(ln)["query"] for ln in path.read_text().splitlines() if ln.strip()]


def test_sweep_with_two_jobs_writes_each_result_once_and_the_table_in_query_order(tmp_path):
    out = tmp_path / "sweep.jsonl"
    p = _sweep("--jobs", "2", "--out", str(out), "--table", "csv")
    assert p.returncode == 0, p.stderr
    assert sorted(_queries(out)) == sorted(FEATURES)
    rows = p.stdout.splitlines()[1:]
    assert [r.split(",")[0] for r in rows] == FEATURES


def test_shards_merged_by_resume_answer_every_query_without_rerunning(tmp_path):
    for i in range(2):
        p = _sweep("--shard", f"{i}/2", "--out", str(tmp_path / f"s{i}.jsonl"), "--table", "none")
        assert p.returncode == 0, p.stderr
    merged = tmp_path / "all.jsonl"
    merged.write_text((tmp_path / "s0.jsonl").read_text() + (tmp_path / "s1.jsonl").read_text())
    assert sorted(_queries(merged)) == sorted(FEATURES)
    p = _sweep("--resume", str(merged), "--table", "none")
    assert p.returncode == 0 and "4 results reused, 0 rerun" in p.stderr, p.stderr


def _bench_list(*args: str) -> list[str]:
    p = subprocess.run(
        [sys.executable, str(BENCH / "run.py"), "--tier", "quick", "--list", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    return p.stdout.split()


@pytest.mark.shared
def test_benchmark_shards_partition_the_instances_exactly(shared_dir):
    parts = [_bench_list("--shard", f"{i}/3") for i in range(3)]
    assert sorted(x for p in parts for x in p) == sorted(_bench_list())


def test_a_ray_address_where_no_cluster_answers_is_an_input_error():
    from treesens.questions.executors.ray import _connect

    class NeverCalled:
        def init(self, **kw):
            raise AssertionError("ray.init is not reached: the address was probed first")

    with pytest.raises(InputError, match="no Ray cluster answers there"):
        _connect(NeverCalled(), "127.0.0.1:1")


def test_ray_auto_with_no_cluster_on_this_node_is_an_input_error():
    from treesens.questions.executors.ray import _connect

    class NoCluster:  # what ray.init(address="auto") raises with no cluster on this node
        def init(self, **kw):
            raise ConnectionError("Could not find any running Ray instance.")

    with pytest.raises(InputError, match="no Ray cluster answers there"):
        _connect(NoCluster(), "auto")


def test_a_sweep_on_workers_says_they_are_starting_before_the_first_answer():
    from contextlib import contextmanager

    from treesens.questions.campaign import Campaign, sweep_campaign

    class InProcess:
        workers = 3

        def run(self, fn, shared, items):
            for i, item in enumerate(items):
                yield i, fn(shared, item)

    said: list[str] = []

    class Shown:
        def advance(self, res):
            said.append("answer")

        def note(self, text):
            said.append(text)

        def status(self, text):
            said.append(text)

        def close(self):
            pass

    @contextmanager
    def display(_total):
        yield Shown()

    ens = treesens.load_model(MODEL, details=DETAILS)

    def make(vary, name=""):
        return query_from_keywords(vary, QUERY, ens=ens, name=name)

    sweep_campaign(ens, [(f,) for f in FEATURES[:2]], make, Campaign(InProcess()), display=display)
    assert said == ["starting 3 workers (each reads the model once)...", "answer", "answer"]
