"""Parse an expression string into a SymPy expression, safely.

The text goes through Python's ``ast`` parser only; each node is checked
against a whitelist and turned into a SymPy object directly. Nothing the user
writes is ever evaluated: no ``eval``, ``sympify`` or ``parse_expr``.

Resources are bounded before SymPy sees anything: the text length, the nesting
depth, the node count, the size of exponents and of constants (so that no
input makes SymPy compute a huge exact number). Each node is checked as it is
built, so an error points at the smallest piece of the text that causes it:
a constant that is not a finite real float64 number (``acos(2)``, ``log(0)``,
``10**400``), or a function whose argument SymPy can prove lies outside its
real domain for every input (``log(-exp(x))``, ``sqrt(-1 - x**2)``).
Expressions that are real somewhere are accepted; the generated module
returns NaN where they are not. Constants are evaluated with mpmath at a fixed
precision, never with SymPy's evalf, whose adaptive precision can run forever.
Hands on: a SymPy expression whose free symbols are the user's variables.
"""

from __future__ import annotations

import ast
import keyword
import math
import operator
import re
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import mpmath
import sympy as sp

from generator import primitives as prim
from generator.errors import GeneratorError

MAX_LENGTH = 2000
MAX_DEPTH = 60
MAX_NODES = 400
MAX_NAME_LENGTH = 64
# The largest |exponent| written or produced by combining powers ((x**1000)**2).
MAX_INTEGER_EXPONENT = 1000
# log2 of the largest constant the parser builds: float64 ends near 2**1024.
MAX_CONSTANT_LOG2 = 1024
# Exact rationals are kept to what a float64 literal needs (5e-324 has a 1077-bit denominator).
MAX_RATIONAL_BITS = 1200
# Source text quoted in a message is cut to this length; the caret shows where.
MAX_QUOTE = 40

NAME_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
# Soft keywords of every Python version we support, so that the accepted names
# do not depend on the interpreter (`type` became one in 3.12).
SOFT_KEYWORDS = frozenset({"_", "case", "match", "type", *keyword.softkwlist})

# Why a function's real value does not exist for any input, given its arguments; or None.
DomainCheck = Callable[..., "str | None"]


def _positive(u: sp.Expr) -> str | None:
    return "its argument is never positive" if u.is_nonpositive else None


def _nonnegative(u: sp.Expr) -> str | None:
    return "its argument is always negative" if u.is_negative else None


def _above_minus_one(u: sp.Expr) -> str | None:
    return "its argument is never above -1" if (u + 1).is_nonpositive else None


def _within_one(u: sp.Expr) -> str | None:
    if (u - 1).is_positive or (u + 1).is_negative:
        return "its argument is never in [-1, 1]"
    return None


def _at_least_one(u: sp.Expr) -> str | None:
    return "its argument is always below 1" if (u - 1).is_negative else None


def _inside_one(u: sp.Expr) -> str | None:
    if (u - 1).is_nonnegative or (u + 1).is_nonpositive:
        return "its argument is never in (-1, 1)"
    return None


def _on_second(check: Callable[[sp.Expr], "str | None"]) -> DomainCheck:
    """A one-argument domain check applied to a two-argument function's second argument."""

    def check_second(a: sp.Expr, b: sp.Expr) -> str | None:
        reason = check(b)
        return reason.replace("its argument", "its second argument", 1) if reason else None

    return check_second


@dataclass(frozen=True)
class FunctionSpec:
    """A callable name in the expression language."""

    arity: int
    build: Callable[..., sp.Expr]
    summary: str
    domain: DomainCheck | None = None
    # where(cond, a, b): the first argument is a condition, not a number.
    takes_condition: bool = False


def _where(condition: sp.Basic, a: sp.Expr, b: sp.Expr) -> sp.Expr:
    return sp.Piecewise((a, condition), (b, True))


def _numbers_ordered(a: sp.Expr, b: sp.Expr) -> bool:
    """a <= b for two constants, by their mpmath values: SymPy's own comparison of
    0 <= softplus(2) recursed through as_real_imag for minutes (fuzz seed 3434)."""
    return bool(_evaluate(a) <= _evaluate(b))


def _as_float(c: sp.Expr) -> sp.Expr:
    """A constant beside an input in a comparison as its value (17 digits, as the module prints
    it): SymPy compares a where's branches with it when it builds the where, and
    min(where(y < 1, 1.5, x), log_sigmoid(0.5)) recursed through as_real_imag for over 15
    minutes (fuzz seed 2401). The value is computed with every rational in c exact (tan(1e308)
    at 96 bits is the tangent of another number); one beyond float64 stays exact, for
    `_check_constant` to refuse."""
    if not c.is_number or c.is_Rational or c.is_Float:
        return c
    saved, _MP.prec = _MP.prec, _MP.prec + 2 * int(_largest_rational_bits(c))
    try:
        value = _evaluate(c)
    finally:
        _MP.prec = saved
    if isinstance(value, _MP.mpc) or not _MP.isfinite(value) or abs(value) > sys.float_info.max:
        return c
    return sp.Float(value, 17)


def _as_float_if_huge(c: sp.Expr) -> sp.Expr:
    """A constant that is not a rational but holds one of more than 64 bits, as its value
    (`_as_float`). SymPy rewrites such constants exactly, and the exact numbers can have
    10**300 digits: exp(1e300*log(2)) is 2**(10**300) as it is built, and the textbook form of
    log_sigmoid(xlogy(1e300, 1e300)) holds exp(-N*log(N)) = N**(-N) (both hung, fuzz seed 37)."""
    return _as_float(c) if _largest_rational_bits(c) > 64 else c


def _largest_rational_bits(c: sp.Expr) -> float:
    return max((_rational_bits(r) for r in c.atoms(sp.Rational)), default=0.0)


# At a tie the gradient goes to the first argument, as in tf.maximum and tf.minimum.
def _max(a: sp.Expr, b: sp.Expr) -> sp.Expr:
    if a.is_number and b.is_number:
        return a if _numbers_ordered(b, a) else b
    a, b = _as_float(a), _as_float(b)
    return _where(sp.Ge(a, b), a, b)


def _min(a: sp.Expr, b: sp.Expr) -> sp.Expr:
    if a.is_number and b.is_number:
        return a if _numbers_ordered(a, b) else b
    a, b = _as_float(a), _as_float(b)
    return _where(sp.Le(a, b), a, b)


def _atan2(a: sp.Expr, b: sp.Expr) -> sp.Expr:
    """atan2 with a constant beside an input as its value (`_as_float`): SymPy builds
    atan2(u, c) from the sign of c, and for c = log10(tanh(10)) it could not always tell that
    c is real (its assumptions ask in an order that depends on the process's hash seed): the
    module was pi + atan(u/c), or atan(u/c), pi off, or no module, run to run."""
    if a.is_number and b.is_number:
        return sp.atan2(a, b)
    return sp.atan2(_as_float(a), _as_float(b))


FUNCTIONS: dict[str, FunctionSpec] = {
    "exp": FunctionSpec(1, sp.exp, "e**x"),
    "log": FunctionSpec(1, sp.log, "natural logarithm", _positive),
    "log1p": FunctionSpec(1, prim.log1p, "log(1 + x)", _above_minus_one),
    "expm1": FunctionSpec(1, prim.expm1, "exp(x) - 1"),
    "log2": FunctionSpec(1, lambda x: sp.log(x) / sp.log(2), "base-2 logarithm", _positive),
    "log10": FunctionSpec(1, lambda x: sp.log(x) / sp.log(10), "base-10 logarithm", _positive),
    "sqrt": FunctionSpec(1, sp.sqrt, "square root", _nonnegative),
    "sin": FunctionSpec(1, sp.sin, "sine"),
    "cos": FunctionSpec(1, sp.cos, "cosine"),
    "tan": FunctionSpec(1, sp.tan, "tangent"),
    "sinh": FunctionSpec(1, sp.sinh, "hyperbolic sine"),
    "cosh": FunctionSpec(1, sp.cosh, "hyperbolic cosine"),
    "tanh": FunctionSpec(1, sp.tanh, "hyperbolic tangent"),
    "asin": FunctionSpec(1, sp.asin, "inverse sine", _within_one),
    "acos": FunctionSpec(1, sp.acos, "inverse cosine", _within_one),
    "atan": FunctionSpec(1, sp.atan, "inverse tangent"),
    # Argument order as in tf.math.atan2 and numpy.arctan2: the angle of the point (b, a).
    "atan2": FunctionSpec(2, _atan2, "the angle of the point (b, a) in (-pi, pi]: atan2(a, b)"),
    "asinh": FunctionSpec(1, sp.asinh, "inverse hyperbolic sine"),
    "acosh": FunctionSpec(1, sp.acosh, "inverse hyperbolic cosine", _at_least_one),
    "atanh": FunctionSpec(1, sp.atanh, "inverse hyperbolic tangent", _inside_one),
    "erf": FunctionSpec(1, sp.erf, "error function"),
    "lgamma": FunctionSpec(1, prim.lgamma, "log|gamma(x)|, the log of the gamma function's magnitude"),
    "digamma": FunctionSpec(1, lambda x: sp.polygamma(0, x), "d/dx lgamma(x)"),
    "lbeta": FunctionSpec(2, prim.lbeta, "log|beta(a, b)| = lgamma(a) + lgamma(b) - lgamma(a + b)"),
    # Ours keeps erfc(-u) as written; SymPy's makes it 2 - erfc(u), which is 2 - 2 for u << 0.
    "erfc": FunctionSpec(1, prim.erfc, "complementary error function"),
    "abs": FunctionSpec(1, sp.Abs, "absolute value"),
    "sigmoid": FunctionSpec(1, prim.sigmoid, "1 / (1 + exp(-x))"),
    "softplus": FunctionSpec(1, prim.softplus, "log(1 + exp(x))"),
    "log_sigmoid": FunctionSpec(1, lambda x: -prim.softplus(-x), "log(sigmoid(x))"),
    "logaddexp": FunctionSpec(2, prim.logaddexp, "log(exp(a) + exp(b))"),
    "log1mexp": FunctionSpec(1, prim.log1mexp, "log(1 - exp(-x))", _positive),
    "xlogy": FunctionSpec(2, prim.xlogy, "a * log(b), 0 where a == 0", _on_second(_positive)),
    "xlog1py": FunctionSpec(2, prim.xlog1py, "a * log(1 + b), 0 where a == 0", _on_second(_above_minus_one)),
    "hypot": FunctionSpec(2, prim.hypot, "sqrt(a**2 + b**2)"),
    "max": FunctionSpec(2, _max, "the larger of a and b (a at a tie)"),
    "min": FunctionSpec(2, _min, "the smaller of a and b (a at a tie)"),
    "where": FunctionSpec(3, _where, "a where the condition holds, else b", takes_condition=True),
}

_COMPARISONS: dict[type, Callable[[sp.Expr, sp.Expr], sp.Basic]] = {
    ast.Gt: sp.Gt,
    ast.GtE: sp.Ge,
    ast.Lt: sp.Lt,
    ast.LtE: sp.Le,
    ast.Eq: sp.Eq,
    ast.NotEq: sp.Ne,
}
_CONDITION_ONLY = "comparisons and 'and'/'or'/'not' are only allowed in the condition of where(cond, a, b)"

CONSTANTS: dict[str, sp.Expr] = {"pi": sp.pi, "e": sp.E}

_NOT_FINITE = (sp.nan, sp.zoo, sp.oo, -sp.oo)


def parameter_values(params: Sequence[tuple[str, float]]) -> dict[sp.Symbol, sp.Expr]:
    """Parameter symbols, made as the parser makes names, -> their values as exact rationals."""
    return {sp.Symbol(name, real=True): sp.Rational(repr(float(value))) for name, value in params}


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
    if keyword.iskeyword(name) or name in SOFT_KEYWORDS:
        raise GeneratorError(f"{what} name {name!r} is a Python keyword")


# Constants are evaluated with mpmath at a fixed precision, never with SymPy's
# evalf: evalf raises its precision until cancellations resolve, which never
# ends for log_sigmoid(1e300*log(1e300)), and SymPy's exact simplification of
# large rationals can fail (sqrt(4 + 1e-600) raises ValueError in SymPy 1.14).
_MP = mpmath.MPContext()
_MP.prec = 96
_SMALLEST_FLOAT64 = 2.0**-1074


def _mp_times_log(log: Callable[[mpmath.mpf], mpmath.mpf]) -> Callable[[mpmath.mpf, mpmath.mpf], mpmath.mpf]:
    """a * log(b), 0 where a == 0 whatever b is (xlogy, xlog1py)."""
    return lambda a, b: _MP.zero if a == 0 else a * log(b)


def _mp_logaddexp(a: mpmath.mpf, b: mpmath.mpf) -> mpmath.mpf:
    if _MP.im(a) or _MP.im(b):
        return _MP.log(_MP.exp(a) + _MP.exp(b))
    return max(a, b) + _MP.log1p(_MP.exp(-abs(a - b)))


_MP_FUNCTIONS: dict[type, Callable[..., mpmath.mpf]] = {
    sp.exp: _MP.exp,
    sp.log: _MP.log,
    sp.sin: _MP.sin,
    sp.cos: _MP.cos,
    sp.tan: _MP.tan,
    sp.sinh: _MP.sinh,
    sp.cosh: _MP.cosh,
    sp.tanh: _MP.tanh,
    sp.asin: _MP.asin,
    sp.acos: _MP.acos,
    sp.atan: _MP.atan,
    sp.atan2: _MP.atan2,
    sp.asinh: _MP.asinh,
    sp.acosh: _MP.acosh,
    sp.atanh: _MP.atanh,
    sp.erf: _MP.erf,
    sp.erfc: _MP.erfc,
    sp.Abs: abs,
    sp.sign: _MP.sign,
    prim.erfc: _MP.erfc,
    prim.expm1: _MP.expm1,
    prim.log1p: _MP.log1p,
    prim.sigmoid: lambda u: 1 / (1 + _MP.exp(-u)),
    prim.softplus: lambda u: _mp_logaddexp(_MP.zero, u),
    prim.logaddexp: _mp_logaddexp,
    prim.log1mexp: lambda u: _MP.log(-_MP.expm1(-u)),
    prim.log1pmx: lambda u: _MP.log1p(u) - u,
    prim.expm1mx: lambda u: _MP.expm1(u) - u,
    prim.xlogy: _mp_times_log(_MP.log),
    prim.xlog1py: _mp_times_log(_MP.log1p),
    prim.lgamma: lambda u: prim.lgamma_value(u, _MP),
    prim.lbeta: lambda a, b: prim.lgamma_value(a, _MP) + prim.lgamma_value(b, _MP) - prim.lgamma_value(a + b, _MP),
    sp.polygamma: lambda n, u: prim.polygamma_value(n, u, _MP),
    sp.zeta: _MP.zeta,
    prim.hypot: _MP.hypot,
    prim.logcosh: lambda u: _MP.log(_MP.cosh(u)),
    prim.ipow: lambda base, k: base**k,
}


class _Unevaluable(Exception):
    """A constant with a node the numeric evaluator does not know."""


def _evaluate(expr: sp.Expr) -> mpmath.mpf | mpmath.mpc:
    """The value of a constant expression, at 96 bits, possibly complex or infinite."""
    if expr.is_Rational:
        return _MP.mpf(int(expr.p)) / int(expr.q)
    if expr is sp.pi:
        return +_MP.pi
    if expr is sp.E:
        return +_MP.e
    if expr is sp.EulerGamma:
        return +_MP.euler
    if expr is sp.I:
        return _MP.mpc(0, 1)
    if expr.is_Float:
        return _MP.mpf(str(expr))
    args = [_evaluate(arg) for arg in expr.args]
    if isinstance(expr, sp.Add):
        return _MP.fsum(args)
    if isinstance(expr, sp.Mul):
        return _MP.fprod(args)
    if isinstance(expr, sp.Pow):
        return args[0] ** args[1]
    function = _MP_FUNCTIONS.get(type(expr))
    if function is None:
        raise _Unevaluable(type(expr).__name__)
    return function(*args)


def _value(constant: sp.Expr) -> float:
    """A constant that passed `_check_constant`, as a float."""
    return float(_MP.re(_evaluate(constant)))


def _log2_abs(constant: sp.Expr) -> float:
    """log2 |constant| of a nonzero checked constant, computed without building the number."""
    return float(_MP.log(abs(_MP.re(_evaluate(constant))), 2))


def _rational_bits(value: sp.Rational) -> float:
    """log2 of the larger of numerator and denominator."""
    return max(math.log2(abs(value.p)) if value.p else 0.0, math.log2(value.q))


def _same_family(op: ast.operator, child: ast.AST) -> bool:
    """True if `child` continues a chain like a + b - c or a * b / c (not nesting for the user)."""
    if not isinstance(child, ast.BinOp):
        return False
    families = ((ast.Add, ast.Sub), (ast.Mult, ast.Div))
    return any(isinstance(op, f) and isinstance(child.op, f) for f in families)


class _Builder:
    """Turns whitelisted AST nodes into SymPy expressions, checking each result."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.nodes = 0
        self.symbols: dict[str, sp.Symbol] = {}

    def quote(self, node: ast.AST) -> str:
        """The source text of `node`, shortened for a message."""
        segment = ast.get_source_segment(self.text, node) or "this part"
        return segment if len(segment) <= MAX_QUOTE else segment[: MAX_QUOTE - 3] + "..."

    def build(self, node: ast.AST, depth: int = 0) -> sp.Expr:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _fail(f"expression is too large (more than {MAX_NODES} nodes)", self.text, node)
        if depth > MAX_DEPTH:
            raise _fail(f"expression is nested too deeply (more than {MAX_DEPTH} levels)", self.text, node)
        method = getattr(self, f"_build_{type(node).__name__}", None)
        if method is None:
            raise _fail(_describe_rejected(node), self.text, node)
        result = method(node, depth + 1)
        self._check_result(result, node)
        return result

    def condition(self, node: ast.AST, depth: int) -> sp.Basic:
        """The condition of where(): comparisons joined by and/or/not, as a SymPy boolean."""
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _fail(f"expression is too large (more than {MAX_NODES} nodes)", self.text, node)
        if depth > MAX_DEPTH:
            raise _fail(f"expression is nested too deeply (more than {MAX_DEPTH} levels)", self.text, node)
        if isinstance(node, ast.BoolOp):
            parts = [self.condition(value, depth + 1) for value in node.values]
            return sp.And(*parts) if isinstance(node.op, ast.And) else sp.Or(*parts)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return sp.Not(self.condition(node.operand, depth + 1))
        if not isinstance(node, ast.Compare):
            raise _fail(
                f"the condition of where() must be a comparison such as x > 0, not {self.quote(node)}",
                self.text,
                node,
            )
        # a < b <= c is (a < b) and (b <= c), as in Python.
        operands = [self.build(node.left, depth + 1)]
        relations = []
        for op, right in zip(node.ops, node.comparators):
            compare = _COMPARISONS.get(type(op))
            if compare is None:
                word = {ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}.get(type(op), "?")
                raise _fail(f"operator {word!r} is not allowed; compare with <, <=, >, >=, == or !=", self.text, node)
            operands.append(self.build(right, depth + 1))
            try:
                relations.append(compare(_as_float(operands[-2]), _as_float(operands[-1])))
            except TypeError:
                raise _fail(f"SymPy cannot decide the comparison {self.quote(node)}", self.text, node) from None
        return sp.And(*relations)

    def _check_result(self, result: sp.Expr, node: ast.AST) -> None:
        """Reject a subexpression that is not real, not finite, or has an oversized exponent."""
        if result.is_number:
            self._check_constant(result, node)
            return
        if result.has(*_NOT_FINITE):
            raise _fail(f"{self.quote(node)} is undefined (infinite or NaN)", self.text, node)
        if result.has(sp.I):
            raise _fail(f"{self.quote(node)} is not real for any real input", self.text, node)
        powers = [result, *result.args] if isinstance(result, sp.Mul) else [result]
        for power in powers:
            if isinstance(power, sp.Pow) and power.exp.is_number and abs(_value(power.exp)) > MAX_INTEGER_EXPONENT:
                raise _fail(
                    f"{self.quote(node)} has exponent {power.exp}, which is too large "
                    f"(limit {MAX_INTEGER_EXPONENT})",
                    self.text,
                    node,
                )

    def _check_constant(self, value: sp.Expr, node: ast.AST) -> None:
        """A constant must be a finite real number in float64 range.

        Every part of `value` has passed this check already, so evaluating it
        is cheap: its arguments are modest floats.
        """
        if value.has(*_NOT_FINITE):
            raise _fail(f"{self.quote(node)} is undefined (infinite or NaN)", self.text, node)
        if value.is_Rational and value != 0:
            log2_size = math.log2(abs(value.p)) - math.log2(value.q)
            if log2_size > MAX_CONSTANT_LOG2:
                raise _fail(f"{self.quote(node)} is too large for float64", self.text, node)
            if abs(value) < _SMALLEST_FLOAT64:
                raise _fail(f"{self.quote(node)} is too small for float64 (it rounds to 0)", self.text, node)
            if _rational_bits(value) > MAX_RATIONAL_BITS:
                raise _fail(
                    f"{self.quote(node)} has more digits than float64 can use (limit {MAX_RATIONAL_BITS} bits)",
                    self.text,
                    node,
                )
        try:
            number = _evaluate(value)
        except (ZeroDivisionError, ValueError, OverflowError):
            raise _fail(f"{self.quote(node)} is undefined", self.text, node) from None
        except _Unevaluable as exc:
            raise _fail(f"{self.quote(node)} cannot be evaluated ({exc})", self.text, node) from None
        if _MP.im(number) != 0:
            raise _fail(f"{self.quote(node)} is not a real number", self.text, node)
        real = _MP.re(number)
        if _MP.isnan(real) or _MP.isinf(real):
            raise _fail(f"{self.quote(node)} is undefined (infinite or NaN)", self.text, node)
        if abs(real) > sys.float_info.max:
            raise _fail(f"{self.quote(node)} is too large for float64", self.text, node)
        if value.is_Float and 0 < abs(real) < _SMALLEST_FLOAT64:
            # A number SymPy computed from a float one (exp of `_as_float_if_huge`'s value).
            raise _fail(f"{self.quote(node)} is too small for float64 (it rounds to 0)", self.text, node)

    def _fold(self, node: ast.AST, build: Callable[..., sp.Expr], *args: sp.Expr) -> sp.Expr:
        """build(*args); when all args are constants, SymPy's failures to simplify them are input errors.

        SymPy simplifies functions of numbers as it builds them, and some of
        those simplifications fail on extreme values that pass our checks:
        atan(tan(1e308)) raises AttributeError, the square root of a
        2000-bit rational ValueError.
        """
        if not all(arg.is_number for arg in args):
            try:
                return build(*args)
            except TypeError as exc:
                # SymPy folds a where into the comparison around it and compares a branch's
                # constant that is not real: min(asin(where(x < y, x, 1.5)), x**10) makes
                # asin(3/2) <= x**10, and raised TypeError (a traceback, exit 123).
                if "non-real" not in str(exc):
                    raise
                raise _fail(f"{self.quote(node)} compares a value that is not real ({exc})", self.text, node) from None
        try:
            return _as_float_if_huge(build(*args))
        except (ArithmeticError, AttributeError, TypeError, ValueError) as exc:
            raise _fail(
                f"SymPy cannot simplify the constant {self.quote(node)} ({type(exc).__name__})", self.text, node
            ) from None

    def _build_Constant(self, node: ast.Constant, depth: int) -> sp.Expr:
        value = node.value
        if isinstance(value, bool) or value is None or value is Ellipsis:
            kind = "bool" if isinstance(value, bool) else repr(value)
            raise _fail(f"{kind} literals are not allowed; only numbers", self.text, node)
        if not isinstance(value, (int, float)):
            kind = "string" if isinstance(value, (str, bytes)) else type(value).__name__
            raise _fail(f"{kind} literals are not allowed; only numbers", self.text, node)
        if isinstance(value, float):
            if not math.isfinite(value):
                raise _fail("number is not finite (too large for float64)", self.text, node)
            source = (ast.get_source_segment(self.text, node) or repr(value)).replace("_", "")
            if value == 0.0:
                # Exact zero, or a literal below the float64 range: building it exactly
                # could take a denominator of 10**(10**8) digits.
                if any(digit in "123456789" for digit in re.split("[eE]", source)[0]):
                    raise _fail("number is too small for float64 (it rounds to 0)", self.text, node)
                return sp.Integer(0)
            return sp.Rational(source)
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
        if isinstance(node.op, ast.Not):
            raise _fail(_CONDITION_ONLY, self.text, node)
        if not isinstance(node.op, (ast.USub, ast.UAdd)):
            raise _fail(f"operator {_OPERATOR_TEXT.get(type(node.op), '?')!r} is not allowed", self.text, node)
        operand = self.build(node.operand, depth)
        return -operand if isinstance(node.op, ast.USub) else operand

    def _build_BinOp(self, node: ast.BinOp, depth: int) -> sp.Expr:
        op = type(node.op)
        if op not in (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow):
            raise _fail(f"operator {_OPERATOR_TEXT.get(op, '?')!r} is not allowed", self.text, node)
        # A long sum or product is a chain, not nesting: only its operands count as deeper.
        left = self.build(node.left, depth - 1 if _same_family(node.op, node.left) else depth)
        right = self.build(node.right, depth)
        if op is ast.Add:
            return self._fold(node, operator.add, left, right)
        if op is ast.Sub:
            return self._fold(node, operator.sub, left, right)
        if op is ast.Mult:
            return self._fold(node, operator.mul, left, right)
        if op is ast.Div:
            if right.is_zero:
                raise _fail("division by zero", self.text, node)
            return self._fold(node, operator.truediv, left, right)
        return self._power(node, left, right)

    def _power(self, node: ast.BinOp, base: sp.Expr, exponent: sp.Expr) -> sp.Expr:
        if exponent.is_number and abs(_value(exponent)) > MAX_INTEGER_EXPONENT:
            raise _fail(
                f"exponent {self.quote(node.right)} is too large (limit {MAX_INTEGER_EXPONENT})", self.text, node.right
            )
        if base.is_zero:
            if exponent.is_number and exponent.is_negative:
                raise _fail("division by zero", self.text, node)
            if not exponent.is_number:
                raise _fail(
                    f"{self.quote(node)}: 0 to a variable power is not differentiable (its derivative has log(0))",
                    self.text,
                    node,
                )
        elif base.is_number and exponent.is_number:
            # SymPy would compute (3/2)**(10**300) exactly; refuse what cannot be a float64.
            if abs(_value(exponent) * _log2_abs(base)) > MAX_CONSTANT_LOG2:
                raise _fail(f"{self.quote(node)} is out of the float64 range", self.text, node)
            if (
                base.is_Rational
                and exponent.is_Integer
                and abs(int(exponent)) * _rational_bits(base) > MAX_RATIONAL_BITS
            ):
                raise _fail(
                    f"{self.quote(node)} has more digits than float64 can use (limit {MAX_RATIONAL_BITS} bits)",
                    self.text,
                    node,
                )
        if exponent.is_integer is not True and not base.is_number and base.is_negative:
            raise _fail(
                f"{self.quote(node)} is not real for any real input: a negative base to a non-integer power",
                self.text,
                node,
            )
        if not exponent.is_number and base.is_number and base.is_negative:
            raise _fail(f"{self.quote(node)} is not real: a negative base to a variable power", self.text, node)
        return self._fold(node, sp.Pow, base, exponent)

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
        if spec.takes_condition:
            args = [self.condition(node.args[0], depth), *(self.build(arg, depth) for arg in node.args[1:])]
            return self._fold(node, spec.build, *args)
        args = [self.build(arg, depth) for arg in node.args]
        # Constants are checked by value once built (acos(2) is not a real number).
        if spec.domain is not None and not all(a.is_number for a in args):
            reason = spec.domain(*args)
            if reason is not None:
                raise _fail(f"{self.quote(node)} is not real for any real input: {reason}", self.text, node)
        return self._fold(node, spec.build, *args)


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
    ast.Compare: _CONDITION_ONLY,
    ast.BoolOp: _CONDITION_ONLY,
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


def _check_characters(text: str) -> None:
    """One line of printable ASCII (tabs allowed), without comments."""
    for column, char in enumerate(text):
        if char in "\n\r":
            raise GeneratorError("the expression must be on one line", source=text, column=column)
    for column, char in enumerate(text):
        if not char.isascii():
            raise GeneratorError(
                f"non-ASCII character {char!r} (U+{ord(char):04X}) in the expression; "
                "names and operators must be ASCII",
                source=text,
                column=column,
            )
        if not char.isprintable() and char != "\t":
            raise GeneratorError(f"control character U+{ord(char):04X} in the expression", source=text, column=column)
        if char == "#":
            raise GeneratorError("comments ('#') are not allowed in the expression", source=text, column=column)


def _syntax_error(exc: SyntaxError, stripped: str, text: str, offset: int) -> GeneratorError:
    """A GeneratorError for Python's SyntaxError, with the caret where the problem is."""
    reason = (exc.msg or "invalid syntax").split(" (")[0]
    if reason.startswith("invalid syntax. Perhaps you forgot a comma"):
        reason = "missing operator between two terms"
    if not exc.offset or exc.offset > len(stripped):
        # Python reports offset 0 when the input stops in the middle of an expression (`x +`).
        if reason == "invalid syntax":
            reason = "unexpected end of the expression"
        return GeneratorError(f"syntax error: {reason}", source=text, column=len(stripped) + offset)
    return GeneratorError(f"syntax error: {reason}", source=text, column=exc.offset - 1 + offset)


def parse(text: str) -> sp.Expr:
    """Parse `text` into a SymPy expression over real symbols, or raise GeneratorError."""
    if not isinstance(text, str) or not text.strip():
        raise GeneratorError("the expression is empty")
    if len(text) > MAX_LENGTH:
        raise GeneratorError(f"the expression is {len(text)} characters long; the limit is {MAX_LENGTH}")
    _check_characters(text)
    stripped = text.strip()
    offset = text.index(stripped[0])
    try:
        # Python warns on stderr about some tokens (`1if`, `0x1for`); make them syntax errors instead.
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            tree = ast.parse(stripped, mode="eval")
    except SyntaxError as exc:
        raise _syntax_error(exc, stripped, text, offset) from None
    except (ValueError, RecursionError, MemoryError):
        raise GeneratorError("the expression could not be parsed (is it nested too deeply?)") from None
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
    if expr.has(*_NOT_FINITE):
        raise GeneratorError(
            "the expression is undefined (it simplifies to nan or infinity)", source=text, column=offset
        )
    return expr
