"""Build a whole package from `[tool.generator]`: one module per function, plus `__init__.py`.

Every source is generated and formatted before anything is written, so one
failing function leaves the output untouched. Then only the files whose text
changed are written, atomically. Modules whose function left the config are
deleted, but only if they carry our header; a file without the header is
never touched, and one standing at a target path stops the build.
Hands on: a `Plan` (for `--check` and `--diff`), or the sorted list of files written.
"""

from __future__ import annotations

import difflib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from generator import __version__
from generator.config import Config, FunctionConfig
from generator.errors import GeneratorError
from generator.pipeline import Spec, generate
from generator.render import format_source
from generator.write import HEADER_MARK, HEADER_PREFIX, is_generated, write_atomic

INIT = "__init__.py"
BUILD_COMMAND = "python -m generator build"


class Kind(Enum):
    """Why a file would change; the value is how `--check` explains it."""

    MISSING = "missing"
    STALE = "stale: generated from other options or by another generator version"
    EDITED = "code differs: the generator changed, or the file was hand-edited"
    REMOVED = "its function is no longer in the config"


@dataclass(frozen=True)
class Change:
    """One file the build would create, rewrite or delete."""

    path: Path
    kind: Kind
    old: str | None  # None when missing
    new: str | None  # None when removed


@dataclass(frozen=True)
class Plan:
    """What a build would do, worked out without writing anything."""

    config: Config
    changes: tuple[Change, ...]  # sorted by path
    unchanged: tuple[Path, ...]  # sorted


def header_line() -> str:
    """The first line of every generated file; the same text templates/module.py.j2 starts with."""
    return f"{HEADER_PREFIX}{__version__}. {HEADER_MARK}."


def plan(config: Config, jobs: int = 1) -> Plan:
    """Generate every source (in `jobs` processes), compare with the output directory, and
    say what would change."""
    sources = _generate_all(config, jobs)
    if config.output.exists() and not config.output.is_dir():
        raise GeneratorError(f"{config.path}: tool.generator.output: {config.output} is not a directory")
    changes: list[Change] = []
    unchanged: list[Path] = []
    foreign: list[Path] = []
    for path, new in sorted(sources.items()):
        old = _read(path)
        if old is None:
            changes.append(Change(path, Kind.MISSING, None, new))
        elif not is_generated(old):
            foreign.append(path)
        elif old == new:
            unchanged.append(path)
        else:
            kind = Kind.STALE if _header(old) != _header(new) else Kind.EDITED
            changes.append(Change(path, kind, old, new))
    if foreign:
        listed = ", ".join(_display(p) for p in foreign)
        raise GeneratorError(
            f"refusing to overwrite {listed}: not generated (no '{HEADER_MARK}' header); "
            "move it away or rename the function"
        )
    for path, old in _orphans(config.output, set(sources)):
        changes.append(Change(path, Kind.REMOVED, old, None))
    return Plan(config, tuple(sorted(changes, key=lambda c: c.path)), tuple(unchanged))


def apply(the_plan: Plan) -> list[Path]:
    """Carry out a plan; returns the sorted list of files written (deletions are not listed)."""
    written: list[Path] = []
    if any(change.new is not None for change in the_plan.changes):
        try:
            the_plan.config.output.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise GeneratorError(f"cannot create {_display(the_plan.config.output)}: {exc.strerror or exc}") from exc
    for change in the_plan.changes:
        try:
            if change.new is None:
                change.path.unlink()
            else:
                write_atomic(change.path, change.new)
                written.append(change.path)
        except OSError as exc:
            raise GeneratorError(f"cannot write {_display(change.path)}: {exc.strerror or exc}") from exc
    return sorted(written)


def build(config: Config, jobs: int = 1) -> list[Path]:
    """Generate the package and write what changed; returns the sorted list of files written."""
    return apply(plan(config, jobs))


def describe(the_plan: Plan, *, dry_run: bool) -> Iterator[str]:
    """One line per change, then a summary, for stderr."""
    for change in the_plan.changes:
        if change.new is None:
            verb = "would delete" if dry_run else "deleted"
        elif change.old is None:
            verb = "would create" if dry_run else "created"
        else:
            verb = "would update" if dry_run else "updated"
        yield f"{verb} {_display(change.path)} ({change.kind.value})"
    output = _display(the_plan.config.output)
    count = len(the_plan.changes)
    if not count:
        yield f"{output}: {len(the_plan.unchanged)} files up to date"
    elif dry_run:
        yield f"{output}: {count} file{'s' * (count != 1)} would change; run `{BUILD_COMMAND}`"
    else:
        yield f"{output}: {count} file{'s' * (count != 1)} changed, {len(the_plan.unchanged)} unchanged"


def diff(the_plan: Plan) -> str:
    """Unified diffs of every change, with paths relative to the config file's directory."""
    root = the_plan.config.path.parent
    chunks = []
    for change in the_plan.changes:
        name = _relative(change.path, root)
        chunks.extend(
            difflib.unified_diff(
                (change.old or "").splitlines(keepends=True),
                (change.new or "").splitlines(keepends=True),
                fromfile="/dev/null" if change.old is None else f"a/{name}",
                tofile="/dev/null" if change.new is None else f"b/{name}",
            )
        )
    return "".join(chunks)


def _generate_all(config: Config, jobs: int = 1) -> dict[Path, str]:
    functions = list(config.functions)
    if jobs > 1 and len(functions) > 1:
        texts = _generate_in_processes(config, functions, min(jobs, len(functions)))
    else:
        texts = [generate_function(config, function) for function in functions]
    sources = {config.output / f"{function.name}.py": text for function, text in zip(functions, texts)}
    sources[config.output / INIT] = _package_init(config)
    return sources


def _generate_in_processes(config: Config, functions: list[FunctionConfig], workers: int) -> list[str]:
    """Each function's source, generated in `workers` processes, in config order. Every
    function is generated first; then the first error in config order is raised, as
    one process would (generation is deterministic: the same bytes either way)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # fork: the workers start with SymPy and the generator imported (spawn re-imports them,
    # about a second each). Not from a process that has TensorFlow (a test run, a notebook):
    # its threads do not survive a fork.
    forkable = "fork" in multiprocessing.get_all_start_methods() and "tensorflow" not in sys.modules
    method = "fork" if forkable else "spawn"
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method)) as pool:
        outcomes = list(pool.map(_outcome, [(config, function) for function in functions]))
    for outcome in outcomes:
        if isinstance(outcome, GeneratorError):
            raise outcome
    return outcomes


def _outcome(job: tuple[Config, FunctionConfig]) -> str | GeneratorError:
    """generate_function's source, or the GeneratorError it raised, rebuilt so that it
    crosses the process boundary whole (pickling an exception keeps only its args)."""
    try:
        return generate_function(*job)
    except GeneratorError as exc:
        return _PicklableError(exc.message, exc.source, exc.column)


class _PicklableError(GeneratorError):
    def __init__(self, message: str, source: str | None = None, column: int | None = None) -> None:
        super().__init__(message, source=source, column=column)
        self.args = (message, source, column)


def generate_function(config: Config, function: FunctionConfig) -> str:
    """One function's module source; errors name the function's key in the config file."""
    spec = Spec(
        function.expr,
        function.name,
        function.variables,
        function.order,
        function.params,
        function.float64_inside,
        function.accurate_roots,
        function.compensated_arguments,
        function.scaled_tails,
        function.precise_sigmoid,
    )
    try:
        return generate(spec)
    except GeneratorError as exc:
        raise GeneratorError(
            f"{config.path}: {function.key} ({function.name}): {exc.message}",
            source=exc.source,
            column=exc.column,
        ) from exc


def _package_init(config: Config) -> str:
    """The package's __init__.py: the header, a docstring listing the functions, and the imports."""
    source = _relative(config.path, config.output, up=True)
    # Expressions went through the whitelisting parser already, so they cannot
    # contain quotes or backslashes that would end or escape the docstring.
    listing = "\n".join(f"    {f.name}: {f.expr}" for f in config.functions)
    imports = "\n".join(f"from .{f.name} import {f.name}" for f in config.functions)
    names = ", ".join(f'"{f.name}"' for f in config.functions)
    # The functions are listed in the header too: the header holds everything the
    # file is generated from, which is how `plan` tells stale from hand-edited.
    functions = "".join(f"#   {f.name}: {f.expr}\n" for f in config.functions)
    text = (
        f"{header_line()}\n"
        f"# Source: [tool.generator] in {source}\n"
        f"# Options: {BUILD_COMMAND}\n"
        f"# Functions:\n{functions}"
        '"""Generated functions with numerically stable, nested TensorFlow custom gradients.\n\n'
        f"{listing}\n\n"
        f"Regenerate with `{BUILD_COMMAND}`; `{BUILD_COMMAND} --check` fails when out of date.\n"
        '"""\n\n'
        f"{imports}\n\n"
        f"__all__ = [{names}]\n"
    )
    return format_source(text)


def _orphans(output: Path, targets: set[Path]) -> Iterator[tuple[Path, str]]:
    """Generated modules in `output` that no function produces any more (other files are left alone)."""
    if not output.is_dir():
        return
    for path in sorted(output.glob("*.py")):
        if path in targets or path.is_symlink() or not path.is_file():
            continue
        text = _read(path)
        if text is not None and is_generated(text):
            yield path, text


def _read(path: Path) -> str | None:
    """The file's text; None if it does not exist; '' if it is not UTF-8 text (so: not ours)."""
    if path.is_dir():
        raise GeneratorError(f"output path {_display(path)} is a directory")
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        return ""


def _header(text: str) -> list[str]:
    lines = text.splitlines()
    end = next((i for i, line in enumerate(lines) if not line.startswith("#")), len(lines))
    return lines[:end]


def _relative(path: Path, root: Path, *, up: bool = False) -> str:
    """`path` relative to `root` in POSIX form (allowing `..` when `up`), else absolute."""
    if up:
        return Path(os.path.relpath(path, root)).as_posix()
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def _display(path: Path) -> str:
    """A path as shown to the user: relative to the working directory when below it."""
    return _relative(path, Path.cwd().resolve())
