"""Stand-ins for the light sensor and stock files: their arm means, calibrated noise, random kernel.

The files are not redistributable; a surrogate has the exact arm means of the real file
(:data:`LIGHT_MEANS`, :data:`STOCK_MEANS`) and is built to match its statistics
(docs/decisions.md#ldp-bo-surrogate-light-and-stock-data); ``LDPProblem.source`` says it is one.
"""

from __future__ import annotations

import math

import numpy as np

from frontierbo._validation import SeedLike, as_generator
from frontierbo.ldp.problems import LDPProblem, problem_from_table

STOCK_TICKERS = (
    "AAPL", "AXP", "BA", "CAT", "CSCO", "CVX", "DIS", "GE", "GS", "HD", "IBM", "INTC", "JNJ", "JPM",
    "KO", "MCD", "MMM", "MRK", "MSFT", "NKE", "PFE", "PG", "TRV", "UNH", "UTX", "V", "VZ", "WMT",
    "XOM",
)  # fmt: skip

# Arm means of the real data sets (raw units, 2 decimals), in file column order, computed from
# the [ref7] copies of the files (docs/decisions.md#ldp-bo-surrogate-light-and-stock-data).
LIGHT_MEANS = (
    281.29, 861.31, 526.15, 945.54, 402.72, 449.60, 164.23, 215.76, 310.84, 590.41, 682.66,
    298.01, 741.55, 389.73, 242.06, 701.38, 663.69, 277.05, 748.68, 271.66, 894.62, 290.24,
    705.03, 627.15, 257.29, 817.22, 212.79, 251.14, 241.08, 261.23, 504.46, 500.48, 766.46,
    240.01, 257.95, 756.36, 825.95, 249.10, 247.83, 912.93, 260.84,
)  # fmt: skip
STOCK_MEANS = (
    146.85, 83.01, 237.33, 110.00, 34.85, 104.87, 102.26, 20.04, 205.08, 154.70, 139.43, 39.52,
    121.13, 87.04, 41.94, 142.55, 188.12, 59.85, 76.94, 62.28, 34.08, 82.10, 119.15, 191.33,
    112.19, 105.32, 47.31, 78.84, 77.12,
)  # fmt: skip

# Statistics of the real files (computed from the [ref7] copies) that the surrogates are built to
# match: table shape, R = max |noise|, c = mean squared noise, extreme eigenvalues of K.
LIGHT_TARGETS = {"rows": 192, "train_rows": 601, "R": 835.28, "c": 82954.23,
                 "eig_min": 5.7e-5, "eig_max": 26.9}  # fmt: skip
STOCK_TARGETS = {"rows": 823, "R": 203.29, "c": 754.22, "eig_min": 0.0022, "eig_max": 21.4}


def matched_spectrum(n: int, eig_max: float, eig_min: float) -> np.ndarray:
    """n eigenvalues summing to n (a correlation matrix's trace): ``eig_max``, then a geometric
    sequence from ``a`` down to ``eig_min`` with ``a`` solved so the sum is n."""
    from scipy.optimize import brentq

    rest = n - eig_max
    if not (eig_min > 0 and eig_min * (n - 1) < rest < eig_max * (n - 1)):
        raise ValueError(f"no spectrum of size {n} with max {eig_max} and min {eig_min}")
    a = brentq(lambda a: np.geomspace(a, eig_min, n - 1).sum() - rest, eig_min, eig_max)
    eigs = np.concatenate([[eig_max], np.geomspace(a, eig_min, n - 1)])
    return eigs * (n / eigs.sum())


def random_correlation_with_range(
    n: int, eig_max: float, eig_min: float, rng: np.random.Generator
) -> np.ndarray:
    """A random n x n correlation matrix (unit diagonal) whose spectrum is
    :func:`matched_spectrum` (``scipy.stats.random_correlation``)."""
    from scipy.stats import random_correlation

    K = random_correlation.rvs(matched_spectrum(n, eig_max, eig_min), random_state=rng)
    K = 0.5 * (K + K.T)
    np.fill_diagonal(K, 1.0)
    return K


def _standardise_columns(Z: np.ndarray) -> np.ndarray:
    Z = Z - Z.mean(axis=0)
    return Z / np.sqrt(np.mean(Z**2, axis=0))


def calibrated_noise_table(f, shapes, R: float, c: float) -> tuple[np.ndarray, dict]:
    """Noise ``shapes[:, a] * s_a`` with ``s_a = kappa (f_a / max f)^gamma`` such that the
    table's ``max |noise| = R`` and mean squared noise ``= c`` exactly.

    ``shapes`` (rows, n) are bounded draws; each column is centred and scaled to unit RMS, so
    every column of the noise has mean exactly 0 (the arm means stay ``f``) and RMS ``s_a``.
    ``gamma`` (how fast the noise grows with the mean) is found by root finding on
    ``max_a s_a M_a / sqrt(mean s^2) = R / sqrt(c)`` (``M_a = max |shape_a|``), then ``kappa``
    from ``c`` (``kappa`` is the noise RMS of the best arm). Returns the noise and
    ``{"gamma", "kappa"}``.
    """
    from scipy.optimize import brentq

    f = np.asarray(f, dtype=float)
    Z = _standardise_columns(np.asarray(shapes, dtype=float))
    M = np.abs(Z).max(axis=0)
    g = f / f.max()
    target = R / math.sqrt(c)

    def excess(gamma: float) -> float:
        s = g**gamma
        return float((s * M).max() / math.sqrt(np.mean(s**2)) - target)

    lo, hi = 0.0, 8.0
    if excess(lo) > 0 or excess(hi) < 0:
        raise RuntimeError(f"cannot calibrate the surrogate noise to R/sqrt(c) = {target:.4g}")
    gamma = float(brentq(excess, lo, hi, xtol=1e-12))
    s = g**gamma
    kappa = math.sqrt(c / float(np.mean(s**2)))
    noise = Z * (kappa * s)
    return noise, {"gamma": gamma, "kappa": kappa}


def _surrogate(
    name: str,
    means,
    shapes: np.ndarray,
    targets: dict,
    rng: np.random.Generator,
    *,
    seed,
    arm_names: list[str],
    description: str,
) -> LDPProblem:
    f = np.asarray(means, dtype=float)
    noise, calib = calibrated_noise_table(f, shapes, targets["R"], targets["c"])
    K = random_correlation_with_range(f.shape[0], targets["eig_max"], targets["eig_min"], rng)
    table = f + noise
    # Centring the table's columns again is a no-op up to rounding; restore f exactly.
    table += f - table.mean(axis=0)
    meta = {
        "surrogate": True,
        "seed": int(seed) if isinstance(seed, int | np.integer) else None,
        "arm_names": arm_names,
        "targets": dict(targets),
        "noise_calibration": calib,
        "kernel": (
            "random correlation matrix (scipy.stats.random_correlation) with eigenvalues "
            f"{targets['eig_min']:g}..{targets['eig_max']:g} (the real kernel's range)"
        ),
        "description": description,
    }
    problem = problem_from_table(
        name,
        table,
        K,
        source=f"SURROGATE (real file not used): {description}",
        meta=meta,
    )
    # The problem's f is the table's column mean; make it Appendix A's exact value.
    return LDPProblem(
        problem.name,
        problem.K,
        f,
        float(np.abs(f).max()),
        problem.R,
        problem.v,
        problem.c,
        problem.alpha,
        problem.source,
        problem.meta,
        reward_model=problem.reward_model,
    )


def light_sensor_surrogate(seed: SeedLike = 0) -> LDPProblem:
    """A stand-in for the light sensor data (the real file is not redistributable).

    Same 41 arms and the exact means ``f`` of the real file (:data:`LIGHT_MEANS`, so
    ``B = 945.54`` at arm 3 and the uniform-play regret 0.4881). Rewards are rows of a 192 x 41
    table ``f_a + s_a z_{r,a}``: ``z`` are bounded arcsine draws (``cos`` of a uniform phase, like a
    daily light cycle), centred and scaled per column, and ``s_a = kappa (f_a / B)^gamma``
    (brighter sensors vary more) with ``kappa``, ``gamma`` calibrated so the table's
    ``R = 835.28`` and ``c = 82954.23`` exactly; ``v = mean f^2 + c`` then matches 377421.27 up
    to the rounding of the means. Readings stay non-negative when ``R < B``.

    Substitute kernel: no sensor data means no empirical covariance, so ``K`` is a random
    correlation matrix (unit diagonal, seeded) with the real kernel's extreme eigenvalues
    (26.9 and 5.7e-5), a dominant common factor and a geometric tail (:func:`matched_spectrum`).
    """
    rng = as_generator(seed)
    n = len(LIGHT_MEANS)
    shapes = np.cos(2.0 * np.pi * rng.uniform(size=(LIGHT_TARGETS["rows"], n)))
    return _surrogate(
        "light",
        LIGHT_MEANS,
        shapes,
        LIGHT_TARGETS,
        rng,
        seed=seed,
        arm_names=[f"sensor {i}" for i in range(n)],
        description=(
            "light sensor surrogate: Appendix A means, 192 x 41 bounded arcsine readings "
            "calibrated to R and c, random correlation kernel with the real eigenvalue range"
        ),
    )


def stock_surrogate(seed: SeedLike = 0) -> LDPProblem:
    """A stand-in for the 29-stock price table (the real file is not redistributable).

    Same 29 tickers and the exact mean prices ``f`` of the real file (:data:`STOCK_MEANS`, so
    ``B = 237.33`` for BA and the uniform-play regret 0.5634). Rewards are rows of an 823 x 29 table
    ``f_a + s_a z_{r,a}``: each ``z`` column is a +-1 random walk over 823 days (bounded,
    trending like a price), centred and scaled to unit RMS, and ``s_a = kappa (f_a / B)^gamma``
    with ``kappa``, ``gamma`` calibrated so the table's ``R = 203.29`` and ``c = 754.22`` exactly;
    ``v = mean f^2 + c`` then matches 14437.86 up to the rounding of the means.

    Substitute kernel: a random correlation matrix (unit diagonal, seeded) with the real
    kernel's extreme eigenvalues (21.4 and 0.0022), see :func:`matched_spectrum`.
    """
    rng = as_generator(seed)
    n = len(STOCK_MEANS)
    steps = rng.choice(np.array([-1.0, 1.0]), size=(STOCK_TARGETS["rows"], n))
    return _surrogate(
        "stock",
        STOCK_MEANS,
        np.cumsum(steps, axis=0),
        STOCK_TARGETS,
        rng,
        seed=seed,
        arm_names=list(STOCK_TICKERS),
        description=(
            "stock surrogate: Appendix A mean prices, 823-day +-1 random walks calibrated to R "
            "and c, random correlation kernel with the real eigenvalue range"
        ),
    )
