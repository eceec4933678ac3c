"""A Result's ``stats`` hold typed keys only: every key the library writes (``stats[K] =``,
``stats.update({K: ...})``, a stage's own ``stats = {K: ...}``) is declared in
answers/stats.py, with its type, by the stage that writes it. (A backend's statistics are
its Solution's, which the driver reads, not a Result's.)"""

from __future__ import annotations

import ast
import json
from pathlib import Path

from treesens.answers.stats import stat_keys

ROOT = Path(__file__).resolve().parents[2]
# not backends/: a backend's statistics are its Solution's (the clause learner's, which
# reach a result, are search/cavity_learning.py's)
LIBRARY = ("compiler", "answers", "search", "driver", "questions", "interfaces")
STATS_NAMES = frozenset({"stats", "st"})


def _is_stats(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id in STATS_NAMES
    return isinstance(node, ast.Attribute) and node.attr == "stats"


def _keys(tree: ast.Module):
    """(key, line) of every literal key written into a stats mapping."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Subscript) and _is_stats(t.value) and _literal(t.slice):
                    yield t.slice.value, node.lineno
                if _is_stats(t) and isinstance(node.value, ast.Dict):
                    yield from _dict_keys(node.value)
        elif _updates_stats(node):
            for arg in node.args:
                if isinstance(arg, ast.Dict):
                    yield from _dict_keys(arg)


def _literal(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _updates_stats(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "update"
        and _is_stats(node.func.value)
    )


def _dict_keys(d: ast.Dict):
    for k in d.keys:
        if isinstance(k, ast.Constant) and isinstance(k.value, str):
            yield k.value, d.lineno


def _written() -> list[tuple[str, str]]:
    return [
        (key, f"{path.relative_to(ROOT)}:{line}")
        for path in (p for layer in LIBRARY for p in sorted((ROOT / layer).rglob("*.py")))
        for key, line in _keys(ast.parse(path.read_text(), str(path)))
    ]


def test_every_stats_key_the_library_writes_is_declared():
    known = stat_keys()
    undeclared = [f"{where}: {key!r}" for key, where in _written() if key not in known]
    assert not undeclared, "\n".join(undeclared)


def test_the_scan_sees_the_keys_the_stages_write():
    keys = {key for key, _ in _written()}
    assert {"asked", "found_by", "heuristic_time", "box_search", "clauses_learned"} <= keys


def test_asked_of_reads_the_record_of_a_result_or_a_line_and_none_without_one():
    from treesens.answers.stats import asked_of

    assert asked_of({"asked": {"ensemble": "ab"}}) == {"ensemble": "ab"}
    assert [asked_of(s) for s in (None, {}, {"asked": "x"}, [1])] == [None] * 4


def test_every_time_key_of_a_checks_json_is_declared(capsys):
    from treesens.answers.stats import Times
    from treesens.interfaces.cli.main import main

    model = ROOT / "examples" / "breast_cancer_xgb.json"
    assert main(["check", str(model), "--vary", "mean_texture", "--json"]) == 0
    time = json.loads(capsys.readouterr().out.splitlines()[0])["time"]
    declared = {k for cls in Times.__mro__ for k in getattr(cls, "__annotations__", {})}
    assert {"startup", "load"} <= set(time) <= declared
