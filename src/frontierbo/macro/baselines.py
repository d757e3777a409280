"""Baselines of ε-Macro-BO (spec macro-bo.md §4). So far B1, DB-GP-UCB.

B1 (Daxberger & Low 2017): the macro-action is one jointly optimised batch,

    x = argmax_{x in A(x_t)} 1^T mu_t(x) + 0.5 beta log|I + sigma_n^-2 Sigma_t(x)|,

i.e. ε-Macro-BO with H = 1. The thesis does not state beta; [ref-code] runs it with beta = 0
(the summed posterior mean), the default here (spec §9 D4).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from frontierbo._validation import check_int, check_real
from frontierbo.core.acquisition import select_max
from frontierbo.core.gp import FiniteDomainGP
from frontierbo.macro.input_tree import INFO_COVARIANCES


@dataclass(frozen=True)
class BatchChoice:
    """The chosen row of ``domain.macro_actions(location)``, its cells and every row's score."""

    action: int
    macro_action: np.ndarray
    scores: np.ndarray


def db_gp_ucb(
    gp: FiniteDomainGP,
    domain,
    location: int,
    *,
    beta: float = 0.0,
    info_covariance: str = "noisy",
) -> BatchChoice:
    """DB-GP-UCB's macro-action at ``location`` (B1); ties go to the first row."""
    location = check_int(location, "location", low=0, high=domain.n - 1)
    beta = check_real(beta, "beta", low=0.0, low_open=False)
    if info_covariance not in INFO_COVARIANCES:
        raise ValueError(
            f"info_covariance must be one of {INFO_COVARIANCES}, got {info_covariance!r}"
        )
    actions = np.asarray(domain.macro_actions(location), dtype=np.int64).reshape(-1, domain.kappa)
    if actions.shape[0] == 0:
        raise ValueError(f"location {location} has no macro-actions")
    s = gp.noise_variance
    eye = np.eye(domain.kappa)
    scores = np.empty(actions.shape[0])
    for j, x in enumerate(actions):
        mean, latent = gp.joint_posterior(x)  # mu_t(x), latent covariance given d_t
        # Sigma_t(x) of (4.1) includes sigma_n^2 I ("noisy"); "latent" drops it (§9 D1)
        cov = latent + s * eye if info_covariance == "noisy" else latent
        scores[j] = mean.sum() + 0.5 * beta * np.linalg.slogdet(eye + cov / s)[1]
    action = select_max(scores.copy())
    return BatchChoice(action, actions[action].copy(), scores)
