"""Problems of the LDP-BO / heavy-tailed BO experiments (Fig. 2 and 3 of the paper).

Every problem is a finite set of n arms with a unit-diagonal Gram matrix ``K``, the true mean
reward ``f`` of each arm and the constants the algorithms need (``B``, ``R``, ``v``, ``c``,
``alpha``); :meth:`LDPProblem.sample_reward` draws one raw (non-private) reward. The experiment
runner privatises it (CTL) when the setting is private.

Problems (names of :func:`get_ldp_problem`):

=====================  ======================================================================
``synthetic-se``       SE kernel (l = 0.2), U[-1, 1] noise (R = 1): the LDP synthetic case.
``synthetic-matern``   Matern-5/2 kernel (l = 0.2), U[-1, 1] noise.
``synthetic-se-t``     SE kernel, Student-t noise with 3 degrees of freedom (heavy tails).
``synthetic-matern-t`` Matern-5/2 kernel, Student-t(3) noise.
``light``              CMU Intelligent Workplace light sensors, 41 arms (real file or surrogate).
``stock``              29 Dow-30 adjusted closing prices 2016-2019, 823 days (real or surrogate).
=====================  ======================================================================

Real data (docs/decisions.md#ldp-bo-real-data-preprocessing-from-the-reference-code):
``ldp/light_sensor/iw_data_all.mat`` and ``ldp/stocks/fin.csv`` below the data root (found by
:func:`frontierbo.data.resolve_data_path`). The files are not redistributable; when they are
missing, :func:`get_ldp_problem` builds a documented **surrogate** with the exact arm means of the
real files (:func:`light_sensor_surrogate`, :func:`stock_surrogate`;
docs/decisions.md#ldp-bo-surrogate-light-and-stock-data) and says so in ``LDPProblem.source``.

Regret units: on real data (and the surrogates) regret is measured with ``f / max f``
(normalised, ``f* = 1``) while rewards and ``B`` stay raw, as in the [ref7] code
(docs/decisions.md#ldp-bo-regret-in-normalised-units). The synthetic
``f`` is already divided by ``max |f|`` (so ``B = 1``), and its regret is measured on that ``f``
as in the [ref7] code. :attr:`LDPProblem.f_normalised` is ``f / regret_scale`` with
``regret_scale = max f`` for real data and ``1`` for the synthetic problems.
"""

from __future__ import annotations

import csv
import math
import os
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
from frontierbo.core.kernels import Matern52, SquaredExponential
from frontierbo.data import KNOWN_SHA256, resolve_data_path, verify_sha256

LIGHT_FILE = "ldp/light_sensor/iw_data_all.mat"
STOCK_FILE = "ldp/stocks/fin.csv"
#: sha256 of the files read here, from the dataset registry (``frontierbo data list``).
LDP_SHA256: dict[str, str] = {path: KNOWN_SHA256[path] for path in (LIGHT_FILE, STOCK_FILE)}

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

KERNEL_NAMES = ("se", "matern52")
NOISE_NAMES = ("uniform", "student_t")
SUPPORT_NAMES = ("grid", "continuous")
# get_ldp_problem name -> (kernel, noise) of the synthetic problems.
SYNTHETIC_NAMES: dict[str, tuple[str, str]] = {
    "synthetic-se": ("se", "uniform"),
    "synthetic-matern": ("matern52", "uniform"),
    "synthetic-se-t": ("se", "student_t"),
    "synthetic-matern-t": ("matern52", "student_t"),
}
LDP_PROBLEM_NAMES = (*SYNTHETIC_NAMES, "light", "stock")


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


# --------------------------------------------------------------------------- synthetic


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


# --------------------------------------------------------------------------- real data


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


def _verified_file(relative: str, path, verify: bool):
    file = resolve_data_path(relative, path)
    digest = None
    if verify and (path is None or file.name == os.path.basename(relative)):
        digest = verify_sha256(file, LDP_SHA256[relative])
    return file, digest


def _mat_field(obj, name: str, file):
    try:
        return getattr(obj, name)
    except AttributeError:
        raise ValueError(
            f"light sensor file {str(file)!r}: the struct has no field {name!r} (expected "
            "data.train.sensordata and data.test.sensordata)"
        ) from None


def light_sensor_problem(path: str | os.PathLike | None = None, verify: bool = True) -> LDPProblem:
    """The light sensor problem (Fig. 2 of the paper) from ``iw_data_all.mat``: 41 arms.

    ``f`` = column means of ``data.test.sensordata`` (192 x 41 uint16, cast to float64 before
    any arithmetic); ``K`` = :func:`kernel_from_samples` of ``data.train.sensordata``
    (601 x 41); a reward is a uniformly random test row's reading; ``alpha = 1``. Expected:
    ``B = 945.54`` (arm 3), ``R = 835.28``, ``v = 377421.27``, ``c = 82954.23``.

    Args:
        path: the .mat file; ``None`` searches ``ldp/light_sensor/iw_data_all.mat`` under the
            data roots (:func:`frontierbo.data.resolve_data_path`).
        verify: check the README sha256 (for the known file name).
    """
    from scipy.io import loadmat

    file, digest = _verified_file(LIGHT_FILE, path, verify)
    mat = loadmat(file, squeeze_me=True, struct_as_record=False)
    if "data" not in mat:
        raise ValueError(f"light sensor file {str(file)!r} has no struct named 'data'")
    data = mat["data"]
    train_raw = _mat_field(_mat_field(data, "train", file), "sensordata", file)
    test_raw = _mat_field(_mat_field(data, "test", file), "sensordata", file)
    train = np.asarray(train_raw).astype(np.float64)  # cast BEFORE arithmetic (uint16 wraps)
    test = np.asarray(test_raw).astype(np.float64)
    if train.ndim != 2 or test.ndim != 2 or train.shape[1] != test.shape[1]:
        raise ValueError(
            f"light sensor file {str(file)!r}: train/test sensordata must be 2-D with the same "
            f"number of sensors, got {train.shape} and {test.shape}"
        )
    coords = getattr(data, "coords", None)
    meta = {
        "file": str(file),
        "sha256": digest,
        "train_shape": list(train.shape),
        "test_shape": list(test.shape),
        "arm_names": [f"sensor {i}" for i in range(test.shape[1])],
        "coords": None if coords is None else np.asarray(coords, dtype=float).tolist(),
        "kernel": "empirical covariance of the z-scored train readings",
        "surrogate": False,
    }
    return problem_from_table(
        "light",
        test,
        kernel_from_samples(train),
        source=f"real data: {file} (CMU Intelligent Workplace light sensors, test means)",
        meta=meta,
    )


def read_stock_csv(path: str | os.PathLike) -> tuple[list[str], np.ndarray]:
    """Parse ``fin.csv``: a header ``Date,<ticker>,...`` then one row of prices per day.

    Returns the tickers and the (days, stocks) float64 price matrix.
    """
    with open(path, newline="") as fh:
        rows = [row for row in csv.reader(fh) if row and any(cell.strip() for cell in row)]
    if len(rows) < 3:
        raise ValueError(f"stock file {str(path)!r}: need a header and at least 2 rows of prices")
    header = [cell.strip() for cell in rows[0]]
    if len(header) < 3 or header[0].lower() != "date":
        raise ValueError(
            f"stock file {str(path)!r}: the header must be 'Date,<ticker>,<ticker>,...' with at "
            f"least 2 tickers, got {rows[0][:4]}"
        )
    prices = np.empty((len(rows) - 1, len(header) - 1))
    for i, row in enumerate(rows[1:]):
        if len(row) != len(header):
            raise ValueError(
                f"stock file {str(path)!r}: line {i + 2} has {len(row)} fields, expected "
                f"{len(header)}"
            )
        try:
            prices[i] = [float(cell) for cell in row[1:]]
        except ValueError:
            raise ValueError(
                f"stock file {str(path)!r}: line {i + 2} has a non-numeric price"
            ) from None
    if not np.all(np.isfinite(prices)):
        raise ValueError(f"stock file {str(path)!r}: prices must be finite")
    return header[1:], prices


def stock_problem(path: str | os.PathLike | None = None, verify: bool = True) -> LDPProblem:
    """The stock problem (Fig. 2 of the paper) from ``fin.csv``: 29 arms, 823 days.

    ``f`` = mean price per stock; ``K`` = :func:`kernel_from_samples` of the prices; a reward is
    a uniformly random day's price; ``alpha = 1``. Expected: ``B = 237.33`` (BA, arm 2),
    ``R = 203.29``, ``v = 14437.86``, ``c = 754.22``.

    Args:
        path: the CSV; ``None`` searches ``ldp/stocks/fin.csv`` under the data roots.
        verify: check the README sha256 (for the known file name).
    """
    file, digest = _verified_file(STOCK_FILE, path, verify)
    tickers, prices = read_stock_csv(file)
    meta = {
        "file": str(file),
        "sha256": digest,
        "shape": list(prices.shape),
        "arm_names": tickers,
        "kernel": "empirical covariance of the z-scored prices",
        "surrogate": False,
    }
    return problem_from_table(
        "stock",
        prices,
        kernel_from_samples(prices),
        source=f"real data: {file} (29 Dow-30 adjusted closes 2016-01-04..2019-04-10)",
        meta=meta,
    )


# --------------------------------------------------------------------------- surrogates


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


# --------------------------------------------------------------------------- by name


def get_ldp_problem(
    name: str,
    seed: SeedLike = 0,
    path: str | os.PathLike | None = None,
    allow_surrogate: bool = True,
    *,
    verify: bool = True,
    surrogate_seed: SeedLike = 0,
    **synthetic_kwargs,
) -> LDPProblem:
    """Build a problem by name (:data:`LDP_PROBLEM_NAMES`).

    Synthetic names (``synthetic-se``, ``synthetic-matern``, ``synthetic-se-t``,
    ``synthetic-matern-t``): :func:`synthetic_problem` with ``seed`` (a new ``f`` per trial
    seed) and ``synthetic_kwargs`` (``lengthscale``, ``n_arms``, ``n_support``, ``support``).

    ``light`` / ``stock``: the real file (``path``, or the data roots when ``path`` is None);
    if it is not found and ``allow_surrogate`` is True, the surrogate built with
    ``surrogate_seed`` (fixed across trials, like the real table); ``source`` says which. An
    explicit ``path`` that does not exist, or a sha256 mismatch, is an error (no fallback).
    ``seed`` is not used for them.
    """
    if name in SYNTHETIC_NAMES:
        kernel, noise = SYNTHETIC_NAMES[name]
        return synthetic_problem(seed, kernel=kernel, noise=noise, **synthetic_kwargs)
    if name not in ("light", "stock"):
        raise ValueError(f"name must be one of {list(LDP_PROBLEM_NAMES)}, got {name!r}")
    if synthetic_kwargs:
        raise TypeError(
            f"{sorted(synthetic_kwargs)} apply only to the synthetic problems, not {name!r}"
        )
    loader, relative, surrogate = (
        (light_sensor_problem, LIGHT_FILE, light_sensor_surrogate)
        if name == "light"
        else (stock_problem, STOCK_FILE, stock_surrogate)
    )
    if path is not None or not allow_surrogate:
        return loader(path, verify=verify)
    try:
        resolve_data_path(relative)
    except FileNotFoundError:
        return surrogate(surrogate_seed)
    return loader(None, verify=verify)
