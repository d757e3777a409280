"""The additive GP of the perturbation loop and its acquisition (eq. (5.4) of the
thesis): Add-GP-UCB (Kandasamy et al. 2015) over ``[-1, 1]^d``.

* **Decomposition** (Alg. 7 line 2, thesis Section 5.3): the latent coordinates are split into
  ``M = 12`` groups by each of 20 random permutations; the permutation whose additive Matérn-5/2
  GP has the largest marginal likelihood wins, then its hyperparameters are re-optimised with
  5 restarts (the BayesOpt reference code).
* **Model**: zero mean on standardised ``y`` (re-standardised at every update), noise fixed at
  1e-6 (the reference's ``exact_feval``), hyperparameters re-learned when asked (every 5
  iterations in Alg. 7).
* **Acquisition** ``alpha(z) = sum_j mu_j(z_j) + beta^{1/2} sigma_j(z_j)``: each summand depends
  on its own group's coordinates only, so each is maximised on its own: the best of a pool
  (5 000 uniform points plus the data) as the start of L-BFGS-B with analytic gradients, keeping
  the better of start and optimum (``core.optimize.maximize_from_starts``). ``sigma_j^2`` is
  clipped at 1e-10, as in the reference
  (docs/decisions.md#bos-perturbation-gp-settings-from-the-bayesopt-code).

Bounds of the MLE (the reference uses GPy without bounds;
docs/decisions.md#bos-bounds-of-the-additive-gp-mle): per-group variance in
``[1e-4, 1e2]``, lengthscale in ``[1e-2, 1e2]`` (inputs in ``[-1, 1]``, standardised outputs).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from frontierbo._validation import check_int, check_real
from frontierbo.core.additive import AdditiveKernel, split_groups
from frontierbo.core.exact import ExactGP, PoolPosterior
from frontierbo.core.kernel_fit import fit_kernel
from frontierbo.core.optimize import maximize_from_starts, ucb_and_gradient

RANKINGS = ("fitted", "shared")
POOL_REFRESH = ("query", "fit")
#: Floor of a component's posterior variance inside the square root (the reference's clip).
_VAR_FLOOR = 1e-10


@dataclass(frozen=True)
class AddGPSettings:
    """Settings of the perturbation GP and its acquisition (defaults: the thesis's Section 5.3,
    then docs/decisions.md#bos-perturbation-gp-settings-from-the-bayesopt-code)."""

    n_groups: int = 12
    n_decompositions: int = 20
    noise_variance: float = 1e-6
    variance_bounds: tuple[float, float] = (1e-4, 1e2)
    lengthscale_bounds: tuple[float, float] = (1e-2, 1e2)
    fit_maxiter: int = 1000
    refit_restarts: int = 5
    beta_sqrt: float = 3.0
    n_random: int = 5000
    lbfgs_maxiter: int = 5000
    #: "fitted": every candidate decomposition gets its own MLE (thesis, reference code);
    #: "shared": candidates are ranked at data-scaled hyperparameters, one Cholesky each, and only
    #: the winner is fitted (the "scalable" profile)
    rank_decompositions: str = "fitted"
    #: the MLE (decompositions and refits) sees at most this many points, drawn at random (None:
    #: all; the posterior always uses all)
    fit_points: int | None = None
    #: "query": a new pool of ``n_random`` points for every query (reference code); "fit": one
    #: pool per hyperparameter fit, its posterior extended by one row per query
    #: (``core.exact.PoolPosterior``: O(n m) instead of O(n^2 m) per group; the "scalable"
    #: profile)
    pool_refresh: str = "query"

    def __post_init__(self):
        if self.pool_refresh not in POOL_REFRESH:
            raise ValueError(
                f"pool_refresh must be one of {POOL_REFRESH}, got {self.pool_refresh!r}"
            )
        if self.rank_decompositions not in RANKINGS:
            raise ValueError(
                f"rank_decompositions must be one of {RANKINGS}, got {self.rank_decompositions!r}"
            )
        if self.fit_points is not None:
            check_int(self.fit_points, "fit_points", low=2)
        check_int(self.n_groups, "n_groups", low=1)
        check_int(self.n_decompositions, "n_decompositions", low=1)
        check_real(self.noise_variance, "noise_variance", low=0.0)
        check_int(self.fit_maxiter, "fit_maxiter", low=1)
        check_int(self.refit_restarts, "refit_restarts", low=1)
        check_real(self.beta_sqrt, "beta_sqrt", low=0.0, low_open=False)
        check_int(self.n_random, "n_random", low=1)
        check_int(self.lbfgs_maxiter, "lbfgs_maxiter", low=1)

    def bounds(self, n_groups: int) -> list[tuple[float, float]]:
        return [self.variance_bounds, self.lengthscale_bounds] * n_groups


def standardise(y: np.ndarray) -> np.ndarray:
    std = y.std()
    return (y - y.mean()) / (std if std > 0 else 1.0)


class AdditiveModel:
    """The Add-GP posterior on ``(Z, y)`` with a fixed decomposition (``kernel.groups``)."""

    def __init__(self, kernel: AdditiveKernel, Z, y, settings: AddGPSettings, gp=None):
        self.kernel, self.settings = kernel, settings
        self.Z = np.array(Z, dtype=float)
        self.y = np.array(y, dtype=float)
        self.gp = gp or ExactGP(self.Z, standardise(self.y), kernel, settings.noise_variance)
        #: negative log-likelihoods of the candidate decompositions (set by :meth:`learn`)
        self.decomposition_nlls: tuple[float, ...] = ()
        #: the pool of this fit (``pool_refresh="fit"``), made at the first acquisition
        self._pool: PoolPosterior | None = None

    @classmethod
    def learn(cls, Z, y, settings: AddGPSettings, rng: np.random.Generator) -> AdditiveModel:
        """Alg. 7 line 2: the max-likelihood decomposition of ``n_decompositions`` random ones,
        then its hyperparameters re-optimised with restarts."""
        Z, ys = np.asarray(Z, dtype=float), standardise(np.asarray(y, dtype=float))
        Zf, yf = _fit_subset(Z, ys, settings, rng)
        d = Z.shape[1]
        m = min(settings.n_groups, d)
        templates = [  # lines 2.1-2.3: random permutations, consecutive chunks
            AdditiveKernel(split_groups(rng.permutation(d), m), "matern52")
            for _ in range(settings.n_decompositions)
        ]
        if settings.rank_decompositions == "fitted":  # 2.4: each candidate's own MLE
            candidates = [_fit(t, Zf, yf, settings, restarts=1, rng=rng) for t in templates]
            nlls = [f.nll for f in candidates]
            kernels = [f.kernel for f in candidates]
        else:  # "shared": one Cholesky per candidate at data-scaled hyperparameters
            kernels = [_median_heuristic(t, Zf, settings) for t in templates]
            nlls = [
                -ExactGP(Zf, yf, k, settings.noise_variance).log_marginal_likelihood()
                for k in kernels
            ]
        best = int(np.argmin(nlls))  # 2.5: the largest marginal likelihood
        refit = _fit(kernels[best], Zf, yf, settings, restarts=settings.refit_restarts, rng=rng)
        keep_refit = settings.rank_decompositions == "shared" or refit.nll <= nlls[best]
        model = cls(refit.kernel if keep_refit else kernels[best], Z, y, settings)
        model.decomposition_nlls = tuple(nlls)
        return model

    def add(self, z, y: float) -> AdditiveModel:
        """The posterior with one more observation, same hyperparameters (the Cholesky factor
        extended by one row; a pool of this fit is extended alike, unless the factor was not)."""
        ys = np.append(self.y, y)
        gp = self.gp.extended(np.asarray(z, dtype=float), standardise(ys))
        model = AdditiveModel(self.kernel, gp.X, ys, self.settings, gp)
        if self._pool is not None:
            model._pool = self._pool.extended(gp)
        return model

    def refit(self, rng: np.random.Generator) -> AdditiveModel:
        """Hyperparameters re-learned by MLE (restarts; the current values are the first start)."""
        Zf, yf = _fit_subset(self.Z, standardise(self.y), self.settings, rng)
        fit = _fit(
            self.kernel, Zf, yf, self.settings, restarts=self.settings.refit_restarts, rng=rng
        )
        return AdditiveModel(fit.kernel, self.Z, self.y, self.settings)

    # -- acquisition --------------------------------------------------------------------------
    def component_ucb(self, j: int, Zj: np.ndarray) -> np.ndarray:
        """``mu_j + beta^{1/2} sigma_j`` at points given by their group-``j`` coordinates."""
        mean, var = self.gp.component(j, Zj)
        return mean + self.settings.beta_sqrt * np.sqrt(np.maximum(var, _VAR_FLOOR))

    def _ucb_and_gradient(self, zj: np.ndarray, j: int) -> tuple[float, np.ndarray]:
        mean, var, dmean, dvar = self.gp.component_gradient(j, zj)
        return ucb_and_gradient(mean, var, dmean, dvar, self.settings.beta_sqrt, _VAR_FLOOR)

    def _pool_ucb(self, rng: np.random.Generator):
        """The pool (uniform points plus the data) and ``j -> UCB_j`` on it."""
        d = self.Z.shape[1]
        if self.settings.pool_refresh == "query":
            pool = np.vstack([rng.uniform(-1.0, 1.0, size=(self.settings.n_random, d)), self.Z])
            return pool, lambda j: self.component_ucb(j, pool[:, self.kernel.groups[j]])
        if self._pool is None:
            pool = np.vstack([rng.uniform(-1.0, 1.0, size=(self.settings.n_random, d)), self.Z])
            self._pool = PoolPosterior(self.gp, pool)
        posterior, newer = self._pool, self.Z[self._pool.n0 :]  # data since the pool was drawn
        pool = np.vstack([posterior.pool, newer])

        def ucb(j):
            mean, var = posterior.component(j)
            own = self.component_ucb(j, newer[:, self.kernel.groups[j]])
            sigma = np.sqrt(np.maximum(var, _VAR_FLOOR))
            return np.concatenate([mean + self.settings.beta_sqrt * sigma, own])

        return pool, ucb

    def maximize_ucb(self, rng: np.random.Generator) -> np.ndarray:
        """Add-GP-UCB (eq. (5.4) of the thesis): the next latent point, each group maximised
        independently."""
        d = self.Z.shape[1]
        pool, pool_ucb = self._pool_ucb(rng)
        z_next = np.empty(d)
        for j, g in enumerate(self.kernel.groups):
            values = pool_ucb(j)
            best = int(np.argmax(values))  # n_start = 1
            z_next[g], _ = maximize_from_starts(
                lambda zj, j=j: self._ucb_and_gradient(zj, j),
                pool[best, g][None],
                values[best],
                [(-1.0, 1.0)] * g.size,
                maxiter=self.settings.lbfgs_maxiter,
            )
        return z_next


def _fit_subset(Z, ys, settings: AddGPSettings, rng):
    """The points the MLE sees: all, or ``fit_points`` of them drawn at random (the reference
    code's subset options, ``sparse='SUB…'``, for large n)."""
    n = Z.shape[0]
    if settings.fit_points is None or n <= settings.fit_points:
        return Z, ys
    keep = np.sort(rng.choice(n, settings.fit_points, replace=False))
    return Z[keep], ys[keep]


def _median_heuristic(template: AdditiveKernel, Z, settings: AddGPSettings) -> AdditiveKernel:
    """Per group: variance ``1 / M`` (standardised outputs split evenly) and lengthscale the
    median distance between data points in the group's coordinates, within the bounds."""
    D = template.packed_distances(Z)
    lo, hi = settings.lengthscale_bounds
    scales = np.clip(np.sqrt(np.median(D, axis=1)), lo, hi) if D.shape[1] else np.ones(len(D))
    v = np.clip(1.0 / template.n_groups, *settings.variance_bounds)
    theta = np.log(np.column_stack([np.full(len(scales), v), scales])).reshape(-1)
    return template.with_log_params(theta)


def _fit(template, Z, ys, settings: AddGPSettings, restarts: int, rng):
    return fit_kernel(
        Z,
        ys,
        template,
        bounds=settings.bounds(template.n_groups),
        noise_variance=settings.noise_variance,
        n_restarts=restarts,
        maxiter=settings.fit_maxiter,
        seed=rng,
    )
