"""A flag naming a file to write takes a path in a folder not there yet: the folder is
made, as ``treesens test --junit`` (and pytest's --junitxml) makes it, and as the
--certificates folders are; a folder that cannot be made (a file in its way) is one
line and exit 2 before anything is answered."""

from __future__ import annotations

from pathlib import Path

import pytest

from treesens.compiler.errors import InputError
from treesens.questions.output_folder import make_folder_of
from treesens.tests.conftest import treesens_here

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MODEL = EXAMPLES / "breast_cancer_xgb.json"
ROWS = EXAMPLES / "breast_cancer_rows.csv"
CHECK = ("check", MODEL, "--vary", "mean_texture", "--gap", "0.2")
CERTIFIED = ("check", MODEL, "--vary", "mean_texture", "--gap", "0.45")  # insensitive
SWEEP = ("sweep", MODEL, "--features", "mean_texture", "--gap", "0.2", "--table", "none")
AUDIT = ("audit", MODEL, "--vary", "mean_texture", "--gap", "0.2", "--data", ROWS)
REPORT = ("report", MODEL, "--data", ROWS, "--features", "mean_texture", "--budget", "20")
REPORT += ("--no-progress",)
EMIT = ("emit", MODEL, "--vary", "mean_texture", "--gap", "0.2", "--format", "lp")

WRITTEN = [
    (REPORT, "--out", "report.html"),
    (REPORT + ("--out", "r.html"), "--results", "r.jsonl"),
    (SWEEP, "--out", "sweep.jsonl"),
    (SWEEP, "--table-out", "table.md"),
    (SWEEP, "--plot", "sweep.png"),
    (AUDIT, "--out", "audit.jsonl"),
    (AUDIT, "--plot", "audit.png"),
    (CHECK, "--plot", "witness.png"),
    (CERTIFIED, "--certificate", "c.json"),
    (EMIT, "-o", "q.lp"),
]
# the file a flag's path names when it is not the path itself
WRITES = {"r.jsonl": "r.rank.jsonl"}  # report --results: NAME.rank.jsonl beside it
IDS = [f"{cmd[0]} {flag}" for cmd, flag, _ in WRITTEN]


def test_a_missing_folder_and_those_above_it_are_made(tmp_path):
    make_folder_of(tmp_path / "a" / "b" / "out.html", "--out")
    assert (tmp_path / "a" / "b").is_dir()


def test_a_folder_that_cannot_be_made_is_an_input_error_naming_the_flag(tmp_path):
    (tmp_path / "a_file").write_text("")
    with pytest.raises(InputError, match=r"^--out x: cannot make its folder .*a_file: "):
        make_folder_of(tmp_path / "a_file" / "out.html", "--out x")


@pytest.mark.parametrize(("command", "flag", "name"), WRITTEN, ids=IDS)
def test_a_file_flag_writes_into_a_folder_not_there_yet(tmp_path, command, flag, name):
    path = tmp_path / "new" / "folder" / name
    r = treesens_here(*command, flag, path, cwd=tmp_path)  # report's r.html: there
    assert r.returncode in (0, 1), r.stderr  # check: 1 where the answer is sensitive
    assert path.with_name(WRITES.get(name, name)).is_file(), r.stderr


@pytest.mark.parametrize(("command", "flag", "name"), WRITTEN, ids=IDS)
def test_a_file_in_the_way_of_its_folder_is_one_line_and_exit_2(tmp_path, command, flag, name):
    (tmp_path / "a_file").write_text("")
    r = treesens_here(*command, flag, tmp_path / "a_file" / name, cwd=tmp_path)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert "cannot make its folder" in lines[0] and "Traceback" not in r.stderr


# ---- the Python API's out= ---------------------------------------------------------


def test_the_apis_sweep_out_in_a_folder_not_there_yet_makes_it(tmp_path):
    # was InputError "cannot write: no such file or directory", where the CLI made it
    import treesens

    path = tmp_path / "new" / "sweep.jsonl"
    treesens.sweep(str(MODEL), features=["mean_texture"], gap=0.2, progress=False, out=path)
    assert path.is_file()


def test_the_apis_sweep_out_named_as_a_folder_is_refused(tmp_path):
    # was a file named "res" written, as the CLI's --out res/ is refused
    import treesens

    out = f"{tmp_path}/res/"
    with pytest.raises(InputError, match=r"res/: names a folder \(it ends in '/'\)"):
        treesens.sweep(str(MODEL), features=["mean_texture"], gap=0.2, progress=False, out=out)
    assert not (tmp_path / "res").exists()


def test_the_apis_report_out_in_a_folder_not_there_yet_makes_it(tmp_path):
    # was FileNotFoundError once the report's whole budget was spent
    import treesens

    path = tmp_path / "new" / "r.html"
    treesens.report(
        str(MODEL), str(ROWS), features=["mean_texture"], budget=10, progress=False, out=path
    )
    assert path.is_file()


def test_the_apis_report_out_that_cannot_be_written_is_refused_before_the_report(
    tmp_path, monkeypatch
):
    import treesens
    from treesens.interfaces import api

    monkeypatch.setattr(api, "gather", lambda *a, **k: pytest.fail("the report was made"))
    with pytest.raises(InputError, match=r": is a directory$"):
        treesens.report(str(MODEL), str(ROWS), budget=10, progress=False, out=tmp_path)
