"""Unit tests for single stabilising rules, the measured economies, the judge's cost
model and the derivatives of the regime primitives."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy as sp

from generator import judge
from generator.primitives import (
    add_error,
    bounded_error,
    away,
    by_dtype,
    exp_finite,
    expm1,
    clip,
    compensated_sum,
    ipow,
    lift,
    log1pmx,
    lowered,
    lowered_no_nan,
    mul_no_nan,
    naive,
    pick,
    polyval,
    product_error,
    sigmoid,
    sigmoid_from_exp,
    sigmoid_slope,
    softplus,
    split_power,
    square_error,
    sub_error,
    tanh_softplus,
    tanh_softplus_slope,
)
from generator.printer import TFPrinter
from generator.stabilize import (
    RULES,
    VARIANTS,
    argument_error,
    compensate_arguments,
    compensate_powers,
    compensate_sums,
    economize,
    factor_powers,
    group_powers,
    optimize,
    precise_sigmoids,
    prune_branches,
    scale_tails,
    share_arguments,
)

x = sp.Symbol("x", real=True)


def _rule(name: str):
    return next(rule for rule in RULES if rule.name == name)


def test_one_minus_sigmoid_also_inside_a_longer_sum() -> None:
    rule = _rule("one_minus_sigmoid")
    assert rule(1 - sigmoid(x)) == sigmoid(-x)
    # The chain rule leaves 1 - s(x) spread over a sum: 1 - s(x) - x*s(x)*s(-x).
    assert rule(1 - sigmoid(x) - x * sigmoid(x) * sigmoid(-x)) == sigmoid(
        -x
    ) - x * sigmoid(x) * sigmoid(-x)


def test_a_sigmoid_and_its_reflection_sum_to_their_weight() -> None:
    # The chain rule leaves sigmoid(y) + sigmoid(-y) in the slopes of
    # exp(x)/(exp(x) + exp(y) + 1): two sigmoids for the number 1.
    rule, y, t = _rule("sigmoid_difference"), sp.Symbol("y", real=True), sp.Symbol("t", real=True)
    assert rule((sigmoid(y) + sigmoid(-y)) * sigmoid(x)) == sigmoid(x)
    assert rule(t * sigmoid(y) + t * sigmoid(-y) + x) == t + x
    assert rule(sigmoid(y) + 2 * sigmoid(-y)) == sigmoid(y) + 2 * sigmoid(-y)  # weights apart


def test_sigmoid_complement_where_it_costs_no_accuracy() -> None:
    # swish': sigmoid(-x) only corrects a value near 1, so 1 - sigmoid(x) is as accurate.
    swish_first = sigmoid(x) * (1 + x * sigmoid(-x))
    assert economize(swish_first) == sigmoid(x) * (1 + x * (1 - sigmoid(x)))


def test_sigmoid_complement_not_where_the_complement_is_the_value() -> None:
    # softplus'': for x > 17, 1 - sigmoid(x) is 0 in float32 and sigmoid(-x) is not.
    softplus_second = sigmoid(x) * sigmoid(-x)
    assert economize(softplus_second) == softplus_second
    assert optimize(softplus_second)[0] == softplus_second


def test_exp_of_softplus_kept_where_it_measures_as_accurate() -> None:
    # mish'' before the regimes: softplus, two exps and two expm1s become one exp and a sigmoid.
    s, c = softplus(x), sp.cosh(softplus(x))
    mish_second = (
        2 * sigmoid(x) / c**2
        + x * sigmoid(x) * sigmoid(-x) / c**2
        - 2 * x * sigmoid(x) ** 2 * sp.sinh(s) / c**3
    )
    economical = economize(mish_second)
    assert not economical.has(softplus, sp.cosh, sp.sinh)
    assert judge.cost(economical) < judge.cost(mish_second)


def test_cost_prices_ops_and_counts_shared_subexpressions_once() -> None:
    assert judge.cost(sigmoid(x) * sigmoid(-x)) < judge.cost(sp.cosh(x) ** -2)
    assert judge.cost(softplus(x)) > judge.cost(sp.log(1 + sp.exp(x)))
    shared = sp.exp(x**2) + sp.exp(x**2) * x
    assert judge.cost(shared) == judge.cost(sp.exp(x**2)) + 2 * judge.ARITHMETIC_COST


def test_best_breaks_ties_by_cost() -> None:
    # Equally accurate: the cosh form costs a slow kernel, the sigmoid form two exps.
    fast, slow = 4 * sigmoid(2 * x) * sigmoid(-2 * x), sp.cosh(x) ** -2
    assert judge.best([slow, fast], 1 - sp.tanh(x) ** 2, (x,)) == fast


def test_best_ties_only_candidates_bad_at_no_more_points() -> None:
    # d/dx 1/cosh(softplus(x))**2 after exp_of_softplus: c**3 overflows at x = 31.8 (28 bits
    # there) where the stepwise quotient does not; far out both are inf/inf, which keeps
    # their means within TIE_BITS. The cheaper one must not win on the mean alone.
    c = 1 + sp.exp(x) / 2 - sigmoid(x) / 2
    s = sp.exp(x) / 2 + sigmoid(x) / 2
    cubed = -2 * s * sigmoid(x) / c**3
    stepwise = -2 * ipow(ipow(s / c, 1) / c, 1) * sigmoid(x) / c
    truth = sp.diff(sp.cosh(sp.log(1 + sp.exp(x))) ** -2, x)
    assert judge.cost(cubed) < judge.cost(stepwise)
    assert judge.best([cubed, stepwise], truth, (x,)) == stepwise


def test_best_takes_a_form_bad_at_half_the_points_within_the_slack() -> None:
    # exp(-x**2)'': 4*x**2 - 2 loses 8 bits at the judge's points around its root
    # 1/sqrt(2); with the root in two float32 parts the product loses none, at a mean 0.11
    # bits higher (within BAD_SLACK_BITS).
    from generator.stabilize import VARIANTS

    dos = next(r for r in VARIANTS if r.name == "difference_of_squares")
    plain = mul_no_nan(4 * x**2 - 2, sp.exp(-(x**2)))
    split = dos(plain)
    assert split != plain
    truth = sp.diff(sp.exp(-(x**2)), x, 2)
    points, values, _ = judge.judged_points(truth, (x,))
    (plain_mean, plain_bad), (split_mean, split_bad) = (
        judge._scored(f, (x,), points, values) for f in (plain, split)
    )
    assert plain_mean < split_mean <= plain_mean + judge.BAD_SLACK_BITS
    assert split_bad <= plain_bad // 2 < plain_bad
    assert judge.best([plain, split], truth, (x,)) == split


def test_best_measures_an_irrational_constant_factor_in_float32() -> None:
    # The normal density's f'': with c = sqrt(2)/(2*sqrt(pi)) left symbolic, NumPy multiplies
    # by a float64 scalar first and computes the rest in float64, where
    # (x - 1)*(x + 1)*exp(-x**2/2) is finite at x = 1e20; in float32 it is inf*0 = NaN.
    c = sp.sqrt(2) / (2 * sp.sqrt(sp.pi))
    plain = c * (x - 1) * (x + 1) * sp.exp(-(x**2) / 2)
    guarded = c * mul_no_nan((x - 1) * (x + 1), sp.exp(-(x**2) / 2))
    truth = sp.diff(c * sp.exp(-(x**2) / 2), x, 2)
    points, values, _ = judge.judged_points(truth, (x,))
    _, plain_bad = judge._scored(plain, (x,), points, values)
    assert plain_bad > 0
    assert judge.best([plain, guarded], truth, (x,)) == guarded


def test_cosh_and_sinh_print_from_exp_as_the_judge_evaluates_them() -> None:
    printer = TFPrinter(dtype_of="x")
    assert printer.doprint(sp.cosh(x)) == "(0.5 * (tf.math.exp(x) + tf.math.exp(-x)))"
    assert (
        printer.doprint(sp.sinh(2 * x))
        == "(0.5 * (tf.math.expm1(2.0 * x) - tf.math.expm1(-2.0 * x)))"
    )
    assert (
        printer.doprint(1 / sp.cosh(x))
        == "1.0 / (0.5 * (tf.math.exp(x) + tf.math.exp(-x)))"
    )
    points = judge.sample_points(1)
    for f, reference in ((sp.cosh, np.cosh), (sp.sinh, np.sinh)):
        ours = judge.evaluate(f(x), (x,), points, np.float64)
        finite = np.abs(points[0]) < 700
        np.testing.assert_allclose(
            ours[finite], reference(points[0][finite]), rtol=1e-14
        )


def test_regime_primitives_differentiate() -> None:
    assert sp.diff(clip(x, -3, 4), x) == sp.Heaviside(x + 3) * sp.Heaviside(4 - x)
    assert sp.diff(away(x, sp.Rational(1, 2)), x) == sp.Heaviside(
        sp.Abs(x) - sp.Rational(1, 2)
    )
    # 3x**4 + 2x**2 + 1 in x**2 -> 12x**3 + 4x = 2x*(6x**2 + 2)
    assert sp.diff(polyval(sp.Tuple(3, 2, 1), x**2), x) == 2 * x * polyval(
        sp.Tuple(6, 2), x**2
    )


def test_grid_is_sorted_and_unique() -> None:
    grid = judge.grid()
    assert len(grid) == len(np.unique(grid)) > 100
    assert (np.diff(grid) > 0).all()


def test_divide_stepwise_keeps_the_quotient_finite() -> None:
    from generator.stabilize import divide_stepwise

    m, s = sp.symbols("m s", real=True)
    form = (x - m) / s**2
    stepwise = divide_stepwise(form)
    assert sp.simplify(naive(stepwise) - form) == 0
    # x = m, s = 1e-36: s**2 flushes to 0 and (x - m)/s**2 is 0/0; step by step it is 0.
    points = np.array([[1.4e-36, 2.0], [1.4e-36, 1.0], [1.4e-36, 0.5]])
    values = judge.evaluate32(stepwise, (x, m, s), points)
    assert values[0] == 0 and np.isnan(judge.evaluate32(form, (x, m, s), points)[0])
    assert values[1] == np.float32(4.0)
    # Higher powers are divided one step at a time: a/s**3 = ((a/s)/s)/s.
    cubed = divide_stepwise((x - m) / s**3)
    assert all(p.exp == -1 for p in cubed.atoms(sp.Pow)), cubed


def test_reference_at_a_removable_singularity_of_high_order() -> None:
    # sinc'' sums terms of size 1/x**3 to -1/3 at 0; the reference is the limit.
    f2 = sp.diff(sp.sin(x) / x, x, 2)
    value = judge.reference(f2, (x,), np.array([[0.0]]))[0]
    assert abs(value - (-1 / 3)) < 1e-9


def test_reference_exp_of_a_far_complex_argument_is_not_computed() -> None:
    # x**y at x = -89, y = -3.3e9 passes through exp(-1.5e10 + 1e10j); mpmath took minutes on
    # the sums that follow (found by the fuzzer). Real results never come from there.
    import mpmath

    exp = judge._MP_FUNCTIONS["exp"]
    assert mpmath.isnan(exp(mpmath.mpc(-2e5, 1)))
    assert mpmath.isnan(exp(mpmath.mpc(2e5, 1)))
    assert exp(mpmath.mpc(-3, 0)) == mpmath.exp(-3)
    value = judge.reference(
        softplus(x * sp.log(sp.Symbol("y", real=True))),
        (x, sp.Symbol("y", real=True)),
        np.array([[-3.3e9], [-89.0]]),
    )
    assert np.isnan(value).all()


def test_factor_polynomial_factors_exact_coefficients_only() -> None:
    from generator.primitives import factor_polynomial

    y = sp.Symbol("y", real=True)
    assert factor_polynomial(x**2 - y**2) == (x - y) * (x + y)
    # With a float (a constant as the parser writes it), only the common factors: SymPy's
    # factoring over the rationals of such coefficients took 27 s in one call.
    c = sp.Float("0.12692801104297250")
    floated = c * x**3 * y + c**2 * x**2 * y**2
    assert factor_polynomial(floated) == sp.factor_terms(floated)
    assert factor_polynomial(floated).equals(floated)


def test_balanced_exponent_pairs_terms_of_opposite_signs() -> None:
    from generator.stabilize import _balanced_exponent

    x, y, z = sp.symbols("x y z", real=True)
    ax, ay = sp.Abs(x), sp.Abs(y)
    # 3*|x| and 2*|y| overflow at x = y = 3e38, where the sum is 3e38.
    assert _balanced_exponent(3 * ax - 2 * ay + sp.log(2)) == 2 * ipow(ax - ay, 1) + ax + sp.log(2)
    assert _balanced_exponent(2 * x - 3 * y + 2 * z) == 2 * ipow(x - y, 1) + ipow(z - y, 1) + z
    # Nothing to pair, or no term beyond 1 times an input: as it was.
    for unchanged in (3 * x + 2 * y, x - y, 3 * x + softplus(y) - softplus(x)):
        assert _balanced_exponent(unchanged) == unchanged
    points = np.array([[3e38, -2.5e38, 100.0], [3e38, -2.5e38, 120.0]])
    value = judge.evaluate32(_balanced_exponent(3 * ax - 2 * ay), (x, y), points)
    assert np.allclose(value, 3 * np.abs(points[0]) - 2 * np.abs(points[1]), rtol=1e-6)


def test_group_powers_pairs_the_inputs_powers() -> None:
    x, y = sp.symbols("x y", real=True)
    # erf(x*y)'s slope has x**2*y**2 in its exponent: 0*inf at x = 1e-33, y = 6e28.
    assert group_powers(x**2 * y**2) == ipow(x * y, 2)
    assert group_powers(x * y**3) == ipow(x * y, 1) * y**2
    assert group_powers(1 / (x * y**2)) == 1 / (ipow(x * y, 1) * y)
    for unchanged in (x * y, x**2, sp.sin(x) * y**2, (x - y) ** 2 * x**2):
        assert group_powers(unchanged) == unchanged
    points = np.array([[1e-33, -6.5e-33], [6e28, 5.9e28]])
    value = judge.evaluate32(group_powers(x**2 * y**2), (x, y), points)
    assert np.allclose(value, (points[0] * points[1]) ** 2, rtol=1e-6)


def test_share_arguments_writes_equal_arguments_once() -> None:
    x = sp.Symbol("x", real=True)
    forward = sigmoid(x + x**3 / 10)
    second = sigmoid(x * (10 + x**2) / 10) * sigmoid(-x * (10 + x**2) / 10)
    shared = share_arguments([forward, second])
    assert shared[0] == forward
    assert shared[1] == sigmoid(x + x**3 / 10) * sigmoid(-(x + x**3 / 10))


def test_share_arguments_matches_numbers_written_out() -> None:
    # factor_powers writes 2*sqrt(2)/sqrt(pi) as a float; the other orders keep it exact.
    x = sp.Symbol("x", real=True)
    c = sp.sqrt(2) / sp.sqrt(sp.pi)
    written = x * (
        sp.Float(sp.N(2 * c, 20), 17) + sp.Float(sp.N(c / 10, 20), 17) * x**2
    )
    exact = 2 * c * x + c * x**3 / 10
    shared = share_arguments([sigmoid(written), sigmoid(-exact)])
    assert shared == [sigmoid(written), sigmoid(-written)]
    # Arguments that differ beyond the 12th digit stay apart.
    other = share_arguments([sigmoid(written), sigmoid(written * (1 + sp.Float(1e-9)))])
    assert other[1] != other[0]


def test_factor_powers_takes_out_the_lowest_power() -> None:
    x, y = sp.symbols("x y", real=True)
    c = sp.sqrt(2) / sp.sqrt(sp.pi)
    poly = 2 * c * x + c * x**3 / 10
    # One number per term, as the printer writes it (sqrt(2)*x**2/sqrt(pi) is not shared).
    number = lambda e: sp.Float(sp.N(e, 20), 17)  # noqa: E731
    assert factor_powers(poly) == x * (number(2 * c) + number(c / 10) * x**2)
    assert factor_powers(sigmoid(poly)) == sigmoid(factor_powers(poly))
    assert factor_powers(x**2 - x**4 / 12) == x**2 * (1 - x**2 / 12)
    for unchanged in (x + 1, 3 * x**2 + x * y, x * y + x**2 * y**2, sp.sin(x) + x):
        assert factor_powers(unchanged) == unchanged
    # As accurate as the sum over the whole float32 range.
    points = judge.grid(np.float32)[None, :]
    truth = judge.reference(poly, (x,), points)
    bits = judge.bits_of_error(
        judge.evaluate32(factor_powers(poly), (x,), points), truth
    )
    assert bits.max() <= 2, bits.max()


def test_divide_stepwise_with_a_symbolic_exponent_beside() -> None:
    # The fuzzer's (tanh(x))**tan(y): asking whether tan(y) < 0 raised a TypeError.
    from generator.stabilize import divide_stepwise

    x, y = sp.symbols("x y", real=True)
    expr = sp.tanh(x) ** sp.tan(y) / x**2
    result = divide_stepwise(expr)
    assert sp.simplify(naive(result) - expr) == 0


def test_judge_takes_a_complex_value_as_nan() -> None:
    # A Python power of a negative constant is complex; TF's pow is NaN there. Cast to
    # float32, the complex value had kept its real part as the form's value.
    form = x + sp.Pow(sp.Float(-0.5), sp.Float(0.5), evaluate=False)
    assert np.isnan(judge.evaluate32(form, (x,), np.array([[1.0, 2.0]]))).all()
    assert (judge.evaluate32(x**2, (x,), np.array([[1.0, 2.0]])) == [1.0, 4.0]).all()


def test_conjugate_of_a_numerator_that_cancels() -> None:
    from generator.derive import _as_square, _conjugates

    x, d = sp.symbols("x d", real=True)
    h = sp.sqrt(d**2 + x**2)
    # The pseudo-Huber loss's slope in d over a common denominator: its numerator is 0
    # for |x| << |d|. Over the conjugate it is d**2*x**4, and the conjugate a square.
    quotient = (2 * d**3 + d * x**2 - 2 * d * h * sp.Abs(d)) / (h * sp.Abs(d))
    (form,) = _conjugates(quotient)
    # sign_product takes d/|d| out as sign(d) when the form is stabilised.
    assert _rule("sign_product")(form) == sp.sign(d) * x**4 / (h * (sp.Abs(d) + h) ** 2)
    # x - sqrt(x**2 - 1) cancels for x >> 1, its conjugate for x << -1: each where the
    # other does not.
    (form,) = _conjugates(x - sp.sqrt(x**2 - 1))
    assert form == sp.Piecewise(
        (1 / (x + sp.sqrt(x**2 - 1)), x > 0), (x - sp.sqrt(x**2 - 1), True)
    )
    # Near misses: nothing cancels in 1 - x (from 1 + sqrt(x)); no root to take.
    assert _conjugates((1 + sp.sqrt(x)) / d) == []
    assert _conjugates((x + d) / (x - d)) == []
    # A sum of squares and twice their product is a square; not so with three times it.
    assert _as_square(2 * d**2 + x**2 + 2 * sp.Abs(d) * h, h) == (sp.Abs(d) + h) ** 2
    other = 2 * d**2 + x**2 + 3 * sp.Abs(d) * h
    assert _as_square(other, h) == other


def test_root_elimination_and_signs() -> None:
    from generator.derive import _root_eliminations

    x, d = sp.symbols("x d", real=True)
    h = sp.sqrt(d**2 + x**2)
    # The pseudo-Huber curvature in d over a common denominator, as sp.together writes it:
    # with x**2 = h**2 - d**2 its numerator factors.
    a = sp.Abs(d)
    numerator = 2 * d**4 + 3 * d**2 * x**2 - 2 * d**2 * h * a - 2 * x**2 * h * a
    (form,) = _root_eliminations(numerator / (d**2 * h * a + x**2 * h * a))
    assert form == -((a - h) ** 2) * (2 * h + a) / (d**2 + x**2) ** sp.Rational(3, 2)
    # Not where nothing cancels: hypot's y**2/h**3 as (h**2 - x**2)/h**3.
    assert _root_eliminations(d**2 / h**3) == []
    # Near misses: x in an odd power outside the root; a root of a sum with no square.
    assert _root_eliminations((x * h + d**2) / d) == []
    assert _root_eliminations(sp.sqrt(x + d) / (x + d + 1)) == []
    # u**n/|u|**n as sign(u)**n (sign_product, as the candidates are stabilised), and only that.
    sign_product = _rule("sign_product")
    assert sign_product(d * x**4 / (sp.Abs(d) * (x + 1))) == sp.sign(d) * x**4 / (x + 1)
    assert sign_product(d**2 / sp.Abs(d) ** 3) == 1 / sp.Abs(d)
    assert sign_product(x / sp.Abs(d)) == x / sp.Abs(d)
    # Products without a sign to take out stay as they are (two exps are not merged).
    product = x * sp.exp(-x) * sp.exp(-sp.exp(-x)) / sp.Abs(d)
    assert sign_product(product) == product


def test_argument_error_of_sums_and_products_of_exact_terms() -> None:
    y = sp.Symbol("y", real=True)

    def error_of(u):
        # The error, bounded as a whole (0 beyond |u| = 4096 or where it is not finite).
        found = argument_error(u)
        assert isinstance(found, bounded_error) and found.args[1] == u
        return found.args[0]

    assert error_of(x - y) == sub_error(x, y)
    # fl(y - x) = -fl(x - y): one error, shared.
    assert error_of(y - x) == -sub_error(x, y)
    assert error_of(x + y) == add_error(x, y)
    # A constant goes second (Grappler's constant folding would fold (c + t) - c to t).
    assert error_of(x - 1) == sub_error(x, 1)
    assert error_of(1 - x) == -sub_error(x, 1)
    assert error_of(x + 1) == add_error(x, 1)
    assert error_of(2 * x - y / 4) == sub_error(2 * x, y / 4)
    assert error_of(-(x**2) / 2) == -square_error(x) / 2
    assert error_of(x * y) == product_error(x, y)
    # A number that rounds, times an input or its square: the product's error and what the
    # dtype's constant lacks, r*x (r by dtype: float32's 1/sqrt(2) lacks 1.2e-8).
    error = error_of(x / sp.sqrt(2))
    assert isinstance(error, product_error) and error.args[:2] == (sp.sqrt(2) / 2, x)
    assert (
        abs(float(error.args[2].args[0]) - 1.2101617e-8) < 1e-14
        and abs(float(error.args[2].args[1])) < 1e-16
    )
    error = error_of(x**2 / 10)
    assert error.has(square_error(x)) and any(
        isinstance(p, product_error) and p.args[1] == x**2
        for p in sp.preorder_traversal(error)
    )
    # Carried through two-operand operations: x/3 - y rounds in the product and the sum.
    error = argument_error(x / 3 - y)
    assert error.has(sub_error(x / 3, y)) and error.has(product_error)
    # Near misses: a function inside, a sum of three terms or a product of three factors
    # (the emitter's CSE may evaluate them in another order), another power, no rounding.
    for u in (
        sp.log(x) - y,
        x + y + 1,
        3 * x * y,
        x * y / 3,
        x**3,
        x,
        -x,
        3 * sp.exp(x),
    ):
        assert argument_error(u) is None, u


def test_compensated_arguments_correct_the_tails() -> None:
    """sigmoid(x - y) at x - y = -78.8 and exp(-x**2/2) at x = 9.09, evaluated in float32
    by the judge's stand-ins: 4-6 bits off as written, within 2 bits compensated."""
    y = sp.Symbol("y", real=True)
    cases = [
        (
            sigmoid(x - y),
            [np.float32(-0.00019506711), np.float32(-6.060606)],
            [np.float32(78.78788), np.float32(54.545456)],
        ),
        (sigmoid_slope(x - y), [np.float32(-0.00019506711)], [np.float32(78.78788)]),
        (softplus(x - y), [np.float32(-0.00019506711)], [np.float32(78.78788)]),
        (
            sp.exp(-(x**2) / 2),
            [np.float32(9.090909), np.float32(-10.606061)],
            [np.float32(0)] * 2,
        ),
    ]
    for form, xs, ys in cases:
        compensated = compensate_arguments(form)
        assert compensated != form
        points = np.array([xs, ys], dtype=np.float64)
        exact = naive(form)
        truth = np.array(
            [
                float(
                    exact.subs(
                        {x: sp.Float(float(a), 60), y: sp.Float(float(b), 60)}
                    ).evalf(60)
                )
                for a, b in zip(xs, ys)
            ]
        )
        before = judge.bits_of_error(
            judge.evaluate(form, (x, y), points, np.float32), truth
        )
        after = judge.bits_of_error(
            judge.evaluate(compensated, (x, y), points, np.float32), truth
        )
        assert before.max() >= 4 and after.max() <= 2, (form, before, after)
    # Not a steep function, or no exact argument: unchanged.
    # exp of a constant is printed as one number: its argument is never rounded.
    for form in (
        sp.tanh(x - y),
        sp.exp(sp.log(x) - y),
        sp.exp(x),
        x * sp.exp(sp.Rational(17, 10)),
    ):
        assert compensate_arguments(form) == form


def test_scale_tails_lowers_products_with_a_larger_factor() -> None:
    """A factor that decays as exp(u) taken at lift(u), the product (or the sum whose
    terms all share that argument) scaled back by lowered(..., u), last."""
    a = -2 * sp.Abs(x)  # sigmoid_slope is even: the key is -|u|
    cases = [
        (x * sigmoid(x), lowered(x * sigmoid(lift(x)), x)),
        (4 * sigmoid_slope(2 * x), lowered(4 * sigmoid_slope(lift(a)), a)),
        # tanh_softplus_slope decays as exp(u) on the left and as exp(-2u) on the right:
        # two steps, the right one's key -2u taken of the u the left one lifted; under
        # multiply_no_nan, lowered_no_nan keeps its guard (0 where the product is not finite).
        (
            mul_no_nan(x + 2, tanh_softplus_slope(x)),
            lowered_no_nan(
                lowered_no_nan(
                    mul_no_nan(x + 2, tanh_softplus_slope(-lift(-2 * lift(x)) / 2)), x
                ),
                -2 * lift(x),
            ),
        ),
        # mish': (x + 1)*exp(x) far out; the second term alone would flush, 1/90 of it.
        # The terms share the left tail's key only.
        (
            x * tanh_softplus_slope(x) + tanh_softplus(x),
            lowered(x * tanh_softplus_slope(lift(x)) + tanh_softplus(lift(x)), x),
        ),
        # Only the product is lowered: beside 2 it changes nothing, and the sum is not
        # lowered as a whole (2 would be scaled down with it).
        (x * sigmoid(x) + 2, lowered(x * sigmoid(lift(x)), x) + 2),
    ]
    for form, expected in cases:
        assert scale_tails(form) == expected, form
    # Two decaying factors of different arguments: both lifted, two lowerings.
    form = x * sigmoid(x) * sigmoid(-x)
    inner = x * sigmoid(lift(x)) * sigmoid(lift(-x))
    assert scale_tails(form) in (
        lowered(lowered(inner, x), -x),
        lowered(lowered(inner, -x), x),
    )


def test_scale_tails_leaves_products_that_cannot_be_normal() -> None:
    """Where the other factors are at most 1 (sigmoid, tanh, numbers of magnitude at
    most 1), the product is no larger than the flushed factor; a constant argument is
    one number, never flushed by the scaling."""
    y = sp.Symbol("y", real=True)
    for form in (
        sigmoid(x) * sigmoid(-x),
        sigmoid(x) * sp.tanh(y),
        sp.Float(0.5) * sigmoid(x),
        sigmoid(x) / 2,
        -sigmoid(x),
        sigmoid(x) * sigmoid_slope(x) * tanh_softplus(x),
        sigmoid(2) * x,
        x * sp.tanh(x),
        sigmoid(x),
    ):
        assert scale_tails(form) == form, form


def test_scaled_tails_are_the_identity_in_math() -> None:
    p = sp.Symbol("p", positive=True)
    for form in (
        x * sigmoid(x),
        4 * sigmoid_slope(2 * x),
        mul_no_nan(x + 2, tanh_softplus_slope(x)),
        x * tanh_softplus_slope(x) + tanh_softplus(x),
        x * sigmoid(x) * sigmoid(-x),
        x * sigmoid(x) + 2,
    ):
        scaled = scale_tails(form)
        assert scaled != form and not naive(scaled).has(lift, lowered)
        difference = naive(scaled) - naive(form)
        # sigmoid_slope(lift(-|2x|)) is sigmoid_slope(2x) on either side of 0.
        assert all(sp.simplify(difference.subs(x, s)) == 0 for s in (p, -p)), form


def test_scaled_tails_correct_the_flushed_products() -> None:
    """x*sigmoid(x) at x = -90 is -7.4e-38, a normal float32, but sigmoid(-90) = 8e-40
    is subnormal and flushed to 0 (by TF on the CPU, and by the judge's stand-ins
    alike): the product was 0, 23-26 bits off. Lifted and lowered, within 3 bits of
    mpmath."""
    band = np.linspace(-91.5, -87.5, 9).astype(np.float32)
    # 4*sigmoid_slope(2*x) is normal up to |x| = 44.36, sigmoid_slope(2*x) to 43.67.
    even = np.array([-44.3, -44.0, -43.8, 43.8, 44.0, 44.3], dtype=np.float32)
    cases = [
        (x * sigmoid(x), band),
        (4 * sigmoid_slope(2 * x), even),
        # tanh_softplus_slope's right tail, 4*exp(-2x): 8.8e-39 at x = 44.5, and
        # normal times 46.5.
        (
            mul_no_nan(x + 2, tanh_softplus_slope(x)),
            np.concatenate([band, np.array([44.5, 45.0, 45.5, 46.0], np.float32)]),
        ),
        (x * tanh_softplus_slope(x) + tanh_softplus(x), band),
        (x * sigmoid(x) * sigmoid(-x), np.concatenate([band, -band])),
    ]
    for form, xs in cases:
        scaled = scale_tails(form)
        points = np.array([xs], dtype=np.float64)
        exact = naive(form)
        truth = np.array(
            [float(exact.subs(x, sp.Float(float(a), 60)).evalf(60)) for a in xs]
        )
        # Normal numbers all: the flushed value is no rounding of the truth.
        assert (np.abs(truth) > np.finfo(np.float32).tiny).all(), (form, truth)
        before = judge.bits_of_error(
            judge.evaluate(form, (x,), points, np.float32), truth
        )
        after = judge.bits_of_error(
            judge.evaluate(scaled, (x,), points, np.float32), truth
        )
        assert before.min() > 20 and after.max() <= 3, (form, before, after)


def test_precise_sigmoids_rewrite_sigmoid_and_its_complement() -> None:
    """--precise-sigmoid: every sigmoid of an input becomes sigmoid_from_exp (the module's
    _sigmoid), and 1 - sigmoid(u), the economy's sigmoid(-u), becomes sigmoid_from_exp(-u);
    a sigmoid of a constant is a number to the printer, and stays."""
    y = sp.Symbol("y", real=True)
    assert precise_sigmoids(x * sigmoid(x)) == x * sigmoid_from_exp(x)
    assert precise_sigmoids((1 - sigmoid(x)) * x + 1) == x * sigmoid_from_exp(-x) + 1
    assert precise_sigmoids(sigmoid(x - y)) == sigmoid_from_exp(x - y)
    assert precise_sigmoids(2 - sigmoid(x)) == 2 - sigmoid_from_exp(x)
    assert precise_sigmoids(x * sigmoid(2)) == x * sigmoid(2)
    for form in (x * sigmoid(x), (1 - sigmoid(x)) * x + 1, 2 - sigmoid(x)):
        assert sp.simplify(naive(precise_sigmoids(form)) - naive(form)) == 0


def test_compensated_arguments_of_a_polynomial_with_irrational_coefficients() -> None:
    """gelu_tanh's argument 2*sqrt(2)*x*(8943*x**2/200000 + 1)/sqrt(pi) is a product of three
    factors, whose rounding _rounding_error cannot follow; as x*(a + b*x**2) (one number per
    coefficient) it is compensated: 4.5 bits off at x = -7.58 as written, 0 compensated, by
    the judge's stand-ins."""
    u = 2 * sp.sqrt(2) * x * (sp.Rational(8943, 200000) * x**2 + 1) / sp.sqrt(sp.pi)
    form = sigmoid(u)
    done = compensate_arguments(form)
    assert done.has(bounded_error)
    points = np.array([[-7.5757575, -9.090909, -5.3]], dtype=np.float32)
    truth = judge.reference(form, (x,), points)
    plain = judge.bits_of_error(judge.evaluate(form, (x,), points, np.float32), truth)
    fixed = judge.bits_of_error(judge.evaluate(done, (x,), points, np.float32), truth)
    assert plain.max() > 4 and fixed.max() <= 1, (plain, fixed)


def test_compensated_arguments_of_expm1() -> None:
    """log(exp(x) - exp(y))'s slope -1/expm1(x - y): x - y rounds (at x = 0.039, y = -65.2,
    to an ulp of 64), 5 bits of the quotient. expm1 takes the error absolutely, expm1(u) +
    e*exp(u) (its relative slope is 0/0 at u = 0), with exp held finite where expm1
    overflows: within 1 bit."""
    y = sp.Symbol("y", real=True)
    form = 1 / expm1(x - y)
    done = compensate_arguments(form)
    assert done.has(bounded_error) and done.has(exp_finite)
    points = np.array([[0.03925879, 0.9999962, 7.575758, 100.0], [-65.15151, -69.69697, -69.69697, 1.0]], dtype=np.float32)
    truth = judge.reference(form, (x, y), points)
    plain = judge.bits_of_error(judge.evaluate(form, (x, y), points, np.float32), truth)
    fixed = judge.bits_of_error(judge.evaluate(done, (x, y), points, np.float32), truth)
    assert plain[:3].min() > 4 and fixed.max() <= 1, (plain, fixed)
    far = judge.evaluate(compensate_arguments(expm1(x - y)), (x, y), np.array([[100.0], [1.0]], dtype=np.float32), np.float32)
    assert np.isinf(far).all()  # overflows as expm1 does, not NaN


def test_compensated_sums_where_rounded_terms_cancel() -> None:
    """--compensated-arguments' sums: a sum of two terms, one rounded on its way, takes its
    rounding error (gaussian_nll's d/ds factor 1 + (x - m)/s); sums of exact terms, sums
    with a function's value, and sums inside a function's argument are left alone. At
    x = 1.1e-13, m = s = 4.545 the factor is 0 as written (x - m rounded x away) and
    2.46e-14 compensated, by the judge's stand-ins as the module computes them."""
    m, s, y = (sp.Symbol(n, real=True) for n in ("m", "s", "y"))
    t = ipow((x - m) / s, 1)
    form = -(1 + t) * ipow((t - 1) / s, 1)
    done = compensate_sums(form)
    assert done.count(compensated_sum) == 2
    assert naive(done) == naive(form)
    for same in (x + y, 1 + sigmoid(x) * x, sp.exp(x / y + 1) * y):
        assert compensate_sums(same) == same, same
    # x*y rounds: x*y - 2 cancels where x*y is near 2, as the factor below does.
    assert isinstance(compensate_sums(x * y - 2), compensated_sum)
    factor = 1 + t
    points = np.array([[1.11687e-13], [4.54545], [4.54545]], dtype=np.float32)
    with mpmath.workdps(50):
        a, b, c = (mpmath.mpf(float(v[0])) for v in points)
        truth = np.array([float(1 + (a - b) / c)])
    symbols = (x, m, s)
    plain = judge.evaluate(factor, symbols, points, np.float32)
    fixed = judge.evaluate(compensate_sums(factor), symbols, points, np.float32)
    assert plain[0] == 0
    assert judge.bits_of_error(fixed, truth)[0] <= 1, (fixed, truth)


def test_compensated_sums_of_a_guarded_branch() -> None:
    """A regime's guard (pick) holds a condition, which SymPy does not call commutative: a
    product holding one was noncommutative, -(a + b) stayed -1*(a + b), and both it and its
    negation could extract a minus sign, so compensate_sums recursed without end
    (log(x)/(x - 1) with --compensated-arguments, whose f'' has a series branch near 1)."""
    guarded = pick(sp.Abs(x - 1) < by_dtype(0.25, 0.125), 1 + by_dtype(0.25, 0.125), x)
    assert guarded.is_commutative
    terms = -log1pmx(guarded - 1) / (guarded - 1) ** 2 - 1 / guarded
    assert isinstance(-terms, sp.Add) and not (-terms).could_extract_minus_sign()
    compensate_sums(-terms)


def test_compensated_powers_split_an_exponent_float32_does_not_hold() -> None:
    """--compensated-arguments' powers: TF's pow(u, 0.9) raises u to float32's 0.899999976,
    and that error times log(u) is 5 bits at u = 1e38 (the judge's stand-in rounds the
    exponent as TF does). u**0.9 as pow(u, hi)*pow(u, lo), hi the float32 exponent toward 0
    and lo the rest, is within 1.5 bits, and 0 and inf where the power is; exponents float32
    holds (3/4, 1/2, integers) and constants are left alone."""
    y = sp.Symbol("y", real=True)
    for p in (
        sp.Rational(9, 10),
        sp.Rational(-11, 10),
        sp.Rational(1, 3),
        sp.Float(0.45),
    ):
        (split,) = compensate_powers(x**p * y).atoms(split_power)
        u, exponent, hi, lo = split.args
        assert (u, exponent) == (x, p)
        assert naive(split) == x**p
        for wide in (
            0,
            1,
        ):  # float32's parts, float64's (0.45 as a Float is a float64: lo 0)
            high, low = float(hi.args[wide]), float(lo.args[wide])
            assert (
                abs(high) <= abs(float(p))
                and low * float(p) >= 0
                and (low != 0 or wide)
            ), (p, high, low)
            assert abs(high + low - float(p)) <= 1e-15 * abs(float(p))
        assert float(np.float32(hi.args[0])) == float(hi.args[0])
    for same in (
        x ** sp.Rational(3, 4),
        sp.sqrt(x),
        1 / sp.sqrt(x),
        x**3 * y,
        sp.Integer(2) ** sp.Rational(1, 3),
    ):
        assert compensate_powers(same) == same, same
    form = x ** sp.Rational(9, 10)
    points = np.array(
        [[6.1558614e37, 3.3e38, 1.5e-37, 2.5, 0.0, np.inf]], dtype=np.float32
    )
    with mpmath.workdps(50):
        truth = np.array(
            [float(mpmath.mpf(float(v)) ** mpmath.mpf(0.9)) for v in points[0]]
        )
    plain = judge.bits_of_error(judge.evaluate(form, (x,), points, np.float32), truth)
    split = judge.bits_of_error(
        judge.evaluate(compensate_powers(form), (x,), points, np.float32), truth
    )
    assert plain[:2].min() >= 4, plain
    assert split.max() <= 1.5, split


def test_a_rewrite_leaves_a_comparison_without_a_where() -> None:
    """log_of_ratio writes log(a/b) as a where; in a max's comparison that would put a where
    into a where's condition, which SymPy rewrites as an if-then-else and solves for its sets
    (max(log2(log10(x)), log1mexp(y)): over 300 s, fuzz seed 2703). The value is rewritten,
    the comparison is not."""
    y = sp.Symbol("y", real=True)
    a = sp.log(sp.log(x) / 3)
    form = sp.Piecewise((a, sp.Ge(a, y)), (y, True))
    rule = next(rule for rule in VARIANTS if rule.name == "log_of_ratio")
    rewritten = rule(form)
    (value, condition), _ = rewritten.args
    assert value.has(sp.Piecewise)
    assert condition == form.args[0].cond



def test_polynomials_in_one_base_found_and_other_sums_refuted_before_any_rebuild() -> None:
    from generator import stabilize

    y = sp.Symbol("y", real=True)
    assert stabilize._as_polynomial((x - y) ** 2 + 1) == (x - y, [1, 0, 1])
    assert stabilize._as_polynomial(1 + ipow(x / y, 2)) == (x / y, [1, 0, 1])
    assert stabilize._as_polynomial(3 * x**2 - 2 * x + 5) == (x, [3, -2, 5])
    # A where, a function of u or a negative power is no polynomial: _polynomial_shape says
    # so by looking, without replacing u through the tree (13 ms a try on the partials of
    # log(erf(y) - erf(x)), half its generation time).
    where = sp.Piecewise((x**2, x > 1), (x, True)) + 1
    for p in (where, sp.exp(x) + x**2, x**-2 + x, x**2 + y):
        assert not stabilize._polynomial_shape(p, x)
        assert stabilize._as_polynomial(p) is None
    assert stabilize._polynomial_shape(2 * ipow(x, 3) - x + sp.sqrt(2), x)


def test_naive_replaces_nested_primitives_and_only_those_present() -> None:
    # naive skips the primitives absent from the tree (each replace walks all of it), and
    # looks again after each replacement, so that a primitive inside another's argument, or
    # one a definition brings in, is still replaced.
    assert naive(softplus(sigmoid(x))) == sp.log(1 + sp.exp(1 / (1 + sp.exp(-x))))
    assert naive(ipow(expm1(x), 3) + 1) == (sp.exp(x) - 1) ** 3 + 1
    assert naive(sp.sin(x) + 2) == sp.sin(x) + 2


def test_a_constant_that_is_zero_in_a_form_sympy_keeps_is_zero() -> None:
    # lgamma(1/2) - log(pi)/2 is 0, which SymPy does not see: plain N gave 5.4e-166, and the
    # Student-t log-density's module printed it into its sum.
    from generator.primitives import numeric

    assert numeric(sp.loggamma(sp.Rational(1, 2)) - sp.log(sp.pi) / 2) == 0
    assert abs(float(numeric(sp.exp(-200))) - math.exp(-200)) < 1e-100
    assert float(numeric(sp.log(3) - 1)) == pytest.approx(0.09861228866810969, rel=1e-15)




def test_variants_are_bounded_in_number() -> None:
    # The stacking variants stack on each other's forms ((x**2 - 2)**1.5'' needs
    # root_of_product on difference_of_squares on another's), which made every subset of
    # them: 716 forms of one slope of hypot(softplus(acos(x)), expm1(x**x)), whose
    # generation took 35 s. At most VARIANTS_MAX, the singles first.
    from generator.stabilize import VARIANTS_MAX, variants

    form = (x**2 - 4) * x**x / (1 + x) ** 3 + sp.sqrt(x * (x + 1)) * (x**2 - 2) + sp.exp(x) * (x - 1) ** 2
    found = variants(form)
    assert len(found) == VARIANTS_MAX
    assert max(len(names) for _, names in found) >= 3
    depths = [len(names) for _, names in found]
    stacked = depths.index(2)
    assert set(depths[:stacked]) == {1} and 1 not in depths[stacked:]


def test_a_where_on_a_condition_already_decided_keeps_the_branch_it_picks() -> None:
    # A rule's where, differentiated, keeps its fallback, to which the rule applies again:
    # where(c, A, where(c, B, C)) never takes B.
    y = sp.Symbol("y", real=True)
    a, b, c, d = sp.exp(x), sp.sin(x), sp.cos(x), sp.log(x)
    gt, lt = x * y > 0, y < 1
    assert prune_branches(sp.Piecewise((a, gt), (sp.Piecewise((b, gt), (c, True)), True))) == sp.Piecewise((a, gt), (c, True))
    assert prune_branches(sp.Piecewise((2 * sp.Piecewise((a, gt), (b, True)), gt), (c, True))) == sp.Piecewise((2 * a, gt), (c, True))
    # Through another where between them, and inside a function of the branch.
    nested = sp.Piecewise((a, gt), (sp.Piecewise((b, lt), (sp.exp(sp.Piecewise((c, gt), (d, True))), True)), True))
    assert prune_branches(nested) == sp.Piecewise((a, gt), (sp.Piecewise((b, lt), (sp.exp(d), True)), True))
    # Other conditions stay.
    other = sp.Piecewise((a, gt), (sp.Piecewise((b, lt), (c, True)), True))
    assert prune_branches(other) == other


def test_first_order_rest_is_taken_apart_only_as_a_rational_function() -> None:
    from generator import stabilize

    # less_argument's rest that cancels c*u to first order only, left = u*q: q must be a
    # rational function (factor_list failed on the power (x**2/(2*y) + 1)**y of
    # (1 + x**2/(2*y))**(-y)'s slope) that is not c times a number (log1p(x) + x: nothing
    # cancelled).
    x, y = sp.symbols("x y", real=True)
    u = x**2 / (2 * y)
    power = (u + 1) ** y
    assert stabilize._first_order_factor(-(x**4) / (2 * x**2 * y * power + 4 * y**2 * power), -1 / power, u) is None
    assert stabilize._first_order_factor(2 * x, sp.Integer(1), x) is None
    q = stabilize._first_order_factor(x**2 * (x**2 - 1) / (2 * y * (x**2 + y)), sp.Rational(1, 2), x**2 / y)
    assert q == sp.factor((x**2 - 1) / (2 * (x**2 + y)))
    # A quotient with a number for its numerator is divided stepwise, not factored.
    assert stabilize._spread_quotient(2 / (x**2 + y), x**2 / y) == 2 / (x**2 + y)


def test_passes_on_the_forms_chosen_name_only_those_that_change_the_form() -> None:
    # One helper for derive (the module's notes) and the judge (NaN counted as the module
    # computes it): a pass is named where it changed the form, not where pruning alone did.
    from generator import stabilize
    from generator.primitives import log1p

    x, y = sp.symbols("x y", real=True)
    form, fired = stabilize.pass_chosen(y * log1p(x / y))
    assert fired == ["tiny_argument"]
    assert form == stabilize.tiny_argument(y * log1p(x / y))
    assert stabilize.pass_chosen(x * log1p(x / y)) == (x * log1p(x / y), [])
    # A where decided by an enclosing one is not pruned unless a pass changed the form.
    nested = sp.Piecewise((sp.Piecewise((x, x > 0), (y, True)), x > 0), (y, True))
    assert stabilize.pass_chosen(nested) == (nested, [])
