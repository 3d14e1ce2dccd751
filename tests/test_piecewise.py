"""Piecewise functions: where(cond, a, b), max, min and abs, as a user writes them.

The convention under test: where(cond, a, b) is a where cond holds, else b,
and its derivatives of every order (up to the generated order) are those of
the branch that the condition selects at that point. max(a, b) is
where(a >= b, a, b) and min(a, b) is where(a <= b, a, b), so at a tie the
gradient goes to the first argument (as with tf.maximum and tf.minimum);
abs'(0) = sign(0) = 0, as with tf.abs.

References never look at the generated code: every case lists its branches
as textbook SymPy expressions written here, with a Python predicate that
says which branch a point takes; the selected branch is differentiated by
SymPy and evaluated by mpmath with 50 digits. The numeric points are exact in
float32 and lie away from the kinks; the kinks themselves are checked
against hand-written values of the convention. Values from the branch that
is not taken (sqrt(-1), log(0), exp(1e30)) must not leak into the results.
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import mpmath
import numpy as np
import pytest
import sympy as sp

from generator.cli import main
from partials import ATOL, RTOL, assert_close, tf_partials

REPO_ROOT = Path(__file__).resolve().parent.parent

DTYPES = ["float32", "float64"]
HUGE = 2.0**100  # ~1.27e30, exact in float32

# --------------------------------------------------------------------------
# cases: the expression, and its branches as the reference sees them

Predicate = Callable[..., bool]


@dataclass(frozen=True)
class Case:
    expr: str
    variables: tuple[str, ...]
    # (predicate on the point's coordinates, SymPy text of the branch): the first that holds is taken.
    branches: tuple[tuple[Predicate, str], ...]
    points: dict[str, list[float]]
    order: int = 2  # the generated order; the tapes go as far unless a test asks for more


def otherwise(*_: float) -> bool:
    return True


CASES: dict[str, Case] = {
    "elu": Case(
        "where(x > 0, x, exp(x) - 1)",
        ("x",),
        ((lambda x: x > 0, "x"), (otherwise, "exp(x) - 1")),
        {"x": [-4.5, -0.75, -0.0625, 0.125, 1.25, 5.0]},
    ),
    "huber": Case(
        "where(abs(x) <= 1, x**2/2, abs(x) - 1/2)",
        ("x",),
        ((lambda x: abs(x) <= 1, "x**2/2"), (otherwise, "abs(x) - 1/2")),
        {"x": [-3.5, -1.25, -0.75, 0.375, 0.875, 2.5]},
    ),
    "huber_delta": Case(
        "where(abs(x) <= 1.5, x**2/2, 1.5*(abs(x) - 1.5/2))",
        ("x",),
        ((lambda x: abs(x) <= 1.5, "x**2/2"), (otherwise, "3*abs(x)/2 - 9/8")),
        {"x": [-3.5, -1.75, -1.25, 0.375, 1.25, 2.5]},
    ),
    # MobileNetV3's hard swish: a where inside a comparison (ITE) shared by f's partials.
    "hard_swish": Case(
        "x*min(max(x + 3, 0), 6)/6",
        ("x",),
        ((lambda x: x <= -3, "0"), (lambda x: x >= 3, "x"), (otherwise, "x*(x + 3)/6")),
        {"x": [-4.5, -2.5, -0.75, 0.375, 2.5, 5.0]},
    ),
    # SELU and CELU: SymPy distributes the constants over exp(x) - 1, and writes CELU's min
    # with the condition exp(2*x) >= 1, which took the branch 0 at x = -2**-30 (f' 0, not 1).
    # SELU's value there (test_rules' expm1 "coefficient" case) is within this file's ATOL.
    "selu": Case(
        "1.0507*where(x > 0, x, 1.67326*(exp(x) - 1))",
        ("x",),
        ((lambda x: x > 0, "1.0507*x"), (otherwise, "1.0507*1.67326*(exp(x) - 1)")),
        {"x": [-4.5, -0.75, -(2.0**-30), 0.375, 2.5]},
    ),
    "celu": Case(
        "max(0, x) + min(0, 0.5*(exp(x/0.5) - 1))",
        ("x",),
        ((lambda x: x > 0, "x"), (otherwise, "(exp(2*x) - 1)/2")),
        {"x": [-4.5, -0.75, -(2.0**-30), 0.375, 2.5]},
    ),
    # A where inside a function (the fuzzer, seed 9999): unfolded, the chain rule put
    # 1/sqrt(1 - 1) = zoo into the branch not taken, which the printer refused.
    "acosh_clamped": Case(
        "acosh(max(x, 1))",
        ("x",),
        ((lambda x: x >= 1, "acosh(x)"), (otherwise, "0")),
        {"x": [-2.5, 0.5, 1.25, 3.0]},
    ),
    "relu": Case(
        "where(x > 0, x, 0)",
        ("x",),
        ((lambda x: x > 0, "x"), (otherwise, "0")),
        {"x": [-2.5, -0.125, 0.25, 3.0]},
    ),
    "max_zero": Case(
        "max(x, 0)",
        ("x",),
        ((lambda x: x >= 0, "x"), (otherwise, "0")),
        {"x": [-2.5, -0.125, 0.25, 3.0]},
    ),
    "abs": Case(
        "abs(x)",
        ("x",),
        ((lambda x: x >= 0, "x"), (otherwise, "-x")),
        {"x": [-2.5, -0.125, 0.25, 3.0]},
    ),
    "leaky_relu": Case(
        "max(x, 0.01*x)",
        ("x",),
        ((lambda x: x >= 0, "x"), (otherwise, "x/100")),
        {"x": [-4.5, -0.75, 0.375, 5.0]},
    ),
    "clamp_where": Case(
        "where(x > 1, 1, where(x < -1, -1, x))",
        ("x",),
        ((lambda x: x > 1, "1"), (lambda x: x < -1, "-1"), (otherwise, "x")),
        {"x": [-3.5, -0.75, 0.375, 0.875, 2.5]},
    ),
    "chained": Case(
        "where(0 < x < 1, x**2, 0)",
        ("x",),
        ((lambda x: 0 < x < 1, "x**2"), (otherwise, "0")),
        {"x": [-0.5, 0.25, 0.75, 1.5]},
    ),
    "either": Case(
        "where(x > 1 or x < -1, x**3, x)",
        ("x",),
        ((lambda x: x > 1 or x < -1, "x**3"), (otherwise, "x")),
        {"x": [-2.5, -0.75, 0.375, 1.5]},
    ),
    "negated": Case(
        "where(not x > 0, x**2, sin(x))",
        ("x",),
        ((lambda x: not x > 0, "x**2"), (otherwise, "sin(x)")),
        {"x": [-2.5, -0.375, 0.75, 2.0]},
    ),
    "sinc_equal": Case(
        "where(x == 0, 1, sin(x)/x)",
        ("x",),
        ((lambda x: x == 0, "1"), (otherwise, "sin(x)/x")),
        {"x": [-3.5, -0.25, 0.125, 0.75, 2.5]},
    ),
    "not_equal": Case(
        "where(x != 0, x**2*log(x**2), 0)",
        ("x",),
        ((lambda x: x != 0, "x**2*log(x**2)"), (otherwise, "0")),
        {"x": [-3.5, -0.25, 0.125, 0.75, 2.5]},
    ),
    "min_xy": Case(
        "min(x, y)",
        ("x", "y"),
        ((lambda x, y: x <= y, "x"), (otherwise, "y")),
        {"x": [-1.5, 2.0, 0.25, 3.0], "y": [0.5, -1.0, 0.75, 2.5]},
    ),
    "two_var": Case(
        "where(x > y, x*y, x + y)",
        ("x", "y"),
        ((lambda x, y: x > y, "x*y"), (otherwise, "x + y")),
        {"x": [1.5, -2.0, 0.25, 3.0], "y": [0.5, -1.0, 0.75, 4.5]},
    ),
}

# Untaken branches that would be NaN or inf, at points on both sides and far out.
SAFETY: dict[str, Case] = {
    "sqrt": Case(
        "where(x > 0, sqrt(x), 0)",
        ("x",),
        ((lambda x: x > 0, "sqrt(x)"), (otherwise, "0")),
        {"x": [-HUGE, -1.0, 0.0, 0.25, 4.0, HUGE]},
    ),
    "log": Case(
        "where(x > 0, log(x), x)",
        ("x",),
        ((lambda x: x > 0, "log(x)"), (otherwise, "x")),
        {"x": [-HUGE, -1.0, 0.0, 0.5, 100.0, HUGE]},
    ),
    "exp": Case(
        "where(x < 50, exp(x), 0)",
        ("x",),
        ((lambda x: x < 50, "exp(x)"), (otherwise, "0")),
        {"x": [-HUGE, -1.0, 0.0, 49.5, 50.0, 100.0, HUGE]},
    ),
    "sqrt_order3": Case(
        "where(x > 0, sqrt(x), 0)",
        ("x",),
        ((lambda x: x > 0, "sqrt(x)"), (otherwise, "0")),
        {"x": [-HUGE, -1.0, 0.0, 0.25, 4.0, HUGE]},
        order=3,
    ),
}


def test_case_points_are_exact_in_float32():
    for case in [*CASES.values(), *SAFETY.values()]:
        assert list(case.points) == list(case.variables), case.expr
        assert len({len(v) for v in case.points.values()}) == 1, case.expr
        for values in case.points.values():
            assert all(float(np.float32(v)) == v for v in values), case.expr


# --------------------------------------------------------------------------
# references and TF partials


def reference_partials(case: Case, order: int | None = None) -> dict[tuple[int, ...], np.ndarray]:
    """{sorted index tuple: float64 array} of all partials up to `order` (case.order), branch by branch."""
    order = case.order if order is None else order
    symbols = [sp.Symbol(v, real=True) for v in case.variables]
    local = dict(zip(case.variables, symbols))
    indices = [
        index for k in range(order + 1) for index in itertools.combinations_with_replacement(range(len(symbols)), k)
    ]
    functions = []
    for _, text in case.branches:
        branch = sp.sympify(text, locals=local)
        derivs = {(): branch}
        for index in indices[1:]:
            derivs[index] = sp.diff(derivs[index[:-1]], symbols[index[-1]])
            # abs(x)'' is 2*DiracDelta(x): 0 at every point off the kink, which is all the points here.
            derivs[index] = derivs[index].replace(sp.DiracDelta, lambda *args: sp.S.Zero)
        functions.append({index: sp.lambdify(symbols, d, "mpmath") for index, d in derivs.items()})
    n = len(case.points[case.variables[0]])
    out = {index: np.empty(n) for index in indices}
    with mpmath.workdps(50):
        for i in range(n):
            coords = [case.points[v][i] for v in case.variables]
            taken = next(j for j, (predicate, _) in enumerate(case.branches) if predicate(*coords))
            args = [mpmath.mpf(c) for c in coords]
            for index in indices:
                out[index][i] = float(functions[taken][index](*args))
    return out


def check_case(tf, load_module, case: Case, dtype_name: str, tape_order: int | None = None):
    """Every partial up to `tape_order` (default: the generated order) against the references."""
    tape_order = case.order if tape_order is None else tape_order
    fn = load_module(case.expr, variables=case.variables, order=case.order).f
    dtype = tf.as_dtype(dtype_name)
    xs = [tf.constant(case.points[v], dtype=dtype) for v in case.variables]
    got = tf_partials(tf, fn, xs, tape_order)
    refs = reference_partials(case, tape_order)
    assert len(got) == sum(len(xs) ** k for k in range(tape_order + 1))
    for index, value in got.items():
        assert value.dtype == dtype, index
        label = "f" if not index else "d" + "".join(case.variables[i] for i in index)
        assert_close(value.numpy(), refs[tuple(sorted(index))], dtype_name, f"{case.expr}: {label}")


def case_params(cases: dict[str, Case]):
    return [pytest.param(name, dtype_name, id=f"{name}-{dtype_name}") for name in cases for dtype_name in DTYPES]


# --------------------------------------------------------------------------
# away from the kinks: f, every partial to order 2, against the selected branch


@pytest.mark.parametrize("name, dtype_name", case_params(CASES))
def test_value_and_partials_match_the_selected_branch(tf, load_module, name, dtype_name):
    check_case(tf, load_module, CASES[name], dtype_name)


@pytest.mark.parametrize("dtype_name", DTYPES)
def test_third_order(tf, load_module, dtype_name):
    elu = CASES["elu"]
    case = Case(elu.expr, elu.variables, elu.branches, elu.points, order=3)
    assert "to order 3" in load_module(case.expr, variables=case.variables, order=3).__doc__
    check_case(tf, load_module, case, dtype_name)


@pytest.mark.parametrize("dtype_name", DTYPES)
def test_nested_max_min(tf, load_module, dtype_name):
    """A where inside a comparison (SymPy folds it into ITE) prints as tf.where."""
    clamp = ((lambda x: x > 1, "1"), (lambda x: x < -1, "-1"), (otherwise, "x"))
    points = {"x": [-3.5, -0.75, 0.375, 0.875, 2.5]}
    for expr, branches in [
        ("max(min(x, 1), -1)", clamp),
        ("min(max(x, -1), 1)", clamp),
        ("max(max(x, 0), 0.5*x)", ((lambda x: x >= 0, "x"), (otherwise, "0"))),
    ]:
        check_case(tf, load_module, Case(expr, ("x",), branches, points), dtype_name)


# --------------------------------------------------------------------------
# no NaN or inf from the branch that is not taken


@pytest.mark.parametrize("name, dtype_name", case_params(SAFETY))
def test_untaken_branch_does_not_leak(tf, load_module, name, dtype_name):
    """Finite values and derivatives equal to the selected branch's, up to the generated order."""
    check_case(tf, load_module, SAFETY[name], dtype_name)


@pytest.mark.parametrize("name, dtype_name", case_params({k: v for k, v in SAFETY.items() if v.order == 2}))
def test_untaken_branch_does_not_leak_beyond_the_generated_order(tf, load_module, name, dtype_name):
    """An order-2 module differentiated a third time by TF itself (the double-where guard)."""
    check_case(tf, load_module, SAFETY[name], dtype_name, tape_order=3)


# --------------------------------------------------------------------------
# at the kinks: the convention


# (expression, variables, point, {sorted index: expected}) for f, f', f'' (and mixed partials).
KINKS = [
    # x > 0 is false at 0: the derivatives are the constant branch's.
    ("where(x > 0, x, 0)", ("x",), (0.0,), {(): 0.0, (0,): 0.0, (0, 0): 0.0}),
    # max(x, 0) = where(x >= 0, x, 0): the tie takes x.
    ("max(x, 0)", ("x",), (0.0,), {(): 0.0, (0,): 1.0, (0, 0): 0.0}),
    # max(0, x): the tie takes the first argument, the constant 0.
    ("max(0, x)", ("x",), (0.0,), {(): 0.0, (0,): 0.0, (0, 0): 0.0}),
    ("min(x, 0)", ("x",), (0.0,), {(): 0.0, (0,): 1.0, (0, 0): 0.0}),
    ("min(0, x)", ("x",), (0.0,), {(): 0.0, (0,): 0.0, (0, 0): 0.0}),
    ("abs(x)", ("x",), (0.0,), {(): 0.0, (0,): 0.0, (0, 0): 0.0}),
    ("max(x, 0.01*x)", ("x",), (0.0,), {(): 0.0, (0,): 1.0, (0, 0): 0.0}),
    # ELU at 0 takes exp(x) - 1, whose derivatives at 0 are 1.
    ("where(x > 0, x, exp(x) - 1)", ("x",), (0.0,), {(): 0.0, (0,): 1.0, (0, 0): 1.0}),
    # Huber at |x| = 1 takes the quadratic: f' = x, f'' = 1.
    ("where(abs(x) <= 1, x**2/2, abs(x) - 1/2)", ("x",), (1.0,), {(): 0.5, (0,): 1.0, (0, 0): 1.0}),
    ("where(abs(x) <= 1, x**2/2, abs(x) - 1/2)", ("x",), (-1.0,), {(): 0.5, (0,): -1.0, (0, 0): 1.0}),
    # 0 < x < 1 is false at both ends: the constant 0 is taken, though x**2 has slope 2 at 1.
    ("where(0 < x < 1, x**2, 0)", ("x",), (0.0,), {(): 0.0, (0,): 0.0, (0, 0): 0.0}),
    ("where(0 < x < 1, x**2, 0)", ("x",), (1.0,), {(): 0.0, (0,): 0.0, (0, 0): 0.0}),
    ("where(x > 1 or x < -1, x**3, x)", ("x",), (1.0,), {(): 1.0, (0,): 1.0, (0, 0): 0.0}),
    ("where(x > 1 or x < -1, x**3, x)", ("x",), (-1.0,), {(): -1.0, (0,): 1.0, (0, 0): 0.0}),
    ("where(not x > 0, x**2, sin(x))", ("x",), (0.0,), {(): 0.0, (0,): 0.0, (0, 0): 2.0}),
    # x == 0 takes the constant 1: f''(0) is 0 by the convention (sinc''(0) would be -1/3).
    ("where(x == 0, 1, sin(x)/x)", ("x",), (0.0,), {(): 1.0, (0,): 0.0, (0, 0): 0.0}),
    ("where(x != 0, x**2*log(x**2), 0)", ("x",), (0.0,), {(): 0.0, (0,): 0.0, (0, 0): 0.0}),
    ("where(x > 1, 1, where(x < -1, -1, x))", ("x",), (1.0,), {(): 1.0, (0,): 1.0, (0, 0): 0.0}),
    ("where(x > 1, 1, where(x < -1, -1, x))", ("x",), (-1.0,), {(): -1.0, (0,): 1.0, (0, 0): 0.0}),
    # Both ties of a clamp take the first argument, x: the slope is 1 at both ends.
    ("max(min(x, 1), -1)", ("x",), (1.0,), {(): 1.0, (0,): 1.0, (0, 0): 0.0}),
    ("max(min(x, 1), -1)", ("x",), (-1.0,), {(): -1.0, (0,): 1.0, (0, 0): 0.0}),
    ("min(max(x, -1), 1)", ("x",), (1.0,), {(): 1.0, (0,): 1.0, (0, 0): 0.0}),
    ("min(max(x, -1), 1)", ("x",), (-1.0,), {(): -1.0, (0,): 1.0, (0, 0): 0.0}),
    # x > y is false on the diagonal: x + y is taken.
    (
        "where(x > y, x*y, x + y)",
        ("x", "y"),
        (2.0, 2.0),
        {(): 4.0, (0,): 1.0, (1,): 1.0, (0, 0): 0.0, (0, 1): 0.0, (1, 1): 0.0},
    ),
    ("min(x, y)", ("x", "y"), (0.5, 0.5), {(): 0.5, (0,): 1.0, (1,): 0.0, (0, 0): 0.0, (0, 1): 0.0, (1, 1): 0.0}),
    ("max(x, y)", ("x", "y"), (0.5, 0.5), {(): 0.5, (0,): 1.0, (1,): 0.0, (0, 0): 0.0, (0, 1): 0.0, (1, 1): 0.0}),
]


@pytest.mark.parametrize("dtype_name", DTYPES)
@pytest.mark.parametrize(
    "expr, variables, point, expected",
    [pytest.param(*kink, id=f"{kink[0]}@{kink[2]}") for kink in KINKS],
)
def test_derivatives_at_the_kinks_follow_the_selected_branch(
    tf, load_module, expr, variables, point, expected, dtype_name
):
    dtype = tf.as_dtype(dtype_name)
    fn = load_module(expr, variables=variables, order=2).f
    xs = [tf.constant(p, dtype=dtype) for p in point]
    got = tf_partials(tf, fn, xs, 2)
    assert {tuple(sorted(index)) for index in got} == set(expected)
    for index, value in got.items():
        assert value.dtype == dtype
        assert float(value.numpy()) == expected[tuple(sorted(index))], (index, float(value.numpy()))


@pytest.mark.parametrize("dtype_name", DTYPES)
def test_ties_and_abs_match_tensorflow(tf, load_module, dtype_name):
    """max/min give a tie's gradient as tf.maximum/tf.minimum do; abs'(0) is tf.abs's."""
    dtype = tf.as_dtype(dtype_name)
    x = tf.constant([0.5, -1.0, 0.0, 2.0], dtype)
    y = tf.constant([0.5, -1.0, 0.0, -3.0], dtype)
    for expr, op in [("max(x, y)", tf.maximum), ("min(x, y)", tf.minimum)]:
        fn = load_module(expr, variables=("x", "y"), order=2).f
        with tf.GradientTape(persistent=True) as tape:
            tape.watch([x, y])
            ours, theirs = fn(x, y), op(x, y)
        for a, b in zip(tape.gradient(ours, [x, y]), tape.gradient(theirs, [x, y])):
            np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=expr)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    fn = load_module("abs(x)", variables=("x",), order=2).f
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        ours, theirs = fn(x), tf.abs(x)
    np.testing.assert_array_equal(tape.gradient(ours, x).numpy(), tape.gradient(theirs, x).numpy())


def test_two_inputs_broadcast_and_gradients_reduce(tf, load_module):
    fn = load_module("where(x > y, x*y, x + y)", variables=("x", "y"), order=2).f
    x = tf.constant([[-1.0], [0.5], [2.0]], tf.float64)
    y = tf.constant([0.0, 1.0, -2.0, 3.0], tf.float64)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        value = fn(x, y)
    assert value.shape == (3, 4)
    xs, ys = np.broadcast_arrays(x.numpy(), y.numpy())
    above = xs > ys
    np.testing.assert_allclose(value.numpy(), np.where(above, xs * ys, xs + ys), rtol=1e-15)
    dx, dy = tape.gradient(value, [x, y])
    assert dx.shape == (3, 1) and dy.shape == (4,)
    np.testing.assert_allclose(dx.numpy(), np.where(above, ys, 1.0).sum(axis=1, keepdims=True), rtol=1e-15)
    np.testing.assert_allclose(dy.numpy(), np.where(above, xs, 1.0).sum(axis=0), rtol=1e-15)


# --------------------------------------------------------------------------
# graphs, XLA, the command line


@pytest.mark.parametrize("jit_compile", [False, True], ids=["tf_function", "xla"])
def test_under_tf_function(tf, load_module, jit_compile):
    case = CASES["huber"]
    fn = load_module(case.expr, variables=case.variables, order=2).f

    @tf.function(jit_compile=jit_compile)
    def value_and_derivatives(x):
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                value = fn(x)
            first = inner.gradient(value, x)
        return value, first, outer.gradient(first, x)

    points = [*case.points["x"], 1.0, -1.0]
    x = tf.constant(points, tf.float32)
    value, first, second = (t.numpy() for t in value_and_derivatives(x))
    refs = reference_partials(Case(case.expr, case.variables, case.branches, {"x": points}))
    assert_close(value, refs[()], "float32", "f")
    assert_close(first, refs[(0,)], "float32", "f'")
    assert_close(second, refs[(0, 0)], "float32", "f''")


def test_cli_end_to_end(tf, tmp_path):
    target = tmp_path / "elu_module.py"
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    result = subprocess.run(
        [sys.executable, "-m", "generator", "where(x > 0, x, exp(x) - 1)", "-o", str(target)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "" and result.stderr == ""
    spec = importlib.util.spec_from_file_location("elu_module", target)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = tf.constant([-2.0, 0.0, 1.5], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        value = module.f(x)
    np.testing.assert_allclose(value.numpy(), [float(mpmath.expm1(-2)), 0.0, 1.5], rtol=1e-15)
    np.testing.assert_allclose(tape.gradient(value, x).numpy(), [float(mpmath.exp(-2)), 1.0, 1.0], rtol=1e-15)


@pytest.mark.parametrize(
    "expression, words",
    [
        ("x > 0", ["where(cond, a, b)"]),
        ("where(x, 1, 2)", ["condition", "comparison"]),
        ("where(x is 1, 1, 2)", ["'is'"]),
    ],
)
def test_cli_rejects_bad_conditions(capsys, tmp_path, expression, words):
    target = tmp_path / "out.py"
    code = main([expression, "-o", str(target)])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    lines = err.rstrip("\n").split("\n")
    assert len(lines) == 3 and lines[0].startswith("error: "), err
    assert lines[1] == f"  {expression}" and lines[2].strip() == "^", err
    for word in words:
        assert word in lines[0], (word, err)
    assert list(tmp_path.iterdir()) == []


def test_docstring_accuracy_of_a_where_inside_a_comparison():
    """The judge evaluates ITE conditions as booleans: NumPy's select had made hard swish's
    f' NaN at every point, and its docstring reported 0% of points within 3 bits."""
    from generator.derive import derive
    from generator.parse import parse

    expr = parse("x*min(max(x + 3, 0), 6)/6")
    lines = derive(expr, tuple(expr.free_symbols), 2).accuracy
    assert all("100.0% of" in line for line in lines), lines


def test_guards_leave_a_branch_too_large_to_probe():
    # A where-branch that overflows where it is not taken reads its input through a pick
    # (the double where); one beyond guards.MAX_PROBED_NODES is left as it is: nested
    # guarded levels grew so (34,000 operations) that differentiating them took minutes.
    from generator import guards
    from generator.primitives import pick

    x = sp.Symbol("x", real=True)
    small = sp.Piecewise((sp.exp(x), x < 1), (sp.Integer(0), True))
    assert guards.guard_branches(small, {}).has(pick)
    many = sp.Add(*(sp.exp(x) * sp.sin(k * x) for k in range(1, guards.MAX_PROBED_NODES // 4)))
    large = sp.Piecewise((many, x < 1), (sp.Integer(0), True))
    assert guards._tree_size(many) > guards.MAX_PROBED_NODES
    assert guards.guard_branches(large, {}) == large
