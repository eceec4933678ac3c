"""A signal handler that raises while numba's compiled code calls back into Python makes
numba's dispatcher return a SystemError raised from the interruption
(search/compiled_calls.py): inside ``signals_raised`` that is the interruption again, so
a search's partial answer and the CLI's clean-up see Ctrl-C and SIGTERM as such."""

from __future__ import annotations

import signal

import pytest

from treesens.interfaces.cli.interrupts import Terminated
from treesens.search.compiled_calls import interruption_behind, signals_raised


def _as_numba_raises(interruption: BaseException) -> SystemError:
    """numba's chain: the dispatcher's SystemError from the unpickler's, from the signal's."""
    try:
        try:
            try:
                raise interruption
            except BaseException as e:
                raise SystemError("<function _numba_unpickle> returned a result") from e
        except SystemError as e:
            raise SystemError("CPUDispatcher(<function run>) returned a result") from e
    except SystemError as e:
        return e


def test_a_system_error_raised_from_ctrl_c_is_ctrl_c():
    with pytest.raises(KeyboardInterrupt), signals_raised():
        raise _as_numba_raises(KeyboardInterrupt())


def test_a_system_error_raised_from_sigterm_is_the_cli_s_terminated():
    with pytest.raises(Terminated) as e, signals_raised():
        raise _as_numba_raises(Terminated(signal.SIGTERM))
    assert e.value.signum == signal.SIGTERM


def test_a_system_error_no_interruption_is_behind_stays_a_system_error():
    with pytest.raises(SystemError), signals_raised():
        raise _as_numba_raises(ValueError("a bug"))


def test_a_cycle_of_causes_ends_the_look_for_an_interruption():
    a, b = SystemError("a"), SystemError("b")
    a.__cause__, b.__cause__ = b, a
    assert interruption_behind(a) is None


def test_an_error_other_than_a_system_error_passes_through_as_itself():
    error = ValueError("a bug")
    with pytest.raises(ValueError) as e, signals_raised():
        raise error
    assert e.value is error
