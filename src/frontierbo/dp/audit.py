"""Statistics of empirical differential-privacy audits, for any mechanism.

The hypothesis-testing form of (epsilon, delta)-DP: for every event O and neighbours X, X',
``P(M(X) in O) <= e^eps P(M(X') in O) + delta``, so ``eps >= ln((P(M(X) in O) - delta) /
P(M(X') in O))``. A statistically valid lower bound replaces the two probabilities by one-sided
Clopper-Pearson bounds (each at level alpha / 2, so both hold jointly with probability
>= 1 - alpha). :func:`threshold_audit` does this for any scalar test statistic of a release.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import beta as _beta

from frontierbo._validation import (
    SeedLike,
    as_generator,
    check_int,
    check_probability,
    check_real,
    check_vector,
)

# --------------------------------------------------------------------------------------------
# Clopper-Pearson bounds and the epsilon lower bound
# --------------------------------------------------------------------------------------------


def clopper_pearson_lower(k, n, level: float):
    """One-sided Clopper-Pearson lower bound on a binomial rate: P(p >= bound) >= 1 - level.

    Vectorised over ``k`` (successes) and ``n`` (trials); 0 where k = 0, nan where n = 0.
    """
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(k > 0, _beta.ppf(level, np.maximum(k, 1), n - k + 1), 0.0)
    return np.where(n > 0, out, np.nan)[()]


def clopper_pearson_upper(k, n, level: float):
    """One-sided Clopper-Pearson upper bound on a binomial rate: P(p <= bound) >= 1 - level.

    Vectorised over ``k`` and ``n``; 1 where k = n, nan where n = 0.
    """
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(k < n, _beta.ppf(1.0 - level, k + 1, np.maximum(n - k, 1)), 1.0)
    return np.where(n > 0, out, np.nan)[()]


def _eps_from_rates(p_num, p_den, delta: float):
    """``ln((p_num - delta) / p_den)`` clipped at 0 (no information); inf when p_den = 0."""
    p_num = np.asarray(p_num, dtype=float)
    p_den = np.asarray(p_den, dtype=float)
    top = p_num - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        val = np.where(
            top <= 0, 0.0, np.where(p_den <= 0, np.inf, np.log(np.maximum(top, 1e-300) / p_den))
        )
    val = np.where(np.isnan(p_num) | np.isnan(p_den), 0.0, val)
    return np.maximum(val, 0.0)[()]


def epsilon_lower_bound(
    k_num: int, n_num: int, k_den: int, n_den: int, delta: float, alpha: float = 0.05
) -> dict:
    """Empirical lower bound on epsilon from one pre-specified event O.

    ``k_num`` of ``n_num`` releases from the numerator data set fell in O, ``k_den`` of
    ``n_den`` from the other one. Returns the point estimate ``ln((k_num/n_num - delta) /
    (k_den/n_den))`` and the (1 - alpha)-confidence lower bound that uses the Clopper-Pearson
    lower bound on the numerator rate and upper bound on the denominator rate (alpha / 2 each).
    Both are clipped at 0.
    """
    p_num = k_num / n_num if n_num > 0 else float("nan")
    p_den = k_den / n_den if n_den > 0 else float("nan")
    num_lo = float(clopper_pearson_lower(k_num, n_num, alpha / 2))
    den_hi = float(clopper_pearson_upper(k_den, n_den, alpha / 2))
    return {
        "p_numerator": p_num,
        "p_denominator": p_den,
        "p_numerator_lower": num_lo,
        "p_denominator_upper": den_hi,
        "epsilon_point": float(_eps_from_rates(p_num, p_den, delta)),
        "epsilon_lower_bound": float(_eps_from_rates(num_lo, den_hi, delta)),
    }


def trials_to_certify(epsilon: float, delta: float = 0.0, alpha: float = 0.05) -> float:
    """Trials a *perfect* distinguisher (TPR = 1, FPR = 0) needs so that the Clopper-Pearson
    lower bound of :func:`epsilon_lower_bound` exceeds ``epsilon`` (half the trials per data set).

    With m trials per side the bound is about ``ln(m (1 - delta) / ln(2 / alpha))``, so the count
    grows like ``2 e^eps ln(2 / alpha)``: finite-sample audits certify only modest epsilons.
    """
    epsilon = check_real(epsilon, "epsilon", low=0.0, low_open=False)
    log_m = epsilon + math.log(math.log(2.0 / alpha)) - math.log1p(-delta)
    return 2.0 * math.exp(log_m) if log_m < 700 else math.inf


# --------------------------------------------------------------------------------------------
# Generic threshold audit of a scalar statistic (for private mechanisms)
# --------------------------------------------------------------------------------------------


def _tail_rates(sorted_sample: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """Counts of ``sample > t`` for every threshold t (sample sorted ascending)."""
    return sorted_sample.size - np.searchsorted(sorted_sample, thresholds, side="right")


def _all_tests(sx: np.ndarray, sxp: np.ndarray, thresholds: np.ndarray, delta: float, alpha):
    """Counts and CP-bounded eps for the 4 tests per threshold: event (>, <=) x numerator (X, X')."""
    nx, nxp = sx.size, sxp.size
    gx = _tail_rates(sx, thresholds)
    gxp = _tail_rates(sxp, thresholds)
    tests = []  # (event, numerator, k_num, n_num, k_den, n_den) as arrays over thresholds
    for event, kx, kxp in ((">", gx, gxp), ("<=", nx - gx, nxp - gxp)):
        tests.append((event, "X", kx, nx, kxp, nxp))
        tests.append((event, "X'", kxp, nxp, kx, nx))
    scores = []
    for _, _, k_num, n_num, k_den, n_den in tests:
        lo = clopper_pearson_lower(k_num, n_num, alpha / 2)
        hi = clopper_pearson_upper(k_den, n_den, alpha / 2)
        scores.append(_eps_from_rates(lo, hi, delta))
    return tests, np.asarray(scores)


def threshold_audit(
    sample_statistic_X,
    sample_statistic_Xprime,
    claimed_epsilon: float,
    claimed_delta: float,
    alpha: float = 0.05,
    *,
    selection_fraction: float = 0.5,
    max_thresholds: int = 1000,
    seed: SeedLike = 0,
) -> dict:
    """Statistically valid empirical lower bound on epsilon from a scalar test statistic.

    Inputs are the values of one scalar statistic on many independent releases from ``X`` and
    from a neighbour ``X'``. The candidate tests are the events ``{s > t}`` and ``{s <= t}`` for
    thresholds ``t``, each in both directions of the DP inequality (X in the numerator or X'):
    ``eps >= ln((P_num(O) - delta) / P_den(O))``.

    Threshold selection — held-out split (chosen over a Bonferroni correction because the
    thresholds themselves are data-dependent): both samples are shuffled (``seed``) and split;
    the first ``selection_fraction`` picks the test (threshold, event, direction) that maximises
    the Clopper-Pearson-bounded epsilon on that part, over up to ``max_thresholds`` quantiles of
    the pooled selection sample. The single chosen test is then evaluated on the held-out part:
    Clopper-Pearson lower bound on the numerator rate and upper bound on the denominator rate,
    one-sided at alpha / 2 each. The chosen test is independent of the held-out data, so the
    reported ``epsilon_lower_bound`` holds with probability >= 1 - alpha.

    Returns a dict: ``epsilon_lower_bound``, ``epsilon_point`` (held-out point estimate),
    ``violation`` (lower bound > claimed epsilon), ``threshold``, ``event`` ("statistic > t" or
    "statistic <= t"), ``numerator`` ("X" or "X'"), the held-out rates and bounds and counts,
    ``selection_epsilon`` (the score on the selection part), and the settings.
    """
    sx = check_vector(sample_statistic_X, "sample_statistic_X", min_length=4)
    sxp = check_vector(sample_statistic_Xprime, "sample_statistic_Xprime", min_length=4)
    claimed_epsilon = check_real(claimed_epsilon, "claimed_epsilon", low=0.0, low_open=False)
    claimed_delta = check_real(claimed_delta, "claimed_delta", low=0.0, high=1.0, low_open=False)
    alpha = check_probability(alpha, "alpha")
    selection_fraction = check_probability(selection_fraction, "selection_fraction")
    max_thresholds = check_int(max_thresholds, "max_thresholds", low=1)
    rng = as_generator(seed)
    sx, sxp = rng.permutation(sx), rng.permutation(sxp)
    cx = min(max(int(round(selection_fraction * sx.size)), 2), sx.size - 2)
    cxp = min(max(int(round(selection_fraction * sxp.size)), 2), sxp.size - 2)
    sel_x, ev_x = np.sort(sx[:cx]), np.sort(sx[cx:])
    sel_xp, ev_xp = np.sort(sxp[:cxp]), np.sort(sxp[cxp:])
    pooled = np.unique(np.concatenate([sel_x, sel_xp]))
    if pooled.size > max_thresholds:
        pooled = np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, max_thresholds)))
    tests, scores = _all_tests(sel_x, sel_xp, pooled, claimed_delta, alpha)
    j_test, j_thr = np.unravel_index(int(np.argmax(scores)), scores.shape)
    event, numerator = tests[j_test][0], tests[j_test][1]
    t = float(pooled[j_thr])
    ev_tests, _ = _all_tests(ev_x, ev_xp, np.array([t]), claimed_delta, alpha)
    _, _, k_num, n_num, k_den, n_den = ev_tests[j_test]
    k_num, k_den = int(np.asarray(k_num)[0]), int(np.asarray(k_den)[0])
    bound = epsilon_lower_bound(k_num, n_num, k_den, n_den, claimed_delta, alpha)
    return {
        "epsilon_lower_bound": bound["epsilon_lower_bound"],
        "epsilon_point": bound["epsilon_point"],
        "claimed_epsilon": claimed_epsilon,
        "claimed_delta": claimed_delta,
        "violation": bool(bound["epsilon_lower_bound"] > claimed_epsilon),
        "alpha": alpha,
        "threshold": t,
        "event": f"statistic {event} t",
        "numerator": numerator,
        "p_numerator": bound["p_numerator"],
        "p_denominator": bound["p_denominator"],
        "p_numerator_lower": bound["p_numerator_lower"],
        "p_denominator_upper": bound["p_denominator_upper"],
        "k_numerator": k_num,
        "n_numerator": int(n_num),
        "k_denominator": k_den,
        "n_denominator": int(n_den),
        "selection_epsilon": float(scores[j_test, j_thr]),
        "n_thresholds": int(pooled.size),
        "method": "held-out split: test chosen on the selection part, bounded on the rest",
        "selection_fraction": selection_fraction,
    }
