"""Greedy-batch baselines over macro-actions (thesis Section 4.4 and its footnote 11).

Each builds its macro-action one cell at a time with :func:`~frontierbo.macro.baselines.greedy_batch`
(step j scores the j-th cells of the macro-actions consistent with the chosen prefix) and scores
cells with the GP's posterior at ``d_t``; GP-BUCB and GP-UCB-PE condition the variance on the
chosen prefix by hallucination (``FiniteDomainGP.hallucinated``; B4 is the core's GP-BUCB,
:func:`~frontierbo.core.gp_ucb.gp_bucb_scores`).

B4 GP-BUCB (Desautels et al. 2014): step j scores ``mu_t(x) + beta_tau^1/2 sigma_{t,j-1}(x)``,
   ``beta_tau = 0.2 * 2 log(|X| tau^2 pi^2 / (6 delta))``, ``tau = kappa t + j`` (authors' code).
B5 GP-UCB-PE (Contal et al. 2013): step 1 is UCB with ``beta_t = 2 log(|X| (t+1)^2 pi^2 /
   (6 delta))``; steps j >= 2 maximise the hallucinated variance ``sigma^2_{t,j-1}(x)``
   (optionally inside the relevant region; authors' code omits it, so off by default).
B6 BBO-LP (González et al. 2016a): step 1 maximises ``g(EI(x))``, ``g(a) = log(1 + e^a)``; step
   j >= 2 multiplies by the local penalisers ``phi(x; x_i) = erfc(-z) / 2`` of the chosen cells,
   ``z = (L ||x_i - x|| - M + mu_t(x_i)) / sqrt(2 sigma_t^2(x_i))`` (no hallucination).

Here ``t`` is the 0-based BO iteration (``iteration``), ``|X|`` the domain size (``domain_size``,
default ``gp.n``; authors' code uses 2500 plankton, 5000 traffic = the whole grid, 145 temperature).
GP-BUCB and GP-UCB-PE use the latent std (the GP-UCB convention); EI and BBO-LP's penaliser the
std of a noisy output (GPyOpt's ``predict``;
docs/decisions.md#macro-bo-ei-uses-the-noisy-output-std).
"""

from __future__ import annotations

import numpy as np
from scipy.special import erfc

from frontierbo._validation import check_int, check_probability, check_real
from frontierbo.core.acquisition import beta_srinivas, ucb, width_from_beta
from frontierbo.core.gp import FiniteDomainGP
from frontierbo.core.gp_ucb import gp_bucb_scores
from frontierbo.macro.baselines import (
    GreedyChoice,
    actions_at,
    best_observed,
    expected_improvement,
    greedy_batch,
)


def _size(gp: FiniteDomainGP, domain_size) -> int:
    return gp.n if domain_size is None else check_int(domain_size, "domain_size", low=1)


def gp_bucb_beta(
    iteration: int, step: int, kappa: int, domain_size: int, *, delta=0.1, scale=0.2
) -> float:
    """GP-BUCB's ``beta_tau = scale * 2 log(|X| tau^2 pi^2 / (6 delta))``, ``tau = kappa t + j``
    (``iteration`` t >= 0, ``step`` j in 1..kappa; authors' code scale 0.2, delta 0.1)."""
    tau = kappa * check_int(iteration, "iteration", low=0) + check_int(step, "step", low=1)
    return check_real(scale, "scale", low=0.0, low_open=False) * beta_srinivas(
        tau, domain_size, delta
    )


def gp_bucb(
    gp: FiniteDomainGP,
    domain,
    location: int,
    *,
    iteration: int = 0,
    beta: float | None = None,
    delta: float = 0.1,
    beta_scale: float = 0.2,
    domain_size: int | None = None,
    first_location_mean: bool = False,
    seed=None,
) -> GreedyChoice:
    """B4 GP-BUCB's macro-action at ``location``.

    ``beta=None`` uses :func:`gp_bucb_beta` at every step, a number a constant beta.
    ``first_location_mean=True`` reproduces the authors' code's bug
    (docs/decisions.md#macro-bo-reference-code-bugs-are-opt-in): every step after the
    first scores with the mean of the chosen first cell (a constant, so it maximises the std).
    """
    actions = actions_at(domain, location)
    n_x = _size(gp, domain_size)
    if beta is not None:
        beta = check_real(beta, "beta", low=0.0, low_open=False)

    def step_score(j: int, prefix: np.ndarray, cells: np.ndarray) -> np.ndarray:
        b = beta
        if b is None:
            b = gp_bucb_beta(iteration, j + 1, domain.kappa, n_x, delta=delta, scale=beta_scale)
        if first_location_mean and j > 0:
            _, var = gp.hallucinated(cells, prefix)  # sigma^2_{t,j-1}: prefix hallucinated
            return ucb(np.full(cells.size, gp.mean[prefix[0]]), np.sqrt(var), b)
        return gp_bucb_scores(gp, width_from_beta(b), prefix, cells)  # the mean stays mu_t

    return greedy_batch(actions, step_score, seed=seed)


def gp_ucb_pe(
    gp: FiniteDomainGP,
    domain,
    location: int,
    *,
    iteration: int = 0,
    beta: float | None = None,
    delta: float = 0.1,
    domain_size: int | None = None,
    relevant_region: bool = False,
    seed=None,
) -> GreedyChoice:
    """B5 GP-UCB-PE's macro-action at ``location``.

    ``beta=None``: ``beta_t = 2 log(|X| (t+1)^2 pi^2 / (6 delta))``. ``relevant_region=True``
    restricts steps >= 2 to ``{x : mu_t + 2 sqrt(beta_t) sigma_t >= y_t}``, ``y_t = max_X(mu_t -
    sqrt(beta_t) sigma_t)``; if no candidate cell lies in it, the step is unrestricted.
    """
    actions = actions_at(domain, location)
    if beta is None:
        beta = beta_srinivas(check_int(iteration, "iteration", low=0) + 1, _size(gp, domain_size),
                             check_probability(delta, "delta"))  # fmt: skip
    beta = check_real(beta, "beta", low=0.0, low_open=False)
    std_t = gp.std
    lower_best = float(np.max(gp.mean - np.sqrt(beta) * std_t))  # y_t of the relevant region

    def step_score(j: int, prefix: np.ndarray, cells: np.ndarray) -> np.ndarray:
        if j == 0:  # line: UCB over the first cells
            return ucb(gp.mean[cells], std_t[cells], beta)
        _, var = gp.hallucinated(cells, prefix)  # pure exploration
        if relevant_region:
            inside = gp.mean[cells] + 2.0 * np.sqrt(beta) * std_t[cells] >= lower_best
            if inside.any():
                var = np.where(inside, var, -np.inf)
        return var

    return greedy_batch(actions, step_score, seed=seed)


def lipschitz_estimate(gp: FiniteDomainGP, *, block: int = 512) -> float:
    """``L`` for BBO-LP: the largest slope ``|mu_t(a) - mu_t(b)| / ||a - b||`` over pairs of
    distinct cells — the finite-domain stand-in for GPyOpt's ``max ||grad mu_t||``; like GPyOpt,
    10 when it is below 1e-7."""
    X, mu = gp.candidates, gp.mean
    best = 0.0
    for start in range(0, X.shape[0], block):
        d = np.linalg.norm(X[start : start + block, None, :] - X[None, :, :], axis=-1)
        diff = np.abs(mu[start : start + block, None] - mu[None, :])
        with np.errstate(divide="ignore", invalid="ignore"):
            slope = np.where(d > 0, diff / np.where(d > 0, d, 1.0), 0.0)
        best = max(best, float(slope.max()))
    return best if best >= 1e-7 else 10.0


def bbo_lp(
    gp: FiniteDomainGP,
    domain,
    location: int,
    *,
    lipschitz: float | str = "estimate",
    variance_as_std: bool = False,
    seed=None,
) -> GreedyChoice:
    """B6 BBO-LP's macro-action at ``location``.

    ``lipschitz``: ``"estimate"`` (:func:`lipschitz_estimate`, the published method) or a number
    in the GP's coordinate units (authors' code hard-codes 10). ``variance_as_std=True`` reproduces
    the authors' code's bug of passing the variance where EI needs the std
    (docs/decisions.md#macro-bo-reference-code-bugs-are-opt-in).
    """
    actions = actions_at(domain, location)
    if isinstance(lipschitz, str):
        if lipschitz != "estimate":
            raise ValueError(f"lipschitz must be 'estimate' or a number, got {lipschitz!r}")
        L = lipschitz_estimate(gp)
    else:
        L = check_real(lipschitz, "lipschitz", low=0.0, low_open=False)
    M = best_observed(gp)
    var = gp.posterior_variance() + gp.noise_variance  # of a noisy output
    std = np.sqrt(var)
    g = np.logaddexp(0.0, expected_improvement(gp.mean, var if variance_as_std else std, M))
    X = gp.candidates

    def step_score(j: int, prefix: np.ndarray, cells: np.ndarray) -> np.ndarray:
        score = g[cells].copy()  # step 1: g(EI(x))
        for xi in prefix:  # steps j >= 2: times prod_{i<j} phi(x; x_i)
            dist = np.linalg.norm(X[cells] - X[xi], axis=1)
            z = (L * dist - M + gp.mean[xi]) / np.sqrt(2.0 * var[xi])
            score *= 0.5 * erfc(-z)
        return score

    return greedy_batch(actions, step_score, seed=seed)
