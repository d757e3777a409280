"""Q-LinUCB and LinUCB: Q-GP-UCB and GP-UCB with the linear kernel ``k(x, x') = x^T x'``.

With ``phi(x) = x`` the weighted posterior of :mod:`frontierbo.quantum.q_gp_ucb` is weighted ridge
regression: ``mu~(x) = x^T theta^``, ``theta^ = V^{-1} X^T W Y``, ``V = lambda I + X^T W X``, and
``sigma~(x) = sqrt(lambda) ||x||_{V^{-1}}``, so Algorithm 1 chooses ``eps_s = ||x_s||_{V^{-1}}`` --
Q-LinUCB's accuracy rule (Section 5.6 and Appendix H of the paper).  As in
:mod:`frontierbo.quantum.q_gp_ucb`, the paper's ``epsilon_s`` (``eps_s`` in formulas) is the
``accuracy`` of ``Stage``, ``tell`` and ``observe``.

Confidence radii (``"theory"``; multipliers of ``||x||_{V^{-1}}``, divided by ``sqrt(lambda)`` to
multiply ``sigma~``, i.e. widths in the sense of :mod:`frontierbo.core.acquisition`):

* Q-LinUCB, the paper's improved ellipsoid (Theorem 6, App. H eq. 62, ``1/delta`` inside the log):
  ``rho_s = sqrt(2 d ln((1 + L^2/lambda sum_{k<s} eps_k^{-2}) / delta)) + sqrt(lambda) S``.
* LinUCB (OFUL, Abbasi-Yadkori et al. 2011):
  ``beta_t = R sqrt(d ln((1 + t L^2/lambda) / delta)) + sqrt(lambda) S`` (OFUL's symbol; a radius).

The experiments instead use the kernel method's schedule (``1 + ln n`` quantum, a constant
classical) and raw inputs in ``[0, 1]^d`` with no intercept; the reference code's
quantum-linear quirks (unweighted Gram, ``eps`` at the previous point) are not reproduced
(docs/decisions.md#quantum-bo-linear-bandits-use-raw-inputs-and-no-reference-quirks).
"""

from __future__ import annotations

import math

import numpy as np

from frontierbo._validation import check_matrix, check_real
from frontierbo.quantum.q_gp_ucb import QGPUCB, ClassicalGPUCB

__all__ = ["LinUCB", "QLinUCB", "linear_gram"]


def linear_gram(points) -> np.ndarray:
    """``X X^T`` for points (n, d): the linear kernel's Gram matrix."""
    X = check_matrix(points, "points")
    return X @ X.T


class QLinUCB(QGPUCB):
    """Q-LinUCB on inputs ``points`` (n_points, d); the first ``n_arms`` are the arms.

    ``width="theory"`` (default) uses Theorem 6's radius with bounds ``S >= ||theta*||`` and
    ``L >= max ||x||`` (default: the largest input norm); other ``width`` values as
    :class:`QGPUCB`.
    """

    def __init__(
        self,
        points,
        *,
        n_arms=None,
        lam=1.0,
        width="theory",
        S=1.0,
        L=None,
        delta=0.1,
        weighting="paper",
    ):
        X = check_matrix(points, "points")
        self.d = X.shape[1]
        self.S = check_real(S, "S", low=0.0, low_open=False)
        self.L = (
            float(np.linalg.norm(X, axis=1).max()) if L is None else check_real(L, "L", low=0.0)
        )
        self._sum_inv_eps2 = 0.0
        super().__init__(
            linear_gram(X), n_arms=n_arms, lam=lam, width=width, delta=delta, weighting=weighting
        )

    def width(self) -> float:
        if self.width_rule != "theory":
            return super().width()
        lam = self.lam
        inside = (1.0 + self.L**2 / lam * self._sum_inv_eps2) / self.delta
        rho = math.sqrt(2.0 * self.d * math.log(inside)) + math.sqrt(lam) * self.S
        return rho / math.sqrt(lam)

    def _add(self, index, y, accuracy):
        super()._add(index, y, accuracy)
        self._sum_inv_eps2 += 1.0 / (accuracy * accuracy)


class LinUCB(ClassicalGPUCB):
    """LinUCB / OFUL on inputs ``points``; ``width="theory"`` (default) is OFUL's radius with
    sub-Gaussian noise scale ``R``; a number is a constant multiplier of ``sigma`` (the
    experiments)."""

    def __init__(
        self,
        points,
        *,
        n_arms=None,
        lam=1.0,
        width="theory",
        R=1.0,
        S=1.0,
        L=None,
        delta=0.1,
    ):
        X = check_matrix(points, "points")
        self.d = X.shape[1]
        self.R = check_real(R, "R", low=0.0)
        self.S = check_real(S, "S", low=0.0, low_open=False)
        self.L = (
            float(np.linalg.norm(X, axis=1).max()) if L is None else check_real(L, "L", low=0.0)
        )
        super().__init__(linear_gram(X), n_arms=n_arms, lam=lam, width=width, delta=delta)

    def width(self) -> float:
        if self.width_rule != "theory":
            return super().width()
        lam, t = self.lam, self.gp.t
        radius = self.R * math.sqrt(self.d * math.log((1.0 + t * self.L**2 / lam) / self.delta))
        return (radius + math.sqrt(lam) * self.S) / math.sqrt(lam)
