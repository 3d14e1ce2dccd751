"""Stable primitives: SymPy functions whose derivatives are again stable primitives.

The stabilisation stage rewrites naive forms (``log(1 + exp(x))``) into these
functions; differentiation then stays inside the vocabulary (softplus' is
sigmoid, sigmoid' is sigmoid(x)*sigmoid(-x), ...). Each primitive knows its
naive meaning (``rewrite(sp.exp)``) so that references can be computed from
the math, independently of how the printer emits it.
"""

from __future__ import annotations

from collections.abc import Callable

import mpmath
import sympy as sp
from sympy.codegen.cfunctions import expm1, log1p
from sympy.core.evalf import PrecisionExhausted

__all__ = [
    "erfc",
    "expm1",
    "hypot",
    "hypot_ratio",
    "hypot_ratio_gap",
    "pnorm",
    "pnorm_ratio",
    "ipow",
    "clip",
    "away",
    "apart",
    "polyval",
    "log1mexp",
    "log1p",
    "log1pmx",
    "expm1mx",
    "logaddexp",
    "log_mix",
    "logcosh",
    "sinpi",
    "cospi",
    "mills",
    "mills_gap",
    "mills_gap_slope",
    "mills_curvature",
    "sigmoid",
    "sigmoid_slope",
    "softplus",
    "tanh_softplus",
    "tanh_softplus_slope",
    "xlogy",
    "xlog1py",
    "pick",
    "by_dtype",
    "mul_exp",
    "mul_pow",
    "mul_no_nan",
    "exp_finite",
    "finite",
    "add_error",
    "sub_error",
    "product_error",
    "square_error",
    "division_error",
    "bounded_error",
    "compensated_sum",
    "split_power",
    "lift",
    "lowered",
    "lowered_no_nan",
    "sigmoid_from_exp",
    "lgamma",
    "lbeta",
    "lgamma_diff",
    "lgamma_kernel",
    "log_digamma_gap",
    "polygamma_diff",
    "lgamma_value",
    "polygamma_value",
    "naive",
    "numeric",
    "real_diff",
    "kink_slopes_as_zero",
]


class sigmoid(sp.Function):  # noqa: N801 - SymPy names functions in lower case
    """1 / (1 + exp(-x))."""

    nargs = 1

    @classmethod
    def eval(cls, arg: sp.Expr) -> sp.Expr | None:
        if arg.is_zero:
            return sp.Rational(1, 2)
        return None

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        x = self.args[0]
        return sigmoid(x) * sigmoid(-x)

    def _eval_rewrite_as_exp(self, x: sp.Expr, **kwargs: object) -> sp.Expr:
        return 1 / (1 + sp.exp(-x))

    def _eval_is_extended_real(self) -> bool | None:
        return self.args[0].is_extended_real

    def _eval_is_positive(self) -> bool | None:
        return True if self.args[0].is_extended_real else None


class sigmoid_slope(sp.Function):  # noqa: N801
    """sigmoid(x) * sigmoid(-x), the slope of sigmoid: exp(-|x|) / (1 + exp(-|x|))**2.

    Not produced by differentiation (sigmoid' stays the pair, which the rewrite
    rules see through); `stabilize.lower_sigmoid_pairs` puts it in the forms emitted.
    """

    nargs = 1

    @classmethod
    def eval(cls, arg: sp.Expr) -> sp.Expr | None:
        if arg.is_zero:
            return sp.Rational(1, 4)
        if arg.could_extract_minus_sign():
            return cls(-arg)
        return None

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        x = self.args[0]
        return self * (sigmoid(-x) - sigmoid(x))

    def _eval_rewrite_as_exp(self, x: sp.Expr, **kwargs: object) -> sp.Expr:
        return 1 / (sp.exp(x) + 2 + sp.exp(-x))

    def _eval_is_extended_real(self) -> bool | None:
        return self.args[0].is_extended_real

    def _eval_is_positive(self) -> bool | None:
        return True if self.args[0].is_extended_real else None


class softplus(sp.Function):  # noqa: N801
    """log(1 + exp(x))."""

    nargs = 1

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        return sigmoid(self.args[0])

    def _eval_rewrite_as_exp(self, x: sp.Expr, **kwargs: object) -> sp.Expr:
        return sp.log(1 + sp.exp(x))

    def _eval_is_extended_real(self) -> bool | None:
        return self.args[0].is_extended_real

    def _eval_is_positive(self) -> bool | None:
        return True if self.args[0].is_extended_real else None


class tanh_softplus(sp.Function):  # noqa: N801
    """tanh(softplus(x)) = tanh(log(1 + exp(x))), mish's gate.

    Computed as n/(n + 2) with n = e*(e + 2), e = exp(x): that is
    ((1 + e)**2 - 1)/((1 + e)**2 + 1), with the difference from 1 written out so
    that nothing cancels. One exp and a few additions where TF would compute
    softplus (three exps' worth of work) and tanh.
    """

    nargs = 1

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        return tanh_softplus_slope(self.args[0])

    def _eval_rewrite_as_exp(self, x: sp.Expr, **kwargs: object) -> sp.Expr:
        return sp.tanh(sp.log(1 + sp.exp(x)))

    def _eval_is_extended_real(self) -> bool | None:
        return self.args[0].is_extended_real


class tanh_softplus_slope(sp.Function):  # noqa: N801
    """The slope of tanh_softplus: sigmoid(x)/cosh(softplus(x))**2 = 4e(1 + e)/(e(e + 2) + 2)**2
    with e = exp(x), computed as 4e/d times (1 + e)/d, d = e(e + 2) + 2, so that nothing overflows.

    Its derivative is slope*(sigmoid(-x) - 2*sigmoid(x)*tanh_softplus(x)): mish's
    derivatives stay in the vocabulary, one exp per primitive.
    """

    nargs = 1

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        x = self.args[0]
        return self * (sigmoid(-x) - 2 * sigmoid(x) * tanh_softplus(x))

    def _eval_rewrite_as_exp(self, x: sp.Expr, **kwargs: object) -> sp.Expr:
        e = sp.exp(x)
        return 4 * e * (1 + e) / (e * (e + 2) + 2) ** 2

    def _eval_is_extended_real(self) -> bool | None:
        return self.args[0].is_extended_real

    def _eval_is_positive(self) -> bool | None:
        return True if self.args[0].is_extended_real else None


class logaddexp(sp.Function):  # noqa: N801
    """log(exp(a) + exp(b))."""

    nargs = 2

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        a, b = self.args
        return sigmoid(_difference(a, b)) if argindex == 1 else sigmoid(_difference(b, a))

    def _eval_rewrite_as_exp(self, a: sp.Expr, b: sp.Expr, **kwargs: object) -> sp.Expr:
        return sp.log(sp.exp(a) + sp.exp(b))


def _difference(a: sp.Expr, b: sp.Expr) -> sp.Expr:
    """a - b, expanded where two polynomials cancel so (fewer operations): a mixture's
    logaddexp(-x**2/2 + c1, -(x - 3)**2/2 + c2) has the slope sigmoid(3*x - 9/2 + c1 - c2),
    where x**2/2 - (x - 3)**2/2 is inf - inf beyond x = 2.6e19."""
    difference = a - b
    if sp.count_ops(difference) > 40 or not difference.is_polynomial(*difference.free_symbols):
        return difference
    expanded = sp.expand(difference)
    return expanded if sp.count_ops(expanded) < sp.count_ops(difference) else difference


class log_mix(sp.Function):  # noqa: N801
    """log(p*exp(a) + (1 - p)*exp(b)) for a number p in (0, 1): a two-part mixture's log
    density, log-mean-exp at p = 1/2. Printed as max(a, b) + log1p(q*expm1(-|a - b|)), q the
    weight of the smaller: no cancellation where the result is near 0, as there is in
    logaddexp(a + log(p), b + log(1 - p)) (0 at a = b = 8e-10, where the truth is 8e-10)."""

    nargs = 3

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        a, b, p = self.args
        odds = sp.log(p / (1 - p))
        if argindex == 1:
            return sigmoid(_difference(a, b) + odds)
        if argindex == 2:
            return sigmoid(_difference(b, a) - odds)
        return sp.Integer(0)  # p is a number

    def _eval_rewrite_as_exp(self, a: sp.Expr, b: sp.Expr, p: sp.Expr, **kwargs: object) -> sp.Expr:
        return sp.log(p * sp.exp(a) + (1 - p) * sp.exp(b))


class log1mexp(sp.Function):  # noqa: N801
    """log(1 - exp(-x)), real for x > 0."""

    nargs = 1

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        return 1 / expm1(self.args[0])

    def _eval_rewrite_as_exp(self, x: sp.Expr, **kwargs: object) -> sp.Expr:
        return sp.log(1 - sp.exp(-x))


class log1pmx(sp.Function):  # noqa: N801
    """log1p(x) - x, real for x > -1: a divergence's log near its minimum
    (x/y - 1 - log(x/y) is -log1pmx((x - y)/y)), where log1p(x) - x as written loses all of
    its x**2/2. Its slope -x/(1 + x) cancels nothing."""

    nargs = 1

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        x = self.args[0]
        return -x / (1 + x)

    def _eval_rewrite_as_exp(self, x: sp.Expr, **kwargs: object) -> sp.Expr:
        return sp.log(1 + x) - x


class expm1mx(sp.Function):  # noqa: N801
    """expm1(x) - x: a VAE's KL term in the log-variance, (exp(v) - 1 - v)/2, near v = 0,
    where expm1(v) - v as written loses all of its v**2/2 (the one-input module has a series
    regime there; with more inputs there are none). Its slope is expm1(x)."""

    nargs = 1

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        return expm1(self.args[0])

    def _eval_rewrite_as_exp(self, x: sp.Expr, **kwargs: object) -> sp.Expr:
        return sp.exp(x) - 1 - x


class xlogy(sp.Function):  # noqa: N801
    """a * log(b), defined as 0 where a == 0."""

    nargs = 2

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        a, b = self.args
        return sp.log(b) if argindex == 1 else a / b

    def _eval_rewrite_as_exp(self, a: sp.Expr, b: sp.Expr, **kwargs: object) -> sp.Expr:
        return a * sp.log(b)


class xlog1py(sp.Function):  # noqa: N801
    """a * log1p(b), defined as 0 where a == 0: (1 - x)*log(1 - x), a binary entropy's term,
    is 0*log(0) = NaN at x = 1, whose limit is 0."""

    nargs = 2

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        a, b = self.args
        return log1p(b) if argindex == 1 else a / (1 + b)

    def _eval_rewrite_as_exp(self, a: sp.Expr, b: sp.Expr, **kwargs: object) -> sp.Expr:
        return a * sp.log(1 + b)


class _Symmetric(sp.Function):
    """A function of two arguments, symmetric in them: its arguments in one order (hypot(x, y)
    and hypot(y, x) are shared; lbeta(x, y) - lbeta(y, x) is 0), and its partial in b its
    partial in a with the arguments swapped."""

    nargs = 2

    @classmethod
    def eval(cls, a: sp.Expr, b: sp.Expr) -> sp.Expr | None:
        if sp.default_sort_key(b) < sp.default_sort_key(a):
            return cls(b, a)
        return None

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        a, b = self.args
        return self._partial(a, b) if argindex == 1 else self._partial(b, a)

    @staticmethod
    def _partial(a: sp.Expr, b: sp.Expr) -> sp.Expr:
        raise NotImplementedError


class hypot(_Symmetric):  # noqa: N801
    """sqrt(a**2 + b**2) without overflow or underflow of the squares."""

    @staticmethod
    def _partial(a: sp.Expr, b: sp.Expr) -> sp.Expr:
        return hypot_ratio(a, b)

    def _eval_rewrite_as_exp(self, a: sp.Expr, b: sp.Expr, **kwargs: object) -> sp.Expr:
        return sp.sqrt(a**2 + b**2)

    def _eval_is_extended_real(self) -> bool | None:
        return True if all(arg.is_extended_real for arg in self.args) else None

    def _eval_is_nonnegative(self) -> bool | None:
        return True if all(arg.is_extended_real for arg in self.args) else None


class hypot_ratio(sp.Function):  # noqa: N801
    """a / sqrt(a**2 + b**2), hypot's slope, with both scaled by the larger magnitude:
    a / hypot(a, b) is -0 for a = b = -3e38 (hypot overflows), the true value -0.707."""

    nargs = 2

    @classmethod
    def eval(cls, a: sp.Expr, b: sp.Expr) -> sp.Expr | None:
        if b.is_zero and a.is_extended_real:
            return sp.sign(a)
        return None

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        # d/da a/h = b**2/h**3 = (b/h)**2/h and d/db a/h = -a*b/h**3 = -(a/h)*(b/h)/h.
        a, b = self.args
        if argindex == 1:
            return hypot_ratio(b, a) ** 2 / hypot(a, b)
        return -hypot_ratio(a, b) * hypot_ratio(b, a) / hypot(a, b)

    def _eval_is_extended_real(self) -> bool | None:
        return True if all(arg.is_extended_real for arg in self.args) else None


class hypot_ratio_gap(sp.Function):  # noqa: N801
    """(a - b) / sqrt(a**2 + b**2), with a - b taken before any scaling (halved where large,
    so it cannot overflow): hypot_ratio(a, b) - hypot_ratio(b, a) rounds each ratio first and
    cancels where a is near b. A difference of squared ratios is a product of two of these:
    atan2(y, x)'s d2f/dxdy, (x**2 - y**2)/h**4, was 13-16 bits off at |x| near |y|."""

    nargs = 2

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        # d/da (a - b)/h = b*(a + b)/h**3, d/db = -a*(a + b)/h**3.
        a, b = self.args
        if argindex == 1:
            return hypot_ratio(b, a) * hypot_ratio_gap(a, -b) / hypot(a, b)
        return -hypot_ratio(a, b) * hypot_ratio_gap(a, -b) / hypot(a, b)

    def _eval_is_extended_real(self) -> bool | None:
        return True if all(arg.is_extended_real for arg in self.args) else None


class pnorm(sp.Function):  # noqa: N801
    """(|a|**p + |b|**p)**(1/p) for a number p > 1: the p-norm of (a, b), hypot's kin, scaled
    by the larger magnitude so that the powers cannot overflow or flush. Its arguments in one
    order, as hypot's; nested for more legs."""

    nargs = 3

    @classmethod
    def eval(cls, a: sp.Expr, b: sp.Expr, p: sp.Expr) -> sp.Expr | None:
        if sp.default_sort_key(b) < sp.default_sort_key(a):
            return cls(b, a, p)
        return None

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        # d/da N = sign(a)*(|a|/N)**(p - 1): a power of a ratio in [0, 1], where
        # |a|**(p - 1)/N**(p - 1) overflows in both.
        a, b, p = self.args
        if argindex == 1:
            return sp.sign(a) * pnorm_ratio(a, b, p, p - 1)
        if argindex == 2:
            return sp.sign(b) * pnorm_ratio(b, a, p, p - 1)
        raise sp.ArgumentIndexError(self, argindex)  # p is a number

    def _eval_is_extended_real(self) -> bool | None:
        return True if all(arg.is_extended_real for arg in self.args) else None

    def _eval_is_nonnegative(self) -> bool | None:
        return True if all(arg.is_extended_real for arg in self.args) else None


class pnorm_ratio(sp.Function):  # noqa: N801
    """(|a| / pnorm(a, b, p))**q for numbers p and q, the ratio in [0, 1] with both scaled by
    the larger magnitude (|a|/N is 0/inf where N overflows), and its power taken whole: the
    ratio flushes to 0 at |a|/N = 1e-60, its square root (the slope of the 1.5-norm) is 1e-30.
    Its slopes are such powers again: d/da = q*sign(a)*r(a, b)**(q - 1)*r(b, a)**p/N, where
    1 - r(a, b)**p would cancel; d/db = -q*sign(b)*r(a, b)**q*r(b, a)**(p - 1)/N."""

    nargs = 4

    @classmethod
    def eval(cls, a: sp.Expr, b: sp.Expr, p: sp.Expr, q: sp.Expr) -> sp.Expr | None:
        return sp.Integer(1) if q == 0 else None

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        a, b, p, q = self.args
        norm = pnorm(a, b, p)
        if argindex == 1:
            return q * sp.sign(a) * pnorm_ratio(a, b, p, q - 1) * pnorm_ratio(b, a, p, p) / norm
        if argindex == 2:
            return -q * sp.sign(b) * self * pnorm_ratio(b, a, p, p - 1) / norm
        raise sp.ArgumentIndexError(self, argindex)

    def _eval_is_extended_real(self) -> bool | None:
        return True if all(arg.is_extended_real for arg in self.args) else None

    def _eval_is_nonnegative(self) -> bool | None:
        return True if all(arg.is_extended_real for arg in self.args) else None


class erfc(sp.erfc):  # noqa: N801
    """erfc(x) that keeps its argument as written.

    SymPy's erfc turns erfc(-u) into 2 - erfc(u), which is the cancellation we
    rewrite away; this one evaluates only at numbers.
    """

    @classmethod
    def eval(cls, arg: sp.Expr) -> sp.Expr | None:
        if arg.is_number:
            return sp.erfc(arg)
        return None

    def _eval_rewrite_as_exp(self, x: sp.Expr, **kwargs: object) -> sp.Expr:
        return sp.erfc(x)

    def _eval_is_positive(self) -> bool | None:
        return True if self.args[0].is_extended_real else None


class lgamma(sp.Function):  # noqa: N801
    """log|gamma(x)|, as tf.math.lgamma computes it; for x > 0, SymPy's loggamma(x).

    Its own function, not SymPy's loggamma, which is complex for x < 0 and rewrites
    itself (loggamma(x + 1) expands to loggamma(x) + log(x)). Its derivatives are SymPy's
    polygamma(n, x), which the printer emits as helpers (_digamma, _polygamma).
    """

    nargs = 1

    @classmethod
    def eval(cls, arg: sp.Expr) -> sp.Expr | None:
        if arg in (sp.Integer(1), sp.Integer(2)):
            return sp.Integer(0)
        return None

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        return sp.polygamma(0, self.args[0])

    def _eval_evalf(self, prec: int) -> sp.Expr | None:
        u = self.args[0]
        # is_nonpositive, not u <= 0, which raises where SymPy cannot order the number
        # (-softplus(-e) in lgamma(log_sigmoid(e)), fuzz seed 2701: TypeError).
        if u.is_number and u.is_extended_real and u.is_nonpositive and (u - sp.floor(u)).is_zero:
            return sp.oo  # a pole, as TF's lgamma (mpmath raises)
        return sp.re(sp.loggamma(u))._eval_evalf(prec)


class _GammaDifference:
    """What lbeta, lgamma_diff and polygamma_diff share: a value from their textbook form
    (a difference of lgamma or polygamma), and realness from their arguments'."""

    def _eval_evalf(self, prec: int) -> sp.Expr | None:
        return self.rewrite(sp.exp)._eval_evalf(prec)

    def _eval_is_extended_real(self) -> bool | None:
        return True if all(a.is_extended_real for a in self.args) else None


class lbeta(_GammaDifference, _Symmetric):  # noqa: N801
    """log|beta(a, b)| = lgamma(a) + lgamma(b) - lgamma(a + b), as one function: the three
    terms cancel where an argument is large (lbeta(3e9, 0.75) is -16.2; the sum as written
    gives 0.2 in float32, and NaN, inf - inf, from a = 1e38). The printer's helper `_lbeta`
    computes the difference of the large ones from Stirling's series (TFP's lbeta does the
    same). Its partials are differences of digamma, polygamma_diff, which cancel alike.
    """

    @staticmethod
    def _partial(a: sp.Expr, b: sp.Expr) -> sp.Expr:
        return polygamma_diff(0, a, b)

    def _eval_rewrite_as_exp(self, a: sp.Expr, b: sp.Expr, **kwargs: object) -> sp.Expr:
        return lgamma(a) + lgamma(b) - lgamma(a + b)


class lgamma_diff(_GammaDifference, sp.Function):  # noqa: N801
    """lgamma(y) - lgamma(y + x), as one function: the difference cancels where x is small
    beside y (lgamma(3e9) - lgamma(3e9 + 0.75) is -16.4; as written, 0 in float32). The log
    of the rising factorial gamma(y + x)/gamma(y), negated. The printer's helper `_lgamma_diff`
    computes it from Stirling's series; its partials are polygamma_diff and -digamma(y + x).
    """

    nargs = 2

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        y, x = self.args
        return polygamma_diff(0, y, x) if argindex == 1 else -sp.polygamma(0, y + x)

    def _eval_rewrite_as_exp(self, y: sp.Expr, x: sp.Expr, **kwargs: object) -> sp.Expr:
        return lgamma(y) - lgamma(y + x)


class lgamma_kernel(_GammaDifference, sp.Function):  # noqa: N801
    """(a - 1)*log(x) - x - lgamma(a), the log of the gamma density x**(a - 1)*exp(-x)/gamma(a),
    as one function (a Poisson log-pmf k*log(l) - l - lgamma(k + 1) is lgamma_kernel(k + 1, l)).
    Near its mode x = a its terms, each about a*log(a), cancel to about -log(2*pi*a)/2 (at
    k = l = 1e4, 11 bits lost in float32). The printer's helper `_lgamma_kernel` takes it from
    Stirling's series there, a*log1pmx((x - a)/a) - log(x) + log(a)/2 - log(2*pi)/2 - C(a),
    where nothing cancels; it serves a >= 10, where the rule gamma_log_density puts it (below,
    the helper holds a at 10). Its partial in a is log_digamma_gap(x, a), in x (a - 1)/x - 1."""

    nargs = 2

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        a, x = self.args
        return log_digamma_gap(x, a) if argindex == 1 else (a - 1) / x - 1

    def _eval_rewrite_as_exp(self, a: sp.Expr, x: sp.Expr, **kwargs: object) -> sp.Expr:
        return (a - 1) * sp.log(x) - x - lgamma(a)


class log_digamma_gap(_GammaDifference, sp.Function):  # noqa: N801
    """log(x) - digamma(a), as one function: the slope of lgamma_kernel in its shape. The terms
    cancel where x is near a and a is large (at x = a = 1e4 the difference is 5e-5, and
    log(1e4) has an ulp of 1e-6). The printer's helper `_log_digamma_gap` takes it as
    log(x/a) + (log(a) - digamma(a)), the latter from its asymptotic series 1/(2a) +
    sum B_2k/(2k*a**2k); it serves a >= 10, where the rule log_digamma puts it (below, the
    helper holds a at 10)."""

    nargs = 2

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        x, a = self.args
        return 1 / x if argindex == 1 else -sp.polygamma(1, a)

    def _eval_rewrite_as_exp(self, x: sp.Expr, a: sp.Expr, **kwargs: object) -> sp.Expr:
        return sp.log(x) - sp.polygamma(0, a)


class polygamma_diff(_GammaDifference, sp.Function):  # noqa: N801
    """polygamma(n, y) - polygamma(n, y + x) for an integer n >= 0, as one function: the
    difference cancels where x is small beside y (digamma(3e9) - digamma(3e9 + 0.75) is
    -2.5e-10; the difference as written is 0 in float32). The printer's helper computes it
    from differences of powers that do not cancel (`_polygamma_diff`)."""

    nargs = 3

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        n, y, x = self.args
        if argindex == 2:
            return polygamma_diff(n + 1, y, x)
        if argindex == 3:
            return -sp.polygamma(n + 1, y + x)
        raise sp.ArgumentIndexError(self, argindex)

    def _eval_rewrite_as_exp(self, n: sp.Expr, y: sp.Expr, x: sp.Expr, **kwargs: object) -> sp.Expr:
        return sp.polygamma(n, y) - sp.polygamma(n, y + x)


def _real_argument(u: object, ctx: mpmath.ctx_mp.MPContext) -> object:
    """u as an mpf of `ctx`, or None where it is not real. A Python int is real: lambdify
    prints lbeta(3, x)'s lgamma(3) with the integer 3, and its reference was NaN."""
    if isinstance(u, int):
        return ctx.mpf(u)
    return u if isinstance(u, ctx.mpf) else None


def lgamma_value(u: object, ctx: mpmath.ctx_mp.MPContext = mpmath.mp) -> object:
    """log|gamma(u)| in mpmath's context `ctx`, as TF's lgamma: +inf at a pole (0, -1, ...),
    where mpmath raises; nan for a complex u. Beyond 1e80 Stirling, to 1/(12u): mpmath's own
    took minutes at u = 30**30 and beyond (the fuzzer's log1mexp(lgamma(y**y)))."""
    u = _real_argument(u, ctx)
    if u is None:
        return ctx.nan
    if u <= 0 and u == ctx.floor(u):
        return ctx.inf
    if u > ctx.mpf(10) ** 80:
        return (u - 0.5) * ctx.log(u) - u + ctx.log(2 * ctx.pi) / 2
    return ctx.re(ctx.loggamma(u))


def polygamma_value(n: object, u: object, ctx: mpmath.ctx_mp.MPContext = mpmath.mp) -> object:
    """polygamma(n, u) in mpmath's context `ctx` for a real u; nan for a complex u. At a pole
    (0, -1, ...) +inf (for even n, -inf on one side): an infinity, and not a nan, whose limit
    from both sides the judge would take where a large finite term swamps the pole
    (x + digamma(y) at x = 1e36, y = -2). Beyond 1e80 the asymptotic series' first two terms.
    For n >= 1 mpmath steps from u < 0 up to positive arguments one at a time (minutes at
    u = -1e38, seconds at -2e6): far below 0, the reflection
    polygamma(n, u) = (-1)**n*polygamma(n, 1 - u) - pi*d**n/du**n cot(pi*u)."""
    n = int(n)
    u = _real_argument(u, ctx)
    if u is None:
        return ctx.nan
    if u <= 0 and u == ctx.floor(u):
        return ctx.inf
    if u > ctx.mpf(10) ** 80:
        if n == 0:
            return ctx.log(u) - 1 / (2 * u)
        return (-1) ** (n + 1) * ctx.factorial(n - 1) / u**n * (1 + n / (2 * u))
    if n == 0 or u > -100:
        return ctx.psi(n, u)
    slope = ctx.diff(lambda t: ctx.cot(ctx.pi * t), u, n)
    return (-1) ** n * ctx.psi(n, 1 - u) - ctx.pi * slope


def _mills_naive(x: sp.Expr) -> sp.Expr:
    """exp(-x**2)/(sqrt(pi)*erfc(x)), the textbook form of mills and of the primitives around it.
    SymPy's erfc, not 1 - erf: mpmath computes erfc(1e20) directly, and 1 - erf(1e20) at no
    precision it reaches."""
    return sp.exp(-(x**2)) / (sp.sqrt(sp.pi) * sp.erfc(x))


class mills(sp.Function):  # noqa: N801
    """exp(-x**2)/(sqrt(pi)*erfc(x)) = 1/(sqrt(pi)*erfcx(x)), erfc's hazard (-d/dx log(erfc(x))
    is 2*mills(x)). About x for large x, where exp(-x**2) and erfc(x) both underflow (from
    x = 9.2 in float32); about exp(-x**2)/(2*sqrt(pi)) for x << 0.

    Its derivative is 2*mills(x)*mills_gap(x): log(erfc(u)) and the forms around it keep
    their derivatives in the vocabulary.
    """

    nargs = 1

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        x = self.args[0]
        return 2 * self * mills_gap(x)

    def _eval_rewrite_as_exp(self, x: sp.Expr, **kwargs: object) -> sp.Expr:
        return _mills_naive(x)

    def _eval_is_extended_real(self) -> bool | None:
        return self.args[0].is_extended_real

    def _eval_is_positive(self) -> bool | None:
        return True if self.args[0].is_extended_real else None


class mills_gap(sp.Function):  # noqa: N801
    """mills(x) - x, computed without the cancellation: about 1/(2x) for large x (from erfc's
    continued fraction), about -x for x << 0.

    Its derivative is 2*mills(x)*mills_gap(x) - 1, which cancels for large x, where it is
    about -1/(2*x**2): mills_gap_slope computes it without.
    """

    nargs = 1

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        return mills_gap_slope(self.args[0])

    def _eval_rewrite_as_exp(self, x: sp.Expr, **kwargs: object) -> sp.Expr:
        return _mills_naive(x) - x

    def _eval_is_extended_real(self) -> bool | None:
        return self.args[0].is_extended_real

    def _eval_is_positive(self) -> bool | None:
        return True if self.args[0].is_extended_real else None


class mills_gap_slope(sp.Function):  # noqa: N801
    """2*mills(x)*mills_gap(x) - 1, mills_gap's derivative, computed without the cancellation:
    about -1/(2*x**2) for large x (the inverse Mills ratio's f'' is 0 from x = 9 in float32
    as written), about -1 for x << 0.

    Its derivative is 2*mills(x)*mills_curvature(x).
    """

    nargs = 1

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        x = self.args[0]
        return 2 * mills(x) * mills_curvature(x)

    def _eval_rewrite_as_exp(self, x: sp.Expr, **kwargs: object) -> sp.Expr:
        m = _mills_naive(x)
        return 2 * m * (m - x) - 1

    def _eval_is_extended_real(self) -> bool | None:
        return self.args[0].is_extended_real

    def _eval_is_negative(self) -> bool | None:
        return True if self.args[0].is_extended_real else None


class mills_curvature(sp.Function):  # noqa: N801
    """2*mills_gap(x)**2 + mills_gap_slope(x), mills''/(2*mills), computed without the
    cancellation: about 1/(2*x**4) for large x, where the two terms are about +-1/(2*x**2);
    about 2*x**2 - 1 for x << 0.

    Its derivative, 4*mills_gap(x)*mills_gap_slope(x) + 2*mills(x)*mills_curvature(x),
    cancels for large x (beyond the orders the judge measures).
    """

    nargs = 1

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        x = self.args[0]
        return 4 * mills_gap(x) * mills_gap_slope(x) + 2 * mills(x) * self

    def _eval_rewrite_as_exp(self, x: sp.Expr, **kwargs: object) -> sp.Expr:
        m = _mills_naive(x)
        return 2 * (m - x) ** 2 + 2 * m * (m - x) - 1

    def _eval_is_extended_real(self) -> bool | None:
        return self.args[0].is_extended_real

    def _eval_is_positive(self) -> bool | None:
        return True if self.args[0].is_extended_real else None


class logcosh(sp.Function):  # noqa: N801
    """log(cosh(x)) without overflow of cosh."""

    nargs = 1

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        return sp.tanh(self.args[0])

    def _eval_rewrite_as_exp(self, x: sp.Expr, **kwargs: object) -> sp.Expr:
        return sp.log(sp.cosh(x))


class sinpi(sp.Function):  # noqa: N801
    """sin(pi*x) with x reduced exactly before pi multiplies it: pi*x rounds, and sin of
    the rounded product is wrong near sin's zeros (every integer x) and meaningless for
    |x| > 2**24, where x is an integer and sin(pi*x) is 0."""

    nargs = 1

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        return sp.pi * cospi(self.args[0])

    def _eval_rewrite_as_exp(self, x: sp.Expr, **kwargs: object) -> sp.Expr:
        return sp.sin(sp.pi * x)

    def _eval_is_extended_real(self) -> bool | None:
        return self.args[0].is_extended_real


class cospi(sp.Function):  # noqa: N801
    """cos(pi*x), reduced as sinpi."""

    nargs = 1

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        return -sp.pi * sinpi(self.args[0])

    def _eval_rewrite_as_exp(self, x: sp.Expr, **kwargs: object) -> sp.Expr:
        return sp.cos(sp.pi * x)

    def _eval_is_extended_real(self) -> bool | None:
        return self.args[0].is_extended_real


class ipow(sp.Function):  # noqa: N801
    """base**k kept as written.

    SymPy distributes integer powers over products ((a/b)**2 becomes
    a**2/b**2), which brings back the overflow that the grouping avoids.
    """

    nargs = 2

    @classmethod
    def eval(cls, base: sp.Expr, k: sp.Expr) -> sp.Expr | None:
        if k == 0:
            return sp.Integer(1)
        if base.is_number or base.is_Symbol:
            return base**k
        return None

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        base, k = self.args
        if argindex != 1:
            raise sp.ArgumentIndexError(self, argindex)
        return k * ipow(base, k - 1) if k != 2 else 2 * base

    def _eval_rewrite_as_exp(self, base: sp.Expr, k: sp.Expr, **kwargs: object) -> sp.Expr:
        return base**k


def is_held(e: sp.Basic) -> bool:
    """Whether `e` is ipow(u, 1): u held as written, a sum or product that SymPy would
    otherwise distribute or reorder."""
    return isinstance(e, ipow) and e.args[1] == 1


class clip(sp.Function):  # noqa: N801
    """x limited to [lo, hi]: keeps the branch of a regime that is not taken finite."""

    nargs = 3

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        # As tf.clip_by_value's gradient: 1 inside, 0 outside (the bounds are constants).
        x, lo, hi = self.args
        if argindex != 1:
            return sp.Integer(0)
        return sp.Heaviside(x - lo) * sp.Heaviside(hi - x)


class away(sp.Function):  # noqa: N801
    """x, or t where |x| < t: keeps a form away from its singular point at 0."""

    nargs = 2

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        # 1 where x is kept, 0 where t replaces it (t is a constant).
        x, t = self.args
        if argindex != 1:
            return sp.Integer(0)
        return sp.Heaviside(sp.Abs(x) - t)


class apart(sp.Function):  # noqa: N801
    """a, or where |a - b| < w, a point away from b (b + 1 where |b| < 1, else b/2): keeps a
    form away from its singular line a = b (generator.diagonal)."""

    nargs = 3

    def as_picks(self) -> sp.Expr:
        """The same as two wheres."""
        a, b, w = self.args
        return pick(sp.Abs(a - b) < w, pick(sp.Abs(b) < 1, b + 1, b / 2), a)

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        return self.as_picks().diff(self.args[argindex - 1]) if argindex < 3 else sp.Integer(0)


class polyval(sp.Function):  # noqa: N801
    """The polynomial with coefficients `coeffs` (highest degree first) at `x`, by Horner's rule."""

    nargs = 2

    def _eval_derivative(self, s: sp.Symbol) -> sp.Expr:
        # The coefficients are a Tuple of numbers, which SymPy cannot differentiate.
        coeffs, x = self.args
        n = len(coeffs) - 1
        if n == 0:
            return sp.Integer(0)
        slope = sp.Tuple(*(c * (n - i) for i, c in enumerate(coeffs[:-1])))
        return polyval(slope, x) * sp.diff(x, s)


class pick(sp.Function):  # noqa: N801
    """where(cond, a, b) that SymPy leaves alone: the guard of a branch's inputs.

    A Piecewise would be folded into the expression around it
    (1/Piecewise((x, c), (1, True)) becomes Piecewise((1/x, c), (1, True))),
    which undoes the guard.
    """

    nargs = 3

    def _eval_is_commutative(self) -> bool:
        # A condition is not commutative to SymPy (None), which would make every product
        # holding a pick noncommutative: -(a + b) then stays -1*(a + b), undistributed.
        return True

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        condition = self.args[0]
        if argindex == 2:
            return pick(condition, sp.Integer(1), sp.Integer(0))
        if argindex == 3:
            return pick(condition, sp.Integer(0), sp.Integer(1))
        return sp.Integer(0)


class by_dtype(sp.Function):  # noqa: N801
    """A constant that depends on the inputs' dtype: `wide` below float64 (float32, and the
    float16 and bfloat16 computed in float32), `narrow` for float64. A series regime's
    threshold: its polynomial is exact to float32 over a wider band than to float64.

    Not a number to SymPy (no value to fold), so that no rule or economy computes with it."""

    nargs = 2
    is_number = False

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        return sp.Integer(0)

    def _eval_is_extended_real(self) -> bool:
        return True

    def _eval_is_positive(self) -> bool | None:
        return True if all(a.is_positive for a in self.args) else None


class mul_exp(sp.Function):  # noqa: N801
    """c * exp(u), computed as (c * exp(u/2)) * exp(u/2).

    Far out, exp(u) alone overflows or flushes to zero where the product is
    still a normal number (x*exp(x) at x = -88, exp(x)/x at x = 90).
    """

    nargs = 2

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        c, u = self.args
        return mul_exp(sp.Integer(1), u) if argindex == 1 else self


class mul_pow(sp.Function):  # noqa: N801
    """c * b**w, computed as (c * b**(w/2)) * b**(w/2): mul_exp for a power, where b**w
    overflows while the product is a float. A power, not exp(w*log(b)): the rounding of
    w*log(b) near 88 costs exp 6 bits."""

    nargs = 3

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        c, b, w = self.args
        if argindex == 1:
            return mul_pow(sp.Integer(1), b, w)
        if argindex == 2:
            return mul_pow(c * w, b, w - 1)
        return mul_pow(c * sp.log(b), b, w)


class mul_no_nan(sp.Function):  # noqa: N801
    """a * b, but 0 wherever b is 0, even where a is inf or NaN (TF's multiply_no_nan).

    For a factor b that decays to 0 far out while a grows: y**2*sigmoid_slope(x*y) at
    x = y = 1e20 is inf*0 = NaN in float32, where the truth is 0.
    """

    nargs = 2

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        a, b = self.args
        return b if argindex == 1 else a


class exp_finite(sp.Function):  # noqa: N801
    """exp(u), but exp(87) in float32 (exp(708) in float64) where exp(u) would overflow.

    Far out a quotient of exponentials is inf/inf and a product inf*0 where the
    true value is finite; with the exponential held at a large finite value the
    other factors saturate too, and the result is the limit it approaches. Kept
    only as a repair: right wherever it changes a value (judge.repairs, generator.derive).
    """

    nargs = 1

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        return self


class finite(sp.Function):  # noqa: N801
    """u clipped to the dtype's finite range: u itself, but the largest float where u
    overflowed. In an exp's argument beside exp(u) (stabilize.exp_argument_beside_exp) the
    sum is then the exponential's inf, not inf - inf."""

    nargs = 1

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        return sp.Integer(1)

    def _eval_is_extended_real(self) -> bool | None:
        return self.args[0].is_extended_real


class _RoundingError(sp.Function):
    """An argument's rounding error, as the module computes it: 0 in exact arithmetic, so 0 to
    SymPy's calculus and to mpmath, and real (stabilize.compensate_arguments)."""

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        return sp.Integer(0)

    def _eval_is_extended_real(self) -> bool:
        return True


class add_error(_RoundingError):  # noqa: N801
    """The rounding error of the float sum a + b: a + b - fl(a + b), exactly (Knuth's TwoSum).

    In float32 it is what a steep function of a rounded sum needs to be right: exp(x + y)
    at x + y = -78 has lost ulp(78)/2 = 4e-6 in its argument, 64 ulps of its value, and
    exp(fl(x + y))*(1 + add_error(x, y)) has not.
    """

    nargs = 2


class sub_error(_RoundingError):  # noqa: N801
    """The rounding error of the float difference a - b, as add_error for a + b."""

    nargs = 2


class product_error(_RoundingError):  # noqa: N801
    """The rounding error of the float product a*b: a*b - fl(a*b), exactly (Dekker's
    TwoProduct, the halves split by masking the low bits). 0 in exact arithmetic, as
    add_error: exp(x*y) at x*y = -80 has lost 4e-6 in its argument, 64 ulps of its value.

    With a third argument r, a constant a's own rounding: r*b is added (a*b for a the
    exact constant, where the module multiplies by its float, a - r)."""

    nargs = (2, 3)


class square_error(_RoundingError):  # noqa: N801
    """The rounding error of the float square u*u, as product_error(u, u) but cheaper: with u
    split as high + low, u**2 = high**2 + low*(u + high), of which only the last product
    rounds, far below the error it is added to."""

    nargs = 1


class division_error(_RoundingError):  # noqa: N801
    """The rounding error of the float quotient a/b: a/b - fl(a/b) = (a - q*b)/b for
    q = fl(a/b), whose remainder a - q*b is exact: (a - fl(q*b)) - product_error(q, b)."""

    nargs = 2


class bounded_error(_RoundingError):  # noqa: N801
    """error, an argument's rounding error carried through several operations, where
    |u| <= 4096 and it is finite; 0 elsewhere (there each function corrected has saturated,
    and an intermediate may have overflowed: inf*0)."""

    nargs = 2


class lift(sp.Function):  # noqa: N801
    """u, a decaying factor's argument, moved toward 0 where the factor is far out in its
    tail: u + 40 where u < -80 in float32 (u + 600 where u < -700 in float64), exactly, as
    u's ulp divides 40 there. Paired with `lowered`, which scales the product back.

    sigmoid(-90) = 8e-40 is subnormal and flushed to 0, so x*sigmoid(x) there is 0 where
    the truth, -7.4e-38, is a normal number; x*sigmoid(-50) is not, and its product with
    exp(-40) is right. To SymPy and mpmath both are the identity (stabilize.scale_tails):
    the factors lifted decay as exp(u) (or exp(-2u) beyond 20, with u' = -lift(-2u)/2) to
    a relative error below exp(-20) in float32 (exp(-50) in float64), far below an ulp.
    """

    nargs = 1

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        return sp.Integer(1)

    def _eval_is_extended_real(self) -> bool | None:
        return self.args[0].is_extended_real


class lowered(sp.Function):  # noqa: N801
    """p, a product or sum whose decaying factors take `lift(u)`, times exp(-40) where
    u < -80 in float32 (exp(-600) where u < -700 in float64): p as its math says. Last, so
    the small factors never meet before the rest has multiplied them."""

    nargs = 2

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        return sp.Integer(1) if argindex == 1 else sp.Integer(0)

    def _eval_is_extended_real(self) -> bool | None:
        return self.args[0].is_extended_real


class lowered_no_nan(lowered):  # noqa: N801
    """lowered(p, u), but 0 where p is inf or NaN and u is lifted: p guards an inf*0 with
    multiply_no_nan (0 where its decaying factor flushes), and the lifted factor no longer
    flushes. The true value there is at most |p|*exp(-80), never inf; (1 + x**2)*
    softplus(-3x)'s slope at x = 32.6 was NaN (exp(3x) = inf beside softplus(-3x) = 0)."""


class sigmoid_from_exp(sp.Function):  # noqa: N801
    """sigmoid(u), printed as e/(1 + e) below 0 and 1/(1 + e) above, e = exp(-|u|): within
    2 ulps, where TF's sigmoid kernel is up to 5.7 ulps off below 0 (float32, measured;
    stabilize.precise_sigmoids). The judge's NumPy sigmoid is this one already."""

    nargs = 1

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        return sigmoid(self.args[0]) * sigmoid(-self.args[0])

    def _eval_is_extended_real(self) -> bool | None:
        return self.args[0].is_extended_real


class compensated_sum(sp.Function):  # noqa: N801
    """total, a sum of two terms, plus its rounding error `error` carried through the
    operations that compute its terms (where that is finite; 0 where an intermediate
    overflowed): total in math. Printed as total - (-error), a subtraction: Grappler's
    arithmetic optimizer gathers a chain of additions into one AddN and sums it in its own
    order, (1 + t) + e as 1 + (t + e), where e, far below t's ulp, is lost."""

    nargs = 2

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        return sp.Integer(1) if argindex == 1 else sp.Integer(0)

    def _eval_is_extended_real(self) -> bool | None:
        return self.args[0].is_extended_real


class split_power(sp.Function):  # noqa: N801
    """u**p for a number p that float32 does not hold (stabilize.compensate_powers), with
    `hi` and `lo` (by_dtype constants) the dtype's p rounded toward 0 and the rest. Printed
    as pow(u, hi)*pow(u, lo): TF's pow(u, p) rounds p to the dtype first, and that error
    times log(u) is the result's relative error, 2e-6 (5 bits) for u**0.9 at u = 1e38 in
    float32. u**p in math."""

    nargs = 4

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        u, p = self.args[:2]
        return p * u ** (p - 1) if argindex == 1 else sp.Integer(0)

    def _eval_is_extended_real(self) -> bool | None:
        return (self.args[0] ** self.args[1]).is_extended_real


def naive(expr: sp.Expr, keep: tuple[type, ...] = ()) -> sp.Expr:
    """The expression with every stable primitive but those in `keep` replaced by its textbook
    definition."""
    replacements = {
        sigmoid: lambda x: 1 / (1 + sp.exp(-x)),
        sigmoid_slope: lambda x: 1 / (sp.exp(x) + 2 + sp.exp(-x)),
        softplus: lambda x: sp.log(1 + sp.exp(x)),
        tanh_softplus: lambda x: sp.tanh(sp.log(1 + sp.exp(x))),
        tanh_softplus_slope: lambda x: 4 * sp.exp(x) * (1 + sp.exp(x)) / (sp.exp(x) * (sp.exp(x) + 2) + 2) ** 2,
        logaddexp: lambda a, b: sp.log(sp.exp(a) + sp.exp(b)),
        log_mix: lambda a, b, p: sp.log(p * sp.exp(a) + (1 - p) * sp.exp(b)),
        log1mexp: lambda x: sp.log(1 - sp.exp(-x)),
        log1pmx: lambda x: sp.log(1 + x) - x,
        expm1mx: lambda x: sp.exp(x) - 1 - x,
        xlogy: lambda a, b: a * sp.log(b),
        xlog1py: lambda a, b: a * sp.log(1 + b),
        hypot: lambda a, b: sp.sqrt(a**2 + b**2),
        hypot_ratio: lambda a, b: a / sp.sqrt(a**2 + b**2),
        hypot_ratio_gap: lambda a, b: (a - b) / sp.sqrt(a**2 + b**2),
        pnorm: lambda a, b, p: (sp.Abs(a) ** p + sp.Abs(b) ** p) ** (1 / p),
        pnorm_ratio: lambda a, b, p, q: (sp.Abs(a) / (sp.Abs(a) ** p + sp.Abs(b) ** p) ** (1 / p)) ** q,
        logcosh: lambda x: sp.log(sp.cosh(x)),
        sinpi: lambda x: sp.sin(sp.pi * x),
        cospi: lambda x: sp.cos(sp.pi * x),
        mills: _mills_naive,
        mills_gap: lambda x: mills_gap(x)._eval_rewrite_as_exp(x),
        mills_gap_slope: lambda x: mills_gap_slope(x)._eval_rewrite_as_exp(x),
        mills_curvature: lambda x: mills_curvature(x)._eval_rewrite_as_exp(x),
        # Unevaluated: SymPy's erfc(-u) would be 2 - erfc(u), which mpmath cancels for u >> 0.
        erfc: lambda x: sp.erfc(x, evaluate=False),
        ipow: lambda base, k: base**k,
        expm1: lambda x: sp.exp(x) - 1,
        log1p: lambda x: sp.log(1 + x),
        pick: lambda condition, a, b: sp.Piecewise((a, condition), (b, True)),
        mul_exp: lambda c, u: c * sp.exp(u),
        mul_pow: lambda c, b, w: c * b**w,
        mul_no_nan: lambda a, b: a * b,
        exp_finite: sp.exp,
        finite: lambda u: u,
        add_error: lambda a, b: sp.Integer(0),
        sub_error: lambda a, b: sp.Integer(0),
        product_error: lambda *args: sp.Integer(0),
        square_error: lambda u: sp.Integer(0),
        division_error: lambda a, b: sp.Integer(0),
        bounded_error: lambda error, u: sp.Integer(0),
        compensated_sum: lambda total, error: total,
        split_power: lambda u, p, hi, lo: u**p,
        lift: lambda u: u,
        lowered: lambda p, u: p,
        lowered_no_nan: lambda p, u: p,
        sigmoid_from_exp: lambda x: 1 / (1 + sp.exp(-x)),
        lbeta: lambda a, b: lgamma(a) + lgamma(b) - lgamma(a + b),
        lgamma_diff: lambda y, x: lgamma(y) - lgamma(y + x),
        lgamma_kernel: lambda a, x: (a - 1) * sp.log(x) - x - lgamma(a),
        log_digamma_gap: lambda x, a: sp.log(x) - sp.polygamma(0, a),
        polygamma_diff: lambda n, y, x: sp.polygamma(n, y) - sp.polygamma(n, y + x),
    }
    # Only the primitives present, in this order, looked for again after each replacement
    # (should a definition bring one in): each replace walks the whole tree, and the printer
    # asks this of every constant (6886 of them for log(erf(y) - erf(x)), 1 ms each with all
    # 40 walks).
    present = {type(node) for node in sp.preorder_traversal(expr)}
    for func, definition in replacements.items():
        if func in keep:
            continue
        # Again while one is left: SymPy's replace does not look again at a node rebuilt from
        # replaced arguments (xlog1py(xlog1py(y, 0), xlog1py(0, 0)) left xlog1py(0, 0), which
        # lambdify could not print: NameError, fuzz seed 119).
        for _ in range(4):
            if not any(issubclass(kind, func) for kind in present):
                break
            expr = expr.replace(func, definition)
            present = {type(node) for node in sp.preorder_traversal(expr)}
    return expr


def numeric(c: sp.Expr, digits: int = 20) -> sp.Expr:
    """A constant's value to `digits`, through its textbook form: SymPy cannot evaluate our
    primitives themselves (|softplus(0)| > 1 and atan(softplus(10)) raised TypeError).
    A constant that is 0 in a form SymPy does not reduce, lgamma(1/2) - log(pi)/2, is 0:
    evalf cannot tell it from 0 at the precisions it tries, and plain N gives its noise
    (5.4e-166, printed into a module's sum)."""
    value = naive(c)
    try:
        return sp.N(value, digits, strict=True)
    except PrecisionExhausted:
        return sp.N(value, digits, chop=True)


class _real_abs(sp.Function):  # noqa: N801
    """abs(u) of a u that is real wherever the expression is defined: its slope is sign(u)."""

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        return _real_sign(self.args[0])


class _real_sign(sp.Function):  # noqa: N801
    """sign(u) of a u that is real wherever the expression is defined: its slope is the
    DiracDelta that abs's and sign's slopes have for a real argument."""

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        return 2 * sp.DiracDelta(self.args[0])


_AS_REAL = {sp.Abs: _real_abs, sp.sign: _real_sign}
_AS_SYMPY = {_real_abs: sp.Abs, _real_sign: sp.sign}


def real_diff(expr: sp.Expr, var: sp.Symbol) -> sp.Expr:
    """d expr/d var, with abs and sign of any argument differentiated as of a real one.

    The generated functions are real: where u = log(x) or x/y has a value, it is real. SymPy
    cannot assume that of an argument that is complex or infinite elsewhere (log(x) for
    x < 0, x/y at y = 0), and leaves d abs(u)/dx as a Derivative of re(u) and im(u)."""
    if not expr.has(sp.Abs, sp.sign):
        return sp.diff(expr, var)
    held = expr.replace(lambda e: type(e) in _AS_REAL, lambda e: _AS_REAL[type(e)](*e.args))
    slope = sp.diff(held, var)
    return slope.replace(lambda e: type(e) in _AS_SYMPY, lambda e: _AS_SYMPY[type(e)](*e.args))


def kink_slopes_as_zero(form: sp.Expr) -> sp.Expr:
    """`form` with the slope of abs or sign at its kink, DiracDelta (see real_diff), taken as
    0: the derivative almost everywhere."""
    return form.replace(sp.DiracDelta, lambda *args: sp.Integer(0))


_Rewrite = Callable[[sp.Basic], "sp.Basic | None"]
_REPLACED: dict[_Rewrite, dict[sp.Basic, sp.Basic]] = {}
_REPLACED_MAX = 200_000


def replace_each(expr: sp.Basic, rewrite: _Rewrite) -> sp.Basic:
    """`expr` with each node, bottom up, replaced by `rewrite(node)` where that is not None,
    as SymPy's `replace(query, value)` does, but each distinct subtree rewritten once and
    remembered across calls (per `rewrite`, which must be a function of the node alone).
    SymPy's replace walks the tree, not its shared subtrees, and the judge asks it of every
    candidate form: in log(erf(y) - erf(x)) at order 2, 7,800 replaces walked 3.2 million
    nodes, a third of the generation."""
    if sum(map(len, _REPLACED.values())) >= _REPLACED_MAX:
        _REPLACED.clear()
    return _replace_each(expr, rewrite, _REPLACED.setdefault(rewrite, {}))


def _replace_each(expr: sp.Basic, rewrite: _Rewrite, memo: dict[sp.Basic, sp.Basic]) -> sp.Basic:
    try:
        return memo[expr]
    except KeyError:
        pass
    result = expr
    if expr.args:
        new_args = tuple(_replace_each(arg, rewrite, memo) for arg in expr.args)
        if new_args != expr.args:
            # A where as it was, branch for branch: SymPy's Piecewise evaluation merges
            # branches, which was half the time of the judge's constants in
            # (exp(x) - exp(y))/(x - y) at order 2, and a where that becomes one of its
            # branches reorders the sum around it (judge._Where).
            options = {"evaluate": False} if isinstance(expr, sp.Piecewise) else {}
            result = expr.func(*new_args, **options)
    replaced = rewrite(result)
    memo[expr] = result = result if replaced is None else replaced
    return result


def factor_polynomial(expr: sp.Expr) -> sp.Expr:
    """sp.factor(expr), but with floats in it only its terms' common factors (factor_terms):
    SymPy factors a polynomial with float coefficients over the rationals, each float a
    fraction of 17 digits and more, and Wang's algorithm looks for primes beyond them (27 s of
    the 44 that atan2(asinh(asin(x)), log_sigmoid(2)) took to generate, its constant
    -0.1269...). Each float as a symbol of its own was slower still (over 300 s): a
    polynomial in more generators."""
    return sp.factor_terms(expr) if expr.has(sp.Float) else sp.factor(expr)
