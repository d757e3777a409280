"""The one sampler of GP draws (core/sampling.py): square roots, Kronecker-factored grids."""

from __future__ import annotations

import numpy as np
import pytest

from frontierbo.core import (
    SquaredExponential,
    grid_points,
    psd_root,
    sample_kronecker,
    sample_se_on_grid,
)
from frontierbo.core.sampling import sample_from_roots


def test_psd_root_reproduces_a_singular_smooth_kernel_matrix():
    g = np.linspace(0.0, 10.0, 60)[:, None]
    K = SquaredExponential(3.0, 2.0)(g)  # numerically singular: Cholesky would need jitter
    R = psd_root(K)
    np.testing.assert_allclose(R @ R.T, K, atol=1e-12)


def test_psd_root_rejects_indefinite_and_asymmetric_matrices():
    with pytest.raises(ValueError, match="positive semi-definite"):
        psd_root(np.array([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match="symmetric"):
        psd_root(np.array([[1.0, 0.5], [0.0, 1.0]]))


def test_kronecker_path_equals_the_dense_kronecker_root_on_the_same_normals():
    rng = np.random.default_rng(3)
    A = rng.standard_normal((4, 4))
    B = rng.standard_normal((3, 5))
    K1, K2 = A @ A.T, B @ B.T + np.eye(3)
    fast = sample_kronecker([K1, K2], size=6, seed=11)
    w = np.random.default_rng(11).standard_normal((6, 4, 3)).reshape(6, -1)
    dense = w @ np.kron(psd_root(K1), psd_root(K2)).T  # the reference path: (R1 (x) R2) w
    np.testing.assert_allclose(fast, dense, rtol=1e-12, atol=1e-12)


def test_se_grid_factors_multiply_to_the_full_kernel_matrix():
    axes = [np.linspace(0.0, 1.0, 4), np.linspace(-2.0, 2.0, 3), np.array([0.0, 0.7])]
    kernel = SquaredExponential(np.array([0.6, 1.5, 0.4]), 1.7)
    X = grid_points(axes)
    ells = [0.6, 1.5, 0.4]
    K1, K2, K3 = (SquaredExponential(e, 1.0)(g[:, None]) for g, e in zip(axes, ells, strict=True))
    np.testing.assert_allclose(1.7 * np.kron(np.kron(K1, K2), K3), kernel(X), atol=1e-14)


def test_se_grid_samples_have_the_kernel_covariance_empirically():
    axes = [np.arange(3.0), np.arange(4.0)]
    kernel = SquaredExponential(np.array([1.2, 0.8]), 0.5)
    samples = sample_se_on_grid(axes, kernel, size=40_000, seed=7)
    K = kernel(grid_points(axes))
    emp = samples.T @ samples / samples.shape[0]
    # s.e. of a mean of products x_i x_j is sqrt((K_ii K_jj + K_ij^2) / n) <= sqrt(2) * 0.5 / 200
    se = np.sqrt((np.outer(np.diag(K), np.diag(K)) + K**2) / samples.shape[0])
    assert np.max(np.abs(emp - K) / se) < 4.5
    assert np.max(np.abs(samples.mean(0))) < 4.5 * np.sqrt(0.5 / samples.shape[0])


def test_samples_are_reproducible_per_seed_and_differ_across_seeds():
    axes = [np.arange(5.0), np.arange(6.0)]
    kernel = SquaredExponential(2.0, 1.0)
    a = sample_se_on_grid(axes, kernel, seed=1)
    np.testing.assert_array_equal(a, sample_se_on_grid(axes, kernel, seed=1))
    assert not np.allclose(a, sample_se_on_grid(axes, kernel, seed=2))


def test_se_grid_checks_its_arguments():
    with pytest.raises(ValueError, match="axes must have 2 entries"):
        sample_se_on_grid([np.arange(3.0)], SquaredExponential(np.array([1.0, 1.0])))
    with pytest.raises(TypeError, match="SquaredExponential"):
        sample_se_on_grid([np.arange(3.0)], object())
    with pytest.raises(ValueError, match="size must be an integer in \\[1, inf\\]"):
        sample_kronecker([np.eye(2)], size=0)
    with pytest.raises(ValueError, match="square"):
        sample_from_roots([np.ones((2, 3))])


def test_roots_are_applied_as_the_per_sample_products_of_their_factors():
    # two Cholesky roots: each sample is L1 W L2^T on the same normals, bit for bit (the
    # products a grid sampler writes by hand), and one root gives L w
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((5, 5)), rng.standard_normal((4, 4))
    L1 = np.linalg.cholesky(A @ A.T + np.eye(5))
    L2 = np.linalg.cholesky(B @ B.T + np.eye(4))
    samples = sample_from_roots([L1, L2], size=3, seed=9)
    W = np.random.default_rng(9).standard_normal((3, 5, 4))
    np.testing.assert_array_equal(samples, (L1 @ W @ L2.T).reshape(3, -1))
    one = sample_from_roots([L1], seed=np.random.default_rng(2))[0]
    np.testing.assert_allclose(one, L1 @ np.random.default_rng(2).standard_normal(5), rtol=1e-14)
    # a Generator advances by the normals drawn, as a caller drawing them itself would
    gen, ref = np.random.default_rng(4), np.random.default_rng(4)
    sample_from_roots([L1, L2], size=2, seed=gen)
    ref.standard_normal(2 * 5 * 4)
    assert gen.random() == ref.random()
