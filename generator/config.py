"""Read `[tool.generator]` from pyproject.toml into a frozen, typed `Config`.

The config is found by walking up from the working directory to the first
pyproject.toml that has a `[tool.generator]` table (`--config PATH` skips the
search). Keys may be spelt with `-` or `_`. Every problem, an unknown key
included, is a GeneratorError that names the key and the file.

    [tool.generator]
    output = "generated"          # the package directory, relative to the file
    order = 2                     # default for functions that give none
    float64-inside = false        # default: compute float32 inputs in float64 (--float64-inside)
    accurate-roots = false        # default: polynomials near nonzero roots (--accurate-roots)
    compensated-arguments = false # default: exact rounding errors of arguments (--compensated-arguments)
    scaled-tails = false          # default: products with flushed exponential tails kept (--scaled-tails)
    precise-sigmoid = false       # default: sigmoid computed from exp (--precise-sigmoid)
    accurate = false              # default: the four above from accurate-roots on (--accurate)

    [[tool.generator.functions]]
    name = "softplus"
    expr = "log(1 + exp(x))"
    vars = ["x"]                  # optional: argument order (default: sorted)
    order = 3                     # optional
    params = { beta = 10.0 }      # optional: keyword-only arguments, not differentiated
    float64-inside = true         # optional
    accurate-roots = true         # optional
    compensated-arguments = true  # optional
    scaled-tails = true           # optional
    precise-sigmoid = true        # optional
    accurate = true               # optional: the four accuracy options (a key of its own wins)

Hands on: a `Config` for `build` and `report`.
"""

from __future__ import annotations

import keyword
import math
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.errors import GeneratorError
from generator.pipeline import DEFAULT_ORDER, MAX_ORDER

PYPROJECT = "pyproject.toml"
TABLE = "tool.generator"

# Options that are true or false, at the top (the default) and per function.
_FLAGS = ("float64_inside", "accurate_roots", "compensated_arguments", "scaled_tails", "precise_sigmoid")
# `accurate = true` turns these on (--accurate); a key of their own, where given, wins.
ACCURATE = ("accurate_roots", "compensated_arguments", "scaled_tails", "precise_sigmoid")
_TOP_KEYS = frozenset({"output", "order", "functions", "accurate", *_FLAGS})
_FUNCTION_KEYS = frozenset({"name", "expr", "vars", "order", "params", "accurate", *_FLAGS})


@dataclass(frozen=True)
class FunctionConfig:
    """One generated function: becomes `<output>/<name>.py`."""

    name: str
    expr: str
    variables: tuple[str, ...] | None
    order: int
    params: tuple[tuple[str, float], ...]  # (name, default) in the file's order
    key: str  # where it is in the file, for messages: tool.generator.functions[3]
    float64_inside: bool = False  # float32 inputs computed in float64 (--float64-inside)
    accurate_roots: bool = False  # polynomials near nonzero roots (--accurate-roots)
    compensated_arguments: bool = False  # exact rounding errors of arguments (--compensated-arguments)
    scaled_tails: bool = False  # products with flushed exponential tails kept (--scaled-tails)
    precise_sigmoid: bool = False  # sigmoid computed from exp (--precise-sigmoid)


@dataclass(frozen=True)
class Config:
    """The validated `[tool.generator]` table of one file."""

    path: Path  # the pyproject.toml it came from
    output: Path  # absolute: `output` resolved against the file's directory
    order: int
    functions: tuple[FunctionConfig, ...]  # sorted by name


def find_config(start: Path | None = None) -> Path:
    """The first pyproject.toml with [tool.generator] in `start` (default: cwd) or a parent."""
    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        candidate = directory / PYPROJECT
        if candidate.is_file() and _generator_table(_read_toml(candidate)) is not None:
            return candidate
    raise GeneratorError(f"no {PYPROJECT} with a [{TABLE}] table in {here} or any parent directory")


def load_config(path: Path | None = None) -> Config:
    """Read and validate the config at `path`, or the one `find_config` finds."""
    if path is None:
        path = find_config()
    elif not path.is_file():
        raise GeneratorError(f"config file {path} does not exist")
    path = path.resolve()
    table = _generator_table(_read_toml(path))
    if table is None:
        raise GeneratorError(f"{path}: no [{TABLE}] table")
    return _validate(table, path)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise GeneratorError(f"{path}: invalid TOML: {exc}") from None
    except OSError as exc:
        raise GeneratorError(f"{path}: cannot read: {exc.strerror}") from None


def _generator_table(document: Mapping[str, Any]) -> Any:
    tool = document.get("tool")
    return tool.get("generator") if isinstance(tool, dict) else None


class _Reader:
    """Validation helpers that put the file and the key into every message."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def error(self, key: str, message: str) -> GeneratorError:
        return GeneratorError(f"{self.path}: {key}: {message}")

    def table(self, value: Any, key: str, allowed: frozenset[str]) -> dict[str, Any]:
        """`value` as a dict with `-` mapped to `_` in its keys; unknown keys are errors."""
        if not isinstance(value, dict):
            raise self.error(key, f"expected a table, got {_describe(value)}")
        result: dict[str, Any] = {}
        spelt: dict[str, str] = {}
        for raw in sorted(value):
            normal = raw.replace("-", "_")
            if normal not in allowed:
                raise self.error(f"{key}.{raw}", f"unknown key; expected one of: {', '.join(sorted(allowed))}")
            if normal in result:
                raise self.error(f"{key}.{raw}", f"given twice (as {spelt[normal]!r} and {raw!r})")
            result[normal] = value[raw]
            spelt[normal] = raw
        return result

    def string(self, value: Any, key: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.error(key, f"expected a non-empty string, got {_describe(value)}")
        return value

    def identifier(self, value: Any, key: str) -> str:
        text = self.string(value, key)
        if not text.isidentifier() or not text.isascii() or keyword.iskeyword(text):
            raise self.error(key, f"{text!r} is not a valid Python identifier")
        return text

    def flag(self, value: Any, key: str) -> bool:
        if not isinstance(value, bool):
            raise self.error(key, f"expected true or false, got {_describe(value)}")
        return value

    def order(self, value: Any, key: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_ORDER:
            raise self.error(key, f"expected an integer from 1 to {MAX_ORDER}, got {_describe(value)}")
        return value

    def names(self, value: Any, key: str) -> tuple[str, ...]:
        if not isinstance(value, list) or not value:
            raise self.error(key, f"expected a non-empty array of variable names, got {_describe(value)}")
        names = tuple(self.identifier(item, f"{key}[{i}]") for i, item in enumerate(value))
        if len(set(names)) != len(names):
            raise self.error(key, "a variable is listed twice")
        return names

    def params(self, value: Any, key: str) -> tuple[tuple[str, float], ...]:
        if not isinstance(value, dict):
            raise self.error(key, f"expected a table of name = number, got {_describe(value)}")
        result = []
        for name in value:
            self.identifier(name, f"{key}.{name}")
            number = value[name]
            if isinstance(number, bool) or not isinstance(number, (int, float)) or not math.isfinite(number):
                raise self.error(f"{key}.{name}", f"expected a finite number, got {_describe(number)}")
            result.append((name, float(number)))
        return tuple(result)


def _describe(value: Any) -> str:
    kinds: dict[type, str] = {dict: "a table", list: "an array", bool: "a boolean"}
    return kinds.get(type(value), repr(value))


def _validate(raw: Any, path: Path) -> Config:
    read = _Reader(path)
    top = read.table(raw, TABLE, _TOP_KEYS)
    if "output" not in top:
        raise read.error(f"{TABLE}.output", 'missing; give the package directory, e.g. output = "generated"')
    output_text = read.string(top["output"], f"{TABLE}.output")
    output = (path.parent / output_text).resolve()
    if output == path.parent.resolve():
        raise read.error(f"{TABLE}.output", "must be a subdirectory, not the directory of the config file")
    order = read.order(top.get("order", DEFAULT_ORDER), f"{TABLE}.order")

    entries = top.get("functions")
    if not isinstance(entries, list) or not entries:
        raise read.error(f"{TABLE}.functions", "expected one or more [[tool.generator.functions]] tables")
    accurate = read.flag(top.get("accurate", False), f"{TABLE}.accurate")
    flags = {flag: read.flag(top.get(flag, accurate and flag in ACCURATE), f"{TABLE}.{flag}") for flag in _FLAGS}
    functions = [_function(read, entry, f"{TABLE}.functions[{i}]", order, flags) for i, entry in enumerate(entries)]
    _check_unique(read, functions, lambda name: name, "the name of another function")
    # Two names that differ only in case collide on case-insensitive file systems.
    _check_unique(
        read,
        functions,
        str.casefold,
        "the file name of another function on case-insensitive file systems",
    )
    return Config(
        path=path,
        output=output,
        order=order,
        functions=tuple(sorted(functions, key=lambda f: f.name)),
    )


def _function(read: _Reader, entry: Any, key: str, default_order: int, default_flags: dict[str, bool]) -> FunctionConfig:
    fields = read.table(entry, key, _FUNCTION_KEYS)
    for required in ("name", "expr"):
        if required not in fields:
            raise read.error(f"{key}.{required}", "missing")
    name = read.identifier(fields["name"], f"{key}.name")
    if name.startswith("__"):
        raise read.error(f"{key}.name", f"{name!r}: names starting with '__' are reserved (e.g. __init__)")
    if read.flag(fields.get("accurate", False), f"{key}.accurate"):
        default_flags = {flag: default or flag in ACCURATE for flag, default in default_flags.items()}
    return FunctionConfig(
        name=name,
        expr=read.string(fields["expr"], f"{key}.expr"),
        variables=read.names(fields["vars"], f"{key}.vars") if "vars" in fields else None,
        order=read.order(fields.get("order", default_order), f"{key}.order"),
        params=read.params(fields.get("params", {}), f"{key}.params"),
        key=key,
        **{flag: read.flag(fields.get(flag, default), f"{key}.{flag}") for flag, default in default_flags.items()},
    )


def _check_unique(read: _Reader, functions: list[FunctionConfig], normal: Callable[[str], str], what: str) -> None:
    seen: dict[str, FunctionConfig] = {}
    for function in functions:
        other = seen.setdefault(normal(function.name), function)
        if other is not function:
            raise read.error(f"{function.key}.name", f"{function.name!r} is {what} ({other.key})")
