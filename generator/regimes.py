"""Regimes: split a form where one formula cannot serve the whole float range.

Two shapes, for functions of one variable, found by measurement:

- asymptote: far out, many forms compute inf*0 or inf/inf (x**3 overflows
  inside gelu's tanh approximation) although the true value has long since
  rounded to its limit. Beyond the threshold where the true value rounds to
  the limit, emit the limit; inside, evaluate the form on clip(x).
- series: near a removable singularity or cancellation at 0 (sin(x)/x,
  expm1(x)/x and their derivatives), emit the Taylor polynomial below a
  threshold chosen where the polynomial is exact to double precision.

Both guard the branch not taken (clip / away) so that neither its value nor
its gradient can leak a NaN through tf.where: the double-where pattern.
Hands on: expressions with Piecewise, clip and away nodes for the printer.
"""

from __future__ import annotations

import mpmath
import numpy as np
import sympy as sp

from generator import judge
from generator.primitives import away, clip, naive, polyval

SERIES_TERMS = 18
# A size limit, not a clock, bounds SymPy's series: a wall-clock budget would
# make the output depend on the machine's speed.
SERIES_MAX_OPS = 40
LIMIT_PROBES = (12, 16, 20, 25)  # evaluate at sign * 10**k, below the judge's saturation
SERIES_THRESHOLDS = (1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125)
NEAR_ZERO = 0.1  # bad points this close to 0 call for a series
FLOAT_MAX = sp.Float(3.4028234663852886e38, 17)
FAR_OUT = 8.0


def add_regimes(
    expr: sp.Expr, truth: sp.Expr, x: sp.Symbol, domain: sp.Expr
) -> tuple[sp.Expr, tuple[str, ...]]:
    """`expr` with asymptote and series regimes where measurement shows it needs them,
    and the names of the regimes used ("series", "asymptote").

    Only points where `domain` (the function itself) is real count: outside
    f's domain a derivative's value is of no use.
    """
    points = judge.sample_points(1)
    reference = judge.sample_reference(truth, (x,))
    defined = ~np.isnan(reference) & ~np.isnan(judge.sample_reference(domain, (x,)))
    if not defined.any():
        return expr, ()
    reference = np.where(defined, reference, np.nan)
    bits = judge.bits_of_error(judge.evaluate32(expr, (x,), points), reference)
    bad = (bits > 3) & defined
    if not bad.any():
        return expr, ()
    xs = points[0]
    result = expr
    if (bad & (np.abs(xs) < NEAR_ZERO)).any():
        result = _series_regime(result, truth, x) or result
    limits = {}
    for sign in (1, -1):
        if (bad & (sign * xs > FAR_OUT)).any():
            found = _asymptote(expr, truth, x, sign, xs, reference)
            if found is not None:
                limits[sign] = found
    if limits:
        hi = limits.get(1, (None, FLOAT_MAX))[1]
        lo = limits.get(-1, (None, FLOAT_MAX))[1]
        cases = [(value, x > bound if sign > 0 else x < -bound) for sign, (value, bound) in sorted(limits.items())]
        result = sp.Piecewise(*cases, (result.xreplace({x: clip(x, -lo, hi)}), True))
    if result is expr:
        return expr, ()
    before = judge.score(expr, (x,), points, reference)
    after = judge.score(result, (x,), points, reference)
    if after >= before:
        return expr, ()
    notes = (("series",) if result.has(polyval) else ()) + (("asymptote",) if limits else ())
    return result, notes


def _asymptote(
    expr: sp.Expr, truth: sp.Expr, x: sp.Symbol, sign: int, xs: np.ndarray, reference: np.ndarray
) -> tuple[sp.Expr, sp.Float] | None:
    """(limit, threshold) on one side: beyond the threshold the true value rounds to the limit."""
    # The stabilised form evaluates far out without the cancellation of the naive one.
    limit = _numeric_limit(expr, x, sign)
    if limit is None:
        limit = _numeric_limit(truth, x, sign)
    if limit is None:
        return None
    side = (sign * xs > 0) & ~np.isnan(reference)
    mags = np.sort(np.abs(xs[side]))
    limit32 = np.full(len(xs), float(limit), dtype=np.float32)
    matches = judge.bits_of_error(limit32, reference) <= 1
    threshold = None
    for m in mags:
        beyond = side & (np.abs(xs) >= m)
        if matches[beyond].all():
            threshold = float(m)
            break
    if threshold is None:
        return None
    if not np.isfinite(judge.evaluate32(expr, (x,), np.array([[sign * threshold]]))).all():
        return None
    return limit, sp.Float(threshold, 17)


def _numeric_limit(truth: sp.Expr, x: sp.Symbol, sign: int) -> sp.Expr | None:
    """The limit at sign*infinity, read off mpmath values far out, when they have settled.

    Cheaper and more predictable than sp.limit; a limit that has not settled
    to 12 digits by 10**25 is not used.
    """
    fn = judge._mp_function(truth, (x,))
    values = []
    with mpmath.workdps(50):
        for k in LIMIT_PROBES:
            try:
                value = fn(mpmath.mpf(sign) * mpmath.mpf(10) ** k)
            except (ZeroDivisionError, ValueError, OverflowError, TypeError):
                return None
            if not isinstance(value, mpmath.mpf) or not mpmath.isfinite(value):
                return None
            values.append(value)
        if all(abs(v) < mpmath.mpf(10) ** -30 for v in values[1:]):
            return sp.Integer(0)
        last = values[-1]
        if all(abs(v - last) <= mpmath.mpf(10) ** -12 * abs(last) for v in values[1:]):
            return sp.Float(float(last), 17)
    return None


def _series_regime(expr: sp.Expr, truth: sp.Expr, x: sp.Symbol) -> sp.Expr | None:
    if sp.count_ops(naive(truth)) > SERIES_MAX_OPS or _has_opaque_constants(naive(truth)):
        return None
    try:
        series = sp.series(naive(truth), x, 0, SERIES_TERMS).removeO()
    except (NotImplementedError, ValueError, TypeError, RecursionError, ArithmeticError, sp.PoleError):
        return None
    if not series.is_polynomial(x) or series.has(sp.log, sp.Abs, sp.sign):
        return None
    exact = judge._mp_function(truth, (x,))
    poly = sp.lambdify(x, series, modules="mpmath")
    threshold = None
    with mpmath.workdps(40):
        for t in SERIES_THRESHOLDS:
            ok = True
            for point in (t, -t):
                try:
                    true = exact(mpmath.mpf(point))
                    approx = poly(mpmath.mpf(point))
                except (ArithmeticError, ValueError, TypeError):
                    ok = False
                    break
                if not mpmath.isfinite(true) or abs(approx - true) > 1e-17 * max(abs(true), mpmath.mpf(1e-300)):
                    ok = False
                    break
            if ok:
                threshold = t
                break
    if threshold is None:
        return None
    bound = sp.Float(threshold, 17)
    polynomial = _polyval(series, x).xreplace({x: clip(x, -bound, bound)})
    return sp.Piecewise((polynomial, sp.Abs(x) < bound), (expr.xreplace({x: away(x, bound)}), True))


def _has_opaque_constants(expr: sp.Expr) -> bool:
    """True if a function is applied to a pure number (log(acosh(e))): SymPy's series
    expands powers of such constants symbolically and can run for minutes."""
    return any(f.is_number for f in expr.atoms(sp.Function)) or any(
        p.is_number and not p.exp.is_Rational for p in expr.atoms(sp.Pow)
    )


def _polyval(series: sp.Expr, x: sp.Symbol) -> sp.Expr:
    """The series as polyval over x**2 (times x for odd series) or over x."""
    poly = sp.Poly(series, x)
    degrees = [m[0] for m in poly.monoms()]
    coeffs = dict(zip(degrees, poly.coeffs()))
    for parity in (0, 1):
        if all(d % 2 == parity for d in degrees):
            top = max(degrees) // 2
            values = sp.Tuple(*(coeffs.get(2 * k + parity, sp.Integer(0)) for k in range(top, -1, -1)))
            return x**parity * polyval(values, x**2)
    return polyval(sp.Tuple(*(coeffs.get(k, sp.Integer(0)) for k in range(max(degrees), -1, -1))), x)
