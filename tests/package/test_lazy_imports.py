"""Start-up: the package root and the command line import only what they use (the .sens
grammar alone costs about a second of CPU), each in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys


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
