"""``python -m treesens``: the ``treesens`` command."""

import sys

from .interfaces.cli.main import console_main

sys.exit(console_main())
