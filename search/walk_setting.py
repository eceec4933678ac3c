"""TREESENS_CUT_WALK, the cut walk's setting, and TREESENS_CUT_WALK_OWN, whether it walks
its own cuts (cut_walk_phases.py): read where a max-gap search and the phases start, and
checked where a command starts (a value that does not parse is refused, not taken as off).
Apart from the phases so that the command line reads them without numpy."""

from __future__ import annotations

import math
import os

from ..compiler.errors import InputError

CUT_WALK_VARIABLE = "TREESENS_CUT_WALK"
# the setting where the variable is not set: None, off
CUT_WALK_DEFAULT: tuple[float, int] | None = None
OWN_CUTS_VARIABLE = "TREESENS_CUT_WALK_OWN"
# the walk's own cuts where the variable is not set: off (a record's cuts)
OWN_CUTS_DEFAULT = False
_OFF = ("", "0", "off")
_ON = ("1", "on")


def cut_walk_setting(text: str) -> tuple[float, int] | None:
    """TREESENS_CUT_WALK's "rise_rows,after_boxes" as (rise_rows, after_boxes); None
    where "off", "0" or empty. Anything else is refused (InputError): a mistyped value
    must not run a search other than the one asked for."""
    if text.strip().lower() in _OFF:
        return None
    try:
        rise, after = text.split(",")
        setting = float(rise), int(after)
    except ValueError:
        setting = None
    if setting is None or not (math.isfinite(setting[0]) and setting[0] >= 0 and setting[1] >= 0):
        raise InputError(
            f'{CUT_WALK_VARIABLE}={text!r}: expected "rise_rows,after_boxes" (e.g. '
            f'"4.4,200000": a number of at least 0 and a whole number of boxes) or "off"'
        )
    return setting


def cut_walk() -> tuple[float, int] | None:
    """The cut walk's setting now: TREESENS_CUT_WALK's, else ``CUT_WALK_DEFAULT``."""
    text = os.environ.get(CUT_WALK_VARIABLE)
    return CUT_WALK_DEFAULT if text is None else cut_walk_setting(text)


def own_cuts_setting(text: str) -> bool:
    """TREESENS_CUT_WALK_OWN's value: True where "1" or "on", False where "0", "off" or
    empty. Anything else is refused (InputError), as for TREESENS_CUT_WALK."""
    word = text.strip().lower()
    if word in _ON or word in _OFF:
        return word in _ON
    raise InputError(f'{OWN_CUTS_VARIABLE}={text!r}: expected "1" or "on", or "0", "off" or empty')


def own_cuts() -> bool:
    """Whether the walk cuts its own boxes now: TREESENS_CUT_WALK_OWN's, else
    ``OWN_CUTS_DEFAULT``."""
    text = os.environ.get(OWN_CUTS_VARIABLE)
    return OWN_CUTS_DEFAULT if text is None else own_cuts_setting(text)
