"""Starting CLI processes in tests the way a terminal would."""

from __future__ import annotations

import signal


def sigint_as_from_a_terminal() -> None:
    """``preexec_fn`` for a child that must take Ctrl-C: a shell's background job
    (`pytest ... &`, `nohup`) starts with SIGINT ignored, and Python keeps an ignored SIGINT
    ignored, so restore the default before the child's interpreter starts."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
