"""Regimes: split a form where one formula cannot serve the whole float range.

Two shapes, for functions of one variable, found by measurement:

- asymptote: far out, many forms compute inf*0 or inf/inf (x**3 overflows
  inside gelu's tanh approximation) although the true value has long since
  rounded to its limit, or cancel (mish'' for x > 30). Beyond a threshold,
  emit either the limit, where the true value rounds to it, or the leading
  term of an exponential tail, c(x)*exp(k*g(x)), where it equals the true
  value to double precision (expm1(x)/x is exp(x)/x for x > 40), multiplied
  as c*exp(kg/2)*exp(kg/2) so that it is finite wherever the true value is,
  or the asymptotic series in 1/x of a tail whose terms cancel algebraically
  (a difference of digammas less 1/x); inside, evaluate the form on clip(x).
  Only where the form is NaN/inf, or wrong at a value above NEGLIGIBLE: a
  regime costs every call several ops.
- series: near a removable singularity or cancellation at 0 (sin(x)/x,
  expm1(x)/x and their derivatives), emit the Taylor polynomial below a
  threshold chosen where the polynomial is exact to double precision. Also at a
  removable singularity elsewhere, where a factor of the denominator vanishes at
  a point c that a float32 holds (log(x)/(x - 1) at 1): the polynomial in x - c.

Both guard the branch not taken (clip / away) so that neither its value nor
its gradient can leak a NaN through tf.where: the double-where pattern.
Hands on: expressions with Piecewise, clip and away nodes for the printer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import mpmath
import numpy as np
import sympy as sp

from generator import judge
from generator.primitives import away, by_dtype, clip, ipow, kink_slopes_as_zero, lgamma, log1p, mul_exp, naive, pick, polyval
from generator.printer import FLOAT32_MAX
from generator.stabilize import plus_constant

SERIES_TERMS = 26
# A size limit, not a clock, bounds SymPy's series: a wall-clock budget would
# make the output depend on the machine's speed.
SERIES_MAX_OPS = 40
# Nor where functions are nested deeper than this (exp(asinh(x)) is 2): SymPy's series of
# logaddexp(asinh(-x), log1mexp(x))' ran for minutes on 26 ops, and of atan2(softplus(log(y)),
# softplus(exp(y)))' on 38. There the Taylor coefficients are mpmath's, from points around
# 0 (such a derivative is 0/0 or 0*inf at 0 itself: y*(1 + 1/y), 1/(1 - exp(-x))).
SERIES_MAX_NESTING = 1
LIMIT_PROBES = (12, 16, 20, 25)  # evaluate at sign * 10**k, below the judge's saturation
SERIES_THRESHOLDS = (2.0, 1.5, 1.0, 0.75, 0.5, 0.375, 0.25, 0.1875, 0.125, 0.0625, 0.03125)
DOUBLE_TOLERANCE = 1e-17  # relative error of the polynomial, for float64
SINGLE_TOLERANCE = 2.0**-28  # for float32 (and float16/bfloat16, computed in float32)
NEAR_ZERO = 0.1  # bad points this close to 0 call for a series
FLOAT_MAX = sp.Float(FLOAT32_MAX, 17)
FAR_OUT = 8.0
NEGLIGIBLE = judge.NEGLIGIBLE  # 2**24 times float32's smallest normal
MAX_TAIL_DIGITS = 1500
TAIL_MAX_OPS = 150  # a size limit on the leading-term expansion, as SERIES_MAX_OPS
ALGEBRAIC_TERMS = 12  # orders in 1/x of an algebraic tail (_algebraic_tail)
ALGEBRAIC_MAX_POWER = 16  # no algebraic tail through a higher power (as derive.SIMPLIFY_MAX_POWER)
# Where an algebraic tail may start: powers of two from FAR_OUT, each checked there and at
# 2, 4 and 16 times it (the error of an asymptotic series falls as |x| grows).
ALGEBRAIC_THRESHOLDS = tuple(2.0**k for k in range(3, 61))
_HYPERBOLIC = (sp.tanh, sp.cosh, sp.sinh, sp.coth, sp.sech, sp.csch)


def add_regimes(
    expr: sp.Expr,
    truth: sp.Expr,
    x: sp.Symbol,
    domain: sp.Expr,
    order: int = 0,
    roots: bool = False,
    taken: sp.Expr = sp.true,
) -> tuple[sp.Expr, tuple[str, ...]]:
    """_measured_regimes, and at 0 the truth's limit where the result is not finite there
    and the truth has one (_limit_at_zero): "limit_at_zero"."""
    result, notes = _measured_regimes(expr, truth, x, domain, order, roots, taken)
    at_zero = _limit_at_zero(result, truth, x, taken)
    return (at_zero, (*notes, "limit_at_zero")) if at_zero is not None else (result, notes)


def _limit_at_zero(expr: sp.Expr, truth: sp.Expr, x: sp.Symbol, taken: sp.Expr) -> sp.Expr | None:
    """where(x == 0, L, expr), where `expr` is NaN or inf at 0 in float32 and the truth has
    a finite limit L there (judge.limit_at_zero): from both sides alike, or from the only
    side where it is real (sin(x)/sqrt(x) is 0/0 = NaN at 0, its limit 0 from the right,
    and no series serves a half power). Beyond the point, expr on x held at a point of the
    real side where it is finite, so that it cannot put a NaN into a gradient. None where
    the branch `taken` does not hold 0."""
    # Evaluated as the judge does: SymPy's taken.subs(x, 0) compares zoo where the condition
    # holds 1/x ((1 + 1/x)**x, TypeError).
    if taken is not sp.true and judge.reference(sp.Piecewise((1, taken), (sp.nan, True)), (x,), np.zeros((1, 1)))[0] != 1:
        return None
    with np.errstate(all="ignore"):
        if np.isfinite(judge.evaluate32(expr, (x,), np.zeros((1, 1)))).all():
            return None
    found = judge.limit_at_zero(truth, (x,), one_sided=True)
    if found is None:
        return None
    limit = sp.Integer(0) if abs(found) < 1e-30 else sp.Float(found, 17)
    side = 1.0 if np.isfinite(judge.reference(truth, (x,), np.array([[judge._LIMIT_STEPS[0]]])))[0] else -1.0
    with np.errstate(all="ignore"):
        held = next((side * t for t in (1.0, 0.5, 2.0**-10, 1e-30) if np.isfinite(judge.evaluate32(expr, (x,), np.array([[side * t]]))).all()), None)
    if held is None:
        return None
    return sp.Piecewise((limit, sp.Eq(x, 0)), (expr.xreplace({x: pick(sp.Eq(x, 0), held, x)}), True))


def _measured_regimes(
    expr: sp.Expr,
    truth: sp.Expr,
    x: sp.Symbol,
    domain: sp.Expr,
    order: int,
    roots: bool,
    taken: sp.Expr,
) -> tuple[sp.Expr, tuple[str, ...]]:
    """`expr` with asymptote and series regimes where measurement shows it needs them,
    and the names of the regimes used ("series", "pole", "patch", "root", "asymptote",
    "algebraic_tail", "polynomial_far").

    Only points where `domain` (the function itself) is real count: outside
    f's domain a derivative's value is of no use. With `order` > 0, `truth` is the
    order-th derivative of `domain`, whose series serves where truth's own is too large.
    With `roots`, also polynomials around the nonzero roots where the form loses
    relative accuracy (--accurate-roots; they cost a where and 10-30 ops per form).
    With `taken`, a branch's condition, only the points where it holds count.
    """
    source = (domain, order) if order else None
    points = judge.sample_points(1)
    reference = judge.sample_reference(truth, (x,))
    defined = ~np.isnan(reference) & ~np.isnan(judge.sample_reference(domain, (x,)))
    if taken is not sp.true:
        defined &= judge.sample_reference(sp.Piecewise((1, taken), (sp.nan, True)), (x,)) == 1
    if not defined.any():
        return expr, ()
    reference = np.where(defined, reference, np.nan)
    value = judge.evaluate32(expr, (x,), points)
    bits = judge.bits_of_error(value, reference)
    bad = (bits > judge.GOOD_BITS) & defined
    xs = points[0]
    # Removable singularities away from 0 where the form is bad nearby, or NaN at the point
    # itself, which the grid need not hold (log(x)/(x - 1) at 1 is 0/0).
    singular = [
        c
        for c in _removable_points(truth, x)
        if (bad & (np.abs(xs - float(c)) < NEAR_ZERO)).any()
        or not np.isfinite(judge.evaluate32(expr, (x,), np.array([[float(c)]]))).all()
    ]
    at_nonzero = _bad_roots(expr, truth, x, domain) if roots else []
    if not bad.any() and not singular and not at_nonzero:
        return expr, ()
    result = expr
    # As far out (below): a value a few powers of two above the underflow that flushes to 0
    # (3*(tanh(x)/cosh(x))**2 at x = 8e-20 is 1.9e-38, whose square TF flushes) does not call
    # for a series, which flushes there too.
    gross = bad & (~np.isfinite(value) | (np.abs(reference) >= NEGLIGIBLE))
    near_zero = (gross & (np.abs(xs) < NEAR_ZERO)).any()
    if near_zero:
        result = _series_regime(result, truth, x, source=source) or result
    score = judge.score(result, (x,), points, reference)
    # At a pole, where no Taylor series serves: 1/sin(x) - 1/x**2's f' is
    # 2/x**3 - cos(x)/sin(x)**2, inf - inf below 5e-20.
    pole = False
    if near_zero and result is expr and (laurent := _pole_regime(expr, truth, x)) is not None:
        laurent_score = judge.score(laurent, (x,), points, reference)
        if laurent_score < score:
            result, score, pole = laurent, laurent_score, True
    at_singular = False
    for c in singular:
        trial = _series_regime(result, truth, x, c, source)
        trial_score = None if trial is None else judge.score(trial, (x,), points, reference)
        if trial_score is not None and trial_score <= score:
            result, score, at_singular = trial, trial_score, True
    series = result.has(polyval)
    # With `roots`, a form that cancels between the series' reach and far out (tanh(x)/x's
    # f'' loses 6-7 bits over |x| in [0.5, 1.4], where 2*tanh(x) and 2*x/cosh(x)**2 nearly
    # meet): the truth's Taylor polynomial around the middle of the bad points, on each
    # side, where it measures better. Like a root's, a where and a polynomial of 26 terms.
    patched = False
    for sign in (1, -1) if roots else ():
        now = judge.bits_of_error(judge.evaluate32(result, (x,), points), reference)
        mid = (now > judge.GOOD_BITS) & defined & (sign * xs >= NEAR_ZERO) & (sign * xs <= FAR_OUT)
        mid &= np.abs(reference) >= NEGLIGIBLE
        if np.count_nonzero(mid) < 2:
            continue
        center = sp.Rational(round(float(np.median(xs[mid])) * 16), 16)
        if center == 0:
            continue
        trial = _series_regime(result, truth, x, center, patch=True)
        trial_score = None if trial is None else judge.score(trial, (x,), points, reference)
        if trial_score is not None and trial_score < score:
            result, score, patched = trial, trial_score, True
    at_roots = False
    for root in at_nonzero:
        trial = _root_regime(result, truth, x, root)
        if trial is not None and _better_near(trial, result, x, root, points, reference, score):
            result, score, at_roots = trial, judge.score(trial, (x,), points, reference), True
    sides: dict[int, tuple[sp.Expr, sp.Float]] = {}
    # A far-out regime costs every call several full-size ops (swish's forward pass went
    # from 1x to 2.9x tf.nn.silu for one); it is worth them where the form is NaN or inf,
    # or wrong at a value that is not negligible. Results that flush to 0 a few powers of
    # two above the underflow (x*sigmoid(x) = -5e-37 at x = -88) do not call for one.
    for sign in (1, -1):
        if not (gross & (sign * xs > FAR_OUT)).any():
            # Where the truth is a polynomial out there once its signs are resolved, at any
            # bad point: |expm1(x)|/x's f'' is 0 for x > 0, where the form left 1 - exp(x)/(1
            # + expm1(x)), 6e-8 at x = 0.2.
            if (bad & (sign * xs > 0)).any() and (option := _polynomial_far_out(_signs_far_out(truth, x, sign), truth, x, sign, xs, reference)):
                trial = judge.score(_split(result, {**sides, sign: option}, x), (x,), points, reference)
                if trial < score:
                    sides[sign], score = option, trial
            continue
        # Per side, the option that measures best: the leading term of an exponential
        # tail, the constant limit, an algebraic tail, or the truth itself where it is a
        # polynomial out there.
        far = _signs_far_out(truth, x, sign)
        tails = _exp_tails(far, x, sign, xs)
        options = (
            *tails[:1],
            _asymptote(expr, far, x, sign, xs, reference),
            _algebraic_tail(far, x, sign),
            _polynomial_far_out(far, truth, x, sign, xs, reference),
        )
        for option in options:
            if option is None:
                continue
            trial = judge.score(_split(result, {**sides, sign: option}, x), (x,), points, reference)
            if trial < score:
                sides[sign], score = option, trial
        # The exponential tail from where float32 may take it, if the form between is bad
        # there (the grid has few points: x**3/(exp(x) - 1)'' between 22.6 and 40 only 31.8,
        # where the form is right, and beyond which it flushes).
        if len(tails) == 2 and sides.get(sign) == tails[0] and _bad_between(result, far, x, sign, tails[1][1]):
            sides[sign] = tails[1]
            score = judge.score(_split(result, sides, x), (x,), points, reference)
    if sides:
        result = _split(result, sides, x)
    # `score` is the result's; the form's own is the mean of `bits` (judge.score).
    # A series at a singular point is kept at equal score: it is there for the point itself,
    # and so is a root's polynomial for the points around the root (which the grid seldom holds).
    if result is expr or (score >= bits[defined].mean() and not at_singular and not at_roots):
        return expr, ()
    tails = {_tail_name(value, x) for value, _ in sides.values()}
    notes = (("series",) if series else ()) + (("pole",) if pole else ()) + (("patch",) if patched else ())
    notes += ("root",) if at_roots else ()
    notes += tuple(sorted(tails))
    return result, notes


def _tail_name(value: sp.Expr, x: sp.Symbol) -> str:
    """The note for a far-out form: an algebraic tail's polyval, _polynomial_far_out's
    polynomial in x, or else a limit or an exponential tail's leading term."""
    if value.has(polyval):
        return "algebraic_tail"
    return "polynomial_far" if value.has(x) and value.is_polynomial(x) else "asymptote"


def _signs_far_out(truth: sp.Expr, x: sp.Symbol, sign: int) -> sp.Expr:
    """`truth` with each abs and sign of an argument that keeps one sign for x from sign*1 to
    sign*2**1024 written as that constant sign, for the far-out forms, which SymPy's limits
    and series find only without abs (|expm1(x)|/x's f' was inf - inf = NaN for x in [89,
    93], where the truth is about 1e37). `truth` itself where an argument changes sign out
    there (|sin x|), or the nodes nest. sign's derivative, DiracDelta(u), is 0 there."""
    arguments = _kink_arguments(truth)
    if not arguments:
        return truth
    ladder = [mpmath.mpf(sign) * mpmath.mpf(2) ** k for k in range(0, 1025, 8)]
    signs: dict[sp.Expr, sp.Expr] = {}
    for u in arguments:
        try:
            fn = judge._mp_function(u, (x,))
            with mpmath.workdps(40):
                found = {int(mpmath.sign(fn(t))) for t in ladder}
        except (ArithmeticError, ValueError, TypeError):
            return truth
        if len(found) != 1 or 0 in found:
            return truth
        signs[u] = sp.Integer(found.pop())
    return _with_signs(truth, signs)


_KINKS = (sp.Abs, sp.sign, sp.DiracDelta)


def _kink_arguments(expr: sp.Expr) -> set[sp.Expr] | None:
    """The arguments of abs, sign and DiracDelta (sign's derivative) in `expr`; None where
    one holds another."""
    arguments = {node.args[0] for node in expr.atoms(*_KINKS)}
    return None if any(u.has(*_KINKS) for u in arguments) else arguments


def _with_signs(expr: sp.Expr, signs: dict[sp.Expr, sp.Expr]) -> sp.Expr:
    """`expr` with |u| as s*u, sign(u) as s and DiracDelta(u) as 0, s = signs[u]: where u
    keeps the sign s (a constant, or one times sign(x)), which is nonzero."""
    expr = kink_slopes_as_zero(expr)
    return expr.xreplace(
        {node: signs[node.args[0]] * (node.args[0] if isinstance(node, sp.Abs) else 1) for node in expr.atoms(sp.Abs, sp.sign)}
    )


def _split(inner: sp.Expr, sides: dict[int, tuple[sp.Expr, sp.Float]], x: sp.Symbol) -> sp.Expr:
    """`inner` between the thresholds, evaluated on clip(x) so it stays finite, and each
    side's far-out form beyond its threshold."""
    if not sides:
        return inner
    hi = sides.get(1, (None, FLOAT_MAX))[1]
    lo = sides.get(-1, (None, FLOAT_MAX))[1]
    cases = [(value, x >= bound if sign > 0 else x <= -bound) for sign, (value, bound) in sorted(sides.items())]
    return sp.Piecewise(*cases, (inner.xreplace({x: clip(x, -lo, hi)}), True))


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
    threshold = _matches_beyond(np.full(len(xs), float(limit), dtype=np.float32), sign, xs, reference)
    if threshold is None:
        return None
    if not np.isfinite(judge.evaluate32(expr, (x,), np.array([[sign * threshold]]))).all():
        return None
    return limit, sp.Float(threshold, 17)


def _polynomial_far_out(
    far: sp.Expr, truth: sp.Expr, x: sp.Symbol, sign: int, xs: np.ndarray, reference: np.ndarray
) -> tuple[sp.Expr, sp.Float] | None:
    """(far, threshold) on one side, where `far`, the truth with the signs of its abs and
    sign arguments resolved far out (_signs_far_out), is a polynomial in x, and from the
    threshold on matches the truth: log(1 + |expm1(x)|) is x for x > 0, where
    log1p(|expm1(x)|) overflowed from x = 89 on. None where no sign was resolved."""
    if far == truth:
        return None
    far = naive(far)  # log(expm1(x) + 1) is log(exp(x)) = x only so
    if not far.is_polynomial(x):
        return None
    threshold = _matches_beyond(judge.evaluate32(far, (x,), xs[np.newaxis, :]), sign, xs, reference)
    return None if threshold is None else (far, sp.Float(threshold, 17))


def _matches_beyond(values: np.ndarray, sign: int, xs: np.ndarray, reference: np.ndarray) -> float | None:
    """The least |x| on the side `sign` from which on `values` are within a bit of the
    reference at every grid point; None where not even at the farthest."""
    side = (sign * xs > 0) & ~np.isnan(reference)
    matches = judge.bits_of_error(values, reference) <= 1
    for m in np.sort(np.abs(xs[side])):
        if matches[side & (np.abs(xs) >= m)].all():
            return float(m)
    return None


def _exp_tails(truth: sp.Expr, x: sp.Symbol, sign: int, xs: np.ndarray) -> list[tuple[sp.Expr, sp.Expr]]:
    """(form, threshold) options on one side, none or one or two: beyond the threshold, the
    leading term of `truth` in its exponential, c(x)*exp(k*g(x)), equals it to double
    precision; and, where it does so to SINGLE_TOLERANCE from a smaller threshold on, the
    same with that threshold for float32 (by_dtype), for a form that is bad in between
    (_bad_between): x/(exp(x) + exp(-x))'s f'' flushed a factor exp(-5x) at x = 18, where
    the tail is exact to float32 (from x = 20 to double).

    For a function of exp(g(x)) (after tanh, cosh, ... are written with exp), such
    as x*sigmoid(x) = x*E/(1 + E) with E = exp(x): as E -> 0 it is x*E. The term
    is emitted as mul_exp, which stays finite where exp alone over- or underflows
    but the product does not (expm1(x)/x at x = 90: exp overflows, the quotient
    is 1.4e37), and evaluated on x bounded where the true value has long left
    the float64 range, so that c(x) cannot meet an inf or 0 there.
    """
    found = _leading_exp_term(truth, x, sign)
    if found is None:
        return []
    c, k, g = found
    exact = judge._mp_function(truth, (x,))
    approx = judge._mp_function(c * sp.exp(k * g), (x,))
    mags = [float(m) for m in np.sort(np.abs(xs[(sign * xs >= 1) & np.isfinite(xs)]))]

    def first(tolerance: mpmath.mpf, candidates: list[float]) -> float | None:
        # The relative error of the leading term falls as |x| grows: check m and two beyond.
        for i, m in enumerate(candidates):
            if all(_matches(exact, approx, g, x, sign * p, tolerance) for p in candidates[i : i + 3]):
                return m
        return None

    double = first(mpmath.mpf(2) ** -54, mags)
    if double is None:
        return []
    bound = FLOAT_MAX
    if k != 0:
        # Where |k*g|/2 > 800, both halves of exp are inf or 0 even in float64.
        bound_value = double
        while abs(float(k * g.subs(x, sign * bound_value))) < 1600:
            bound_value *= 2
            if bound_value > 1e30:
                return []
        bound = sp.Float(bound_value, 17)
    bounded = pick(sign * x < bound, x, sign * bound) if k != 0 else x
    form = c if k == 0 else mul_exp(c, k * g)
    # Below the double's, quarter powers of two as well: the grid has nothing between 10
    # and 20, or 20 and 31.8, where a float32 tail may start.
    thresholds = [sp.Float(double, 17)]
    below = sorted({*(m for m in mags if m < double), *_quarters(0, double)})
    single = first(mpmath.mpf(SINGLE_TOLERANCE), below + [m for m in mags if m >= double])
    if single is not None and single < double:
        thresholds.append(by_dtype(sp.Float(single, 17), thresholds[0]))
    options = []
    for t in thresholds:
        guarded = clip(bounded, t, bound) if sign > 0 else clip(bounded, -bound, -t)
        options.append((form.xreplace({x: guarded}), t))
    return options


def _quarters(low: float, high: float) -> list[float]:
    """The quarter powers of two from 4 to 2**12 in [low, high)."""
    return [q for q in (2.0 ** (k / 4) for k in range(8, 4 * 12)) if low <= q < high]


def _bad_between(form: sp.Expr, truth: sp.Expr, x: sp.Symbol, sign: int, threshold: by_dtype) -> bool:
    """Whether `form` is beyond GOOD_BITS in float32 at a quarter power of two between the
    float32 and float64 thresholds on the side `sign`."""
    single, double = (float(t) for t in threshold.args)
    points = np.array([[sign * q for q in _quarters(single, double)]], dtype=np.float32).astype(np.float64)
    reference = judge.reference(truth, (x,), points)
    bits = judge.bits_of_error(judge.evaluate32(form, (x,), points), reference)
    return bool((bits[~np.isnan(reference)] > judge.GOOD_BITS).any())


_ALGEBRAIC_TAILS = (sp.log, lgamma, sp.polygamma, sp.atan, sp.asinh, sp.acosh)


def _algebraic_tail(truth: sp.Expr, x: sp.Symbol, sign: int) -> tuple[sp.Expr, sp.Expr] | None:
    """(form, threshold) on one side: beyond the threshold, `truth`'s asymptotic series in
    1/x, SymPy's to ALGEBRAIC_TERMS orders, as a polynomial in 1/x where it matches the
    truth to SINGLE_TOLERANCE (float32) or DOUBLE_TOLERANCE (float64) from a power of two
    on. For a tail whose terms cancel algebraically: Student's t normaliser
    lgamma((x + 1)/2) - lgamma(x/2) - log(x)/2 has the derivative
    (digamma((x + 1)/2) - digamma(x/2) - 1/x)/2 = 1/(4*x**2) - 1/(8*x**4) + ..., and the
    digamma difference is 1/x to float32's precision for x > 1e3. Not where the series has
    a log or a fractional power, nor through functions nested deeper than two. Through
    log, lgamma, polygamma, atan, asinh and acosh only (asinh(x) - log(2*x) = 1/(4*x**2) -
    ... lost 13 bits at x = 40)."""
    textbook = naive(truth)
    if not _expandable(textbook) or _nesting(textbook) > 2:
        return None
    # Only functions with algebraic tails: SymPy's series at oo of lgamma(erfc(x))' ran its
    # limits for minutes (fuzz seed 6791), and an exponential's tail is _exp_tails'.
    if any(not isinstance(f, _ALGEBRAIC_TAILS) for f in textbook.atoms(sp.Function)):
        return None
    # asinh and acosh of a rational function only, and no root of a function: SymPy's
    # series of -asinh(lgamma(y)) as a log, and of its slope
    # -digamma(y)/sqrt(lgamma(y)**2 + 1), ran for minutes (fuzz seed 9024).
    if any(not f.args[0].is_rational_function(x) for f in textbook.atoms(sp.asinh, sp.acosh)):
        return None
    if any(not p.exp.is_Integer and p.base.atoms(sp.Function) for p in textbook.atoms(sp.Pow)):
        return None
    # Nor through a power with the input in its exponent, an exponential's tail (the series of
    # log(x**x)'' ran for minutes; fuzz seed 3579).
    if any(p.exp.has(x) for p in textbook.atoms(sp.Pow)):
        return None
    # Nor through a high power: the series of (1 + x/1000)**1000 at oo expanded it (minutes).
    if any(p.exp.is_Number and abs(p.exp) > ALGEBRAIC_MAX_POWER for p in textbook.atoms(sp.Pow)):
        return None
    if textbook.has(lgamma, sp.polygamma):
        if sign < 0:
            return None  # poles at every negative integer: no tail
        # Of a polynomial argument only, which goes to infinity: SymPy's series at oo of
        # lgamma(atan(2*x/3)), at lgamma(pi/2), recursed past Python's limit (fuzz seed 4680).
        if any(not _grows(g.args[-1], x) for g in textbook.atoms(lgamma, sp.polygamma)):
            return None
        # Added and scaled only, not inside a function or a power: log(lgamma(x)) and its
        # slope digamma(x)/lgamma(x) have logs of logs in their tails, never algebraic, and
        # SymPy's series at oo ran its limits for minutes to find so (fuzz seed 2804).
        inside = [f.args[-1] for f in textbook.atoms(sp.Function)] + [p.base for p in textbook.atoms(sp.Pow)]
        if any(e.has(lgamma, sp.polygamma) for e in inside):
            return None
        textbook = textbook.replace(lgamma, sp.loggamma)  # log|gamma| is loggamma for x > 0
    # SymPy has no series of asinh or acosh at oo; of their logs it has.
    textbook = textbook.replace(sp.asinh, lambda u: sp.log(u + sp.sqrt(u**2 + 1)))
    textbook = textbook.replace(sp.acosh, lambda u: sp.log(u + sp.sqrt(u - 1) * sp.sqrt(u + 1)))
    # Nor through a log of a log, whose tail has logs of logs: SymPy's series at oo of
    # xlog1py(lgamma(y), acosh(y)), lgamma(y)*log(1 + acosh(y)), ran for minutes (fuzz seed 36).
    if any(f.args[0].has(sp.log, sp.loggamma) for f in textbook.atoms(sp.log)):
        return None
    # Nor through a product of two logs of the input, whose tail has log(x)**2 or log(x)*log(c
    # + ...), never algebraic: SymPy's series at oo of xlog1py(xlog1py(x, x), atan2(x, 10))'s
    # slopes, x*log(1 + x)*log(1 + atan(x/10)) and the like, took 130 s to find so (fuzz seed 83).
    if any(sum(f.has(sp.log) and f.has(x) for f in m.args) > 1 for m in textbook.atoms(sp.Mul)):
        return None
    y, t = sp.Dummy("y", positive=True), sp.Dummy("t", positive=True)
    try:
        series = sp.series(textbook.xreplace({x: sign * y}), y, sp.oo, ALGEBRAIC_TERMS).removeO()
        in_t = sp.expand(series.xreplace({y: 1 / t}))
        # A log(|x|) term with a constant coefficient, as Stirling's series has: lgamma(x + 1) -
        # x*log(x) + x is log(x)/2 + log(2*pi)/2 + 1/(12*x) - ..., whose terms cancel in
        # float32 from x = 1e3 on, and were inf - inf = NaN from 1e36 on.
        logs = in_t.coeff(sp.log(t))
        in_t = sp.expand(in_t - logs * sp.log(t))
        if in_t.has(y, sp.log(t)) or not in_t.is_polynomial(t) or not (logs.is_Number and logs.is_finite):
            return None
        coeffs = [sp.N(c, 30) for c in sp.Poly(in_t, t).all_coeffs()]
    except (ArithmeticError, ValueError, TypeError, NotImplementedError, sp.PolynomialError, sp.PoleError):
        return None
    except RecursionError:
        return None  # SymPy's own series, on forms the guards above let through
    if not all(c.is_Number and c.is_finite for c in coeffs) or (logs == 0 and all(c == 0 for c in coeffs)):
        return None
    exact = judge._mp_function(truth, (x,))
    poly = sp.lambdify(t, sp.Add(logs * sp.log(t), *(c * t**k for k, c in enumerate(reversed(coeffs)))), modules="mpmath")

    def error_at(m: float) -> object:
        errors = []
        for p in (m, 2 * m, 4 * m, 16 * m):
            try:
                true = exact(mpmath.mpf(sign * p))
                approx = poly(1 / mpmath.mpf(p))
            except (ArithmeticError, ValueError, TypeError):
                return None
            if not (isinstance(true, mpmath.mpf) and mpmath.isfinite(true)) or true == 0:
                return None
            errors.append(abs(approx - true) / abs(true))
        return max(errors)

    found = _first_within(ALGEBRAIC_THRESHOLDS, error_at)
    if SINGLE_TOLERANCE not in found:
        return None
    single = sp.Float(found[SINGLE_TOLERANCE], 17)
    double = sp.Float(found.get(DOUBLE_TOLERANCE, float(FLOAT_MAX)), 17)
    threshold = single if single == double else by_dtype(single, double)
    guarded = clip(x, threshold, FLOAT_MAX) if sign > 0 else clip(x, -FLOAT_MAX, -threshold)
    tail = polyval(sp.Tuple(*(sp.Float(c, 20) for c in coeffs)), sign / guarded)
    return tail - sp.Float(logs, 20) * sp.log(sign * guarded) if logs != 0 else tail, threshold


def _grows(u: sp.Expr, x: sp.Symbol) -> bool:
    """Whether `u` is a polynomial in x of positive degree (it goes to infinity with x)."""
    return u.is_polynomial(x) and sp.degree(u, x) >= 1


def _leading_exp_term(truth: sp.Expr, x: sp.Symbol, sign: int) -> tuple[sp.Expr, sp.Rational, sp.Expr] | None:
    """(c, k, g) with truth ~ c(x)*exp(k*g(x)) as x -> sign*inf, g -> -inf; None unless
    truth is a function of x and of one exponential exp(g0(x)) (with rational powers)."""
    e = naive(truth)
    if sp.count_ops(e) > TAIL_MAX_OPS or _has_opaque_constants(e):
        return None
    if e.has(*_HYPERBOLIC):
        e = e.rewrite(list(_HYPERBOLIC), sp.exp)
    exps = sorted((a for a in e.atoms(sp.exp) if a.has(x)), key=sp.default_sort_key)
    if not exps:
        return None
    g0 = exps[0].args[0]
    powers = {a: sp.cancel(a.args[0] / g0) for a in exps}
    if not all(r.is_Rational for r in powers.values()):
        return None
    big = sp.Dummy("E", positive=True)
    body = e.xreplace({a: big**r for a, r in powers.items()})
    if any(a.has(x) for a in body.atoms(sp.exp)):
        return None
    try:
        # A Float: at the Integer 10**6, SymPy computes y**y exactly (6 million digits).
        far = float(g0.subs(x, sp.Float(sign * 1e6)))
    except (TypeError, ValueError):
        return None
    if not far or not np.isfinite(far):
        return None
    # small = exp(g) -> 0 on this side.
    g = -g0 if far > 0 else g0
    small = sp.Dummy("F", positive=True)
    body = body.xreplace({big: 1 / small if far > 0 else small})
    found = _rational_leading_term(body, small)
    if found is None:
        if sp.count_ops(body) > SERIES_MAX_OPS:
            return None
        # Nor through a function other than exp and log of what diverges: SymPy's leading
        # term of asinh(F/2 - 1/(2F)) as F -> 0 ran for minutes (the fuzzer's asinh(sinh(x))).
        if any(not isinstance(f, (sp.exp, sp.log)) and f.has(small) for f in body.atoms(sp.Function)):
            return None
        # Nor where the body vanishes as fast as small**5 or faster: SymPy raises the order
        # of its expansion until a term survives, without end where the body is identically
        # 0 (asinh(sinh(x))'' as sqrt forms in exp(x), F**1025 and on).
        # (The body has x beside small, in c(x): probed at x = 3/2 on this side.)
        try:
            with mpmath.workdps(60):
                # The judge's mpmath names: DiracDelta (abs's f'') is not mpmath's.
                at = sp.lambdify((small, x), body, modules=[judge._MP_FUNCTIONS, "mpmath"])
                probe = at(mpmath.mpf(10) ** -8, mpmath.mpf(sign * 1.5))
            if not abs(probe) > mpmath.mpf(10) ** -40:
                return None
        except (ArithmeticError, ValueError, TypeError):
            return None
        try:
            found = body.as_leading_term(small).as_coeff_exponent(small)
        except (NotImplementedError, ValueError, TypeError, ArithmeticError, sp.PoleError, RecursionError):
            return None
    c, k = found
    c = c.xreplace({sp.log(small): g})
    # Logs of products split (log(1/(2*x)) as -log(2) - log(x)): 2*x overflows at x = 2e38,
    # where log(sinh(x)/x) ~ x + log(1/(2*x)) is finite. x is sign*y, y > 0, on this side.
    y = sp.Dummy("y", positive=True)
    try:
        c = sp.expand_log(c.xreplace({x: sign * y})).xreplace({y: sign * x})
    except ValueError:
        # A function of a real argument only, made complex: log(|exp(x)|**3/2 + |sqrt(x)|**3
        # + 1)' has DiracDelta(sqrt(x)), which SymPy refuses at x = -y (fuzz: an internal
        # error, exit 123). This side is outside the domain; no tail.
        return None
    # AccumBounds: sin(cosh(y)) far out oscillates, and SymPy's leading term is the interval
    # <-1, 1>, which has no value to compute (it crashed lambdify).
    if c.has(small) or not k.is_Rational or c == 0 or c.has(sp.nan, sp.zoo, sp.oo, -sp.oo, sp.AccumBounds):
        return None
    return c, k, g


def _rational_leading_term(body: sp.Expr, small: sp.Symbol) -> tuple[sp.Expr, sp.Rational] | None:
    """(c, k) with body ~ c*small**k as small -> 0, when body is a ratio of polynomials in
    small: the lowest-degree terms of numerator and denominator. Much cheaper than
    SymPy's series, which took seconds on the derivatives of gelu_tanh."""
    num, den = sp.fraction(sp.together(body))
    try:
        low = [min(sp.Poly(part, small).terms()) for part in (num, den)]
    except (sp.PolynomialError, sp.GeneratorsNeeded, ValueError):
        return None
    (kn,), cn = low[0]
    (kd,), cd = low[1]
    return sp.cancel(cn / cd), sp.Integer(kn - kd)


def _matches(exact: object, approx: object, g: sp.Expr, x: sp.Symbol, point: float, tolerance: mpmath.mpf) -> bool:
    """Whether approx(point) equals exact(point) to `tolerance`, relative, computed at a
    precision that resolves the exponentials at that point."""
    try:
        digits = 40 + int(2 * abs(float(g.subs(x, point))))
    except (TypeError, ValueError, OverflowError):
        return False
    if digits > MAX_TAIL_DIGITS:
        return False
    arg = mpmath.mpf(point)
    try:
        with mpmath.workdps(digits):
            low = exact(arg)
        with mpmath.workdps(2 * digits):
            true = exact(arg)
            value = approx(arg)
            if not all(isinstance(v, mpmath.mpf) and mpmath.isfinite(v) for v in (low, true, value)):
                return False
            if true == 0 or abs(low - true) > abs(true) * mpmath.mpf(2) ** -60:
                return False
            return bool(abs(value - true) <= abs(true) * tolerance)
    except (ArithmeticError, ValueError, TypeError, MemoryError):
        return False


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


# Around a nonzero root, a form that is accurate to its own scale can lose its relative
# accuracy, where its terms cancel: swish' = sigmoid(x)*(1 + x*sigmoid(-x)) is 8.9 bits off
# at 2**-10 from its root -1.278, (24*tanh(x)**2 - 8)*sigmoid_slope(2*x) 8.6 bits at 0.658.
# The root regime probes the form at these relative distances from each root, and below the
# distance where it is bad, a Taylor polynomial in x - r (r added in two parts, so that the
# difference is exact) takes over.
ROOT_PROBES = tuple(2.0**-k for k in range(2, 24))
ROOT_MAX_DEGREE = 16
ROOT_MAX_HALVINGS = 3
ROOT_MAX_CHANGES = 4  # sign changes on the grid; two pairs of roots at +-r
ROOT_TAYLOR_DPS = 40


@dataclass(frozen=True)
class _Root:
    """A root of the truth at 60 digits, the band |x - r| around it that a polynomial must
    serve, the truth's parity where -r is a root too (1 even, -1 odd, 0 neither: one
    polynomial in |x| then serves both), and the probes around it (around -r too, with a
    parity) with the truth there."""

    value: mpmath.mpf
    band: float
    parity: int
    probes: np.ndarray = field(compare=False)
    truths: np.ndarray = field(compare=False)


def _bad_roots(expr: sp.Expr, truth: sp.Expr, x: sp.Symbol, domain: sp.Expr) -> list[_Root]:
    """The truth's roots (judge.sign_changes, refined) where `expr` is more than GOOD_BITS
    off at a probe, in float32, each with the band a polynomial is to serve: at most half
    the root, so that x - r stays exact (Sterbenz)."""
    found: list[_Root] = []
    changes = judge.sign_changes(truth, (x,))
    if len(changes) > ROOT_MAX_CHANGES:
        return found  # sin(x)/x's roots go on: a polynomial at the first few is no cure
    exact = judge._mp_function(truth, (x,))
    for approx in changes:
        root = _refined_root(exact, approx)
        # -r of a root r already served with its parity (one polynomial in |x| serves both).
        if root is None or any(r.parity and _same(abs(float(root)), abs(float(r.value))) for r in found):
            continue
        points = _probes(root)
        truths = judge.reference(truth, (x,), points)
        if np.isnan(judge.reference(domain, (x,), points)).any() or np.isnan(truths).any():
            continue
        bits = judge.bits_of_error(judge.evaluate32(expr, (x,), points), truths)
        if not (bits > judge.GOOD_BITS).any():
            continue
        # Four times the farthest probe over GOOD_BITS: the error falls only about as
        # 1/|x - r|, and points between the probes vary (1 - tanh(x)**2'' was 4.3 bits off at
        # 0.7, just beyond twice its farthest bad probe).
        off = np.abs(points[0] - float(root))[bits > judge.GOOD_BITS]
        band = min(4 * float(np.max(off)), abs(float(root)) / 2)
        parity = _parity(exact, root) if any(_same(-c, float(root)) for c in changes) else 0
        if parity:  # the truth at -x is parity times its value at x
            points, truths = np.concatenate([points, -points], axis=1), np.concatenate([truths, parity * truths])
        found.append(_Root(root, band, parity, points, truths))
    return found


def _same(a: float, b: float) -> bool:
    """Whether two roots are one, to 2**-20 (sign changes are bisected to 2**-24)."""
    return abs(a - b) <= abs(b) * 2.0**-20


def _probes(root: mpmath.mpf) -> np.ndarray:
    """The float32 points at ROOT_PROBES' relative distances on both sides of the root."""
    return np.array(
        [float(root) * (1 + s * d) for d in ROOT_PROBES for s in (-1, 1)], dtype=np.float32
    ).astype(np.float64)[None, :]


def _refined_root(exact: Callable, approx: float) -> mpmath.mpf | None:
    """The root near `approx` (a sign change to 2**-24) at 60 digits, if it is one: the
    truth changes sign across it and is small there (not a pole)."""
    try:
        with mpmath.workdps(60):
            root = mpmath.findroot(exact, mpmath.mpf(approx), tol=mpmath.mpf(10) ** -55)
            if not isinstance(root, mpmath.mpf) or abs(root - approx) > abs(approx) * 2.0**-16:
                return None
            near = [exact(root * (1 + s * mpmath.mpf(10) ** -30)) for s in (-1, 1)]
            far = [exact(root * (1 + s * mpmath.mpf(2) ** -8)) for s in (-1, 1)]
    except (ArithmeticError, ValueError, TypeError):
        return None
    values = near + far
    if not all(isinstance(v, mpmath.mpf) and mpmath.isfinite(v) for v in values):
        return None
    if near[0] * near[1] >= 0 or max(abs(v) for v in near) > min(abs(v) for v in far) * mpmath.mpf(10) ** -20:
        return None
    return root


def _parity(exact: Callable, root: mpmath.mpf) -> int:
    """1 if the truth is even, -1 if odd (at three points around |root|, to 30 digits), else 0."""
    with mpmath.workdps(40):
        try:
            pairs = [(exact(t), exact(-t)) for t in (abs(root) * mpmath.mpf(k) for k in ("0.3", "1.125", "1.7"))]
        except (ArithmeticError, ValueError, TypeError):
            return 0
        for parity in (1, -1):
            if all(abs(b - parity * a) <= abs(a) * mpmath.mpf(10) ** -30 for a, b in pairs):
                return parity
    return 0


def _root_regime(expr: sp.Expr, truth: sp.Expr, x: sp.Symbol, root: _Root) -> sp.Expr | None:
    """Within root.band of the root, its Taylor polynomial of the least degree that holds
    there to SINGLE_TOLERANCE (mpmath's derivatives at ROOT_TAYLOR_DPS digits), and `expr`
    elsewhere. float64 takes the polynomial over the band where it holds to
    DOUBLE_TOLERANCE, if any."""
    exact = judge._mp_function(truth, (x,))
    try:
        with mpmath.workdps(ROOT_TAYLOR_DPS):
            center = abs(root.value) if root.parity else root.value  # abs rounds to the working precision
            coeffs = mpmath.taylor(exact, center, ROOT_MAX_DEGREE)
    except (ArithmeticError, ValueError, TypeError):
        return None
    if not all(isinstance(c, mpmath.mpf) and mpmath.isfinite(c) for c in coeffs):
        return None

    def error_at(degree: int, d: float) -> object:
        try:
            steps = (mpmath.mpf(d), -mpmath.mpf(d))
            pairs = [(exact(center + h), mpmath.polyval(coeffs[degree:0:-1], h) * h) for h in steps]
        except (ArithmeticError, ValueError, TypeError):
            return None
        if not all(isinstance(t, mpmath.mpf) and mpmath.isfinite(t) and t for t, _ in pairs):
            return None
        return max(abs(p - t) / abs(t) for t, p in pairs)

    with mpmath.workdps(40):
        # The band, or where ROOT_MAX_DEGREE cannot serve it, the widest of its halves that
        # it can (tanh(x)/x'' cancels over 0.6..1.3 around its root 0.92).
        for band in (root.band * 2.0**-m for m in range(ROOT_MAX_HALVINGS + 1)):
            degree = next((k for k in range(1, ROOT_MAX_DEGREE + 1) if _within(error_at(k, band), SINGLE_TOLERANCE)), 0)
            if degree:
                break
        else:
            return None
        bands = (band * 2.0**-m for m in range(0, 40))
        double = next((b for b in bands if _within(error_at(degree, b), DOUBLE_TOLERANCE)), 0.0)
    bound = sp.Float(band, 17)
    if double < band:
        bound = by_dtype(bound, sp.Float(double, 17))
    h = plus_constant(sp.Abs(x) if root.parity else x, -sp.Float(mpmath.nstr(center, 45), 45))
    near = clip(h, -bound, bound)
    polynomial = near * polyval(sp.Tuple(*(sp.Float(c, 20) for c in coeffs[degree:0:-1])), near)
    if root.parity == -1:
        polynomial = sp.sign(x) * polynomial
    return sp.Piecewise((polynomial, sp.Abs(h) < bound), (expr, True))


def _within(error: object, tolerance: float) -> bool:
    return error is not None and error <= tolerance


def _better_near(
    trial: sp.Expr, form: sp.Expr, x: sp.Symbol, root: _Root, points: np.ndarray, reference: np.ndarray, score: float
) -> bool:
    """Whether `trial` is better than `form` at the root's probes (mean bits, in float32) and
    no worse on the grid."""
    before, after = (
        judge.bits_of_error(judge.evaluate32(f, (x,), root.probes), root.truths).mean() for f in (form, trial)
    )
    return bool(after < before) and judge.score(trial, (x,), points, reference) <= score


def _removable_points(truth: sp.Expr, x: sp.Symbol) -> list[sp.Rational]:
    """Nonzero points where a factor of the textbook form's denominator vanishes: candidates
    for a removable singularity away from 0 (log(x)/(x - 1) and (x - 1)/log(x) at 1). Only
    points a float32 holds exactly, so that x - c is exact near c; roots of polynomial
    factors of degree 4 at most, and of log(polynomial) factors."""
    textbook = naive(truth)
    if sp.count_ops(textbook) > SERIES_MAX_OPS:
        return []
    roots: set[sp.Expr] = set()
    for factor in sp.Mul.make_args(sp.fraction(sp.together(textbook))[1]):
        base = factor.base if factor.is_Pow and factor.exp.is_Integer and factor.exp > 0 else factor
        if not base.has(x) or base.is_Pow and not base.exp.is_Integer:
            continue  # (x**2 - 1)**(1/2) vanishes at a branch point, not a removable one
        # log(u) vanishes where u = 1; no general solver (sp.solve of 1 + exp(x) alone
        # costs a cold CLI run 0.1 s).
        polynomial = base.args[0] - 1 if isinstance(base, sp.log) else base
        try:
            poly = sp.Poly(polynomial, x)
        except sp.PolynomialError:
            continue
        # Rational coefficients only: real_roots has no order over ZZ[log(2)] (the fuzzer's
        # log1p(logaddexp(x, x)), where x + log(2) vanishes at -log(2), not a float).
        if 1 <= poly.degree() <= 4 and poly.domain in (sp.ZZ, sp.QQ):
            roots.update(sp.real_roots(poly))
    if not roots:
        return []
    exact = judge._mp_function(truth, (x,))
    return [
        r
        for r in sorted(roots, key=sp.default_sort_key)
        if r.is_Rational and r != 0 and float(np.float32(float(r))) == float(r) and _continuous_at(exact, r)
    ]


def _continuous_at(exact: Callable, c: sp.Rational) -> bool:
    """Whether the true function tends to one finite value from both sides of c (a
    removable singularity), not to infinity (a pole) or to a complex value (a branch
    point): a series is only sought there."""
    # 300 digits at c -+ 1e-40: the textbook form of a derivative cancels there in terms
    # of size 1/h**k (log(x)/(x - 1)'' in terms of 1e120 for a value near 2/3).
    # And at c + 1e-20: a pole of even order is alike on both sides (log(x*log(x))'' is
    # -1/(x - 1)**2 there), but not at two distances; SymPy's series at such a pole ran for
    # minutes (the fuzzer's log(xlogy(x, x))).
    with mpmath.workdps(300):
        try:
            values = [exact(mpmath.mpf(c) + d) for d in (mpmath.mpf(-1e-40), mpmath.mpf(1e-40), mpmath.mpf(1e-20))]
        except (ArithmeticError, ValueError, TypeError):
            return False
        if not all(isinstance(v, mpmath.mpf) and mpmath.isfinite(v) for v in values):
            return False
        return all(abs(v - values[0]) <= mpmath.mpf(1e-10) * max(1, abs(values[0])) for v in values[1:])


def _series_regime(
    expr: sp.Expr,
    truth: sp.Expr,
    x: sp.Symbol,
    center: sp.Rational = sp.Integer(0),
    source: tuple[sp.Expr, int] | None = None,
    patch: bool = False,
) -> sp.Expr | None:
    """The Taylor polynomial of `truth` at `center`, below a threshold in |x - center|, and
    `expr` beyond it. Away from 0, only at a removable singularity (not a point where the
    textbook form is regular: nothing to remove there), with the polynomial in x - center.

    Where truth's textbook form is too large for SymPy's series, `source` = (f, k), truth
    being f's k-th derivative, gives it as the k-th derivative of f's series (sin(x)/(x*(1 +
    x**2)): its f'' has 70 ops, f has 7).

    With `patch`, at a center where truth is regular, from mpmath's Taylor coefficients
    there: a patch over a band where the form cancels."""
    # Where f itself has no series at 0 (atanh(erfc(x)) is atanh(1) there), its derivatives
    # have none either: SymPy's series of atanh(erfc(x))' at its pole ran for minutes.
    if center == 0 and source is not None and _branch_point_at_zero(naive(source[0]), x):
        return None
    textbook, k = naive(truth), 0
    if not _expandable(textbook) and source is not None:
        textbook, k = naive(source[0]), source[1]
    if not _expandable(textbook):
        return None
    exact = judge._mp_function(truth, (x,))
    # The polynomial's variable h stands for `argument`: x - center, or |x| for g(|x|).
    argument = x - center
    in_abs = _series_in_abs(textbook, x) if center == 0 and k == 0 else None
    by_side = None
    if in_abs is None and center == 0 and textbook.has(sp.Abs, sp.sign):
        by_side = _series_by_side(*_series_source(textbook, k, source), x)
    if in_abs is not None:
        series, h = in_abs
        argument = sp.Abs(x)
    elif by_side is not None:
        series, h = by_side, x
    elif center == 0:
        h = x
        # lgamma's and polygamma's series are SymPy's own, exact (zeta values) and quick for a
        # polynomial argument or an exp or a sine of one (lgamma(exp(x)): 2 s), where mpmath's
        # numeric Taylor coefficients of loggamma at 200 digits took a minute (lgamma(x + 1));
        # of another argument, SymPy's took minutes too (lgamma(sigmoid(softplus(y))), whose
        # textbook argument is (1 + exp(y))/(2 + exp(y))): no series.
        gammas, nesting = textbook.atoms(lgamma, sp.polygamma), _nesting(textbook)
        if not all(_series_friendly(g.args[-1], nesting, x) for g in gammas):
            return None
        # Numerically, from f where truth is f's k-th derivative: mpmath's differences at 0
        # take steps of 2**-700, where log(x/sinh(x))'' as differentiated has terms of 1e420
        # that cancel to -1/3 (its constant term came out 0, and no threshold held).
        def numeric() -> Callable:
            return exact if k == 0 else judge._mp_function(textbook, (x,))

        if gammas:
            expanded, n = _series_source(textbook, k, source)
            series = _symbolic_series(expanded, x, n)
        elif _regular_at_zero(textbook, x):
            series = _numeric_taylor(numeric(), x, k=k)
        elif any(_in_base_and_exponent(p, x) for p in textbook.atoms(sp.Pow)):
            # u**v analytic at 0 (_branch_point_at_zero let it through): numerically, from
            # points around 0. SymPy's series of (1 + x)**(1/x) to 14 terms ran for minutes.
            series = _numeric_taylor(numeric(), x, singular=True, k=k)
        elif nesting > SERIES_MAX_NESTING:
            if source is not None and k == 0 and _expandable(naive(source[0])):
                # From f, as above: log(cosh(x))/x**2's f' as differentiated,
                # tanh(x)/x**2 - 2*log(cosh(x))/x**3, cancels in terms of 1/h beyond
                # mpmath's working precision, and its coefficients came out as 1e97.
                textbook, k = naive(source[0]), source[1]
            series = _numeric_taylor(numeric(), x, singular=not _regular_at_zero(textbook, x), k=k)
        else:
            expanded, n = _series_source(textbook, k, source)
            series = _symbolic_series(expanded, x, n)
    elif patch:
        h = sp.Dummy("h", real=True)
        series = _numeric_taylor(lambda t: exact(mpmath.mpf(float(center)) + t), h)
    else:
        h = sp.Dummy("h", real=True)
        shifted = textbook.xreplace({x: center + h})
        if _regular_at_zero(shifted, h):
            return None
        # Over one denominator first, where the poles at the point cancel: SymPy's series of
        # softplus(log(log(x)))'' at x = 1, three terms in 1/log(1 + h)**2 and 1/log(1 + h),
        # ran for minutes; of the quotient, 0.3 s.
        series = _symbolic_series(sp.cancel(shifted), h, k)
        if series is not None and not series.has(h):
            return None
    if series is None:
        return None
    if by_side is not None:
        even, odd = (sp.lambdify(h, part, modules="mpmath") for part in series)
        poly = lambda d: even(d) + mpmath.sign(d) * odd(d)  # noqa: E731
    else:
        poly = sp.lambdify(h, series, modules="mpmath")
    # float32 needs the polynomial exact to 2**-28 only, often over a wider band, and the form
    # it replaces there cancels (1/tanh(x) - 1/x's f'' loses 9 bits at 0.5, 5 at 1): the
    # module takes the dtype's threshold at trace time.
    threshold, wide = _series_thresholds(exact, poly if in_abs is None else lambda d: poly(abs(d)), center)
    if wide is None:
        return None
    bound = _bound(threshold, wide)
    if by_side is not None:
        even, odd = (_polyval(part, h) if part != 0 else part for part in series)
        polynomial = (even + sp.sign(x) * odd).xreplace({h: clip(argument, -bound, bound)})
    else:
        polynomial = _polyval(series, h).xreplace({h: clip(argument, -bound, bound)})
    if center == 0:
        return sp.Piecewise((polynomial, sp.Abs(x) < bound), (expr.xreplace({x: away(x, bound)}), True))
    near = sp.Abs(x - center) < bound
    # Beyond the threshold x itself, exactly: x = center + (x - center) would round.
    return sp.Piecewise((polynomial, near), (expr.xreplace({x: pick(near, center + bound, x)}), True))


def _bound(threshold: float | None, wide: float) -> sp.Expr:
    """The threshold below which a polynomial serves: `wide` (exact to SINGLE_TOLERANCE) in
    float32 and `threshold` (to DOUBLE_TOLERANCE; none: 0) in float64, one number where
    they meet."""
    if threshold is not None and threshold >= wide:
        return sp.Float(threshold, 17)
    return by_dtype(sp.Float(wide, 17), sp.Float(threshold or 0, 17))


def _pole_regime(expr: sp.Expr, truth: sp.Expr, x: sp.Symbol) -> sp.Expr | None:
    """At a pole of order m at 0 (_pole_order), the truth as p(x)/x/x/.../x, m divisions,
    p the Taylor polynomial of x**m*truth, below a measured threshold in |x|; `expr` beyond
    it. Where a form's terms hold poles of different orders, they overflow into inf - inf
    (log(x) - digamma(x)'' is -1/x**2 - polygamma(2, x), NaN below 1.8e-19, where the truth
    is 2/x**3 - 1/x**2 + ..., inf in float32), or cancel (1/sin(x) - 1/x**2); p does not,
    and the divisions overflow only where the truth does. None where x**m*truth has no
    polynomial that meets it near 0 (a log term: x**2*log(x) + 1/x)."""
    exact = judge._mp_function(truth, (x,))
    m = _pole_order(exact)
    if m is None:
        return None
    textbook = naive(truth)
    if textbook.has(lgamma, sp.polygamma):
        # mpmath's polygamma at 200 digits took a minute for the numeric Taylor coefficients
        # (log(x) - digamma(x)''); SymPy's series, a tenth of a second.
        series = _laurent_polynomial(textbook, x, m)
    else:
        series = _numeric_taylor(lambda t: t**m * exact(t), x, singular=True)
    if series is None:
        return None
    poly = sp.lambdify(x, series, modules="mpmath")
    threshold, wide = _series_thresholds(exact, lambda d: poly(d) / d**m, sp.Integer(0))
    if wide is None:
        return None
    bound = _bound(threshold, wide)
    near = _polyval(series, x).xreplace({x: clip(x, -bound, bound)})
    for _ in range(m):
        near = ipow(near / x, 1)
    return sp.Piecewise((near.args[0], sp.Abs(x) < bound), (expr.xreplace({x: away(x, bound)}), True))


def _laurent_polynomial(textbook: sp.Expr, x: sp.Symbol, m: int) -> sp.Expr | None:
    """x**m times SymPy's Laurent series of the textbook form at 0, a polynomial, its
    coefficients as 20-digit numbers; with each polygamma(n, u), u = 0 at 0, first as
    polygamma(n, u + 1) - (-1)**n*n!/u**(n + 1) (SymPy has no series of polygamma at its
    pole). None for lgamma (a log at its pole), a polygamma but as a term of a sum, or a
    form too large to expand."""
    if not _expandable(textbook) or textbook.has(lgamma):
        return None
    # Each polygamma a term of a sum, times a number: SymPy's series of a quotient of them,
    # log1p(digamma(x))' = polygamma(1, x)/(1 + digamma(x)), ran for minutes.
    if not all(isinstance(t.as_coeff_Mul()[1], sp.polygamma) for t in sp.Add.make_args(textbook) if t.has(sp.polygamma)):
        return None
    gammas = textbook.atoms(sp.polygamma)
    if not all(_series_friendly(g.args[1], _nesting(textbook), x) for g in gammas):
        return None
    shifted = textbook.xreplace(
        {
            g: sp.polygamma(n, u + 1) - (-1) ** n * sp.factorial(n) / u ** (n + 1)
            for g in gammas
            if (n := g.args[0]).is_Integer and (u := g.args[1]).subs(x, 0) == 0
        }
    )
    try:
        scaled = sp.expand(sp.series(shifted, x, 0, SERIES_TERMS - m).removeO() * x**m)
    except (NotImplementedError, ValueError, TypeError, RecursionError, ArithmeticError, sp.PoleError):
        return None
    if scaled == 0 or not scaled.is_polynomial(x) or scaled.has(sp.log, sp.Abs, sp.sign):
        return None
    return _with_number_coefficients(scaled, x, 20)


def _pole_order(exact: Callable) -> int | None:
    """m where the truth is c/x**m + o(1/x**m) at 0 from both sides, an integer m >= 1 (its
    magnitude grows by 2**(100*m) from x = +-2**-200 to +-2**-300); else None."""
    orders = set()
    try:
        with mpmath.workdps(60):
            for side in (1, -1):
                near, nearer = (exact(side * mpmath.mpf(2) ** -e) for e in (200, 300))
                if not all(isinstance(v, mpmath.mpf) and mpmath.isfinite(v) and v != 0 for v in (near, nearer)):
                    return None
                growth = mpmath.log(abs(nearer / near), 2) / 100
                orders.add(int(mpmath.nint(growth)))
                if abs(growth - mpmath.nint(growth)) > 0.01:
                    return None
    except (ArithmeticError, ValueError, TypeError):
        return None
    m = orders.pop()
    return m if not orders and m >= 1 else None


def _series_in_abs(textbook: sp.Expr, x: sp.Symbol) -> tuple[sp.Expr, sp.Symbol] | None:
    """(the Taylor series of g at 0, its variable t) for a textbook form g(|x|) that depends
    on x only through |x|: abs has no Taylor series at 0, but g may (|x| - log(1 + |x|)
    cancels near 0, where it is x**2/2: 84% of the grid within 3 bits)."""
    if not textbook.has(sp.Abs):
        return None
    t = sp.Dummy("t", positive=True)
    g = textbook.xreplace({sp.Abs(x): t})
    if g.has(x) or g.has(sp.Abs, sp.sign):
        return None
    series = _symbolic_series(g, t)
    if series is None or not series.has(t):
        return None
    return series, t


def _series_by_side(textbook: sp.Expr, k: int, x: sp.Symbol) -> tuple[sp.Expr, sp.Expr] | None:
    """(A, B) with A + sign(x)*B the Taylor series at 0 of the textbook form's k-th
    derivative on each side of 0, for a form with abs or sign of arguments other than x
    alone (|sin x|/x). On each side of 0, near it, sign(u) is a constant: sign(u(0)), or
    c*sign(x)**m where u has a root of order m at 0. With S for sign(x), |u| is that
    constant times u, and the form is analytic in x; S**2 = 1. (abs has no Taylor series
    at 0: |sin x|/x's f'' was 1.0 near 0 where the truth is -1/3, 69% within 3 bits.)"""
    side = sp.Dummy("S", real=True)
    signs: dict[sp.Expr, sp.Expr] = {}
    for u in _kink_arguments(textbook) or ():
        at = _signs_beside_zero(u, x)
        if at is None:
            return None
        signs[u] = at[0] if at[0] == at[1] else at[0] * side
    if not signs:
        return None
    g = _with_signs(textbook, signs)
    # SymPy's series only where the main path takes it too: not of nested functions (the
    # fuzzer's log_sigmoid(acos(hypot(y, y)))' took over 300 s in it; 3 s without a series)
    # nor of lgamma or polygamma.
    if _nesting(g) > SERIES_MAX_NESTING or g.has(lgamma, sp.polygamma):
        return None
    series = _symbolic_series(g, x, k)
    if series is None:
        return None
    series = sp.expand(series).replace(lambda e: e.is_Pow and e.base == side, lambda e: side ** (e.exp % 2))
    even, odd = series.coeff(side, 0), series.coeff(side, 1)
    if not (even.has(x) or odd.has(x)) or not (even.is_polynomial(x) and odd.is_polynomial(x)):
        return None
    return even, odd


def _signs_beside_zero(u: sp.Expr, x: sp.Symbol) -> tuple[int, int] | None:
    """(sign of u just above 0, just below), alike at 1e-30 and 1e-60 from it; None where
    u is 0 or not real there, or its sign changes between the two (a root near 0, not at it)."""
    try:
        fn = judge._mp_function(u, (x,))
        with mpmath.workdps(120):
            values = [fn(s * mpmath.mpf(10) ** -e) for s in (1, -1) for e in (30, 60)]
    except (ArithmeticError, ValueError, TypeError):
        return None
    if not all(isinstance(v, mpmath.mpf) and v != 0 for v in values):
        return None
    up, up2, down, down2 = (int(mpmath.sign(v)) for v in values)
    if up != up2 or down != down2:
        return None
    return up, down


def _series_thresholds(exact: Callable, poly: Callable, center: sp.Rational) -> tuple[float | None, float | None]:
    """The largest of SERIES_THRESHOLDS at which the polynomial (in x - center) is exact on
    both sides to DOUBLE_TOLERANCE, and to SINGLE_TOLERANCE (each None if none is); a series
    away from 0 stays on its side of 0. Each threshold's values are computed once."""

    def error_at(t: float) -> object:
        if center != 0 and t >= abs(center):
            return None
        try:
            pairs = [(exact(mpmath.mpf(center) + d), poly(mpmath.mpf(d))) for d in (t, -t)]
            # Nor across a root of the truth, where the polynomial's terms cancel and its
            # relative error grows without bound: sin(pi*x)/(pi*x)'s series up to 1.5 was 30
            # bits off at x = 1.0000001, where sinpi(x)/(pi*x) is not.
            inside = [exact(mpmath.mpf(center) + d * mpmath.mpf(2) ** -10) for d in (t, -t)]
        except (ArithmeticError, ValueError, TypeError):
            return None
        if not all(mpmath.isfinite(true) for true, _ in pairs):
            return None
        if any(_opposite(true, near) for (true, _), near in zip(pairs, inside)):
            return None
        return max(abs(approx - true) / max(abs(true), mpmath.mpf(1e-300)) for true, approx in pairs)

    # The thresholds descend: the single one is found by the time the double one is.
    found = _first_within(SERIES_THRESHOLDS, error_at)
    return found.get(DOUBLE_TOLERANCE), found.get(SINGLE_TOLERANCE)


def _opposite(a: object, b: object) -> bool:
    """Whether a and b are real numbers of opposite signs."""
    return isinstance(a, mpmath.mpf) and isinstance(b, mpmath.mpf) and a * b < 0


def _first_within(thresholds: Sequence[float], error_at: Callable[[float], object]) -> dict[float, float]:
    """{tolerance: the first of `thresholds` whose error_at (None: not usable) is within it},
    for DOUBLE_TOLERANCE and SINGLE_TOLERANCE, at 40 digits; no further once the double is."""
    found: dict[float, float] = {}
    with mpmath.workdps(40):
        for t in thresholds:
            error = error_at(t)
            if error is None:
                continue
            for tolerance in (DOUBLE_TOLERANCE, SINGLE_TOLERANCE):
                if tolerance not in found and error <= tolerance:
                    found[tolerance] = t
            if DOUBLE_TOLERANCE in found:
                break
    return found


def _regular_at_zero(textbook: sp.Expr, x: sp.Symbol) -> bool:
    """Whether the textbook form has a finite value at 0 as written (no 0/0 to remove)."""
    try:
        value = textbook.subs(x, 0)
    except (ArithmeticError, ValueError, TypeError):
        return False
    return bool(value.is_number and value.is_finite and not value.has(sp.nan, sp.zoo))


def _series_source(textbook: sp.Expr, k: int, source: tuple[sp.Expr, int] | None) -> tuple[sp.Expr, int]:
    """(textbook, k) for _symbolic_series: f's textbook form and k where the truth is f's
    k-th derivative and f expands. The k-th derivative of f's series is the truth's series,
    and SymPy finds it far quicker than it expands the derivative as differentiated:
    asin(x)/expm1(x)'' took 37 s, from f 0.45 s."""
    if k == 0 and source is not None and source[1] > 0:
        f = naive(source[0])
        if _expandable(f):
            return f, source[1]
    return textbook, k


def _symbolic_series(textbook: sp.Expr, x: sp.Symbol, k: int = 0) -> sp.Expr | None:
    """SymPy's Taylor series at 0 of the textbook form, for a removable singularity there
    (sin(x)/x); differentiated k times. Not through abs or sign, which have no Taylor
    series at 0 (SymPy's of acosh(abs(x)**tanh(x)) ran for minutes), nor through a power
    with x in its base and exponent or a log of what vanishes at 0 (x**x is exp(x*log(x));
    SymPy's series of expm1(acos(x**x))' ran for minutes, to a result with log(x))."""
    if textbook.has(sp.Abs, sp.sign) or _branch_point_at_zero(textbook, x):
        return None
    try:
        series = sp.diff(sp.series(textbook, x, 0, SERIES_TERMS + k).removeO(), x, k)
    except (NotImplementedError, ValueError, TypeError, RecursionError, ArithmeticError, sp.PoleError):
        return None
    if not series.is_polynomial(x) or series.has(sp.log, sp.Abs, sp.sign):
        return None
    # lgamma's coefficients hold zeta values and Euler's constant, log(x + 2 + E)'s powers of
    # 2 + E: numbers, to 40 digits (sp.Poly expanded the latter's 26 quotients of polynomials
    # in E for minutes).
    terms = [t.as_coeff_exponent(x) for t in sp.Add.make_args(series)]
    irrational = not any(c.has(x) for c, _ in terms) and any(c.is_number and not c.is_Rational for c, _ in terms)
    if irrational or series.has(sp.zeta, sp.EulerGamma):
        return _with_number_coefficients(series, x, 40, terms)
    return series


def _with_number_coefficients(
    series: sp.Expr, x: sp.Symbol, digits: int, terms: list[tuple[sp.Expr, sp.Expr]] | None = None
) -> sp.Expr:
    """A polynomial in x with each coefficient (zeta values, pi's powers) as a number: term by
    term where each is a constant times a power of x, as SymPy's series writes them, else
    through sp.Poly (a coefficient with a parameter in it stays as it is). `terms`: the
    series' (coefficient, exponent) per term, where the caller has them."""
    if terms is None:
        terms = [t.as_coeff_exponent(x) for t in sp.Add.make_args(series)]
    if not all(m.is_Integer and m >= 0 and not c.has(x) for c, m in terms):
        terms = [(c, m) for (m,), c in sp.Poly(series, x).terms()]
    return sp.Add(*(sp.Float(sp.N(c, digits), digits) * x**m if c.is_number else c * x**m for c, m in terms))


def _branch_point_at_zero(e: sp.Expr, x: sp.Symbol) -> bool:
    """Whether `e` has x**g(x), a fractional power of what vanishes at 0 (sqrt(x): SymPy's
    series of expm1(expm1(sqrt(x)))'' at 0 ran for minutes), log(u) with u = 0 at x = 0,
    lgamma or polygamma at a pole, atan2 at the origin, or an inverse function at a branch
    point (_BRANCH_POINTS): no Taylor series there."""
    for p in e.atoms(sp.Pow):
        if _in_base_and_exponent(p, x):
            if not _power_analytic_at_zero(p, x):
                return True
            continue
        if _fractional(p.exp) and p.base.has(x):
            try:
                if p.base.subs(x, 0) == 0:
                    return True
            except (ArithmeticError, ValueError, TypeError):
                continue
    for log in e.atoms(sp.log):
        try:
            if log.args[0].subs(x, 0) == 0:
                return True
        except (ArithmeticError, ValueError, TypeError):
            continue
    # lgamma and polygamma at a pole of gamma (cos(lgamma(x)) is cos(-log(x) + ...): SymPy's
    # series of it ran for minutes), atan2 at the origin (logaddexp(atan2(y, y), erfc(y))),
    # and the inverse functions at their branch points (atanh(erfc(x)) is atanh(1) at 0).
    for g in e.atoms(lgamma, sp.polygamma, sp.atan2, *_BRANCH_POINTS):
        try:
            if isinstance(g, sp.atan2):
                if all(a.subs(x, 0) == 0 for a in g.args):
                    return True
                continue
            at_zero = g.args[-1].subs(x, 0)
            if type(g) in _BRANCH_POINTS:
                if at_zero in _BRANCH_POINTS[type(g)]:
                    return True
            elif at_zero.is_integer and at_zero.is_nonpositive:
                return True
        except (ArithmeticError, ValueError, TypeError):
            continue
    return False


def _fractional(w: sp.Expr) -> bool:
    """Whether w is a real number other than an integer: 1/3, but also pi/4 and 0.3, whose
    powers SymPy expands as slowly (expm1(x)**(pi/4)'s series at 0 took 25 s, to nothing)."""
    if not (w.is_number and w.is_extended_real) or w.is_Integer:
        return False
    return not (w.is_Float and float(w).is_integer())


def _power_analytic_at_zero(p: sp.Pow, x: sp.Symbol) -> bool:
    """Whether u**v, x in both, is exp(v*log(u)) with u(0) > 0 and v*log(u) tending to one
    finite value from both sides of 0 (judge.limit_at_zero): (1 + x)**(1/x) is
    exp(log1p(x)/x), analytic at 0; x**x (u(0) = 0) and (2 + x)**(1/x) (v*log(u) unbounded)
    are not."""
    try:
        at_zero = p.base.subs(x, 0)
    except (ArithmeticError, ValueError, TypeError):
        return False
    if not (at_zero.is_number and at_zero.is_finite and at_zero.is_positive):
        return False
    return judge.limit_at_zero(naive(p.exp * sp.log(p.base)), (x,)) is not None


def _in_base_and_exponent(p: sp.Pow, x: sp.Symbol) -> bool:
    return p.exp.has(x) and p.base.has(x)


# Arguments at which these functions have no Taylor series (a log or a square root there).
_BRANCH_POINTS: dict[type, tuple[sp.Expr, ...]] = {
    sp.atanh: (sp.Integer(1), sp.Integer(-1)),
    sp.asin: (sp.Integer(1), sp.Integer(-1)),
    sp.acos: (sp.Integer(1), sp.Integer(-1)),
    sp.acosh: (sp.Integer(1),),
    log1p: (sp.Integer(-1),),
}


# Functions of a polynomial whose lgamma or polygamma SymPy expands at 0 in seconds, where
# nothing is nested around them (erf(digamma(exp(x))) took minutes; digamma(erfc(x)) 6 s).
_QUICK_SERIES = (sp.exp, sp.sin, sp.cos, sp.sinh, sp.cosh)


def _series_friendly(u: sp.Expr, nesting: int, x: sp.Symbol) -> bool:
    """Whether u, an argument of lgamma or polygamma in a textbook form whose functions are
    nested `nesting` deep, is a polynomial in x, or one of _QUICK_SERIES of one in a form
    nested two deep at most (lgamma(exp(x)))."""
    if u.is_polynomial(x):
        return True
    return isinstance(u, _QUICK_SERIES) and u.args[0].is_polynomial(x) and nesting <= 2


def _nesting(e: sp.Expr) -> int:
    """How deep functions are nested in `e` (powers and arithmetic do not count)."""
    inner = max((_nesting(a) for a in e.args), default=0)
    return inner + 1 if isinstance(e, sp.Function) else inner


def _numeric_taylor(exact: Callable, x: sp.Symbol, singular: bool = False, k: int = 0) -> sp.Expr | None:
    """The Taylor polynomial at 0 from mpmath's derivatives at 200 digits, for a function
    that is regular there: SymPy's series of tanh(softplus(x))'' ran for minutes. Below
    1e-60 of the largest, a coefficient is taken as 0 (so that odd and even functions
    keep their parity). `singular`: from points around 0 only, for a form that is 0*inf or
    0/0 at 0 itself (the caller's thresholds check the polynomial against the function).
    With k > 0, the k-th derivative of the polynomial (`exact` being the function's)."""
    try:
        with mpmath.workdps(200):
            coeffs = mpmath.taylor(exact, 0, SERIES_TERMS - 1 + k, singular=singular)
            if singular:
                # mpmath takes the constant term as f(h/2) at h = 2**-684 with 684 bits, where
                # the form's own cancellation leaves nothing (log(cosh(h))/h**2 is log(1)/h**2
                # = 0 for 1/2). The mean at +-2**-100 is within 2**-200 of it.
                d = mpmath.mpf(2) ** -100
                coeffs[0] = (exact(d) + exact(-d)) / 2
    except (ArithmeticError, ValueError, TypeError):
        return None
    if not all(isinstance(c, mpmath.mpf) and mpmath.isfinite(c) for c in coeffs):
        return None
    largest = max(abs(c) for c in coeffs)
    if not largest:
        return None
    kept = [c if abs(c) > largest * mpmath.mpf(10) ** -60 else 0 for c in coeffs]
    return sp.diff(sp.Add(*(sp.Float(c, 20) * x**m for m, c in enumerate(kept) if c)), x, k)


def _expandable(textbook: sp.Expr) -> bool:
    """Whether SymPy's series of the textbook form is bounded in size and time."""
    return sp.count_ops(textbook) <= SERIES_MAX_OPS and not _has_opaque_constants(textbook)


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
