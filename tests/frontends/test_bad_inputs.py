"""Bad inputs (flags, details files, .sens files, model numbers, depth bombs, full disks):
exit 2 and one line naming the file or flag and the problem, never an internal error."""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import pytest

import treesens
from treesens.compiler.errors import InputError
from treesens.interfaces.api import make_query
from treesens.tests.conftest import run_treesens, treesens_here

EXAMPLES = Path(treesens.__file__).parent / "examples"
MODEL = str(EXAMPLES / "breast_cancer_xgb.json")


def _cli(*args, cwd=None):
    """The command's main, run in this process (a file nested too deep runs as a command:
    its own process, whose stack a failing limit would overflow)."""
    return treesens_here(*args, cwd=cwd)


def _one_line_error(r, *words):
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, r.stderr
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


def test_api_rejects_a_feature_listed_twice_in_vary():
    with pytest.raises(InputError, match="'mean_texture' listed twice"):
        make_query(["mean_texture", "mean_texture"], gap=0.2)


@pytest.mark.parametrize("command", ["check", "compare", "emit"])
def test_cli_rejects_a_feature_listed_twice_in_vary(command, tmp_path):
    extra = ["-o", str(tmp_path / "x.smt2")] if command == "emit" else []
    r = _cli(command, MODEL, "--vary", "mean_texture,mean_texture", "--gap", "0.2", *extra)
    _one_line_error(r, "--vary", "'mean_texture' listed twice")


def test_api_sweep_rejects_a_feature_listed_twice_in_features():
    with pytest.raises(InputError, match="^features: feature 'mean_texture' listed twice"):
        treesens.sweep(MODEL, features=["mean_texture", "mean_texture"], progress=False)


def test_cli_sweep_rejects_a_feature_listed_twice_in_features():
    r = _cli("sweep", MODEL, "--features", "mean_texture,mean_texture", "--timeout", "5")
    _one_line_error(r, "--features: feature 'mean_texture' listed twice")


def test_api_audit_rejects_a_feature_listed_twice_in_vary():
    rows = str(EXAMPLES / "breast_cancer_rows.csv")
    with pytest.raises(InputError, match="^vary: feature 'mean_texture' listed twice"):
        treesens.audit(MODEL, rows, ["mean_texture", "mean_texture"], label="label")


def test_cli_audit_rejects_a_feature_listed_twice_in_vary():
    rows = str(EXAMPLES / "breast_cancer_rows.csv")
    r = _cli("audit", MODEL, "--data", rows, "--vary", "mean_texture,mean_texture", "--limit", "2")
    _one_line_error(r, "--vary: feature 'mean_texture' listed twice")


def _details(tmp_path, lb: str, ub: str) -> str:
    p = tmp_path / "d.csv"
    p.write_text(f"feature,name,lb,ub\n0,mean_radius,6.9,28\n1,mean_texture,{lb},{ub}\n")
    return str(p)


@pytest.mark.parametrize(
    ("lb", "ub"), [("nan", "39"), ("9", "NaN"), ("inf", "39"), ("9", "-inf"), ("+nan", "")]
)
def test_a_details_file_with_a_nan_or_impossible_infinite_bound_is_an_error(tmp_path, lb, ub):
    path = _details(tmp_path, lb, ub)
    with pytest.raises(InputError, match=r"d\.csv:3"):
        treesens.load_model(MODEL, details=path)


def test_a_details_file_may_leave_a_bound_empty_or_infinite_on_its_own_side(tmp_path):
    ens = treesens.load_model(MODEL, details=_details(tmp_path, "-inf", ""))
    assert ens.features[1].name == "mean_texture"


def test_cli_names_the_details_line_with_a_nan_bound(tmp_path):
    path = _details(tmp_path, "nan", "39")
    r = _cli("check", MODEL, "--vary", "mean_texture", "--gap", "0.2", "--details", path)
    _one_line_error(r, "d.csv:3", "nan")


@pytest.mark.parametrize("cell", ["1_0", "\uff11\uff10", "\u0661\u0660", "0x10", "1 0"])
def test_a_details_bound_python_reads_and_a_csv_does_not_write_is_an_error(tmp_path, cell):
    # float() takes "1_0" as 10 and full-width or Arabic-Indic digits as theirs
    with pytest.raises(InputError, match=rf"d\.csv:3: column ub: '{cell}' is not a number"):
        treesens.load_model(MODEL, details=_details(tmp_path, "9", cell))


@pytest.mark.parametrize("cell", ["1_0", "\uff11"])
def test_a_details_feature_index_python_reads_and_a_csv_does_not_write_is_an_error(tmp_path, cell):
    p = tmp_path / "d.csv"
    p.write_text(f"feature,name,lb,ub\n{cell},mean_texture,9,39\n", encoding="utf-8")
    with pytest.raises(
        InputError, match=rf"d\.csv:2: column feature: '{cell}' is not a feature index"
    ):
        treesens.load_model(MODEL, details=str(p))


@pytest.mark.parametrize(
    ("cell", "value"),
    [("3.9e1", 39.0), ("+39", 39.0), (" 39 ", 39.0), ("3.9E+01", 39.0), (".5", 0.5)],
)
def test_a_details_bound_as_pandas_or_excel_write_it_is_read(tmp_path, cell, value):
    ens = treesens.load_model(MODEL, details=_details(tmp_path, "0", cell))
    assert ens.features[1].ub == value


def test_cli_names_the_details_file_line_column_and_cell_of_a_bad_number(tmp_path):
    path = _details(tmp_path, "9", "1_0")
    r = _cli("check", MODEL, "--vary", "mean_texture", "--gap", "0.2", "--details", path)
    _one_line_error(r, "d.csv:3: column ub: '1_0' is not a number")


SENS = f'model "{MODEL}"\n\nquery q {{\n  vary mean_texture\n  gap 0.2\n}}\n'


def test_a_sens_file_with_a_byte_order_mark_is_read(tmp_path):
    from treesens.language import parse, parse_file

    p = tmp_path / "bom.sens"
    p.write_bytes(b"\xef\xbb\xbf" + SENS.encode())
    assert parse_file(p) == parse(SENS)


def test_cli_runs_a_sens_file_with_a_byte_order_mark(tmp_path):
    p = tmp_path / "bom.sens"
    p.write_bytes(b"\xef\xbb\xbf" + SENS.encode())
    r = _cli("run", str(p), "--list")
    assert r.returncode == 0, r.stderr
    assert "unexpected character" not in r.stderr


def test_a_sens_path_to_dev_zero_is_refused_at_the_size_cap(tmp_path):
    p = tmp_path / "zero.sens"
    p.symlink_to("/dev/zero")
    r = _cli("run", str(p))
    _one_line_error(r, "zero.sens", "10 MB")


def test_a_sens_file_over_the_size_cap_is_refused(tmp_path, monkeypatch):
    sens_parse = sys.modules["treesens.language.parse"]

    monkeypatch.setattr(sens_parse, "MAX_SENS_BYTES", 1000)
    p = tmp_path / "big.sens"
    p.write_text(SENS + "#" * 2000 + "\n")
    with pytest.raises(InputError, match="limit for a .sens file"):
        sens_parse.parse_file(p)


def _native(tmp_path, edit) -> str:
    import json

    m = json.loads(Path(MODEL).read_text())
    edit(m["learner"]["gradient_booster"]["model"]["trees"])
    p = tmp_path / "m.json"
    p.write_text(json.dumps(m))
    return str(p)


def _first_split(tree: dict) -> int:
    return next(i for i, c in enumerate(tree["left_children"]) if c != -1)


def test_a_negative_feature_index_is_named_as_it_is_in_the_file(tmp_path):
    def edit(trees):
        trees[0]["split_indices"][_first_split(trees[0])] = -3

    with pytest.raises(InputError, match="feature index -3") as e:
        treesens.load_model(_native(tmp_path, edit))
    assert "tree 0" in str(e.value) and "m.json" in str(e.value)


def _first_leaf(tree: dict) -> int:
    return next(i for i, c in enumerate(tree["left_children"]) if c == -1)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1e308, 1e308, 1e35])
def test_a_leaf_value_not_finite_or_too_large_names_tree_and_node(tmp_path, value):
    def edit(trees):
        trees[1]["split_conditions"][_first_leaf(trees[1])] = value

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InputError, match=r"tree 1 node \d+: leaf value") as e:
            treesens.load_model(_native(tmp_path, edit))
    assert "m.json" in str(e.value)


def test_a_nan_threshold_names_tree_and_node(tmp_path):
    def edit(trees):
        trees[2]["split_conditions"][_first_split(trees[2])] = float("nan")

    with pytest.raises(InputError, match=r"tree 2 node \d+: the split threshold is NaN"):
        treesens.load_model(_native(tmp_path, edit))


@pytest.mark.parametrize("value", ["nan", "1e308", "-inf"])
def test_cli_a_non_finite_leaf_is_one_line_and_exit_2(tmp_path, value):
    def edit(trees):
        trees[0]["split_conditions"][_first_leaf(trees[0])] = float(value)

    r = _cli("check", _native(tmp_path, edit), "--vary", "mean_texture", "--gap", "0.2")
    _one_line_error(r, "m.json", "tree 0 node")
    assert "Warning" not in r.stderr


def test_a_nan_leaf_in_a_dump_names_tree_and_node(tmp_path):
    import json

    dump = [
        {
            "nodeid": 0,
            "split": "f0",
            "split_condition": 0.5,
            "yes": 1,
            "no": 2,
            "missing": 1,
            "children": [{"nodeid": 1, "leaf": 0.3}, {"nodeid": 2, "leaf": float("nan")}],
        }
    ]
    p = tmp_path / "dump.json"
    p.write_text(json.dumps(dump))
    r = _cli("check", str(p), "--vary", "f0", "--gap", "0.2")
    _one_line_error(r, "dump.json", "tree 0 node")


def _deep_dump(depth: int) -> list:
    tree = node = {"nodeid": 0}
    for d in range(depth):
        yes, no = 2 * d + 1, 2 * d + 2
        nxt = {"nodeid": no}
        node.update(split="f0", split_condition=float(d), yes=yes, no=no, missing=yes)
        node["children"] = [{"nodeid": yes, "leaf": 0.1}, nxt]
        node = nxt
    node["leaf"] = 0.2
    return [tree]


def test_json_nested_200000_deep_is_one_line_naming_the_depth_limit(tmp_path):
    p = tmp_path / "deep.json"
    p.write_text("[" * 200_000 + "]" * 200_000)
    r = run_treesens("check", str(p), "--vary", "f0", "--gap", "0.2")
    _one_line_error(r, "deep.json", "1,000 levels")


def test_a_json_dump_tree_3000_levels_deep_names_the_depth_limit(tmp_path):
    import json

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)  # for json.dumps of the deep tree
    try:
        text = json.dumps(_deep_dump(3000))
    finally:
        sys.setrecursionlimit(limit)
    p = tmp_path / "dump.json"
    p.write_text(text)
    with pytest.raises(InputError, match="1,000 levels"):
        treesens.load_model(p)


@pytest.mark.parametrize("fmt", ["lightgbm", "xgboost"])
def test_a_json_model_nested_too_deep_names_the_depth_limit_in_every_format(tmp_path, fmt):
    p = tmp_path / "deep.json"
    p.write_text('{"a":' * 100_000 + "0" + "}" * 100_000)
    with pytest.raises(InputError, match="1,000 levels"):
        treesens.load_model(p, format=fmt)


def _error_lines(r) -> list[str]:
    return [ln for ln in r.stderr.splitlines() if "error" in ln.lower()]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_sweep_out_on_a_full_disk_is_one_line_naming_the_file():
    r = _cli("sweep", MODEL, "--gap", "0.2", "--out", "/dev/full")
    assert r.returncode == 2, r.stderr
    assert _error_lines(r) == ["treesens: error: /dev/full: cannot write: no space left on device"]
    assert "Traceback" not in r.stderr


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_audit_out_on_a_full_disk_is_one_line_naming_the_file(tmp_path):
    from treesens.tests.frontends.test_audit import BC_DETAILS, _bc_csv

    data = str(_bc_csv(tmp_path))
    r = _cli(
        "audit", MODEL, "--details", BC_DETAILS, "--data", data, "--vary", "worst_radius",
        "--out", "/dev/full",
    )  # fmt: skip
    assert r.returncode == 2, r.stderr
    assert _error_lines(r) == ["treesens: error: /dev/full: cannot write: no space left on device"]
    assert "Traceback" not in r.stderr


def test_writing_to_the_results_log_names_the_file_when_the_disk_is_full():
    from treesens.questions.results_log import write_flushed

    class Full:
        def write(self, text):
            raise OSError(28, "No space left on device")

    with pytest.raises(InputError, match="out.jsonl: cannot write: no space left on device"):
        write_flushed(Full(), "x\n", "out.jsonl")


@pytest.mark.parametrize("backends", ["", ",", []])
def test_compare_with_no_backend_named_is_an_input_error(backends):
    from treesens.questions.compare import backend_list

    with pytest.raises(InputError, match="backends: no backend named"):
        backend_list(backends)


def test_compare_rejects_a_backend_listed_twice():
    r = _cli("compare", MODEL, "--vary", "mean_texture", "--backends", "cpsat,cpsat")
    _one_line_error(r, "--backends: backend 'cpsat' listed twice")


def test_compare_refuses_a_race_of_one_split_from_its_backends_by_a_comma():
    r = _cli("compare", MODEL, "--vary", "mean_texture", "--backends", "cpsat,race:cpsat,highs")
    line = _one_line_error(r, "'race:cpsat' races one backend")
    assert line.endswith("join a race's backends by '+' (race:cpsat+highs)")


def test_compare_names_an_unknown_backend_inside_a_race():
    r = _cli("compare", MODEL, "--vary", "mean_texture", "--backends", "cpsat,race:cpsat+nope")
    _one_line_error(r, "unknown backend 'nope' in the race")


def test_a_race_naming_no_backend_is_an_input_error():
    r = _cli("compare", MODEL, "--vary", "mean_texture", "--backends", "race:")
    _one_line_error(r, "'race:' names no backend to race (e.g. race:cpsat+highs)")


def test_a_plugin_file_that_is_not_python_source_is_named_so(tmp_path):
    text = tmp_path / "kind.txt"
    text.write_text("print('hi')\n")
    with pytest.raises(InputError, match=r"kind\.txt: not a plugin: give a Python file ending"):
        treesens.load_plugin(text)


def test_a_folder_given_as_a_plugin_is_named_a_directory(tmp_path):
    with pytest.raises(InputError, match="is a directory, not a plugin"):
        treesens.load_plugin(tmp_path)


def test_a_group_named_twice_in_groups_text_is_an_input_error():
    from treesens.readers.preprocessing.groups import groups_from_text

    with pytest.raises(InputError, match="groups: group 'g' is given twice"):
        groups_from_text("g=a,b; g=c,d")


def _fifo(tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes here")
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return str(path)


def test_cli_check_names_a_fifo_given_as_the_model_not_a_regular_file(tmp_path):
    r = _cli("check", _fifo(tmp_path), "--vary", "mean_texture")
    _one_line_error(r, "pipe: is a FIFO (named pipe), not a regular file", "model file")


def test_cli_check_names_a_fifo_given_as_the_data_not_a_regular_file(tmp_path):
    r = _cli("check", MODEL, "--vary", "mean_texture", "--data", _fifo(tmp_path))
    _one_line_error(r, "pipe: is a FIFO (named pipe), not a regular file", "data file")


def test_cli_check_names_a_fifo_given_as_the_details_not_a_regular_file(tmp_path):
    r = _cli("check", MODEL, "--vary", "mean_texture", "--details", _fifo(tmp_path))
    _one_line_error(r, "pipe: is a FIFO (named pipe), not a regular file", "details file")
