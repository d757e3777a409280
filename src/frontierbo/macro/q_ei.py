"""B3 q-EI over macro-actions (Chevalier & Ginsbourger 2013) and B7 EI (thesis Section 4.4).

q-EI treats a macro-action as one jointly optimised batch of ``q = kappa`` noisy outputs:

    x = argmax_{x in A(x_t)} E[max(0, max_i Y_i - y*)],   Y ~ N(mu_t(x), Sigma_t(x)),

``Sigma_t`` the covariance of the noisy outputs (4.1) (authors' code: Sigma includes noise), ``y*``
the best observed output. Closed form (Tallis): for k = 1..q let ``Z^(k) = M_k Y`` with
``Z_j = Y_j - Y_k`` (j != k), ``Z_k = -Y_k``, mean ``m^(k)``, covariance ``S^(k)``, threshold
``b^(k)`` (``b_k = -y*``, ``b_j = 0``); ``{Z^(k) <= b^(k)}`` is the event "Y_k is the maximum and
exceeds y*", and

    qEI = sum_k [ (mu_k - y*) Phi_q(b; m, S)
                  + sum_i S_ik phi(b_i; m_i, S_ii) Phi_{q-1}(c_.i; 0, S_.i) ],

``c_.i`` and ``S_.i`` the mean shift and covariance of the other components given ``Z_i = b_i``.
We evaluate the inner sum exactly (no finite difference, unlike authors' code); ``Phi_q`` for q >= 2
is Genz's quasi-Monte Carlo (scipy), seeded, so a call is deterministic.
:func:`q_expected_improvement_mc` is the Monte Carlo reference.

B7 EI (all, kappa = 1): single-point EI of every one-step move; with q = 1 q-EI is exactly EI.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import multivariate_normal, norm

from frontierbo._validation import as_generator, check_int
from frontierbo.core.acquisition import select_max
from frontierbo.core.gp import FiniteDomainGP
from frontierbo.macro.baselines import (
    BatchChoice,
    actions_at,
    best_observed,
    expected_improvement,
    tie_rule,
)


def _mvn_cdf(upper: np.ndarray, cov: np.ndarray, rng, abseps: float) -> float:
    """``P(X <= upper)`` for ``X ~ N(0, cov)``."""
    if upper.size == 1:
        return float(norm.cdf(upper[0] / np.sqrt(cov[0, 0])))
    return float(multivariate_normal.cdf(upper, cov=cov, abseps=abseps, releps=abseps, rng=rng))


def q_expected_improvement(mean, cov, best: float, *, seed=0, abseps: float = 1e-5) -> float:
    """Closed-form ``E[max(0, max_i Y_i - best)]`` for ``Y ~ N(mean, cov)`` (module docstring).

    ``seed`` seeds Genz's quasi-Monte Carlo for the ``Phi_q``, ``q >= 2`` (absolute error about
    ``abseps`` each).
    """
    mean = np.asarray(mean, dtype=float).reshape(-1)
    cov = np.asarray(cov, dtype=float)
    q = mean.size
    if cov.shape != (q, q):
        raise ValueError(f"cov must have shape ({q}, {q}), got {cov.shape}")
    rng = as_generator(seed)
    total = 0.0
    for k in range(q):
        M = np.eye(q)
        M[:, k] -= 1.0  # row j != k: e_j - e_k
        M[k, k] = -1.0  # row k: -e_k
        m = M @ mean
        S = M @ cov @ M.T
        S = 0.5 * (S + S.T)
        b = np.zeros(q)
        b[k] = -best
        total += (mean[k] - best) * _mvn_cdf(b - m, S, rng, abseps)
        for i in range(q):
            if S[i, k] == 0.0:
                continue
            density = norm.pdf(b[i], m[i], np.sqrt(S[i, i]))
            if q == 1:
                inner = 1.0
            else:
                keep = np.arange(q) != i
                c = (b - m - (b[i] - m[i]) * S[:, i] / S[i, i])[keep]
                S_i = (S - np.outer(S[:, i], S[i, :]) / S[i, i])[np.ix_(keep, keep)]
                inner = _mvn_cdf(c, 0.5 * (S_i + S_i.T), rng, abseps)
            total += S[i, k] * density * inner
    return float(total)


def q_expected_improvement_mc(
    mean, cov, best: float, draws: int = 1_000_000, seed=0
) -> tuple[float, float]:
    """Monte Carlo ``(estimate, standard error)`` of q-EI (the reference of the closed form)."""
    draws = check_int(draws, "draws", low=2)
    y = as_generator(seed).multivariate_normal(np.asarray(mean, float), np.asarray(cov, float),
                                               size=draws, method="cholesky")  # fmt: skip
    gain = np.maximum(y.max(axis=1) - best, 0.0)
    return float(gain.mean()), float(gain.std(ddof=1) / np.sqrt(draws))


def q_ei(gp: FiniteDomainGP, domain, location: int, *, seed=None, cdf_seed: int = 0) -> BatchChoice:
    """B3: the macro-action at ``location`` with the largest q-EI (``scores`` = every row's)."""
    actions = actions_at(domain, location)
    best = best_observed(gp)
    noise = gp.noise_variance * np.eye(domain.kappa)
    scores = np.empty(actions.shape[0])
    for r, x in enumerate(actions):
        mean, latent = gp.joint_posterior(x)
        scores[r] = q_expected_improvement(mean, latent + noise, best, seed=cdf_seed)
    ties, rng = tie_rule(seed)
    action = select_max(scores.copy(), ties=ties, rng=rng)
    return BatchChoice(action, actions[action].copy(), scores)


def ei(gp: FiniteDomainGP, domain, location: int, *, seed=None) -> BatchChoice:
    """B7 EI (kappa = 1): the one-step move with the largest EI of a noisy output."""
    if domain.kappa != 1:
        raise ValueError(f"EI (B7) takes single-step moves (kappa = 1), got kappa={domain.kappa}")
    actions = actions_at(domain, location)
    cells = actions[:, 0]
    std = np.sqrt(gp.posterior_variance()[cells] + gp.noise_variance)
    scores = expected_improvement(gp.mean[cells], std, best_observed(gp))
    ties, rng = tie_rule(seed)
    action = select_max(scores.copy(), ties=ties, rng=rng)
    return BatchChoice(action, actions[action].copy(), scores)
