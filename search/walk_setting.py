"""TREESENS_CUT_WALK, the cut walk's setting, and TREESENS_CUT_WALK_OWN, whether it walks
its own cuts (cut_walk_phases.py): read where a max-gap search and the phases start, and
checked where a command starts (a value that does not parse is refused, not taken as off).
Apart from the phases so that the command line reads them without numpy."""

from __future__ import annotations

import math
import os

from ..compiler.errors import InputError

CUT_WALK_VARIABLE = "TREESENS_CUT_WALK"
# the setting where the variable is not set: after 200,000 boxes at one floor, over a varied
# feature of at least 8 values (intervals between its thresholds, or categories). The walk
# pays where the trees reading F disagree on its values: adult lgbm_t1000_l63's education
# (16) and workclass (8), 0.3-0.4x the CPU; on features of 2-5 values (churn's, adult's
# race and sex) it gives up and costs 12-46 s each (bench/reports/scale-tier.md, "The cut
# walk on by default")
CUT_WALK_DEFAULT: tuple[float, int, int] | None = (4.4, 200_000, 8)
OWN_CUTS_VARIABLE = "TREESENS_CUT_WALK_OWN"
# the walk's own cuts where the variable is not set: on (a record's cuts lose to them on
# every feature measured: bench/reports/scale-tier.md, "The walk's own cuts")
OWN_CUTS_DEFAULT = True
_OFF = ("", "0", "off")
_ON = ("1", "on")


def cut_walk_setting(text: str) -> tuple[float, int, int] | None:
    """TREESENS_CUT_WALK's "rise_rows,after_boxes[,least_values]" as (rise_rows,
    after_boxes, least_values; 0 where not given: a feature of any number of values); None
    where "off", "0" or empty. Anything else is refused (InputError): a mistyped value must
    not run a search other than the one asked for."""
    if text.strip().lower() in _OFF:
        return None
    parts = text.split(",")
    try:
        least = int(parts[2]) if len(parts) == 3 else 0
        setting = float(parts[0]), int(parts[1]), least
        ok = len(parts) <= 3 and math.isfinite(setting[0]) and min(setting) >= 0
    except (ValueError, IndexError):
        ok = False
    if not ok:
        raise InputError(
            f'{CUT_WALK_VARIABLE}={text!r}: expected "rise_rows,after_boxes" or '
            f'"rise_rows,after_boxes,least_values" (e.g. "4.4,200000,8": a number of at '
            f'least 0, a whole number of boxes, of values) or "off"'
        )
    return setting


def cut_walk() -> tuple[float, int, int] | None:
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
