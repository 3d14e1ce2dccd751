"""Helpers shared by the numeric test modules: all partials by nested tapes, and a
tolerance check against reference values.

Imported by test modules as `from partials import ...` (pytest puts tests/ on the path).
"""

from __future__ import annotations

import numpy as np

# Relative and absolute tolerances against an mpmath reference, per dtype.
RTOL = {"float16": 2e-3, "float32": 1e-5, "float64": 1e-12}
ATOL = {"float16": 1e-3, "float32": 1e-6, "float64": 1e-13}


def tf_partials(tf, fn, xs, order):
    """{ordered index tuple: tensor} of all partials of fn(*xs) up to `order`, by nested tapes."""
    if order == 0:
        return {(): fn(*xs)}
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(xs)
        lower = tf_partials(tf, fn, xs, order - 1)
    result = dict(lower)
    for index, value in lower.items():
        if len(index) == order - 1:
            grads = tape.gradient(value, xs, unconnected_gradients=tf.UnconnectedGradients.ZERO)
            for j, g in enumerate(grads):
                result[index + (j,)] = g
    return result


def assert_close(got, expected, dtype_name, what):
    """`got` is finite, has `expected`'s shape and is within the dtype's tolerance of it."""
    got = np.asarray(got, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert got.shape == expected.shape, (what, got.shape, expected.shape)
    assert np.all(np.isfinite(got)), (what, got)
    error = np.abs(got - expected)
    bad = error > RTOL[dtype_name] * np.abs(expected) + ATOL[dtype_name]
    assert not bad.any(), f"{what} ({dtype_name}): got {got[bad]}, expected {expected[bad]}, error {error[bad]}"
