"""B8 Rollout (Lam, Willcox & Wolpert 2016) with kappa = 1 (thesis Section 4.4.4).

"Rollout-h-N_q": the value of a first move x from the agent's location is

    Q(x) = sum_q w_q [ r(y_q) + gamma * W_{h-1}(<d, x, y_q>) ],      (h >= 2)
    Q(x) = EI(x)                                                     (h = 1),

``y_q = mu(x) + sqrt(2) sigma(x) u_q`` the Gauss–Hermite nodes ``u_q`` (weights ``w_q``, normalised
to 1) of the noisy output ``y ~ N(mu, sigma^2)``, ``r(y) = max(0, y - y*)`` the improvement over
the best output so far (updated along the rollout). ``W_s`` follows the base policy from the
move's end for s more steps; the base policy only moves to neighbours of its position:

    non-final step: x' = argmax EI, value sum_q w_q [r(y_q) + gamma W_{s-1}(<..., x', y_q>)]
    final step:     x' = argmax mu (authors' code; ``final_step="ei"``: argmax EI), value EI(x')

(docs/decisions.md#macro-bo-rollout-base-policy-as-in-the-reference-code; Lam et al.'s greedy EI
policy is ``final_step="ei"``). A dead end contributes 0. Fantasised outputs condition the GP by
``FiniteDomainGP.hallucinated`` (no GP copy). ``quadrature`` N_q: 1 (node 0, weight 1, authors'
code) or more (Lam et al.; 3 is the rule commented out in authors' code). With h = 1 Rollout is
its base policy's step: argmax EI.
"""

from __future__ import annotations

import numpy as np

from frontierbo._validation import check_int, check_real
from frontierbo.core.acquisition import select_max
from frontierbo.core.gp import FiniteDomainGP
from frontierbo.macro.baselines import (
    BatchChoice,
    actions_at,
    best_observed,
    expected_improvement,
    tie_rule,
)

FINAL_STEPS = ("mean", "ei")


class Rollout:
    """Rollout-h over single-step moves (``domain.kappa == 1``).

    Args:
        gp: the GP holding the data ``d_t`` (rows = the domain's cells).
        domain: a :class:`~frontierbo.macro.domain.MacroDomain` with ``kappa = 1``.
        horizon: the rolling horizon h (the thesis's Rollout-4-10: 4).
        gamma: the discount (1.0 in the thesis).
        quadrature: Gauss–Hermite nodes N_q per fantasised output.
        final_step: how the base policy picks its last move, ``"mean"`` or ``"ei"``.

    Attributes:
        states: decision states scored so far (the root's and every fantasised one): the
            runner's node count.
    """

    def __init__(
        self,
        gp: FiniteDomainGP,
        domain,
        *,
        horizon: int = 4,
        gamma: float = 1.0,
        quadrature: int = 1,
        final_step: str = "mean",
    ):
        if domain.kappa != 1:
            raise ValueError(f"Rollout takes single-step moves (kappa = 1), got {domain.kappa}")
        if final_step not in FINAL_STEPS:
            raise ValueError(f"final_step must be one of {FINAL_STEPS}, got {final_step!r}")
        self.gp, self.domain = gp, domain
        self.horizon = check_int(horizon, "horizon", low=1)
        self.gamma = check_real(gamma, "gamma", low=0.0, low_open=False)
        nodes, weights = np.polynomial.hermite.hermgauss(check_int(quadrature, "quadrature", low=1))
        self.nodes, self.weights = np.sqrt(2.0) * nodes, weights / np.sqrt(np.pi)
        self.final_step = final_step
        self.states = 0  # decision states scored (the root's and every fantasised one)

    def _posterior(self, cells, prefix, ys):
        self.states += 1
        mean, var = self.gp.hallucinated(cells, prefix, ys)
        return mean, np.sqrt(var + self.gp.noise_variance)  # the noisy output's std

    def _expand(self, steps, cell, mean, std, prefix, ys, best) -> float:
        """``sum_q w_q [r(y_q) + gamma W_{steps}]`` after moving to ``cell`` (mean, std there)."""
        total = 0.0
        for u, w in zip(self.nodes, self.weights, strict=True):
            y = mean + std * u
            future = self._base(steps, cell, prefix + [cell], ys + [y], max(best, y))
            total += w * (max(0.0, y - best) + self.gamma * future)
        return total

    def _base(self, steps: int, position: int, prefix, ys, best: float) -> float:
        """``W_steps``: the base policy's value for ``steps`` more moves from ``position``."""
        if steps == 0:
            return 0.0
        cells = np.asarray(self.domain.macro_actions(position), dtype=np.int64).reshape(-1)
        if cells.size == 0:
            return 0.0
        mean, std = self._posterior(cells, prefix, ys)
        ei = expected_improvement(mean, std, best)
        if steps == 1:  # final step: its EI, analytically
            pick = select_max((mean if self.final_step == "mean" else ei).copy())
            return float(ei[pick])
        pick = select_max(ei.copy())  # non-final step: greedy EI
        return self._expand(steps - 1, int(cells[pick]), mean[pick], std[pick], prefix, ys, best)

    def values(self, location: int) -> tuple[np.ndarray, np.ndarray]:
        """``(actions, Q)``: every move at ``location`` and its rollout value."""
        actions = actions_at(self.domain, location)
        cells = actions[:, 0]
        best = best_observed(self.gp)
        mean, std = self._posterior(cells, [], [])
        if self.horizon == 1:
            return actions, expected_improvement(mean, std, best)
        q = np.array([
            self._expand(self.horizon - 1, int(c), m, s, [], [], best)
            for c, m, s in zip(cells, mean, std, strict=True)
        ])  # fmt: skip
        return actions, q

    def plan(self, location: int, *, seed=None) -> BatchChoice:
        """The move with the largest rollout value (``scores`` = every move's ``Q``)."""
        actions, q = self.values(location)
        ties, rng = tie_rule(seed)
        action = select_max(q.copy(), ties=ties, rng=rng)
        return BatchChoice(action, actions[action].copy(), q)
