"""GP hyperparameters by maximum marginal likelihood (Rasmussen & Williams 2006, §5.4).

Model: ``y = m + f(x) + eps``, ``f ~ GP(0, k)``, ``eps ~ N(0, sigma_n^2)``, constant mean ``m``.
Parameters ``theta = [log variance, log lengthscale(s), log sigma_n^2, m]`` are optimised with
scipy's L-BFGS-B from several seeded random starts, using the analytic gradient
``dNLL/dtheta_j = -0.5 tr((alpha alpha^T - A^{-1}) dA/dtheta_j)``. Optionally MAP under
log-normal priors (:class:`LogNormalPriors`). Zero-mean fits of kernels of any kind (additive,
Freeze-Thaw) are in :mod:`frontierbo.core.kernel_fit`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor, cho_solve, lapack
from scipy.optimize import minimize

from frontierbo._threads import one_blas_thread
from frontierbo._validation import (
    SeedLike,
    as_generator,
    check_int,
    check_matrix,
    check_real,
    check_vector,
)
from frontierbo.core.kernels import StationaryKernel, make_kernel

_LOG_2PI = np.log(2.0 * np.pi)
FAILED_NLL = 1e25  # NLL reported when the Cholesky factorisation fails
#: Fits on fewer points run BLAS on one thread: at n = 500-2000 a second OpenBLAS thread made a
#: fit 1.3-3x slower on 2 cores (benchmarks/fit_speed.py --threads 2).
ONE_THREAD_BELOW = 4000


@dataclass(frozen=True)
class FitResult:
    """Fitted hyperparameters: ``kernel`` (with variance and lengthscale), noise and mean."""

    kernel: StationaryKernel
    noise_variance: float
    mean: float
    nll: float
    n_points: int
    restarts_nll: tuple[float, ...]


def negative_log_likelihood(
    theta: np.ndarray, X: np.ndarray, y: np.ndarray, template: StationaryKernel
) -> tuple[float, np.ndarray]:
    """NLL and its gradient w.r.t. ``theta = [log var, log ls..., log noise, mean]``.

    One factorisation and two n x n arrays per evaluation (the hot path of every fit;
    :func:`negative_log_likelihood_direct` is the textbook reference it is tested against).
    With ``A = K + sigma_n^2 I = L L^T``, ``alpha = A^{-1} r``, ``r = y - m`` and
    ``W = alpha alpha^T - A^{-1}``:

    * variance: ``dK/dlog var = K``, so ``tr(W K) = r.alpha - n - sigma_n^2 tr(W)``: O(n);
    * noise: ``sigma_n^2 tr(W) = sigma_n^2 (alpha.alpha - tr A^{-1})``: O(n);
    * lengthscale ``j``: ``dK/dlog l_j = G o D_j``, ``G = var g(r^2)``, ``D_j[i,k] =
      (a_ij - a_kj)^2`` (``a = X / l``), and for symmetric ``H``
      ``sum(H o D_j) = 2 sum_i a_ij^2 (H 1)_i - 2 a_j^T H a_j``: one matrix product with
      ``H = alpha alpha^T o G`` (through ``G alpha`` and ``G (alpha o a)``) and one with
      ``H = A^{-1} o G``, taken from the lower triangle LAPACK's potri returns, so neither
      ``W``, a symmetric copy of ``A^{-1}`` nor any per-parameter ``dK`` is formed.
    """
    kernel = template.with_log_params(theta[:-2])
    noise, mean = np.exp(theta[-2]), theta[-1]
    n = len(y)
    a = kernel.scaled(X)
    r2 = kernel.sqdist(X)
    shape, G = kernel.shape_and_dshape(r2)
    del r2
    A = np.multiply(shape, kernel.variance, out=shape)  # in place: K
    G *= kernel.variance
    A[np.diag_indices(n)] += noise
    L, info = lapack.dpotrf(A, lower=1, clean=1, overwrite_a=1)
    if info != 0:
        # Push L-BFGS-B towards more noise, which restores positive definiteness.
        grad = np.zeros_like(theta)
        grad[-2] = -1.0
        return FAILED_NLL, grad
    resid = y - mean
    alpha, _ = lapack.dpotrs(L, resid, lower=1)
    nll = 0.5 * resid @ alpha + np.log(np.diag(L)).sum() + 0.5 * n * _LOG_2PI
    Ainv, info = lapack.dpotri(L, lower=1, overwrite_c=1)  # lower triangle, zeros above
    if info != 0:
        raise np.linalg.LinAlgError(f"potri failed with info={info}")
    trace_W = alpha @ alpha - np.trace(Ainv)
    grad = np.empty_like(theta)
    grad[0] = -0.5 * (resid @ alpha - n - noise * trace_W)
    # sum(alpha alpha^T o G o D_j) for every j
    aa = alpha[:, None] * a
    quad = 2.0 * ((a * a).T @ (alpha * (G @ alpha))) - 2.0 * np.einsum("ij,ij->j", aa, G @ aa)
    # sum(A^{-1} o G o D_j): H = P + P^T - diag(P) with P = tril(A^{-1}) o G
    P = np.multiply(Ainv, G, out=G)
    diag = np.diag(P).copy()
    H1 = P.sum(axis=1) + P.sum(axis=0) - diag
    Ha = P @ a + P.T @ a - diag[:, None] * a
    inv = 2.0 * ((a * a).T @ H1) - 2.0 * np.einsum("ij,ij->j", a, Ha)
    per_dim = -0.5 * (quad - inv)
    grad[1:-2] = per_dim if kernel.ard else per_dim.sum()
    grad[-2] = -0.5 * noise * trace_W
    grad[-1] = -alpha.sum()
    return float(nll), grad


def negative_log_likelihood_direct(
    theta: np.ndarray, X: np.ndarray, y: np.ndarray, template: StationaryKernel
) -> tuple[float, np.ndarray]:
    """:func:`negative_log_likelihood` as written in Rasmussen & Williams (5.9): ``W`` and every
    ``dK/dtheta_j`` formed explicitly (the reference the fast path is tested against)."""
    kernel = template.with_log_params(theta[:-2])
    noise = np.exp(theta[-2])
    mean = theta[-1]
    K, dK = kernel.gradients(X)
    A = K + noise * np.eye(len(y))
    try:
        cf = cho_factor(A, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        grad = np.zeros_like(theta)
        grad[-2] = -1.0
        return FAILED_NLL, grad
    resid = y - mean
    alpha = cho_solve(cf, resid, check_finite=False)
    log_det = 2.0 * np.log(np.diag(cf[0])).sum()
    nll = 0.5 * resid @ alpha + 0.5 * log_det + 0.5 * len(y) * _LOG_2PI
    W = np.outer(alpha, alpha) - inverse_from_cholesky(np.tril(cf[0]))
    grad = np.empty_like(theta)
    for j, D in enumerate(dK):
        grad[j] = -0.5 * np.sum(W * D)
    grad[-2] = -0.5 * noise * np.trace(W)
    grad[-1] = -alpha.sum()
    return float(nll), grad


#: The densities a :class:`LogNormalPriors` may put on a hyperparameter.
PRIOR_DENSITIES = ("value", "log")


@dataclass(frozen=True)
class LogNormalPriors:
    """Log-normal priors on the lengthscales and the noise variance, for maximum a posteriori
    fits (variance and mean stay flat, bounded).

    ``lengthscale ~ LogNormal(lengthscale_loc, lengthscale_scale^2)`` for every lengthscale and
    ``sigma_n^2 ~ LogNormal(noise_loc, noise_scale^2)``. :meth:`dimension_scaled` is BoTorch's
    default since 0.12 (Hvarfner et al. 2024) for inputs in the unit cube and standardised
    outputs: ``loc = sqrt(2) + log(d) / 2``, ``scale = sqrt(3)`` (noise LogNormal(-4, 1)).

    ``density`` says which density the MAP objective adds, which matters because the fit
    optimises ``theta = log(value)``:

    * ``"value"`` (default): the log-normal density of the hyperparameter itself, as GPyTorch
      adds ``prior.log_prob(lengthscale)`` in BoTorch's fits. In theta that is
      ``theta + (theta - loc)^2 / (2 scale^2)`` per hyperparameter, whose minimum is the
      log-normal's mode ``loc - scale^2`` (lengthscale 0.50 in 6 dimensions).
    * ``"log"``: the normal density of ``theta``, ``(theta - loc)^2 / (2 scale^2)``, minimum at
      the median ``loc`` (lengthscale 10.1 in 6 dimensions: with few points a flat model).
      Studies used it before 0.1.0's "value"; on Hartmann-6 its simple regret after 20
      evaluations was 2.7 times the "value" one's (``docs/studies.md``).
    """

    lengthscale_loc: float
    lengthscale_scale: float
    noise_loc: float = -4.0
    noise_scale: float = 1.0
    density: str = "value"

    def __post_init__(self):
        if self.density not in PRIOR_DENSITIES:
            raise ValueError(f"density must be one of {PRIOR_DENSITIES}, got {self.density!r}")

    @classmethod
    def dimension_scaled(cls, d: int, density: str = "value") -> LogNormalPriors:
        d = check_int(d, "d", low=1)
        return cls(float(np.sqrt(2.0) + 0.5 * np.log(d)), float(np.sqrt(3.0)), density=density)

    def mode(self) -> tuple[float, float]:
        """``(lengthscale, noise variance)`` where the penalty is smallest."""
        if self.density == "log":
            return float(np.exp(self.lengthscale_loc)), float(np.exp(self.noise_loc))
        return (
            float(np.exp(self.lengthscale_loc - self.lengthscale_scale**2)),
            float(np.exp(self.noise_loc - self.noise_scale**2)),
        )

    def penalty(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """Negative log prior (up to a constant) and its gradient, ``theta`` as in the NLL."""
        grad = np.zeros_like(theta)
        z = (theta[1:-2] - self.lengthscale_loc) / self.lengthscale_scale
        grad[1:-2] = z / self.lengthscale_scale
        zn = (theta[-2] - self.noise_loc) / self.noise_scale
        grad[-2] = zn / self.noise_scale
        value = 0.5 * (z @ z + zn * zn)
        if self.density == "value":  # log p(v) = log N(log v) - log v
            value += float(np.sum(theta[1:-2]) + theta[-2])
            grad[1:-2] += 1.0
            grad[-2] += 1.0
        return float(value), grad


def _map_objective(theta, X, y, template, priors: LogNormalPriors):
    nll, grad = negative_log_likelihood(theta, X, y, template)
    if nll >= FAILED_NLL:
        return nll, grad
    value, dvalue = priors.penalty(theta)
    return nll + value, grad + dvalue


def inverse_from_cholesky(L: np.ndarray) -> np.ndarray:
    """``A^{-1}`` from the lower Cholesky factor of ``A`` (LAPACK potri: half the work of a
    solve). ``L``'s strict upper triangle must be zero (numpy's ``cholesky``), so potri's lower
    triangle plus its transpose, diagonal halved, is the symmetric inverse: one pass, where
    ``tril`` masks took as long as potri itself."""
    inv, info = lapack.dpotri(L, lower=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"potri failed with info={info}")
    symmetric = inv + inv.T
    symmetric.flat[:: len(L) + 1] *= 0.5
    return symmetric


def fit_hyperparameters(
    X,
    y,
    kernel: str = "se",
    ard: bool = True,
    n_restarts: int = 5,
    seed: SeedLike = 0,
    max_points: int = 2000,
    min_noise_variance: float = 1e-10,
    callback: Callable[[int], None] | None = None,
    priors: LogNormalPriors | None = None,
    subset: str = "fixed",
    initial: np.ndarray | None = None,
    variance: float | None = None,
) -> FitResult:
    """Maximum-marginal-likelihood fit of a stationary kernel, constant mean and noise.

    Parameters
    ----------
    X : array (n, d) inputs; y : array (n,) outputs.
    kernel : ``"se"``, ``"matern32"`` or ``"matern52"``.
    ard : one lengthscale per input dimension (True) or a single one (False).
    n_restarts : number of random starting points (>= 1); the best optimum is returned.
    seed : seed or Generator for the starting points and for the subset (if n > max_points).
    max_points : fit on a random subset of this many rows when n is larger (exact GP is O(n^3)).
    callback : ``callback(restart)``, called after every optimiser iteration with the 0-based
        restart number (for a progress display; a fit on 2000 rows takes about a minute).
    priors : :class:`LogNormalPriors` for a MAP fit (``nll`` is then the negative log
        posterior, up to a constant); None (default) for maximum likelihood.
    subset : ``"fixed"`` (default): one fit on ``min(n, max_points)`` random rows.
        ``"adaptive"``: a subset size that adapts to the data. The restarts run on
        :data:`ADAPTIVE_START` random rows; then the subset doubles (nested: the first rows of
        one random order), each fit starting from the previous optimum and from one fresh
        random point (the better wins), until no log
        hyperparameter moves by more than :data:`ADAPTIVE_TOLERANCE` (and the mean by more
        than that many output standard deviations) or the subset reaches
        ``min(n, max_points)``. ``n_points`` says where it stopped.
    initial : log parameters ``[log var, log ls..., log noise, mean]`` of a previous fit (e.g.
        on fewer points): they replace the last start (clipped into the bounds; with one
        restart, the only one), so a refit after one more observation starts next to its
        optimum.
    variance : None (default) to fit the kernel's variance with the rest; a number holds it
        there (BoTorch's ``SingleTaskGP`` since 0.12 has no output scale: variance 1 on
        standardised outputs, Hvarfner et al. 2024).
    """
    X = check_matrix(X, "X", min_rows=2)
    y = check_vector(y, "y", length=X.shape[0])
    n_restarts = check_int(n_restarts, "n_restarts", low=1)
    max_points = check_int(max_points, "max_points", low=2)
    if subset not in SUBSETS:
        raise ValueError(f"subset must be one of {SUBSETS}, got {subset!r}")
    rng = as_generator(seed)
    if X.shape[0] > max_points:
        keep = rng.choice(X.shape[0], size=max_points, replace=False)
        X, y = X[keep], y[keep]
    d = X.shape[1]
    template = make_kernel(kernel, np.ones(d) if ard else 1.0, 1.0)
    if variance is not None:
        variance = check_real(variance, "variance", low=0.0)
    objective = _Objective(template, priors, min_noise_variance, callback, variance)
    if subset == "fixed" or X.shape[0] <= ADAPTIVE_START:
        return objective.fit(X, y, rng, n_restarts, last=initial)
    order = rng.permutation(X.shape[0])
    m = ADAPTIVE_START
    fit, theta = objective.fit(X[order[:m]], y[order[:m]], rng, n_restarts, return_theta=True)
    scale = max(float(np.std(y)), 1e-12)
    while m < X.shape[0]:
        m = min(2 * m, X.shape[0])
        # the previous optimum and one fresh random start: a warm start alone can stay in a
        # poor optimum found on few rows (Branin's grid: NLL 300 against -1286 for 2 of 10 seeds)
        fit, new = objective.fit(X[order[:m]], y[order[:m]], rng, 2, x0=theta, return_theta=True)
        moved = max(np.max(np.abs(new[:-1] - theta[:-1])), abs(new[-1] - theta[-1]) / scale)
        theta = new
        if moved <= ADAPTIVE_TOLERANCE:
            break
    return fit


#: Choices of ``fit_hyperparameters(subset=...)``.
SUBSETS = ("fixed", "adaptive")
#: Rows of the first fit of ``subset="adaptive"``, and how far (in log units) the
#: hyperparameters may move when the subset doubles for the fit to stop there.
ADAPTIVE_START = 500
ADAPTIVE_TOLERANCE = 0.05


class _Objective:
    """Restarted L-BFGS-B on the (MAP or ML) negative log likelihood of one model."""

    def __init__(self, template, priors, min_noise_variance, callback, variance=None):
        self.template, self.priors = template, priors
        self.min_noise, self.callback = min_noise_variance, callback
        self.variance = variance

    def fit(self, X, y, rng, n_restarts, x0=None, return_theta=False, last=None):
        n_ls = np.size(self.template.lengthscale)
        bounds, starts = _bounds_and_starts(X, y, n_ls, n_restarts, rng, self.min_noise)
        if self.variance is not None:  # held: L-BFGS-B keeps a coordinate with equal bounds
            log_variance = float(np.log(self.variance))
            bounds[0] = (log_variance, log_variance)
            for start in starts:
                start[0] = log_variance
        lo, hi = np.array([b[0] for b in bounds]), np.array([b[1] for b in bounds])
        if x0 is not None:  # warm start from a previous optimum, inside this data's bounds
            starts[0] = np.clip(x0, lo, hi)
            # with its noise no lower than random starts': a near-zero noise fitted on fewer
            # rows can make the larger Gram matrix numerically singular at the start, and
            # L-BFGS-B then wanders off (Branin's 961-row grid, from an optimum on 500 rows)
            starts[0][-2] = max(starts[0][-2], np.log(max(float(np.var(y)), 1e-12) * 1e-4))
        elif self.priors is not None:  # the first start at the priors' mode (BoTorch's)
            starts[0] = _prior_start(self.priors, starts[0], n_ls, bounds)
        if last is not None:
            last = np.asarray(last, dtype=float)
            if last.shape != starts[-1].shape:
                raise ValueError(f"initial must have {starts[-1].size} log parameters")
            starts[-1] = np.clip(last, lo, hi)
        best, nlls = None, []
        small = X.shape[0] < ONE_THREAD_BELOW
        with one_blas_thread() if small else contextlib.nullcontext():
            for restart, start in enumerate(starts):
                res = minimize(
                    negative_log_likelihood if self.priors is None else _map_objective,
                    start,
                    args=(X, y, self.template) + (() if self.priors is None else (self.priors,)),
                    jac=True,
                    method="L-BFGS-B",
                    bounds=bounds,
                    callback=None
                    if self.callback is None
                    else lambda _x, k=restart: self.callback(k),
                )
                nlls.append(float(res.fun))
                if best is None or res.fun < best.fun:
                    best = res
        if not np.isfinite(best.fun) or best.fun >= FAILED_NLL:
            raise RuntimeError(
                "fit_hyperparameters: the covariance matrix was not positive definite at any "
                "restart; check for duplicated rows with different outputs, or raise "
                "min_noise_variance"
            )
        theta = best.x
        fit = FitResult(
            kernel=self.template.with_log_params(theta[:-2]),
            noise_variance=float(np.exp(theta[-2])),
            mean=float(theta[-1]),
            nll=float(best.fun),
            n_points=X.shape[0],
            restarts_nll=tuple(nlls),
        )
        return (fit, theta) if return_theta else fit


def _bounds_and_starts(X, y, n_ls, n_restarts, rng, min_noise):
    """Box bounds in log space scaled to the data, and log-uniform random starts inside them."""
    span = np.ptp(X, axis=0)
    span = np.where(span > 0, span, 1.0)
    span = span if n_ls == len(span) else np.array([np.linalg.norm(span)])
    y_var = max(float(np.var(y)), 1e-12)
    y_lo, y_hi = float(np.min(y)), float(np.max(y))
    lo = np.concatenate(
        [[np.log(y_var * 1e-4)], np.log(span * 1e-3), [np.log(max(min_noise, y_var * 1e-8))]]
    )
    hi = np.concatenate([[np.log(y_var * 1e2)], np.log(span * 1e2), [np.log(y_var * 2.0)]])
    hi = np.maximum(hi, lo + 1e-6)  # near-constant y: a noise floor above 2 var(y) still fits
    start_lo = np.concatenate([[np.log(y_var * 0.1)], np.log(span * 0.02), [np.log(y_var * 1e-4)]])
    start_hi = np.concatenate([[np.log(y_var * 2.0)], np.log(span * 1.0), [np.log(y_var * 0.3)]])
    # the constant mean may lie outside the data's range (a few high peaks over a low floor):
    # bound it one range beyond either end
    y_span = max(y_hi - y_lo, 1e-12)
    bounds = list(zip(lo, hi, strict=True)) + [(y_lo - y_span, y_hi + y_span)]
    starts = []
    for _ in range(n_restarts):
        x0 = rng.uniform(start_lo, start_hi)
        starts.append(np.concatenate([x0, [float(np.mean(y))]]))
    return bounds, starts


def _prior_start(priors: LogNormalPriors, x0: np.ndarray, n_ls: int, bounds) -> np.ndarray:
    """``x0`` with the lengthscales and the noise at the priors' mode and the variance at the
    outputs' (standardised: 1), inside the bounds."""
    lengthscale, noise = priors.mode()
    x = x0.copy()
    x[0] = 0.0
    x[1 : 1 + n_ls] = np.log(lengthscale)
    x[-2] = np.log(noise)
    lo, hi = np.array([b[0] for b in bounds]), np.array([b[1] for b in bounds])
    return np.clip(x, lo, hi)
