"""Derivatives that are finite where an intermediate of the textbook form is not, through the
generated module and nested tapes, in float32, against mpmath.

- hypot's slope x/hypot(x, y) at x = y = -3e38: hypot overflows, the slope is -0.707
  (generator.primitives.hypot_ratio scales first).
- Gaussian NLL's (x - m)/s**2 at x = m, s = 1e-36: s**2 flushes to 0, the value is 0
  (the judge's stepwise quotient, stabilize.divide_stepwise).
"""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
import sympy as sp

from partials import tf_partials

TOL = 4e-7  # a few float32 ulps, relative


def _check(
    fn,
    truth: sp.Expr,
    symbols: list[sp.Symbol],
    points: list[tuple[float, ...]],
    tol: float = TOL,
    order: int = 2,
) -> None:
    import tensorflow as tf

    columns = [
        tf.constant([p[i] for p in points], dtype=tf.float32)
        for i in range(len(symbols))
    ]
    got = tf_partials(tf, fn, columns, order)
    tiny = float(np.finfo(np.float32).tiny)
    for index, values in got.items():
        if isinstance(
            truth, dict
        ):  # the partials, written out where SymPy's would cancel
            expr = truth[index]
        else:
            expr = truth
            for i in index:
                expr = sp.diff(expr, symbols[i])
        values = values.numpy().astype(np.float64)
        for point, value in zip(points, values):
            with mpmath.workdps(60):
                true = float(
                    expr.subs(
                        dict(zip(symbols, (sp.Float(c, 60) for c in point)))
                    ).evalf(60)
                )
            true = 0.0 if abs(true) < tiny else true
            if abs(true) > float(np.finfo(np.float32).max):
                assert value == np.copysign(np.inf, true), (
                    index,
                    point,
                    value,
                    true,
                )  # overflow is right
                continue
            assert np.isfinite(value), (index, point, value, true)
            assert abs(value - true) <= tol * abs(true), (index, point, value, true)


def test_hypot_slopes_where_hypot_overflows(load_module) -> None:
    x, y = sp.symbols("x y", real=True)
    fn = load_module("sqrt(x**2 + y**2)", "norm", ["x", "y"]).norm
    big = 3.0e38
    points = [(-big, -big), (big, -big), (big, 1.0), (2.5e38, 1.5e38), (3.0, 4.0)]
    # f itself overflows at the first points (4.2e38): only the partials are checked there.
    import tensorflow as tf

    with tf.GradientTape() as tape:
        xs = [
            tf.constant([p[0] for p in points], tf.float32),
            tf.constant([p[1] for p in points], tf.float32),
        ]
        tape.watch(xs)
        value = fn(*xs)
    assert np.isposinf(value.numpy()[:2]).all()
    slopes = [g.numpy() for g in tape.gradient(value, xs)]
    assert np.allclose(slopes[0][:2], [-0.70710677, 0.70710677], rtol=TOL)
    finite = [p for p in points if np.hypot(*p) < 3.4e38]
    _check(fn, sp.sqrt(x**2 + y**2), [x, y], finite)


@pytest.mark.parametrize(
    "x_m_s", list(itertools.product([1.4e-36], [1.4e-36, 0.0], [1.4e-36, 1e-30]))
)
def test_gaussian_nll_with_a_tiny_scale(load_module, x_m_s) -> None:
    x, m, s = sp.symbols("x m s", real=True)
    fn = load_module("log(s) + (x - m)**2/(2*s**2)", "nll", ["x", "m", "s"]).nll
    _check(fn, sp.log(s) + (x - m) ** 2 / (2 * s**2), [x, m, s], [x_m_s])


def test_gaussian_nll_in_log_scale_at_a_perfect_fit(load_module) -> None:
    # (x - y)*exp(-2z) at x = y, z = -50: exp(100) overflows float32, and 0*inf is NaN where
    # the truth is 0 (mul_exp is 0 where its factor is). d2f/dx2 = exp(100) overflows: inf.
    x, y, z = sp.symbols("x y z", real=True)
    text = "(x - y)**2/(2*exp(2*z)) + z"
    fn = load_module(text, "nll_log_scale", ["x", "y", "z"]).nll_log_scale
    truth = (x - y) ** 2 / (2 * sp.exp(2 * z)) + z
    _check(
        fn, truth, [x, y, z], [(1.5, 1.5, -50.0), (1.0, 2.0, -3.0), (0.25, -0.5, 2.0)]
    )


def test_gaussian_nll_in_log_scale_where_the_square_overflows(load_module) -> None:
    # (x - y)**2*exp(-2z) at x = 1e20, z = 30: the square overflows, the product is 4.4e13
    # ((x - y)*exp(-z))**2 (balance_power_exp).
    x, y, z = sp.symbols("x y z", real=True)
    text = "(x - y)**2/(2*exp(2*z)) + z"
    fn = load_module(text, "nll_log_scale", ["x", "y", "z"]).nll_log_scale
    truth = (x - y) ** 2 / (2 * sp.exp(2 * z)) + z
    _check(fn, truth, [x, y, z], [(1e20, 0.5, 30.0), (-3e25, 2.0, 45.0)], tol=8e-7)


def test_polar_slope_where_the_squares_overflow_or_flush(load_module) -> None:
    # d/dy atan2(y, x)*hypot(x, y) = atan2(y, x)*y/h + x/h: SymPy's -y/(x**2 + y**2) times h
    # was inf/inf at x = y = -1e25 and 0/0 at -1e-20 (squares_to_hypot).
    x, y = sp.symbols("x y", real=True)
    fn = load_module("atan2(y, x)*hypot(x, y)", "polar", ["x", "y"]).polar
    truth = {
        (): sp.atan2(y, x) * sp.sqrt(x**2 + y**2),
        (0,): sp.atan2(y, x) * x / sp.sqrt(x**2 + y**2) - y / sp.sqrt(x**2 + y**2),
        (1,): sp.atan2(y, x) * y / sp.sqrt(x**2 + y**2) + x / sp.sqrt(x**2 + y**2),
    }
    import tensorflow as tf

    points = [(-1e25, -1e25), (-1e-20, -1e-20), (3.0, -4.0)]
    columns = [tf.constant([p[i] for p in points], tf.float32) for i in range(2)]
    got = tf_partials(tf, fn, columns, 1)
    for index in ((), (0,), (1,)):
        for point, value in zip(points, got[index].numpy()):
            at = {x: sp.Float(point[0], 60), y: sp.Float(point[1], 60)}
            true = float(truth[index].subs(at).evalf(60))
            assert abs(value - true) <= 4e-7 * abs(true), (index, point, value, true)


def test_softmax_probability_where_both_logits_are_large(load_module) -> None:
    # exp(x - logaddexp(x, y)) at x = y = -1e19 was exp(0) = 1 (logaddexp rounds to x); the
    # truth is 1/2, its slopes +-1/4 (logaddexp_shift: -softplus(y - x)).
    x, y = sp.symbols("x y", real=True)
    fn = load_module("exp(x - logaddexp(x, y))", "softmax_p", ["x", "y"]).softmax_p
    truth = 1 / (1 + sp.exp(y - x))
    _check(fn, truth, [x, y], [(-1e19, -1e19), (3e30, 3e30), (2.0, -1.0)])


def test_softplus_pair_where_its_terms_cancel(load_module) -> None:
    # softplus(x) + softplus(y) - softplus(x + y) at x = -94, y = 1.1e17 is y - (x + y) +
    # softplus(x) = 0 as written (truth 94): reflection_split reflects the softplus of each
    # positive argument at once (a where over their signs). Its d2f/dxdy is
    # -sigmoid_slope(x + y) once exp(x)*exp(y), as cancel writes it, is exp(x + y) again: a
    # where of six terms was 0 at x = y = -38 (27 bits).
    x, y = sp.symbols("x y", real=True)
    text = "log(1 + exp(x)) + log(1 + exp(y)) - log(1 + exp(x + y))"
    fn = load_module(text, "softplus_pair", ["x", "y"]).softplus_pair
    truth = sp.log(1 + sp.exp(x)) + sp.log(1 + sp.exp(y)) - sp.log(1 + sp.exp(x + y))
    _check(fn, truth, [x, y], [(-94.0, 1.1e17), (-38.0, -38.0), (5.0, 7.0), (-3.0, -40.0), (30.0, 50.0)])


def test_weighted_softplus_curvature_where_its_terms_cancel(load_module) -> None:
    # log(1 + x*exp(y)) is a where at t = x*exp(y) = 2**24 (log1p of the product, then
    # softplus of y + log|x|); below it d2f/dy2 as differentiated is t/(1 + t) - t**2/(1 + t)**2,
    # which cancels as t grows (13.7 bits at x = y = 7.58). The branch's quotient t/(1 + t)**2
    # (derive._branches_simplified) does not.
    x, y = sp.symbols("x y", real=True)
    fn = load_module("log(1 + x*exp(y))", "weighted_softplus", ["x", "y"]).weighted_softplus
    truth = sp.log(1 + x * sp.exp(y))
    _check(fn, truth, [x, y], [(7.5757575, 7.5757575), (4.0, 4.545454), (0.5, -3.0), (2.0, 12.0)])


def test_mixing_entropy_slope_far_from_one(load_module) -> None:
    # x*log(x) + y*log(y) - (x + y)*log(x + y) and its slope log(x) - log(x + y): at x = y =
    # 4e-36 each log is -80 and their sums cancel (6-7 bits lost); mixing_entropy's
    # x*log1p(y/x) + y*log1p(x/y) and log1p(y/x) do not.
    x, y = sp.symbols("x y", real=True)
    text = "x*log(x) + y*log(y) - (x + y)*log(x + y)"
    fn = load_module(text, "mixing", ["x", "y"]).mixing
    import tensorflow as tf

    points = [(4e-36, 4e-36), (1e-20, 3e-20), (1e20, 1e20), (2.0, 1e6)]
    columns = [tf.constant([p[i] for p in points], tf.float32) for i in range(2)]
    got = tf_partials(tf, fn, columns, 1)
    entropy = x * sp.log(x / (x + y)) + y * sp.log(
        y / (x + y)
    )  # f, with no cancellation
    for index, slope in (
        ((), entropy),
        ((0,), sp.log(x / (x + y))),
        ((1,), sp.log(y / (x + y))),
    ):
        for point, value in zip(points, got[index].numpy()):
            at = {x: sp.Float(point[0], 60), y: sp.Float(point[1], 60)}
            true = float(slope.subs(at).evalf(60))
            assert abs(value - true) <= 4e-7 * abs(true), (index, point, value, true)


def test_log1mexp_second_derivative_near_the_overflow(load_module) -> None:
    # f'' = -1/(expm1(x)*expm1(-x)): at x = 7e-20 the product (-4.9e-39) flushes to 0 in
    # float32 while f'' = -2.0e38 is finite; dividing one factor at a time keeps it.
    x = sp.Symbol("x", real=True)
    fn = load_module("log(1 - exp(-x))", "log1mexp", ["x"]).log1mexp
    _check(fn, sp.log(1 - sp.exp(-x)), [x], [(7e-20,), (1e-10,), (2.0,)])


def test_two_way_softmax_where_both_exponentials_overflow_or_flush(load_module) -> None:
    # exp(x)/(exp(x) + exp(y)) is inf/inf at x = y = 100 and 0/0 at x = y = -110 (the rule
    # softmax_pair makes it sigmoid(x - y)); its partials are sigmoid slopes there.
    x, y = sp.symbols("x y", real=True)
    fn = load_module("exp(x)/(exp(x) + exp(y))", "softmax2", ["x", "y"]).softmax2
    points = [
        (100.0, 100.0),
        (-110.0, -110.0),
        (100.0, 95.0),
        (-3e38, -3e38),
        (1.5, -2.0),
    ]
    _check(fn, sp.exp(x) / (sp.exp(x) + sp.exp(y)), [x, y], points)


def test_difference_of_exponentials_over_their_sum(load_module) -> None:
    # (exp(x) - exp(y))/(exp(x) + exp(y)) is tanh((x - y)/2): as written it is NaN where
    # both exps overflow or flush (the truth 0 at x = y = 100, -110, -3e38; 1 at x = 100,
    # y = 0), and it cancels near x = y (2**-21 at x = 1 + 2**-20, y = 1). The softmax rule
    # takes the quotient as sigmoid(x - y) - sigmoid(y - x), which sigmoid_difference makes
    # the tanh. Before, f was 62.9% within 3 bits on the judge's grid, its slopes 93.1%.
    x, y = sp.symbols("x y", real=True)
    text = "(exp(x) - exp(y))/(exp(x) + exp(y))"
    fn = load_module(text, "tanh_gap", ["x", "y"]).tanh_gap
    points = [
        (100.0, 100.0),
        (-110.0, -110.0),
        (100.0, 0.0),
        (-3e38, -3e38),
        (1 + 2.0**-20, 1.0),
        (1.5, -2.0),
    ]
    _check(fn, (sp.exp(x) - sp.exp(y)) / (sp.exp(x) + sp.exp(y)), [x, y], points)


def test_sum_of_exponentials_over_their_difference(load_module) -> None:
    # (exp(x) + exp(y))/(exp(x) - exp(y)) is coth((x - y)/2): as written inf/inf where both
    # exps overflow (x = 100, y = 95: the truth 1.0135) and 0/0 where both flush. The softmax
    # rule's shares over a difference make it -1/expm1(y - x) + 1/expm1(x - y), two terms
    # of one sign. Before, it was 64.9 / 69.0 / 66.1% within 3 bits on the judge's grid.
    x, y = sp.symbols("x y", real=True)
    fn = load_module("(exp(x) + exp(y))/(exp(x) - exp(y))", "coth_gap", ["x", "y"]).coth_gap
    points = [(100.0, 95.0), (-110.0, -111.0), (95.0, 100.0), (1.5, -2.0), (3e38, 1.0)]
    _check(fn, (sp.exp(x) + sp.exp(y)) / (sp.exp(x) - sp.exp(y)), [x, y], points)


def test_log_of_a_divided_difference_of_exponentials(load_module) -> None:
    # log((exp(x) - exp(y))/(x - y)) is log(inf) where an exp overflows (x = 89, y = 0: the
    # truth 84.5). log_of_quotient takes it apart as log((exp(x) - exp(y))*sign(x - y)) -
    # log|x - y|, and the first log is the larger argument plus log1mexp of their distance.
    # Before, f was 42.9% within 3 bits on the judge's grid. Where both exps overflow
    # (x = 100, y = 99: the truth 99.5) the condition of log_of_ratio's where computed
    # exp(x) - exp(y) = inf - inf = NaN, which no comparison holds, and took log1p(NaN); it
    # now takes the far form where either exp is beyond the range.
    x, y = sp.symbols("x y", real=True)
    fn = load_module("log((exp(x) - exp(y))/(x - y))", "log_dd", ["x", "y"]).log_dd
    points = [(89.0, 0.0), (95.0, 1.5), (88.5, 89.5), (-3.0, 2.0), (100.0, 99.0), (99.0, 100.0)]
    _check(fn, sp.log((sp.exp(x) - sp.exp(y)) / (x - y)), [x, y], points, order=1)


@pytest.mark.parametrize(
    ("text", "truth", "points"),
    [
        # The divided difference of exp: as written exp(89) overflows before the division
        # by 89 brings it back (the truth 5.0e36), and its slope's two terms are inf - inf
        # where both overflow (x = 2e6, y = -92: the truth is +inf). exps_factored takes
        # the larger exp out of the numerator, half before the division, half after.
        (
            "(exp(x) - exp(y))/(x - y)",
            lambda x, y: (sp.exp(x) - sp.exp(y)) / (x - y),
            [(89.0, 0.0), (-95.0, 90.0), (30.0, -1e36), (2e6, -92.0), (1.5, -2.0)],
        ),
        # exp(-x) below the line: the common denominator has exp(x)*exp(y) in it.
        (
            "(exp(-x) - exp(-y))/(y - x)",
            lambda x, y: (sp.exp(-x) - sp.exp(-y)) / (y - x),
            [(-89.0, 0.0), (90.0, -95.0), (-30.0, 1e36), (-1.5, 2.0)],
        ),
        # Over a common denominator, (y*exp(x) - x*exp(y))/(x*y): NaN as written where both
        # terms overflow (x = y = 95: the truth 0; x = 3.3e9, y = 2.4e30: the truth -inf).
        (
            "exp(x)/x - exp(y)/y",
            lambda x, y: sp.exp(x) / x - sp.exp(y) / y,
            [(95.0, 95.0), (3.3e9, 2.4e30), (89.0, 0.5), (1.5, -2.0)],
        ),
        # Its reciprocal: (x - y)/exp(89) flushes to 0 as written (the truth 2.0e-37), and
        # the slope's ((exp(x) - exp(y)) - (x - y)*exp(x))/(exp(x) - exp(y))**2 is inf/inf
        # where the exps overflow (x = 3.7e25, y = 89: the truth -0).
        (
            "(x - y)/(exp(x) - exp(y))",
            lambda x, y: (x - y) / (sp.exp(x) - sp.exp(y)),
            [(89.0, 0.0), (-95.0, 90.0), (3.7e25, 89.0), (1.5, -2.0)],
        ),
    ],
    ids=["divided_difference", "below_the_line", "difference_of_rates", "reciprocal"],
)
def test_exponentials_factored_out_of_a_quotient(load_module, text, truth, points) -> None:
    x, y = sp.symbols("x y", real=True)
    # Named as test_diagonal names the divided difference: one generation per worker for both.
    fn = load_module(text, "dd").dd
    _check(fn, truth(x, y), [x, y], points, order=1)


def test_log_of_a_product_of_exps_over_their_sum(load_module) -> None:
    # exp(x)*exp(y)/(exp(x) + exp(y)) is 1/(exp(-x) + exp(-y)); product_past_its_factors
    # took it as exp(y - softplus(y - x)), which is exp(0) = 1 at x = 20, y = 3.7e25 (both
    # terms round to y; the truth is exp(20)). logaddexp_shift takes both leaves in:
    # exp(-logaddexp(-x, -y)). Before, f was 90.8% within 3 bits on the judge's grid.
    x, y = sp.symbols("x y", real=True)
    text = "exp(x)*exp(y)/(exp(x) + exp(y))"
    fn = load_module(text, "soft_min", ["x", "y"]).soft_min
    points = [(20.0, 3.7e25), (3.7e25, 20.0), (2.0, 1.4e19), (-5.0, 1.3e11), (1.5, -2.0), (100.0, 100.0)]
    _check(fn, sp.exp(x) * sp.exp(y) / (sp.exp(x) + sp.exp(y)), [x, y], points, order=1)


@pytest.mark.parametrize(
    ("text", "truth"),
    [
        (
            "log(exp(x) + exp(y) + exp(z))",
            lambda x, y, z: sp.log(sp.exp(x) + sp.exp(y) + sp.exp(z)),
        ),
        (
            "exp(x)/(exp(x) + exp(y) + exp(z))",
            lambda x, y, z: sp.exp(x) / (sp.exp(x) + sp.exp(y) + sp.exp(z)),
        ),
    ],
    ids=["logsumexp", "softmax"],
)
def test_three_way_logsumexp_and_softmax(load_module, text, truth) -> None:
    # At 1e30 a logaddexp of two inputs rounds their log(2) away: the partials (the softmax,
    # 1/3 each) come from the differences of the inputs, which are exact there.
    x, y, z = sp.symbols("x y z", real=True)
    fn = load_module(text, "lse3", ["x", "y", "z"]).lse3
    points = [
        (100.0, 100.0, 100.0),
        (1e30, 1e30, 1e30),
        (-110.0, -110.0, -109.0),
        (5.0, -3.0, 0.5),
        (1e30, 1e30, 0.0),
    ]
    _check(fn, truth(x, y, z), [x, y, z], points)


def test_cauchy_loss_where_the_square_overflows(load_module) -> None:
    # log(1 + x**2) is log1p(inf) = inf for |x| > 1.8e19; the value is 2*log|x| (92.1 at 1e20),
    # the slope 2/x (log_of_polynomial splits it at |x| = 2**30).
    x = sp.Symbol("x", real=True)
    fn = load_module("log(1 + x**2)", "cauchy", ["x"]).cauchy
    _check(
        fn, sp.log(1 + x**2), [x], [(1e20,), (-1e25,), (3e38,), (2e9,), (0.5,), (-3.0,)]
    )


def test_log_of_a_sum_of_squares_curved_where_its_inputs_meet(load_module) -> None:
    # d2f/dx2 = 2/D**2 - 2*x*(x/D**2) + 2*y*(y/D**2), D = 1 + x**2 + y**2: at x = y the
    # last two cancel, and added in SymPy's order the first was lost before they did (6%
    # off at x = y = -1278, 0 at x = y = -2.06e6 where the truth is 2.75e-26). The pair is
    # summed first (derive._diagonal_pairs_first).
    x, y = sp.symbols("x y", real=True)
    fn = load_module("log(1 + x**2 + y**2)", "log_norm").log_norm
    _check(fn, sp.log(1 + x**2 + y**2), [x, y], _MEETING, tol=2e-6)


def test_share_of_a_square_curved_where_its_inputs_meet(load_module) -> None:
    # d2f/dxdy's numerator -4*x*y*(1 + y**2 - x**2)/S**2 (over S = 1 + |x|/2 + |y|/2) was
    # summed with its cancelling pair last: 0 at x = y = -2.06e6, where the truth is
    # -2.75e-26. The judge had summed the pair first (its cse names temporaries otherwise,
    # and SymPy orders a sum by the names), so it saw no gain in holding it.
    x, y = sp.symbols("x y", real=True)
    fn = load_module("x**2/(1 + x**2 + y**2)", "square_share").square_share
    _check(fn, x**2 / (1 + x**2 + y**2), [x, y], _MEETING, tol=2e-6)


def test_product_over_a_sum_of_exponentials_where_its_sigmoids_cancel(load_module) -> None:
    # f = exp(y)*s, s = sigmoid(x - y). The chain rule left d2f/dy2 as exp(y)*(s**2 -
    # s*sigmoid(y - x)), 0 near x = y where the truth is exp(y)*s*tanh((x - y)/2), and
    # d2f/dxdy's fallback exp(2*x + 2*y - 3*logaddexp(x, y)) was inf - inf = NaN at
    # x = y = -2.5e38 (truth 0). Factored in s (sigmoid_polynomial), neither.
    x, y = sp.symbols("x y", real=True)
    fn = load_module("exp(x)*exp(y)/(exp(x)+exp(y))", "exp_product_share").exp_product_share
    points = [(1.1583232e-13, -8.0e-20), (-4.020271e-36, -7.166699e-17), (3.0e-4, 2.9e-4), (-2.5e38, -2.5e38), (3.0, -2.0), (-40.0, 30.0)]
    _check(fn, sp.exp(x) * sp.exp(y) / (sp.exp(x) + sp.exp(y)), [x, y], points, tol=2e-6)


def test_quotient_of_powers_of_cosh_where_both_overflow(load_module) -> None:
    # Far out the quotient is exp(3*|x| - 2*|y| + ...), and 3*|x| and 2*|y| overflow at
    # x = y = 3e38: inf - inf = NaN, where the truth is cosh(x), inf. Paired,
    # 2*(|x| - |y|) + |x| (stabilize._balanced_exponent).
    x, y = sp.symbols("x y", real=True)
    fn = load_module("cosh(x)**3/cosh(y)**2", "cosh_power_ratio").cosh_power_ratio
    points = [(3.0e38, 3.0e38), (-2.5e38, 2.5e38), (100.0, 120.0), (-95.0, 60.0), (0.5, -2.0)]
    _check(fn, sp.cosh(x) ** 3 / sp.cosh(y) ** 2, [x, y], points, tol=2e-5)


def test_square_of_cosh_over_sinh_where_the_square_overflows(load_module) -> None:
    # cosh(x)**2 overflows from |x| = 44.7, cosh(x) only from 89: the far-out form was taken
    # where cosh(x) overflowed, and the product's slopes were inf at x = y = 80 (the truth
    # of d2f/dxdy is 5.5e34). The where now asks whether cosh(x)**2 does (_power_size).
    x, y = sp.symbols("x y", real=True)
    fn = load_module("cosh(x)**2/sinh(y)", "cosh_square_ratio").cosh_square_ratio
    points = [(80.0, 80.0), (-88.0, -88.0), (60.0, -50.0), (100.0, 120.0), (0.5, 2.0)]
    _check(fn, sp.cosh(x) ** 2 / sp.sinh(y), [x, y], points, tol=2e-5)


_MEETING = [(-1277.565, -1277.565), (-95.0, -95.0), (-2.0648742e6, -2.0648742e6), (3.0e3, 3.0e3), (1.0e19, 1.0e19)]


def test_generalized_norms_where_the_squares_overflow(load_module) -> None:
    # (x**2 + y**2)**(3/8) and (x**2 + 1/16)**(-3/8) as powers of hypot: as written x**2 is
    # inf beyond 1.8e19 (inf**(3/8) = inf, inf**(-3/8) = 0), where the truths are normal
    # numbers (4.1e28 at x = y = 1e38, 3.2e-29 at x = 1e38). Exponents float32 holds; TF
    # rounds others (stabilize.compensate_powers).
    x, y = sp.Symbol("x", real=True), sp.Symbol("y", real=True)
    fn = load_module("(x**2 + y**2)**0.375", "norm38", ["x", "y"]).norm38
    points = [(1e38, 1e38), (-1e25, 3.0), (2e19, -2e19), (0.5, -3.0), (1e-30, 2e-30)]
    _check(fn, (x**2 + y**2) ** sp.Rational(3, 8), [x, y], points)
    fn = load_module("(x**2 + 0.0625)**(-0.375)", "inverse_norm", ["x"]).inverse_norm
    points = [(1e38,), (-3e20,), (2e9,), (0.5,), (-3.0,), (0.0,)]
    _check(fn, (x**2 + sp.Rational(1, 16)) ** sp.Rational(-3, 8), [x], points)


def test_difference_of_exponentials_where_they_cancel_or_overflow(load_module) -> None:
    # exp(x) - exp(y) is inf - inf = NaN at x = 89, y = 88.999 (the truth is 4.5e35) and
    # 2 ulps of e at x = 1 + 2**-22, y = 1, where the difference is 6.5e-7.
    x, y = sp.Symbol("x", real=True), sp.Symbol("y", real=True)
    fn = load_module("exp(x) - exp(y)", "exp_gap", ["x", "y"]).exp_gap
    points = [
        (89.0, 88.99900054931641),
        (1 + 2**-22, 1.0),
        (-3.0, -3.0 - 2**-21),
        (100.0, 99.0),
        (-100.0, 5.0),
    ]
    _check(fn, sp.exp(x) - sp.exp(y), [x, y], points)


@pytest.mark.parametrize(
    "text, name, truth, tol",
    [
        # A normal interval probability, Phi(y) - Phi(x): both round to 0 or both to 1 in
        # the tails (erf(-4) - erf(-1e27) was -1 - -1 = 0, truth 1.5e-8). x/sqrt(2) is
        # rounded, and erfc multiplies its relative error by 2*u**2 (81 at u = 9/sqrt(2)).
        (
            "(erf(y/sqrt(2)) - erf(x/sqrt(2)))/2",
            "normal_interval",
            lambda x, y: (sp.erf(y / sp.sqrt(2)) - sp.erf(x / sp.sqrt(2))) / 2,
            1e-5,
        ),
        ("erfc(x) - erfc(y)", "erfc_gap", lambda x, y: sp.erfc(x) - sp.erfc(y), TOL),
        # tanh(10.6) - tanh(19.7) was 1 - 1 = 0, truth -1.2e-9.
        ("tanh(x) - tanh(y)", "tanh_gap", lambda x, y: sp.tanh(x) - sp.tanh(y), TOL),
    ],
)
def test_differences_of_saturating_functions_in_their_tails(load_module, text, name, truth, tol) -> None:
    x, y = sp.Symbol("x", real=True), sp.Symbol("y", real=True)
    fn = getattr(load_module(text, name, ["x", "y"]), name)
    points = [(-6.0, -5.5), (5.5, 6.0), (10.5, 11.0), (-9.0, -8.75), (1e-10, 3e-10), (-0.5, 2.0)]
    _check(fn, truth(x, y), [x, y], points, tol)


def test_log_of_an_erf_difference_in_its_tails(load_module) -> None:
    # An ordered probit's log-likelihood: log(erf(11) - erf(10)) was log(1 - 1) = -inf, truth
    # -102.88 (log_saturated_gap, in log space from log_erfc's forms), and its slopes 0/0
    # where exp(-x**2) and the difference both underflow (x = 20, y = 30): the judge's
    # moderate points hold two inputs in one tail now.
    import tensorflow as tf

    fn = load_module("log(erf(y) - erf(x))", "log_erf_gap", ["x", "y"]).log_erf_gap
    points = [(10.0, 11.0), (-11.0, -10.0), (4.0, 5.0), (20.0, 30.0), (-30.0, -20.0), (-0.5, 0.25)]
    xs = [tf.constant([p[i] for p in points]) for i in (0, 1)]
    got = tf_partials(tf, fn, xs, 1)
    with mpmath.workdps(80):
        gaps = [mpmath.erfc(a) - mpmath.erfc(b) if a + b > 0 else mpmath.erfc(-b) - mpmath.erfc(-a) for a, b in points]
        truth = {
            (): [mpmath.log(g) for g in gaps],
            (0,): [-2 * mpmath.exp(-(a**2)) / mpmath.sqrt(mpmath.pi) / g for (a, _), g in zip(points, gaps)],
            (1,): [2 * mpmath.exp(-(b**2)) / mpmath.sqrt(mpmath.pi) / g for (_, b), g in zip(points, gaps)],
        }
    for index, values in truth.items():
        np.testing.assert_allclose(got[index].numpy(), [float(v) for v in values], rtol=1e-5, atol=1e-37, err_msg=str(index))


def test_cosh_difference_where_exp_overflows_and_near_zero(load_module) -> None:
    # cosh and sinh printed from exp(u) overflowed for 88.7 < |u| < 89.4 (sinh(89) = 2.2e38
    # was inf in f' and f''), and cosh(x) - cosh(y) was 1 - 1 = 0 near 0 (truth -1.1e-17 at
    # x = 2.5e-38, y = 4.8e-9); half_argument's forms keep both, and x = y = 100, where both
    # terms overflow, is 0 (was inf - inf). Its price: sinh(u) = 2*sinh(u/2)*cosh(u/2)
    # flushes for |u| < 2.4e-38, where u/2 is subnormal (the slope at 1.2e-38 is 0).
    x, y = sp.Symbol("x", real=True), sp.Symbol("y", real=True)
    fn = load_module("cosh(x) - cosh(y)", "cosh_gap", ["x", "y"]).cosh_gap
    points = [(89.0, 0.25), (-89.25, 3.0), (2.5e-38, 4.7736126e-09), (3e-5, 1e-6), (100.0, 100.0), (2.0, -0.5)]
    _check(fn, sp.cosh(x) - sp.cosh(y), [x, y], points, 1e-6)


@pytest.mark.parametrize(
    ("text", "name", "truth", "points"),
    [
        # atan(1e8) - atan(2e8) was pi/2 - pi/2 = 0 (truth -5e-9), and the terms cancelled near
        # x = y (atan(30) - atan(30.00003) kept 4 bits): atan((x - y)/(1 + x*y)). Where x*y > 1,
        # over the larger input: over the smaller, (0.5 - 3e38)/0.5 overflowed, pi/2 for 1.107.
        (
            "atan(x) - atan(y)",
            "atan_gap",
            lambda x, y: sp.atan(x) - sp.atan(y),
            [(1e8, 2e8), (-3e30, -1e30), (30.0, 30.000028610229492), (0.5, -2.0), (1e-20, 3e-20), (2.0, 0.25)]
            + [(3e38, 0.5), (0.5, 3e38), (1e-3, 1e36)],
        ),
        # Both roots round to 1 near 0 (x = 1e-4, y = 2e-4: 0, truth -1.5e-8): as
        # (x + y)*((x - y)/(hypot(1, x) + hypot(1, y))), 0 at x = y = 3e38.
        (
            "sqrt(x**2 + 1) - sqrt(y**2 + 1)",
            "root_gap",
            lambda x, y: sp.sqrt(x**2 + 1) - sp.sqrt(y**2 + 1),
            [(1e-4, 2e-4), (-3e-4, 1e-5), (3e38, 3e38), (1e20, -2e20), (2.0, 0.5)],
        ),
        # expm1(-20) - expm1(-21) was -1 - -1 = 0 (truth 1.3e-9), and at x = y = 100 inf - inf.
        (
            "expm1(x) - expm1(y)",
            "expm1_gap",
            lambda x, y: sp.exp(x) - sp.exp(y),
            [(-20.0, -21.0), (100.0, 100.0), (89.0, 88.99900054931641), (1e-10, 3e-10), (2.0, -1.0)],
        ),
        # Both terms overflow at x = y = 200 (inf - inf, truth 0) and sinh(89) from exp(89) at
        # x = 89 (truth of the difference with 88.5: 8.7e37); they cancel near x = y.
        (
            "sinh(x) - sinh(y)",
            "sinh_gap",
            lambda x, y: sp.sinh(x) - sp.sinh(y),
            [(200.0, 200.0), (-200.0, -200.0), (89.0, 88.5), (3.0, 3.000000238418579), (1e-20, 3e-10), (-3.0, 2.0), (0.5, -89.25)],
        ),
        (
            "cosh(x) - cosh(y)",
            "cosh_gap2",
            lambda x, y: sp.cosh(x) - sp.cosh(y),
            [(200.0, -200.0), (89.0, -88.5), (3.0, -3.000000238418579), (1e-20, 3e-10), (0.5, 89.25), (2.0, 30.0)],
        ),
        # The powers overflow together (x = y = 1e20: inf - inf, truth 0), SymPy's factored
        # form's sum too (x = -y = 1e20: inf - inf, truth 2e60, the right inf), and they round
        # alike near x = y (1e5 and the next float: no bit of -2.3e8 kept).
        (
            "x**3 - y**3",
            "cube_gap",
            lambda x, y: x**3 - y**3,
            [(1e20, 1e20), (1e20, -1e20), (9999999827968.0, 10000000876544.0), (1e5, 100000.0078125), (-2.0, -0.5), (1.5, -3.0)],
        ),
        (
            "x**4 - y**4",
            "fourth_gap",
            lambda x, y: x**4 - y**4,
            [(1e20, 1e20), (1e20, -1e20), (1e10, -1e10), (-1e5, 100000.0078125), (2.0, 0.5), (-1.5, 3.0)],
        ),
    ],
)
def test_differences_of_one_function_where_the_terms_round_alike(load_module, text, name, truth, points) -> None:
    x, y = sp.Symbol("x", real=True), sp.Symbol("y", real=True)
    fn = getattr(load_module(text, name, ["x", "y"]), name)
    _check(fn, truth(x, y), [x, y], points, 1e-6)


def test_reciprocal_squares_where_the_square_flushes(load_module) -> None:
    # log(x)'' and (1/x)' are -1/x**2: x**2 flushes to 0 for |x| < 1.1e-19, -1/0 = -inf,
    # while the truth is a float down to |x| = 5.4e-20 (-1.6e38 at 8e-20). As (1/x)**2
    # (reciprocal_power), also where f' = 1/x is computed beside it (the module's CSE).
    x = sp.Symbol("x", real=True)
    points = [(8e-20,), (-6e-20,), (1e-19,), (3.0,), (1e30,)]
    _check(load_module("log(x)", "log_x", ["x"]).log_x, sp.log(x), [x], points[:1] + points[2:])
    _check(load_module("1/x", "reciprocal", ["x"]).reciprocal, 1 / x, [x], points)
    # With two inputs the judge's grid seldom holds 8e-20 beside an ordinary other: its
    # moderate points do.
    y = sp.Symbol("y", real=True)
    fn = load_module("1/x - 1/y", "reciprocal_gap", ["x", "y"]).reciprocal_gap
    _check(fn, 1 / x - 1 / y, [x, y], [(8e-20, 3.0), (-2.0, -6e-20), (1e-19, 1e-19), (0.5, 2.0)])


def test_third_derivatives_where_a_cube_flushes(load_module) -> None:
    # The third derivative of log(x) is 2/x**3, of logit log(x/(1 - x)) near 0 too: x**3
    # flushes to 0 for x < 2.3e-13 while 2/x**3 is a float down to 1.8e-13. Generated at
    # order 3, logit''' was (-2 - 6*x**2 + 6*x)/(x**3*(-1 + x)**3), inf at 1.95e-13
    # (truth 2.7e38): the judge's grid for one input now holds such a point for each power
    # up to 6, and takes a form that divides step by step.
    x = sp.Symbol("x", real=True)
    points = [(1.9e-13,), (2.2e-13,), (1e-20,), (0.25,), (0.9990234375,)]
    fn = load_module("log(x/(1 - x))", "logit3", ["x"], order=3).logit3
    _check(fn, sp.log(x / (1 - x)), [x], points, 1e-5, order=3)
    fn = load_module("log(x)", "log3", ["x"], order=3).log3
    _check(fn, sp.log(x), [x], points + [(3e38,)], 1e-5, order=3)


def test_third_derivatives_on_the_diagonal_where_a_square_flushes(load_module) -> None:
    # The third derivative of x*log(x/y) in y was printed -(x/y + x/y)/y**2: -inf at
    # x = y = -8.4e-20, where y**2 flushes (truth -2.8e38). The judge's points where two
    # inputs nearly meet hold +-8e-20 now: -2*((x/y)/y)/y.
    x, y = sp.Symbol("x", real=True), sp.Symbol("y", real=True)
    fn = load_module("x*log(x/y)", "kl_term3", ["x", "y"], order=3).kl_term3
    points = [(-8.363066e-20, -8.363066e-20), (9e-20, 9e-20), (0.5, 2.0), (3.0, 1e-10)]
    _check(fn, x * sp.log(x / y), [x, y], points, 1e-5, order=3)


def test_gaussian_nll_third_derivatives_where_the_inputs_overflow_alike(load_module) -> None:
    # d3f/ds3 held (-3*x + 3*m)/s, as SymPy distributes the 3: inf - inf = NaN at
    # x = m = s = 3.4e38, where the truth is 0 (2/s**3 flushes). Held as 3*(m - x)/s. And
    # d3f/dx2ds = -2/s**3 was -inf at s = 2e-13, where s**3 flushes: ((-2/s)/s)/s.
    x, m, s = sp.symbols("x m s", real=True)
    fn = load_module("log(s) + (x - m)**2/(2*s**2)", "gaussian_nll3", ["x", "m", "s"], order=3).gaussian_nll3
    points = [(3.4028235e38, 3.4028235e38, 3.4028235e38), (1e30, -1e30, 1e30), (0.5, -2.0, 1.5), (1.0, 1.0, 2e-13)]
    _check(fn, sp.log(s) + (x - m) ** 2 / (2 * s**2), [x, m, s], points, 1e-5, order=3)


@pytest.mark.parametrize(
    ("text", "name", "truth", "points"),
    [
        # The Student-t slope with its degrees of freedom an input: (y + 1)*x overflows at
        # x = 1e10, y = 1e30, x**2 at x = 1e20; over one scale for both inputs (scale_quotient)
        # x/m flushed at x = 0.0067, y = 1e37 (the value -0.0067 was -0).
        (
            "-(y + 1)*x/(y + x**2)",
            "t_slope",
            lambda x, y: -(y + 1) * x / (y + x**2),
            [(0.006654364988207817, 1.0072742162034009e37), (1e10, 1e30), (1e20, 1.0), (2.0, 3.0)],
        ),
        # Terms of one weighted degree: every power flushes at x = y = -2.4e-21 (0/0, truth
        # -2.4e-21); over the larger term, y/x**2 as (y/x)/x, none does.
        (
            "x**2*y/(x**4 + y**2)",
            "weighted_ratio",
            lambda x, y: x**2 * y / (x**4 + y**2),
            [(-2.434687387395496e-21, -2.434687387395496e-21), (1e10, 3e20), (3e-10, -1e-19), (2.0, -3.0)],
        ),
    ],
)
def test_quotients_over_their_largest_term(load_module, text, name, truth, points) -> None:
    x, y = sp.Symbol("x", real=True), sp.Symbol("y", real=True)
    fn = getattr(load_module(text, name, ["x", "y"]), name)
    _check(fn, truth(x, y), [x, y], points, 1e-6)


def test_cos_difference_near_zero(load_module) -> None:
    # cos(3e-5) - cos(1e-6) was 1 - 1 = 0, truth -4.5e-10: 2*sin(y/2)**2 - 2*sin(x/2)**2.
    x, y = sp.Symbol("x", real=True), sp.Symbol("y", real=True)
    fn = load_module("cos(x) - cos(y)", "cos_gap", ["x", "y"]).cos_gap
    # Near x = -y the terms cancel (cos(1.00006) - cos(-1.0000001) kept 11 bits), and near 1
    # both (cos(88) - cos(7.5e-9), 9 bits): 2*sin(|x| + d/2)*sin(d/2), d = |y| - |x|.
    points = [(3e-5, 1e-6), (-1e-4, 2e-4), (2.5e-38, 4.7736126e-09), (2.0, 0.5), (-3.0, 1.0)]
    points += [(1.00006103515625, -1.0000001192092896), (88.0, 7.5265465e-09)]
    _check(fn, sp.cos(x) - sp.cos(y), [x, y], points, 1e-6)


def test_hellinger_curvature_where_the_half_power_flushes(load_module) -> None:
    # (sqrt(x) - sqrt(y))**2's d2/dx2 = sqrt(y)/(2*x**(3/2)): x**(3/2) flushes to 0 below
    # 1e-26, inf where the truth is 2.9e36 at x = y = 1.7e-37. Divided step by step:
    # (sqrt(y)/x)/(2*sqrt(x)).
    x, y = sp.Symbol("x", real=True), sp.Symbol("y", real=True)
    fn = load_module("(sqrt(x) - sqrt(y))**2", "hellinger", ["x", "y"]).hellinger
    points = [
        (1.7201202e-37, 1.7201202e-37),
        (3.5808743e-35, 3.5808743e-35),
        (4.0, 9.0),
        (1e30, 2.5),
    ]
    _check(fn, (sp.sqrt(x) - sp.sqrt(y)) ** 2, [x, y], points)


def test_gaussian_density_slope_where_the_exponential_flushes(load_module) -> None:
    # d/dx of exp(-x**2/(2*s**2))/(s*sqrt(2*pi)) was judged as -c*(x/s)*(exp(...)/s)/s, 0
    # where exp flushes; the module's CSE shared (x/s)/s with d/ds and computed
    # (exp/s)*((x/s)/s) = 0*inf = NaN at x = 0.039, s = 1.6e-27 (truth 0). Products are now
    # shared only whole, as the judge evaluates them.
    x, s = sp.Symbol("x", real=True), sp.Symbol("s", real=True)
    text = "exp(-x**2/(2*s**2))/(s*sqrt(2*pi))"
    fn = load_module(text, "gauss_pdf", ["x", "s"]).gauss_pdf
    points = [
        (0.03925879, 1.6399424e-27),
        (86.36364, 7.061097e-33),
        (0.5, 2.0),
        (-3.0, 2.0),
    ]
    _check(fn, sp.exp(-(x**2) / (2 * s**2)) / (s * sp.sqrt(2 * sp.pi)), [x, s], points)


def test_softplus_with_a_sharpness_where_the_product_overflows(load_module) -> None:
    # log(1 + exp(k*x))/k is softplus(k*x)/k = inf/k where k*x overflows (x = k = 1e20); the
    # value is x. Reflected where k*x > 0: x + softplus(-k*x)/k. (Far points with x below
    # 1e20: SymPy's partials cancel to x*1e-60 at _check's 60 digits, which must flush.)
    x, k = sp.Symbol("x", real=True), sp.Symbol("k", real=True)
    fn = load_module("log(1 + exp(k*x))/k", "softplus_k", ["x", "k"]).softplus_k
    points = [(1e20, 1e20), (1e15, 1e25), (2.0, 0.5), (-3.0, 2.0), (0.5, -4.0)]
    _check(fn, sp.log(1 + sp.exp(k * x)) / k, [x, k], points)


def test_float64_inputs_beyond_float32s_range_are_not_clipped(load_module) -> None:
    # A regime's clip with no bound on one side was printed as float32's largest value:
    # float64 inputs beyond it were clipped, and (exp(x) - 1)/x's f'' at x = -1e300 came
    # out as its value at -3.4e38, 5e-116, where the truth is -2/x**3 (0 in float64).
    import tensorflow as tf

    x = sp.Symbol("x", real=True)
    truth = (sp.exp(x) - 1) / x
    module = load_module("(exp(x) - 1)/x", name="expm1_over_x")
    points = [-1e300, -1e200, -1e40, -3e38]
    got = tf_partials(
        tf, module.expm1_over_x, [tf.constant(points, dtype=tf.float64)], 2
    )
    for index, values in got.items():
        expr = sp.diff(truth, x, len(index))
        for point, value in zip(points, values.numpy()):
            with mpmath.workdps(60):
                true = float(expr.subs(x, sp.Float(point, 60)).evalf(60))
            assert value == pytest.approx(true, rel=1e-12, abs=1e-300), (
                index,
                point,
                value,
                true,
            )


@pytest.mark.parametrize(
    ("text", "name", "points"),
    [
        # x**2 overflows beyond 1.8e19: x/(1 + x**2) was 0 there (truth 1/x), and its
        # derivatives inf/inf; stabilize's rational_far divides through by the powers.
        ("x/(1 + x**2)", "lorentz", [(1e20,), (-3e37,), (5e9,), (0.5,), (-2.0,)]),
        ("x**3/(1 + x**4)", "odd_ratio", [(1e10,), (-1e20,), (3e38,), (0.75,)]),
        # x**4 overflows beyond 4.3e9: log was inf (log_of_polynomial).
        ("log(1 + x**2 + x**4)", "log_quartic", [(1e10,), (-1e30,), (2.5,), (-0.1,)]),
    ],
)
def test_rational_functions_where_the_powers_overflow(
    load_module, text, name, points
) -> None:
    x = sp.Symbol("x", real=True)
    fn = getattr(load_module(text, name, ["x"]), name)
    _check(fn, sp.sympify(text, locals={"x": x}), [x], points)


@pytest.mark.parametrize(
    ("text", "name", "points"),
    [
        # x*y overflows: y**2*sigmoid_slope(x*y) was inf*0 = NaN (truth 0); multiply_no_nan.
        (
            "log(1 + exp(x*y))",
            "softplus_xy",
            [(1e20, 1e20), (-3e19, 2e19), (0.5, 3.0)],
        ),
        # (x - y)**2 overflows: 2*(y - x)*exp(-(x - y)**2) was -inf*0 = NaN (truth 0).
        (
            "exp(-(x - y)**2)",
            "gauss_xy",
            [(5.0, -2.5e38), (-2.5e38, 1e-18), (0.25, -0.5)],
        ),
        # exp(92) overflows where exp(-x)*sin(y) is -1.0e27 (stabilize's exp_product).
        ("exp(-x)*sin(y)", "damped", [(-92.0, -1.2e-13), (-95.0, 1e-20), (1.5, 0.5)]),
    ],
)
def test_products_with_a_factor_that_flushes_or_overflows(
    load_module, text, name, points
) -> None:
    x, y = sp.symbols("x y", real=True)
    fn = getattr(load_module(text, name, ["x", "y"]), name)
    truth = sp.sympify(text, locals={"x": x, "y": y})
    if name == "softplus_xy":
        # SymPy's second partials of log(1 + exp(u)) subtract two terms near y**2 where
        # their difference is y**2*exp(-u): no precision holds that at u = 1e40.
        s, slope = 1 / (1 + sp.exp(-x * y)), 1 / (
            (1 + sp.exp(-x * y)) * (1 + sp.exp(x * y))
        )
        truth = {
            (): truth,
            (0,): y * s,
            (1,): x * s,
            (0, 0): y**2 * slope,
            (0, 1): s + x * y * slope,
            (1, 0): s + x * y * slope,
            (1, 1): x**2 * slope,
        }
    _check(fn, truth, [x, y], points)


@pytest.mark.parametrize(
    ("text", "name", "points"),
    [
        # Homogeneous quotients: the squares overflow beyond 1.8e19 and flush below 1e-19,
        # where x*y/(x**2 + y**2) was inf/inf or 0/0 (truth 1/2 on the diagonal);
        # stabilize's scale_quotient divides the inputs by the mean of their magnitudes.
        (
            "x*y/(x**2 + y**2)",
            "cosine_xy",
            [(1e20, 1e20), (-3e30, 1e30), (2e-25, 1e-25), (0.5, -2.0)],
        ),
        (
            "(x**2 - y**2)/(x**2 + y**2)",
            "cos2",
            [(1e20, 3e20), (4e-25, -1e-25), (1.5, 0.5)],
        ),
        # Not homogeneous: over m = 1 + the mean magnitude (scale_quotient).
        ("x**2/(1 + x**2 + y**2)", "share", [(1e20, 1e20), (-3e30, 1e30), (0.5, -2.0)]),
        # x/y overflows: log(inf) (log_of_quotient: log(sign(y)*x) - log|y|).
        ("log(x/y)", "log_ratio", [(1e30, 1e-30), (-1e30, -1e-30), (1.5, 0.5)]),
        # x*y overflows at 1e22 where the quotient is 7e21: the module shares y/hypot(x, y)
        # with its derivatives and computes f as (y/hypot(x, y))*x.
        (
            "x*y/sqrt(x**2 + y**2)",
            "product_over_norm",
            [(1e22, 1e22), (-1e30, 1e30), (3.0, 4.0)],
        ),
        # x**2 - y**2 at x = y = 1e20 was inf - inf = NaN (difference_of_squares, or factor).
        ("x**2 - y**2", "squares", [(1e20, 1e20), (-(2.0**64), 2.0**63), (3.0, 2.0)]),
    ],
)
def test_two_input_quotients_where_the_squares_overflow(
    load_module, text, name, points
) -> None:
    x, y = sp.symbols("x y", real=True)
    fn = getattr(load_module(text, name, ["x", "y"]), name)
    _check(fn, sp.sympify(text, locals={"x": x, "y": y}), [x, y], points)


def test_gamma_kernel_where_the_power_overflows_or_the_exponential_flushes(
    load_module,
) -> None:
    # x**y*exp(-x): at x = y = 31.8 the power overflows (inf*1.6e-14 as written; f is
    # 8.6e33), at x = 90 exp(-x) flushes (0; f is 2.9e-20 at y = 10). exp(-x + y*log(x))
    # rounds its argument of up to 80: a few dozen float32 ulps (stabilize._power_into_exp).
    x, y = sp.symbols("x y", real=True)
    fn = load_module("x**y*exp(-x)", "gamma_kernel", ["x", "y"]).gamma_kernel
    points = [(31.8, 31.8), (90.0, 10.0), (2.5, 1.5)]
    _check(fn, x**y * sp.exp(-x), [x, y], points, tol=1e-5)


def test_log_one_plus_power_of_inputs_where_the_power_overflows(load_module) -> None:
    # log(1 + x**y), a log-logistic link: x**y overflows from y*log(x) = 88.7 (f was
    # log1p(inf) = inf at x = 10, y = 50; the truth is 115.1), and the slopes were inf/inf.
    # As softplus(xlogy(y, x)) for x > 0 (derive._powers_as_exps) each order is sigmoids;
    # exp rounds its argument of up to 115: a few dozen float32 ulps.
    x, y = sp.symbols("x y", real=True)
    fn = load_module("log(1 + x**y)", "log_logistic", ["x", "y"]).log_logistic
    points = [(10.0, 50.0), (31.8, 31.8), (88.0, 88.0), (2.0, 3.0), (0.5, 2.0), (1e-8, 2.0)]
    _check(fn, sp.log(1 + x**y), [x, y], points, tol=1e-5)


def test_log_of_cosh_less_one_near_zero_and_far_out(load_module) -> None:
    # log(cosh(x) - 1): cosh(x) rounds to 1 for |x| < 2.4e-4 (log(0) = -inf; the truth at
    # x = 1e-10 is -46.7), and the slope sinh(x)/(cosh(x) - 1) was 0/0 there; cosh(x) - 1 is
    # 2*sinh(x/2)**2 (stabilize._one_minus_cos). Far out, cosh overflows from 89.4.
    x = sp.symbols("x", real=True)
    fn = load_module("log(cosh(x) - 1)", "log_cosh_less_one").log_cosh_less_one
    points = [(1e-10,), (-3e-4,), (0.5,), (-3.0,), (60.0,), (100.0,), (-1e4,)]
    _check(fn, sp.log(sp.cosh(x) - 1), [x], points)


def test_bent_identity_far_out(load_module) -> None:
    # (sqrt(x**2 + 1) - 1)/2 + x: the judge took a conjugate form for x < 1/2 whose
    # numerator x*(3*x - 4) overflows from x = -1.8e19 (-inf; f is -5e29 at x = -1e30).
    # hypot(1, x)/2 - 1/2 is x*(x/(hypot(1, x) + 1))/2 (stabilize._hypot_minus_one, scaled).
    x = sp.symbols("x", real=True)
    fn = load_module("(sqrt(x**2 + 1) - 1)/2 + x", "bent_identity").bent_identity
    points = [(-1e30,), (-3e19,), (-2.0,), (1e-4,), (0.7,), (1e30,)]
    _check(fn, (sp.sqrt(x**2 + 1) - 1) / 2 + x, [x], points)


def test_langevin_slope_between_its_series_and_its_tail(load_module) -> None:
    # 1/tanh(x) - 1/x: the slope 1/x**2 + (tanh(x)**2 - 1)/tanh(x)**2 lost 4-6 bits for
    # 3 < |x| < 10, where tanh(x)**2 - 1 cancels; as -1/cosh(x)**2 it does not
    # (stabilize._one_minus_tanh_squared, either sign).
    x = sp.symbols("x", real=True)
    fn = load_module("1/tanh(x) - 1/x", "langevin").langevin
    points = [(3.0,), (4.5,), (-6.0,), (7.6,), (9.1,), (30.0,), (1e-3,)]
    _check(fn, 1 / sp.tanh(x) - 1 / x, [x], points)


def test_binary_entropy_at_its_ends(load_module) -> None:
    # -x*log(x) - (1 - x)*log(1 - x): (1 - x)*log(1 - x) was 0*log(0) = NaN at x = 1, where
    # the entropy is 0 (xlog1py, as xlogy at x = 0). The slopes are +-inf at the ends.
    import tensorflow as tf

    x = sp.symbols("x", real=True)
    fn = load_module("-x*log(x) - (1 - x)*log(1 - x)", "binary_entropy").binary_entropy
    assert fn(tf.constant([0.0, 1.0])).numpy().tolist() == [0.0, 0.0]
    points = [(1 - 2.0**-24,), (1 - 2.0**-10,), (0.5,), (2.0**-100,), (2.0**-25,)]
    _check(fn, -x * sp.log(x) - (1 - x) * sp.log(1 - x), [x], points)


def test_gaussian_kernel_with_a_scale_where_the_ratio_overflows(load_module) -> None:
    # exp(-x**2/(2*y**2))/y: at x = -6e37, y = -1.7e-17, x/y overflows and exp(-(x/y)**2/2)
    # flushes; the slope -(x/y)*(exp(...)/y)/y was inf*0 = NaN (the truth is 0). The stepwise
    # division now stacks with multiply_no_nan (stabilize.divide_stepwise, stacks=True).
    x, y = sp.symbols("x y", real=True)
    fn = load_module("exp(-x**2/(2*y**2))/y", "gauss_kernel", ["x", "y"]).gauss_kernel
    points = [(-6.155861e37, -1.666729e-17), (3.1e25, -1.04e-36), (1.0, 0.5), (3.0, 2.0), (-2.5, 0.75)]
    _check(fn, sp.exp(-(x**2) / (2 * y**2)) / y, [x, y], points, tol=2e-6)


def test_square_over_one_plus_abs_curvature_far_out(load_module) -> None:
    # x**2/(1 + |x|)'' is 2/(1 + |x|)**3; as differentiated, with x*sign(x) and sign(x)**2 in
    # it, the common denominator kept 1 - |x|/(1 + |x|): 16 bits off at x = -3.2e5, 0 from
    # x = 6e7 (derive's sources now take u*sign(u) as |u| first).
    x = sp.symbols("x", real=True)
    fn = load_module("x**2/(1 + abs(x))", "square_over_one_plus_abs").square_over_one_plus_abs
    points = [(-322740.0,), (1870575.0,), (-6.3e7,), (2.5e10,), (-2.0,), (0.5,)]
    _check(fn, x**2 / (1 + sp.Abs(x)), [x], points)


def test_log_one_plus_abs_expm1_where_its_signs_make_it_a_polynomial(load_module) -> None:
    # log(1 + |expm1(x)|) is x for x > 0: log1p(|expm1(x)|) overflowed from x = 89 on, and f''
    # = 0 there was 1 - exp(x)/(1 + expm1(x)), 6e-8 at x = 0.2. Left of 0 the form stays.
    x = sp.symbols("x", real=True)
    fn = load_module("log(1 + abs(expm1(x)))", "log1p_abs_expm1").log1p_abs_expm1
    points = [(100.0,), (3.0e38,), (0.2,), (5.0,), (-0.5,), (-30.0,), (-3.0e38,)]
    _check(fn, sp.log(1 + sp.Abs(sp.exp(x) - 1)), [x], points)


@pytest.mark.parametrize(
    ("text", "name", "inputs", "expected"),
    [
        # x**y at x = 0: SymPy's d/dx y*x**y/x was 0/0 = NaN for every y (the truth is 1 at
        # y = 1, 0 above, inf below: y*x**(y - 1), as TF's gradient of pow), and d/dy,
        # x**y*log(x), 0*(-inf) (the limit is 0 for y > 0: xlogy(x**y, x)).
        ("x**y", "power", ([0.0, 0.0, 0.0, 0.0], [1.0, 2.0, 3.0, 0.5]), {(0,): [1, 0, 0, math.inf], (1,): [0, 0, 0, 0]}),
        (
            "x**y",
            "power",
            ([0.0, 0.0, 0.0], [2.0, 3.0, 2.5]),
            {(0, 0): [2, 0, 0], (0, 1): [0, 0, 0], (1, 1): [0, 0, 0]},
        ),
        # (1 - x)**y at x = 1, its base 0 (SymPy's d/dx is -y*(1 - x)**y/(1 - x)).
        (
            "(1 - x)**y",
            "power_of_complement",
            ([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]),
            {(0,): [-1, 0, 0], (1,): [0, 0, 0]},
        ),
        ("(1 - x)**y", "power_of_complement", ([1.0, 1.0], [2.0, 3.0]), {(0, 0): [2, 0], (1, 1): [0, 0]}),
        # A thin-plate spline, x**2*log|x|, and x*log|x|: 0*(-inf) at 0.
        ("x**2*log(abs(x))", "thin_plate", ([0.0],), {(): [0], (0,): [0]}),
        ("x*log(abs(x))", "x_log_abs_x", ([0.0],), {(): [0]}),
        # x**2*log(x**2)'s f' was 2*x*where(near exp(-1/2), log1p(...), 1 + 2*log|x|), NaN at
        # 0 (the judge's grid has 0, but the truth there is a limit, NaN as written): the
        # judge now checks one input at 0 against the limit, with the guards applied, and it
        # is multiply_no_nan(2*where(...), x), accurate near the root too.
        ("x**2*log(x**2)", "x2logx2_at_zero", ([0.0],), {(): [0], (0,): [0]}),
    ],
)
def test_powers_and_logs_at_a_zero_base(load_module, text, name, inputs, expected) -> None:
    import tensorflow as tf

    names = ["x", "y"][: len(inputs)]
    fn = getattr(load_module(text, name, names), name)
    got = tf_partials(tf, fn, [tf.constant(column, tf.float32) for column in inputs], 2)
    for index, values in expected.items():
        assert got[index].numpy().tolist() == values, (index, got[index].numpy())


def test_bernoulli_kl_in_probabilities_at_the_ends(load_module) -> None:
    # x*log(x/y) + (1 - x)*log((1 - x)/(1 - y)): each term was 0*log(0) = NaN where its
    # factor is 0 (x = 0 or 1), whose limit is 0 (factor_of_its_log: multiply_no_nan).
    import tensorflow as tf

    text = "x*log(x/y) + (1 - x)*log((1 - x)/(1 - y))"
    fn = load_module(text, "kl_probabilities", ["x", "y"]).kl_probabilities
    xs, ys = [0.0, 1.0, 0.0, 1.0], [0.25, 0.25, 0.9, 0.5]
    got = tf_partials(tf, fn, [tf.constant(xs, tf.float32), tf.constant(ys, tf.float32)], 1)
    y32 = [float(np.float32(v)) for v in ys]
    truth = [math.log(1 / (1 - b)) if a == 0 else math.log(1 / b) for a, b in zip(xs, y32)]
    slope_y = [-a / b + (1 - a) / (1 - b) for a, b in zip(xs, y32)]
    np.testing.assert_allclose(got[()].numpy(), truth, rtol=1e-6)
    np.testing.assert_allclose(got[(1,)].numpy(), slope_y, rtol=1e-6)


def test_power_of_inputs_where_the_power_overflows(load_module) -> None:
    # y*x**y/x was inf where x**y overflows and the slope does not (x = 3e35, y = 1.5).
    x, y = sp.symbols("x y", real=True)
    fn = load_module("x**y", "power", ["x", "y"]).power
    partials = {
        (): x**y,
        (0,): y * x ** (y - 1),
        (1,): x**y * sp.log(x),
        (0, 0): y * (y - 1) * x ** (y - 2),
        (0, 1): x ** (y - 1) * (1 + y * sp.log(x)),
        (1, 1): x**y * sp.log(x) ** 2,
    }
    partials[(1, 0)] = partials[(0, 1)]
    _check(fn, partials, [x, y], [(3e35, 1.5), (2.9e35, 1.25), (3.0, 2.5)])


def test_weibull_log_density_slope_where_the_power_overflows(load_module) -> None:
    # log(y) + (y - 1)*log(x) - x**y: SymPy's slope (y - 1 - y*x**y)/x is -inf/x at
    # x = 3e35, y = 1.5, where x**y overflows and the slope is -2.8e18 (power_over_base takes
    # the quotient into the term with the power). (d2f/dxdy is still -inf there: as exps,
    # expm1(xlogy(y, x)) overflows first.)
    import tensorflow as tf

    fn = load_module("log(y) + (y - 1)*log(x) - x**y", "weibull", ["x", "y"]).weibull
    xs, ys = [2.972394e35, 3.0e35, 2.5], [1.5151515, 1.25, 3.0]
    got = tf_partials(tf, fn, [tf.constant(xs, tf.float32), tf.constant(ys, tf.float32)], 2)
    x32 = [float(np.float32(v)) for v in xs]
    y32 = [float(np.float32(v)) for v in ys]
    with mpmath.workdps(50):
        slope = [float((b - 1) / mpmath.mpf(a) - b * mpmath.mpf(a) ** (b - 1)) for a, b in zip(x32, y32)]
        curvature = [float(-(b - 1) * (b * mpmath.mpf(a) ** (b - 2) + mpmath.mpf(a) ** -2)) for a, b in zip(x32, y32)]
    np.testing.assert_allclose(got[(0,)].numpy(), slope, rtol=2e-6)
    np.testing.assert_allclose(got[(0, 0)].numpy(), curvature, rtol=2e-6)


def test_power_mean_where_the_inner_power_overflows(load_module) -> None:
    # (x**y + 1)**(1/y), a generalised mean with its power an input: x**y overflows at
    # x = y = 30 (inf**(1/30) = inf; the truth is 30). Its exps form, the outer power too,
    # is exp(softplus(xlogy(y, x))/y) (derive._powers_as_exps), whose exp of a rounded
    # argument near log(x) costs a few ulps: 1e-6 relative.
    import tensorflow as tf

    # f and its slope in x only, so order 1 (the same forms as at order 2).
    fn = load_module("(x**y + 1)**(1/y)", "power_mean", ["x", "y"], order=1).power_mean
    xs = [30.0, 1e13, 100.0, 2.0]
    ys = [30.0, 3.0, 25.0, 3.0]
    got = tf_partials(tf, fn, [tf.constant(xs, tf.float32), tf.constant(ys, tf.float32)], 1)
    with mpmath.workdps(50):
        truth = [float((mpmath.mpf(a) ** b + 1) ** (1 / mpmath.mpf(b))) for a, b in zip(xs, ys)]
        slope = [float((mpmath.mpf(a) ** b + 1) ** (1 / mpmath.mpf(b) - 1) * mpmath.mpf(a) ** (b - 1)) for a, b in zip(xs, ys)]
    np.testing.assert_allclose(got[()].numpy(), truth, rtol=1e-6)
    np.testing.assert_allclose(got[(0,)].numpy(), slope, rtol=1e-6)


def test_power_times_decaying_exponential_where_either_factor_leaves_the_range(
    load_module,
) -> None:
    # x**3*exp(-x): at x = 90 exp(-x) flushes where f is 6.0e-34; at x = 1e20 the cube
    # overflows where exp(-x) flushes (inf*0 = NaN as written; every order is 0).
    x = sp.Symbol("x", real=True)
    fn = load_module("x**3*exp(-x)", "cube_decay", ["x"]).cube_decay
    _check(fn, x**3 * sp.exp(-x), [x], [(90.0,), (1e20,), (3.0,)])


@pytest.mark.parametrize(
    ("text", "name", "truth", "points"),
    [
        # x*y overflows at 1e30 where log1p(x*y) is 138.2 (stabilize._log1p_of_product).
        (
            "log1p(x*y)",
            "log1p_product",
            lambda x, y: sp.log(1 + x * y),
            [(1e30, 1e30), (-3e20, -2e20), (2.0, 3.0)],
        ),
        # exp(x) overflows at x = 100 and 90 where log(1 + exp(x)*y) is 100.7 and 21.0.
        (
            "log(1 + exp(x)*y)",
            "log1p_exp_product",
            lambda x, y: sp.log(1 + sp.exp(x) * y),
            [(100.0, 2.0), (90.0, 1e-30), (-3.0, 0.5)],
        ),
        # The Student-t term: x**2/y overflows at x = 6e36, y = 7e-25 (f is 225.0).
        (
            "log(1 + x**2/y)",
            "student_t",
            lambda x, y: sp.log(1 + x**2 / y),
            [(6e36, 7e-25), (1e20, 1.0), (3.0, 2.0)],
        ),
    ],
)
def test_log1p_of_a_product_that_overflows(
    load_module, text, name, truth, points
) -> None:
    x, y = sp.symbols("x y", real=True)
    fn = getattr(load_module(text, name, ["x", "y"]), name)
    _check(fn, truth(x, y), [x, y], points)


def test_angle_partials_where_the_squared_radius_overflows_or_flushes(
    load_module,
) -> None:
    # d atan2(y, x)/dy = x/(x**2 + y**2): x**2 overflows float32 at 3e37 (TF's own gradient
    # of atan2 is 0 there) and flushes at 1e-30 (inf); the partials are finite at both.
    x, y = sp.symbols("x y", real=True)
    fn = load_module("atan2(y, x)", "angle", ["x", "y"]).angle
    points = [
        (3e37, 3e37),
        (-3e37, 1e37),
        (1e-30, -2e-30),
        (-1e-19, 2e-19),
        (3.0, -4.0),
    ]
    _check(fn, sp.atan2(y, x), [x, y], points)


def test_gaussian_nll_curvature_in_scale_where_the_square_overflows(
    load_module,
) -> None:
    # d2/ds2 = (3*((x - m)/s)**2 - 1)/s**2 was inf at x = 3e36, s = 5.7e13 (the square is
    # 2.8e45); the truth is 2.6e18. difference_of_squares: (sqrt(3)*w - 1/s)*(sqrt(3)*w + 1/s).
    x, m, s = sp.symbols("x m s", real=True)
    fn = load_module("log(s) + (x - m)**2/(2*s**2)", "nll", ["x", "m", "s"]).nll
    points = [
        (3.0177066e36, 18.367348, 5.7055734e13),
        (1e36, -2.0, 1e15),
        (1.5, 0.5, 2.0),
    ]
    _check(fn, sp.log(s) + (x - m) ** 2 / (2 * s**2), [x, m, s], points)


@pytest.mark.parametrize(
    ("text", "name", "root"),
    [
        # f'' = (4*x**2 - 2)*exp(-x**2): x**2's rounding costs 8 bits at 2**-10 from the
        # root 1/sqrt(2), and up to 20 at the floats nearest it; difference_of_squares
        # writes 4*((x - c_hi) - c_lo)*(x + c), c_hi + c_lo = 1/sqrt(2).
        ("exp(-x**2)", "gauss", 0.7071067811865476),
        # f'' = x*(x**2 - 3)*exp(-x**2/2), root sqrt(3).
        ("x*exp(-x**2/2)", "hermite", 1.7320508075688772),
        # f' = log(x) + 1, root 1/e: log(x) rounds to -1 within 6e-8 there, 9 bits of f' at
        # the float32 nearest 1/e; log_root writes log1p((x - 1/e)/(1/e)), exact there.
        ("x*log(x)", "xlogx", 0.36787944117144233),
        # f' = 2*x*(2*log|x| + 1), root exp(-1/2) (log_root after xlogy's 2*xlogy(x**2, |x|)).
        ("x**2*log(x**2)", "x2logx2", 0.6065306597126334),
    ],
)
def test_second_derivative_next_to_an_irrational_root(
    load_module, text, name, root
) -> None:
    x = sp.Symbol("x", real=True)
    fn = getattr(load_module(text, name, ["x"]), name)
    near = np.float32(root)
    points = [
        (float(p),)
        for p in (
            near,
            np.nextafter(near, np.float32(2)),
            -np.nextafter(near, np.float32(0)),
            np.float32(root * (1 + 2.0**-10)),
            np.float32(0.3),
        )
    ]
    # Only where the function is real (x*log(x) is not for x < 0).
    truth = sp.sympify(text, locals={"x": x})
    points = [p for p in points if truth.subs(x, p[0]).is_real]
    _check(fn, sp.sympify(text, locals={"x": x}), [x], points)


@pytest.mark.parametrize(
    ("text", "name", "points"),
    [
        # The normal density with its constant 1/sqrt(2*pi): f'' = c*(x - 1)*(x + 1)*exp(-x**2/2)
        # is inf*0 = NaN from x = 1.8e19 wherever (x - 1)*(x + 1) is multiplied first;
        # no_nan_product guards it in any order. The judge measured sqrt(2)/sqrt(pi) in
        # float64, saw no NaN, and kept the unguarded form (whose printed order happened to
        # be safe; its docstring reported 84% of points within 3 bits).
        ("exp(-x**2/2)/sqrt(2*pi)", "normal_pdf", [(1e20,), (-3e38,), (1.5,)]),
        # tanh(x/2) written with exponentials: its f' is 1/(2*cosh(x/2)**2), whose derivative
        # is -sinh(x/2)/(2*cosh(x/2)**3), inf/inf from x = 179 on (tanh_over_cosh).
        ("(1 - exp(-x))/(1 + exp(-x))", "tanh_half", [(200.0,), (-1e30,), (1.5,)]),
        # |x| - log(1 + |x|) cancels near 0, where it is x**2/2: a Taylor polynomial in |x|
        # (regimes._series_in_abs; abs itself has no Taylor series at 0).
        ("abs(x) - log(1 + abs(x))", "fair", [(1e-3,), (-1e-5,), (0.3,), (-3.0,)]),
        # The second derivative is a where whose branch for x**2 < 1 is 2*log1pmx(x**2)/x**3
        # + ...: 0/0 below 1e-13, where x**4 flushes. That branch takes the derivative's own
        # series at 0 (regimes are sought per branch, against the derivative itself).
        ("log(1 + x**2)/x", "log1p_square_over_x", [(1e-13,), (-3e-15,), (0.2,), (-0.7,), (3.0,)]),
        # (1 + 1/x)**x's f'' as SymPy writes it divides by x**3*(1 + 1/x)**2, 0*inf = NaN below
        # x = 5e-20; x*(x + 1)**2 (clear_reciprocals) is not.
        ("(1 + 1/x)**x", "compound_interest", [(1e-25,), (3e-20,), (1e-8,), (2.0,)]),
        # f' = (sigmoid(x) - softplus(x)/x)/x cancels for x > 0 (20 bits at x = 10): reflected,
        # -(sigmoid(-x) + softplus(-x)/x)/x, which reflection_split had held as
        # 1 + (-1 - softplus(-x)/x), rounded to 0. f'' at x = 80 is a/x + b/x**2 with b/x**2
        # flushed (17 bits): Horner's scheme in 1/x (horner_reciprocal).
        ("log(1 + exp(x))/x", "softplus_over_x", [(10.0,), (40.0,), (80.0,), (82.0,), (-5.0,), (0.5,)]),
        # Weights outside a mixture: log(3) + log_mix(0, x, 1/3) cancels for x << 0 (28 bits at
        # x = -30); log1p(2*exp(x)) there. Its slope 2*exp(x)/(1 + 2*exp(x)) was
        # sigmoid(x + log(2)), measured by the judge with x + log(2) in float64: 4.7 bits.
        ("log(1 + 2*exp(x))", "log1p_twice_exp", [(-30.0,), (-60.0,), (-5.0,), (0.3,), (50.0,)]),
    ],
)
def test_one_input_forms_finite_far_out(load_module, text, name, points) -> None:
    x = sp.Symbol("x", real=True)
    fn = getattr(load_module(text, name, ["x"]), name)
    _check(fn, sp.sympify(text, locals={"x": x}), [x], points)


_X = sp.Symbol("x", real=True)


@pytest.mark.parametrize(
    ("text", "name", "truth", "points"),
    [
        # erfc underflows from x = 9.2 (log(0) = -inf; the truth is about -x**2), and near 0
        # it rounds where its log is near 0 (stabilize's log_erfc; mills, erfc's hazard).
        (
            "log(erfc(x))",
            "log_erfc",
            sp.log(sp.erfc(_X)),
            [(10.0,), (1e5,), (1e20,), (-1e-8,), (-30.0,), (2.2,)],
        ),
        # The log of the normal CDF: (1 + erf(-40/sqrt(2)))/2 is 0 (log(0)); the reference
        # in erfc: 1 + erf(-40/sqrt(2)) is 1e-349, beyond 60 digits. (Near x = 8 the value
        # rounds to 1 as written, -6.2e-16 as generated, 3 bits off: x/sqrt(2) rounds, and
        # erfc is steep there; beyond this test's few ulps.)
        (
            "log((1 + erf(x/sqrt(2)))/2)",
            "log_ndtr",
            sp.log(sp.erfc(-_X / sp.sqrt(2), evaluate=False) / 2),
            [(-40.0,), (-1e10,), (2.5,), (1.5,), (-1.0,)],
        ),
    ],
)
def test_logs_of_erfc_far_out(load_module, text, name, truth, points) -> None:
    fn = getattr(load_module(text, name, ["x"]), name)
    _check(fn, truth, [_X], points)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_erfc_hazard_helper_against_mpmath(load_module, dtype) -> None:
    # erfc(x)*exp(x**2) is 1/(sqrt(pi)*mills(x)): the helper's two regimes (the quotient
    # below its start, erfc's continued fraction above) and their seams (1.25 in float32,
    # 2 in float64), in both dtypes;
    # f and f' (f'' cancels for large x, beyond what the helper's gradient promises).
    import tensorflow as tf

    x = sp.Symbol("x", real=True)
    module = load_module("erfc(x)*exp(x**2)", "erfcx", ["x"])
    points = [-5.0, -0.5, 0.0, 0.5, 1.2, 1.25, 1.3, 1.9, 2.0, 2.1, 4.0, 10.0, 1e4, 1e30]
    with tf.GradientTape() as tape:
        xs = tf.constant(points, dtype=getattr(tf, dtype))
        tape.watch(xs)
        value = module.erfcx(xs)
    slope = tape.gradient(value, xs)
    ulp = float(np.finfo(getattr(np, dtype)).eps)
    for p, got, got_slope in zip(points, value.numpy(), slope.numpy()):
        with mpmath.workdps(60):
            u = mpmath.mpf(p)
            true = mpmath.erfc(u) * mpmath.exp(u * u)
            true_slope = 2 * u * true - 2 / mpmath.sqrt(mpmath.pi)
        # A few ulps: the quotient rounds exp(-x**2) by x**2's rounding (x up to 2).
        assert abs(got - float(true)) <= 8 * ulp * float(true), (dtype, p, got, true)
        if p < 1e4:  # beyond, the slope is below float32's smallest normal
            assert abs(got_slope - float(true_slope)) <= 64 * ulp * abs(
                float(true_slope)
            ), (
                dtype,
                p,
                got_slope,
                true_slope,
            )


def test_derivatives_on_a_constant_branch_are_zero(load_module) -> None:
    # The fuzzer's asin(min(1, x)): f' was where(x >= 1, 0, 1)/sqrt(1 - where(x >= 1, 1, x**2)),
    # 0/0 = NaN for x >= 1, where the function is the constant pi/2 (stabilize's zero_branch).
    import tensorflow as tf

    fn = load_module("asin(min(1, x))", "clipped_asin", ["x"]).clipped_asin
    xs = tf.constant([1.45, 1.0, 0.5], tf.float32)
    with tf.GradientTape() as outer:
        outer.watch(xs)
        with tf.GradientTape() as inner:
            inner.watch(xs)
            value = fn(xs)
        first = inner.gradient(value, xs)
    second = outer.gradient(first, xs)
    assert first.numpy()[:2].tolist() == [0.0, 0.0]
    assert second.numpy()[:2].tolist() == [0.0, 0.0]
    assert np.isclose(first.numpy()[2], 1 / np.sqrt(0.75), rtol=TOL)
    assert np.isclose(second.numpy()[2], 0.5 / 0.75**1.5, rtol=TOL)


@pytest.mark.parametrize(
    ("text", "name", "points"),
    [
        # log(sinh(x)/x) far out is |x| - log(2*|x|); as log(1/(2*x)) it was log(0) = -inf at
        # x = 2.5e38 (the tail's logs are split). Its f'' = 1/x**2 - 1/sinh(x)**2 was
        # 1/x**2 + 1 - coth(x)**2 as differentiated: 7 bits lost at x = 20 (the cosh**2 =
        # 1 + sinh**2 candidates).
        (
            "log(sinh(x)/x)",
            "log_sinhc",
            [(3e38,), (-2.5e38,), (20.0,), (-10.0,), (5.0,)],
        ),
        # log(sinh(x))'' = -1/sinh(x)**2 was 1 - coth(x)**2, 0 at x = 10 (truth -8.2e-9).
        ("log(sinh(x))", "log_sinh", [(10.0,), (5.0,), (2.0,), (40.0,)]),
        # log(x/sinh(x))'' near 0 is -1/3 + x**2/15: its series was taken numerically from the
        # derivative as differentiated, terms of 1e420 at mpmath's steps, and came out
        # without its constant term: no series, and 0 at x = 1e-10.
        ("log(x/sinh(x))", "log_x_over_sinh", [(1e-10,), (-3e-4,), (0.02,)]),
        ("log(tanh(x)/x)", "log_tanhc", [(1e-20,), (-0.01,)]),
        # log(cosh(x)/x**2) at x = 1e-25 is 115: log|x**2| was log(0) (x**2 flushes) plus
        # log(sign(x**2)); 2*log|x| is not. Its slope at 1e-13 was -2/x**3*(...), -inf.
        ("log(cosh(x)/x**2)", "log_cosh_over_square", [(1e-25,), (-1e-13,)]),
    ],
)
def test_logs_of_hyperbolic_ratios(load_module, text, name, points) -> None:
    x = sp.Symbol("x", real=True)
    fn = getattr(load_module(text, name, ["x"]), name)
    _check(fn, sp.sympify(text, locals={"x": x}), [x], points)


def test_log_of_a_ratio_at_its_removable_point(load_module) -> None:
    # log(tanh(x)/x) at 0 is 0, with f' = 0 and f'' = -2/3: log1p((tanh(x) - x)/x) is 0/0
    # there, and the where's condition on it was NaN, so it took the far branch, NaN too.
    import tensorflow as tf

    fn = load_module("log(tanh(x)/x)", "log_tanhc", ["x"]).log_tanhc
    got = tf_partials(tf, fn, [tf.constant([0.0], tf.float32)], 2)
    assert [float(got[i].numpy()[0]) for i in [(), (0,)]] == [0.0, 0.0]
    assert np.isclose(float(got[(0, 0)].numpy()[0]), -2 / 3, rtol=TOL)


def test_log_cosh_over_a_square_near_zero(load_module) -> None:
    # log(cosh(x))/x**2 is 1/2 - x**2/12 + x**4/45 - ... at 0: its Taylor polynomials (mpmath's,
    # the constant term 0 where its first step left log(cosh(h)) = log(1); the slopes', from
    # f's, as their own forms cancel beyond mpmath's precision). Before, f was 0 where
    # logcosh(x) flushes, and f' and f'' cancelled to garbage below 0.1. The truth: the series.
    x = sp.Symbol("x", real=True)
    fn = load_module("log(cosh(x))/x**2", "log_cosh_over_square", ["x"]).log_cosh_over_square
    series = sp.Rational(1, 2) - x**2 / 12 + x**4 / 45 - 17 * x**6 / 2520
    truth = {(): series, (0,): sp.diff(series, x), (0, 0): sp.diff(series, x, 2)}
    _check(fn, truth, [x], [(1e-25,), (-1e-10,), (2e-3,), (-0.03,)])


@pytest.mark.parametrize(
    ("text", "name", "points"),
    [
        # x*exp(x)/(exp(x) - 1) is x + x/(exp(x) - 1): its f'' as SymPy writes it,
        # (x*exp(x)*(exp(x) + 1) - 2*exp(x)*(exp(x) - 1))/(exp(x) - 1)**3, cancelled to
        # -3.8e-6 for x in [16, 27] (truth 8e-7 to 4e-11); partial fractions in exp(x) do not.
        ("x*exp(x)/(exp(x) - 1)", "planck_shifted", [(16.0,), (27.0,), (5.0,), (-5.0,), (0.3,)]),
        # log(x**2 + exp(-x))'' for x > 0: 7-9 bits off over [8, 40] as one quotient.
        ("log(x**2 + exp(-x))", "log_square_plus_exp", [(12.0,), (36.0,), (3.0,), (-4.0,)]),
    ],
)
def test_partial_fractions_in_exp(load_module, text, name, points) -> None:
    x = sp.Symbol("x", real=True)
    fn = getattr(load_module(text, name, ["x"]), name)
    _check(fn, sp.sympify(text, locals={"x": x}), [x], points)


def test_functions_of_a_difference_where_the_inputs_meet(load_module) -> None:
    # The Gumbel NLL exp(x - y) - (x - y) at x = y = -1.8e36 was summed (exp(0) + y) - x = 0
    # (truth 1): the inputs of a sum are now added first. The smooth L1 loss
    # sqrt(1 + (x - y)**2) - 1 had d2f/dy2 over (x**2 - 2*x*y + y**2 + 1)**(3/2), NaN at
    # x = y = -1.8e36; as a function of x - y it is hypot(1, x - y)**-3.
    x, y = sp.Symbol("x", real=True), sp.Symbol("y", real=True)
    points = [(-1.78e36, -1.78e36), (3e38, 3e38), (1e20, 1e20), (2.0, -1.5), (0.5, 0.75)]
    for text, name in [("exp(x - y) - (x - y)", "gumbel_nll"), ("sqrt(1 + (x - y)**2) - 1", "smooth_l1")]:
        fn = getattr(load_module(text, name, ["x", "y"]), name)
        _check(fn, sp.sympify(text, locals={"x": x, "y": y}), [x, y], points)


def test_functions_of_a_product_where_its_square_or_itself_overflows(load_module) -> None:
    # sqrt(1 + x**2*y**2): SymPy writes (x*y)**2 as x**2*y**2, which the hypot rules did not
    # take for a square (inf at x = y = -1.4e19, where the truth is 2e38; its slopes NaN). And
    # x*y/sqrt(1 + x**2*y**2) is x*y/hypot(1, x*y), inf/inf = NaN where x*y overflows and the
    # truth is +-1; hypot_ratio(x*y, 1) takes that limit.
    x, y = sp.Symbol("x", real=True), sp.Symbol("y", real=True)
    points = [(-1.4e19, -1.4e19), (-1e30, -1e30), (3e38, -2e20), (3.0, 0.5), (1e-20, 1e10), (2e20, -3e18)]
    for text, name in [("sqrt(1 + x**2*y**2)", "product_hypot"), ("x*y/sqrt(1 + x**2*y**2)", "product_softsign")]:
        fn = getattr(load_module(text, name, ["x", "y"]), name)
        _check(fn, sp.sympify(text, locals={"x": x, "y": y}), [x, y], points)


def test_softsign_of_a_product_or_sum_where_it_overflows(load_module) -> None:
    # u/(1 + |u|) for u = x*y or x + y: inf/inf = NaN where u overflows and the truth is +-1
    # (quotient_by_abs takes it as sign(u)/(1 + 1/|u|)); the slopes were right already.
    x, y = sp.Symbol("x", real=True), sp.Symbol("y", real=True)
    points = [(1e20, 1e20), (-3e19, 2e20), (3e38, 3e38), (-2e38, -2e38), (3.0, 0.5), (1e-20, 1e10), (0.0, 2.0)]
    for text, name in [("x*y/(1 + abs(x*y))", "product_softsign"), ("(x + y)/(1 + abs(x + y))", "sum_softsign")]:
        fn = getattr(load_module(text, name, ["x", "y"]), name)
        _check(fn, sp.sympify(text, locals={"x": x, "y": y}), [x, y], points)


@pytest.mark.parametrize(
    ("text", "name", "points"),
    [
        # x*y/(1 + x**2*y**2) far out over its largest term, x**4*y**4: the slopes' monomials
        # were divided one input at a time, 1/(x**4*y**3) as ((((1/x)/x)/x)/x)/y/y/y, which
        # overflows where x is tiny and y huge though x*y is moderate (-inf at x = 2.9e-15,
        # y = -3.7e25, truth 3.3e3). They are powers of 1/(x*y) now, times what is left:
        # ((1/x)/y)**3/x.
        (
            "x*y/(1 + x**2*y**2)",
            "product_rational",
            [
                (2.8812071e-15, -3.6809290e25),
                (-4.222133e-28, -9.615652e31),
                (-1.1029433e-21, 9.1559232e23),
                (1.8721491e-10, -1.3417129e11),
                (2.0, -0.125),
                (1e20, 1e-15),
            ],
        ),
        # Its slopes' common denominator is (1 + x*y + x**2*y**2)**2, which cancel expands
        # into five terms, and dominant_term (a sum of two or three) saw none: the chain
        # rule's form was chosen, NaN wherever (x*y)**2 overflows (68% of the slopes within
        # 3 bits). The factored quotient is offered to it too.
        (
            "x*y/(1 + x*y + x**2*y**2)",
            "product_rational_sum",
            [(-1.5541373e35, -1.5541373e35), (-2.2774393e22, -2.2774393e22), (3.680929e25, 89.0), (-2.0, 0.25)],
        ),
    ],
)
def test_rational_function_of_a_product_where_the_inputs_are_far_apart(load_module, text, name, points) -> None:
    x, y = sp.Symbol("x", real=True), sp.Symbol("y", real=True)
    fn = getattr(load_module(text, name, ["x", "y"]), name)
    _check(fn, sp.sympify(text, locals={"x": x, "y": y}), [x, y], points)


def test_cross_entropy_of_a_probability_where_its_terms_cancel(load_module) -> None:
    # -y*log(x) - (1 - y)*log(1 - x) at x = 1/2 is log(2) for every y, and its terms +-0.69*y
    # cancelled to 0 at y = 1e20. Gathered by powers of y, y*(log(1 - x) - log(x)) - log(1 - x),
    # its y*... is 0 there. Its curvature in x, (y + x**2 - 2*x*y)/(x*(x - 1))**2, cancels at
    # x = 1/2 added in that order (0 where the truth is 4). The judge added x**2 last, so
    # measured it exact, and kept it over the gathered x**2 + y*(1 - 2*x); now it adds as
    # the module does, and takes the gathered form.
    x, y = sp.Symbol("x", real=True), sp.Symbol("y", real=True)
    text = "(-y)*log(x) - (1 - y)*log(1 - x)"
    fn = load_module(text, "cross_entropy", ["x", "y"]).cross_entropy
    points = [(0.5, 1e20), (0.5, -3e30), (0.5, 1e6), (0.75, 0.3), (1e-30, 0.5), (0.25, 2.0)]
    _check(fn, sp.sympify(text, locals={"x": x, "y": y}), [x, y], points)


def test_log_of_one_plus_the_abs_of_a_product_where_it_overflows(load_module) -> None:
    # log(1 + |x*y|): SymPy keeps |x*y| whole, and log1p_of_product saw no product: log(inf)
    # where x*y overflows (truth 92.1 at x = y = 1e20), its slopes y*sign(x*y)/(1 + |x*y|) 0
    # where the truth is 1/x. derive writes it |x|*|y|.
    x, y = sp.Symbol("x", real=True), sp.Symbol("y", real=True)
    text = "log(1 + abs(x*y))"
    fn = load_module(text, "log_abs_product", ["x", "y"]).log_abs_product
    points = [(1e20, 1e20), (-3e19, 2e20), (3e38, -3e38), (3.0, 0.5), (1e-20, 1e10), (-2.0, 1e30)]
    _check(fn, sp.sympify(text, locals={"x": x, "y": y}), [x, y], points)


def test_gaussian_nll_in_log_sigma_where_the_scale_overflows(load_module) -> None:
    # (x - y)**2*exp(-2*y)/2 + y, y = log(sigma): d/dy was 1 - (exp(-y) + (x - y)*exp(-y))*(x -
    # y)*exp(-y) by halves, inf*0 = NaN at x = y = -1e30 (the truth is 1), and inf - inf = NaN
    # at x = -1.4e19, y = -1.3e11 (the truth is -inf); d2f/dx dy there likewise.
    x, y = sp.Symbol("x", real=True), sp.Symbol("y", real=True)
    text = "(x - y)**2/(2*exp(2*y)) + y"
    fn = load_module(text, "gaussian_nll_log_sigma", ["x", "y"]).gaussian_nll_log_sigma
    points = [(-1e30, -1e30), (-2.5e38, -2.5e38), (-1.4090817e19, -1.3417129e11), (1.5, -30.0), (0.5, 0.25), (3.0, 40.0)]
    _check(fn, sp.sympify(text, locals={"x": x, "y": y}), [x, y], points)


def test_student_t_slope_in_its_scale_where_the_ratio_overflows(load_module) -> None:
    # log(s) + 2*log(1 + (x/s)**2/3)'s d/ds = -3*(s + x)*(x - s)/(s*(x**2 + 3*s**2)), scaled
    # by m = (|x| + |s|)/2 against overflow: s/m flushed to 0 in the denominator at
    # x = -2.6e32, s = 3e-28 (-inf for -1e28). The divisor s now divides last, unscaled.
    x, s = sp.Symbol("x", real=True), sp.Symbol("s", positive=True)
    text = "log(s) + 2*log(1 + (x/s)**2/3)"
    fn = load_module(text, "student_t", ["x", "s"]).student_t
    points = [(-2.56e32, 2.95e-28), (-4.34e21, 3.99e-22), (3e38, 3e38), (1.5, 0.5), (1e-20, 2.0)]
    _check(fn, sp.sympify(text, locals={"x": x, "s": s}), [x, s], points)


def test_bernoulli_kl_in_logits_near_equal_and_far_out(load_module) -> None:
    # softplus(y) - softplus(x) + (x - y)*sigmoid(x) (softplus_divergence): 4e-12 at x = -7e-33,
    # y = -5.7e-6 and 1.3e-10 at x = 42, y = 23, from terms of 0.69 and 42 (83.5% of the
    # benchmark's points within 3 bits as written, 99.2% now). f only: its slopes are as before.
    import tensorflow as tf

    x, y = sp.Symbol("x", real=True), sp.Symbol("y", real=True)
    text = "log(1 + exp(y)) - log(1 + exp(x)) + (x - y)*exp(x)/(1 + exp(x))"
    fn = load_module(text, "bernoulli_kl", ["x", "y"]).bernoulli_kl
    points = [(-7.061097e-33, -5.6932913e-06), (42.424244, 22.727272), (1.0, 1.0 + 2.0**-20), (-3.0, 2.0), (60.0, -60.0)]
    got = fn(tf.constant([p[0] for p in points]), tf.constant([p[1] for p in points])).numpy()
    truth = sp.log(1 + sp.exp(y)) - sp.log(1 + sp.exp(x)) + (x - y) * sp.exp(x) / (1 + sp.exp(x))
    for (a, b), value in zip(points, got.tolist()):
        true = float(truth.subs({x: sp.Float(a, 80), y: sp.Float(b, 80)}).evalf(80))
        assert abs(value - true) <= 8 * float(np.spacing(np.float32(abs(true)))), (a, b, value, true)


def test_soft_clip_where_its_slopes_cancel(load_module) -> None:
    # softplus(x) - softplus(x - 1), a smooth clip to [0, 1]: its slope sigmoid(x) -
    # sigmoid(x - 1) was 0 at x = 20 (truth 3.5e-9), and its f'' = sigmoid'(x) -
    # sigmoid'(x - 1) is 0 at x = 1/2, where the slopes cancel (it was -7e-9 there).
    x = sp.Symbol("x", real=True)
    fn = load_module("softplus(x) - softplus(x - 1)", "soft_clip", ["x"]).soft_clip
    truth = sp.log(1 + sp.exp(x)) - sp.log(1 + sp.exp(x - 1))
    _check(fn, truth, [x], [(20.0,), (40.0,), (0.5,), (0.5 + 2.0**-20,), (-3.0,)])


def test_softplus_difference_where_both_terms_round_alike(load_module) -> None:
    # log(1 + exp(x - y)) - log(1 + exp(-y)) at x = -88, y = -3.3e9: both logs are about
    # 3.3e9, one float, and the difference was 0; the truth is x, -88.
    x, y = sp.symbols("x y", real=True)
    text = "log(1 + exp(x - y)) - log(1 + exp(-y))"
    fn = load_module(text, "shifted_softplus", ["x", "y"]).shifted_softplus
    truth = sp.log(1 + sp.exp(x - y)) - sp.log(1 + sp.exp(-y))
    _check(fn, truth, [x, y], [(-88.0, -3.34e9), (100.0, -1e20), (0.5, 2.0)])


@pytest.mark.parametrize(
    "text, name",
    [
        ("1/(1 + exp(-x)) - 1/(1 + exp(-y))", "sigmoid_gap"),
        ("log(1 + exp(x)) - log(1 + exp(y))", "softplus_gap"),
    ],
)
def test_differences_of_logistic_terms_far_apart(load_module, text, name) -> None:
    # The gaps are written with expm1(x - y) where x is near y. Far apart, x - y rounds, and
    # expm1 of it was off by as many bits as x - y has above 1: sigmoid(40.9) -
    # sigmoid(-28.8) came out 0.9999979 (22 ulps from 1), softplus(-69.7) - softplus(9.2e-7)
    # 10 ulps off.
    x, y = sp.symbols("x y", real=True)
    fn = getattr(load_module(text, name, ["x", "y"]), name)
    truth = sp.sympify(text, locals={"x": x, "y": y})  # the test's own text, not user input
    points = [(40.909092, -28.787878), (74.242424, 0.0011237828), (-69.69697, 9.2492024e-07), (3.0, 1.0), (1e-3, 2e-3)]
    _check(fn, truth, [x, y], [tuple(float(np.float32(c)) for c in p) for p in points])


def test_logistic_log_density_slope_near_its_mode(load_module) -> None:
    # The slope in x of the logistic distribution's log-density is (2*sigmoid(u) - 1)/s,
    # u = (m - x)/s: sigmoid(u) rounds to 1/2 near the mode, and the slope was 0 at
    # x = -4.8e-19, m = 5.8e-16, s = 2e-4 (truth 7.6e-9); tanh(u/2)/s keeps it.
    x, m, s = sp.symbols("x m s", real=True)
    text = "-(x - m)/s - 2*log(1 + exp(-(x - m)/s)) - log(s)"
    fn = load_module(text, "logistic_logpdf", ["x", "m", "s"]).logistic_logpdf
    truth = -(x - m) / s - 2 * sp.log(1 + sp.exp(-(x - m) / s)) - sp.log(s)
    points = [(-4.750875e-19, 5.80217e-16, 0.00019506711), (2.4676676e-31, -9.2492024e-07, 18.181818), (1.5, 0.5, 2.0)]
    _check(fn, truth, [x, m, s], [tuple(float(np.float32(c)) for c in p) for p in points], order=1)


def test_poisson_and_gamma_log_densities_near_their_modes(load_module) -> None:
    # k*log(l) - l - lgamma(k + 1): at k = l = 1e6 the terms are 1.3e7 and cancel to -7.8
    # (in float32 it came out -5 or +3), its slope in k log(l) - digamma(k + 1) cancels to
    # -5e-7, and at k = 3e8, k + 1 rounds to k. The same in the log-rate x = log(l). The
    # gamma log-density in its shape a near a = x = 1e-7, where -log(x) and -lgamma(a) cancel.
    k, l, a, x = sp.symbols("k l a x", positive=True)
    fn = load_module("k*log(l) - l - lgamma(k + 1)", "poisson", ["k", "l"]).poisson
    truth = k * sp.log(l) - l - sp.loggamma(k + 1)
    _check(fn, truth, [k, l], [(1e4, 1e4), (1e6, 1e6), (3e8, 3e8), (3e8, 1e5), (2.5, 0.5)], order=1)
    fn = load_module("k*x - exp(x) - lgamma(k + 1)", "log_rate", ["x", "k"]).log_rate
    x = sp.Symbol("x", real=True)
    truth = k * x - sp.exp(x) - sp.loggamma(k + 1)
    # f only: its slope in x, k - exp(x), is as far off as exp(x) is rounded (0.03 at 1e6).
    _check(fn, truth, [x, k], [(float(np.float32(math.log(1e6))), 1e6), (20.0, 485165184.0), (-85.0, 20.0), (1.0, 2.5)], order=0)
    # With a rate b (f only: its slope in x, (a - 1)/x - b, is as far off as (a - 1)/x is
    # rounded near the mode).
    a, b, x = sp.symbols("a b x", positive=True)
    text = "a*log(b) + (a - 1)*log(x) - b*x - lgamma(a)"
    fn = load_module(text, "gamma_rate", ["a", "b", "x"]).gamma_rate
    truth = a * sp.log(b) + (a - 1) * sp.log(x) - b * x - sp.loggamma(a)
    _check(fn, truth, [a, b, x], [(3e6, 2.0, 1.5e6), (1e7, 0.25, 4e7), (20.0, 1e-20, 1e-20), (2.5, 3.0, 2.0)], order=0)
    fn = load_module("(a - 1)*log(x) - x - lgamma(a)", "gamma_kernel", ["a", "x"]).gamma_kernel
    truth = (a - 1) * sp.log(x) - x - sp.loggamma(a)
    points = [(3e6, 3e6), (1e10, 1e-30), (float(np.float32(1e-7)), float(np.float32(1e-7))), (4.0, 5.0)]
    _check(fn, truth, [a, x], points, order=1)


def test_inverse_hyperbolic_sine_minus_its_log(load_module) -> None:
    # asinh(x) - log(2*x) = 1/(4*x**2) - 3/(32*x**4) + ... : the two logs cancel (13 bits
    # lost at x = 40); its algebraic tail from x = 8 on.
    x = sp.Symbol("x", real=True)
    fn = load_module("asinh(x) - log(2*x)", "asinh_gap", ["x"]).asinh_gap
    _check(fn, sp.asinh(x) - sp.log(2 * x), [x], [(40.0,), (1e3,), (1e10,)])


def test_box_cox_at_and_near_a_zero_exponent(load_module) -> None:
    # (x**l - 1)/l is 0/0 = NaN at l = 0, where it is log(x), its slope in l log(x)**2/2
    # and its curvature log(x)**3/3; near 0 the power rounds to 1 (l = 1e-8: 0) and the
    # slope cancels. The series of expm1(u)/u in u = l*log(x) serves |u| < 1/2.
    import tensorflow as tf

    l, x = sp.symbols("l x", real=True)
    fn = load_module("(x**l - 1)/l", "box_cox", ["l", "x"]).box_cox
    _check(fn, (x**l - 1) / l, [l, x], [(1e-8, 3.0), (-1e-3, 0.5), (0.3, 10.0)])
    xs = [0.5, 3.0, 1e5]
    got = tf_partials(tf, fn, [tf.zeros(3, tf.float32), tf.constant(xs, tf.float32)], 2)
    for index, power in [((), 1), ((0,), 2), ((0, 0), 3)]:
        true = [math.log(v) ** power / power for v in xs]
        assert got[index].numpy() == pytest.approx(true, rel=TOL), index


def test_exponential_growth_rate_at_zero(load_module) -> None:
    # (exp(a*x) - 1)/a at a = 0 is x (0/0 as written), its slope in a x**2/2, which cancels
    # near a = 0 (0 at a = 1e-8, x = 2).
    a, x = sp.symbols("a x", real=True)
    fn = load_module("(exp(a*x) - 1)/a", "growth", ["a", "x"]).growth
    _check(fn, (sp.exp(a * x) - 1) / a, [a, x], [(1e-8, 2.0), (-1e-8, 3.0)])
    import tensorflow as tf

    got = tf_partials(tf, fn, [tf.zeros(2), tf.constant([2.0, -0.5])], 2)
    assert got[()].numpy().tolist() == [2.0, -0.5]
    assert got[(0,)].numpy() == pytest.approx([2.0, 0.125], rel=TOL)  # x**2/2


def test_squareplus_with_a_learned_offset(load_module) -> None:
    # (x + sqrt(x**2 + b))/2: x**2 overflows at x = 1e30 (inf; the truth is 1e30), and for
    # x << 0 the sum cancels (0 at x = -1e5, b = 4; the truth is 1e-5; x**2 overflows at -1e20). hypot(x, sqrt(b))
    # where b >= 0, and the side rule inside that where. Where b < 0, x**2 overflows as well
    # (inf at x = 1e30, b = -60; NaN in the slope): the root of a difference of squares,
    # sqrt(|x| - sqrt(-b))*sqrt(|x| + sqrt(-b)), does not.
    b, x = sp.symbols("b x", real=True)
    fn = load_module("(x + sqrt(x**2 + b))/2", "squareplus", ["b", "x"]).squareplus
    points = [(4.0, -1e5), (0.1, -1e20), (1.0, 1e30), (4.0, 0.5), (-60.0, 1e30), (-1.5e13, 9e23), (-2.0, -1e20), (-4.0, 3.0)]
    _check(fn, (x + sp.sqrt(x**2 + b)) / 2, [b, x], points)


@pytest.mark.parametrize(
    ("text", "partials"),
    [
        # log(1 + a*x)/a at a = 0: x, its slope in a -x**2/2 and curvature 2*x**3/3.
        ("log(1 + a*x)/a", lambda x: (x, -(x**2) / 2, 2 * x**3 / 3)),
        # atan(a*x)/a: x, 0 and -2*x**3/3.
        ("atan(a*x)/a", lambda x: (x, 0.0, -2 * x**3 / 3)),
    ],
)
def test_scaled_functions_at_a_zero_scale(load_module, text, partials) -> None:
    # 0/0 = NaN at a = 0 as written; the Taylor polynomial of g(u)/u in u = a*x serves.
    import tensorflow as tf

    fn = load_module(text, "scaled", ["a", "x"]).scaled
    xs = [0.5, -3.0, 20.0]
    got = tf_partials(tf, fn, [tf.zeros(3), tf.constant(xs)], 2)
    for index, k in [((), 0), ((0,), 1), ((0, 0), 2)]:
        true = [partials(v)[k] for v in xs]
        assert got[index].numpy() == pytest.approx(true, rel=TOL, abs=1e-30), index


def test_log_cdfs_where_the_power_flushes(load_module) -> None:
    # The Rayleigh log-CDF log(1 - exp(-x**2/2)) at x = 1e-20 is log(0) = -inf as written
    # (x**2 flushes); the truth is 2*log(x) - log(2), -92.8, its slope 2/x.
    x = sp.Symbol("x", real=True)
    fn = load_module(
        "log(1 - exp(-x**2/2))", "rayleigh_log_cdf", ["x"]
    ).rayleigh_log_cdf
    truth = sp.log(1 - sp.exp(-(x**2) / 2))
    _check(fn, truth, [x], [(1e-20,), (-3e-20,), (1e-3,), (2.0,)])


def test_weibull_log_cdf_where_the_power_flushes(load_module) -> None:
    # log(1 - exp(-(x/l)**k)) at x = 1e-10, l = 1, k = 5: (x/l)**5 flushes; the truth is
    # 5*log(1e-10) = -115.1. (Its partials keep forms the judge's grid cannot tell apart
    # from the where's; see the closing note of session 16.)
    import tensorflow as tf

    text = "log(1 - exp(-(x/l)**k))"
    # f only, so order 1: the judge chooses f alike at any order, and the six curvatures of
    # three inputs took 40 of this test's 63 s.
    fn = load_module(text, "weibull_log_cdf", ["x", "l", "k"], order=1).weibull_log_cdf
    points = [(1e-10, 1.0, 5.0), (1e-30, 0.1, 2.0), (0.5, 2.0, 1.5)]
    got = fn(*(tf.constant([p[i] for p in points]) for i in range(3))).numpy()
    for value, (x, l, k) in zip(got, points):
        with mpmath.workdps(50):
            true = float(mpmath.log(-mpmath.expm1(-((mpmath.mpf(x) / l) ** k))))
        assert value == pytest.approx(true, rel=TOL), (x, l, k)


def test_log_of_a_power_with_the_input_in_its_exponent(load_module) -> None:
    # log(x**x) is log(inf) from x = 40 as written; xlogy(x, x) is 195.6 at x = 50.
    x = sp.Symbol("x", real=True)
    fn = load_module("log(x**x)", "log_self_power", ["x"]).log_self_power
    _check(fn, x * sp.log(x), [x], [(50.0,), (1e10,), (0.25,)])


def test_pseudo_huber_slopes_in_a_learned_scale(load_module) -> None:
    # d**2*(sqrt(1 + (x/d)**2) - 1) has d/dd = 2*d*(h - 1) - x**2/(d*h), h = sqrt(1 +
    # (x/d)**2): its terms cancel for |x| << |d| (0 at x = 1e-3, d = 100; the truth is
    # x**4/(4*d**3) = 2.5e-19). Over the conjugate of its root, sign(d)*x**4/(H*(|d| +
    # H)**2), H = hypot(d, x), they do not. Its curvature in d cancels for |d| << |x|
    # (truth -2) and for |x| << |d|; with d**2 + x**2 = H**2 it is -(H - |d|)**2*(2*H +
    # |d|)/H**3.
    import tensorflow as tf

    x, d = sp.symbols("x d", real=True)
    fn = load_module(
        "d**2*(sqrt(1 + (x/d)**2) - 1)", "pseudo_huber", ["x", "d"]
    ).pseudo_huber
    h = sp.sqrt(x**2 + d**2)
    slope = sp.sign(d) * x**4 / (h * (sp.Abs(d) + h) ** 2)
    curvature = -(x**4) * (2 * h + sp.Abs(d)) / (h**3 * (h + sp.Abs(d)) ** 2)
    points = [(1e-3, 100.0), (-1e-3, 100.0), (0.01, -10.0), (1e-6, 1e3), (5.0, 2.0)]
    points += [(1e3, 1e-3), (-20.0, 0.01)]
    got = tf_partials(
        tf, fn, [tf.constant([p[i] for p in points]) for i in range(2)], 2
    )
    for index, truth in (((1,), slope), ((1, 1), curvature)):
        for (px, pd), g in zip(points, got[index].numpy()):
            true = float(
                truth.subs({x: sp.Float(px, 40), d: sp.Float(pd, 40)}).evalf(40)
            )
            assert abs(g - true) <= TOL * abs(true), (index, px, pd, g, true)


def test_root_of_a_product_that_flushes_or_overflows(load_module) -> None:
    # The Bhattacharyya term sqrt(p*q) at p = q = 1e-20: the product flushes, 0 (the truth
    # is 1e-20) and its slopes NaN; at p = q = -1e20 it overflows, inf (the truth is 1e20).
    p, q = sp.symbols("p q", real=True)
    fn = load_module("sqrt(p*q)", "bhattacharyya", ["p", "q"]).bhattacharyya
    points = [(1e-20, 1e-20), (-1e20, -1e20), (1e-30, 4e-10), (2.0, 8.0)]
    _check(fn, sp.sqrt(p * q), [p, q], points)


def test_steep_functions_of_a_rounded_difference(load_module) -> None:
    # With --compensated-arguments: exp(x - y) at x - y = -78.8 from the rounded difference is 4e-6 off in its argument,
    # 64 ulps of its value (5.3 bits measured); the exact rounding error (TwoSum), added
    # back to first order, leaves the value's own rounding.
    x, y = sp.symbols("x y", real=True)
    pairs = [
        (-0.00019506711, 78.78788),
        (-6.060606, 54.545456),
        (74.242424, 0.0011237828),
        (40.909092, -9.2492024e-07),
    ]
    # float32 values, so that mpmath sees the inputs the module does.
    points = [tuple(float(np.float32(v)) for v in p) for p in pairs]
    fn = load_module(
        "exp(x - y)", "growth", ["x", "y"], compensated_arguments=True
    ).growth
    _check(fn, sp.exp(x - y), [x, y], points)
    # Its logistic kin in the tails, sigmoid and softplus of the difference.
    fn = load_module(
        "log(1 + exp(x - y))", "margin", ["x", "y"], compensated_arguments=True
    ).margin
    _check(fn, sp.log(1 + sp.exp(x - y)), [x, y], points[:2])


def test_gaussian_tail_with_its_square_rounded(load_module) -> None:
    # With --compensated-arguments: exp(-x**2/2) at x = 9.09: x**2 rounds by 2.5e-6 of 82.6, 41 ulps of the value; with
    # the square's exact rounding error (TwoProduct of x's halves) the tail is right. The
    # derivatives carry the same exp.
    x = sp.Symbol("x", real=True)
    fn = load_module("exp(-x**2/2)", "bell", ["x"], compensated_arguments=True).bell
    points = [
        (float(np.float32(v)),) for v in (9.090909, -10.606061, 12.121212, -12.95, 2.5)
    ]
    _check(fn, sp.exp(-(x**2) / 2), [x], points)


def test_gelu_tail_with_its_scaled_argument_rounded(load_module) -> None:
    # With --compensated-arguments: erfc(-x/sqrt(2)) at x = -12.1 is 2z**2 = 147 times as far
    # off as its rounded argument z (6.2 bits measured). The product's exact error, plus x
    # times what float32's 1/sqrt(2) lacks of the constant, corrects it.
    x = sp.Symbol("x", real=True)
    fn = load_module(
        "x*(1 + erf(x/sqrt(2)))/2", "gelu", ["x"], compensated_arguments=True
    ).gelu
    points = [
        (float(np.float32(v)),)
        for v in (-12.121212, -10.204082, -9.090909, -7.5757575, 1.5)
    ]
    truth = {(): x * sp.erfc(-x / sp.sqrt(2)) / 2}
    truth[(0,)] = sp.erfc(-x / sp.sqrt(2)) / 2 + x * sp.exp(-(x**2) / 2) / sp.sqrt(
        2 * sp.pi
    )
    truth[(0, 0)] = (2 - x**2) * sp.exp(-(x**2) / 2) / sp.sqrt(2 * sp.pi)
    _check(fn, truth, [x], points)


def test_slopes_of_a_difference_where_both_inputs_overflow_when_doubled(
    load_module,
) -> None:
    # tanh(x - y)'s slopes are sigmoid_slope(2*(x - y)) and kin; SymPy distributed the 2, and
    # 2*x - 2*y at x = y = 3e38 was inf - inf = NaN where x - y is 0 (slope 1, curvature 0).
    x, y = sp.symbols("x y", real=True)
    fn = load_module("tanh(x - y)", "gap", ["x", "y"]).gap
    points = [(3e38, 3e38), (-2.5e38, -2.5e38), (1.0, 0.5)]
    _check(fn, sp.tanh(x - y), [x, y], points)


def test_gelu_tanh_tail_with_its_polynomial_argument_rounded(load_module) -> None:
    # With --compensated-arguments: sigmoid(x*(c1 + c3*x**2)) at x = -9.09 sees its
    # argument, -68, after four roundings (the square, two products, the sum) and two
    # rounded constants: 6.8 bits measured. Their errors, carried through the operations
    # to first order, correct it.
    x = sp.Symbol("x", real=True)
    text = "x*(1 + tanh(sqrt(2/pi)*(x + 0.044715*x**3)))/2"
    fn = load_module(text, "gelu_tanh", ["x"], compensated_arguments=True).gelu_tanh
    c = sp.sqrt(2 / sp.pi)
    truth = x * (1 + sp.tanh(c * (x + sp.Rational(44715, 10**6) * x**3))) / 2
    points = [(float(np.float32(v)),) for v in (-9.090909, -7.5757575, -7.658291, 2.0)]
    _check(fn, truth, [x], points)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("x/(1 + exp(-x))", "swish"),
        ("x*tanh(log(1 + exp(x)))", "mish"),
        # softplus(-90) = 8.2e-40 flushes alike: x*softplus(x) was 0 there, and its f'
        # softplus(x) + x*sigmoid(x) 1.1% off (the first term flushed beside the second).
        ("x*log(1 + exp(x))", "x_softplus"),
    ],
)
def test_swish_and_mish_where_the_decaying_factor_flushes(
    load_module, text, name
) -> None:
    # With --scaled-tails: sigmoid(-90) = 8.2e-40 (and tanh(softplus(-90)) alike) is
    # subnormal, and TF flushes it to 0 on the CPU, where x*sigmoid(x) = -7.37e-38 is a
    # normal number. Without the option f, f' and f'' were 0 at x = -91.5, -90, -89, -88
    # (measured), where the truths are -1.67e-38, -7.37e-38, -1.98e-37, -5.33e-37 for f
    # (f' and f'' within 2.3% of these): 23-25 bits off. So were swish'' at 88 to 91.5
    # (-5.2e-37 to -1.6e-38; sigmoid(-x) flushes) and mish'' at 44.5 to 46 (-7.8e-37 to
    # -4.0e-38; its tanh_softplus_slope decays as 4*exp(-2x)). With it the factor is
    # taken at a lifted argument and the product scaled back last
    # (stabilize.scale_tails). At -95 the truth, -5.2e-40, is subnormal itself, and 0
    # its flushed value; -80.5 and -79.5 lie either side of where the lift begins.
    x = sp.Symbol("x", real=True)
    fn = getattr(load_module(text, name, ["x"], scaled_tails=True), name)
    left = (-95.0, -91.5, -90.0, -89.0, -88.0, -80.5, -79.5, -70.0)
    right = (44.5, 45.5, 46.0, 88.0, 90.0, 91.5)
    points = [(v,) for v in (*left, -10.0, 0.5, 30.0, *right)]
    _check(fn, sp.sympify(text, locals={"x": x}), [x], points)


@pytest.mark.parametrize(
    ("text", "name"),
    [("x/(1 + exp(-x))", "swish"), ("x*tanh(log(1 + exp(x)))", "mish")],
)
def test_swish_and_mish_where_the_decaying_factor_flushes_in_float64(
    load_module, text, name
) -> None:
    # With --scaled-tails: TF on the CPU flushes float64 subnormals too (sigmoid(-710)
    # = 4.5e-309 came out 0): without the option swish, mish and their two derivatives
    # were 0 at x = -710, -712, -714, where the truths (-3.2e-306, -4.3e-307, -5.9e-308)
    # are normal, and so were swish'' at 710 to 714 and mish'' at 355 to 357 (-1.3e-305
    # to -2.3e-307; measured). -720 and -740 (-1.5e-310, -3.1e-319) are subnormal
    # themselves, 0 with or without the option, and 0 here as the flushed truth. mpmath
    # at 400 digits: at 50, log(1 + exp(-710)) is log(1) = 0.
    import tensorflow as tf

    x = sp.Symbol("x", real=True)
    truth = sp.sympify(text, locals={"x": x})
    fn = getattr(load_module(text, name, ["x"], scaled_tails=True), name)
    points = [-700.0, -710.0, -712.0, -714.0, -720.0, -740.0, -10.0, 0.5, 30.0]
    points += [355.0, 356.0, 357.0, 710.0, 712.0, 714.0, 720.0]
    got = tf_partials(tf, fn, [tf.constant(points, dtype=tf.float64)], 2)
    tiny = float(np.finfo(np.float64).tiny)
    for index, values in got.items():
        expr = sp.diff(truth, x, len(index))
        for point, value in zip(points, values.numpy()):
            with mpmath.workdps(400):
                true = float(expr.subs(x, sp.Float(point, 400)).evalf(400))
            true = 0.0 if abs(true) < tiny else true
            assert abs(value - true) <= 1e-14 * abs(true), (index, point, value, true)


def test_precise_sigmoid_where_tfs_kernel_is_off(load_module) -> None:
    # With --precise-sigmoid: TF's sigmoid kernel is 4.5-5.4 ulps off at these float32
    # points below 0 (measured against mpmath: 5.39 at -7.718093, 5.06 at -11.879172,
    # 4.89 at -25.766644), beyond 2.4e-7 relative (2-4 ulps). The module's
    # _sigmoid, e/(1 + e) with e = exp(x), is within 2 ulps, and so are sigmoid's f' and
    # f'', sigmoid(x)*sigmoid(-x) and its slope, which the economy writes with sigmoid.
    x = sp.Symbol("x", real=True)
    text = "1/(1 + exp(-x))"
    fn = load_module(text, "logistic", ["x"], precise_sigmoid=True).logistic
    values = (-29.88126, -25.766644, -17.454811, -11.879172, -7.718093, -5.8337336)
    points = [(float(np.float32(v)),) for v in (*values, -0.75, 0.5, 3.0, 20.0)]
    _check(fn, 1 / (1 + sp.exp(-x)), [x], points, tol=2.4e-7)


def test_scaled_tails_keep_multiply_no_nan_guards(load_module) -> None:
    # With --scaled-tails: (1 + x**2)*softplus(-3x)'s slope is multiply_no_nan(t,
    # sigmoid(-3x)), t holding exp(3x)*softplus(-3x), inf*0 = NaN from x = 29.6; the
    # flushed sigmoid made the product 0 (the truth there is below 1e-38, 0 flushed).
    # Lifted, the sigmoid no longer flushed, and the slope was NaN at x = 32.6 and
    # 36.3 (found by a fuzzer of such products); _lowered_no_nan keeps the guard.
    x = sp.Symbol("x", real=True)
    fn = load_module("(1 + x**2)*log(1 + exp(-3*x))", "tail", ["x"], scaled_tails=True)
    points = [(v,) for v in (-5.0, 1.5, 20.0, 26.0, 28.0, 32.58503, 36.27974, 40.0)]
    _check(fn.tail, (1 + x**2) * sp.log(1 + sp.exp(-3 * x)), [x], points)


def test_scaled_tails_of_a_soft_minimum(load_module) -> None:
    # With --scaled-tails: -e*log(exp(-x/e) + exp(-y/e)), e being Euler's number, raised
    # TypeError (exit 123): a constant factor mul_exp(1, -1) of one partial was taken to
    # float(). Then the soft minimum with its temperature an input, t.
    x, y, t = sp.symbols("x y t", real=True)
    e_fixed = load_module("-e*log(exp(-x/e) + exp(-y/e))", "softmin_e", ["x", "y"], scaled_tails=True).softmin_e
    points = [(1.0, 2.0), (-3.0, 4.0), (100.0, 101.0)]
    _check(e_fixed, -sp.E * sp.log(sp.exp(-x / sp.E) + sp.exp(-y / sp.E)), [x, y], points, tol=1e-6)
    fn = load_module("-t*log(exp(-x/t) + exp(-y/t))", "softmin", ["x", "y", "t"], scaled_tails=True).softmin
    points = [(1.0, 2.0, 0.5), (-3.0, 4.0, 2.0), (100.0, 101.0, 1.0)]
    _check(fn, -t * sp.log(sp.exp(-x / t) + sp.exp(-y / t)), [x, y, t], points, tol=1e-6)


def test_mixtures_where_their_parts_underflow(load_module) -> None:
    # A two-part Gaussian mixture's log density (less a constant): as written both parts
    # underflow beyond x = 16 (log(0) = -inf; the truth at x = 20 is -146.1) and the slope
    # is inf/inf = NaN from x = 28.8. As log_mix of the two exponents it is finite, and -inf
    # (not NaN) at x = 1e20, where -x**2/2 overflows and the truth does too.
    x, y = sp.Symbol("x", real=True), sp.Symbol("y", real=True)
    text = "log(0.3*exp(-x**2/2) + 0.7*exp(-(x - 3)**2/2))"
    fn = load_module(text, "mixture", ["x"]).mixture
    truth = sp.log(
        sp.Rational(3, 10) * sp.exp(-(x**2) / 2)
        + sp.Rational(7, 10) * sp.exp(-((x - 3) ** 2) / 2)
    )
    points = [(v,) for v in (-20.0, -14.0, 1.5, 20.0, 30.0, 100.0, 1e20)]
    _check(fn, truth, [x], points)
    # The log-mean-exp at x = y = 8e-10 is 8e-10: logaddexp(x - log(2), y - log(2)) was 0.
    fn = load_module("log((exp(x) + exp(y))/2)", "log_mean_exp", ["x", "y"]).log_mean_exp
    points = [(8e-10, 8e-10), (-3e-12, 1e-12), (-100.0, -100.0), (100.0, -50.0), (2.5, 2.0)]
    _check(fn, sp.log((sp.exp(x) + sp.exp(y)) / 2), [x, y], points)


def test_cloglog_slopes_where_the_series_serves(load_module) -> None:
    # The complementary log-log link log(1 - exp(-exp(x))) is log(u) + S(u), u = exp(x),
    # below u = 1 (S a Taylor polynomial): its f'' as written below there,
    # (u/expm1(u))*(1 - u*exp(u)/expm1(u)), cancels (18 bits off at x = -12 with the
    # series below 2**-20 only).
    x = sp.Symbol("x", real=True)
    fn = load_module("log(1 - exp(-exp(x)))", "cloglog", ["x"]).cloglog
    points = [(v,) for v in (-30.0, -12.0, -9.1, -4.0, -0.9, -0.1, 0.5, 3.0)]  # 60 digits hold -30
    _check(fn, sp.log(1 - sp.exp(-sp.exp(x))), [x], points, tol=8e-7)  # 6 ulps: 3.3 at -9.1



def test_hypot_ratio_gap_through_tensorflow(load_module) -> None:
    # x/sqrt(x**2 + y**2)'s d2f/dxdy holds (x**2 - y**2)/h**2 as hypot_ratio_gap(x, y) *
    # hypot_ratio_gap(x, -y): the helper's a - b is halved where the inputs are large (no
    # overflow at x = -y = 3e38) and taken whole where they are small.
    x, y = sp.Symbol("x", real=True), sp.Symbol("y", real=True)
    module = load_module("x/sqrt(x**2 + y**2)", "cosine", ["x", "y"])
    with open(module.__file__, encoding="utf-8") as source:
        assert "_hypot_ratio_gap(" in source.read()
    fn = module.cosine
    near = 1 + 2.0**-20  # float32 numbers: the truth is taken at them
    points = [(0.75, 0.75 * near), (-3.0, 3.0 * near), (2.0**100, -(2.0**100) * near), (3e38, -3e38), (0.5, 2.0)]
    _check(fn, x / sp.sqrt(x**2 + y**2), [x, y], points)


def _near(value: float, step: float) -> tuple[float, float]:
    """(value, value*(1 + step)), both float32 numbers: the truth is taken at them."""
    value = float(np.float32(value))
    return value, float(np.float32(value * (1 + step)))


@pytest.mark.parametrize(
    "text, partials",
    [
        # Itakura-Saito: as x/y - 1 - log1p((x - y)/y) f was 0 at x = 1.0001*y (truth 5e-9)
        # and its slope 1/y - 1/x 7-13 bits off; -log1pmx((x - y)/y) and its slope
        # t/(y*(1 + t)) are not.
        ("x/y - log(x/y) - 1", 2),
        # The Poisson deviance and the generalised KL: x*log1p(t) - (x - y) cancelled to
        # 11-22 bits; x*log1pmx(t) + (x - y)*t does not.
        ("2*(x*log(x/y) - (x - y))", 2),
        ("x*log(x/y) - x + y", 2),
        # The same with two logs, x*log(x) as xlogy(x, x): the logs paired by their weight.
        ("x*log(x) - x*log(y) - x + y", 2),
        # The gamma deviance: its slope 2/y - 2/x cancels near x = y (22.7% within 3 bits);
        # as 2*((y - x)/y)/x there, reciprocal_difference's, it does not.
        ("2*(log(y/x) + x/y - 1)", 2),
        # The KL divergence of N(0, x**2) from N(0, y**2): f was 23-25 bits off, its slopes
        # 9-12; the rest (x - y)**2*(x + 2*y)/(2*x*y**2) is spread as ((x - y)/y)*(x/y + 2).
        ("log(y/x) + x**2/(2*y**2) - 1/2", 1),
        # Jensen-Shannon (twice, unnormalised): two logs whose first orders cancel together,
        # the rest -(x - y)*u, u = (x - y)/(x + y) (11% near x = y within 3 bits before).
        ("x*log(2*x/(x + y)) + y*log(2*y/(x + y))", 1),
    ],
)
def test_divergences_at_their_minimum(load_module, text: str, partials: int) -> None:
    x, y = sp.Symbol("x", real=True), sp.Symbol("y", real=True)
    fn = load_module(text, "divergence", ["x", "y"]).divergence
    truth = sp.sympify(text, locals={"x": x, "y": y})
    points = [
        _near(1.0, 1e-4),
        _near(1.0, -(2.0**-20)),
        _near(3.0, 2.0**-12),
        _near(0.25, -(2.0**-8)),
        _near(1e-6, 2.0**-16),
        _near(4e5, 2.0**-18),
        (2.0, 0.5),  # and far from it, where the sum is as it was
    ]
    if partials == 2:
        _check(fn, truth, [x, y], points)
        return
    import tensorflow as tf

    columns = [tf.constant([p[i] for p in points], tf.float32) for i in range(2)]
    with tf.GradientTape() as tape:
        tape.watch(columns)
        value = fn(*columns)
    slopes = tape.gradient(value, columns)
    for got, expr in zip([value, *slopes], [truth, truth.diff(x), truth.diff(y)]):
        for point, v in zip(points, got.numpy().astype(np.float64)):
            true = float(expr.subs({x: sp.Float(point[0], 60), y: sp.Float(point[1], 60)}).evalf(60))
            assert abs(v - true) <= TOL * abs(true), (expr, point, v, true)


def test_a_divergence_term_generated_to_the_first_order(load_module) -> None:
    # At --order 1 the last level's guards differentiate its branches; a branch holding the
    # sign of a guarded sum, sign(pick(c, x, 1) + pick(c, y, 0)), has a slope SymPy leaves
    # as a Derivative, and generation crashed on it. TF differentiates the first order
    # itself, by the chain rule through the first order's ops: the second order is checked,
    # to a few more ulps (4.5 at x = 2, y = 0.5).
    x, y = sp.Symbol("x", real=True), sp.Symbol("y", real=True)
    fn = load_module("x*log(2*x/(x + y))", "term", ["x", "y"], order=1).term
    points = [_near(1.0, 1e-4), _near(3.0, -(2.0**-12)), (2.0, 0.5), (0.5, 2.0), (1e-6, 4e5)]
    _check(fn, x * sp.log(2 * x / (x + y)), [x, y], points, tol=1e-6)


def test_bernoulli_kl_near_its_minimum(load_module) -> None:
    # y*log(y/x) + (1 - y)*log((1 - y)/(1 - x)): the two logs' first orders cancel each
    # other (26% of points near x = y within 3 bits); as y*log1pmx(u) + (1 - y)*log1pmx(v)
    # - u*v, u = (y - x)/x, v = (x - y)/(1 - x), nothing does.
    x, y = sp.Symbol("x", real=True), sp.Symbol("y", real=True)
    text = "y*log(y/x) + (1 - y)*log((1 - y)/(1 - x))"
    fn = load_module(text, "bernoulli_kl", ["x", "y"]).bernoulli_kl
    points = [_near(0.3, 2.0**-20), _near(0.5, -1e-4), _near(0.9, 2.0**-12), _near(1e-3, 0.25), (0.2, 0.7)]
    _check(fn, sp.sympify(text, locals={"x": x, "y": y}), [x, y], points, tol=8e-7)


def test_kl_of_a_unit_gaussian_near_its_minimum(load_module) -> None:
    # A VAE's KL term in the scale: s**2/2 - 1/2 - log(s) is 17.6 bits off near s = 1 as
    # written; -log1pmx(s - 1) + (s - 1)**2/2, both positive, is not.
    s = sp.Symbol("s", real=True)
    fn = load_module("s**2/2 - 1/2 - log(s)", "kl", ["s"]).kl
    points = [(v,) for v in (1.0001, 0.9999, 1.0 + 2.0**-20, 0.75, 1.9, 0.3, 50.0)]
    _check(fn, s**2 / 2 - sp.Rational(1, 2) - sp.log(s), [s], [tuple(float(np.float32(c)) for c in p) for p in points])


def test_kl_in_the_log_variance_near_its_minimum(load_module) -> None:
    # A VAE's KL term (exp(v) + m**2 - 1 - v)/2: expm1(v) - v cancels near v = 0 (with two
    # inputs there is no series regime); m**2/2 + expm1mx(v)/2 does not.
    v, m = sp.Symbol("v", real=True), sp.Symbol("m", real=True)
    text = "(exp(v) + m**2 - 1 - v)/2"
    fn = load_module(text, "kl_logvar", ["v", "m"]).kl_logvar
    points = [(1e-4, 0.0), (-2e-6, 0.0), (0.3, 1e-3), (-0.9, 0.0), (5.0, -2.0), (-40.0, 1e-20)]
    _check(fn, (sp.exp(v) + m**2 - 1 - v) / 2, [v, m], points)


# The printed helpers less their first order, against mpmath, in both dtypes:
# - log1pmx: r*(2*r**2*S(r**2) - t), r = t/(2 + t), for t in [-2/3, 2], summed to the dtype's
#   precision; log1p(t) - t beyond; -inf at t = -1 and t = inf.
# - expm1mx: u**2*(1/2 + u/6 + ...) for |u| < 1; expm1(u) - u beyond; inf at u = +-inf.
_LESS_HELPERS = {
    "_log1pmx": (
        "x/y - log(x/y) - 1",
        lambda t: mpmath.log1p(t) - t,
        lambda top: [-np.logspace(-18, 0, 60)[:-1], np.logspace(-18, np.log10(top) - 1, 120), [-2 / 3, 2.0, -0.5, 1.0]],
        ([-1.0, np.inf], [-np.inf, -np.inf]),
    ),
    "_expm1mx": (
        "(exp(v) + m**2 - 1 - v)/2",
        lambda u: mpmath.expm1(u) - u,
        lambda top: [-np.logspace(-18, 2.5, 80), np.logspace(-18, np.log10(np.log(top) - 1), 80), [-1.0, 1.0, 0.999, -0.999]],
        ([np.inf, -np.inf, 1e30], [np.inf, np.inf, np.inf]),
    ),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("helper", list(_LESS_HELPERS))
def test_helpers_less_their_first_order_against_mpmath(load_module, helper: str, dtype: str) -> None:
    import tensorflow as tf

    text, truth, ranges, (edges_in, edges_out) = _LESS_HELPERS[helper]
    names = sorted({str(s) for s in sp.sympify(text).free_symbols})
    module = load_module(text, "less", names)
    np_dtype = np.dtype(dtype)
    values = np.concatenate(ranges(float(np.finfo(np_dtype).max))).astype(np_dtype)
    got = getattr(module, helper)(tf.constant(values)).numpy()
    for t, v in zip(values.tolist(), got.tolist()):
        with mpmath.workdps(60):
            true = float(truth(mpmath.mpf(t)))
        if abs(true) < np.finfo(np_dtype).tiny:
            continue  # flushed where the truth is subnormal
        # 1.7 ulps seen: the quotient r and the product; expm1's own rounding beyond |u| = 1.
        assert abs(v - true) <= 3.0 * float(np.spacing(np_dtype.type(abs(true)))), (t, v, true)
    edges = getattr(module, helper)(tf.constant(edges_in, dtype=dtype)).numpy()
    assert edges.tolist() == edges_out


def _mills_truths(u: float) -> tuple[float, float, float, float]:
    """mills, mills_gap, mills_gap_slope, mills_curvature at u, from mpmath at 150 digits: the
    last two cancel to 1/u**2 and 1/u**4 of their terms for large u."""
    with mpmath.workdps(150):
        v = mpmath.mpf(u)
        m = mpmath.exp(-(v**2)) / (mpmath.sqrt(mpmath.pi) * mpmath.erfc(v))
        g = m - v
        d = 2 * m * g - 1
        return float(m), float(g), float(d), float(2 * g**2 + d)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mills_helpers_against_mpmath(load_module, dtype: str) -> None:
    # The truncated normal's variance 1 - lambda*(lambda - x) is -mills_gap_slope(x/sqrt(2)),
    # and its slope brings in mills_curvature: both from erfc's continued fraction beyond
    # u = 1.25 (2 in float64), from the quotient in float64 below. As written they cancel for
    # large u (the inverse Mills ratio's f'' was 0 from x = 9, 13-15 bits off at x = 3-5).
    import tensorflow as tf

    text = "1 - sqrt(2/pi)*exp(-x**2/2)/erfc(x/sqrt(2))*(sqrt(2/pi)*exp(-x**2/2)/erfc(x/sqrt(2)) - x)"
    module = load_module(text, "truncated_normal_variance", ["x"])
    np_dtype = np.dtype(dtype)
    values = np.concatenate(
        [-np.logspace(-6, 1.2, 30), np.logspace(-6, 15, 90), [0.0, 1.0, 1.25, 1.2499999, 2.0, 1.9999999]]
    ).astype(np_dtype)
    helpers = ["_mills", "_mills_gap", "_mills_gap_slope", "_mills_curvature"]
    got = [getattr(module, h)(tf.constant(values)).numpy() for h in helpers]
    tiny = float(np.finfo(np_dtype).tiny)
    # float32: the quotient below u = 2 is taken in float64 and rounded once; the fraction's
    # levels beyond, 3.8 ulps seen. float64: the quotient cancels in its own dtype below 2 (854
    # ulps, 10 of 53 bits, for the curvature at u = 2; exp(-u**2) 36 at u = -16).
    ulps = 4.0 if dtype == "float32" else 2.0**10
    for i, u in enumerate(values.tolist()):
        for name, value, true in zip(helpers, (g[i] for g in got), _mills_truths(u)):
            if abs(true) < tiny:
                continue  # flushed where the truth is subnormal
            assert abs(float(value) - true) <= ulps * float(np.spacing(np_dtype.type(abs(true)))), (name, u, value, true)


def test_inverse_mills_ratio_curvature(load_module) -> None:
    # lambda(x) = phi(x)/(1 - Phi(x)) is about x + 1/x: its f'' = 2*mills*(2*gap**2 + slope),
    # in u = x/sqrt(2), cancels to about 2/x**3 (0 from x = 9, NaN from x = 1.3e19 before; 34.9%
    # of the benchmark's points within 3 bits). As mills*mills_curvature it does not.
    x = sp.Symbol("x", real=True)
    text = "sqrt(2/pi)*exp(-x**2/2)/erfc(x/sqrt(2))"
    fn = load_module(text, "inverse_mills", ["x"]).inverse_mills
    # 8e-7: x/sqrt(2) rounds, and the curvature, about 1/(2*u**4), takes four times its error.
    _check(fn, sp.sympify(text, locals={"x": x}), [x], [(5.0,), (9.0,), (30.0,), (1e3,), (-0.5,), (0.5,)], tol=8e-7)


def test_scaled_quotient_slopes_where_the_inputs_meet(load_module) -> None:
    # x*y/(x**2 + y**2)'s slope y*(y - x)*(y + x)/(x**2 + y**2)**2 is scaled by
    # m = (|x| + |y|)/2 against overflow; y - x as (y/2 - x/2)/(m/2), not y/m - x/m, whose
    # roundings cancel near x = y (24-32% of such points within 3 bits before). The halves
    # keep x + y finite at x = y = 3e38.
    x, y = sp.Symbol("x", real=True), sp.Symbol("y", real=True)
    fn = load_module("x*y/(x**2 + y**2)", "similarity", ["x", "y"]).similarity
    points = [_near(1.0, 2.0**-20), _near(-3.0, 1e-4), _near(1e30, 2.0**-12), _near(1e-30, -(2.0**-16)), (3e38, 3e38), (2.0, 0.5)]
    _check(fn, x * y / (x**2 + y**2), [x, y], points, tol=8e-7)


def test_hellinger_slopes_where_the_inputs_meet(load_module) -> None:
    # (sqrt(x) - sqrt(y))**2's slope 1 - sqrt(y)/sqrt(x) cancels near x = y (21% within 3
    # bits); ((x - y)/(sqrt(x) + sqrt(y)))/sqrt(x) does not. Both slopes share the quotient,
    # kept whole: (x - y)/sqrt(x)/(sqrt(x) + sqrt(y)) was -inf at x = 0.5, y = 3e38, and the
    # judge, which drops a form wrong there, took d/dx as 1 - sqrt(y)/sqrt(x) again.
    import tensorflow as tf

    x, y = sp.Symbol("x", positive=True), sp.Symbol("y", positive=True)
    fn = load_module("(sqrt(x) - sqrt(y))**2", "hellinger", ["x", "y"]).hellinger
    points = [_near(1.0, 2.0**-20), _near(3.0, 1e-4), _near(1e-6, -(2.0**-16)), _near(4e5, 2.0**-18), (2.0, 0.5)]
    points += [(0.5, 3e38), (3e38, 0.5)]
    columns = [tf.constant([p[i] for p in points], tf.float32) for i in range(2)]
    with tf.GradientTape() as tape:
        tape.watch(columns)
        value = fn(*columns)
    slopes = tape.gradient(value, columns)
    f = (sp.sqrt(x) - sp.sqrt(y)) ** 2
    for got, truth in zip(slopes, [f.diff(x), f.diff(y)]):
        for point, v in zip(points, got.numpy().astype(np.float64)):
            true = float(truth.subs({x: sp.Float(point[0], 60), y: sp.Float(point[1], 60)}).evalf(60))
            assert abs(v - true) <= TOL * abs(true), (truth, point, v, true)


def test_log_of_a_quotient_whose_denominator_overflows(load_module) -> None:
    # log(x/expm1(x)) near x/expm1(x) = 1 is log1p((x - expm1(x))/expm1(x)); at x = 89
    # expm1 overflows and that quotient is inf/inf = NaN, which no comparison of the where
    # holds: f was NaN for every x > 88.7 (the truth -84.9 at 89). Where x - expm1(x)
    # overflows, the far form.
    x = sp.Symbol("x", real=True)
    fn = load_module("log(x/(exp(x) - 1))", "log_x_over_expm1", ["x"]).log_x_over_expm1
    points = [(89.0,), (100.0,), (1e4,), (3e38,), (0.5,), (-3.0,), (1e-6,)]
    _check(fn, sp.log(x / (sp.exp(x) - 1)), [x], points)


def test_exponential_tails_from_where_they_are_exact_in_float32(load_module) -> None:
    # x/(exp(x) + exp(-x))'' between its middle form and its tail: the middle form multiplies
    # about exp(4x) by a factor exp(-5x) that flushes for x > 17.5 (0 at x = 18, the truth
    # 2e-7); its tail, exact to double precision from x = 20, is exact to float32 from 11.3,
    # and float32 takes it from there. x**3/(exp(x) - 1)'' had the wrong sign at x = 33: a
    # term's cube (x/expm1(x))**3 flushed before its exp(2x) brought it back; float32 takes
    # the tail from 22.6 (float64 from 40).
    x = sp.Symbol("x", real=True)
    fn = load_module("x/(exp(x) + exp(-x))", "x_over_2cosh", ["x"]).x_over_2cosh
    _check(fn, x / (sp.exp(x) + sp.exp(-x)), [x], [(12.0,), (18.0,), (19.5,), (-18.0,), (30.0,)], tol=1e-6)
    fn = load_module("x**3/(exp(x) - 1)", "planck", ["x"]).planck
    _check(fn, x**3 / (sp.exp(x) - 1), [x], [(33.0,), (36.0,), (50.0,)], tol=1e-6)


def test_series_bands_between_powers_of_two(load_module) -> None:
    # asin(x)/x's slope as differentiated, (1/sqrt(1 - x**2) - asin(x)/x)/x, cancels near 0
    # (6.4 bits at x = 0.27); its Taylor polynomial of 26 terms is exact to float32 up to
    # 0.375 but not 0.5, and the thresholds went from 0.5 straight to 0.25.
    x = sp.Symbol("x", real=True)
    fn = load_module("asin(x)/x", "asin_over_x", ["x"]).asin_over_x
    _check(fn, sp.asin(x) / x, [x], [(0.2727273,), (0.3181818,), (-0.35,), (0.1,)], tol=1e-6)


def test_root_of_a_difference_of_squares_with_an_irrational_root(load_module) -> None:
    # (x**2 - 2)**1.5's f'' = 6*(x - 1)*(x + 1)/sqrt(x**2 - 2): x**2 overflows at 1e20 and
    # the quotient was (x - 1)/inf = 0 (the truth 6e20). difference_of_squares writes
    # x**2 - 2 as (x - a)*(x + a) (a = sqrt(2) in two parts), a product that overflows under
    # the root as the sum did; root_of_product now stacks on it. SymPy factors x**2 - 1
    # itself, so x**2 - 1 was right before.
    x = sp.Symbol("x", real=True)
    fn = load_module("(x**2 - 2)**1.5", "power_of_difference", ["x"]).power_of_difference
    truth = {(): (x**2 - 2) ** sp.Rational(3, 2), (0,): 3 * x * sp.sqrt(x**2 - 2), (0, 0): 6 * (x**2 - 1) / sp.sqrt(x**2 - 2)}
    _check(fn, truth, [x], [(1e20,), (-3e30,), (2.0,), (-5.0,)], tol=1e-6)


def test_a_sum_of_logs_whose_arguments_are_positive_as_one_log(load_module) -> None:
    # log(1 + x**2) - 2*log(|x|) = log1p(1/x**2) cancels for |x| >> 1 (54% of the benchmark's
    # points within 3 bits; 0 at x = 1e4, truth 1e-8), and its slope as differentiated,
    # 2*x/(1 + x**2) - 2*sign(x)/|x|, cancels as well. The sum as one log, a quotient whose
    # a - b is the number 1 (so no overflow condition), is log1p(1/x**2) to the rules.
    x = sp.Symbol("x", real=True)
    fn = load_module("log(1 + x**2) - 2*log(abs(x))", "log_ratio", ["x"]).log_ratio
    truth = sp.log(1 + 1 / x**2)
    _check(fn, truth, [x], [(1e4,), (-3e10,), (2.0,), (0.5,), (1e-20,), (3e30,)], tol=1e-6)



def test_log_of_a_product_where_the_product_overflows_or_flushes(load_module) -> None:
    # log(x*y) at x = y = 1e20 was log(inf), truth 92.1; at x = y = 1e-25 log(0), truth
    # -115.1 (77% of the judge's points within 3 bits). Beyond 2**100 or below 2**-100 the
    # logs of the factors (log_of_product), the sign kept with one of them.
    x, y = sp.Symbol("x", real=True), sp.Symbol("y", real=True)
    fn = load_module("log(x*y)", "log_xy", ["x", "y"]).log_xy
    points = [(1e20, 1e20), (-1e20, -3e30), (1e-25, 1e-25), (-2e-30, -0.5), (3.0, 0.25), (2.0, 1e30)]
    _check(fn, sp.log(x * y), [x, y], points, 1e-6)


def test_log_of_a_product_with_a_constant_where_the_product_flushes(load_module) -> None:
    # log(2*pi*x**2*y): SymPy takes the 2 out of the condition, x**2*|y| < 2**-127 with the
    # edge at 2**-126, and TensorFlow reads that subnormal constant as 0: f was -inf at
    # x = y = 1.7e-37 (truth -252.1), 54 of 400 benchmark points. And log|x*y| (98.2% from 83%).
    x, y = sp.Symbol("x", real=True), sp.Symbol("y", real=True)
    fn = load_module("log(2*pi*x**2*y)", "log_2pi_s2", ["x", "y"]).log_2pi_s2
    points = [(1.7201202e-37, 1.7201202e-37), (7.061097e-33, 7.061097e-33), (-3e-20, 2e-25), (2.0, 3.0), (1e25, 1e30)]
    _check(fn, sp.log(2 * sp.pi * x**2 * y), [x, y], points, 1e-6)
    fn = load_module("log(abs(x*y))", "log_abs_xy", ["x", "y"]).log_abs_xy
    points = [(1e20, -1e20), (-1e-25, 1e-25), (-3.0, 0.25), (2.0, -1e30)]
    _check(fn, sp.log(sp.Abs(x * y)), [x, y], points, 1e-6)
    # SymPy writes |-2*x*y| as 2*|x*y|, taken apart as 2*|x|*|y| (only log(2) split before).
    fn = load_module("log(abs(-2*x*y))", "log_abs_2xy", ["x", "y"]).log_abs_2xy
    _check(fn, sp.log(2 * sp.Abs(x * y)), [x, y], points, 1e-6)


def test_student_t_log_density_with_its_degrees_of_freedom_at_the_top_of_the_range(load_module) -> None:
    # log(v*pi) at v = 3e38 is log(inf): f was -inf, truth -450.9 for x = 30. The judge's
    # moderate points now hold +-3e38 beside an ordinary other, where log(v) + log(pi)
    # (log_of_product, or the sum as expanded) is finite.
    x, v = sp.Symbol("x", real=True), sp.Symbol("v", real=True)
    text = "lgamma((v+1)/2) - lgamma(v/2) - log(v*pi)/2 - (v+1)/2*log(1 + x**2/v)"
    fn = load_module(text, "student_t", ["x", "v"]).student_t
    import tensorflow as tf

    # (x/v stays normal: at x = 1, v = 3e38 it flushes, and log1p(x*(x/v)) with it, so the
    # last term's -x**2/2 is lost; not done.)
    points = [(30.0, 3e38), (20.0, 2e38), (2.0, 5.0)]
    value = fn(tf.constant([p[0] for p in points]), tf.constant([p[1] for p in points])).numpy()
    truth = sp.loggamma((v + 1) / 2) - sp.loggamma(v / 2) - sp.log(v * sp.pi) / 2 - (v + 1) / 2 * sp.log(1 + x**2 / v)
    for got, point in zip(value, points):
        true = float(truth.subs({x: sp.Float(point[0], 60), v: sp.Float(point[1], 60)}).evalf(60))
        # The normalising constant's terms (44 each at v = 3e38) cancel to -0.92: a few bits.
        assert np.isfinite(got) and abs(got - true) <= 1e-5 * abs(true), (point, got, true)


def test_quotients_by_a_power_and_a_half(load_module) -> None:
    # x/sqrt(x*y)'s slope in y, -(x*rsqrt(x*sign(y)))/(2*|y|**(3/2)): |y|**(3/2) flushes at
    # x = y = -3e-28 (-inf; truth -1.7e27) and overflows at y = 1e30. Divided as
    # ((x*rsqrt(x*sign(y)))*rsqrt|y|)/|y| (divide_by_root), the numerator kept whole: as
    # (x/|y|)/sqrt|y| it is inf at x = 3e38, y = 1e-10 (truth -8.7e27).
    x, y = sp.Symbol("x", real=True), sp.Symbol("y", real=True)
    fn = load_module("x/sqrt(x*y)", "x_over_root_xy", ["x", "y"]).x_over_root_xy
    points = [(-3e-28, -3e-28), (3e38, 1e-10), (2.0, 1e30), (4.0, 9.0), (-0.5, -2.0)]
    _check(fn, x / sp.sqrt(x * y), [x, y], points, 1e-5)
    # Two half powers below: sqrt(x)/y**1.5's d2/dx2, -1/(4*(x*y)**(3/2)), had y**(-3/2)
    # overflow at y = 8.6e-30 (-inf; truth -3.9e33 at x = 1.9e6): ((rsqrt(x)*rsqrt(y))/x)/y.
    fn = load_module("sqrt(x)/y**1.5", "root_over_power", ["x", "y"]).root_over_power
    points = [(1.8705751e06, 8.562509e-30), (54997.543, 8.562509e-30), (4.0, 9.0), (1e30, 2.5)]
    _check(fn, sp.sqrt(x) / y ** sp.Rational(3, 2), [x, y], points, 1e-5)


def test_absolute_percentage_errors_where_the_terms_of_a_slope_cancel(load_module) -> None:
    # |x - y|/|y| has d/dy = -sign(x - y)/|y| - |x - y|*sign(y)/y**2, whose terms cancel to 0
    # where |x| << |y| (truth x/y**2 up to sign, 5516 at the first point); with |u| as
    # sign(u)*u it is -sign(x - y)*sign(y)*x/y**2 (derive._abs_as_signs). The symmetric
    # |x - y|/(|x| + |y|) has d/dx = sign(x - y)*(sign(x) + sign(y))*y/(|x| + |y|)**2.
    x, y = sp.symbols("x y", real=True)
    fn = load_module("abs(x - y)/abs(y)", "mape", ["x", "y"]).mape
    points = [(8.363066e-20, -3.8939164e-12), (-5.793381e-26, -3.3027737e-15), (-2.0, 3.0), (1.5, 0.25)]
    _check(fn, sp.Abs(x - y) / sp.Abs(y), [x, y], points, 1e-6)
    fn = load_module("abs(x - y)/(abs(x) + abs(y))", "smape", ["x", "y"]).smape
    points = [(-1.1168731e-13, -7.0497394e-23), (-1.666729e-17, -5.8219454e-36), (-5.793381e-26, -3.3027737e-15), (-2.0, 3.0), (1.5, 0.25)]
    _check(fn, sp.Abs(x - y) / (sp.Abs(x) + sp.Abs(y)), [x, y], points, 1e-6)


def test_abs_of_a_quotient_where_the_quotient_flushes(load_module) -> None:
    # d/dx |x/y| = sign(x/y)/y was 0 at x = 1.2e-38, y = -70, where x/y flushes (truth
    # -0.0143): sign(x)*sign(y)/y. SymPy left it a Derivative before (x/y is not real at y = 0).
    x, y = sp.symbols("x y", real=True)
    fn = load_module("abs(x/y)", "abs_ratio", ["x", "y"]).abs_ratio
    points = [(1.1754944e-38, -69.69697), (-1.7201202e-37, 71.21212), (3.0, -4.0)]
    _check(fn, sp.Abs(x) / sp.Abs(y), [x, y], points, 1e-6)


def test_abs_of_a_log_ratio_next_to_its_kink(load_module) -> None:
    # |log(x/(1 - x))| near x = 1/2, where log's argument rounds (f 23 bits off at
    # 0.49999997): the judge had no point there, |u| has no sign change; it now looks near
    # the roots of abs's argument, where log1p((2x - 1)/(1 - x)) and f'''s
    # ((2x - 1)/x)/(1 - x) are chosen. SymPy left d|log(u)|/dx a Derivative before.
    x = sp.Symbol("x", real=True)
    fn = load_module("abs(log(x/(1 - x)))", "abs_logit", ["x"]).abs_logit
    logit = sp.log(x / (1 - x))
    truth = {
        (): sp.Abs(logit),
        (0,): sp.sign(logit) / (x * (1 - x)),
        (0, 0): sp.sign(logit) * (2 * x - 1) / (x * (1 - x)) ** 2,
    }
    points = [(float(np.float32(p)),) for p in (0.49999997, 0.49242422, 0.48484847, 0.50757575, 0.9)]
    _check(fn, truth, [x], points, 1e-6)


def test_series_at_zero_through_abs_of_a_function_that_vanishes_there(load_module) -> None:
    # |sin x|/x is sign(x)*sin(x)/x near 0: a Taylor series on each side, A + sign(x)*B
    # (regimes._series_by_side). abs has none, so f'' was its far form there, which
    # cancels: 1.0 at x = 2e-4 where the truth is -1/3 (69% of points within 3 bits).
    x = sp.Symbol("x", real=True)
    fn = load_module("abs(sin(x))/x", "abs_sinc", ["x"]).abs_sinc
    points = [(p,) for p in (2e-4, -2e-4, 1e-20, -3e-9, 0.75, -1.5)]
    _check(fn, sp.Abs(sp.sin(x)) / x, [x], points, 1e-6)


def test_exponential_tails_through_abs_of_an_argument_of_one_sign(load_module) -> None:
    # |expm1(x)|/x's f' was |expm1(x)|/x**2-like terms of inf - inf = NaN for x in [89, 93],
    # truth about 1e37; |sinh(x)|/x's f'' NaN for x < -89, truth -inf. Far out expm1 and
    # sinh keep one sign, so the tails are found from the truth without abs
    # (regimes._signs_far_out).
    x = sp.Symbol("x", real=True)
    fn = load_module("abs(expm1(x))/x", "abs_expm1_ratio", ["x"]).abs_expm1_ratio
    _check(fn, sp.Abs(sp.exp(x) - 1) / x, [x], [(89.375,), (92.375,), (-95.0,), (40.5,)], 1e-6)
    fn = load_module("abs(sinh(x))/x", "abs_shi", ["x"]).abs_shi
    _check(fn, sp.Abs(sp.sinh(x)) / x, [x], [(-85.0,), (-95.0,), (87.0,), (-3e38,)], 1e-6)


def test_half_angle_forms_just_above_the_smallest_normal(load_module) -> None:
    # For |x| in [1.18e-38, 2.35e-38], x/2 is subnormal and flushes: sin(x/2) is 0 there.
    # f of x*(1 - cos x)/(|x|*x**2) as 2*(sin(x/2)/x)*sin(x/2)/|x| was 0 (truth 0.5), and
    # x/|sinh x| as x/(2*|sinh(x/2)|*cosh(x/2)) inf (truth 1). The judge's grid now holds
    # +-1.5e-38, and each takes its series at 0 there.
    x = sp.Symbol("x", real=True)
    points = [(float(np.float32(p)),) for p in (1.2e-38, -2.2e-38, 1.7e-38, 0.25, -3.0)]
    fn = load_module("x*(1 - cos(x))/(abs(x)*x**2)", "signed_versine", ["x"]).signed_versine
    # 1 - cos x as 2*sin(x/2)**2 for the reference: 60 digits hold no 1 - cos(1e-38)
    _check(fn, sp.sign(x) * 2 * sp.sin(x / 2) ** 2 / x**2, [x], points, 1e-6, order=0)
    fn = load_module("x/abs(sinh(x))", "abs_csch_ratio", ["x"]).abs_csch_ratio
    _check(fn, x / sp.Abs(sp.sinh(x)), [x], points, 1e-6, order=0)


def test_normalized_sinc_where_pi_times_x_rounds(load_module) -> None:
    # sin(pi*x)/(pi*x): pi*x rounds, so sin of it is wrong near every integer and noise beyond
    # 2**24, where x is an integer and the truth is 0 (f' is cos(pi*x)/x there). sinpi and
    # cospi reduce x exactly first (stabilize's sin_pi rule). f was 63.5% within 3 bits, f'
    # 49.1%; and the series at 0 no longer reaches across the root at 1.
    x = sp.Symbol("x", real=True)
    fn = load_module("sin(pi*x)/(pi*x)", "sinc_pi", ["x"]).sinc_pi
    points = [(float(np.float32(p)),) for p in (1 + 2**-23, 3e7, 1e30, -250000.5, 0.75, -1e-20, 2.5)]
    _check(fn, sp.sin(sp.pi * x) / (sp.pi * x), [x], points, 1e-6)


def test_series_at_zero_of_a_function_complex_beyond_a_branch_point(load_module) -> None:
    # log(1 + x)/x is complex for x < -1: the check that a series' threshold does not cross
    # a root compared a complex value with 0 there (TypeError, exit 123, before it was kept).
    x = sp.Symbol("x", real=True)
    fn = load_module("log(1 + x)/x", "log1p_ratio", ["x"]).log1p_ratio
    points = [(float(np.float32(p)),) for p in (1e-20, -3e-4, 0.375, -0.5, 2.0, 1e30)]
    _check(fn, sp.log(1 + x) / x, [x], points, 1e-6)



def test_cube_root_less_its_asymptote(load_module) -> None:
    # cbrt(x**3 + 1) - x cancels as x grows (9-13 bits off over x in [3, 10]): as
    # 1/(cbrt(s)**2 + x*cbrt(s) + x**2), s = x**3 + 1 (a**3 - b**3 over a**2 + a*b + b**2),
    # nothing does; far out the algebraic tail 1/(3*x**2) - ... takes over.
    x = sp.Symbol("x", real=True)
    fn = load_module("(x**3 + 1)**(1/3) - x", "cbrt_gap", ["x"]).cbrt_gap
    points = [(float(np.float32(p)),) for p in (2.8257575, 5.8863635, 8.94697, 30.0, 1e5, 0.5, -0.5)]
    _check(fn, (x**3 + 1) ** sp.Rational(1, 3) - x, [x], points, 1e-6, order=1)


def _partials_match(fn, truth: sp.Expr, symbols: list[sp.Symbol], points, indices, rel: float, tiny: float = 0.0) -> None:
    """fn's partials at `indices` (() for fn itself), in float32 at `points`, against `truth`'s partials to 60
    digits: within `rel` (and `tiny`), or the infinity of the truth's sign where it
    overflows float32."""
    import tensorflow as tf

    xs = [tf.constant([p[i] for p in points], dtype=tf.float32) for i in range(len(symbols))]
    got = tf_partials(tf, fn, xs, max(len(index) for index in indices))
    for index in indices:
        derivative = sp.diff(truth, *(symbols[i] for i in index)) if index else truth
        for point, value in zip(points, got[index].numpy().astype(np.float64)):
            true = float(derivative.subs({v: sp.Float(p, 60) for v, p in zip(symbols, point)}).evalf(60))
            if abs(true) > float(np.finfo(np.float32).max):
                assert value == np.copysign(np.inf, true), (index, point, value, true)
            else:
                assert abs(value - true) <= rel * abs(true) + tiny, (index, point, value, true)


def test_rate_slopes_where_the_exponential_overflows(load_module) -> None:
    # The rate (exp(x*y) - 1)/y: its slope in y, x*exp(x*y)/y - expm1(x*y)/y**2, was
    # inf - inf = NaN wherever exp(x*y) overflows (161 of the benchmark's 400 points), where
    # the truth is a float (3.4e36 at x = 0.5, y = 180) or +inf (x = y = -1e20); its
    # curvature in y likewise (156 points). (f there,
    # expm1(x*y)/y, is still inf where exp(x*y) overflows and f does not: a thin band.)
    x, y = sp.symbols("x y", real=True)
    fn = load_module("(exp(y*x) - 1)/y", "rate", ["x", "y"]).rate
    points = [(0.5, 180.0), (2.0, 44.5), (-0.5, -180.0), (-1e20, -1e20), (3.0, 0.25), (1e-3, 2.0), (-3.0, 5.0)]
    _partials_match(fn, (sp.exp(x * y) - 1) / y, [x, y], points, ((1,), (1, 1)), rel=1e-6)


def test_box_cox_slopes_where_the_power_overflows(load_module) -> None:
    # The Box-Cox transform (x**l - 1)/l: its slope in l, x**l*log(x)/l - (x**l - 1)/l**2,
    # was inf - inf = NaN wherever x**l overflows (120 of the benchmark's 400 points), where
    # the truth is a float (2.2e37 at x = 10.5, l = 37.75) or +inf; its curvature in l
    # likewise. Written over the power by halves, as a power (exp(l*log(x)) lost 6 bits
    # there to the rounding of l*log(x)).
    x, y = sp.symbols("x y", real=True)
    fn = load_module("(x**y - 1)/y", "box_cox", ["x", "y"]).box_cox
    points = [(10.5, 37.75), (1 + 2.0**-13, 778240.0), (2.0, 140.0), (50.0, 50.0), (3.0, 0.25), (0.5, -200.0), (1e-3, 2.0)]
    _partials_match(fn, (x**y - 1) / y, [x, y], points, ((1,), (1, 1)), rel=4e-7)


def test_bose_einstein_curvature_where_its_quotient_is_inf_over_inf(load_module) -> None:
    # log(1 - exp(-x/t))'' in x is (1/t)**2/(expm1(x/t)*expm1(-x/t)): at t = 4e-32 both the
    # square and expm1 overflow, inf/inf = NaN (43 of the benchmark's 400 points), where the
    # truth, -exp(-x/t)/t**2 near enough, flushes to 0. Beside them, ordinary points.
    x, t = sp.symbols("x t", positive=True)
    fn = load_module("log(1 - exp(-x/t))", "bose", ["x", "t"]).bose
    points = [(50.0, 4.1871068e-32), (19.69697, 1.3484423e-20), (2.0066582e-14, 2.4346874e-21), (3.0, 1.5), (0.25, 2.0)]
    _partials_match(fn, sp.log(1 - sp.exp(-x / t)), [x, t], points, ((0, 0),), rel=1e-6, tiny=1e-38)


def test_p_norm_where_its_powers_overflow_or_flush(load_module) -> None:
    # The 3-norm (|x|**3 + |y|**3)**(1/3): its powers overflow from |x| = 7e12 and flush to 0
    # below 2e-13, where the norm and its partials are floats; as written f was inf at x =
    # y = -1.8e36 (truth 2.2e36), its slope -inf at x = y = -2e-14 (truth -0.63) and its
    # curvature NaN. pnorm scales by the larger magnitude; its slope is sign(x)*(|x|/N)**2.
    x, y = sp.symbols("x y", real=True)
    fn = load_module("(abs(x)**3 + abs(y)**3)**(1/3)", "l3", ["x", "y"]).l3
    points = [(-1.78e36, -1.78e36), (-2.0e-14, -2.0e-14), (3.0e30, -1.0e10), (1.0e-30, 2.0e-31), (1.5, -0.5), (-4.0, 40.0)]
    truth = (sp.Abs(x) ** 3 + sp.Abs(y) ** 3) ** sp.Rational(1, 3)
    _partials_match(fn, truth, [x, y], points, ((), (0,), (1,), (0, 0), (0, 1), (1, 1)), rel=1e-6, tiny=1e-38)


def test_log_of_quartic_sum_where_its_powers_overflow(load_module) -> None:
    # log(x**4 + y**4) was inf at x = y = 3.4e38 (truth 355.6) and for |x| beyond 1.8e19
    # (177 of the benchmark's 400 points non-finite): 4*log(pnorm(x, y, 4)), halved where a
    # leg is beyond 2**125 so that the norm cannot overflow.
    x, y = sp.symbols("x y", real=True)
    fn = load_module("log(x**4 + y**4)", "log_quartic", ["x", "y"]).log_quartic
    points = [(3.4e38, -3.4e38), (1.0e20, 3.0e19), (-2.0e-20, 1.0e-21), (0.5, 1.5)]
    _partials_match(fn, sp.log(x**4 + y**4), [x, y], points, ((), (0,), (1, 1)), rel=1e-6, tiny=1e-38)


def test_p_norm_slope_where_its_ratio_flushes(load_module) -> None:
    # The 1.5-norm's slope sign(x)*(|x|/N)**0.5: at x = 3e-28, y = 6e37 the ratio |x|/N is
    # 5e-66, 0 in float32, and its square root 2.2e-33 a float (the helper takes the power
    # as |x|**0.5/|y|**0.5 there); the judge, without it, took sqrt(|x|)/sqrt(N), and the
    # curvature was NaN at 82 of 400 points.
    x, y = sp.symbols("x y", real=True)
    fn = load_module("(abs(x)**1.5 + abs(y)**1.5)**(1/1.5)", "l15", ["x", "y"]).l15
    points = [(3.0e-28, 6.0e37), (-3.0e-28, 6.0e37), (2.0e-30, -1.0e10), (1.5, -0.5), (-4.0, 40.0)]
    truth = (sp.Abs(x) ** sp.Rational(3, 2) + sp.Abs(y) ** sp.Rational(3, 2)) ** sp.Rational(2, 3)
    _partials_match(fn, truth, [x, y], points, ((0,), (1,), (0, 1)), rel=2e-6, tiny=1e-38)


def test_log_of_one_plus_squares_where_they_overflow(load_module) -> None:
    # log(1 + x**2 + y**2), a two-input Cauchy-like penalty: log1p(x**2 + y**2) was inf from
    # |x| = 1.8e19 (103 of the benchmark's 400 points); 2*log(hypot(y, hypot(1, x))) where a
    # leg is beyond 1, halved beyond 2**125. Near 0, log1p as before.
    x, y = sp.symbols("x y", real=True)
    fn = load_module("log(1 + x**2 + y**2)", "log_sq", ["x", "y"]).log_sq
    points = [(1.0e20, 3.0e19), (-3.0e38, 3.0e38), (2.0e-3, -1.0e-4), (1.5, -0.5), (1.0e-20, 3.0)]
    _partials_match(fn, sp.log(1 + x**2 + y**2), [x, y], points, ((), (0,), (1, 1)), rel=1e-6, tiny=1e-38)


def test_products_with_an_exponential_where_a_factor_beside_it_brings_them_back(load_module) -> None:
    # x**3*exp(-x)/6 was inf for x in about [-77.9, -75.7]: x**3*exp(-x) overflows before the
    # /6 brings it back (2.1e38 at x = -77); the number now scales inside mul_exp. Near the
    # smallest normal, the slope x**2*(3 - x)/6 takes the /6 last (1.9e-38 at x = 2e-19,
    # where x**2/6 is subnormal and TF flushes it).
    x = sp.symbols("x", real=True)
    fn = load_module("x**3*exp(-x)/6", "k3", ["x"]).k3
    points = [(float(np.float32(v)),) for v in (-77.17718, -76.57658, -75.9, 1.9708819e-19, 6.057502e-38, 3.0, 0.5)]
    _partials_match(fn, x**3 * sp.exp(-x) / 6, [x], points, ((), (0,), (0, 0)), rel=2e-6, tiny=1e-38)


def test_gamma_kernel_slopes_where_its_exponential_over_or_underflows(load_module) -> None:
    # x**a*exp(-x) as exp(a*log(x) - x) far out: its slope in x, (a/x - 1)*exp(a*log(x) - x),
    # was 0*inf = NaN at x = a = 37.9 (the truth is 0, where f overflows), and its slope in a,
    # log(x)*exp(...), flushed at x = 89.4, a = 1/4 (the truth is 2.1e-38). The factors now go
    # inside mul_exp.
    x, a = sp.symbols("x a", positive=True)
    fn = load_module("x**a*exp(-x)", "kernel", ["x", "a"]).kernel
    f32 = lambda v: float(np.float32(v))  # noqa: E731
    points = [(f32(37.878788), f32(37.878788)), (f32(89.393936), 0.25), (3.0, 2.5), (0.5, 1.5)]
    # tiny: mpmath's slope at x = a, 0, is 1.7e-18 at 60 digits beside a factor of 1e43.
    _partials_match(fn, x**a * sp.exp(-x), [x, a], points, ((0,), (1,)), rel=1e-5, tiny=1e-15)


def test_power_of_a_quotient_that_overflows_or_flushes(load_module) -> None:
    # (x/y)**a, as the Weibull log-density has it: x/y = 5.6e38 overflows and inf**a = inf,
    # where the truth is 1.00000000006 (a = 6.9e-13); x/y = 1e-50 flushes and 0**a = 0,
    # where the truth is 0.891. There exp(a*(log(x) - log(y))); the slopes' xlogy(w, x/y) as
    # w*(log(x) - log(y)) likewise (the slope in y, -a*(x/y)**a/y, was -inf at the first point,
    # where the truth is -2.3e25).
    x, y, a = sp.symbols("x y a", positive=True)
    fn = load_module("(x/y)**a", "ratio_power", ["x", "y", "a"]).ratio_power
    f32 = lambda v: float(np.float32(v))  # noqa: E731
    points = [(f32(16.666666), f32(3.000759e-38), f32(6.90119e-13)), (f32(1e-30), f32(1e20), f32(1e-3)), (3.0, 2.0, 1.5)]
    _partials_match(fn, (x / y) ** a, [x, y, a], points, ((), (0,), (1,), (2,)), rel=1e-5)


def test_gompertz_slopes_where_the_scaled_argument_overflows(load_module) -> None:
    # exp(-b*exp(-c*x))'s slopes are exp(-c*x - b*exp(-c*x)) times b*c, 1 or b*x: where c*x
    # overflows the exponent was inf - inf = NaN, where the exponential decides it and each
    # slope is 0: exp(-c*x - b*exp(-c*x)) is below 1e-(1e38) there, too small for mpmath's
    # exp to take. The lone -c*x is now clipped to the largest float.
    import tensorflow as tf

    x, b, c = sp.symbols("x b c", real=True)
    fn = load_module("exp(-b*exp(-c*x))", "gompertz", ["x", "b", "c"]).gompertz
    indices = ((), (0,), (1,), (2,), (0, 0), (0, 2), (1, 1), (1, 2), (2, 2))
    far = [
        (69.69697, 1.000061, -6.1558614e37),
        (1.2166897e30, 100.0, -5.134894e34),
        (-1.5470514e13, 7.061097e-33, 8.7408006e33),
    ]
    xs = [tf.constant([p[i] for p in far], dtype=tf.float32) for i in range(3)]
    got = tf_partials(tf, fn, xs, 2)
    for index in indices:
        assert got[index].numpy().tolist() == [0.0, 0.0, 0.0], (index, got[index].numpy())
    _partials_match(fn, sp.exp(-b * sp.exp(-c * x)), [x, b, c], [(0.5, 2.0, -3.0), (-2.0, 0.25, 1.5)], indices, rel=1e-5)


def test_square_root_of_a_quotient_that_overflows_or_flushes(load_module) -> None:
    # sqrt(x/y) is sqrt(x*sign(y))/sqrt(|y|): x/y overflows at x = -5e24, y = -2.9e-18, and its
    # slope in x, sqrt(x/y)/(2*x), was -inf there (the truth is -1.3e-4). The sign was taken
    # of 1/y, which flushes to 0 at |y| = 3.4e38: sqrt(x/y) was 0 at x = y = 3.4e38.
    x, y = sp.symbols("x y", real=True)
    fn = load_module("sqrt(x/y)", "root_ratio", ["x", "y"]).root_ratio
    f32 = lambda v: float(np.float32(v))  # noqa: E731
    points = [
        (f32(-5.078703e24), f32(-2.8592424e-18)),
        (f32(-74.242424), f32(-3.4e38)),
        (f32(3.4e38), f32(3.4e38)),
        (2.0, 3.0),
    ]
    _partials_match(fn, sp.sqrt(x / y), [x, y], points, ((), (0,), (1,), (0, 0), (0, 1), (1, 1)), rel=1e-5, tiny=1.2e-38)


def test_scaled_asinh_where_its_quotient_overflows(load_module) -> None:
    # c*asinh(x/c): x/c overflows at x = -2.6e32, c = 3e-28, and asinh(-inf) = -inf, where the
    # truth is -4.1e-26; there log(2) + log|x| - log|c|, signed. Its slope in c,
    # asinh(x/c) - x*|c|/(c*hypot(c, x)), was printed (-|c|*x)/c/hypot(c, x), whose |c|*x
    # overflows at x = c = 1.3e20 (the truth is 0.174); |c|/c is sign(c) now.
    x, c = sp.symbols("x c", real=True)
    fn = load_module("c*asinh(x/c)", "scaled_asinh", ["x", "c"]).scaled_asinh
    f32 = lambda v: float(np.float32(v))  # noqa: E731
    points = [
        (f32(-2.5602718e32), f32(2.9531143e-28)),
        (f32(1.2792213e20), f32(1.2792213e20)),
        (f32(-1.2792213e20), f32(-1.2792213e20)),
        (3.0, 2.0),
    ]
    _partials_match(fn, c * sp.asinh(x / c), [x, c], points, ((), (0,), (1,)), rel=1e-5, tiny=1.2e-38)


def test_power_of_a_quotient_with_its_exponent_zero(load_module) -> None:
    # (1 + 1/x)**x at x = 0 is inf**0 = 1 (the limit); power_of_quotient's far form there would
    # be exp(0*(log(0) - log(0))) = NaN, so it is not taken where the exponent is 0.
    import tensorflow as tf

    fn = load_module("(1 + 1/x)**x", "compound_limit", ["x"]).compound_limit
    assert fn(tf.constant([0.0], dtype=tf.float32)).numpy().tolist() == [1.0]


def test_log_normal_curvature_where_its_reciprocal_square_overflows(load_module) -> None:
    # The log-normal log-density's curvature in x, (1 + (log x - m - 1)/s**2)/x**2, was
    # (m - log x)*(1/s)**2*(1/x)**2 - (1/s)**2*(1/x)**2 + (1/x)**2: inf - inf = NaN wherever
    # 1/x**2 overflows (x = m = s = 4e-36, where the truth is -3e143: -inf in float32). The
    # judge's filter counted its gross failures at the moderate points only, not its NaN on
    # the grid; the nested quotient chosen now is NaN at none of them.
    x, m, s = sp.symbols("x m s", real=True)
    fn = load_module("-log(x*s) - (log(x) - m)**2/(2*s**2)", "log_normal", ["x", "m", "s"]).log_normal
    f32 = lambda v: float(np.float32(v))  # noqa: E731
    points = [(f32(4.0e-36),) * 3, (f32(6.5e-33), 1.0, 0.5), (f32(1e-20), 2.0, 3.0), (2.0, 0.5, 1.5)]
    truth = -sp.log(x * s) - (sp.log(x) - m) ** 2 / (2 * s**2)
    _partials_match(fn, truth, [x, m, s], points, ((0, 0), (0, 1), (1, 1)), rel=1e-5)


def test_product_with_a_logarithm_of_a_quotient_that_flushes(load_module) -> None:
    # y*log1p(x/y) at x = 6.7e-3, y = 1e37: x/y flushes to 0 and so did the product (the truth
    # is x); there it is x (tiny_argument). Beyond x/y = 2**24 its softplus branch stays.
    x, y = sp.symbols("x y", real=True)
    fn = load_module("y*log(1 + x/y)", "compound_log", ["x", "y"]).compound_log
    f32 = lambda v: float(np.float32(v))  # noqa: E731
    points = [
        (f32(6.6543650e-3), f32(1.0072742e37)),
        (f32(-5.8021699e-16), f32(-2.9723941e35)),
        (f32(-5.0787028e24), f32(-2.8592424e-18)),
        (3.0, 2.0),
    ]
    _partials_match(fn, y * sp.log(1 + x / y), [x, y], points, ((), (0,)), rel=1e-5, tiny=1.2e-38)


def test_student_t_shape_where_its_quotient_flushes_or_its_slope_cancels(load_module) -> None:
    # (y + 1)/2*log(1 + x**2/y), the shape of a Student-t log-density in its degrees of
    # freedom y. f was 0 where x**2/y flushes (x = 6.7e-3, y = 1e37; the truth 2.2e-5). Its
    # slope in y, log1p(t)/2 - (y + 1)*t/(2*y*(1 + t)), t = x**2/y, cancels for large y
    # (-2.8e-17 at x = 3.2e5, y = -1.3e20, the truth 1.7e-19); log1pmx(t)/2 plus t times
    # (x - 1)*(x + 1)/(2*(x**2 + y)), the rest's first order, does not (less_argument).
    x, y = sp.symbols("x y", real=True)
    fn = load_module("(y + 1)/2*log(1 + x**2/y)", "student_shape", ["x", "y"]).student_shape
    f32 = lambda v: float(np.float32(v))  # noqa: E731
    points = [
        (f32(6.6543650e-3), f32(1.0072742e37)),
        (f32(322740.06), f32(-1.2792213e20)),
        (f32(37.878788), f32(1.0971582e17)),
        (f32(-1.0000610), f32(63399324.0)),
        (3.0, 2.0),
    ]
    _partials_match(fn, (y + 1) / 2 * sp.log(1 + x**2 / y), [x, y], points, ((), (1,)), rel=1e-4, tiny=1.2e-38)


_X = sp.Symbol("x", real=True)


@pytest.mark.parametrize(
    ("text", "truth", "points"),
    [
        # exp(x) rounds to 1 for -3e-8 < x < 0, where acos(exp(x)) was 0 (the truth is
        # sqrt(2*|x|), 1.4e-4 at x = -1e-8); 2*asin(sqrt(-expm1(x)/2)) keeps x's bits.
        ("acos(exp(x))", sp.acos(sp.exp(_X)), [(-1e-8,), (-3e-5,), (-0.7,), (-60.0,)]),
        # erfc(x) rounds near 1 for small x: asin(erfc(x)) lost 10 bits there, and its slope
        # was NaN at 87 of the benchmark's 359 points; pi/2 - 2*asin(sqrt(erf(x)/2)) is not.
        ("asin(erfc(x))", sp.asin(sp.erfc(_X)), [(1e-9,), (2e-5,), (0.3,), (3.0,)]),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_inverse_sine_of_a_function_near_one(load_module, text, truth, points) -> None:
    fn = load_module(text, "near_one", ["x"]).near_one
    _partials_match(fn, truth, [_X], points, ((), (0,)), rel=1e-5)


@pytest.mark.parametrize(
    ("text", "truth", "points"),
    [
        # exp(x) flushes to 0 below -103.3, where lgamma(exp(x)) was lgamma(0) = inf (the
        # truth is -x); its curvature polygamma(1, u)*u**2 + digamma(u)*u, u = exp(x), is
        # 1/u - 1/u + ... and was 0 at x = -33 (the truth is -1.9e-15).
        ("lgamma(exp(x))", sp.loggamma(sp.exp(_X)), [(-110.0,), (-1e4,), (-33.0,), (-3.0,), (-0.5,), (2.0,)]),
        # sigmoid(x) likewise, below -103.
        ("lgamma(sigmoid(x))", sp.loggamma(1 / (1 + sp.exp(-_X))), [(-110.0,), (-3e5,), (-20.0,), (-2.0,)]),
        # softplus(x) too (its log is x - exp(x)/2 below -20); below -103 the reference's 60
        # digits of 1 + exp(x) do not serve f'' (test_lgamma_of_softplus_where_it_flushes).
        ("lgamma(softplus(x))", sp.loggamma(sp.log(1 + sp.exp(_X))), [(-60.0,), (-25.0,), (-3.0,), (0.5,)]),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_lgamma_of_a_function_that_flushes(load_module, text, truth, points) -> None:
    fn = load_module(text, "lgamma_tiny", ["x"]).lgamma_tiny
    _partials_match(fn, truth, [_X], points, ((), (0,), (0, 0)), rel=1e-5, tiny=1e-37)


def test_lbeta_of_a_function_that_flushes(load_module) -> None:
    # lbeta(exp(x), 2) was lbeta(0, 2) = inf below -103.3, where the truth is about -x.
    fn = load_module("lbeta(exp(x), 2)", "lbeta_tiny", ["x"]).lbeta_tiny
    truth = sp.loggamma(sp.exp(_X)) + sp.loggamma(2) - sp.loggamma(sp.exp(_X) + 2)
    _partials_match(fn, truth, [_X], [(-110.0,), (-1e4,), (-33.0,), (-3.0,), (0.5,)], ((), (0,)), rel=1e-5)


def test_lgamma_of_softplus_where_it_flushes(load_module) -> None:
    # softplus(x) flushes to 0 below -103.3: lgamma(softplus(x)) was inf, its slope NaN.
    fn = load_module("lgamma(softplus(x))", "lgamma_tiny", ["x"]).lgamma_tiny
    _partials_match(fn, sp.loggamma(sp.log(1 + sp.exp(_X))), [_X], [(-110.0,), (-105.0,)], ((), (0,)), rel=1e-5)


_Y = sp.Symbol("y", real=True)


@pytest.mark.parametrize(
    ("text", "truth", "symbols", "points"),
    [
        # expm1(x) overflows from x = 88.7, its power from 113: f was inf between (2.3e30 at
        # x = 89), its slopes b**w/b*exp(x) inf/inf = NaN from 89 on, beyond 113 too. There
        # exp(w*(x + log1mexp(x))), whose rounded argument (about 70) costs up to 6 bits.
        # At 112 f' is 1.25e38 and at 6.5e-33 f'' is -2.1e38: the module computed pi*(...)
        # inside mul_no_nan and /4 outside it, inf from float max/pi.
        (
            "expm1(x)**(pi/4)",
            (sp.exp(_X) - 1) ** (sp.pi / 4),
            [_X],
            [(89.0,), (95.0,), (100.0,), (110.0,), (112.0,), (120.0,), (3.0,), (6.5e-33,)],
        ),
        # An input's power: cosh(x)**y at x = 100, y = 1/2 was inf**0.5, its slope in y inf*100.
        ("cosh(x)**y", sp.cosh(_X) ** _Y, [_X, _Y], [(100.0, 0.5), (-95.0, 0.25), (2.0, 3.0)]),
        # sinh(x)**y beyond sinh's range, its slope in x as y*sinh(x)**y/tanh(x) there too.
        ("sinh(x)**y", sp.sinh(_X) ** _Y, [_X, _Y], [(95.0, 0.5), (100.0, 0.25), (89.0, -0.5), (2.0, 3.0)]),
        # Where the base flushes: erfc(11) is 0 in float32, its root 1.2e-27.
        ("sqrt(erfc(x))", sp.sqrt(sp.erfc(_X)), [_X], [(10.0,), (11.0,), (1.0,)]),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_power_of_a_function_beyond_its_range(load_module, text, truth, symbols, points) -> None:
    names = [s.name for s in symbols]
    fn = load_module(text, "power_past", names).power_past
    indices = [(), *itertools.combinations_with_replacement(range(len(symbols)), 1), *itertools.combinations_with_replacement(range(len(symbols)), 2)]
    _partials_match(fn, truth, symbols, points, indices, rel=2e-5)


@pytest.mark.parametrize(
    ("text", "truth", "points"),
    [
        # Both overflow and their quotient is a float: inf/inf was NaN (cosh(x)/cosh(y) was
        # 78% within 3 bits over the judge's grid at every order, 99.2% or more now).
        # Its slope in y, -cosh(x)*sinh(y)/cosh(y)**2, at x = -92, y = -5: inf*(-74)/5507;
        # at y = -1.2e-13, -exp(logcosh(x) - logcosh(y))*tanh(y) was inf*1.2e-13 (the truth
        # 5.2e26), tanh(y) outside the exp.
        (
            "cosh(x)/cosh(y)",
            sp.cosh(_X) / sp.cosh(_Y),
            [(100.0, 95.0), (-100.0, 98.0), (95.0, 100.0), (-92.0, -5.0), (-92.0, -1.1583232e-13), (3.0, 2.0)],
        ),
        # One overflows where the other flushes: inf*0.
        ("cosh(x)*exp(-y)", sp.cosh(_X) * sp.exp(-_Y), [(100.0, 100.0), (95.0, 120.0), (-120.0, 100.0), (3.0, 2.0)]),
        # Of either sign: at x = 2e6, y = -92 the slope in y, -expm1(x)*exp(y)/expm1(y)**2, was
        # inf*0 = NaN; the truth overflows to -inf.
        ("expm1(x)/expm1(y)", (sp.exp(_X) - 1) / (sp.exp(_Y) - 1), [(100.0, 99.0), (100.0, 95.0), (2e6, -92.0), (3.0, 2.0)]),
        # A power of one over the other: balance_ratio's cosh(x)*(cosh(x)/sinh(y)) kept the
        # cosh(x) outside the quotient's where, inf*0 = NaN where both overflow (the truth 0
        # at x = 3.3e9, y = 2.4e30; 7.3e36 at x = 90, y = 95). 95.8/96.9/97.9% of the judge's
        # grid within 3 bits (orders 0/1/2), 100/99.6/99.3% now (product_past_its_groups).
        (
            "cosh(x)**2/sinh(y)",
            sp.cosh(_X) ** 2 / sp.sinh(_Y),
            [(3.337369e9, 2.391792e30), (90.0, 95.0), (-90.0, -95.0), (95.0, -1.4798332e27), (1.0, 2.0)],
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_product_of_functions_beyond_their_range(load_module, text, truth, points) -> None:
    fn = load_module(text, "past_factors", ["x", "y"]).past_factors
    indices = [(), (0,), (1,), (0, 0), (0, 1), (1, 1)]
    # exp rounds its argument: 4 bits at an argument of 87.
    _partials_match(fn, truth, [_X, _Y], points, indices, rel=4e-6)


def test_root_of_sinh_times_an_input_far_out(load_module) -> None:
    # d/dx sqrt(sinh(x)*y) is sqrt(sinh(x)*y)*cosh(x)/(2*sinh(x)): from x = 89 cosh/sinh was
    # inf/inf = NaN, also where the truth is a float (2.6e21 at x = 100, y = 3) and where it
    # overflows (x = 200); 61% of the judge's grid within 3 bits, 100% as f/(2*tanh(x)).
    fn = load_module("sqrt(sinh(x)*y)", "root_sinh", ["x", "y"]).root_sinh
    truth = sp.sqrt(sp.sinh(_X) * _Y)
    points = [(100.0, 3.0), (-150.0, -2.0), (-95.0, -1e-30), (200.0, 1.0), (1.0, 2.0), (-0.5, -3.0)]
    _partials_match(fn, truth, [_X, _Y], points, [(), (0,), (1,), (0, 0), (0, 1), (1, 1)], rel=1e-5)


def test_slope_of_a_power_of_sinh_in_its_base(load_module) -> None:
    # sinh(x)**y's slope in x, y*sinh(x)**(y - 1)*cosh(x), was 0*inf = NaN at x = -100, y = -2
    # (the truth 2*cosh(x)/sinh(x)**3 underflows to 0);
    # y*sinh(x)**y/tanh(x) is not (tanh_over_cosh_power): 81% of the judge's grid within 3
    # bits, now 99%. A negative base, so an integer y only, and no slope in y.
    fn = load_module("sinh(x)**y", "sinh_power", ["x", "y"]).sinh_power
    points = [(-100.0, -2.0), (-95.0, -3.0), (-3.0, 3.0), (95.0, 0.5), (2.0, 3.0)]
    # tiny: a truth below float32's least subnormal (5.5e-87) is 0.
    _partials_match(fn, sp.sinh(_X) ** _Y, [_X, _Y], points, [(), (0,), (0, 0)], rel=2e-5, tiny=1e-45)


def test_power_of_a_base_near_one(load_module) -> None:
    # cosh(x)**y where cosh(x) rounds near 1 and y is large: at x = 1e-4, y = 1e9 it was 1 (the
    # truth e**5 = 148), at x = 0.003, y = -2e6 12% off; its slopes alike. As
    # exp(y*logcosh(x)) (power_near_one), within 3 bits on 99% of the judge's grid (was 96%).
    fn = load_module("cosh(x)**y", "near_one", ["x", "y"]).near_one
    points = [(1e-4, 1e9), (3e-3, -2e6), (-0.0197, -80.0), (2.0, 3.0), (100.0, 0.5)]
    indices = [(), (0,), (1,), (0, 0), (0, 1), (1, 1)]
    _partials_match(fn, sp.cosh(_X) ** _Y, [_X, _Y], points, indices, rel=2e-5)


@pytest.mark.parametrize(
    ("text", "truth", "points"),
    [
        # cosh(x)**y*sinh(x)**-y, coth(x)**y: inf*0 from x = 89 (1 at x = 100, y = 0.5); where
        # coth(x) rounds to 1, at x = 12, y = 1e10, 1**y where the truth is 1.08.
        (
            "cosh(x)**y*sinh(x)**(-y)",
            sp.cosh(_X) ** _Y * sp.sinh(_X) ** -_Y,
            [(100.0, 0.5), (95.0, -2.5), (12.0, 1e10), (10.0, -3e8), (0.5, 3.0)],
        ),
        # Its power of a quotient: (inf/inf)**y = NaN from x = 89.
        (
            "(cosh(x)/sinh(x))**y",
            (sp.cosh(_X) / sp.sinh(_X)) ** _Y,
            [(100.0, 0.5), (95.0, -2.5), (12.0, 1e10), (0.5, 3.0)],
        ),
        # tanh(x)**y where tanh(x) rounds to 1: 1 at x = 12, y = 1e10, the truth 0.47. Its
        # curvature in x, y*tanh(x)**(y - 2)*(1 + tanh(x)**2 - y/cosh(x)**2)*..., was 0 there
        # (y*tanh(x)**2 - y rounds to 0); it is -0.740 now, the power held as it is (1**y; the
        # truth -0.348): the judge does not take the where there, and is not checked there.
        # With the power as exp((y - 2)*log(tanh(x))) outside the product, it was -inf*0 at
        # x = 0.5, y = 1e36, where the power flushes and y*(...) overflows.
        ("tanh(x)**y", sp.tanh(_X) ** _Y, [(12.0, 1e10), (10.0, -3e8), (100.0, 0.5), (0.5, 3.0), (0.5, 1e36)]),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_power_of_tanh_or_its_reciprocal_near_one(load_module, text, truth, points) -> None:
    fn = load_module(text, "tanh_power", ["x", "y"]).tanh_power
    indices = [(), (0,), (1,), (0, 1), (1, 1)] + ([(0, 0)] if text != "tanh(x)**y" else [])
    _partials_match(fn, truth, [_X, _Y], points, indices, rel=2e-5)


@pytest.mark.parametrize(
    ("text", "truth", "points"),
    [
        # A one-input function beside another input: expm1(x)/x - y was 0/0 = NaN at x = 0 and
        # inf from x = 88.7; its slope in x, (x*exp(x) - expm1(x))/x**2, 0 for |x| < 1e-8 (the
        # truth 1/2), its curvature -0.0 there (the truth 1/3). The one-input regimes
        # (series near 0, the far tail) were for functions of one input only. 98.3/75.0/82.5%
        # of the judge's grid within 3 bits (orders 0/1/2), 100% at each order now.
        (
            "expm1(x)/x - y",
            (sp.exp(_X) - 1) / _X - _Y,
            [(1e-12, 2.0), (-7.5265465e-09, 3.0), (1.2e-5, -3.0), (90.0, 1e30), (89.0, 2.7e-23), (0.75, 0.5)],
        ),
        # The same as a factor: y*expm1(x)/x, 90.4/74.8/82.6 -> 99.2/98.3/99.9%.
        (
            "expm1(x)/x*y",
            (sp.exp(_X) - 1) / _X * _Y,
            [(1e-12, 2.0), (-7.5265465e-09, 1.0), (1.2e-5, -3.0), (90.0, 0.5), (0.75, 0.5)],
        ),
        # sin(x)/x + y: its curvature in x, (2*sin(x) - 2*x*cos(x) - x**2*sin(x))/x**3, cancels
        # near 0 (the truth -1/3): 87.1/89.0% at orders 1/2, 100/98.9% now.
        ("sin(x)/x + y", sp.sin(_X) / _X + _Y, [(1e-12, 2.0), (1e-3, 1.0), (-2.5e-2, -3.0), (0.75, 0.5)]),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_one_input_part_beside_another_input(load_module, text, truth, points) -> None:
    fn = load_module(text, "separable", ["x", "y"]).separable
    # Not at x = 1e-30: the truth's slope, a difference of terms of 1e-30 for a value of 1e-60,
    # is beyond 60 digits there.
    _partials_match(fn, truth, [_X, _Y], points, [(), (0,), (1,), (0, 0), (0, 1), (1, 1)], rel=4e-6, tiny=1e-37)
