"""Generated functions in a SavedModel, reloaded in a fresh process (issue 7).

Saved with `SaveOptions(experimental_custom_gradients=True)` from this process,
loaded by a subprocess that never sees the generated Python code.

What holds (see docs/integration.md):

* values and first derivatives through the loaded call, also with respect to a
  variable of the module;
* f, f', f'' from a signature traced with nested tapes inside the module;
* second order through the loaded call for a module generated with --order 1
  (TF differentiates the saved order-1 formulas).

What does not: second order through the loaded call of a module generated with
--order >= 2. TensorFlow saves the gradient function of each custom-gradient op
that is in the exported graph, but not of the custom-gradient ops that appear
only inside those gradient functions (`_trace_gradient_functions` in
tensorflow/python/saved_model/save.py walks a snapshot of the exported graph's
functions, not the gradient functions it traces). The load warns "Importing a
function (__inference_internal_grad_fn_...) with ops with unsaved custom
gradients" and the second tape raises `LookupError: No gradient defined for
operation 'IdentityN'`. That case is an xfail(strict) here.

`PRIMED_LEVELS` is a hand-written module with the structure we recommend for
the template: every derivative level a module-level, closure-free
`tf.function(tf.custom_gradient(...))` of the inputs, and the forward pass (when
traced) calling every level once so the saver finds them all. Its test shows
order 3 through the loaded call works with that structure.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from generator import Spec, generate  # noqa: E402

SAVE_OPTIONS = dict(experimental_custom_gradients=True)


def import_file(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_generated(directory: Path, expression, name, variables, order=2):
    path = directory / f"{name}_o{order}.py"
    path.write_text(generate(Spec(expression, name=name, variables=variables, order=order)), encoding="utf-8")
    return getattr(import_file(path, f"generated_sm_{name}_o{order}"), name)


# A closure-free alternative structure for logaddexp to order 3 (see the module docstring).
PRIMED_LEVELS = textwrap.dedent("""
    import tensorflow as tf


    @tf.function(autograph=False)
    @tf.custom_gradient
    def _level2(x, y):
        s, t = tf.math.sigmoid(x - y), tf.math.sigmoid(y - x)
        h = s * t

        def third(gxx, gxy, gyy):
            t3 = s * tf.math.square(t) - t * tf.math.square(s)
            return (gxx - gxy + gyy) * t3, (gxy - gxx - gyy) * t3

        return (h, -h, h), third


    @tf.function(autograph=False)
    @tf.custom_gradient
    def _level1(x, y):
        def second(gx, gy):
            hxx, hxy, hyy = _level2(x, y)
            return gx * hxx + gy * hxy, gx * hxy + gy * hyy

        return (tf.math.sigmoid(x - y), tf.math.sigmoid(y - x)), second


    @tf.custom_gradient
    def _level0(x, y):
        if not tf.executing_eagerly():
            # put every level's concrete function (and so its custom-gradient op) in the traced graph
            _level1(x, y)
            _level2(x, y)

        def first(g):
            dx, dy = _level1(x, y)
            return g * dx, g * dy

        return tf.math.maximum(x, y) + tf.math.softplus(-tf.math.abs(x - y)), first


    def logaddexp(x, y):
        return _level0(tf.convert_to_tensor(x), tf.convert_to_tensor(y))
    """)

VEC = tf.TensorSpec([None], tf.float64)
NAMES = [
    "softplus",
    "softplus_signature",
    "softplus_o1",
    "logaddexp",
    "logaddexp_signature",
    "primed",
    "primed_signature",
]


def second_order(fn, *xs):
    """f, first and second partials (w.r.t. every input, second w.r.t. the first input and the rest)."""
    with tf.GradientTape(persistent=True) as outer:
        outer.watch(xs)
        with tf.GradientTape() as inner:
            inner.watch(xs)
            value = fn(*xs)
        firsts = inner.gradient(value, list(xs))
    return {"f": value, "d1": firsts, "d2": outer.gradient(firsts[0], list(xs))}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """Save the modules here; load and evaluate them in one fresh process; return its JSON report."""
    root = tmp_path_factory.mktemp("savedmodel")
    code = root / "code"
    code.mkdir()
    softplus = write_generated(code, "log(1+exp(x))", "softplus", ("x",))
    softplus_o1 = write_generated(code, "log(1+exp(x))", "softplus", ("x",), order=1)
    logaddexp = write_generated(code, "log(exp(x)+exp(y))", "logaddexp", ("x", "y"))
    (code / "primed.py").write_text(PRIMED_LEVELS, encoding="utf-8")
    primed = import_file(code / "primed.py", "primed_levels").logaddexp

    class Softplus(tf.Module):
        """softplus(w * x), with a variable like any model."""

        def __init__(self, fn):
            super().__init__()
            self.fn = fn
            self.w = tf.Variable(tf.constant(1.5, tf.float64))

        def forward(self, x):
            return self.fn(self.w * x)

        @tf.function(input_signature=[VEC])
        def __call__(self, x):
            return self.forward(x)

    class SoftplusWithSignature(Softplus):
        @tf.function(input_signature=[VEC])
        def derivatives(self, x):
            # the tapes and the generated function in one graph: calling the tf.function
            # self.__call__ here instead fails (see test_integration_tf.py, tf.function boundary)
            r = second_order(self.forward, x)
            return {"f": r["f"], "d1": r["d1"][0], "d2": r["d2"][0]}

    class TwoInputs(tf.Module):
        def __init__(self, fn):
            super().__init__()
            self.fn = fn

        @tf.function(input_signature=[VEC, VEC])
        def __call__(self, x, y):
            return self.fn(x, y)

    class TwoInputsWithSignature(TwoInputs):
        @tf.function(input_signature=[VEC, VEC])
        def derivatives(self, x, y):
            r = second_order(self.fn, x, y)
            return {"f": r["f"], "gx": r["d1"][0], "gy": r["d1"][1], "hxx": r["d2"][0], "hxy": r["d2"][1]}

    options = tf.saved_model.SaveOptions(**SAVE_OPTIONS)
    for name, module in (
        ("softplus", Softplus(softplus)),
        ("softplus_signature", SoftplusWithSignature(softplus)),
        ("softplus_o1", SoftplusWithSignature(softplus_o1)),
        ("logaddexp", TwoInputs(logaddexp)),
        ("logaddexp_signature", TwoInputsWithSignature(logaddexp)),
        ("primed", TwoInputs(primed)),
        ("primed_signature", TwoInputsWithSignature(primed)),
    ):
        tf.saved_model.save(module, str(root / name), options=options)

    script = root / "load.py"
    script.write_text(LOADER, encoding="utf-8")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")
    env.pop("PYTHONPATH", None)
    proc = subprocess.run(
        [sys.executable, str(script), str(root), *NAMES],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=root,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


# Runs in a fresh interpreter, without the generated code on its path.
LOADER = textwrap.dedent("""
    import json, logging, sys, traceback
    import tensorflow as tf

    assert "generator" not in sys.modules
    root, NAMES = sys.argv[1], sys.argv[2:]
    X = tf.constant([-30.0, -3.0, 0.0, 0.75, 2.0, 40.0], tf.float64)
    Y = tf.constant([-29.0, 1.0, 0.0, -0.5, 2.0, -40.0], tf.float64)

    warnings = []
    class Collect(logging.Handler):
        def emit(self, record):
            warnings.append(record.getMessage())
    logging.getLogger("absl").addHandler(Collect())

    def attempt(fn):
        try:
            return {"ok": True, "value": fn()}
        except Exception as e:
            return {"ok": False, "error": type(e).__name__ + ": " + str(e).splitlines()[0][:300]}

    def lists(d):
        return {k: (v.numpy().tolist() if hasattr(v, "numpy") else [t.numpy().tolist() for t in v]) for k, v in d.items()}

    def tapes(call, xs, order, *, variables=(), persistent=False):
        # every derivative of call(*xs) w.r.t. the first input up to `order`, eagerly, nested tapes
        ts = [tf.GradientTape(persistent=persistent) for _ in range(order)]
        entered = []
        try:
            for t in ts:
                t.__enter__(); entered.append(t); t.watch(xs)
            out = {"f": call(*xs)}
            current = out["f"]
            for k in range(order):
                t = entered.pop()
                t.__exit__(None, None, None)
                grads = t.gradient(current, list(xs) + list(variables) if k == 0 else list(xs))
                if grads[0] is None:
                    raise LookupError("gradient is None (not connected)")
                for i, g in enumerate(grads):
                    out[f"d{k + 1}_{i}"] = g
                current = grads[0]
            return lists(out)
        finally:
            while entered:  # never leave a tape recording after a failure
                entered.pop().__exit__(None, None, None)

    report = {}
    for name in NAMES:
        warnings.clear()
        m = tf.saved_model.load(f"{root}/{name}")
        xs = (X,) if name.startswith("softplus") else (X, Y)
        variables = (m.w,) if name.startswith("softplus") else ()
        entry = {"load_warnings": list(warnings)}
        # persistent first: once a plain tape has differentiated the call, TF caches its backward
        # function and a later persistent tape reuses it, which would hide the failure
        entry["first_persistent"] = attempt(lambda: tapes(m, xs, 1, variables=variables, persistent=True))
        entry["first"] = attempt(lambda: tapes(m, xs, 1, variables=variables))
        if hasattr(m, "derivatives"):
            entry["signature"] = attempt(lambda: lists(m.derivatives(*xs)))
        entry["second_eager"] = attempt(lambda: tapes(m, xs, 2))
        entry["third_eager"] = attempt(lambda: tapes(m, xs, 3))

        @tf.function
        def second_graph(*a):
            with tf.GradientTape() as outer:
                outer.watch(a[0])
                with tf.GradientTape() as inner:
                    inner.watch(a[0])
                    v = m(*a)
                g = inner.gradient(v, a[0])
            return outer.gradient(g, a[0])

        entry["second_graph"] = attempt(lambda: second_graph(*xs).numpy().tolist())
        report[name] = entry
    print(json.dumps(report))
    """)

# ------------------------------------------------------------------- closed forms

W = 1.5
X = np.array([-30.0, -3.0, 0.0, 0.75, 2.0, 40.0])
Y = np.array([-29.0, 1.0, 0.0, -0.5, 2.0, -40.0])


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def softplus_expected():
    """softplus(w x) and its x-derivatives to third order, and the w-derivative."""
    z = W * X
    s, t = sigmoid(z), sigmoid(-z)
    return {
        "f": np.logaddexp(0.0, z),
        "d1_0": W * s,
        "d1_1": np.sum(X * s),
        "d2_0": W**2 * s * t,
        "d3_0": W**3 * s * t * (t - s),
    }


def logaddexp_expected():
    s, t = sigmoid(X - Y), sigmoid(Y - X)
    return {
        "f": np.logaddexp(X, Y),
        "d1_0": s,
        "d1_1": t,
        "d2_0": s * t,
        "d2_1": -s * t,
        "d3_0": s * t * (t - s),
        "d3_1": -s * t * (t - s),
    }


def check(got: dict, want: dict, rtol=1e-12):
    for key, value in want.items():
        if key in got:
            np.testing.assert_allclose(np.array(got[key]), value, rtol=rtol, atol=1e-300, err_msg=key)


def succeeded(entry, what):
    result = entry[what]
    assert result["ok"], f"{what}: {result.get('error')}"
    return result["value"]


# ------------------------------------------------------------------- what works

GENERATED_ORDER_2 = ["softplus", "logaddexp"]  # call only
WITH_SIGNATURE = ["softplus_signature", "logaddexp_signature", "primed_signature"]


def expected(name):
    return softplus_expected() if name.startswith("softplus") else logaddexp_expected()


@pytest.mark.parametrize("name", NAMES)
def test_values_and_first_derivatives_through_loaded_call(saved, name):
    """One (non-persistent) tape around the loaded call: value, d/dx, and d/dw for the module's variable."""
    got = succeeded(saved[name], "first")
    assert set(got) >= {"f", "d1_0", "d1_1"}
    check(got, {k: v for k, v in expected(name).items() if k in ("f", "d1_0", "d1_1")})


@pytest.mark.parametrize("name", [n for n in NAMES if n not in ("softplus", "softplus_signature")])
def test_first_order_with_persistent_tape_through_loaded_call(saved, name):
    got = succeeded(saved[name], "first_persistent")
    check(got, {k: v for k, v in expected(name).items() if k in ("f", "d1_0", "d1_1")})


@pytest.mark.parametrize("name", WITH_SIGNATURE)
def test_exported_signature_with_nested_tapes_gives_second_order(saved, name):
    """Workaround (a): trace f, f', f'' inside the module and export that function."""
    got = succeeded(saved[name], "signature")
    want = expected(name)
    if name.startswith("softplus"):
        check(got, {"f": want["f"], "d1": want["d1_0"], "d2": want["d2_0"]})
    else:
        check(
            got,
            {
                "f": want["f"],
                "gx": want["d1_0"],
                "gy": want["d1_1"],
                "hxx": want["d2_0"],
                "hxy": want["d2_1"],
            },
        )


def test_order_1_module_differentiates_to_any_order_after_loading(saved):
    """Workaround (b): --order 1 leaves orders >= 2 to TF autodiff of the saved order-1 formulas.

    Autodiff of sigmoid's gradient is s*(1 - s): far in the tail it rounds to 0 where the exact
    f'' is ~2e-26, so compare absolutely there.
    """
    entry = saved["softplus_o1"]
    assert not any("unsaved custom gradients" in w for w in entry["load_warnings"])
    want = softplus_expected()
    for what in ("second_eager", "third_eager"):
        got = succeeded(entry, what)
        for key in ("d2_0", "d3_0"):
            if key in got:
                np.testing.assert_allclose(
                    got[key], want[key], rtol=1e-12, atol=1e-15, err_msg=f"{what} {key}"
                )
    np.testing.assert_allclose(succeeded(entry, "second_graph"), want["d2_0"], rtol=1e-12, atol=1e-15)


def test_primed_closure_free_levels_survive_savedmodel_to_third_order(saved):
    """Evidence for the recommended template structure (PRIMED_LEVELS): every custom level is saved."""
    entry = saved["primed"]
    assert not any("unsaved custom gradients" in w for w in entry["load_warnings"]), entry["load_warnings"]
    want = logaddexp_expected()
    check(succeeded(entry, "second_eager"), want)
    check(succeeded(entry, "third_eager"), want)
    np.testing.assert_allclose(succeeded(entry, "second_graph"), want["d2_0"], rtol=1e-12)


# ------------------------------------------------------------------- the limitations


@pytest.mark.parametrize("name", ["softplus", "logaddexp", "softplus_signature", "logaddexp_signature"])
def test_generated_order_2_warns_of_unsaved_inner_custom_gradient(saved, name):
    """Documents the cause of the xfails below: the level-1 custom gradient is not in the SavedModel.

    Expected to fail once the template adopts the primed closure-free levels (docs/integration.md):
    then delete this test.
    """
    assert any("unsaved custom gradients" in w for w in saved[name]["load_warnings"])


UNSAVED = (
    "TF saves only the custom gradients of ops in the exported graph, not those of the nested "
    "tf.custom_gradient inside a saved gradient function; differentiating the loaded call's gradient "
    "raises LookupError: No gradient defined for operation 'IdentityN'. See docs/integration.md."
)


@pytest.mark.xfail(
    strict=True,
    reason=UNSAVED
    + " When the loaded call captures a variable (softplus(w*x) here), a persistent tape makes TF build"
    " the higher-order backward function, which needs that already at first order.",
)
@pytest.mark.parametrize("name", ["softplus", "softplus_signature"])
def test_first_order_with_persistent_tape_through_loaded_call_with_variable(saved, name):
    got = succeeded(saved[name], "first_persistent")
    check(got, {k: v for k, v in softplus_expected().items() if k in ("f", "d1_0", "d1_1")})


@pytest.mark.xfail(strict=True, reason=UNSAVED)
@pytest.mark.parametrize("name", GENERATED_ORDER_2)
@pytest.mark.parametrize("how", ["second_eager", "third_eager", "second_graph"])
def test_higher_order_through_loaded_call(saved, name, how):
    value = succeeded(saved[name], how)
    want = expected(name)
    if how == "second_graph":
        np.testing.assert_allclose(value, want["d2_0"], rtol=1e-12)
    else:
        check(value, want)


@pytest.mark.xfail(
    strict=True,
    reason=(
        "TF limitation, also with the primed structure: a signature that differentiates through a level "
        "twice makes TF add a rewritten copy of that level's function to the SavedModel; the saver traces "
        "one gradient per custom-gradient op type and binds its captures to one copy, so the loaded call's "
        "second tape raises 'TypeError: <tf.Tensor 'x_0:0'> is out of scope' (generated order-2 modules: "
        "LookupError as above). Export the derivatives signature, or second order through the call, not both."
    ),
)
@pytest.mark.parametrize("name", WITH_SIGNATURE)
def test_second_order_through_loaded_call_next_to_a_derivatives_signature(saved, name):
    check(succeeded(saved[name], "second_eager"), expected(name))
