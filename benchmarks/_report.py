"""Output helpers shared by the benchmark scripts: Markdown tables, the commit line, the shown options."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table with padded columns."""
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]
    line = lambda cells: "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"  # noqa: E731
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), sep, *(line(r) for r in rows)])


def commit_note() -> str:
    """`commit abc1234`, and whether generator/ or templates/ have uncommitted changes."""
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "generator", "templates"], cwd=REPO_ROOT, capture_output=True, text=True
    ).stdout.strip()
    return f"commit {commit or '?'}{' with uncommitted changes to generator/ or templates/' if dirty else ''}"


def shown_argv(argv: Sequence[str]) -> list[str]:
    """The options to print in a report's "Produced by" line: all but --output and its path."""
    shown: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--output":
            skip = True
        elif not arg.startswith("--output="):
            shown.append(arg)
    return shown
