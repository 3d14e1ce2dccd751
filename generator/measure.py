"""Measure accuracy: bits of error of f and its partials against mpmath.

Not a pipeline stage: the benchmark (benchmarks/accuracy.py) and the
accuracy tests use it to score generated modules, naive TensorFlow autodiff
and TensorFlow built-ins against the same references.

- The metric is Herbie's: the bits of error of a result are
  log2(1 + d), where d is the distance between the result and the correctly
  rounded true value counted in floats of the dtype (adjacent floats: 1 bit).
- TensorFlow on CPU flushes subnormals to zero (inputs and results, float32
  and float64), so we measure in that format: a true value below the smallest
  normal rounds to 0, and subnormals are not counted as floats between two
  values (0 and the smallest normal are adjacent). NaN, and an infinity where
  the correctly rounded value is not that infinity, count as the full width of
  the dtype (32 or 64 bits). An infinity where the true value overflows the
  dtype is exact.
- References come from the math, never from our output: the naive expression
  (stable primitives replaced by their definitions) is differentiated by SymPy
  and evaluated in mpmath interval arithmetic, at increasing precision until
  the interval rounds to one float. Where the formula is 0/0 (sin(x)/x at 0)
  the reference is the limit, when both sides (or the only real side) agree.
- Sample points cover the whole range of the dtype, with more points near
  domain edges, 0 and 1; points where the true f is not real and finite are
  dropped.

Importing this module does not import TensorFlow; the functions that run
TensorFlow code import it themselves.
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import sys
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import mpmath
import numpy as np
import sympy as sp
from mpmath.libmp import from_int, mpf_pos, round_ceiling, round_floor
from sympy.printing.precedence import PRECEDENCE
from sympy.printing.str import StrPrinter

from generator.derive import Index, resolve_variables
from generator.parse import parameter_values, parse
from generator.primitives import naive, real_diff

# --- formats and the metric ---------------------------------------------------


@dataclass(frozen=True)
class Format:
    """A floating dtype as TensorFlow on CPU computes in it: subnormals flushed to zero."""

    name: str
    width: int  # bits in the representation
    precision: int  # significand bits, the implicit one included

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self.name)

    @property
    def uint(self) -> np.dtype:
        return np.dtype(f"uint{self.width}")

    @property
    def tiny(self) -> float:
        """The smallest positive normal."""
        return float(np.finfo(self.dtype).tiny)

    @property
    def max(self) -> float:
        return float(np.finfo(self.dtype).max)

    @property
    def overflow(self) -> mpmath.mpf:
        """2**(emax + 1): rounded values this large or larger are infinite."""
        return mpmath.ldexp(1, int(np.finfo(self.dtype).maxexp))


FLOAT32 = Format("float32", 32, 24)
FLOAT64 = Format("float64", 64, 53)
FORMATS: dict[str, Format] = {f.name: f for f in (FLOAT32, FLOAT64)}


def ordinal(values: np.ndarray, fmt: Format) -> np.ndarray:
    """Position of each value among the floats of `fmt`, subnormals flushed: 0 is 0, the smallest
    normal is 1, its neighbour 2, ..., inf is one past the largest float; negatives mirror.

    Both zeros are 0. NaN gives a meaningless number: callers check for NaN first.
    """
    bits = np.asarray(values, dtype=fmt.dtype).view(fmt.uint).astype(np.uint64)
    sign = bits >> np.uint64(fmt.width - 1)
    magnitude = bits & np.uint64((1 << (fmt.width - 1)) - 1)
    first_normal = np.uint64(1 << (fmt.precision - 1))  # the bit pattern of the smallest normal
    position = np.where(magnitude < first_normal, 0, magnitude - first_normal + np.uint64(1)).astype(np.int64)
    return np.where(sign == 1, -position, position)


def from_ordinal(positions: np.ndarray, fmt: Format) -> np.ndarray:
    """The floats at the given ordinals: the inverse of `ordinal` (0 gives +0)."""
    positions = np.asarray(positions, dtype=np.int64)
    magnitude = np.abs(positions).astype(np.uint64)
    first_normal = np.uint64(1 << (fmt.precision - 1))
    pattern = np.where(magnitude == 0, 0, magnitude + first_normal - np.uint64(1))
    pattern = pattern | np.where(positions < 0, np.uint64(1) << np.uint64(fmt.width - 1), 0).astype(np.uint64)
    return pattern.astype(fmt.uint).view(fmt.dtype)


def float_distance(a: np.ndarray, b: np.ndarray, fmt: Format) -> np.ndarray:
    """How many floats of `fmt` (subnormals flushed) lie from a to b, as uint64, exactly."""
    # Offset binary: adding 2**63 modulo 2**64 maps int64 order onto uint64 order.
    offset = np.uint64(1 << 63)
    ka = ordinal(a, fmt).view(np.uint64) + offset
    kb = ordinal(b, fmt).view(np.uint64) + offset
    return np.where(ka >= kb, ka - kb, kb - ka)


def wrong_nonfinite(result: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """NaN, or an infinity where the correctly rounded value is not that infinity."""
    result = np.asarray(result)
    return np.isnan(result) | (np.isinf(result) & (result != reference))


def bits_of_error(result: np.ndarray, reference: np.ndarray, fmt: Format) -> np.ndarray:
    """log2(1 + floats between result and reference); the full width for a wrong NaN or infinity.

    `reference` holds correctly rounded true values (see `round_to_format`), never NaN.
    """
    result = np.asarray(result, dtype=fmt.dtype)
    reference = np.asarray(reference, dtype=fmt.dtype)
    if np.isnan(reference).any():
        raise ValueError("a reference value is NaN; drop undefined points before scoring")
    with np.errstate(invalid="ignore"):
        bits = np.log2(1.0 + float_distance(result, reference, fmt).astype(np.float64))
    return np.where(wrong_nonfinite(result, reference), float(fmt.width), np.minimum(bits, fmt.width))


def round_to_format(value: mpmath.mpf, fmt: Format) -> float:
    """`value` correctly rounded (to nearest) to `fmt`: infinite past its range, 0 below its smallest normal."""
    with mpmath.workprec(fmt.precision):
        rounded = +value
    if abs(rounded) >= fmt.overflow:
        return float("inf") if rounded > 0 else float("-inf")
    if abs(rounded) < fmt.tiny:
        return 0.0
    return float(rounded)  # exact: at most 53 significant bits, within float64's range


# --- references from the math ---------------------------------------------------
#
# Ground truth in the manner of Herbie's Rival: the naive formula is evaluated
# in interval arithmetic (mpmath.iv), whose intervals are guaranteed to hold
# the true value, at increasing precision until both ends round to the same
# float of the format measured. Plain "evaluate at two precisions and compare" is
# fooled when 1 - cos(1e-200) is exactly 0 at both; an interval is not.

# Working precisions in bits, tried in turn.
PRECISIONS: tuple[int, ...] = tuple(128 << k for k in range(8))
# An interval this narrow, relative to its ends, is accepted even if it holds a
# rounding boundary (a tie), so that ties cannot escalate forever.
TIE_WIDTH = mpmath.ldexp(1, -200)
# Steps towards a removable singularity (0/0), relative to each argument's size
# (absolute near 0): far below any ulp, and exact in mpmath.
LIMIT_STEPS = (mpmath.ldexp(1, -1100), mpmath.ldexp(1, -1200))

iv = mpmath.iv


class _Complex(Exception):
    """The true value is certainly not real (log or sqrt of a negative number)."""


class _Singular(Exception):
    """Division by an exact zero or log of an exact zero: 0/0, 1/0, ... at this very point."""


class _Unsure(Exception):
    """An interval straddles a pole or a branch point: more precision may decide it."""


class _Unbounded(Exception):
    """Not bounded here at any precision (lgamma of a negative number, exp beyond 2**1100):
    the point is left unmeasured without raising the precision to no end."""


def _ends(v: object) -> tuple[mpmath.mpf, mpmath.mpf]:
    """The ends of an interval, exactly (mpmath.mpf(...) would round them to 53 bits)."""
    lo, hi = v._mpi_  # type: ignore[attr-defined]
    return mpmath.mp.make_mpf(lo), mpmath.mp.make_mpf(hi)


def _enclose(lo: mpmath.mpf, hi: mpmath.mpf) -> object:
    """[lo, hi] at the working precision, rounded outward (iv.mpf would round to nearest)."""
    return iv.make_mpf((mpf_pos(lo._mpf_, iv.prec, round_floor), mpf_pos(hi._mpf_, iv.prec, round_ceiling)))


def _exact(value: int | float) -> object:
    """A number as an interval: a point where the working precision holds it, else a tight enclosure."""
    x = mpmath.mp.make_mpf(from_int(value)) if isinstance(value, int) else mpmath.mpf(value)
    return _enclose(x, x)


def _widened(lo: mpmath.mpf, hi: mpmath.mpf) -> object:
    """[lo, hi], computed with guard bits, widened outward by a relative 2**-prec."""
    slack = mpmath.ldexp(1, -iv.prec)
    return _enclose(lo, hi) * _enclose(mpmath.fsub(1, slack, exact=True), mpmath.fadd(1, slack, exact=True))


def _result(argument: tuple[mpmath.mpf, mpmath.mpf], lo: mpmath.mpf, hi: mpmath.mpf) -> object:
    """A function's value [lo, hi], widened outward; but at the argument 0, where the functions
    here take 0, 1 or an irrational value, an integer value is exact (exp(0) is 1, not about 1)."""
    if argument[0] == argument[1] == 0 and lo == hi and lo == int(lo):
        return _exact(int(lo))
    return _widened(lo, hi)


def _point(fn: Callable[[mpmath.mpf], mpmath.mpf], x: mpmath.mpf, guard: int = 20) -> mpmath.mpf:
    """fn(x) by plain mpmath with `guard` bits; _Complex where it is not real."""
    with mpmath.workprec(iv.prec + guard):
        y = fn(x)
    if isinstance(y, mpmath.mpc):
        if y.imag != 0:
            raise _Complex
        return y.real
    return y


def _monotone(
    fn: Callable[[mpmath.mpf], mpmath.mpf], domain: tuple[float, float] = (-math.inf, math.inf)
) -> Callable[[object], object]:
    """Interval version of a function monotone on its domain (an interval): fn at both ends
    with guard bits, widened outward.

    mpmath's own interval exp and sin are not rigorous (exp([2**-1100]) at 2048 bits is the
    point 1 + 2**-1100), hence this.
    """

    def apply(v: object) -> object:
        lo, hi = _ends(v)
        if hi < domain[0] or lo > domain[1]:
            raise _Complex
        if lo < domain[0] or hi > domain[1]:
            raise _Unsure
        ends = [_point(fn, lo), _point(fn, hi)]
        if any(mpmath.isinf(e) for e in ends):  # atanh(1), ...: a true infinity at an end
            raise _Unsure
        return _result((lo, hi), min(ends), max(ends))

    return apply


def _widened_iv(fn: Callable[[object], object]) -> Callable[[object], object]:
    """mpmath's interval fn (which finds the extrema inside the interval), widened outward."""

    def apply(v: object) -> object:
        result = fn(v)
        lo, hi = _ends(result)
        return result if mpmath.isinf(lo) or mpmath.isinf(hi) else _result(_ends(v), lo, hi)

    return apply


# Beyond it exp's argument is no float but another exp's value (exp(-exp(x)) at x = -3e38 is
# exp(-2**(4.3e38))): reducing it modulo log(2) would take log(2) to 4.3e38 bits, and the
# accuracy benchmark hung there. exp is then below or above every float by far.
_EXP_FAR = mpmath.ldexp(1, 1100)
_BELOW_EXP_FAR = mpmath.ldexp(1, -(2**1100))  # 2**-_EXP_FAR, above exp(-_EXP_FAR)


def _exp_point(x: mpmath.mpf) -> mpmath.mpf:
    """exp(x) by reduction modulo log(2). Above 600 bits mpmath raises e to the power x,
    which takes a tenth of a second for x = 1e300."""
    if abs(x) < 256:
        return mpmath.exp(x)
    if abs(x) > _EXP_FAR:
        raise _Unsure  # sinh, cosh: beyond every float, with no finite bound to give
    magnitude = int(mpmath.mag(x))
    with mpmath.extraprec(magnitude + 10):
        n = mpmath.floor(x / mpmath.ln2)
        y = mpmath.ldexp(mpmath.exp(x - n * mpmath.ln2), int(n))
    return +y


def _sinh_point(x: mpmath.mpf) -> mpmath.mpf:
    return mpmath.sinh(x) if abs(x) < 1 else (_exp_point(x) - _exp_point(-x)) / 2


def _cosh_point(x: mpmath.mpf) -> mpmath.mpf:
    return (_exp_point(x) + _exp_point(-x)) / 2


def _tanh_point(x: mpmath.mpf) -> mpmath.mpf:
    if abs(x) > 2**20:
        # 1 - tanh(x) < 2*exp(-2**21), far below the outward widening (2**-prec, prec <= 16384).
        return mpmath.sign(x)
    return mpmath.tanh(x) if abs(x) < 1 else mpmath.sign(x) * (1 - 2 / (_exp_point(2 * abs(x)) + 1))


_EXP_POINT = _monotone(_exp_point)


def _exp(v: object) -> object:
    """Interval exp; where the argument is beyond +-_EXP_FAR, the bounds 0 < exp(x) < 2**x
    for x < 0 (e > 2), which round as the true value does; above +_EXP_FAR no finite upper
    bound (exp(exp(3e38)) stays undecided)."""
    lo, hi = _ends(v)
    if lo > _EXP_FAR:
        raise _Unbounded
    if hi > _EXP_FAR:
        raise _Unsure
    if lo >= -_EXP_FAR:
        return _EXP_POINT(v)
    upper = _BELOW_EXP_FAR if hi < -_EXP_FAR else _point(_exp_point, hi)
    return _widened(mpmath.mpf(0), upper)


def _inverse(v: object) -> object:
    lo, hi = _ends(v)
    if lo == hi == 0:
        raise _Singular
    if lo <= 0 <= hi:
        raise _Unsure
    return 1 / v


def _log(v: object) -> object:
    lo, hi = _ends(v)
    if lo == hi == 0:
        raise _Singular
    if lo <= 0 < hi:
        raise _Unsure
    return _LOG(v)


_LOG = _monotone(mpmath.log, (0.0, math.inf))
_SQRT = _monotone(mpmath.sqrt, (0.0, math.inf))


def _pow(base: object, p: int, q: int) -> object:
    """base**(p/q) for integers p and q > 0, by interval products (rigorous)."""
    if q == 1:
        factor = abs(base) if p % 2 == 0 else base
    elif q == 2:
        factor = _SQRT(base)
    else:
        return _exp(_log(base) * _exact(p) / _exact(q))
    power = factor
    for _ in range(abs(p) - 1):
        power = power * factor
    return _inverse(power) if p < 0 else power


def _cosh(v: object) -> object:
    lo, hi = _ends(v)
    if lo >= 0 or hi <= 0:
        return _monotone(_cosh_point)(v)
    return _widened(mpmath.mpf(1), max(_point(_cosh_point, lo), _point(_cosh_point, hi)))


def _sign(v: object) -> object:
    lo, hi = _ends(v)
    if lo > 0 or hi < 0 or lo == hi == 0:
        return _exact(int(mpmath.sign(lo + hi)))
    raise _Unsure


def _dirac(v: object, *order: object) -> object:
    lo, hi = _ends(v)
    if lo > 0 or hi < 0:
        return _exact(0)
    if lo == hi == 0:
        raise _Singular
    raise _Unsure


_atan = _monotone(mpmath.atan)


def _atan2(a: object, b: object) -> object:
    """atan2(a, b), the angle of the point (b, a): atan(a/b) right of the a axis, pi/2 - atan(b/a)
    above it and -pi/2 - atan(b/a) below; on the cut (a = 0, b < 0) pi, as TF and mpmath give."""
    (a_lo, a_hi), (b_lo, b_hi) = _ends(a), _ends(b)
    if b_lo > 0:
        return _atan(a / b)
    if a_lo > 0 or a_hi < 0:
        with mpmath.workprec(iv.prec + 20):
            quarter = mpmath.sign(a_lo) * mpmath.pi / 2
        return _widened(quarter, quarter) - _atan(b / a)
    if a_lo == a_hi == 0 and (b_hi < 0 or b_lo == b_hi == 0):
        return _constant(lambda: mpmath.pi)(()) if b_hi < 0 else _exact(0)
    raise _Unsure


# lgamma's minimum on (0, inf), where digamma has its positive root.
_LGAMMA_MIN_AT = mpmath.mpf("1.46163214496836234126265954232572132846819620400644635129598840859878644")


# mpmath's psi cancels near its root at the working precision (8 bits at 53): more guard bits.
_GAMMA_GUARD = 80


def _lgamma(v: object) -> object:
    """log|gamma|: decreasing up to its minimum at 1.4616..., increasing beyond. Below 0 (poles at
    each integer, a maximum between) not bounded here: the point is left unmeasured."""
    lo, hi = _ends(v)
    _positive_or_unbounded(lo, hi)
    ends = [_point(mpmath.loggamma, end, _GAMMA_GUARD) for end in (lo, hi)]
    low = _point(mpmath.loggamma, _LGAMMA_MIN_AT, _GAMMA_GUARD) if lo < _LGAMMA_MIN_AT < hi else min(ends)
    return _result((lo, hi), low, max(ends))


def _positive_or_unbounded(lo: mpmath.mpf, hi: mpmath.mpf) -> None:
    """lgamma's and polygamma's interval argument is above 0, or raise: _Unbounded where it is
    all at or below 0 (lgamma(x) - lgamma(y) at x = -74 took the other term to 16384 bits, 1.4 s
    a point in the accuracy benchmark's sampling), _Unsure where it straddles 0."""
    if hi <= 0:
        raise _Unbounded
    if lo <= 0:
        raise _Unsure


def _polygamma(n: object, v: object) -> object:
    """polygamma(n, x), monotone for x > 0 (increasing for n = 0 and even n, decreasing for odd n).
    Below 0 (poles at each integer), as _lgamma."""
    order, (lo, hi) = int(_ends(n)[0]), _ends(v)
    _positive_or_unbounded(lo, hi)
    ends = [_point(lambda t: _psi(order, t), end, _GAMMA_GUARD) for end in (lo, hi)]
    return _result((lo, hi), min(ends), max(ends))


# Beyond this argument polygamma is its leading asymptotic term to far more bits than the
# working precision holds (the next is 1/(2t) of it). mpmath.psi itself raises OverflowError
# there (it converts the argument to an integer): at exp(x) for x = 3e38, in lgamma(exp(x))'.
_PSI_ASYMPTOTIC = mpmath.ldexp(1, 4096)


def _psi(order: int, t: mpmath.mpf) -> mpmath.mpf:
    """polygamma(order, t), for t > 0."""
    if t < _PSI_ASYMPTOTIC:
        return mpmath.psi(order, t)
    if order == 0:
        return mpmath.log(t)
    return (-1) ** (order + 1) * mpmath.factorial(order - 1) / t**order


def _constant(value: Callable[[], mpmath.mpf]) -> Callable[[Sequence[object]], object]:
    def apply(args: Sequence[object]) -> object:
        with mpmath.workprec(iv.prec + 20):
            x = +value()
        return _widened(x, x)

    return apply


# SymPy function class name -> interval function. Arithmetic (+, -, *, /) is mpmath.iv's,
# which rounds outward; every other function goes through `_monotone` or `_widened_iv`.
INTERVAL_FUNCTIONS: dict[str, Callable[..., object]] = {
    "exp": _exp,
    "log": _log,
    "sin": _widened_iv(iv.sin),
    "cos": _widened_iv(iv.cos),
    "tan": _widened_iv(iv.tan),
    "sinh": _monotone(_sinh_point),
    "cosh": _cosh,
    "tanh": _monotone(_tanh_point),
    "asin": _monotone(mpmath.asin, (-1.0, 1.0)),
    "acos": _monotone(mpmath.acos, (-1.0, 1.0)),
    "atan": _atan,
    "atan2": _atan2,
    "asinh": _monotone(mpmath.asinh),
    "acosh": _monotone(mpmath.acosh, (1.0, math.inf)),
    "atanh": _monotone(mpmath.atanh, (-1.0, 1.0)),
    "erf": _monotone(mpmath.erf),
    "erfc": _monotone(mpmath.erfc),
    "_erfc_of_minus": _monotone(lambda t: mpmath.erfc(-t)),
    "Abs": abs,
    "sign": _sign,
    "DiracDelta": _dirac,
    "lgamma": _lgamma,
    "polygamma": _polygamma,
}

Interval = Callable[[Sequence[object]], object]


def _decided(true: bool, false: bool) -> bool:
    """A comparison of intervals: its value where the enclosure decides it, else _Unsure."""
    if true == false:
        raise _Unsure
    return true


# Relation -> its truth from the enclosure [lo, hi] of lhs - rhs.
_RELATIONS: dict[str, Callable[[mpmath.mpf, mpmath.mpf], bool]] = {
    ">": lambda lo, hi: _decided(lo > 0, hi <= 0),
    ">=": lambda lo, hi: _decided(lo >= 0, hi < 0),
    "<": lambda lo, hi: _decided(hi < 0, lo >= 0),
    "<=": lambda lo, hi: _decided(hi <= 0, lo > 0),
    "==": lambda lo, hi: _decided(lo == hi == 0, lo > 0 or hi < 0),
    "!=": lambda lo, hi: _decided(lo > 0 or hi < 0, lo == hi == 0),
}


def compile_interval(expr: sp.Expr, variables: Sequence[sp.Symbol]) -> Interval:
    """A function of the variables' intervals computing expr in interval arithmetic.

    Built from closures over the expression tree (nothing is printed and evaluated); every
    constant is exact, and every operation whose result the interval cannot bound
    (1/[-a, b], log([-a, b])) raises _Unsure rather than give a wrong interval.
    """
    position = {v: i for i, v in enumerate(variables)}

    def build(e: sp.Expr) -> Interval:
        if e in position:
            i = position[e]
            return lambda args: args[i]
        if e.is_Rational:
            p, q = int(e.p), int(e.q)
            return lambda args: _exact(p) / _exact(q)
        if e.is_Float:
            return build(sp.Rational(e))
        if e is sp.pi:
            return _constant(lambda: mpmath.pi)
        if e is sp.E:
            return _constant(lambda: mpmath.e)
        if e is sp.EulerGamma:
            return _constant(lambda: mpmath.euler)
        if isinstance(e, sp.Piecewise):
            cases = [(build(value), build(condition)) for value, condition in e.args]

            def piecewise(args: Sequence[object]) -> object:
                # Only the branch taken is evaluated: the others may be undefined here.
                for value, condition in cases:
                    if condition(args):
                        return value(args)
                raise _Singular  # no branch applies

            return piecewise
        if e is sp.true or e is sp.false:
            truth = bool(e)
            return lambda args: truth
        parts = [build(a) for a in e.args]
        if isinstance(e, sp.Rel):
            decide = _RELATIONS[e.rel_op]
            return lambda args: decide(*_ends(parts[0](args) - parts[1](args)))
        if isinstance(e, sp.ITE):
            condition, then, otherwise = parts
            return lambda args: then(args) if condition(args) else otherwise(args)
        if isinstance(e, (sp.And, sp.Or, sp.Not)):
            combine = {sp.And: all, sp.Or: any, sp.Not: lambda values: not values[0]}[type(e)]
            return lambda args: combine([part(args) for part in parts])
        if e.is_Add:
            return lambda args: sum((part(args) for part in parts[1:]), parts[0](args))
        if e.is_Mul:

            def product(args: Sequence[object]) -> object:
                result = parts[0](args)
                for part in parts[1:]:
                    result = result * part(args)
                return result

            return product
        if e.is_Pow:
            base, exponent = parts
            if e.exp.is_Rational:
                p, q = int(e.exp.p), int(e.exp.q)
                return lambda args: _pow(base(args), p, q)
            return lambda args: _exp(exponent(args) * _log(base(args)))
        function = INTERVAL_FUNCTIONS.get(type(e).__name__) if isinstance(e, sp.Function) else None
        if function is None:
            raise ValueError(f"no interval version of {type(e).__name__}: {e}")
        return lambda args: function(*(part(args) for part in parts))

    return build(expr)


def _rounds_alike(lo: mpmath.mpf, hi: mpmath.mpf, fmt: Format) -> bool:
    return round_to_format(lo, fmt) == round_to_format(hi, fmt)


def _evaluate(
    forms: Sequence[Interval], args: Sequence[mpmath.mpf], fmt: Format
) -> mpmath.mpf | type[Exception] | None:
    """The function at exact arguments: a value that rounds in `fmt` as the true value does,
    or _Complex / _Singular, or None when even the last precision cannot decide.

    `forms` are equal as functions; at each precision the first to narrow down wins.
    """
    saved = iv.prec
    try:
        for prec in PRECISIONS:
            iv.prec = prec
            singular = unbounded = 0
            for fn in forms:
                try:
                    lo, hi = _ends(fn([_enclose(a, a) for a in args]))
                except _Complex:
                    return _Complex
                except _Singular:
                    singular += 1
                    continue
                except _Unbounded:
                    unbounded += 1
                    continue
                except _Unsure:
                    continue
                if any(mpmath.isinf(e) or mpmath.isnan(e) for e in (lo, hi)):
                    continue
                if _rounds_alike(lo, hi, fmt) or hi - lo <= TIE_WIDTH * max(abs(lo), abs(hi)):
                    return lo  # any point of the interval rounds as the true value does
            if singular == len(forms):
                return _Singular
            if unbounded == len(forms):
                return None
        return None
    finally:
        iv.prec = saved


def _shifted(args: Sequence[mpmath.mpf], step: mpmath.mpf) -> list[mpmath.mpf]:
    """Every argument moved by `step`, relative to its size (absolute near 0), exactly."""
    return [mpmath.fadd(a, step * max(abs(a), 1), exact=True) for a in args]


def _converged(a: object, b: object, fmt: Format) -> bool:
    """Two values on the way to a limit agree on a finite float of `fmt`."""
    if not (isinstance(a, mpmath.mpf) and isinstance(b, mpmath.mpf)):
        return False
    return _rounds_alike(a, b, fmt) and not mpmath.isinf(round_to_format(a, fmt))


def _limit(forms: Sequence[Interval], args: Sequence[mpmath.mpf], fmt: Format) -> mpmath.mpf | None:
    """fn's limit at a 0/0 point: both sides agree, or the only real side converges.

    Limits beyond the range of `fmt` count as divergence (1/x**2 at 0 is not finite).
    """
    small, smaller = LIMIT_STEPS
    above = _evaluate(forms, _shifted(args, small), fmt)
    below = _evaluate(forms, _shifted(args, -small), fmt)
    if _converged(above, below, fmt):
        return above  # type: ignore[return-value]
    real = [isinstance(v, mpmath.mpf) for v in (above, below)]
    if real.count(True) == 1:
        side, sign = (above, 1) if real[0] else (below, -1)
        nearer = _evaluate(forms, _shifted(args, sign * smaller), fmt)
        if _converged(side, nearer, fmt):
            return nearer  # type: ignore[return-value]
    return None


class Reference:
    """f and its partials up to `order`, from the math, evaluated in interval arithmetic.

    Partials are indexed like generator.derive: sorted tuples of variable names,
    () for f. Values are memoised per point.
    """

    def __init__(
        self,
        expression: str,
        variables: Sequence[str],
        fmt: Format,
        order: int = 2,
        params: Sequence[tuple[str, float]] = (),
    ) -> None:
        expr = naive(parse(expression)).xreplace(parameter_values(params))
        symbols = resolve_variables(expr, list(variables))
        self.variables: tuple[str, ...] = tuple(s.name for s in symbols)
        self.fmt = fmt
        self.order = order
        by_name = dict(zip(self.variables, symbols))
        exprs: dict[Index, sp.Expr] = {(): expr}
        for index in partial_indices(self.variables, order)[1:]:
            exprs[index] = real_diff(exprs[index[:-1]], by_name[index[-1]])
        self.indices: tuple[Index, ...] = tuple(exprs)
        self._forms = {index: tuple(compile_interval(form, symbols) for form in _equal_forms(e)) for index, e in exprs.items()}
        self._memo: dict[tuple[Index, tuple[float, ...]], mpmath.mpf | None] = {}
        # (index, point) where even the last precision could not bound the true value.
        self.unresolved: set[tuple[Index, tuple[float, ...]]] = set()

    def value(self, index: Index, point: Sequence[float]) -> mpmath.mpf | None:
        """The true partial at `point` (floats, taken exactly); None where it is not real and finite."""
        key = (index, tuple(float(p) for p in point))
        if key not in self._memo:
            forms = self._forms[index]
            args = [mpmath.mpf(p) for p in key[1]]
            value = _evaluate(forms, args, self.fmt)
            if value is _Singular:
                value = _limit(forms, args, self.fmt)
            elif value is None:
                self.unresolved.add(key)
            self._memo[key] = value if isinstance(value, mpmath.mpf) else None
        return self._memo[key]

    def defined(self, point: Sequence[float]) -> bool:
        """Whether the true f is real and finite at `point`: the domain filter."""
        return self.value((), point) is not None

    def table(self, points: np.ndarray) -> dict[Index, np.ndarray]:
        """Every partial at every point, correctly rounded to `fmt`; NaN where it is not real and finite."""
        table = {}
        for index in self.indices:
            column = np.full(len(points), np.nan, dtype=self.fmt.dtype)
            for i, point in enumerate(points):
                value = self.value(index, point)
                if value is not None:
                    column[i] = round_to_format(value, self.fmt)
            table[index] = column
        return table


class _erfc_of_minus(sp.Function):
    """erfc(-u), kept so: SymPy writes erfc(-x) as 2 - erfc(x), which cancels where erfc(-x)
    is tiny."""


def _equal_forms(e: sp.Expr) -> list[sp.Expr]:
    """`e` as written, and forms equal to it as functions that intervals bound at a lower
    precision where it cancels: its fractions combined (deep), which makes 1 - 1/(1 + exp(-z))
    exp(-z)/(1 + exp(-z)), bounded for z = 1e30; and with erf(u) written as erfc(-u) - 1 and
    as 1 - erfc(u), so that 1 + erf(x) is erfc(-x), bounded for x = -300 at 128 bits (as
    written, it needs over 10**5 bits, and mpmath's erf at 16384 bits ran for minutes)."""
    forms = [e, sp.together(e, deep=True)]
    if e.has(sp.erf):
        for written in (lambda u: _erfc_of_minus(u) - 1, lambda u: 1 - sp.erfc(u)):
            forms.append(sp.together(e.replace(sp.erf, written), deep=True))
    return list(dict.fromkeys(forms))


def partial_indices(variables: Sequence[str], order: int) -> list[Index]:
    """(), then the distinct partials of each order 1..order, as generator.derive orders them."""
    return [tuple(c) for k in range(order + 1) for c in itertools.combinations_with_replacement(variables, k)]


# --- sample points -------------------------------------------------------------------

MODERATE = 100.0  # half-width of the range sampled uniformly in value, where most use happens
COARSE = 129  # ordinal-uniform points scanned to find domain edges


def _unique_sorted(values: np.ndarray, fmt: Format) -> np.ndarray:
    values = np.asarray(values, dtype=fmt.dtype)
    values = values[np.isfinite(values)]
    return np.unique(np.where(values == 0, 0, values))  # one zero


def _ladder(start: float, direction: int, fmt: Format, stride: int = 3) -> np.ndarray:
    """Floats 2**j ulps from `start` towards `direction`, j = 0, stride, 2*stride, ..."""
    origin = int(ordinal(np.array([start], dtype=fmt.dtype), fmt)[0])
    steps = [direction * (1 << j) for j in range(0, fmt.precision + 1, stride)]
    return from_ordinal(np.array([origin + s for s in steps]), fmt)


def _specials(fmt: Format) -> np.ndarray:
    """0, the extremes, and floats close to 1 and -1 on both sides."""
    near_one = [_ladder(s, d, fmt) for s in (1.0, -1.0) for d in (1, -1)]
    extremes = [0.0, 1.0, -1.0, fmt.tiny, -fmt.tiny, fmt.max, -fmt.max]
    return np.concatenate([np.array(extremes, dtype=fmt.dtype), *near_one])


def _spread(intervals: list[tuple[int, int]], count: int) -> np.ndarray:
    """`count` ordinals spread evenly over the (inclusive) ordinal intervals, by length."""
    lengths = np.array([hi - lo + 1 for lo, hi in intervals], dtype=np.float64)
    parts = []
    for (lo, hi), length in zip(intervals, lengths):
        share = max(2, int(round(count * length / lengths.sum())))
        parts.append(np.unique(np.round(np.linspace(lo, hi, share)).astype(np.int64)))
    return np.concatenate(parts) if parts else np.array([], dtype=np.int64)


def _grid(intervals: list[tuple[int, int]], count: int, fmt: Format) -> np.ndarray:
    """Half the points uniform in ordinals (every binade gets its share), a third uniform in
    value over the part of [-MODERATE, MODERATE] inside the intervals."""
    across = from_ordinal(_spread(intervals, count // 2), fmt)
    pieces = []
    for lo, hi in intervals:
        a, b = from_ordinal(np.array([lo, hi]), fmt).astype(np.float64)
        if max(a, -MODERATE) < min(b, MODERATE):
            pieces.append((max(a, -MODERATE), min(b, MODERATE)))
    total = sum(b - a for a, b in pieces)
    moderate = [np.linspace(a, b, max(2, int(round(count / 3 * (b - a) / total)))) for a, b in pieces]
    return np.concatenate([across, *(m.astype(fmt.dtype) for m in moderate)])


def _edge(reference: Reference, inside: int, outside: int, fmt: Format) -> int:
    """Bisect ordinals between a defined and an undefined point: the last defined ordinal."""
    while abs(outside - inside) > 1:
        middle = (inside + outside) // 2
        if reference.defined(from_ordinal(np.array([middle]), fmt)):
            inside = middle
        else:
            outside = middle
    return inside


def _sample_line(reference: Reference, fmt: Format, n: int) -> np.ndarray:
    """One variable: find the domain's intervals, then grid them, with ladders into each edge."""
    top = int(ordinal(np.array([fmt.max], dtype=fmt.dtype), fmt)[0])
    scan = np.unique(np.concatenate([np.round(np.linspace(-top, top, COARSE)).astype(np.int64), [0]]))
    ok = [reference.defined(from_ordinal(np.array([o]), fmt)) for o in scan]
    intervals: list[tuple[int, int]] = []
    ladders = []
    start = None
    for i, o in enumerate(scan):
        if not ok[i]:
            continue
        if start is None:
            start = int(o) if i == 0 else _edge(reference, int(o), int(scan[i - 1]), fmt)
            if i > 0:
                ladders.append(_ladder(from_ordinal(np.array([start]), fmt)[0], 1, fmt))
        if i + 1 == len(scan) or not ok[i + 1]:
            end = int(o) if i + 1 == len(scan) else _edge(reference, int(o), int(scan[i + 1]), fmt)
            if i + 1 < len(scan):
                ladders.append(_ladder(from_ordinal(np.array([end]), fmt)[0], -1, fmt))
            intervals.append((start, end))
            start = None
    candidates = _unique_sorted(np.concatenate([_grid(intervals, n, fmt), _specials(fmt), *ladders]), fmt)
    return np.array([x for x in candidates if reference.defined((x,))], dtype=fmt.dtype).reshape(-1, 1)


def _sample_space(reference: Reference, fmt: Format, n: int, seed: int) -> np.ndarray:
    """Several variables: the diagonal and random combinations (fixed seed) of a 1-D grid per
    variable, keeping the first `n` points in the domain."""
    top = int(ordinal(np.array([fmt.max], dtype=fmt.dtype), fmt)[0])
    line = _unique_sorted(np.concatenate([_grid([(-top, top)], n, fmt), _specials(fmt)]), fmt)
    k = len(reference.variables)
    rng = np.random.default_rng(seed)
    diagonal = np.repeat(line[:: max(1, len(line) // max(1, n // 4))].reshape(-1, 1), k, axis=1)
    chosen: list[np.ndarray] = [p for p in diagonal if reference.defined(p)]
    seen = {tuple(p) for p in chosen}
    for _ in range(20):
        if len(chosen) >= n:
            break
        for point in rng.choice(line, size=(n, k)):
            if len(chosen) >= n:
                break
            key = tuple(point)
            if key not in seen and reference.defined(point):
                seen.add(key)
                chosen.append(point)
    return np.array(chosen, dtype=fmt.dtype).reshape(-1, k)


def sample_points(reference: Reference, n: int = 400, seed: int = 0) -> np.ndarray:
    """About `n` floats of the reference's format where the true f is real and finite, as an
    array of shape (points, variables).

    Deterministic: the same arguments give the same points.
    """
    if len(reference.variables) == 1:
        return _sample_line(reference, reference.fmt, n)
    return _sample_space(reference, reference.fmt, n, seed)


# --- evaluating TensorFlow code ---------------------------------------------------


def tf_partials(
    fn: Callable[..., object], points: np.ndarray, variables: Sequence[str], fmt: Format, order: int = 2
) -> dict[Index, np.ndarray]:
    """f and every partial up to `order` of a TF callable fn(*variables), at all points at once.

    One tensor per variable (a column of `points`), nested GradientTapes: () is f,
    (v,) the gradient, (v, w) the Hessian, mixed partials included; keyed like `Reference`.
    """
    import tensorflow as tf

    names = list(variables)
    inputs = [tf.constant(points[:, i], dtype=fmt.name) for i in range(len(names))]

    def up_to(k: int) -> dict[Index, object]:
        if k == 0:
            return {(): fn(*inputs)}
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(inputs)
            lower = up_to(k - 1)
        found = dict(lower)
        for index in itertools.combinations_with_replacement(range(len(names)), k - 1):
            key = tuple(names[i] for i in index)
            grads = tape.gradient(lower[key], inputs, unconnected_gradients=tf.UnconnectedGradients.ZERO)
            for j, grad in enumerate(grads):
                child = tuple(names[i] for i in sorted((*index, j)))
                found.setdefault(child, grad)
        return found

    return {key: np.asarray(value, dtype=fmt.dtype) for key, value in up_to(order).items()}


def load_module(source: str, name: str, directory: Path) -> ModuleType:
    """Write generated source to `directory` and import it (this imports TensorFlow)."""
    path = Path(directory) / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"_measured_{name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


class NaivePrinter(StrPrinter):
    """Python for the naive expression, as one would write it by hand: 0.044715*x**3, not
    8943*x**3/200000 (which overflows sooner)."""

    def _print_Rational(self, expr: sp.Rational) -> str:
        return repr(float(expr)) if expr.q != 1 else str(expr.p)

    def _print_Mul(self, expr: sp.Mul) -> str:
        coeff, rest = expr.as_coeff_Mul()
        if coeff.is_Rational and coeff.q != 1 and rest != 1:
            return f"{float(coeff)!r}*{self.parenthesize(rest, PRECEDENCE['Mul'])}"
        return super()._print_Mul(expr)


def naive_function(
    expression: str, variables: Sequence[str], dtype: str, params: Sequence[tuple[str, float]] = ()
) -> Callable[..., object]:
    """The expression as written (stable primitives replaced by their definitions, parameters
    at their values) in plain TF ops, for TF's own autodiff: what one would write by hand.
    This imports TensorFlow."""
    import tensorflow as tf

    def op(fn: Callable[..., object]) -> Callable[..., object]:
        return lambda *args: fn(*(tf.convert_to_tensor(a, dtype) for a in args))

    def piecewise(*cases: tuple[object, object]) -> object:
        result = tf.convert_to_tensor(cases[-1][0], dtype)
        for value, condition in reversed(cases[:-1]):
            result = tf.where(condition, tf.convert_to_tensor(value, dtype), result)
        return result

    names = ["exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan"]
    names += ["atan2", "asinh", "acosh", "atanh", "erf", "erfc", "sign"]
    namespace: dict[str, object] = {name: op(getattr(tf.math, name)) for name in names}
    namespace.update(Abs=op(tf.math.abs), pi=math.pi, E=math.e, Piecewise=piecewise)
    namespace.update(Eq=op(tf.math.equal), Ne=op(tf.math.not_equal), ITE=tf.where)
    namespace.update(lgamma=op(tf.math.lgamma), polygamma=op(tf.math.polygamma), EulerGamma=float(sp.EulerGamma))
    math_expr = naive(parse(expression)).xreplace(parameter_values(params))
    symbols = resolve_variables(math_expr, list(variables))
    return sp.lambdify(symbols, math_expr, modules=[namespace], printer=NaivePrinter())


# --- scores and summaries -------------------------------------------------------------


@dataclass(frozen=True)
class Score:
    """One partial at every sample point: results against references, in bits."""

    index: Index
    result: np.ndarray
    reference: np.ndarray  # NaN where the true value is not real and finite
    bits: np.ndarray  # NaN where the reference is NaN
    nonfinite: np.ndarray  # bool: a wrong NaN or infinity

    def worst(self, count: int = 3) -> np.ndarray:
        """Positions of the `count` worst points, worst first."""
        bits = np.where(np.isnan(self.bits), -1.0, self.bits)
        order = np.argsort(-bits, kind="stable")[:count]
        return order[bits[order] > 0]


def score(results: dict[Index, np.ndarray], references: dict[Index, np.ndarray], fmt: Format) -> dict[Index, Score]:
    """Bits of error of each partial at each point where its true value is real and finite."""
    scores = {}
    for index, reference in references.items():
        result = np.asarray(results[index], dtype=fmt.dtype)
        known = ~np.isnan(reference)
        bits = np.full(reference.shape, np.nan)
        bits[known] = bits_of_error(result[known], reference[known], fmt)
        nonfinite = known & wrong_nonfinite(result, np.where(known, reference, 0))
        scores[index] = Score(index, result, reference, bits, nonfinite)
    return scores


GOOD_BITS = 3.0  # "within 3 bits"
# The goal for each partial of a generated module: no wrong NaN or infinity, this share
# of points within GOOD_BITS, and at most this mean.
GOAL_WITHIN = 0.995
GOAL_MEAN = 0.5


@dataclass(frozen=True)
class Summary:
    """Bits of error over some partials and points."""

    count: int  # values measured
    max_bits: float
    mean_bits: float
    within: float  # fraction within GOOD_BITS
    nonfinite: int  # wrong NaN or infinity

    def meets_goal(self) -> bool:
        return self.nonfinite == 0 and self.within >= GOAL_WITHIN and self.mean_bits <= GOAL_MEAN

    def line(self) -> str:
        return (
            f"max {self.max_bits:.1f} bits, mean {self.mean_bits:.2f}, "
            f"{100 * self.within:.1f}% within {GOOD_BITS:g} bits, {self.nonfinite} non-finite, {self.count} values"
        )


def summarize(scores: Sequence[Score]) -> Summary:
    """Pool the scores (e.g. all partials of one order) into one summary."""
    bits = np.concatenate([s.bits[~np.isnan(s.bits)] for s in scores]) if scores else np.array([])
    if bits.size == 0:
        return Summary(0, 0.0, 0.0, 1.0, 0)
    return Summary(
        count=int(bits.size),
        max_bits=float(bits.max()),
        mean_bits=float(bits.mean()),
        within=float(np.mean(bits <= GOOD_BITS)),
        nonfinite=int(sum(int(s.nonfinite.sum()) for s in scores)),
    )


def by_order(scores: dict[Index, Score], order: int) -> list[Score]:
    return [s for index, s in scores.items() if len(index) == order]


# --- the suite --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One function of a suite TOML ([[function]] with name, expr, vars)."""

    name: str
    expr: str
    vars: tuple[str, ...]


def load_suite(path: Path) -> list[Case]:
    with open(path, "rb") as handle:
        data = tomllib.load(handle)
    return [Case(f["name"], f["expr"], tuple(f["vars"])) for f in data["function"]]
