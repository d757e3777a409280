"""The constants of PO-GP-UCB's analysis (paper §3, App. B), for planning and reports.

All logarithms are natural. ``d_ratio = diam(X) / l`` is the theory's "d" (diameter in
length-scales), renamed so it is not confused with the input dimension.
"""

from __future__ import annotations

import math

from frontierbo._validation import check_int, check_positive, check_real


def lemma1_min_dimension(n: int, mu: float, nu: float) -> float:
    """Lemma 1: ``r >= 8 ln(n^2 / mu) / nu^2`` keeps every pairwise squared distance within
    ``[(1 - nu), (1 + nu)]`` with probability ``>= 1 - mu``. Returns the (real) bound on r."""
    n = check_int(n, "n", low=2)
    mu = check_real(mu, "mu", low=0.0, high=1.0)
    nu = check_real(nu, "nu", low=0.0, high=0.5, high_open=False)
    return 8.0 * math.log(n * n / mu) / (nu * nu)


def distance_inflation(omega: float, sigma_min: float) -> float:
    """Theorem 2's ``C' = 1 + 1[sigma_min < omega] omega^2 / sigma_min^2``."""
    omega = check_positive(omega, "omega")
    sigma_min = check_positive(sigma_min, "sigma_min")
    return 1.0 + (omega**2 / sigma_min**2 if sigma_min < omega else 0.0)


def theorem3_nu(eps_ucb: float, d_ratio: float, L: float) -> float:
    """``nu = min(eps_ucb / (2 sqrt(3) d_ratio^2 L), 2 / d_ratio^2, 1/2)``."""
    eps_ucb = check_positive(eps_ucb, "eps_ucb")
    d2 = check_positive(d_ratio, "d_ratio") ** 2
    L = check_positive(L, "L")
    return min(eps_ucb / (2.0 * math.sqrt(3.0) * d2 * L), 2.0 / d2, 0.5)


def covariance_change(nu: float, d_ratio: float, omega: float, sigma_min: float) -> float:
    """Theorem 5's ``C`` with ``|k_zz' - k_xx'| <= C k_xx'`` (eq. 10), both branches."""
    nu = check_positive(nu, "nu")
    d2 = check_positive(d_ratio, "d_ratio") ** 2
    omega = check_positive(omega, "omega")
    sigma_min = check_positive(sigma_min, "sigma_min")
    if sigma_min >= omega:
        return nu * d2
    q = omega**2 / sigma_min**2
    return max(nu * d2, 1.0 - math.exp(-0.5 * (nu + nu * q + q) * d2))


def lemma5_c1(C: float, signal_variance: float, noise_variance: float) -> float:
    """Lemma 5's ``C_1 = C sigma_y sqrt(2 sigma_y^2 + sigma_n^2) (sqrt 2 (1+C)^2 sigma_y^2 /
    sigma_n^2 + (2 + C) C)``."""
    C = check_real(C, "C", low=0.0, low_open=False)
    sy2 = check_positive(signal_variance, "signal_variance")
    sn2 = check_positive(noise_variance, "noise_variance")
    return (
        C
        * math.sqrt(sy2)
        * math.sqrt(2 * sy2 + sn2)
        * (math.sqrt(2) * (1 + C) ** 2 * sy2 / sn2 + (2 + C) * C)
    )


def lemma6_c2(C: float, signal_variance: float, noise_variance: float, L: float) -> float:
    """Lemma 6's ``C_2 = sqrt 2 (1 + C) C sigma_y^2 / sigma_n^2 L``."""
    C = check_real(C, "C", low=0.0, low_open=False)
    sy2 = check_positive(signal_variance, "signal_variance")
    sn2 = check_positive(noise_variance, "noise_variance")
    return math.sqrt(2) * (1 + C) * C * sy2 / sn2 * check_positive(L, "L")


def theorem3_bound(
    eps_ucb: float,
    C1: float,
    C2: float,
    beta_T: float,
    gamma_T: float,
    T: int,
    noise_variance: float,
) -> float:
    """Theorem 3 (if-branch): ``S_T <= sqrt(eps_ucb^2 + 24 (C2 + C1 beta_T^{1/2})^2 ln T / T
    + 24 / ln(1 + sigma_n^{-2}) beta_T gamma_T / T)``; ``gamma_T`` is the information gain."""
    T = check_int(T, "T", low=2)
    sn2 = check_positive(noise_variance, "noise_variance")
    term2 = 24.0 * (C2 + C1 * math.sqrt(beta_T)) ** 2 * math.log(T) / T
    term3 = 24.0 / math.log(1.0 + 1.0 / sn2) * beta_T * gamma_T / T
    return math.sqrt(eps_ucb**2 + term2 + term3)
