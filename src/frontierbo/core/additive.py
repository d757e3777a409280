"""Additive kernels over disjoint coordinate groups (Duvenaud et al. 2011; Kandasamy et al. 2015).

``k(x, x') = sum_j k_j(x[G_j], x'[G_j])`` with one isotropic stationary kernel ``k_j`` (its own
variance and lengthscale) per group ``G_j``. The groups partition the coordinates ``0..d-1``.

For maximum likelihood the per-group squared distances ``D_j = ||x[G_j] - x'[G_j]||^2`` do not
depend on the hyperparameters, so :meth:`AdditiveKernel.distances` computes them once as an
(M, n, n) stack and :meth:`AdditiveKernel.gradients_from_distances` evaluates ``K`` and all
``2M`` derivatives from it (``r_j^2 = D_j / l_j^2``) without touching the inputs again.
Log-parameters are ``[log v_1, log l_1, ..., log v_M, log l_M]``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from frontierbo._validation import check_int
from frontierbo.core.kernels import StationaryKernel, make_kernel


def split_groups(permutation, n_groups: int) -> list[np.ndarray]:
    """Consecutive chunks of ``permutation``: the first ``d mod M`` groups get ``ceil(d / M)``
    coordinates, the rest ``floor(d / M)`` (numpy's ``array_split``; see
    docs/decisions.md#project-additive-groups-are-near-equal-chunks-of-a-permutation)."""
    permutation = np.asarray(permutation, dtype=int)
    n_groups = check_int(n_groups, "n_groups", low=1, high=len(permutation))
    return [np.sort(g) for g in np.array_split(permutation, n_groups)]


class AdditiveKernel:
    """``sum_j k_j(x[G_j], x'[G_j])`` over disjoint groups of coordinates.

    Args:
        groups: M integer arrays partitioning ``0..d-1``.
        kernels: M isotropic stationary kernels, or one kernel name (``"matern52"``…) to build
            M copies with unit variance and lengthscale.
    """

    name = "additive"

    def __init__(self, groups: Sequence, kernels: Sequence[StationaryKernel] | str = "matern52"):
        self.groups = [np.asarray(g, dtype=int).reshape(-1) for g in groups]
        if not self.groups or any(g.size == 0 for g in self.groups):
            raise ValueError("groups must be a non-empty list of non-empty index arrays")
        flat = np.concatenate(self.groups)
        self.dim = flat.size
        if np.unique(flat).size != flat.size or flat.min() < 0 or flat.max() != flat.size - 1:
            raise ValueError(f"groups must partition the coordinates 0..{flat.size - 1}")
        if isinstance(kernels, str):
            kernels = [make_kernel(kernels, 1.0, 1.0) for _ in self.groups]
        if len(kernels) != len(self.groups) or any(k.ard for k in kernels):
            raise ValueError("kernels must be one isotropic stationary kernel per group")
        self.kernels = list(kernels)

    @property
    def n_groups(self) -> int:
        return len(self.groups)

    def component(self, j: int, A, B=None) -> np.ndarray:
        """``k_j(A[:, G_j], B[:, G_j])``: shape (nA, nB)."""
        g = self.groups[j]
        A = np.atleast_2d(A)
        return self.kernels[j](A[:, g], None if B is None else np.atleast_2d(B)[:, g])

    def __call__(self, A, B=None) -> np.ndarray:
        return sum(self.component(j, A, B) for j in range(self.n_groups))

    def diag(self, A) -> np.ndarray:
        return np.full(np.atleast_2d(A).shape[0], sum(k.variance for k in self.kernels))

    # -- log-parameter interface for maximum likelihood ---------------------------------------
    @property
    def log_params(self) -> np.ndarray:
        return np.log([[k.variance, k.lengthscale] for k in self.kernels]).reshape(-1)

    def with_log_params(self, theta) -> AdditiveKernel:
        pairs = np.exp(np.asarray(theta, dtype=float)).reshape(self.n_groups, 2)
        kernels = [
            type(k)(float(l), float(v)) for k, (v, l) in zip(self.kernels, pairs, strict=True)
        ]
        return AdditiveKernel(self.groups, kernels)

    def distances(self, X) -> np.ndarray:
        """Unscaled per-group squared distances, shape (M, n, n)."""
        X = np.atleast_2d(np.asarray(X, dtype=float))
        out = np.empty((self.n_groups, X.shape[0], X.shape[0]))
        for j, g in enumerate(self.groups):
            a = X[:, g]
            sq = np.einsum("ij,ij->i", a, a)
            np.subtract(sq[:, None] + sq[None, :], 2.0 * (a @ a.T), out=out[j])
            np.maximum(out[j], 0.0, out=out[j])
            np.fill_diagonal(out[j], 0.0)
        return out

    def gradients_from_distances(self, D: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``K`` (n, n) and the derivatives ``dK/dtheta`` stacked as (2M, n, n), in the order of
        :attr:`log_params`."""
        return self.gradients_at(self.log_params, D)

    def gradients_at(self, theta, D: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`gradients_from_distances` at log-parameters ``theta`` without building kernels:
        all M groups at once (the MLE's inner loop)."""
        M, n, _ = D.shape
        pairs = np.exp(np.asarray(theta, dtype=float)).reshape(M, 2)
        v, l = pairs[:, 0, None, None], pairs[:, 1, None, None]
        kind = type(self.kernels[0])
        if any(type(k) is not kind for k in self.kernels):
            raise TypeError("gradients_at needs one kernel kind for all groups")
        r2 = D / (l * l)
        shape, g = kind.shape_and_dshape(r2)
        dK = np.empty((M, 2, n, n))
        np.multiply(shape, v, out=dK[:, 0])  # dK/dlog v_j = K_j
        np.multiply(g, v, out=dK[:, 1])
        dK[:, 1] *= r2  # dK/dlog l_j = v_j g(r) r^2
        return dK[:, 0].sum(axis=0), dK.reshape(2 * M, n, n)

    # -- the MLE's fast path: the strict upper triangle only -----------------------------------
    def packed_distances(self, X) -> np.ndarray:
        """Per-group squared distances of the pairs ``a < b`` only: shape (M, n (n - 1) / 2), in
        the order of ``np.triu_indices(n, 1)``. The diagonal needs none (``r = 0``)."""
        D = self.distances(X)
        iu = np.triu_indices(D.shape[1], 1)
        return np.ascontiguousarray(D[:, iu[0], iu[1]])

    def gram_and_trace_at(self, theta, packed: np.ndarray, n: int):
        """``K`` (n, n) and ``trace(W) -> [tr(W dK/dtheta_p)]_p`` at log-parameters ``theta``,
        from :meth:`packed_distances`: the elementwise work of :meth:`gradients_at` on half the
        entries. With ``W`` symmetric, ``tr(W dK) = 2 sum_{a<b} W_ab dK_ab + sum_a W_aa dK_aa``;
        on the diagonal ``dK/dlog v_j = v_j`` and ``dK/dlog l_j = 0``."""
        M = self.n_groups
        pairs = np.exp(np.asarray(theta, dtype=float)).reshape(M, 2)
        v, l = pairs[:, 0], pairs[:, 1]
        kind = type(self.kernels[0])
        if any(type(k) is not kind for k in self.kernels):
            raise TypeError("gram_and_trace_at needs one kernel kind for all groups")
        r2 = packed * (1.0 / (l * l))[:, None]
        shape, g = kind.shape_and_scaled_dshape(r2)
        shape *= v[:, None]  # K_j on the pairs
        g *= v[:, None]  # dK_j / dlog l_j on the pairs
        iu = np.triu_indices(n, 1)
        K = np.zeros((n, n))
        K[iu] = shape.sum(axis=0)
        K += K.T
        K[np.diag_indices(n)] = v.sum()

        def trace(W: np.ndarray) -> np.ndarray:
            w = W[iu]
            out = np.empty(2 * M)
            out[0::2] = 2.0 * (shape @ w) + v * np.trace(W)
            out[1::2] = 2.0 * (g @ w)
            return out

        return K, trace

    def gradients(self, X) -> tuple[np.ndarray, np.ndarray]:
        """``K(X, X)`` and ``dK/dtheta`` (2M, n, n) (the interface of the MLE fit)."""
        return self.gradients_from_distances(self.distances(X))

    def __repr__(self) -> str:
        sizes = sorted({g.size for g in self.groups})
        return f"AdditiveKernel(M={self.n_groups}, d={self.dim}, group sizes {sizes})"
