"""Every identifier the generated code uses, in one place.

User variables keep their names. Generated names (the function's levels,
upstream gradients, partial derivatives, shared subexpressions) are made
unique against the user's names with a trailing underscore.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterable, Sequence

import sympy as sp

from generator.primitives import pick, sigmoid_from_exp
from generator.printer import HELPERS

ORDINALS = ("zeroth", "first", "second", "third", "fourth", "fifth", "sixth")
# Module-level names of the generated file (templates/module.py.j2 and templates/helpers/).
MODULE_NAMES = frozenset(
    {"tf", "_WIDER", "_float_inputs", "_broadcast", "_parameter", "_polyval", *HELPERS.values()}
)
RESERVED = MODULE_NAMES
MAX_TEMP_NAME = 28


def ordinal(k: int) -> str:
    return ORDINALS[k] if k < len(ORDINALS) else f"order{k}"


def partial_name(index: Sequence[str]) -> str:
    """d_x, d_x_y, ... for the partial derivative by the variables in `index`."""
    return "y" if not index else "d_" + "_".join(index)


def upstream_name(output: str) -> str:
    """The name of the upstream gradient of `output`: dy for y, dd_x for d_x."""
    return "d" + output


class Namer:
    """Hands out identifiers that clash with nothing the user wrote or we already used."""

    def __init__(self, taken: Iterable[str]) -> None:
        self._taken = set(taken) | set(RESERVED)

    def claim(self, wanted: str) -> str:
        name = wanted
        while name in self._taken or keyword.iskeyword(name):
            name += "_"
        self._taken.add(name)
        return name


def describe(expr: sp.Expr) -> str | None:
    """A readable identifier for a subexpression (sigmoid_neg_x, exp_x, x_minus_m), or None."""
    text = _describe(expr)
    if text is None or len(text) > MAX_TEMP_NAME:
        return None
    text = re.sub(r"_+", "_", text).strip("_")
    return text if text and not text[0].isdigit() else None


# Functions named in variables as what they compute, not how: sigmoid_x for either sigmoid.
_FUNCTION_NAMES = {sigmoid_from_exp: "sigmoid"}
_RELATIONS = {">": "gt", ">=": "ge", "<": "lt", "<=": "le", "==": "eq", "!=": "ne"}


def _describe(expr: sp.Expr) -> str | None:
    if isinstance(expr, sp.Rel):
        left, right = _describe(expr.lhs), _describe(expr.rhs)
        if left is None or right is None:
            return None
        return f"{left}_{_RELATIONS[expr.rel_op]}_{right}"
    if isinstance(expr, sp.Symbol):
        return expr.name
    if expr.is_Integer:
        return str(expr) if expr >= 0 else f"neg_{-expr}"
    if isinstance(expr, sp.Mul) and expr.args[0] == -1 and len(expr.args) == 2:
        inner = _describe(expr.args[1])
        return None if inner is None else f"neg_{inner}"
    if isinstance(expr, sp.Pow):
        base = _describe(expr.base)
        if base is None:
            return None
        if expr.exp == 2:
            return f"{base}_sq"
        if expr.exp == -1:
            return f"inv_{base}"
        if expr.exp == sp.Rational(1, 2):
            return f"sqrt_{base}"
        if expr.exp.is_Integer and expr.exp > 0:
            return f"{base}_pow{expr.exp}"
        return None
    if isinstance(expr, sp.Add) and len(expr.args) == 2:
        a, b = sorted(expr.args, key=lambda t: t.could_extract_minus_sign())
        left = _describe(a)
        if b.could_extract_minus_sign():
            right = _describe(-b)
            return None if left is None or right is None else f"{left}_minus_{right}"
        right = _describe(b)
        return None if left is None or right is None else f"{left}_plus_{right}"
    if isinstance(expr, pick):
        # A guarded input: where(taken, x, safe point).
        inputs = [a for a in expr.args[1:] if isinstance(a, sp.Symbol)]
        return f"safe_{inputs[0].name}" if len(inputs) == 1 else None
    if isinstance(expr, sp.Function):
        args = [_describe(a) for a in expr.args]
        name = _FUNCTION_NAMES.get(type(expr), type(expr).__name__.lower())
        if any(a is None for a in args):
            return name if len(expr.args) == 1 else None
        return "_".join([name, *args])  # type: ignore[list-item]
    return None
