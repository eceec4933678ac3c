"""The repository installs as ONE import package ``treesens``: build a
wheel, install it into a fresh venv, run the CLI from elsewhere."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
IGNORE = shutil.ignore_patterns(
    ".git",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".venv",
    ".ruff_cache",
    ".pytest_cache",
    ".hypothesis",
    "*.pyc",
)

pytestmark = pytest.mark.slow


def _can_build_without_isolation() -> bool:
    """Are setuptools >= 68 and a bdist_wheel command (the ``wheel`` package, or
    setuptools >= 70.1) installed, as pyproject's build-system asks?"""
    import importlib.util

    try:
        import setuptools
    except ImportError:
        return False
    version = tuple(int(x) for x in setuptools.__version__.split(".")[:2] if x.isdigit())
    return version >= (68, 0) and (
        version >= (70, 1) or importlib.util.find_spec("wheel") is not None
    )


def _run(cmd, **kw):
    # the installed package on its own: a PYTHONPATH (a developer's checkout) would be
    # searched before the venv's site-packages
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    p = subprocess.run(
        [str(c) for c in cmd], capture_output=True, text=True, timeout=900, env=env, **kw
    )
    assert p.returncode == 0, f"{cmd}\nstdout:\n{p.stdout[-3000:]}\nstderr:\n{p.stderr[-3000:]}"
    return p


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    # build from a copy, so the build leaves nothing (build/, *.egg-info) in the repository
    src = tmp / "src"
    shutil.copytree(REPO_ROOT, src, ignore=IGNORE)
    out = tmp / "dist"
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", out, src]
    if _can_build_without_isolation():
        cmd.insert(5, "--no-build-isolation")
    # else: pip fetches setuptools and wheel (pyproject's build-system) from the package index
    _run(cmd)
    wheels = list(out.glob("treesens-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    env = tmp_path_factory.mktemp("venv") / "env"
    _run([sys.executable, "-m", "venv", "--system-site-packages", env])
    # --ignore-installed: a treesens the machine's Python already has (as .ci/run leaves it)
    # would otherwise satisfy the requirement and leave the venv without its own copy
    pip = [env / "bin" / "python", "-m", "pip", "install", "--no-deps", "--no-index"]
    _run([*pip, "--ignore-installed", wheel])
    return env


def test_wheel_has_only_the_treesens_top_level_package(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith((".dist-info", ".data"))}
    assert tops == {"treesens"}, tops
    assert "treesens/compiler/ensemble.py" in names
    assert "treesens/interfaces/cli/main.py" in names


def test_wheel_installs_no_top_level_compiler_backends_or_readers(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        top_level = [n for n in names if n.endswith("top_level.txt")]
        declared = z.read(top_level[0]).decode().split() if top_level else []
    for bad in ("compiler", "backends", "readers", "questions", "frontends", "grammar", "tests"):
        assert not any(n.startswith(bad + "/") for n in names), bad
        assert bad not in declared, bad


def test_installed_cli_lists_backends_from_another_directory(venv, tmp_path):
    p = _run([venv / "bin" / "treesens", "backends", "--json"], cwd=tmp_path)
    rows = [json.loads(line) for line in p.stdout.splitlines()]
    assert "cpsat" in {r["name"] for r in rows}


def test_installed_package_imports_from_the_venv_not_the_repository(venv, tmp_path):
    code = (
        "import importlib.util, json, treesens, treesens.compiler;"
        "print(json.dumps({'file': treesens.__file__,"
        " 'tops': [m for m in ('compiler', 'backends', 'readers', 'questions')"
        " if importlib.util.find_spec(m) is not None]}))"
    )
    p = _run([venv / "bin" / "python", "-c", code], cwd=tmp_path)
    info = json.loads(p.stdout)
    assert Path(info["file"]).resolve().is_relative_to(venv.resolve()), info["file"]
    assert info["tops"] == [], info["tops"]


def test_installed_cli_answers_a_tiny_query(venv, tmp_path):
    script = tmp_path / "make_model.py"
    script.write_text(
        "import xgboost as xgb\n"
        "from sklearn.datasets import load_breast_cancer\n"
        "X, y = load_breast_cancer(return_X_y=True)\n"
        "clf = xgb.XGBClassifier(n_estimators=4, max_depth=2, n_jobs=1, random_state=0).fit(X[:, :4], y)\n"
        "clf.get_booster().save_model('tiny.json')\n"
    )
    _run([venv / "bin" / "python", script], cwd=tmp_path)
    p = _run(
        [
            venv / "bin" / "treesens",
            "check",
            "tiny.json",
            "--vary",
            "f0",
            "--gap",
            "0.1",
            "--json",
            "--timeout",
            "120",
        ],
        cwd=tmp_path,
    )
    r = json.loads(p.stdout.strip())
    assert r["status"] in ("sensitive", "insensitive"), r
