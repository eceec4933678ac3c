"""One runner per question (questions/ask.py) and one per campaign (questions/campaign.py):
the library turns a time limit into a deadline in one place, makes a result an "error" in
one function, writes ``stats["asked"]`` in one function, and opens a campaign's executor
in one module.

Like test_layers.py, these read the package's own folders only.
"""

from __future__ import annotations

import ast
from pathlib import Path

from treesens.tests.package.layers import LAYERS as LIBRARY

ROOT = Path(__file__).resolve().parents[2]


def _modules() -> list[tuple[str, ast.Module]]:
    return [
        (str(p.relative_to(ROOT)), ast.parse(p.read_text(), str(p)))
        for layer in LIBRARY
        for p in sorted((ROOT / layer).rglob("*.py"))
    ]


def _functions(tree: ast.Module):
    """(enclosing function name or "", node) for every node of the module."""

    def walk(node: ast.AST, where: str):
        for child in ast.iter_child_nodes(node):
            name = (
                child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else where
            )
            yield where, child
            yield from walk(child, name)

    yield from walk(tree, "")


def _places(match) -> list[str]:
    return sorted(
        {
            f"{path}:{where}"
            for path, tree in _modules()
            for where, node in _functions(tree)
            if match(node)
        }
    )


def _is_timeout(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "timeout"


def test_a_time_limit_becomes_a_deadline_in_one_place():
    def adds_a_timeout(node: ast.AST) -> bool:
        return (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Add)
            and (_is_timeout(node.left) or _is_timeout(node.right))
        )

    assert _places(adds_a_timeout) == ["compiler/plan.py:deadline"]


def _names_error(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "ERROR"


def _sets_status(target: ast.AST) -> bool:
    return any(isinstance(t, ast.Attribute) and t.attr == "status" for t in ast.walk(target))


def test_one_function_makes_a_result_an_error():
    def sets_error(node: ast.AST) -> bool:
        if isinstance(node, ast.Assign):
            return any(_sets_status(t) for t in node.targets) and any(
                _names_error(v) for v in ast.walk(node.value)
            )
        if isinstance(node, ast.keyword):
            return node.arg == "status" and _names_error(node.value)
        return False

    assert _places(sets_error) == ["answers/result.py:fail"]


def test_stats_asked_is_written_in_one_function():
    def writes_asked(node: ast.AST) -> bool:
        targets = node.targets if isinstance(node, ast.Assign) else []
        return any(
            isinstance(t, ast.Subscript)
            and isinstance(t.slice, ast.Constant)
            and t.slice.value == "asked"
            for t in targets
        )

    assert _places(writes_asked) == ["questions/ask.py:recorded"]


def test_a_campaign_opens_its_executor_in_one_module():
    def opens_an_executor(node: ast.AST) -> bool:
        return (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("opened_executor", "make_executor")
        )

    assert _places(opens_an_executor) == [
        "questions/campaign.py:opened",
        "questions/campaign.py:opened_executor",
    ]
