"""--float64-inside: float32 inputs computed in float64 and rounded once at the end.

At the trouble points that float32 arithmetic cannot get right (cancellation
near a root, a rounded argument of a steep function, the subnormal band where
a product of an underflowing factor is still normal), the float32 results and
their nested-tape derivatives must be within a bit of mpmath, where the
default module is not. The output dtype stays float32.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from partials import tf_partials

from generator import Spec, generate
from generator.cli import main
from generator.measure import FLOAT32, bits_of_error

SWISH = "x/(1 + exp(-x))"
GELU = "x*(1 + erf(x/sqrt(2)))/2"


def swish_mp(v):
    return v / (1 + mpmath.exp(-v))


def gelu_mp(v):
    return v * (1 + mpmath.erf(v / mpmath.sqrt(2))) / 2


def _truth(fn, points: np.ndarray, k: int) -> np.ndarray:
    with mpmath.workdps(60):
        return np.array(
            [float(mpmath.diff(fn, mpmath.mpf(float(p)), k)) for p in points]
        )


# (expression, its mpmath form, trouble points in float32)
CASES = [
    # swish' has a root at -1.2785; swish at -87.7 is -6.8e-37 while sigmoid(-87.7) is subnormal.
    (SWISH, swish_mp, [-1.2785, -1.25, -2.3994, -87.755104]),
    # erfc(-x/sqrt(2)) amplifies the rounding of x/sqrt(2) by 2z**2.
    (GELU, gelu_mp, [-10.204082, -9.0, -6.5]),
]


@pytest.mark.parametrize(("expr", "mp_fn", "trouble"), CASES, ids=["swish", "gelu"])
def test_float32_results_are_right_where_float32_arithmetic_is_not(
    tf, load_module, expr, mp_fn, trouble
) -> None:
    points = np.array(trouble, dtype=np.float32)
    wide = load_module(expr, name="wide", order=2, float64_inside=True)
    plain = load_module(expr, name="plain", order=2)
    got = tf_partials(tf, wide.wide, [tf.constant(points)], 2)
    base = tf_partials(tf, plain.plain, [tf.constant(points)], 2)
    worst_plain = 0.0
    for k in range(3):
        index = (0,) * k
        assert got[index].dtype == tf.float32
        truth = _truth(mp_fn, points, k)
        bits = bits_of_error(got[index].numpy(), truth, FLOAT32)
        assert bits.max() <= 1, (k, got[index].numpy(), truth)
        worst_plain = max(
            worst_plain, bits_of_error(base[index].numpy(), truth, FLOAT32).max()
        )
    assert worst_plain > 3  # the points are trouble for float32 arithmetic


def test_half_and_float64_inputs_keep_their_dtype(tf, load_module) -> None:
    module = load_module(SWISH, name="wide", order=2, float64_inside=True)
    for dtype in (tf.float16, tf.bfloat16, tf.float64):
        assert module.wide(tf.constant([0.5, -3.0], dtype=dtype)).dtype == dtype


def test_cli_flag_is_in_the_header_and_the_docstring(capsys) -> None:
    assert main([SWISH, "--float64-inside"]) == 0
    out = capsys.readouterr().out
    assert "# Options: --name f --vars x --order 2 --float64-inside -- " in out
    assert "tf.float32: tf.float64" in out
    assert "float32 computed\nin float64" in out
    plain = generate(Spec(SWISH))
    assert "tf.float32: tf.float64" not in plain and "--float64-inside" not in plain


@pytest.mark.parametrize("beta", [1.0, 2.5])
def test_parameters_are_computed_in_float64_too(tf, load_module, beta) -> None:
    # A parameter is cast to the dtype the inputs are computed in: with a float32 tensor
    # or a Python number for beta, swish(beta*x) stays right at its trouble points.
    module = load_module(
        "x/(1 + exp(-beta*x))",
        name="wide",
        order=2,
        params=(("beta", 1.0),),
        float64_inside=True,
    )
    points = np.array(
        [-1.2785 / beta, -87.755104 / beta, -2.3994 / beta], dtype=np.float32
    )

    def scaled(v):
        return v / (1 + mpmath.exp(-mpmath.mpf(beta) * v))

    for given in (tf.constant(beta, tf.float32), beta):
        got = tf_partials(
            tf,
            lambda x, given=given: module.wide(x, beta=given),
            [tf.constant(points)],
            2,
        )
        for k in range(3):
            index = (0,) * k
            assert got[index].dtype == tf.float32
            truth = _truth(scaled, points, k)
            bits = bits_of_error(got[index].numpy(), truth, FLOAT32)
            assert bits.max() <= 1, (k, type(given).__name__, got[index].numpy(), truth)
