"""The judge's points around nonzero roots, where cancellation loses bits that the grid misses."""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from generator import judge

x, y = sp.symbols("x y", real=True)


def _roots_seen(expr: sp.Expr) -> np.ndarray:
    near = judge._near_roots(expr, (x,))[0][0]
    # Points come in fours around each root: r(1 - d1), r(1 + d1), r(1 - d2), r(1 + d2).
    return near.reshape(-1, 4)[:, 2:].mean(axis=1)


def test_finds_the_root_between_grid_points() -> None:
    roots = _roots_seen(sp.log(x) + 1)
    assert len(roots) == 1
    assert math.isclose(roots[0], math.exp(-1), rel_tol=1e-6)


def test_a_root_on_a_grid_point_and_roots_of_both_signs() -> None:
    assert math.isclose(_roots_seen(2 * x - 1)[0], 0.5, rel_tol=1e-6)
    assert sorted(np.round(_roots_seen(x**2 - 2), 5)) == [-1.41421, 1.41421]


def test_no_points_without_a_nonzero_root() -> None:
    for expr in (sp.exp(x), x, x**3, 1 / x, sp.log(1 + sp.exp(x))):
        assert judge._near_roots(expr, (x,))[0].size == 0, expr


def test_at_most_max_roots_nearest_zero() -> None:
    roots = _roots_seen(sp.sin(x))
    assert len(roots) == judge.MAX_ROOTS
    # Each a multiple of pi: within 1e-5 of one.
    assert all(abs(r / math.pi - round(r / math.pi)) < 1e-5 / math.pi for r in roots)


def test_the_judge_scores_near_roots() -> None:
    # log(x) + 1 cancels near 1/e: on the grid alone it looks exact.
    points, truth, _ = judge.judged_points(sp.log(x) + 1, (x,))
    grid = judge.sample_points(1)
    assert points.shape[1] == grid.shape[1] + 4
    bits = judge.accuracy(sp.log(x) + 1, sp.log(x) + 1, (x,))
    assert bits.max() > 6


def test_several_variables_use_the_sample_points_only() -> None:
    points, _, _ = judge.judged_points(x - y, (x, y))
    assert points.shape == judge.sample_points(2).shape
