"""Errors of the ``.sens`` language: a message located at a place of a file."""

from __future__ import annotations

from ..compiler.errors import InputError


class SensError(InputError):
    """A problem at a place in a ``.sens`` file: ``FILE:LINE:COL: message``, the line, a caret.

    ``located`` tells the CLI to print the message as it is (no ``treesens: error:``
    prefix), so the first line is exactly ``FILE:LINE:COL: message``.
    """

    located = True

    def __init__(
        self, message: str, filename: str, line: int, column: int, source_line: str | None = None
    ):
        self.filename, self.line, self.column = filename, line, column
        self.source_line = source_line
        super().__init__(message, f"{filename}:{line}:{column}")

    def __str__(self) -> str:
        head = f"{self.where}: {self.message}"
        if self.source_line is None:
            return head
        src, at = _clip(self.source_line.rstrip("\r\n"), max(self.column - 1, 0))
        caret = "".join(c if c == "\t" else " " for c in src[:at]) + "^"
        return f"{head}\n{src}\n{caret}"


CONTEXT_WIDTH = 100  # the most characters of the offending line an error shows


def _clip(src: str, at: int, width: int = CONTEXT_WIDTH) -> tuple[str, int]:
    """The offending line cut to about ``width`` characters around index ``at`` (``...``
    marks a cut), and the index of ``at`` in the cut line: a model given instead of a
    .sens file has a first line of megabytes."""
    if len(src) <= width:
        return src, at
    start = min(max(at - width // 2, 0), len(src) - width)
    if start > 0:
        start += 3  # room for the leading "..."
    end = start + width - (3 if start > 0 else 0)
    head = "..." if start > 0 else ""
    tail = "..." if end < len(src) else ""
    if tail:
        end -= 3
    return head + src[start:end] + tail, at - start + len(head)


# ---------------------------------------------------------------------------------------
# the typed AST (positions are kept for messages but never compared)
# ---------------------------------------------------------------------------------------


def located(message: str, filename: str, source: str, at) -> SensError:
    """A SensError at ``at``: an AST node (its position), a position, or None (line 1)."""
    pos = getattr(at, "pos", at)
    line, col = (pos.line, pos.column) if pos is not None else (1, 1)
    lines = source.splitlines()
    src = lines[line - 1] if 0 < line <= len(lines) else None
    return SensError(message, filename, line, col, src)
