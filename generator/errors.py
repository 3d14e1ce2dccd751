"""The one error type the generator raises for bad input.

Every stage raises `GeneratorError` for problems in what the user gave it.
The CLI turns it into a one-line message (plus a caret line for positions in
the expression) and exit status 2; anything else is a bug.
"""

from __future__ import annotations


class GeneratorError(Exception):
    """Bad input: an expression, an option or a config value."""

    def __init__(self, message: str, *, source: str | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.source = source
        self.column = column

    def render(self) -> str:
        """The message as shown on stderr: one line, then the caret under the position if known."""
        if self.source is None or self.column is None:
            return f"error: {self.message}"
        line = self.source.replace("\n", " ").replace("\t", " ")
        col = max(0, min(self.column, len(line)))
        return f"error: {self.message} (at column {col + 1})\n  {line}\n  {' ' * col}^"
