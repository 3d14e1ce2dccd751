"""Emit: turn a Derivation into the ModuleModel the templates render.

Shared subexpressions are found once across f and every order (SymPy's cse)
and each is computed at the outermost level that needs it: the forward pass
computes only what f needs, so inference never pays for gradients.
Temporaries get readable names (sigmoid_x, x_minus_m) where possible.
Hands on: a `ModuleModel` of finished code strings.
"""

from __future__ import annotations

import sympy as sp

from generator import __version__
from generator.derive import Derivation, Index
from generator.model import Assignment, DocForm, Level, ModuleModel
from generator.naming import Namer, describe, ordinal, partial_name, upstream_name
from generator.printer import TFPrinter, constant_like, cse_whole_products, divide_in_place, inline_trivial, math_text
from generator.stabilize import (
    CHOSEN_FORM_PASSES,
    GUARDS,
    REPAIRS,
    RULES,
    SOURCES,
    VARIANTS,
    compensate_arguments,
    precise_sigmoids,
    scale_tails,
)

_RULES_WHY = (
    *RULES,
    *VARIANTS,
    *REPAIRS,
    *SOURCES,
    compensate_arguments,
    scale_tails,
    precise_sigmoids,
    *CHOSEN_FORM_PASSES,
    *GUARDS,
)
_RULE_WHY = {rule.name: rule.why for rule in _RULES_WHY} | {
    "compensated_sum": "a sum of two terms that cancel keeps their rounding errors (x - m rounded before "
    "1/s - ((x - m)/s)**2/s cancels); fl(a + b) plus the error of the whole, computed exactly per operation, "
    "does not",
    "split_power": "pow(u, p) rounds p to the dtype, and the error times log(u) is the result's relative error "
    "(5 bits for u**0.9 at u = 1e38); pow(u, hi)*pow(u, lo), p in two parts, is within 1.5 ulps",
    "series": "near 0 the form is 0/0 or cancels; a Taylor polynomial serves |x| below a measured threshold",
    "pole": "at a pole at 0 the form's terms overflow into inf - inf or cancel (1/sin(x) - 1/x**2); below a "
    "measured threshold p(x)/x**m, p the Taylor polynomial of x**m times the function, serves",
    "diagonal": "where two inputs meet the form is 0/0 or cancels (a divided difference, (exp(x) - exp(y))/(x - y)); "
    "within a measured band of their difference a Taylor polynomial in it serves",
    "patch": "between the series and far out the form's terms cancel (tanh(x)/x's f'' near |x| = 1); within a "
    "measured band around the middle of the bad points the Taylor polynomial of the truth there serves",
    "root": "near a nonzero root the form's terms cancel and its relative error grows; within a measured band "
    "a Taylor polynomial in x - r, with r added in two parts so that the difference is exact, serves",
    "asymptote": "far out the form computes inf*0 or cancels; beyond a measured threshold the limit, or the "
    "leading term c(x)*exp(k*g(x)) of an exponential tail, equals the true value",
    "algebraic_tail": "far out the form's terms cancel algebraically (a difference of digammas less 1/x); beyond "
    "a measured threshold its asymptotic series in 1/x (and log(x), where it has such a term) equals the true value",
    "polynomial_far": "far out, with the signs of its abs and sign arguments fixed, the function is a polynomial "
    "(log(1 + |expm1(x)|) is x for x > 0) that the form computes as inf or with rounding; beyond a measured "
    "threshold the polynomial serves",
    "limit_at_zero": "at 0 the form is 0/0 or 0*inf and has no Taylor series (sin(x)/sqrt(x)); there the "
    "function's limit, from the side where it is real, serves",
    "exp_finite": "far out exp(u) is inf and a quotient of exponentials inf/inf; exp held below overflow "
    "gives the finite limit (used where regimes are not: with parameters, or several inputs)",
    "sigmoid_slope": "sigmoid(u)*sigmoid(-u) as exp(-|u|)/(1 + exp(-|u|))**2: one exp, half the rounding of two "
    "TF sigmoids",
    "diagonal_pairs_first": "terms that cancel where two inputs meet lose a smaller term added before them "
    "(2/D**2 - 2*x*(x/D**2) + 2*y*(y/D**2) at x = y); summed first, they cancel to their difference alone",
}


def _doc_label(index: Index, variables: tuple[str, ...]) -> str:
    if len(variables) == 1:
        return "f" + "'" * len(index) + f"({variables[0]})"
    if not index:
        return f"f({', '.join(variables)})"
    k = len(index)
    top = "d" if k == 1 else f"d{k}"
    return f"{top}f/" + " ".join(f"d{v}" for v in index)


def _share_squares(
    replacements: list[tuple[sp.Symbol, sp.Expr]], reduced: list[sp.Expr]
) -> tuple[list[tuple[sp.Symbol, sp.Expr]], list[sp.Expr]]:
    """b**3 and b**4 written from a temporary that holds b**2: cse sees b**2 and b**3 as
    unrelated, and printed they were square(b) twice. The square moves up to just after
    b's own definition, so that a cube computed before it (gelu_tanh's forward pass, its
    square held for f') can use it."""
    squares = [(sym, sub) for sym, sub in replacements if sub.is_Pow and sub.exp == 2]
    order = [pair for pair in replacements if pair not in squares]
    for sym, sub in squares:
        needs = sub.base.free_symbols
        after = max((i for i, (t, _) in enumerate(order) if t in needs), default=-1)
        order.insert(after + 1, (sym, sub))
    replacements = order
    kept: list[tuple[sp.Symbol, sp.Expr]] = []
    powers: dict[sp.Expr, sp.Expr] = {}
    for sym, sub in replacements:
        kept.append((sym, sub.xreplace(powers) if powers else sub))
        if sub.is_Pow and sub.exp == 2:
            powers[sub.base**3] = sp.Mul(sym, sub.base, evaluate=False)
            powers[sub.base**4] = sym**2
    if not powers:
        return replacements, reduced
    return kept, [e.xreplace(powers) for e in reduced]


def build_model(
    derivation: Derivation,
    *,
    name: str,
    expression: str,
    command: str,
    params: tuple[tuple[str, float], ...] = (),
    float64_inside: bool = False,
) -> ModuleModel:
    variables = tuple(v.name for v in derivation.variables)
    param_names = tuple(p for p, _ in params)
    order = derivation.order
    levels_idx = [derivation.indices(k) for k in range(order + 1)]
    flat: list[tuple[int, Index]] = [(k, idx) for k in range(order + 1) for idx in levels_idx[k]]
    exprs = [derivation.guarded.get(idx, derivation.partials[idx]) for _, idx in flat]

    replacements, reduced = inline_trivial(*cse_whole_products(exprs, sp.numbered_symbols("_cse")))
    replacements, reduced = divide_in_place(replacements, reduced)
    replacements, reduced = _share_squares(replacements, reduced)

    namer = Namer([*variables, *param_names, name])
    core = namer.claim(f"_{name}")
    dtype_var = namer.claim("dtype")
    result_var = namer.claim("result")
    out_names = {idx: namer.claim(partial_name(idx)) for _, idx in flat}
    upstreams = {idx: namer.claim(upstream_name(out_names[idx])) for k, idx in flat if k < order}
    unused = {v: namer.claim(f"unused_{v}") for v in variables}
    functions = [core] + [namer.claim(f"{ordinal(k)}_order_custom") for k in range(1, order)]
    gradients = [namer.claim(f"{ordinal(k + 1)}_order_gradient") for k in range(order)]

    # Level of each temporary: the lowest level of anything that uses it.
    temp_syms = [sym for sym, _ in replacements]
    level_of: dict[sp.Symbol, int] = {}
    for (k, _), expr in zip(flat, reduced):
        for sym in expr.free_symbols & set(temp_syms):
            level_of[sym] = min(level_of.get(sym, order), k)
    for sym, sub in reversed(replacements):
        for dep in sub.free_symbols & set(temp_syms):
            level_of[dep] = min(level_of.get(dep, order), level_of.get(sym, order))

    # A temporary that is itself an output of its own level takes the output's name
    # (d_x = tf.math.sigmoid(x), not sigmoid_x = ...; d_x = sigmoid_x).
    output_temp: dict[sp.Symbol, Index] = {}
    for (k, idx), expr in zip(flat, reduced):
        if expr in level_of and level_of[expr] == k and expr not in output_temp:
            output_temp[expr] = idx

    renamed: dict[sp.Symbol, sp.Symbol] = {}
    counter = 0
    bodies: list[list[Assignment]] = [[] for _ in range(order + 1)]
    # Each temporary's expression in the inputs, for the order of the factors of a product.
    definitions: dict[sp.Symbol, sp.Expr] = {}
    printer = TFPrinter(dtype_of=variables[0], definitions=definitions)
    for sym, sub in replacements:
        sub_named = sub.xreplace(renamed)
        if sym in output_temp:
            temp = out_names[output_temp[sym]]
        else:
            readable = describe(sub_named)
            if readable is None:
                counter += 1
                readable = f"t{counter}"
            temp = namer.claim(readable)
        renamed[sym] = sp.Symbol(temp, real=True)
        bodies[level_of.get(sym, order)].append(Assignment(temp, printer.doprint(sub_named)))
        definitions[renamed[sym]] = sub_named.xreplace(definitions)

    first = variables[0]
    for (k, idx), expr in zip(flat, reduced):
        if output_temp.get(expr) == idx:
            continue
        expr = expr.xreplace(renamed)
        if expr.is_number:
            code = constant_like(expr, first)
        else:
            code = printer.doprint(expr)
        bodies[k].append(Assignment(out_names[idx], code))

    levels: list[Level] = []
    for k in range(order + 1):
        outputs = tuple(out_names[idx] for idx in levels_idx[k])
        ups = tuple(upstreams[idx] for idx in levels_idx[k]) if k < order else ()
        grads: list[str] = []
        if k < order:
            for v in variables:
                terms = []
                for idx in levels_idx[k]:
                    child = tuple(sorted((*idx, v), key=variables.index))
                    if derivation.partials[child] == 0:
                        continue
                    if len(levels_idx[k]) > 1:
                        # An output nobody differentiates gets a zero upstream; it must
                        # contribute 0 even where its partial is inf (0 * inf is nan).
                        terms.append(f"tf.math.multiply_no_nan({out_names[child]}, {upstreams[idx]})")
                    else:
                        terms.append(f"{upstreams[idx]} * {out_names[child]}")
                grads.append(" + ".join(terms) if terms else f"tf.zeros_like({v})")
            if k == 0:
                grads += ["None"] * len(param_names)  # parameters are not differentiated
        levels.append(
            Level(
                order=k,
                function=functions[k] if k < order else "",
                gradient=gradients[k] if k < order else "",
                params=(*variables, *param_names) if k == 0 else tuple(unused[v] for v in variables),
                body=tuple(bodies[k]),
                outputs=outputs,
                upstreams=ups,
                input_gradients=tuple(grads),
            )
        )

    docs = tuple(
        DocForm(_doc_label(idx, variables), math_text(derivation.partials[idx])) for _, idx in flat
    )
    return ModuleModel(
        name=name,
        core=core,
        dtype_var=dtype_var,
        result_var=result_var,
        expression=expression,
        command=command,
        generator_version=__version__,
        inputs=variables,
        params=tuple((p, repr(float(value))) for p, value in params),
        order=order,
        levels=tuple(levels),
        docs=docs,
        rewrites=tuple(f"{r}: {_RULE_WHY[r]}" for r in derivation.rewrites),
        accuracy=derivation.accuracy,
        helpers=tuple(sorted(printer.helpers)),
        float64_inside=float64_inside,
    )
