"""The synthetic problems of the paper (as in [ref7]): a new RKHS function of the arms per seed."""

from __future__ import annotations

import math

import numpy as np

from frontierbo._validation import SeedLike, as_generator, check_int, check_positive, check_real
from frontierbo.core.kernels import Matern52, SquaredExponential
from frontierbo.ldp.problems import NOISE_NAMES, AdditiveNoise, LDPProblem

KERNEL_NAMES = ("se", "matern52")
SUPPORT_NAMES = ("grid", "continuous")


def code_grid(n_arms: int = 100) -> np.ndarray:
    """The [ref7] code grid ``{1/n, 2/n, ..., 1}`` (``0.01, ..., 1.00`` for n = 100)."""
    n_arms = check_int(n_arms, "n_arms", low=2)
    return np.arange(1, n_arms + 1, dtype=float) / n_arms


def synthetic_problem(
    seed: SeedLike = 0,
    kernel: str = "se",
    noise: str = "uniform",
    lengthscale: float = 0.2,
    n_arms: int = 100,
    n_support: int = 100,
    support: str = "grid",
    df: float = 3.0,
) -> LDPProblem:
    """The synthetic problem of the paper (as in [ref7]): a new RKHS function per seed (trial).

    Arms are the grid ``{0.01, ..., 1.00}`` (``i / n_arms``); ``f = sum_i a_i k(., x_i)`` with
    ``a_i ~ U[-1, 1]`` and ``n_support`` points ``x_i`` drawn uniformly from the arms
    (``support="grid"``, the paper's text) or from ``U[0, 1]`` (``support="continuous"``, the
    [ref7] code; docs/decisions.md#ldp-bo-synthetic-support-points-on-the-arm-grid); then
    ``f <- f / max |f|`` so ``B = 1``. ``K`` is the kernel's unit-variance Gram matrix over the
    arms.

    Noise and constants:
        ``"uniform"``: ``eta ~ U[-1, 1]``, ``R = 1`` (the LDP case); ``v = B^2 + R^2 = 2`` and
        ``c = R^2 = 1`` are the *bounds* (``E[y^2] <= B^2 + 1/3``, ``E[eta^2] = 1/3``); the
        private algorithms use the CTL moment formulas anyway.
        ``"student_t"``: ``eta ~ t_df`` (df = 3 in the paper), ``alpha = 1``,
        ``c = df / (df - 2) = 3``, ``v = B^2 + c = 4``; the noise is unbounded, so ``R = math.inf``
        (CTL is never used with it and rejects an infinite R).

    Args:
        seed: selects ``f`` (support points and coefficients); int, Generator or None.
        kernel: ``"se"`` or ``"matern52"`` (nu = 2.5).
        noise: ``"uniform"`` or ``"student_t"``.
        lengthscale: kernel lengthscale > 0 (0.2 in the paper).
        n_arms: number of grid points >= 2.
        n_support: number of support points ``x_i`` >= 1.
        support: ``"grid"`` or ``"continuous"``.
        df: Student-t degrees of freedom > 2 (only used with ``noise="student_t"``).
    """
    if kernel not in KERNEL_NAMES:
        raise ValueError(f"kernel must be one of {list(KERNEL_NAMES)}, got {kernel!r}")
    if noise not in NOISE_NAMES:
        raise ValueError(f"noise must be one of {list(NOISE_NAMES)}, got {noise!r}")
    if support not in SUPPORT_NAMES:
        raise ValueError(f"support must be one of {list(SUPPORT_NAMES)}, got {support!r}")
    lengthscale = check_positive(lengthscale, "lengthscale")
    n_arms = check_int(n_arms, "n_arms", low=2)
    n_support = check_int(n_support, "n_support", low=1)
    df = check_real(df, "df", low=2.0)
    rng = as_generator(seed)

    x = code_grid(n_arms)
    k = (SquaredExponential if kernel == "se" else Matern52)(lengthscale, 1.0)
    if support == "grid":
        xs = x[rng.integers(n_arms, size=n_support)]
    else:
        xs = rng.uniform(0.0, 1.0, size=n_support)
    a = rng.uniform(-1.0, 1.0, size=n_support)
    f = k(x[:, None], xs[:, None]) @ a
    top = float(np.abs(f).max())
    if top == 0.0:  # pragma: no cover - measure-zero event
        raise RuntimeError("the sampled function is identically 0; use another seed")
    f = f / top
    K = k(x[:, None])
    B = float(np.abs(f).max())  # 1 up to rounding
    if noise == "uniform":
        R, c = 1.0, 1.0
        v = B**2 + R**2
        model = AdditiveNoise("uniform", 1.0)
    else:
        R, c = math.inf, df / (df - 2.0)
        v = B**2 + c
        model = AdditiveNoise("student_t", 1.0, df)
    name = f"synthetic-{'se' if kernel == 'se' else 'matern'}{'-t' if noise == 'student_t' else ''}"
    meta = {
        "seed": int(seed) if isinstance(seed, int | np.integer) else None,
        "kernel": kernel,
        "lengthscale": lengthscale,
        "noise": noise,
        "df": df if noise == "student_t" else None,
        "support": support,
        "x": x.tolist(),
        "support_points": xs.tolist(),
        "coefficients": a.tolist(),
        "normaliser": top,
    }
    source = (
        f"synthetic generator (the paper's, as in [ref7]): {kernel} kernel l={lengthscale:g}, "
        f"{n_support} support points ({support}), {noise} noise"
    )
    return LDPProblem(
        name, K, f, B, R, v, c, 1.0, source, meta, reward_model=model, regret_scale=1.0
    )
