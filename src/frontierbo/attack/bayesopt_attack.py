"""The BayesOpt attack baseline (Ru et al. 2020, "GP-BO-auto-dr", a baseline of the thesis):
GP-UCB in a bilinearly reduced latent space whose side is re-learned by marginal likelihood.

Behaviour follows the reference code ``rubinxin/BayesOpt_Attack`` (``run_bayesopt_attack.py``
with ``-m GPLDR``; ``bayesopt.py`` ``Bayes_opt.run``; ``models/gpdr.py`` ``GPModelLDR``;
``utilities/utilities.py`` ``get_init_data``, ``optimise_acqu_func_mledr``;
docs/decisions.md#bos-bayesopt-baseline-follows-gpldr):

    1  U <- n_init = 30 Latin-hypercube points of the full-resolution box [-1, 1]^D (for GPLDR the
       reference sets low_dim = high_dim, so pyDOE.lhs samples the image itself); y_j = Q(U_j)
    2  update(itr = 0)
    3  for k = 0, 1, ...:   (until the oracle raises success or budget)
         z <- argmax_z mu(z) + beta^{1/2} sigma(z) over [-1, 1]^{s^2 c}              (UCB)
         u <- Up(z);  y <- Q(u);  U, y += (u, y)
         update(itr = k)

    update(itr):   y standardised (mean 0, std 1);  Z <- Down_s(U)  for the current side s
         if itr % 40 == 0:  for each s in {6, 8, ..., 20}: fit a Matérn-5/2 GP on (Down_s(U), y)
                            from variance 1, lengthscale 1 (one L-BFGS-B run, GPy's ``optimize``);
                            s <- the side of the largest log marginal likelihood
         else:              keep the hyperparameters, condition on the new data (GPy's ``set_XY``)
         if itr % 5 == 0:   re-fit the hyperparameters, 5 restarts, the first from the current values

``update`` runs with ``itr = 0`` twice (before the first BO query and after it), so the side is
chosen twice at the start, then after BO queries 41, 81, ...; this is the reference's schedule.

The reference minimises ``-y`` with LCB ``mu - 3 sigma`` on standardised ``-y``; negating the data of
a zero-mean GP negates the posterior mean and leaves the variance, the likelihood and the MLE
unchanged, so maximising UCB on standardised ``y`` picks the same points. ``sigma^2`` includes the
noise (GPy's ``predict``) and is floored at 1e-10 (the reference's clip).

The selection's start, lengthscale 1 (GPy's default, ``init_lengthscale``), lies on a plateau for
the larger sides: latent points of ``[-1, 1]^{s^2 c}`` are many lengthscales apart, ``K`` is nearly
``I``, the likelihood is that of white noise and its gradient vanishes, so such a side keeps the
white-noise likelihood ``-n (1 + log 2 pi) / 2``, as it does in the reference.

Choices of ours (docs/decisions.md#bos-bounds-of-the-bayesopt-mle): the reference runs GPy's MLE
without bounds; here variance is bounded to ``[1e-2, 1e2]`` (standardised outputs) and lengthscale
to ``[1e-2, 1e3]`` (two random points of ``[-1, 1]^d`` lie about ``sqrt(2 d / 3)`` apart: 16 at
d = 400, 28 at CIFAR's d = 1200, so a cap of 1e2 could bind). GPy randomises restarts around
softplus(N(0, 1)); ``fit_kernel`` draws them log-uniformly inside the bounds. Initial points use
``scipy.stats.qmc.LatinHypercube`` (random positions inside the strata, as ``pyDOE.lhs`` without a
criterion).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from scipy.stats import qmc

from frontierbo._validation import check_int, check_real
from frontierbo.attack.add_gp_ucb import standardise
from frontierbo.attack.oracle import QueryOracle
from frontierbo.attack.resize import downsample_many, upsample
from frontierbo.core.exact import ExactGP
from frontierbo.core.kernel_fit import fit_kernel
from frontierbo.core.kernels import Matern52
from frontierbo.core.optimize import maximize_acquisition, ucb_and_gradient

#: Sides of the reference for images up to 40 x 40 (``GPModelLDR.dr_list = range(6, 21, 2)``).
BAYESOPT_SIDES = (6, 8, 10, 12, 14, 16, 18, 20)
#: Floor of the predictive variance inside the square root (the reference's ``np.clip``).
_VAR_FLOOR = 1e-10


class UCB:
    """``alpha(z) = mu(z) + beta^{1/2} sigma(z)`` of an :class:`ExactGP` with an isotropic
    stationary kernel, ``sigma^2`` including the noise variance.

    ``__call__`` scores a batch through ``ExactGP.predict`` (one triangular solve of the
    cross-covariance block); :meth:`value_and_gradient`, for L-BFGS-B, uses the core's
    one-point fast path ``ExactGP.mean_variance_gradient``. :meth:`maximize` is the reference's
    ``optimise_acqu_func_mledr`` (``core.optimize.maximize_acquisition``).
    """

    def __init__(self, gp: ExactGP, beta_sqrt: float):
        if not hasattr(gp.kernel, "shape_and_dshape") or gp.kernel.ard:
            raise ValueError(f"UCB needs an isotropic stationary kernel, got {gp.kernel!r}")
        self.gp, self.beta_sqrt = gp, beta_sqrt

    def __call__(self, Zs: np.ndarray) -> np.ndarray:
        mean, var = self.gp.predict(Zs, include_noise=True)
        return mean + self.beta_sqrt * np.sqrt(np.maximum(var, _VAR_FLOOR))

    def value_and_gradient(self, z: np.ndarray) -> tuple[float, np.ndarray]:
        mean, var, dmean, dvar = self.gp.mean_variance_gradient(z)
        var = max(var, 0.0) + self.gp.noise_variance
        return ucb_and_gradient(mean, var, dmean, dvar, self.beta_sqrt, _VAR_FLOOR)

    def maximize(
        self,
        rng: np.random.Generator,
        *,
        n_random: int = 10_000,
        n_batches: int = 5,
        n_starts: int = 5,
        maxiter: int = 5000,
    ) -> tuple[np.ndarray, float]:
        """The reference's ``optimise_acqu_func_mledr``: ``n_random`` uniform points of
        ``[-1, 1]^d`` in ``n_batches`` batches (the data joins the first), the top ``n_starts``
        of each batch, the overall top ``n_starts`` of those as L-BFGS-B starts with analytic
        gradients; the best of the best candidate and the optimisers' ends (strictly better, as
        the reference). Returns the point (d,) and its acquisition value."""
        return maximize_acquisition(
            self,
            self.value_and_gradient,
            [(-1.0, 1.0)] * self.gp.X.shape[1],
            rng,
            n_random=n_random,
            n_batches=n_batches,
            n_starts=n_starts,
            include=self.gp.X,
            maxiter=maxiter,
        )


@dataclass(frozen=True)
class SideChoice:
    """A side selection: the chosen side, the data downsampled to it (n, side^2 c), its fitted
    kernel and every side's log marginal likelihood."""

    side: int
    Z: np.ndarray
    kernel: Matern52
    log_likelihoods: dict[int, float]


@dataclass(frozen=True)
class BayesOptAttack:
    """GP-BO-auto-dr (module docstring). Defaults are the reference code's."""

    name: str = "bayesopt"
    sides: tuple[int, ...] = BAYESOPT_SIDES
    n_init: int = 30
    reselect_every: int = 40
    refit_every: int = 5
    n_restarts: int = 5
    beta_sqrt: float = 3.0
    n_random: int = 10_000
    n_batches: int = 5
    n_starts: int = 5
    lbfgs_maxiter: int = 5000
    fit_maxiter: int = 1000
    noise_variance: float = 1e-6
    variance_bounds: tuple[float, float] = (1e-2, 1e2)
    lengthscale_bounds: tuple[float, float] = (1e-2, 1e3)
    init_lengthscale: float = 1.0

    def __post_init__(self):
        sides = tuple(self.sides)
        if not sides or len(set(sides)) != len(sides):
            raise ValueError(f"sides must be a non-empty tuple of distinct integers, got {sides}")
        for s in sides:
            check_int(s, "sides[i]", low=2)
        object.__setattr__(self, "sides", sides)
        check_int(self.n_init, "n_init", low=2)
        check_int(self.reselect_every, "reselect_every", low=1)
        check_int(self.refit_every, "refit_every", low=1)
        check_int(self.n_restarts, "n_restarts", low=1)
        check_real(self.beta_sqrt, "beta_sqrt", low=0.0, low_open=False)
        check_int(self.n_random, "n_random", low=1)
        check_int(self.n_batches, "n_batches", low=1, high=self.n_random)
        check_int(self.n_starts, "n_starts", low=1)
        check_int(self.lbfgs_maxiter, "lbfgs_maxiter", low=1)
        check_int(self.fit_maxiter, "fit_maxiter", low=1)
        check_real(self.noise_variance, "noise_variance", low=0.0)
        check_real(self.init_lengthscale, "init_lengthscale", low=0.0)
        # the selection's start (variance 1, init_lengthscale) must lie inside the bounds
        for name, start in (
            ("variance_bounds", 1.0),
            ("lengthscale_bounds", self.init_lengthscale),
        ):
            lo, hi = getattr(self, name)
            if not 0.0 < lo < start < hi:
                raise ValueError(f"{name} must satisfy 0 < low < {start:g} < high, got {(lo, hi)}")

    # -- model --------------------------------------------------------------------------------
    def _fit(self, Z, ys, kernel: Matern52, restarts: int, rng) -> tuple[Matern52, float]:
        fit = fit_kernel(
            Z,
            ys,
            kernel,
            bounds=[self.variance_bounds, self.lengthscale_bounds],
            noise_variance=self.noise_variance,
            n_restarts=restarts,
            maxiter=self.fit_maxiter,
            seed=rng,
        )
        return fit.kernel, -fit.nll

    def select_side(self, U: np.ndarray, y: np.ndarray) -> SideChoice:
        """``update``'s side selection on perturbations ``U`` (n, H, W, c) and outputs ``y``:
        one fit per side from variance 1 and ``init_lengthscale`` (deterministic), the largest
        log marginal likelihood wins (ties: the smaller side)."""
        ys = standardise(np.asarray(y, dtype=float))
        lls, kernels, Zs = {}, {}, {}
        for s in self.sides:
            Zs[s] = downsample_many(U, s)
            # one restart draws nothing from the generator: the selection is a function of (U, y)
            start = Matern52(self.init_lengthscale, 1.0)
            kernels[s], lls[s] = self._fit(Zs[s], ys, start, 1, 0)
        side = max(self.sides, key=lambda s: (lls[s], -s))
        return SideChoice(side, Zs[side], kernels[side], lls)

    def initial_perturbations(self, shape: tuple[int, ...], rng: np.random.Generator):
        """Step 1: ``n_init`` Latin-hypercube points of ``[-1, 1]^D``, shape (n_init, *shape)."""
        D = int(np.prod(shape))
        return 2.0 * qmc.LatinHypercube(d=D, rng=rng).random(self.n_init).reshape(-1, *shape) - 1.0

    # -- the attack ---------------------------------------------------------------------------
    def attack(self, oracle: QueryOracle, rng: np.random.Generator, details: dict) -> None:
        shape = oracle.x0.shape
        if len(shape) != 3 or max(self.sides) > min(shape[:2]):
            raise ValueError(
                f"x0 must be an image (H, W, c) with H, W >= max(sides) = {max(self.sides)}, "
                f"got shape {shape}"
            )
        details.update(iterations=0, selections=[], refits=[], query_sides=[])
        U = self.initial_perturbations(shape, rng)
        y = [oracle(u) for u in U]  # step 1
        side, gp = self._update(None, None, U, y, 0, rng, details)  # step 2
        for k in itertools.count():  # step 3: the oracle ends the loop
            z, _ = UCB(gp, self.beta_sqrt).maximize(
                rng,
                n_random=self.n_random,
                n_batches=self.n_batches,
                n_starts=self.n_starts,
                maxiter=self.lbfgs_maxiter,
            )
            u = upsample(z, shape)
            made = oracle.queries
            try:
                y.append(oracle(u))
            finally:  # the successful query counts; one refused by the budget does not
                if oracle.queries > made:
                    details["query_sides"].append(side)
                    details["iterations"] = k + 1
            U = np.concatenate([U, u[None]])
            side, gp = self._update(side, gp, U, y, k, rng, details)

    def _update(self, side, gp, U: np.ndarray, y: list, itr: int, rng, details: dict):
        """``GPModelLDR._update_model`` after the data ``(U, y)``: the side and the posterior.

        Between selections the side and hyperparameters of ``gp`` are kept; ``Down`` acts on
        each perturbation alone, so only the newest one is downsampled and appended."""
        ys = standardise(np.asarray(y, dtype=float))
        if itr % self.reselect_every == 0:
            choice = self.select_side(U, y)
            side, Z, kernel = choice.side, choice.Z, choice.kernel
            details["selections"].append(
                {
                    "iteration": itr,
                    "n": len(y),
                    "side": side,
                    "log_likelihoods": choice.log_likelihoods,
                }
            )
        else:
            Z, kernel = np.vstack([gp.X, downsample_many(U[-1:], side)]), gp.kernel
        if itr % self.refit_every == 0:
            kernel, ll = self._fit(Z, ys, kernel, self.n_restarts, rng)
            details["refits"].append(
                {
                    "iteration": itr,
                    "n": len(y),
                    "side": side,
                    "variance": kernel.variance,
                    "lengthscale": kernel.lengthscale,
                    "log_likelihood": ll,
                }
            )
        return side, ExactGP(Z, ys, kernel, self.noise_variance)


__all__ = ["BAYESOPT_SIDES", "UCB", "BayesOptAttack", "SideChoice"]
