"""Property-based fuzzing of the parser, the CLI and the whole pipeline.

1. Random expression trees over the whole grammar (numbers, x and y, + - * /
   **, unary minus, every function in parse.FUNCTIONS with its arity) either
   fail with a GeneratorError or give a module that imports and whose f and
   first partials match TensorFlow autodiff of the naive expression, in
   float64, wherever the naive values are finite and well-conditioned.
2. Random strings through parse() never raise anything but GeneratorError
   (nor a Python warning, which the CLI would print), and through main()
   answer exit 0, or exit 2 with one rendered "error:" message.

A wrong number or a malformed message fails at once. A generator crash (an
exception other than GeneratorError, exit 123, or a generation slower than
GENERATOR_FUZZ_TIMEOUT seconds) is collected, and the test ends as an expected
failure listing every crashing input; GENERATOR_FUZZ_STRICT=1 makes it fail.

CI runs few examples with a fixed seed, without shrinking. For a longer run:
GENERATOR_FUZZ_EXAMPLES (trees, 15), GENERATOR_FUZZ_STRINGS (strings, 300),
GENERATOR_FUZZ_SEED, GENERATOR_FUZZ_ORDER (2), GENERATOR_FUZZ_TIMEOUT (30),
GENERATOR_FUZZ_SHRINK=1, GENERATOR_FUZZ_ROOTS=1 (trees with --accurate-roots),
GENERATOR_FUZZ_COMPENSATED=1 (with --compensated-arguments), GENERATOR_FUZZ_TAILS=1
(with --scaled-tails --precise-sigmoid). See docs/fuzzing.md.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import itertools
import math
import os
import re
import signal
import warnings

import pytest
import sympy as sp
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from generator import Spec, generate
from generator.cli import main
from generator.errors import GeneratorError
from generator.parse import FUNCTIONS, parse
from generator.primitives import lgamma, naive

TREE_EXAMPLES = int(os.environ.get("GENERATOR_FUZZ_EXAMPLES", "15"))
STRING_EXAMPLES = int(os.environ.get("GENERATOR_FUZZ_STRINGS", "300"))
SEED = int(os.environ.get("GENERATOR_FUZZ_SEED", "20261129"))
ORDER = int(os.environ.get("GENERATOR_FUZZ_ORDER", "2"))
ROOTS = os.environ.get("GENERATOR_FUZZ_ROOTS", "") not in ("", "0")
COMPENSATED = os.environ.get("GENERATOR_FUZZ_COMPENSATED", "") not in ("", "0")
TAILS = os.environ.get("GENERATOR_FUZZ_TAILS", "") not in ("", "0")
# Seconds one tree may take to generate before the example fails as too slow.
TREE_TIMEOUT = float(os.environ.get("GENERATOR_FUZZ_TIMEOUT", "30"))
# Parsing is bounded by the parser's limits: any input takes well under this.
PARSE_TIMEOUT = 5.0
# Shrinking re-runs the slow pipeline many times: off in CI, on for a local hunt.
PHASES = (
    tuple(Phase)
    if os.environ.get("GENERATOR_FUZZ_SHRINK") == "1"
    else tuple(p for p in Phase if p != Phase.shrink)
)

# Agreement with naive autodiff, in float64, where naive is trustworthy.
RTOL = 1e-6
MAX_CONDITION = 1e4
MAX_MAGNITUDE = 1e12

POINTS = [(-1.7, 0.45), (-0.35, 1.3), (0.6, -0.8), (1.45, 2.2)]

# --------------------------------------------------------------------------
# random expression trees


NUMBERS = st.sampled_from(["0", "1", "2", "3", "0.5", "1.5", "2.5", "10", "pi", "e"])
VARIABLES = st.sampled_from(["x", "y"])
SMALL_EXPONENTS = st.sampled_from(["2", "3", "-1", "0.5", "-2", "1.5"])


def _extend(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    unary = st.builds(lambda a: f"-{a}", children)
    binary = st.builds(
        lambda a, op, b: f"({a} {op} {b})",
        children,
        st.sampled_from(["+", "-", "*", "/"]),
        children,
    )
    power = st.builds(lambda a, k: f"({a})**{k}", children, SMALL_EXPONENTS | children)
    calls = [
        st.builds(
            lambda *args, name=name: f"{name}({', '.join(args)})",
            *([children] * spec.arity),
        )
        for name, spec in sorted(FUNCTIONS.items())
        if not spec.takes_condition
    ]
    comparison = st.builds(
        lambda a, op, b: f"{a} {op} {b}",
        children,
        st.sampled_from(["<", "<=", ">", ">="]),
        children,
    )
    condition = (
        comparison
        | st.builds(
            lambda a, op, b: f"{a} {op} {b}",
            comparison,
            st.sampled_from(["and", "or"]),
            comparison,
        )
        | st.builds(lambda a: f"not {a}", comparison)
    )
    where = st.builds(
        lambda c, a, b: f"where({c}, {a}, {b})", condition, children, children
    )
    return st.one_of(unary, binary, power, where, *calls)


# Trees without a variable are rejected at once as constants: keep the ones with one.
EXPRESSIONS = st.recursive(
    NUMBERS | VARIABLES | VARIABLES, _extend, max_leaves=6
).filter(lambda text: re.search(r"\b[xy]\b", text) is not None)


# --------------------------------------------------------------------------
# the naive reference: the parsed expression with every stable primitive
# replaced by its textbook form, evaluated with plain TensorFlow ops


def _tf_functions(tf):
    return {
        sp.exp: tf.math.exp,
        sp.log: tf.math.log,
        sp.sin: tf.math.sin,
        sp.cos: tf.math.cos,
        sp.tan: tf.math.tan,
        sp.sinh: tf.math.sinh,
        sp.cosh: tf.math.cosh,
        sp.tanh: tf.math.tanh,
        sp.asin: tf.math.asin,
        sp.acos: tf.math.acos,
        sp.atan: tf.math.atan,
        sp.atan2: tf.math.atan2,
        sp.asinh: tf.math.asinh,
        sp.acosh: tf.math.acosh,
        sp.atanh: tf.math.atanh,
        sp.erf: tf.math.erf,
        sp.erfc: tf.math.erfc,
        sp.Abs: tf.math.abs,
        sp.sign: tf.math.sign,
        # SymPy writes atan2(0, w) as pi*(1 - Heaviside(w)) (fuzz seed 145); Heaviside(0) is
        # its second argument, 1/2 by default.
        sp.Heaviside: lambda u, at_zero=0.5: tf.where(u > 0, tf.ones_like(u), tf.where(u < 0, tf.zeros_like(u), at_zero * tf.ones_like(u))),
        # lgamma has no textbook form but itself; its derivatives are SymPy's polygamma.
        lgamma: tf.math.lgamma,
        sp.polygamma: tf.math.polygamma,
    }


RELATIONS = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}


def naive_tf(expr: sp.Expr, values: dict, tf):
    """Evaluate `expr` (no stable primitives left) with TF ops, float64.

    NaN wherever a comparison has a NaN operand: the expression is undefined there (y**x
    at y < 0), and IEEE's NaN <= NaN = False picks a branch the generator need not
    (where(not y**x > y**x, log2(y), acos(x)) at y = -0.8: SymPy makes the condition
    y**x <= y**x, True)."""
    functions = _tf_functions(tf)
    compared: list = []

    def walk(e: sp.Expr):
        if e.is_Symbol:
            return values[e.name]
        if e in (
            sp.true,
            sp.false,
        ):  # SymPy folds conditions: ITE(y <= 3, False, y <= 1.4)
            return tf.constant(bool(e))
        if e.is_number:
            # A constant with no real value, SymPy's log of a negative (log1mexp(1) inside
            # xlogy, fuzz seed 157), is NaN, as TF computes it.
            try:
                return tf.constant(float(e), tf.float64)
            except TypeError:
                return tf.constant(math.nan, tf.float64)
        if isinstance(e, sp.Add):
            return tf.add_n([walk(a) for a in e.args])
        if isinstance(e, sp.Mul):
            result = walk(e.args[0])
            for a in e.args[1:]:
                result = result * walk(a)
            return result
        if isinstance(e, sp.Pow):
            base, exponent = e.args
            if exponent.is_Integer:
                return walk(base) ** int(exponent)
            if exponent == sp.Rational(1, 2):
                return tf.math.sqrt(walk(base))
            return tf.math.pow(walk(base), walk(exponent))
        if isinstance(e, sp.Piecewise):
            *cases, (otherwise, _) = e.args
            result = walk(otherwise)
            for branch, condition in reversed(cases):
                result = tf.where(walk(condition), walk(branch), result)
            return result
        if isinstance(e, sp.Rel):
            lhs, rhs = walk(e.lhs), walk(e.rhs)
            compared.extend((lhs, rhs))
            return RELATIONS[e.rel_op](lhs, rhs)
        if isinstance(e, (sp.And, sp.Or)):
            combine = (
                tf.math.logical_and if isinstance(e, sp.And) else tf.math.logical_or
            )
            result = walk(e.args[0])
            for a in e.args[1:]:
                result = combine(result, walk(a))
            return result
        if isinstance(e, sp.Not):
            return tf.math.logical_not(walk(e.args[0]))
        if isinstance(e, sp.ITE):
            return tf.where(*(walk(a) for a in e.args))
        if type(e) in functions:
            return functions[type(e)](*[walk(a) for a in e.args])
        raise NotImplementedError(f"no TF op for {type(e).__name__} in {expr}")

    result = walk(expr)
    for operand in compared:
        operand = tf.cast(operand, tf.float64)
        result = tf.where(
            tf.math.is_nan(operand), tf.constant(math.nan, tf.float64), result
        )
    return result


def load_source(source: str, directory, name: str):
    path = directory / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _values_and_grads(fn, point: dict, tf, second: bool):
    """f, its gradient and (optionally) its Hessian rows at `point`, as floats."""
    names = sorted(point)
    tensors = {n: tf.constant(point[n], tf.float64) for n in names}
    with tf.GradientTape(persistent=True) as outer:
        for t in tensors.values():
            outer.watch(t)
        with tf.GradientTape() as inner:
            for t in tensors.values():
                inner.watch(t)
            value = fn(tensors)
        grads = inner.gradient(value, [tensors[n] for n in names])
        grads = [tf.zeros_like(value) if g is None else g for g in grads]
    hessian = None
    if second:
        hessian = []
        for g in grads:
            row = outer.gradient(g, [tensors[n] for n in names])
            hessian.append([0.0 if r is None else float(r) for r in row])
    del outer
    return float(value), [float(g) for g in grads], hessian


def _trustworthy(value: float) -> bool:
    return math.isfinite(value) and abs(value) < MAX_MAGNITUDE


def _condition(value: float, slopes: list[float], point: list[float]) -> float:
    """Relative condition number of a function with these partials at `point`."""
    if value == 0:
        return math.inf if any(s != 0 for s in slopes) else 0.0
    return sum(abs(p * s) for p, s in zip(point, slopes)) / abs(value)


def _close(got: float, want: float) -> bool:
    return math.isclose(got, want, rel_tol=RTOL, abs_tol=1e-12)


_counter = itertools.count()


@contextlib.contextmanager
def time_limit(seconds: float, what: str):
    """Fail (TimeoutError) instead of hanging when `what` takes longer than `seconds`."""
    if not hasattr(signal, "setitimer"):
        yield
        return

    def expire(signum, frame):
        raise TimeoutError(f"{what} took more than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class GeneratorCrash(Exception):
    """generate(), or the module it generated, raised something other than GeneratorError."""


@contextlib.contextmanager
def crashes_reported(text: str, stage: str):
    try:
        yield
    except (GeneratorError, AssertionError):
        raise
    except Exception as exc:
        raise GeneratorCrash(f"{stage} {text!r}: {type(exc).__name__}: {exc}") from exc


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz_modules")


def test_random_trees_generate_correct_modules_or_fail_clearly(tf, fuzz_dir):
    """Wrong numbers fail at once; crashes are collected over all examples.

    Known generator crashes (docs/fuzzing.md) make the test an expected
    failure that lists every crashing input; GENERATOR_FUZZ_STRICT=1 makes
    them a failure (the default once they are fixed).
    """
    crashes: list[str] = []

    @seed(SEED)
    @settings(
        max_examples=TREE_EXAMPLES,
        deadline=None,
        phases=PHASES,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(text=EXPRESSIONS)
    def check(text: str) -> None:
        try:
            check_tree(text, tf, fuzz_dir)
        except GeneratorCrash as exc:
            crashes.append(str(exc))

    check()
    _report_crashes(crashes)


def _report_crashes(crashes: list[str]) -> None:
    if not crashes:
        return
    listing = "\n".join(crashes)
    if os.environ.get("GENERATOR_FUZZ_STRICT") == "1":
        pytest.fail(f"{len(crashes)} generator crash(es):\n{listing}")
    pytest.xfail(
        f"{len(crashes)} known generator crash(es), see docs/fuzzing.md:\n{listing}"
    )


def check_tree(text: str, tf, fuzz_dir) -> None:
    """A GeneratorError, or a module whose f and first partials match naive TF autodiff."""
    try:
        # The parse under the same limit: min(where(y < 1, 1.5, x), log_sigmoid(0.5)) hung
        # in SymPy's comparisons for over 15 minutes (seed 2401), outside any limit.
        with (
            crashes_reported(text, "generating"),
            time_limit(TREE_TIMEOUT, "generation"),
        ):
            expr = parse(text)
            options = {"accurate_roots": ROOTS, "compensated_arguments": COMPENSATED}
            options.update(scaled_tails=TAILS, precise_sigmoid=TAILS)
            source = generate(Spec(text, order=ORDER, **options))
    except GeneratorError as exc:
        assert exc.render().startswith("error: ")
        return
    with crashes_reported(text, "importing the module for"):
        compile(source, "<generated>", "exec")
        module = load_source(source, fuzz_dir, f"fuzz_{next(_counter)}")
    # Without evaluation, so that SymPy does not simplify exp(log(u)) to u and
    # extend the reference beyond the domain of the expression as written.
    with sp.evaluate(False):
        reference = naive(expr)
    names = sorted(s.name for s in expr.free_symbols)
    generated_fn = getattr(module, module.__all__[0])

    for x, y in POINTS:
        point = {"x": x, "y": y}
        point = {n: point[n] for n in names}
        f_ref, g_ref, h_ref = _values_and_grads(
            lambda t: naive_tf(reference, t, tf), point, tf, second=True
        )
        if not (_trustworthy(f_ref) and all(_trustworthy(g) for g in g_ref)):
            continue
        with crashes_reported(text, f"evaluating at {point} the module for"):
            f_gen, g_gen, _ = _values_and_grads(
                lambda t: generated_fn(**t), point, tf, second=False
            )
        coords = [point[n] for n in names]
        if _condition(f_ref, g_ref, coords) <= MAX_CONDITION:
            assert _close(f_gen, f_ref), (text, point, "f", f_gen, f_ref)
        for i, name in enumerate(names):
            if (
                all(_trustworthy(h) for h in h_ref[i])
                and _condition(g_ref[i], h_ref[i], coords) <= MAX_CONDITION
            ):
                assert _close(g_gen[i], g_ref[i]), (
                    text,
                    point,
                    f"df/d{name}",
                    g_gen[i],
                    g_ref[i],
                )


# --------------------------------------------------------------------------
# random strings


EXPRESSION_ALPHABET = (
    "xyze0123456789.+-*/()%,_ <>=!&|^~@:;'\"[]{}#\\\t" + "abcdefghijklmnopqrstuvwxyz"
)
STRINGS = st.one_of(
    st.text(max_size=80),
    st.text(alphabet=EXPRESSION_ALPHABET, max_size=60),
    st.lists(
        st.sampled_from(
            sorted(FUNCTIONS)
            + ["x", "y", "(", ")", ",", "+", "-", "*", "/", "**", "1", "2.5", "e", "pi"]
        ),
        max_size=16,
    ).map("".join),
)


@seed(SEED)
@settings(
    max_examples=STRING_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(text=STRINGS)
def test_random_strings_parse_or_fail_with_generator_error(text):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with time_limit(PARSE_TIMEOUT, f"parsing {text!r}"):
                expr = parse(text)
        except GeneratorError as exc:
            _assert_rendered(exc.render())
            expr = None
    # A warning would print on stderr in the CLI, before or instead of the one error line.
    assert [str(w.message) for w in caught] == []
    assert expr is None or expr.free_symbols


def _assert_rendered(rendered: str) -> None:
    """One "error:" line, then either nothing or the echoed expression and a caret; all printable."""
    lines = rendered.split("\n")
    assert lines[0].startswith("error: ")
    assert len(lines) in (1, 3), rendered
    assert "Traceback" not in rendered
    assert all(line.isprintable() for line in lines), rendered
    if len(lines) == 3:
        assert lines[1].startswith("  ") and lines[2].startswith("  ")
        assert lines[1].isascii()
        assert lines[2].strip() == "^"
        assert len(lines[2]) <= len(lines[1]) + 1


def test_random_strings_through_main_exit_0_or_2():
    """Exit 0 with a module, or exit 2 with one rendered error; exit 123 (a crash) is collected.

    A string that parses is generated, so generator crashes and slow inputs
    show up here too; like the tree property, they make the test an expected
    failure listing them (GENERATOR_FUZZ_STRICT=1: a failure).
    """
    crashes: list[str] = []

    @seed(SEED)
    @settings(
        max_examples=STRING_EXAMPLES // 3,
        deadline=None,
        phases=PHASES,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(text=STRINGS)
    def check(text: str) -> None:
        if text.startswith("-"):
            text = " " + text  # an expression, not an option
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            with time_limit(TREE_TIMEOUT, f"main() on {text!r}"):
                code = main([text, "--order", "1"])
        if code == 123:
            crashes.append(
                f"main() on {text!r}: {stderr.getvalue().strip().splitlines()[-1]}"
            )
        elif code == 0:
            assert stdout.getvalue().startswith("# Generated by generator ")
            assert stderr.getvalue() == ""
        else:
            assert code == 2, stderr.getvalue()
            assert stdout.getvalue() == ""
            _assert_rendered(stderr.getvalue().rstrip("\n"))

    check()
    _report_crashes(crashes)
