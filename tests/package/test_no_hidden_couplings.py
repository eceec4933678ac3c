"""Couplings the layer test cannot see stay out of the library: no module swaps another
object's private method, the worker asks the registry (not a module's name) how to call a
backend, the driver keeps no registry that an import fills, and no module imports
another's private name.

Like test_layers.py, these read the package's own folders only.
"""

from __future__ import annotations

import ast
from pathlib import Path

from treesens.tests.package.layers import LAYERS as LIBRARY

ROOT = Path(__file__).resolve().parents[2]


def _library_modules() -> list[Path]:
    return [p for layer in LIBRARY for p in sorted((ROOT / layer).rglob("*.py"))]


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


def _private_methods() -> set[str]:
    """The private (single-underscore) method names the library's classes define."""
    return {
        item.name
        for path in _library_modules()
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.ClassDef)
        for item in node.body
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
        and item.name.startswith("_")
        and not item.name.startswith("__")
    }


def _assigned_attributes(tree: ast.Module):
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        else:
            continue
        for target in targets:
            if isinstance(target, ast.Attribute):
                yield node.lineno, target


def test_no_module_assigns_a_private_method_of_another_object():
    methods = _private_methods()
    assert "_start" in methods  # Worker._start: the method a race once swapped
    bad = [
        f"{path.relative_to(ROOT)}:{line} assigns {ast.unparse(target)}"
        for path in _library_modules()
        for line, target in _assigned_attributes(_tree(path))
        if target.attr in methods
        and not (isinstance(target.value, ast.Name) and target.value.id in ("self", "cls"))
    ]
    assert not bad, "\n".join(bad)


def _is_module_name(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "module"


def test_worker_asks_the_registry_not_the_module_name_how_to_call_a_backend():
    path = ROOT / "backends" / "worker.py"
    tests_of_the_name = [
        f"backends/worker.py:{node.lineno} {ast.unparse(node)}"
        for node in ast.walk(_tree(path))
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and _is_module_name(node.func.value)
        )
        or (isinstance(node, ast.Compare) and any(map(_is_module_name, ast.walk(node))))
    ]
    assert not tests_of_the_name, "\n".join(tests_of_the_name)
    assert "mip_backend" not in path.read_text()


def test_no_module_imports_a_private_name_of_another_module():
    bad = [
        f"{path.relative_to(ROOT)}:{node.lineno} imports {alias.name} from {node.module}"
        for path in [ROOT / "__init__.py", *_library_modules()]
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.name.startswith("_") and not alias.name.startswith("__")
    ]
    assert not bad, "\n".join(bad)


def _module_lists(tree: ast.Module) -> set[str]:
    """Names a module binds at its top level to a list."""
    out = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.List):
            out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and (isinstance(node.value, ast.List) or "list" in ast.unparse(node.annotation))
        ):
            out.add(node.target.id)
    return out


def _fills(node: ast.AST, names: set[str]) -> str | None:
    """What fills one of ``names`` at ``node``: a list method call or an item assignment."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("append", "extend", "insert")
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id in names
    ):
        return ast.unparse(node)
    if isinstance(node, (ast.Assign, ast.AugAssign)):
        for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
            if (
                isinstance(t, ast.Subscript)
                and isinstance(t.value, ast.Name)
                and t.value.id in names
            ):
                return ast.unparse(t)
    if isinstance(node, ast.Global) and names & set(node.names):
        return ast.unparse(node)
    return None


def test_no_driver_function_fills_a_module_level_list():
    bad = []
    for path in sorted((ROOT / "driver").rglob("*.py")):
        tree = _tree(path)
        names = _module_lists(tree)
        for func in ast.walk(tree):
            if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(func):
                    if (what := _fills(node, names)) is not None:
                        bad.append(f"{path.relative_to(ROOT)}:{node.lineno} {what}")
    assert not bad, "\n".join(bad)
