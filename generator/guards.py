"""Guards: the double-where pattern for the branches of where(...) in the last level.

Up to the generated order, TensorFlow never differentiates a tf.where: each
level's gradient is our own formula, so a branch's NaN where it is not taken
cannot reach a value or a gradient. Beyond that order TF differentiates the
last level's formulas itself, and the gradient of tf.where(c, a, b) is
where(c, g, 0) pushed through a; where a is inf or NaN (exp(x) at x = 1000 in
the other branch of an ELU), 0 * inf makes a NaN.

So in the last level each branch that is not finite, or whose derivative is
not finite, somewhere it is not taken, reads its variables through
where(taken, v, safe): the untaken branch computes at a safe point, a sample
point where the branch is taken and finite. This is the classic double where.
Hands on: the last level's forms, with guarded branches, for `emit`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np
import sympy as sp

from generator import judge
from generator.primitives import apart, away, clip, pick, polyval, real_diff


# Safe points are tried in this order: round numbers first, then farther out.
SAFE_VALUES = (0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 0.25, -0.25, 10.0, -10.0, 1e-3, -1e-3, 100.0, -100.0)
MAX_CANDIDATES = 4096
# A branch larger than this, as a tree, is left unguarded: where-branches guarded within
# where-branches, each level's picks substituted into the levels inside it, grow with the
# depth, and so do their slopes. The KL divergence of probabilities, x*log(x/y) + (1 - x)*
# log((1 - x)/(1 - y)), with its slope in four nested levels, made branches of 34,000
# operations whose slopes took 18 s each: minutes for one module. The guard is a safety
# net beyond the generated order; the inner levels keep theirs.
MAX_PROBED_NODES = 5000


def guard_branches(expr: sp.Expr, defaults: dict[sp.Symbol, sp.Expr]) -> sp.Expr:
    """`expr` with every where-branch that can overflow where it is not taken guarded.

    `defaults` gives parameters the values at which branches are probed.
    """
    if not expr.has(sp.Piecewise):
        return expr
    expr = expr.replace(clip, _clip_without_pick)
    return expr.replace(lambda e: isinstance(e, sp.Piecewise), lambda e: _guard(e, defaults))


def _clip_without_pick(x: sp.Expr, lo: sp.Expr, hi: sp.Expr) -> sp.Expr:
    """clip(x, lo, hi), with the pick that bounds a regime's x (generator.regimes) dropped
    where the clip implies it: clip(pick(v < hi, v, hi), lo, hi) = clip(v, lo, hi), and
    likewise at lo. Below the last level the clip is gone and the pick bounds v alone."""
    if isinstance(x, pick):
        condition, v, bound = x.args
        if (bound == hi and condition == (v < hi)) or (bound == lo and condition == (-v < -lo)):
            return clip(v, lo, hi)
    return clip(x, lo, hi)


def branches(piecewise: sp.Piecewise) -> Iterator[tuple[sp.Expr, sp.Basic, sp.Basic, tuple[sp.Basic, ...]]]:
    """(value, condition, taken, earlier conditions) per branch; `taken` is where the branch is selected."""
    earlier: tuple[sp.Basic, ...] = ()
    for value, condition in piecewise.args:
        yield value, condition, sp.And(condition, *(sp.Not(c) for c in earlier)), earlier
        earlier += (condition,)


def _guard(piecewise: sp.Piecewise, defaults: dict[sp.Symbol, sp.Expr]) -> sp.Expr:
    return sp.Piecewise(
        *(
            (_guarded(value, taken, earlier, condition is sp.true, defaults), condition)
            for value, condition, taken, earlier in branches(piecewise)
        )
    )


def _guarded(
    value: sp.Expr,
    taken: sp.Basic,
    earlier: tuple[sp.Basic, ...],
    condition_is_last: bool,
    defaults: dict[sp.Symbol, sp.Expr],
) -> sp.Expr:
    """`value` reading its variables through a where that sends them to a safe point where
    the branch is not taken (`taken` says where it is), if it needs that."""
    if value.is_number or taken in (sp.true, sp.false) or value.has(clip, away, apart, polyval):
        # clip/away/apart/polyval: a regime's branch, which guards itself (generator.regimes,
        # generator.diagonal).
        return value
    if _tree_size(value) > MAX_PROBED_NODES:
        return value
    variables = tuple(sorted((value.free_symbols | taken.free_symbols) - set(defaults), key=lambda s: s.name))
    probe = value.xreplace(defaults)
    condition = taken.xreplace(defaults)
    try:
        # As of real arguments: sign of a guarded sum, sign(pick(...) + pick(...)), is not
        # known real, and SymPy's slope of it is a Derivative, which nothing evaluates; as a
        # real one's it is the DiracDelta that the judge takes as 0.
        slopes = [real_diff(probe, v) for v in variables]
    except (TypeError, ValueError, NotImplementedError, AttributeError, ArithmeticError):
        # SymPy cannot differentiate through some nodes (polyval's coefficient tuple,
        # an ITE condition); the guard is a safety net beyond the order, not needed for it.
        return value
    if any(s.has(sp.Derivative) for s in slopes):
        return value

    def usable(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        finite = np.isfinite(judge.evaluate32(probe, variables, points))
        for slope in slopes:
            finite &= np.isfinite(judge.evaluate32(slope, variables, points))
        return _truth(condition, variables, points), finite

    selected, finite = usable(judge.sample_points(len(variables)))
    if finite[~selected].all():
        return value
    # The first round point (in SAFE_VALUES order) where the branch is taken and finite.
    candidates = np.array(list(itertools.product(SAFE_VALUES, repeat=len(variables)))[:MAX_CANDIDATES]).T
    selected, finite = usable(candidates)
    safe = np.flatnonzero(selected & finite)
    if not safe.size:
        return value
    point = {v: sp.Float(float(candidates[k, safe[0]]), 17) for k, v in enumerate(variables)}
    if condition_is_last:
        # The last branch is taken where no earlier condition holds: reuse those conditions.
        guard = {v: pick(sp.Or(*earlier), point[v], v) for v in variables}
    else:
        guard = {v: pick(taken, v, point[v]) for v in variables}
    return value.xreplace({v: g for v, g in guard.items() if v in value.free_symbols})


def _tree_size(expr: sp.Basic) -> int:
    """The nodes of `expr` as a tree, counted up to MAX_PROBED_NODES + 1."""
    return sum(1 for _ in itertools.islice(sp.preorder_traversal(expr), MAX_PROBED_NODES + 1))


def _truth(condition: sp.Basic, variables: tuple[sp.Symbol, ...], points: np.ndarray) -> np.ndarray:
    """Where `condition` holds at the sample points, evaluated in float32 like the emitted code."""
    # A comparison of two constants is one bool, which NumPy's logical_or.reduce cannot stack
    # with the arrays beside it (max(erf(e), min(log10(y), log_sigmoid(0))) raised ValueError):
    # decided first.
    constant = {r: sp.true if _holds(r) else sp.false for r in condition.atoms(sp.Rel) if not r.free_symbols}
    condition = condition.xreplace(constant)
    fn = sp.lambdify(variables, condition, modules=[judge.NUMPY_FUNCTIONS, np])
    with np.errstate(all="ignore"):
        held = fn(*(np.asarray(p, dtype=np.float32) for p in points))
    return np.broadcast_to(np.asarray(held, dtype=bool), (points.shape[1],)).copy()


def unguarded(expr: sp.Expr) -> sp.Expr:
    """`expr` without the regimes' clip/away/apart guards: the same values wherever a branch is taken."""
    return expr.replace(clip, lambda x, lo, hi: x).replace(away, lambda x, t: x).replace(apart, lambda a, b, w: a)


def _holds(relation: sp.Rel) -> bool:
    with np.errstate(all="ignore"):
        return bool(sp.lambdify((), relation, modules=[judge.NUMPY_FUNCTIONS, np])())
