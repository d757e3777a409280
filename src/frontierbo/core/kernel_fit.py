"""Maximum likelihood for a zero-mean GP with a kernel of any kind (additive, Freeze-Thaw
exponential decay, stationary) and a fixed or fitted noise variance: the attacks' fits.

Any kernel with the log-parameter interface (``log_params``, ``with_log_params``, ``gradients``)
works; :func:`gram_and_gradients` takes the fast paths of additive and isotropic kernels. The NLL
and its gradient follow Rasmussen & Williams (5.9) with ``W = alpha alpha^T - A^{-1}``; the
constant-mean fit of stationary kernels with priors is :mod:`frontierbo.core.fit`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_solve
from scipy.optimize import minimize

from frontierbo._validation import SeedLike, as_generator, check_int, check_matrix, check_vector
from frontierbo.core.additive import AdditiveKernel
from frontierbo.core.fit import FAILED_NLL, inverse_from_cholesky
from frontierbo.core.kernels import StationaryKernel

_LOG_2PI = np.log(2.0 * np.pi)


@dataclass(frozen=True)
class KernelFit:
    """A fitted kernel (any kind with the log-parameter interface) and noise variance."""

    kernel: object
    noise_variance: float
    nll: float
    restarts_nll: tuple[float, ...]


def gram_and_gradients(template, X: np.ndarray) -> Callable:
    """``theta_kernel -> (K, trace)`` for ``template``'s kind, where ``trace(W)`` is the vector
    ``[tr(W dK/dtheta_p)]_p``. Additive kernels compute their per-group distances once, here,
    and work on the upper triangle (:meth:`AdditiveKernel.gram_and_trace_at`); an isotropic
    stationary kernel is the one-group case, so its distances, too, are computed once per fit
    rather than once per likelihood evaluation (``r^2 = D / l^2``)."""
    if isinstance(template, StationaryKernel) and not template.ard:
        template = AdditiveKernel([np.arange(X.shape[1])], [template])
    if hasattr(template, "gram_and_trace_at"):
        D, n = template.packed_distances(X), X.shape[0]
        return lambda theta: template.gram_and_trace_at(theta, D, n)

    def gram(theta):
        K, dK = template.with_log_params(theta).gradients(X)
        # dK[0] (d/dlog v) is K itself, and the likelihood adds the noise to the K it gets
        return K.copy(), lambda W: np.array([np.sum(W * D) for D in dK])

    return gram


def zero_mean_nll(
    theta: np.ndarray, gram: Callable, y: np.ndarray, noise_variance: float | None
) -> tuple[float, np.ndarray]:
    """NLL of ``y ~ N(0, K + sigma_n^2 I)`` and its gradient w.r.t. ``theta = [kernel log-params]``
    (fixed ``noise_variance``) or ``[kernel log-params, log sigma_n^2]`` (``noise_variance=None``).
    ``gram(theta_kernel) -> (K, trace)`` (see :func:`gram_and_gradients`)."""
    fitted_noise = noise_variance is None
    n_kernel = len(theta) - 1 if fitted_noise else len(theta)
    noise = float(np.exp(theta[-1])) if fitted_noise else noise_variance
    K, trace = gram(theta[:n_kernel])
    A = K
    A[np.diag_indices_from(A)] += noise
    try:
        L = np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        grad = np.zeros_like(theta)
        if fitted_noise:
            grad[-1] = -1.0  # more noise restores positive definiteness
        return FAILED_NLL, grad
    alpha = cho_solve((L, True), y, check_finite=False)
    nll = 0.5 * y @ alpha + np.log(np.diag(L)).sum() + 0.5 * len(y) * _LOG_2PI
    W = np.outer(alpha, alpha)
    W -= inverse_from_cholesky(L)
    grad = np.empty_like(theta)
    grad[:n_kernel] = -0.5 * trace(W)
    if fitted_noise:
        grad[-1] = -0.5 * noise * np.trace(W)
    return float(nll), grad


def fit_kernel(
    X,
    y,
    kernel,
    *,
    bounds,
    noise_variance: float | None = None,
    noise_bounds: tuple[float, float] = (1e-6, 1.0),
    n_restarts: int = 1,
    maxiter: int = 1000,
    seed: SeedLike = 0,
) -> KernelFit:
    """Maximum-likelihood hyperparameters of ``kernel`` for a zero-mean GP (standardise ``y``).

    Parameters
    ----------
    X, y : inputs (n, d) and outputs (n,).
    kernel : the kernel whose current hyperparameters are the first starting point.
    bounds : ``(low, high)`` per kernel hyperparameter, in natural units, in the order of
        ``kernel.log_params`` (e.g. ``[(1e-2, 1e2), (1e-2, 10)]`` for variance and lengthscale).
    noise_variance : fixed ``sigma_n^2``, or None to fit it inside ``noise_bounds``.
    n_restarts : optimisations run: the first from ``kernel``'s values, the others from
        log-uniform random points inside the bounds; the best is returned.
    maxiter : L-BFGS-B iterations per restart.
    """
    X = check_matrix(X, "X")
    y = check_vector(y, "y", length=X.shape[0])
    n_restarts = check_int(n_restarts, "n_restarts", low=1)
    maxiter = check_int(maxiter, "maxiter", low=1)
    rng = as_generator(seed)
    log_bounds = _log_bounds(bounds, len(kernel.log_params), "bounds")
    start = np.clip(kernel.log_params, log_bounds[:, 0], log_bounds[:, 1])
    if noise_variance is None:
        noise_lb = _log_bounds([noise_bounds], 1, "noise_bounds")
        log_bounds = np.vstack([log_bounds, noise_lb])
        start = np.append(start, noise_lb.mean())
    else:
        noise_variance = float(noise_variance)
    gram = gram_and_gradients(kernel, X)
    best, nlls = None, []
    for restart in range(n_restarts):
        x0 = start if restart == 0 else rng.uniform(log_bounds[:, 0], log_bounds[:, 1])
        res = minimize(
            zero_mean_nll,
            x0,
            args=(gram, y, noise_variance),
            jac=True,
            method="L-BFGS-B",
            bounds=log_bounds,
            options={"maxiter": maxiter},
        )
        nlls.append(float(res.fun))
        if best is None or res.fun < best.fun:
            best = res
    if best.fun >= FAILED_NLL:
        raise RuntimeError("fit_kernel: the covariance matrix was not positive definite")
    theta = best.x
    if noise_variance is None:
        theta, noise_variance = theta[:-1], float(np.exp(theta[-1]))
    return KernelFit(kernel.with_log_params(theta), noise_variance, float(best.fun), tuple(nlls))


def _log_bounds(bounds, size: int, name: str) -> np.ndarray:
    b = np.asarray(bounds, dtype=float)
    if b.shape != (size, 2) or not np.all(b > 0) or not np.all(b[:, 0] <= b[:, 1]):
        raise ValueError(
            f"{name} must be {size} pairs (low, high) with 0 < low <= high, got {bounds}"
        )
    return np.log(b)
