"""Generated functions inside Keras 3 models (issue 7).

The generated function as a `Dense` activation and inside a custom layer, a
compiled training step, and a gradient-penalty step (the gradient with respect
to the weights of the norm of the input gradients, which needs the custom
second derivative). Every check is against the same model computed in float64
with the naive (autodiff) activation.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

from generator import Spec, generate  # noqa: E402

pytestmark = pytest.mark.skipif(
    not keras.__version__.startswith("3") or keras.backend.backend() != "tensorflow",
    reason="needs Keras 3 on the TensorFlow backend",
)


def load_generated(directory: Path, expression: str, name: str, variables=None, order: int = 2):
    """Generate a module, write it to `directory` and import it (a real file, so autograph can read it)."""
    source = generate(Spec(expression, name=name, variables=variables, order=order))
    path = directory / f"{name}_o{order}.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"generated_keras_{name}_o{order}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


@pytest.fixture(scope="module")
def gen_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("generated_keras")


# name -> (expression, naive float64 activation for the reference model)
ACTIVATIONS = {
    "softplus": ("log(1 + exp(x))", lambda z: tf.math.log(1.0 + tf.math.exp(z))),
    "swish": ("x/(1 + exp(-x))", lambda z: z / (1.0 + tf.math.exp(-z))),
    "gelu": ("x*(1 + erf(x/sqrt(2)))/2", lambda z: z * (1.0 + tf.math.erf(z / np.sqrt(2.0))) / 2.0),
}


@pytest.fixture(scope="module", params=sorted(ACTIVATIONS))
def activation(request, gen_dir):
    expression, naive = ACTIVATIONS[request.param]
    return load_generated(gen_dir, expression, request.param, ("x",)), naive


def data(seed=0, n=16, d=4):
    rng = np.random.default_rng(seed)
    x = (rng.normal(size=(n, d)) * 2).astype(np.float32)
    y = rng.normal(size=(n, 1)).astype(np.float32)
    return x, y


def mlp(act, d=4, hidden=8, seed=0):
    """Input(d) -> Dense(hidden, activation=act) -> Dense(1), fixed weights."""
    model = keras.Sequential(
        [keras.Input((d,)), keras.layers.Dense(hidden, activation=act), keras.layers.Dense(1)]
    )
    rng = np.random.default_rng(seed + 100)
    model.set_weights([(rng.normal(size=w.shape) * 0.7).astype(np.float32) for w in model.get_weights()])
    return model


def reference_forward(weights, x, naive):
    """The MLP in float64 with the naive activation."""
    w1, b1, w2, b2 = weights
    return naive(x @ w1 + b1) @ w2 + b2


def as64(arrays):
    return [tf.Variable(np.asarray(a, np.float64)) for a in arrays]


def assert_close(got, want, rtol=2e-5):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    scale = np.max(np.abs(want)) + 1e-30
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale)


# --------------------------------------------------------------------------- Dense(activation=fn)


def test_dense_activation_forward_and_weight_gradients(activation):
    fn, naive = activation
    x, y = data()
    model = mlp(fn)
    weights64 = as64(model.get_weights())

    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)

    with tf.GradientTape() as tape:
        loss64 = tf.reduce_mean(tf.square(reference_forward(weights64, x.astype(np.float64), naive) - y))
    grads64 = tape.gradient(loss64, weights64)

    assert model(x).dtype == tf.float32
    assert_close(loss, loss64)
    for g, g64 in zip(grads, grads64):
        assert_close(g, g64)


def test_compiled_training_step_matches_float64(activation):
    """`train_on_batch` (Keras' compiled train function) takes the same SGD step as the float64 model."""
    fn, naive = activation
    x, y = data(seed=1)
    model = mlp(fn, seed=1)
    lr = 0.05
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=lr), loss="mse")
    weights64 = as64(model.get_weights())

    with tf.GradientTape() as tape:
        loss64 = tf.reduce_mean(tf.square(reference_forward(weights64, x.astype(np.float64), naive) - y))
    grads64 = tape.gradient(loss64, weights64)

    loss = model.train_on_batch(x, y)
    assert_close(loss, loss64)
    for w, w64, g64 in zip(model.get_weights(), weights64, grads64):
        assert_close(w, w64 - lr * g64)
    # and a few epochs of fit() run and reduce the loss
    history = model.fit(x, y, epochs=5, batch_size=8, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))
    assert history.history["loss"][-1] < float(loss)


# --------------------------------------------------------------------------- custom layer


class StableLayer(keras.layers.Layer):
    """out = fn(x W + b) + logaddexp(x U, 0): a one- and a two-input generated function in one layer."""

    def __init__(self, units, fn, lae, **kwargs):
        super().__init__(**kwargs)
        self.units, self.fn, self.lae = units, fn, lae

    def build(self, input_shape):
        d = input_shape[-1]
        self.w = self.add_weight(shape=(d, self.units), initializer=keras.initializers.RandomNormal(seed=3))
        self.u = self.add_weight(shape=(d, self.units), initializer=keras.initializers.RandomNormal(seed=4))
        self.b = self.add_weight(shape=(self.units,), initializer="zeros")

    def call(self, x):
        z = tf.matmul(x, self.w) + self.b
        return self.fn(z) + self.lae(tf.matmul(x, self.u), tf.zeros_like(z))


def test_custom_layer_gradients_and_second_order(gen_dir):
    fn = load_generated(gen_dir, "x/(1 + exp(-x))", "swish", ("x",))
    lae = load_generated(gen_dir, "log(exp(x) + exp(y))", "logaddexp", ("x", "y"))
    x, _ = data(seed=2, n=6)
    inputs = keras.Input((4,))
    model = keras.Model(inputs, keras.layers.Dense(1)(StableLayer(5, fn, lae)(inputs)))
    model.set_weights([w + 0.1 for w in model.get_weights()])

    def reference(weights, x):
        w, u, b, w2, b2 = weights
        z = x @ w + b
        xu = x @ u
        return (z / (1.0 + tf.exp(-z)) + tf.math.log(tf.exp(xu) + 1.0)) @ w2 + b2

    weights64 = as64(model.get_weights())
    x32 = tf.constant(x)
    x64 = tf.constant(x.astype(np.float64))

    def penalty_and_grads(forward, xs, variables):
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                inner.watch(xs)
                out = forward(xs)
            gx = inner.gradient(out, xs)
            penalty = tf.reduce_sum(tf.square(gx))
        return out, gx, outer.gradient(penalty, variables)

    out, gx, g = penalty_and_grads(model, x32, model.trainable_variables)
    out64, gx64, g64 = penalty_and_grads(lambda t: reference(weights64, t), x64, weights64)
    assert_close(out, out64)
    assert_close(gx, gx64)
    for a, b in zip(g, g64):
        assert_close(a, b)


# --------------------------------------------------------------------------- gradient penalty


class GradientPenaltyModel(keras.Model):
    """A model whose train_step adds a WGAN-GP style penalty: mean((|d out / d x| - 1)^2)."""

    def __init__(self, inner, weight=1.0, **kwargs):
        super().__init__(**kwargs)
        self.inner, self.weight = inner, weight

    def call(self, x):
        return self.inner(x)

    def train_step(self, batch):
        x, y = batch
        with tf.GradientTape() as tape:
            loss = gradient_penalty_loss(self.inner, x, y, self.weight)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}


def gradient_penalty_loss(forward, x, y, weight):
    with tf.GradientTape() as inner:
        inner.watch(x)
        out = forward(x)
    gx = inner.gradient(out, x)
    norm = tf.sqrt(tf.reduce_sum(tf.square(gx), axis=1) + 1e-12)
    return tf.reduce_mean(tf.square(out - y)) + weight * tf.reduce_mean(tf.square(norm - 1.0))


def test_gradient_penalty_step_matches_float64(activation):
    fn, naive = activation
    x, y = data(seed=3)
    inner = mlp(fn, seed=3)
    weights64 = as64(inner.get_weights())

    # float64 reference: loss, its weight gradients (second order in the activation), one SGD step
    with tf.GradientTape() as tape:
        loss64 = gradient_penalty_loss(
            lambda t: reference_forward(weights64, t, naive), tf.constant(x.astype(np.float64)), y, 2.0
        )
    grads64 = tape.gradient(loss64, weights64)

    # the same in a tf.function (graph mode, as Keras runs it)
    @tf.function
    def graph_grads(x, y):
        with tf.GradientTape() as tape:
            loss = gradient_penalty_loss(inner, x, y, 2.0)
        return loss, tape.gradient(loss, inner.trainable_variables)

    loss, grads = graph_grads(tf.constant(x), tf.constant(y))
    assert_close(loss, loss64)
    for g, g64 in zip(grads, grads64):
        assert np.all(np.isfinite(g.numpy()))
        assert_close(g, g64, rtol=1e-4)

    # and through Keras' own training loop with an overridden train_step
    lr = 0.01
    model = GradientPenaltyModel(inner, weight=2.0)
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=lr))
    model.fit(x, y, batch_size=len(x), epochs=1, verbose=0, shuffle=False)
    for w, w64, g64 in zip(inner.get_weights(), weights64, grads64):
        assert_close(w, w64 - lr * g64, rtol=1e-4)


def test_second_order_is_the_custom_one_where_naive_fails(gen_dir):
    """At large pre-activations the naive float32 penalty gradient is NaN; the generated one stays finite."""
    fn = load_generated(gen_dir, "log(1 + exp(x))", "softplus", ("x",))
    x = np.array([[60.0, -60.0], [100.0, 3.0]], np.float32)
    y = np.zeros((2, 1), np.float32)
    for act, finite in ((fn, True), (lambda z: tf.math.log(1.0 + tf.math.exp(z)), False)):
        model = mlp(act, d=2, hidden=3, seed=4)
        model.set_weights([np.ones_like(w) for w in model.get_weights()])
        with tf.GradientTape() as tape:
            loss = gradient_penalty_loss(model, tf.constant(x), y, 1.0)
        grads = tape.gradient(loss, model.trainable_variables)
        assert all(np.all(np.isfinite(g.numpy())) for g in grads) == finite


# --------------------------------------------------------------------------- mixed precision policy


@pytest.mark.parametrize("policy", ["mixed_bfloat16", "mixed_float16"])
def test_dense_under_mixed_precision_policy(gen_dir, policy):
    fn = load_generated(gen_dir, "log(1 + exp(x))", "softplus", ("x",))
    x, _ = data(seed=5)
    layer = keras.layers.Dense(8, activation=fn, dtype=policy)
    out = layer(x)
    compute = tf.as_dtype(layer.compute_dtype)
    assert out.dtype == compute
    # the same pre-activations in float32, activation computed in float32 and rounded once
    z = tf.cast(
        tf.matmul(tf.cast(x, compute), tf.cast(layer.kernel, compute)) + tf.cast(layer.bias, compute),
        tf.float32,
    )
    np.testing.assert_array_equal(out.numpy(), tf.cast(fn(z), compute).numpy())
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.cast(layer(x), tf.float32))
    grads = tape.gradient(loss, layer.trainable_variables)
    assert all(np.all(np.isfinite(g.numpy())) for g in grads)
