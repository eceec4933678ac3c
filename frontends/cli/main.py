"""The ``treesens`` command. Each subcommand lives in its own module of this package,
exposing ``add_parser(subparsers)`` and ``run(args) -> int`` (the exit code)."""

from __future__ import annotations

import time


def _process_start() -> float:
    """When this process started (Linux), so that --timeout covers interpreter start-up too."""
    try:
        with open("/proc/self/stat") as f:
            ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        import os as _os

        started = time.time() - uptime + ticks / _os.sysconf("SC_CLK_TCK")
        return min(started, time.time())
    except (OSError, ValueError, IndexError):
        return time.time()


START = _process_start()  # time limits count from here

import argparse  # noqa: E402
import importlib  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

from ...compiler.errors import InputError  # noqa: E402

# subcommand name -> module (relative to this package)
COMMANDS = {
    "check": ".check",
    "backends": ".backends_cmd",
    "compare": ".compare",
    "emit": ".emit",
    "run": ".run",
    "fmt": ".fmt",
    "sweep": ".sweep",
    "audit": ".audit",
    "bench": ".bench",
}


def _modules():
    for name, mod in COMMANDS.items():
        try:
            yield name, importlib.import_module(mod, __package__)
        except ModuleNotFoundError as e:
            if e.name and e.name.startswith(__package__):
                continue  # a subcommand not built yet
            raise


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="treesens",
        description="Is a tree ensemble sensitive to a set of features? A proof of 'no', "
        "or a replay-checked pair of inputs.",
    )
    from ... import __version__

    p.add_argument("--version", action="version", version=f"treesens {__version__}")
    p.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for _, mod in _modules():
        mod.add_parser(sub)
    return p


class _Parser(argparse.ArgumentParser):
    pass


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse already printed its message; bad flags are exit 2
        return int(e.code or 0)
    if not args.command:
        parser.print_help(sys.stderr)
        return 2
    debug = args.debug or os.environ.get("TREESENS_DEBUG")
    try:
        return int(args.func(args) or 0)
    except InputError as e:
        # a located error (.sens files) is already "FILE:LINE:COL: message" + line + caret
        print(str(e) if getattr(e, "located", False) else f"treesens: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("treesens: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:  # noqa: BLE001 - one line, never a bare traceback
        if debug:
            raise
        print(
            f"treesens: internal error: {type(e).__name__}: {e} (run with --debug for the traceback)",
            file=sys.stderr,
        )
        return 1


def console_main() -> int:
    """The ``treesens`` command: :func:`main` in a process of its own."""
    from ..libraries import prefer_lean_imports

    prefer_lean_imports()
    return main()


if __name__ == "__main__":
    sys.exit(console_main())
