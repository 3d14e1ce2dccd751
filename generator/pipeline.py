"""The pipeline in one function: `generate(spec) -> str`."""

from __future__ import annotations

import builtins
import shlex
from dataclasses import dataclass

from generator.derive import derive, resolve_variables
from generator.emit import build_model
from generator.errors import GeneratorError
from generator.parse import check_name, parse
from generator.render import format_source, render

MAX_ORDER = 6
DEFAULT_ORDER = 2


@dataclass(frozen=True)
class Spec:
    """What to generate: one function."""

    expression: str
    name: str | None = None
    variables: tuple[str, ...] | None = None
    order: int = DEFAULT_ORDER

    def command(self, name: str, variables: tuple[str, ...]) -> str:
        """The CLI arguments that reproduce this module ('--' so that '-x' stays an expression)."""
        return f"--name {name} --vars {','.join(variables)} --order {self.order} -- {shlex.quote(self.expression)}"


def default_name(variables: tuple[str, ...]) -> str:
    """`f`, or `fn` when a variable is already called f."""
    return "f" if "f" not in variables else "fn"


def generate(spec: Spec) -> str:
    """Parse, derive, stabilise, emit, render and format one module."""
    if not 1 <= spec.order <= MAX_ORDER:
        raise GeneratorError(f"--order must be between 1 and {MAX_ORDER}, got {spec.order}")
    expr = parse(spec.expression)
    if spec.variables is not None:
        for v in spec.variables:
            check_name(v)
    symbols = resolve_variables(expr, list(spec.variables) if spec.variables is not None else None)
    variables = tuple(s.name for s in symbols)
    name = spec.name if spec.name is not None else default_name(variables)
    check_name(name, "function")
    if name in variables:
        raise GeneratorError(f"function name {name!r} is also a variable; choose another --name")
    if name in ("tf",):
        raise GeneratorError(f"function name {name!r} would shadow the tensorflow import")
    if name in dir(builtins):
        raise GeneratorError(f"function name {name!r} would shadow a Python builtin; choose another --name")
    if "tf" in variables:
        raise GeneratorError("variable name 'tf' would shadow the tensorflow import; rename it")
    derivation = derive(expr, symbols, spec.order)
    model = build_model(derivation, name=name, expression=spec.expression, command=spec.command(name, variables))
    return format_source(render(model))
