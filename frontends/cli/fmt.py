"""treesens fmt FILE.sens: print a query file back in canonical form."""

from __future__ import annotations

import sys
from pathlib import Path

from ..sens import format_sens, parse_file


def add_parser(sub) -> None:
    p = sub.add_parser(
        "fmt",
        help="print a .sens file in canonical form",
        description="Parse a .sens file and print it back canonically: one statement per "
        "line, blocks indented by two spaces, numbers and names written one way; comments "
        "are kept. Only the syntax is checked (the model is not loaded).",
    )
    p.add_argument("file", metavar="FILE.sens")
    p.add_argument("--write", "-w", action="store_true", help="rewrite the file in place")
    p.add_argument(
        "--check",
        action="store_true",
        help="print nothing; exit 1 if the file is not in canonical form",
    )
    p.set_defaults(func=run)


def run(args) -> int:

    ast = parse_file(args.file)
    text = format_sens(ast)
    if args.check:
        return 0 if text == ast.source else 1
    if args.write:
        if text != ast.source:
            Path(args.file).write_text(text, encoding="utf-8")
        return 0
    sys.stdout.write(text)
    return 0
