"""The solver worker's entry point: ``python -m treesens.backends.worker_process MODULE
MEMORY_MB PARENT_PID`` serves ``worker.serve``. A module of its own because importing
the ``treesens`` package already imports ``worker``, and running an imported module with
``-m`` makes Python warn on every worker start."""

import sys

from .worker import serve

if __name__ == "__main__":
    serve(
        sys.argv[1],
        int(sys.argv[2]) if len(sys.argv) > 2 else 0,
        int(sys.argv[3]) if len(sys.argv) > 3 else 0,
    )
