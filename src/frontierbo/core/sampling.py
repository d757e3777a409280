"""Gaussian samples through square roots of their covariance: the one sampler of GP draws.

:func:`sample_from_roots` is the sampler every GP draw of the library goes through: prior draws
of the systems' synthetic functions (grids, arm sets, the substitute data sets) and the attack's
posterior forward simulations. Given square roots ``R_j R_j^T = K_j`` it returns
``(R_1 (x) ... (x) R_d) w`` for standard normal ``w``, an exact sample with covariance
``K = K_1 (x) ... (x) K_d``; with one root it is ``R w``. Each ``R_j`` is applied along its own
axis of ``w`` (reshaped to the grid), so the big matrix is never formed: for a 50 x 50 grid that
is two 50 x 50 roots instead of a 2500 x 2500 one. The caller chooses the root: :func:`psd_root`
(eigendecomposition, no jitter; :func:`sample_kronecker`) or a Cholesky factor
(:func:`frontierbo.core.exact.cholesky_with_jitter`, or plain ``np.linalg.cholesky``).

A separable kernel ``k(x, x') = prod_j k_j(x_j, x'_j)`` (the squared exponential, isotropic or
ARD, is one) has such a Kronecker covariance on the grid ``g_1 x ... x g_d``, with
``K_j = k_j(g_j, g_j)`` (:func:`sample_se_on_grid`).

Grid points are ordered in C order (last axis fastest): point ``(i_1, ..., i_d)`` is row
``np.ravel_multi_index((i_1, ..., i_d), shape)``, the order of :func:`grid_points`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from frontierbo._validation import SeedLike, as_generator, check_int, check_vector
from frontierbo.core.kernels import SquaredExponential


def psd_root(K) -> np.ndarray:
    """A square root ``R`` with ``R @ R.T == K`` (to rounding) of a symmetric PSD matrix.

    From the eigendecomposition with negative rounding-level eigenvalues set to 0, so smooth
    kernels whose matrices are numerically singular need no jitter (a Cholesky factor would).

    Raises:
        ValueError: ``K`` is not square, not symmetric, or has an eigenvalue below
            ``-1e-8 * max|K|`` (not PSD).
    """
    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1] or K.shape[0] < 1:
        raise ValueError(f"K must be a square (n, n) matrix, got shape {K.shape}")
    scale = max(float(np.abs(K).max()), np.finfo(float).tiny)
    if not np.all(np.isfinite(K)) or not np.allclose(K, K.T, rtol=0.0, atol=1e-12 * scale):
        raise ValueError("K must be a finite symmetric matrix")
    eigval, eigvec = np.linalg.eigh(K)
    if eigval[0] < -1e-8 * scale:
        raise ValueError(
            f"K must be positive semi-definite, its smallest eigenvalue is {eigval[0]}"
        )
    return eigvec * np.sqrt(np.clip(eigval, 0.0, None))


def grid_points(axes: Sequence) -> np.ndarray:
    """All points of the product grid ``axes[0] x ... x axes[d-1]``, shape (prod len, d), in C
    order (the row order of :func:`sample_kronecker`)."""
    grids = [check_vector(g, f"axes[{j}]") for j, g in enumerate(axes)]
    if not grids:
        raise ValueError("axes must hold at least one 1-D coordinate array")
    mesh = np.meshgrid(*grids, indexing="ij")
    return np.column_stack([m.ravel() for m in mesh])


def sample_from_roots(roots: Sequence, size: int = 1, seed: SeedLike = None) -> np.ndarray:
    """Zero-mean Gaussian samples with covariance ``(R_1 R_1^T) (x) ... (x) (R_d R_d^T)``.

    Args:
        roots: the d square matrices ``R_j`` (n_j, n_j), e.g. :func:`psd_root` or Cholesky
            factors of the ``K_j``.
        size: number of independent samples, >= 1.
        seed: int, Generator or None; the standard normals are drawn as one (size, n_1, ...,
            n_d) array (a Generator's stream advances by ``size * prod n_j`` normals), so a seed
            gives the same normals whatever the roots.

    Returns:
        (size, n_1 * ... * n_d) array; column order as in :func:`grid_points`.
    """
    size = check_int(size, "size", low=1)
    if len(roots) == 0:
        raise ValueError("roots must hold at least one matrix")
    roots = [np.asarray(R, dtype=float) for R in roots]
    for j, R in enumerate(roots):
        if R.ndim != 2 or R.shape[0] != R.shape[1] or R.shape[0] < 1:
            raise ValueError(f"roots[{j}] must be a square (n, n) matrix, got shape {R.shape}")
    shape = tuple(R.shape[0] for R in roots)
    sample = as_generator(seed).standard_normal((size, *shape))
    for axis, R in enumerate(roots[:-1], start=1):
        # R applied along one grid axis: (R_1 (x) ... (x) R_d) vec(w) without the big matrix
        sample = np.moveaxis(R @ np.moveaxis(sample, axis, -2), -2, axis)
    # the last from the right, so each sample is R_1 W R_2^T (two axes) or w R^T (one), the
    # products written by hand before: same rounding, whatever BLAS threads do
    sample = sample @ roots[-1].T
    return sample.reshape(size, -1)


def sample_kronecker(factors: Sequence, size: int = 1, seed: SeedLike = None) -> np.ndarray:
    """Zero-mean Gaussian samples with covariance ``factors[0] (x) ... (x) factors[-1]`` (the
    symmetric PSD matrices ``K_j``), through their :func:`psd_root` (:func:`sample_from_roots`).
    """
    size = check_int(size, "size", low=1)
    if len(factors) == 0:
        raise ValueError("factors must hold at least one matrix")
    return sample_from_roots([psd_root(K) for K in factors], size=size, seed=seed)


def sample_se_on_grid(
    axes: Sequence, kernel: SquaredExponential, size: int = 1, seed: SeedLike = None
) -> np.ndarray:
    """Zero-mean samples of a GP with squared-exponential ``kernel`` on a product grid.

    Args:
        axes: the d 1-D coordinate arrays of the grid (in the kernel's length-scale units).
        kernel: isotropic, or ARD with d length-scales (one per axis).
        size: number of samples, >= 1.
        seed: int, Generator or None.

    Returns:
        (size, prod len(axes[j])) samples at :func:`grid_points` ``(axes)``, whose covariance is
        exactly ``kernel(grid_points(axes))``.
    """
    if not isinstance(kernel, SquaredExponential):
        raise TypeError(
            f"kernel must be a SquaredExponential (the separable kernel here), got {kernel!r}"
        )
    grids = [check_vector(g, f"axes[{j}]") for j, g in enumerate(axes)]
    if not grids:
        raise ValueError("axes must hold at least one 1-D coordinate array")
    if kernel.ard and kernel.lengthscale.shape[0] != len(grids):
        raise ValueError(
            f"axes must have {kernel.lengthscale.shape[0]} entries to match the ARD "
            f"lengthscale, got {len(grids)}"
        )
    scales = np.broadcast_to(np.asarray(kernel.lengthscale, dtype=float), (len(grids),))
    # The variance goes into the first factor only: the product of the factors carries it once.
    factors = [
        SquaredExponential(float(ell), kernel.variance if j == 0 else 1.0)(g[:, None])
        for j, (g, ell) in enumerate(zip(grids, scales, strict=True))
    ]
    return sample_kronecker(factors, size=size, seed=seed)
