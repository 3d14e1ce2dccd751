"""Numerical correctness of generated modules against independent mpmath references.

For every function of tests/functions.toml the module is generated with
order 2, imported, and f, every first partial and the full Hessian (mixed
partials included) are computed with nested tf.GradientTape in float32 and
float64. The references never look at the generated code: they come from the
*textbook* expression (`naive(parse(expr))`, i.e. what the user wrote, without
any stabilising rewrite), differentiated by SymPy and evaluated by mpmath with
50 digits. The points are exactly representable in float32, lie in the
function's domain, and avoid places where the naive formula itself is
singular (0 for sinc-like functions).

Orders 3 and 4 are checked on softplus and on logaddexp (with all mixed
partials), and the TensorFlow documentation's log1pexp example is checked
at x = 1 and x = 100.
"""

from __future__ import annotations

import itertools
import tomllib
from pathlib import Path

import mpmath
import numpy as np
import pytest
import sympy as sp
from sympy.parsing.sympy_parser import parse_expr

from generator.parse import parse
from generator.primitives import naive
from partials import ATOL, RTOL, assert_close, tf_partials

SUITE = tomllib.loads((Path(__file__).resolve().parent / "functions.toml").read_text())["function"]
SUITE_BY_NAME = {entry["name"]: entry for entry in SUITE}


DEFAULT_POINTS = [-4.5, -2.25, -0.75, 0.375, 1.25, 3.5, 5.0]
POSITIVE_POINTS = [0.125, 0.5, 0.75, 1.5, 3.0, 5.0]
UNIT_POINTS = [0.0625, 0.25, 0.375, 0.5, 0.75, 0.875]

# Points per function and variable (all exactly representable in float32).
POINTS: dict[str, dict[str, list[float]]] = {
    "log1mexp": {"x": POSITIVE_POINTS},
    "xlogx": {"x": POSITIVE_POINTS},
    "logit": {"x": UNIT_POINTS},
    "logaddexp": {
        "x": [-4.5, -1.0, 0.375, 2.0, 5.0, 3.0],
        "y": [1.5, -1.25, 0.5, -3.0, 4.75, 3.0],
    },
    "hypot": {
        "x": [-4.5, -1.0, 0.375, 2.0, 5.0, 0.0],
        "y": [1.5, -1.25, 0.5, -3.0, 4.75, 2.5],
    },
    "bce_with_logits": {
        "z": [-4.5, -1.0, 0.375, 2.0, 5.0, 3.0],
        "t": [0.0, 1.0, 0.25, 0.75, 0.5, 1.0],
    },
    "gaussian_nll": {
        "x": [-1.5, 0.25, 2.0, 3.5, -4.0, 1.0],
        "m": [0.5, -1.0, 2.5, 0.0, -3.0, 4.5],
        "s": [0.5, 1.25, 2.0, 0.75, 3.0, 1.5],
    },
}


def points_for(entry: dict) -> dict[str, list[float]]:
    return POINTS.get(entry["name"]) or {v: DEFAULT_POINTS for v in entry["vars"]}


def test_every_suite_function_has_points_in_its_domain():
    assert len(SUITE) >= 20
    for entry in SUITE:
        pts = points_for(entry)
        assert list(pts) == entry["vars"], entry["name"]
        lengths = {len(v) for v in pts.values()}
        assert len(lengths) == 1
        for values in pts.values():
            for v in values:
                assert np.float32(v) == v, "points must be exact in float32"


# --------------------------------------------------------------------------
# references


def naive_expr(text: str, variables: list[str]) -> tuple[sp.Expr, list[sp.Symbol]]:
    expr = naive(parse(text))
    by_name = {s.name: s for s in expr.free_symbols}
    symbols = [by_name.get(v, sp.Symbol(v, real=True)) for v in variables]
    return expr, symbols


def reference_partials(text: str, variables: list[str], points: dict[str, list[float]], order: int):
    """{sorted index tuple of variable positions: float64 array}, for all partials up to `order`."""
    expr, symbols = naive_expr(text, variables)
    n = len(points[variables[0]])
    out: dict[tuple[int, ...], np.ndarray] = {}
    derivs: dict[tuple[int, ...], sp.Expr] = {(): expr}
    for k in range(1, order + 1):
        for index in itertools.combinations_with_replacement(range(len(variables)), k):
            derivs[index] = sp.diff(derivs[index[:-1]], symbols[index[-1]])
    with mpmath.workdps(50):
        for index, d in derivs.items():
            fn = sp.lambdify(symbols, d, modules="mpmath")
            values = []
            for i in range(n):
                args = [mpmath.mpf(points[v][i]) for v in variables]
                values.append(float(mpmath.re(fn(*args))))
            out[index] = np.array(values)
    return out


def test_naive_parse_agrees_with_sympy_parse_expr():
    """The reference's expression (our parser) matches SymPy's own reading of the text."""
    for entry in SUITE:
        expr, symbols = naive_expr(entry["expr"], entry["vars"])
        local = {s.name: s for s in symbols}
        local.update(pi=sp.pi, e=sp.E)
        theirs = parse_expr(entry["expr"], local_dict=local)
        pts = points_for(entry)
        for i in range(len(pts[entry["vars"][0]])):
            subs = {s: sp.Rational(pts[s.name][i]) for s in symbols}
            a = sp.N(expr.subs(subs), 30)
            b = sp.N(theirs.subs(subs), 30)
            assert abs(a - b) <= 1e-14 * max(1, abs(b)), (
                entry["name"],
                a,
                b,
            )  # parse_expr reads 0.044715 as a binary float


# --------------------------------------------------------------------------
# TF side


def check_all_partials(tf, module_fn, entry_vars, expr, points, order, dtype):
    refs = reference_partials(expr, entry_vars, points, order)
    xs = [tf.constant(points[v], dtype=dtype) for v in entry_vars]
    got = tf_partials(tf, module_fn, xs, order)
    assert got[()].dtype == dtype
    expected_count = sum(len(entry_vars) ** k for k in range(order + 1))
    assert len(got) == expected_count
    for index, value in got.items():
        assert value.dtype == dtype, index
        label = "f" if not index else "d" + "".join(entry_vars[i] for i in index)
        assert_close(value.numpy(), refs[tuple(sorted(index))], dtype.name, f"{expr}: {label}")


# (name, dtype) or (name, order, dtype) -> pytest mark, for known generator bugs
# (e.g. pytest.mark.xfail(strict=True, reason="BUG: ...")). Fixed so far: float64
# inputs failed where a Taylor regime used tf.math.polyval with Python-float
# coefficients (float32 tensors).
KNOWN_BUGS: dict[tuple, pytest.MarkDecorator] = {}


def cases(*axes):
    """pytest.param for every combination of the axes, with the KNOWN_BUGS marks."""
    out = []
    for combo in itertools.product(*axes):
        mark = KNOWN_BUGS.get(combo)
        out.append(pytest.param(*combo, marks=[mark] if mark else [], id="-".join(map(str, combo))))
    return out


@pytest.mark.parametrize("name, dtype_name", cases([e["name"] for e in SUITE], ["float32", "float64"]))
def test_suite_function_value_gradient_hessian(tf, load_module, name, dtype_name):
    entry = SUITE_BY_NAME[name]
    module = load_module(entry["expr"], name=name, variables=tuple(entry["vars"]), order=2)
    fn = getattr(module, name)
    check_all_partials(tf, fn, entry["vars"], entry["expr"], points_for(entry), 2, tf.as_dtype(dtype_name))


@pytest.mark.parametrize(
    "name, order, dtype_name", cases(["softplus", "logaddexp"], [3, 4], ["float32", "float64"])
)
def test_higher_orders(tf, load_module, name, order, dtype_name):
    entry = SUITE_BY_NAME[name]
    module = load_module(entry["expr"], name=name, variables=tuple(entry["vars"]), order=order)
    assert module.__doc__ and f"to order {order}" in module.__doc__
    fn = getattr(module, name)
    check_all_partials(
        tf, fn, entry["vars"], entry["expr"], points_for(entry), order, tf.as_dtype(dtype_name)
    )


# --------------------------------------------------------------------------
# The TF docs' log1pexp example, done right


def ulp32(value: float) -> float:
    return float(np.spacing(np.float32(abs(value))))


def test_log1pexp_at_one(tf, load_module):
    fn = load_module("log(1+exp(x))", order=2).f
    got = tf_partials(tf, fn, [tf.constant(1.0, tf.float32)], 2)
    f1 = float(got[(0,)].numpy())
    f2 = float(got[(0, 0)].numpy())
    assert abs(f1 - 0.7310586) <= 2 * ulp32(0.7310586), f1
    assert abs(f2 - 0.19661193) <= 2 * ulp32(0.19661193), f2
    assert abs(float(got[()].numpy()) - 1.3132616) <= 2 * ulp32(1.3132616)


def test_log1pexp_at_one_hundred_float32(tf, load_module):
    fn = load_module("log(1+exp(x))", order=2).f
    got = tf_partials(tf, fn, [tf.constant(100.0, tf.float32)], 2)
    assert float(got[()].numpy()) == 100.0
    assert float(got[(0,)].numpy()) == 1.0
    f2 = float(got[(0, 0)].numpy())
    assert np.isfinite(f2), f2  # naive autodiff gives NaN here
    assert 0.0 <= f2 <= 1e-30, f2  # exact: exp(-100)/(1+exp(-100))**2 ~ 3.7e-44


def test_log1pexp_far_tails_float32(tf, load_module):
    fn = load_module("log(1+exp(x))", order=2).f
    x = tf.constant([-1000.0, -100.0, 89.0, 1000.0, 3.0e38], tf.float32)
    got = tf_partials(tf, fn, [x], 2)
    value, first, second = (got[k].numpy() for k in [(), (0,), (0, 0)])
    assert np.all(np.isfinite(value)) and np.all(np.isfinite(first)) and np.all(np.isfinite(second))
    np.testing.assert_array_equal(value[2:], x.numpy()[2:])
    np.testing.assert_array_equal(first[2:], [1.0, 1.0, 1.0])
    assert value[0] == 0.0 and first[0] == 0.0
    assert np.all(second >= 0.0)
