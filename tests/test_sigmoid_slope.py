"""sigmoid_slope: sigmoid(u)*sigmoid(-u) emitted as exp(-|u|)/(1 + exp(-|u|))**2.

The lowering (stabilize.lower_sigmoid_pairs) must give exactly the expected
forms, keep the value, and leave the pair alone where both sigmoids are needed
elsewhere. In TensorFlow, the emitted helper must beat TF's own two-sigmoid
product against mpmath, and its gradient (what TF uses for the orders beyond
the generated ones) must stay right: at u = 0 TF's own would take abs' as 0.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import sympy as sp
from partials import assert_close, tf_partials

from generator.measure import FLOAT32, bits_of_error
from generator.primitives import naive, sigmoid, sigmoid_slope
from generator.stabilize import lower_sigmoid_pairs

x, y = sp.symbols("x y", real=True)
s = sigmoid

LOWERED = [
    (s(x) * s(-x), sigmoid_slope(x)),
    (-s(x) * s(-x), -sigmoid_slope(x)),
    (4 * s(2 * x) * s(-2 * x), 4 * sigmoid_slope(2 * x)),
    (-8 * sp.tanh(x) * s(2 * x) * s(-2 * x), -8 * sp.tanh(x) * sigmoid_slope(2 * x)),
    # One sigmoid is still needed; the other is not computed.
    (s(x) ** 2 * s(-x), s(x) * sigmoid_slope(x)),
    (s(x) * s(-x) / (1 + s(x)), sigmoid_slope(x) / (1 + s(x))),
    (s(x - y) * s(y - x), sigmoid_slope(x - y)),
    (sp.Piecewise((x * s(x) * s(-x), x > 0), (x, True)), sp.Piecewise((x * sigmoid_slope(x), x > 0), (x, True))),
]

LEFT_ALONE = [
    s(x) * s(x),
    s(x) / s(-x),
    s(x) * s(-y),
    s(x) + s(-x),
    # swish'': both sigmoids are needed outside the pair, where the slope would add an exp.
    ((1 + x * s(-x)) * s(-x) - x * s(x) * s(-x) + s(-x)) * s(x),
]


@pytest.mark.parametrize(("expr", "expected"), LOWERED, ids=[sp.sstr(e) for e, _ in LOWERED])
def test_pairs_become_the_slope(expr: sp.Expr, expected: sp.Expr) -> None:
    lowered = lower_sigmoid_pairs(expr)
    assert lowered == expected
    difference = naive(lowered) - naive(expr)
    for point in ({x: -3, y: 0.5}, {x: -0.25, y: 2}, {x: 0.75, y: -1}, {x: 4, y: 3}):
        assert abs(difference.evalf(40, subs=point)) < 1e-35


@pytest.mark.parametrize("expr", LEFT_ALONE, ids=[sp.sstr(e) for e in LEFT_ALONE])
def test_other_shapes_are_left_alone(expr: sp.Expr) -> None:
    assert lower_sigmoid_pairs(expr) == expr


def test_slope_is_even_and_differentiates_within_the_vocabulary() -> None:
    assert sigmoid_slope(-x) == sigmoid_slope(x)
    assert sigmoid_slope(0) == sp.Rational(1, 4)
    derivative = sp.diff(sigmoid_slope(x), x)
    assert not derivative.has(sp.exp)
    assert sp.simplify(naive(derivative) - sp.diff(naive(sigmoid_slope(x)), x)) == 0


def _slope(v):
    return mpmath.exp(-v) / (1 + mpmath.exp(-v)) ** 2


def _truth(points: np.ndarray, k: int) -> np.ndarray:
    """d^k/dx^k of sigmoid(x)*sigmoid(-x) by mpmath at 50 digits."""
    with mpmath.workdps(50):
        return np.array(
            [float(mpmath.diff(_slope, mpmath.mpf(float(p)), k)) for p in points]
        )


def test_generated_slope_beats_two_tf_sigmoids(tf, load_module) -> None:
    module = load_module("log(1 + exp(x))", name="softplus")
    points = np.linspace(-30, 30, 1201, dtype=np.float32)
    xs = tf.constant(points)
    second = tf_partials(tf, module.softplus, [xs], 2)[(0, 0)].numpy()
    pair = (tf.math.sigmoid(xs) * tf.math.sigmoid(-xs)).numpy()
    truth = _truth(points, 0)
    ours = bits_of_error(second, truth, FLOAT32)
    tfs = bits_of_error(pair, truth, FLOAT32)
    assert ours.max() <= 3
    assert ours.mean() <= 0.75 * tfs.mean(), (ours.mean(), tfs.mean())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_tf_differentiates_the_emitted_slope(tf, load_module, dtype: str) -> None:
    # At order 2 the module's f'' is the slope; orders 3 and 4 are TF's gradients of it.
    module = load_module("log(1 + exp(x))", name="softplus")
    points = np.array([-1e30, -800.0, -100.0, -40.0, -3.0, -0.5, 0.0, 0.25, 2.0, 15.0, 95.0, 1e30], dtype=dtype)
    got = tf_partials(tf, module.softplus, [tf.constant(points)], 4)
    for k in (2, 3, 4):
        assert_close(got[(0,) * k].numpy(), _truth(points, k - 2), dtype, f"softplus order {k}")
