"""A script that asks treesens for worker processes (jobs=2) without the
``if __name__ == "__main__":`` guard: each spawned worker imports the script afresh, so
the call is refused in the workers and the parent says why, once, instead of waiting."""

import subprocess
import sys
import textwrap

import pytest

from treesens.tests.conftest import REPO_ROOT, this_treesens_env

MODEL = REPO_ROOT / "examples" / "breast_cancer_xgb.json"
SWEEP = f"rows = treesens.sweep({str(MODEL)!r}, features=FOUR, gap=0.2, jobs=2, progress=False)"
GUARD = 'under `if __name__ == "__main__":` (docs/distributed.md)'
HEAD = 'import treesens\nFOUR = ["mean_radius", "mean_texture", "mean_perimeter", "mean_area"]\n'


def run_script(tmp_path, body: str) -> subprocess.CompletedProcess:
    script = tmp_path / "sweep_script.py"
    script.write_text(HEAD + textwrap.dedent(body))
    return subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,  # without the refusal the parent waits for ever
        env=this_treesens_env(),
        cwd=tmp_path,
    )


def test_a_script_without_the_main_guard_ends_with_one_line_naming_the_guard(tmp_path):
    done = run_script(tmp_path, f"{SWEEP}\nprint('answered', len(rows))\n")
    assert done.returncode != 0
    assert "answered" not in done.stdout
    assert done.stderr.count(GUARD) == 1, done.stderr[-2000:]
    assert done.stderr.count("Traceback") == 1  # the script's own, none from the workers


def test_the_same_script_with_the_main_guard_answers_on_two_workers(tmp_path):
    body = f"""
    if __name__ == "__main__":
        {SWEEP}
        print('answered', [str(r.status) for r in rows])
    """
    done = run_script(tmp_path, body)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "answered" in done.stdout
    assert "error" not in done.stdout


def test_a_script_without_the_main_guard_on_a_local_dask_cluster_ends_with_one_line(tmp_path):
    pytest.importorskip("distributed")
    dask_sweep = SWEEP.replace("jobs=2,", 'jobs=2, executor="dask",')
    done = run_script(tmp_path, f"{dask_sweep}\nprint('answered', len(rows))\n")
    assert done.returncode != 0
    assert "answered" not in done.stdout
    assert done.stderr.count(GUARD) == 1, done.stderr[-2000:]
    assert done.stderr.count("Traceback") == 1  # no workers' tracebacks, no Nanny's
    assert "Nanny failed" not in done.stderr
