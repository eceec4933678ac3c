"""No treesens process outlives the command: SIGTERM, SIGHUP and SIGINT run the same
clean-up (solver processes killed, what was written flushed, exit 128 + the signal) within
a bounded time whatever the main thread is doing, and a solver process dies with its
parent even when the parent is killed outright."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from treesens.backends.registry import available
from treesens.interfaces.cli.termination import GRACE
from treesens.tests.processes import sigint_as_from_a_terminal

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc"),
    pytest.mark.skipif(not available("cpsat"), reason="needs ortools (CP-SAT)"),
]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CLI = [sys.executable, "-m", "treesens.interfaces.cli.main"]
WORKER = "treesens.backends.worker_process"
# 435 pairs of features, each solved (no heuristic): a solver process exists for minutes
LONG_SWEEP = [
    "sweep",
    str(EXAMPLES / "breast_cancer_xgb.json"),
    "--subsets",
    "2",
    "--gap",
    "0.2",
    "--no-heuristic",
]
# a command ends this soon after a signal, however busy its main thread: the grace its
# clean-up is given (then a watching thread ends it), and 5 s for a loaded machine
ENDS_WITHIN = GRACE + 5.0
CHURN_QUERY = ["--vary", "DeviceProtection", "--gap", "0.3", "--no-heuristic", "--timeout", "120"]


@pytest.fixture
def churn(shared_dir) -> str:
    # this query stays unknown for minutes: its solver process is busy the whole time
    return str(shared_dir / "churn" / "churn_t500_d6.json")


def _ppid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _alive(pid: int) -> bool:
    """Running (not gone, not a zombie waiting to be reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _workers_under(root: int) -> list[int]:
    """The solver processes whose ancestor is ``root``."""
    return _under(root, WORKER)


def _under(root: int, module: str | None = None) -> list[int]:
    """The processes whose ancestor is ``root`` (running ``python -m module``, if given)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if module is not None and module.encode() not in argv:
            continue
        pid = int(entry)
        up = _ppid(pid)
        while up and up > 1:
            if up == root:
                found.append(pid)
                break
            up = _ppid(up)
    return found


def _start(argv: list[str], *, prefix: tuple[str, ...] = (), **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [*prefix, *CLI, *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_as_from_a_terminal,
        **kw,
    )


def _wait_for_workers(p: subprocess.Popen, count: int = 1, within: float = 120.0) -> list[int]:
    end = time.time() + within
    while time.time() < end:
        pids = _workers_under(p.pid)
        if len(pids) >= count:
            return pids
        if p.poll() is not None:
            pytest.fail(f"the command ended before a solver process started: {p.stderr.read()}")
        time.sleep(0.1)
    p.kill()
    pytest.fail("no solver process started")


def _survivors(pids: list[int], within: float = 2.0) -> list[int]:
    end = time.time() + within
    while time.time() < end:
        left = [pid for pid in pids if _alive(pid)]
        if not left:
            return []
        time.sleep(0.05)
    left = [pid for pid in pids if _alive(pid)]
    for pid in left:  # do not leave them to the next test
        os.kill(pid, signal.SIGKILL)
    return left


# the tgkill system call's number: a signal to one thread of another process
TGKILL = {"x86_64": 234, "aarch64": 131}.get(os.uname().machine)


def _to_a_thread_other_than_main(p: subprocess.Popen, sig: int) -> None:
    """Send ``sig`` to one of the command's threads that is not its main thread, as the
    kernel may choose to (its Python handler still runs in the main thread)."""
    import ctypes

    others = [int(t) for t in os.listdir(f"/proc/{p.pid}/task") if int(t) != p.pid]
    assert others, "the command runs no thread but its main one"
    if ctypes.CDLL(None, use_errno=True).syscall(TGKILL, p.pid, others[0], sig) != 0:
        pytest.fail(f"tgkill failed: {os.strerror(ctypes.get_errno())}")


def _signalled(
    p: subprocess.Popen, sig: int, count: int = 1, to_main: bool = True
) -> tuple[int, str, list[int]]:
    """Send ``sig`` once solver processes run (to the process, or to one of its threads
    other than the main one): (exit code, stderr, the solver processes still alive 1 s
    after the command ended). Handed to another thread, the signal must still be answered
    by the main thread's own clean-up (it wakes every 0.25 s), before the grace ends."""
    workers = _wait_for_workers(p, count)
    if to_main:
        p.send_signal(sig)
    else:
        _to_a_thread_other_than_main(p, sig)
    within = ENDS_WITHIN if to_main else GRACE
    err = _ended(
        p, f"the command did not end within {within:g} s of {signal.Signals(sig).name}", within
    )
    return p.returncode, err, _survivors(workers, within=1.0)


def _ended(p: subprocess.Popen, failure: str, within: float = ENDS_WITHIN) -> str:
    """Wait ``within`` s for the command to end: its stderr (else kill it and every
    process under it, which would hold its stderr open, and fail)."""
    try:
        return p.communicate(timeout=within)[1]
    except subprocess.TimeoutExpired:
        for pid in [*_under(p.pid), p.pid]:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        p.wait()
        p.stderr.close()
        pytest.fail(failure)


def _time_is_up(p: subprocess.Popen) -> None:
    """``timeout``'s limit is reached now: its own timer signals it with SIGALRM, after
    which it sends SIGTERM and exits 124 (a fixed limit may come before the first solver
    process on a loaded machine, and the test would not test what it says)."""
    p.send_signal(signal.SIGALRM)


CODES = {signal.SIGTERM: 143, signal.SIGHUP: 129, signal.SIGINT: 130}


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_to_a_sweep_leaves_no_solver_process(sig):
    code, err, left = _signalled(_start(LONG_SWEEP), sig)
    assert left == []
    assert code == CODES[sig], err


def test_sigterm_names_the_signal_in_one_line():
    code, err, _ = _signalled(_start(LONG_SWEEP), signal.SIGTERM)
    assert err.strip().splitlines()[-1] == "treesens: terminated by SIGTERM"


def test_a_sweep_cut_short_says_its_out_file_holds_the_answers_for_resume(tmp_path):
    out = tmp_path / "out.jsonl"
    p = _start([*LONG_SWEEP, "--out", str(out)])
    end = time.time() + 120
    while time.time() < end and not (out.exists() and out.read_text().strip()):
        time.sleep(0.1)
    code, err, _ = _signalled(p, signal.SIGINT)
    assert code == 130, err
    assert err.strip().splitlines()[-2:] == [
        f"the answers so far are in {out}: run the sweep again with --resume {out} to ask the rest",
        "treesens: interrupted",
    ]


def test_a_sweep_cut_short_without_out_says_its_answers_are_not_kept():
    code, err, _ = _signalled(_start(LONG_SWEEP), signal.SIGINT)
    assert err.strip().splitlines()[-2] == (
        "the answers so far are not kept: --out FILE keeps each as it ends, for --resume"
    )


def test_sigterm_on_a_sweep_keeps_every_line_written_to_out(tmp_path):
    out = tmp_path / "out.jsonl"
    p = _start([*LONG_SWEEP, "--out", str(out)])
    _wait_for_workers(p)
    end = time.time() + 120
    while time.time() < end and len(out.read_text().splitlines() if out.exists() else []) < 2:
        time.sleep(0.1)
    code, err, left = _signalled(p, signal.SIGTERM)
    assert code == 143, err
    lines = out.read_text().splitlines()
    assert len(lines) >= 2
    assert all(json.loads(line)["status"] != "error" for line in lines)


def test_a_killed_parent_takes_its_solver_process_with_it():
    p = _start(LONG_SWEEP)
    workers = _wait_for_workers(p)
    p.kill()  # SIGKILL: no clean-up runs in the parent
    p.wait(10)
    assert _survivors(workers) == []


def test_timeout_on_a_sweep_leaves_no_solver_process():
    p = _start(LONG_SWEEP, prefix=("timeout", "600"))
    workers = _wait_for_workers(p)
    _time_is_up(p)
    _ended(p, f"the sweep did not end within {ENDS_WITHIN:g} s of timeout's SIGTERM")
    assert p.returncode == 124
    assert _survivors(workers) == []


@pytest.mark.shared
def test_sigterm_to_a_sweep_with_jobs_does_not_wait_for_its_running_queries(churn):
    # each query stays unknown for minutes: the pool's processes are busy the whole time
    features = "DeviceProtection,OnlineBackup,OnlineSecurity,TechSupport"
    p = _start(["sweep", churn, "--features", features, *CHURN_QUERY[2:], "--jobs", "2"])
    _wait_for_workers(p, count=2)
    processes = _under(p.pid)  # the pool's processes and their solver processes
    p.send_signal(signal.SIGTERM)  # to the sweep's process alone, as `kill PID` sends it
    err = _ended(p, f"the sweep did not end within {GRACE:g} s of SIGTERM", GRACE)
    assert p.returncode == 143, err
    assert _survivors(processes, within=1.0) == []


@pytest.mark.shared
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_to_check_leaves_no_solver_process(churn, sig):
    code, err, left = _signalled(_start(["check", churn, *CHURN_QUERY]), sig)
    assert left == []
    assert code == CODES[sig], err


@pytest.mark.shared
def test_a_killed_parent_takes_its_busy_solver_process_with_it(churn):
    p = _start(["check", churn, *CHURN_QUERY])
    workers = _wait_for_workers(p)
    time.sleep(1.0)  # well inside the solve
    p.kill()
    p.wait(10)
    assert _survivors(workers) == []


@pytest.mark.shared
def test_timeout_on_check_leaves_no_solver_process(churn):
    p = _start(["check", churn, *CHURN_QUERY], prefix=("timeout", "600"))
    workers = _wait_for_workers(p)
    _time_is_up(p)
    _ended(p, f"the check did not end within {ENDS_WITHIN:g} s of timeout's SIGTERM")
    assert p.returncode == 124
    assert _survivors(workers) == []


@pytest.mark.shared
def test_sigterm_to_a_race_leaves_none_of_its_solver_processes(churn):
    if not (available("z3") and available("highs")):
        pytest.skip("the race needs z3 and highs")
    p = _start(["check", churn, *CHURN_QUERY, "--backend", "race:cpsat,z3,highs"])
    code, err, left = _signalled(p, signal.SIGTERM, count=3)
    assert left == []
    assert code == 143, err


@pytest.mark.shared
@pytest.mark.skipif(TGKILL is None, reason="tgkill's number on this machine is not known")
def test_sigterm_handed_to_another_thread_ends_a_race_at_once(churn):
    if not (available("z3") and available("highs")):
        pytest.skip("the race needs z3 and highs")
    p = _start(["check", churn, *CHURN_QUERY, "--backend", "race:cpsat,z3,highs"])
    code, err, left = _signalled(p, signal.SIGTERM, count=3, to_main=False)
    assert left == []
    assert code == 143, err


@pytest.mark.shared
@pytest.mark.skipif(TGKILL is None, reason="tgkill's number on this machine is not known")
def test_sigterm_handed_to_another_thread_ends_a_check_at_once(churn):
    code, err, left = _signalled(
        _start(["check", churn, *CHURN_QUERY]), signal.SIGTERM, to_main=False
    )
    assert left == []
    assert code == 143, err


@pytest.mark.shared
def test_sigterm_to_run_leaves_no_solver_process(churn, tmp_path):
    sens = tmp_path / "q.sens"
    sens.write_text(
        f'model "{churn}"\n\nquery long {{\n  vary DeviceProtection\n  gap 0.3\n'
        "  option heuristic = false\n}\n"
    )
    code, err, left = _signalled(_start(["run", str(sens), "--timeout", "120"]), signal.SIGTERM)
    assert left == []
    assert code == 143, err


@pytest.mark.shared
def test_sigterm_to_compare_leaves_no_solver_process(churn):
    p = _start(["compare", churn, *CHURN_QUERY, "--backends", "cpsat"])
    code, err, left = _signalled(p, signal.SIGTERM)
    assert left == []
    assert code == 143, err


# a plugin whose main-thread loop runs in a finaliser, where Python drops the exception a
# signal's handler raises ("Exception ignored in ..."): the command never sees the signal
STUBBORN_PLUGIN = """
import sys
import time


class Finalised:
    def __del__(self):
        time.sleep(0.05)


print("ready", file=sys.stderr, flush=True)
while True:
    Finalised()
"""


def test_sigterm_ends_the_command_even_when_its_main_thread_drops_the_signal(tmp_path):
    plugin = tmp_path / "stubborn.py"
    plugin.write_text(STUBBORN_PLUGIN)
    model = str(EXAMPLES / "breast_cancer_xgb.json")
    p = _start(["check", model, "--vary", "mean_radius", "--plugin", str(plugin)])
    assert p.stderr.readline().strip() == "ready"
    p.send_signal(signal.SIGTERM)
    err = _ended(p, f"the command did not end within {ENDS_WITHIN:g} s of SIGTERM")
    assert p.returncode == 143
    assert err.strip().splitlines()[-1] == "treesens: terminated by SIGTERM"


def test_a_worker_whose_parent_is_already_gone_exits_at_once():
    # started "for" a parent that is not its parent: the death of the parent happened
    # before the worker could ask to be told of it
    p = subprocess.Popen(
        [sys.executable, "-m", WORKER, "treesens.backends.cpsat", "0", "1"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert p.wait(30) == 0
    finally:
        p.kill()
        p.stdin.close()
        p.stdout.close()


def test_a_busy_worker_exits_when_its_parent_pipe_closes():
    # the portable watchdog: the solve hangs, the parent's end of the pipe closes
    from treesens.backends.worker import _write_msg
    from treesens.compiler.ir import Problem, Var
    from treesens.compiler.solver import SolveOptions

    p = subprocess.Popen(
        [sys.executable, "-m", WORKER, "treesens.tests.fake_backend", "0", str(os.getpid())],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        problem = Problem((Var("fake:hang", "bool", 0.0, 1.0),), ())
        _write_msg(p.stdin.fileno(), (problem, SolveOptions(deadline=time.time() + 3600), None))
        time.sleep(1.0)
        assert p.poll() is None  # hanging in the solve
        p.stdin.close()
        assert p.wait(5) == 0
    finally:
        p.kill()
        p.stdout.close()


# a max gap whose compiled box search runs past a minute (tenure's bounds stay about 1e-3
# apart at 60 s; PaymentMethod's search completed in 6 s, before a sweep's first status line)
LONG_MAX_GAP = ["--vary", "tenure", "--max-gap", "--max-gap-tolerance", "1e-6"]


def _in_its_box_search(p: subprocess.Popen, within: float = 120.0) -> list[str]:
    """Read the command's stderr until a progress line of its box search past the first
    box: the lines read (the search then runs in its compiled kernel)."""
    lines: list[str] = []
    end = time.time() + within
    while time.time() < end:
        line = p.stderr.readline()
        if not line:
            pytest.fail("the command ended before its box search: " + "".join(lines))
        lines.append(line)
        if "searching, " in line and "(searching, 1 box)" not in line:
            return lines
    p.kill()
    pytest.fail("no progress line of the box search")


@pytest.mark.shared
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_in_the_compiled_max_gap_search_prints_the_bounds_so_far(churn, sig):
    p = subprocess.Popen(
        [*CLI, "check", churn, *LONG_MAX_GAP, "--timeout", "120"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_as_from_a_terminal,
    )
    _in_its_box_search(p)
    time.sleep(0.5)
    p.send_signal(sig)
    out, err = p.communicate(timeout=ENDS_WITHIN)
    assert p.returncode == CODES[sig], err
    assert "internal error" not in err
    assert "max gap in [" in out and "not proven (interrupted;" in out


@pytest.mark.shared
def test_a_signal_in_a_sweeps_max_gap_writes_its_bounds_so_far_to_out(churn, tmp_path):
    out = tmp_path / "out.jsonl"
    p = subprocess.Popen(
        [*CLI, "sweep", churn, "--features", LONG_MAX_GAP[1], *LONG_MAX_GAP[2:]]
        + ["--timeout", "120", "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    while "max gap so far" not in (line := p.stderr.readline()):  # its first status line
        assert line, "the sweep ended before its query's first status line"
    time.sleep(1.0)  # within the query's search (a sweep's status lines come every 10 s)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=ENDS_WITHIN)
    assert p.returncode == 143, err
    assert "not proven (interrupted)" in err  # its progress line
    (line,) = [json.loads(x) for x in out.read_text().splitlines()]
    assert line["max_gap"]["stopped_by"] == "interrupted" and not line["max_gap"]["proven"]
    assert line["max_gap"]["lower"] <= line["max_gap"]["upper"]


def test_ctrl_c_to_a_sweep_on_a_local_dask_cluster_prints_no_worker_traceback():
    # a terminal's Ctrl-C reaches the whole process group, the cluster's processes too
    pytest.importorskip("distributed")
    p = _start([*LONG_SWEEP, "--executor", "dask", "--jobs", "2"], start_new_session=True)
    _wait_for_workers(p)
    os.killpg(p.pid, signal.SIGINT)
    err = _ended(p, "the sweep did not end after Ctrl-C", within=ENDS_WITHIN + 10.0)
    assert p.returncode == 130, err
    assert "Traceback" not in err and err.rstrip().endswith("treesens: interrupted")
