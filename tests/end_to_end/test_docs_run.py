"""Every code block of README.md and docs/ runs as written, in the environment it names.

A fenced block's info string says where it runs. ``python`` and ``bash`` blocks run here
(in a fresh interpreter / shell) from a copy of a fresh clone: the repository's examples/,
bench/examples/ and docs/img/, with nothing beside it, as a user has it after ``git
clone``; a bash block's ``treesens`` runs the checkout, each command a process of its own
forked from one interpreter that imported treesens once (fork_server.py: about a second
of CPU less a command). A block that needs the paper's benchmark models and data says so
with a second word, ``shared``: ``python shared``, ``bash shared``. Those read ``../shared/benchmarks``,
the folder of the paper's models and data that sits beside the project's clone in its
workspace (``TREESENS_SHARED`` names it elsewhere); it is not part of a user's clone. They
run from a copy with that folder beside it, and skip with a stated reason when it is
absent (with ``TREESENS_REQUIRE_SHARED=1``, as CI sets, a missing folder is a failure).
``bash slow`` marks an example that takes minutes (e.g. the one an issue reported, with
its defaults): it runs as a ``bash`` block does, with ../shared beside the clone when it
reads it, but only under ``pytest -m slow``, as the suite's other long tests. Other second words name an environment where this test does not run the block: ``setup``
(a fresh machine's installation: the README's commands), ``cluster`` (a Dask / Ray
cluster or a job scheduler), ``long`` (runs of hours). ``text`` blocks are not code:
outputs, grammars, command synopses (``treesens check MODEL ...``); a command on a real
file (``examples/...``, ``../shared/...``) shown in a block that does not run is an error:
an example goes in a ``bash`` block, its output in a ``text`` block after it.

The python blocks of one file run in order in one interpreter, as a notebook would: the
unmarked ones without ../shared (so a ``shared`` block in the middle must leave nothing
the later ones need), and, for a file with ``shared`` python blocks, all of them with
../shared. Every doc's first block that runs here needs nothing beside the clone.
docs/extending.md's blocks are run by tests/package/test_extending_*.py, with the plugins
they define.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from subprocess import PIPE

import pytest

from treesens.tests.end_to_end import fork_server

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
RUN_HERE = ("python", "bash")
SHARED = "shared"
SLOW = "slow"  # bash blocks only: run by a test marked slow
ELSEWHERE = ("setup", "cluster", "long")
KNOWN = ("text", "json", "csv", "sens", "")
RUN_ELSEWHERE_FILES = ("extending.md",)
# what a fresh clone holds that the blocks use
CLONE_PARTS = ("examples", "bench/examples")
# a block naming these needs the benchmark folder (bench/examples/*.sens read it)
NEEDS_SHARED = re.compile(r"shared/benchmarks|bench/examples/")

# a command line (a shell prompt's ``$`` or not) and a file of a clone or of ../shared
COMMAND = re.compile(r"^\s*(\$\s+)?(treesens|python|head)\s")
REAL_FILE = re.compile(r"(^|[\s=\"'])(\.\./shared/|examples/|bench/examples/)")

FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```\s*$", re.S | re.M)


def _blocks(path: Path) -> list[tuple[str, str, int]]:
    """(info string, code, line) of each fenced block."""
    text = path.read_text()
    return [
        (m.group(1).strip(), m.group(2), text.count("\n", 0, m.start()) + 1)
        for m in FENCE.finditer(text)
    ]


def _where(info: str) -> tuple[str, str | None]:
    """The block's language and the environment its second word names (None: here)."""
    words = info.split()
    return (words[0] if words else ""), (words[1] if len(words) > 1 else None)


def _runnable(path: Path, kind: str) -> list[tuple[str, int, bool]]:
    """(code, line, needs shared) of the blocks of this kind that run here."""
    out = []
    for info, code, line in _blocks(path):
        lang, where = _where(info)
        if lang == kind and where in (None, SHARED):
            out.append((code, line, where == SHARED))
    return out


def _docs_run_here() -> list[Path]:
    return [p for p in DOCS if p.name not in RUN_ELSEWHERE_FILES]


def _python_cases(with_shared: bool, docs: list[Path] | None = None) -> list:
    """One case per file: its unmarked python blocks (for a fresh clone), or, for a file with
    ``shared`` ones, all of them in order (for a clone with ../shared beside)."""
    out = []
    for path in _docs_run_here() if docs is None else docs:
        blocks = _runnable(path, "python")
        if with_shared:
            if any(shared for _, _, shared in blocks):
                out.append(pytest.param(path, blocks, id=path.name, marks=pytest.mark.shared))
        else:
            plain = [b for b in blocks if not b[2]]
            if plain:
                out.append(pytest.param(path, plain, id=path.name))
    return out


def _bash_cases(with_shared: bool, docs: list[Path] | None = None) -> list:
    out = []
    for path in _docs_run_here() if docs is None else docs:
        for code, line, shared in _runnable(path, "bash"):
            if shared == with_shared:
                marks = [pytest.mark.shared] if shared else []
                out.append(pytest.param(path, code, line, id=f"{path.name}:{line}", marks=marks))
    return out


def _slow_bash_cases(docs: list[Path] | None = None) -> list:
    """The ``bash slow`` blocks: (path, code, line, needs ../shared), marked slow."""
    out = []
    for path in _docs_run_here() if docs is None else docs:
        for info, code, line in _blocks(path):
            if _where(info) == ("bash", SLOW):
                shared = bool(NEEDS_SHARED.search(code))
                marks = [pytest.mark.slow, *([pytest.mark.shared] if shared else [])]
                out.append(
                    pytest.param(path, code, line, shared, id=f"{path.name}:{line}", marks=marks)
                )
    return out


def _session_cache(tmp_path_factory) -> Path:
    """treesens' cache for the blocks (parsed models, learned clauses): one folder for
    every xdist worker of this test session, so that clauses a block learned (data-aware.md's
    probclause blocks: 10 s or more of CPU) are read from it by a later block asking with the
    same parameters, whichever worker runs them (``_run_bash`` lets one block learn clauses
    at a time)."""
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "docs-cache"
    folder.mkdir(exist_ok=True)
    return folder


def _make_clone(root: Path, benchmarks: Path | None, cache: Path) -> Path:
    """A folder as a user's clone has it, ``root/clone``, with ``root/shared/benchmarks``
    beside it when ``benchmarks`` is given, and a ``treesens`` command (``root/bin``) that
    runs the checkout being tested: each command a process of its own, forked from one
    interpreter that imported treesens once (fork_server.py, ``_served``)."""
    work = root / "clone"
    for part in CLONE_PARTS:
        shutil.copytree(REPO / part, work / part, ignore=shutil.ignore_patterns("__py*"))
    (work / "docs" / "img").mkdir(parents=True)
    if benchmarks is not None:
        (root / "shared").mkdir()
        (root / "shared" / "benchmarks").symlink_to(benchmarks)
    (root / "cache").symlink_to(cache)
    bin_dir = root / "bin"
    bin_dir.mkdir()
    client = bin_dir / "client.py"
    client.write_text(fork_server.CLIENT)
    shim = bin_dir / "treesens"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "{client}" "{_socket(work)}" "$@"\n')
    shim.chmod(0o755)
    return work


def _socket(clone: Path) -> Path:
    return clone.parent / "treesens.sock"


# the server of each clone's ``treesens`` commands (``_served``)
_SERVERS: dict[Path, subprocess.Popen] = {}


@contextmanager
def _served(clone: Path):
    """The clone's ``treesens`` commands served (fork_server.py) while in the block; at its
    end no process of the server's (it, a command it forked, a client) is left."""
    server = subprocess.Popen(
        [sys.executable, "-m", "treesens.tests.end_to_end.fork_server", str(_socket(clone))],
        env=_env(clone),
    )
    _SERVERS[clone] = server
    try:
        while not _socket(clone).exists():
            assert server.poll() is None, "the docs' treesens server ended"
            time.sleep(0.05)
        yield clone
    finally:
        server.terminate()
        server.wait()
        del _SERVERS[clone]
        left = _within(10, lambda: _naming(_socket(clone)))
        assert not left, f"the docs' treesens server left processes running: {left}"


def _processes() -> list[tuple[int, int, str]]:
    """(pid, parent's pid, command line) of every process but zombies."""
    out = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            stat = (proc / "stat").read_text()
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:  # ended meanwhile
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if state != "Z":
            out.append((int(proc.name), int(ppid), cmdline))
    return out


def _naming(sock: Path) -> list[str]:
    """The processes naming ``sock`` on their command line: the server, the commands it
    forked (a fork keeps its parent's) and the clients."""
    return [cmd for _, _, cmd in _processes() if str(sock) in cmd]


def _forked(clone: Path) -> list[int]:
    """The commands the clone's server runs now."""
    server = _SERVERS[clone].pid
    return [pid for pid, ppid, _ in _processes() if ppid == server]


def _within(seconds: float, left):
    """``left()`` once it is empty, or at ``seconds``."""
    end = time.monotonic() + seconds
    while (got := left()) and time.monotonic() < end:
        time.sleep(0.1)
    return got


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """A fresh clone: nothing beside it."""
    root, cache = tmp_path_factory.mktemp("docs"), _session_cache(tmp_path_factory)
    with _served(_make_clone(root, None, cache)) as work:
        yield work


@pytest.fixture(scope="module")
def clone_with_shared(tmp_path_factory, shared_dir) -> Path:
    """A clone with the paper's benchmark folder beside it, as the project's workspace has."""
    root, cache = tmp_path_factory.mktemp("docs-shared"), _session_cache(tmp_path_factory)
    with _served(_make_clone(root, shared_dir, cache)) as work:
        yield work


def _env(clone: Path) -> dict:
    env = dict(os.environ)
    env["PATH"] = f"{clone.parent / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["MPLBACKEND"] = "Agg"
    env["TREESENS_CACHE"] = str(clone.parent / "cache")
    return env


def _run_python(path: Path, blocks: list, cwd: Path) -> None:
    script = "\n\n".join(code for code, _, _ in blocks)
    proc = subprocess.run(
        [sys.executable, "-c", script],
        cwd=cwd,
        env=_env(cwd),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, f"{path.name}:\n{proc.stderr[-3000:]}"


@contextmanager
def _learning_alone(code: str, cwd: Path):
    """While a block that learns clauses (``--data-aware clause``/``probclause``) runs, no
    other does: the later ones then read the clauses it cached."""
    if "clause" not in code:
        yield
        return
    with open(cwd.parent / "cache" / "clauses.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _run_bash(path: Path, code: str, line: int, cwd: Path) -> None:
    with _learning_alone(code, cwd):
        proc = _bash(code, cwd)
    assert proc.returncode == 0, f"{path.name}:{line}:\n{proc.stderr[-3000:]}"
    assert "Traceback" not in proc.stderr


def _bash(code: str, cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess:
    """The block run by bash, in a session of its own, all of which is killed at its
    timeout: its ``treesens`` clients, and so the commands they were served."""
    args = ["bash", "-e", "-o", "pipefail", "-c", code]
    with subprocess.Popen(
        args, cwd=cwd, env=_env(cwd), stdout=PIPE, stderr=PIPE, text=True, start_new_session=True
    ) as p:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate(timeout=60)  # its streams close as its commands end
            raise
    return subprocess.CompletedProcess(args, p.returncode, out, err)


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_every_code_block_says_where_it_runs(path):
    for info, _, line in _blocks(path):
        lang, where = _where(info)
        ok = (
            (lang in RUN_HERE and where in (None, SHARED, *ELSEWHERE))
            or (lang == "bash" and where == SLOW)
            or (lang in KNOWN and not where)
        )
        assert ok and len(info.split()) <= 2, (
            f"{path.name}:{line}: the block '```{info}' says neither what nor where"
        )


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_a_block_run_here_is_marked_shared_exactly_when_it_needs_the_benchmarks(path):
    for code, line, shared in _runnable(path, "python") + _runnable(path, "bash"):
        needs = bool(NEEDS_SHARED.search(code))
        problem = (
            "reads ../shared/benchmarks but is not marked '```bash shared' / '```python shared'"
            if needs
            else "is marked shared but reads nothing of ../shared/benchmarks"
        )
        assert needs == shared, f"{path.name}:{line}: the block {problem}"


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_a_command_on_a_real_file_is_in_a_block_that_runs(path):
    for info, code, line in _blocks(path):
        lang, _ = _where(info)
        if lang in RUN_HERE:
            continue
        for k, text in enumerate(code.splitlines(), start=line + 1):
            assert not (COMMAND.match(text) and REAL_FILE.search(text)), (
                f"{path.name}:{k}: a command on a real file in a '```{info}' block, which no "
                "test runs: make it a ```bash block (```bash shared if it reads "
                "../shared/benchmarks), its output a ```text block"
            )


@pytest.mark.parametrize("path", _docs_run_here(), ids=lambda p: p.name)
def test_every_docs_first_example_runs_from_a_fresh_clone(path):
    blocks = sorted(_runnable(path, "python") + _runnable(path, "bash"), key=lambda b: b[1])
    if blocks:
        _, line, shared = blocks[0]
        assert not shared, f"{path.name}:{line}: the first example needs ../shared/benchmarks"


def test_a_shared_python_block_is_left_out_of_the_fresh_clone_run_only(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text(
        "```python\na = 1\n```\n\n```python shared\nb = 2\n```\n\n```python\nc = a\n```\n"
    )
    (fresh,) = _python_cases(with_shared=False, docs=[doc])
    (with_shared,) = _python_cases(with_shared=True, docs=[doc])
    assert [code for code, _, _ in fresh.values[1]] == ["a = 1\n", "c = a\n"]
    assert [code for code, _, _ in with_shared.values[1]] == ["a = 1\n", "b = 2\n", "c = a\n"]


def test_a_slow_bash_block_is_run_only_by_the_test_marked_slow(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("```bash\necho quick\n```\n\n```bash slow\ntreesens ../shared/benchmarks\n```\n")
    assert [c.values[1] for c in _bash_cases(with_shared=False, docs=[doc])] == ["echo quick\n"]
    assert _bash_cases(with_shared=True, docs=[doc]) == []
    (slow,) = _slow_bash_cases(docs=[doc])
    assert slow.values[1:] == ("treesens ../shared/benchmarks\n", 5, True)
    assert {m.name for m in slow.marks} == {"slow", "shared"}


@pytest.mark.parametrize(("path", "blocks"), _python_cases(with_shared=False))
def test_the_python_blocks_run_in_order_from_a_fresh_clone(path, blocks, clone):
    _run_python(path, blocks, clone)


@pytest.mark.parametrize(("path", "blocks"), _python_cases(with_shared=True))
def test_the_python_blocks_run_in_order_with_the_benchmarks(path, blocks, clone_with_shared):
    _run_python(path, blocks, clone_with_shared)


@pytest.mark.parametrize(("path", "code", "line"), _bash_cases(with_shared=False))
def test_the_bash_blocks_run_from_a_fresh_clone(path, code, line, clone):
    _run_bash(path, code, line, clone)


@pytest.mark.parametrize(("path", "code", "line"), _bash_cases(with_shared=True))
def test_the_shared_bash_blocks_run_with_the_benchmarks(path, code, line, clone_with_shared):
    _run_bash(path, code, line, clone_with_shared)


@pytest.mark.parametrize(("path", "code", "line", "shared"), _slow_bash_cases())
def test_the_slow_bash_blocks_run(path, code, line, shared, request):
    where = request.getfixturevalue("clone_with_shared" if shared else "clone")
    _run_bash(path, code, line, where)


def test_a_served_treesens_command_ends_with_its_own_exit_code_and_output(clone):
    # fork_server.py's child runs the command as a fresh one would: a bad input is one
    # line on the block's stderr and exit code 2
    p = _bash("treesens check examples/no_such_model.json --vary f0", clone)
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith("treesens: error:") and p.stderr.count("\n") == 1, p.stderr


def test_a_block_killed_at_its_timeout_ends_the_treesens_command_it_was_served(clone):
    # the command waits to read its .sens file, a FIFO no one writes: it runs until killed
    os.mkfifo(clone / "waits.sens")
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            _bash("treesens run waits.sens", clone, timeout=5)
    finally:
        os.unlink(clone / "waits.sens")
    assert not _within(10, lambda: _forked(clone))


def test_a_served_command_reads_numba_s_settings_the_block_sets(clone):
    # numba reads NUMBA_DEBUG_CACHE at import, before the server forks: the command runs
    # in a fresh interpreter, which says what it loads from numba's cache
    ask = "examples/breast_cancer_xgb.json --vary mean_texture --max-gap --timeout 10"
    p = _bash(f"NUMBA_DEBUG_CACHE=1 treesens check {ask}", clone)
    assert p.returncode == 0, p.stderr
    assert "[cache]" in p.stdout


def test_a_served_command_runs_in_a_fresh_interpreter_only_where_the_block_sets_what_imports_read():
    served = {"PATH": "/bin", "NUMBA_CACHE_DIR": "/c"}
    assert not fork_server.needs_fresh_interpreter({**served, "TREESENS_DEBUG": "1"}, served)
    assert fork_server.needs_fresh_interpreter({**served, "NUMBA_CACHE_DIR": "/d"}, served)
    assert fork_server.needs_fresh_interpreter({**served, "PYTHONWARNINGS": "error"}, served)
    assert fork_server.needs_fresh_interpreter({"PATH": "/bin"}, served)
