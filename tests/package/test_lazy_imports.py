"""Start-up: the package root and the command line import only what they use (the .sens
grammar alone costs about a second of CPU), each in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def _loaded_after(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_importing_the_package_root_loads_no_interface():
    code = "import sys, treesens; print('treesens.interfaces.api' in sys.modules)"
    assert _loaded_after(code) == ["False"]


def test_a_package_root_name_is_loaded_when_first_used():
    code = (
        "import sys, treesens; f = treesens.check; "
        "print(f.__module__, 'treesens.interfaces.api' in sys.modules)"
    )
    assert _loaded_after(code) == ["treesens.interfaces.api", "True"]


def test_an_unknown_package_root_name_is_an_attribute_error():
    code = (
        "import treesens\ntry:\n    treesens.no_such_name\nexcept AttributeError:\n    print('ok')"
    )
    assert _loaded_after(code) == ["ok"]


def test_the_check_commands_parser_leaves_the_sens_language_unloaded():
    code = (
        "import sys; from treesens.interfaces.cli.main import build_parser; "
        "build_parser(['--debug', 'check', 'm.json']); "
        "print('treesens.language.grammar' in sys.modules)"
    )
    assert _loaded_after(code) == ["False"]


def test_the_parser_without_a_command_line_has_every_command():
    code = (
        "from treesens.interfaces.cli.main import COMMANDS, build_parser; "
        "sub = build_parser()._subparsers._group_actions[0]; "
        "print(sorted(sub.choices) == sorted(COMMANDS))"
    )
    assert _loaded_after(code) == ["True"]


# libraries the command line loads only when a command needs them: plots, tables, the
# solvers, and the model libraries' Python packages (an XGBoost model's witness is
# replayed through libxgboost itself: readers/formats/xgboost_capi.py)
LIBRARIES = (
    "pandas",
    "rich",
    "numba",
    "ortools",
    "highspy",
    "sklearn",
    "scipy",
    "xgboost",
    "lightgbm",
    "matplotlib",
)
# treesens' own modules `check` does not use without --certificate, --plot or a .sens file
OFF_THE_CHECK_PATH = (
    "treesens.language.grammar",
    "treesens.verify.check",
    "treesens.views.plot_witness",
)

# treesens' own layers a query the heuristic answers does not reach: the box search, the
# solver layer (its process workers, the encoding for a solver, the race), the max gap's
# searches, and the readers of other formats and of inputs it was not given (one-hot
# groups, CatBoost's categories); each is imported by the stage or input that needs it
OFF_THE_HEURISTIC_PATH = (
    "treesens.search.boxes",
    "treesens.search.box_search",
    "treesens.search.gap_search",
    "treesens.search.gap_kernel",
    "treesens.search.gap_kernel_compile",
    "treesens.driver.alongside",
    "treesens.driver.backend",
    "treesens.driver.compile",
    "treesens.driver.race",
    "treesens.backends.worker",
    "treesens.compiler.solver",
    "treesens.questions.max_gap",
    "treesens.readers.formats.lightgbm",
    "treesens.readers.formats.catboost",
    "treesens.readers.formats.onnx",
    "treesens.readers.formats.sklearn",
    "treesens.readers.formats.catboost_categories",
    "treesens.readers.preprocessing.groups",
)

# parts of numpy a check the heuristic answers has no use for (numpy.ma: np.unique's first
# call imports it, 12 ms)
NUMPY_OFF_THE_HEURISTIC_PATH = ("numpy.ma",)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_xgb.json"

# the command as a user runs it (console_main), then the modules it loaded, printed as
# the process ends (console_main ends its process itself, running the atexit handlers)
COMMAND = """
import atexit, json, sys
from treesens.interfaces.cli.main import console_main
atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr))
sys.argv = ["treesens", *json.loads(sys.argv[1])]
sys.exit(console_main())
"""


def _modules_after_command(*argv: str) -> tuple[set[str], str]:
    out = subprocess.run(
        [sys.executable, "-c", COMMAND, json.dumps(list(argv))],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(json.loads(out.stderr.strip().splitlines()[-1])), out.stdout


def _loaded(modules: set[str], names) -> list[str]:
    return [n for n in names if n in modules]


def test_help_leaves_the_libraries_unloaded():
    modules, _ = _modules_after_command("--help")
    assert _loaded(modules, LIBRARIES) == []


def test_a_check_on_an_xgboost_model_leaves_the_libraries_unloaded():
    argv = ("check", str(EXAMPLE), "--vary", "worst_area", "--gap", "0.3", "--json")
    modules, out = _modules_after_command(*argv)
    assert json.loads(out)["validated"] is True  # a sensitive pair, replayed
    assert _loaded(modules, LIBRARIES + OFF_THE_CHECK_PATH) == []


def test_a_check_the_heuristic_answers_leaves_the_search_and_solver_layers_unloaded():
    argv = ("check", str(EXAMPLE), "--vary", "worst_area", "--gap", "0.3", "--json")
    modules, out = _modules_after_command(*argv)
    assert json.loads(out)["stats"]["found_by"] == "heuristic"
    assert _loaded(modules, OFF_THE_HEURISTIC_PATH) == []


def test_a_check_the_heuristic_cannot_answer_loads_the_box_search_when_it_runs():
    # the same model and feature at a gap no pair reaches: the box search proves it
    argv = ("check", str(EXAMPLE), "--vary", "worst_area", "--gap", "0.49", "--json")
    modules, out = _modules_after_command(*argv)
    assert json.loads(out)["status"] == "insensitive"
    assert "treesens.search.boxes" in modules


def test_a_check_the_heuristic_answers_leaves_numpys_masked_arrays_unloaded():
    argv = ("check", str(EXAMPLE), "--vary", "worst_area", "--gap", "0.3", "--json")
    modules, out = _modules_after_command(*argv)
    assert json.loads(out)["stats"]["found_by"] == "heuristic"
    assert _loaded(modules, NUMPY_OFF_THE_HEURISTIC_PATH) == []
