"""The layers only point down (tests/package/layers.py): compiler < readers < answers <
backends < search < driver < questions < language < views < interfaces.

Every module of those subpackages is parsed (imports at module level and inside
functions, relative and absolute); an import of a higher layer, or a cycle between
subpackages, fails. Imports inside functions in library code are only of optional or
heavy packages.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from treesens.tests.package.layers import LAYERS

ROOT = Path(__file__).resolve().parents[2]
# packages a library function may import where it needs them (optional or heavy)
LAZY_OK = frozenset(
    {
        "ortools",
        "mip",
        "highspy",
        "gurobipy",
        "z3",
        "xgboost",
        "lightgbm",
        "sklearn",
        "skops",
        "threadpoolctl",  # scikit-learn's: its HistGradientBoosting predicts on one thread
        "joblib",
        "matplotlib",
        "pandas",
        "pyarrow",
        "resource",  # POSIX only
        "fcntl",  # POSIX only: the numba kernel's compile lock
        "cProfile",
        "pstats",
        "logging",  # the API's note that a large model file is loading (readers/load.py)
        "rich",  # tables and progress bars: kept out of the CLI's start-up
        "numba",  # the compiled largest-gap search: a second to import
    }
)
# treesens modules that only hold code of a heavy package, serve a flag a command
# seldom gets (check's --certificate, --plot), or a stage or an input most queries never
# reach (the box search, the solver layer, the race, the max gap's searches, one-hot
# groups, CatBoost's categories), imported where they are used: a query the heuristic
# answers does not load them (tests/package/test_lazy_imports.py)
LAZY_MODULES = frozenset(
    {
        "treesens.search.gap_kernel_jit",
        "treesens.search.gap_kernel_tops_jit",  # exact bounds of a recorded search's boxes
        "treesens.search.dive_frames_jit",  # the children a max gap's dives keep (numba)
        "treesens.search.kernel_cache",  # numba's cache of the kernels, keyed on their files
        "treesens.search.pair_walk_jit",  # the pair tables' compiled walk (numba)
        "treesens.search.pair_mplp_jit",  # the pair sum's Lagrangian bound (numba, opt-in)
        "treesens.search.cut_walk_jit",  # the cut walk's bound from a parent box (numba)
        "treesens.search.own_cuts_jit",  # where the walk of its own cuts cuts a box (numba)
        "treesens.search.tree_eval_jit",  # the heuristic's compiled walk (numba)
        "treesens.verify.walk_jit",  # the checker's two steps per box of a large proof
        "treesens.questions.certify",
        "treesens.questions.certificate_document",  # check --certificate's path, the file
        "treesens.questions.certify_recorded",
        "treesens.questions.certify_tiling",  # a max gap's certificate from its own boxes
        "treesens.questions.audit_certificates",  # audit --certificates
        "treesens.views.plot_witness",
        "treesens.views.plot_sweep",
        "treesens.search.boxes",
        "treesens.driver.alongside",
        "treesens.driver.backend",
        "treesens.driver.compile",
        "treesens.driver.race",
        "treesens.compiler.solver",
        "treesens.questions.max_gap",
        "treesens.readers.preprocessing.groups",
        "treesens.readers.formats.catboost_categories",
        "treesens.language.where_flag",  # --where: the .sens grammar, only when given
    }
)
# subpackages whose function-level imports are checked
LAZY_CHECKED = LAYERS


def _modules(layer: str) -> list[Path]:
    return sorted((ROOT / layer).rglob("*.py"))


def _imports(path: Path) -> list[tuple[str, bool, int]]:
    """(absolute dotted module inside treesens or outside, inside a function, line)."""
    tree = ast.parse(path.read_text(), str(path))
    package = ["treesens", *path.relative_to(ROOT).with_suffix("").parts[:-1]]
    out: list[tuple[str, bool, int]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.Import):
                out.extend((a.name, in_function, child.lineno) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package[: len(package) - (child.level - 1)]
                    mod = ".".join(base + ([child.module] if child.module else []))
                else:
                    mod = child.module or ""
                out.append((mod, in_function, child.lineno))
            visit(child, inner)

    visit(tree, False)
    return out


def _layer_of(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) >= 2 and parts[0] == "treesens" and parts[1] in LAYERS:
        return parts[1]
    return None


def _edges() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {layer: set() for layer in LAYERS}
    for layer in LAYERS:
        for path in _modules(layer):
            for mod, _, _ in _imports(path):
                target = _layer_of(mod)
                if target is not None and target != layer:
                    edges[layer].add(target)
    return edges


@pytest.mark.parametrize("layer", LAYERS)
def test_no_module_imports_a_higher_layer(layer):
    rank = LAYERS.index(layer)
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {mod}"
        for path in _modules(layer)
        for mod, _, line in _imports(path)
        if _layer_of(mod) is not None and LAYERS.index(_layer_of(mod)) > rank
    ]
    assert not bad, "\n".join(bad)


def test_no_cycle_between_subpackages():
    edges = _edges()

    def reach(start: str, node: str, path: list[str]) -> list[str] | None:
        for nxt in edges[node]:
            if nxt == start:
                return path + [nxt]
            if nxt not in path:
                found = reach(start, nxt, path + [nxt])
                if found:
                    return found
        return None

    for layer in LAYERS:
        cycle = reach(layer, layer, [layer])
        assert cycle is None, " -> ".join(cycle)


@pytest.mark.parametrize("layer", LAZY_CHECKED)
def test_imports_inside_functions_are_only_of_optional_or_heavy_packages(layer):
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {mod} inside a function"
        for path in _modules(layer)
        for mod, in_function, line in _imports(path)
        if in_function and mod.split(".")[0] not in LAZY_OK and mod not in LAZY_MODULES
    ]
    assert not bad, "\n".join(bad)


def test_the_import_reader_sees_relative_imports_inside_functions(tmp_path):
    # a module two levels down that imports its grandparent's sibling inside a function
    d = ROOT / "driver"
    src = "def f():\n    from ..readers import load\n"
    path = d / "_probe_for_test_layers.py"
    try:
        path.write_text(src)
        assert _imports(path) == [("treesens.readers", True, 2)]
    finally:
        path.unlink()


def _package_folders() -> set[str]:
    """The package and every folder of its rooms (its folders with an __init__.py, not a
    virtual environment a user made inside the clone) with an __init__.py, by import name."""
    rooms = [room for room in ROOT.iterdir() if (room / "__init__.py").is_file()]
    return {"treesens"} | {
        ".".join(("treesens", *init.parent.relative_to(ROOT).parts))
        for room in rooms
        for init in room.rglob("__init__.py")
    }


def test_every_package_of_the_library_is_a_layer():
    # verify/ stands apart (the certificate checker imports nothing of treesens)
    rooms = {name.split(".")[1] for name in _package_folders() if name != "treesens"}
    assert rooms - {"tests", "verify"} == set(LAYERS)


def test_pyproject_installs_every_package_of_the_library():
    text = (ROOT / "pyproject.toml").read_text()
    listed = set(re.findall(r'^\s*"(treesens(?:\.[a-z_]+)*)",$', text, re.M))
    assert listed == _package_folders()
