"""Shared fixtures: where the benchmark models live, and the markers.

Tests that need ``../shared/benchmarks`` (next to the repository, absent from a user's
clone) skip with a stated reason, unless ``TREESENS_REQUIRE_SHARED=1`` (CI), where a
missing folder is a failure. ``TREESENS_SHARED`` overrides the location.

The libraries' OpenMP pools (XGBoost's, LightGBM's, scikit-learn's histogram boosting,
OpenBLAS) run one thread each in the tests and the commands they start
(``OMP_NUM_THREADS=1`` unless set): their threads spin after each parallel loop, and
training the tests' small models took 3x the CPU with them on CI's two cores, two
workers (test_categorical_missing.py 50 -> 16 CPU s). treesens asks one thread of the
libraries where it predicts; a test of what it does to a library's threads runs its
process without the setting (test_xgboost_capi.test_a_lean_replay_starts_no_openmp_thread).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# before any library loads its OpenMP runtime (they read it once); xdist's workers
# inherit it
os.environ.setdefault("OMP_NUM_THREADS", "1")

REPO_ROOT = Path(__file__).resolve().parents[1]
SKIP_REASON = "needs ../shared/benchmarks (not in a user's clone)"


def shared_benchmarks() -> Path | None:
    """The benchmarks folder, or None when it is not there."""
    env = os.environ.get("TREESENS_SHARED")
    if env:
        p = Path(env)
        # accept either the shared folder itself or its benchmarks subfolder
        candidates = [p / "benchmarks", p] if p.name != "benchmarks" else [p]
    else:
        # beside the repository; when this module runs from an installed copy
        # (treesens.tests in site-packages), beside the folder the tests are run from
        candidates = [
            REPO_ROOT.parent / "shared" / "benchmarks",
            Path.cwd().resolve().parent / "shared" / "benchmarks",
        ]
    for c in candidates:
        if (c / "adult").is_dir():
            return c
    return None


def require_shared() -> Path:
    """The benchmarks folder; skip (or fail, with TREESENS_REQUIRE_SHARED=1) if missing."""
    p = shared_benchmarks()
    if p is None:
        if os.environ.get("TREESENS_REQUIRE_SHARED") == "1":
            pytest.fail(f"TREESENS_REQUIRE_SHARED=1 but no benchmarks folder found ({SKIP_REASON})")
        pytest.skip(SKIP_REASON)
    return p


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    return require_shared()


def pytest_configure(config):
    # also declared in pyproject.toml; repeated so the markers exist however pytest is run
    config.addinivalue_line("markers", "slow: long-running tests (deselect with -m 'not slow')")
    config.addinivalue_line("markers", "shared: needs ../shared/benchmarks")
    stale = stale_installed_files()
    if stale:
        pytest.exit(
            f"the installed treesens differs from this checkout in {len(stale)} file(s) "
            f"(e.g. {stale[0]}): the tests would test the installed copy; reinstall it "
            "(pip install -e . for development, or pip install '.[test]')",
            returncode=4,
        )
    _byte_compile_checkout(config)
    _start_kernel_compile(config)


def pytest_unconfigure(config):
    proc = getattr(config, "_treesens_kernel_compile", None)
    if proc is not None and proc.poll() is None:
        proc.terminate()  # the session ended first (-x, an interrupt)
        proc.wait()


def _byte_compile_checkout(config) -> None:
    """With PYTHONDONTWRITEBYTECODE set and this checkout imported (not an installed copy,
    which pip byte-compiled), write the checkout's bytecode (``__pycache__``, ignored by
    git) once, before the workers start: else every interpreter a test starts (a command,
    an example, a docs block, a solver process) compiled the modules it imports from
    source, about 0.7 CPU s of the 1.7 a ``treesens`` command took to start. Python
    checks each file against its source's time and size, so an edited file is compiled
    again; compileall skips the files already compiled."""
    import compileall
    import re
    import sys

    if hasattr(config, "workerinput") or not sys.dont_write_bytecode:
        return
    import treesens

    if Path(treesens.__file__).resolve().parent != REPO_ROOT:
        return
    # bench/results holds other checkouts and outputs; .venv and the like are not ours
    skip = re.compile(
        re.escape(str(REPO_ROOT)) + r"[\\/](bench[\\/]results|\.[^\\/]*|build|dist)([\\/]|$)"
    )
    compileall.compile_dir(REPO_ROOT, quiet=2, rx=skip)


def _start_kernel_compile(config) -> None:
    """Under pytest-xdist with two or more workers, on an empty numba cache, compile the
    max-gap box search once, with the kernels rebuilding a certificate's proof, in a
    process beside the workers: a worker (or a command it runs) that needs the kernel
    first waits for that build (search/gap_kernel.prepare's lock) instead of compiling its
    own, about a minute of CPU per worker."""
    import subprocess
    import sys

    if hasattr(config, "workerinput"):  # a worker: the controller starts it
        return
    workers = getattr(config.option, "numprocesses", None)
    if not isinstance(workers, int) or workers < 2:
        return
    from treesens.search import gap_kernel_compile

    if not gap_kernel_compile.available() or not gap_kernel_compile.compiles_first(proof=True):
        return
    code = (
        "from treesens.search import compiled_proof, gap_kernel\n"
        "gap_kernel.prepare(rebuild=compiled_proof.ready_rebuild)"
    )
    config._treesens_kernel_compile = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=this_treesens_env(),
    )


def this_treesens_env() -> dict:
    """The environment for a fresh interpreter that imports the ``treesens`` these tests
    import: in a clone named ``treesens`` pytest imports the clone, where a bare interpreter
    would import the installed copy, whose numba cache (beside its files) is another."""
    import os

    import treesens

    here = str(Path(treesens.__file__).resolve().parent.parent)
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": here if not path else here + os.pathsep + path}


def stale_installed_files() -> list[str]:
    """Source files where the imported ``treesens`` and this checkout differ.

    The tests import ``treesens``, which is the installed package, not necessarily the
    checkout they sit in (a non-editable ``pip install`` copies the files): results would
    silently describe old code.
    """
    import treesens

    installed = Path(treesens.__file__).resolve().parent
    if installed == REPO_ROOT:
        return []
    differ = []
    for f in sorted(installed.rglob("*.py")):
        rel = f.relative_to(installed)
        mine = REPO_ROOT / rel
        if not mine.is_file() or mine.read_bytes() != f.read_bytes():
            differ.append(str(rel))
    for sub in ("compiler", "backends", "readers"):
        for mine in sorted((REPO_ROOT / sub).rglob("*.py")):
            if not (installed / mine.relative_to(REPO_ROOT)).is_file():
                differ.append(str(mine.relative_to(REPO_ROOT)))
    return differ


def run_treesens(*args, cwd=None, timeout: float = 600, env=None):
    """Run the ``treesens`` command in a fresh interpreter; a CompletedProcess (text)."""
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "treesens.interfaces.cli.main", *[str(a) for a in args]]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=timeout, env=env)


def treesens_here(*args, cwd=None):
    """Run the ``treesens`` command's :func:`main` in this process, its output captured; a
    CompletedProcess (text) as :func:`run_treesens` gives, without the 2 s or so a fresh
    interpreter takes to start. For tests of what a command answers and prints; a test of
    the process itself (start-up, imports, signals, the environment, output written by
    solver processes) runs it with :func:`run_treesens`."""
    import io
    import subprocess
    import warnings
    from contextlib import redirect_stderr, redirect_stdout

    from treesens.interfaces.cli.main import main

    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd() if cwd is not None else None
    try:
        if cwd is not None:
            os.chdir(cwd)
        # warnings printed on stderr, as a fresh interpreter prints them
        with redirect_stdout(out), redirect_stderr(err), warnings.catch_warnings():
            warnings.resetwarnings()
            warnings.simplefilter("default")
            for quiet in (DeprecationWarning, PendingDeprecationWarning, ImportWarning):
                warnings.simplefilter("ignore", quiet)
            try:
                code = main(argv)
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else 1
    finally:
        if here is not None:
            os.chdir(here)
    return subprocess.CompletedProcess(["treesens", *argv], code, out.getvalue(), err.getvalue())


def json_lines(stdout: str) -> list[dict]:
    """Parse JSON Lines output; fails if any stdout line is not a JSON object."""
    import json

    out = []
    for line in stdout.splitlines():
        obj = json.loads(line)
        assert isinstance(obj, dict), line
        out.append(obj)
    return out


REQUIRED_FIELDS = (
    "query",
    "status",
    "backend",
    "features",
    "gap",
    "witness",
    "outputs",
    "validated",
    "distance",
    "time",
    "error",
)


@pytest.fixture(scope="session", autouse=True)
def _model_cache_of_the_session(tmp_path_factory):
    """treesens' caches (the command line's parsed models, readers/model_cache.py; learned
    clauses, driver/clauses.py) in a folder of the test session, not the user's ~/.cache
    (the commands the tests run inherit it)."""
    if "TREESENS_CACHE" not in os.environ:
        os.environ["TREESENS_CACHE"] = str(tmp_path_factory.mktemp("treesens-cache"))
    yield


@pytest.fixture(autouse=True)
def _no_load_step_lines_by_the_clock(monkeypatch):
    """A model's load (and a pipeline's fold within it) says its line once it has run
    load_notes.AFTER seconds: on a loaded machine a small pipeline's fold can take that long, and a refusal
    asserted to be the one line said would get a second. In this process no step is long
    unless a test says so (tests/frontends/test_load_progress.py sets AFTER itself)."""
    from treesens.readers import load_notes

    monkeypatch.setattr(load_notes, "AFTER", 3600.0)
