"""Exact GP regression at arbitrary inputs (continuous boxes), with input gradients and the
per-component posteriors of an additive kernel.

``FiniteDomainGP`` keeps the posterior over a fixed candidate set and updates it per query; the
attacks of BOS² and its baselines instead maximise acquisitions over boxes like ``[-1, 1]^d``
with L-BFGS-B, so they need the posterior, and its gradient, at any point. With
``A = K(X, X) + sigma_n^2 I = L L^T`` and ``alpha = A^{-1} (y - m)`` (Rasmussen & Williams
2006, Alg. 2.1):

* ``mean(x) = m + k(x, X) alpha``; ``var(x) = k(x, x) - ||L^{-1} k(X, x)||^2`` (eq. 3.2 of the
  thesis adds ``sigma_n^2``: ``include_noise=True``);
* for an additive ``k = sum_j k_j`` (Kandasamy et al. 2015), component ``j`` has
  ``mean_j(x) = k_j(x, X) alpha`` and ``var_j(x) = k_j(x, x) - k_j(x, X) A^{-1} k_j(X, x)``;
  the component means sum to the mean (less ``m``);
* gradients: ``d mean_j / dx = dk_j^T alpha``, ``d var_j / dx = -2 dk_j^T A^{-1} k_j(X, x)``.

:class:`PoolPosterior` keeps the per-component posterior on a fixed pool of points (the
acquisition pools of the attacks) up to date as the GP gains inputs, one row at a time.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_solve, solve_triangular

from frontierbo._validation import check_matrix, check_real, check_vector

#: Jitter tried, relative to the mean prior variance, when K + sigma_n^2 I is not positive definite.
_JITTERS = (0.0, 1e-10, 1e-8, 1e-6, 1e-4)


def cholesky_with_jitter(A: np.ndarray, jitters=_JITTERS) -> tuple[np.ndarray, float]:
    """Lower Cholesky factor of ``A + jitter I`` with the first of ``jitters`` (relative to the mean
    diagonal) that works, and that jitter (absolute)."""
    scale = max(float(np.mean(np.diag(A))), 1e-300)
    for rel in jitters:
        try:
            return np.linalg.cholesky(A + (rel * scale) * np.eye(len(A))), rel * scale
        except np.linalg.LinAlgError:
            continue
    raise np.linalg.LinAlgError(
        f"the covariance matrix is not positive definite, even with jitter {jitters[-1]:.3g} "
        "times its mean diagonal"
    )


class ExactGP:
    """The GP posterior given observations ``(X, y)``; the kernel's hyperparameters are fixed.

    Args:
        X: inputs (n, d); y: outputs (n,).
        kernel: any kernel with ``__call__(A, B)`` and ``diag(A)`` (stationary, additive,
            exponential decay); input gradients need ``grad_x``.
        noise_variance: ``sigma_n^2 >= 0``; prior_mean: the constant ``m``.
    """

    def __init__(self, X, y, kernel, noise_variance: float, prior_mean: float = 0.0):
        self.X = check_matrix(X, "X")
        self.y = check_vector(y, "y", length=self.X.shape[0])
        self.kernel = kernel
        self.noise_variance = check_real(noise_variance, "noise_variance", low=0.0, low_open=False)
        self.prior_mean = check_real(prior_mean, "prior_mean")
        A = kernel(self.X)
        A[np.diag_indices_from(A)] += self.noise_variance
        self.L, self.jitter = cholesky_with_jitter(A)
        self.alpha = cho_solve((self.L, True), self.y - self.prior_mean, check_finite=False)

    @property
    def n(self) -> int:
        return self.X.shape[0]

    def extended(self, x, y) -> ExactGP:
        """The posterior with one more input ``x`` (d,), in O(n^2) instead of a new O(n^3)
        factorisation: ``L`` gains the row ``[l^T, l_nn]`` with ``l = L^{-1} k(X, x)`` and
        ``l_nn^2 = k(x, x) + sigma_n^2 + jitter - ||l||^2`` (this factor's jitter, so the result
        factors the same matrix a new ``ExactGP`` would).

        ``y`` (n + 1,) are all the outputs, not just the new one, for callers that transform
        them as data arrive (re-standardising). Falls back to a new factorisation when the new
        pivot is not safely positive (``x`` repeats an input up to rounding)."""
        x = check_vector(x, "x", length=self.X.shape[1])
        X = np.vstack([self.X, x])
        y = check_vector(y, "y", length=X.shape[0])
        k = self.kernel(self.X, x[None])[:, 0]
        row = solve_triangular(self.L, k, lower=True, check_finite=False)
        prior = float(self.kernel.diag(x[None])[0]) + self.noise_variance + self.jitter
        pivot = prior - row @ row
        if not pivot > 1e-10 * prior:
            return ExactGP(X, y, self.kernel, self.noise_variance, self.prior_mean)
        L = np.zeros((self.n + 1, self.n + 1))
        L[:-1, :-1] = self.L
        L[-1, :-1], L[-1, -1] = row, np.sqrt(pivot)
        new = object.__new__(ExactGP)
        new.X, new.y, new.kernel, new.L, new.jitter = X, y, self.kernel, L, self.jitter
        new.noise_variance, new.prior_mean = self.noise_variance, self.prior_mean
        new.alpha = cho_solve((L, True), y - self.prior_mean, check_finite=False)
        return new

    def log_marginal_likelihood(self) -> float:
        resid = self.y - self.prior_mean
        return float(
            -0.5 * resid @ self.alpha
            - np.log(np.diag(self.L)).sum()
            - 0.5 * self.n * np.log(2.0 * np.pi)
        )

    def _whiten(self, Kxs: np.ndarray) -> np.ndarray:
        """``L^{-1} k(X, x*)`` for the columns of ``Kxs`` (n, m)."""
        return solve_triangular(self.L, Kxs, lower=True, check_finite=False)

    def predict(self, Xs, *, full_cov: bool = False, include_noise: bool = False):
        """Posterior mean (m,) and variance (m,), or the (m, m) covariance with ``full_cov``.

        The variance of the latent function; ``include_noise`` adds ``sigma_n^2`` (the thesis's
        (3.2)). Variances are clipped at 0.
        """
        Xs = np.atleast_2d(np.asarray(Xs, dtype=float))
        Kxs = self.kernel(self.X, Xs)
        mean = self.prior_mean + Kxs.T @ self.alpha
        V = self._whiten(Kxs)
        noise = self.noise_variance if include_noise else 0.0
        if full_cov:
            cov = self.kernel(Xs) - V.T @ V
            cov[np.diag_indices_from(cov)] += noise
            return mean, cov
        var = self.kernel.diag(Xs) - np.einsum("ij,ij->j", V, V)
        return mean, np.maximum(var, 0.0) + noise

    def mean_variance_gradient(self, x) -> tuple[float, float, np.ndarray, np.ndarray]:
        """``mean(x)``, latent ``var(x)`` and their gradients (d,) at one point (stationary
        kernels): one kernel row and two triangular solves (the acquisition optimisers' inner
        loop)."""
        x = np.asarray(x, dtype=float)
        mean, var, dmean, dvar = _point_gradients(self.kernel, self.X, self.L, self.alpha, x)
        return self.prior_mean + mean, var, dmean, dvar

    def mean_gradient(self, x) -> tuple[float, np.ndarray]:
        """``mean(x)`` and its gradient (d,) at one point (stationary kernels)."""
        mean, _, dmean, _ = self.mean_variance_gradient(x)
        return mean, dmean

    def variance_gradient(self, x) -> tuple[float, np.ndarray]:
        """Latent ``var(x)`` and its gradient (d,) at one point (stationary kernels)."""
        _, var, _, dvar = self.mean_variance_gradient(x)
        return var, dvar

    # -- components of an additive kernel -----------------------------------------------------
    def component(self, j: int, Zs) -> tuple[np.ndarray, np.ndarray]:
        """Mean (m,) and latent variance (m,) of component ``j`` at points ``Zs`` given by their
        group-``j`` coordinates only, shape (m, |G_j|)."""
        kj = self.kernel.kernels[j]
        Xj = self.X[:, self.kernel.groups[j]]
        Kxs = kj(Xj, np.atleast_2d(Zs))
        V = self._whiten(Kxs)
        var = kj.diag(np.atleast_2d(Zs)) - np.einsum("ij,ij->j", V, V)
        return Kxs.T @ self.alpha, np.maximum(var, 0.0)

    def component_gradient(self, j: int, z) -> tuple[float, float, np.ndarray, np.ndarray]:
        """Component ``j`` at one point ``z`` (|G_j|,): mean, latent variance and their
        gradients with respect to ``z``."""
        Xj = self.X[:, self.kernel.groups[j]]
        return _point_gradients(
            self.kernel.kernels[j], Xj, self.L, self.alpha, np.asarray(z, float)
        )


class PoolPosterior:
    """The posterior of an :class:`ExactGP` on a fixed pool of points (m, d), per component of
    an additive kernel (one component for any other kernel), following the GP as it gains inputs.

    Whitening the pool, ``V_j = L^{-1} k_j(X, pool)`` for each component ``j``, costs
    O(n^2 m); a new input adds one row ``[l^T, l_nn]`` to ``L`` (:meth:`ExactGP.extended`), so
    it adds one row ``(k_j(x, pool) - l^T V_j) / l_nn`` to each ``V_j`` and subtracts its square
    from the variances: O(n m) per component. The means ``V_j^T L^{-1} (y - m)`` follow the GP's
    outputs, which may change with every input (re-standardised outputs).

    ``pool`` and ``n0`` (the GP's inputs when the pool was whitened) are read-only.
    """

    def __init__(self, gp: ExactGP, pool):
        self.gp, self.pool, self.n0 = gp, check_matrix(pool, "pool", n_cols=gp.X.shape[1]), gp.n
        kernel = gp.kernel
        if hasattr(kernel, "groups"):
            self._kernels, self._groups = kernel.kernels, kernel.groups
        else:
            self._kernels, self._groups = [kernel], [np.arange(gp.X.shape[1])]
        self._V, self._variances, self._rows = [], [], []
        for kj, g in zip(self._kernels, self._groups, strict=True):
            Vj = gp._whiten(kj(gp.X[:, g], self.pool[:, g]))
            self._V.append(Vj)
            self._variances.append(kj.diag(self.pool[:, g]) - np.einsum("ij,ij->j", Vj, Vj))
            self._rows.append(np.empty((0, self.pool.shape[0])))
        self._w = None

    def extended(self, gp: ExactGP) -> PoolPosterior | None:
        """The pool's posterior under ``gp``, this one's GP extended by one input
        (:meth:`ExactGP.extended`); None when ``gp`` is not such an extension (it fell back to a
        new factorisation), and the pool must be whitened anew."""
        if gp.n != self.gp.n + 1 or not np.array_equal(gp.L[:-1, :-1], self.gp.L):
            return None
        new = object.__new__(PoolPosterior)
        new.gp, new.pool, new.n0, new._V, new._w = gp, self.pool, self.n0, self._V, None
        new._kernels, new._groups, new._variances, new._rows = self._kernels, self._groups, [], []
        l, l_nn, x = gp.L[-1, :-1], gp.L[-1, -1], gp.X[-1]
        for j, (kj, g) in enumerate(zip(self._kernels, self._groups, strict=True)):
            known = l[: self.n0] @ self._V[j] + l[self.n0 :] @ self._rows[j]
            row = (kj(x[None, g], self.pool[:, g])[0] - known) / l_nn
            new._rows.append(np.vstack([self._rows[j], row]))
            new._variances.append(self._variances[j] - row * row)
        return new

    def component(self, j: int) -> tuple[np.ndarray, np.ndarray]:
        """Mean (less the prior mean) and latent variance (not clipped) of component ``j`` on
        the pool, each (m,)."""
        if self._w is None:  # L^{-1} (y - m), shared by the components
            gp = self.gp
            self._w = solve_triangular(gp.L, gp.y - gp.prior_mean, lower=True, check_finite=False)
        w = self._w
        mean = self._V[j].T @ w[: self.n0] + self._rows[j].T @ w[self.n0 :]
        return mean, self._variances[j]


def _point_gradients(kernel, X: np.ndarray, L: np.ndarray, alpha: np.ndarray, x: np.ndarray):
    """``k(x, X) alpha``, ``k(x, x) - ||L^{-1} k(X, x)||^2`` and their gradients in ``x``.

    For an isotropic kernel ``dk_i/dx = -v g_i (x - x_i) / l^2`` (``g`` from
    ``shape_and_dshape``), so every gradient is ``-(v / l^2) (sum(g a) x - X^T (g a))`` for a
    vector ``a``: two matrix-vector products with ``X``, never an (n, d) temporary. ARD kernels
    use ``grad_x``."""
    w_solve = {"lower": True, "check_finite": False}
    if kernel.ard:
        k = kernel(X, x[None])[:, 0]
        v = solve_triangular(L, k, **w_solve)
        w = solve_triangular(L, v, trans="T", **w_solve)
        dk = kernel.grad_x(x, X)
        return float(k @ alpha), float(kernel.variance - v @ v), dk.T @ alpha, -2.0 * (dk.T @ w)
    ls2 = kernel.lengthscale**2
    r2 = np.maximum(np.einsum("ij,ij->i", X, X) - 2.0 * (X @ x) + x @ x, 0.0) / ls2
    shape, g = kernel.shape_and_dshape(r2)
    k = kernel.variance * shape
    v = solve_triangular(L, k, **w_solve)
    w = solve_triangular(L, v, trans="T", **w_solve)
    ga = g[:, None] * np.column_stack([alpha, w])
    d = -(kernel.variance / ls2) * (np.outer(x, ga.sum(0)) - X.T @ ga)
    return float(k @ alpha), float(kernel.variance - v @ v), d[:, 0], -2.0 * d[:, 1]
