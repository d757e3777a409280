"""The LDP-BO problem type: n arms, their Gram matrix, mean rewards and constants; reward models.

Every problem is a finite set of n arms with a unit-diagonal Gram matrix ``K``, the true mean
reward ``f`` of each arm and the constants the algorithms need (``B``, ``R``, ``v``, ``c``,
``alpha``); :meth:`LDPProblem.sample_reward` draws one raw (non-private) reward. The experiment
runner privatises it (CTL) when the setting is private. :func:`problem_from_table` is the
real-data recipe (a reward is a uniformly random row of a table); the problems by name are in
:mod:`frontierbo.ldp.datasets`.

Regret units: on real data (and the surrogates) regret is measured with ``f / max f``
(normalised, ``f* = 1``) while rewards and ``B`` stay raw, as in the [ref7] code
(docs/decisions.md#ldp-bo-regret-in-normalised-units). The synthetic
``f`` is already divided by ``max |f|`` (so ``B = 1``), and its regret is measured on that ``f``
as in the [ref7] code. :attr:`LDPProblem.f_normalised` is ``f / regret_scale`` with
``regret_scale = max f`` for real data and ``1`` for the synthetic problems.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from frontierbo._validation import (
    SeedLike,
    as_generator,
    check_int,
    check_positive,
    check_real,
)

NOISE_NAMES = ("uniform", "student_t")


# --------------------------------------------------------------------------- reward models


class RewardModel(Protocol):
    """How a raw reward of an arm is drawn: ``sample(f, arm, size, rng)``.

    ``size=None`` returns one float; otherwise an array of that shape (i.i.d. draws).
    """

    def sample(self, f: np.ndarray, arm: int, size, rng: np.random.Generator): ...


@dataclass(frozen=True)
class AdditiveNoise:
    """``y = f[arm] + eta`` with i.i.d. noise ``eta``.

    ``kind="uniform"``: ``eta ~ U[-scale, scale]`` (bounded, R = scale).
    ``kind="student_t"``: ``eta ~ scale * t_df`` (variance ``scale^2 df / (df - 2)``).
    """

    kind: str = "uniform"
    scale: float = 1.0
    df: float = 3.0

    def __post_init__(self):
        if self.kind not in NOISE_NAMES:
            raise ValueError(f"noise must be one of {list(NOISE_NAMES)}, got {self.kind!r}")
        check_positive(self.scale, "scale")
        check_real(self.df, "df", low=2.0)

    def sample(self, f, arm, size, rng):
        if self.kind == "uniform":
            eta = rng.uniform(-self.scale, self.scale, size=size)
        else:
            eta = self.scale * rng.standard_t(self.df, size=size)
        return f[arm] + eta


class EmpiricalRewards:
    """A reward is ``table[r, arm]`` for a uniformly random row ``r`` (the [ref7] protocol:
    ``n_param(randi(size(n_param, 1)), arm)``); the mean reward of arm a is the column mean."""

    def __init__(self, table):
        table = np.array(table, dtype=np.float64)
        if table.ndim != 2 or table.shape[0] < 1 or table.shape[1] < 1:
            raise ValueError(f"table must be a 2-D (rows, arms) array, got shape {table.shape}")
        if not np.all(np.isfinite(table)):
            raise ValueError("table must be finite (no NaN or inf)")
        table.flags.writeable = False
        self.table = table

    def sample(self, f, arm, size, rng):
        rows = rng.integers(self.table.shape[0], size=size)
        return self.table[rows, arm] if size is not None else float(self.table[rows, arm])

    def __repr__(self) -> str:
        return f"EmpiricalRewards(table shape {self.table.shape})"


# --------------------------------------------------------------------------- the problem


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=np.float64)
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class LDPProblem:
    """A finite-arm problem of the LDP-BO experiments (docs/ldp-architecture.md).

    Attributes:
        name: problem name (see :data:`LDP_PROBLEM_NAMES`).
        K: (n, n) Gram matrix of the arms, symmetric PSD with unit diagonal in every experiment.
        f: (n,) true mean reward of each arm, raw units.
        B: ``max |f|``, the bound on the function.
        R: bound on ``|noise|``: the LDP case (uniform noise) uses it in CTL; for the real data it
            is the max observed ``|noise|``; ``math.inf`` for Student-t noise (CTL never used).
        v: bound on ``E[y^2]`` (moment of order ``1 + alpha``, alpha = 1).
        c: bound on ``E[noise^2]``.
        alpha: moment order, 1 in every experiment.
        source: where the data come from (generator, real file path, or surrogate).
        meta: JSON-friendly details (arm names, seeds, calibration constants, ...).
        reward_model: draws raw rewards (:class:`AdditiveNoise` or :class:`EmpiricalRewards`);
            keyword-only, ``None`` for a problem that cannot be sampled.
        regret_scale: ``f_normalised = f / regret_scale``; keyword-only, ``None`` = ``max f``.
    """

    name: str
    K: np.ndarray
    f: np.ndarray
    B: float
    R: float
    v: float
    c: float
    alpha: float
    source: str
    meta: dict
    reward_model: RewardModel | None = field(default=None, kw_only=True, repr=False)
    regret_scale: float | None = field(default=None, kw_only=True)

    def __post_init__(self):
        K = _readonly(self.K)
        f = _readonly(self.f)
        if f.ndim != 1 or f.shape[0] < 1 or not np.all(np.isfinite(f)):
            raise ValueError(f"f must be a finite 1-D array, got shape {f.shape}")
        n = f.shape[0]
        if K.shape != (n, n):
            raise ValueError(f"K must have shape ({n}, {n}) to match f, got {K.shape}")
        if not np.all(np.isfinite(K)):
            raise ValueError("K must be finite (no NaN or inf)")
        scale = max(1.0, float(np.abs(K).max()))
        if not np.allclose(K, K.T, rtol=1e-10, atol=1e-12 * scale):
            raise ValueError("K must be symmetric")
        if np.linalg.eigvalsh(K).min() < -1e-8 * scale:
            raise ValueError("K must be positive semi-definite (min eigenvalue >= -1e-8)")
        object.__setattr__(self, "K", K)
        object.__setattr__(self, "f", f)
        object.__setattr__(self, "B", check_positive(self.B, "B"))
        if not (isinstance(self.R, float) and math.isinf(self.R) and self.R > 0):
            object.__setattr__(self, "R", check_positive(self.R, "R"))
        object.__setattr__(self, "v", check_positive(self.v, "v"))
        object.__setattr__(self, "c", check_positive(self.c, "c"))
        object.__setattr__(
            self, "alpha", check_real(self.alpha, "alpha", low=0.0, high=1.0, high_open=False)
        )
        if self.regret_scale is not None:
            object.__setattr__(
                self, "regret_scale", check_positive(self.regret_scale, "regret_scale")
            )
        elif float(f.max()) <= 0.0:
            raise ValueError("max f must be > 0 for f / max f; pass regret_scale explicitly")
        table = getattr(self.reward_model, "table", None)
        if table is not None and table.shape[1] != n:
            raise ValueError(f"reward table must have {n} columns (one per arm), got {table.shape}")

    # -- derived quantities -------------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of arms."""
        return int(self.f.shape[0])

    @property
    def best_arm(self) -> int:
        """Index of the arm with the largest mean (first one on ties)."""
        return int(np.argmax(self.f))

    @property
    def f_normalised(self) -> np.ndarray:
        """``f / regret_scale`` (``f / max f`` for real data; ``f`` itself for the synthetic
        problems, whose ``f`` is already ``f / max |f|``): the units regret is reported in."""
        scale = float(self.f.max()) if self.regret_scale is None else self.regret_scale
        return self.f / scale

    @property
    def uniform_regret(self) -> float:
        """Expected per-round regret of uniform random play, in normalised units."""
        fn = self.f_normalised
        return float(fn.max() - fn.mean())

    # -- rewards ------------------------------------------------------------------------------
    def _model(self) -> RewardModel:
        if self.reward_model is None:
            raise RuntimeError(
                f"problem {self.name!r} has no reward_model; build it with reward_model="
                "AdditiveNoise(...) or EmpiricalRewards(table) to sample rewards"
            )
        return self.reward_model

    def sample_reward(self, arm: int, rng: SeedLike) -> float:
        """One raw (non-private) reward ``y = f[arm] + noise`` of ``arm`` (0-based)."""
        arm = check_int(arm, "arm", low=0, high=self.n - 1)
        return float(self._model().sample(self.f, arm, None, as_generator(rng, "rng")))

    def sample_rewards(self, arm: int, size, rng: SeedLike) -> np.ndarray:
        """``size`` i.i.d. raw rewards of ``arm`` (an int or a shape tuple), vectorised."""
        arm = check_int(arm, "arm", low=0, high=self.n - 1)
        if isinstance(size, tuple):
            size = tuple(check_int(s, "size", low=0) for s in size)
        else:
            size = check_int(size, "size", low=0)
        return np.asarray(self._model().sample(self.f, arm, size, as_generator(rng, "rng")))


# --------------------------------------------------------------------------- from a table of rewards


def kernel_from_samples(samples) -> np.ndarray:
    """Empirical covariance (ddof = 1) of the z-scored columns (mean 0, std ddof = 1): a
    correlation matrix with unit diagonal
    (docs/decisions.md#ldp-bo-real-data-preprocessing-from-the-reference-code).
    ``samples`` is (rows, arms)."""
    X = np.asarray(samples, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 2:
        raise ValueError(f"samples must be a 2-D (rows >= 2, arms) array, got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("samples must be finite (no NaN or inf)")
    std = X.std(axis=0, ddof=1)
    if np.any(std == 0.0):
        bad = np.flatnonzero(std == 0.0).tolist()
        raise ValueError(f"samples: columns {bad} are constant, cannot z-score them")
    Z = (X - X.mean(axis=0)) / std
    K = Z.T @ Z / (X.shape[0] - 1)
    K = 0.5 * (K + K.T)
    np.fill_diagonal(K, 1.0)  # exactly 1 (it is 1 up to rounding)
    return K


def problem_from_table(
    name: str,
    rewards,
    K,
    *,
    source: str,
    meta: dict | None = None,
    alpha: float = 1.0,
) -> LDPProblem:
    """A problem whose reward for arm a is a uniformly random row of ``rewards[:, a]``.

    The real-data recipe (docs/decisions.md#ldp-bo-real-data-preprocessing-from-the-reference-code):
    ``f`` = column means, ``B = max |f|``,
    noise = ``rewards - f``, ``R = max |noise|``, ``v`` = mean squared reward,
    ``c`` = mean squared noise; regret in units of ``f / max f``.
    """
    model = EmpiricalRewards(rewards)
    table = model.table
    f = table.mean(axis=0)
    noise = table - f
    return LDPProblem(
        name=name,
        K=K,
        f=f,
        B=float(np.abs(f).max()),
        R=float(np.abs(noise).max()),
        v=float(np.mean(table**2)),
        c=float(np.mean(noise**2)),
        alpha=alpha,
        source=source,
        meta={**(meta or {}), "rows": int(table.shape[0])},
        reward_model=model,
    )
