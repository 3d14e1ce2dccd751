"""tanh_softplus: tanh(softplus(u)), mish's gate, emitted as n/(n + 2) with n = e*(e + 2),
and its slope tanh_softplus_slope, 4e(1 + e)/(n + 2)**2 as two ratios of at most 1.

The economy (stabilize._tanh_of_softplus) must put the gate in place of
tanh(softplus(u)) and nothing else, keep the value, and be cheaper. Both primitives
must differentiate within the vocabulary. The NumPy stand-ins the judge measures and
the printed TF helpers must be within 3 bits of mpmath over the whole float range,
and the helpers' own gradients (what TF uses for the orders beyond the generated
ones) must be right where TF's would be 0: beyond u = 20, where the gate is held at 1.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import sympy as sp
from partials import tf_partials

from generator import judge
from generator.measure import FLOAT32, bits_of_error
from generator.primitives import (
    naive,
    sigmoid,
    softplus,
    tanh_softplus,
    tanh_softplus_slope,
)
from generator.printer import TFPrinter
from generator.stabilize import ECONOMIES, economize

x = sp.Symbol("x", real=True)
TANH_OF_SOFTPLUS = next(e for e in ECONOMIES if e.__name__ == "_tanh_of_softplus")

# The whole float32 range, dense where the value turns over and where exp flushes; each
# point a float32, so that float32 and float64 see the same inputs.
POINTS = (
    np.concatenate(
        [
            -np.logspace(38, -30, 120),
            np.linspace(-110.0, 110.0, 1101),
            np.logspace(-30, 38, 120),
            [0.0],
        ]
    )
    .astype(np.float32)
    .astype(np.float64)
)


def _gate(u):
    return mpmath.tanh(mpmath.log1p(mpmath.exp(u)))


def _slope(u):
    # d/du tanh(softplus(u)) = 4e(1 + e)/(e(e + 2) + 2)**2: no cancellation, so 50 digits do.
    e = mpmath.exp(u)
    return 4 * e * (1 + e) / (e * (e + 2) + 2) ** 2


def _truth(points: np.ndarray, k: int) -> np.ndarray:
    with mpmath.workdps(50):
        values = []
        for p in points:
            u = mpmath.mpf(float(p))
            values.append(
                float((_gate, _slope, lambda v: mpmath.diff(_slope, v))[k](u))
            )
        return np.array(values)


def test_economy_replaces_tanh_of_softplus_only() -> None:
    mish = x * sp.tanh(softplus(x))
    assert TANH_OF_SOFTPLUS(mish) == x * tanh_softplus(x)
    assert TANH_OF_SOFTPLUS(sp.tanh(softplus(2 * x - 1))) == tanh_softplus(2 * x - 1)
    for other in (
        sp.tanh(2 * softplus(x)),
        sp.tanh(x),
        softplus(sp.tanh(x)),
        sigmoid(x),
    ):
        assert TANH_OF_SOFTPLUS(other) is None
    assert judge.cost(x * tanh_softplus(x)) < judge.cost(mish)
    # economize keeps it: the judge measures it as accurate as tanh(softplus(x)).
    assert economize(mish) == x * tanh_softplus(x)


@pytest.mark.parametrize("primitive", [tanh_softplus, tanh_softplus_slope])
def test_definition_and_derivative_agree_with_the_textbook_form(primitive) -> None:
    if primitive is tanh_softplus:
        assert naive(primitive(x)) == sp.tanh(sp.log(1 + sp.exp(x)))
    else:
        textbook = sp.diff(sp.tanh(sp.log(1 + sp.exp(x))), x)
        for point in (-30, -1.5, 0, 0.25, 4, 19):
            assert (
                abs((naive(primitive(x)) - textbook).evalf(40, subs={x: point})) < 1e-35
            )
    derivative = sp.diff(primitive(x), x)
    # Within the vocabulary: no exp, no tanh of softplus.
    assert not derivative.has(sp.exp, sp.tanh, softplus)
    difference = naive(derivative) - sp.diff(naive(primitive(x)), x)
    for point in (-30, -1.5, 0, 0.25, 4, 19):
        assert abs(difference.evalf(40, subs={x: point})) < 1e-35


def test_each_helper_brings_its_partner() -> None:
    # Each helper's custom gradient calls the other.
    for primitive in (tanh_softplus, tanh_softplus_slope):
        printer = TFPrinter(dtype_of="x")
        printer.doprint(primitive(x))
        assert printer.helpers == {"_tanh_softplus", "_tanh_softplus_slope"}


@pytest.mark.parametrize("k", [0, 1])
def test_numpy_stand_ins_are_within_3_bits_everywhere(k: int) -> None:
    primitive = (tanh_softplus, tanh_softplus_slope)[k]
    got = judge.evaluate32(primitive(x), (x,), np.array([POINTS]))
    bits = bits_of_error(got, _truth(POINTS, k), FLOAT32)
    # Below u = -87.3 the value is subnormal: TF flushes exp(u), so both are 0 there;
    # the slope is subnormal beyond u = 43.7 too.
    normal = (POINTS > -87.3) & ((POINTS < 43.7) | (k == 0))
    assert np.isfinite(got).all()
    assert bits[normal].max() <= 3, POINTS[normal][bits[normal] > 3]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_tf_helper_and_its_gradients(tf, load_module, dtype: str) -> None:
    helper = load_module("x*tanh(log(1 + exp(x)))", name="mish")._tanh_softplus
    points = POINTS.astype(dtype)
    got = tf_partials(tf, helper, [tf.constant(points)], 2)
    for k, limit in ((0, 3), (1, 3), (2, 12)):
        value = got[(0,) * k].numpy()
        truth = _truth(points, k)
        assert np.isfinite(value).all(), (k, points[~np.isfinite(value)])
        if dtype == "float32":
            # As in the stand-in test: the gate is subnormal below -87.3, its
            # derivatives beyond 43.7 too.
            normal = (points > -87.3) & ((points < 43.7) | (k == 0))
            bits = bits_of_error(value, truth, FLOAT32)[normal]
            # The second derivative, TF's gradient of the helper's gradient, cancels
            # near its root at u = -0.11 (up to 12 bits within 0.5 of it); elsewhere it
            # is as good as the first.
            away = np.abs(points[normal] + 0.11) > 0.5
            assert bits[away].max() <= (3 if k < 2 else 4), (
                k,
                points[normal][away][bits[away] > 3],
            )
            assert bits.max() <= limit, k
        else:
            scale = np.maximum(np.abs(truth), 1e-300)
            far = (np.abs(points + 0.11) > 0.5) | (k < 2)
            assert (np.abs(value - truth)[far] <= 1e-13 * scale[far]).all(), k
    # Beyond u = 20 the value is 1, but the slope is not 0: 4*exp(-2u) to first order.
    slope = got[(0,)].numpy()[(points > 20) & (points < 40)]
    assert (slope > 0).all()
