"""treesens fmt FILE.sens: print a query file back in canonical form."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ...language import format_sens, parse_file

HELP = "print a .sens file in canonical form"
DESCRIPTION = """
Parse a .sens file and print it back canonically: one statement per line, blocks indented by two
spaces, numbers and names written one way; comments are kept. Only the syntax is checked (the
model is not loaded).
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE.sens")
    p.add_argument("--write", "-w", action="store_true", help="rewrite the file in place")
    p.add_argument(
        "--check",
        action="store_true",
        help="print nothing on stdout; exit 1, saying so on stderr, if the file is not in "
        "canonical form",
    )


def run(args) -> int:
    ast = parse_file(args.file)
    text = format_sens(ast)
    if args.check:
        if text == ast.source:
            return 0
        line = first_difference(ast.source, text)
        print(
            f"{args.file}: not in canonical form (first difference at line {line}); "
            f"treesens fmt -w {args.file} rewrites it",
            file=sys.stderr,
        )
        return 1
    if args.write:
        if text != ast.source:
            Path(args.file).write_text(text, encoding="utf-8")
        return 0
    sys.stdout.write(text)
    return 0


def first_difference(old: str, new: str) -> int:
    """The number (from 1) of the first line where two texts differ."""
    a, b = old.splitlines(), new.splitlines()
    for i, (x, y) in enumerate(zip(a, b), start=1):
        if x != y:
            return i
    return min(len(a), len(b)) + 1
