"""Baselines of ε-Macro-BO (thesis Section 4.4): B1 DB-GP-UCB and the shared pieces.

B1 (Daxberger & Low 2017): the macro-action is one jointly optimised batch,

    x = argmax_{x in A(x_t)} 1^T mu_t(x) + 0.5 beta log|I + sigma_n^-2 Sigma_t(x)|,

i.e. ε-Macro-BO with H = 1. The thesis does not state beta; authors' code runs it with beta = 0
(the summed posterior mean), the default here
(docs/decisions.md#macro-bo-db-gp-ucb-and-nonmyopic-gp-ucb-use-beta-0).

Shared by the other baselines (``baselines_batch``, ``q_ei``, ``rollout``):

* :func:`greedy_batch` — the greedy-batch adaptation of footnote 11: a batch is built one input
  at a time; at step j only the macro-actions whose first j - 1 cells equal the chosen ones remain,
  their j-th cells are scored, the best is chosen; after kappa steps the remaining row is chosen.
* :func:`expected_improvement` — single-point EI
  (docs/decisions.md#macro-bo-ei-uses-the-noisy-output-std).

Ties: a baseline given ``seed=None`` breaks ties by the lowest row (``np.argmax``); given a seed or
a Generator, uniformly at random among exactly tied rows (authors' code breaks ties at random with a
1e-8 tolerance; we use the shared ``select_max``, whose ties are exact).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr

from frontierbo._validation import as_generator, check_int, check_real
from frontierbo.core.acquisition import select_max
from frontierbo.core.gp import FiniteDomainGP
from frontierbo.macro.input_tree import INFO_COVARIANCES

_SQRT_2PI = np.sqrt(2.0 * np.pi)


@dataclass(frozen=True)
class BatchChoice:
    """The chosen row of ``domain.macro_actions(location)``, its cells and every row's score."""

    action: int
    macro_action: np.ndarray
    scores: np.ndarray

    @property
    def score(self) -> float:
        return float(self.scores[self.action])


@dataclass(frozen=True)
class GreedyChoice:
    """A greedy batch's choice: ``step_scores`` (m, kappa) holds, at step j, the score of row r's
    j-th cell when row r was still consistent with the chosen prefix, NaN once it was filtered
    out; ``score`` is the chosen row's last step score."""

    action: int
    macro_action: np.ndarray
    step_scores: np.ndarray

    @property
    def score(self) -> float:
        return float(self.step_scores[self.action, -1])


def actions_at(domain, location: int) -> np.ndarray:
    """``domain.macro_actions(location)`` as an int array (m, kappa); m = 0 raises."""
    location = check_int(location, "location", low=0, high=domain.n - 1)
    actions = np.asarray(domain.macro_actions(location), dtype=np.int64).reshape(-1, domain.kappa)
    if actions.shape[0] == 0:
        raise ValueError(f"location {location} has no macro-actions")
    return actions


def tie_rule(seed) -> tuple[str, np.random.Generator | None]:
    """``(ties, rng)`` for :func:`select_max`: lowest row for ``seed=None``, else random."""
    if seed is None:
        return "lowest", None
    return "random", as_generator(seed)


def best_observed(gp: FiniteDomainGP) -> float:
    """``y*``: the largest observed output (EI's and q-EI's incumbent)."""
    if gp.t == 0:
        raise ValueError("the GP has no observations: EI needs the best observed output y*")
    return float(gp.observed_values.max())


def expected_improvement(mean, std, best: float) -> np.ndarray:
    """``EI = (mu - y*) Phi(Z) + sigma phi(Z)``, ``Z = (mu - y*) / sigma``;
    ``max(0, mu - y*)`` where ``sigma = 0``."""
    mean = np.asarray(mean, dtype=float)
    std = np.asarray(std, dtype=float)
    gain = mean - best
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(std > 0, gain / np.where(std > 0, std, 1.0), 0.0)
    ei = gain * ndtr(z) + std * np.exp(-0.5 * z * z) / _SQRT_2PI
    return np.where(std > 0, ei, np.maximum(gain, 0.0))


# -- footnote 11: the greedy-batch filter -------------------------------------------------------
StepScore = Callable[[int, np.ndarray, np.ndarray], np.ndarray]


def greedy_batch(actions: np.ndarray, step_score: StepScore, *, seed=None) -> GreedyChoice:
    """Choose a row of ``actions`` (m, kappa) one cell at a time (footnote 11).

    ``step_score(j, prefix, cells)`` scores the distinct candidate cells ``cells`` for position j
    (0-based) given the chosen ``prefix`` (j cells); a cell may score ``-inf`` (not allowed).
    Distinct cells are listed in order of first appearance, so ``seed=None`` (ties to the lowest)
    follows the rows' order.
    """
    actions = np.asarray(actions, dtype=np.int64)
    m, kappa = actions.shape
    ties, rng = tie_rule(seed)
    table = np.full((m, kappa), np.nan)
    alive = np.arange(m)
    prefix: list[int] = []
    for j in range(kappa):  # step j + 1 of the batch
        column = actions[alive, j]
        _, first, inverse = np.unique(column, return_index=True, return_inverse=True)
        order = np.argsort(first)  # distinct cells in order of first appearance
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        cells, inverse = column[first[order]], rank[inverse.reshape(-1)]
        scores = np.asarray(step_score(j, np.asarray(prefix, dtype=np.int64), cells), dtype=float)
        table[alive, j] = scores[inverse]
        best = select_max(scores.copy(), ties=ties, rng=rng)  # the j-th location
        prefix.append(int(cells[best]))
        alive = alive[inverse == best]  # keep the rows consistent with the prefix
    pick = 0 if alive.size == 1 else select_max(np.zeros(alive.size), ties=ties, rng=rng)
    action = int(alive[pick])
    return GreedyChoice(action, actions[action].copy(), table)


# -- B1 --------------------------------------------------------------------------------------------
def db_gp_ucb(
    gp: FiniteDomainGP,
    domain,
    location: int,
    *,
    beta: float = 0.0,
    info_covariance: str = "noisy",
) -> BatchChoice:
    """DB-GP-UCB's macro-action at ``location`` (B1); ties go to the first row."""
    beta = check_real(beta, "beta", low=0.0, low_open=False)
    if info_covariance not in INFO_COVARIANCES:
        raise ValueError(
            f"info_covariance must be one of {INFO_COVARIANCES}, got {info_covariance!r}"
        )
    actions = actions_at(domain, location)
    s = gp.noise_variance
    eye = np.eye(domain.kappa)
    scores = np.empty(actions.shape[0])
    for j, x in enumerate(actions):
        mean, latent = gp.joint_posterior(x)  # mu_t(x), latent covariance given d_t
        # Sigma_t(x) of (4.1) includes sigma_n^2 I ("noisy"); "latent" drops it
        cov = latent + s * eye if info_covariance == "noisy" else latent
        scores[j] = mean.sum() + 0.5 * beta * np.linalg.slogdet(eye + cov / s)[1]
    action = select_max(scores.copy())
    return BatchChoice(action, actions[action].copy(), scores)
