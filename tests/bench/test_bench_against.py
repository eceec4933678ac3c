"""bench/run.py --against REV: the same runs at another commit, beside this checkout's.

No benchmark is run: the runs are planned, the other checkout is made in a small git
repository of the test's own, and one run goes to a stand-in checkout whose run_one.py
says which treesens it imported.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

# the checkout this test sits in (bench/ is not part of the installed package)
CHECKOUT = Path(__file__).resolve().parents[2]
BENCH = CHECKOUT / "bench"
spec = importlib.util.spec_from_file_location("bench_run", BENCH / "run.py")
run_mod = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = run_mod  # its dataclasses look their module up there
try:
    spec.loader.exec_module(run_mod)  # it puts bench/ on sys.path for its own imports
finally:
    while str(BENCH) in sys.path:
        sys.path.remove(str(BENCH))


def git(*args, cwd):
    ident = ["-c", "user.name=test", "-c", "user.email=test@example.com"]
    out = subprocess.run(["git", *ident, *args], cwd=cwd, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


@pytest.fixture
def repo(tmp_path):
    """A repository with two commits of one file; (its folder, first commit, second)."""
    root = tmp_path / "repo"
    root.mkdir()
    git("init", "-q", cwd=root)
    commits = []
    for text in ("first", "second"):
        (root / "version.txt").write_text(text)
        git("add", "version.txt", cwd=root)
        git("commit", "-q", "-m", text, cwd=root)
        commits.append(git("rev-parse", "HEAD", cwd=root))
    return root, *commits


def test_each_configuration_of_an_instance_runs_at_both_commits_each_going_first_in_turn():
    other = run_mod.Checkout(Path("/x/treesens"), "abc1234")
    runs = run_mod.planned_runs(["i1", "i2"], ["default", "kant"], [run_mod.HERE_CHECKOUT, other])
    assert [(i, cfg.name) for i, cfg, _ in runs] == [
        ("i1", "default"),
        ("i1", "default@abc1234"),
        ("i1", "kant@abc1234"),
        ("i1", "kant"),
        ("i2", "default"),
        ("i2", "default@abc1234"),
        ("i2", "kant@abc1234"),
        ("i2", "kant"),
    ]


def test_the_runs_at_the_other_commit_are_that_checkouts():
    other = run_mod.Checkout(Path("/x/treesens"), "abc1234")
    runs = run_mod.planned_runs(["i1"], ["default", "kant"], [run_mod.HERE_CHECKOUT, other])
    assert {cfg.name: co for _, cfg, co in runs} == {
        "default": run_mod.HERE_CHECKOUT,
        "default@abc1234": other,
        "kant": run_mod.HERE_CHECKOUT,
        "kant@abc1234": other,
    }


def test_a_run_at_the_other_commit_is_configured_as_the_same_run_here():
    other = run_mod.Checkout(Path("/x/treesens"), "abc1234")
    (_, here, _), (_, there, _) = run_mod.planned_runs(
        ["i1"], ["kant"], [run_mod.HERE_CHECKOUT, other]
    )  # the first pair goes here first
    assert run_mod.replace(there, name="kant") == here


def test_a_run_at_the_other_commit_is_its_own_run_one_with_its_parent_as_python_path():
    other = run_mod.Checkout(Path("/x/co/treesens"), "abc1234")
    cmd, env = other.command("{}", core=1)
    assert cmd == ["taskset", "-c", "1", sys.executable, "/x/co/treesens/bench/run_one.py", "{}"]
    assert env["PYTHONPATH"] == "/x/co"


def test_a_run_here_is_this_checkouts_run_one_with_the_callers_python_path(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", "/somewhere")
    cmd, env = run_mod.HERE_CHECKOUT.command("{}", core=None)
    assert cmd == [sys.executable, str(BENCH / "run_one.py"), "{}"]
    assert env["PYTHONPATH"] == "/somewhere"


def test_the_other_commit_is_checked_out_as_a_worktree_in_a_folder_named_treesens(repo, tmp_path):
    root, first, _ = repo
    checkout = run_mod.other_checkout(first[:10], repo=root, under=tmp_path / "checkouts")
    assert checkout.root.name == "treesens"
    assert checkout.label == git("rev-parse", "--short", first, cwd=root)
    assert (checkout.root / "version.txt").read_text() == "first"


def test_the_other_commits_worktree_is_reused_by_the_next_run(repo, tmp_path):
    root, first, _ = repo
    made = run_mod.other_checkout(first, repo=root, under=tmp_path / "checkouts")
    (made.root / "untracked.txt").write_text("kept")
    again = run_mod.other_checkout(first, repo=root, under=tmp_path / "checkouts")
    assert again == made and (again.root / "untracked.txt").read_text() == "kept"


def test_a_folder_for_the_commit_that_holds_another_commit_is_refused(repo, tmp_path):
    root, first, second = repo
    made = run_mod.other_checkout(first, repo=root, under=tmp_path / "checkouts")
    git("checkout", "-q", "--detach", second, cwd=made.root)
    with pytest.raises(ValueError, match="is not a checkout of"):
        run_mod.other_checkout(first, repo=root, under=tmp_path / "checkouts")


def test_a_worktree_with_edited_files_is_refused(repo, tmp_path):
    root, first, _ = repo
    made = run_mod.other_checkout(first, repo=root, under=tmp_path / "checkouts")
    (made.root / "version.txt").write_text("edited")
    with pytest.raises(ValueError, match="has edited files"):
        run_mod.other_checkout(first, repo=root, under=tmp_path / "checkouts")


def test_a_name_that_is_no_commit_is_refused(repo, tmp_path):
    root, *_ = repo
    with pytest.raises(ValueError, match="not a commit of"):
        run_mod.other_checkout("no-such-branch", repo=root, under=tmp_path / "checkouts")


def test_a_run_at_the_other_checkout_imports_that_checkouts_treesens(tmp_path):
    root = tmp_path / "elsewhere" / "treesens"
    (root / "bench").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "bench" / "run_one.py").write_text(
        "import json, treesens\n"
        "print(json.dumps({'status': 'insensitive', 'time': {'total': 0.0}, "
        "'where': treesens.__file__}))\n"
    )
    res = run_mod._run_one({}, {}, 5.0, None, run_mod.Checkout(root, "abc1234"))
    assert res["status"] == "insensitive"
    assert Path(res["where"]) == root / "__init__.py"
