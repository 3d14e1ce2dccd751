"""Diagonal regimes (generator.diagonal): divided differences and their slopes where two
inputs meet, checked against mpmath through the generated modules' nested tapes."""

from __future__ import annotations

import itertools

import mpmath
import numpy as np
import pytest
import sympy as sp

from generator import diagonal
from generator.parse import parse
from generator.primitives import naive
from partials import tf_partials

x, y = sp.symbols("x y", real=True)


@pytest.mark.parametrize(
    "text",
    [
        "(exp(x) - exp(y))/(x - y)",
        "(log(x) - log(y))/(x - y)",
        "(x - y)/(log(x) - log(y))",
        "(x*log(x) - y*log(y))/(x - y)",
    ],
)
def test_a_divided_difference_has_a_series_on_the_diagonal(text) -> None:
    expr = parse(text)
    found = diagonal._diagonal_series(expr, tuple(sorted(expr.free_symbols, key=sp.default_sort_key)))
    assert found is not None
    a, b, t, series = found
    # The series is f's: at b = 3, t = 1/8 it is within 1e-15 of the truth.
    exact = sp.lambdify((a, b), naive(expr), modules="mpmath")
    with mpmath.workdps(50):
        true = exact(mpmath.mpf(3) + mpmath.mpf(1) / 8, mpmath.mpf(3))
        got = sp.lambdify((t, b), series, modules="mpmath")(mpmath.mpf(1) / 8, mpmath.mpf(3))
        assert abs(got - true) <= 1e-15 * abs(true)


@pytest.mark.parametrize(
    "expr",
    [
        # No factor of the denominator vanishes where the inputs meet.
        sp.exp(x) / (x + y),
        # A pole on the diagonal, not a removable singularity.
        1 / (x - y),
        (sp.exp(x) - sp.exp(y)) / (x - y) ** 2,
        # Coefficients of no one shape (cos(y), -sin(y)/2, ...): a band would depend on y.
        (sp.sin(x) - sp.sin(y)) / (x - y),
    ],
)
def test_no_diagonal_series(expr) -> None:
    assert diagonal._diagonal_series(expr, (x, y)) is None


def _truth(text: str, index: tuple[int, ...], point: tuple[float, float]) -> float:
    """The partial at the point from mpmath at 400 digits; on the diagonal, beside it (the
    textbook form is 0/0 there; 1e-60 away, its error is far below float64's, and its terms
    of 1/t**4 leave 160 digits)."""
    g = naive(parse(text))
    for i in index:
        g = sp.diff(g, (x, y)[i])
    with mpmath.workdps(400):
        px, py = (mpmath.mpf(float(v)) for v in point)
        if px == py:
            px += mpmath.mpf(10) ** -60
        return float(sp.lambdify((x, y), g, modules="mpmath")(px, py))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "text, at",
    [
        # expm1(t)/t times exp(y): its slopes were 0 or inf near x = y (f' 76% of the
        # benchmark's points within 3 bits, f'' 70%).
        ("(exp(x) - exp(y))/(x - y)", (-3.0, 0.75, 20.0)),
        # The logarithmic mean: its f'' was NaN or 0 near x = y.
        ("(x - y)/(log(x) - log(y))", (0.75, 3.0, 1e6)),
        ("(log(x) - log(y))/(x - y)", (0.75, 3.0, 1e-6)),
    ],
)
def test_divided_differences_where_the_inputs_meet(load_module, text, at, dtype) -> None:
    import tensorflow as tf

    fn = load_module(text, "dd").dd
    # Within 5% of each other: beyond, the form itself serves, as accurate as the rules make it.
    steps = (0.0, 2.0**-22, -(2.0**-12), 1e-3, -0.05)
    pairs = [(b * (1 + d), b) for b, d in itertools.product(at, steps)]
    pairs = [(float(np.array(p, dtype=dtype)), float(np.array(q, dtype=dtype))) for p, q in pairs]
    xs = [tf.constant([p for p, _ in pairs], dtype=dtype), tf.constant([q for _, q in pairs], dtype=dtype)]
    got = tf_partials(tf, fn, xs, 2)
    tol = {"float32": 16 * 2.0**-24, "float64": 64 * 2.0**-53}[dtype]
    for index, values in got.items():
        for pair, value in zip(pairs, values.numpy()):
            true = _truth(text, index, pair)
            assert abs(value - true) <= tol * abs(true), (index, pair, value, true)


def test_the_order_beyond_is_finite_on_the_diagonal(load_module) -> None:
    # TF differentiates the last level's forms itself: the band's held difference and the
    # form's held input keep a NaN out of its slope at x = y.
    import tensorflow as tf

    fn = load_module("(exp(x) - exp(y))/(x - y)", "dd").dd
    points = [tf.constant([0.5, 3.0, -2.0, 40.0]), tf.constant([0.5, 3.0, -2.0, 41.0])]
    got = tf_partials(tf, fn, points, 3)
    for index, values in got.items():
        if len(index) == 3:
            for pair, value in zip(zip(*(p.numpy() for p in points)), values.numpy()):
                true = _truth("(exp(x) - exp(y))/(x - y)", index, pair)
                assert abs(value - true) <= 1e-3 * abs(true), (index, pair, value, true)
