"""Stabilisation: rewrite naive forms into stable primitives and safe shapes.

A catalogue of named rules, in the manner of SymPy's ``codegen.rewriting``:
each rule recognises one naive shape (``log(1 + exp(u))``, ``1 - cos(u)``,
``x**2 * exp(-x**2)``...) and returns an equal expression that stays finite
and accurate in floating point. ``optimize(expr, RULES)`` applies them bottom
up until nothing changes. The rules know nothing of particular user functions;
they work on shapes.
Hands on: expressions over SymPy functions and the primitives in
``generator.primitives``.
"""

from __future__ import annotations

import functools
import itertools
import math
import struct
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import mpmath
import sympy as sp

from generator.primitives import (
    add_error,
    bounded_error,
    by_dtype,
    clip,
    compensated_sum,
    cospi,
    division_error,
    erfc,
    exp_finite,
    expm1,
    factor_polynomial,
    finite,
    hypot,
    hypot_ratio,
    hypot_ratio_gap,
    pnorm,
    ipow,
    is_held,
    lbeta,
    lgamma,
    lgamma_diff,
    lgamma_kernel,
    lift,
    log_digamma_gap,
    log1mexp,
    log1p,
    log1pmx,
    expm1mx,
    log_mix,
    logaddexp,
    logcosh,
    lowered,
    lowered_no_nan,
    mills,
    mills_curvature,
    mills_gap,
    mills_gap_slope,
    mul_exp,
    mul_pow,
    mul_no_nan,
    naive,
    numeric,
    pick,
    polygamma_diff,
    polyval,
    product_error,
    sigmoid,
    sigmoid_from_exp,
    sigmoid_slope,
    sinpi,
    softplus,
    split_power,
    square_error,
    sub_error,
    tanh_softplus,
    tanh_softplus_slope,
    xlog1py,
    xlogy,
)


@dataclass(frozen=True)
class Rule:
    """A named rewrite: `rewrite(node)` returns a replacement, or None to leave the node alone.

    Calling the rule rewrites an expression bottom up, `passes` times at most (until
    nothing changes): a rewrite that peels one step at a time needs several. A
    `top_down` rule rewrites the largest nodes it matches and leaves their insides alone.
    """

    name: str
    why: str
    rewrite: Callable[[sp.Expr], sp.Expr | None]
    passes: int = 1
    top_down: bool = False
    # A variant also applied to the other variants' forms: its rewrite is independent of
    # theirs (a difference of squares inside multiply_no_nan's argument).
    stacks: bool = False
    # A variant applied to the forms of these variants only.
    stacks_on: tuple[str, ...] = ()

    def __call__(self, expr: sp.Expr) -> sp.Expr:
        walk = _top_down if self.top_down else _bottom_up
        # A rewrite is a function of the node alone, and the same subexpressions come back
        # in every candidate and every order, so each walk's result is remembered per
        # subtree: x**2*y/(x**4 + y**2) took 31 s, with _scale_quotient and _rational_far
        # called 35,000 times each on a few hundred distinct nodes.
        if sum(map(len, _WALKS.values())) >= _WALKS_MAX:
            _WALKS.clear()
        memo = _WALKS.setdefault((self.rewrite, self.top_down), {})
        for _ in range(self.passes):
            after = walk(expr, self.rewrite, memo)
            if after == expr:
                break
            expr = after
        return expr


_Rewrite = Callable[[sp.Expr], "sp.Expr | None"]
_WALKS: dict[tuple[_Rewrite, bool], dict[sp.Basic, sp.Expr]] = {}
_WALKS_MAX = 500_000


def _bottom_up(expr: sp.Expr, rewrite: _Rewrite, memo: dict[sp.Basic, sp.Expr]) -> sp.Expr:
    if expr in memo:
        return memo[expr]
    result = expr
    if expr.args:
        new_args = tuple(_bottom_up(arg, rewrite, memo) for arg in expr.args)
        if new_args != expr.args and not _where_into_comparison(expr, new_args):
            result = expr.func(*new_args)
    replaced = _rewritten(rewrite, result)
    memo[expr] = result = result if replaced is None else replaced
    return result


def _rewritten(rewrite: _Rewrite, node: sp.Expr) -> sp.Expr | None:
    """rewrite(node), or None (no rewrite) where SymPy's polynomial algebra gives up on the
    node: its heuristic gcd raised HeuristicGCDFailed putting the slope of atanh(x)**sqrt(x)
    over a common denominator (less_argument, fuzz seed 134: exit 123)."""
    try:
        return rewrite(node)
    except sp.polys.polyerrors.BasePolynomialError:
        return None


def _where_into_comparison(expr: sp.Basic, new_args: tuple[sp.Basic, ...]) -> bool:
    """Whether rewritten arguments would put a where into a comparison that had none. A
    comparison decides a branch from the sign of a difference, not its last bits, and a where
    in it costs SymPy's work: a where's condition holding one is rewritten as an
    if-then-else, whose sets SymPy solves for (max(log2(log10(x)), log1mexp(y)) took over
    300 s in log_of_ratio's variant, fuzz seed 2703)."""
    return isinstance(expr, sp.core.relational.Relational) and not expr.has(sp.Piecewise) and any(
        arg.has(sp.Piecewise) for arg in new_args
    )


def _top_down(expr: sp.Expr, rewrite: _Rewrite, memo: dict[sp.Basic, sp.Expr]) -> sp.Expr:
    if expr in memo:
        return memo[expr]
    result = _rewritten(rewrite, expr)
    if result is None:
        result = expr
        if expr.args:
            new_args = tuple(_top_down(arg, rewrite, memo) for arg in expr.args)
            if new_args != expr.args and not _where_into_comparison(expr, new_args):
                result = expr.func(*new_args)
    memo[expr] = result
    return result


def _exp_arg(term: sp.Expr) -> sp.Expr | None:
    """u if term is exp(u), 0 if term is 1, else None."""
    if isinstance(term, sp.exp):
        return term.args[0]
    if term == 1:
        return sp.Integer(0)
    return None


def _difference_of_exps(total: sp.Expr) -> tuple[sp.Expr, sp.Expr] | None:
    """(a, b) for a sum exp(a) - exp(b), a != b (a 1 is exp(0)); None for anything else."""
    if not isinstance(total, sp.Add) or len(total.args) != 2:
        return None
    for plus, minus in (total.args, total.args[::-1]):
        a, b = _exp_arg(plus), _exp_arg(-minus)
        if a is not None and b is not None and a != b:
            return a, b
    return None


def _split_one(expr: sp.Expr, sign: int = 1) -> sp.Expr | None:
    """rest if expr == sign*1 + rest (an Add with a literal ±1), else None."""
    if not isinstance(expr, sp.Add):
        return None
    if sp.Integer(sign) not in expr.args:
        return None
    return sp.Add(*[a for a in expr.args if a != sign]) if len(expr.args) > 2 else next(
        a for a in expr.args if a != sign
    )


# --- logarithms --------------------------------------------------------------


def _log_sum_exp(args: Sequence[sp.Expr]) -> sp.Expr:
    """log(exp(a1) + exp(a2) + ...) folded into logaddexp (softplus where an argument is
    0), in SymPy's sort order: logaddexp(logaddexp(a1, a2), a3) for three. A 1 = exp(0)
    goes last, log(1 + exp(a) + exp(b)) = softplus(logaddexp(a, b)), but first where the
    arguments are in different inputs, which can all be far below 0 at once: there
    softplus(logaddexp(x, y)) rounds the inner sum's argument where the whole is tiny
    (log(exp(x) + exp(y) + 1) 4.6 bits off at x = y = -81.8, 96.5% of 400 points within 3
    bits), and logaddexp(softplus(x), y) does not (100%). Not for log(1 + exp(x) + exp(-x)),
    whose slopes measured worse so (f'' 100% -> 96.0%)."""
    ordered = sorted(args, key=sp.default_sort_key)
    zeros = ordered.count(0)
    ordered = [a for a in ordered if a != 0]
    inputs = [a.free_symbols for a in ordered]
    apart = len(ordered) >= 2 and sum(len(s) for s in inputs) == len(set().union(*inputs))
    if zeros == 1 and apart:
        ordered[0] = softplus(ordered[0])
        zeros = 0
    # Otherwise each 1 counts, last: log(2 + exp(a)) is softplus(softplus(a)) (fuzz seed 5077
    # took the two 1s of logaddexp(a, logaddexp(1, 1)) - 1 as one).
    ordered += [sp.Integer(0)] * zeros
    total = ordered[0]
    for a in ordered[1:]:
        total = softplus(total) if a == 0 else logaddexp(*sorted((total, a), key=sp.default_sort_key))
    return total


def _log_argument(node: sp.Expr) -> sp.Expr | None:
    """u for log(u), and 1 + u for log1p(u): users write log1p(exp(x)) for softplus too."""
    if isinstance(node, sp.log):
        return node.args[0]
    if isinstance(node, log1p):
        return 1 + node.args[0]
    return None


def _log_of_sum_of_exps(node: sp.Expr) -> sp.Expr | None:
    """log(exp(a) + exp(b) + ...) -> logaddexp(a, b, ...) (1 counts as exp(0)); log1p too.
    Also with positive numbers as weights, c*exp(a) as exp(a + log(c)), a number c as
    exp(log(c)), and a positive number times the sum taken into its terms: a mixture's
    log-likelihood log(0.3*exp(-x**2/2) + 0.7*exp(-(x - 3)**2/2)) was -inf beyond x = 16,
    where both terms underflow (the truth is about -85 at x = 16)."""
    argument = _log_argument(node)
    if argument is None or not argument.free_symbols:
        # A constant is a number in the module. SymPy's Piecewise of two constant forms
        # compared them, log1p(softplus(e)) = log(2 + exp(e)) with weights, through nested
        # as_real_imag for over 120 s (fuzz seed 151).
        return None
    if isinstance(argument, sp.Mul):
        scale, total = argument.as_independent(*argument.free_symbols, as_Add=False)
        if not (isinstance(total, sp.Add) and scale.is_positive):
            return None
        argument = sp.Add(*(scale * t for t in total.args), evaluate=False)
    if not isinstance(argument, sp.Add):
        return None
    args = [_exp_arg(t) for t in argument.args]
    if None in args:
        weighted = [_weight_and_exponent(t) for t in sorted(argument.args, key=sp.default_sort_key)]
        if None in weighted:
            return None
        if len(weighted) == 2:
            (a, wa), (b, wb) = weighted
            total = wa + wb
            if total == 1:
                # A mixture: no constant outside, where the weights' logs in the arguments
                # cancel near 0 (the log-mean-exp log((exp(x) + exp(y))/2) at x = y = 8e-10).
                return log_mix(a, b, wa)
            # Otherwise the larger term's weight and argument outside, the other's ratio to it
            # in log1p: log(1 + 2*exp(x)) is log1p(2*exp(x)) for x < -log(2), where
            # log(3) + log_mix(0, x, 1/3) cancels to log(3) - log(3) (28 bits off at x = -30).
            return sp.Piecewise(
                (_weighted_log1p(a, wa, b, wb), a - b >= sp.log(wb / wa)),
                (_weighted_log1p(b, wb, a, wa), True),
            )
        args = [u + sp.log(c) for u, c in weighted]
    if args.count(0) > 1:
        return None
    return _log_sum_exp(args)


def _weighted_log1p(a: sp.Expr, wa: sp.Expr, b: sp.Expr, wb: sp.Expr) -> sp.Expr:
    """log(wa*exp(a) + wb*exp(b)) as log(wa) + a + log1p((wb/wa)*exp(b - a)), for the larger
    term a's: the product held, which _log_of_sum_of_exps would take again."""
    return sp.log(wa) + a + log1p(ipow(wb / wa * sp.exp(b - a), 1))


def _weight_and_exponent(term: sp.Expr) -> tuple[sp.Expr, sp.Expr] | None:
    """(u, c) for a term c*exp(u) with c a positive number, or (0, c) for a positive number
    c; else None."""
    if term.is_number:
        return (sp.Integer(0), term) if term.is_positive else None
    weight, rest = term.as_independent(*term.free_symbols, as_Add=False)
    return (rest.args[0], weight) if isinstance(rest, sp.exp) and weight.is_positive else None


def _logaddexp_less_argument(node: sp.Expr) -> sp.Expr | None:
    """logaddexp(a, b, ...) - a = logaddexp(0, b - a, ...), softplus(b - a) for two: the
    difference cancels where a dominates (log(exp(x) + exp(y)) - x at x = y = -2.5e38 is
    -2.5e38 - (-2.5e38) = 0; the truth is log(2)). Also a - logaddexp(a, b, ...), the log
    of a softmax probability (exp(x - logaddexp(x, y)) was exp(0) = 1 at x = y = -1e19, the
    truth 1/2). softplus(u) is logaddexp(0, u), and a term of an argument counts as well as
    the whole: softplus(x - y) - x = logaddexp(-x, -y) (x - log(1 + exp(x - y)) was 0 at
    x = 3.7e25, y = 20; the truth is 20)."""
    if not isinstance(node, sp.Add):
        return None
    for term in node.args:
        sign, lse = term.as_coeff_Mul()
        if not (isinstance(lse, (logaddexp, softplus)) and sign in (1, -1)):
            continue
        leaves = [sp.Integer(0), *lse.args] if isinstance(lse, softplus) else _logaddexp_leaves(lse)
        parts = {part for leaf in leaves for part in sp.Add.make_args(leaf)}
        # Every leaf (or term of one) among the other terms goes in: x + y - logaddexp(x, y)
        # is -logaddexp(-x, -y); shifted by x alone it was y - softplus(y - x), which
        # cancels where y dominates.
        matched = [other for other in node.args if other is not term and -sign * other in parts]
        if matched:
            rest = sp.Add(*(t for t in node.args if t is not term and t not in matched))
            shift = sp.Add(*matched)
            return rest + sign * _log_sum_exp([leaf + sign * shift for leaf in leaves])
    return None


def _logaddexp_leaves(term: sp.Expr) -> list[sp.Expr]:
    """The arguments of nested logaddexp calls: logaddexp(z, logaddexp(x, y)) has x, y, z."""
    if not isinstance(term, logaddexp):
        return [term]
    return [leaf for arg in term.args for leaf in _logaddexp_leaves(arg)]


def _log_one_minus_exp(node: sp.Expr) -> sp.Expr | None:
    argument = _log_argument(node)
    if argument is None:
        return None
    rest = _split_one(argument)
    if rest is None:
        return None
    # log(1 - exp(u)) only; log(1 - expm1(u)) is log(2 - exp(u)) and stays.
    if isinstance(rest, sp.Mul) and len(rest.args) == 2 and rest.args[0] == -1 and isinstance(rest.args[1], sp.exp):
        return log1mexp(-rest.args[1].args[0])
    return None


def _log_of_expm1(node: sp.Expr) -> sp.Expr | None:
    """log(-expm1(-u)) = log1mexp(u), and log(expm1(u)) = u + log1mexp(u): expm1 overflows
    for u > 88.7, where its log is about u, and -expm1(-u) rounds to 1 where its log is
    -exp(-u) (log(-expm1(-x)) at x = 20 is 0; the truth is -2.1e-9). Real where u > 0,
    as the logs are."""
    if not isinstance(node, sp.log):
        return None
    argument = node.args[0]
    if isinstance(argument, expm1):
        u = argument.args[0]
        return u + log1mexp(u)
    if isinstance(-argument, expm1):
        return log1mexp(-(-argument).args[0])
    return None


def _log_one_plus(node: sp.Expr) -> sp.Expr | None:
    if not isinstance(node, sp.log):
        return None
    rest = _split_one(node.args[0])
    if rest is None:
        return None
    return log1p(rest)


def _log_of_sigmoid(node: sp.Expr) -> sp.Expr | None:
    if isinstance(node, sp.log) and isinstance(node.args[0], sigmoid):
        return -softplus(-node.args[0].args[0])
    if isinstance(node, sp.log) and isinstance(node.args[0], sp.Pow) and isinstance(node.args[0].base, sigmoid):
        base, power = node.args[0].args
        return -power * softplus(-base.args[0])
    return None


# log_softplus takes u - exp(u)/2 below this u: the next term, (5/24)*exp(2u), is then
# below 2**-60 of the result.
SOFTPLUS_LOG_BELOW = -20


def _log_of_softplus(node: sp.Expr) -> sp.Expr | None:
    """log(softplus(u)) = u + log(log1p(t)/t), t = exp(u), which is u - t/2 + 5*t**2/24 - ...:
    u - exp(u)/2 for u < -20; softplus(u) flushes to 0 from u = -103.3 (float32), where the
    log is about u (log(softplus(x)) was -inf, and lgamma(softplus(x)) inf). Above, the
    log of softplus, kept in ipow so that this rule leaves it."""
    if not (isinstance(node, sp.log) and isinstance(node.args[0], softplus)):
        return None
    u = node.args[0].args[0]
    if u.is_number:
        return None
    return sp.Piecewise((u - sp.exp(u) / 2, u < SOFTPLUS_LOG_BELOW), (sp.log(ipow(node.args[0], 1)), True))


def _log_of_cosh(node: sp.Expr) -> sp.Expr | None:
    if isinstance(node, sp.log) and isinstance(node.args[0], sp.cosh):
        return logcosh(node.args[0].args[0])
    return None


def _log_of_tanh(node: sp.Expr) -> sp.Expr | None:
    """log(tanh(u)) = log(1 - exp(-2u)) - log(1 + exp(-2u)) = log1mexp(2u) - softplus(-2u), real
    where u > 0 as the log is: tanh(u) rounds to 1 for u > 9, where the truth is -2*exp(-2u)."""
    if isinstance(node, sp.log) and isinstance(node.args[0], sp.tanh):
        u = node.args[0].args[0]
        return log1mexp(2 * u) - softplus(-2 * u)
    return None


def _acosh_near_one(node: sp.Expr) -> sp.Expr | None:
    """acosh(1 + u) = 2*asinh(sqrt(u/2)), from cosh(2t) = 1 + 2*sinh(t)**2: 1 + u rounds to 1
    for |u| < 6e-8 (acosh(1 + x**2) is 0 for |x| < 2.4e-4, where the truth is sqrt(2)*|x|),
    and u's own bits survive in the asinh. Real where u >= 0, as the acosh is."""
    if not isinstance(node, sp.acosh):
        return None
    (w,) = node.args
    # A function's distance above 1 as a form that keeps its own bits: expm1(v),
    # 2*sinh(v/2)**2, -erf(v) (acosh(exp(x)) is 0 for 0 < x < 6e-8, where the truth is
    # sqrt(2*x)).
    u = _cancelled(w - 1, w) if len(w.args) == 1 and not w.args[0].is_number else None
    if u is None:
        constant, u = w.as_coeff_Add()
        if constant != 1 or not u.free_symbols:
            return None
    return 2 * sp.asinh(sp.sqrt(u / 2))


def _inverse_sine_near_one(node: sp.Expr) -> sp.Expr | None:
    """acos and asin of c + u, c = +-1, through 2*asin(sqrt(t/2)), t = |u|, from cos(2a) =
    1 - 2*sin(a)**2: c + u rounds where acos and asin are steep (acos(1 - x) is 0 for
    x < 6e-8, where the truth is sqrt(2*x)), and t's own bits survive in the asin. Where c + u
    nears the other end of the domain, sqrt(t/2) nears 1 and rounds where asin is steep,
    while c + u is exact there (Sterbenz): for t >= 1 (acos) and t >= 1/2 (asin, whose
    pi/2 - 2*asin(...) also cancels towards t = 1) the function of c + u stays, its argument
    kept in ipow so that this rule leaves it."""
    if not isinstance(node, (sp.acos, sp.asin)):
        return None
    (w,) = node.args
    ends = _distances_to_ends(w)
    of_function = ends is not None
    if ends is None:
        constant, u = w.as_coeff_Add()
        if abs(constant) != 1 or not u.free_symbols:
            return None
        ends = [(constant, -u if constant == 1 else u)]  # t >= 0 on the domain
    branches = []
    for constant, t in ends:
        half = 2 * sp.asin(sp.sqrt(t / 2))
        if isinstance(node, sp.acos):
            near, bound = (half if constant == 1 else sp.pi - half), sp.Integer(1)
        else:
            near, bound = constant * (sp.pi / 2 - half), sp.Rational(1, 2)
        branches.append((near, t < bound))
    if of_function and isinstance(node, sp.acos):
        # The last end's form serves wherever the others' do not: the function's values lie
        # in [-1, 1] (exp and sigmoid in (0, 1]), t <= 1 there, and at t = 1 (w = 0) every
        # form is pi/2. No acos(w) beside it, computed for nothing (acos(exp(x)) took 2.2x the
        # time of its one form so).
        return sp.Piecewise(*branches[:-1], (branches[-1][0], True)) if len(branches) > 1 else branches[0][0]
    return sp.Piecewise(*branches, (node.func(ipow(w, 1)), True))


def _distances_to_ends(w: sp.Expr) -> list[tuple[int, sp.Expr]] | None:
    """(c, |w - c|) for each end c = +-1 of [-1, 1] that a function `w` nears, its distance
    as a form that keeps its own bits, where the cancellation rules make one of 1 -+ w
    (1 - exp(v) = -expm1(v), 1 - cos(v) = 2*sin(v/2)**2, 1 - erf(v) = erfc(v), 1 - tanh(v) =
    2*sigmoid(-2*v)); None for other `w`. acos(exp(x)) is 0 for -3e-8 < x < 0, where exp(x)
    rounds to 1 and the truth is sqrt(2*|x|)."""
    if len(w.args) != 1 or w.args[0].is_number:
        return None
    ends = [(c, t) for c in (1, -1) if (t := _cancelled(1 - c * w, w)) is not None]
    return ends or None


def _cancelled(difference: sp.Expr, w: sp.Expr) -> sp.Expr | None:
    """A distance of `w` from an end (1 - w, w - 1, ...) as a cancellation rule writes it
    without `w`, if one does and it can be positive: 1 - cosh(v) = -2*sinh(v/2)**2 is no
    end that cosh nears from below (SymPy would make acos of it complex)."""
    for rewrite in (_exp_minus_one, _one_minus_cos, _erf_complements, _one_plus_tanh, _one_minus_sigmoid):
        form = rewrite(difference)
        if form is not None and not form.has(w):
            return None if form.is_nonpositive else form
    return None


def _x_log_x(node: sp.Expr) -> sp.Expr | None:
    """u*log(u) = xlogy(u, u); for u = w**n, n*xlogy(u, |w|) (n*xlogy(u, w) for odd n): log
    of the power rounds near |w| = 1, where the log is near 0, and is log(0) where the
    power flushes."""
    if not isinstance(node, sp.Mul):
        return None
    for factor in node.args:
        powered = _power_times_log_power(node, factor, sp.log)
        if powered is not None:
            return powered
        # Not for a number: 2*log(2) is a constant, not 0*inf anywhere.
        if not isinstance(factor, sp.log) or factor.args[0].is_number:
            continue
        u = factor.args[0]
        rest = [f for f in node.args if f is not factor]
        if u in rest:
            rest.remove(u)
            w, n = u.as_base_exp()
            if n.is_Integer and n >= 2 and not w.is_number:
                return n * sp.Mul(*rest) * xlogy(u, sp.Abs(w) if n % 2 == 0 else w)
            return sp.Mul(*rest) * xlogy(u, u)
        # A positive power of u: sqrt(x)*log(x) and x**2*log(x) are 0*inf = NaN at 0 too.
        # Above the first power, u**(p - 1)*xlogy(u, u): x**2 flushes at x = 1e-19, where
        # x**2*log(x) = -4.4e-37 does not.
        power = _power_of(rest, u, lambda p: p.is_positive)
        if power is not None:
            rest.remove(power)
            p = power.as_base_exp()[1]
            # Not p > 1, which SymPy cannot decide for an exponent that is an input's
            # (sigmoid(y) in lbeta(x, 1)**sigmoid(y), fuzz seed 2601: TypeError).
            if (p - 1).is_positive:
                return sp.Mul(*rest) * ipow(u, p - 1) * xlogy(u, u)
            return sp.Mul(*rest) * xlogy(power, u)
        # log|w| beside a power w**k, k >= 1: x**2*log|x| (a thin-plate spline) is 0*(-inf)
        # at x = 0, and flushes from |x| = 1e-19; x**(k - 1)*xlogy(x, |x|) is 0 and does not.
        if isinstance(u, sp.Abs):
            w = u.args[0]
            power = _power_of(rest, w, lambda k: k.is_Integer and k >= 1)
            if power is not None:
                rest.remove(power)
                k = power.as_base_exp()[1]
                return sp.Mul(*rest) * (ipow(w, k - 1) if k > 1 else 1) * xlogy(w, u)
    return None


def _x_log1p_x(node: sp.Expr) -> sp.Expr | None:
    """(1 + v)*log1p(v) = xlog1py(1 + v, v), and -(1 + v)*log1p(v): 0*log(0) = NaN where
    v = -1, whose limit is 0 (a binary entropy's (1 - x)*log(1 - x) at x = 1)."""
    if not isinstance(node, sp.Mul):
        return None
    for factor in node.args:
        if isinstance(factor, log1p) and not factor.args[0].is_number:
            a = 1 + factor.args[0]
            rest = [f for f in node.args if f is not factor]
            for sign in (1, -1):
                if sign * a in rest:
                    rest.remove(sign * a)
                    return sign * sp.Mul(*rest) * xlog1py(a, factor.args[0])
        powered = _power_times_log_power(node, factor, log1p)
        if powered is not None:
            return powered
    return None


def _factor_of_its_log(node: sp.Expr) -> sp.Expr | None:
    """u*g = mul_no_nan(g, u) where every log in g holds u (or -u) as a factor of its argument
    and g has no other way to be infinite at u = 0: p*log(p/q), a KL divergence's term, is
    0*log(0) = NaN at p = 0, whose limit is 0, and the rules have written the log as a where
    of log(p*sign(q)) - log|q| and log1p((p - q)/q), whose far branch xlogy cannot take.
    (Also where g is finite at u = 0: u*g is 0 there too.)"""
    if not isinstance(node, sp.Mul) or not node.has(sp.log):
        return None
    for u in node.args:
        if u.is_number or isinstance(u, (sp.log, log1p)) or not u.free_symbols:
            continue
        # The other factors looked at one by one, their product built only when it is the
        # answer: the judge asks this of every candidate (derive.as_judged).
        others = [f for f in node.args if f is not u]
        logs = set().union(*(f.atoms(sp.log) for f in others))
        if not logs or not all(_holds_factor(g.args[0], u) for g in logs if g.has(*u.free_symbols)):
            continue
        if any(_blows_up_at_zero(e, u) for f in others for e in sp.preorder_traversal(f)):
            continue
        return mul_no_nan(sp.Mul(*others), u)
    return None


def _holds_factor(arg: sp.Expr, u: sp.Expr) -> bool:
    """u, -u or |u| is a factor of `arg`: log(arg) is infinite where u is 0 (log|x| as log(x),
    in x*(1 + 2*log|x|))."""
    factors = sp.Mul.make_args(arg)
    if u in factors:
        return True
    # Not sp.Abs(u): SymPy's abs of a large u asks its assumptions (seconds over a choice).
    negative = -u
    return negative in factors or any(isinstance(f, sp.Abs) and f.args[0] in (u, negative) for f in factors)


def _blows_up_at_zero(e: sp.Expr, u: sp.Expr) -> bool:
    """e may be infinite where u is 0 other than by a log of a multiple of u: a power (or
    ipow), not known nonnegative, of something with u's inputs in it, or a function of them
    other than log, log1p, sign, abs and where."""
    if e.is_Pow or isinstance(e, ipow):
        base, power = e.args
        return power.is_negative is not False and base.has(*u.free_symbols)
    if isinstance(e, sp.Function) and not isinstance(e, (sp.log, log1p, sp.sign, sp.Abs, sp.Piecewise)):
        return e.has(*u.free_symbols)
    return False


def _power_times_log_power(node: sp.Mul, factor: sp.Expr, kind: type) -> sp.Expr | None:
    """u**w*log(u)**n = xlogy(...xlogy(u**w, u)..., u), n times, for an exponent w with an
    input in it, and (1 + v)**w*log1p(v)**n with xlog1py: d/dy of x**y is x**y*log(x), and
    d2/dy2 x**y*log(x)**2, 0*(-inf) at x = 0 for y > 0, whose limit is 0 (as (1 - x)**y's at
    x = 1); xlogy is x**y*log(x) wherever x**y != 0."""
    log_factor, n = factor.as_base_exp()
    # Not of a number: 2**y*log(2), d/dy of 2**y, is 0*inf nowhere.
    if not (isinstance(log_factor, kind) and n.is_Integer and n >= 1) or log_factor.args[0].is_number:
        return None
    v = log_factor.args[0]
    u, times_log = (v, xlogy) if kind is sp.log else (1 + v, xlog1py)
    rest = [f for f in node.args if f is not factor]
    power = _power_of(rest, u, _has_input)
    if power is None:
        return None
    rest.remove(power)
    result = power
    for _ in range(int(n)):
        result = times_log(result, v)
    return sp.Mul(*rest) * result


def _has_input(exponent: sp.Expr) -> bool:
    return bool(exponent.free_symbols)


def _power_of(factors: Iterable[sp.Expr], base: sp.Expr, exponent_ok: Callable[[sp.Expr], bool]) -> sp.Expr | None:
    """The first of `factors` that is base**p (base itself for p = 1) with exponent_ok(p), or None."""
    for factor in factors:
        b, p = factor.as_base_exp()
        if b == base and exponent_ok(p):
            return factor
    return None


def _power_over_base(node: sp.Expr) -> sp.Expr | None:
    """b**w/b**k = b**(w - k) for an exponent w with an input in it: SymPy differentiates
    x**y as y*x**y/x, which is 0/0 = NaN at x = 0 (the truth is 1 at y = 1, 0 above) and
    inf/x where x**y overflows and x**(y - 1) need not (x = 3e35, y = 1.5). Into sums and
    xlogy too: d2/dxdy of x**y is (x**y + y*xlogy(x**y, x))/x, x**(y - 1) +
    y*xlogy(x**(y - 1), x)."""
    if not isinstance(node, sp.Mul):
        return None
    for divisor in node.args:
        b, k = divisor.as_base_exp()
        if b.is_number or not (k.is_Integer and k < 0):
            continue
        rest = sp.Mul(*(f for f in node.args if f is not divisor))
        # (1 - x)**y/(x - 1) too, as SymPy differentiates (1 - x)**y.
        for sign in (1, -1):
            lowered = _lower_power(rest, sign * b, k)
            if lowered is not None:
                return sign**k * lowered
    return None


def _lower_power(expr: sp.Expr, base: sp.Expr, k: sp.Integer) -> sp.Expr | None:
    """expr*base**k with the factor base**k taken into a power base**w of expr (w with an
    input in it), through xlogy's first argument, and into each term of a sum that has one,
    the others divided: the Weibull log-density's slope (y - 1 - y*x**y)/x as (y - 1)/x -
    y*x**(y - 1), not inf/x where x**y overflows (x = 3e35, y = 1.5); or None."""
    if isinstance(expr, sp.Add):
        terms = [_lower_power(term, base, k) for term in expr.args]
        if all(t is None for t in terms):
            return None
        rest = sp.Add(*(term for t, term in zip(terms, expr.args) if t is None))
        return sp.Add(*(t for t in terms if t is not None)) + rest * base**k
    if expr.is_Pow and expr.base == base and _has_input(expr.exp):
        return sp.Pow(base, expr.exp + k)
    if isinstance(expr, xlogy):
        lowered = _lower_power(expr.args[0], base, k)
        return None if lowered is None else xlogy(lowered, expr.args[1])
    if isinstance(expr, sp.Mul):
        for i, factor in enumerate(expr.args):
            lowered = _lower_power(factor, base, k)
            if lowered is not None:
                return sp.Mul(*expr.args[:i], lowered, *expr.args[i + 1 :])
    return None


# --- exponentials ------------------------------------------------------------


def _beside_one(node: sp.Expr, one: int, match: Callable[[sp.Expr], bool]) -> tuple[sp.Expr, sp.Expr] | None:
    """(term, the rest) for the first term of the sum `node` that `match`es, where the sum also
    holds the literal `one` (+1 or -1); the rest excludes both."""
    if not isinstance(node, sp.Add) or sp.Integer(one) not in node.args:
        return None
    for term in node.args:
        if match(term):
            return term, sp.Add(*(t for t in node.args if t is not term and t != one))
    return None


def _less_its_coefficient(node: sp.Expr, inputs: bool = False) -> Iterator[tuple[sp.Expr, sp.Expr, sp.Expr]]:
    """(c, e, rest) for each term c*e of a sum, c a nonzero number, beside which the sum has
    -c: node = c*e - c + rest, the shape of a difference from 1 that SymPy distributes.
    With `inputs`, c may also be a product of inputs that e does not hold, e one factor of
    the term: there c may be as large as e's difference from 1 is small (y*tanh(x)**2 - y at
    x = 12, y = 1e10), where a c of e's own inputs is not (x**2*tanh(x)**2 - x**2, in the
    Langevin function's slope over a common denominator: x**2/cosh(x)**2 is negligible
    where tanh(x) rounds to 1, and its form rounded 6.7 ulps off at x = 2, not 4)."""
    if not isinstance(node, sp.Add):
        return
    for term in node.args:
        c, e = term.as_coeff_Mul()
        if c != 0 and -c in node.args:
            yield c, e, sp.Add(*(t for t in node.args if t is not term and t != -c))
        elif inputs and isinstance(term, sp.Mul):
            for e in term.args:
                c = term / e
                if not c.is_number and -c in node.args and not c.free_symbols & e.free_symbols:
                    yield c, e, sp.Add(*(t for t in node.args if t is not term and t != -c))


def _exp_minus_one(node: sp.Expr) -> sp.Expr | None:
    """c*exp(u) - c = c*expm1(u) for a number c, also as part of a longer sum: exp(u) - 1,
    1 - exp(u), and c*(exp(u) - 1), which SymPy distributes (SELU's 1.67326*(exp(x) - 1) is
    83663*exp(x)/50000 - 83663/50000)."""
    for c, e, rest in _less_its_coefficient(node):
        if isinstance(e, sp.exp):
            return c * expm1(e.args[0]) + rest
    return None


def _exp_condition(node: sp.Expr) -> sp.Expr | None:
    """exp(u) compared with a positive number c as u compared with log(c): exp(u) rounds to 1
    for |u| < 3e-8, and the comparison with 1 then takes the wrong side (min(0, expm1(2x)/2),
    which SymPy writes with the condition exp(2*x) >= 1, was 0 for x = -1e-9)."""
    if not isinstance(node, (sp.Ge, sp.Gt, sp.Le, sp.Lt)):
        return None
    lhs, rhs = node.args
    if isinstance(rhs, sp.exp) and lhs.is_number:
        lhs, rhs, node = rhs, lhs, node.reversed
    if isinstance(lhs, sp.exp) and rhs.is_number and rhs.is_positive:
        return node.func(lhs.args[0], sp.log(rhs))
    return None


def _one_over_one_plus_exp(node: sp.Expr) -> sp.Expr | None:
    if not isinstance(node, sp.Pow) or not (node.exp.is_Integer and node.exp < 0):
        return None
    base = node.base
    if not isinstance(base, sp.Add) or len(base.args) != 2:
        return None
    a, b = (_exp_arg(t) for t in base.args)
    if a is None or b is None or (a != 0 and b != 0):
        return None
    u = b if a == 0 else a
    return sigmoid(-u) ** (-node.exp)


def _exp_over_sum_of_exps(node: sp.Expr) -> sp.Expr | None:
    """exp(a)/(exp(a) + exp(b)) -> sigmoid(a - b), and with more terms
    exp(a)/(exp(a) + exp(b) + exp(c)) -> sigmoid(-logaddexp(b - a, c - a)): the quotient
    is inf/inf (or 0/0) where the exps overflow (or flush), long before the softmax is
    anything but 1, 1/2 or 0. The differences come first: a - logaddexp(b, c) at
    a = b = c = 1e30 is 0 (logaddexp rounds its log(2) away), not -log(2)."""
    if not isinstance(node, sp.Mul):
        return None
    factors = list(node.args)
    for i, f in enumerate(factors):
        if not (isinstance(f, sp.Pow) and f.exp == -1 and isinstance(f.base, sp.Add)):
            continue
        found = _shares(f.base)
        if found is None:
            continue
        args, share = found
        for j, g in enumerate(factors):
            terms = [(sp.Integer(1), g.args[0])] if isinstance(g, sp.exp) and g.args[0] in args else _exp_combination(g, args)
            if terms is not None:
                rest = [h for k, h in enumerate(factors) if k not in (i, j)]
                return sp.Mul(*rest) * sp.Add(*(c * share(a) for c, a in terms))
    return None


def _shares(total: sp.Expr) -> tuple[list[sp.Expr], Callable[[sp.Expr], sp.Expr]] | None:
    """(the arguments of the exps of a denominator, and exp(a)/total for each such a), for
    a sum of exps (a 1 is exp(0)), the softmax, or for a difference exp(p) - exp(q), where
    exp(p)/(exp(p) - exp(q)) is -1/expm1(q - p) and exp(q)/(exp(p) - exp(q)) is
    1/expm1(p - q): as written inf/inf where the exps overflow ((exp(x) + exp(y))/
    (exp(x) - exp(y)), coth((x - y)/2), at x = 100, y = 95). None for another total."""
    args = [_exp_arg(t) for t in total.args]
    if None not in args and args.count(0) <= 1:
        return args, lambda a: _softmax(a, args)
    found = _difference_of_exps(total)
    if found is None:
        return None
    p, q = found
    return [p, q], lambda a: -1 / expm1(q - p) if a == p else 1 / expm1(p - q)


def _softmax(a: sp.Expr, args: list[sp.Expr]) -> sp.Expr:
    """exp(a)/(exp(a) + exp(b) + ...) for the exps' arguments `args` (a among them):
    sigmoid(a - b) for two, sigmoid(-logaddexp(b - a, ...)) for more."""
    others = list(args)
    others.remove(a)
    if len(others) == 1:
        return sigmoid(a - others[0])
    return sigmoid(-_log_sum_exp([b - a for b in others]))


def _exp_combination(total: sp.Expr, args: list[sp.Expr]) -> list[tuple[sp.Expr, sp.Expr]] | None:
    """[(c, a), ...] for a sum c1*exp(a1) + c2*exp(a2) + ... of two or more terms whose
    arguments are among `args` (a term without exp is c*exp(0), where 0 is among them) and
    whose coefficients hold no exp; else None. (exp(x) - exp(y))/(exp(x) + exp(y)) is the
    two softmaxes sigmoid(x - y) - sigmoid(y - x), which sigmoid_difference makes
    tanh((x - y)/2); as written it is NaN where both exps overflow or flush, and where x
    and y are near it cancels."""
    if not isinstance(total, sp.Add):
        return None
    terms = []
    for term in total.args:
        factors = sp.Mul.make_args(term)
        exps = [f for f in factors if isinstance(f, sp.exp)]
        a = exps[0].args[0] if len(exps) == 1 else sp.Integer(0) if not exps else None
        c = sp.Mul(*(f for f in factors if f not in exps))
        if a is None or a not in args or c.has(sp.exp):
            return None
        terms.append((c, a))
    return terms


def _exp_times_sigmoid(node: sp.Expr) -> sp.Expr | None:
    """exp(u) * sigmoid(-u)**k -> sigmoid(u) * sigmoid(-u)**(k-1)."""
    if not isinstance(node, sp.Mul):
        return None
    factors = list(node.args)
    for i, f in enumerate(factors):
        if not isinstance(f, sp.exp):
            continue
        u = f.args[0]
        for j, g in enumerate(factors):
            base, power = (g.base, g.exp) if isinstance(g, sp.Pow) else (g, sp.Integer(1))
            if isinstance(base, sigmoid) and base.args[0] == -u and power.is_Integer and power > 0:
                rest = [h for k, h in enumerate(factors) if k not in (i, j)]
                return sp.Mul(*rest) * sigmoid(u) * sigmoid(-u) ** (power - 1)
    return None


def _one_minus_sigmoid(node: sp.Expr) -> sp.Expr | None:
    """1 - sigmoid(u) + rest = sigmoid(-u) + rest, also inside a longer sum, and with a
    common factor: t - t*sigmoid(u) + rest = t*sigmoid(-u) + rest (the chain rule spreads
    a softmax's second partials so: S*P - S**2*P with S = sigmoid(-L) near 1)."""
    if not isinstance(node, sp.Add):
        return None
    terms = node.args
    for i, t in enumerate(terms):
        for j, other in enumerate(terms):
            if i == j:
                continue
            ratio = other / t
            if isinstance(-ratio, sigmoid):
                rest = [term for k, term in enumerate(terms) if k not in (i, j)]
                return sp.Add(*rest) + t * sigmoid(-(-ratio).args[0])
    return None


def _tanh_from_exps(node: sp.Expr) -> sp.Expr | None:
    """expm1(u) * sigmoid(-u) is (e**u - 1)/(e**u + 1) = tanh(u/2)."""
    if not isinstance(node, sp.Mul):
        return None
    for f in node.args:
        if isinstance(f, expm1):
            u = f.args[0]
            if sigmoid(-u) in node.args:
                rest = [g for g in node.args if g != f and g != sigmoid(-u)]
                return sp.Mul(*rest) * sp.tanh(u / 2)
    return None


# --- algebra -------------------------------------------------------------------


def _square_parts(term: sp.Expr) -> sp.Expr | None:
    """a if term is a**2 (or a positive number a**2), sqrt(c)*a for c*a**2, a product of even
    powers too (x**2*y**2 is (x*y)**2, as SymPy writes it: sqrt(1 + x**2*y**2) was inf at
    x = y = -1.4e19, where the truth is 2e38), else None."""
    if isinstance(term, sp.Pow) and term.exp == 2:
        return term.base
    if term.is_number and term.is_positive:
        return sp.sqrt(term)
    coeff, rest = term.as_coeff_Mul()
    if coeff.is_positive and coeff != 1 and isinstance(rest, sp.Pow) and rest.exp == 2:
        return sp.sqrt(coeff) * rest.base
    if isinstance(rest, sp.Mul) and coeff.is_positive and (found := _square_root(term)) is not None:
        return found[1] if coeff == 1 else sp.sqrt(coeff) * found[1]
    return None


def _hypot_of_squares(total: sp.Expr) -> sp.Expr | None:
    """hypot(hypot(a, b), ...) for a sum a**2 + b**2 + ..., in SymPy's sort order; else None."""
    if not isinstance(total, sp.Add):
        return None
    parts = [_square_parts(t) for t in total.args]
    if None in parts or all(p.is_number for p in parts):
        return None
    return _nested_hypot(parts)


def _nested_hypot(parts: list[sp.Expr]) -> sp.Expr:
    """hypot(hypot(a, b), ...) of the parts, in SymPy's sort order."""
    ordered = sorted(parts, key=sp.default_sort_key)
    result = ordered[0]
    for p in ordered[1:]:
        result = hypot(*sorted((result, p), key=sp.default_sort_key))
    return result


def _sqrt_of_sum_of_squares(node: sp.Expr) -> sp.Expr | None:
    """sqrt(a**2 + b**2 + ...) -> hypot(hypot(a, b), ...), and any power (...)**e that is not
    an integer -> hypot(...)**(2*e) (the Charbonnier loss (x**2 + 1e-6)**0.45 is inf**0.45 at
    x = 1e20); log(a**2 + b**2 + ...) -> 2*log(hypot(...)) (log(x**2 + y**2) at x = y = 2.5e38
    is log(inf); the truth is 177.5). Integer powers overflow where the truth does."""
    if isinstance(node, sp.log):
        # Not with a number among the squares: log(1 + x**2) is log1p's, accurate near 0.
        total = node.args[0]
        found = None if total.as_coeff_Add()[0] else _hypot_of_squares(total)
        return None if found is None else 2 * sp.log(found)
    if not isinstance(node, sp.Pow) or not (node.exp.is_Rational and node.exp.q != 1):
        return None
    found = _hypot_of_squares(node.base)
    if found is None:
        return None
    # The largest coefficient k of a square taken out, k**e*hypot(...)**(2*e), so that no leg
    # is larger than its input: Barron's loss ((x/0.5)**2/1.5 + 1)**0.25 as hypot(1, 1.63*x)
    # was inf**0.5 beyond x = 2.1e38, where the truth is 2.3e19.
    k = max(t.as_coeff_Mul()[0] for t in node.base.args if not t.is_number)
    if k > 1:
        scaled = _hypot_of_squares(sp.Add(*(t / k for t in node.base.args)))
        if scaled is not None:
            return k**node.exp * scaled ** (2 * node.exp)
    return found ** (2 * node.exp)


def _magnitude_power(term: sp.Expr) -> tuple[sp.Expr, sp.Expr, sp.Expr] | None:
    """(c, u, p) for a term c*|u|**p with c > 0 and p > 1 a number; else None. A factor is
    |b|**e, or b**e for an even e or a b known to be nonnegative; factors of one base add
    their exponents (SymPy writes |u|**3 as u**2*|u|), and factors of several bases whose
    exponents have one magnitude p make one leg ((x*y)**6 is x**6*y**6, u = x*y; (x/y)**4,
    u = x/y)."""
    coeff, rest = term.as_coeff_Mul()
    if not coeff.is_positive:
        return None
    powers: dict[sp.Expr, sp.Expr] = {}
    for factor in sp.Mul.make_args(rest):
        base, e = factor.as_base_exp()
        if not (e.is_number and (e.is_Rational or e.is_Float) and e.is_nonzero):
            return None
        if isinstance(base, sp.Abs):
            base = base.args[0]
        elif not ((e.is_Integer and e.is_even) or base.is_nonnegative):
            return None
        powers[base] = powers.get(base, sp.Integer(0)) + e
    if not powers or any(b.is_number for b in powers):
        return None
    magnitudes = {abs(e) for e in powers.values()}
    if len(magnitudes) != 1:
        return None
    (p,) = magnitudes
    if not p > 1:
        return None
    leg = sp.Mul(*(b if e > 0 else 1 / b for b, e in powers.items()))
    return coeff, leg, p


def _power_sum_legs(terms: tuple[sp.Expr, ...]) -> tuple[sp.Expr, sp.Expr, list[sp.Expr]] | None:
    """(p, k, legs) for terms c_1*|a_1|**p, c_2*|a_2|**p, ... of one number p > 1: k the
    largest coefficient, the legs (c_i/k)**(1/p)*a_i; else None.

    The largest coefficient comes out, so that no leg is larger than its input, nor smaller
    where that would flush it: the power mean ((|x|**3 + |y|**3)/2)**(1/3) with its 2**(-1/3)
    in the legs had f' = 0 at x = 1.2e-38, y = 0 (truth 0.79), and f'' NaN. The cost: the
    norm overflows before its multiple, where both inputs are beyond 2.7e38."""
    found = [_magnitude_power(t) for t in terms]
    if None in found or len({p for _, _, p in found}) != 1:
        return None
    p = found[0][2]
    k = max(c for c, _, _ in found)
    return p, k, [(c / k) ** (1 / p) * u for c, u, _ in found]


def _nested_norm(parts: list[sp.Expr], p: sp.Expr) -> sp.Expr:
    """The p-norm of the parts, nested two at a time in SymPy's sort order: hypot for p = 2."""
    if p == 2:
        return _nested_hypot(parts)
    ordered = sorted(parts, key=sp.default_sort_key)
    norm = ordered[0]
    for part in ordered[1:]:
        norm = pnorm(norm, part, p)
    return norm


def _norm_of_power_sum(total: sp.Expr) -> tuple[sp.Expr, sp.Expr, sp.Expr] | None:
    """(N, p, k) for a sum k*(|a|**p + |b|**p + ... + c) with one number p > 1 other than 2
    (hypot's), k > 0 the largest coefficient and c >= 0 a number: N the nested pnorm
    of a, b, ..., c**(1/p); else None."""
    if not isinstance(total, sp.Add):
        return None
    number, rest = total.as_coeff_Add()
    found = None if number.is_negative else _power_sum_legs(sp.Add.make_args(rest))
    if found is None or found[0] == 2:
        return None
    p, k, legs = found
    if number:
        legs.append((number / k) ** (1 / p))
    if len(legs) < 2:
        return None
    return _nested_norm(legs, p), p, k


def _power_sum_norm(node: sp.Expr) -> sp.Expr | None:
    """(|a|**p + |b|**p + ...)**e -> pnorm(a, b, ...)**(p*e) for e not an integer, and
    log(...) -> p*log(pnorm(...)): the p-norm (|x|**3 + |y|**3)**(1/3) overflows in its powers
    from |x| = 7e12 (and flushes below 2e-13) where the norm is a float; its slope
    sign(x)*(|x|/N)**2 was inf*0 and 0/0. hypot's rule for p = 2."""
    if isinstance(node, sp.log):
        # Not with a number in the sum: log(1 + x**4) is log1p's, accurate near 0.
        total = node.args[0]
        found = None if total.as_coeff_Add()[0] else _norm_of_power_sum(total)
        if found is None:
            return None
        norm, p, k = found
        return p * sp.log(norm) + sp.log(k)
    if not (isinstance(node, sp.Pow) and node.exp.is_number and not node.exp.is_Integer):
        return None
    found = _norm_of_power_sum(node.base)
    if found is None:
        return None
    norm, p, k = found
    power = p * node.exp
    if power.is_Float and abs(power - round(power)) < 1e-12:
        power = sp.Integer(round(power))  # a norm of 1.5-powers to the 1/1.5: N, not N**1.0
    return k**node.exp * norm**power


def _log1p_of_power_sum(node: sp.Expr) -> sp.Expr | None:
    """log1p(S) for a sum S = c_1*|a_1|**p + ... of several inputs (p > 1 a number, 2
    included) as p*log(N) + log(k) where a leg is beyond the 1's, N the norm (hypot, pnorm)
    of 1 and the legs, k the largest coefficient: S overflows where its log does not
    (log(1 + x**2 + y**2) was inf from |x| = 1.8e19, 60.8% of the judge's points; the truth
    is 88.7 there). Near the 1, log1p(S) as it was, its sum held (ipow) so that the rule does
    not take it again. One input has its regimes far out."""
    if not (isinstance(node, log1p) and isinstance(node.args[0], sp.Add)) or len(node.free_symbols) < 2:
        return None
    total = node.args[0]
    found = _power_sum_legs(total.args)
    if found is None:
        return None
    p, k, legs = found
    one = (1 / k) ** (1 / p)
    far = sp.Or(*(sp.Abs(leg) > one for leg in legs))  # Or orders its arguments itself
    return sp.Piecewise((p * sp.log(_nested_norm([one, *legs], p)) + sp.log(k), far), (log1p(ipow(total, 1)), True))


def _root_with_unsigned_term(node: sp.Expr) -> tuple[sp.Expr, sp.Expr, sp.Expr | None] | None:
    """(r, hypot(..., sqrt(r))**(2*e), the same root where r < 0, or None where r is known to
    be nonnegative) for a power (a**2 + ... + r)**e, e not an integer, whose one other term r
    is not known to be 0 or below; else None. Where r < 0 the base is a difference of squares,
    (h - sqrt(-r))*(h + sqrt(-r)) with h = |a| (or hypot(a, ...)), each factor raised on its
    own: a**2 + r overflows at a = 1.8e19 where the root need not, and rounds a**2 near the
    root, where h - sqrt(-r) is exact."""
    if not (isinstance(node, sp.Pow) and node.exp.is_Rational and node.exp.q != 1 and isinstance(node.base, sp.Add)):
        return None
    others = [t for t in node.base.args if _square_parts(t) is None]
    if len(others) != 1 or others[0].is_number or others[0].is_nonpositive:
        return None  # sqrt(1 - x**2): -x**2 has no real root
    (r,) = others
    parts = [_square_parts(t) for t in node.base.args if t is not r]
    if all(p.is_number for p in parts):
        return None  # sqrt(x + 1): no square to overflow
    above = _nested_hypot([*parts, sp.sqrt(r)]) ** (2 * node.exp)
    if r.is_nonnegative:
        return r, above, None
    h = sp.Abs(parts[0]) if len(parts) == 1 else _nested_hypot(parts)
    s = sp.sqrt(-r)
    return r, above, ipow(h - s, 1) ** node.exp * ipow(h + s, 1) ** node.exp


def _unsigned_root_hypot(node: sp.Expr) -> sp.Expr | None:
    """sqrt(a**2 + ... + r) = hypot(..., sqrt(r)) where r >= 0 (everywhere if r is known to
    be), for a term r that is not a square: squareplus with a learned b,
    (x + sqrt(x**2 + b))/2, was inf at x = 1e30, where x**2 overflows. A top-down rule: a sum with such roots among its factors' terms becomes one
    where, each branch the whole sum, so that the hypot's side rules see the sum (x +
    hypot(x, sqrt(b)) cancels for x < 0). Where r < 0, the root of a difference of squares,
    whose factors ipow holds apart (and so that the rule does not match it again)."""
    terms = sp.Add.make_args(node) if isinstance(node, sp.Add) else (node,)
    roots = {f: _root_with_unsigned_term(f) for t in terms for f in sp.Mul.make_args(t)}
    roots = {f: found for f, found in roots.items() if found is not None}
    conditions = {r for r, _, _ in roots.values()}
    if len(conditions) != 1:
        return None
    (r,) = conditions
    hypots = {f: h for f, (_, h, _) in roots.items()}
    if r.is_nonnegative:
        return node.xreplace(hypots)  # sqrt(x**2 + exp(y)): no where
    below = {f: b for f, (_, _, b) in roots.items()}
    return sp.Piecewise((node.xreplace(hypots), r >= 0), (node.xreplace(below), True))


def _leg_over_hypot(node: sp.Expr) -> sp.Expr | None:
    """u/hypot(u, v, ...) = hypot_ratio(u, hypot(v, ...)): the hypot overflows where the ratio
    does not (x/sqrt(x**2 + y**2 + 1) at x = y = 3e38 is 0; the truth is 0.707), and the
    ratio's derivatives are ratios again, where u/h's are 1/h - u*h'/h**2, which cancels.
    Not under a power ipow(u/h, k), k >= 2: balance_ratio's y**2/h**3 = ipow(y/h, 2)/h would
    become hypot_ratio(y, x)**2/h, which the judge cannot tell from hypot_ratio(y, x)*(hypot_ratio(y, x)/h)
    on its grid, and whose square flushes to 0 at y = 1e-36, x = 1e-13 (truth 4e-33)."""
    if isinstance(node, ipow) and node.args[1] >= 2:
        return node  # a top-down rule: its inside stays as it is
    if not isinstance(node, sp.Mul):
        return None
    for factor in node.args:
        if not (isinstance(factor, sp.Pow) and factor.exp == -1 and isinstance(factor.base, hypot)):
            continue
        legs = _hypot_legs(factor.base)
        for i, leg in enumerate(legs):
            # The leg or its negative: (y - x)/hypot(1, x - y), as SymPy writes -(x - y), is
            # hypot_ratio(y - x, 1), whose derivatives are ratios again.
            # A leg that is a product is among the factors factor by factor: x*y/hypot(1, x*y)
            # (1 where x*y overflows, hypot_ratio's limit; inf/inf = NaN as a quotient).
            u = next((v for v in (leg, sp.expand(-leg)) if _among_factors(v, node.args)), None)
            if u is not None and not u.is_number:
                others = legs[:i] + legs[i + 1 :]
                rest = others[0] if len(others) == 1 else _hypot_of_squares(sp.Add(*(leg**2 for leg in others)))
                if rest is None:
                    continue
                # Removed by equality, not identity: u is a leg of the hypot, an object equal
                # to the product's factor but not always the same one (once SymPy's cache had
                # seen evaluate(False), x/hypot(x, y) became x*hypot_ratio(x, y): fuzz seed 6789).
                outside = list(node.args)
                outside.remove(factor)
                for f in sp.Mul.make_args(u) if u not in outside else (u,):
                    outside.remove(f)
                return sp.Mul(*outside) * hypot_ratio(u, rest)
    return None


def _among_factors(u: sp.Expr, factors: tuple[sp.Expr, ...]) -> bool:
    """Whether u is one of `factors`, or a product of some of them (each as often as u has it)."""
    if u in factors:
        return True
    if not isinstance(u, sp.Mul) or u.args[0].is_number:
        return False
    remaining = list(factors)
    for f in u.args:
        if f not in remaining:
            return False
        remaining.remove(f)
    return True


def _factors_but(node: sp.Mul, factor: sp.Expr, base: sp.Expr) -> sp.Expr:
    """The product of node's factors but `factor` and the powers of `base`."""
    return sp.Mul(*(f for f in node.args if f is not factor and f.as_base_exp()[0] != base))


def _sign_product(node: sp.Expr) -> sp.Expr | None:
    """u*sign(u) -> |u|: softsign x/(1 + |x|) has f' = (1 + |x| - x*sign(x))/(1 + |x|)**2,
    whose numerator is (1 + |x|) - |x| = 0 for |x| > 2**24, where the truth is 1/x**2."""
    if not isinstance(node, sp.Mul):
        return None
    for factor in node.args:
        base = factor.base if isinstance(factor, sp.Pow) and factor.exp.is_Integer and factor.exp > 0 else factor
        if isinstance(base, sp.sign) and base.args[0] in node.args:
            u = base.args[0]
            return node / (u * base) * sp.Abs(u)
    # u**n/|u|**m, n >= m: u**(n - m)*sign(u)**m, so |u|*u**(n - m - 1) for odd m (the
    # pseudo-Huber loss d**2*(hypot(d, x)/|d| - 1) is |d|*(hypot(d, x) - |d|), whose
    # hypot(d, x) - |d| the side rules see; as d*(d/|d|)*(...) its d-partial was NaN), and
    # sign(u) for n = m odd (d*x**4/|d| in its slope's conjugate: as x**4*|d|/d the quotient
    # rules split it into (x/|d|)*(d/hypot(d, x)), inf*0 where |d| << |x|).
    powers = dict(f.as_base_exp() for f in node.args)
    for factor in node.args:
        u, m = factor.as_base_exp()
        if isinstance(u, sp.Abs) and m.is_Integer and m < 0:
            n = powers.get(u.args[0])
            if n is not None and n.is_Integer and n >= -m:
                rest = _factors_but(node, factor, u.args[0])
                odd = -m % 2
                if odd and n + m == 0:
                    return rest * sp.sign(u.args[0])
                return rest * u.args[0] ** (n + m - odd) * (u if odd else 1)
    return None


def _inverse_hyperbolic(node: sp.Expr) -> sp.Expr | None:
    """log(u + hypot(1, u)) -> asinh(u), log(u + sqrt(u**2 - 1)) -> acosh(u): for u << 0
    the sum cancels (log(0) = -inf at u = -1e4), and u**2 overflows for |u| > 1.8e19."""
    if not isinstance(node, sp.log) or not isinstance(node.args[0], sp.Add) or len(node.args[0].args) != 2:
        return None
    for u, root in (node.args[0].args, node.args[0].args[::-1]):
        if isinstance(root, hypot) and set(root.args) == {sp.Integer(1), u}:
            return sp.asinh(u)
        if root == sp.sqrt(u**2 - 1):
            return sp.acosh(u)
    return None


def _hypot_less_leg(
    node: sp.Expr, leg: Callable[[sp.Expr, sp.Expr], bool]
) -> tuple[sp.Expr, sp.Expr, sp.Expr, sp.Expr, sp.Expr] | None:
    """(the rest, k, hypot(a, b), a, b) for a sum k*hypot(a, b) - k*a + rest, a the leg
    for which `leg(k, a)` holds. hypot is even in each leg, so a may be the negative of
    one: x + hypot(x, 2) is hypot(-x, 2) - (-x), or its absolute value (the pseudo-Huber
    loss d**2*(sqrt(1 + (x/d)**2) - 1) is |d|*(hypot(d, x) - |d|))."""
    if not isinstance(node, sp.Add):
        return None
    for term in node.args:
        k, h = term.as_coeff_Mul()
        if not isinstance(h, hypot):
            continue
        for a, b in (h.args, h.args[::-1]):
            for side in (a, -a, sp.Abs(a)):
                if leg(k, side) and -k * side in node.args:
                    return sp.Add(*(t for t in node.args if t is not term and t != -k * side)), k, h, side, b
    return None


def _hypot_ratio_squares(node: sp.Expr) -> sp.Expr | None:
    """c*hypot_ratio(a, b)**2 - c*hypot_ratio(b, a)**2 = c*(a - b)*(a + b)/h**2 as
    c*hypot_ratio_gap(a, b)*hypot_ratio_gap(a, -b): the ratios are rounded before they are
    squared and subtracted, so the difference cancels where |a| is near |b| (atan2(y, x)'s
    d2f/dxdy 13-16 bits off at x = 0.7, y = -0.70001)."""
    if not isinstance(node, sp.Add):
        return None
    squares: dict[tuple[sp.Expr, sp.Expr], tuple[sp.Expr, sp.Expr]] = {}
    for term in node.args:
        coeff, rest = term.as_coeff_Mul()
        if isinstance(rest, sp.Pow) and rest.exp == 2 and isinstance(rest.base, hypot_ratio):
            squares[tuple(rest.base.args)] = (coeff, term)
    for (a, b), (coeff, term) in squares.items():
        other = squares.get((b, a))
        if other is not None and other[0] == -coeff and coeff.is_positive:
            rest = [t for t in node.args if t is not term and t is not other[1]]
            return sp.Add(*rest) + coeff * hypot_ratio_gap(a, b) * hypot_ratio_gap(a, -b)
    return None


def _hypot_minus_one(node: sp.Expr) -> sp.Expr | None:
    """hypot(c, u) - c = u**2/(hypot(c, u) + c): no cancellation near u = 0; also scaled,
    k*hypot(c, u) - k*c (the bent identity's (sqrt(x**2 + 1) - 1)/2 + x). Also with more
    legs, which nest with the number innermost: hypot(hypot(c, u), v) - c = w**2/(h + c)
    with w = hypot(u, v) (sqrt(x**2 + y**2 + 1) - 1)."""
    found = _hypot_less_leg(node, lambda k, c: c.is_number and c.is_positive)
    if found is not None:
        rest, k, h, c, u = found
        return rest + k * u * (u / (h + c))
    if not isinstance(node, sp.Add):
        return None
    for h in node.args:
        legs = _hypot_legs(h)
        for c in legs if len(legs) > 2 else ():
            if c.is_number and c.is_positive and -c in node.args:
                w = _hypot_of_squares(sp.Add(*(leg**2 for leg in legs if leg is not c)))
                if w is not None:
                    return sp.Add(*(t for t in node.args if t is not h and t != -c)) + w * (w / (h + c))
    return None


def _hypot_legs(h: sp.Expr) -> list[sp.Expr]:
    """The legs of nested hypots: [c, u, v] for hypot(hypot(c, u), v)."""
    if not isinstance(h, hypot):
        return [h]
    return [leg for arg in h.args for leg in _hypot_legs(arg)]


def _one_minus_cos(node: sp.Expr) -> sp.Expr | None:
    """c*cos(u) - c = -2*c*sin(u/2)**2 (1 - cos(u) and cos(u) - 1), also as part of a longer
    sum (1 - cos(x) - x**2/2); likewise c*cosh(u) - c = 2*c*sinh(u/2)**2 (log(cosh(x) - 1) was
    log(0) = -inf for |x| < 2.4e-4, and its slope sinh(x)/(cosh(x) - 1) 0/0), and
    c*cos(u) + c = 2*c*cos(u/2)**2."""
    for c, e, rest in _less_its_coefficient(node):
        if isinstance(e, sp.cos):
            return rest - 2 * c * sp.sin(e.args[0] / 2) ** 2
        if isinstance(e, sp.cosh):
            return rest + 2 * c * sp.sinh(e.args[0] / 2) ** 2
    return _one_plus_cos(node)


def _trig_of_pi_multiple(node: sp.Expr) -> sp.Expr | None:
    """sin(pi*u) = sinpi(u), cos(pi*u) = cospi(u) and tan(pi*u) = sinpi(u)/cospi(u), for u
    free of pi (sin(pi*x/2), cos(2*pi*x*y)): the normalized sinc sin(pi*x)/(pi*x) was 63.5%
    of points within 3 bits, and tan(pi*x) was 8.7e-8 at x = 1, where it is 0, and 8-10 bits
    off within 1e-3 of an integer."""
    if isinstance(node, (sp.sin, sp.cos, sp.tan)) and node.args[0].has(sp.pi) and node.args[0].free_symbols:
        u = sp.expand(node.args[0] / sp.pi)
        if not u.has(sp.pi):
            if isinstance(node, sp.tan):
                return sinpi(u) / cospi(u)
            return (sinpi if isinstance(node, sp.sin) else cospi)(u)
    return None


def _log_of_difference_of_exps(node: sp.Expr) -> sp.Expr | None:
    """log(exp(a) - exp(b)) = a + log1mexp(a - b) (real where a > b): exp(a) overflows for
    a > 88.7 and the difference cancels for a near b, where log1mexp switches forms."""
    if not isinstance(node, sp.log):
        return None
    if isinstance(node.args[0], sp.Mul):
        return _log_of_signed_difference_of_exps(node.args[0])
    found = _difference_of_exps(node.args[0])
    return None if found is None else found[0] + log1mexp(found[0] - found[1])


def _log_of_signed_difference_of_exps(product: sp.Expr) -> sp.Expr | None:
    """log((exp(a) - exp(b))*sign(a - b)), the log of |exp(a) - exp(b)|, as the larger
    argument plus log1mexp of their distance: where(a >= b, a + log1mexp(a - b),
    b + log1mexp(b - a)). log_of_quotient writes the log of a divided difference so,
    log((exp(x) - exp(y))/(x - y)) as log((exp(x) - exp(y))*sign(x - y)) - log|x - y|,
    whose first log is log(inf) where an exp overflows (x = 89, y = 0: the truth 84.5) and
    cancels where x is near y."""
    factors = product.args
    signs = [f for f in factors if isinstance(f, sp.sign)]
    if len(factors) != 2 or len(signs) != 1:
        return None
    (sign,) = signs
    found = _difference_of_exps(factors[1] if factors[0] is sign else factors[0])
    if found is None or sp.expand(sign.args[0] - (found[0] - found[1])) != 0:
        return None
    a, b = found
    return sp.Piecewise((a + log1mexp(a - b), a >= b), (b + log1mexp(b - a), True))


def _one_plus(
    func: type, plus: Callable[[sp.Expr], sp.Expr] | None, minus: Callable[[sp.Expr], sp.Expr] | None
) -> Callable[[sp.Expr], sp.Expr | None]:
    """The rule 1 + func(u) -> plus(u), 1 - func(u) -> minus(u), for a func that tends to -1
    or 1; also scaled, c + c*func(u) and c - c*func(u) for a number c (tanh(u) - 1 is
    -(1 - tanh(u)), in tanh(x)**2'')."""

    def rewrite(node: sp.Expr) -> sp.Expr | None:
        if not isinstance(node, sp.Add):
            return None
        c, others = node.as_coeff_Add()
        if c == 0:
            return None
        for term in sp.Add.make_args(others):
            k, factor = term.as_coeff_Mul()
            form = plus if k == c else minus if k == -c else None
            if isinstance(factor, func) and form is not None:
                rest = others - term
                return rest + c * form(factor.args[0])
        return None

    return rewrite


# 1 + erf(u) = erfc(-u) and 1 - erf(u) = erfc(u); 1 - erfc(u) = erf(u), which erfc(u) near 1
# (u near 0) rounds.
_one_plus_erf = _one_plus(sp.erf, lambda u: erfc(-u), erfc)
_one_minus_erfc = _one_plus(sp.erfc, None, sp.erf)


def _erf_complements(node: sp.Expr) -> sp.Expr | None:
    return _one_plus_erf(node) or _one_minus_erfc(node)


# 1 + cos(u) = 2*cos(u/2)**2: 1 + cos(u) cancels near u = pi (0 for |u - pi| < 3.5e-4 in
# float32, where the truth is (u - pi)**2/2), and cos(u/2) keeps u's own bits there.
_one_plus_cos = _one_plus(sp.cos, lambda u: 2 * sp.cos(u / 2) ** 2, None)


def _erfc_and_exp(node: sp.Expr) -> sp.Expr | None:
    """exp(w)/erfc(u) = sqrt(pi)*mills(u)*exp(w + u**2) and erfc(u)*exp(w) =
    exp(w - u**2)/(sqrt(pi)*mills(u)), where the new exponent is simpler (0 in the pairs that
    log(erfc(u))' and erfc(u)*exp(u**2) make): exp(-u**2) and erfc(u) underflow from u = 9.2
    in float32, 0/0, where their quotient is about u."""
    if not isinstance(node, sp.Mul):
        return None
    for f in node.args:
        base, k = f.as_base_exp()
        if not (isinstance(base, sp.erfc) and k in (1, -1)) or base.args[0].is_number:
            continue
        u = base.args[0]
        for g in node.args:
            if isinstance(g, sp.exp):
                w = sp.expand(g.args[0] - k * u**2)
                # w = 0 also where the exponent was a bare symbol (erfc(sqrt(x))*exp(x)).
                if w == 0 or sp.count_ops(w) < sp.count_ops(g.args[0]):
                    rest = sp.Mul(*(h for h in node.args if h is not f and h is not g))
                    return rest * (sp.sqrt(sp.pi) * mills(u)) ** -k * sp.exp(w)
    return None


def _log_of_erfc(node: sp.Expr) -> sp.Expr | None:
    """log(c*erfc(u)), c > 0 a number (also log(c*(1 +- erf(w))), which is log(c*erfc(-+w)),
    and log(c*erf(u)), log1p(-erfc(u)) + log(c) for u > 1/2),
    in three parts: -u**2 - log(sqrt(pi)*mills(u)) + log(c) for u > 1, where erfc underflows
    (from u = 9.2 in float32, log(0) = -inf; the log is about -u**2); log1p(-erfc(-u)/2) +
    log(2c) for u < -1, where erfc(u) = 2 - erfc(-u) rounds to 2 (log(erfc(u)/2), the log of
    the normal CDF, is then log(1) = 0 where it is -erfc(-u)/2); log1p(-erf(u)) + log(c)
    between, where erfc rounds near 1. Before the log1p rule, which would make
    log1p(erf(w)) of log(1 + erf(w))."""
    if not (isinstance(node, sp.log) and node.args[0].has(sp.erf, sp.erfc)):
        return None
    c, arg = sp.factor_terms(node.args[0]).as_coeff_Mul()
    if not c.is_positive:
        return None
    if isinstance(arg, sp.erfc):
        u = arg.args[0]
    elif isinstance(arg, sp.erf):
        # log(erf(u)), real for u > 0: erf rounds to 1 where the log is -erfc(u) (0 for u
        # in [3.8, 9.1], where the truth is -8.5e-8 to -7.9e-38), and loses bits between.
        u = arg.args[0]
        if u.is_number:
            return None
        return sp.Piecewise((sp.log(c) + log1p(-erfc(u)), u > sp.Rational(1, 2)), (sp.log(c) + sp.log(ipow(arg, 1)), True))
    else:
        found = _beside_one(arg, 1, lambda t: isinstance(t, sp.erf) or isinstance(-t, sp.erf))
        if found is None or found[1] != 0:
            return None
        term = found[0]
        u = -term.args[0] if isinstance(term, sp.erf) else (-term).args[0]
    if u.is_number:
        return None  # a constant (log(erfc(10))): no input to underflow with
    return sp.Piecewise(
        (sp.log(c) - u**2 - sp.log(sp.sqrt(sp.pi) * mills(u)), u > 1),
        (sp.log(2 * c) + log1p(-erfc(-u) / 2), u < -1),
        (sp.log(c) + log1p(-sp.erf(u)), True),
    )


def _constant_into_piecewise(node: sp.Expr) -> sp.Expr | None:
    """c + where(cond, a, b) = where(cond, c + a, c + b) for a constant c, so that a branch
    holding -c cancels it exactly: the log of the normal CDF written log(1 + erf(w)) - log(2)
    is log(2) + log1p(-erfc(-w)/2) - log(2) for w > 1, 0 where the truth is -erfc(-w)/2."""
    if not isinstance(node, sp.Add):
        return None
    pieces = [a for a in node.args if isinstance(a, sp.Piecewise)]
    c = sp.Add(*(a for a in node.args if a.is_number))
    if len(pieces) != 1 or c == 0:
        return None
    (piece,) = pieces
    rest = sp.Add(*(a for a in node.args if a is not piece and not a.is_number))
    return rest + sp.Piecewise(*((e + c, cond) for e, cond in piece.args))


# 1 + tanh(u) = 2*sigmoid(2u) and 1 - tanh(u) = 2*sigmoid(-2u): no cancellation as tanh(u) -> -1 or 1.
_one_plus_tanh = _one_plus(sp.tanh, lambda u: 2 * sigmoid(2 * u), lambda u: 2 * sigmoid(-2 * u))


def _balance_ratio(node: sp.Expr) -> sp.Expr | None:
    """a**k / b**k = (a/b)**k: the powers can overflow even where the ratio is modest."""
    if not isinstance(node, sp.Mul):
        return None
    powers = [f for f in node.args if isinstance(f, sp.Pow) and f.exp.is_Integer and not f.base.is_number]
    for num in powers:
        for den in powers:
            if num.exp > 1 and den.exp < 0 and not isinstance(den.base, sp.exp):
                k = min(int(num.exp), -int(den.exp))
                rest = [f for f in node.args if f is not num and f is not den]
                return (
                    sp.Mul(*rest)
                    * ipow(num.base / den.base, k)
                    * num.base ** (num.exp - k)
                    * den.base ** (den.exp + k)
                )
    return None


def _divide_stepwise(node: sp.Expr) -> sp.Expr | None:
    """a / b**n = (a/b) / b**(n-1), the quotient kept as ipow(a/b, 1): b**n over- or
    underflows where a/b**n need not ((x - m)/s**2 at x = m, s = 1e-36 is 0/0). Also for a
    fractional n >= 3/2: the Hellinger term's sqrt(y)/(2*x**(3/2)) is inf at x = y = 1.7e-37,
    where x**(3/2) flushes; (sqrt(y)/x)/(2*sqrt(x)) is 2.9e36."""
    if not isinstance(node, sp.Mul):
        return None
    for den in node.args:
        if not (isinstance(den, sp.Pow) and den.exp.is_Rational and den.exp <= -sp.Rational(3, 2)) or den.base.is_number:
            continue
        # A factor that is not a number first; else a number but -1: 2/x**3 as 2*(1/x)**3
        # (reciprocal_power) flushes at x = 5.4e12 (truth 1.3e-38) and as written is inf at
        # x = 2e-13 (truth 2.1e38); (2/x)/x**2 is neither.
        for num in sorted(node.args, key=lambda f: f.is_number):
            if num is den or (isinstance(num, sp.Pow) and num.exp.is_negative) or num == -1:
                continue
            rest = [f for f in node.args if f is not num and f is not den]
            return sp.Mul(*rest) * ipow(num / den.base, 1) * den.base ** (den.exp + 1)
    return None


def _divide_by_root(node: sp.Expr) -> sp.Expr | None:
    """a / b**(n + 1/2) = (a*rsqrt(b)) / b**n for n >= 1, the numerator's factors and the
    roots multiplied together first (each b alike): b**(n + 1/2) over- or underflows where
    the quotient need not, and divide_stepwise's (x/b)/b**(n - 1/2) takes one factor of a
    numerator (x*rsqrt(x*sign(y))) apart: x/sqrt(x*y)'s slope in y,
    -(x*rsqrt(x*sign(y)))/(2*|y|**(3/2)), is -inf at x = y = -3e-28 as written and 0 at
    x = 3e38, y = 1e-10 as (x/|y|)/sqrt|y|; 1/(x*y)**(3/2) is ((rsqrt(x)*rsqrt(y))/x)/y."""
    if not isinstance(node, sp.Mul):
        return None
    roots = [
        f
        for f in node.args
        if isinstance(f, sp.Pow) and f.exp.is_Rational and f.exp.q == 2 and f.exp <= -sp.Rational(3, 2) and not f.base.is_number
    ]
    if not roots:
        return None
    coeff = sp.Mul(*(f for f in node.args if f.is_number))
    numerator = sp.Mul(*(f for f in node.args if f not in roots and not f.is_number))
    numerator = ipow(numerator, 1) if isinstance(numerator, sp.Mul) else numerator
    whole = sp.Mul(*(f.base ** (f.exp + sp.Rational(1, 2)) for f in roots))
    return coeff * ipow(numerator * sp.Mul(*(1 / sp.sqrt(f.base) for f in roots)), 1) * whole


def _quotient_by_abs(node: sp.Expr) -> sp.Expr | None:
    """k*u/(c + |u|), c > 0, as k*sign(u)/(1 + c/|u|): where u overflows (u = x*y at
    x = y = 1e20) the quotient is inf/inf = NaN, and the truth is +-k; c/|u| is 0 there, and
    at u = 0 it is inf, which makes the quotient 0 as it should be."""
    if not isinstance(node, sp.Mul):
        return None
    for factor in node.args:
        if not (isinstance(factor, sp.Pow) and factor.exp == -1 and isinstance(factor.base, sp.Add)):
            continue
        c, rest = factor.base.as_coeff_Add()
        # |x|*|y| is |x*y|, and |x|/|y| is |x/y| (derive writes the abs of a product so).
        parts = _power_factors(rest)
        if not (c.is_number and c.is_positive and all(isinstance(b, sp.Abs) for b, _ in parts)):
            continue
        u = sp.Mul(*(b.args[0] ** e for b, e in parts))
        k = node / factor / u
        if k.free_symbols:
            continue
        return k * sp.sign(u) / (1 + c / sp.Abs(u))
    return None


def _reciprocal_power(node: sp.Expr) -> sp.Expr | None:
    """u**-n = (1/u)**n for an integer n >= 2: u**n flushes to 0 where 1/u**n is still a
    float (log(x)'' = -1/x**2 at x = 8e-20 is -inf, truth -1.6e38)."""
    if isinstance(node, sp.Pow) and node.exp.is_Integer and node.exp <= -2 and not node.base.is_number:
        return ipow(1 / node.base, -node.exp)
    return None


def _sigmoid_difference(node: sp.Expr) -> sp.Expr | None:
    """c*sigmoid(u) - c*sigmoid(-u) = c*tanh(u/2): no cancellation near u = 0. Likewise
    c*sigmoid(u) - c/2 = c/2*tanh(u/2), as in the logistic density's log, whose slope in x is
    (2*sigmoid(u) - 1)/s, u = (m - x)/s (0 at x = -4.8e-19, m = 5.8e-16, s = 2e-4; the truth
    is 7.6e-9). And c*sigmoid(u) + c*sigmoid(-u) = c, which the chain rule leaves in a
    softmax's slopes (exp(x)/(exp(x) + exp(y) + 1)' held (sigmoid(y) +
    sigmoid(-y))*sigmoid_slope(...))."""
    if not isinstance(node, sp.Add):
        return None
    terms = list(node.args)
    for i, term in enumerate(terms):
        # c may be any factor without a sigmoid in it (a number or a symbol: t*s(x) - t*s(-x)).
        coeff, factor = term.as_independent(sigmoid, as_Add=False)
        if not isinstance(factor, sigmoid):
            continue
        u = factor.args[0]
        pairs = (
            (-coeff * sigmoid(-u), coeff * sp.tanh(u / 2)),
            (-coeff / 2, coeff / 2 * sp.tanh(u / 2)),
            (coeff * sigmoid(-u), coeff),
        )
        for partner, replacement in pairs:
            if partner in terms[i + 1 :] or partner in terms[:i]:
                rest = [t for k, t in enumerate(terms) if k != i and t != partner]
                return sp.Add(*rest) + replacement
    return None


# The most terms and operations of a sum that _sigmoid_polynomial factors: SymPy's
# multivariate factoring grows quickly with both.
SIGMOID_POLYNOMIAL_MAX_TERMS = 12
SIGMOID_POLYNOMIAL_MAX_OPS = 120


def _sigmoid_polynomial(node: sp.Expr) -> sp.Expr | None:
    """A sum of products of s = sigmoid(u), sigmoid(-u) = 1 - s and tanh(u/2) = 2*s - 1,
    factored in s where the sum has a root at s = 0, 1/2 or 1 (u -> -oo, u = 0, u -> +oo)
    more often than one of its terms: the terms cancel there. Factored, with sigmoid(u),
    tanh(u/2) and sigmoid(-u) for those roots, it does not. The chain rule leaves such sums
    spread over terms: exp(x)*exp(y)/(exp(x) + exp(y))'s curvature in y was
    s**2 - s*sigmoid(-u) times exp(y), s*tanh(u/2) (0 at x = 1e-13, y = -8e-20; the truth is
    1.4e-14). Terms r*mul_exp(c, v) that share v count as r*c, one mul_exp(., v) of the
    factored sum: its slope in x and y was mul_exp(s*sigmoid(-u)*tanh(u/2), y) +
    mul_exp(s*sigmoid(-u), y), whose tanh(u/2) + 1 cancels as u -> -oo, and is
    2*mul_exp(s**2*sigmoid(-u), y). sigmoid_difference takes the sums of two terms, one
    sigmoid in each."""
    if not isinstance(node, sp.Add) or len(node.args) > SIGMOID_POLYNOMIAL_MAX_TERMS:
        return None
    found = node.atoms(sigmoid)
    arguments = {-s.args[0] if s.args[0].could_extract_minus_sign() else s.args[0] for s in found}
    for u in sorted(arguments, key=sp.default_sort_key):
        factored = _factored_in_sigmoid(node, u)
        if factored is not None:
            return factored
        # Else the terms in s alone, where the others cancel against them at no root of s:
        # -sigmoid(-y) + sigmoid(y)*(s - sigmoid(-v)), s = sigmoid(v), takes
        # sigmoid(y)*tanh(v/2) (a softmax of three's curvature in y).
        ours = [t for t in node.args if t.has(sigmoid(u), sigmoid(-u))]
        if 2 <= len(ours) < len(node.args):
            factored = _factored_in_sigmoid(sp.Add(*ours), u)
            if factored is not None:
                return factored + sp.Add(*(t for t in node.args if t not in ours))
    return None


# The roots of a polynomial in s = sigmoid(u) where its terms can cancel, and the function of
# u that each root's factor s - r is, divided by its leading coefficient.
_SIGMOID_ROOTS: dict[sp.Rational, Callable[[sp.Expr], sp.Expr]] = {
    sp.Integer(0): lambda u: sigmoid(u),
    sp.Rational(1, 2): lambda u: sp.tanh(u / 2) / 2,
    sp.Integer(1): lambda u: -sigmoid(-u),
}


@functools.lru_cache(maxsize=4096)
def _factored_in_sigmoid(node: sp.Add, u: sp.Expr) -> sp.Expr | None:
    pos, neg, tanh_half = sigmoid(u), sigmoid(-u), sp.tanh(u / 2)
    if sum(1 for t in node.args if t.has(pos, neg)) < 2 or sp.count_ops(node) > SIGMOID_POLYNOMIAL_MAX_OPS:
        return None
    s = sp.Dummy("s")
    dummies: dict[sp.Expr, sp.Dummy] = {}  # a dummy E for each mul_exp(., v), by v

    def written(term: sp.Expr) -> sp.Expr:
        factors = [
            f.args[0] * dummies.setdefault(f.args[1], sp.Dummy("E")) if isinstance(f, mul_exp) else f
            for f in sp.Mul.make_args(term)
        ]
        return sp.Mul(*factors).xreplace({pos: s, neg: 1 - s, tanh_half: 2 * s - 1})

    terms = [written(t) for t in node.args]
    scales = {e: v for v, e in dummies.items()}
    body = sp.Add(*terms)
    # s inside another function (tanh(s), mul_exp(s, v) beside mul_exps of other v) is not a
    # polynomial's.
    if any(f.has(s) for f in body.atoms(sp.Function)) or not body.is_polynomial(s, *scales):
        return None
    product = factor_polynomial(body)
    least = {r: min(_root_multiplicity(sp.Poly(t, s), r) for t in terms) for r in _SIGMOID_ROOTS}
    cancelling = False
    outside: list[sp.Expr] = []
    inside: list[sp.Expr] = []  # the factors in s, and numbers, that go inside the mul_exp
    scale = None
    for f in sp.Mul.make_args(product):
        base, k = f.as_base_exp()
        if base in scales:
            if k != 1 or scale is not None:
                return None
            scale = scales[base]
            continue
        if any(base.has(d) for d in scales):
            return None
        if base.has(s) and not (base.free_symbols - {s}) and sp.degree(base, s) == 1:
            a, b = sp.Poly(base, s).all_coeffs()
            root = -b / a
            if root in _SIGMOID_ROOTS:
                cancelling |= k > least[root]
                f = (a * _SIGMOID_ROOTS[root](u)) ** k
        (inside if f.is_number or f.has(s, pos, neg, tanh_half) else outside).append(f)
    if not cancelling:
        return None
    within = sp.Mul(*inside).xreplace({s: pos})
    return sp.Mul(mul_exp(within, scale) if scale is not None else within, *outside)


def _root_multiplicity(p: sp.Poly, root: sp.Expr) -> int:
    """How many times `root` is a root of the polynomial `p` (0 where p is 0 everywhere)."""
    k = 0
    linear = sp.Poly(p.gen - root, p.gen)
    while not p.is_zero and p.eval(root) == 0:
        p, k = p.quo(linear), k + 1
    return k


def _one_minus_tanh_squared(node: sp.Expr) -> sp.Expr | None:
    """c - c*tanh(u)**2 = c/cosh(u)**2, which does not round to 0 for |u| > 9; also
    c*tanh(u)**2 - c, as in 1/tanh(x)'s slope (tanh(x)**2 - 1)/tanh(x)**2, which lost 4-6
    bits for 3 < |x| < 10 in the Langevin function's 1/x**2 - 1/sinh(x)**2. c may hold
    inputs: tanh(x)**y's curvature in x has y*tanh(x)**2 - y, 0 from x = 9 where the truth
    is -4*y*exp(-2*x) (1e10*tanh(x)**2 - 1e10 at x = 12 is 0, the truth -1.5)."""
    for c, e, rest in _less_its_coefficient(node, inputs=True):
        if isinstance(e, sp.Pow) and isinstance(e.base, sp.tanh) and e.exp == 2:
            return rest - c * sp.cosh(e.base.args[0]) ** -2
    return None


def _zero_branch(node: sp.Expr) -> sp.Expr | None:
    """r*where(c, 0, v) = where(c, 0, r*v): the derivative of a function of min, max or where
    is 0 on a constant branch, and r may be inf or NaN there (asin(min(1, x))' is
    where(x >= 1, 0, 1)/sqrt(1 - where(x >= 1, 1, x**2)), 0/0 for x >= 1; the truth is 0)."""
    if not isinstance(node, sp.Mul):
        return None
    for piece in node.args:
        if isinstance(piece, sp.Piecewise) and any(v == 0 for v, _ in piece.args):
            rest = sp.Mul(*(f for f in node.args if f is not piece))
            return sp.Piecewise(*((v if v == 0 else rest * v, c) for v, c in piece.args))
    return None


def _tanh_over_cosh(node: sp.Expr, split: bool = False) -> sp.Expr | None:
    """sinh(u)**a/cosh(u)**b = tanh(u)**a/cosh(u)**(b - a) for 1 <= a <= b, and
    cosh(u)**a/sinh(u)**a = 1/tanh(u)**a (a a number, or any w as a power of both or of
    their quotient): sinh and cosh
    overflow together at |u| = 89, inf/inf (tanh(x/2)'' from its derivative 1/(2*cosh(x/2)**2)
    is -sinh(x/2)/(2*cosh(x/2)**3), NaN from x = 179 on); tanh stays within [-1, 1]."""
    if not split and isinstance(node, sp.Pow) and not node.exp.is_Integer:
        # A power of their quotient, (cosh(u)/sinh(u))**w, which SymPy keeps whole for an
        # input w: the walk has made its base 1/tanh(u), and (1/tanh(u))**w is tanh(u)**-w,
        # where power_near_one takes tanh's log (1/tanh(x) rounds to 1 from x = 9).
        base, k = node.base.as_base_exp()
        if isinstance(base, sp.tanh) and k.is_Integer and k != 1:
            return base ** (k * node.exp)
        return None
    if not isinstance(node, sp.Mul):
        return None
    powers = {}
    kept = {}
    for f in node.args:
        base, exp = f.as_base_exp()
        # `split`: also the integer part of an exponent (cosh(x)**(1/y - 1) as
        # cosh(x)**(1/y)/cosh(x)). A variant: sinh(x)**y's slope y*sinh(x)**(y - 1)*cosh(x)
        # is 0*inf at x = -100, y = -2, and y*sinh(x)**y/tanh(x) is not (within 3 bits on the
        # judge's grid 88% -> 99%); but cosh(x)**(1/y)'s curvature from its tanh form,
        # (1/y - tanh(x)**2/y + ...)*f, cancels far out.
        k, w = exp.as_coeff_Add() if split else (exp, sp.Integer(0))
        if isinstance(base, (sp.sinh, sp.cosh)) and k.is_Integer and k != 0:
            powers[(type(base), base.args[0])] = (f, int(k))
            kept[f] = base**w
    if split and all(p == 1 for p in kept.values()):
        return None  # the rule's own
    if not split:
        # cosh(u)**w*sinh(u)**-w as 1/tanh(u)**w, sinh(u)**w*cosh(u)**-w as tanh(u)**w, for
        # any w: coth(x)**y's parts overflow together from |x| = 89 (inf*0, or inf/inf in its
        # slopes). Where sinh(u) < 0 the power is real only for an integer w, and then the
        # two agree.
        for f in node.args:
            base, w = f.as_base_exp()
            if isinstance(base, sp.cosh) and not w.is_number:
                mirror = sp.sinh(base.args[0]) ** -w
                if mirror in node.args:
                    rest = sp.Mul(*(g for g in node.args if g not in (f, mirror)))
                    return rest * sp.tanh(base.args[0]) ** -w
    for (kind, u), (power, a) in powers.items():
        # (cosh(u)/sinh(u))**a as 1/tanh(u)**a: sqrt(sinh(x)*y)'s slope in x,
        # sqrt(sinh(x)*y)*cosh(x)/(2*sinh(x)), was inf/inf from x = 89. Only a = b: with
        # cosh(x)/sinh(x)**2 as 1/(tanh(x)*sinh(x)), x/sinh(x)'' lost its far-out regime
        # (0 at x = 92, the truth 2e-38).
        other = sp.cosh if kind is sp.sinh else sp.sinh
        other_power, b = powers.get((other, u), (None, 0))
        if 1 <= a <= -b and (kind is sp.sinh or a == -b):
            rest = sp.Mul(*(kept[f] if f in (power, other_power) else f for f in node.args))
            return rest * sp.tanh(u) ** (a if kind is sp.sinh else -a) * other(u) ** (a + b)
    return None


def _exp_over_expm1_squared(node: sp.Expr) -> sp.Expr | None:
    """exp(u)/expm1(u)**2 = -1/(expm1(u)*expm1(-u)), finite where exp(u) overflows."""
    if not isinstance(node, sp.Mul):
        return None
    for f in node.args:
        if isinstance(f, sp.exp):
            u = f.args[0]
            target = expm1(u) ** -2
            if target in node.args:
                rest = [g for g in node.args if g != f and g != target]
                return -sp.Mul(*rest) / (expm1(u) * expm1(-u))
    return None


def _softplus_reflection(node: sp.Expr) -> sp.Expr | None:
    """a*softplus(-u) + b*softplus(u) = (a + b)*softplus(u) - a*u.

    Each softplus is accurate, but their weighted sum cancels when a or b is
    large; the reflected form is what TF's sigmoid_cross_entropy_with_logits uses.
    """
    if not isinstance(node, sp.Add):
        return None
    terms = list(node.args)
    for i, term in enumerate(terms):
        for f in sp.Mul.make_args(term):
            if not isinstance(f, softplus):
                continue
            u = f.args[0]
            if not u.could_extract_minus_sign():
                continue
            a = term / f
            for j, other in enumerate(terms):
                if j != i and softplus(-u) in sp.Mul.make_args(other):
                    b = other / softplus(-u)
                    rest = [t for k, t in enumerate(terms) if k not in (i, j)]
                    return sp.Add(*rest) + sp.expand(a + b) * softplus(-u) + a * u
    return None


def _balance_gaussian(node: sp.Expr) -> sp.Expr | None:
    """u**k * exp(-c*u**2) = (u**(k/2) * exp(-c*u**2/2))**2: no inf * 0 when u**k overflows."""
    if not isinstance(node, sp.Mul):
        return None
    for f in node.args:
        if not isinstance(f, sp.exp):
            continue
        arg = f.args[0]
        for g in node.args:
            if isinstance(g, sp.Pow) and g.exp.is_Integer and g.exp > 0:
                u, k = g.base, int(g.exp)
                c = sp.cancel(-arg / u**2)
                if c.is_number and c.is_positive:
                    rest = [h for h in node.args if h is not f and h is not g]
                    return sp.Mul(*rest) * ipow(u * sp.exp(-c * u**2 / k), k)
    return None


# Sums of lgamma: at most this many terms in one beta function, and integer offsets up to
# this size turned into logs.
LBETA_MAX_TERMS = 4
LGAMMA_MAX_SHIFT = 4
# Sums are searched among this many lgamma terms of one coefficient at most (the subsets
# grow as the fourth power).
LBETA_MAX_PARTS = 12


def _log_abs(u: sp.Expr) -> sp.Expr:
    return sp.log(sp.Abs(u))


# lgamma_of_tiny shifts lgamma's argument by one below this |u|: there lgamma(1 + u) is
# between -0.13 and 0.57 and log|u| above 0.69 in size, so neither the sum's rounding (1 + u)
# nor their difference costs bits; above it, the plain lgamma(u).
LGAMMA_SHIFT_BELOW = sp.Rational(1, 2)


def _lgamma_of_tiny(node: sp.Expr) -> sp.Expr | None:
    """lgamma(u) = lgamma(1 + u) - log|u| for |u| < 1/2, where the rules write log|u|
    without u: u = exp(v), sigmoid(v), softplus(v), erfc(v), x**2 or x*y flushes to 0 where
    lgamma(u) is about -log|u|, finite (lgamma(exp(x)) was lgamma(0) = inf for x < -103.3,
    where the truth is -x). Its slopes then hold polygamma(n, 1 + u), not the poles of polygamma(n, u),
    which cancel: lgamma(exp(x))'' = polygamma(1, u)*u**2 + digamma(u)*u is 1/u - 1/u + ...,
    0 at x = -33, where the truth is -1.9e-15 (as polygamma(1, 1 + u)*u**2 + digamma(1 + u)*u,
    it is right). Above the bound, lgamma(u): the where picks the argument, so that one
    lgamma (and one polygamma in each slope) serves, and keeps this rule from it."""
    if not isinstance(node, lgamma):
        return None
    (u,) = node.args
    log_u = _log_where_it_flushes(u)
    if log_u is None:
        return None
    shifted = sp.Abs(u) < LGAMMA_SHIFT_BELOW
    return lgamma(sp.Piecewise((1 + u, shifted), (u, True))) - sp.Piecewise((log_u, shifted), (0, True))


def _log_where_it_flushes(u: sp.Expr) -> sp.Expr | None:
    """log|u| as the rules write it without u, for a u that flushes to 0 where its log is
    finite (exp(v), sigmoid(v), softplus(v), erfc(v), x**2, x*y); None for another u."""
    return _log_without(u, flushes=True)


def _log_where_it_overflows(u: sp.Expr) -> sp.Expr | None:
    """log|u| as the rules write it without u, for a u that overflows where its log is
    finite (exp(v), cosh(v), x**2, x*y); None for another u."""
    return _log_without(u, flushes=False)


# The bounds a u must pass somewhere on the judge's grid (in float64) for _log_without: below
# the shift of lgamma_of_tiny, or above this (e**80 flows over in float32's square).
LOG_WITHOUT_ABOVE = 2.0**100


@functools.lru_cache(maxsize=4096)
def _log_without(u: sp.Expr, flushes: bool) -> sp.Expr | None:
    """log|u| as the rules write it without u, for a u that flushes to 0 (`flushes`) or
    overflows where its log is finite; None for another u. Cached: the same arguments come
    back in every candidate, and each costs a measurement."""
    if u.is_number or _holds_where(u):
        return None
    base, exponent = u.as_coeff_Mul()[1].as_base_exp()
    if base.as_coeff_Mul()[1].is_Symbol and exponent.is_number and abs(exponent) <= 1:
        return None  # lgamma(2*x), lbeta(1, sqrt(-y)): u flushes only where the input does
    if any(isinstance(p, sp.Pow) and p.exp.free_symbols for p in sp.preorder_traversal(u)):
        # y**y does not flush (it is above 0.69 where real), and the rules make a where of
        # it, which a condition on u would then hold.
        return None
    # u may stay in a where's last branch, taken where u does not flush (log(softplus(u))
    # for u >= -20).
    log_u = _log_written_without(u, _log_abs_product(u) if isinstance(u, (sp.Mul, sp.Pow, sp.exp)) else _log_abs(u))
    if log_u is None:
        return None
    # And u must pass the bound somewhere: cosh(y) (whose log is logcosh) and
    # sigmoid(softplus(y)) never come below 1/2, and a where never taken would cost a log and a where.
    sizes = abs(_on_the_grid(u))
    passes = sizes < float(LGAMMA_SHIFT_BELOW) if flushes else sizes > LOG_WITHOUT_ABOVE
    return log_u if passes.any() else None


def _log_written_without(u: sp.Expr, log_u: sp.Expr) -> sp.Expr | None:
    """log_u, a log of u, as the rules write it; None where u stays in it outside the last
    branch of a where."""
    log_u = optimize(log_u)[0]
    return None if _without_fallbacks(log_u).has(u) else log_u


def _on_the_grid(u: sp.Expr) -> object:
    """u's values in float64 at the judge's grid points in u's own inputs (a NumPy array)."""
    import numpy as np

    from generator import judge

    symbols = tuple(sorted(u.free_symbols, key=lambda s: s.name))
    with np.errstate(all="ignore"):
        return judge.evaluate(u, symbols, judge.sample_points(len(symbols)), np.float64)


def _softplus_less_exp(node: sp.Expr) -> sp.Expr | None:
    """c*softplus(u)*sigmoid(-u) - c*sigmoid(u) + rest = c*sigmoid(-u)*log1pmx(exp(u)) + rest
    for u < 0 (sigmoid(u) is exp(u)*sigmoid(-u)), and c*softplus(u) - c*exp(u) likewise,
    c*log1pmx(exp(u)): the two terms agree to exp(u)**2/2 for u << 0 (log(softplus(x))'' is
    sigmoid(x)*(softplus(x)*sigmoid(-x) - sigmoid(x))/softplus(x)**2, 30 bits off at x = -19).
    For u >= 0 they do not cancel, and exp(u) overflows where the difference need not: the
    sum as it was."""
    if not isinstance(node, sp.Add):
        return None
    for term in node.args:
        for sp_node in term.atoms(softplus):
            u = sp_node.args[0]
            for shape, other in ((sp_node * sigmoid(-u), sigmoid(u)), (sp_node, sp.exp(u))):
                c = term / shape
                if c.has(sp_node) or (c * shape - term) != 0:
                    continue
                # Only a term that holds a sigmoid (an exp) can cancel c*sigmoid(u) (c*exp(u)), so
                # only such a term pays for the expansion.
                partner = next(
                    (t for t in node.args if t is not term and t.has(other.func) and sp.expand(t + c * other) == 0),
                    None,
                )
                if partner is None:
                    continue
                rest = sp.Add(*(t for t in node.args if t is not term and t is not partner))
                factor = sigmoid(-u) if shape != sp_node else sp.Integer(1)
                near = c * factor * log1pmx(sp.exp(u))
                return rest + sp.Piecewise((near, u < 0), (term + partner, True))
    return None


# lbeta_of_huge takes lbeta(a, u)'s leading terms where log(u) is above this (u above 5.5e34,
# not yet flowed over in float32) and |a| below LBETA_FAR_OTHER: the next term of Stirling's
# series, -(2*a**3 - 3*a**2 + a)/(12*u**2), is then below 2**-170 of a*log(u), and its part in
# the second slope below 2**-95 of the (a**2 - a)/(2*u) kept.
LBETA_FAR_LOG = 80
LBETA_FAR_OTHER = 2**20


def _lbeta_of_integer(node: sp.Expr) -> sp.Expr | None:
    """lbeta(a, k) = log((k - 1)!) - log|a| - log|a + 1| - ... - log|a + k - 1| for an integer k
    from 1 to LGAMMA_MAX_SHIFT, as lgamma_sums writes lgamma(a) - lgamma(a + k): exact, and
    the logs as the rules write them (lbeta(exp(x), 2) is -x - softplus(x), where the helper's
    lbeta(inf, 2) was -inf above x = 88.7, and its f'' cancelled to -2 at x = 50, where the
    truth is -2e-22). Only for an a that over- or underflows where its log does not
    (_leaves_range): for an input, lbeta(x, 3), the helper is as good, and the logs' slopes,
    three reciprocals, flush where their sum need not (at x = 2.5e38)."""
    if not isinstance(node, lbeta):
        return None
    for a, k in (node.args, node.args[::-1]):
        if k.is_Integer and 1 <= k <= LGAMMA_MAX_SHIFT and _leaves_range(a):
            return sp.log(sp.factorial(k - 1)) - _lgamma_shift(a + k, int(k))
    return None


def _leaves_range(u: sp.Expr) -> bool:
    """Whether u over- or underflows where the rules write its log without it."""
    return _log_where_it_overflows(u) is not None or _log_where_it_flushes(u) is not None


def _polygamma_diff_of_integer(node: sp.Expr) -> sp.Expr | None:
    """polygamma_diff(n, y, k) = -(-1)**n*n!*(1/y**(n + 1) + ... + 1/(y + k - 1)**(n + 1)) for an
    integer k from 1 to LGAMMA_MAX_SHIFT, from polygamma(n, y + 1) = polygamma(n, y) +
    (-1)**n*n!/y**(n + 1): exact, the slopes of lbeta_of_integer's logs."""
    if not isinstance(node, polygamma_diff):
        return None
    n, y, k = node.args
    if not (n.is_Integer and k.is_Integer and 1 <= k <= LGAMMA_MAX_SHIFT and _leaves_range(y)):
        return None
    return -((-1) ** n) * sp.factorial(n) * sp.Add(*(1 / (y + j) ** (n + 1) for j in range(int(k))))


def _lbeta_of_huge(node: sp.Expr) -> sp.Expr | None:
    """lbeta(a, u) = lgamma(a) - a*log(u) - (a**2 - a)/(2*u) + ... for u above e**80 and a
    below 2**20, where the rules write log|u| without u: u = exp(v), cosh(v), x**2 or x*y
    flows over where lbeta is finite (lbeta(exp(x), 2) was lbeta(inf, 2) = -inf above
    x = 88.7, where the truth is -2*x). The term in 1/u keeps the slopes of the far branch
    right to the second order (lbeta(exp(x), 2)'' is -exp(-x) + ..., not 0). Below the
    bound, lbeta with u held at 1 where the far branch is taken, and lbeta_of_tiny's shift
    where it applies. lgamma_diff(u, a) = lgamma(u) - lgamma(u + a) likewise, -a*log(u) -
    (a**2 - a)/(2*u) (a negative binomial's lgamma(k + r) - lgamma(r) with r = exp(x))."""
    if isinstance(node, lgamma_diff):
        sides = [side] if (side := _far_side(*node.args)) else []
        tiny = _lgamma_diff_of_tiny
    elif isinstance(node, lbeta):
        # Either argument, or both (lbeta(exp(x), exp(y)) for x or y above 80).
        sides = []
        for a, u in (node.args, node.args[::-1]):
            if side := _far_side(u, a):
                sides.append((u, side[1], lgamma(a) + side[2]))
        tiny = _lbeta_of_tiny
    else:
        return None
    if not sides:
        return None
    near = tiny(node) or node

    def held(w: sp.Expr) -> sp.Expr:
        for u, far, _ in sides:
            w = sp.Piecewise((1, far), (w, True)) if w.has(u) else w
        return w

    near = near.replace(lambda e: isinstance(e, (lbeta, lgamma_diff)), lambda e: e.func(*map(held, e.args)))
    return sp.Piecewise(*((value, far) for _, far, value in sides), (near, True))


def _far_side(u: sp.Expr, a: sp.Expr) -> tuple[sp.Expr, sp.Expr, sp.Expr] | None:
    """(u, where lbeta_of_huge's far branch is taken, its value) for lgamma_diff(u, a) =
    -a*log(u) - (a**2 - a)/(2*u) + ..., or None where the rules do not write log|u| without
    u. lbeta(a, u) is lgamma(a) + lgamma_diff(u, a)."""
    log_u = None if a.has(u) else _log_where_it_overflows(u)
    if log_u is None:
        return None
    far = (log_u > LBETA_FAR_LOG) & (sp.Abs(a) < LBETA_FAR_OTHER)
    return u, far, -a * log_u - (a**2 - a) * sp.exp(-log_u) / 2


def _lgamma_diff_of_tiny(node: sp.Expr) -> sp.Expr | None:
    """lgamma_diff(u, a) = lgamma_diff(1 + u, a) + log|u + a| - log|u| for |u| < 1/2, as
    lbeta_of_tiny's, for a u that flushes (_log_where_it_flushes): gamma(u)/gamma(u + a) =
    gamma(1 + u)/gamma(1 + u + a)*(u + a)/u. lgamma_diff(exp(x), 3) was inf below x = -103.3,
    where the truth is about -x."""
    if not isinstance(node, lgamma_diff):
        return None
    u, a = node.args
    log_u = _log_where_it_flushes(u)
    if log_u is None:
        return None
    shift = sp.Abs(u) < LGAMMA_SHIFT_BELOW
    shifted = lgamma_diff(sp.Piecewise((1 + u, shift), (u, True)), a)
    return shifted + sp.Piecewise((_log_abs(u + a) - log_u, shift), (0, True))


def _lbeta_of_tiny(node: sp.Expr) -> sp.Expr | None:
    """lbeta(a, b) with a's argument shifted by one where |a| < 1/2, as _lgamma_of_tiny's,
    for an a that flushes (_log_where_it_flushes), and b's likewise: from beta(a, b) =
    beta(a + 1, b)*(a + b)/a, lbeta(A, B) + [log|a + b|] + [log|1 + a + b|] - [log|a|] -
    [log|b|], each bracket where its shift is taken (log|a + b| where either is, log|1 + a + b|
    where both are). lbeta(exp(x), 2) was lbeta(0, 2) = inf below x = -103.3 (the truth is
    -x), and its f'' cancelled (polygamma_diff(1, u, 2)*u**2 + polygamma_diff(0, u, 2)*u is
    1 - 1 + ... for small u = exp(x))."""
    if not isinstance(node, lbeta):
        return None
    a, b = node.args
    logs = [_log_where_it_flushes(a), _log_where_it_flushes(b)]
    if logs == [None, None]:
        return None
    shifts = [sp.Abs(w) < LGAMMA_SHIFT_BELOW if log_w is not None else sp.false for w, log_w in zip((a, b), logs)]
    picked = [sp.Piecewise((1 + w, shift), (w, True)) for w, shift in zip((a, b), shifts)]
    taken = lambda value, condition: sp.Piecewise((value, condition), (0, True))  # noqa: E731
    # The logs as written: the later passes of optimize rewrite them (log|exp(x) + exp(y)| as
    # logaddexp(x, y)).
    correction = taken(_log_abs(a + b), shifts[0] | shifts[1]) + taken(_log_abs(1 + a + b), shifts[0] & shifts[1])
    correction -= sum(taken(log_w, shift) for log_w, shift in zip(logs, shifts) if log_w is not None)
    return lbeta(*picked) + correction


def _without_fallbacks(e: sp.Expr) -> sp.Expr:
    """`e` with the last branch of each where as 0."""
    return e.replace(lambda n: isinstance(n, sp.Piecewise), lambda n: sp.Piecewise(*n.args[:-1], (0, True)))


def _lgamma_shift(p: sp.Expr, k: int) -> sp.Expr:
    """lgamma(p) - lgamma(p - k) for an integer k, as logs: gamma(u + 1) = u*gamma(u)."""
    if k >= 0:
        return sp.Add(*(_log_abs(p - j) for j in range(1, k + 1)))
    return -sp.Add(*(_log_abs(p + j) for j in range(-k)))


def _lgamma_terms(node: sp.Add) -> list[tuple[sp.Expr, sp.Expr, sp.Expr]]:
    """(term, c, u) for each term c*lgamma(u) of the sum, c a number and u not one."""
    found = []
    for term in node.args:
        c, f = term.as_coeff_Mul()
        if isinstance(f, lgamma) and not f.args[0].is_number:
            found.append((term, c, f.args[0]))
    return found


def _apart(p: sp.Expr, q: sp.Expr) -> tuple[sp.Expr, sp.Expr, int] | None:
    """(y, x, sign): the simpler of p and q as y, and x = the other less y, with sign 1 if y
    is p and -1 if q; None unless x is a number or no more complex than p and q (a minus sign
    free: y - x is x apart from y). From the simpler argument, y + x rounds as the argument
    written does (digamma(x) - digamma(x + 1/1000) from x + 1/1000 less 1/1000 is wrong near 0)."""
    ops = min(sp.count_ops(p), sp.count_ops(q))
    for sign, y, x in sorted(((1, p, q - p), (-1, q, p - q)), key=lambda o: sp.count_ops(o[1])):
        if x.is_number or min(sp.count_ops(x), sp.count_ops(-x)) <= ops:
            return y, x, sign
    return None


def _beta_chain(parts: Sequence[sp.Expr]) -> sp.Expr:
    """lgamma(p1) + ... + lgamma(pm) - lgamma(p1 + ... + pm) as lbeta(p1, p2) + lbeta(p1 + p2, p3) + ..."""
    total, chain = parts[0], []
    for p in parts[1:]:
        chain.append(lbeta(total, p))
        total = total + p
    return sp.Add(*chain)


def _lgamma_sums(node: sp.Expr) -> sp.Expr | None:
    """c*(lgamma(p1) + ... + lgamma(pm) - lgamma(s)), s = p1 + ... + pm - k for an integer k,
    is c*(lbeta(p1, p2) + lbeta(p1 + p2, p3) + ... + lgamma(s + k) - lgamma(s)), the last
    difference k logs; and c*(lgamma(p) - lgamma(p + d)) for a number d is c*(lbeta(p, d) -
    lgamma(d)), or logs for a small integer d, and for another d no more complex than p,
    c*lgamma_diff(p, d). The terms as written cancel where an argument is
    large (a log beta function, lgamma(a) + lgamma(b) - lgamma(a + b), at a = 3e9, b = 0.75:
    0.2 in float32, where the truth is -16.2); lbeta's helper does not."""
    if not isinstance(node, sp.Add):
        return None
    terms = _lgamma_terms(node)
    if len(terms) < 2:
        return None
    used: set[sp.Expr] = set()
    made = []
    for total_term, c, s in terms:
        if total_term in used:
            continue
        parts = [(t, u) for t, d, u in terms if d == -c and t not in used][:LBETA_MAX_PARTS]
        fits = (
            (subset, k)
            for size in range(min(len(parts), LBETA_MAX_TERMS), 1, -1)
            for subset in itertools.combinations(parts, size)
            for k in (sp.Add(*(u for _, u in subset)) - s,)
            if k.is_Integer and abs(k) <= LGAMMA_MAX_SHIFT
        )
        fit = next(fits, None)
        if fit is not None:
            subset, k = fit
            args = sorted((u for _, u in subset), key=sp.default_sort_key)
            made.append(-c * (_beta_chain(args) + _lgamma_shift(sp.Add(*args), int(k))))
            used.update((total_term, *(t for t, _ in subset)))
    for term, c, p in terms:
        for other, d, q in terms:
            if term in used or other in used or d != -c:
                continue
            shift = q - p
            if not shift.is_number:
                # A rising factorial's log, lgamma(y + x) - lgamma(y).
                apart = _apart(p, q)
                if apart is not None:
                    y, x, sign = apart
                    made.append(sign * c * lgamma_diff(y, x))
                    used.update((term, other))
                continue
            if shift.is_zero:
                continue
            value = complex(numeric(shift))  # by value: SymPy cannot order softplus(3) and 0
            if value.imag != 0 or value.real == 0:
                continue
            if shift.is_Integer and abs(shift) <= LGAMMA_MAX_SHIFT:
                made.append(-c * _lgamma_shift(q, int(shift)))
            elif value.real > 0:
                made.append(c * (lbeta(p, shift) - lgamma(shift)))
            else:
                made.append(-c * (lbeta(q, -shift) - lgamma(-shift)))
            used.update((term, other))
    if not made:
        return None
    return sp.Add(*(t for t in node.args if t not in used), *made)


def _gamma_log_density(node: sp.Expr) -> sp.Expr | None:
    """In a sum, c*((a - 1)*log(u) - u - lgamma(a)) = c*lgamma_kernel(a, u) for a >= 10, c a
    number: the log of a gamma density, and a Poisson log-pmf k*log(l) - l - lgamma(k + 1).
    Near the mode u = a the terms, each about a*log(a), cancel to about -log(2*pi*a)/2: at
    k = l = 1e4 the log-pmf -5.52 came out 11 bits off in float32, at k = l = 1e6 as -5 or
    +3. Likewise with u = exp(v), v an input, as the Poisson's log-rate writes it
    (k*v - exp(v) - lgamma(k + 1), TF's log_poisson_loss with its full loss), where exp(v)
    does not flush (v > -80); and with a rate or scale, u = b*x or x/s (_rated_gamma_terms).
    Below 10 the terms are small, and the sum stays as it was
    (where lgamma(1 + k) keeps its own rules), but for 0 < a < 1/2, where -log(u) - lgamma(a)
    cancel near u = a (at a = u = 1e-3, 10 bits lost): -log(u/a) + lgamma_diff(1, a) there."""
    if not isinstance(node, sp.Add) or not node.has(lgamma) or not node.has(sp.log, sp.exp):
        return None
    terms = list(node.args)
    # log(u), u, and where the kernel serves: each log, and each exp of an input as u.
    logs_of = [(f, f.args[0], sp.true) for f in sorted(node.atoms(sp.log), key=sp.default_sort_key)]
    logs_of += [
        (f.args[0], f, f.args[0] > -80) for f in sorted(node.atoms(sp.exp), key=sp.default_sort_key) if f.args[0].is_Symbol
    ]
    for g in sorted(node.atoms(lgamma), key=sp.default_sort_key):
        a = g.args[0]
        gammas = [t for t in terms if t.as_coeff_Mul()[1] == g]
        if len(gammas) != 1 or not gammas[0].as_coeff_Mul()[0].is_number:
            continue
        c = -gammas[0].as_coeff_Mul()[0]
        for log_u, u, serves in logs_of:
            # The terms linear in log(u), whose coefficients add up to c*(a - 1), and those of -c*u.
            logs = [t for t in terms if t.as_independent(log_u, as_Add=False)[1] == log_u]
            linear = list(sp.Add.make_args(sp.expand(-c * u)))
            if not logs or not all(t in terms for t in linear) or any(t in logs for t in linear):
                continue
            weight = sp.Add(*(t.as_independent(log_u, as_Add=False)[0] for t in logs))
            if sp.expand(weight - c * (a - 1)) != 0:
                continue
            used = {*logs, *linear, gammas[0]}
            rest = sp.Add(*(t for t in terms if t not in used))
            if rest.has(g):
                continue
            kept = sp.Add(*logs, *linear, gammas[0])
            kernel = (c * lgamma_kernel(a, u), (a >= 10) & serves)
            shift, b = a.as_coeff_Add()
            if shift == 1 and b.free_symbols:
                # The Poisson's lgamma(1 + k): as written, for lgamma_near_its_zeros.
                return rest + sp.Piecewise(kernel, (kept, True))
            # Near a = 0, -log(u) - lgamma(a) cancel (both about -log(a) at u = a):
            # -log(u/a) - lgamma(1 + a), the latter as lgamma_diff(1, a).
            near_pole = c * (a * log_u - u - sp.log(u / a) + lgamma_diff(1, a))
            return rest + sp.Piecewise(kernel, (near_pole, (a > 0) & (a < sp.Rational(1, 2)) & serves), (kept, True))
        found = _rated_gamma_terms(terms, c, a)
        if found is not None:
            u, logs, moved = found
            used = {*logs, -c * u, gammas[0]}
            rest = sp.Add(*(t for t in terms if t not in used))
            kept = sp.Add(*logs, -c * u, gammas[0])
            # Where the product does not flush: b*x at b = x = 1e-20 is 0, whose log is -inf.
            return rest + sp.Piecewise((c * lgamma_kernel(a, u) + moved, (a >= 10) & (u > 2**-100)), (kept, True))
    return None


def _rated_gamma_terms(terms: list[sp.Expr], c: sp.Expr, a: sp.Expr) -> tuple[sp.Expr, list[sp.Expr], sp.Expr] | None:
    """For gamma_log_density with a rate or a scale: u = b*x or x/s, inputs, with the terms
    -c*u and c*(a - 1)*log(u) written as the inputs' logs (the log-density
    a*log(b) + (a - 1)*log(x) - b*x - lgamma(a) is lgamma_kernel(a, b*x) + log(b)). Returns
    u, the terms in the inputs' logs, and what of them lgamma_kernel leaves (log(b) there),
    if one input's log has exactly the weight c*(a - 1)."""
    for term in terms:
        u = -term / c
        factors = sp.Mul.make_args(u)
        if len(factors) < 2 or not all(f.is_Symbol or (f.is_Pow and f.base.is_Symbol and f.exp == -1) for f in factors):
            continue
        logs, moved, exact = [], sp.Integer(0), False
        for f in factors:
            symbol, sign = (f, 1) if f.is_Symbol else (f.base, -1)
            log_s = sp.log(symbol)
            with_log = [t for t in terms if t.as_independent(log_s, as_Add=False)[1] == log_s]
            if not with_log:
                break
            left = sp.expand(sign * sp.Add(*(t.as_independent(log_s, as_Add=False)[0] for t in with_log)) - c * (a - 1))
            exact = exact or left == 0
            logs += with_log
            moved += sign * left * log_s
        else:
            if exact and not moved.has(a):
                return u, logs, moved
    return None


def _log_digamma(node: sp.Expr) -> sp.Expr | None:
    """c*log(u) - c*digamma(a) = c*log_digamma_gap(u, a) for a >= 10: the slope of a gamma
    log-density in its shape, and of a Poisson log-pmf in its count, log(l) - digamma(k + 1),
    which cancel near the mode (at k = l = 1e4 the slope is 5e-5, and log(1e4) has an ulp of
    1e-6 in float32). Below 10, as written. For a = b + 1 or b + 2 (the Poisson's k + 1),
    by digamma(b + 1) = digamma(b) + 1/b at b: k + 1 rounds to k from 1.7e7 on, and the
    slope at k = l = 3.9e8, -1.3e-9, came out +1.3e-9. Several logs of inputs beside it, as
    a rate's or a scale's, go in as their product or quotient."""
    if not isinstance(node, sp.Add) or not node.has(sp.polygamma):
        return None
    terms = list(node.args)
    for term in terms:
        c, f = term.as_coeff_Mul()
        if not (isinstance(f, sp.polygamma) and f.args[0] == 0):
            continue
        a = f.args[1]
        shift, b = a.as_coeff_Add()
        if not (shift in (1, 2) and b.free_symbols):
            shift, b = sp.Integer(0), a
        steps = sp.Add(*(1 / (b + j) for j in range(int(shift))))
        # The logs of inputs beside it, with weight -c (or c, as a reciprocal): the slope of
        # a gamma log-density with a rate in its shape is log(b) + log(x) - digamma(a), which
        # cancels near b*x = a; as one log_digamma_gap(b*x, a), where b*x is a normal float.
        weighted = [(t, t.as_coeff_Mul()) for t in terms]
        ups = [t for t, (k, g) in weighted if k == -c and isinstance(g, sp.log) and g.args[0].is_Symbol]
        downs = [t for t, (k, g) in weighted if k == c and isinstance(g, sp.log) and g.args[0].is_Symbol]
        if ups and len(ups) + len(downs) > 1:
            u = sp.Mul(*(t.as_coeff_Mul()[1].args[0] for t in ups)) / sp.Mul(*(t.as_coeff_Mul()[1].args[0] for t in downs))
            rest = sp.Add(*(t for t in terms if t is not term and t not in ups and t not in downs))
            kept = sp.Add(term, *ups, *downs)
            normal = (b >= 10) & (u > 2**-100) & (u < PRODUCT_EDGE)
            return rest + sp.Piecewise((-c * (log_digamma_gap(u, b) - steps), normal), (kept, True))
        for other in terms:
            k, log_u = other.as_coeff_Mul()
            if isinstance(log_u, sp.log) and k == -c:
                rest = sp.Add(*(t for t in terms if t is not term and t is not other))
                u = log_u.args[0]
                return rest + sp.Piecewise((k * (log_digamma_gap(u, b) - steps), b >= 10), (other + term, True))
    return None


def _lgamma_near_its_zeros(node: sp.Expr) -> sp.Expr | None:
    """In a sum, lgamma(c + u) = -lgamma_diff(c, u) for c = 1 or 2, where lgamma is 0: c + u
    rounds, and lgamma of the rounded sum loses u near 0 (lgamma(1 + x) is -0.577*x; 0 in
    float32 for |x| < 6e-8, and 2% off at x = 1e-6). _lgamma_diff steps u exactly. Stirling's
    remainder lgamma(x + 1) - x*log(x) + x lost 5-16 bits for x below 1e-3. Not alone, where
    the series regime at 0 serves (lgamma(x + 1), the log-factorial) and _lgamma_diff's
    sixty ops would be paid for nothing."""
    if not isinstance(node, sp.Add):
        return None
    near = {}
    for g in node.atoms(lgamma):
        c, u = g.args[0].as_coeff_Add()
        if c in (1, 2) and u.free_symbols:
            near[g] = -lgamma_diff(c, u)
    return node.xreplace(near) if near else None


def _polygamma_difference(node: sp.Expr) -> sp.Expr | None:
    """c*(polygamma(n, p) - polygamma(n, p + x)) = c*polygamma_diff(n, p, x) where the two
    are apart (_apart; digamma(a) - digamma(a + b)): they cancel where x is small beside p
    (at a = 3e9, b = 0.75 both are 21.82 in float32, where the difference is -2.5e-10)."""
    found = _pair_of_opposites(node, lambda f: isinstance(f, sp.polygamma))
    if found is None:
        return None
    c, plus, minus, rest = found
    (n, p), (m, q) = plus.args, minus.args
    apart = _apart(p, q) if n == m else None
    if apart is None:
        return None
    y, x, sign = apart
    return rest + sign * c * polygamma_diff(n, y, x)


def _clear_reciprocals(node: sp.Expr) -> sp.Expr | None:
    """s**a*(b + c/s)**k*... as s**(a - k)*(b*s + c)**k*... for an input s and an integer k,
    where that lowers the powers of s: x**3*(1 + 1/x)**2, as SymPy differentiates
    (1 + 1/x)**x, is 0*inf = NaN below x = 5e-20, where x*(x + 1)**2 is x."""
    if not isinstance(node, sp.Mul):
        return None
    for s in sorted(node.free_symbols, key=sp.default_sort_key):
        powers = node.as_powers_dict()
        outside = sp.sympify(powers.get(s, 0))
        if not (outside.is_Integer and outside != 0):
            continue
        replaced = {}
        total = outside
        for base, k in powers.items():
            if not (isinstance(base, sp.Add) and k.is_Integer):
                continue
            numerator, denominator = sp.fraction(sp.together(base))
            m = sp.degree(denominator, s) if denominator.is_polynomial(s) else 0
            if m <= 0 or denominator != s**m or numerator.has(1 / s):
                continue
            replaced[base**k] = sp.expand(numerator) ** k
            total -= m * k
        if replaced and abs(total) < abs(outside):
            kept = [f for f in sp.Mul.make_args(node) if f not in replaced and f.as_base_exp()[0] != s]
            return sp.Mul(*kept, *replaced.values()) * s**total
    return None


def _softplus_divergence_form(p: sp.Expr, q: sp.Expr) -> sp.Expr:
    """softplus(q) - softplus(p) - sigmoid(p)*(q - p) for p <= 0 (sigmoid(p) <= 1/2): within
    |q - p| < 2 as log1pmx(s*expm1(d)) + s*expm1mx(d), s = sigmoid(p), d = q - p, two terms
    of second order in d whose ratio is s, so at most a bit cancels; beyond, as written."""
    d, s = sp.expand(q - p), sigmoid(p)
    near = log1pmx(s * expm1(d)) + s * expm1mx(d)
    return sp.Piecewise((near, sp.Abs(d) < 2), (softplus(q) - softplus(p) - s * d, True))


def _softplus_divergence(node: sp.Expr) -> sp.Expr | None:
    """c*(softplus(b) - softplus(a) - sigmoid(a)*(b - a)), the KL divergence of two Bernoullis
    in their logits (a Bregman divergence of softplus): second order in b - a, its terms cancel
    near b = a (30 bits at a = -7e-33, b = -5.7e-6) and, for a >> 0, where softplus(a) and a
    do. It equals the same of (-a, -b): written for the argument that is not positive."""
    if not isinstance(node, sp.Add) or _holds_where(node):
        return None
    terms = sorted(node.atoms(softplus), key=sp.default_sort_key)
    for b_term in terms:
        c = node.coeff(b_term)
        if c == 0 or c.has(softplus):
            continue
        for a_term in terms:
            if a_term == b_term or sp.expand(node.coeff(a_term) + c) != 0:
                continue
            a, b = a_term.args[0], b_term.args[0]
            rest = node - c * b_term + c * a_term
            if sp.expand(rest + c * sigmoid(a) * (b - a)) != 0:
                continue
            return c * sp.Piecewise((_softplus_divergence_form(a, b), a <= 0), (_softplus_divergence_form(-a, -b), True))
    return None


LOG_HYPOT_HALVED = sp.Float(2.0**125, 17)


def _log_of_hypot(node: sp.Expr) -> sp.Expr | None:
    """log(hypot(a, b)) as log(hypot(a/2, b/2)) + log(2) where |a| or |b| is beyond 2**125:
    hypot overflows from 2.4e38 in float32 where its log, 88.7 to 89.1, does not (log(x**2 +
    y**2)/2 at x = y = 3.4e38 was inf for 89.07). The halves are exact. The same for pnorm
    (log(x**4 + y**4) at x = y = 3.4e38)."""
    if not (isinstance(node, sp.log) and isinstance(node.args[0], (hypot, pnorm))):
        return None
    norm = node.args[0]
    a, b, *p = norm.args  # pnorm's p
    far = (sp.Abs(a) > LOG_HYPOT_HALVED) | (sp.Abs(b) > LOG_HYPOT_HALVED)
    # ipow(., 1) holds each norm: the rule would take its logs again on the next pass.
    held = sp.log(ipow(norm, 1))
    return sp.Piecewise((sp.log(ipow(norm.func(a / 2, b / 2, *p), 1)) + sp.log(2), far), (held, True))


def _mills_less_argument(node: sp.Expr) -> sp.Expr | None:
    """k*mills(u) - k*u + r as k*mills_gap(u) + r: mills(u) is about u for large u, and the
    difference cancels (the truncated normal's lambda - x, with lambda the inverse Mills
    ratio, was 0 from x = 4e3); mills_gap(u) is about 1/(2*u)."""
    if not isinstance(node, sp.Add):
        return None
    for term in sorted(node.atoms(mills), key=sp.default_sort_key):
        k = node.coeff(term)
        if k == 0 or k.has(mills):
            continue
        u = term.args[0]
        rest = sp.expand(node - k * term + k * u)
        if sp.count_ops(rest) < sp.count_ops(sp.expand(node - k * term)):
            return rest + k * mills_gap(u)
    return None


def _mills_gap_slope(node: sp.Expr) -> sp.Expr | None:
    """k*mills(u)*mills_gap(u) - k/2 + r as (k/2)*mills_gap_slope(u) + r: the product is
    about 1/2 for large u (the truncated normal's variance 1 - lambda*(lambda - x) cancels
    to about 1/x**2)."""
    if not isinstance(node, sp.Add):
        return None
    for gap in sorted(node.atoms(mills_gap), key=sp.default_sort_key):
        u = gap.args[0]
        k = node.coeff(mills(u) * gap)
        constant = node.as_coeff_Add()[0]
        if k != 0 and k.is_number and (constant + k / 2).is_zero:
            return node - k * mills(u) * gap + k / 2 + k / 2 * mills_gap_slope(u)
    return None


def _mills_product(node: sp.Expr) -> sp.Expr | None:
    """r*mills(u)*mills_gap(u) as r*(1 + mills_gap_slope(u))/2 where u > 0: the product is
    about 1/2 for large u, but mills about u overflows r*mills (-4*mills*gap, log(erfc(x))'',
    is -inf*0 = NaN at x = 3.4e38 for -2) and gap, about 1/(2u), flushes (the inverse Mills
    ratio's slope was 0 from x = 6e37 for 1.25). For u <= 0 as it is: mills_gap_slope nears
    -1 there."""
    if not isinstance(node, sp.Mul) or _holds_where(node):
        return None
    for gap in sorted(node.atoms(mills_gap), key=sp.default_sort_key):
        u = gap.args[0]
        if gap in node.args and mills(u) in node.args:
            rest = node / (mills(u) * gap)
            half = (1 + mills_gap_slope(u)) / 2
            return rest * sp.Piecewise((ipow(half, 1), u > 0), (mills(u) * gap, True))
    return None


def _mills_curvature(node: sp.Expr) -> sp.Expr | None:
    """b*mills_gap_slope(u) + 2*b*mills_gap(u)**2 as b*mills_curvature(u): about -b/(2*u**2)
    and b/(2*u**2) for large u, they cancel to b/(2*u**4) (the inverse Mills ratio's f'' is
    2*mills*(2*gap**2 + slope): 12-15 bits off at x = 3-5, 0 from x = 9)."""
    if not isinstance(node, sp.Add):
        return None
    for slope in sorted(node.atoms(mills_gap_slope), key=sp.default_sort_key):
        b = node.coeff(slope)
        if b != 0 and sp.expand(node.coeff(mills_gap(slope.args[0]) ** 2) - 2 * b) == 0:
            return node - b * slope - 2 * b * mills_gap(slope.args[0]) ** 2 + b * mills_curvature(slope.args[0])
    return None


RULES: tuple[Rule, ...] = (
    Rule("log_sum_exp", "log(exp(a) + exp(b) + ...) overflows; logaddexp/softplus do not", _log_of_sum_of_exps),
    Rule(
        "logaddexp_shift",
        "logaddexp(a, b) - a cancels where a dominates; softplus(b - a) does not",
        _logaddexp_less_argument,
    ),
    Rule("log1mexp", "log(1 - exp(-x)) cancels near 0; log1mexp switches forms", _log_one_minus_exp),
    Rule("log_expm1", "log(expm1(u)) overflows for u > 88.7 and log(-expm1(-u)) rounds to 0; u + log1mexp(u) and log1mexp(u) do not", _log_of_expm1),
    Rule(
        "log_diff_exp",
        "log(exp(a) - exp(b)) overflows and cancels; a + log1mexp(a - b) does not",
        _log_of_difference_of_exps,
    ),
    Rule("sigmoid", "1/(1 + exp(u)) overflows in exp; sigmoid does not", _one_over_one_plus_exp),
    Rule(
        "softmax",
        "exp(a)/(exp(a) + exp(b) + ...) is inf/inf where the exps overflow; sigmoid(a - logaddexp(b, ...)) is not",
        _exp_over_sum_of_exps,
    ),
    Rule("exp_times_sigmoid", "exp(u)*sigmoid(-u) is sigmoid(u), without inf*0", _exp_times_sigmoid),
    Rule("one_minus_sigmoid", "1 - sigmoid(u) cancels; sigmoid(-u) does not", _one_minus_sigmoid),
    Rule("log_sigmoid", "log(sigmoid(u)) underflows to -inf; -softplus(-u) does not", _log_of_sigmoid),
    Rule("log_softplus", "log(softplus(u)) is log(0) = -inf where softplus flushes (u < -103); u - exp(u)/2 below u = -20 is not", _log_of_softplus),
    Rule("expm1", "exp(u) - 1 and 1 - exp(u) cancel near 0; expm1 does not", _exp_minus_one),
    Rule("exp_condition", "exp(u) >= c rounds exp(u) to c where u is near log(c); u >= log(c) does not", _exp_condition),
    Rule("tanh", "(exp(u) - 1)/(exp(u) + 1) overflows; tanh(u/2) does not", _tanh_from_exps),
    Rule(
        "log_erfc",
        "log(erfc(u)) is log(0) from u = 9.2 and rounds near u = 0; -u**2 - log(sqrt(pi)*mills(u)) and log1p(-erf(u)) do not",
        _log_of_erfc,
    ),
    Rule(
        "constant_into_where",
        "c + where(cond, a, b): a branch holding -c cancels against c after the where; inside it cancels exactly",
        _constant_into_piecewise,
    ),
    Rule("sech_squared", "1 - tanh(u)**2 rounds to 0 for |u| > 9; 1/cosh(u)**2 does not", _one_minus_tanh_squared),
    Rule(
        "one_minus_cos",
        "1 - cos(u) and cosh(u) - 1 cancel near 0, 1 + cos(u) near pi; 2*sin(u/2)**2, 2*sinh(u/2)**2 and 2*cos(u/2)**2 do not",
        _one_minus_cos,
    ),
    Rule("one_plus_tanh", "1 + tanh(u) cancels as u -> -oo; 2*sigmoid(2u) does not", _one_plus_tanh),
    Rule(
        "acosh_near_one",
        "acosh(1 + u), acosh(exp(v)) and acosh(cosh(v)) are acosh(1) = 0 where the argument rounds to 1; 2*asinh(sqrt(u/2)), u = expm1(v) or 2*sinh(v/2)**2, is not",
        _acosh_near_one,
    ),
    Rule(
        "inverse_sine_near_one",
        "acos and asin of +-1 + u (or of exp, cos, sigmoid, tanh, erf, erfc) are steep where the argument rounds near +-1; 2*asin(sqrt(|u|/2)), u its distance from +-1 (-expm1(v), 2*sin(v/2)**2, ...), holds u's own bits",
        _inverse_sine_near_one,
    ),
    Rule("log1p", "log(1 + u) loses u near 0; log1p does not", _log_one_plus),
    Rule("logcosh", "cosh overflows for |u| > 89; logcosh does not", _log_of_cosh),
    Rule("log_tanh", "log(tanh(u)) is log(1) = 0 for u > 9; log1mexp(2u) - softplus(-2u) is not", _log_of_tanh),
    # Applied, not offered to the judge: its grid meets neither x = 0 beside y nor a truth
    # there (SymPy's y*x**y/x is 0/0 in mpmath too), and it measures the parity of y - 1
    # rounded for y < -2**24 at x < 0, which TF's own gradient of pow, y*x**(y - 1), shares.
    # The cost: x**(y - 2) overflows at x = y = 2e-37, where y*x**y/x*(y - 1)/x does not.
    Rule("power_over_base", "y*x**y/x is 0/0 = nan at x = 0 and inf/x where x**y overflows; y*x**(y - 1) is not", _power_over_base),
    Rule(
        "gamma_log_density",
        "(a - 1)*log(u) - u - lgamma(a) cancels near u = a for large a; a*log1pmx((u - a)/a) - log(u) + log(a)/2 - log(2*pi)/2 - C(a) does not",
        _gamma_log_density,
    ),
    Rule(
        "log_digamma",
        "log(u) - digamma(a) cancels near u = a for large a; log1p((u - a)/a) + (log(a) - digamma(a)) from its series does not",
        _log_digamma,
    ),
    Rule("xlogy", "x*log(x) is 0*inf = nan at 0; xlogy is 0", _x_log_x),
    Rule("xlog1py", "(1 + v)*log1p(v) is 0*inf = nan at v = -1; xlog1py is 0", _x_log1p_x),
    Rule("hypot", "squares overflow above 1.8e19; hypot scales first", _sqrt_of_sum_of_squares),
    Rule(
        "pnorm",
        "(|a|**p + |b|**p)**(1/p) overflows in the powers where the norm does not; pnorm scales first",
        _power_sum_norm,
    ),
    Rule(
        "log1p_norm",
        "log1p(|a|**p + |b|**p) overflows in the powers where the log does not; p*log(norm(1, a, b)) where a leg is beyond 1",
        _log1p_of_power_sum,
    ),
    Rule(
        "hypot_where_nonnegative",
        "sqrt(a**2 + r) overflows in the square; hypot(a, sqrt(r)) where r >= 0 does not",
        _unsigned_root_hypot,
        top_down=True,
    ),
    Rule(
        "hypot_ratio",
        "u/hypot(u, v) is 0 where hypot overflows and the ratio is not; hypot_ratio scales first",
        _leg_over_hypot,
        top_down=True,
    ),
    Rule(
        "hypot_ratio_gap",
        "hypot_ratio(a, b)**2 - hypot_ratio(b, a)**2 cancels where |a| is near |b|; (a - b)/h*(a + b)/h, each difference taken first, does not",
        _hypot_ratio_squares,
    ),
    Rule("sign_product", "u*sign(u) is |u|, which cancels exactly against the |u| beside it", _sign_product),
    Rule("hypot_minus_const", "hypot(c, u) - c cancels near u = 0", _hypot_minus_one),
    Rule(
        "inverse_hyperbolic",
        "log(u + sqrt(u**2 + 1)) cancels for u << 0 and overflows in u**2; asinh (acosh) does not",
        _inverse_hyperbolic,
    ),
    Rule("erfc", "1 + erf(u) cancels for u << 0 and 1 - erfc(u) near 0; erfc(-u) and erf(u) do not", _erf_complements),
    Rule(
        "erfc_tail",
        "exp(-u**2) and erfc(u) underflow from u = 9.2 where their quotient is about u; erfc's hazard mills(u) does not",
        _erfc_and_exp,
    ),
    Rule(
        "log_hypot",
        "log(hypot(a, b)) is inf where hypot overflows (|a| near 3.4e38) and the log is 89; log(hypot(a/2, b/2)) + log(2) is not",
        _log_of_hypot,
    ),
    Rule(
        "clear_reciprocals",
        "s**a*(b + c/s)**k is 0*inf where s**a flushes and c/s overflows; s**(a - k)*(b*s + c)**k is not",
        _clear_reciprocals,
    ),
    Rule(
        "mills_gap",
        "k*mills(u) - k*u cancels for large u; k*mills_gap(u) does not",
        _mills_less_argument,
    ),
    Rule(
        "mills_gap_slope",
        "2*mills(u)*mills_gap(u) - 1 cancels for large u; mills_gap_slope(u) does not",
        _mills_gap_slope,
    ),
    Rule(
        "mills_curvature",
        "2*mills_gap(u)**2 + mills_gap_slope(u) cancels for large u; mills_curvature(u) does not",
        _mills_curvature,
    ),
    Rule("sigmoid_difference", "sigmoid(u) - sigmoid(-u) cancels near 0; tanh(u/2) does not", _sigmoid_difference),
    Rule(
        "sigmoid_polynomial",
        "a polynomial in sigmoid(u), sigmoid(-u) and tanh(u/2) whose terms cancel at u = 0 or as u -> +-oo; factored, with tanh(u/2) and sigmoid(+-u), it does not",
        _sigmoid_polynomial,
    ),
    Rule("zero_branch", "r*where(c, 0, v) is 0*inf = NaN where r is inf on the zero branch; where(c, 0, r*v) is 0", _zero_branch),
    Rule(
        "tanh_over_cosh",
        "sinh(u)/cosh(u)**k and cosh(u)/sinh(u) are inf/inf for |u| > 89; tanh(u)/cosh(u)**(k-1) and 1/tanh(u) are not",
        _tanh_over_cosh,
    ),
    Rule("exp_over_expm1_squared", "exp(u)/expm1(u)**2 is inf/inf where exp overflows", _exp_over_expm1_squared),
    Rule("softplus_reflection", "a*softplus(-u) + b*softplus(u) cancels for large a, b", _softplus_reflection),
    Rule("balance_ratio", "a**k/b**k overflows where a/b does not", _balance_ratio),
    Rule("balance_gaussian", "u**k*exp(-c*u**2) is inf*0 where u**k overflows", _balance_gaussian),
    Rule("lbeta", "lgamma(a) + lgamma(b) - lgamma(a + b) cancels where an argument is large; lbeta does not", _lgamma_sums),
    Rule(
        "softplus_less_exp",
        "c*softplus(u)*sigmoid(-u) - c*sigmoid(u) and c*softplus(u) - c*exp(u) cancel to exp(u)**2/2 for u << 0; c*sigmoid(-u)*log1pmx(exp(u)) and c*log1pmx(exp(u)) do not",
        _softplus_less_exp,
    ),
    Rule(
        "lbeta_of_integer",
        "lbeta(a, k) for an integer k up to 4 is log((k - 1)!) - log|a| - ... - log|a + k - 1|, exact, the logs as the rules write them (the helper's lbeta(inf, 2) is -inf); so are polygamma_diff(n, y, k)'s powers",
        lambda node: _lbeta_of_integer(node) or _polygamma_diff_of_integer(node),
    ),
    Rule(
        "lbeta_of_huge",
        "lbeta(a, u) and lgamma_diff(u, a) are -inf where u = exp(v), x**2, ... flows over and they are finite; lgamma(a) - a*log(u) - (a**2 - a)/(2*u) (without lgamma(a) for lgamma_diff) above u = e**80, the log as the rules write it, is not",
        _lbeta_of_huge,
    ),
    Rule(
        "lbeta_of_tiny",
        "lbeta(a, b) is inf where a = exp(v), sigmoid(v), ... flushes to 0, and its slopes' poles cancel for small a; lbeta(1 + a, b) + log|a + b| - log|a| below 1/2, the logs as the rules write them, is neither (lgamma_diff(a, b) likewise)",
        lambda node: _lbeta_of_tiny(node) or _lgamma_diff_of_tiny(node),
    ),
    Rule(
        "lgamma_of_tiny",
        "lgamma(u) is lgamma(0) = inf where u = exp(v), sigmoid(v), x*y, ... flushes to 0, and its slopes' poles cancel for small u; lgamma(1 + u) - log|u| below 1/2, the log as the rules write it, is neither",
        _lgamma_of_tiny,
    ),
    Rule(
        "polygamma_diff",
        "polygamma(n, a) - polygamma(n, a + b) cancels where b is small beside a; polygamma_diff does not",
        _polygamma_difference,
    ),
    # Last: the rules above read sin and cos (1 - cos(pi*x) as 2*sin(pi*x/2)**2 first).
    Rule(
        "sin_pi",
        "sin(pi*u), cos(pi*u) and tan(pi*u) round pi*u first: wrong near every integer u and beyond 2**24; sinpi(u) and cospi(u) reduce u exactly",
        _trig_of_pi_multiple,
    ),
)


def _distribute_quotient(node: sp.Expr) -> sp.Expr | None:
    """(a + c*w**k)/b**n = a/b**n + c*(w/b)**n*w**(k-n) for k >= n: the power w**k can
    overflow where the quotient does not (gaussian_nll's d/ds is (1 - u**2)/s, u = 1e23)."""
    if not isinstance(node, sp.Mul):
        return None
    sums = [f for f in node.args if isinstance(f, sp.Add)]
    dens = [f for f in node.args if isinstance(f, sp.Pow) and f.exp.is_Integer and f.exp < 0 and not f.base.is_number]
    if len(sums) != 1 or len(dens) != 1:
        return None
    (total,), (den,) = sums, dens
    b, n = den.base, -int(den.exp)
    rest = sp.Mul(*(f for f in node.args if f is not total and f is not den))
    terms, changed = [], False
    for term in total.args:
        powers = [f for f in sp.Mul.make_args(term) if isinstance(f, ipow) and f.args[1] >= n]
        if not powers:
            terms.append(term * den)
            continue
        w, k = powers[0].args
        others = sp.Mul(*(f for f in sp.Mul.make_args(term) if f is not powers[0]))
        # ipow(w, 1) keeps w = (x - m)/s from merging with b into (x - m)/s**2.
        terms.append(others * ipow(ipow(w, 1) / b, n) * ipow(w, k - n))
        changed = True
    return rest * sp.Add(*terms) if changed else None


def _log_of_ratio(node: sp.Expr) -> sp.Expr | None:
    """log(a/b) = log1p((a - b)/b) where a/b is near 1, with a - b simplified: the rounding
    of a/b costs log its relative error as an absolute one, which is many bits where the log
    is near 0 (logit at x = 0.49: 5 bits), and 2x - 1 is exact there. Far from 1 the ratio
    stays (at x = 1e-10, (2x - 1)/(1 - x) rounds to -1)."""
    if not isinstance(node, sp.log):
        return None
    num, den = node.args[0].as_numer_denom()
    if den == 1:
        return None
    return _log_near_one(num, den, node)


def _log_of_quotient(node: sp.Expr) -> sp.Expr | None:
    """log(a/b) as _log_of_ratio writes it near a = b, and as log(sign(b)*a) - log|b| far
    from it: a/b overflows or flushes where the log need not (log(x/y) at x = 6e36, y = 7e-25
    is log(inf); the truth is 140.3). sign(b)*a is positive exactly where a/b is, so the
    log is NaN where the original is. Two logs where the ratio needs one: a variant beside
    log_of_ratio's, for the judge to weigh."""
    if not isinstance(node, sp.log):
        return None
    num, den = node.args[0].as_numer_denom()
    if den == 1 or den.is_number:
        return None
    # sign(x**2) = 1 but at 0 (SymPy keeps it), where log(num) - log|den| is right as well.
    return _log_near_one(num, den, _log_quotient(num, den))


def _log_of_product(node: sp.Expr) -> sp.Expr | None:
    """log(c*b1**k1*b2**k2*...) as log|c| + k1*log|b1| + ... where the product is beyond
    2**100 or below 2**-100 (PRODUCT_EDGE): the product over- or underflows where its log
    need not (log(x*y) at x = y = 1e20 is log(inf), the truth 92.1; log(pi*v) at v = 2e38).
    The sign stays with one factor of odd power, log(sign(c)*sign(b2)*...*b1), so the log
    is NaN exactly where the product is negative; log|c*b1*...| and log(c*|b1*b2|) are sums
    of the factors' log|b|. Between the bounds the product's log stays: there the logs' sum
    cancels where the product is near 1 (x = 1e10, y = 1e-10), and the product rounds only
    once."""
    if not isinstance(node, sp.log):
        return None
    # |a*b*...| as |a|*|b|*...: log|x*y|, log(2*|x*y|). A factor that is not negative, as
    # |a| is, needs no sign.
    u = sp.Mul(*(abs_apart(f) for f in sp.Mul.make_args(node.args[0])))
    if not isinstance(u, sp.Mul):
        return None
    coeff, body = u.as_coeff_Mul()
    if _holds_where(u) or not coeff.is_real:
        return None
    logs, odd = [], []
    for b, e in _power_factors(body):
        if b.is_nonnegative:  # exp(y) is (E, y); pi*v's pi; |x|
            logs.append(e * sp.log(b))
        elif not b.free_symbols or not e.is_Rational:
            return None  # log_of_power's power of an input, or a number that may be negative
        elif e.is_Integer and e.is_odd:
            odd.append((b, e))
        else:
            # An even power's base may be negative, a fractional power's (real there) may not.
            logs.append(e * sp.log(sp.Abs(b) if e.is_Integer else b))
    if len(odd) + len(logs) + (abs(coeff) != 1) < 2 or (not odd and coeff < 0):
        return None
    if odd:
        (b1, k1), rest = odd[0], odd[1:]
        sign = sp.sign(coeff) * sp.Mul(*(sp.sign(b) for b, _ in rest))
        logs += [sp.log(sign * b1), (k1 - 1) * sp.log(sp.Abs(b1))] + [e * sp.log(sp.Abs(b)) for b, e in rest]
    split = sp.log(abs(coeff)) + sp.Add(*logs)
    # (SymPy leaves |2*|x*y|| as 2*||x*y||.)
    size = sp.Abs(node.args[0]).replace(lambda e: isinstance(e, sp.Abs) and e.args[0].is_nonnegative, lambda e: e.args[0])
    return sp.Piecewise((split, (size > PRODUCT_EDGE) | (size < 1 / PRODUCT_EDGE)), (node, True))


def abs_apart(factor: sp.Expr) -> sp.Expr:
    """|a*b*...| as |a|*|b|*..., any other factor as it is."""
    if isinstance(factor, sp.Abs) and isinstance(factor.args[0], sp.Mul):
        return sp.Mul(*(sp.Abs(f) for f in factor.args[0].args))
    return factor


# log_of_product takes the logs apart beyond this size of the product or below its
# reciprocal: where the product is inf, subnormal or 0, or near that. Not at float32's
# smallest normal number, 2**-126 itself: SymPy takes a constant out of the comparison
# (|2*x**2*y| < 2**-126 as x**2*|y| < 2**-127), and TensorFlow on the CPU reads a subnormal
# constant as 0 (log(2*pi*x**2*y) was -inf at x = y = 1.7e-37); 2**100 leaves room for
# constants up to 2**26. Between, the product's log, rounded once, is as accurate as the
# logs' sum, which cancels where the product is near 1 (x = 1e10, y = 1e-10).
PRODUCT_EDGE = sp.Float(2.0**100, 17)


# log1p_of_product takes the logs apart beyond this size of the product: where the log is
# above 16.6, so that the rounding of the logs' sum costs little of it, and before a
# quotient by 1 + u goes subnormal (log(1 + exp(x)*y)' at x = 90, y = 1e-30 has
# y/(1 + u) = 7.7e-40 with u = 1.3e9, which TF flushes: 0 where the truth is 1).
LOG1P_FAR = sp.Integer(2) ** 24
# The largest finite value of the inputs' dtype: only an infinity is above it.
DTYPE_MAX = by_dtype(sp.Float(3.4028234663852886e38, 17), sp.Float(1.7976931348623157e308, 17))
# The smallest normal value of the inputs' dtype: a result below it is subnormal, or 0.
DTYPE_TINY = by_dtype(sp.Float(2.0**-126, 17), sp.Float(2.0**-1022, 17))


def _log1p_of_product(node: sp.Expr) -> sp.Expr | None:
    """log1p(c*b1**k1*b2**k2*...) as softplus(log|c| + k1*log|b1| + k2*log|b2| + ...) where
    the product u > 2**24, of two inputs or more, or one below the line: u overflows where
    its log need not (log(1 + x**2/y) at x = 6e36, y = 7e-25 is log1p(inf); the truth is
    112.5). Through ipow's groups: x*(x/y) is log|x| + log|x| - log|y|, not log|x/y|, which
    overflows too. Where u is negative or small, log1p(u) stays (the logs' rounding would
    cost |log(u)| ulps of a small result)."""
    if not isinstance(node, log1p):
        return None
    u = node.args[0]
    coeff, body = u.as_coeff_Mul()
    factors = _power_factors(body)
    # exp(u) is (E, u): log|E|*u = u, an input's factor too. One factor will do where it is
    # a quotient: log(1 + 1/x**2) is log1p((1/x)**2), inf below 5e-20 (a power above 1 is
    # log_of_polynomial's).
    inputs = [e for b, e in factors if b.free_symbols or e.free_symbols]
    one_quotient = len(inputs) == 1 and inputs[0].is_negative
    if coeff == 0 or (len(inputs) < 2 and not one_quotient):
        return None
    # log1p(u) = softplus(log(u)) for u > 0, whose derivative, sigmoid(log(u))*log(u)', has
    # no power of u to overflow (log1p(1/u)'s would: 1/(y**2*(1 + 1/u)*u) is 0*inf at
    # y = 8e-20 in log(1 + (x/y)**2)'').
    return sp.Piecewise((softplus(_log_abs_product(u)), u > LOG1P_FAR), (node, True))


def _log_abs_product(u: sp.Expr) -> sp.Expr:
    """log|u| of a product u = c*b1**k1*b2**k2*... as log|c| + k1*log|b1| + ...: u over- or
    underflows where its log need not."""
    coeff, body = u.as_coeff_Mul()
    return sp.log(sp.Abs(coeff)) + sp.Add(*(e * sp.log(sp.Abs(b)) for b, e in _power_factors(body)))


def _log_of_power(node: sp.Expr) -> sp.Expr | None:
    """log(b**w) = xlogy(w, b) where b > 0, for an exponent w with an input in it: the power
    overflows or flushes where its log need not (log(x**x) is log(inf) from x = 40)."""
    if not (isinstance(node, sp.log) and isinstance(node.args[0], sp.Pow)):
        return None
    b, w = node.args[0].args
    if w.is_number or not b.free_symbols or _holds_where(node):
        return None
    return sp.Piecewise((xlogy(w, b), b > 0), (node, True))


def _sign_of_factor(f: sp.Expr) -> sp.Expr:
    """sign(f), of a whole power from its base: 1/y flushes to 0 where |y| > 2**126 (sign(1/y)
    made sqrt(x/y) 0 at x = y = 3.4e38), and an even power's sign is 1 wherever it is not 0."""
    b, e = f.as_base_exp()
    if e.is_Integer:
        return sp.sign(b) if e.is_odd else sp.Integer(1)
    return sp.sign(f)


def _root_of_product(node: sp.Expr) -> sp.Expr | None:
    """(a*b*...)**e for a fractional e as (sign(b)*...*a)**e*|b|**e*...: the product over- or
    underflows where its root need not (the Bhattacharyya term sqrt(p*q) is 0 at p = q =
    1e-20, where it is 1e-20; sqrt(x*y) is inf at x = y = -1e20). Where the product is
    negative, the first root is of a negative number, as the product's is."""
    if not (isinstance(node, sp.Pow) and node.exp.is_Rational and not node.exp.is_Integer):
        return None
    if not isinstance(node.base, sp.Mul):
        return None
    coeff, body = node.base.as_coeff_Mul()
    factors = [f for f in sp.Mul.make_args(body) if f.free_symbols]
    if len(factors) < 2 or len(factors) != len(sp.Mul.make_args(body)) or _holds_where(node):
        return None
    # The sign of each factor, not of their product, which flushes to 0 where they are small.
    first, signs = factors[0], sp.Mul(*(_sign_of_factor(f) for f in factors[1:]))
    return (coeff * signs * first) ** node.exp * sp.Mul(*(sp.Abs(f) ** node.exp for f in factors[1:]))


# log1mexp_of_product takes the logs apart below this size of the product, where
# log1mexp(u) = log(u) + S(u), S(u) = log((1 - exp(-u))/u) = -u/2 + u**2/24 - u**4/2880 + ...
# (Bernoulli numbers), its Taylor polynomial to u**22 within 2**-60 of S for u < 1. With
# S as -u/2 alone the threshold was 2**-20, and the derivatives of log1mexp(exp(x)) (the
# complementary log-log link) cancelled above it: f'' 18 bits off at x = -12.
LOG1MEXP_NEAR = sp.Integer(1)
_LOG1MEXP_TERMS = 22


def _log1mexp_series(u: sp.Expr) -> sp.Expr:
    """S(u) = log1mexp(u) - log(u) as its Taylor polynomial at 0 (polyval)."""
    return polyval(_log1mexp_coefficients(), u)


@functools.cache
def _log1mexp_coefficients() -> sp.Tuple:
    t = sp.Dummy("t", positive=True)
    series = sp.series(sp.log((1 - sp.exp(-t)) / t), t, 0, _LOG1MEXP_TERMS + 1).removeO()
    return sp.Tuple(*(series.coeff(t, k) for k in range(_LOG1MEXP_TERMS, -1, -1)))


def _log1mexp_of_product(node: sp.Expr) -> sp.Expr | None:
    """log1mexp(c*b1**k1*b2**k2*...) as log|c| + k1*log|b1| + ... + S(u) where the product u is
    below 1 (S: LOG1MEXP_NEAR): u flushes to 0 where its log need not (the Weibull log-CDF
    log(1 - exp(-(x/l)**k)) at x = 1e-10, k = 5 is log(0) = -inf; the truth is -115)."""
    if not isinstance(node, log1mexp):
        return None
    u = node.args[0]
    coeff, body = u.as_coeff_Mul()
    factors = _power_factors(body)
    inputs = [(b, e) for b, e in factors if b.free_symbols or e.free_symbols]
    if coeff == 0 or not inputs or (len(inputs) == 1 and inputs[0][1] == 1):
        return None  # no product or power to flush: log1mexp(x) keeps x
    return sp.Piecewise((_log_abs_product(u) + _log1mexp_series(u), (u >= 0) & (u < LOG1MEXP_NEAR)), (node, True))


def _log_abs_quotient(a: sp.Expr, b: sp.Expr, positive_a: sp.Expr) -> sp.Expr:
    """log(positive_a) - log|b|, for log|a/b| (positive_a = |a|) or log(a/b) (sign(b)*a),
    with log|b| a sum over b's factors: x**2 flushes at x = 8e-20, where 2*log|x| is -87.9.
    A log of a difference of exps takes its own form (log_diff_exp's, which the variant's
    output does not pass through again): the divided difference's
    log((exp(x) - exp(y))*sign(x - y)) is log(inf) from x = 88.7."""
    head = sp.log(positive_a)
    if isinstance(head, sp.log):
        head = _log_of_difference_of_exps(head) or head
    return head - _log_abs_product(b)


def _log_quotient(a: sp.Expr, b: sp.Expr) -> sp.Expr:
    """log(a/b) as log(sign(b)*a) - log|b| (log(a) - log|b| for b >= 0): sign(b)*a is positive
    exactly where a/b is, so the log is NaN where log(a/b) is."""
    return _log_abs_quotient(a, b, a if b.is_nonnegative else sp.sign(b) * a)


def _holds_where(e: sp.Expr) -> bool:
    """Whether `e` holds a where, so that a variant's condition on it would too: SymPy's
    Piecewise rewrites such a condition as ITE and asks for its set (periodicity, simplify),
    over 90 s on the fuzzer's log2(log10(log10(y))). Those variants decline."""
    return e.has(sp.Piecewise)


def _log_near_one(a: sp.Expr, b: sp.Expr, far: sp.Expr) -> sp.Expr:
    """log(a/b) as log1p((a - b)/b), with a - b simplified, where a/b is from 1/2 to 2**24:
    log1p of a positive argument does not cancel, and log(a) - log(b) does where a is near
    b, or where both are far from 1 (x*log(x) + y*log(y) - (x + y)*log(x + y)'s slope
    log(x) - log(x + y) lost 7 bits at x = y = 4e-36, each log -80 for a difference of
    log(2)). `far` (the same log, as the caller had it) elsewhere: below 1/2, where
    (a - b)/b rounds next to -1, and beyond 2**24 (LOG1P_FAR), where it may overflow and the
    logs' rounding costs little of their difference (log(cosh(x)/x**2)' through log1p was
    -2/x**3*(...), -inf at x = 1e-13). Where (a - b)/b is
    NaN (0/0, which a series regime of log1p's branch may serve: log(tanh(x)/x) at 0), the
    log1p branch too."""
    split = _near_one(a, b)
    if split is None:
        return far
    near, far_from_one = split
    return sp.Piecewise((far, far_from_one), (log1p(near), True))


def _near_one(a: sp.Expr, b: sp.Expr) -> tuple[sp.Expr, sp.Expr] | None:
    """((a - b)/b with a - b simplified, the condition where _log_near_one keeps its `far`
    form), or None where the quotient holds a where, or is not real (a branch that SymPy
    evaluated to a complex number: acosh(0) = I*pi/2 in log(acosh(min(x, 0))))."""
    difference = sp.expand(a - b)
    near = difference / b
    if _holds_where(near) or near.has(sp.I):
        return None
    far = (near < -sp.Rational(1, 2)) | (near > LOG1P_FAR)
    # Where a - b overflows the quotient is +-inf, which the far condition holds, or inf/inf
    # = NaN where b does too (x/expm1(x) at x = 89), which no comparison holds: the far form
    # serves there. A difference of degree 1 in the inputs (logit's 2*x - 1), or a number
    # ((1 + x**2)/x**2's 1), is finite where they are.
    symbols = difference.free_symbols
    if not symbols or _linear(difference):
        return near, far
    far |= sp.Abs(difference) > DTYPE_MAX
    # Where two of its terms can overflow, a - b is inf - inf = NaN, which no comparison
    # holds: each such term beyond the range takes the far form too (log((exp(x) - exp(y))/
    # (x - y)) was log1p(NaN) at x = 100, y = 99; the truth is 99.5).
    large = [term for term in sp.Add.make_args(difference) if term.free_symbols and not _linear(term)]
    if len(large) >= 2:
        far = sp.Or(far, *(sp.Abs(term) > DTYPE_MAX for term in large))
    return near, far


def _linear(u: sp.Expr) -> bool:
    """Whether u is a polynomial of degree 1 or less in its inputs: finite where they are."""
    symbols = u.free_symbols
    return u.is_polynomial(*symbols) and sp.Poly(u, *symbols).total_degree() <= 1


# f(u) = g(u) + f(-u): softplus(u) = u + softplus(-u), sigmoid(u) = 1 - sigmoid(-u).
_REFLECTIONS = {softplus: lambda u: u, sigmoid: lambda u: sp.Integer(1)}
_REFLECTED_SIGN = {softplus: 1, sigmoid: -1}


def _reflection_split(node: sp.Expr) -> sp.Expr | None:
    """a*f(u) + r = a*(g(u) +- f(-u)) + r where u > 0, for f = softplus or sigmoid, with the
    rest collected: softplus(z) - t*z at z = 3e5, t = 1 - 6e-8 is z - t*z, which cancels, and
    softplus(-z) + z*(1 - t) does not; sigmoid(z) - t there is (1 - t) - sigmoid(-z).
    Also a lone a*softplus(u) whose a*u is simpler than a and u (softplus with a sharpness,
    softplus(k*x)/k, or a temperature, t*softplus(x/t)): a*u + a*softplus(-u) where u > 0,
    which is x where k*x overflows; softplus(k*x)/k is inf there."""
    if isinstance(node, sp.Mul):
        coeff, rest = node.as_independent(softplus, as_Add=False)
        if not isinstance(rest, softplus) or rest.args[0].is_number:
            return None
        u = rest.args[0]
        multiple = sp.expand(coeff * u)
        if sp.count_ops(multiple) >= sp.count_ops(coeff) + sp.count_ops(u):
            return None
        return sp.Piecewise((multiple + coeff * softplus(-u), u > 0), (node, True))
    if not isinstance(node, sp.Add):
        return None
    reflectable = [(term, *term.as_independent(softplus, sigmoid, as_Add=False)) for term in node.args]
    reflectable = [(t, c, r) for t, c, r in reflectable if type(r) in _REFLECTIONS and not r.args[0].is_number]
    arguments = [u for u in dict.fromkeys(r.args[0] for _, _, r in reflectable) if _cancels_beside(node, reflectable, u)]
    # Not u beside -u (swish'' holds sigmoid(x) and sigmoid(-x)): one split decides both.
    if 2 <= len(arguments) <= _REFLECTED_AT_ONCE and not any(-u in arguments for u in arguments):
        return _reflect_each(node, reflectable, arguments, frozenset())
    if not arguments:
        return None  # nothing for a softplus's multiples of u to cancel against
    # Every term in f(u) at once: softplus(u) - u*sigmoid(u) (the entropy of a logit) is
    # softplus(-u) + u*sigmoid(-u) where u > 0; one reflected alone left softplus(u) - u.
    u = arguments[0]
    group = [(t, c, type(r)) for t, c, r in reflectable if r.args[0] == u]
    others = node - sp.Add(*(t for t, _, _ in group))
    # A term this rule split already (a lone -softplus(x)/x, rewritten below the sum) by
    # its own u > 0 branch: sigmoid(x) - softplus(x)/x held 1 + (-1 - softplus(-x)/x),
    # which rounds to 0 (log(1 + exp(x))/x's slope, 20 bits off at x = 10).
    positive = u > 0

    def split(e: sp.Expr) -> bool:
        return isinstance(e, sp.Piecewise) and len(e.args) == 2 and e.args[0].cond == positive

    others = others.replace(split, lambda e: e.args[0].expr)
    near = sp.collect(sp.expand(sp.Add(*(c * _REFLECTIONS[f](u) for _, c, f in group)) + others), u)
    # ipow(near, 1) keeps 1 - t together: SymPy would flatten the sum into -t - s(-z) + 1.
    near = ipow(near, 1) if isinstance(near, sp.Add) else near
    reflected = sp.Add(*(_REFLECTED_SIGN[f] * c * f(-u) for _, c, f in group)) + near
    return sp.Piecewise((reflected, positive), (node.replace(split, lambda e: e.args[1].expr), True))


# Arguments reflected together, each where it is positive: 2**n branches.
_REFLECTED_AT_ONCE = 3


def _cancels_beside(node: sp.Expr, reflectable: list[tuple[sp.Expr, sp.Expr, sp.Expr]], u: sp.Expr) -> bool:
    """Whether reflecting the terms in f(u) could cancel against the rest of the sum: a sigmoid
    (1 - sigmoid(-u)), or softplus's u beside terms in u's inputs."""
    group = [(t, type(r)) for t, _, r in reflectable if r.args[0] == u]
    others = node - sp.Add(*(t for t, _ in group))
    return not (all(f is softplus for _, f in group) and not others.has(*u.free_symbols))


def _reflect_each(
    node: sp.Expr, reflectable: list[tuple[sp.Expr, sp.Expr, sp.Expr]], arguments: list[sp.Expr], positive: frozenset
) -> sp.Expr:
    """The sum with f(u) reflected for each u in `positive`, as a where over the signs of the
    `arguments` still to decide: softplus(x) + softplus(y) - softplus(x + y) at x = -94,
    y = 1e17 is y - (x + y) + softplus(x) = 0 as written, and softplus(-x) + softplus(-y) -
    softplus(-x - y) - x where y > 0 and x + y > 0 (truth 94). The reflected terms' g(u)
    and the terms without f collected and held, as one argument's split holds them."""
    if arguments:
        u, rest = arguments[0], arguments[1:]
        return sp.Piecewise(
            (_reflect_each(node, reflectable, rest, positive | {u}), u > 0),
            (_reflect_each(node, reflectable, rest, positive), True),
        )
    flipped = [(t, c, r) for t, c, r in reflectable if r.args[0] in positive]
    if not flipped:
        return node
    others = node - sp.Add(*(t for t, _, _ in flipped))
    kept = sp.Add(*(t for t, _, r in reflectable if r.args[0] not in positive))
    linear = sp.Add(*(c * _REFLECTIONS[type(r)](r.args[0]) for _, c, r in flipped))
    near = sp.expand(linear + others - kept)
    near = ipow(near, 1) if isinstance(near, sp.Add) else near
    reflected = sp.Add(*(_REFLECTED_SIGN[type(r)] * c * type(r)(-r.args[0]) for _, c, r in flipped))
    return reflected + near + kept


def _as_polynomial(p: sp.Expr) -> tuple[sp.Expr, list[sp.Expr]] | None:
    """(u, coefficients from the highest power down) where `p` is a polynomial with numeric
    coefficients in one u: a symbol, or the base of one of p's powers ((x - y)**2 + 1,
    1 + ipow(x/y, 2))."""
    bases = [f.base for f in p.atoms(sp.Pow) if f.exp.is_Integer and f.exp >= 2 and not f.base.is_number]
    # ipow(x/y, 2), which balance_ratio makes of x**2/y**2: a polynomial in x/y.
    bases += [f.args[0] for f in p.atoms(ipow) if f.args[1] >= 2]
    for u in sorted(dict.fromkeys([*bases, *p.free_symbols]), key=sp.default_sort_key):
        if not _polynomial_shape(p, u):
            continue
        d = sp.Dummy("u", real=True)
        q = p.xreplace({u: d})
        if q.free_symbols != {d} or not q.is_polynomial(d):
            continue
        coeffs = sp.Poly(q, d).all_coeffs()
        if all(c.is_number for c in coeffs):
            return u, coeffs
    return None


def _polynomial_shape(p: sp.Expr, u: sp.Expr) -> bool:
    """Whether `p` is built of u, constants, sums, products and powers (Pow, ipow) to
    integers >= 0: true of every polynomial in u that _as_polynomial finds, and quick to
    refute. Replacing u rebuilds the whole tree (a nest of wheres in log(erf(y) - erf(x))'s
    partials: 13 ms a try), so only a sum of this shape is tried."""
    if p == u or not p.free_symbols:
        return True
    if isinstance(p, (sp.Add, sp.Mul)):
        return all(_polynomial_shape(a, u) for a in p.args)
    if isinstance(p, (sp.Pow, ipow)):
        base, k = p.args
        return k.is_Integer and k >= 0 and _polynomial_shape(base, u)
    return False


def _reversed(coeffs: list[sp.Expr], u: sp.Expr) -> sp.Expr:
    """p(u)/u**n as a polynomial in 1/u, for p's `coeffs` (highest power first)."""
    return sp.Add(*(c * ipow(1 / u, j) if j else c for j, c in enumerate(coeffs)))


def _log_of_polynomial(node: sp.Expr) -> sp.Expr | None:
    """log(p(u)) and log1p(q(u)) for a polynomial of degree n >= 2 in one u: its powers
    overflow for |u| > (3.4e38/a)**(1/n), a the leading coefficient, where the log is still
    about n*log|u| (log(1 + x**2) at x = 1e20 is 92.1, not inf). Where a*u**n > 2**60 it is
    log|a| + n*log|u| + log1p(r(1/u)/a), r the lower terms over u**n, which forms no power
    of u (for odd n, log(sign(a)*u): NaN on the side where p is negative, as the log is)."""
    p = _log_argument(node)
    found = None if p is None else _as_polynomial(p)
    if found is None or len(found[1]) < 3:
        return None
    u, coeffs = found
    a, n = coeffs[0], len(coeffs) - 1
    if n % 2 == 0 and a < 0:
        return None  # negative far out on both sides: no log to keep
    threshold = sp.Float(2.0 ** math.floor((60 - math.log2(abs(a))) / n), 17)
    if n % 2:
        log_u = sp.log(sp.sign(a) * u)
    else:
        # log|x/y| as log|x| - log|y|: x/y itself overflows beyond 3.4e38.
        top, bottom = u.as_numer_denom()
        log_u = sp.log(sp.Abs(u)) if bottom.is_number else _log_abs_quotient(top, bottom, sp.Abs(top))
    if not any(coeffs[1:]):
        # a*u**n flushes to 0 for small |u| too (log(x**2) at x = 1e-20 is log(0)), and
        # rounds near |u| = 1 where the log is near 0: n*log|u| does neither.
        return sp.log(sp.Abs(a)) + n * log_u
    far = sp.log(sp.Abs(a)) + n * log_u + log1p((_reversed(coeffs, u) - a) / a)
    return sp.Piecewise((far, sp.Abs(u) > threshold), (node, True))


def _power_factors(product: sp.Expr) -> list[tuple[sp.Expr, sp.Expr]]:
    """(base, exponent) of each factor of a product, through ipow(a/b, k), which
    balance_ratio makes of a**k/b**k: x*ipow(x/y, 1) is x, x, y**-1."""
    factors = []
    for factor in sp.Mul.make_args(product):
        if isinstance(factor, ipow) and isinstance(factor.args[0], sp.Mul):
            factors += [(b, e * factor.args[1]) for b, e in (f.as_base_exp() for f in factor.args[0].args)]
        else:
            factors.append(factor.as_base_exp())
    return factors


def _rational_far(node: sp.Expr) -> sp.Expr | None:
    """A product of integer powers of polynomials in one u (a symbol, or a sum such as
    x - y), with a denominator of degree >= 2: the powers overflow for large |u| where the
    quotient need not (x/(1 + x**2) at x = 1e20 is 0, truth 1e-20; x**3/(1 + x**4) there
    is inf/inf). Where the largest power of u would pass 2**60 it is u**D times the same
    product of the polynomials over their leading powers, polynomials in 1/u, D the
    difference of the degrees."""
    if not isinstance(node, (sp.Mul, sp.Pow)):
        return None
    factors = _power_factors(node)
    # Each factor's polynomial, if it is one: (its u, its coefficients), matched once.
    matched = [(base, k, _as_polynomial(base) if k.is_Integer else None) for base, k in factors]
    sums = {b for f in node.atoms(sp.Pow) for b in [f.base] if isinstance(b, sp.Add) and f.exp.is_Integer and f.exp >= 2}
    for u in sorted(node.free_symbols | sums, key=sp.default_sort_key):
        polys, others = [], []
        for base, k, found in matched:
            if k.is_Integer and base == u:
                polys.append(([1, 0], int(k)))
            elif found is not None and found[0] == u:
                polys.append((found[1], int(k)))
            else:
                others.append(base**k)
        up = sum(k * (len(c) - 1) for c, k in polys if k > 0)
        down = sum(-k * (len(c) - 1) for c, k in polys if k < 0)
        if down < 2:
            continue
        rest = sp.Mul(*others)
        if up >= down:
            rest *= u ** (up - down)
        elif rest.free_symbols:
            # One division at a time: hypot(x, y)*(1/x)**2 is 0 at x = y = 1e20, where
            # (hypot(x, y)/x)/x is 1.4e-20.
            for _ in range(down - up):
                rest = ipow(rest / u, 1)
        else:
            rest *= ipow(1 / u, down - up)
        far = sp.Mul(rest, *(_reversed(c, u) ** k for c, k in polys))
        threshold = sp.Float(2.0 ** (60 // max(up, down)), 17)
        # Near 0 the powers underflow instead: (2x + 1)/(x**2*(x + 1)**2) at x = 8e-20.
        return sp.Piecewise((far, sp.Abs(u) > threshold), (divide_stepwise(node), True))
    return None


def _pair_of_opposites(node: sp.Expr, match: Callable[[sp.Expr], bool]) -> tuple[sp.Expr, sp.Expr, sp.Expr, sp.Expr] | None:
    """(c, f(a), f(b), the rest) for a sum c*f(a) - c*f(b) + rest whose two terms `match`."""
    if not isinstance(node, sp.Add):
        return None
    for term in node.args:
        c, plus = term.as_coeff_Mul()
        if not match(plus):
            continue
        for other in node.args:
            d, minus = other.as_coeff_Mul()
            if other is not term and d == -c and match(minus) and minus != plus:
                rest = sp.Add(*(t for t in node.args if t is not term and t is not other))
                return c, plus, minus, rest
    return None


def _log_difference(node: sp.Expr) -> sp.Expr | None:
    """log(a) - log(b) = log1p((a - b)/b) where a is near b, with a - b simplified (log1p(u)
    counts as log(1 + u): log1p(x) - log(x) is log1p(1/x) for x >= 2): the two
    logs cancel (at a = 1e30*(1 + 1e-7), b = 1e30 both are 69.0776 to float32's 8e-6).
    Elsewhere the difference stays (a/b can overflow where it does not)."""
    found = _pair_of_opposites(node, lambda f: isinstance(f, (sp.log, log1p)))
    if found is None:
        return _weighted_log_difference(node)
    c, plus, minus, rest = found
    a, b = ((1 + f.args[0]) if isinstance(f, log1p) else f.args[0] for f in (plus, minus))
    return rest + c * _log_near_one(a, b, plus - minus)


def _weighted_logs(node: sp.Add) -> Iterator[tuple[sp.Expr, sp.Expr, sp.Expr]]:
    """(c, w, term) for each term c*log(w) of the sum with c not a number, xlogy(c, w) too."""
    for term in node.args:
        if isinstance(term, xlogy):
            yield term.args[0], term.args[1], term
            continue
        logs = [f for f in sp.Mul.make_args(term) if isinstance(f, sp.log)]
        if len(logs) == 1 and not (c := term / logs[0]).is_number and not c.has(sp.log, xlogy):
            yield c, logs[0].args[0], term


def _weighted_log_difference(node: sp.Expr) -> sp.Expr | None:
    """c*log(a) - c*log(b) (or xlogy(c, a) - c*log(b)) for a c that is not a number, as
    _log_difference writes it near a = b, c*log1p((a - b)/b): the generalised KL
    x*log(x) - x*log(y) - x + y cancels in its logs at x = y = 1e30*(1 + 1e-7). Elsewhere the
    terms as they were: xlogy(c, a) is 0 at c = 0, where c*log(a) need not be."""
    if not isinstance(node, sp.Add):
        return None
    weighted = list(_weighted_logs(node))
    for (c, a, plus), (d, b, minus) in itertools.permutations(weighted, 2):
        if d != -c or a == b:
            continue
        split = _near_one(a, b)
        if split is None:
            return None
        near, far_from_one = split
        return node - plus - minus + sp.Piecewise((plus + minus, far_from_one), (c * log1p(near), True))
    return None


def _reciprocal_difference(node: sp.Expr) -> sp.Expr | None:
    """c/a - c/b = c*((b - a)/b)/a where |b - a| < |b|/2: the two reciprocals cancel where a
    is near b (the gamma deviance's slope 2/y - 2/x, 7-22 bits off near x = y), and b - a
    is exact there. Elsewhere the difference stays: ((b - a)/b)/a overflows in the first
    quotient where a is tiny beside b."""
    found = _pair_of_opposites(node, lambda f: isinstance(f, sp.Pow) and f.exp == -1 and not f.base.is_number)
    if found is None:
        return None
    c, plus, minus, rest = found
    a, b = plus.base, minus.base
    gap = sp.expand(b - a)
    if _holds_where(gap):
        return None
    near = c * ipow(ipow(gap / b, 1) / a, 1)
    return rest + sp.Piecewise((near, sp.Abs(gap) < sp.Abs(b) / 2), (c * (plus - minus), True))


def _reciprocal_powers(term: sp.Expr) -> dict[sp.Expr, int]:
    """{u: k} for each factor u**-k of a product (k a positive integer, u not a number)."""
    return {
        f.base: int(-f.exp)
        for f in sp.Mul.make_args(term)
        if isinstance(f, sp.Pow) and f.exp.is_Integer and f.exp < 0 and not f.base.is_number
    }


def _horner_reciprocal(node: sp.Expr) -> sp.Expr | None:
    """c0 + c1/u + c2/u**2 + ... as c0 + (c1 + c2/u)/u (Horner's scheme in 1/u): each term
    divided by u**k alone flushes or overflows where the sum need not (log(1 + exp(x))/x's
    f'' at x = 80 is a/x + b/x**2 with b/x**2 = 2.8e-39 flushed, 1% of the truth 7.9e-37:
    17 bits off); nested, the small terms are added before the last divisions. For the u
    whose powers divide two or more terms, two powers apart at least."""
    if not isinstance(node, sp.Add):
        return None
    powers = [_reciprocal_powers(t) for t in node.args]
    bases = sorted({u for p in powers for u in p}, key=sp.default_sort_key)
    for u in bases:
        ks = [p.get(u, 0) for p in powers]
        if sum(k > 0 for k in ks) < 2 or len(set(ks)) < 2 or max(ks) < 2 or _holds_where(u):
            continue
        by_power: dict[int, sp.Expr] = {}
        for term, k in zip(node.args, ks):
            by_power[k] = by_power.get(k, sp.Integer(0)) + term * u**k
        nested = by_power[max(ks)]
        for k in range(max(ks) - 1, min(ks) - 1, -1):
            nested = by_power.get(k, sp.Integer(0)) + ipow(nested / u, 1)
        for _ in range(min(ks)):
            nested = ipow(nested / u, 1)
        return nested
    return None


def _log_root(node: sp.Expr) -> sp.Expr | None:
    """k*log(u) + c = k*log1p((u - r)/r) within r/2 of its root r = exp(-c/k), with r added
    in two parts (plus_constant), so that u - r is exact there: log(u) is rounded to an ulp of
    about |c/k| while the sum is near 0 (x*log(x)' = log(x) + 1 at the float32 nearest 1/e
    is 9.8e-4, 9 bits off). Elsewhere the sum stays."""
    if not isinstance(node, sp.Add):
        return None
    c, rest = node.as_independent(*node.free_symbols, as_Add=True)
    k, log_u = rest.as_coeff_Mul()
    if c == 0 or not c.is_real or not isinstance(log_u, sp.log):
        return None
    # By value: SymPy cannot order exp(-softplus(-3)) and 1e-30 (TypeError, the fuzzer's
    # logaddexp(log(x), log_sigmoid(3)), seed 123).
    r = sp.exp(-c / k)
    u, near = log_u.args[0], _as_number(r)
    if not 1e-30 < near < 1e30:
        return None
    if _holds_where(u):
        return None
    # r to 40 digits through its textbook form: plus_constant's own N cannot evaluate softplus.
    exact = r if r.is_Rational else numeric(r, 40)
    return sp.Piecewise((k * log1p(plus_constant(u, -exact) / near), sp.Abs(u - near) < near / 2), (node, True))


def _size(c: sp.Expr) -> float:
    """|c| for a constant, by its value: SymPy cannot compare |softplus(0)| with 8 (TypeError,
    the fuzzer's logaddexp(0, x)**log_sigmoid(0) and x**softplus(3)*exp(-x))."""
    return abs(complex(numeric(c)))


def _power_of_one_plus(node: sp.Expr) -> sp.Expr | None:
    """(1 + v)**k = exp(k*log1p(v)) where 1 + v > 0, for |k| >= 8: 1 + v rounds by up to half
    an ulp of 1, and the power multiplies that relative error by k ((1 + x/1000)**1000 near
    x = 1 loses 10 bits); log1p(v) keeps v's bits. Also for an exponent that is not a number:
    (1 + 1/x)**x at x = -1280 loses 7 bits, at -2e6 17. Elsewhere the power stays (it is real
    there for an integer k)."""
    if not isinstance(node, sp.Pow) or (node.exp.is_number and not _size(node.exp) >= 8):
        return None
    base = node.base
    if not (isinstance(base, sp.Add) and 1 in base.args) or not base.free_symbols:
        return None
    v = base - 1
    if not node.exp.is_number:
        # exp rounds its argument w*log1p(v): |w*log1p(v)| ulps against the power's |w| for
        # the rounding of 1 + v. Where |log1p(v)| > 1, the power is the better ((1 + x**2)**-y
        # at x = y = 10 is 4.8 bits off as exp(-46.1...)).
        return sp.Piecewise((sp.exp(node.exp * log1p(v)), sp.Abs(v) < sp.Rational(1, 2)), (node, True))
    return sp.Piecewise((sp.exp(node.exp * log1p(v)), v > -1), (node, True))


def _power_of_one_plus_less_one(node: sp.Expr) -> sp.Expr | None:
    """c*(1 + v)**w - c = c*expm1(w*log1p(v)) where |w*log1p(v)| < 1, also in a longer sum: the
    power is near 1 where v or w is near 0, and the difference cancels (Barron's robust
    loss, (|a - 2|/a)*((x**2/|a - 2| + 1)**(a/2) - 1), near x = 0 or a = 0)."""
    for c, power, rest in _less_its_coefficient(node):
        if not isinstance(power, sp.Pow):
            continue
        base, w = power.args
        if not (isinstance(base, sp.Add) and 1 in base.args and base.free_symbols and power.free_symbols):
            continue
        if w.is_Integer and w > 0 and w <= 2:
            continue  # (1 + v)**2 - 1 is v*(v + 2) after expansion; nothing to gain
        v = base - 1
        if _holds_where(power):
            continue
        # Only where the power is within a factor e of 1: beyond, the difference does not
        # cancel, and expm1 rounds its larger argument (sqrt(1 + x) - 1 at x = 1e30 as
        # expm1(34.5...) is 4 bits off).
        t = w * log1p(v)
        return rest + sp.Piecewise((c * expm1(t), (v > -1) & (sp.Abs(t) < 1)), (c * power - c, True))
    return None


def _power_less_one(node: sp.Expr) -> sp.Expr | None:
    """c*b**w - c = c*expm1(w*log(b)) where b > 0 and |w*log(b)| < 1, for a base b that is
    not 1 plus something (power_of_one_plus_less_one has those), also in a longer sum: the
    power is near 1 where w is near 0 or b near 1, and the difference cancels (the Box-Cox
    transform (x**l - 1)/l at a learned l near 0)."""
    for c, power, rest in _less_its_coefficient(node):
        if not isinstance(power, sp.Pow):
            continue
        base, w = power.args
        if base.is_number or w.is_number or (isinstance(base, sp.Add) and 1 in base.args) or _holds_where(power):
            continue
        t = w * sp.log(base)
        return rest + sp.Piecewise((c * expm1(t), (base > 0) & (sp.Abs(t) < 1)), (c * power - c, True))
    return None


# The Taylor polynomial of g(u)/u, for a g that vanishes at 0, to this degree, and the bands
# it may serve: the widest of RATIO_SERIES_BANDS where its truncation is within 5e-17
# (relative) at both ends (expm1(u)/u to 1/2, where the next term is 1.5e-18; log1p(u)/u to
# 1/16).
RATIO_SERIES_DEGREE = 14
RATIO_SERIES_BANDS = (sp.Rational(1, 2), sp.Rational(1, 4), sp.Rational(1, 8), sp.Rational(1, 16))
# The functions g(u), and their powers, whose series ratio_series takes: SymPy's are quick.
RATIO_SERIES_FUNCTIONS = (expm1, log1p, sp.sin, sp.sinh, sp.tan, sp.tanh, sp.atan, sp.asinh, sp.asin, sp.atanh, sp.erf)
_U = sp.Symbol("u")


@functools.cache
def _ratio_polynomial(g: sp.Expr) -> tuple[sp.Expr, sp.Rational] | None:
    """(the Taylor polynomial of g/u in u = _U as polyval, its band), for g that vanishes at
    0; None where the series is not a polynomial with real numbers for coefficients, or is
    not within 5e-17 on any band."""
    textbook = naive(g)
    try:
        if textbook.subs(_U, 0) != 0:
            return None
        series = sp.series(textbook / _U, _U, 0, RATIO_SERIES_DEGREE + 1).removeO()
        coeffs = sp.Poly(series, _U).all_coeffs()
    except (ValueError, TypeError, NotImplementedError, ArithmeticError, sp.PolynomialError, sp.PoleError):
        return None
    if not all(c.is_number and c.is_real for c in coeffs):
        return None
    # Irrational ones (erf's 2/sqrt(pi)) as numbers, so that the polynomial prints as one.
    coeffs = [c if c.is_Rational else sp.Float(sp.N(c, 25), 25) for c in coeffs]
    exact = sp.lambdify(_U, textbook / _U, modules="mpmath")
    approx = sp.lambdify(_U, series, modules="mpmath")
    with mpmath.workdps(40):
        for band in RATIO_SERIES_BANDS:
            ends = [mpmath.mpf(sign * band.p) / band.q for sign in (1, -1)]
            if all(abs(approx(u) - exact(u)) <= mpmath.mpf(5e-17) * abs(exact(u)) for u in ends):
                return polyval(sp.Tuple(*coeffs), _U), band
    return None


def _ratio_series(node: sp.Expr) -> sp.Expr | None:
    """r*g(v*w)/v = r*w*P(v*w) within a band of v*w around 0, P the Taylor polynomial of
    g(u)/u, for g that vanishes at 0 (expm1, log1p, sin, ... and their powers): a quotient
    whose denominator v vanishes with the argument, as a parameter learned near 0 makes
    it ((exp(a*x) - 1)/a and the Box-Cox transform are 0/0 = NaN at a = 0, where they are
    x and log(x); their slopes in a cancel near it). A product with a where is taken into
    its branches first (power_less_one's where around the Box-Cox expm1)."""
    return _into_branches(node, _ratio_branch)


def _into_branches(node: sp.Expr, rewrite: Callable[[sp.Expr], sp.Expr | None]) -> sp.Expr | None:
    """`rewrite` of a product of RATIO_SERIES_FUNCTIONS, or of each branch of a product with
    one where, the product taken into the branches."""
    if not isinstance(node, sp.Mul) or not node.has(*RATIO_SERIES_FUNCTIONS):
        return None
    pieces = [f for f in node.args if isinstance(f, sp.Piecewise)]
    if not pieces:
        return rewrite(node)
    if len(pieces) != 1:
        return None
    # The product into the branches by hand: SymPy's piecewise_fold simplifies conditions,
    # which took minutes on the fuzzer's nested wheres (see _holds_where).
    (piece,) = pieces
    rest = sp.Mul(*(f for f in node.args if f is not piece))
    branches = [(rest * e, c) for e, c in piece.args]
    found = [rewrite(e) for e, _ in branches]
    if all(e is None for e in found):
        return None
    return sp.Piecewise(*((new if new is not None else e, c) for new, (e, c) in zip(found, branches)))


def _ratio_branch(node: sp.Expr) -> sp.Expr | None:
    if not isinstance(node, sp.Mul):
        return None
    for f in node.args:
        g, k = f.as_base_exp()
        if not (isinstance(g, RATIO_SERIES_FUNCTIONS) and k.is_Integer and k > 0):
            continue
        u = g.args[0]
        for h in node.args:
            v, m = h.as_base_exp()
            if m != -1 or v.is_number or not v.free_symbols:
                continue
            w = sp.cancel(u / v)
            if sp.denom(w).has(*v.free_symbols):
                continue  # v does not divide u
            if not w.free_symbols - v.free_symbols:
                continue  # one input: (exp(x) - 1)/x is the series regime's, its band measured
            found = _ratio_polynomial(g.func(_U) ** k)
            if found is None:
                continue
            poly, band = found
            rest = sp.Mul(*(e for e in node.args if e is not f and e is not h))
            return sp.Piecewise((rest * w * poly.xreplace({_U: u}), sp.Abs(u) < band), (node, True))
    return None


# Below this size g(u) rounds to g'(0)*u for each of RATIO_SERIES_FUNCTIONS (the next term of
# log1p's is u**2/2, a half unit in the last place at u = 2**-24 in float32).
TINY_ARGUMENT = by_dtype(sp.Float(2.0**-24, 17), sp.Float(2.0**-53, 17))


def _tiny_argument(node: sp.Expr) -> sp.Expr | None:
    """c*g(n/d) = g'(0)*n*(c/d) where |n/d| < TINY_ARGUMENT, for g that vanishes at 0 as
    RATIO_SERIES_FUNCTIONS do and a factor c that grows with d: n/d flushes to 0 where the
    product need not (y*log1p(x/y) at x = 1e-3, y = 1e37 is 0, the truth 1e-3; a
    Student-t's (y + 1)*log1p(x**2/y)/2 alike). The numerator's factors multiply c/d one
    by one, so that none flushes or overflows alone. A product with a where, in each branch
    (y*log1p(x/y)'s where for x/y beyond 2**24, as softplus).

    Not a term of a sum (nor a branch of one), whose other terms may cancel c*u: there
    g(u)'s next term (the log1pmx that less_argument keeps) is what is left."""
    if isinstance(node, sp.Add):
        return sp.Add(*map(_beneath_sum, node.args))
    return _into_branches(node, _tiny_branch)


def _beneath_sum(term: sp.Expr) -> sp.Expr:
    """tiny_argument inside a term of a sum: in the arguments of its functions, not its
    products (nor those in its branches)."""
    if isinstance(term, sp.Mul):
        return sp.Mul(*map(_beneath_sum, term.args))
    if isinstance(term, sp.Piecewise):
        return sp.Piecewise(*((_beneath_sum(e), c) for e, c in term.args))
    return tiny_argument(term)


@functools.cache
def _slope_at_zero(g: type) -> sp.Expr:
    """g'(0), for one of RATIO_SERIES_FUNCTIONS."""
    return sp.diff(naive(g(_U)), _U).subs(_U, 0)


def _tiny_branch(node: sp.Expr) -> sp.Expr | None:
    if not isinstance(node, sp.Mul) or node.has(sp.Piecewise):
        return None
    for f in node.args:
        if not isinstance(f, RATIO_SERIES_FUNCTIONS) or f.args[0].is_number:
            continue
        (u,) = f.args
        numer, denom = _plain(u).as_numer_denom()
        c = sp.Mul(*(e for e in node.args if e is not f))
        if not (c.free_symbols & denom.free_symbols):
            continue
        lead = _slope_at_zero(f.func)
        coeff, numer = numer.as_coeff_Mul()
        powers = [p.as_base_exp() for p in sp.Mul.make_args(numer) if p != 1]
        if not all(k.is_Integer and 0 < k <= 4 for _, k in powers):
            continue
        product = ipow(sp.cancel(lead * coeff * c / denom), 1)
        for b, k in powers:
            for _ in range(int(k)):
                product = ipow(b * product, 1)
        return sp.Piecewise((product, sp.Abs(u) < TINY_ARGUMENT), (node, True))
    return None


# Not in RULES: applied to the forms chosen (derive), whose slopes it would otherwise
# become: differentiated, the Student-t's (y + 1)*x**2/(2*y) gave a slope in y,
# x**2*(1/2 - (y + 1)/(2*y))/y, that cancels where log1pmx's form does not. Where it applies
# g(u) rounds to g'(0)*u, so it changes no value but those that flushed.
tiny_argument = Rule(
    "tiny_argument",
    "c*g(n/d), g(0) = 0 (log1p, expm1, sin, ...), flushes to 0 where n/d underflows and c grows with d; g'(0)*n*(c/d) does not",
    _tiny_argument,
    top_down=True,
)


# Size of the exponents beyond which power_into_exp merges the powers into the
# exponential: where e**t leaves the dtype's normal range (float32: e**87 = 6e37,
# e**-87 = 1.6e-38; float64: e**708), so that elsewhere pow stays exact.
POWER_INTO_EXP_BEYOND = by_dtype(87, 708)


def _power_into_exp(node: sp.Expr) -> sp.Expr | None:
    """b**w*exp(u) = exp(u + xlogy(w, b)) where b > 0, for an exponent that is not an integer
    (an input, or a number beyond 1 in size): the power overflows where exp(u) brings the
    product back (the gamma kernel x**y*exp(-x) at x = y = 31.8 is inf*1.6e-14; the truth is
    8.6e33), or flushes where exp(u) overflows. Elsewhere (b <= 0, or the powers near 1) the
    product stays."""
    if isinstance(node, mul_exp):
        # mul_exp(b**w*r, u), as exp_product writes r*b**w*exp(u): the same, with r outside.
        c, u = node.args
        factors = sp.Mul.make_args(c)
    elif isinstance(node, sp.Mul):
        exps = [f for f in node.args if isinstance(f, sp.exp)]
        if len(exps) != 1:
            return None
        factors = tuple(f for f in node.args if f is not exps[0])
        u = exps[0].args[0]
    else:
        return None
    powers = [
        f
        for f in factors
        if isinstance(f, sp.Pow)
        and f.base.free_symbols
        and not f.exp.is_Integer
        and (not f.exp.is_number or _size(f.exp) > 1)
    ]
    if not powers:
        return None
    rest = sp.Mul(*(f for f in factors if f not in powers))
    # xlogy, not w*log(b): SymPy folds exp(u + 5*log(x)/2) back into x**(5/2)*exp(u).
    logs = sp.Add(*(xlogy(f.exp, f.base) for f in powers))
    # Only where the powers or the exponential over- or underflow: exp rounds its argument,
    # which costs |w*log(b)| ulps (6 bits for (y - 1)*log(x) = -81.5), where pow itself is
    # exact; where exp(u) alone flushes (x**2.5*exp(-x) at x = 88 is 4.4e-34) it does not.
    # mul_exp's halves keep its product finite wherever the powers are: only they decide.
    merged = mul_exp(rest, u + logs) if isinstance(node, mul_exp) else rest * sp.exp(u + logs)
    far = sp.And(
        *(f.base > 0 for f in powers),
        (sp.Abs(logs) > POWER_INTO_EXP_BEYOND)
        | (sp.false if isinstance(node, mul_exp) else sp.Abs(u) > POWER_INTO_EXP_BEYOND),
    )
    return sp.Piecewise((merged, far), (node, True))


def _power_of_sigmoid(node: sp.Expr) -> sp.Expr | None:
    """sigmoid(u)**w = exp(-w*softplus(-u)) for an exponent that is not an integer: sigmoid
    flushes to 0 below u = -87 where its power need not (sigmoid(x)**y at x = -100,
    y = 0.5 is 1.9e-22), and its derivatives, w*sigmoid(u)**(w - 1)*..., divide by it."""
    if not (isinstance(node, sp.Pow) and isinstance(node.base, sigmoid)) or node.exp.is_Integer:
        return None
    return sp.exp(-node.exp * softplus(-node.base.args[0]))


def _power_past_its_base(node: sp.Expr, near_one: bool = False) -> sp.Expr | None:
    """b**w = exp(w*log(b)) where b over- or underflows, for a function b and an exponent w
    that is an input or a number below 1 in size (not an integer): there b is inf or 0 where
    its power is a float (expm1(x)**(pi/4) at x = 89 is inf; the truth is 2.3e30, and the
    slope's b**w/b*exp(x) inf/inf; sqrt(erfc(x)) at x = 10 is 4.6e-23, where erfc holds 2
    subnormal ulps). log(b) as the rules write it without b (x + log1mexp(x), logcosh(x)).
    Elsewhere the power as it is: exp rounds its argument, |w*log(b)| ulps of it, where pow
    does not. Only for a b that leaves the float32 range on the judge's grid (in float64).
    `near_one` (the variant power_near_one): for an input's power, also where |log(b)| < 1,
    and for a b that stays in range where the rules write its log without it (tanh); and a
    product with such a where for a factor (_times_power_near_one)."""
    if near_one and isinstance(node, sp.Mul):
        return _times_power_near_one(node)
    if not isinstance(node, sp.Pow) or node.exp.is_Integer or _holds_where(node):
        return None
    b, w = node.args
    if w.is_number:
        # From 1 up the power over- or underflows before its base does.
        if not (w.is_real and _size(w) < 1):  # by value: SymPy cannot order softplus(0)
            return None
    elif not w.free_symbols:
        return None
    log_b = _log_beyond_range(b, linear=False)
    if log_b is None and near_one and w.free_symbols and any(f.free_symbols for f in b.atoms(sp.Function)):
        # A base that stays in range but rounds to 1, where its log is written without it:
        # tanh(x) from x = 9 (log1mexp(2*x) - softplus(-2*x)). tanh(x)**-y at x = 30,
        # y = 1e36 was 1; the truth, exp(2*y*exp(-60)), overflows.
        log_b = _log_of_positive(b)
    if log_b is None:
        return None
    far = _exp_whole(w * log_b)
    if far.has(b):
        return None  # SymPy folds exp(w*log(b) + ...) back into a power where w*log(b) comes out whole
    beyond = _beyond_range(b)
    if near_one:
        if not w.free_symbols:
            return None
        # An input for exponent may be large: b rounded costs |w| ulps of the power, log(b)
        # rounded |w*log(b)| ulps, fewer where |log(b)| < 1 (cosh(x)**y at x = 1e-4, y = 1e9
        # was 1, cosh(x) rounded to 1; the truth, exp(y*x**2/2), is e**5). But
        # only where log(b) is written without cancelling there (logcosh is; sinh's
        # x - log(2) + log1mexp(2*x) is not): a variant of its own, the judge's to take. Not
        # at b = 1, where 1**w is 1 even for an infinite w.
        beyond = beyond | ((sp.Abs(log_b) < 1) & sp.Ne(log_b, 0))
    return sp.Piecewise((far, beyond), (node, True))


def _times_power_near_one(node: sp.Expr) -> sp.Expr | None:
    """r*where(c, exp(w*log(b)), b**w) = where(c, r*exp(w*log(b)), r*b**w), r's factors of
    inputs inside mul_exp (_times_exp_whole): SymPy multiplies the where last, and r may
    overflow where the power flushes (tanh(x)**y's curvature in x, y*(1 + tanh(x)**2 -
    y/cosh(x)**2)*tanh(x)**(y - 2), at x = 0.5, y = 1e36 is -inf*0 = NaN, the truth 0)."""
    for p in node.args:
        if not (isinstance(p, sp.Piecewise) and len(p.args) == 2 and p.args[1].cond == sp.true):
            continue
        (far, near), (power, _) = p.args
        if isinstance(far, sp.exp) and isinstance(power, sp.Pow) and power.exp.free_symbols:
            rest = sp.Mul(*(f for f in node.args if f is not p))
            return sp.Piecewise((_times_exp_whole(rest, far.args[0]), near), (rest * power, True))
    return None


def _product_past_its_factors(node: sp.Expr, grouped: bool = False) -> sp.Expr | None:
    """r*b1**k1*b2**k2*... = r*exp(k1*log(b1) + k2*log(b2) + ...) where a function b_i over- or
    underflows, for two such factors or more (k_i numbers) in two inputs or more: one brings
    back what the other loses (cosh(x)/cosh(y) at x = 100, y = 95 is inf/inf, the truth 148;
    cosh(x)*exp(-y) at x = y = 100 is inf*0, the truth 1/2). Each log as the rules write it
    without b_i (x + log1mexp(x); cosh's linear, see _log_of_positive), there where all b_i
    are positive; sinh(u) and expm1(u) to an integer power, of u's sign, as sign(u)**k and
    log|b_i|. r is the other factors. Elsewhere the product as it is: exp rounds its
    argument, where the product does not.

    `grouped`: only a product with a group ipow(q, n) of such factors among its own, whose
    factors count as the product's (the rule balance_ratio's cosh(x)*ipow(cosh(x)/sinh(y), 1)
    of cosh(x)**2/sinh(y): the walk from the bottom takes the group alone, and the cosh(x)
    outside it is inf*0 = NaN at x = 3.3e9, y = 2.4e30, the truth 0); the variant walks from
    the top."""
    if not isinstance(node, sp.Mul) or _holds_where(node):
        return None
    factors = list(node.args)
    if grouped:
        groups = [f for f in factors if isinstance(f, ipow) and f.args[1].is_Integer and isinstance(f.args[0], (sp.Mul, sp.Pow))]
        if not groups:
            return None
        factors = [f for f in factors if f not in groups]
        outside = len(factors)
        factors += [g**group.args[1] for group in groups for g in sp.Mul.make_args(group.args[0])]
    logs, bases, rest, positive, sizes = [], [], [], [], []
    for i, factor in enumerate(factors):
        if grouped and i == outside and not bases:
            return None  # no function outside the groups: each group's own where serves
        # exp(u) whole: SymPy's base of it is E.
        b, k = (factor, sp.Integer(1)) if isinstance(factor, sp.exp) else factor.as_base_exp()
        if not (k.is_number and k.is_real):
            rest.append(factor)
        elif isinstance(b, (sp.sinh, expm1)) and k.is_Integer and b.free_symbols and any(_range_left(b)):
            # Of u's sign: sign(u)**k*exp(k*log|b|), for either sign (-cosh(x)*sinh(y)/cosh(y)**2,
            # cosh(x)/cosh(y)'s slope in y, at x = -92, y = -1.2e-13 is 5.2e26; expm1(x)*exp(y)/
            # expm1(y)**2 at x = 2e6, y = -92 is inf, where the product was inf*0 = NaN).
            u = b.args[0]
            logs.append(k * _log_abs_of_signed(b))
            bases.append(b)
            sizes.append(_power_size(sp.Abs(b), k))
            rest.append(sp.sign(u) ** k)
        elif (log_b := _log_beyond_range(b, linear=True)) is not None:
            logs.append(k * log_b)
            bases.append(b)
            sizes.append(_power_size(b, k))
            positive.append(b > 0)
        else:
            rest.append(factor)
    # Of two inputs or more: with one, far-out regimes serve (regimes.add_regimes), and a
    # where here took x/sinh(x)'s f'' from its factored form before them, to stay in a branch
    # that clip(x, -20, 20) never takes.
    if len(bases) < 2 or len(sp.Add(*bases).free_symbols) < 2:
        return None
    # Nor exps alone: exp(x)*exp(-y) is exp(x - y) expanded (a source's), and the where
    # brought exp(x - y) back where either leaves the range and kept the product elsewhere,
    # three exps for one, and a product that --compensated-arguments cannot make exact (15
    # float32 values off under XLA at x = -6.06, y = 54.5).
    if all(isinstance(b, sp.exp) for b in bases):
        return None
    # The logs' sum as logaddexp_shift writes it: exp(y)*sigmoid(x - y) has y - softplus(y - x),
    # which cancels where y dominates (1 for exp(20) at x = 20, y = 3.7e25).
    exponent = sp.Add(*logs)
    exponent = _logaddexp_less_argument(exponent) or _balanced_exponent(exponent)
    far = _times_exp_whole(sp.Mul(*rest), exponent)
    if any(far.has(b) for b in bases):
        return None  # folded back, as in _power_past_its_base
    beyond = sp.Or(*(_beyond_range(b) for b in sizes))
    return sp.Piecewise((far, sp.And(beyond, *positive)), (node, True))


def _power_size(b: sp.Expr, k: sp.Expr) -> sp.Expr:
    """What of b**k leaves the range first, as the product computes it: b**|k| for |k| > 1
    (cosh(x)**2/sinh(y) overflows from |x| = 44.7, where cosh(x) is 1.8e19, inf at
    x = y = 80 where the truth is 5.5e34); b itself for |k| <= 1, which the power takes
    after computing b."""
    return b ** abs(k) if abs(k) > 1 else b


def _balanced_exponent(exponent: sp.Expr) -> sp.Expr:
    """`exponent` with its terms c*v, v an input or its abs, of opposite signs paired, each
    pair m*(v - w) held (ipow(., 1)) and the rest beside it: a term beyond 1 times an input
    overflows where the sum need not. cosh(x)**3/cosh(y)**2 is exp(3*|x| - 2*|y| + ...) far
    out, inf - inf = NaN at x = y = 3e38, where the truth is cosh(x), inf;
    2*(|x| - |y|) + |x| is inf. Paired, a difference of near equals is also exact."""
    linear: list[list[sp.Expr]] = []  # [c, v]
    others = []
    for term in sp.Add.make_args(exponent):
        c, v = term.as_coeff_Mul()
        if c.is_Rational and (v.is_Symbol or isinstance(v, sp.Abs) and v.args[0].is_Symbol):
            linear.append([c, v])
        else:
            others.append(term)
    positive = [t for t in linear if t[0] > 0]
    negative = [t for t in linear if t[0] < 0]
    if not (positive and negative) or max(abs(c) for c, _ in linear) <= 1:
        return exponent
    pairs = []
    while positive and negative:
        (p, v), (n, w) = positive[0], negative[0]
        m = min(p, -n)
        pairs.append(m * ipow(v - w, 1))
        positive[0][0] -= m
        negative[0][0] += m
        positive = [t for t in positive if t[0] != 0]
        negative = [t for t in negative if t[0] != 0]
    return sp.Add(*pairs, *(c * v for c, v in positive + negative), *others)


def _log_abs_of_signed(b: sp.Expr) -> sp.Expr:
    """log|b| for b = sinh(u) or expm1(u), whose sign is u's: |u| - log(2) + log1mexp(2*|u|),
    and u + log1mexp(u) for u > 0, log1mexp(-u) below (-expm1(u) is 1 - exp(u))."""
    u = b.args[0]
    if isinstance(b, sp.sinh):
        return _log_sinh(sp.Abs(u))
    return sp.Piecewise((u + log1mexp(u), u > 0), (log1mexp(-u), True))


def _log_sinh(v: sp.Expr) -> sp.Expr:
    """log(sinh(v)) = v - log(2) + log1mexp(2*v) for v > 0."""
    return v - sp.log(2) + log1mexp(2 * v)


def _times_exp_whole(r: sp.Expr, u: sp.Expr) -> sp.Expr:
    """r*exp(u), as _exp_whole writes exp(u), with r's factors of inputs (but signs) inside
    mul_exp: r may bring back what exp(u) loses (cosh(x)/cosh(y)'s slope in y,
    -exp(logcosh(x) - logcosh(y))*tanh(y), at x = -92, y = -1.2e-13 is inf*1.2e-13, the
    truth 5.2e26)."""
    inside = sp.Mul(*(f for f in sp.Mul.make_args(r) if f.free_symbols and f.as_base_exp()[0].func is not sp.sign))
    if inside == 1:
        return r * _exp_whole(u)
    e = _exp_whole(u)
    c, v = e.args if isinstance(e, mul_exp) else (sp.Integer(1), e.args[0])
    return r / inside * mul_exp(c * inside, v)


def _exp_whole(u: sp.Expr) -> sp.Expr:
    """exp(u) as mul_exp(c, v) where SymPy takes a constant c = exp(k) out of it (exp(x -
    log(2)) is exp(x)/2, which overflows from x = 88.7 where the whole does not: cosh(x)*exp(-y)
    at x = 89, y = 2.7e-23 is 2.2e38). Not exp(u) with k held inside: its rounding of u + k
    costs ulps of u (3.2 bits at x = 95, y = 120, the argument -25.7), where mul_exp's halves
    are exact."""
    e = sp.exp(u)
    c, rest = e.as_independent(*u.free_symbols, as_Add=False)
    if c != 1 and isinstance(rest, sp.exp):
        return mul_exp(c, rest.args[0])
    return e


def _log_beyond_range(b: sp.Expr, linear: bool) -> sp.Expr | None:
    """log(b) as the rules write it without b (_log_of_positive, `linear` passed on), for a
    function b (of inputs) that over- or underflows on the judge's grid; None for another b."""
    if not any(f.free_symbols for f in b.atoms(sp.Function)):
        return None  # powers and products of inputs: root_of_product, power_of_quotient
    if not any(_range_left(b)):
        return None
    return _log_of_positive(b, linear)


def _beyond_range(b: sp.Expr) -> sp.Expr:
    """Where b has over- or underflowed (as it does on the judge's grid, _range_left)."""
    overflows, flushes = _range_left(b)
    return sp.Or(*((b > DTYPE_MAX,) if overflows else ()), *(((b > 0) & (b < DTYPE_TINY),) if flushes else ()))


@functools.lru_cache(maxsize=1024)
def _range_left(b: sp.Expr) -> tuple[bool, bool]:
    """Whether b, evaluated in float64 on the judge's grid, comes above float32's largest
    value somewhere, and whether it comes between 0 and float32's smallest normal."""
    values = _on_the_grid(b)
    return bool((values > float(DTYPE_MAX.args[0])).any()), bool(((values > 0) & (values < float(DTYPE_TINY.args[0]))).any())


@functools.lru_cache(maxsize=1024)
def _log_of_positive(b: sp.Expr, linear: bool = False) -> sp.Expr | None:
    """log(b) for b > 0 as the rules write it without b (log(expm1(x)) as x + log1mexp(x),
    log(cosh(x)) as logcosh(x), a product's as the sum of its factors' logs); None where
    b stays in it, outside the last branch of a where. Cached, as _log_without.

    log(sinh(u)) as u - log(2) + log1mexp(2*u), which the rules do not write (near sinh's
    value 1, at u = 0.88, the sum cancels): here it serves where sinh(u) over- or underflows.
    With `linear`, for a sum of logs, log(cosh(u)) likewise as |u| - log(2) + softplus(-2*|u|),
    not logcosh(u): the parts linear in the inputs cancel exactly (cosh(x)/sinh(x) far out is
    exp(|x| - x + softplus(-2*|x|) - log1mexp(2*x)); as logcosh(x) - x - log1mexp(2*x) + log(2),
    logcosh's rounding, half an ulp of 89, was 3.7 bits of the result). Not for one log: a
    power of cosh took mul_no_nan(|x| - log(2) + ..., 1/y), 0 at x = y = 3e38 where 1/y
    flushes, for logcosh(x)/y."""
    if isinstance(b, sp.sinh):
        return _log_sinh(b.args[0])
    if linear and isinstance(b, sp.cosh):
        u = sp.Abs(b.args[0])
        return u - sp.log(2) + softplus(-2 * u)
    return _log_written_without(b, _log_abs_product(b) if isinstance(b, (sp.Mul, sp.Pow)) else sp.log(b))


def _exp_sum_args(f: sp.Expr) -> tuple[sp.Expr, sp.Expr]:
    """(a, c) for log(exp(a) + exp(c)): softplus(a) is logaddexp(a, 0)."""
    return (f.args[0], sp.Integer(0)) if isinstance(f, softplus) else f.args


def _softplus_difference(node: sp.Expr) -> sp.Expr | None:
    """softplus(a) - softplus(b) = log1p(expm1(a - b)*sigmoid(b)) for 0 <= a - b < 2 (and the
    mirror image for b > a): the difference of two log-likelihoods of logistic models cancels
    where a is near b (softplus(1.2e-13) and softplus(0) both round to log(2): 0, the truth is
    5.8e-14). Elsewhere the difference stays: its terms cancel by at most a factor of 1.7
    from |a - b| = 2 on, while expm1 of the rounded a - b is off by as many bits as a - b has
    above 1 (softplus(-69.7) - softplus(9.2e-7) was 10 ulps off); and where sigmoid(b) nears
    float32's flush (b <= -87) both softplus are tiny and accurate to the last bit relative.
    Likewise logaddexp(a, c) - logaddexp(b, c) = log1p(expm1(a - b)*sigmoid(b - c)) for a
    shared c (softplus(u) is logaddexp(u, 0)): logaddexp(x, y) - logaddexp(0, y) was 0 at
    x = y = -7.5e-9, the truth -3.8e-9."""
    found = _pair_of_opposites(node, lambda f: isinstance(f, (softplus, logaddexp)))
    if found is None:
        return None
    c, plus, minus, rest = found
    (a, p), (b, q) = _exp_sum_args(plus), _exp_sum_args(minus)
    # The shared argument: the second of each, after swapping logaddexp's (it is symmetric).
    for (a, p), (b, q) in itertools.product(((a, p), (p, a)), ((b, q), (q, b))):
        if p == q:
            break
    else:
        return None
    d = sp.expand(a - b)
    # The sigmoid of the smaller argument above -87, where it is a normal float32.
    lower, upper = sp.expand(b - p), sp.expand(a - p)
    # Elsewhere, where c is below both, a - b with the reflections: both terms are about a
    # and b, which round (softplus(x - y) - softplus(-y) at x = -88, y = -3e9 was 0, the truth
    # -88). Where c is above either, shifted by c: both terms are about c and cancel
    # (logaddexp(x, y) - logaddexp(0, y) at x = y = 3e9 is log(2)).
    far = [
        (d + softplus(-upper) - softplus(-lower), (upper > 0) & (lower > 0)),
        (softplus(upper) - softplus(lower), True),
    ]
    return rest + c * sp.Piecewise(
        (log1p(expm1(d) * sigmoid(lower)), (d >= 0) & (d < 2) & (lower > -87)),
        (-log1p(expm1(-d) * sigmoid(upper)), (d < 0) & (d > -2) & (upper > -87)),
        *far,
    )


def _exp_difference(node: sp.Expr) -> sp.Expr | None:
    """exp(a) - exp(b) = exp(a)*(-expm1(b - a)) for a >= b (and the mirror image): the two
    terms cancel where a is near b (exp(x) - exp(y) at x = 1 + 2**-22, y = 1 is 2 ulps of
    e, every bit of the difference lost), and both overflow where a and b pass 88.7 together,
    inf - inf, while the difference is finite (4.5e35 at x = 89, y = 88.999) or inf. The
    factor goes into the exp by halves (mul_exp), so that the product is finite wherever it
    is a float. Likewise expm1(a) - expm1(b), the same difference: its terms round to -1
    together where a and b are far below 0, and overflow together above 88.7."""
    found = _pair_of_opposites(node, lambda f: isinstance(f, (sp.exp, expm1)))
    if found is None or type(found[1]) is not type(found[2]):
        return None
    c, plus, minus, rest = found
    return rest + c * sp.Piecewise(*_exp_gap(plus.args[0], minus.args[0]))


def _exp_gap(a: sp.Expr, b: sp.Expr) -> list[tuple[sp.Expr, sp.Expr]]:
    """The branches of exp(a) - exp(b) as exp_difference writes it: exp(a)*(-expm1(b - a))
    for a >= b, the factor taken into the exp by halves (mul_exp), and the mirror image."""
    return [(mul_exp(-expm1(b - a), a), a >= b), (-mul_exp(-expm1(a - b), b), True)]


def _exp_term(term: sp.Expr) -> tuple[sp.Expr, type, sp.Expr] | None:
    """(coefficient, exp or expm1, u) for a term c*exp(u) or c*expm1(u) (exp held below
    overflow, exp_finite, or a product guarded by mul_no_nan, counted as exp), with no other
    exp or expm1 of u in c; None for another term."""
    if isinstance(term, mul_no_nan):
        c, f = term.args
        factors = [f, *sp.Mul.make_args(c)]
    else:
        factors = list(sp.Mul.make_args(term))
    found = [f for f in factors if isinstance(f, (sp.exp, exp_finite, expm1, mul_exp)) and not f.args[-1].is_number]
    if len(found) != 1:
        return None
    (f,) = found
    u = f.args[-1]
    c = sp.Mul(*(g for g in factors if g is not f))
    if isinstance(f, mul_exp):
        # mul_exp(a, u) = a*exp(u), the factor kept inside.
        return c * f.args[0], mul_exp, u
    if c.has(sp.exp(u), exp_finite(u), expm1(u)):
        return None
    return c, expm1 if isinstance(f, expm1) else sp.exp, u


def _exp_overflow_sum(node: sp.Expr) -> sp.Expr | None:
    """c*exp(u) + d*expm1(u) + rest = exp(u)*(c - d*expm1(-u)) + rest for u > 0, the factor
    taken into the exp by halves (mul_exp): the terms are inf - inf = NaN where exp(u)
    overflows while the sum is a float or an infinity of one sign (the slope in y of the
    rate (exp(x*y) - 1)/y, x*exp(x*y)/y - expm1(x*y)/y**2, at x = y = -1e20, where the truth
    is +inf), and they cancel in part for u large. For u <= 0 the gathered terms as they
    were, where exp(-u) would overflow instead. c and d gather every term of one u; a factor
    k of the sum goes into each term, in both branches.

    Only for a u of several inputs: in one input the regimes far out (regimes) serve, and
    this where made forms of expm1(x)/x's slopes that were no more accurate."""
    if isinstance(node, sp.Mul):
        # k*(sum): k into each term, so that it scales the factor inside the exp (the slope
        # of the rate is (x*exp(x*y) - expm1(x*y)/y)/y, whose x*exp(90) overflows before
        # the division by y = 180 brings it back).
        sums = [f for f in node.args if isinstance(f, sp.Add)]
        if len(sums) != 1:
            return None
        k = sp.Mul(*(f for f in node.args if f is not sums[0]))
        return _exp_overflow_sum(sp.Add(*(k * t for t in sums[0].args)))
    if not isinstance(node, sp.Add):
        return None
    # Per u and kind, the (term, coefficient) pairs.
    terms: dict[sp.Expr, dict[type, list[tuple[sp.Expr, sp.Expr]]]] = {}
    for term in node.args:
        found = _exp_term(term)
        if found is not None:
            c, kind, u = found
            terms.setdefault(u, {sp.exp: [], expm1: [], mul_exp: []})[kind].append((term, c))
    for u in sorted(terms, key=sp.default_sort_key):
        if len(u.free_symbols) < 2:
            continue
        exps, expm1s, products = terms[u][sp.exp], terms[u][expm1], terms[u][mul_exp]
        gathered = [term for term, _ in exps + products + expm1s]
        rest = sp.Add(*(t for t in node.args if t not in gathered))
        c = sp.Add(*(c for _, c in exps + products))
        if expm1s and (exps or products):
            d = sp.Add(*(d for _, d in expm1s))
            return rest + sp.Piecewise((mul_exp(c - d * expm1(-u), u), u > 0), (sp.Add(*gathered), True))
        if products and len(exps + products) >= 2:
            # mul_exp(a, u) + b*exp(u) = mul_exp(a + b, u) for every u, where the terms are
            # inf - inf once exp(u) overflows: this rule's own form, differentiated, has them.
            return rest + mul_exp(c, u)
    return _power_overflow_sum(node)


def _power_overflow_sum(node: sp.Add) -> sp.Expr | None:
    """A*b**w + B = b**w*(A + B*exp(-u)) for u = w*log(b) > 0, the factor taken into the
    power by halves (mul_pow): where b**w overflows, a sum with it in two terms or more is
    inf - inf = NaN (the slope in l of the Box-Cox transform (x**l - 1)/l, x**l*log(x)/l -
    (x**l - 1)/l**2, at x = 10.5, l = 37.75, whose truth is 2.2e37). A and B are read off
    the terms (_power_parts); a sum in which the power is not linear is left, and so is a sum
    with the power in one term only (one product overflows no sooner than the sum). For
    u <= 0, and b <= 0 (log(b) NaN), the sum as it came (with exp_overflow_sum's factor
    taken into its terms). Only for a u of several inputs, as above."""
    # mul_pow(a, b, w) + c*mul_pow(d, b, w) = mul_pow(a + c*d, b, w), as for mul_exp: this
    # rule's own form, differentiated, has such sums.
    products: dict[tuple[sp.Expr, sp.Expr], list[tuple[sp.Expr, sp.Expr]]] = {}
    for term in node.args:
        found = [f for f in sp.Mul.make_args(term) if isinstance(f, mul_pow)]
        if len(found) == 1:
            c = sp.Mul(*(f for f in sp.Mul.make_args(term) if f is not found[0]))
            products.setdefault(found[0].args[1:], []).append((term, c * found[0].args[0]))
    for (base, w), found in sorted(products.items(), key=lambda item: sp.default_sort_key(item[0])):
        if len(found) >= 2:
            rest = sp.Add(*(t for t in node.args if t not in {term for term, _ in found}))
            return rest + mul_pow(sp.Add(*(c for _, c in found)), base, w)
    if _holds_where(node):
        return None
    # The powers that a term holds as a factor, in a sum that is one, or in xlogy's first
    # argument: not inside other functions, where the sum is not linear in them.
    powers = {p for term in node.args for p in _linear_powers(term)}
    for power in sorted(powers, key=sp.default_sort_key):
        base, w = power.args
        u = w * sp.log(base)
        if len(u.free_symbols) < 2:
            continue
        parts = [_power_parts(term, power) for term in node.args]
        if any(part is None for part in parts) or sum(a != 0 for a, _ in parts) < 2:
            continue
        a = sp.Add(*(a for a, _ in parts))
        b = sp.Add(*(b for _, b in parts))
        # exp(-u), not b**-w: the module shares powers between its forms, and b**-w had the
        # Tweedie deviance's f computed as y/x**(p - 1) instead of y*x**(1 - p), NaN where
        # x**(p - 1) overflows. Within 1 here, and weighed by the smaller term.
        return sp.Piecewise((mul_pow(a + b * sp.exp(-u), base, w), u > 0), (node, True))
    return None


def _linear_powers(e: sp.Expr) -> set[sp.Pow]:
    """The powers b**w with an exponent of inputs (b not e, not a number) that `e` holds as
    a factor, as a term of a sum factor, or in xlogy's first argument, recursively."""
    if isinstance(e, sp.Pow) and not e.exp.is_number and e.base is not sp.E and not e.base.is_number:
        return {e}
    if isinstance(e, (sp.Add, sp.Mul)):
        return {p for arg in e.args for p in _linear_powers(arg)}
    if isinstance(e, xlogy):
        return _linear_powers(e.args[0])
    return set()


def _power_parts(e: sp.Expr, power: sp.Pow) -> tuple[sp.Expr, sp.Expr] | None:
    """(a, b) with e = a*power + b, a and b free of it, for an e that holds `power` only as
    _linear_powers finds it (xlogy(p, z) as p*log(z): p = b**w > 0 where this serves); None
    for another."""
    if e == power:
        return sp.Integer(1), sp.Integer(0)
    if not e.has(power):
        return sp.Integer(0), e
    if isinstance(e, sp.Add):
        parts = [_power_parts(arg, power) for arg in e.args]
        if any(part is None for part in parts):
            return None
        return sp.Add(*(a for a, _ in parts)), sp.Add(*(b for _, b in parts))
    if isinstance(e, sp.Mul):
        holding = [f for f in e.args if f.has(power)]
        if len(holding) != 1:
            return None
        part = _power_parts(holding[0], power)
        k = sp.Mul(*(f for f in e.args if f is not holding[0]))
        return None if part is None else (k * part[0], k * part[1])
    if isinstance(e, xlogy) and not e.args[1].has(power):
        part = _power_parts(e.args[0], power)
        log = sp.log(e.args[1])
        return None if part is None else (part[0] * log, part[1] * log)
    return None


def _sigmoid_gap(node: sp.Expr) -> sp.Expr | None:
    """sigmoid(a) - sigmoid(b) = -expm1(b - a)*sigmoid(a)*sigmoid(-b): the difference cancels
    where a is near b (an ordinal model's class probability sigmoid(t1 - u) - sigmoid(t0 - u);
    its log at a = 1.2e-13, b = 0 was log(0)); the product does not. From b - a = 2 on, the
    difference: its terms cancel by at most a factor (1 + e**-2)/(1 - e**-2) = 1.3 there,
    while expm1 of the rounded b - a is off by as many bits as b - a has above 1
    (sigmoid(40.9) - sigmoid(-28.8) came out 0.9999979, 22 ulps from 1). Likewise where a
    factor nears float32's flush (a <= -87, b >= 87). The difference is reflected where both
    sigmoids are near 1 (sigmoid(-b) - sigmoid(-a) for a + b > 0: sigmoid(1e36) - sigmoid(30)
    is 1 - 1 = 0, truth 9.4e-14)."""
    found = _pair_of_opposites(node, lambda f: isinstance(f, sigmoid))
    if found is None:
        return None
    c, plus, minus, rest = found
    a, b = plus.args[0], minus.args[0]
    d = sp.expand(b - a)
    return rest + c * sp.Piecewise(
        (-expm1(d) * sigmoid(a) * sigmoid(-b), (d < 2) & (a > -87) & (b < 87)),
        (sigmoid(-b) - sigmoid(-a), a + b > 0),
        (plus - minus, True),
    )


def _atan_difference(node: sp.Expr) -> sp.Expr | None:
    """atan(a) - atan(b) = atan((a - b)/(1 + a*b)) where a*b > 0: both terms round to the
    same pi/2 where a and b are far out on one side (atan(1e8) - atan(2e8) is 0, truth
    -5e-9), and cancel near a = b (atan(30) - atan(30.0073) is 14 bits off in float32);
    a - b does neither. For a*b > 1, where a*b may overflow, the same quotient over the larger
    of a and b: ((a - b)/a) over b + 1/a, whose (a - b)/a is within 1 (over the smaller,
    (0.5 - 3e38)/0.5 overflowed: atan(3e38) - atan(0.5) was pi/2, truth 1.107). Where a and
    b differ in sign the terms add, and stay."""
    found = _pair_of_opposites(node, lambda f: isinstance(f, sp.atan) and not f.args[0].is_number)
    if found is None:
        return None
    c, plus, minus, rest = found
    (a,), (b,) = plus.args, minus.args
    gap = sp.expand(a - b)
    return rest + c * sp.Piecewise(
        (sp.atan(ipow(gap / a, 1) / (b + 1 / a)), (a * b > 1) & (sp.Abs(a) >= sp.Abs(b))),
        (sp.atan(ipow(gap / b, 1) / (a + 1 / b)), a * b > 1),
        (sp.atan(gap / (1 + a * b)), a * b > 0),
        (plus - minus, True),
    )


def _hypot_difference(node: sp.Expr) -> sp.Expr | None:
    """hypot(c, a) - hypot(c, b) = ((a - b)/(hypot(c, a) + hypot(c, b)))*(a + b): both terms
    round to |c| where a and b are small beside it (sqrt(x**2 + 1) - sqrt(y**2 + 1), as
    the rules write it, at x = 1e-4, y = 2e-4 is 0, truth -1.5e-8), and cancel where a is
    near b. The quotient is at most 1, taken first so that the product overflows only with
    a + b, and is 0 where a = b even there (multiply_no_nan). sqrt_difference's conjugate,
    for the hypot the roots have become."""
    found = _pair_of_opposites(node, lambda f: isinstance(f, hypot))
    if found is None:
        return None
    c, plus, minus, rest = found
    shared = [k for k in plus.args if k in minus.args]
    if not shared:
        return None
    a, b = (h.args[1] if h.args[0] == shared[0] else h.args[0] for h in (plus, minus))
    return rest + c * mul_no_nan(a + b, ipow(sp.expand(a - b) / (plus + minus), 1))


def _power_difference(node: sp.Expr) -> sp.Expr | None:
    """a**n - b**n = (a - b)*(a**(n-1) + a**(n-2)*b + ... + b**(n-1)) for an integer n >= 3:
    the powers overflow together where the difference need not (x**4 - y**4 at x = y = 1e10
    is inf - inf, truth 0) and cancel near a = b. Where a and b have one sign the sum's terms
    have one sign too, so it neither cancels nor makes inf - inf, and the product is 0 where
    a = b even if the sum overflows (multiply_no_nan). For even n with |a| and |b| (a**n =
    |a|**n); for odd n only where a*b > 0: elsewhere the two powers add, and stay (the
    factored form as SymPy writes it, (x - y)*(x**2 + x*y + y**2), is inf - inf in its sum
    at x = -y = 1e20, where x**3 - y**3 is the right inf)."""
    found = _pair_of_opposites(
        node, lambda f: isinstance(f, sp.Pow) and f.exp.is_Integer and f.exp >= 3 and not f.base.is_number
    )
    if found is None or found[1].exp != found[2].exp:
        return None
    c, plus, minus, rest = found
    n = int(plus.exp)
    a, b = plus.base, minus.base
    if n % 2 == 0:
        a, b = sp.Abs(a), sp.Abs(b)
    total = sp.Add(*(a**k * b ** (n - 1 - k) for k in range(n)))
    gap = sp.expand(a - b)
    product = total * gap if gap.is_number else mul_no_nan(total, gap)
    if n % 2 == 0:
        return rest + c * product
    return rest + c * sp.Piecewise((product, a * b > 0), (plus - minus, True))


# Beyond this on one side, sinh(u) and cosh(u) are +-exp(|u|)/2 to within e**-18 = 1.5e-8 of
# themselves and of their differences (hyperbolic_difference).
HYPERBOLIC_FAR = 9


def _hyperbolic_difference(node: sp.Expr) -> sp.Expr | None:
    """sinh(a) - sinh(b) and cosh(a) - cosh(b) (as cosh(|a|) - cosh(|b|)) in three regimes.
    Both beyond HYPERBOLIC_FAR on one side: (exp(a) - exp(b))/2 as exp_difference writes it,
    0 where a = b (x = y = 200 was inf - inf, truth 0). Within 1 of each other, where the
    terms cancel: 2*cosh((a + b)/2)*sinh((a - b)/2) (2*sinh(...)*sinh(...) for cosh), a - b
    exact there and (a + b)/2 not rounded, from the half arguments by the addition formula
    (its terms share a sign: a*b > 0 for sinh, |a| and |b| for cosh). Elsewhere the terms
    do not cancel, each from its half argument (half_argument: finite up to the true
    overflow at 89.4)."""
    found = _pair_of_opposites(node, lambda f: isinstance(f, (sp.sinh, sp.cosh)) and not f.args[0].is_number)
    if found is None or type(found[1]) is not type(found[2]):
        return None
    c, plus, minus, rest = found
    (a,), (b,) = plus.args, minus.args
    odd = isinstance(plus, sp.sinh)
    if not odd:
        a, b = sp.Abs(a), sp.Abs(b)
    ha, hb = a / 2, b / 2
    if odd:
        half_sum = sp.cosh(ha) * sp.cosh(hb) + sp.sinh(ha) * sp.sinh(hb)
    else:
        half_sum = sp.sinh(ha) * sp.cosh(hb) + sp.cosh(ha) * sp.sinh(hb)

    def far(p: sp.Expr, q: sp.Expr) -> sp.Expr:
        return sp.Piecewise((0, sp.Eq(p, q)), *((e / 2, cond) for e, cond in _exp_gap(p, q)))

    t = HYPERBOLIC_FAR
    branches = [(far(a, b), (a > t) & (b > t))]
    if odd:
        branches.append((-far(-a, -b), (a < -t) & (b < -t)))
    gap = sp.expand(a - b)
    close = sp.Abs(gap) < 1
    branches.append((2 * half_sum * sp.sinh(gap / 2), (a * b > 0) & close if odd else close))
    branches.append((_half_argument(plus) - _half_argument(minus), True))
    return rest + c * sp.Piecewise(*branches)


def _cos_difference(node: sp.Expr) -> sp.Expr | None:
    """cos(a) - cos(b) as cos(A) - cos(B), A = |a|, B = |b|, and within 1 of each other as
    2*sin(A + d/2)*sin(d/2), d = B - A (exact there), sin(A + d/2) by the addition formula
    (no argument rounded): the terms cancel near a = +-b (cos(1.00006) - cos(-1.0000001) kept
    11 bits; -2*sin((a + b)/2)*sin((a - b)/2) rounds a + b, which large arguments amplify).
    Elsewhere from the half arguments (half_argument: cos(88) - cos(7.5e-9) = 6.3e-4 lost 9
    bits as a difference of two cosines near 1)."""
    found = _pair_of_opposites(node, lambda f: isinstance(f, sp.cos) and not f.args[0].is_number)
    if found is None:
        return None
    c, plus, minus, rest = found
    a, b = sp.Abs(plus.args[0]), sp.Abs(minus.args[0])
    half = sp.expand(b - a) / 2
    near = 2 * (sp.sin(a) * sp.cos(half) + sp.cos(a) * sp.sin(half)) * sp.sin(half)
    far = _half_argument(plus) - _half_argument(minus)
    return rest + c * sp.Piecewise((near, sp.Abs(half) < sp.Rational(1, 2)), (far, True))


def _sin_difference(node: sp.Expr) -> sp.Expr | None:
    """sin(a) - sin(b), within 1 of each other, as -2*cos(a + h)*sin(h), h = (b - a)/2 (exact
    there), cos(a + h) by the addition formula (no argument rounded): the terms cancel near
    a = b (sin(-1.001) - sin(-1) kept 9.8 bits). Elsewhere the difference stays."""
    found = _pair_of_opposites(node, lambda f: isinstance(f, sp.sin) and not f.args[0].is_number)
    if found is None:
        return None
    c, plus, minus, rest = found
    a = plus.args[0]
    half = sp.expand(minus.args[0] - a) / 2
    near = -2 * (sp.cos(a) * sp.cos(half) - sp.sin(a) * sp.sin(half)) * sp.sin(half)
    return rest + c * sp.Piecewise((near, sp.Abs(half) < sp.Rational(1, 2)), (plus - minus, True))


def _half_argument(node: sp.Expr) -> sp.Expr | None:
    """cosh(u) = 1 + 2*sinh(u/2)**2 and sinh(u) = 2*sinh(u/2)*cosh(u/2). The printer writes
    cosh and sinh from exp(u) and exp(-u) (printer.EXP_FORMS), which overflow for
    88.7 < |u| < 89.4 where cosh and sinh are still finite (sinh(89) = 2.2e38); at u/2 they
    do not, and the products are finite up to the true overflow. Also cosh(a) - cosh(b), whose
    terms round to 1 near 0 (cosh(1e-38) - cosh(4.8e-9) is 0, truth -1.1e-17), becomes
    2*sinh(a/2)**2 - 2*sinh(b/2)**2, whose terms keep their bits; likewise cos(u) =
    1 - 2*sin(u/2)**2 in cos(a) - cos(b) (cos(3e-5) - cos(1e-6) is 0, truth -4.5e-10), where
    -2*sin((a + b)/2)*sin((a - b)/2) would round a + b, which large arguments amplify. Each
    factor is within a rounding or two, so the plain forms stay where they are as good (cos
    near its roots, 1 - 2*sin(u/2)**2 cancels there): the judge decides."""
    if isinstance(node, (sp.cosh, sp.sinh, sp.cos)) and not node.args[0].is_number:
        half = node.args[0] / 2
        if isinstance(node, sp.cos):
            return 1 - 2 * sp.sin(half) ** 2
        return 1 + 2 * sp.sinh(half) ** 2 if isinstance(node, sp.cosh) else 2 * sp.sinh(half) * sp.cosh(half)
    return None


# For f = erf, erfc, tanh, which tend to constants at both ends: the bound on a + b, and
# f(a) - f(b) above it, below its negative, and between; the first two from complements that
# keep their bits where f rounds to its limit (erf(u) = 1 - erfc(u) = erfc(-u) - 1;
# tanh(u) = 1 - 2*sigmoid(-2u) = 2*sigmoid(2u) - 1).
_SATURATED_DIFFERENCES: dict[type, tuple[int, Callable[[sp.Expr, sp.Expr], sp.Expr], ...]] = {
    sp.erf: (
        1,
        lambda a, b: erfc(b) - erfc(a),
        lambda a, b: erfc(-a) - erfc(-b),
        lambda a, b: sp.erf(a) - sp.erf(b),
    ),
    erfc: (
        1,
        lambda a, b: erfc(a) - erfc(b),
        lambda a, b: erfc(-b) - erfc(-a),
        lambda a, b: sp.erf(b) - sp.erf(a),
    ),
    sp.tanh: (
        2,
        lambda a, b: 2 * (sigmoid(-2 * b) - sigmoid(-2 * a)),
        lambda a, b: 2 * (sigmoid(2 * a) - sigmoid(2 * b)),
        lambda a, b: sp.tanh(a) - sp.tanh(b),
    ),
}


def _saturated_pair(node: sp.Expr) -> tuple[sp.Expr, sp.Expr, sp.Expr, sp.Expr] | None:
    """(c > 0, f(a), f(b), the rest) for a sum c*f(a) - c*f(b) + rest, f one of
    _SATURATED_DIFFERENCES' functions of an input, the same in both terms."""
    found = _pair_of_opposites(node, lambda f: type(f) in _SATURATED_DIFFERENCES and not f.args[0].is_number)
    if found is None or type(found[1]) is not type(found[2]):
        return None
    c, plus, minus, rest = found
    # f(a) - f(b) matched from its negative term.
    return (-c, minus, plus, rest) if c.is_negative else found


def _saturated_difference(node: sp.Expr) -> sp.Expr | None:
    """f(a) - f(b) for f = erf, erfc or tanh, with a where on a + b: both terms round to f's
    limit where a and b are far out on one side (erf(-4) - erf(-1e27) is -1 - -1 = 0, truth
    1.5e-8, a normal interval probability's tail; tanh(10.6) - tanh(19.7) is 1 - 1, truth
    -1.2e-9), and their complements there do not. Near a + b = 0 the complements round to
    their middle value (erfc(1e-10) - erfc(3e-10) is 1 - 1), so there f's own difference
    stays, erfc's as erf(b) - erf(a)."""
    found = _saturated_pair(node)
    if found is None:
        return None
    c, plus, minus, rest = found
    (a,), (b,) = plus.args, minus.args
    far, above, below, between = _SATURATED_DIFFERENCES[type(plus)]
    return rest + c * sp.Piecewise(
        (above(a, b), a + b > far), (below(a, b), a + b < -far), (between(a, b), True)
    )


def _log_of_saturated_difference(node: sp.Expr) -> sp.Expr | None:
    """log(c*(f(a) - f(b))), c > 0, for f = erf, erfc or tanh, in log space: the difference
    underflows where both are far out on one side and its log is finite (an ordered probit's
    log-likelihood log(Phi(b) - Phi(a)): log(erfc(10) - erfc(11)) is log(0) in float32, truth
    -102.9). tanh as 2*(sigmoid(2a) - sigmoid(2b)), by log_sigmoid_gap's identity; erf and
    erfc by log(erfc(p)) + log1mexp(log(erfc(p)) - log(erfc(q))), p < q, where
    saturated_difference takes the complements, each log(erfc(u)) as log_erfc writes it."""
    if not isinstance(node, sp.log):
        return None
    c, arg = sp.factor_terms(node.args[0]).as_coeff_Mul()
    found = _saturated_pair(arg)
    if not c.is_positive or found is None or found[3] != 0:
        return None
    k, plus, minus, _ = found
    c *= k
    (a,), (b,) = plus.args, minus.args
    if isinstance(plus, sp.tanh):
        return _log_of_sigmoid_gap(sp.log(2 * c * (sigmoid(2 * a) - sigmoid(2 * b))))
    upper, lower = ((b, a), (-a, -b)) if isinstance(plus, sp.erf) else ((a, b), (-b, -a))
    far, _, _, between = _SATURATED_DIFFERENCES[type(plus)]
    return sp.log(c) + sp.Piecewise(
        (_log_erfc_gap(*upper), a + b > far), (_log_erfc_gap(*lower), a + b < -far), (sp.log(between(a, b)), True)
    )


def _log_erfc_gap(p: sp.Expr, q: sp.Expr) -> sp.Expr:
    """log(erfc(p) - erfc(q)) for p < q, from the two logs."""
    log_p, log_q = (_log_of_erfc(sp.log(erfc(u))) for u in (p, q))
    return log_p + log1mexp(log_p - log_q)


def _sigmoid_slope_gap(node: sp.Expr) -> sp.Expr | None:
    """sigmoid(a)*sigmoid(-a) - sigmoid(b)*sigmoid(-b) = (sigmoid(a) - sigmoid(b))*(sigmoid(-a)
    - sigmoid(b)), each factor as sigmoid_gap writes it: the slopes cancel where a is near b
    or near -b (the ordinal model's class probability's slope in u; softplus(x) - softplus(x
    - 1) has f'' = sigmoid'(x) - sigmoid'(x - 1), which is 0 at x = 1/2 and came out -7e-9;
    the second factor has expm1(2*x - 1), exact there)."""

    def slope(f: sp.Expr) -> bool:
        pair = sp.Mul.make_args(f)
        return len(pair) == 2 and all(isinstance(g, sigmoid) for g in pair) and pair[0].args[0] == -pair[1].args[0]

    found = _pair_of_opposites(node, slope)
    if found is None:
        return None
    c, plus, minus, rest = found
    a, b = plus.args[0].args[0], minus.args[0].args[0]
    gaps = [_sigmoid_gap(sigmoid(u) - sigmoid(b)) for u in (a, -a)]
    return rest + c * gaps[0] * gaps[1]


def _log_of_sigmoid_gap(node: sp.Expr) -> sp.Expr | None:
    """log(c*(sigmoid(a) - sigmoid(b))) = log(c) + log1mexp(a - b) - softplus(-a) - softplus(b),
    c > 0: the log of an ordinal model's class probability in log space. The difference
    flushes to 0 where its log is finite (sigmoid(3.7e25) - sigmoid(89) is sigmoid(-89) =
    2.2e-39: log(0), truth -89) and rounds where it is near 1. NaN for a < b, as the log is."""
    if not isinstance(node, sp.log):
        return None
    found = _pair_of_opposites(node.args[0], lambda f: isinstance(f, sigmoid))
    if found is None or found[3] != 0 or not found[0].is_number:
        return None
    c, plus, minus, _ = found
    if c < 0:
        c, plus, minus = -c, minus, plus
    a, b = plus.args[0], minus.args[0]
    return sp.log(c) + log1mexp(sp.expand(a - b)) - softplus(-a) - softplus(b)


def _sqrt_difference(node: sp.Expr) -> sp.Expr | None:
    """sqrt(a) - sqrt(b) = (a - b)/(sqrt(a) + sqrt(b)), with a - b simplified: the roots
    cancel where a is near b (sqrt(x + 1) - sqrt(x) at x = 1e8 is 0, truth 5e-5). A
    quotient with an input in a - b is kept whole: it is no larger than the larger root,
    while a - b over another factor first need not be (the Hellinger slope
    (x - y)/sqrt(x)/(sqrt(x) + sqrt(y)) was -inf at x = 0.5, y = 3e38)."""
    found = _pair_of_opposites(node, lambda f: isinstance(f, sp.Pow) and f.exp == sp.Rational(1, 2))
    if found is None:
        return None
    c, plus, minus, rest = found
    gap = sp.expand(plus.base - minus.base)
    return rest + c * (ipow(gap / (plus + minus), 1) if gap.free_symbols else gap / (plus + minus))


def _shifted_softplus(node: sp.Expr) -> sp.Expr | None:
    """c*softplus(u) - c*log(2) = c*log1p(expm1(u)/2) for u < 1: the difference cancels near
    u = 0, where it is about c*u/2 (SchNet's shifted softplus at u = 1e-8: 0, truth 5e-9).
    For u >= 1 it cancels by at most a factor of 2 and stays (expm1 overflows beyond 88.7)."""
    if not isinstance(node, sp.Add):
        return None
    for term in node.args:
        c, rest = term.as_coeff_Mul()
        if isinstance(rest, softplus) and -c * sp.log(2) in node.args:
            u = rest.args[0]
            others = sp.Add(*(t for t in node.args if t is not term and t != -c * sp.log(2)))
            near = c * log1p(expm1(u) / 2)
            return others + sp.Piecewise((near, u < 1), (term - c * sp.log(2), True))
    return None


# Factors that decay to 0 far out (and flush there) while the rest of a product may grow.
_DECAYING = (sp.exp, sigmoid, sigmoid_slope, tanh_softplus_slope, erfc, mills)


# Factors that grow without bound far out: a negative power of one, of an argument of
# several inputs, decays (Bose-Einstein's log(1 - exp(-x/t))'' is
# (1/t)**2/(expm1(x/t)*expm1(-x/t)), inf/inf = NaN at x = 50, t = 4e-32, where the truth
# is 0). In one input the regimes far out serve: there it took x/|sinh(x)|'' off its
# asymptote (24 bits where it had 11).
_GROWING = (expm1, sp.sinh, sp.cosh)


def _decays(factor: sp.Expr) -> bool:
    """A _DECAYING function, a positive power of one, a negative power of a _GROWING one of
    several inputs, or 1 - sigmoid(u) (the economy's form of sigmoid(-u))."""
    if isinstance(factor, sp.Pow):
        if factor.exp.is_negative and isinstance(factor.base, _GROWING) and len(factor.base.free_symbols) >= 2:
            return True
        return factor.exp.is_positive and _decays(factor.base)
    if isinstance(factor, sp.Add):
        return len(factor.args) == 2 and 1 in factor.args and isinstance(-(factor - 1), sigmoid)
    return isinstance(factor, _DECAYING)


def _split_product(node: sp.Expr, picked: Callable[[sp.Expr], bool]) -> tuple[sp.Expr, list[sp.Expr], sp.Expr] | None:
    """(number, the factors `picked` takes, the rest) of a product c*r*d1*d2..., where some
    factor is picked and the rest depends on an input (a constant cannot over- or
    underflow). The number stays apart: multiplied into a sum SymPy would distribute it,
    and 2*(y - x) would become 2*y - 2*x, which overflows where y - x does not."""
    if not isinstance(node, sp.Mul):
        return None
    coeff, body = node.as_coeff_Mul()
    factors = sp.Mul.make_args(body)
    chosen = [f for f in factors if picked(f)]
    rest = sp.Mul(*(f for f in factors if not picked(f)))
    if not chosen or not rest.free_symbols:
        return None
    return coeff, chosen, rest


def _no_nan_product(node: sp.Expr) -> sp.Expr | None:
    """r*d, d a product of factors that decay to 0 far out: mul_no_nan(r, d), 0 where d
    flushes to 0 even where r has overflowed (y**2*sigmoid_slope(x*y) at x = y = 1e20 is
    inf*0 = NaN; the truth is 0). So too for a factor mul_exp(c, u) whose c is not a number:
    it is exactly 0 where c is, as the product is, whatever the other factors are (the
    Gaussian NLL in log sigma, (x - y)**2*exp(-2*y)/2 + y, has d/dy = 1 - (exp(-y) + (x -
    y)*exp(-y))*(x - y)*exp(-y): inf*0 = NaN at x = y = -1e30, where the truth is 1)."""
    found = _split_product(node, lambda f: _decays(f) or (isinstance(f, mul_exp) and not f.args[0].is_number))
    if found is None:
        return None
    coeff, decaying, rest = found
    # With an irrational constant above 1 in size in r, a number below 1 goes inside too,
    # where the printer writes the two as one number (and SymPy does not distribute it):
    # pi*r inside and 1/4 outside is inf from r = float max/pi on, where the whole is a
    # float (expm1(x)**(pi/4)' at x = 112, 1.25e38). Elsewhere the number stays out: moved
    # in, its rounding tipped gelu_tanh's f' (sqrt(2/pi) inside) to a costlier form.
    constant = rest.as_independent(*rest.free_symbols, as_Add=False)[0]
    if abs(coeff) < 1 and not constant.is_Rational and _size(constant) > 1:
        return mul_no_nan(coeff * rest, sp.Mul(*decaying))
    return coeff * mul_no_nan(rest, sp.Mul(*decaying))


def _exp_product(node: sp.Expr) -> sp.Expr | None:
    """r*exp(u) as mul_exp(r, u) = r*exp(u/2)*exp(u/2): exp(u) overflows at u = 88.7 where
    the product need not (exp(-x)*sin(y) at x = -92, y = -1.2e-13 is -1.0e27)."""
    found = _split_product(node, lambda f: isinstance(f, sp.exp))
    if found is None or len(found[1]) != 1:
        return None
    coeff, (exp,), rest = found
    return coeff * mul_exp(rest, exp.args[0])


def _square_root(term: sp.Expr) -> tuple[sp.Expr, sp.Expr] | None:
    """(c, r) for a term c*r**2, c a number and r's factors even powers (ipow(w, 2k) too);
    None for any other term."""
    coeff, body = term.as_coeff_Mul()
    root = sp.Integer(1)
    for factor in sp.Mul.make_args(body):
        if isinstance(factor, sp.Pow) and factor.exp.is_Integer and factor.exp % 2 == 0:
            root *= factor.base ** (factor.exp // 2)
        elif isinstance(factor, ipow) and factor.args[1] % 2 == 0:
            root *= ipow(factor.args[0], factor.args[1] // 2)
        elif factor != 1:
            return None
    return coeff, root


def _as_number(c: sp.Expr) -> sp.Expr:
    """A constant as the printer writes it: rationals stay, sqrt(3) becomes 1.7320508...
    The judge would evaluate sqrt(3) in float64, and NumPy then the whole form, where TF's
    float32 overflows (judge.float_constants)."""
    return c if c.is_Rational else sp.Float(numeric(c), 17)


def to_float32(value: float) -> float:
    """`value` rounded to float32 (to nearest, as TF converts a Python float)."""
    return struct.unpack("f", struct.pack("f", value))[0]


def plus_constant(a: sp.Expr, c: sp.Expr) -> sp.Expr:
    """a + c for a number c, with an irrational c as two numbers: (a + c_hi) + c_lo, c_hi
    rounded to float32, so that a + c_hi is exact where a is near -c (Sterbenz) and c_lo
    adds what float32's c lacks: 4*x**2 - 2 near its root 1/sqrt(2) loses 8 bits to the
    rounding of x**2; 4*((x - c_hi) - c_lo)*(x + c) loses none. In float64, c_lo is a
    double, and c_hi + c_lo holds c to 77 bits."""
    if c.is_Rational:
        return a + c
    c = sp.N(c, 40)
    hi = to_float32(float(c))
    lo = float(sp.N(c - sp.Rational(hi), 20))
    # ipow keeps a + c_hi whole: SymPy would add the two numbers into one.
    return ipow(a + sp.Float(hi, 17), 1) + sp.Float(lo, 17)


def _difference_of_squares(node: sp.Expr) -> sp.Expr | None:
    """(c*a**2 - d*b**2)*r**2 = c*(a*r - k*b*r)*(a*r + k*b*r), k = sqrt(d/c) and r**2 the
    even powers of the product around the sum: the squares overflow where the difference
    need not, and two that overflow make inf - inf (gaussian_nll's d2/ds2,
    (3*((x - m)/s)**2 - 1)/s**2, is inf at x = 1e36, s = 1e15, truth 3e12; x**2 - y**2 at
    x = y = 1e20 is NaN, truth 0). Where k*b*r is an irrational number it is added in two
    parts (plus_constant): the factor with a root is then exact near it."""
    factors = sp.Mul.make_args(node)
    sums = [f for f in factors if isinstance(f, sp.Add) and len(f.args) == 2]
    if len(sums) != 1:
        return None
    parts = [_square_root(t) for t in sums[0].args]
    if None in parts or (parts[0][0] > 0) == (parts[1][0] > 0) or all(r.is_number for _, r in parts):
        return None
    # a the term with an input (the positive one if both have), the sign taken out.
    (c, a), (d, b) = sorted(parts, key=lambda p: (p[1].is_number, -p[0]))
    sign = 1 if c > 0 else -1
    c, d = sign * c, sign * d
    k = sp.sqrt(-d / c)
    # Factors around the sum that are squares go inside both differences; the others
    # multiply the first (kept apart by ipow: (1 - u)*(1 + u)/s overflows at u = 5e22,
    # s = 6e13 where ((1 - u)/s)*(1 + u) does not), a number in front of both.
    around, outside = sp.Integer(1), sp.Integer(1)
    for factor in factors:
        if factor is sums[0]:
            continue
        found = None if factor.is_number else _square_root(factor)
        if found is not None and found[0] > 0:
            around *= sp.sqrt(found[0]) * found[1]
        else:
            outside *= factor
    coeff, outside = (sign * c * outside).as_coeff_Mul()
    shift = k * b * around
    if shift.is_number:
        minus, plus = plus_constant(a * around, -shift), plus_constant(a * around, shift)
    else:
        k = _as_number(k)
        minus, plus = a * around - k * b * around, a * around + k * b * around
    return coeff * (minus if outside == 1 else ipow(outside * minus, 1)) * plus


# Degrees up to which a polynomial is factored at its real roots.
ROOTS_MAX_DEGREE = 8


def _real_roots(coeffs: list[sp.Expr]) -> tuple[list[tuple[sp.Expr, int]], list[sp.Expr]] | None:
    """The real roots of the polynomial with `coeffs` (numbers, highest power first), each
    with its multiplicity, and the coefficients of the monic polynomial left, which has no
    real root. Rational roots are exact; the others are numbers to 40 digits. None where
    SymPy's root finder does not converge."""
    d = sp.Dummy("u")
    monic = [c / coeffs[0] for c in coeffs]
    if not all(c.is_Rational for c in monic):
        # As numbers: a coefficient such as xlogy(2, 2) is a generator to sp.Poly, which
        # then has no numeric domain to find roots in (log2(log1p(x)), fuzz seed 1357).
        monic = [sp.N(c, 50) for c in monic]
        if not all(c.is_Number for c in monic):
            return None
    # Over the rationals, factored first: repeated roots become simple ones of a factor.
    parts = sp.factor_list(sp.Poly(monic, d))[1] if all(c.is_Rational for c in monic) else [(sp.Poly(monic, d), 1)]
    roots, rest = [], sp.Poly(1, d)
    for factor, multiplicity in parts:
        if factor.degree() == 1:
            top, bottom = factor.all_coeffs()
            roots.append((-bottom / top, multiplicity))
            continue
        try:
            found = factor.nroots(n=40, maxsteps=200)
        except (sp.polys.polyerrors.BasePolynomialError, mpmath.libmp.NoConvergence):
            return None
        for z in found:
            if z.is_real:
                roots.append((z, multiplicity))
            elif sp.im(z) > 0:
                re, size = sp.re(z), sp.Abs(z) ** 2
                rest *= sp.Poly([1, sp.Float(float(-2 * re), 17), sp.Float(float(size), 17)], d) ** multiplicity
    return roots, rest.all_coeffs()


@functools.lru_cache(maxsize=256)
def _factored(node: sp.Expr) -> tuple[sp.Expr, list[sp.Expr], list[tuple[sp.Expr, int]], sp.Expr] | None:
    """(u, p's coefficients, its real roots with their multiplicities, p factored at them)
    for a polynomial p in one u of degree 2 to 8 with a real root other than 0; see
    _factor_at_roots."""
    if not isinstance(node, sp.Add):
        return None
    found = _as_polynomial(node)
    if found is None or not 2 <= len(found[1]) - 1 <= ROOTS_MAX_DEGREE:
        return None
    u, coeffs = found
    split = _real_roots(coeffs)
    if split is None or all(r == 0 for r, _ in split[0]):
        return None
    roots, rest = split
    factors = [(u if r == 0 else plus_constant(u, -r)) ** k for r, k in roots]
    # The rest is monic: u**2 + b*u + c, not 1.0*u**2 + ...
    rest_poly = sp.Add(*(c * u**j for j, c in enumerate(reversed([sp.Integer(1), *rest[1:]]))))
    lead = sp.Integer(1) if coeffs[0] == 1 else coeffs[0]  # not 1.0*(...) after a Float root
    return u, coeffs, roots, lead * sp.Mul(*factors) * rest_poly


def _factor_at_roots(node: sp.Expr) -> sp.Expr | None:
    """p(u) = a*(u - r1)*(u - r2)*...*q(u) for a polynomial in one u of degree 2 to 8, the r
    its real roots and q the rest: near a root r != 0 the terms of p cancel, and each rounded
    term costs bits (x**4 - 5*x**2 + 2 in the Gaussian x**2*exp(-x**2/2)'s f'' at x = 0.662
    loses 10); u - r, with r in two parts (plus_constant), is exact there."""
    found = _factored(node)
    return None if found is None else found[3]


# Near a root r of p, p as written loses about log2 of its condition number
# sum(|c_k*u**k|)/|p(u)|; roots_regime takes the factored form where that exceeds this.
ROOT_CONDITION = 2


def _roots_regime(node: sp.Expr) -> sp.Expr | None:
    """where(u is near a real root r != 0 of p, p factored at its roots, p) for a polynomial
    p as in _factor_at_roots. The factored form is within 3 bits everywhere, but each factor
    rounds: 5*x**4 - 1 averages 0.25 bits over the judge's grid and loses 7 at 4 points
    within 2**-10 of its roots +-0.6687, factored it averages 0.52. Near r, p(u) is about
    D*(u - r)**m, D = |p^(m)(r)|/m!, and its terms sum to S = sum(|c_k*r**k|), so the form as
    written loses log2(S/|p(u)|) bits: the factored form is taken where |u - r| is below
    (S/(ROOT_CONDITION*D))**(1/m)."""
    found = _factored(node)
    if found is None:
        return None
    u, coeffs, roots, factored = found
    d = sp.Dummy("u")
    poly = sp.Poly(coeffs, d)
    near = []
    for r, m in roots:
        if r == 0:
            continue
        size = sum(abs(sp.N(c * r**j, 30)) for j, c in enumerate(reversed(coeffs)))
        slope = abs(sp.N(poly.diff((d, m)).eval(r) / math.factorial(m), 30))
        width = (size / (ROOT_CONDITION * slope)) ** (sp.Integer(1) / m)
        # Two digits: the width needs no more, and reads as 0.17 in the generated code.
        near.append(sp.Abs(u - _as_number(r)) < sp.Float(float(f"{float(width):.2g}"), 17))
    return sp.Piecewise((factored, sp.Or(*near)), (node, True))


def _reciprocal_sum(node: sp.Expr) -> sp.Expr | None:
    """n/(t1 + t2 + ...) = 1/(t1/n + t2/n + ...) for a product n of powers of the inputs:
    x*y/(x + y) at x = 6e36, y = 7e-25 is 4e12/6e36, fine, but at x = y = 1e20 it is
    inf/2e20; 1/(1/y + 1/x) is neither (the parallel sum, 5e19)."""
    if not isinstance(node, sp.Mul):
        return None
    sums = [f for f in node.args if isinstance(f, sp.Pow) and f.exp == -1 and isinstance(f.base, sp.Add)]
    rest = [f for f in node.args if not any(f is s for s in sums)]
    powers = [f for f in rest if not f.is_number]
    if len(sums) != 1 or not powers or not all(f.as_base_exp()[0].is_Symbol for f in powers):
        return None
    coeff, n = sp.Mul(*(f for f in rest if f.is_number)), sp.Mul(*powers)
    terms = [t / n for t in sums[0].base.args]
    if any(isinstance(t, sp.Add) for t in terms):
        return None
    return coeff / sp.Add(*terms)


def _hypot_minus_side(node: sp.Expr) -> sp.Expr | None:
    """k*hypot(a, b) - k*a = k*b*(b/(hypot(a, b) + a)) where a > 0, for an a that is not a
    number (hypot_minus_one has those): the difference cancels where |b| << a
    (hypot(x, y) - x at x = 1e8, y = 1 is 0; the truth is 5e-9)."""
    found = _hypot_less_leg(node, lambda k, a: not a.is_number)
    if found is None:
        return None
    rest, k, h, a, b = found
    return rest + sp.Piecewise((k * b * ipow(b / (h + a), 1), a > 0), (k * h - k * a, True))


# Sizes up to which an expression is tested as a quotient of polynomials (sp.Poly of its
# numerator and denominator).
QUOTIENT_MAX_OPS = 40


@functools.lru_cache(maxsize=1024)
def _quotient_polys(node: sp.Expr) -> tuple[sp.Poly, sp.Poly, list[sp.Symbol], sp.Expr] | None:
    """(p, q, inputs, q as written) where `node` is p/q, polynomials with numeric coefficients
    in two or more inputs, q not a number. Remembered: scale_quotient and dominant_term ask
    for the same nodes."""
    if not isinstance(node, (sp.Mul, sp.Pow)):
        return None  # a quotient
    symbols = sorted(node.free_symbols, key=sp.default_sort_key)
    if len(symbols) < 2 or sp.count_ops(node) > QUOTIENT_MAX_OPS:
        return None
    num, den = sp.fraction(sp.together(naive(node)))
    try:
        p, q = sp.Poly(num, *symbols), sp.Poly(den, *symbols)
    except sp.PolynomialError:
        return None
    if q.total_degree() < 1 or not (p.domain.is_Numerical and q.domain.is_Numerical):
        return None
    return p, q, symbols, den


def _linear_in(total: sp.Expr, symbols: Sequence[sp.Symbol]) -> bool:
    """Whether `total` is a*x + b*y + ... in the inputs, numbers a, b, ..., no constant."""
    return all(
        (c := t.as_coeff_Mul())[0].is_number and c[1] in symbols for t in sp.Add.make_args(total)
    )


def _scaled(form: sp.Expr, m: sp.Expr, d: int) -> sp.Expr:
    """form*m**d, one product (or division) by m at a time."""
    for _ in range(abs(d)):
        form = ipow(form * m if d > 0 else form / m, 1)
    return form


def _scale_quotient(node: sp.Expr) -> sp.Expr | None:
    """f(x, y, ...) = m**d * f(x/m, y/m, ...), m = (|x| + |y| + ...)/n, for f a quotient of
    homogeneous polynomials of degree d: x*y/(x**2 + y**2) is inf/inf = NaN for
    |x|, |y| > 1.8e19 and 0/0 below 1e-19, where the truth is as near 1/2 as at x = y = 1;
    the scaled inputs lie in [-n, n]. m**d is applied one division (or product) at a time.

    Other quotients of polynomials are written over m = 1 + (|x| + |y| + ...)/n, each
    monomial of degree k in a polynomial of degree D as c*(x/m)**a*(y/m)**b*(1/m)**(D - k):
    x**2/(1 + x**2 + y**2) is inf/inf beyond 1.8e19, where X**2/(r**2 + X**2 + Y**2) is not.

    An input that divides the quotient whole divides it last, unscaled: the Student-t NLL's
    slope in its scale, -3*(s + x)*(x - s)/(s*(x**2 + 3*s**2)), had s/m in its denominator,
    which flushes to 0 at x = -2.6e32, s = 3e-28 (the slope -1e28 was -inf)."""
    if isinstance(node, sp.Mul):
        divisors = [f for f in node.args if f.is_Pow and f.base.is_Symbol and f.exp.is_Integer and f.exp < 0]
        inner = _scale_quotient(node * sp.Mul(*(1 / f for f in divisors))) if divisors else None
        if inner is not None:
            for f in divisors:
                for _ in range(-int(f.exp)):
                    inner = ipow(inner / f.base, 1)
            return inner
    found = _quotient_polys(node)
    if found is None:
        return None
    p, q, symbols, _ = found
    d = p.total_degree() - q.total_degree()
    mean = sp.Add(*(sp.Abs(v) for v in symbols)) / len(symbols)  # |x| + |y| overflows at 2e38
    if p.is_homogeneous and q.is_homogeneous:
        # ipow(x/m, 1) keeps the scaled input whole: SymPy would write (x/m)**2 as x**2/m**2.
        # A sum of inputs, x - y, is scaled whole, as (x/2 - y/2)/(m/2): x/m - y/m rounds each
        # before they cancel (x*y/(x**2 + y**2)'s slope y*(y - x)*(y + x)/h**4 near x = y),
        # and x + y overflows at x = y = 3e38. Halves are exact.
        half = sp.Add(*(sp.Abs(v) / (2 * len(symbols)) for v in symbols))
        scaled = {v: ipow(v / mean, 1) for v in symbols}
        scaled.update({a: ipow(ipow(sp.expand(a / 2), 1) / half, 1) for a in node.atoms(sp.Add) if _linear_in(a, symbols)})
        return _scaled(node.xreplace(scaled), mean, d)
    m = 1 + mean
    scaled = [ipow(v / m, 1) for v in symbols]
    r = ipow(1 / m, 1)

    def over_m(poly: sp.Poly) -> sp.Expr:
        top = poly.total_degree()
        return sp.Add(
            *(c * sp.Mul(*(s**a for s, a in zip(scaled, powers))) * r ** (top - sum(powers)) for powers, c in poly.terms())
        )

    return _scaled(over_m(p) / over_m(q), m, d)


def _monomial_ratio(coeff: sp.Expr, exponents: Sequence[int], symbols: Sequence[sp.Symbol]) -> sp.Expr:
    """coeff*x**a*y**b*... (integer exponents of either sign) one product or division at a
    time, divisions and products in turn, and as a power of the same with exponents divided
    by their common divisor: x**2/v as (x/v)*x, which is finite where x**2 flushes
    (x = 1e-20, v = 1e-30) or overflows, y**2/x**4 as ((y/x)/x)**2 (y*(y/x) flushes at
    x = -9.7e-17, y = 3e-28).

    With every input on one side of the line, the part that they share goes first, as a
    power of their product: 1/(x**4*y**3) as ((1/x)/y)**3/x, the power of 1/(x*y) that a
    function of x*y far out is a series in. One input at a time, x**4 overflows or flushes
    where x*y is moderate (the slope of x*y/(1 + x**2*y**2) far out was inf at
    x = 2.9e-15, y = -3.7e25, truth -2.9e-19), and in turn, x, y, x, ..., a partial product
    flushes where x is huge and y tiny (6.2e36 and 4e-36). Not so for a quotient: x**6/y**5
    as (x/y)**5*x overflows where x**2/y is moderate and x/y is not (x = 3e-10, y = -1e-19,
    in the curvature of x**2*y/(x**4 + y**2))."""
    g = math.gcd(*exponents) or 1
    exponents = [e // g for e in exponents]
    form = None
    if all(e > 0 for e in exponents) or all(e < 0 for e in exponents):
        k = min(abs(e) for e in exponents)
        signs = [1 if e > 0 else -1 for e in exponents]
        form = _stepwise(None, signs, symbols)
        form = form if k == 1 else ipow(form, k)
        exponents = [e - k * s for e, s in zip(exponents, signs)]
    form = _stepwise(form, exponents, symbols)
    return coeff * (form if g == 1 else ipow(form, g))


def _stepwise(form: sp.Expr | None, exponents: Sequence[int], symbols: Sequence[sp.Symbol]) -> sp.Expr:
    """`form` (1 if None) times x**a*y**b*..., one product or division at a time, divisions
    and products in turn."""
    ups = [v for v, e in zip(symbols, exponents) for _ in range(max(e, 0))]
    downs = [v for v, e in zip(symbols, exponents) for _ in range(max(-e, 0))]
    if form is None:
        form = ups.pop(0) if ups else sp.Integer(1)
    while ups or downs:
        if downs:
            form = ipow(form / downs.pop(0), 1)
        if ups:
            form = ipow(form * ups.pop(0), 1)
    return form


def _exps_factored(node: sp.Expr) -> sp.Expr | None:
    """(c1*exp(a) + c2*exp(b) + r)/q, the c_i, r and q free of exps, a and b together in
    several inputs: r/q + (c1 + c2*exp(b - a))/q*exp(a) for a >= b and (c1*exp(a - b) +
    c2)/q*exp(b) elsewhere, each product as _exp_times_quotient writes it: the larger exp
    taken out of the sum, and the quotient into its factor. As written, both terms
    overflow where a and b pass 88.7 together or apart (inf - inf = NaN where the truth is
    inf), and the numerator overflows before q brings it back: the slope of the divided
    difference (exp(x) - exp(y))/(x - y), ((x - y - 1)*exp(x) + exp(y))/(x - y)**2, was NaN
    at x = 2e6, y = -92 (the truth +inf) and inf at x = 89, y = 0 (the truth 5e36). With
    exps in a sum below the line, _exps_factored_below. In one input the regimes far out
    (regimes) serve."""
    if not isinstance(node, (sp.Mul, sp.Pow)):
        return None
    num, den = node.as_numer_denom()
    below = [f for f in sp.Mul.make_args(den) if isinstance(f, sp.exp)]
    if (den / sp.Mul(*below)).has(sp.exp):
        # The whole quotient or nothing: the walk from the top would otherwise take a part,
        # the 1/(exp(x) + exp(y)) of softmax's exp(x)/(exp(x) + exp(y)).
        if sp.count_ops(num) + sp.count_ops(den) > EXPS_FACTORED_MAX_OPS:
            return node
        return _exps_factored_below(num, den) or node
    # Lone exps below the line go above it: (exp(-x) - exp(-y))/(y - x) is (exp(y) -
    # exp(x))/((y - x)*exp(x)*exp(y)) over a common denominator.
    num, den = num * sp.Mul(*(sp.exp(-f.args[0]) for f in below)), den / sp.Mul(*below)
    if sp.count_ops(num) > EXPS_FACTORED_MAX_OPS:
        return None
    by_arg: dict[sp.Expr, list[sp.Expr]] = {}
    rest = []
    for term in sp.Add.make_args(sp.expand(num, deep=False, power_base=False, power_exp=False, log=False)):
        exps = [f for f in sp.Mul.make_args(term) if isinstance(f, sp.exp)]
        coefficient = term / sp.Mul(*exps)
        u = sp.Add(*(f.args[0] for f in exps))
        if coefficient.has(sp.exp) or u.has(sp.exp):
            return None  # an exp in an exp's argument: a where on exps (Gompertz's slopes)
        if u == 0:
            rest.append(coefficient)
        else:
            by_arg.setdefault(u, []).append(coefficient)
    if len(by_arg) != 2:
        return None
    (a, ca), (b, cb) = sorted(by_arg.items(), key=lambda item: sp.default_sort_key(item[0]))
    if len((a - b).free_symbols) < 2:
        return None
    c1, c2 = sp.Add(*ca), sp.Add(*cb)
    return sp.Add(*rest) / den + sp.Piecewise(
        *_exp_times_quotient(c1 + c2 * sp.exp(b - a), den, a, a >= b),
        *_exp_times_quotient(c1 * sp.exp(a - b) + c2, den, b, True),
    )


def _exps_factored_below(num: sp.Expr, den: sp.Expr) -> sp.Expr | None:
    """num/den with exps below the line, as exps_factored takes them: where every exp in
    both is exp(a) or exp(b) (a, b in several inputs), and each of num and den is a
    homogeneous polynomial in them, of degrees m and n (m != n), num(1, exp(b - a))/
    den(1, exp(b - a))*exp((m - n)*a) for a >= b, and the mirror image. The reciprocal
    divided difference (x - y)/(exp(x) - exp(y)) flushes to 0 where the difference overflows
    (x = 89, y = 0: the truth 2.0e-37), and its slope ((exp(x) - exp(y)) - (x - y)*exp(x))/
    (exp(x) - exp(y))**2 is inf/inf where the exps overflow."""
    exps = sorted(num.atoms(sp.exp) | den.atoms(sp.exp), key=sp.default_sort_key)
    if len(exps) != 2 or any(e.args[0].has(sp.exp) for e in exps):
        return None
    a, b = (e.args[0] for e in exps)
    if len((a - b).free_symbols) < 2:
        return None
    ea, eb = sp.Dummy("ea"), sp.Dummy("eb")
    degrees = []
    for part in (num, den):
        poly = sp.Poly(part.xreplace({exps[0]: ea, exps[1]: eb}), ea, eb)
        if any(c.has(sp.exp) for c in poly.coeffs()) or not poly.is_homogeneous:
            return None
        degrees.append(poly.total_degree())
    shift = degrees[0] - degrees[1]
    if shift == 0:
        return None  # a ratio of like degree: softmax and its kin
    branches = []
    for u, where in ((a, a >= b), (b, True)):
        scaled = {e: sp.exp(e.args[0] - u) for e in exps}  # exp(u) is 1, the other exp(v - u)
        branches += _exp_times_quotient(num.xreplace(scaled), den.xreplace(scaled), shift * u, where)
    return sp.Piecewise(*branches)


def _exp_times_quotient(c: sp.Expr, q: sp.Expr, u: sp.Expr, where: sp.Basic) -> list[tuple[sp.Expr, sp.Basic]]:
    """The branches of c/q*exp(u) where `where` holds: mul_exp(c/q, u) where c/q is a normal
    float, else mul_exp(mul_exp(c, u/2)/q, u/2), half the exp before the division and half
    after it. c/q flushes where exp(u) brings it back ((1 - exp(y - x))/(x - y)*exp(x) at
    x = 30, y = -3e38 is 0*exp(30); the truth is 3.5e-26), and is inf/inf where both
    overflow; c*exp(u/2) first overflows where c is large and u small (the slope's
    x - y - 1 + exp(y - x) at x = 5, y = -2.5e38)."""
    k = c / q
    normal = (sp.Abs(k) >= DTYPE_TINY) & (sp.Abs(k) <= DTYPE_MAX)
    return [(mul_exp(k, u), sp.And(where, normal)), (mul_exp(mul_exp(c, u / 2) / q, u / 2), where)]


# exps_factored leaves larger numerators as they are: expanding them costs more than it finds.
EXPS_FACTORED_MAX_OPS = 60


def _dominant_term(node: sp.Expr) -> sp.Expr | None:
    """p/q in several inputs, q a sum of two or three monomials: over the term t of q that is
    largest in magnitude, (p/t)/(q/t), each monomial over t a ratio computed one step at a
    time (_monomial_ratio), a where for each t. The Student-t slope in x with its degrees of
    freedom v an input, -(v + 1)*x/(v + x**2), is -(x + x/v)/(1 + x*(x/v)) where v dominates
    and -(1/x + (v/x))/((v/x)/x + 1) where x**2 does: finite and within a rounding or two
    everywhere. Over one scale for all inputs (scale_quotient) x/m flushes at v = 1e37,
    x = 0.0067 (the slope -0.0067 was -0); as written, (v + 1)*x overflows at v = 1e30,
    x = 1e10 and v + x**2 at x = 1e20. Likewise for q = s**n, s a sum of two or three
    monomials, over the largest term of s to the n-th power: the curvature
    2*(v + 1)*x*(x**2 - 3*v)/(v + x**2)**3."""
    if not isinstance(node, (sp.Mul, sp.Pow)) or not any(
        isinstance(b, sp.Add) and e.is_negative for b, e in (f.as_base_exp() for f in sp.Mul.make_args(node))
    ):
        return None  # no sum below the line
    found = _quotient_polys(node)
    if found is None:
        return None
    p, q, symbols, den = found
    # A power s**n of a sum below the line (a slope's (v + x**2)**3) over the largest term's.
    base, n = den.as_base_exp()
    n = int(n) if isinstance(base, sp.Add) and n.is_Integer and n > 1 else 1
    terms = q.terms() if n == 1 else sp.Poly(base, *symbols).terms()
    if not 2 <= len(terms) <= 3 or len(p.terms()) > 4:
        return None

    def over(term: tuple[tuple[int, ...], sp.Expr], by: tuple[tuple[int, ...], sp.Expr], k: int = 1) -> sp.Expr:
        return _monomial_ratio(term[1] / by[1] ** k, [a - k * b for a, b in zip(term[0], by[0])], symbols)

    branches = []
    for k, top in enumerate(terms):
        below = [over(t, top) for j, t in enumerate(terms) if j != k]
        rest = 1 + sp.Add(*below)
        if n == 1:
            value = sp.Add(*(over(t, top) for t in p.terms())) / rest
        else:
            # Each term over rest**n, up to 2**n: their sum overflows where the quotient does
            # not (x**2*y/(x**4 + y**2)'s curvature in y at x = 3e-10, y = -1e-19, 4.3e37).
            value = sp.Add(*(ipow(over(t, top, n) / ipow(rest, n), 1) for t in p.terms()))
        condition = sp.And(*(sp.Abs(r) <= 1 for r in below))
        branches.append((value, condition if k < len(terms) - 1 else True))
    return sp.Piecewise(*branches)


def _balance_power_exp(node: sp.Expr) -> sp.Expr | None:
    """r*u**k*exp(v) = r*(u*exp(v/k))**k for an integer k >= 2: u**k overflows where the
    product need not ((x - y)**2*exp(-2*z) at x = 1e20, z = 30 is inf*8.8e-27; the truth is
    8.8e13). Also of mul_exp(r*u**k, v); the power of mul_exp(u, v/k) then. Not of a power
    that ipow holds: v/k is rounded, and the power takes k times its error (the Gaussian
    density's d2f/dxds as mul_exp(x/s, -(x/s)**2/6)**3 lost 2.6 bits at x = -3, s = 2)."""
    if isinstance(node, mul_exp):
        factors, v = sp.Mul.make_args(node.args[0]), node.args[1]
    elif isinstance(node, sp.Mul):
        exps = [f for f in node.args if isinstance(f, sp.exp)]
        if len(exps) != 1:
            return None
        factors, v = [f for f in node.args if f is not exps[0]], exps[0].args[0]
    else:
        return None
    for power in factors:
        if isinstance(power, sp.Pow) and power.exp.is_Integer and power.exp >= 2 and not power.base.is_number:
            k = int(power.exp)
            rest = sp.Mul(*(f for f in factors if f is not power))
            return rest * ipow(mul_exp(power.base, v / k), k)
    return None


def _squares_to_hypot(node: sp.Expr) -> sp.Expr | None:
    """r/(a**2 + b**2 + ...)**k = r/h**(2k), h = hypot(a, b, ...); with a leg u among r's
    factors, u/h = hypot_ratio(u, ...): the squares overflow or flush where the quotient need
    not (atan2(y, x)' = -y/(x**2 + y**2), times hypot(x, y), is inf/inf at x = y = -1e25
    and 0/0 at -1e-20; -hypot_ratio(y, x) is not)."""
    factors = sp.Mul.make_args(node)
    for f in factors:
        if not (isinstance(f, sp.Pow) and f.exp.is_Integer and f.exp < 0):
            continue
        h = _hypot_of_squares(f.base)
        if h is None or any(p.is_number for p in _hypot_legs(h)):
            continue  # 1/(1 + x**2) is rational_far's
        n = -2 * int(f.exp)
        others = list(factors)
        others.remove(f)
        legs = _hypot_legs(h)
        for i, u in enumerate(legs):
            if u in others and not u.is_number:
                rest = legs[:i] + legs[i + 1 :]
                rest = rest[0] if len(rest) == 1 else _hypot_of_squares(sp.Add(*(leg**2 for leg in rest)))
                if rest is None:
                    continue
                others.remove(u)
                return sp.Mul(*others) * hypot_ratio(u, rest) * h ** (1 - n)
        return sp.Mul(*others) * h ** (-n)
    return None


def _mixing_entropy(node: sp.Expr) -> sp.Expr | None:
    """c*(xlogy(a + b, a + b) - xlogy(a, a) - xlogy(b, b)) is c*(a*log1p(b/a) + b*log1p(a/b)),
    each term 0 where its factor is: the logs cancel where a and b are far from 1 (x*log(x)
    + y*log(y) - (x + y)*log(x + y) at x = y = 4e-36 is a sum of terms of 3.2e-34 for -5.6e-36,
    6 bits lost); the two terms are of one sign. Two parts only: with three, the partials
    of the rewritten f took the generation from 2 s to 21 s."""
    if not isinstance(node, sp.Add):
        return None
    terms = {}
    for term in node.args:
        c, f = term.as_coeff_Mul()
        if isinstance(f, xlogy) and f.args[0] == f.args[1]:
            terms[f.args[0]] = (c, term)
    for total, (c, whole) in terms.items():
        parts = sp.Add.make_args(total)
        if not isinstance(total, sp.Add) or len(parts) != 2 or not all(terms.get(a, (None,))[0] == -c for a in parts):
            continue
        used = {whole, *(terms[a][1] for a in parts)}
        rest = sp.Add(*(t for t in node.args if t not in used))
        logs = [log1p(sp.expand(total - a) / a) for a in parts]
        # Beyond 2**24 the ratio as a sum of logs: b/a overflows where a*log1p(b/a) need not.
        logs = [_log1p_of_product(g) or g for g in logs]
        return rest + c * sp.Add(*(mul_no_nan(g, a) for g, a in zip(logs, parts)))
    return None


# Sums this large are not put over a common denominator by less_argument.
LESS_ARGUMENT_MAX_OPS = 80
# How much larger than r and u together r + c*u may be, simplified (a Gaussian KL's is
# (x - y)**2*(x + 2*y)/(2*x*y**2), 6 more).
LESS_ARGUMENT_SLACK_OPS = 6
# Nor sums with a higher integer power (derive.SIMPLIFY_MAX_POWER).
LESS_ARGUMENT_MAX_POWER = 16


def _less_argument(node: sp.Expr, depth: int = 2) -> sp.Expr | None:
    """c*log1p(u) + r = c*log1pmx(u) + (r + c*u) (and c*log(w), u = w - 1; c*expm1(u) + r as
    c*expm1mx(u) + (r + c*u): a VAE's KL term (exp(v) - 1 - v)/2 + m**2/2), with r + c*u over
    a common denominator and factored, where it vanishes to second order with u: near u = 0
    r holds -c*u to first order and cancels against the log (Itakura-Saito's
    x/y - 1 - log1p((x - y)/y) is 0 at x = 1.0001, y = 1, where the truth is 5e-9;
    -log1pmx((x - y)/y) is not). Several logs whose first orders cancel together, each
    so (the Bernoulli KL). A where in the sum (log_of_quotient's, away from u = 0) takes the
    rest into each branch, `depth` wheres deep."""
    if not isinstance(node, sp.Add) or sp.count_ops(node) > LESS_ARGUMENT_MAX_OPS:
        return None
    for term in node.args if depth else ():
        rest = node - term
        factor, where = term.as_independent(sp.Piecewise, as_Add=False)
        if isinstance(where, sp.Piecewise):
            sums = [factor * e + rest for e, _ in where.args]
            branches = [(_less_argument(e, depth - 1) or e, c) for e, (_, c) in zip(sums, where.args)]
            if any(e.has(log1pmx, expm1mx) for e, _ in branches):
                return sp.Piecewise(*branches)
            return None
    return None if node.has(sp.Piecewise) else _less_sum(node)


def _first_order_terms(total: sp.Add) -> list[tuple[sp.Expr, sp.Expr, sp.Expr, type]]:
    """(c, u, term, less) for each term c*log1p(u) or c*log(w), u = w - 1, of the sum, and
    c*expm1(u), with `less` the function less its first order (log1pmx, expm1mx); c free of
    such functions."""
    found = []
    for term in total.args:
        calls = [f for f in sp.Mul.make_args(term) if isinstance(f, (log1p, sp.log, expm1)) and not f.is_number]
        if len(calls) != 1:
            continue
        c, (w,) = term / calls[0], calls[0].args
        # Not log(sign(b)*a) and log|b|, log_of_quotient's far from a = b.
        if c.has(log1p, sp.log, expm1) or w.has(sp.Abs, sp.sign):
            continue
        if isinstance(calls[0], expm1):
            found.append((c, w, term, expm1mx))
        else:
            # log(w) as log1p(w - 1): a VAE's KL term s**2/2 - 1/2 - log(s) at s = 1 + u.
            found.append((c, w if isinstance(calls[0], log1p) else sp.cancel(w - 1), term, log1pmx))
    return found


def _divides(u: sp.Expr, q: sp.Expr) -> bool:
    """Whether the numerator of `u` (of a product of such) divides that of `q` as polynomials:
    q vanishes wherever u does."""
    symbols = u.free_symbols | q.free_symbols
    return sp.cancel(q.as_numer_denom()[0] / u.as_numer_denom()[0]).is_polynomial(*symbols)


def _second_order(left: sp.Expr, us: list[sp.Expr]) -> sp.Expr:
    """`left`, which vanishes to second order where the `us` do, as a multiple of one of them
    whose factor still vanishes there, its sums spread over its divisors (_spread_quotient):
    the Jensen-Shannon divergence's -(x - y)**2/(x + y) as -(x - y)*u, u = (x - y)/(x + y);
    as -(x + y)*u*v, v = -u, it was inf*0 at x = y = 3e38. Else as a multiple of their
    product (one u, twice)."""
    for u in us:
        per_u = factor_polynomial(sp.cancel(left / u))
        if any(_divides(v, per_u) for v in us):
            return _spread_quotient(per_u, u) * ipow(u, 1)
    per_u = factor_polynomial(sp.cancel(left / sp.Mul(*us)))
    return _spread_quotient(per_u, us[0]) * sp.Mul(*(ipow(u, 1) for u in us))


def _first_order_factor(left: sp.Expr, c: sp.Expr, u: sp.Expr) -> sp.Expr | None:
    """left/u, factored, where u divides `left` and the quotient is a rational function that
    is not c times a number (then nothing cancelled: log1p(x) + x); else None."""
    if not _divides(u, left):
        return None
    per_u = factor_polynomial(sp.cancel(left / u))
    if not per_u.is_rational_function() or sp.cancel(per_u / c).is_number:
        return None
    return per_u


def _high_power(expr: sp.Expr) -> bool:
    """Whether `expr` holds an integer power beyond LESS_ARGUMENT_MAX_POWER."""
    return any(p.exp.is_Integer and abs(p.exp) > LESS_ARGUMENT_MAX_POWER for p in expr.atoms(sp.Pow))


@functools.lru_cache(maxsize=4096)
def _less_sum(total: sp.Expr) -> sp.Expr | None:
    """_less_argument's rewrite of a sum without a where: all its logs (and expm1s) together,
    then each alone."""
    if not isinstance(total, sp.Add) or total.has(sp.exp) or _high_power(total):
        # Not put over a common denominator: (1 + x/1000)**1000 expands into a thousand terms
        # (log(x) + (1 + x/1000)**1000 took 7.3 s for 1.3 s), and SymPy factors exp(k*u) as
        # a power of exp(u/q) (derive.SIMPLIFY_MAX_POWER says more).
        return None
    logs = _first_order_terms(total)
    for chosen in ([logs] if len(logs) > 1 else []) + [[one] for one in logs]:
        rest = total - sp.Add(*(term for _, _, term, _ in chosen))
        us = [u for _, u, _, _ in chosen]
        # Terms in other inputs stay apart: they cannot cancel c*u (the means' term
        # (m - n)**2/(2*t**2) of a Gaussian KL in the scales s, t).
        inputs = set().union(*(c.free_symbols | u.free_symbols for c, u, _, _ in chosen))
        apart = sp.Add(*(t for t in sp.Add.make_args(rest) if not t.free_symbols <= inputs))
        rest -= apart
        # ipow's groups as powers, which cancel: ipow(x/y, 2)/2 - 1/2 + (y - x)/x.
        left = sp.cancel(_plain(rest + sp.Add(*(c * u for c, u, _, _ in chosen))))
        logs_less = sp.Add(*(c * less(u) for c, u, _, less in chosen)) + apart
        if left == 0:
            return logs_less
        # The rest must vanish to second order with u, as log1pmx does (else nothing cancelled:
        # -log|x| + log(y) has no u in it), and is written as a multiple of u: 2*(x - y)**2/y,
        # the Poisson deviance's, overflows in the square where 2*(x - y)*((x - y)/y) does not
        # (_second_order; with several logs, of their product).
        # One u that does not divide `left` divides it neither twice nor to first order
        # (_first_order_factor): one polynomial division instead of two, each tens of ms on
        # a large rest ((log_sigmoid(y) + 3)**sinh(atan2(y, x)), fuzz seed 138).
        plain = _plain(us[0]) if len(us) == 1 else None
        undivided = plain is not None and plain == us[0] and not _divides(plain, left)
        if not undivided and _divides(sp.Mul(*(us if len(us) > 1 else us * 2)), left):
            left = factor_polynomial(left)
            if sp.count_ops(left) > sp.count_ops(rest) + sum(map(sp.count_ops, us)) + LESS_ARGUMENT_SLACK_OPS:
                continue
            left = _second_order(left, us)
        elif not undivided and plain is not None and (per_u := _first_order_factor(left, chosen[0][0], plain)) is not None:
            # To first order: the rest cancels c*u only in part, leaving u times a factor
            # small somewhere (a Student-t log-density's slope in its shape y,
            # log1p(t)/2 - (y + 1)*t/(2*y*(1 + t)), t = x**2/y, is -t/(2*y) to first order and
            # cancelled 20 bits at y = 1e6), kept whole as u times that factor: as a sum
            # over a common denominator, x**4 - x**2 overflowed.
            left = ipow(us[0], 1) * _spread_quotient(per_u, plain)
        elif sp.count_ops(left) >= sp.count_ops(rest):
            continue
        # Or the rest is shorter with c*u taken out, which it held: a VAE's KL term
        # m**2/2 + expm1(v)/2 - v/2 is m**2/2 + expm1mx(v)/2.
        if all(less is expm1mx for *_, less in chosen):
            return logs_less + left
        # For u >= 1 the sum as it was: there c*log1pmx(u) and the rest grow as -c*u and
        # c*u and cancel (the Poisson deviance at x = 1e6, y = 1 lost 15 bits so). And below
        # -1/2, where w - 1 is rounded (s - 1 at s = 3e-7 loses a tenth of s).
        near = sp.And(*((u > -sp.Rational(1, 2)) & (u < 1) for u in us))
        return sp.Piecewise((logs_less + left, near), (total, True))
    return None


def _plain(expr: sp.Expr) -> sp.Expr:
    """`expr` with ipow's groups as plain powers, which SymPy cancels."""
    return expr.replace(ipow, lambda b, k: b**k)


def _spread_quotient(q: sp.Expr, u: sp.Expr) -> sp.Expr:
    """A quotient of products of sums, each sum divided by one of the denominator's factors:
    a Gaussian KL's (x - y)*(x + 2*y)/(2*y**2) as ((x - y)/y)*(x/y + 2)/2 is neither 0/0 at
    x = y = 1e-20 nor inf*0 at x = y = 3e38. A sum that vanishes where u does keeps its
    difference whole ((x - y)/y); another is expanded over its divisor (x/y + 2), bounded
    where its terms are."""
    numer, denom = q.as_numer_denom()
    if not isinstance(q, sp.Mul) or denom.is_number or numer.is_number:
        return divide_stepwise(q)
    c, sums = sp.factor_list(numer)
    d, divisors = sp.factor_list(denom)
    divisors = [b for b, k in divisors for _ in range(k)]
    parts = []
    for base, k in sums:
        for _ in range(k):
            if not divisors or not isinstance(base, sp.Add):
                parts.append(base)
                continue
            b = divisors.pop()
            parts.append(ipow(base / b, 1) if _divides(u, base) else sp.expand(base / b))
    return c / d * sp.Mul(*parts) / sp.Mul(*divisors)


def _halves(node: sp.Expr) -> tuple[sp.Expr, sp.Expr, sp.Expr, sp.Expr] | None:
    """(r, a, b, a + b) for a product r*(a - b)/(a + b) whose two sums share their terms
    but for the sign of b: (x**2 - y)/(x**2 + y) has a = x**2, b = y."""
    if not isinstance(node, sp.Mul):
        return None
    for d in node.args:
        if not (isinstance(d, sp.Pow) and d.exp == -1 and isinstance(d.base, sp.Add)):
            continue
        total = d.base
        for n in node.args:
            if not isinstance(n, sp.Add) or n == total:
                continue
            a, b = sp.expand((total + n) / 2), sp.expand((total - n) / 2)
            if a == 0 or b == 0 or len(sp.Add.make_args(a)) + len(sp.Add.make_args(b)) > len(total.args):
                continue
            rest = sp.Mul(*(f for f in node.args if f is not d and f is not n))
            return rest, a, b, total
    return None


def _difference_over_sum(node: sp.Expr, saturating: str = "a") -> sp.Expr | None:
    """(a - b)/(a + b) = 1 - 2*b/(a + b): where a over- or underflows, the quotient is
    inf/inf = NaN and this is 1 (log(1 + x**2/y)'' = -2*((x**2 - y)/(x**2 + y))/(x**2 + y)
    at x = 1e20; in the form the judge preferred, y/x made it NaN at x = 0). With
    `saturating` "b", 2*a/(a + b) - 1, the same for an overflowing b."""
    found = _halves(node)
    if found is None:
        return None
    rest, a, b, total = found
    if saturating == "b":
        return rest * (2 * ipow(a / total, 1) - 1)
    return rest * (1 - 2 * ipow(b / total, 1))


# Not in RULES: the derivation offers each candidate with and without each of these,
# and the judge keeps a variant only where it measures better (each costs ops, and
# sinc'' loses 0.07 mean bits to the stepwise quotient).
# `divide_stepwise(expr)` divides every a/b**n in `expr` step by step (one power per pass).
divide_stepwise = Rule(
    "divide_stepwise",
    "a/b**n: b**n over- or underflows where the quotient need not; (a/b)/b does not",
    _divide_stepwise,
    passes=4,
    stacks=True,
)
VARIANTS: tuple[Rule, ...] = (
    divide_stepwise,
    Rule(
        "power_past_its_base",
        "b**w, |w| < 1 or an input, is inf or 0 where b over- or underflows and the power need not; exp(w*log(b)) there, log(b) without b, is not",
        _power_past_its_base,
    ),
    Rule(
        "power_near_one",
        "b**w, w an input, costs |w| ulps where b rounds near 1 (cosh(x)**y at x = 1e-4); exp(w*log(b)) there and beyond b's range, log(b) without b, does not",
        functools.partial(_power_past_its_base, near_one=True),
        # And inside multiply_no_nan: tanh(x)**y's curvature in x is mul_no_nan(y*(...)*
        # tanh(x)**(y - 2), sigmoid(-2*x)*sigmoid(2*x)), whose sigmoids flush where y*(...)
        # overflows.
        stacks_on=("no_nan_product",),
    ),
    Rule(
        "product_past_its_factors",
        "b1**k1*b2**k2 is inf*0 or inf/inf where the functions b_i over- or underflow and the product need not; exp(k1*log(b1) + k2*log(b2)) there, each log without b_i, is not",
        _product_past_its_factors,
    ),
    Rule(
        "product_past_its_groups",
        "b1**k1*ipow(b1*b2**k2, n) is inf*0 where b1 over- or underflows outside the group and the group's own where leaves it in; exp(k1*log(b1) + n*log(b1) + n*k2*log(b2)) there, the whole product's, is not",
        functools.partial(_product_past_its_factors, grouped=True),
        top_down=True,
    ),
    Rule(
        "quotient_by_abs",
        "u/(c + |u|) is inf/inf = NaN where u overflows and the quotient is +-1; sign(u)/(1 + c/|u|) is not",
        _quotient_by_abs,
    ),
    Rule(
        "divide_by_root",
        "a/b**(n + 1/2): the power over- or underflows where the quotient need not; (a/sqrt(b))/b**n does not",
        _divide_by_root,
        stacks=True,
    ),
    Rule(
        "balance_power_exp",
        "u**k*exp(v) is inf*0 where u**k overflows and exp(v) brings the product back; (u*exp(v/k))**k is not",
        _balance_power_exp,
        stacks=True,
    ),
    Rule(
        "squares_to_hypot",
        "r/(a**2 + b**2) overflows or flushes in the squares where the quotient need not; r/hypot(a, b)**2, a leg of r as hypot_ratio, does not",
        _squares_to_hypot,
        top_down=True,
        stacks=True,
    ),
    Rule(
        "lgamma_near_one",
        "lgamma(1 + u) and lgamma(2 + u) lose u where the sum rounds, next to lgamma's zeros; -lgamma_diff(1, u) does not",
        _lgamma_near_its_zeros,
    ),
    Rule(
        "mixing_entropy",
        "xlogy(a + b, a + b) - xlogy(a, a) - xlogy(b, b) cancels where a, b are far from 1; a*log1p(b/a) + b*log1p(a/b) does not",
        _mixing_entropy,
    ),
    Rule(
        "less_argument",
        "c*log1p(u) + r and c*expm1(u) + r cancel near u = 0 where r holds -c*u; c*log1pmx(u) + (r + c*u), c*expm1mx(u) + (r + c*u), the latter simplified, do not",
        _less_argument,
        stacks=True,
    ),
    Rule(
        "difference_over_sum",
        "(a - b)/(a + b) is inf/inf where a overflows; 1 - 2*b/(a + b) is 1",
        _difference_over_sum,
        stacks=True,
    ),
    Rule(
        "sum_over_difference",
        "(a - b)/(a + b) is inf/inf where b overflows; 2*a/(a + b) - 1 is -1",
        functools.partial(_difference_over_sum, saturating="b"),
        stacks=True,
    ),
    Rule(
        "distribute_quotient",
        "(a + w**k)/b**n: w**k overflows where the quotient need not; a/b**n + (w/b)**n*w**(k-n) does not",
        _distribute_quotient,
    ),
    Rule(
        "reflection_split",
        "a*softplus(u) + b*u and sigmoid(u) - t cancel for u >> 0; where(u > 0, the reflected form, ...) does not",
        _reflection_split,
    ),
    Rule(
        "log_of_polynomial",
        "log(p(u)) is inf where u**n overflows; beyond it, log|a| + n*log|u| + log1p of the rest over a*u**n is not",
        _log_of_polynomial,
    ),
    Rule(
        "rational_far",
        "p(u)/q(u) is inf/inf or 0 where the powers overflow; beyond it, u**D*(p(u)/u**m)/(q(u)/u**n) is not",
        _rational_far,
        top_down=True,
    ),
    Rule(
        "difference_of_squares",
        "a**2 - b**2 overflows, or is inf - inf, where the squares do, and rounds a**2 near a root; (a - b)*(a + b) does not",
        _difference_of_squares,
        top_down=True,
        stacks=True,
    ),
    Rule(
        "factor_at_roots",
        "a polynomial in one input rounds near a root where its terms cancel; a*(u - r1)*(u - r2)*..., each root in two parts, does not",
        _factor_at_roots,
        top_down=True,
        stacks=True,
    ),
    Rule(
        "scale_quotient",
        "p/q in several inputs: its powers overflow where it need not; over the inputs divided by their mean magnitude (plus 1 unless p and q are homogeneous) they do not",
        _scale_quotient,
        top_down=True,
    ),
    Rule(
        "no_nan_product",
        "r*d is inf*0 = NaN where r overflows and a decaying d flushes to 0; multiply_no_nan(r, d) is 0",
        _no_nan_product,
    ),
    Rule(
        "exp_product",
        "r*exp(u) is inf where exp(u) overflows and r is small; r*exp(u/2)*exp(u/2) is not",
        _exp_product,
    ),
    Rule(
        "log_difference",
        "log(a) - log(b) cancels where a is near b; log1p((a - b)/b) does not",
        _log_difference,
    ),
    Rule(
        "mills_product",
        "r*mills(u)*mills_gap(u) is inf*0 far out, where r*mills overflows and gap flushes; r*(1 + mills_gap_slope(u))/2 is not",
        _mills_product,
    ),
    Rule(
        "softplus_divergence",
        "softplus(b) - softplus(a) - sigmoid(a)*(b - a) cancels near b = a and for a >> 0; log1pmx(s*expm1(d)) + s*expm1mx(d), s = sigmoid(-|a|), does not",
        _softplus_divergence,
    ),
    Rule(
        "horner_reciprocal",
        "c0 + c1/u + c2/u**2: each term's u**k flushes or overflows where the sum need not; c0 + (c1 + c2/u)/u does not",
        _horner_reciprocal,
        passes=2,
    ),
    Rule(
        "reciprocal_difference",
        "c/a - c/b cancels where a is near b; c*((b - a)/b)/a there does not",
        _reciprocal_difference,
    ),
    Rule(
        "log_root",
        "k*log(u) + c near its root: log(u) is rounded where the sum is near 0; k*log1p((u - r)/r) is not",
        _log_root,
        stacks=True,
    ),
    Rule(
        "power_of_one_plus",
        "(1 + v)**k multiplies the rounding of 1 + v by k (|k| >= 8, or k not a number); exp(k*log1p(v)) does not round it",
        _power_of_one_plus,
    ),
    Rule(
        "power_less_one",
        "b**w - 1 cancels where w or log(b) is near 0; expm1(w*log(b)) does not",
        _power_less_one,
    ),
    Rule(
        "ratio_series",
        "g(v*w)/v, g(0) = 0 (expm1, log1p, sin, ...), is 0/0 at v = 0 and its slopes in v cancel near it; w times the Taylor polynomial of g(u)/u is not",
        _ratio_series,
        stacks=True,
    ),
    Rule(
        "power_of_one_plus_less_one",
        "(1 + v)**w - 1 cancels where v or w is near 0; expm1(w*log1p(v)) does not",
        _power_of_one_plus_less_one,
    ),
    Rule(
        "power_into_exp",
        "b**w*exp(u) overflows in the power where exp(u) brings the product back, or exp(u) flushes where b**w does not; exp(u + w*log(b)) does not",
        _power_into_exp,
        stacks=True,
    ),
    Rule(
        "power_of_sigmoid",
        "sigmoid(u)**w flushes to 0 where the power need not; exp(-w*softplus(-u)) does not",
        _power_of_sigmoid,
    ),
    Rule(
        "softplus_difference",
        "softplus(a) - softplus(b) (or logaddexp(a, c) - logaddexp(b, c)) cancels where a is near b; log1p(expm1(a - b)*sigmoid(b - c)) does not",
        _softplus_difference,
    ),
    Rule(
        "exp_difference",
        "exp(a) - exp(b) (or expm1(a) - expm1(b)) cancels where a is near b, and is inf - inf where both overflow; exp(a)*(-expm1(b - a)) for a >= b does not",
        _exp_difference,
    ),
    Rule(
        "exp_overflow_sum",
        "c*exp(u) + d*expm1(u) is inf - inf where exp(u) overflows, and cancels in part for large u; exp(u)*(c - d*expm1(-u)) for u > 0 is not",
        _exp_overflow_sum,
        top_down=True,
    ),
    Rule(
        "sigmoid_gap",
        "sigmoid(a) - sigmoid(b) cancels where a is near b or both are large; -expm1(b - a)*sigmoid(a)*sigmoid(-b) does not",
        _sigmoid_gap,
    ),
    Rule(
        "saturated_difference",
        "erf(a) - erf(b) and tanh(a) - tanh(b) are 1 - 1 = 0 where a and b are both far out on one side; erfc(b) - erfc(a) and 2*(sigmoid(-2b) - sigmoid(-2a)) are not",
        _saturated_difference,
    ),
    Rule(
        "log_saturated_gap",
        "log(erf(a) - erf(b)) and log(tanh(a) - tanh(b)) are log(0) where the difference underflows; log(erfc(p)) + log1mexp(log(erfc(p)) - log(erfc(q))) and log1mexp(2(a - b)) - softplus(-2a) - softplus(2b) are not",
        _log_of_saturated_difference,
    ),
    Rule(
        "sigmoid_slope_gap",
        "sigmoid'(a) - sigmoid'(b) cancels where a is near b or -b; (sigmoid(a) - sigmoid(b))*(sigmoid(-a) - sigmoid(b)), each by sigmoid_gap, does not",
        _sigmoid_slope_gap,
    ),
    Rule(
        "log_sigmoid_gap",
        "log(sigmoid(a) - sigmoid(b)) is log(0) where the difference flushes; log1mexp(a - b) - softplus(-a) - softplus(b) is not",
        _log_of_sigmoid_gap,
    ),
    Rule(
        "sqrt_difference",
        "sqrt(a) - sqrt(b) cancels where a is near b; (a - b)/(sqrt(a) + sqrt(b)) does not",
        _sqrt_difference,
    ),
    Rule(
        "shifted_softplus",
        "softplus(u) - log(2) cancels near u = 0; log1p(expm1(u)/2) does not",
        _shifted_softplus,
    ),
    Rule(
        "reciprocal_sum",
        "n/(a + b): n and the sum overflow where the quotient need not; 1/(a/n + b/n) does not",
        _reciprocal_sum,
    ),
    Rule(
        "hypot_minus_side",
        "hypot(a, b) - a cancels where |b| << a; b*(b/(hypot(a, b) + a)) does not",
        _hypot_minus_side,
    ),
    # Stacked on difference_of_squares too: the product sqrt((x - a)*(x + a)) it makes of
    # x**2 - 2 under a root overflows at x = 1e20 as the sum did ((x**2 - 2)**1.5's f'' was
    # 0 there; SymPy factors x**2 - 1 itself).
    Rule(
        "root_of_product",
        "(a*b)**e (e fractional) over- or underflows in the product where the root need not; (sign(b)*a)**e*|b|**e does not",
        _root_of_product,
        stacks=True,
    ),
    Rule(
        "log_of_power",
        "log(b**w) is log(inf) or log(0) where the power over- or underflows; xlogy(w, b) where b > 0 is not",
        _log_of_power,
    ),
    Rule(
        "log1mexp_of_product",
        "log1mexp(u) for a product u of powers: u flushes to 0 where the log need not; below 1, the sum of the factors' logs plus a series in u does not",
        _log1mexp_of_product,
    ),
    Rule(
        "log1p_of_product",
        "log1p(u) for a product u of inputs: u overflows where the log need not; beyond 2**24, softplus of the sum of the factors' logs does not",
        _log1p_of_product,
    ),
    Rule(
        "log_of_quotient",
        "log(a/b): a/b over- or underflows where the log need not; log(sign(b)*a) - log|b| does not (log1p((a - b)/b) near a = b)",
        _log_of_quotient,
    ),
    Rule(
        "log_of_product",
        "log(c*a*b...): the product over- or underflows where the log need not; beyond 2**100 or below 2**-100, log|c| + log|a| + log|b| + ... (the sign kept with one factor) does not",
        _log_of_product,
    ),
    Rule(
        "log_of_ratio",
        "log(a/b) near a = b: the rounded ratio's error is all log's; log1p((a - b)/b) does not round it",
        _log_of_ratio,
    ),
    Rule(
        "reciprocal_power",
        "1/u**n is inf where u**n flushes to 0 and the quotient is a float; (1/u)**n is not",
        _reciprocal_power,
        stacks=True,
    ),
    Rule(
        "atan_difference",
        "atan(a) - atan(b) rounds both to pi/2 far out on one side, and cancels near a = b; atan((a - b)/(1 + a*b)) for a*b > 0 does neither",
        _atan_difference,
    ),
    Rule(
        "hypot_difference",
        "hypot(c, a) - hypot(c, b) rounds both to |c| where a and b are small beside it, and cancels near a = b; (a + b)*((a - b)/(hypot(c, a) + hypot(c, b))) does not",
        _hypot_difference,
    ),
    Rule(
        "power_difference",
        "a**n - b**n overflows in both powers where the difference need not, and cancels near a = b; (a - b)*(a**(n-1) + ... + b**(n-1)), where a and b have one sign, does neither",
        _power_difference,
    ),
    Rule(
        "hyperbolic_difference",
        "sinh(a) - sinh(b) and cosh(a) - cosh(b) cancel near a = b and are inf - inf where both overflow; far out as an exp difference, near a = b as 2*cosh((a + b)/2)*sinh((a - b)/2) from the half arguments, they are not",
        _hyperbolic_difference,
    ),
    Rule(
        "cos_difference",
        "cos(a) - cos(b) cancels near a = +-b; 2*sin(A + d/2)*sin(d/2), A = |a|, d = |b| - |a| exact there, does not",
        _cos_difference,
    ),
    Rule(
        "sin_difference",
        "sin(a) - sin(b) cancels near a = b; -2*cos(a + h)*sin(h), h = (b - a)/2 exact there, does not",
        _sin_difference,
    ),
    Rule(
        "tanh_over_cosh_power",
        "sinh(u)**(w + a)*cosh(u)**-b is inf*0 or inf/inf for |u| > 89 where the power need not be; sinh(u)**w*tanh(u)**a/cosh(u)**(b - a) is not",
        functools.partial(_tanh_over_cosh, split=True),
    ),
    Rule(
        "half_argument",
        "cosh(u) and sinh(u) from exp(u) overflow for 88.7 < |u| < 89.4, and cosh(a) - cosh(b), cos(a) - cos(b) round near 0; 1 + 2*sinh(u/2)**2, 2*sinh(u/2)*cosh(u/2), 1 - 2*sin(u/2)**2 do not",
        _half_argument,
        # These keep b in their conditions and their last branch: cosh(x) there overflows
        # from x = 88.7 (cosh(x)/cosh(y)'s slope in y, as mul_exp, had the band wrong).
        stacks_on=("power_past_its_base", "power_near_one", "product_past_its_factors", "product_past_its_groups"),
    ),
)


# --- sources ------------------------------------------------------------------------
# Rules that `derive` applies to the textbook form of each partial, over a common
# denominator, before the RULES: another candidate to stabilise and judge, from a shape
# that a rule would otherwise rewrite first (scale_quotient's quotient over one scale).

SOURCES: tuple[Rule, ...] = (
    Rule(
        "exps_factored",
        "(c1*exp(a) + c2*exp(b))/q is inf - inf where both overflow and overflows before q brings it back (q/(c1*exp(a) + c2*exp(b)) flushes); the larger exp taken out, with the quotient in its factor, mul_exp((c1 + c2*exp(b - a))/q, a), is not",
        _exps_factored,
        top_down=True,
    ),
    Rule(
        "dominant_term",
        "p/q in several inputs overflows or flushes in its powers where it need not; over q's largest term t, (p/t)/(q/t) with each monomial over t one step at a time does not",
        _dominant_term,
        top_down=True,
    ),
)


# --- repairs ------------------------------------------------------------------------
# Regimes that cost a where and a second form: `derive` tries them only on a chosen form
# that is still beyond GOOD_BITS somewhere, never to shave mean bits off a form that is
# already good (gelu'' factored is 0.44 bits on average and never bad; with its roots'
# regime, 0.12 bits but 1.4x the run time of the second order in graph mode).

roots_regime = Rule(
    "roots_regime",
    "a polynomial in one input rounds near a root where its terms cancel; there, and only there, it is factored as in factor_at_roots",
    _roots_regime,
    top_down=True,
)


REPAIRS: tuple[Rule, ...] = (roots_regime,)
REPAIRS_MAX_NODES = 4


def repairs(expr: sp.Expr) -> list[tuple[sp.Expr, str]]:
    """Each REPAIRS rule's form of `expr` with one node rewritten, for each node it would
    rewrite (REPAIRS_MAX_NODES at most, and then all of them), with the rule's name: a
    polynomial in a branch that never nears its roots (rational_far's, in 1/x beyond 32)
    need not pay for the regime."""
    found = []
    for rule in REPAIRS:
        # Each node's rewrite once (a polynomial's roots are costly to find).
        seen: set[sp.Expr] = set()
        rewritten: dict[sp.Expr, sp.Expr] = {}
        for n in sp.preorder_traversal(expr):
            if len(rewritten) == REPAIRS_MAX_NODES:
                break
            if isinstance(n, sp.Add) and n not in seen:
                seen.add(n)
                r = rule.rewrite(n)
                if r is not None:
                    rewritten[n] = r
        forms = [expr.xreplace({n: r}) for n, r in rewritten.items()]
        if len(rewritten) > 1:
            forms.append(rule(expr))
        found += [(form, rule.name) for form in dict.fromkeys(forms) if form != expr]
    return found


# The most forms `variants` makes of one form.
VARIANTS_MAX = 64


def variants(expr: sp.Expr) -> list[tuple[sp.Expr, tuple[str, ...]]]:
    """The forms the VARIANTS make of `expr` (those that differ), each with the names of the
    rules that made it: one rule, then the `stacks` rules on what is found, VARIANTS_MAX
    forms at most."""
    found = []
    for rule in VARIANTS:
        variant = rule(expr)
        if variant != expr:
            found.append((variant, (rule.name,)))
    # Each stacks on the forms found so far, the other stacking rules' too ((x**2 - 2)**1.5''
    # takes root_of_product on difference_of_squares on another rule's form): every subset of
    # the stacking rules that apply, 716 forms of one slope of hypot(softplus(acos(x)),
    # expm1(x**x)), whose generation took 35 s. At most VARIANTS_MAX in all, the first found.
    for rule in VARIANTS:
        if rule.stacks or rule.stacks_on:
            for variant, names in list(found):
                if not rule.stacks and not set(rule.stacks_on) & set(names):
                    continue
                if len(found) >= VARIANTS_MAX:
                    return found
                again = rule(variant)
                if rule.name not in names and again != variant:
                    found.append((again, (*names, rule.name)))
    return found


# --- economies --------------------------------------------------------------------
# Rewrites that save work at a small cost in accuracy. Unlike RULES they are not
# applied blindly: `optimize` applies one, last, only where the judge measures
# the variant as accurate as the form it rewrites (judge.no_worse).


def _sigmoid_pairs(expr: sp.Expr) -> list[tuple[sp.Expr, sp.Expr]]:
    """(sigmoid(u), sigmoid(-u)) pairs that both occur in `expr`, u the argument without a leading minus."""
    found = expr.atoms(sigmoid)
    pairs = []
    for s in sorted(found, key=sp.default_sort_key):
        u = s.args[0]
        if not u.could_extract_minus_sign() and sigmoid(-u) in found:
            pairs.append((s, sigmoid(-u)))
    return pairs


def _complement_negative(expr: sp.Expr) -> sp.Expr | None:
    pairs = _sigmoid_pairs(expr)
    return expr.xreplace({neg: 1 - pos for pos, neg in pairs}) if pairs else None


def _complement_positive(expr: sp.Expr) -> sp.Expr | None:
    pairs = _sigmoid_pairs(expr)
    return expr.xreplace({pos: 1 - neg for pos, neg in pairs}) if pairs else None


def _exp_of_softplus(expr: sp.Expr) -> sp.Expr | None:
    """exp(k*softplus(u)) = (1 + exp(u))**k, cosh(softplus(u)) = (exp(u) + 1 + sigmoid(-u))/2,
    sinh(softplus(u)) = (exp(u) + sigmoid(u))/2: one exp and a sigmoid where TF would
    compute softplus and two exps (or expm1s). Each overflows where the original does, and
    the sums have no cancellation; they round differently (mish'' on [10, 15]: 3.2 mean bits
    before, 0.9 after; on [-5, 0]: 1.4, 1.6)."""

    def rewrite(node: sp.Expr) -> sp.Expr | None:
        if isinstance(node, sp.exp):
            coeff, inner = node.args[0].as_coeff_Mul()
            if isinstance(inner, softplus) and coeff.is_Integer:
                u = inner.args[0]
                return (1 + sp.exp(u)) ** coeff if coeff > 0 else sigmoid(-u) ** -coeff
        elif isinstance(node, (sp.cosh, sp.sinh)) and isinstance(node.args[0], softplus):
            u = node.args[0].args[0]
            rest = 1 + sigmoid(-u) if isinstance(node, sp.cosh) else sigmoid(u)
            return (sp.exp(u) + rest) / 2
        return None

    rewritten = _bottom_up(expr, rewrite, {})
    return rewritten if rewritten != expr else None


def _tanh_of_softplus(expr: sp.Expr) -> sp.Expr | None:
    """tanh(softplus(u)) as the primitive tanh_softplus(u): one exp where TF would compute
    softplus and tanh. mish's forward pass on the CPU takes 0.55x (graph) and 0.35x (XLA)
    the time of x*tanh(softplus(x))."""
    rewritten = expr.replace(
        lambda n: isinstance(n, sp.tanh) and isinstance(n.args[0], softplus),
        lambda n: tanh_softplus(n.args[0].args[0]),
    )
    return rewritten if rewritten != expr else None


# Whole-expression rewrites (None: nothing to do), tried in order; each is kept where
# it measures as accurate as the form before it. sigmoid(-u) = 1 - sigmoid(u) is exact
# for u <= 0 and loses relative accuracy for u >> 0, which matters where sigmoid(-u) is a
# factor of the result (softplus'') and not where it is a small correction (swish').
ECONOMIES: tuple[Callable[[sp.Expr], sp.Expr | None], ...] = (
    _exp_of_softplus,
    _tanh_of_softplus,
    _complement_negative,
    _complement_positive,
)


def economize(expr: sp.Expr, params: Mapping[sp.Symbol, sp.Expr] | None = None) -> sp.Expr:
    """`expr` with each cheaper variant from ECONOMIES, in turn, that is as accurate in float32.

    Parameters (symbols that are not inputs) are measured at their values in `params`.
    """
    from generator import judge

    params = params or {}
    symbols = tuple(sorted(expr.free_symbols - set(params), key=lambda s: s.name))
    for economy in ECONOMIES:
        variant = economy(expr)
        if (
            variant is not None
            and variant != expr
            and judge.no_worse(variant.xreplace(params), expr.xreplace(params), symbols)
        ):
            expr = variant
    return expr


def optimize(
    expr: sp.Expr,
    rules: Sequence[Rule] = RULES,
    max_passes: int = 8,
    params: Mapping[sp.Symbol, sp.Expr] | None = None,
) -> tuple[sp.Expr, tuple[str, ...]]:
    """Apply `rules` until nothing changes; return the result and the names of the rules that fired."""
    fired: list[str] = []
    for _ in range(max_passes):
        before = expr
        for rule in rules:
            after = rule(expr)
            if after != expr:
                if rule.name not in fired:
                    fired.append(rule.name)
                expr = after
        if expr == before:
            break
    return economize(expr, params), tuple(fired)


# --- lowering -----------------------------------------------------------------------
# Applied to the forms chosen, after the judge and the regimes: derivation keeps the
# sigmoid pair, which the rules above see through.


# Not in RULES: applied to the forms chosen, where no variant is left to see a log that
# the guard would hide (less_argument's c*log1pmx(u) for 2*(x*log(x/y) - (x - y)) near x = y).
# It changes no value but at u = 0, so it needs no judging.
factor_of_its_log = Rule(
    "factor_of_its_log",
    "p*log(p/q) is 0*log(0) = nan at p = 0; multiply_no_nan(log(p/q), p) is 0",
    _factor_of_its_log,
)

# Applied by derive, in order, to the forms chosen; named in the module's notes when they fire.
GUARDS: tuple[Rule, ...] = (factor_of_its_log,)


def _power_of_quotient(node: sp.Expr) -> sp.Expr | None:
    """(a/b)**w, w with an input in it, as exp(w*(log(sign(b)*a) - log|b|)) where a/b is
    not a normal float (inf, or below the smallest normal, with a not 0): the quotient
    overflows or flushes where its power need not, the exponent small (the Weibull
    log-density's (x/l)**k at x = 16.7, l = 3e-38, k = 6.9e-13 is inf**k = inf; the truth
    is 1). xlogy(w, a/b), the power's slope in w beside it, likewise as w*(log(sign(b)*a) -
    log|b|). Elsewhere each as it is: exp rounds its argument, |w*log(a/b)| ulps of it,
    where pow does not (6 bits at x/l = 1.6e35, k = 1). The exp's argument is a product
    with a sum, which SymPy does not fold back into a power."""
    if isinstance(node, sp.Pow) and not node.exp.is_number:
        w, base = node.exp, node.base
    elif isinstance(node, xlogy):
        w, base = node.args
    else:
        return None
    if _holds_where(base):  # w may: xlogy(p, x/y) with p the power, rewritten first
        return None
    a, b = base.as_numer_denom()
    if b.is_number or not a.free_symbols:
        return None
    log_quotient = _log_quotient(a, b)
    size = sp.Abs(base)
    beyond = (size > DTYPE_MAX) | ((size < DTYPE_TINY) & (sp.Abs(a) > 0))
    if not _holds_where(w):
        # Not at w = 0, where each is 1 or 0 as it is ((1 + 1/x)**x at x = 0: inf**0 = 1),
        # and the logs' difference inf - inf. (A where in w, xlogy's rewritten power, would
        # make SymPy simplify the condition, and compare a NaN.)
        beyond &= sp.Abs(w) > 0
    far = sp.exp(w * log_quotient) if isinstance(node, sp.Pow) else w * log_quotient
    return sp.Piecewise((far, beyond), (node, True))


# Not in RULES: applied to the forms chosen (derive), where the other rules have taken what
# they would of the power ((1 + x/n)**n as exp(n*log1p(x/n))). As a variant the judge would
# weigh it at points where it changes no value, and keep the cheaper power.
power_of_quotient = Rule(
    "power_of_quotient",
    "(a/b)**w, w an input, and xlogy(w, a/b): a/b overflows or flushes where they need not; there exp(w*(log(sign(b)*a) - log|b|)) and w*(log(sign(b)*a) - log|b|) do not",
    _power_of_quotient,
)


def _asinh_of_quotient(node: sp.Expr) -> sp.Expr | None:
    """asinh(a/b) as sign(a)*sign(b)*(log(2) + log|a| - log|b|) where a/b overflows: asinh(inf)
    is inf where the truth is finite (asinh(x/y) at x = -2.6e32, y = 3e-28 is -138.7). Beyond
    |a/b| = 3.4e38 the rest, 1/(4*(a/b)**2), is far below an ulp. Elsewhere as it is."""
    if not isinstance(node, sp.asinh) or _holds_where(node):
        return None
    a, b = node.args[0].as_numer_denom()
    if b.is_number or not a.free_symbols:
        return None
    sign = _sign_of_factor(a) * sp.Mul(*(_sign_of_factor(f) for f in sp.Mul.make_args(b)))
    far = sign * (sp.log(2) + _log_abs_quotient(a, b, sp.Abs(a)))
    return sp.Piecewise((far, sp.Abs(node.args[0]) > DTYPE_MAX), (node, True))


# Not in RULES, as power_of_quotient: the judge's points hold no such quotient.
asinh_of_quotient = Rule(
    "asinh_of_quotient",
    "asinh(a/b) is inf where a/b overflows and the truth is finite; log(2) + log|a| - log|b| there is not",
    _asinh_of_quotient,
)


def _abs_over_power(node: sp.Expr) -> sp.Expr | None:
    """|u|**m/u**n, n >= m > 0, as sign(u)**m/u**(n - m): |c|/c in c*asinh(x/c)'s slope
    -x*|c|/(c*hypot(c, x)) was printed (-|c|*x)/c/hypot(c, x), whose |c|*x overflows at
    x = c = 1.3e20, where the truth is -0.707."""
    if not isinstance(node, sp.Mul):
        return None
    powers = dict(f.as_base_exp() for f in node.args)
    for factor in node.args:
        u, m = factor.as_base_exp()
        if isinstance(u, sp.Abs) and m.is_Integer and m > 0:
            n = powers.get(u.args[0])
            if n is not None and n.is_Integer and -n >= m:
                rest = _factors_but(node, factor, u.args[0])
                return rest * sp.sign(u.args[0]) ** (m % 2) * u.args[0] ** (n + m)
    return None


# Not in RULES: applied to the forms chosen (derive), where the variants' quotients are left
# (squares_to_hypot's). It changes no value but at u = 0, where |u|/u is NaN and sign(u) 0.
abs_over_power = Rule(
    "abs_over_power",
    "|u|/u: |u|*x overflows where the quotient is a sign; sign(u)*x does not",
    _abs_over_power,
)


def _may_overflow(u: sp.Expr) -> bool:
    """Whether u, a product, can overflow where its inputs do not: not a negated input."""
    if not isinstance(u, sp.Mul):
        return False
    coeff, rest = u.as_coeff_Mul()
    return not (rest.is_Symbol and abs(coeff) <= 1)


def _exp_argument_beside_exp(node: sp.Expr) -> sp.Expr | None:
    """exp(... + c*u + k*exp(u)) with u a product or quotient of inputs, and mul_exp(., ...)
    and exp_finite(...) alike, with c*u clipped to the dtype's finite range: where it overflows
    the sum is inf - inf = NaN, and the exp or mul_exp of it NaN, where the exponential term
    decides the sum (the Gompertz slope b*c*exp(-c*x - b*exp(-c*x)) at c = -6e37, x = 70 is
    0). Clipped, the term is finite, exp(u) inf, and the sum takes the exponential's sign.
    Elsewhere the clip changes nothing; exp(u) is left as it is, shared with the forms that
    compute it."""
    if isinstance(node, (sp.exp, exp_finite)):
        (arg,) = node.args
    elif isinstance(node, mul_exp):
        arg = node.args[1]
    else:
        return None
    if not isinstance(arg, sp.Add):
        return None
    inner = {
        e.args[-1]
        for term in arg.args
        for e in term.atoms(sp.exp, exp_finite, mul_exp)
        if _may_overflow(e.args[-1])
    }
    lone = [term for term in arg.args if any((term / u).is_number for u in inner)]
    if not lone:
        return None
    clipped = sp.Add(*(finite(term) if term in lone else term for term in arg.args))
    return node.func(clipped) if len(node.args) == 1 else node.func(node.args[0], clipped)


# Not in RULES: applied to the forms chosen (derive). It changes no finite value, so the
# judge has nothing to weigh, and the rules above see no clip.
exp_argument_beside_exp = Rule(
    "exp_argument_beside_exp",
    "exp(c*u + k*exp(u)) with c*u overflowing is exp(inf - inf) = NaN where the exponential decides; "
    "c*u clipped to the largest float keeps exp(u) inf and the sum its sign",
    _exp_argument_beside_exp,
)


# Applied by derive, in order, to the forms chosen, after GUARDS (each pruned again:
# xlogy((x/y)**a, x/y) has the power's where inside its own, on one condition); named in
# the module's notes when they fire.
CHOSEN_FORM_PASSES: tuple[Rule, ...] = (
    power_of_quotient,
    asinh_of_quotient,
    abs_over_power,
    exp_argument_beside_exp,
    tiny_argument,
)


def pass_chosen(form: sp.Expr) -> tuple[sp.Expr, list[str]]:
    """`form` after CHOSEN_FORM_PASSES, in order, each pruned (prune_branches) where it
    changed the form; and the names of those that did. derive applies them to the forms
    chosen, and the judge to a candidate NaN somewhere, to count its NaN as the module will
    compute it."""
    fired = []
    for rule in CHOSEN_FORM_PASSES:
        passed = rule(form)
        if passed != form:
            form = prune_branches(passed)
            fired.append(rule.name)
    return form, fired


def prune_branches(expr: sp.Expr) -> sp.Expr:
    """`expr` without the wheres' branches that are never taken: inside a branch, a where on
    a condition that an enclosing where has decided keeps the branch that condition picks.
    A rule's where, differentiated, keeps its fallback, to which the rule applies again:
    (exp(x*y) - 1)/y's f'' was where(x*y > 0, A, where(x*y > 0, B, C)), whose B is never
    taken. Each value and slope stays as it was."""

    @functools.cache
    def pruned(e: sp.Basic, known: frozenset[tuple[sp.Basic, bool]]) -> sp.Basic:
        if isinstance(e, sp.Piecewise):
            decided = dict(known)
            pieces = []
            for value, cond in e.args:
                if cond in decided:
                    if not decided[cond]:
                        continue
                    cond = sp.true
                pieces.append((pruned(value, frozenset({**decided, cond: True}.items())), cond))
                if cond == sp.true:
                    break
                decided[cond] = False
            if not pieces:
                # Every branch decided against, in a where without a default: never taken.
                return e
            if pieces[0][1] == sp.true:
                return pieces[0][0]
            if len(pieces) == len(e.args) and all(piece == tuple(arg.args) for piece, arg in zip(pieces, e.args)):
                # Nothing pruned: e itself, not a new Piecewise that SymPy evaluates again
                # (its conditions walked anew: 8% of the generation of log(1 - exp(-(x/l)**k))).
                return e
            return sp.Piecewise(*pieces)
        if not e.args or not isinstance(e, sp.Expr):
            return e
        args = tuple(pruned(a, known) if isinstance(a, sp.Expr) else a for a in e.args)
        return e if args == e.args else e.func(*args)

    return pruned(expr, frozenset()) if expr.has(sp.Piecewise) else expr


def lower_sigmoid_pairs(expr: sp.Expr) -> sp.Expr:
    """`expr` with sigmoid(u)*sigmoid(-u) factors written as sigmoid_slope(u), for each u
    where that leaves one of the two sigmoids uncomputed.

    The slope has half the pair's rounding error, at about its cost: in float32 on
    [-80, 80], TF's two sigmoids average 1.15 bits (max 2.8), exp(-|u|)/(1 + exp(-|u|))**2
    0.57 (max 2.0), and 1/(exp(u) + 2 + exp(-u)) 0.41, but with two exps: 30% slower.
    Where both sigmoids are needed elsewhere in `expr` (swish''), the pair stays: the
    slope would add an exp.
    """
    for pos, neg in _sigmoid_pairs(expr):
        u = pos.args[0]
        lowered = expr.replace(lambda n: isinstance(n, sp.Mul), lambda n: _lower_pair(n, u))
        remaining = lowered.atoms(sigmoid)
        if pos not in remaining or neg not in remaining:
            expr = lowered
    return expr


def _lower_pair(mul: sp.Mul, u: sp.Expr) -> sp.Expr:
    powers = mul.as_powers_dict()
    k = sp.Min(powers.get(sigmoid(u), 0), powers.get(sigmoid(-u), 0))
    if not (k.is_Integer and k > 0):
        return mul
    return mul / (sigmoid(u) * sigmoid(-u)) ** k * sigmoid_slope(u) ** k


# --- compensated arguments ------------------------------------------------------------
# A steep function turns its argument's absolute error into a relative error of its value:
# exp(u) computed from a rounded u = x - y is off by |u|*2**-24 relative, 64 ulps at
# u = -78, and so are sigmoid, its slope, softplus and erfc in their tails. Where the
# argument is built from inputs and constants by two-operand operations (x - y, -x**2/2,
# x/sqrt(2), x*(c1 + c3*x**2), x/y), the exact error of each operation (add_error,
# sub_error, product_error, square_error, division_error) and each constant's own rounding
# are carried to first order through the operations above them, and the value corrected:
# f(fl(u))*(1 + e*f'/f). Applied last, to the shapes the printer writes (--compensated-arguments).
# An argument through another function (log(x) - y) is left as it is.


def power_of_two(c: sp.Expr) -> bool:
    """c = +-2**k: multiplying by it is exact (short of over- and underflow)."""
    if not c.is_Rational or c == 0:
        return False
    p, q = abs(c.p), c.q
    return p & (p - 1) == 0 and q & (q - 1) == 0


def _exact_value(c: sp.Expr) -> mpmath.mpf | None:
    """The constant c to 40 digits; None where it is not a finite real."""
    with mpmath.workdps(40):
        try:
            exact = mpmath.mpf(sp.N(c, 40))
        except TypeError:
            return None
        return exact if mpmath.isfinite(exact) else None


def _constant_error(c: sp.Expr) -> sp.Expr | None:
    """What the dtype's value of the constant c lacks of c (the module writes c as a float64
    literal, which float32 rounds again), by dtype: 0 for a number float32 holds; None for
    one that is not a finite real."""
    exact = _exact_value(c)
    if exact is None:
        return None
    double = float(exact)
    single = to_float32(double)
    if exact == single:
        return sp.Integer(0)
    with mpmath.workdps(40):
        return by_dtype(*(sp.Float(exact - v, 20) for v in (single, double)))


def _rounding_error(node: sp.Expr) -> sp.Expr | None:
    """To first order, the error of `node` as the module computes it from exact inputs:
    node - fl(node), from the exact error of each rounding operation (add_error, sub_error,
    product_error, square_error, division_error) and of each constant, carried through the
    operations above it. Only for a tree of one- and two-operand operations, whose order
    of evaluation the printer and the emitter's CSE cannot change (a sum of three terms may
    be summed in another order); None for any other node (a function, a longer sum)."""
    if isinstance(node, sp.Symbol):
        return sp.Integer(0)
    if node.is_number:
        return _constant_error(node)
    if is_held(node):
        return _rounding_error(node.args[0])  # 2*(x - y), held as derive writes it
    if isinstance(node, (clip, pick)):
        # A regime's guard of an input: the input itself or a bound, exact if each is.
        values = node.args if isinstance(node, clip) else node.args[1:]
        exact = all(_rounding_error(v) == 0 for v in values)
        return sp.Integer(0) if exact else None
    if node.could_extract_minus_sign():
        # Negation is exact, and fl(y - x) is -fl(x - y): one error for both, shared.
        inner = _rounding_error(-node)
        return None if inner is None else -inner
    if isinstance(node, sp.Add) and len(node.args) == 2:
        a, b = sorted(node.args, key=lambda t: t.could_extract_minus_sign())
        errors = [_rounding_error(a), _rounding_error(b)]
        if None in errors:
            return None
        # x - y as sub_error(x, y): add_error(x, -y) would have the module compute -y apart.
        if a.is_number:
            # A constant second: Grappler's constant folding pushes constants down, and
            # (c + t) - c, TwoSum's first step, becomes t (the error 0) in graph mode.
            operation = -sub_error(-b, a) if b.could_extract_minus_sign() else add_error(b, a)
        else:
            operation = sub_error(a, -b) if b.could_extract_minus_sign() else add_error(a, b)
        return errors[0] + errors[1] + operation
    if isinstance(node, sp.Pow) and node.exp == 2:
        inner = _rounding_error(node.base)
        return None if inner is None else 2 * node.base * inner + square_error(node.base)
    if isinstance(node, sp.Pow) and node.exp == -1:
        inner = _rounding_error(node.base)
        return None if inner is None else -inner / node.base**2 + division_error(sp.Integer(1), node.base)
    if isinstance(node, sp.Mul):
        return _product_rounding(node)
    return None


def _product_rounding(node: sp.Mul) -> sp.Expr | None:
    """_rounding_error of a product, printed as printer.ProductOrder writes it: its numbers
    as one constant c, then c*w, c/d, a*b or a/d (one rounding each), or c*(a*b*...) for c
    a power of 2 (exact in any order)."""
    numbers = [a for a in node.args if a.is_number]
    others = [a for a in node.args if not a.is_number]
    c = sp.Mul(*numbers)
    rational = sp.Mul(*(a for a in numbers if a.is_Rational))
    if len(numbers) > 1 and not power_of_two(rational):
        # The emitter's CSE may multiply by -sqrt(2)*3 in two steps, 3*x shared: each step
        # rounds. With a power of 2 as the rational part the steps round as one (-sqrt(2)
        # times x/2 is fl(-sqrt(2)/2*x), as gelu's is printed).
        return None
    if power_of_two(c) and c != 1:
        inner = _rounding_error(sp.Mul(*others))
        return None if inner is None else c * inner
    if len(others) == 2 and c == 1:
        a, b = others
        if isinstance(a, sp.Pow) and a.exp == -1:
            a, b = b, a
        if isinstance(b, sp.Pow) and b.exp == -1 and not (isinstance(a, sp.Pow) and a.exp == -1):
            d = b.base  # a/d
            errors = [_rounding_error(a), _rounding_error(d)]
            if None in errors:
                return None
            return errors[0] / d - a * errors[1] / d**2 + division_error(a, d)
        errors = [_rounding_error(a), _rounding_error(b)]
        if None in errors:
            return None
        return a * errors[1] + b * errors[0] + product_error(a, b)
    if len(others) != 1:
        return None
    (w,) = others
    residual = _constant_error(c)
    if residual is None:
        return None
    if isinstance(w, sp.Pow) and w.exp == -1:
        d = w.base  # c/d, one division
        inner = _rounding_error(d)
        if inner is None:
            return None
        return -c * inner / d**2 + division_error(c, d) + residual / d
    inner = _rounding_error(w)
    if inner is None:
        return None
    return c * inner + (product_error(c, w, residual) if residual != 0 else product_error(c, w))


def argument_error(u: sp.Expr) -> sp.Expr | None:
    """The rounding error of the float u as the module computes it (_rounding_error), 0
    where |fl(u)| > 4096 or where it is not finite (bounded_error); None where u is exact,
    or its error cannot be computed."""
    if u.is_number:
        return None  # the printer writes f(c) as one number, rounded once
    error = _rounding_error(u)
    if error is None or error == 0:
        return None
    return bounded_error(error, u)


# Steep functions -> f'(u)/f(u), the correction's relative factor, from what the printed
# forms compute already where it can be (sigmoid(u) beside sigmoid(-u), the exp shared).
# Relative, not f(u) + e*f'(u): e*f'(u) flushes to 0 where f(u) is still normal
# (sigmoid(u)*e at u = -79 is 2e-40 for a softplus of 6e-35).
_LOG_SLOPES: dict[type, Callable[[sp.Expr], sp.Expr]] = {
    sp.exp: lambda u: sp.Integer(1),
    mul_exp: lambda u: sp.Integer(1),
    sigmoid: lambda u: sigmoid(-u),
    # -tanh(u/2), from the sigmoids that the first order has computed.
    sigmoid_slope: lambda u: sigmoid(-u) - sigmoid(u),
}
# Those whose factor is a quotient of values that both flush far out (0/0): the product
# is multiply_no_nan's, 0 where f(u) is. The quotient is held together (ipow(q, 1)): the
# error times its numerator alone would flush.
_LOG_SLOPE_QUOTIENTS: dict[type, Callable[[sp.Expr], sp.Expr]] = {
    softplus: lambda u: ipow(sigmoid(u) / softplus(u), 1),
    erfc: lambda u: -2 / sp.sqrt(sp.pi) * ipow(sp.exp(-(u**2)) / erfc(u), 1),
}


def _polynomial_of_operations(u: sp.Expr) -> sp.Expr | None:
    """A polynomial in one input with numeric coefficients as x**m*(a + x**g*(b + ...)), each
    coefficient one number: a tree of two-operand operations, whose rounding error
    _rounding_error can carry. gelu_tanh's argument 2*sqrt(2)*x*(8943*x**2/200000 + 1)/sqrt(pi)
    is printed as c*x*(1 + b*x**2), three factors in an order the printer chooses; as
    x*(a + b*x**2) it is compensated. None for anything else."""
    found = None
    if len(u.free_symbols) == 1 and isinstance(u, (sp.Mul, sp.Add)) and not u.has(sp.Piecewise):
        found = _as_polynomial(u)
    if found is None or found[0] not in u.free_symbols:
        return None
    x, coeffs = found
    terms = {len(coeffs) - 1 - i: c for i, c in enumerate(coeffs) if c != 0}
    if len(terms) < 2 or not all(c.is_real for c in terms.values()):
        return None
    low, powers = min(terms), sorted(terms, reverse=True)
    step = functools.reduce(math.gcd, (m - low for m in powers if m != low))
    nested = _as_number(terms[powers[0]])
    for m in range(powers[0] - step, low - 1, -step):
        nested = _as_number(terms.get(m, sp.Integer(0))) + x**step * nested
    return x**low * nested


def _compensated(node: sp.Expr) -> sp.Expr | None:
    kind = type(node)
    if kind not in _LOG_SLOPES and kind not in _LOG_SLOPE_QUOTIENTS and kind is not expm1:
        return None
    u = node.args[-1]
    error = argument_error(u)
    if error is None:
        polynomial = _polynomial_of_operations(u)
        error = None if polynomial is None else argument_error(polynomial)
        if error is None:
            return None
        u, node = polynomial, node.func(*node.args[:-1], polynomial)
    if kind is expm1:
        # Absolute: expm1 does not decay, and its relative slope exp(u)/expm1(u) is 0/0 at
        # u = 0. exp held finite where expm1 overflows (inf + e*inf would be NaN).
        return node + error * exp_finite(u)
    if kind in _LOG_SLOPES:
        return node * (1 + error * _LOG_SLOPES[kind](u))
    return mul_no_nan(1 + error * _LOG_SLOPE_QUOTIENTS[kind](u), node)


compensate_arguments = Rule(
    "compensated_argument",
    "a steep function (exp, expm1, sigmoid, softplus, erfc) turns its argument's rounding (x - y, x**2/2, x/sqrt(2)) into a "
    "relative error of |u| ulps; f(u)*(1 + e*f'(u)/f(u)), e that rounding computed exactly, does not",
    _compensated,
)


# Factors that decay as exp(u) far out, and flush to 0 below u = -87 in float32 (-708 in
# float64) where a product with a larger factor is still a normal number: each as the
# steps of its tails, (the key, a lifted value of u from the lifted key). The key is what
# lift() moves by 40 below -80: u on the left; -|u| for an even factor; -2u for a right
# tail that decays as exp(-2u), whose u then moves by 20 (exact: a product by 2 and -1/2).
# A factor's later steps take the earlier ones' lifted u. exp in a product is mul_exp
# already; erfc decays as a Gaussian, which no shift scales.
_Step = tuple[Callable[[sp.Expr], sp.Expr], Callable[[sp.Expr], sp.Expr]]
_LEFT: _Step = (lambda u: u, lambda k: k)
_TAILS: dict[type, tuple[_Step, ...]] = {
    sp.exp: (_LEFT,),
    sigmoid: (_LEFT,),
    softplus: (_LEFT,),
    tanh_softplus: (_LEFT,),
    tanh_softplus_slope: (_LEFT, (lambda u: -2 * u, lambda k: -k / 2)),
    sigmoid_slope: ((lambda u: -sp.Abs(u), lambda k: k),),
}
# Factors no larger than 1: a product of these and a flushed factor is below the smallest
# normal number too, and gains nothing from scaling.
_AT_MOST_ONE = (sigmoid, tanh_softplus, tanh_softplus_slope, sigmoid_slope, sp.tanh, sp.erf, sp.sin, sp.cos)


def _tail_keys(factor: sp.Expr, keys: set[sp.Expr] | None = None) -> tuple[list[sp.Expr], sp.Expr]:
    """(the keys of a decaying factor's tails, its argument lifted at those in `keys`, all of
    them where None); ([], the factor) for any other factor."""
    if type(factor) not in _TAILS or factor.args[0].is_number:
        return [], factor
    u, found = factor.args[0], []
    for key_of, back in _TAILS[type(factor)]:
        key = key_of(u)
        found.append(key)
        if keys is None or key in keys:
            u = back(lift(key))
    return found, u


def _direct_factors(node: sp.Expr) -> list[sp.Expr]:
    """The factors of a product, through multiply_no_nan's two operands."""
    if isinstance(node, sp.Mul):
        return [f for a in node.args for f in _direct_factors(a)]
    if isinstance(node, mul_no_nan):
        return [f for a in node.args for f in _direct_factors(a)]
    return [node]


def _keys(factors: list[sp.Expr]) -> set[sp.Expr]:
    return {k for f in factors for k in _tail_keys(f)[0]}


def _may_exceed_one(factors: list[sp.Expr]) -> bool:
    for f in factors:
        if _tail_keys(f)[0]:
            continue
        if f.is_number:
            # By value through the textbook form: float() of mul_exp(1, -1) raised TypeError
            # (the fuzz-like probe's softmin -e*log(exp(-x/e) + exp(-y/e)), --scaled-tails).
            if abs(complex(numeric(f))) > 1:
                return True
        elif not isinstance(f, _AT_MOST_ONE):
            return True
    return False


def _lift_factors(node: sp.Expr, keys: set[sp.Expr]) -> sp.Expr:
    """`node` (a product, or a lone factor) with its decaying factors lifted at `keys`."""
    if isinstance(node, sp.Mul):
        return sp.Mul(*(_lift_factors(a, keys) for a in node.args))
    if isinstance(node, mul_no_nan):
        return mul_no_nan(*(_lift_factors(a, keys) for a in node.args))
    found, u = _tail_keys(node, keys)
    # The other factors as they are: beside a larger term (x*sigmoid(x) + 2) a flushed
    # product changes nothing.
    return type(node)(u) if set(found) & keys else node


def _lowered(node: sp.Expr, keys: set[sp.Expr]) -> sp.Expr:
    lifted = _lift_factors(node, keys) if not isinstance(node, sp.Add) else sp.Add(
        *(_lift_factors(t, keys) for t in node.args)
    )
    wrap = lowered_no_nan if node.has(mul_no_nan) else lowered
    for key in sorted(keys, key=sp.default_sort_key):
        lifted = wrap(lifted, key)
    return lifted


def _scaled_tail(node: sp.Expr) -> sp.Expr | None:
    """A product r*d (or multiply_no_nan's), d decaying as exp(u) far out, as
    lowered(r*d(lift(u)), u): where d alone is subnormal and flushed to 0, r*d may not be
    (x*sigmoid(x) at x = -90 is -7.4e-38). A sum whose terms share such a factor's argument
    alike: mish' = x*tanh_softplus_slope(x) + tanh_softplus(x) is (x + 1)*exp(x) far out,
    and its second term, flushed alone, is 1/90 of it at x = -90."""
    if isinstance(node, sp.Add):
        terms = [_direct_factors(t) for t in node.args]
        keys = set.intersection(*(_keys(t) for t in terms))
        if not keys or not any(_may_exceed_one(t) for t in terms):
            return None
        return _lowered(node, keys)
    if not isinstance(node, (sp.Mul, mul_no_nan)):
        return None
    factors = _direct_factors(node)
    keys = _keys(factors)
    if not keys or not _may_exceed_one(factors):
        return None
    return _lowered(node, keys)


scale_tails = Rule(
    "scaled_tail",
    "a factor that decays as exp(u) (sigmoid, sigmoid_slope, tanh_softplus) is subnormal and flushed to 0 for "
    "u < -87 in float32 where its product with a larger factor is normal; it is computed at u + 40 and the "
    "product scaled back by exp(-40)",
    _scaled_tail,
    top_down=True,
)


def _precise_sigmoid(node: sp.Expr) -> sp.Expr | None:
    """sigmoid(u) as sigmoid_from_exp(u); 1 - sigmoid(u), the economy's form of sigmoid(-u)
    that shares one sigmoid, as sigmoid_from_exp(-u): 1 - sigmoid(30) keeps the absolute
    error of sigmoid(30), 14 ulps of swish' there in float64."""
    if isinstance(node, sigmoid) and not node.args[0].is_number:
        return sigmoid_from_exp(*node.args)
    if isinstance(node, sp.Add) and len(node.args) == 2 and 1 in node.args:
        rest = 1 - node
        if isinstance(rest, sigmoid_from_exp):
            return sigmoid_from_exp(-rest.args[0])
    return None


precise_sigmoids = Rule(
    "precise_sigmoid",
    "TF's sigmoid kernel is up to 5.7 ulps off below 0 (float32, mean 1.5 ulps); e/(1 + e) below 0 and "
    "1/(1 + e) above, e = exp(-|u|), is within 2",
    _precise_sigmoid,
)


# Calls whose arguments are values of the form, not arguments of a function: sums inside
# them are compensated too. Inside any other call a sum is an argument, which
# compensate_arguments corrects (or nothing does), not counted twice.
_STRUCTURAL = (ipow, mul_no_nan, mul_exp, lowered, pick)


def compensate_sums(form: sp.Expr) -> sp.Expr:
    """Each sum of two terms in a form, at least one of them rounded on its way (a quotient,
    a product: two-operand operations of inputs and constants), as fl(a + b) + e, e the
    rounding error of the whole as _rounding_error computes it: where the terms cancel,
    a + b is exact and e carries the terms' own errors. gaussian_nll's d/ds,
    -(1 + t)*((t - 1)/s) with t = (x - m)/s, was 0 at x = 1.1e-13, m = s = 4.545, where
    x - m has rounded x away and 1 + t cancels; the truth is 1.08e-14. Not inside the
    arguments of functions. With --compensated-arguments, after it."""
    if isinstance(form, sp.Add) and len(form.args) == 2 and any(t.free_symbols for t in form.args):
        error = _rounding_error(form)
        if error is not None and any(_rounding_error(t) not in (None, 0) for t in form.args if not t.is_number):
            return compensated_sum(form, error)
    if isinstance(form, sp.Piecewise):
        return sp.Piecewise(*((compensate_sums(value), condition) for value, condition in form.args))
    if isinstance(form, (sp.Add, sp.Mul, sp.Pow, *_STRUCTURAL)) and form.args:
        return form.func(*(compensate_sums(a) for a in form.args))
    return form


def _toward_zero(exact: mpmath.mpf) -> tuple[float, float]:
    """The float32 and the float64 value of `exact` nearest it on the side of 0."""
    single = to_float32(float(exact))
    if abs(single) > abs(exact):
        bits = struct.unpack("I", struct.pack("f", single))[0]
        single = struct.unpack("f", struct.pack("I", bits - 1))[0]
    double = float(exact)
    if abs(double) > abs(exact):
        double = math.nextafter(double, 0.0)
    return single, double


def _split_exponent(node: sp.Expr) -> sp.Expr:
    """split_power of a power u**p whose number p float32 does not hold; else `node`."""
    if not (isinstance(node, sp.Pow) and node.base.free_symbols and node.exp.is_number and not node.exp.is_Integer):
        return node
    if node.exp in (sp.S.Half, -sp.S.Half):
        return node  # a square root is correctly rounded (tf.math.sqrt, rsqrt)
    exact = _exact_value(node.exp)
    if exact is None or to_float32(float(exact)) == exact:
        return node
    with mpmath.workdps(40):  # abs() and - round to the working precision
        parts = _toward_zero(exact)
        lows = [sp.Float(exact - v, 20) for v in parts]
    return split_power(node.base, node.exp, by_dtype(*(sp.Float(v, 17) for v in parts)), by_dtype(*lows))


def compensate_powers(form: sp.Expr) -> sp.Expr:
    """Each power u**p with a number p that float32 does not hold as split_power: TF's
    pow(u, p) takes p as a tensor of u's dtype, and p's rounding times log(u) is the
    relative error of the result, up to 89*2**-25 (2e-6, 5 bits) for u**0.9 at u = 1e38.
    pow(u, hi)*pow(u, lo), hi the dtype's p rounded toward 0 and lo = p - hi (of p's sign,
    so that at u = 0 and inf the factors are both 0 or both inf), is within 1.5 ulps: lo's
    own rounding is 2**-24 of 2**-24. With --compensated-arguments, after compensate_sums."""
    return form.replace(lambda n: isinstance(n, sp.Pow), _split_exponent)


def group_powers(expr: sp.Expr) -> sp.Expr:
    """Powers of different bases in a product taken together, a**3*b as ipow(a*b, 1)*a**2:
    SymPy expands (x*y)**2 into x**2*y**2, which is 0*inf = NaN at x = 1e-33, y = 6e28
    (erf(x*y)'s slope there is 6.7e28) where (x*y)**2 is 1.5e-8; likewise for the
    reciprocals. Only where some power is at least 2: x*y stays as it is."""

    def paired(factors: list[tuple[sp.Expr, int]]) -> list[sp.Expr]:
        out: list[sp.Expr] = []
        while pairs(factors):
            m = min(k for _, k in factors)
            out.append(ipow(sp.Mul(*(b for b, _ in factors)), m))
            factors = [(b, k - m) for b, k in factors if k > m]
        return out + [b**k for b, k in factors]

    def pairs(factors: list[tuple[sp.Expr, int]]) -> bool:
        return len(factors) > 1 and max(k for _, k in factors) >= 2

    def grouped(mul: sp.Expr) -> sp.Expr:
        # Powers of the inputs only: their magnitudes are what over- and underflows.
        up, down, rest = [], [], []
        for f in mul.args:
            base, k = f.as_base_exp()
            if isinstance(base, sp.Symbol) and k.is_Integer:
                (up if k > 0 else down).append((base, abs(int(k))))
            else:
                rest.append(f)
        if not (pairs(up) or pairs(down)):
            return mul  # rebuilt, a number times a sum would be distributed
        return sp.Mul(*rest, *paired(up), *(1 / p for p in paired(down)))

    return expr.replace(lambda n: isinstance(n, sp.Mul), grouped)


def factor_powers(expr: sp.Expr) -> sp.Expr:
    """Sums of terms c*u**k in one input u, k >= 1, with the lowest power taken out:
    1.6*x + 0.07*x**3 as x*(1.6 + 0.07*x**2), 4 ops where the sum is 5 (x**3 is x*x**2).
    Each term keeps its coefficient and is rounded as before; gelu_tanh's forward pass in
    graph mode takes 0.86x the time."""

    def power(term: sp.Expr) -> tuple[sp.Symbol, int] | None:
        base, k = term.as_independent(*term.free_symbols, as_Add=False)[1].as_base_exp()
        return (base, int(k)) if isinstance(base, sp.Symbol) and k.is_Integer and k >= 1 else None

    def factored(total: sp.Expr) -> sp.Expr:
        powers = [power(t) for t in total.args]
        if None in powers or len({u for u, _ in powers}) != 1:
            return total
        u, low = powers[0][0], min(k for _, k in powers)
        terms = (t.as_independent(u, as_Add=False) for t in total.args)
        # One number per term: SymPy's 2*sqrt(2)/sqrt(pi) and 8943*sqrt(2)/(100000*sqrt(pi))
        # share a factor that the emitter's CSE would compute apart (an op more).
        return u**low * sp.Add(*(_as_number(c) * rest / u**low for c, rest in terms))

    return expr.replace(lambda n: isinstance(n, sp.Add), factored)


# expand() stays cheap on arguments this small; larger ones are left as they are.
SHARE_MAX_OPS = 40


def share_arguments(exprs: list[sp.Expr]) -> list[sp.Expr]:
    """Calls of one-argument functions whose arguments agree once expanded (or agree up to
    sign), written with one argument: the first met, forward pass first. The forms of
    different orders come from different candidates, and gelu_tanh's f'' computed
    sigmoid(0.8*x*(2 + 0.09*x**2)) beside the forward pass's sigmoid(1.6*x + 0.07*x**3)."""
    seen: dict[sp.Expr, sp.Expr] = {}
    done: dict[sp.Expr, sp.Expr] = {}  # a call met again gets the same answer

    def canonical(call: sp.Expr) -> sp.Expr:
        if call not in done:
            done[call] = shared(call)
        return done[call]

    def shared(call: sp.Expr) -> sp.Expr:
        (arg,) = call.args
        if arg.is_Atom or sp.count_ops(arg) > SHARE_MAX_OPS:
            return call
        key = sp.expand(arg)
        if any(not n.is_Rational for n in key.atoms(sp.Number, sp.NumberSymbol)):
            # Numbers to 12 digits: factor_powers writes sqrt(2)/sqrt(pi) as 0.7978845608028654.
            key = key.evalf(15).replace(lambda e: e.is_Float, lambda e: sp.Float(f"{float(e):.12g}"))
        if key in seen:
            return call.func(seen[key])
        if -key in seen:
            return call.func(-seen[-key])
        seen[key] = arg
        return call

    def one_argument(node: sp.Basic) -> bool:
        return isinstance(node, sp.Function) and len(node.args) == 1

    return [e.replace(one_argument, canonical) for e in exprs]
