"""`treesens backends` calls a backend installed only when it loads and solves."""

from __future__ import annotations

from treesens.backends.registry import install_hint
from treesens.driver.probe import backend_loads
from treesens.tests.conftest import run_treesens


def test_the_default_backend_loads_and_solves():
    assert backend_loads("cpsat") == (True, "")


def test_a_backend_that_cannot_start_is_not_usable():
    ok, why = backend_loads("no-such-backend")
    assert not ok and why


def test_install_hints_name_the_extras_not_bare_packages():
    assert install_hint("highs") == "pip install 'treesens[highs]'"
    assert install_hint("cbc") == "pip install 'treesens[cbc]'"


def test_cli_backends_lists_every_backend_with_its_state():
    p = run_treesens("backends")
    assert p.returncode == 0
    assert "cpsat    installed: yes" in p.stdout


def test_cli_backends_lists_the_race_with_how_it_is_written():
    p = run_treesens("backends")
    [race] = [line for line in p.stdout.splitlines() if line.startswith("race ")]
    assert "installed: yes" in race and "race alone races cpsat" in race
    assert "race:cpsat+highs" in race
