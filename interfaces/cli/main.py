"""The ``treesens`` command. Each subcommand lives in its own module of this package,
exposing ``HELP`` (its line in ``treesens --help``), ``DESCRIPTION`` (optional, the head of
its own ``--help``), ``add_arguments(parser)`` and ``run(args) -> int`` (the exit code);
:func:`add_command` makes its parser."""

from __future__ import annotations

import os
import time


def _treesens_start() -> float:
    """When this run of treesens started, so that --timeout covers interpreter start-up.

    The process's creation (Linux), unless the process existed before treesens did: a
    shell that runs ``sleep 5 && treesens ...`` execs into it, keeping its creation time.
    A fresh interpreter has been busy since it started, so it is at most as old as the
    CPU time it has used plus the time it waited for a CPU (a loaded machine's run queue).
    """
    now = time.time()
    by_cpu = now - time.process_time() - _run_queue_wait()
    try:
        with open("/proc/self/stat") as f:
            ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        created = now - uptime + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return by_cpu
    return min(now, max(created, by_cpu))


def _run_queue_wait() -> float:
    """Seconds this process's main thread has waited for a CPU (Linux), else 0."""
    try:
        with open("/proc/self/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


START = _treesens_start()  # time limits count from here
_START_PID = os.getpid()


def command_start() -> float:
    """When this command started: ``START``, or in a process forked after this module's
    import (a server that imported treesens once and forks a process a command) the
    child's own start, not its parent's import (which a forked child inherits)."""
    return START if os.getpid() == _START_PID else _treesens_start()


import argparse  # noqa: E402
import contextlib  # noqa: E402
import importlib  # noqa: E402
import re  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402
import warnings  # noqa: E402

from ... import __version__  # noqa: E402
from ...compiler.errors import (  # noqa: E402
    COMMAND_LINE,
    CONSTRAINT_WORDS,
    CONSTRAINTS_BY_FLAG,
    PYTHON,
    DataNote,
    InputError,
    TreesensWarning,
    near_matches,
    notes_once,
    speaking,
)
from ...compiler.options import timeout_problem  # noqa: E402
from ...readers.libraries import prefer_lean_imports  # noqa: E402
from ...readers.plugins import load_plugin  # noqa: E402
from ...search.walk_setting import cut_walk, own_cuts  # noqa: E402
from .ending import end_at_once, end_from_another_thread, end_process  # noqa: E402
from .interrupts import (  # noqa: E402
    Terminated,
    interrupts_recorded,
    record,
    recorded_signal,
    signal_behind,
)
from .termination import GRACE, ended_within, kill_children  # noqa: E402

# subcommand name -> module (relative to this package)
COMMANDS = {
    "check": ".check",
    "backends": ".backends_cmd",
    "compare": ".compare",
    "emit": ".emit",
    "run": ".run",
    "test": ".contract_cmd",
    "fmt": ".fmt",
    "sweep": ".sweep",
    "audit": ".audit",
    "report": ".report",
    "verify": ".verify",
}


def _modules(only: str | None = None):
    """The subcommand modules (``only``: that one alone, when it is a command)."""
    names = [only] if only in COMMANDS else list(COMMANDS)
    for name in names:
        mod = COMMANDS[name]
        try:
            yield name, importlib.import_module(mod, __package__)
        except ModuleNotFoundError as e:
            if e.name and e.name.startswith(__package__):
                continue  # a subcommand not built yet
            raise


# what a command without --where says of it
WHERE_TAKEN_BY = (
    "--where is taken by check, sweep, compare and emit, and a .sens file's queries "
    "write a where clause (docs/language.md, 'Constraints')"
)


# what a .sens file given where a model goes is told (as readers/load._not_a_model says)
SENS_NOT_A_MODEL = "a .sens query file, not a model: run it with treesens run FILE.sens"


class OneLineParser(argparse.ArgumentParser):
    """argparse, with a bad flag or value told in one line (``treesens: error: --gap:
    'abc' is not a number (see treesens check --help)``), in the voice of every input error, and exit code 2, not the usage dump."""

    def error(self, message: str):
        message = message.removeprefix("argument ")
        sens = getattr(self, "sens_file", None)
        if sens and message.startswith("the following arguments are required: --vary"):
            message = f"{sens}: {SENS_NOT_A_MODEL}"  # not a model without --vary: a query file
        elif message.startswith("the following arguments are required: --vary"):
            message += _features_without_vary(getattr(self, "words", ()))
            message += self.flag_guess(["--vary"])
        elif message.startswith("unrecognized arguments"):
            message += _word_after_model(getattr(self, "words", ()), message)
        words = re.findall(r"(?:^|\s)--?([\w-]+)", message.partition(":")[2])
        if message.startswith("unrecognized arguments") and set(words) & set(CONSTRAINT_WORDS):
            # a flag for them is what the user tried
            message += f"; {WHERE_TAKEN_BY if 'where' in words else CONSTRAINTS_BY_FLAG}"
        elif message.startswith("unrecognized arguments"):
            message += self.flag_guess(message.partition(":")[2].split())
        message = _with_guess(message)
        prog = self.prog
        if message.startswith("unrecognized arguments") and getattr(self, "command", None):
            prog += f" {self.command}"  # told by the top parser: the words are the command's
        print(f"treesens: error: {message} (see {prog} --help)", file=sys.stderr)
        raise SystemExit(2)

    def flag_guess(self, asked: list[str]) -> str:
        """The flag a misspelt one most likely meant ("; did you mean --gap for --gaps?"),
        "" without one: argparse names an unknown flag alone, and a required flag whose
        name was misspelt (``--Vary``) as missing. ``asked``: the words argparse named
        (the unknown words, or the required flags)."""
        known, asked = self.command_flags(), [w.partition("=")[0] for w in asked]
        for word in (w.partition("=")[0] for w in getattr(self, "words", ())):
            if not word.startswith("--") or word in known:
                continue
            near = near_matches(word, known, 1)
            if near and (word in asked or near[0] in asked):
                return f"; did you mean {near[0]} for {word}?"
        return ""

    def command_flags(self) -> list[str]:
        """The long flags of the command the words name (none for an unknown command)."""
        for action in getattr(self, "_actions", ()):
            choices = getattr(action, "choices", None)
            if isinstance(choices, dict) and self.command in choices:
                return [f for f in choices[self.command]._option_string_actions if f[:2] == "--"]
        return [f for f in getattr(self, "_option_string_actions", {}) if f[:2] == "--"]


# a command a new user tries that is a flag of a command: what asks it
ASKED_BY_A_FLAG = {
    "max-gap": "a max gap is asked with check MODEL --vary F --max-gap, a ranking of every "
    "feature with sweep MODEL --max-gap",
    "certify": "a certificate is written by check MODEL ... --certificate FILE, checked "
    "with verify FILE",
}


def _with_guess(message: str) -> str:
    """An argparse 'invalid choice' message with the closest choices guessed ("invalid
    choice: 'chek' (did you mean 'check'?) (choose from ...)"), or the flag that asks
    what a command named for it would ("max-gap": check --max-gap); any other unchanged."""
    m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)$", message)
    if m is None:
        return message
    near = near_matches(m[1], re.findall(r"'([^']*)'", m[2]))
    command = message.startswith("COMMAND:")
    flag = ASKED_BY_A_FLAG.get(m[1].lower().replace("_", "-")) if command else None
    if not near and flag is None:
        return message
    guess = f" ({flag})" if flag else f" (did you mean {', '.join(map(repr, near))}?)"
    return message[: m.end(1) + 1] + guess + message[m.end(1) + 1 :]


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The command's parser; given the command line, only its subcommand's module is
    imported (``treesens check`` does not pay for the .sens grammar of ``run``)."""
    p = OneLineParser(
        prog="treesens",
        description="Is a tree ensemble sensitive to a set of features? A proof of 'no', "
        "or a replay-checked pair of inputs.",
    )
    p.add_argument("--version", action="version", version=f"treesens {__version__}")
    p.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    p.command, p.words = _command_of(argv), list(argv or ())
    for name, mod in _modules(p.command):
        command = add_command(sub, name, mod)
        command.sens_file, command.words = _sens_file_of(argv), list(argv or ())
    return p


def _features_without_vary(argv, flag: str = "--vary") -> str:
    """For ``check MODEL sex`` (the features without their flag): "; 'sex' after the
    model names no flag: --vary sex"; "" where no such word follows the model."""
    bare = _bare_words(argv)
    if len(bare) < 3:  # the command and the model
        return ""
    return f"; {bare[2]!r} after the model names no flag: {flag} {bare[2]}"


# the flag a word given after the model most likely stands for, by command (a .sens
# file's: --query), where argparse would say only "unrecognized arguments"
FLAG_AFTER_MODEL = {"compare": "--vary", "emit": "--vary", "sweep": "--features"}


# the flags that take a comma-separated list (of features, backends, classes, passes)
LIST_FLAGS = ("--vary", "--features", "--protected", "--backends", "--classes", "--passes")


def _word_after_model(argv, message: str) -> str:
    """For ``compare MODEL sex`` and the like (``FLAG_AFTER_MODEL``), what
    ``_features_without_vary`` says, when the unrecognized words start with it; for
    ``--vary sex bmi`` (or run's ``--query a b``), that the list is one word,
    comma-separated."""
    argv = list(argv)
    unknown = message.partition(":")[2].split()
    # run's --query takes names as a list too (test's and compare's one name)
    lists = LIST_FLAGS + (("--query",) if _command_of(argv) == "run" else ())
    if unknown and unknown[0] in argv[2:] and not unknown[0].startswith("-"):
        i = argv.index(unknown[0], 2)
        if argv[i - 2] in lists:
            flag, given = argv[i - 2], argv[i - 1].rstrip(",")
            return f"; {flag} takes one comma-separated list: {flag} {given},{unknown[0]}"
    bare = _bare_words(argv)
    flag = FLAG_AFTER_MODEL.get(bare[0]) if bare else None
    if flag is None or len(bare) < 3 or not unknown or unknown[0] != bare[2]:
        return ""
    if bare[1].lower().endswith(".sens") and bare[0] != "sweep":
        flag = "--query"
    return _features_without_vary(argv, flag)


def _bare_words(argv) -> list[str]:
    """The words of a command line that are neither flags nor (by their place) a flag's
    value: the command, the model, and any the user gave without a flag."""
    return [
        w
        for i, w in enumerate(argv)
        if not w.startswith("-") and not (i and argv[i - 1].startswith("-"))
    ]


def _sens_file_of(argv: list[str] | None) -> str | None:
    """The first word of a command line that names a .sens file, if any."""
    return next((w for w in argv or () if w.lower().endswith(".sens")), None)


def _command_of(argv: list[str] | None) -> str | None:
    """The subcommand a command line names: its first word that is not a flag (the
    top-level flags take no value)."""
    for word in argv or ():
        if not word.startswith("-"):
            return word
    return None


def add_command(sub, name: str, mod) -> argparse.ArgumentParser:
    """The parser of one subcommand module, its flags, and its ``run`` as ``args.func``."""
    p = sub.add_parser(
        name,
        help=mod.HELP,
        description=getattr(mod, "DESCRIPTION", None),
        conflict_handler=getattr(mod, "CONFLICT_HANDLER", "error"),
    )
    mod.add_arguments(p)
    p.set_defaults(func=mod.run)
    return p


TERMINATION_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)


def _solver_workers():
    """The solver processes' module when the command has loaded it (a query the
    heuristic or the box search answers never does: then no solver process exists)."""
    return sys.modules.get(__package__.rsplit(".", 2)[0] + ".backends.worker")


def kill_solver_processes() -> None:
    if (workers := _solver_workers()) is not None:
        workers.kill_now()


def end_solver_processes() -> None:
    if (workers := _solver_workers()) is not None:
        workers.shutdown()


def _terminate(signum: int, frame) -> None:
    # a second signal during the clean-up ends the process at once (the solver
    # processes die with it: see backends/worker.py)
    signal.signal(signum, signal.SIG_DFL)
    kill_solver_processes()  # at once: unwinding the command may take a while
    record(signum)  # raised again between two results if a finaliser drops this one
    raise Terminated(signum)


@contextlib.contextmanager
def _termination_handled():
    """SIGTERM and SIGHUP raise :class:`Terminated` while the command runs."""
    previous = {}
    for sig in TERMINATION_SIGNALS:
        with contextlib.suppress(ValueError, OSError):  # not the main thread: leave them
            previous[sig] = signal.signal(sig, _terminate)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            with contextlib.suppress(ValueError, OSError, TypeError):
                signal.signal(sig, handler)


# about 31 years: no limit in practice; far beyond it, deadlines overflow the clock


# the flags that name a file to write, by their dest (a value ending in '/' names a folder)
OUTPUT_FLAGS = {
    "out": "--out",
    "results": "--results",
    "resume": "--resume",
    "table_out": "--table-out",
    "plot": "--plot",
    "certificate": "--certificate",
    "junit": "--junit",
    "output": "-o",
}


def _check_output_files(args) -> None:
    """A file to write named as a folder (``--junit out/``) is refused: the trailing '/'
    was dropped and a file named ``out`` written, where a file inside was meant."""
    for dest, flag in OUTPUT_FLAGS.items():
        value = getattr(args, dest, None)
        if isinstance(value, str) and value.endswith(("/", os.sep)):
            raise InputError(f"{flag} {value}: names a folder (it ends in '/'): give a file's name")


def _check_timeout(args) -> None:
    """--timeout (every command that has one): a finite number of seconds, capped."""
    t = getattr(args, "timeout", None)
    if t is not None and timeout_problem(t):
        raise InputError(f"--timeout {t:g}: {timeout_problem(t)}")


# a message about a Python keyword ("vary: ...", "margin gap -1 ...", "option clause_time
# takes ...") names the flag on the command line
_FLAG_WORDS = re.compile(
    r"^(?:option )?(vary|classes|features|protected|sample|subsets|gap|margin[ _]gap|delta|"
    r"seed|timeout|threads|by|backends|clause_time|prob_alpha|stall_time|optimise_time|"
    r"optimality_gap)\b"
)


def in_flags(e: InputError, args) -> str:
    """An input error as the command line says it: a keyword it starts with is the flag
    (not for a .sens file's own words, nor a message about a file)."""
    if e.where or args.command in ("run", "fmt"):
        return str(e)
    return _FLAG_WORDS.sub(lambda m: "--" + re.sub("[ _]", "-", m.group(1)), e.message, count=1)


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    """treesens' own warnings as one line; others as Python prints them."""
    if issubclass(category, DataNote):
        print(f"note: {message}", file=file or sys.stderr)
    elif issubclass(category, TreesensWarning):
        print(f"treesens: warning: {message}", file=file or sys.stderr)
    else:
        _SHOW_WARNING(message, category, filename, lineno, file, line)


_SHOW_WARNING = warnings.showwarning


def main(argv=None, *, start: float | None = None) -> int:
    """Run one command; ``start``: when its time limit starts (default now: a program
    that calls main, or calls it again, does not count what it did before)."""
    argv = sys.argv[1:] if argv is None else argv
    warnings.showwarning = _one_line_warning
    parser = build_parser(argv)
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse already printed its message; bad flags are exit 2
        return int(e.code or 0)
    args.start = time.time() if start is None else start
    args.argv = [str(a) for a in argv]  # the command as given (a report's "Reproduce with")
    if not args.command:
        parser.print_help(sys.stderr)
        return 2
    debug = args.debug or os.environ.get("TREESENS_DEBUG")
    # a .sens file's messages name its settings as words (delta, gap), not as flags
    spoken = PYTHON if args.command in ("run", "fmt") else COMMAND_LINE
    # a data note once, whichever of the command's routes read the data
    with _termination_handled(), interrupts_recorded(), speaking(spoken), notes_once():
        try:
            _check_timeout(args)
            cut_walk()  # a TREESENS_CUT_WALK that does not parse: refused before any work
            own_cuts()  # and a TREESENS_CUT_WALK_OWN
            _check_output_files(args)
            for plugin in getattr(args, "plugin", None) or ():  # before any name is looked up
                load_plugin(plugin)
            return int(args.func(args) or 0)
        except InputError as e:
            # a located error (.sens files) is already "FILE:LINE:COL: message" + line + caret
            located = getattr(e, "located", False)
            print(str(e) if located else f"treesens: error: {in_flags(e, args)}", file=sys.stderr)
            return 2
        except KeyboardInterrupt as e:
            # a search that carries its partial answer may re-raise a plain KeyboardInterrupt
            signum = e.signum if isinstance(e, Terminated) else recorded_signal()
            return _ended_by(signum or signal.SIGINT)
        except BrokenPipeError:
            return 0
        except Exception as e:  # noqa: BLE001 - one line, never a bare traceback
            if (signum := signal_behind(e)) is not None:  # a compile the signal broke into
                return _ended_by(signum)
            if debug:
                raise
            print(
                f"treesens: internal error: {type(e).__name__}: {e} "
                "(run with --debug for the traceback)",
                file=sys.stderr,
            )
            return 1


def _ended_by(signum: int) -> int:
    """The command ended by ``signum``: its line said, its exit code."""
    end_solver_processes()  # first: no solver process outlives the command
    _ENDED_BY_SIGNAL.append(True)
    print(ended_line(signum), file=sys.stderr)
    return 128 + signum


def ended_line(signum: int) -> str:
    """The one line of a command a signal ended."""
    if signum == signal.SIGINT:
        return "treesens: interrupted"
    return f"treesens: terminated by {signal.Signals(signum).name}"


def _force_end(signum: int) -> None:
    """The main thread's clean-up has not ended the process ``GRACE`` s after the signal
    (interfaces/cli/termination.py): end it from the watching thread."""
    kill_solver_processes()
    kill_children()  # a process pool's, busy with their queries
    end_from_another_thread(128 + signum, None if _ENDED_BY_SIGNAL else ended_line(signum))


# set by main() when a signal or Ctrl-C ended the command (a list: no `global` needed)
_ENDED_BY_SIGNAL: list[bool] = []


def _leave(code: int) -> int:
    """End the command's process once the command is done (interfaces/cli/ending.py).

    After a signal, at once once the clean-up is done: the interpreter's own tear-down
    would first collect every object of the model (seconds on a busy machine for a few
    hundred trees) while threads still pickle a problem for solver processes that are
    already gone. Otherwise as the interpreter would end it, less its tear-down."""
    if _ENDED_BY_SIGNAL:
        end_at_once(code)
    return end_process(code)


def console_main() -> int:
    """The ``treesens`` command: :func:`main` in a process of its own."""
    prefer_lean_imports()
    with ended_within(GRACE, _force_end):
        return _leave(main(start=command_start()))


if __name__ == "__main__":
    sys.exit(console_main())
