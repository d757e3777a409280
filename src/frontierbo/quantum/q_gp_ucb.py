"""Q-GP-UCB (Dai et al., NeurIPS 2023, Algorithm 1) and the classical GP-UCB baseline.

Both are UCB rules on one weighted GP posterior over a finite set of points (paper section 4.1):
``mu~_s(x) = k~_s(x)^T (K~_s + lambda I)^{-1} Y~_s`` with ``K~ = W^{1/2} K W^{1/2}``,
``W = diag(1/epsilon_tau^2)``.  Since ``(K~ + lambda I)^{-1} = W^{-1/2} (K + lambda W^{-1})^{-1}
W^{-1/2}``, this is *exactly* the ordinary GP posterior with per-observation noise variance
``lambda epsilon_tau^2``, so the shared :class:`~frontierbo.core.gp.FiniteDomainGP` serves as the
weighted GP with no second copy of the posterior algebra (spec 6.1 checks 1-5 are tests).

Algorithm 1, one stage ``s`` (paper line numbers)::

    2: x_s   = argmax_x  mu~_{s-1}(x) + beta_s sigma~_{s-1}(x)        -> ask()
    3: eps_s = sigma~_{s-1}(x_s) / sqrt(lambda)                       -> ask()
    4-6: y_s = QMC(O_{x_s}, eps_s, delta_s)  (N_s oracle queries)      -> the caller's oracle
    7: add (x_s, y_s) with weight 1/eps_s^2                           -> tell()

``weighting="reference"`` reproduces the authors' code, whose mean weights ``y_tau`` by
``1/epsilon_tau^3`` instead of ``1/epsilon_tau^2`` (spec 2.2): it equals the paper posterior fed with
``y_tau / epsilon_tau``, which is how it is implemented.  The variance is the same in both.

Points: the GP lives on ``gram.shape[0]`` points; the first ``n_arms`` are the arms that ``ask``
chooses from, the rest are extra points (e.g. the reference code's continuous random initial
point) that can only be observed through :meth:`observe`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from frontierbo._validation import check_int, check_matrix, check_probability, check_real
from frontierbo.core.gp import FiniteDomainGP
from frontierbo.core.kernels import PrecomputedKernel

__all__ = ["BETA_SCHEDULES", "WEIGHTINGS", "ClassicalGPUCB", "QGPUCB", "Stage"]

WEIGHTINGS = ("paper", "reference")
BETA_SCHEDULES = ("log", "theory")


@dataclass(frozen=True)
class Stage:
    """One UCB decision: the arm, the width used, the posterior there and the target accuracy."""

    index: int
    beta: float
    mean: float
    std: float
    epsilon: float


class _WeightedUCB:
    """UCB on the weighted GP posterior over arms (and optional extra points)."""

    def __init__(self, gram, *, n_arms=None, lam=1.0, beta=1.0, B=1.0, delta=0.1):
        K = check_matrix(gram, "gram")
        self.n_points = K.shape[0]
        self.n_arms = self.n_points if n_arms is None else check_int(n_arms, "n_arms", low=1)
        if self.n_arms > self.n_points:
            raise ValueError(f"n_arms must be <= gram.shape[0]={self.n_points}, got {self.n_arms}")
        self.lam = check_real(lam, "lam", low=0.0)
        self.B = check_real(B, "B", low=0.0, low_open=False)
        self.delta = check_probability(delta, "delta")
        self.gp = FiniteDomainGP(
            PrecomputedKernel.arms(self.n_points), PrecomputedKernel(K), noise_variance=self.lam
        )
        self.beta_rule = self._check_beta(beta)
        self._log_noise_sum = 0.0  # sum_tau ln(lambda eps_tau^2), for the information gain
        self._scores = np.empty(self.n_arms)

    @staticmethod
    def _check_beta(beta):
        if isinstance(beta, str):
            if beta not in BETA_SCHEDULES:
                raise ValueError(
                    f"beta must be one of {BETA_SCHEDULES}, a positive number or a callable, got {beta!r}"
                )
            return beta
        if callable(beta):
            return beta
        return check_real(beta, "beta", low=0.0)

    # -- beta_s ------------------------------------------------------------------------------
    @property
    def information_gain(self) -> float:
        """``gamma~ = 0.5 ln det(I + K~ / lambda)`` of the observations so far (Theorem 3)."""
        return 0.5 * (self.gp.log_det - self._log_noise_sum)

    def beta(self) -> float:
        """Multiplier of ``sigma~`` in the next UCB.

        ``"log"``: ``1 + ln n`` with ``n`` the observations in the model (the reference code and
        App. J; ``n = 0`` gives 1); ``"theory"``: Theorem 3's ``B + sqrt(2 (gamma~ + 1 + ln(2/delta)))``;
        a number: constant; a callable: ``beta(n)``.
        """
        n = self.gp.t
        if self.beta_rule == "log":
            return 1.0 + math.log(max(n, 1))
        if self.beta_rule == "theory":
            return self.B + math.sqrt(
                2.0 * (self.information_gain + 1.0 + math.log(2.0 / self.delta))
            )
        if callable(self.beta_rule):
            return float(self.beta_rule(n))
        return self.beta_rule

    # -- posterior over the arms ---------------------------------------------------------------
    @property
    def mean(self) -> np.ndarray:
        return self.gp.mean[: self.n_arms]

    @property
    def std(self) -> np.ndarray:
        return np.sqrt(np.maximum(self.gp._var[: self.n_arms], 0.0))

    def _choose(self) -> tuple[int, float]:
        beta = self.beta()
        s = np.maximum(self.gp._var[: self.n_arms], 0.0, out=self._scores)
        np.sqrt(s, out=s)
        s *= beta
        s += self.gp.mean[: self.n_arms]
        return int(np.argmax(s)), beta  # ties: first index, as numpy / the reference code

    def _add(self, index: int, y: float, epsilon: float) -> None:
        noise = self.lam * epsilon * epsilon
        self.gp.add(index, y, noise_variance=noise)
        self._log_noise_sum += math.log(noise)


class QGPUCB(_WeightedUCB):
    """Q-GP-UCB over a finite domain given by its Gram matrix.

    Args:
        gram: (n_points, n_points) kernel matrix, ``k(x, x) <= 1`` for the paper's guarantees.
        n_arms: the first ``n_arms`` points are the arms (default: all).
        lam: regulariser ``lambda`` (paper: ``1 + 2/T`` in theory, 1 in the experiments).
        beta: ``"log"`` (default, the experiments), ``"theory"``, a constant or ``n -> beta``.
        B, delta: RKHS-norm bound and confidence of the ``"theory"`` width.
        weighting: ``"paper"`` (eq. 3, weights ``1/eps^2``) or ``"reference"`` (authors' code,
            mean weights ``1/eps^3``; only to reproduce the published figures).
    """

    def __init__(
        self, gram, *, n_arms=None, lam=1.0, beta="log", B=1.0, delta=0.1, weighting="paper"
    ):
        super().__init__(gram, n_arms=n_arms, lam=lam, beta=beta, B=B, delta=delta)
        if weighting not in WEIGHTINGS:
            raise ValueError(f"weighting must be one of {WEIGHTINGS}, got {weighting!r}")
        self.weighting = weighting
        self.stages = 0

    def ask(self) -> Stage:
        """Lines 2-3: the arm ``x_s`` and its accuracy ``eps_s = sigma~_{s-1}(x_s) / sqrt(lambda)``."""
        i, beta = self._choose()
        std = math.sqrt(max(self.gp._var[i], 0.0))
        eps = std / math.sqrt(self.lam)
        if eps <= 0.0:
            raise RuntimeError(
                f"posterior variance at arm {i} is 0: the weighted GP cannot give it a finite weight"
            )
        return Stage(index=i, beta=beta, mean=float(self.gp.mean[i]), std=std, epsilon=eps)

    def tell(self, index: int, y: float, epsilon: float) -> None:
        """Line 7: add ``(x_s, y_s)`` with weight ``1/eps_s^2``."""
        self.observe(index, y, epsilon)
        self.stages += 1

    def observe(self, index: int, y: float, epsilon: float) -> None:
        """Add an observation of any point (arm or extra) measured to accuracy ``epsilon``."""
        epsilon = check_real(epsilon, "epsilon", low=0.0)
        y = check_real(y, "y")
        self._add(index, y / epsilon if self.weighting == "reference" else y, epsilon)


class ClassicalGPUCB(_WeightedUCB):
    """GP-UCB (paper eq. 1, one classical pull per query): the weighted posterior with every
    ``epsilon = 1``, i.e. noise variance ``lambda`` (the experiments' ``lambda = 1`` regardless of the
    true noise).  ``beta`` is the multiplier of ``sigma`` (experiments: sqrt(2) synthetic, 1 AutoML).
    """

    def ask(self) -> Stage:
        i, beta = self._choose()
        std = math.sqrt(max(self.gp._var[i], 0.0))
        return Stage(index=i, beta=beta, mean=float(self.gp.mean[i]), std=std, epsilon=1.0)

    def tell(self, index: int, y: float, epsilon: float = 1.0) -> None:
        self.observe(index, y)

    def observe(self, index: int, y: float, epsilon: float = 1.0) -> None:
        self._add(index, check_real(y, "y"), 1.0)
