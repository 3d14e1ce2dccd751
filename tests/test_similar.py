"""Expressions like the suite's that users send, each of which a rule or a repair of this
project fixed, measured as the module's docstring reports it: bits of error of the emitted
forms in float32 (NumPy stand-ins for the TF ops) against mpmath, on the judge's grid over
the whole float range. Each case names its worst order before the fix."""

from __future__ import annotations

import re

import pytest
import sympy as sp

from generator import parse
from generator.derive import derive

# (expression, parameters, minimum share within 3 bits per order f, f', f'') and, in the
# id, what it was before
CASES = {
    "logsumexp3 (f 41.9%)": ("log(exp(x) + exp(y) + exp(z))", {}, (99.5, 99.5, 99.5)),
    "softmax2 (f 66.7%)": ("exp(x)/(exp(x) + exp(y))", {}, (99.5, 99.5, 99.5)),
    "softmax3 (f 69.6%)": ("exp(x)/(exp(x) + exp(y) + exp(z))", {}, (99.5, 99.5, 99.0)),
    "norm3 (f 49.6%)": ("sqrt(x**2 + y**2 + z**2)", {}, (99.5, 98.5, 95.0)),
    "asinh (f 75.2%)": ("log(x + sqrt(x**2 + 1))", {}, (99.5, 99.5, 99.5)),
    "cauchy (f 83.0%)": ("log(1 + x**2)", {}, (99.5, 99.5, 97.0)),
    "shifted softplus (f 66.7%)": ("log(1 + exp(x)) - log(2)", {}, (99.5, 99.5, 99.5)),
    "sqrt(-expm1) (f 67.6%)": ("sqrt(1 - exp(-x))", {}, (99.5, 99.5, 99.5)),
    "partial fractions (f 75.0%)": ("1/x + 1/(1 - x)", {}, (99.5, 97.0, 99.5)),
    # x + log1mexp(x - y) at x = 4e-36, y = -95: log1mexp(95) = -5.5e-42 is subnormal, and
    # TF's CPU kernels (so the judge) flush it to 0; the sum is then 4 bits off.
    "log-diff-exp (f 35.7%)": ("log(exp(x) - exp(y))", {}, (98.5, 99.5, 99.5)),
    "difference of roots (f 56.3%)": ("sqrt(x + 1) - sqrt(x)", {}, (99.5, 99.5, 99.5)),
    "difference of logs (f 33.6%)": ("log(x + 1) - log(x)", {}, (97.0, 99.5, 99.5)),
    "cos(x) - 1 (f 94.3%)": ("cos(x) - 1", {}, (99.5, 99.5, 99.5)),
    # The rest of each one's misses sit around the nonzero roots of f'', where any form
    # cancels in float32.
    "lorentzian (f 84.4%)": ("x/(1 + x**2)", {}, (99.5, 99.5, 97.0)),
    "odd ratio (f 74.5%)": ("x**3/(1 + x**4)", {}, (99.5, 97.0, 93.0)),
    "log of a quartic (f 74.5%)": ("log(1 + x**2 + x**4)", {}, (99.5, 99.5, 97.0)),
    "tanh squared (f'' 94.0%)": ("tanh(x)**2", {}, (99.5, 99.5, 96.0)),
    # f'' cancels on [0.25, 0.6], beyond the series; 91.1% before the judge multiplied in the
    # module's order (its CSE had put 1/x first).
    "sinc over a quadratic (f'' 59.9%)": (
        "sin(x)/(x*(1 + x**2))",
        {},
        (99.5, 96.0, 89.5),
    ),
    "softplus of a product (f'' 86.7%)": ("log(1 + exp(x*y))", {}, (99.5, 99.5, 99.5)),
    "gaussian of a difference (f'' 97.9%)": (
        "exp(-(x - y)**2)",
        {},
        (99.5, 99.5, 99.5),
    ),
    # At x = -60 (one of the judge's points since session 23), beta*x = -90: the value,
    # -5e-38, flushes on the way (tanh_softplus(-90) is subnormal).
    "mish with beta (f'' 70.5%)": (
        "x*tanh(log(1 + exp(beta*x)))",
        {"beta": 1.5},
        (98.5, 93.5, 90.0),
    ),
}
_LINE = re.compile(
    r"^(f|order \d): max [0-9.]+ bits, mean [0-9.]+ bits, ([0-9.]+)% of \d+ points within 3 bits$"
)


@pytest.mark.parametrize("key", list(CASES))
def test_accurate_over_the_whole_range(key: str) -> None:
    text, params, minimum = CASES[key]
    expr = parse.parse(text)
    names = sorted((s.name for s in expr.free_symbols if s.name not in params))
    by_name = {s.name: s for s in expr.free_symbols}
    defaults = {by_name[p]: sp.Float(v) for p, v in params.items()}
    derivation = derive(expr, tuple(by_name[n] for n in names), 2, defaults)
    shares = [float(_LINE.match(line).group(2)) for line in derivation.accuracy]
    assert len(shares) == 3, derivation.accuracy
    assert all(s >= m for s, m in zip(shares, minimum)), derivation.accuracy
