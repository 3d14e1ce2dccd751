"""The pipeline in one function: `generate(spec) -> str`."""

from __future__ import annotations

import builtins
import math
import shlex
from dataclasses import dataclass

import sympy as sp
import sympy.core.random

from generator.derive import derive, resolve_variables
from generator.emit import build_model
from generator.errors import GeneratorError
from generator.parse import CONSTANTS, check_name, parameter_values, parse
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
    # Keyword-only arguments of the generated function, not differentiated: (name, default).
    params: tuple[tuple[str, float], ...] = ()
    # float32 inputs are computed in float64 and rounded once at the end.
    float64_inside: bool = False
    # Taylor polynomials around the nonzero roots of one-input forms that lose relative accuracy there.
    accurate_roots: bool = False
    # Steep functions corrected by their argument's rounding error, computed exactly.
    compensated_arguments: bool = False
    # Products of a factor that decays as exp(u) and a larger one kept normal where the factor flushes.
    scaled_tails: bool = False
    # sigmoid computed from exp, within 2 ulps where TF's kernel is up to 5.7 off.
    precise_sigmoid: bool = False

    def command(self, name: str, variables: tuple[str, ...]) -> str:
        """The CLI arguments that reproduce this module ('--' so that '-x' stays an expression)."""
        params = "".join(f" --param {p}={value!r}" for p, value in self.params)
        inside = " --float64-inside" if self.float64_inside else ""
        roots = " --accurate-roots" if self.accurate_roots else ""
        compensated = " --compensated-arguments" if self.compensated_arguments else ""
        tails = " --scaled-tails" if self.scaled_tails else ""
        tails += " --precise-sigmoid" if self.precise_sigmoid else ""
        return (
            f"--name {name} --vars {','.join(variables)} --order {self.order}{params}{inside}{roots}{compensated}"
            f"{tails} "
            f"-- {shlex.quote(self.expression)}"
        )


# The seed of SymPy's random generator for each module (see `generate`).
SYMPY_SEED = 0


def default_name(variables: tuple[str, ...]) -> str:
    """`f`, or `fn` when a variable is already called f."""
    return "f" if "f" not in variables else "fn"


def generate(spec: Spec) -> str:
    """Parse, derive, stabilise, emit, render and format one module."""
    if not 1 <= spec.order <= MAX_ORDER:
        raise GeneratorError(f"--order must be between 1 and {MAX_ORDER}, got {spec.order}")
    # SymPy's assumptions ask their handlers in an order shuffled by its own random generator,
    # seeded anew in each process: where the answer depends on that order, the module did
    # too (atan2(exp(abs(x)), log10(tanh(10))) came out as atan(...), as pi + atan(...), or as
    # an error, run to run). Seeded here, each call is reproducible.
    sympy.core.random.seed(SYMPY_SEED)
    expr = parse(spec.expression)
    if spec.variables is not None:
        for v in spec.variables:
            check_name(v)
            # As for --param: --vars x,y,e with e read as 2.718... gave a module whose input e
            # did nothing (its partials 0) and whose values were wrong.
            if v in CONSTANTS:
                raise GeneratorError(f"--vars {v}: {v!r} is the constant {v} in expressions; rename the variable")
    _check_parameters(expr, spec)
    defaults = parameter_values(spec.params)
    symbols = resolve_variables(
        expr, list(spec.variables) if spec.variables is not None else None, exclude=tuple(defaults)
    )
    variables = tuple(s.name for s in symbols)
    name = spec.name if spec.name is not None else default_name(variables)
    check_name(name, "function")
    if name in variables:
        raise GeneratorError(f"function name {name!r} is also a variable; choose another --name")
    if name in ("tf",):
        raise GeneratorError(f"function name {name!r} would shadow the tensorflow import")
    if name in dir(builtins):
        raise GeneratorError(f"function name {name!r} would shadow a Python builtin; choose another --name")
    params = [p for p, _ in spec.params]
    if "tf" in variables or "tf" in params:
        raise GeneratorError("the name 'tf' would shadow the tensorflow import; rename it")
    if name in params:
        raise GeneratorError(f"function name {name!r} is also a parameter; choose another --name")
    derivation = derive(
        expr,
        symbols,
        spec.order,
        defaults,
        float64_inside=spec.float64_inside,
        accurate_roots=spec.accurate_roots,
        compensated_arguments=spec.compensated_arguments,
        scaled_tails=spec.scaled_tails,
        precise_sigmoid=spec.precise_sigmoid,
    )
    model = build_model(
        derivation,
        name=name,
        expression=spec.expression,
        command=spec.command(name, variables),
        params=spec.params,
        float64_inside=spec.float64_inside,
    )
    return format_source(render(model))


def _check_parameters(expr: sp.Expr, spec: Spec) -> None:
    """Raise unless every parameter is a name of `expr` with a finite value, given once, not a variable."""
    free = {s.name for s in expr.free_symbols}
    seen: set[str] = set()
    for name, value in spec.params:
        check_name(name, "parameter")
        if not math.isfinite(value):
            raise GeneratorError(f"--param {name}: the value must be a finite number, got {value!r}")
        if name in CONSTANTS:
            raise GeneratorError(f"--param {name}: {name!r} is the constant {name} in expressions; rename the parameter")
        if name not in free:
            raise GeneratorError(f"--param {name}: {name!r} does not appear in the expression")
        if name in seen:
            raise GeneratorError(f"--param {name} is given twice")
        if spec.variables is not None and name in spec.variables:
            raise GeneratorError(f"{name!r} is both a parameter and a variable (--vars); it can only be one")
        seen.add(name)
    if not free - seen:
        raise GeneratorError("the expression has no variable besides its parameters")
