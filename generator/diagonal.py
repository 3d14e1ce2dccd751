"""Diagonal regimes: where two inputs meet, in forms of several inputs.

A quotient whose denominator vanishes wherever two inputs a and b are equal, as a divided
difference's does ((exp(x) - exp(y))/(x - y), (log(x) - log(y))/(x - y), the logarithmic
mean (x - y)/(log(x) - log(y))), is 0/0 = NaN at a = b and cancels near it, its slopes
more so: the rules rewrite its terms, but nothing they write divides the difference out.
Where the truth is continuous across a = b, its Taylor series in t = a - b about the
diagonal serves instead: f(b + t, b) = sum c_k(b)*t**k, from SymPy, and each partial's
from it (d/da is d/dt; d/db is the coefficients' slope less d/dt).

Only where the coefficients share one shape, c_k(b) = n_k*G(b)*s(b)**k with numbers n_k
and a scale s(b) of 1 or 1/b (after a first term of its own: x*log(x)'s divided
difference starts with log(y) + 1): the polynomial is then G(b)*P(u), u = t*s(b), and its
band |u| < w is measured against mpmath at a few values of b, as the one-input series'
thresholds are (regimes). Coefficients of other shapes (sin(y), cos(y), ...) would need
a band for each b.

Beyond the band, the form reads a at a point away from the diagonal, and the polynomial
reads u = 0, so that neither branch puts a NaN into a gradient (the double where).
Hands on: Piecewise forms for derive, noted "diagonal".
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import mpmath
import numpy as np
import sympy as sp

from generator import judge
from generator.primitives import apart, naive, pick, polyval
from generator.regimes import DOUBLE_TOLERANCE, SINGLE_TOLERANCE, SERIES_MAX_OPS, _bound, _nesting

# Terms of f's series in t; a partial of order r keeps DEGREE - r of them.
DEGREE = 18
# A first, short series decides whether the coefficients share a shape before the long one,
# which took SymPy 15 s for atan's divided difference (and is of no use there).
PROBE_DEGREE = 4
# Bands |u| < w tried, widest first.
BANDS = (0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625)
# Values of b (and of the other inputs) where a band is checked; a value where the truth is
# not real (log(b) at b = -2) is skipped, and two must remain.
PROBES = (0.75, 3.0, 40.0, -2.0)
MAX_NESTING = 2


def add_diagonal_regimes(
    partials: dict[tuple[str, ...], sp.Expr],
    raw: dict[tuple[str, ...], sp.Expr],
    variables: tuple[sp.Symbol, ...],
    domain: sp.Expr,
    stable: Callable[[sp.Expr], sp.Expr],
) -> tuple[dict[tuple[str, ...], sp.Expr], tuple[str, ...]]:
    """`partials` with a diagonal regime in each one it repairs: fewer points beyond
    judge.GOOD_BITS where two inputs nearly meet, and none worse elsewhere. `raw` holds
    the textbook partials; `stable` stabilises a coefficient's factor G(b)."""
    found = _diagonal_series(raw[()], variables)
    if found is None:
        return partials, ()
    a, b, t, series = found
    by_name = {v.name: v for v in variables}
    result = dict(partials)
    for index, form in partials.items():
        polynomial = series
        for name in index:
            polynomial = _slope(polynomial, by_name[name], a, b, t)
        on_line = polynomial.xreplace({t: 0})
        bad = _bad_near(form, raw[index], on_line, a, b, variables, domain)
        if not bad:
            continue  # right on and beside the line already: no where to pay for
        regime = _regime(form, raw[index], polynomial, DEGREE - len(index), a, b, t, variables, stable)
        if regime is None or _bad_near(regime, raw[index], on_line, a, b, variables, domain) >= bad:
            continue
        if _no_worse(regime, form, raw[index], variables, domain):
            result[index] = regime
    return result, (("diagonal",) if result != partials else ())


def _slope(polynomial: sp.Expr, v: sp.Symbol, a: sp.Symbol, b: sp.Symbol, t: sp.Symbol) -> sp.Expr:
    """The slope in the input v of a polynomial in t = a - b whose coefficients hold b (and
    the other inputs): d/da is d/dt, d/db the coefficients' slope less d/dt."""
    if v == a:
        return sp.diff(polynomial, t)
    if v == b:
        return sp.diff(polynomial, b) - sp.diff(polynomial, t)
    return sp.diff(polynomial, v)


def _diagonal_series(f: sp.Expr, variables: tuple[sp.Symbol, ...]) -> tuple[sp.Symbol, sp.Symbol, sp.Symbol, sp.Expr] | None:
    """(a, b, t, the Taylor polynomial of f(b + t, b) in t to DEGREE) for the first pair of
    inputs a, b where a factor of f's denominator vanishes at a = b, f is continuous across
    it, and the short series' coefficients share a shape; None where there is none."""
    textbook = naive(f)
    if sp.count_ops(textbook) > SERIES_MAX_OPS or _nesting(textbook) > MAX_NESTING:
        return None
    denominator = sp.fraction(sp.together(textbook))[1]
    t = sp.Dummy("t", real=True)
    for a, b in itertools.permutations(variables, 2):
        if not any(factor.has(a, b) and sp.expand(factor.xreplace({a: b})) == 0 for factor in sp.Mul.make_args(denominator)):
            continue
        shifted = textbook.xreplace({a: b + t})
        short = _series(shifted, t, PROBE_DEGREE)
        if short is None or _shape(_coefficients(short, t, PROBE_DEGREE), b) is None:
            continue
        if not _continuous_across(judge._mp_function(textbook, variables), variables, a):
            continue
        full = _series(shifted, t, DEGREE)
        if full is not None:
            return a, b, t, full
    return None


def _series(shifted: sp.Expr, t: sp.Symbol, degree: int) -> sp.Expr | None:
    """SymPy's Taylor polynomial of `shifted` in t to `degree`, None where it is not one."""
    try:
        series = sp.series(shifted, t, 0, degree + 1).removeO()
        sp.Poly(series, t)
    except (ValueError, TypeError, NotImplementedError, ArithmeticError, sp.PolynomialError, sp.PoleError):
        return None
    if series.has(sp.Order, sp.nan, sp.zoo, sp.oo, -sp.oo):
        return None
    return series


def _coefficients(polynomial: sp.Expr, t: sp.Symbol, degree: int) -> list[sp.Expr]:
    expanded = sp.expand(polynomial)
    return [sp.cancel(expanded.coeff(t, k)) for k in range(degree + 1)]


def _shape(coefficients: list[sp.Expr], b: sp.Symbol) -> tuple[sp.Expr, sp.Expr, sp.Expr, list[sp.Expr]] | None:
    """(head, G, s, numbers): coefficients = head (for k = 0 only) + numbers[k]*G*s**k, with
    s 1 or 1/b and numbers rational or real floats; None where they do not share one."""
    for split in (0, 1):
        rest = coefficients[split:]
        leading = next((k for k, c in enumerate(rest) if c != 0), None)
        if leading is None or len(rest) - leading < 3:
            continue
        for s in (sp.Integer(1), 1 / b):
            g = sp.cancel(rest[leading] / s ** (leading + split))
            numbers = [sp.cancel(c / (g * s ** (k + split))) for k, c in enumerate(rest)]
            if all(n.is_number and n.is_real for n in numbers):
                head = coefficients[0] if split else sp.Integer(0)
                return head, g, s, [sp.Integer(0)] * split + numbers
    return None


def _continuous_across(exact: Callable, variables: tuple[sp.Symbol, ...], a: sp.Symbol) -> bool:
    """Whether the truth takes one finite value from both sides of the line where a meets the
    other inputs (not a pole) at two of PROBES where it is real."""
    met = 0
    with mpmath.workdps(60):
        for value in PROBES:
            values = []
            for d in (mpmath.mpf(-1e-25), mpmath.mpf(1e-25)):
                try:
                    values.append(exact(*_point(variables, a, value, d)))
                except (ArithmeticError, ValueError, TypeError):
                    break
            if len(values) < 2 or not all(isinstance(v, mpmath.mpf) for v in values):
                continue
            if not all(mpmath.isfinite(v) for v in values) or abs(values[0] - values[1]) > mpmath.mpf(1e-15) * max(1, abs(values[0])):
                return False
            met += 1
    return met >= 2


def _point(variables: tuple[sp.Symbol, ...], a: sp.Symbol, value: float, t: object) -> list[object]:
    """Every input at `value`, and a at value + t, in mpmath."""
    return [mpmath.mpf(value) + (t if v == a else 0) for v in variables]


def _regime(
    form: sp.Expr,
    truth: sp.Expr,
    polynomial: sp.Expr,
    degree: int,
    a: sp.Symbol,
    b: sp.Symbol,
    t: sp.Symbol,
    variables: tuple[sp.Symbol, ...],
    stable: Callable[[sp.Expr], sp.Expr],
) -> sp.Expr | None:
    """where(|u| < w, head + G*u**m*P(u), form at a held away), or None where the partial's
    coefficients share no shape or no band holds."""
    shape = _shape(_coefficients(polynomial, t, degree), b)
    if shape is None:
        return None
    head, g, s, numbers = shape
    u = sp.Dummy("u", real=True)
    leading = next(k for k, n in enumerate(numbers) if n != 0)
    coefficients = sp.Tuple(*(n if n.is_Rational else sp.Float(n, 20) for n in reversed(numbers[leading:])))
    exact = judge._mp_function(truth, variables)
    approx = sp.lambdify((u, *variables), head + g * sp.Add(*(n * u**k for k, n in enumerate(numbers))), modules="mpmath")
    threshold, wide = _thresholds(exact, approx, variables, a, s)
    if wide is None:
        return None
    bound = _bound(threshold, wide)
    scaled = s != 1
    width = bound * sp.Abs(b) if scaled else bound
    near = sp.Abs(a - b) < width
    # Beyond the band, u is 0 and the form reads a away from b (|t| >= |b|/2 or 1): neither
    # is 0/0, nor its slope.
    held = pick(near, a - b, 0) / (pick(near, b, 1) if scaled else 1)
    value = stable(head) + stable(g) * held**leading * polyval(coefficients, held)
    return sp.Piecewise((value, near), (form.xreplace({a: apart(a, b, width)}), True))


def _thresholds(
    exact: Callable, approx: Callable, variables: tuple[sp.Symbol, ...], a: sp.Symbol, s: sp.Expr
) -> tuple[float | None, float | None]:
    """The widest of BANDS within DOUBLE_TOLERANCE and within SINGLE_TOLERANCE (relative)
    at u = +-w for each of PROBES where the truth is real (two at least); None if none."""
    found: dict[float, float] = {}
    with mpmath.workdps(60):
        for w in BANDS:
            worst = mpmath.mpf(0)
            met = 0
            for value in PROBES:
                errors = []
                for sign in (1, -1):
                    u = sign * mpmath.mpf(w)
                    point = _point(variables, a, value, u if s == 1 else u * value)
                    try:
                        true = exact(*point)
                        guess = approx(u, *point)
                    except (ArithmeticError, ValueError, TypeError):
                        break
                    if not (isinstance(true, mpmath.mpf) and isinstance(guess, mpmath.mpf) and mpmath.isfinite(true)):
                        break
                    errors.append(abs(guess - true) / max(abs(true), mpmath.mpf(1e-300)))
                if len(errors) == 2:
                    met += 1
                    worst = max(worst, *errors)
            if met < 2:
                continue
            for tolerance in (DOUBLE_TOLERANCE, SINGLE_TOLERANCE):
                if tolerance not in found and worst <= tolerance:
                    found[tolerance] = w
    return found.get(DOUBLE_TOLERANCE), found.get(SINGLE_TOLERANCE)


def _bad_near(
    expr: sp.Expr,
    truth: sp.Expr,
    on_line: sp.Expr,
    a: sp.Symbol,
    b: sp.Symbol,
    variables: tuple[sp.Symbol, ...],
    domain: sp.Expr,
) -> int:
    """How many points where a and b meet (_bad_on_line; the truth there is the series'
    constant term, `on_line`: the textbook form is 0/0) and nearly meet (the judge's
    diagonal points) `expr` is beyond judge.GOOD_BITS at."""
    return _bad_on_line(expr, on_line, a, b, variables, domain) + judge._bad_on_diagonal(expr, truth, variables, domain)


def _no_worse(regime: sp.Expr, form: sp.Expr, truth: sp.Expr, variables: tuple[sp.Symbol, ...], domain: sp.Expr) -> bool:
    """Whether `regime` is nowhere among the judge's points beyond judge.GOOD_BITS and worse
    than `form` by a bit or more. Less is a rounding: away from the line the logarithmic
    mean's d2f/dx dx with the regime was 8 float32 values off at x = 1e-30, y = 1e-36 where
    the form was 6 (once the judge added sums in the module's order, which chose another
    form), and the regime, which mends 0/0 = NaN at x = y, was refused."""
    points, reference, _ = judge.judged_points(truth, variables, domain)
    mask = ~np.isnan(reference)
    with np.errstate(all="ignore"):
        new = judge.bits_of_error(judge.evaluate32(regime, variables, points)[mask], reference[mask])
        old = judge.bits_of_error(judge.evaluate32(form, variables, points)[mask], reference[mask])
    return not ((new > judge.GOOD_BITS) & (new >= old + 1)).any()


def _bad_on_line(
    expr: sp.Expr, on_line: sp.Expr, a: sp.Symbol, b: sp.Symbol, variables: tuple[sp.Symbol, ...], domain: sp.Expr
) -> int:
    """How many of the judge's diagonal points, with a set to b, `expr` is beyond
    judge.GOOD_BITS at in float32, where `domain` is real beside them (on the line it is
    0/0)."""
    beside = judge.diagonal_points(len(variables))
    points = np.array(beside)
    points[variables.index(a)] = points[variables.index(b)]
    truth = judge.reference(on_line, variables, points)
    truth[np.isnan(judge.reference(domain, variables, beside))] = np.nan
    return judge.bad_at(expr, variables, points, truth)
