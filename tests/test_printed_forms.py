"""The module computes what its docstring's accuracy measured.

The derivation scores its forms with NumPy stand-ins for the TF ops (generator.judge); the
module runs the printed code. Where the two part ways, the printer is wrong: a quotient's
numerator once lost its parentheses ((2 - 6/x**2)/x**3/(...) printed as 2 - 6/x**2/x**3/...),
and x/(1 + x**2)'' was 2.0 at x = 1e20, where the stand-in, and the truth, were 2e-60.

For expressions that exercise every kind of form (rules with branches, regimes, helpers,
multiply_no_nan, several inputs), at every point of the judge's grid where a stand-in form
is within GOOD_BITS of the truth, the module's value in float32, through nested tapes, must
not be more than FAR_BITS off. The slack covers TF's kernels, a few bits less accurate than
NumPy's in places (erfc far out), not a wrong formula. Truths below NEGLIGIBLE do not count:
TF flushes subnormal products to 0, which NumPy's operators cannot imitate (x**3/(1 + x**4)'
at x = 8e-20 is 3*x**2/... with x**2 = 6.4e-39).
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from partials import tf_partials

from generator import judge, parse
from generator.derive import derive, resolve_variables
from generator.primitives import ipow

GOOD_BITS = 3
FAR_BITS = 12
NEGLIGIBLE = 2.0**-102  # as generator.regimes: 2**24 times float32's smallest normal

CASES = [
    "x/(1 + x**2)",
    "x**3/(1 + x**4)",
    "log(1 + x**2 + x**4)",
    "tanh(x)**2",
    "sin(x)/(x*(1 + x**2))",
    "log(x)/(x - 1)",
    "x*sigmoid(x)",
    "x*tanh(log(1 + exp(x)))",
    "x*(1 + tanh(sqrt(2/pi)*(x + 0.044715*x**3)))/2",
    "log(1 + exp(x*y))",
    "exp(-(x - y)**2)",
    "sqrt(x**2 + y**2)",
    "log(exp(x) + exp(y))",
    "log(s) + (x - m)**2/(2*s**2)",
    # Its slope divides by ipow(1/(hypot(1, x) - x), 1) for x < 0 (fuzz seed 97).
    "xlog1py(asinh(exp(0.5)), sin(atan(x)))",
]


@pytest.mark.parametrize("text", CASES)
def test_module_agrees_with_the_measured_forms(tf, load_module, text: str) -> None:
    expr = parse.parse(text)
    symbols = resolve_variables(expr, None)
    derivation = derive(expr, symbols, 2)
    module = load_module(text, name="f")
    by_name = {s.name: i for i, s in enumerate(symbols)}
    problems = []
    for index, form in derivation.partials.items():
        truth_expr = expr
        for name in index:
            truth_expr = sp.diff(truth_expr, symbols[by_name[name]])
        points, truth, _ = judge.judged_points(truth_expr, symbols, expr)
        measured = judge.bits_of_error(
            judge.evaluate32(judge.float_constants(form), symbols, points), truth
        )
        columns = [
            tf.constant(points[i], dtype=tf.float32) for i in range(len(symbols))
        ]
        got = tf_partials(tf, module.f, columns, len(index))[
            tuple(by_name[n] for n in index)
        ]
        bits = judge.bits_of_error(got.numpy(), truth)
        counted = ~np.isnan(truth) & (np.abs(truth) >= NEGLIGIBLE)
        wrong = (measured <= GOOD_BITS) & (bits > FAR_BITS) & counted
        for k in np.flatnonzero(wrong)[:3]:
            at = ", ".join(
                f"{s.name}={points[i, k]:.7g}" for i, s in enumerate(symbols)
            )
            problems.append(
                f"d{''.join(index) or ' f'} at {at}: module {got.numpy()[k]:.8g}, "
                f"measured form {measured[k]:.1f} bits off, truth {truth[k]:.8g}"
            )
    assert not problems, "\n".join(problems)


def test_products_are_shared_only_whole() -> None:
    """A product is one temporary only where it recurs whole: SymPy's cse also took a*b out of
    a*b*c and a*b/d, which multiplies the first in another order than the judge measured
    (an inf*0 of the Gaussian density's slope, test_far_out). Sums and whole products are
    still shared."""
    from generator.printer import cse_whole_products

    a, b, c, d = sp.symbols("a b c d", positive=True)
    e = sp.exp(-a)
    symbols = sp.numbered_symbols("t")
    replacements, reduced = cse_whole_products([e * b * c, e * b / d], symbols)
    assert [r for _, r in replacements] == [e]
    assert reduced == [sp.Symbol("t0") * b * c, sp.Symbol("t0") * b / d]
    pair = [sp.sin(a * b) + c, sp.cos(a * b) - (c + d)]
    replacements, _ = cse_whole_products(pair, sp.numbered_symbols("t"))
    assert a * b in [r for _, r in replacements]


def test_a_product_is_multiplied_in_the_judged_order(tf, load_module) -> None:
    """The factors of a product that holds temporaries are multiplied in the order of the
    expression the judge measured, not of the temporaries' names: x**y's d2f/dx dx,
    y*(y - 1)*x**(y - 2), was printed y * y_minus_1 * pow, inf*0 = NaN at x = y = -2.5e38,
    where the judged y*pow*(y - 1) is 0, as the truth is (it flushes)."""
    from generator.printer import TFPrinter

    x, y = sp.symbols("x y", real=True)
    y_minus_1 = sp.Symbol("y_minus_1", real=True)
    product = y * y_minus_1 * x ** (y - 2)
    assert TFPrinter("x").doprint(product) == "y * y_minus_1 * tf.math.pow(x, -2.0 + y)"
    ordered = TFPrinter("x", definitions={y_minus_1: y - 1}).doprint(product)
    assert ordered == "y * tf.math.pow(x, -2.0 + y) * y_minus_1"

    expr = parse.parse("x**y")
    symbols = resolve_variables(expr, None)
    form = derive(expr, symbols, 2).partials[("x", "x")]
    points = np.array([[-2.5e38, -1.8e36], [-2.5e38, -1.8e36]])
    assert (judge.evaluate32(judge.float_constants(form), symbols, points) == 0).all()
    module = load_module("x**y", name="f")
    columns = [tf.constant(points[i], dtype=tf.float32) for i in range(2)]
    assert (tf_partials(tf, module.f, columns, 2)[(0, 0)].numpy() == 0).all()


def test_a_guarded_input_is_ordered_as_the_input_it_guards(tf, load_module) -> None:
    """In the last level a branch reads its inputs through guards, where(taken, x, 1), and
    the judge measured the branch on x itself: the guard compares as x. atan(x*y)'s d2f/dx dx
    far branch, -2*x*y**3/(1 + x**2*y**2)**2, was printed -2 * square(safe_y/t) * t7 by the
    guarded factors' order, whose -2*square overflows at x = -2.7e-23, y = 1.4e19 (truth
    1.5e35); the judged order multiplies by x*y first."""
    from generator.primitives import ipow, pick
    from generator.printer import TFPrinter

    x, y = sp.symbols("x y", real=True)
    safe_y, product, t8 = sp.symbols("safe_y t7 t8", real=True)
    taken = sp.Abs(x * y) > 1
    guarded_x, guarded_y = pick(taken, sp.Float(0.0), x), pick(taken, sp.Float(0.0), y)
    definitions = {safe_y: guarded_y, product: ipow(guarded_x * guarded_y, 1), t8: 1 + ipow(ipow(guarded_x * guarded_y, 1), 2)}
    form = -2 * product * ipow(safe_y / t8, 2)
    printed = TFPrinter("x", definitions=definitions).doprint(form)
    assert printed == "-2.0 * t7 * tf.math.square(safe_y / t8)"

    points = np.array([[-2.7434546e-23], [1.4090819e19]])
    module = load_module("atan(x*y)", name="f")
    columns = [tf.constant(points[i], dtype=tf.float32) for i in range(2)]
    got = tf_partials(tf, module.f, columns, 2)[(0, 0)].numpy()
    truth = float(sp.diff(sp.atan(x * y), x, 2).subs({x: sp.Float(float(np.float32(points[0, 0])), 30), y: sp.Float(float(np.float32(points[1, 0])), 30)}))
    assert np.isfinite(got).all()
    assert abs(got[0] / truth - 1) < 1e-5


def test_a_power_of_a_shared_reciprocal_stays_a_power_of_the_quotient() -> None:
    """log(x)'s f'' chosen as (1/x)**2 (reciprocal_power), with f' = 1/x beside it: cse made
    the square of the temporary for 1/x, which put back was -1/x**2 to SymPy, inf at
    x = 8e-20 where x**2 flushes (truth -1.6e38). What the judge measured is what is printed."""
    from generator.printer import cse_whole_products, divide_in_place, inline_trivial

    x = sp.Symbol("x", positive=True)
    forms = [sp.log(x), 1 / x, -ipow(1 / x, 2)]
    replacements, reduced = divide_in_place(*inline_trivial(*cse_whole_products(forms, sp.numbered_symbols("t"))))
    assert replacements == []
    assert reduced == forms
    # A reciprocal of a power stays a division by the power: 1/h**2 is one rounding of h**2.
    replacements, reduced = divide_in_place(*cse_whole_products([1 / (x + 1) ** 2, sp.sin(1 / (x + 1) ** 2)], sp.numbered_symbols("t")))
    assert reduced[0] == 1 / sp.Symbol("_base0") and replacements == [(sp.Symbol("_base0"), (x + 1) ** 2)]


def test_a_grouped_reciprocal_keeps_its_parentheses() -> None:
    """ipow(1/u, 1) prints as a quotient, 1.0 / (u): as a divisor or a factor it needs its
    own parentheses, which SymPy's precedence (that of a power) did not give it: 3/ipow(1/u, 1)
    printed 3.0 / 1.0 / (u), which is 3/u."""
    from generator.primitives import hypot
    from generator.printer import TFPrinter

    x = sp.Symbol("x", real=True)
    u = hypot(1, x) - x
    printer = TFPrinter("x")
    assert printer.doprint(3 / ipow(1 / u, 1)).startswith("3.0 / (1.0 / (")
    assert printer.doprint(x * ipow(1 / u, 1)).startswith("x * (1.0 / (")
    assert printer.doprint(ipow(1 / u, 1)).startswith("(1.0 / (")


def test_a_function_argument_is_held_over_a_common_factor_above_one_only() -> None:
    """2*x - 2*y inside a function is held as 2*(x - y): x - y is finite where 2*x is not
    (tanh(x - y)'s slope was sigmoid_slope(2*x - 2*y), inf - inf at x = y = 3e38). A common
    factor below 1 only where each term is multiplied by a power of two (exact): x/2 - y/2 as
    (x - y)/2, but x - 7*softplus(x)/10 held as (10*x - 7*softplus(x))/10 was inf - inf at
    x = 2.5e38 in (1 + exp(x))**0.3's slope, where the truth is inf."""
    from generator.derive import _hold_common_factors
    from generator.primitives import sigmoid_slope, softplus

    x, y = sp.symbols("x y", real=True)
    assert _hold_common_factors(sigmoid_slope(2 * x - 2 * y)) == sigmoid_slope(2 * ipow(x - y, 1))
    spread = sp.exp(x - 7 * softplus(x) / 10)
    assert _hold_common_factors(spread) == spread
    assert _hold_common_factors(sp.tanh(x / 2 - y / 2)) == sp.tanh(ipow(x - y, 1) / 2)


def test_terms_that_cancel_where_two_inputs_meet_are_summed_first() -> None:
    """2/D**2 - 2*x*(x/D**2) + 2*y*(y/D**2) (d2f/dx2 of log(1 + x**2 + y**2)): at x = y the
    last two cancel, and 2/D**2, added first, was lost. The pair is held and summed first,
    held terms seen through; terms that do not cancel there, and a sum of two, are left."""
    from generator.derive import _diagonal_pairs_first

    x, y, z = sp.symbols("x y z", real=True)
    d = (1 + x**2 + y**2) ** 2
    form = 2 / d - 2 * x * (x / d) + 2 * y * (y / d)
    assert _diagonal_pairs_first(form, (x, y)) == ipow(-2 * x * (x / d) + 2 * y * (y / d), 1) + 2 / d
    held = ipow(-2 * ipow(x / d, 1) ** 2, 1) + ipow(2 * ipow(y / d, 1) ** 2, 1) + 1 / d
    assert _diagonal_pairs_first(held, (x, y)) == ipow(held - 1 / d, 1) + 1 / d
    # In the inputs that meet: x and z here.
    assert _diagonal_pairs_first(x**3 - z**3 + y, (x, y, z)) == ipow(x**3 - z**3, 1) + y
    for left in (x**2 + y**2 + 1, x - y, 2 / d - x * (x / d) + 2 * y * (y / d)):
        assert _diagonal_pairs_first(left, (x, y)) == left
