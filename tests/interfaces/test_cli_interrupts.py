"""A signal whose first raise was lost (in a finaliser) is raised again where the command
asks between two steps, as the exception its handler raises: Ctrl-C as KeyboardInterrupt,
SIGTERM and SIGHUP as Terminated; a command that ends by a plain KeyboardInterrupt after
SIGTERM (a search that carried its partial answer on one) still exits 128 + SIGTERM."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from treesens.interfaces.cli.interrupts import (
    Terminated,
    interrupts_recorded,
    raise_if_interrupted,
    record,
)
from treesens.interfaces.cli.main import main

MODEL = str(Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_xgb.json")


def test_nothing_is_raised_when_no_signal_came():
    with interrupts_recorded():
        raise_if_interrupted()


def test_a_lost_sigterm_is_raised_again_as_terminated():
    with interrupts_recorded():
        record(signal.SIGTERM)
        with pytest.raises(Terminated) as e:
            raise_if_interrupted()
    assert e.value.signum == signal.SIGTERM


def test_a_lost_ctrl_c_is_raised_again_as_a_keyboard_interrupt():
    with interrupts_recorded():
        record(signal.SIGINT)
        with pytest.raises(KeyboardInterrupt) as e:
            raise_if_interrupted()
    assert not isinstance(e.value, Terminated)


def test_a_signal_recorded_by_an_earlier_command_is_forgotten():
    with interrupts_recorded():
        record(signal.SIGTERM)
    with interrupts_recorded():
        raise_if_interrupted()


def test_a_plain_keyboard_interrupt_after_sigterm_exits_as_sigterm(tmp_path, capsys):
    plugin = tmp_path / "after_sigterm.py"
    plugin.write_text(
        "import signal\n"
        "from treesens.interfaces.cli.interrupts import record\n"
        "record(signal.SIGTERM)\n"
        "raise KeyboardInterrupt\n"
    )
    assert main(["check", MODEL, "--vary", "mean_radius", "--plugin", str(plugin)]) == 143
    assert capsys.readouterr().err.strip().splitlines()[-1] == "treesens: terminated by SIGTERM"
