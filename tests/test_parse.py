"""The expression parser: what it accepts, what it builds, and how it rejects.

Accepted expressions are checked for their *meaning*: the parsed SymPy
expression (with stable primitives replaced by their textbook definitions) is
evaluated with mpmath and compared with an independent mpmath formula.
Rejections are checked for a message that names the problem and, where the
problem has a position, for the right column.
"""

from __future__ import annotations

import mpmath
import pytest
import sympy as sp

from generator.errors import GeneratorError
from generator.parse import FUNCTIONS, parse
from generator.primitives import naive

X = sp.Symbol("x", real=True)


def value(expr: sp.Expr, **point: float) -> mpmath.mpf:
    """The naive form of `expr` evaluated at `point` with 40 digits."""
    subs = {sp.Symbol(k, real=True): sp.Float(str(v), 40) for k, v in point.items()}
    result = sp.N(naive(expr).subs(subs), 40)
    return mpmath.mpf(str(result))


def close(a, b, rel=1e-25) -> bool:
    return abs(a - b) <= rel * max(1, abs(b))


def reject(text: str) -> GeneratorError:
    with pytest.raises(GeneratorError) as info:
        parse(text)
    return info.value


# --------------------------------------------------------------------------
# accepted constructs


@pytest.mark.parametrize(
    "text, point, reference",
    [
        ("x", {"x": 0.7}, lambda x: x),
        ("x + 2", {"x": 0.7}, lambda x: x + 2),
        ("x - 2", {"x": 0.7}, lambda x: x - 2),
        ("3*x", {"x": 0.7}, lambda x: 3 * x),
        ("x/4", {"x": 0.7}, lambda x: x / 4),
        ("x**3", {"x": 0.7}, lambda x: x**3),
        ("x**0.5", {"x": 0.7}, lambda x: mpmath.sqrt(x)),
        ("2**-x", {"x": 0.7}, lambda x: mpmath.mpf(2) ** (-x)),
        ("-x", {"x": 0.7}, lambda x: -x),
        ("+x", {"x": 0.7}, lambda x: x),
        ("-x**2", {"x": 0.7}, lambda x: -(x**2)),  # ** binds tighter than unary minus
        ("(-x)**2", {"x": 0.7}, lambda x: x**2),
        ("2*(x + 1)", {"x": 0.7}, lambda x: 2 * (x + 1)),
        ("2*x + 1", {"x": 0.7}, lambda x: 2 * x + 1),
        ("x - 1 - 1", {"x": 0.7}, lambda x: x - 2),  # left associative
        ("2**x**2", {"x": 0.7}, lambda x: mpmath.mpf(2) ** (x**2)),  # right associative
        ("0.044715*x", {"x": 0.7}, lambda x: mpmath.mpf("0.044715") * x),
        (".5*x", {"x": 0.7}, lambda x: x / 2),
        ("1e-3*x", {"x": 0.7}, lambda x: x / 1000),
        ("1.5e2*x", {"x": 0.7}, lambda x: 150 * x),
        ("1_000*x", {"x": 0.7}, lambda x: 1000 * x),
        ("pi*x", {"x": 0.7}, lambda x: mpmath.pi * x),
        ("e**x", {"x": 0.7}, lambda x: mpmath.exp(x)),
        ("e*x", {"x": 0.7}, lambda x: mpmath.e * x),
        ("  x * 2  ", {"x": 0.7}, lambda x: 2 * x),
    ],
)
def test_accepts_arithmetic(text, point, reference):
    expr = parse(text)
    with mpmath.workdps(40):
        expected = reference(*(mpmath.mpf(str(v)) for v in point.values()))
        assert close(value(expr, **point), expected), (text, expr)


def test_float_literals_are_exact_decimals():
    # 0.044715 is kept as the decimal the user wrote, not as the nearest double.
    expr = parse("0.044715*x")
    assert expr == sp.Rational(44715, 1000000) * X
    assert parse("0.1*x") == sp.Rational(1, 10) * X


def test_names_become_real_symbols():
    expr = parse("x*y/z + long_name_2")
    names = {s.name for s in expr.free_symbols}
    assert names == {"x", "y", "z", "long_name_2"}
    assert all(s.is_real for s in expr.free_symbols)


def test_constants_are_not_variables():
    expr = parse("pi*x + e")
    assert {s.name for s in expr.free_symbols} == {"x"}
    assert expr == sp.pi * X + sp.E


# Every whitelisted function with an independent mpmath definition.
UNARY_REFERENCES = {
    "exp": (0.7, mpmath.exp),
    "log": (0.7, mpmath.log),
    "log1p": (0.7, lambda x: mpmath.log(1 + x)),
    "expm1": (0.7, lambda x: mpmath.exp(x) - 1),
    "log2": (0.7, lambda x: mpmath.log(x, 2)),
    "log10": (0.7, mpmath.log10),
    "sqrt": (0.7, mpmath.sqrt),
    "sin": (0.7, mpmath.sin),
    "cos": (0.7, mpmath.cos),
    "tan": (0.7, mpmath.tan),
    "sinh": (0.7, mpmath.sinh),
    "cosh": (0.7, mpmath.cosh),
    "tanh": (0.7, mpmath.tanh),
    "asin": (0.7, mpmath.asin),
    "acos": (0.7, mpmath.acos),
    "atan": (0.7, mpmath.atan),
    "asinh": (0.7, mpmath.asinh),
    "acosh": (1.7, mpmath.acosh),
    "atanh": (0.7, mpmath.atanh),
    "erf": (0.7, mpmath.erf),
    "erfc": (0.7, mpmath.erfc),
    "abs": (-0.7, abs),
    "sigmoid": (0.7, lambda x: 1 / (1 + mpmath.exp(-x))),
    "softplus": (0.7, lambda x: mpmath.log(1 + mpmath.exp(x))),
    "log_sigmoid": (0.7, lambda x: mpmath.log(1 / (1 + mpmath.exp(-x)))),
    "log1mexp": (0.7, lambda x: mpmath.log(1 - mpmath.exp(-x))),
    # log|gamma(x)|, below 0 too (gamma(-2.5) = -0.945).
    "lgamma": (-2.5, lambda x: mpmath.log(abs(mpmath.gamma(x)))),
    "digamma": (0.7, lambda x: mpmath.diff(mpmath.loggamma, x)),
}
BINARY_REFERENCES = {
    "logaddexp": (0.7, -1.3, lambda a, b: mpmath.log(mpmath.exp(a) + mpmath.exp(b))),
    "xlogy": (0.7, 1.3, lambda a, b: a * mpmath.log(b)),
    "xlog1py": (0.7, -0.3, lambda a, b: a * mpmath.log(1 + b)),
    "hypot": (0.7, -1.3, lambda a, b: mpmath.sqrt(a**2 + b**2)),
    # The angle of the point (b, a), as the argument of the complex number b + ia.
    "atan2": (0.7, -1.3, lambda a, b: mpmath.arg(mpmath.mpc(b, a))),
    # log|beta(a, b)|, an argument below 0 too (beta(0.7, -1.3) = 4.03).
    "lbeta": (
        0.7,
        -1.3,
        lambda a, b: mpmath.log(abs(mpmath.gamma(a) * mpmath.gamma(b) / mpmath.gamma(a + b))),
    ),
    "max": (0.7, -1.3, max),
    "min": (0.7, -1.3, min),
}
# where(cond, a, b) takes a condition; tests/test_piecewise.py covers it.
CONDITIONAL = {"where"}


def test_reference_table_covers_every_function():
    assert set(UNARY_REFERENCES) | set(BINARY_REFERENCES) | CONDITIONAL == set(FUNCTIONS)
    for name in UNARY_REFERENCES:
        assert FUNCTIONS[name].arity == 1, name
    for name in BINARY_REFERENCES:
        assert FUNCTIONS[name].arity == 2, name


@pytest.mark.parametrize("name", sorted(UNARY_REFERENCES))
def test_accepts_unary_function(name):
    point, reference = UNARY_REFERENCES[name]
    expr = parse(f"{name}(x)")
    assert {s.name for s in expr.free_symbols} == {"x"}
    with mpmath.workdps(40):
        assert close(value(expr, x=point), reference(mpmath.mpf(str(point)))), (name, expr)


@pytest.mark.parametrize("name", sorted(BINARY_REFERENCES))
def test_accepts_binary_function(name):
    a, b, reference = BINARY_REFERENCES[name]
    expr = parse(f"{name}(x, y)")
    assert {s.name for s in expr.free_symbols} == {"x", "y"}
    with mpmath.workdps(40):
        expected = reference(mpmath.mpf(str(a)), mpmath.mpf(str(b)))
        assert close(value(expr, x=a, y=b), expected), (name, expr)
    # argument order matters
    swapped = parse(f"{name}(y, x)")
    with mpmath.workdps(40):
        assert close(value(swapped, x=b, y=a), expected), (name, swapped)


def test_nested_calls_and_suite_expressions():
    expr = parse("x*(1 + tanh(sqrt(2/pi)*(x + 0.044715*x**3)))/2")
    with mpmath.workdps(40):
        x = mpmath.mpf("0.7")
        expected = x * (1 + mpmath.tanh(mpmath.sqrt(2 / mpmath.pi) * (x + mpmath.mpf("0.044715") * x**3))) / 2
        assert close(value(expr, x=0.7), expected)


# --------------------------------------------------------------------------
# rejections


@pytest.mark.parametrize(
    "text, words, column",
    [
        ("x.real", ["attribute"], 0),
        ("x + x.__class__", ["attribute"], 4),
        ("x[0]", ["subscript"], 0),
        ("2*x[1:2]", ["subscript"], 2),
        ("(lambda y: y)(x)", ["named functions"], 0),
        ("x + (lambda: 1)", ["lambda"], 5),
        ("'abc'", ["string"], 0),
        ("x + 'abc'", ["string"], 4),
        ("x + b'abc'", ["string"], 4),
        ("x < 1", ["comparison"], 0),
        ("1 + (x == 1)", ["comparison"], 5),
        ("x and 1", ["'and'", "condition of where"], 0),
        ("not x", ["'not'", "condition of where"], 0),
        ("where(x, 1, 2)", ["condition", "comparison", "not x"], 6),
        ("where(x is 1, 1, 2)", ["'is'"], 6),
        ("where(x > 1 and y, 1, 2)", ["condition", "not y"], 16),
        ("where(x > 1, x)", ["takes 3 arguments"], 0),
        ("max(x)", ["takes 2 arguments"], 0),
        ("x if x else 1", ["conditional"], 0),
        ("[x]", ["list"], 0),
        ("(x, 1)", ["tuple"], 0),
        ("f'{x}'", ["f-string"], 0),
        ("True + x", ["bool"], 0),
        ("x // 2", ["'//'"], 0),
        ("x % 2", ["'%'"], 0),
        ("~x", ["'~'"], 0),
        ("__x", ["'__x'", "letter"], 0),
        ("x + _y", ["'_y'", "letter"], 4),
        ("x + __class__", ["'__class__'"], 4),
        ("__import__('os')", ["unknown function", "'__import__'"], 0),
        ("foo(x)", ["unknown function", "'foo'"], 0),
        ("x + bar(x)", ["unknown function", "'bar'"], 4),
        ("math.exp(x)", ["named functions"], 0),
        ("sin(x)(x)", ["named functions"], 0),
        ("exp", ["'exp'", "function"], 0),
        ("exp(x=1)", ["keyword"], 0),
        ("exp(*x)", ["starred"], 0),
        ("x ** 1001", ["exponent", "1001"], 5),
        ("x/0", ["division by zero"], 0),
        ("1e400*x", ["not finite"], 0),
        ("match + x", ["'match'", "keyword"], 0),
    ],
)
def test_rejects_construct(text, words, column):
    error = reject(text)
    for word in words:
        assert word.lower() in error.message.lower(), (text, error.message)
    assert error.column == column, (text, error.column, error.message)
    rendered = error.render()
    # The caret sits under the offending column.
    lines = rendered.split("\n")
    assert lines[0].startswith("error: ")
    assert f"(at column {column + 1})" in lines[0]
    assert lines[1] == "  " + text
    assert lines[2] == "  " + " " * column + "^"


def test_leading_spaces_shift_the_column():
    error = reject("   foo(x)")
    assert error.column == 3
    assert error.render().split("\n")[2] == "  " + " " * 3 + "^"


ALL_FUNCTIONS = sorted(FUNCTIONS)


@pytest.mark.parametrize("name", ALL_FUNCTIONS)
def test_rejects_wrong_number_of_arguments(name):
    arity = FUNCTIONS[name].arity
    for count in (arity - 1, arity + 1):
        args = ", ".join(["x"] * count)
        text = f"y + {name}({args})"
        error = reject(text)
        assert f"{name}()" in error.message
        assert f"takes {arity} argument" in error.message
        assert f"got {count}" in error.message
        assert error.column == 4, (text, error.column)


@pytest.mark.parametrize("text", ["", "   ", "\t"])
def test_rejects_empty(text):
    error = reject(text)
    assert "empty" in error.message


@pytest.mark.parametrize(
    "text, column",
    [
        ("(x + 1", 0),  # the '(' that is never closed
        ("exp(x", 3),
        ("x + 1)", 5),  # the unmatched ')'
    ],
)
def test_rejects_unbalanced_parentheses(text, column):
    error = reject(text)
    assert error.message.startswith("syntax error")
    assert "(" in error.message or ")" in error.message
    assert error.column == column, (text, error.column)


def test_rejects_dangling_operator():
    error = reject("x +")
    assert error.message.startswith("syntax error")


@pytest.mark.parametrize("text", ["x +", "x ** "])
def test_dangling_operator_column_points_at_the_end(text):
    error = reject(text)
    assert error.column is not None
    assert error.column >= len(text.rstrip()) - 1, (text, error.column)


@pytest.mark.parametrize("text", ["1 + 2", "pi*e", "exp(1)", "x - x", "2*pi", "e"])
def test_rejects_constant_only(text):
    error = reject(text)
    assert "constant" in error.message


def test_rejects_multiline():
    error = reject("x\n+ y")
    assert "one line" in error.message
    assert error.column == 1


def test_rejects_non_ascii():
    error = reject("x + \u03b1")
    assert "non-ASCII" in error.message
    assert error.column == 4


def test_render_without_position_is_one_line():
    error = reject("")
    assert error.column is None
    assert error.render() == "error: the expression is empty"


def test_parse_never_evaluates_input(tmp_path, monkeypatch):
    # A payload that would create a file if anything evaluated it.
    target = tmp_path / "pwned"
    monkeypatch.chdir(tmp_path)
    for text in [
        f"__import__('pathlib').Path('{target}').touch()",
        "exp(x).__class__.__bases__",
        f"open('{target}', 'w')",
    ]:
        with pytest.raises(GeneratorError):
            parse(text)
    assert not target.exists()
