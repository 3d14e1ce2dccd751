"""Parameters: `--param beta=10` makes beta a keyword-only, undifferentiated argument.

`python -m generator "log(1 + exp(beta*x))/beta" --param beta=10 --name smooth_relu`
generates `smooth_relu(x, *, beta=10.0)`. beta may be a Python number, a
tensor of any real dtype (cast to the inputs' dtype) or a tf.Variable; it
broadcasts against the inputs, and its gradient is None.

References never look at the generated code: the textbook expression is
differentiated by SymPy in the inputs, with the parameter's value put in,
and evaluated by mpmath with 50 digits. The command line is driven in-process
through `generator.cli.main`, and `python -m generator build` through a
temporary pyproject.toml.
"""

from __future__ import annotations

import importlib.util
import inspect
import itertools
import shlex
from collections.abc import Callable
from pathlib import Path

import mpmath
import numpy as np
import pytest
import sympy as sp

from generator.cli import main
from partials import ATOL, RTOL, assert_close, tf_partials

DTYPES = ["float32", "float64"]

SMOOTH_RELU = "log(1 + exp(beta*x))/beta"
POINTS = [-2.5, -0.75, -0.125, 0.0625, 0.5, 1.5, 4.0]  # exact in float32


def smooth_relu(load_module):
    return load_module(
        SMOOTH_RELU, name="smooth_relu", params=(("beta", 10.0),)
    ).smooth_relu


# --------------------------------------------------------------------------
# references and TF partials


def reference_partials(
    text: str,
    variables: tuple[str, ...],
    points: dict[str, list[float]],
    params: dict[str, float],
    order: int = 2,
    where: Callable[[dict[str, float]], bool] | None = None,
    otherwise: str | None = None,
) -> dict[tuple[int, ...], np.ndarray]:
    """{sorted index tuple: float64 array}: partials in the variables of the textbook expression.

    With `where` and `otherwise`, `text` is the branch taken where `where`
    holds (called with the point's and the parameters' values by name), and
    `otherwise` the other branch.
    """
    names = [*variables, *params]
    symbols = {name: sp.Symbol(name, real=True) for name in names}
    branches = [
        sp.sympify(t, locals=symbols) for t in (text, otherwise) if t is not None
    ]
    indices = [
        i
        for k in range(order + 1)
        for i in itertools.combinations_with_replacement(range(len(variables)), k)
    ]
    functions = []
    for branch in branches:
        derivs = {(): branch}
        for index in indices[1:]:
            derivs[index] = sp.diff(derivs[index[:-1]], symbols[variables[index[-1]]])
            # abs(x)'' is 2*DiracDelta(x): 0 off the kinks, where all the points are.
            derivs[index] = derivs[index].replace(
                sp.DiracDelta, lambda *args: sp.S.Zero
            )
        functions.append(
            {
                i: sp.lambdify([symbols[n] for n in names], d, "mpmath")
                for i, d in derivs.items()
            }
        )
    n = len(points[variables[0]])
    out = {index: np.empty(n) for index in indices}
    with mpmath.workdps(50):
        for k in range(n):
            values = {v: points[v][k] for v in variables} | params
            taken = 0 if where is None or where(values) else 1
            args = [mpmath.mpf(values[name]) for name in names]
            for index in indices:
                out[index][k] = float(functions[taken][index](*args))
    return out


def check_partials(tf, fn, variables, points, dtype_name, refs, order=2):
    dtype = tf.as_dtype(dtype_name)
    xs = [tf.constant(points[v], dtype=dtype) for v in variables]
    got = tf_partials(tf, fn, xs, order)
    assert len(got) == sum(len(xs) ** k for k in range(order + 1))
    for index, value in got.items():
        assert value.dtype == dtype, index
        label = "f" if not index else "d" + "".join(variables[i] for i in index)
        assert_close(value.numpy(), refs[tuple(sorted(index))], dtype_name, label)


# --------------------------------------------------------------------------
# the signature


def test_parameter_is_keyword_only_with_its_default(load_module):
    signature = inspect.signature(smooth_relu(load_module))
    assert list(signature.parameters) == ["x", "beta"]
    x, beta = signature.parameters.values()
    assert (
        x.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
        and x.default is inspect.Parameter.empty
    )
    assert beta.kind is inspect.Parameter.KEYWORD_ONLY
    assert beta.default == 10.0 and type(beta.default) is float


def test_positional_parameter_is_a_type_error(tf, load_module):
    fn = smooth_relu(load_module)
    with pytest.raises(TypeError):
        fn(tf.constant([1.0]), 3.0)


@pytest.mark.parametrize("bad", [True, 1 + 2j, "three"], ids=["bool", "complex", "str"])
def test_parameter_of_a_non_real_type_is_a_type_error(tf, load_module, bad):
    with pytest.raises(TypeError):
        smooth_relu(load_module)(tf.constant([1.0]), beta=bad)


# --------------------------------------------------------------------------
# values and derivatives, for every way of passing beta

BETAS = {
    "default": (None, 10.0),
    "python_half": (lambda tf: 0.5, 0.5),
    "python_float": (lambda tf: 3.0, 3.0),
    "python_int": (lambda tf: 3, 3.0),
    "tensor_float32": (lambda tf: tf.constant(3.0, tf.float32), 3.0),
    "tensor_float64": (lambda tf: tf.constant(3.0, tf.float64), 3.0),
    "tensor_int32": (lambda tf: tf.constant(3, tf.int32), 3.0),
    "variable": (lambda tf: tf.Variable(3.0), 3.0),
    "numpy_float64": (lambda tf: np.float64(0.5), 0.5),
}


def test_forms_are_measured_at_the_default_not_with_the_parameter_as_an_input(
    tf, load_module
):
    # f'' = beta*sigmoid(beta*x)*sigmoid(-beta*x); judged with beta free, 1 - sigmoid(-beta*x) looked as
    # good as sigmoid(beta*x), but at beta = 10, x = -5 it is 1 - 1 = 0 in float32 (true value 1.9e-21).
    points = {"x": [-8.0, -5.0, -3.0]}
    refs = reference_partials(SMOOTH_RELU, ("x",), points, {"beta": 10.0})
    got = tf_partials(
        tf, smooth_relu(load_module), [tf.constant(points["x"], tf.float32)], 2
    )
    # Relative: the values (1e-34 to 1e-12) are far below the absolute tolerance.
    np.testing.assert_allclose(got[(0, 0)].numpy(), refs[(0, 0)], rtol=1e-5, atol=0)


MISH_BETA = "x*tanh(log(1 + exp(beta*x)))"
# beta*x from -150 to 15000: exp(beta*x) overflows float32 beyond 88.7 and float64 beyond 709.8.
FAR_POINTS = [-100.0, -20.0, -1.5, 3.0, 20.0, 58.0, 60.0, 100.0, 480.0, 1e4]


@pytest.mark.parametrize("dtype_name", DTYPES)
@pytest.mark.parametrize("beta", [1.5, 0.5])
def test_far_out_without_regimes(tf, load_module, dtype_name, beta):
    """With a parameter there are no regimes, whose thresholds would hold for the default
    only. mish'' then divides exponentials that overflow (inf/inf was NaN for beta*x > 88.7);
    the exponentials held below overflow give the limit, at the default beta and at others.
    """
    fn = load_module(MISH_BETA, name="mish_beta", params=(("beta", 1.5),)).mish_beta
    refs = reference_partials(MISH_BETA, ("x",), {"x": FAR_POINTS}, {"beta": beta})
    got = tf_partials(
        tf,
        lambda x: fn(x, beta=beta),
        [tf.constant(FAR_POINTS, tf.as_dtype(dtype_name))],
        2,
    )
    for index, value in got.items():
        assert np.isfinite(value.numpy()).all(), (index, value.numpy())
        label = "f" + "'" * len(index)
        assert_close(value.numpy(), refs[tuple(sorted(index))], dtype_name, label)


@pytest.mark.parametrize("dtype_name", DTYPES)
@pytest.mark.parametrize("kind", list(BETAS))
def test_values_and_derivatives(tf, load_module, kind, dtype_name):
    make, value = BETAS[kind]
    fn = smooth_relu(load_module)
    call = fn if make is None else (lambda x: fn(x, beta=make(tf)))
    refs = reference_partials(SMOOTH_RELU, ("x",), {"x": POINTS}, {"beta": value})
    check_partials(tf, call, ("x",), {"x": POINTS}, dtype_name, refs)


def test_float64_inputs_with_a_float32_parameter_tensor(tf, load_module):
    """beta is cast to the inputs' dtype: the result is float64 and as accurate."""
    fn = smooth_relu(load_module)
    refs = reference_partials(SMOOTH_RELU, ("x",), {"x": POINTS}, {"beta": 2.5})
    check_partials(
        tf,
        lambda x: fn(x, beta=tf.constant(2.5, tf.float32)),
        ("x",),
        {"x": POINTS},
        "float64",
        refs,
    )


def test_float16_inputs(tf, load_module):
    fn = smooth_relu(load_module)
    refs = reference_partials(
        SMOOTH_RELU, ("x",), {"x": POINTS}, {"beta": 2.0}, order=1
    )
    for beta in [2.0, tf.constant(2.0, tf.float32)]:
        x = tf.constant(POINTS, tf.float16)
        with tf.GradientTape() as tape:
            tape.watch(x)
            value = fn(x, beta=beta)
        first = tape.gradient(value, x)
        assert value.dtype == tf.float16 and first.dtype == tf.float16
        assert_close(value.numpy(), refs[()], "float16", "f")
        assert_close(first.numpy(), refs[(0,)], "float16", "f'")


# --------------------------------------------------------------------------
# broadcasting and the parameter's (absent) gradient


def test_parameter_tensor_broadcasts_and_gradient_reduces_to_the_input(tf, load_module):
    fn = smooth_relu(load_module)
    points = [-1.5, -0.25, 0.5, 2.0]
    betas = [0.5, 3.0, 10.0]
    x = tf.constant(points, tf.float64)
    beta = tf.constant([[b] for b in betas], tf.float64)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            value = fn(x, beta=beta)
        first = inner.gradient(value, x)
    second = outer.gradient(first, x)
    assert value.shape == (3, 4)
    assert first.shape == (4,) and second.shape == (4,)
    refs = [
        reference_partials(SMOOTH_RELU, ("x",), {"x": points}, {"beta": b})
        for b in betas
    ]
    for row, ref in enumerate(refs):
        assert_close(value.numpy()[row], ref[()], "float64", f"f at beta={betas[row]}")
    # The tape sums over the broadcast rows: x's gradient is the sum of every row's.
    assert_close(first.numpy(), sum(ref[(0,)] for ref in refs), "float64", "f' summed")
    assert_close(
        second.numpy(), sum(ref[(0, 0)] for ref in refs), "float64", "f'' summed"
    )


@pytest.mark.parametrize("kind", ["tensor", "variable"])
def test_gradient_with_respect_to_the_parameter_is_none(tf, load_module, kind):
    fn = smooth_relu(load_module)
    x = tf.constant([-0.5, 0.25, 1.5])
    beta = tf.constant(3.0) if kind == "tensor" else tf.Variable(3.0)
    with tf.GradientTape(persistent=True) as outer:
        outer.watch([x, beta])
        with tf.GradientTape(persistent=True) as inner:
            inner.watch([x, beta])
            value = fn(x, beta=beta)
        dx, dbeta = inner.gradient(value, [x, beta])
    assert dbeta is None
    assert dx is not None
    assert outer.gradient(dx, beta) is None
    assert outer.gradient(dx, x) is not None
    if kind == "variable":
        assert inner.watched_variables() == (
            beta,
        )  # a trainable variable is watched, and still gets None


@pytest.mark.parametrize("jit_compile", [False, True], ids=["tf_function", "xla"])
def test_under_tf_function_with_a_parameter_argument(tf, load_module, jit_compile):
    fn = smooth_relu(load_module)

    @tf.function(jit_compile=jit_compile)
    def derivatives(x, beta):
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch([x, beta])
                value = fn(x, beta=beta)
            first, none = inner.gradient(value, [x, beta])
        assert none is None
        return value, first, outer.gradient(first, x)

    x = tf.constant(POINTS, tf.float32)
    for b in [0.5, 3.0]:
        got = derivatives(x, tf.constant(b, tf.float32))
        refs = reference_partials(SMOOTH_RELU, ("x",), {"x": POINTS}, {"beta": b})
        for value, index in zip(got, [(), (0,), (0, 0)]):
            assert_close(value.numpy(), refs[index], "float32", f"{index} at beta={b}")


# --------------------------------------------------------------------------
# two parameters; a parameter with two inputs; a parameter in a condition

SCALED_SOFTPLUS = "a*softplus(b*x)"


@pytest.mark.parametrize("dtype_name", DTYPES)
@pytest.mark.parametrize(
    "given, values",
    [
        ({}, {"a": 1.0, "b": 2.0}),
        ({"a": 0.5, "b": 3.0}, {"a": 0.5, "b": 3.0}),
        ({"b": -1.5}, {"a": 1.0, "b": -1.5}),
        ({"a": 4}, {"a": 4.0, "b": 2.0}),
    ],
    ids=["defaults", "both", "b_only", "a_only"],
)
def test_two_parameters(tf, load_module, given, values, dtype_name):
    module = load_module(
        SCALED_SOFTPLUS, name="scaled_softplus", params=(("a", 1.0), ("b", 2.0))
    )
    signature = inspect.signature(module.scaled_softplus)
    assert [(p.name, p.kind, p.default) for p in signature.parameters.values()][1:] == [
        ("a", inspect.Parameter.KEYWORD_ONLY, 1.0),
        ("b", inspect.Parameter.KEYWORD_ONLY, 2.0),
    ]
    refs = reference_partials("a*log(1 + exp(b*x))", ("x",), {"x": POINTS}, values)
    check_partials(
        tf,
        lambda x: module.scaled_softplus(x, **given),
        ("x",),
        {"x": POINTS},
        dtype_name,
        refs,
    )


LAE_POINTS = {
    "x": [-4.5, -1.0, 0.375, 2.0, 5.0, 3.0],
    "y": [1.5, -1.25, 0.5, -3.0, 4.75, 3.0],
}


@pytest.mark.parametrize("dtype_name", DTYPES)
@pytest.mark.parametrize("s", [None, 2.0, "tensor"])
def test_parameter_with_two_inputs(tf, load_module, s, dtype_name):
    module = load_module(
        "logaddexp(x, y)*s", variables=("x", "y"), params=(("s", 0.5),)
    )
    assert list(inspect.signature(module.f).parameters) == ["x", "y", "s"]
    if s is None:
        fn, value = module.f, 0.5
    else:
        value = 2.0
        fn = lambda x, y: module.f(
            x, y, s=2.0 if s != "tensor" else tf.constant(2.0, tf.float64)
        )  # noqa: E731
    refs = reference_partials(
        "log(exp(x) + exp(y))*s", ("x", "y"), LAE_POINTS, {"s": value}
    )
    check_partials(tf, fn, ("x", "y"), LAE_POINTS, dtype_name, refs)


def test_parameter_with_two_inputs_has_no_gradient(tf, load_module):
    module = load_module(
        "logaddexp(x, y)*s", variables=("x", "y"), params=(("s", 0.5),)
    )
    x, y, s = tf.constant([0.5, -1.0]), tf.constant([1.0, 2.0]), tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch([x, y, s])
        value = module.f(x, y, s=s)
    dx, dy, ds = tape.gradient(value, [x, y, s])
    assert ds is None and dx.shape == (2,) and dy.shape == (2,)


HUBER = "where(abs(x) <= d, x**2/2, d*(abs(x) - d/2))"
HUBER_POINTS = [-3.5, -1.5, -0.75, 0.375, 1.25, 2.5]


@pytest.mark.parametrize("dtype_name", DTYPES)
@pytest.mark.parametrize("d", [None, 2.0], ids=["default", "two"])
def test_parameter_in_a_condition(tf, load_module, d, dtype_name):
    """Huber with its delta as a parameter: the branch taken at x = ±1.5 or 1.25 changes with d."""
    fn = load_module(HUBER, name="huber", params=(("d", 1.0),)).huber
    value = 1.0 if d is None else d
    refs = reference_partials(
        "x**2/2",
        ("x",),
        {"x": HUBER_POINTS},
        {"d": value},
        where=lambda v: abs(v["x"]) <= v["d"],
        otherwise="d*(abs(x) - d/2)",
    )
    call = fn if d is None else (lambda x: fn(x, d=d))
    check_partials(tf, call, ("x",), {"x": HUBER_POINTS}, dtype_name, refs)


# --------------------------------------------------------------------------
# the command line

EXPR_ARGS = [SMOOTH_RELU, "--name", "smooth_relu"]


def run_main(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "argv, words",
    [
        ([*EXPR_ARGS, "--param", "gamma=1"], ["gamma", "does not appear"]),
        (
            [*EXPR_ARGS, "--vars", "x,beta", "--param", "beta=1"],
            ["'beta'", "parameter", "variable"],
        ),
        ([*EXPR_ARGS, "--param", "beta=abc"], ["--param", "beta", "number", "abc"]),
        ([*EXPR_ARGS, "--param", "beta=inf"], ["beta", "finite"]),
        ([*EXPR_ARGS, "--param", "beta=-inf"], ["beta", "finite"]),
        ([*EXPR_ARGS, "--param", "beta=nan"], ["beta", "finite"]),
        ([*EXPR_ARGS, "--param", "beta=1e400"], ["beta", "finite"]),
        ([*EXPR_ARGS, "--param", "beta="], ["--param", "number"]),
        ([*EXPR_ARGS, "--param", "beta"], ["--param", "NAME=VALUE"]),
        ([*EXPR_ARGS, "--param", "=3"], ["--param", "NAME=VALUE"]),
        ([*EXPR_ARGS, "--param", "beta=1", "--param", "beta=2"], ["beta", "twice"]),
        ([*EXPR_ARGS, "--param", "1beta=2"], ["'1beta'"]),
        (["beta*2", "--param", "beta=1"], ["no variable"]),
        ([SMOOTH_RELU, "--name", "beta", "--param", "beta=1"], ["'beta'", "parameter"]),
        (["tf*x", "--param", "tf=1"], ["'tf'", "tensorflow"]),
        (["e*x", "--param", "e=2"], ["'e'", "constant"]),
    ],
    ids=[
        "not_in_expression",
        "also_in_vars",
        "not_a_number",
        "inf",
        "minus_inf",
        "nan",
        "overflows",
        "empty_value",
        "no_equals",
        "no_name",
        "given_twice",
        "bad_name",
        "only_parameters",
        "named_like_the_function",
        "tf_shadows_tensorflow",
        "constant_e",
    ],
)
def test_bad_parameters_exit_2_with_one_line_and_write_nothing(
    capsys, tmp_path, argv, words
):
    target = tmp_path / "out.py"
    code, out, err = run_main(capsys, [*argv, "-o", str(target)])
    assert code == 2
    assert out == ""
    assert "Traceback" not in err
    lines = err.rstrip("\n").split("\n")
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    for word in words:
        assert word in lines[0], (word, err)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "argv",
    [
        [*EXPR_ARGS, "--param", "beta=10"],
        ["a*softplus(b*x)", "--param", "b=-2", "--param", "a=1e-5", "--order", "3"],
        ["logaddexp(x, y)*s", "--vars", "y,x", "--param", "s=0.1"],
    ],
    ids=["one", "two_negative_tiny", "two_inputs"],
)
def test_header_options_reproduce_the_file(capsys, argv):
    code, out, err = run_main(capsys, argv)
    assert code == 0, err
    options = next(line for line in out.split("\n") if line.startswith("# Options: "))
    assert "--param" in options
    code, again, err = run_main(
        capsys, shlex.split(options.removeprefix("# Options: "))
    )
    assert code == 0, err
    assert again == out


def test_header_and_signature_show_the_default_as_a_float(capsys):
    code, out, _ = run_main(capsys, [*EXPR_ARGS, "--param", "beta=10"])
    assert code == 0
    assert "--param beta=10.0 " in out.split("\n")[2]
    assert "def smooth_relu(x, *, beta=10.0):" in out


# --------------------------------------------------------------------------
# the config route: [tool.generator] with params

PROJECT = """\
[tool.generator]
output = "pkg"
order = 2

[[tool.generator.functions]]
name = "smooth_relu"
expr = "log(1 + exp(beta*x))/beta"
params = { beta = 10.0 }

[[tool.generator.functions]]
name = "scaled_softplus"
expr = "a*softplus(b*x)"
params = { b = 2, a = 1.0 }
"""


def import_file(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_build_from_config_with_params(tf, tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text(PROJECT, encoding="utf-8")
    code, out, err = run_main(
        capsys, ["build", "--config", str(tmp_path / "pyproject.toml")]
    )
    assert code == 0, err
    assert "Traceback" not in err

    module = import_file(tmp_path / "pkg" / "smooth_relu.py", "built_smooth_relu")
    beta = inspect.signature(module.smooth_relu).parameters["beta"]
    assert beta.kind is inspect.Parameter.KEYWORD_ONLY and beta.default == 10.0
    for b in [10.0, 3.0]:
        refs = reference_partials(SMOOTH_RELU, ("x",), {"x": POINTS}, {"beta": b})
        check_partials(
            tf,
            lambda x: module.smooth_relu(x, beta=b),
            ("x",),
            {"x": POINTS},
            "float64",
            refs,
        )

    # The built module's Options line reproduces it on the command line.
    text = (tmp_path / "pkg" / "smooth_relu.py").read_text(encoding="utf-8")
    options = next(line for line in text.split("\n") if line.startswith("# Options: "))
    code, again, err = run_main(
        capsys, shlex.split(options.removeprefix("# Options: "))
    )
    assert code == 0, err
    assert again == text

    # Parameters keep the table's order; an integer default becomes a float.
    scaled = import_file(
        tmp_path / "pkg" / "scaled_softplus.py", "built_scaled_softplus"
    )
    assert "def scaled_softplus(x, *, b=2.0, a=1.0):" in inspect.getsource(scaled)
    refs = reference_partials(
        "a*log(1 + exp(b*x))", ("x",), {"x": POINTS}, {"a": 1.0, "b": 2.0}
    )
    check_partials(tf, scaled.scaled_softplus, ("x",), {"x": POINTS}, "float64", refs)
