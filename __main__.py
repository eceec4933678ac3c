"""``python -m treesens``: the ``treesens`` command."""

import sys

from .interfaces.cli.main import console_main

if __name__ == "__main__":  # not when a tool imports every module of the package
    sys.exit(console_main())
