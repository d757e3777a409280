"""Algorithm 6 of the thesis (Section 5.2): DimensionBO, GP-UCB over the latent dimension.

The GP's inputs are tuples ``(d_0, t_0)`` (a latent dimension and the query count at the end of
a perturbation loop run in it), its outputs the best objective that loop reached. Scoring every
allowed dimension at ``t_0 = t + i_max`` asks: "had the next loop run in ``d_0``, how good would
its best output be?".

    1  fit the GP on D_dim (Matérn-5/2, hyperparameters by MLE, re-learned every call)
    2  for each d_0 in d_allowed: x <- (d_0, t + i_max); alpha(d_0) <- mu(x) + 2 sigma(x)
    3  d* <- argmax alpha (ties: the first in list order)
    4  return d*

Choices where the thesis is silent (docs/decisions.md#bos-dimension-gp-scaling-and-bounds): inputs
scaled to [0, 1] (``(d_0 - d_min) / (d_max - d_min)``, ``t_0 / T``), standardised outputs, an
isotropic lengthscale, bounds ``l in [1e-2, 10]``, ``sigma_f^2 in [1e-2, 1e2]``,
``sigma_n^2 in [1e-6, 1]``, L-BFGS-B with 5 restarts. ``sigma`` includes the noise, as (3.2) does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from frontierbo._validation import check_int, check_real
from frontierbo.attack.add_gp_ucb import standardise
from frontierbo.core.exact import ExactGP
from frontierbo.core.kernel_fit import fit_kernel
from frontierbo.core.kernels import Matern52

#: A datum of D_dim: ((d_0, t_0), best objective of that loop).
DimensionDatum = tuple[tuple[int, int], float]


def candidate_inputs(allowed: Sequence[int], t: int, i_max: int) -> np.ndarray:
    """Line 2's inputs ``(d_0, t + i_max)`` for every allowed dimension: shape (len(allowed), 2)."""
    return np.array([(d, t + i_max) for d in allowed], dtype=float)


def select_dimension(
    predict: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    allowed: Sequence[int],
    t: int,
    i_max: int,
    beta_sqrt: float = 2.0,
) -> tuple[int, np.ndarray]:
    """Lines 2-3 given a posterior ``predict(inputs) -> (mean, variance)``: ``d*`` and the scores."""
    mean, var = predict(candidate_inputs(allowed, t, i_max))
    scores = mean + beta_sqrt * np.sqrt(np.maximum(var, 0.0))
    return int(allowed[int(np.argmax(scores))]), scores  # argmax: ties to the first


@dataclass(frozen=True)
class DimensionBO:
    """Algorithm 6 with its GP settings.

    Args:
        allowed: ``d_allowed``, the latent dimensions to choose from.
        budget: ``T``, which scales the query-count input to [0, 1].
        i_max: the loop length the candidates look ahead by.
        beta_sqrt: the UCB weight (the thesis's footnote: a constant 2).
        n_restarts, fit_maxiter: the MLE's restarts and L-BFGS-B iterations.
    """

    allowed: tuple[int, ...]
    budget: int
    i_max: int = 40
    beta_sqrt: float = 2.0
    n_restarts: int = 5
    fit_maxiter: int = 1000
    lengthscale_bounds: tuple[float, float] = (1e-2, 10.0)
    variance_bounds: tuple[float, float] = (1e-2, 1e2)
    noise_bounds: tuple[float, float] = (1e-6, 1.0)

    def __post_init__(self):
        allowed = tuple(check_int(d, "allowed", low=1) for d in self.allowed)
        if len(allowed) < 1 or len(set(allowed)) != len(allowed):
            raise ValueError(f"allowed must be distinct positive dimensions, got {self.allowed}")
        object.__setattr__(self, "allowed", allowed)
        check_int(self.budget, "budget", low=1)
        check_int(self.i_max, "i_max", low=1)
        check_real(self.beta_sqrt, "beta_sqrt", low=0.0, low_open=False)
        check_int(self.n_restarts, "n_restarts", low=1)

    def _scale(self, inputs: np.ndarray) -> np.ndarray:
        lo, hi = min(self.allowed), max(self.allowed)
        scaled = np.array(inputs, dtype=float)
        scaled[:, 0] = (scaled[:, 0] - lo) / (hi - lo) if hi > lo else 0.0
        scaled[:, 1] /= self.budget
        return scaled

    def fit(self, data: Sequence[DimensionDatum], rng: np.random.Generator) -> ExactGP:
        """Line 1: the GP on D_dim, hyperparameters re-learned by MLE."""
        X = self._scale(np.array([x for x, _ in data], dtype=float))
        y = standardise(np.array([v for _, v in data], dtype=float))
        fit = fit_kernel(
            X,
            y,
            Matern52(1.0, 1.0),
            bounds=[self.variance_bounds, self.lengthscale_bounds],
            noise_bounds=self.noise_bounds,
            n_restarts=self.n_restarts,
            maxiter=self.fit_maxiter,
            seed=rng,
        )
        return ExactGP(X, y, fit.kernel, fit.noise_variance)

    def __call__(
        self, data: Sequence[DimensionDatum], t: int, rng: np.random.Generator
    ) -> tuple[int, np.ndarray]:
        """``d*`` for the next loop after ``t`` queries, and the UCB scores of ``allowed``."""
        gp = self.fit(data, rng)  # line 1

        def predict(inputs):
            return gp.predict(self._scale(inputs), include_noise=True)  # (3.2) includes sigma_n^2

        return select_dimension(predict, self.allowed, t, self.i_max, self.beta_sqrt)  # lines 2-4
