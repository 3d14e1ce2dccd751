"""Parse an expression string into a SymPy expression, safely.

The text goes through Python's ``ast`` parser only; each node is checked
against a whitelist and turned into a SymPy object directly. Nothing the user
writes is ever evaluated: no ``eval``, ``sympify`` or ``parse_expr``.
Hands on: a SymPy expression whose free symbols are the user's variables.
"""

from __future__ import annotations

import ast
import keyword
import re
from collections.abc import Callable
from dataclasses import dataclass

import sympy as sp

from generator import primitives as prim
from generator.errors import GeneratorError

MAX_LENGTH = 2000
MAX_DEPTH = 60
MAX_NODES = 400
MAX_NAME_LENGTH = 64
MAX_INTEGER_EXPONENT = 1000

NAME_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class FunctionSpec:
    """A callable name in the expression language."""

    arity: int
    build: Callable[..., sp.Expr]
    summary: str


def _abs(x: sp.Expr) -> sp.Expr:
    return sp.Abs(x)


FUNCTIONS: dict[str, FunctionSpec] = {
    "exp": FunctionSpec(1, sp.exp, "e**x"),
    "log": FunctionSpec(1, sp.log, "natural logarithm"),
    "log1p": FunctionSpec(1, prim.log1p, "log(1 + x)"),
    "expm1": FunctionSpec(1, prim.expm1, "exp(x) - 1"),
    "log2": FunctionSpec(1, lambda x: sp.log(x) / sp.log(2), "base-2 logarithm"),
    "log10": FunctionSpec(1, lambda x: sp.log(x) / sp.log(10), "base-10 logarithm"),
    "sqrt": FunctionSpec(1, sp.sqrt, "square root"),
    "sin": FunctionSpec(1, sp.sin, "sine"),
    "cos": FunctionSpec(1, sp.cos, "cosine"),
    "tan": FunctionSpec(1, sp.tan, "tangent"),
    "sinh": FunctionSpec(1, sp.sinh, "hyperbolic sine"),
    "cosh": FunctionSpec(1, sp.cosh, "hyperbolic cosine"),
    "tanh": FunctionSpec(1, sp.tanh, "hyperbolic tangent"),
    "asin": FunctionSpec(1, sp.asin, "inverse sine"),
    "acos": FunctionSpec(1, sp.acos, "inverse cosine"),
    "atan": FunctionSpec(1, sp.atan, "inverse tangent"),
    "asinh": FunctionSpec(1, sp.asinh, "inverse hyperbolic sine"),
    "acosh": FunctionSpec(1, sp.acosh, "inverse hyperbolic cosine"),
    "atanh": FunctionSpec(1, sp.atanh, "inverse hyperbolic tangent"),
    "erf": FunctionSpec(1, sp.erf, "error function"),
    "erfc": FunctionSpec(1, sp.erfc, "complementary error function"),
    "abs": FunctionSpec(1, _abs, "absolute value"),
    "sigmoid": FunctionSpec(1, prim.sigmoid, "1 / (1 + exp(-x))"),
    "softplus": FunctionSpec(1, prim.softplus, "log(1 + exp(x))"),
    "log_sigmoid": FunctionSpec(1, lambda x: -prim.softplus(-x), "log(sigmoid(x))"),
    "logaddexp": FunctionSpec(2, prim.logaddexp, "log(exp(a) + exp(b))"),
    "log1mexp": FunctionSpec(1, prim.log1mexp, "log(1 - exp(-x))"),
    "xlogy": FunctionSpec(2, prim.xlogy, "a * log(b), 0 where a == 0"),
    "hypot": FunctionSpec(2, prim.hypot, "sqrt(a**2 + b**2)"),
}

CONSTANTS: dict[str, sp.Expr] = {"pi": sp.pi, "e": sp.E}


def _fail(message: str, text: str, node: ast.AST | None = None) -> GeneratorError:
    column = getattr(node, "col_offset", None) if node is not None else None
    return GeneratorError(message, source=text, column=column)


def check_name(name: str, what: str = "variable") -> None:
    """Raise unless `name` can be used as an identifier in generated code."""
    if len(name) > MAX_NAME_LENGTH:
        raise GeneratorError(f"{what} name is {len(name)} characters long; the limit is {MAX_NAME_LENGTH}")
    if not NAME_PATTERN.match(name):
        raise GeneratorError(
            f"{what} name {name!r} is not allowed: use ASCII letters, digits and '_', starting with a letter"
        )
    if keyword.iskeyword(name) or keyword.issoftkeyword(name):
        raise GeneratorError(f"{what} name {name!r} is a Python keyword")


class _Builder:
    """Turns whitelisted AST nodes into SymPy expressions."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.nodes = 0
        self.symbols: dict[str, sp.Symbol] = {}

    def build(self, node: ast.AST, depth: int = 0) -> sp.Expr:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _fail(f"expression is too large (more than {MAX_NODES} nodes)", self.text, node)
        if depth > MAX_DEPTH:
            raise _fail(f"expression is nested too deeply (more than {MAX_DEPTH} levels)", self.text, node)
        method = getattr(self, f"_build_{type(node).__name__}", None)
        if method is None:
            raise _fail(_describe_rejected(node), self.text, node)
        return method(node, depth + 1)

    def _build_Constant(self, node: ast.Constant, depth: int) -> sp.Expr:
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            kind = "string" if isinstance(value, (str, bytes)) else type(value).__name__
            raise _fail(f"{kind} literals are not allowed; only numbers", self.text, node)
        if isinstance(value, float):
            if value != value or value in (float("inf"), float("-inf")):
                raise _fail("number is not finite", self.text, node)
            source = ast.get_source_segment(self.text, node) or repr(value)
            return sp.Rational(source.replace("_", ""))
        return sp.Integer(value)

    def _build_Name(self, node: ast.Name, depth: int) -> sp.Expr:
        name = node.id
        if name in CONSTANTS:
            return CONSTANTS[name]
        if name in FUNCTIONS:
            raise _fail(f"{name!r} is a function; call it as {name}(...)", self.text, node)
        if name.startswith("_"):
            raise _fail(f"name {name!r} is not allowed: names must start with a letter", self.text, node)
        try:
            check_name(name)
        except GeneratorError as exc:
            raise _fail(exc.message, self.text, node) from None
        if name not in self.symbols:
            self.symbols[name] = sp.Symbol(name, real=True)
        return self.symbols[name]

    def _build_UnaryOp(self, node: ast.UnaryOp, depth: int) -> sp.Expr:
        operand = self.build(node.operand, depth)
        if isinstance(node.op, ast.USub):
            return -operand
        if isinstance(node.op, ast.UAdd):
            return operand
        raise _fail(f"operator {_OPERATOR_TEXT.get(type(node.op), '?')!r} is not allowed", self.text, node)

    def _build_BinOp(self, node: ast.BinOp, depth: int) -> sp.Expr:
        left = self.build(node.left, depth)
        right = self.build(node.right, depth)
        op = type(node.op)
        if op is ast.Add:
            return left + right
        if op is ast.Sub:
            return left - right
        if op is ast.Mult:
            return left * right
        if op is ast.Div:
            if right.is_zero:
                raise _fail("division by zero", self.text, node)
            return left / right
        if op is ast.Pow:
            if right.is_Integer and abs(int(right)) > MAX_INTEGER_EXPONENT:
                raise _fail(f"exponent {right} is too large (limit {MAX_INTEGER_EXPONENT})", self.text, node.right)
            if left.is_zero and right.is_number and right.is_negative:
                raise _fail("division by zero", self.text, node)
            return sp.Pow(left, right)
        raise _fail(f"operator {_OPERATOR_TEXT.get(op, '?')!r} is not allowed", self.text, node)

    def _build_Call(self, node: ast.Call, depth: int) -> sp.Expr:
        if not isinstance(node.func, ast.Name):
            raise _fail("only calls of named functions are allowed, like exp(x)", self.text, node)
        name = node.func.id
        spec = FUNCTIONS.get(name)
        if spec is None:
            raise _fail(f"unknown function {name!r}; known: {', '.join(sorted(FUNCTIONS))}", self.text, node)
        if node.keywords:
            raise _fail(f"{name}() takes no keyword arguments", self.text, node)
        if any(isinstance(arg, ast.Starred) for arg in node.args):
            raise _fail("starred arguments are not allowed", self.text, node)
        if len(node.args) != spec.arity:
            plural = "argument" if spec.arity == 1 else "arguments"
            raise _fail(
                f"{name}() takes {spec.arity} {plural}, got {len(node.args)}",
                self.text,
                node,
            )
        return spec.build(*(self.build(arg, depth) for arg in node.args))


_OPERATOR_TEXT: dict[type, str] = {
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.MatMult: "@",
    ast.BitAnd: "&",
    ast.BitOr: "|",
    ast.BitXor: "^",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.Invert: "~",
    ast.Not: "not",
}

_REJECTED: dict[type, str] = {
    ast.Attribute: "attribute access is not allowed",
    ast.Subscript: "subscripts are not allowed",
    ast.Lambda: "lambda is not allowed",
    ast.Compare: "comparisons are not allowed",
    ast.BoolOp: "boolean operators are not allowed",
    ast.IfExp: "conditional expressions are not allowed",
    ast.JoinedStr: "f-strings are not allowed",
    ast.NamedExpr: "the walrus operator ':=' is not allowed",
    ast.List: "lists are not allowed",
    ast.Tuple: "tuples are not allowed",
    ast.Dict: "dicts are not allowed",
    ast.Set: "sets are not allowed",
    ast.ListComp: "comprehensions are not allowed",
    ast.SetComp: "comprehensions are not allowed",
    ast.DictComp: "comprehensions are not allowed",
    ast.GeneratorExp: "generator expressions are not allowed",
    ast.Await: "await is not allowed",
    ast.Yield: "yield is not allowed",
    ast.YieldFrom: "yield is not allowed",
    ast.Starred: "starred expressions are not allowed",
    ast.Slice: "slices are not allowed",
}


def _describe_rejected(node: ast.AST) -> str:
    return _REJECTED.get(type(node), f"{type(node).__name__} is not allowed in an expression")


def parse(text: str) -> sp.Expr:
    """Parse `text` into a SymPy expression over real symbols, or raise GeneratorError."""
    if not isinstance(text, str) or not text.strip():
        raise GeneratorError("the expression is empty")
    if len(text) > MAX_LENGTH:
        raise GeneratorError(f"the expression is {len(text)} characters long; the limit is {MAX_LENGTH}")
    if "\n" in text or "\r" in text:
        raise GeneratorError("the expression must be on one line", source=text, column=text.find("\n"))
    if not text.isascii():
        column = next(i for i, ch in enumerate(text) if not ch.isascii())
        raise GeneratorError("non-ASCII character in the expression", source=text, column=column)
    stripped = text.strip()
    offset = text.index(stripped[0])
    try:
        tree = ast.parse(stripped, mode="eval")
    except SyntaxError as exc:
        column = (exc.offset or 1) - 1 + offset
        reason = (exc.msg or "invalid syntax").split(" (")[0]
        raise GeneratorError(f"syntax error: {reason}", source=text, column=column) from None
    except (ValueError, RecursionError, MemoryError):
        raise GeneratorError("the expression could not be parsed", source=text, column=0) from None
    builder = _Builder(stripped)
    try:
        expr = builder.build(tree.body)
    except GeneratorError as exc:
        exc.source = text
        if exc.column is not None:
            exc.column += offset
        raise
    except RecursionError:
        raise GeneratorError("expression is nested too deeply") from None
    if not expr.free_symbols:
        raise GeneratorError("the expression has no variable: it is a constant", source=text, column=offset)
    if expr.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
        raise GeneratorError("the expression is undefined (it simplifies to nan or infinity)", source=text, column=offset)
    return expr
