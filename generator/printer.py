"""Print SymPy expressions as TensorFlow code (and as plain math for docstrings).

A SymPy printer in the usual style: `_print_<Class>` methods and a mapping
from functions to TF ops. It never imports TensorFlow. It records which
module-level helpers (`_hypot`, ...) the printed code uses, and, being strict,
raises on anything it cannot print rather than emit half-valid code.
Hands on: strings of Python code for the templates.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterator, Mapping

import sympy as sp
from sympy.printing.precedence import PRECEDENCE
from sympy.simplify import cse_main
from sympy.printing.str import StrPrinter

from generator import primitives as prim
from generator.errors import GeneratorError

FLOAT32_MAX = 3.4028234663852886e38

# SymPy function class -> TF op.
TF_FUNCTIONS: dict[type, str] = {
    sp.exp: "tf.math.exp",
    sp.log: "tf.math.log",
    sp.sin: "tf.math.sin",
    sp.cos: "tf.math.cos",
    sp.tan: "tf.math.tan",
    sp.tanh: "tf.math.tanh",
    sp.asin: "tf.math.asin",
    sp.acos: "tf.math.acos",
    sp.atan: "tf.math.atan",
    sp.atan2: "tf.math.atan2",
    sp.asinh: "tf.math.asinh",
    sp.acosh: "tf.math.acosh",
    sp.atanh: "tf.math.atanh",
    sp.erf: "tf.math.erf",
    sp.erfc: "tf.math.erfc",
    prim.erfc: "tf.math.erfc",
    sp.Abs: "tf.math.abs",
    sp.sign: "tf.math.sign",
    prim.sigmoid: "tf.math.sigmoid",
    prim.softplus: "tf.math.softplus",
    prim.log1p: "tf.math.log1p",
    prim.expm1: "tf.math.expm1",
    prim.xlogy: "tf.math.xlogy",
    prim.xlog1py: "tf.math.xlog1py",
    prim.mul_no_nan: "tf.math.multiply_no_nan",
    prim.lgamma: "tf.math.lgamma",
}

# SymPy function class -> the same function from exp, as code with {u} and {minus_u}:
# TF's CPU kernels for cosh and sinh are not vectorised (7x and 19x an exp; see
# benchmarks/results/runtime.md), these are, and XLA lowers them the same way.
# judge.NUMPY_FUNCTIONS evaluates the same formulas.
EXP_FORMS: dict[type, str] = {
    sp.cosh: "(0.5 * (tf.math.exp({u}) + tf.math.exp({minus_u})))",
    sp.sinh: "(0.5 * (tf.math.expm1({u}) - tf.math.expm1({minus_u})))",
}

# SymPy function class -> helper defined in the generated module (templates/helpers.py.j2).
HELPERS: dict[type, str] = {
    prim.logaddexp: "_logaddexp",
    prim.log_mix: "_log_mix",
    prim.log1mexp: "_log1mexp",
    prim.log1pmx: "_log1pmx",
    prim.expm1mx: "_expm1mx",
    prim.hypot: "_hypot",
    prim.hypot_ratio: "_hypot_ratio",
    prim.hypot_ratio_gap: "_hypot_ratio_gap",
    prim.pnorm: "_pnorm",
    prim.pnorm_ratio: "_pnorm_ratio",
    prim.logcosh: "_logcosh",
    prim.sinpi: "_sinpi",
    prim.cospi: "_cospi",
    prim.mul_exp: "_mul_exp",
    prim.mul_pow: "_mul_pow",
    prim.exp_finite: "_exp_finite",
    prim.add_error: "_add_error",
    prim.sub_error: "_sub_error",
    prim.product_error: "_product_error",
    prim.square_error: "_square_error",
    prim.division_error: "_division_error",
    prim.bounded_error: "_bounded_error",
    prim.lift: "_lift",
    prim.lowered: "_lowered",
    prim.lowered_no_nan: "_lowered_no_nan",
    prim.compensated_sum: "_compensated_sum",
    prim.sigmoid_from_exp: "_sigmoid",
    prim.sigmoid_slope: "_sigmoid_slope",
    prim.tanh_softplus: "_tanh_softplus",
    prim.tanh_softplus_slope: "_tanh_softplus_slope",
    prim.mills: "_mills",
    prim.mills_gap: "_mills_gap",
    prim.mills_gap_slope: "_mills_gap_slope",
    prim.mills_curvature: "_mills_curvature",
    prim.lbeta: "_lbeta",
    prim.lgamma_diff: "_lgamma_diff",
    prim.lgamma_kernel: "_lgamma_kernel",
    prim.log_digamma_gap: "_log_digamma_gap",
}

_MILLS_FAMILY = ("_mills", "_mills_gap", "_mills_gap_slope", "_mills_curvature", "_mills_parts")

# Helpers whose custom gradients call other helpers: emitted together.
HELPER_PARTNERS: dict[str, tuple[str, ...]] = {
    "_tanh_softplus": ("_tanh_softplus_slope",),
    "_tanh_softplus_slope": ("_tanh_softplus",),
    # Each one's gradient calls the next (mills -> gap -> slope -> curvature): the family whole,
    # so that TF's own gradients beyond the module's order find every name.
    **dict.fromkeys(("_mills", "_mills_gap", "_mills_gap_slope", "_mills_curvature"), _MILLS_FAMILY),
    "_digamma": ("_cot_pi",),
    "_sinpi": ("_pi_reduced",),
    "_cospi": ("_pi_reduced",),
    "_polygamma": ("_cot_pi", "_cot_slope"),
    "_lbeta": ("_lgamma_correction", "_lgamma_correction_gap", "_lgamma_stirling_gap", "_power_sums", "_bernoulli"),
    "_product_error": ("_split_halves",),
    "_square_error": ("_split_halves",),
    "_division_error": ("_product_error", "_split_halves"),
    "_lowered_no_nan": ("_lowered",),
    "_log1pmx": ("_polyval",),
    "_expm1mx": ("_polyval",),
    "_lgamma_diff": ("_lgamma_stirling_gap", "_lgamma_correction_gap", "_power_sums", "_bernoulli"),
    "_lgamma_kernel": ("_log1pmx", "_polyval", "_lgamma_correction", "_bernoulli"),
    "_log_digamma_gap": ("_bernoulli",),
    # And _digamma or _polygamma, by n (the printer adds the one it calls).
    "_polygamma_diff": ("_power_sums", "_bernoulli", "_cot_pi", "_cot_slope"),
}


# A `*` or `/` between two non-space characters, not part of `**`.
_BARE_PRODUCT = re.compile(r"(?<=[^\s*])([*/])(?=[^\s*])")


@functools.lru_cache(maxsize=4096)
def number_literal(value: sp.Expr) -> str:
    """A Python float literal for a real SymPy number (exact to double precision).
    Cached: the judge prints each candidate, and candidates share their constants."""
    if value.is_Integer:
        return f"{int(value)}.0" if abs(int(value)) < 10**15 else repr(float(value))
    try:
        number = complex(prim.numeric(value, 30))
    except TypeError:
        raise GeneratorError(f"the constant {value} has no numeric value") from None
    if number.imag != 0:
        raise GeneratorError(f"the constant {value} is not real")
    if math.isnan(number.real):
        raise GeneratorError(f"the constant {value} is undefined (nan)")
    if math.isinf(number.real) and value.is_Float:
        # A float constant that SymPy took out of an exp: exp(1e25*log(3) - x) is
        # exp(1.0986e25)*exp(-x) in some rewrites, inf*0 where the truth is finite.
        raise GeneratorError("a derived form holds a constant beyond float64 (SymPy took it out of an exp)")
    if math.isinf(number.real):
        # A branch at a pole: lgamma(max(x, 0)) is lgamma(0) = inf for x < 0, as TF's lgamma.
        # repr would write `inf`, an undefined name in the module.
        return 'float("inf")' if number.real > 0 else '-float("inf")'
    return repr(float(number.real))


def constant_like(value: sp.Expr, tensor: str) -> str:
    """A tensor of `tensor`'s shape and dtype filled with the constant `value`."""
    if value.is_zero:
        return f"tf.zeros_like({tensor})"
    if (value - 1).is_zero:
        return f"tf.ones_like({tensor})"
    return f"{number_literal(value)} * tf.ones_like({tensor})"


def cse_whole_products(exprs: list[sp.Expr], symbols: Iterator[sp.Symbol]) -> tuple[list[tuple[sp.Symbol, sp.Expr]], list[sp.Expr]]:
    """SymPy's cse, but a product is shared only whole: SymPy's also shares a part of one
    product with another (a*b*c and a*b/d as t = a*b), which changes the order in which the
    first is multiplied. The judge scores each partial alone, so such a part, shared with a
    sibling partial, had the module compute exp(-(x/s)**2/2)/s*((x/s)/s), inf*0 where the
    judged (x/s)*(exp/s)/s is 0 (the Gaussian density's slope at x = 0.039, s = 1.6e-27)."""
    opt_subs = {k: v for k, v in cse_main.opt_cse(exprs, "canonical").items() if not _part_of_product(k, v)}
    return cse_main.tree_cse(exprs, symbols, opt_subs, "canonical", ())


def _part_of_product(expr: sp.Expr, substitute: object) -> bool:
    """Whether cse would compute the product `expr` from a part shared with another product
    (its negation, -1 times the rest, is exact and stays)."""
    return (
        isinstance(expr, sp.Mul)
        and isinstance(substitute, cse_main.Unevaluated)
        and substitute.func is sp.Mul
        and substitute.args[0] is not sp.S.NegativeOne
    )


def inline_trivial(
    replacements: list[tuple[sp.Symbol, sp.Expr]], reduced: list[sp.Expr]
) -> tuple[list[tuple[sp.Symbol, sp.Expr]], list[sp.Expr]]:
    """Temporaries that hold a constant, or only rename another, put back where they are
    used. A constant is printed as a literal where it is used: a temporary holding a bare
    Python float would reach TF ops (and custom-gradient outputs) as float32, and in the
    judge's NumPy a float64 scalar that made the whole product float64 (sqrt(6) shared by
    three terms of (1 + 8*x**2/3)**0.25''s slope: judged exact, 3.5 bits off in TF). A
    temporary that only renames another (SymPy's cse leaves t11 = t10 where ipow(t10, 1)
    was) is that other."""
    inline: dict[sp.Symbol, sp.Expr] = {}
    kept = []
    for sym, sub in replacements:
        sub = sub.xreplace(inline)
        if prim.is_held(sub) and sub.args[0].is_Symbol:
            sub = sub.args[0]
        if sub.is_number or sub.is_Symbol:
            inline[sym] = sub
        else:
            kept.append((sym, sub))
    return kept, [e.xreplace(inline) for e in reduced]


def divide_in_place(
    replacements: list[tuple[sp.Symbol, sp.Expr]], reduced: list[sp.Expr]
) -> tuple[list[tuple[sp.Symbol, sp.Expr]], list[sp.Expr]]:
    """Reciprocal temporaries (t = 1/h) put back where they are used, so that they print as
    divisions: x / h is one rounding, and 1/h alone flushes to 0 where h > 8.5e37 in
    float32 (d hypot/dx at x = -3e38 came out -0, not -1). A compound h gets its own
    temporary (as does h**2 for 1/h**2), so that it is still computed once. The judge's
    CSE does the same (judge._cse): a product is evaluated as the module computes it."""
    bases = sp.numbered_symbols("_base")
    inline: dict[sp.Symbol, sp.Expr] = {}
    kept: list[tuple[sp.Symbol, sp.Expr]] = []
    for sym, sub in replacements:
        sub = _put_back(sub, inline)
        if sub.is_Pow and sub.exp.is_Integer and sub.exp < 0:
            base = sub.base**-sub.exp
            if not base.is_Symbol:
                base_sym = next(bases)
                kept.append((base_sym, base))
                base = base_sym
            inline[sym] = 1 / base
        else:
            kept.append((sym, sub))
    return kept, [_put_back(e, inline) for e in reduced]


def _put_back(expr: sp.Expr, inline: dict[sp.Symbol, sp.Expr]) -> sp.Expr:
    """`expr` with the reciprocal temporaries put back, a power of one as a power of the
    quotient, ipow(1/h, k): cse made t**k of the form's ipow(1/h, k) (ipow of a symbol is
    a plain power), and t**k with t = 1/h is 1/h**k to SymPy, which flushes where h**k
    does (log(x)'' chosen as (1/x)**2, shared with f' = 1/x, was printed -1/x**2)."""
    if not inline:
        return expr
    powers = {
        p: prim.ipow(inline[p.base], p.exp)
        for p in expr.atoms(sp.Pow)
        if p.base in inline and p.exp.is_Integer and p.exp >= 2
    }
    return expr.xreplace(powers).xreplace(inline) if powers else expr.xreplace(inline)


class ProductOrder:
    """How a product is printed, shared by TFPrinter and the judge's NumPy printer: the judge
    must multiply and divide in the order the module does. Float products are not
    associative: -(1 + t)*(t - 1)/s at t = 1e21, s = 1e15 overflows as written, and is
    -1e27 when 1/s is multiplied in first (as the judge's CSE had it)."""

    def _print_number(self, expr: sp.Expr) -> str:
        raise NotImplementedError

    def _ordered(self, factors: list[sp.Expr]) -> list[sp.Expr]:
        """The factors of a product in the order they are multiplied: as SymPy orders them."""
        return factors

    def _print_Mul(self, expr: sp.Mul) -> str:
        if expr.is_number:
            return self._print_number(expr)
        numeric = [a for a in expr.args if a.is_number]
        others = self._ordered([a for a in expr.args if not a.is_number])
        coeff = sp.Mul(*numeric) if numeric else sp.Integer(1)
        denominators = [a for a in others if a.is_Pow and a.exp.is_Integer and a.exp < 0]
        if len(denominators) > 1 or denominators == others:
            # One division per factor: a / b / c, not a / (b * c), whose product can flush
            # to 0 or overflow where the quotient is finite (1/(expm1(x)*expm1(-x)) at x = 1e-19).
            # A number over one factor is c / b, one rounding, as the judge evaluates it.
            numerator = [a for a in others if a not in denominators]
            text = (
                self.parenthesize(sp.Mul(*([coeff] if coeff != 1 else []), *numerator, evaluate=False), PRECEDENCE["Mul"])
                if numerator
                else self._print_number(coeff)
            )
            for d in denominators:
                text = f"{text} / {self.parenthesize(1 / d, PRECEDENCE['Mul'] + 1)}"
            return text
        rest = super()._print_Mul(sp.Mul(*others, evaluate=False)) if len(others) > 1 else self.parenthesize(
            others[0], PRECEDENCE["Mul"]
        )
        if coeff == 1:
            return rest
        if coeff == -1:
            return f"-{rest}"
        return f"{self._print_number(coeff)} * {rest}"

    def _print_Add(self, expr: sp.Add, order: str | None = None) -> str:
        # A number is added last to a sum of two inputs or more: c + y - x at x = y = 1e30
        # is (c + y) - x = 0, where (y - x) + c is c (the slopes of a weighted log-sum-exp,
        # sigmoid(log(7/3) + y - x)). SymPy puts the number first. Only inputs (times
        # numbers): over the float range they are mostly far larger or smaller than c; a
        # term near c in size (1 - sigmoid(x) - t) is better with c first.
        args = expr.args
        if len(args) > 2 and args[0].is_number and all(a.as_coeff_Mul()[1].is_Symbol for a in args[1:]):
            expr = sp.Add(*args[1:], args[0], evaluate=False)
        return super()._print_Add(expr, order)


def _bounded_argument(u: sp.Expr) -> bool:
    """Whether u is an input (times a number of size at most 1) plus numbers: finite where
    the inputs are (c + x rounds to x far out), so never an infinity."""
    terms = [t for t in sp.Add.make_args(u) if not t.is_number]
    if len(terms) > 1:
        return False
    if not terms:
        return True
    coeff, rest = terms[0].as_coeff_Mul()
    return rest.is_Symbol and abs(coeff) <= 1


def _without_guards(expr: sp.Expr) -> sp.Expr:
    """`expr` with each guard where(taken, v, point) (generator.guards) as its v: the value
    wherever the branch that it guards is taken."""
    guards = {
        p: p.args[2] if p.args[1].is_number else p.args[1]
        for p in expr.atoms(prim.pick)
        if p.args[1].is_number != p.args[2].is_number
    }
    return expr.xreplace(guards) if guards else expr


class TFPrinter(ProductOrder, StrPrinter):
    """SymPy expression -> TensorFlow code over named tensors."""

    def __init__(self, dtype_of: str, definitions: Mapping[sp.Symbol, sp.Expr] | None = None) -> None:
        super().__init__({"order": "none"})
        # A tensor whose dtype constants inside helper calls must take.
        self.dtype_of = dtype_of
        self.helpers: set[str] = set()
        # Each temporary's expression in the inputs: a product's factors are multiplied in
        # the order SymPy gives the expression the judge measured, not the order of the
        # temporaries' names (y*(y - 1)*x**(y - 2) as y * y_minus_1 * pow is inf*0 = NaN at
        # x = y = -2.5e38, where the judged y*pow*(y - 1) is 0).
        self.definitions = definitions if definitions is not None else {}

    def _ordered(self, factors: list[sp.Expr]) -> list[sp.Expr]:
        if not self.definitions:
            return factors
        # Each factor's expression once, not once per comparison; a guarded input,
        # pick(taken, x, 1), compares as the x the judge multiplies (-2*(y/t)**2*(x*y) of
        # atan(x*y)'s f'' ordered by its guarded factors overflows at x = -2.7e-23, y = 1.4e19).
        defined = [
            _without_guards(f.xreplace(self.definitions) if f.free_symbols & self.definitions.keys() else f)
            for f in factors
        ]
        order = sorted(range(len(factors)), key=functools.cmp_to_key(lambda i, j: sp.Basic.compare(defined[i], defined[j])))
        return [factors[i] for i in order]

    def doprint(self, expr: sp.Expr) -> str:  # type: ignore[override]
        # SymPy joins factors as `a*b` and `a/b`; black writes `a * b`. Printed its way, a
        # module whose lines fit is black-clean as rendered, and black.format_str skips its
        # second pass (13 ms of a cold CLI run). Its one string literal, float("inf"), has no * or /.
        return _BARE_PRODUCT.sub(r" \1 ", self._print(expr))

    # numbers --------------------------------------------------------------
    def _print_number(self, expr: sp.Expr) -> str:
        return number_literal(expr)

    def _print_Integer(self, expr: sp.Integer) -> str:
        return self._print_number(expr)

    def _print_Rational(self, expr: sp.Rational) -> str:
        return self._print_number(expr)

    def _print_Float(self, expr: sp.Float) -> str:
        return self._print_number(expr)

    def _print_NumberSymbol(self, expr: sp.Expr) -> str:
        return self._print_number(expr)

    _print_Pi = _print_NumberSymbol
    _print_Exp1 = _print_NumberSymbol

    def _print_Symbol(self, expr: sp.Symbol) -> str:
        return expr.name

    def _print_Expr(self, expr: sp.Expr) -> str:
        raise ValueError(f"cannot print {type(expr).__name__} as TensorFlow code: {expr}")

    # arithmetic -----------------------------------------------------------
    def _print_Pow(self, expr: sp.Pow, rational: bool = False) -> str:
        if expr.is_number:
            return self._print_number(expr)
        base, exp = expr.args
        b = self._print(base)
        if exp == sp.Rational(1, 2):
            return f"tf.math.sqrt({b})"
        if exp == -sp.Rational(1, 2):
            return f"tf.math.rsqrt({b})"
        if exp == 2:
            return f"tf.math.square({b})"
        if exp == -1:
            return f"1.0 / {self.parenthesize(base, PRECEDENCE['Mul'] + 1)}"
        if exp == -2:
            return f"1.0 / tf.math.square({b})"
        if exp.is_Integer:
            return self._integer_power(base, int(exp))
        if exp.is_number:
            return f"tf.math.pow({b}, {self._print_number(exp)})"
        return f"tf.math.pow({b}, {self._print(exp)})"

    def _integer_power(self, base: sp.Expr, k: int) -> str:
        # TF's pow kernel costs several exps on the CPU (XLA turns it into multiplies);
        # a tensor's cube and fourth power are products of squares.
        if isinstance(base, sp.Symbol) and k == 3:
            return f"(tf.math.square({base.name}) * {base.name})"
        if isinstance(base, sp.Symbol) and k == 4:
            return f"tf.math.square(tf.math.square({base.name}))"
        return f"{self.parenthesize(base, PRECEDENCE['Pow'] + 1)} ** {k}"

    # functions ------------------------------------------------------------
    def _print_args(self, expr: sp.Function) -> str:
        return self._print_arguments(expr.args)

    def _print_arguments(self, args: tuple[sp.Expr, ...]) -> str:
        # A number beside tensors as a tensor of their dtype: a helper's tf.where and
        # tf.zeros_like of a Python float are float32 (lbeta(1, sqrt(-y)) in float64).
        if len(args) == 1:
            return self._print(args[0])
        parts = []
        for arg in args:
            if arg.is_number:
                parts.append(f"tf.constant({self._print_number(arg)}, {self.dtype_of}.dtype)")
            else:
                parts.append(self._print(arg))
        return ", ".join(parts)

    def _print_Function(self, expr: sp.Function) -> str:
        if expr.is_number:
            return self._print_number(expr)
        func = type(expr)
        if func in TF_FUNCTIONS:
            return f"{TF_FUNCTIONS[func]}({self._print_args(expr)})"
        if func in EXP_FORMS:
            u = expr.args[0]
            return EXP_FORMS[func].format(u=self._print(u), minus_u=self._print(-u))
        if func is prim.logaddexp and not all(map(_bounded_argument, expr.args)):
            # An argument that can overflow (-x**2/2 at x = 1e20) can make both -inf.
            self.helpers.add("_logaddexp_any")
            return f"_logaddexp_any({self._print_args(expr)})"
        if func is prim.pnorm_ratio and expr.args[3].is_number and expr.args[3] >= 1:
            # A power of 1 or more flushes wherever the ratio does: the helper without the
            # branch for a flushed ratio, which computes the same (the judge's stand-in is
            # the general one).
            self.helpers.add("_pnorm_ratio_power")
            return f"_pnorm_ratio_power({self._print_args(expr)})"
        if func in HELPERS:
            self.helpers.add(HELPERS[func])
            self.helpers.update(HELPER_PARTNERS.get(HELPERS[func], ()))
            return f"{HELPERS[func]}({self._print_args(expr)})"
        if func is sp.polygamma:
            # lgamma's derivatives: n is an integer. TF's digamma and polygamma lose accuracy
            # near digamma's root, flush far out and go wrong below 0; the helpers mend them.
            n, u = expr.args
            name = "_digamma" if n == 0 else "_polygamma"
            self.helpers.update((name, *HELPER_PARTNERS[name]))
            return f"{name}({self._print(u)})" if n == 0 else f"{name}({int(n)}, {self._print(u)})"
        if func is prim.polygamma_diff:
            n, y, x = expr.args
            naive_helper = "_digamma" if n == 0 else "_polygamma"
            self.helpers.update(("_polygamma_diff", *HELPER_PARTNERS["_polygamma_diff"]))
            self.helpers.update((naive_helper, *HELPER_PARTNERS[naive_helper]))
            return f"_polygamma_diff({int(n)}, {self._print_arguments((y, x))})"
        if func is prim.polyval:
            coeffs, x = expr.args
            listed = ", ".join(self._print_number(c) for c in coeffs)
            self.helpers.add("_polyval")
            return f"_polyval([{listed}], {self._print(x)})"
        if func is prim.split_power:
            u, _, hi, lo = expr.args
            self.helpers.add("_split_power")
            return f"_split_power({self._print(u)}, {self._print(hi)}, {self._print(lo)})"
        if func is prim.by_dtype:
            wide, narrow = (self._print_number(a) for a in expr.args)
            return f"({wide} if {self.dtype_of}.dtype != tf.float64 else {narrow})"
        if func is prim.pick:
            condition, a, b = expr.args
            return f"tf.where({self._print(condition)}, {self._branch(a)}, {self._branch(b)})"
        if func is prim.clip:
            return self._print_clip(expr)
        if func is prim.finite:
            bounds = f"{self.dtype_of}.dtype.min, {self.dtype_of}.dtype.max"
            return f"tf.clip_by_value({self._print(expr.args[0])}, {bounds})"
        if func is prim.away:
            return self._print_away(expr)
        if func is prim.apart:
            return self._print(expr.as_picks())
        if func is prim.ipow:
            base, k = expr.args
            if k == 1:
                # A reciprocal prints as a quotient, 1.0 / (u), which SymPy's precedence
                # takes for a power: x/ipow(1/u, 1) printed x / 1.0 / (u), x/u for x*u
                # (a slope of xlog1py(c, sin(atan(x))) was 0.089 for 1.2 at x = -1.7).
                if base.is_Pow and base.exp.is_negative:
                    return f"({self._print(base)})"
                return self.parenthesize(base, PRECEDENCE["Mul"])
            if k == 2:
                return f"tf.math.square({self._print(base)})"
            return self._integer_power(base, int(k))
        return self._print_Expr(expr)

    def _print_Piecewise(self, expr: sp.Piecewise) -> str:
        *cases, (otherwise, _) = expr.args
        code = self._branch(otherwise)
        for value, condition in reversed(cases):
            code = f"tf.where({self._print(condition)}, {self._branch(value)}, {code})"
        return code

    def _branch(self, value: sp.Expr) -> str:
        if value.is_number or (not value.free_symbols and value.has(prim.by_dtype)):
            return self._scalar(value)
        return self._print(value)

    def _scalar(self, value: sp.Expr) -> str:
        # A constant operand of tf.where: a scalar of the inputs' dtype (both sides need one
        # dtype), which tf.where broadcasts. tf.zeros_like(x) would fill an input-sized
        # tensor first, one more op per call (gelu_tanh' 4-7% slower in graph mode).
        # A dtype's constant (by_dtype), or a name CSE gave it, is a Python float at trace time.
        literal = number_literal(value) if value.is_number else self._print(value)
        return f"tf.constant({literal}, {self.dtype_of}.dtype)"

    # conditions -----------------------------------------------------------
    def _print_Relational(self, expr: sp.Expr) -> str:
        lhs, rhs = self._print(expr.lhs), self._print(expr.rhs)
        if expr.rel_op == "==":
            return f"tf.math.equal({lhs}, {rhs})"
        if expr.rel_op == "!=":
            return f"tf.math.not_equal({lhs}, {rhs})"
        return f"{lhs} {expr.rel_op} {rhs}"

    def _print_And(self, expr: sp.Expr) -> str:
        return self._logical("tf.math.logical_and", expr.args)

    def _print_Or(self, expr: sp.Expr) -> str:
        return self._logical("tf.math.logical_or", expr.args)

    def _print_Not(self, expr: sp.Expr) -> str:
        return f"tf.math.logical_not({self._print(expr.args[0])})"

    def _print_ITE(self, expr: sp.Expr) -> str:
        # SymPy's if-then-else of conditions, made by folding a where into a comparison.
        return "tf.where({}, {}, {})".format(*(self._print(a) for a in expr.args))

    def _logical(self, op: str, args: tuple[sp.Basic, ...]) -> str:
        code = self._print(args[0])
        for arg in args[1:]:
            code = f"{op}({code}, {self._print(arg)})"
        return code

    def _print_clip(self, expr: sp.Expr) -> str:
        # A bound at float32's largest finite value stands for "no bound on this side": it
        # is printed as the dtype's, so that float64 inputs beyond 3.4e38 are not clipped
        # (expm1_over_x'' at x = -1e308 was its value at -3.4e38, 5e-116, not 0).
        x, lo, hi = (
            f"{self.dtype_of}.dtype.{'min' if a.is_negative else 'max'}"
            if a.is_Float and abs(float(a)) == FLOAT32_MAX
            else self._print(a)
            for a in expr.args
        )
        return f"tf.clip_by_value({x}, {lo}, {hi})"

    def _print_away(self, expr: sp.Expr) -> str:
        x, t = expr.args
        code = self._print(x)
        return f"tf.where(tf.math.abs({code}) < {self._print(t)}, {self._scalar(t)}, {code})"

    def _print_DiracDelta(self, expr: sp.Expr) -> str:
        # A point mass has no value to sample: the derivative at the kink is taken as 0.
        return f"tf.zeros_like({self._print(expr.args[0])})"

    def _print_Heaviside(self, expr: sp.Expr) -> str:
        arg = self._print(expr.args[0])
        return f"tf.where({arg} > 0, {self._scalar(sp.Integer(1))}, {self._scalar(sp.Integer(0))})"


# Rounding-error primitives (stabilize.compensate_arguments) -> the value whose error they are.
ROUNDING_ERRORS: dict[type, Callable[..., sp.Expr]] = {
    prim.add_error: lambda a, b: sp.Add(a, b, evaluate=False),
    prim.sub_error: lambda a, b: sp.Add(a, -b, evaluate=False),
    prim.product_error: lambda a, b, *residual: sp.Mul(a, b, evaluate=False),
    prim.square_error: lambda u: sp.Pow(u, 2, evaluate=False),
    prim.division_error: lambda a, b: sp.Mul(a, sp.Pow(b, -1, evaluate=False), evaluate=False),
    prim.bounded_error: lambda error, u: u,
}


class MathPrinter(StrPrinter):
    """SymPy expression -> the plain math notation used in docstrings."""

    def __init__(self) -> None:
        super().__init__({"order": "none"})

    def _print_Rational(self, expr: sp.Rational) -> str:
        if expr.q in (1, 2, 3, 4) or len(str(expr.q)) < 4:
            return super()._print_Rational(expr)
        return repr(float(expr))

    def _print_Function(self, expr: sp.Function) -> str:
        if isinstance(expr, prim.ipow):
            base, k = expr.args
            # k = 1: a quotient divided step by step, (a/b)/b; the parentheses show the order.
            return f"({self._print(base)})" if k == 1 else f"({self._print(base)})**{k}"
        if isinstance(expr, prim.compensated_sum):
            total = self._print(expr.args[0])
            return f"({total} + err({total}))"
        if isinstance(expr, prim.sigmoid_from_exp):
            return f"sigmoid({self._print(expr.args[0])})"
        if isinstance(expr, prim.split_power):
            return self._print(sp.Pow(*expr.args[:2], evaluate=False))
        if type(expr) in ROUNDING_ERRORS:
            # err(u): u's rounding error as the module computes u, whatever carries it there.
            return f"err({self._print(ROUNDING_ERRORS[type(expr)](*expr.args))})"
        return super()._print_Function(expr)

    def _print_Abs(self, expr: sp.Expr) -> str:
        return f"abs({self._print(expr.args[0])})"

    def _print_by_dtype(self, expr: sp.Expr) -> str:
        wide, narrow = expr.args
        return f"{self._print(wide)} (float64: {self._print(narrow)})"

    # Piecewise forms read as the expression language writes them.
    def _print_Relational(self, expr: sp.Expr) -> str:
        return f"{self._print(expr.lhs)} {expr.rel_op} {self._print(expr.rhs)}"

    def _print_Piecewise(self, expr: sp.Piecewise) -> str:
        *cases, (otherwise, _) = expr.args
        text = self._print(otherwise)
        for value, condition in reversed(cases):
            text = f"where({self._print(condition)}, {self._print(value)}, {text})"
        return text

    def _print_And(self, expr: sp.Expr) -> str:
        return " and ".join(self._operand(a) for a in expr.args)

    def _print_Or(self, expr: sp.Expr) -> str:
        return " or ".join(self._operand(a) for a in expr.args)

    def _print_Not(self, expr: sp.Expr) -> str:
        return f"not {self._operand(expr.args[0])}"

    def _print_ITE(self, expr: sp.Expr) -> str:
        return "where({}, {}, {})".format(*(self._print(a) for a in expr.args))

    def _operand(self, condition: sp.Basic) -> str:
        text = self._print(condition)
        return f"({text})" if isinstance(condition, (sp.And, sp.Or)) else text

    def _print_DiracDelta(self, expr: sp.Expr) -> str:
        return "0"


def math_text(expr: sp.Expr) -> str:
    # lift, lowered and finite are the identity in math: taken out before printing, the
    # arguments they moved read as written (tanh_softplus_slope(x), not of -(-2*x)/2).
    expr = expr.replace(prim.lift, lambda u: u).replace(prim.lowered, lambda p, u: p).replace(prim.finite, lambda u: u)
    return MathPrinter().doprint(expr)


