"""Generated modules in every TensorFlow execution mode, with every input kind.

Modes: eager nested tapes, inside tf.function, TF1 graph mode
(placeholders + tf.gradients twice + Session) and XLA
(tf.function(jit_compile=True)). Derivatives beyond --order fall back to
TensorFlow's autodiff of the last formulas and must still be right.
Inputs: float16/bfloat16/float32/float64 keep their dtype, Python numbers and
NumPy arrays are accepted, integer/complex/bool inputs raise TypeError, and
two inputs broadcast with gradients reduced back to each input's shape.

References are closed forms evaluated in float64 NumPy (softplus: f' = s,
f'' = s(1-s), f''' = s(1-s)(1-2s) with s = sigmoid(x); logaddexp:
d/dx = sigmoid(x-y), d2/dx2 = -d2/dxdy = s(1-s)).
"""

from __future__ import annotations

import numpy as np
import pytest

SOFTPLUS = "log(1 + exp(x))"
LOGADDEXP = "log(exp(x) + exp(y))"

X_POINTS = np.array([-30.0, -3.5, -0.75, 0.0, 1.0, 2.5, 20.0, 100.0])


def sigmoid(x):
    x = np.asarray(x, dtype=np.float64)
    return np.where(x >= 0, 1 / (1 + np.exp(-np.abs(x))), np.exp(-np.abs(x)) / (1 + np.exp(-np.abs(x))))


def softplus_ref(x):
    x = np.asarray(x, dtype=np.float64)
    s = sigmoid(x)
    return {
        "f": np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x))),
        "d1": s,
        "d2": s * (1 - s),
        "d3": s * (1 - s) * (1 - 2 * s),
    }


def logaddexp_ref(x, y):
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    s = sigmoid(x - y)
    return {
        "f": np.logaddexp(x, y),
        "dx": s,
        "dy": 1 - s,
        "dxx": s * (1 - s),
        "dxy": -s * (1 - s),
        "dyy": s * (1 - s),
    }


def close(got, expected, rtol, atol=None):
    got = np.asarray(got, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol if atol is None else atol)


@pytest.fixture(scope="module")
def softplus(load_module):
    return load_module(SOFTPLUS, name="softplus", order=2).softplus


@pytest.fixture(scope="module")
def logaddexp(load_module):
    return load_module(LOGADDEXP, name="logaddexp", variables=("x", "y"), order=2).logaddexp


def eager_derivatives(tf, fn, x):
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = fn(x)
        d1 = inner.gradient(y, x)
    d2 = outer.gradient(d1, x)
    return y, d1, d2


# --------------------------------------------------------------------------
# modes


def test_eager_nested_tapes(tf, softplus):
    x = tf.constant(X_POINTS, tf.float64)
    y, d1, d2 = eager_derivatives(tf, softplus, x)
    ref = softplus_ref(X_POINTS)
    close(y, ref["f"], 1e-13)
    close(d1, ref["d1"], 1e-13)
    close(d2, ref["d2"], 1e-13)


def test_inside_tf_function(tf, softplus, logaddexp):
    @tf.function
    def derivatives(x):
        return eager_derivatives(tf, softplus, x)

    x = tf.constant(X_POINTS, tf.float64)
    y, d1, d2 = derivatives(x)
    ref = softplus_ref(X_POINTS)
    close(y, ref["f"], 1e-13)
    close(d1, ref["d1"], 1e-13)
    close(d2, ref["d2"], 1e-13)
    # retracing for another dtype works too
    y32, d1_32, d2_32 = derivatives(tf.constant(X_POINTS, tf.float32))
    assert y32.dtype == d1_32.dtype == d2_32.dtype == tf.float32
    close(d2_32, ref["d2"], 1e-6)

    @tf.function
    def hessian(a, b):
        with tf.GradientTape(persistent=True) as outer:
            outer.watch([a, b])
            with tf.GradientTape() as inner:
                inner.watch([a, b])
                z = logaddexp(a, b)
            da, db = inner.gradient(z, [a, b])
        daa, dab = outer.gradient(da, [a, b])
        dba, dbb = outer.gradient(db, [a, b])
        return z, da, db, daa, dab, dba, dbb

    a_np = np.array([-2.0, 0.5, 3.0])
    b_np = np.array([1.0, 0.5, -4.0])
    out = hessian(tf.constant(a_np), tf.constant(b_np))
    ref = logaddexp_ref(a_np, b_np)
    for got, key in zip(out, ["f", "dx", "dy", "dxx", "dxy", "dxy", "dyy"]):
        close(got, ref[key], 1e-13)


def test_tf1_graph_mode(tf, softplus, logaddexp):
    graph = tf.compat.v1.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=[None])
        y = softplus(x)
        (d1,) = tf.gradients(y, [x])
        (d2,) = tf.gradients(d1, [x])
        a = tf.compat.v1.placeholder(tf.float64, shape=[None])
        b = tf.compat.v1.placeholder(tf.float64, shape=[None])
        z = logaddexp(a, b)
        da, db = tf.gradients(z, [a, b])
        daa, dab = tf.gradients(da, [a, b])
        dba, dbb = tf.gradients(db, [a, b])
        with tf.compat.v1.Session(graph=graph) as session:
            values = session.run([y, d1, d2], feed_dict={x: X_POINTS.astype(np.float32)})
            a_np = np.array([-2.0, 0.5, 3.0])
            b_np = np.array([1.0, 0.5, -4.0])
            two = session.run([z, da, db, daa, dab, dba, dbb], feed_dict={a: a_np, b: b_np})
    ref = softplus_ref(X_POINTS)
    for got, key in zip(values, ["f", "d1", "d2"]):
        assert got.dtype == np.float32
        close(got, ref[key], 1e-6)
    ref2 = logaddexp_ref(a_np, b_np)
    for got, key in zip(two, ["f", "dx", "dy", "dxx", "dxy", "dxy", "dyy"]):
        close(got, ref2[key], 1e-13)


def test_xla_jit_compile(tf, softplus):
    @tf.function(jit_compile=True)
    def derivatives(x):
        return eager_derivatives(tf, softplus, x)

    x = tf.constant(X_POINTS, tf.float32)
    y, d1, d2 = derivatives(x)
    ref = softplus_ref(X_POINTS)
    close(y, ref["f"], 1e-6)
    close(d1, ref["d1"], 1e-6)
    close(d2, ref["d2"], 1e-6)
    assert float(y[-1]) == 100.0 and float(d1[-1]) == 1.0
    assert np.all(np.isfinite(d2.numpy()))


# --------------------------------------------------------------------------
# beyond --order


def test_third_derivative_beyond_order_two_falls_back_to_autodiff(tf, softplus):
    x = tf.constant(X_POINTS, tf.float64)
    with tf.GradientTape() as t3:
        t3.watch(x)
        _, _, d2 = eager_derivatives(tf, softplus, x)
    d3 = t3.gradient(d2, x)
    assert d3 is not None
    close(d3, softplus_ref(X_POINTS)["d3"], 1e-12)


def test_third_mixed_partials_beyond_order_two(tf, logaddexp):
    a_np = np.array([-2.0, 0.5, 3.0])
    b_np = np.array([1.0, 0.5, -4.0])
    a = tf.constant(a_np)
    b = tf.constant(b_np)
    with tf.GradientTape(persistent=True) as t3:
        t3.watch([a, b])
        with tf.GradientTape(persistent=True) as t2:
            t2.watch([a, b])
            with tf.GradientTape() as t1:
                t1.watch([a, b])
                z = logaddexp(a, b)
            da, _ = t1.gradient(z, [a, b])
        daa, dab = t2.gradient(da, [a, b])
    daaa, daab = t3.gradient(daa, [a, b])
    daba, dabb = t3.gradient(dab, [a, b])
    s = sigmoid(a_np - b_np)
    third = s * (1 - s) * (1 - 2 * s)  # d3/dx3; each y swaps the sign
    close(daaa, third, 1e-12)
    close(daab, -third, 1e-12)
    close(daba, -third, 1e-12)
    close(dabb, third, 1e-12)


# --------------------------------------------------------------------------
# dtypes and input kinds


@pytest.mark.parametrize(
    "dtype_name, rtol",
    [("float16", 2e-3), ("bfloat16", 1.6e-2), ("float32", 1e-6), ("float64", 1e-13)],
)
def test_dtype_is_kept(tf, softplus, dtype_name, rtol):
    dtype = tf.as_dtype(dtype_name)
    points = np.array([-3.5, -0.75, 0.0, 1.0, 2.5])
    x = tf.constant(points, dtype)
    y, d1, d2 = eager_derivatives(tf, softplus, x)
    assert y.dtype == dtype and d1.dtype == dtype and d2.dtype == dtype
    ref = softplus_ref(tf.cast(x, tf.float64).numpy())
    close(tf.cast(y, tf.float64), ref["f"], rtol, atol=rtol)
    close(tf.cast(d1, tf.float64), ref["d1"], rtol, atol=rtol)
    close(tf.cast(d2, tf.float64), ref["d2"], rtol, atol=rtol)


@pytest.mark.parametrize("dtype_name", ["float16", "bfloat16", "float32", "float64"])
def test_two_input_dtype_is_kept(tf, logaddexp, dtype_name):
    dtype = tf.as_dtype(dtype_name)
    a = tf.constant([0.5, -1.0], dtype)
    b = tf.constant([2.0, -1.5], dtype)
    with tf.GradientTape() as tape:
        tape.watch([a, b])
        z = logaddexp(a, b)
    da, db = tape.gradient(z, [a, b])
    assert z.dtype == da.dtype == db.dtype == dtype


def test_half_precision_is_computed_in_float32_and_rounded_once(tf, softplus):
    # The float16 result is the exact value rounded once to float16, also in
    # the subnormal range (softplus(-10) = 4.54e-5 < 6.1e-5, the smallest normal).
    x = tf.constant([-10.0, 10.0], tf.float16)
    y = softplus(x).numpy()
    ref = softplus_ref([-10.0, 10.0])["f"]
    np.testing.assert_array_equal(y, ref.astype(np.float16))


@pytest.mark.parametrize(
    "make_input",
    [
        lambda tf: tf.constant([1, 2], tf.int32),
        lambda tf: tf.constant([1, 2], tf.int64),
        lambda tf: np.array([1, 2]),
        lambda tf: tf.constant([1 + 2j], tf.complex64),
        lambda tf: np.array([1j]),
        lambda tf: 1 + 2j,
        lambda tf: True,
    ],
    ids=["tf-int32", "tf-int64", "np-int", "tf-complex64", "np-complex", "py-complex", "py-bool"],
)
def test_non_float_inputs_raise_type_error(tf, softplus, make_input):
    with pytest.raises(TypeError):
        softplus(make_input(tf))


def test_mixed_dtypes_raise_type_error(tf, logaddexp):
    with pytest.raises(TypeError):
        logaddexp(tf.constant([1.0], tf.float32), tf.constant([1.0], tf.float64))
    with pytest.raises(TypeError):
        logaddexp(tf.constant([1.0], tf.float32), tf.constant([1], tf.int32))


def test_python_numbers_are_accepted(tf, softplus, logaddexp):
    y = softplus(2.5)
    assert y.dtype == tf.float32 and y.shape == ()
    close(y, softplus_ref(2.5)["f"], 1e-6)
    close(softplus(3), softplus_ref(3.0)["f"], 1e-6)
    # a Python number takes the dtype of the other input
    z = logaddexp(tf.constant(1.0, tf.float64), 2.0)
    assert z.dtype == tf.float64
    close(z, np.logaddexp(1.0, 2.0), 1e-14)


def test_numpy_arrays_are_accepted(tf, softplus):
    points = np.array([-1.5, 0.25, 4.0])
    y64 = softplus(points)
    assert y64.dtype == tf.float64
    close(y64, softplus_ref(points)["f"], 1e-14)
    y32 = softplus(points.astype(np.float32))
    assert y32.dtype == tf.float32
    close(y32, softplus_ref(points)["f"], 1e-6)
    y_scalar = softplus(np.float64(0.5))
    assert y_scalar.dtype == tf.float64


def test_broadcasting_two_inputs(tf, logaddexp):
    x_np = np.array([[-1.5], [0.25], [3.0]])  # (3, 1)
    y_np = np.array([-2.0, 0.0, 1.0, 2.5])  # (4,)
    x = tf.constant(x_np)
    y = tf.constant(y_np)
    with tf.GradientTape(persistent=True) as outer:
        outer.watch([x, y])
        with tf.GradientTape() as inner:
            inner.watch([x, y])
            z = logaddexp(x, y)
        dx, dy = inner.gradient(z, [x, y])
    dxx, dxy = outer.gradient(dx, [x, y])
    assert z.shape == (3, 4)
    assert dx.shape == (3, 1) and dy.shape == (4,)
    assert dxx.shape == (3, 1) and dxy.shape == (4,)
    ref = logaddexp_ref(x_np, y_np)  # numpy broadcasts to (3, 4)
    close(z, ref["f"], 1e-14)
    close(dx, ref["dx"].sum(axis=1, keepdims=True), 1e-14)
    close(dy, ref["dy"].sum(axis=0), 1e-14)
    close(dxx, ref["dxx"].sum(axis=1, keepdims=True), 1e-14)
    close(dxy, ref["dxy"].sum(axis=0), 1e-14)


def test_scalar_with_vector_broadcast(tf, logaddexp):
    y_np = np.array([-2.0, 0.0, 1.0])
    x = tf.constant(0.5, tf.float64)
    y = tf.constant(y_np)
    with tf.GradientTape() as tape:
        tape.watch([x, y])
        z = logaddexp(x, y)
    dx, dy = tape.gradient(z, [x, y])
    assert z.shape == (3,) and dx.shape == () and dy.shape == (3,)
    ref = logaddexp_ref(0.5, y_np)
    close(dx, ref["dx"].sum(), 1e-14)
    close(dy, ref["dy"], 1e-14)


def test_incompatible_shapes_raise(tf, logaddexp):
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
        logaddexp(tf.zeros([3], tf.float64), tf.zeros([4], tf.float64))


def test_unused_variable_gets_zero_gradients(tf, load_module):
    fn = load_module("exp(x)", name="g", variables=("x", "y"), order=2).g
    x = tf.constant([0.5, -1.0], tf.float64)
    y = tf.constant([2.0, 3.0], tf.float64)
    with tf.GradientTape(persistent=True) as outer:
        outer.watch([x, y])
        with tf.GradientTape() as inner:
            inner.watch([x, y])
            z = fn(x, y)
        dx, dy = inner.gradient(z, [x, y])
    dxx, dxy = outer.gradient(dx, [x, y], unconnected_gradients=tf.UnconnectedGradients.ZERO)
    close(z, np.exp([0.5, -1.0]), 1e-14)
    close(dx, np.exp([0.5, -1.0]), 1e-14)
    assert dy is not None, "y is an input: its gradient is zero, not None"
    close(dy, [0.0, 0.0], 0.0, atol=0.0)
    close(dxx, np.exp([0.5, -1.0]), 1e-14)
    close(dxy, [0.0, 0.0], 0.0, atol=0.0)
