"""The one error type the generator raises for bad input.

Every stage raises `GeneratorError` for problems in what the user gave it.
The CLI turns it into a one-line message (plus a caret line for positions in
the expression) and exit status 2; anything else is a bug.
"""

from __future__ import annotations


def _printable(text: str) -> str:
    """`text` with control characters escaped, so a message cannot drive the terminal."""
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


def _echo(source: str) -> str:
    """The expression as echoed above the caret: one column per character, printable ASCII only.

    Tabs become spaces and anything else outside printable ASCII becomes '?',
    so that the caret stays under the right character (a wide or combining
    character would shift it) and nothing reaches the terminal unescaped.
    """
    return "".join(" " if ch in "\t\n\r" else ch if " " <= ch <= "~" else "?" for ch in source)


class GeneratorError(Exception):
    """Bad input: an expression, an option or a config value."""

    def __init__(self, message: str, *, source: str | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.source = source
        self.column = column

    def render(self) -> str:
        """The message as shown on stderr: one line, then the caret under the position if known."""
        message = _printable(self.message)
        if self.source is None or self.column is None:
            return f"error: {message}"
        line = _echo(self.source)
        col = max(0, min(self.column, len(line)))
        return f"error: {message} (at column {col + 1})\n  {line}\n  {' ' * col}^"
