"""The accuracy parameters of ε-Macro-BO: ε -> (λ, δ, N) and back (thesis Theorem 4.3).

Theorem 4.3: for a target loss ``epsilon`` choose ``lambda = epsilon / (4 H^2)``,
``delta = epsilon / (8 theta H)`` and (proof of Theorem 4.1)

    N = 4 K^2 / lambda^2 * (H log(4 K^2 H A / (e lambda^2)) + log(2 / delta)),

with ``K`` the sampling constant (B.17), ``theta`` the most-likely-observation error (Theorem 4.2,
docs/decisions.md#macro-bo-computable-most-likely-error-bound-theta) and ``A`` the largest number of
macro-actions. The experiments give ``N`` instead (footnote 13); :func:`epsilon_for_samples` inverts
the formula numerically (the smallest ``epsilon`` whose ``N`` is at most the given one), which is
loose but gives the ``lambda`` of the (4.9) fallback test.

Edge cases (not in the thesis): ``N`` is rounded up and is at least 1; ``delta`` is a probability,
capped at 1 (``theta = 0``, e.g. ``H = 1``, makes the formula ``epsilon / 0``); with ``K = 0`` the
sampled values are exact and ``N = 1``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from frontierbo._validation import check_int, check_real


@dataclass(frozen=True)
class EpsilonParameters:
    """``epsilon`` and the ``lambda``, ``delta``, ``N`` it implies (Theorem 4.3)."""

    epsilon: float
    lam: float
    delta: float
    n_samples: int


def lambda_for(epsilon: float, horizon: int) -> float:
    """``lambda = epsilon / (4 H^2)`` (Theorem 4.3)."""
    return epsilon / (4.0 * horizon**2)


def delta_for(epsilon: float, horizon: int, theta: float) -> float:
    """``delta = epsilon / (8 theta H)``, capped at 1 (Theorem 4.3)."""
    if theta <= 0.0:
        return 1.0
    return min(1.0, epsilon / (8.0 * theta * horizon))


def samples_formula(lam: float, delta: float, K: float, horizon: int, A: int) -> float:
    """The real-valued ``N`` of the proof of Theorem 4.1 (may be <= 0 for a loose ``lambda``)."""
    if K == 0.0:
        return 0.0
    c = 4.0 * K**2 / lam**2
    return c * (horizon * math.log(c * horizon * A / math.e) + math.log(2.0 / delta))


def parameters_for_epsilon(
    epsilon: float, *, K: float, theta: float, horizon: int, A: int
) -> EpsilonParameters:
    """``(lambda, delta, N)`` for a target ``epsilon`` (Theorem 4.3)."""
    epsilon = check_real(epsilon, "epsilon", low=0.0)
    H = check_int(horizon, "horizon", low=1)
    lam = lambda_for(epsilon, H)
    delta = delta_for(epsilon, H, theta)
    n = samples_formula(lam, delta, K, H, A)
    return EpsilonParameters(epsilon, lam, delta, max(1, math.ceil(n)))


def epsilon_for_samples(
    n_samples: int, *, K: float, theta: float, horizon: int, A: int
) -> EpsilonParameters:
    """The smallest ``epsilon`` whose Theorem-4.3 ``N`` is at most ``n_samples`` (bisection on
    ``log epsilon``; ``N(epsilon)`` is non-increasing). ``epsilon = 0`` when ``K = 0``."""
    n_samples = check_int(n_samples, "n_samples", low=1)
    H = check_int(horizon, "horizon", low=1)
    if K == 0.0:
        return EpsilonParameters(0.0, 0.0, 1.0, n_samples)

    def n_of(eps: float) -> float:
        return samples_formula(lambda_for(eps, H), delta_for(eps, H, theta), K, H, A)

    lo, hi = -60.0, 60.0  # log epsilon; N(e^60) < 1 <= N(e^-60) for any sane K
    if n_of(math.exp(hi)) > n_samples:
        raise ValueError(f"no epsilon <= e^60 gives N <= {n_samples} (K = {K})")
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if n_of(math.exp(mid)) <= n_samples:
            hi = mid
        else:
            lo = mid
    eps = math.exp(hi)
    return EpsilonParameters(eps, lambda_for(eps, H), delta_for(eps, H, theta), n_samples)
