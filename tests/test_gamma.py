"""lgamma and digamma: generated modules against mpmath, in float32 and float64.

TF's own kernels are not good enough for the derivatives (measured, float32): digamma is
1.8% off next to its positive root x0 = 1.4616 and 10 bits off below 0; polygamma(1, x)
returns 0 from x = 1e19 and polygamma(2, x) from 1e13; polygamma(n, x) below x = -5 is
wrong in sign and size. The printed helpers (_digamma, _polygamma, _cot_pi) mend each.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy as sp

from generator import judge, measure
from generator.parse import parse
from generator.primitives import lgamma
from tests.partials import tf_partials

# mpmath's psi cancels near its root at the working precision: 60 digits.
DPS = 60
ROOT = "1.46163214496836234126265954232572132846819620400644635129598840859878644"


def _truth(n: int, x: float) -> float:
    """d**n/dx**n log|gamma(x)| at the float x, from mpmath alone."""
    with mpmath.workdps(DPS):
        u = mpmath.mpf(x)
        value = mpmath.re(mpmath.loggamma(u)) if n == 0 else mpmath.psi(n - 1, u)
        return float(value)


def _bits(got: np.ndarray, truth: np.ndarray, dtype: type) -> np.ndarray:
    return judge.bits_of_error(got.astype(dtype), truth)


def _orders(tf, fn, xs: list[float], dtype) -> list[np.ndarray]:
    got = tf_partials(tf, fn, [tf.constant(xs, dtype=dtype)], 2)
    return [got[index].numpy().astype(np.float64) for index in ((), (0,), (0, 0))]


# Each point is where TF's kernels fail (see the module docstring), or an ordinary one.
POINTS = [
    1.4616321,  # float32's nearest to digamma's root: TF's digamma is 0, the truth -1.2e-8
    1.4615,
    1.3,
    2.2,
    0.7,
    -0.5,  # cot(pi*x) rounds pi*x next to tan's pole
    -3.3,
    -31.78,  # TF's float32 polygamma(1, x) is -0.031; the truth is 23.9
    1e-30,
    7.5,
    9999.0,
    1e5,
    1e20,  # TF's polygamma(1, x) is 0; the truth is 1e-20
    3e37,
]


@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
def test_lgamma_and_its_derivatives_match_mpmath(load_module, tf, dtype_name) -> None:
    dtype, np_dtype = getattr(tf, dtype_name), getattr(np, dtype_name)
    fn = load_module("lgamma(x)", "lgamma_module").lgamma_module
    xs = [float(np_dtype(x)) for x in POINTS]
    for n, got in enumerate(_orders(tf, fn, xs, dtype)):
        truth = np.array([_truth(n, x) for x in xs])
        bits = _bits(got, truth, np_dtype)
        assert (bits <= 3).all(), [
            (x, g, t) for x, g, t, b in zip(xs, got, truth, bits) if b > 3
        ]


def test_digamma_at_its_float64_root(load_module, tf) -> None:
    # The root in three parts: at the float64 nearest to it, t = x - x0 is -9.5e-17 and exact.
    fn = load_module("digamma(x)", "digamma_module").digamma_module
    with mpmath.workdps(DPS):
        x = float(mpmath.mpf(ROOT))
    got = fn(tf.constant([x], tf.float64)).numpy()
    truth = np.array([_truth(1, x)])
    assert truth[0] == pytest.approx(-9.2048764e-17, rel=1e-6)
    assert _bits(got, truth, np.float64)[0] <= 2


def test_digamma_third_order_from_the_helpers(load_module, tf) -> None:
    # digamma's f'' is polygamma(2, x): TF's is -0 from x = 1e13 (the truth is -1e-26).
    fn = load_module("digamma(x)", "digamma_module").digamma_module
    xs = [1e13, 1e15, 2.5, -7.25]
    got = _orders(tf, fn, xs, tf.float32)[2]
    truth = np.array([_truth(3, x) for x in xs])
    assert (_bits(got, truth, np.float32) <= 3).all(), (got, truth)


def test_the_judge_measures_the_cancellation_near_digammas_negative_roots() -> None:
    # Below 0 the helper reflects: digamma(1 - x) - pi*cot(pi*x) cancels next to each root
    # (-0.5040830 in (-1, 0)). The judge's stand-in computes the same and sees it: the
    # docstring does not claim what the module does not compute.
    x = sp.Symbol("x", real=True)
    with mpmath.workdps(DPS):
        root = float(mpmath.findroot(lambda t: mpmath.psi(0, t), -0.504))
    points = np.array([[root, 2.5]])
    stand_in = judge.evaluate32(sp.polygamma(0, x), (x,), points)
    truth = np.array([_truth(1, float(np.float32(p))) for p in points[0]])
    bits = _bits(stand_in, truth, np.float32)
    assert bits[0] > 3 and bits[1] <= 1


def test_parsed_lgamma_is_log_abs_gamma() -> None:
    expr = parse("lgamma(x)")
    assert isinstance(expr, lgamma)
    x = next(iter(expr.free_symbols))
    assert sp.diff(expr, x) == sp.polygamma(0, x)
    # Below 0 too: log|gamma(-2.5)| = log(0.945).
    assert float(expr.subs(x, sp.Rational(-5, 2)).evalf(30)) == pytest.approx(
        math.log(abs(math.gamma(-2.5))), rel=1e-15
    )


def test_interval_reference_agrees_with_mpmath() -> None:
    # measure.Reference (the accuracy benchmark's truth) bounds lgamma and polygamma above 0,
    # and leaves points below 0 unmeasured rather than guess.
    reference = measure.Reference("lgamma(x)", ["x"], measure.FLOAT64)
    for p in [0.25, 1.4616321, 1.5, 3.0, 1e30]:
        values = [reference.value(index, (p,)) for index in reference.indices]
        for n, value in enumerate(values):
            assert measure.round_to_format(value, measure.FLOAT64) == pytest.approx(
                _truth(n, p), rel=2**-52
            ), (n, p)
    assert reference.value((), (-2.5,)) is None


def test_the_judge_takes_no_limit_at_a_pole_of_even_order() -> None:
    # x*polygamma(1, x) + digamma(x) near x = -2 is about -2/t**2 from both sides: the two
    # sides agree, but the mean grows as the step shrinks. No value, where the judge once
    # took -2.5e172 at x = -2.5e38 for the truth; a removable singularity keeps its limit.
    x = sp.Symbol("x", real=True)
    points = np.array([[-2.0, -2.5e38]])
    assert np.isnan(
        judge.reference(x * sp.polygamma(1, x) + sp.polygamma(0, x), (x,), points)
    ).all()
    assert judge.reference(sp.sin(x) / x, (x,), np.array([[0.0]]))[0] == pytest.approx(
        1.0
    )


def test_lgamma_of_one_plus_x_near_zero(load_module, tf) -> None:
    # lgamma(1 + x) rounds 1 + x to 1 for |x| < 6e-8 (float32): 0 where the truth is -0.577x.
    # A series in x near 0 (SymPy's, with zeta values for coefficients) keeps it.
    fn = load_module("lgamma(x + 1)", "lgamma_1p").lgamma_1p
    xs = [1e-10, -3e-8, 0.25, 1e-30]
    got = _orders(tf, fn, xs, tf.float32)[0]
    with mpmath.workdps(DPS):
        truth = np.array([float(mpmath.loggamma(1 + mpmath.mpf(x))) for x in xs])
    assert (_bits(got, truth, np.float32) <= 3).all(), (got, truth)
