"""The continuous acquisition optimiser (core/optimize.py): random screening, then multi-start
L-BFGS-B with analytic gradients."""

from __future__ import annotations

import numpy as np
import pytest

from frontierbo.core.exact import ExactGP
from frontierbo.core.kernels import Matern52
from frontierbo.core.optimize import maximize_acquisition, maximize_from_starts, ucb_and_gradient


def _ucb(d=3, n=15, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    gp = ExactGP(X, np.sin(3 * X).sum(axis=1), Matern52(0.7, 1.0), 1e-6)

    def value_and_gradient(x):
        return ucb_and_gradient(*gp.mean_variance_gradient(x), 2.0, 1e-10)

    def batch(points):
        mean, var = gp.predict(points)
        return mean + 2.0 * np.sqrt(np.maximum(var, 1e-10))

    return gp, batch, value_and_gradient


def test_ucb_gradient_matches_finite_differences_and_is_flat_below_the_floor():
    _, batch, value_and_gradient = _ucb()
    x = np.array([0.3, -0.2, 0.5])
    value, grad = value_and_gradient(x)
    assert value == pytest.approx(batch(x[None])[0], abs=1e-12)
    fd = [(batch((x + h)[None])[0] - batch((x - h)[None])[0]) / 2e-6 for h in 1e-6 * np.eye(3)]
    np.testing.assert_allclose(grad, fd, atol=1e-6)
    value, grad = ucb_and_gradient(1.0, 0.0, np.ones(2), np.ones(2), 3.0, 1e-10)
    assert value == 1.0 + 3.0 * 1e-5 and np.array_equal(grad, np.ones(2))


def test_the_optimiser_beats_its_pool_and_stays_in_the_box():
    gp, batch, value_and_gradient = _ucb()
    bounds = [(-1.0, 1.0), (-0.5, 0.5), (0.0, 1.0)]
    x, value = maximize_acquisition(
        batch, value_and_gradient, bounds, np.random.default_rng(3),
        n_random=500, n_batches=3, n_starts=4, include=gp.X, maxiter=200,
    )  # fmt: skip
    # the same generator state gives the same pool: batches of 167, 167 and 166, data in the first
    rng = np.random.default_rng(3)
    lower, upper = np.array(bounds).T
    pool = np.vstack([rng.uniform(lower, upper, size=(k, 3)) for k in (167, 167, 166)])
    assert value >= batch(pool).max() - 1e-12
    assert value == pytest.approx(batch(x[None])[0], abs=1e-10)
    assert np.all((lower <= x) & (x <= upper))
    again = maximize_acquisition(
        batch, value_and_gradient, bounds, np.random.default_rng(3),
        n_random=500, n_batches=3, n_starts=4, include=gp.X, maxiter=200,
    )  # fmt: skip
    assert np.array_equal(again[0], x) and again[1] == value  # seeded


def test_a_start_is_kept_unless_an_optimiser_end_is_strictly_better():
    def flat(x):
        return 0.0, np.zeros_like(x)

    start = np.array([[0.25, -0.5]])
    x, value = maximize_from_starts(flat, start, 0.0, [(-1.0, 1.0)] * 2, maxiter=10)
    assert np.array_equal(x, start[0])
    assert value == 0.0
    with pytest.raises(ValueError, match="starts must be"):
        maximize_from_starts(flat, np.zeros((1, 3)), 0.0, [(-1.0, 1.0)] * 2, maxiter=10)
