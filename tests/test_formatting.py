"""The generated source is black-clean, deterministic and valid Python."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import black
import mpmath
import pytest

from generator import Spec, generate

REPO_ROOT = Path(__file__).resolve().parent.parent

SPECS = {
    "softplus-1": Spec("log(1 + exp(x))", name="softplus", order=1),
    "softplus-3": Spec("log(1 + exp(x))", name="softplus", order=3),
    "logaddexp": Spec("log(exp(x) + exp(y))", variables=("x", "y")),
    "gaussian_nll": Spec("log(s) + (x - m)**2/(2*s**2)", variables=("x", "m", "s")),
    "hypot": Spec("sqrt(x**2 + y**2)"),
    "log1mexp": Spec("log(1 - exp(-x))"),
    "gelu_tanh": Spec(
        "x*(1 + tanh(sqrt(2/pi)*(x + 0.044715*x**3)))/2", name="gelu_tanh"
    ),
    "unused_var": Spec("exp(x)", variables=("x", "y")),
    "one_minus_cos": Spec("(1 - cos(x))/x**2", name="one_minus_cos"),
}


@pytest.fixture(scope="module")
def outputs():
    return {key: generate(spec) for key, spec in SPECS.items()}


def black_mode():
    # The mode the generator pins (generator/render.py): line length 100, Python 3.10.
    return black.Mode(line_length=100, target_versions={black.TargetVersion.PY310})


@pytest.mark.parametrize("key", sorted(SPECS))
def test_black_changes_nothing(outputs, key):
    source = outputs[key]
    assert black.format_str(source, mode=black_mode()) == source


@pytest.mark.parametrize("key", sorted(SPECS))
def test_output_compiles_and_is_plain(outputs, key):
    source = outputs[key]
    compile(source, f"<{key}>", "exec")
    tree = ast.parse(source)
    spec = SPECS[key]
    functions = {
        node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)
    }
    name = spec.name or "f"
    assert name in functions
    if spec.variables is not None:
        assert [a.arg for a in functions[name].args.args] == list(spec.variables)
    assert source.isascii()
    assert source.endswith("\n") and not source.endswith("\n\n")
    assert "\r" not in source and "\t" not in source
    assert not any(
        line != line.rstrip() for line in source.split("\n")
    ), "trailing whitespace"
    # the only import is tensorflow
    imports = [
        node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
    ]
    assert [ast.unparse(node) for node in imports] == ["import tensorflow as tf"]
    # no temporary that only renames another: SymPy's cse leaves t11 = t10 where
    # ipow(t10, 1) was, which printed as "t6_ = t6"
    renames = [
        ast.unparse(node)
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Name)
        and ast.unparse(node.targets[0]).rstrip("_") == node.value.id
    ]
    assert not renames, renames
    # no square computed twice: a square held in a temporary is reused for the cube
    # (gelu_tanh'' printed square(t3) beside t3_sq = square(t3))
    squares = [
        ast.unparse(node.args[0])
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "tf.math.square"
    ]
    held = {
        ast.unparse(node.value.args[0])
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and ast.unparse(node.value.func) == "tf.math.square"
    }
    again = [arg for arg in held if squares.count(arg) > 1]
    assert not again, again


@pytest.mark.parametrize("key", ["softplus-3", "gaussian_nll"])
def test_generating_twice_gives_identical_bytes(outputs, key):
    assert generate(SPECS[key]).encode() == outputs[key].encode()


def test_output_does_not_depend_on_hash_seed(outputs):
    """Two fresh interpreters with different hash seeds produce the same bytes."""
    code = (
        "import sys\n"
        "from generator import Spec, generate\n"
        "sys.stdout.write(generate(Spec('log(s) + (x - m)**2/(2*s**2)', variables=('x', 'm', 's'))))\n"
    )
    results = [_run_fresh(code, PYTHONHASHSEED=seed) for seed in ("1", "12345")]
    assert results[0] == results[1]
    assert results[0] == outputs["gaussian_nll"]


def test_a_constant_that_sympy_cannot_order_does_not_depend_on_hash_seed():
    """atan2(u, c) for a constant c that SymPy's assumptions may or may not prove real, by the
    order in which they ask, which hangs on the hash seed: with seeds 0, 2 and 3 the module was
    atan(u/c) (pi off), an error, and pi + atan(u/c). Now one module, pi - atan(...)."""
    code = (
        "import sys\n"
        "from generator import Spec, generate\n"
        "sys.stdout.write(generate(Spec('atan2(exp(abs(x)), log10(tanh(10)))')))\n"
    )
    results = [_run_fresh(code, PYTHONHASHSEED=seed) for seed in ("0", "2", "3")]
    assert results[0] == results[1] == results[2]
    assert "f(x) = pi - atan(" in results[0]


def _run_fresh(code: str, **env: str) -> str:
    """What `code` writes to stdout in a fresh interpreter, with `env` added."""
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env=dict(os.environ, PYTHONPATH=str(REPO_ROOT), **env),
        cwd=REPO_ROOT,
        capture_output=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode()


def _dispatched_cpu_features() -> list[str]:
    """The CPU features this NumPy picks kernels for and this machine has (AVX2, AVX-512...)."""
    try:
        from numpy._core import _multiarray_umath as umath
    except ImportError:  # NumPy 1.x
        from numpy.core import _multiarray_umath as umath
    return [f for f in umath.__cpu_dispatch__ if umath.__cpu_features__.get(f)]


def test_output_does_not_depend_on_the_cpus_vector_kernels(outputs):
    """The same bytes with NumPy's SIMD kernels for exp, log, pow, ... on and off.

    Regression guard: the judge scored forms with NumPy's float32 functions, whose results
    differ in the last bit between kernels; five suite modules (softplus among them) were
    generated differently on an AVX2 and an AVX-512 machine (see judge._rounded).
    """
    features = _dispatched_cpu_features()
    if not features:
        pytest.skip("NumPy dispatches no SIMD kernels on this CPU")
    code = (
        "import sys\n"
        "from generator import Spec, generate\n"
        "sys.stdout.write(generate(Spec('log(1 + exp(x))', name='softplus', order=3)))\n"
        "sys.stdout.write(generate(Spec('log(s) + (x - m)**2/(2*s**2)', variables=('x', 'm', 's'))))\n"
    )
    got = _run_fresh(code, NPY_DISABLE_CPU_FEATURES=" ".join(features))
    assert got == outputs["softplus-3"] + outputs["gaussian_nll"]


def test_output_does_not_depend_on_time_budgets(monkeypatch):
    """The same spec gives the same bytes however fast the machine is.

    Regression guard: derive.py/regimes.py once ran SymPy work under a SIGALRM
    `time_budget` and fell back to other forms when it ran out, so a loaded
    machine generated different bytes. If such a budget comes back, this test
    simulates its two extremes (unbounded, expired at once) and compares.
    """
    import contextlib

    from generator import derive, regimes

    try:
        from generator.budget import OutOfTime
    except ImportError:  # no budgets any more: nothing to simulate
        OutOfTime = RuntimeError

    spec = Spec("log(1 - exp(-x))", name="log1mexp")

    @contextlib.contextmanager
    def unbounded(seconds):
        yield

    @contextlib.contextmanager
    def expired(seconds):
        raise OutOfTime()
        yield  # pragma: no cover

    for module in (derive, regimes):
        monkeypatch.setattr(module, "time_budget", unbounded, raising=False)
    fast_machine = generate(spec)
    for module in (derive, regimes):
        monkeypatch.setattr(module, "time_budget", expired, raising=False)
    slow_machine = generate(spec)
    assert fast_machine == slow_machine


@pytest.mark.parametrize(
    ("text", "folded"),
    [
        # SymPy writes digamma(5/2) as 8/3 - EulerGamma - 2*log(2): four numbers printed.
        ("x + digamma(2.5)", "0.7031566406452432 + x"),
        ("x + pi + log(2)", "3.8347398341497385 + x"),
    ],
)
def test_constant_terms_of_a_sum_are_one_number(load_module, tf, text, folded) -> None:
    # One number, rounded once from the exact sum, as the docstring and the code show it.
    module = load_module(text, "folded")
    source = open(module.__file__, encoding="utf-8").read()
    assert f"y = {folded}\n" in source
    x = 1.5
    with mpmath.workdps(60):
        truth = float(
            mpmath.mpf(x)
            + (mpmath.psi(0, 2.5) if "digamma" in text else mpmath.pi + mpmath.log(2))
        )
    assert float(module.folded(tf.constant(x, tf.float64))) == pytest.approx(
        truth, rel=1e-15
    )
