"""Private property price data set of the PO-GP-UCB paper (Section 4): n = 2004, d = 2.

Real data: a seeded 2004-row subsample of the URA private-residential project file
``ura/ura_private_projects.csv`` (header ``lat,lon,svy21_x,svy21_y,price_psm``). Inputs are
(lon, lat) in degrees, centred and scaled to max row norm 25 (no ARD step: the paper uses an
isotropic kernel here); the objective is g = -log(price_psm), maximised (cheapest property).

Fallback (file missing): :func:`property_substitute`, a 15-cluster mixture in Singapore's
longitude/latitude box with outputs drawn from the GP with the thesis hyperparameters
(docs/decisions.md#po-gp-ucb-property-data-from-the-ura-file).
"""

from __future__ import annotations

import functools
import math
import os
import time
from dataclasses import dataclass

import numpy as np

from frontierbo._validation import SeedLike, as_generator, check_int, check_positive
from frontierbo.data import KNOWN_SHA256, resolve_data_path, verify_sha256
from frontierbo.po.problems.base import Problem, preprocess_inputs, singular_values

URA_FILE = "ura/ura_private_projects.csv"
N_PROPERTY = 2004
# sigma_min of the preprocessed inputs implied by Tables 7-9 and the substitute target
# (docs/decisions.md#po-gp-ucb-sigma_min-intervals-implied-by-the-captions).
SIGMA_MIN_RANGE = (174.2, 205.1)
SUBSTITUTE_SIGMA_MIN = 183.0
# Thesis hyperparameters for log(price) (mean 6.85, so -6.85 for g = -log price).
THESIS = {
    "mean_log_price": 6.85,
    "lengthscale": 0.555,
    "signal_variance": 0.545,
    "noise_variance": 0.527,
}
_MAX_SUBSAMPLE_ATTEMPTS = 1000


@dataclass(frozen=True)
class PropertyData:
    """The preprocessed URA subsample before any GP fit.

    inputs (n, 2) centred and scaled (lon, lat); values (n,) = -log price_psm; scale s (normalised
    units per degree); rows (n,) indices into the file; subsample_seed = (seed, attempt) used
    for ``np.random.default_rng``; sigma_min of ``inputs``; path and sha256 of the file.
    """

    inputs: np.ndarray
    values: np.ndarray
    scale: float
    rows: np.ndarray
    subsample_seed: tuple[int, int]
    sigma_min: float
    path: str
    sha256: str | None


def read_ura_csv(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """Read a URA CSV with at least the columns lat, lon, price_psm (any order).

    Returns:
        (lonlat, price): (m, 2) longitude/latitude in degrees and (m,) price per m^2 (> 0).
    """
    with open(path, encoding="utf-8") as fh:
        header = [h.strip() for h in fh.readline().split(",")]
    missing = [c for c in ("lat", "lon", "price_psm") if c not in header]
    if missing:
        raise ValueError(f"URA file {str(path)!r} lacks column(s) {missing}; header is {header}")
    cols = [header.index(c) for c in ("lon", "lat", "price_psm")]
    data = np.loadtxt(path, delimiter=",", skiprows=1, usecols=cols, ndmin=2)
    if not np.all(np.isfinite(data)) or np.any(data[:, 2] <= 0):
        raise ValueError(f"URA file {str(path)!r} has non-finite values or prices <= 0")
    return data[:, :2], data[:, 2]


def load_property_data(
    path: str | os.PathLike | None = None, seed: int = 0, n: int = N_PROPERTY, verify: bool = True
) -> PropertyData:
    """Load, subsample and preprocess the URA file (no GP fit; milliseconds).

    The subsample of ``n`` rows is drawn with ``default_rng((seed, attempt))`` for attempt =
    0, 1, ...; the first attempt whose sigma_min (after centre-then-normalise) lies in
    [174.2, 205.1) is kept (about 68 % of subsamples do;
    docs/decisions.md#po-gp-ucb-property-data-from-the-ura-file). The attempt is recorded.

    Args:
        path: explicit file; default: ``ura/ura_private_projects.csv`` under the data root.
        seed: subsample seed (non-negative int).
        n: subsample size (2004 in the paper; all rows if the file has fewer).
        verify: check the sha256 against the README value when the file is the known one.
    """
    seed = check_int(seed, "seed", low=0)
    n = check_int(n, "n", low=2)
    file = resolve_data_path(URA_FILE, path)
    digest = None
    if verify and (path is None or file.name == os.path.basename(URA_FILE)):
        digest = verify_sha256(file, KNOWN_SHA256[URA_FILE])
    lonlat, price = read_ura_csv(file)
    n = min(n, lonlat.shape[0])
    lo, hi = SIGMA_MIN_RANGE
    for attempt in range(_MAX_SUBSAMPLE_ATTEMPTS):
        rows = np.sort(np.random.default_rng((seed, attempt)).choice(lonlat.shape[0], n, False))
        X, s = preprocess_inputs(lonlat[rows])
        sigma_min = float(singular_values(X)[-1])
        # A full-file "subsample" cannot change with the attempt, so accept it as is.
        if lo <= sigma_min < hi or n == lonlat.shape[0]:
            break
    else:
        raise RuntimeError(
            f"no subsample of {n} rows of {str(file)!r} has sigma_min in [{lo}, {hi}) after "
            f"{_MAX_SUBSAMPLE_ATTEMPTS} attempts; last sigma_min = {sigma_min:.2f}"
        )
    return PropertyData(
        inputs=X,
        values=-np.log(price[rows]),
        scale=s,
        rows=rows,
        subsample_seed=(seed, attempt),
        sigma_min=sigma_min,
        path=str(file),
        sha256=digest,
    )


def _fit_rows(n_rows: int, seed: int, fit_points: int) -> np.ndarray:
    """Sorted indices of the rows used by the MLE: all rows, or a seeded random subset."""
    if fit_points >= n_rows:
        return np.arange(n_rows)
    return np.sort(np.random.default_rng((seed, 1)).choice(n_rows, fit_points, replace=False))


@functools.lru_cache(maxsize=8)
def _fit_property(path: str, seed: int, n_restarts: int, fit_points: int):
    """Isotropic SE MLE on (a seeded subset of) the subsample; cached. Returns (fit, seconds)."""
    from frontierbo.core.fit import fit_hyperparameters

    data = load_property_data(path, seed=seed, verify=False)
    rows = _fit_rows(len(data.values), seed, fit_points)
    start = time.perf_counter()
    fit = fit_hyperparameters(
        data.inputs[rows],
        data.values[rows],
        kernel="se",
        ard=False,
        n_restarts=n_restarts,
        seed=seed,
        max_points=len(rows),
    )
    return fit, time.perf_counter() - start


def property_real(
    path: str | os.PathLike | None = None,
    seed: int = 0,
    hyperparameters: str = "mle",
    n_restarts: int = 3,
    fit_points: int = 1000,
) -> Problem:
    """The URA property problem from the real file.

    Args:
        path, seed: see :func:`load_property_data`.
        hyperparameters: "mle" (isotropic SE + constant mean + noise, fitted in the normalised
            units, cached per process) or "thesis" (mean -6.85, l = 0.555, sigma_y^2 = 0.545,
            sigma_n^2 = 0.527; no fit).
        n_restarts: MLE restarts.
        fit_points: rows used by the MLE, a seeded random subset (``default_rng((seed, 1))``)
            of the 2004. The exact likelihood is O(m^3): on 2 cores 3 restarts take ~130 s on
            2000 rows and ~11 s on 1000 rows, with nearly the same optimum, hence 1000.
    """
    if hyperparameters not in ("mle", "thesis"):
        raise ValueError(f"hyperparameters must be 'mle' or 'thesis', got {hyperparameters!r}")
    data = load_property_data(path, seed=seed)
    meta = {
        "seed": seed,
        "subsample_seed": list(data.subsample_seed),
        "rows": data.rows.tolist(),
        "scale": data.scale,
        "singular_values": singular_values(data.inputs).tolist(),
        "sha256": data.sha256,
        "hyperparameters": hyperparameters,
        "thesis": dict(THESIS),
    }
    if hyperparameters == "thesis":
        ls, sf2 = THESIS["lengthscale"], THESIS["signal_variance"]
        sn2, mean = THESIS["noise_variance"], -THESIS["mean_log_price"]
    else:
        n_restarts = check_int(n_restarts, "n_restarts", low=1)
        fit_points = check_int(fit_points, "fit_points", low=2)
        fit, seconds = _fit_property(data.path, seed, n_restarts, fit_points)
        ls, sf2 = float(fit.kernel.lengthscale), fit.kernel.variance
        sn2, mean = fit.noise_variance, fit.mean
        fit_rows = _fit_rows(len(data.values), seed, fit_points)
        meta.update(
            mle_nll=fit.nll,
            mle_seconds=seconds,
            mle_n_restarts=n_restarts,
            mle_points=len(fit_rows),
            mle_rows=fit_rows.tolist(),
            mle_subset=(
                f"seeded random subset (default_rng(({seed}, 1))) of {len(fit_rows)} of the "
                f"{len(data.values)} rows, to keep the O(m^3) fit to seconds"
                if len(fit_rows) < len(data.values)
                else "all rows"
            ),
        )
    return Problem(
        name="property",
        inputs=data.inputs,
        values=data.values,
        lengthscale=ls,
        signal_variance=sf2,
        noise_variance=sn2,
        prior_mean=mean,
        observation_noise_std=0.0,  # recorded prices already contain the noise
        source=f"real file {os.path.basename(data.path)}",  # a location is not identity
        meta=meta,
    )


# Singapore's longitude/latitude box (degrees) for the fallback generator
# (docs/decisions.md#po-gp-ucb-property-data-from-the-ura-file).
_LON_BOX = (103.60, 104.05)
_LAT_BOX = (1.23, 1.47)
_N_CLUSTERS = 15
_CLUSTER_SD = (0.004, 0.02)
_SCATTER_FRACTION = 0.02


def _substitute_lonlat(rng: np.random.Generator, n: int) -> np.ndarray:
    """(n, 2) lon/lat: 15 Gaussian clusters (sd 0.004-0.02 deg) plus 2 % uniform scatter."""
    lo = np.array([_LON_BOX[0], _LAT_BOX[0]])
    hi = np.array([_LON_BOX[1], _LAT_BOX[1]])
    centres = rng.uniform(lo, hi, size=(_N_CLUSTERS, 2))
    sds = rng.uniform(*_CLUSTER_SD, size=_N_CLUSTERS)
    weights = rng.dirichlet(np.full(_N_CLUSTERS, 2.0))
    n_scatter = round(_SCATTER_FRACTION * n)
    label = rng.choice(_N_CLUSTERS, size=n - n_scatter, p=weights)
    clustered = centres[label] + sds[label, None] * rng.standard_normal((n - n_scatter, 2))
    scattered = rng.uniform(lo, hi, size=(n_scatter, 2))
    return np.clip(np.vstack([clustered, scattered]), lo, hi)


def _stretch_minor_axis(Xc: np.ndarray, factor: float, v_minor: np.ndarray) -> np.ndarray:
    """Multiply the component of every (centred) row along ``v_minor`` by ``factor``."""
    return Xc + (factor - 1.0) * np.outer(Xc @ v_minor, v_minor)


def _calibrate_stretch(Xc: np.ndarray, target: float) -> tuple[float, float]:
    """Stretch of the minor principal axis giving sigma_min = target after max-norm-25 scaling.

    sigma_min(c) = c S2 * 25 / max_i ||x_i(c)|| increases with c while c S2 <= S1 (the max norm
    grows at most linearly in c), so bisection on log c over (0, S1 / S2] is safe.
    Returns (factor, sigma_min reached).
    """
    _, S, Vt = np.linalg.svd(Xc, full_matrices=False)
    v_minor = Vt[-1]

    def sigma_min(c: float) -> float:
        return float(singular_values(preprocess_inputs(_stretch_minor_axis(Xc, c, v_minor))[0])[-1])

    lo, hi = math.log(1e-3), math.log(S[0] / S[-1])
    if not sigma_min(math.exp(lo)) <= target <= sigma_min(math.exp(hi)):
        raise RuntimeError(f"cannot calibrate the substitute to sigma_min = {target}")
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if sigma_min(math.exp(mid)) < target else (lo, mid)
    factor = math.exp(0.5 * (lo + hi))
    return factor, sigma_min(factor)


def property_substitute(
    seed: SeedLike = 0, n: int = N_PROPERTY, target_sigma_min: float = SUBSTITUTE_SIGMA_MIN
) -> Problem:
    """Fallback property data set: synthetic lon/lat and GP-sampled log prices
    (docs/decisions.md#po-gp-ucb-property-data-from-the-ura-file).

    Inputs: a 15-cluster mixture in Singapore's box, centred, minor principal axis stretched
    (calibrated by bisection) so that sigma_min = ``target_sigma_min`` (183, the middle of
    [174.2, 192.5)) after scaling to max norm 25. Outputs: log price = 6.85 + f + eta with
    f ~ GP(0, SE(l=0.555 normalised units, sigma_y^2=0.545)) and eta ~ N(0, 0.527), drawn once
    (exactly, as one N(6.85, K + sigma_n^2 I) vector, which is well conditioned); values =
    -log price. The Problem carries the generating (thesis) hyperparameters.
    """
    n = check_int(n, "n", low=3)
    target_sigma_min = check_positive(target_sigma_min, "target_sigma_min")
    rng = as_generator(seed)
    lonlat = _substitute_lonlat(rng, n)
    Xc = lonlat - lonlat.mean(axis=0)
    factor, reached = _calibrate_stretch(Xc, target_sigma_min)
    _, _, Vt = np.linalg.svd(Xc, full_matrices=False)
    X, s = preprocess_inputs(_stretch_minor_axis(Xc, factor, Vt[-1]))
    from frontierbo.core.kernels import SquaredExponential
    from frontierbo.core.sampling import sample_from_roots

    cov = SquaredExponential(THESIS["lengthscale"], THESIS["signal_variance"])(X)
    cov[np.diag_indices_from(cov)] += THESIS["noise_variance"]
    log_price = THESIS["mean_log_price"] + sample_from_roots([np.linalg.cholesky(cov)], seed=rng)[0]
    return Problem(
        name="property",
        inputs=X,
        values=-log_price,
        lengthscale=THESIS["lengthscale"],
        signal_variance=THESIS["signal_variance"],
        noise_variance=THESIS["noise_variance"],
        prior_mean=-THESIS["mean_log_price"],
        observation_noise_std=0.0,  # the stored values already contain eta
        source="substitute generator (15-cluster lon/lat mixture, GP outputs)",
        meta={
            "seed": seed if not isinstance(seed, np.random.Generator) else "generator",
            "scale": s,
            "minor_axis_stretch": factor,
            "target_sigma_min": target_sigma_min,
            "singular_values": singular_values(X).tolist(),
            "sigma_min_reached": reached,
            "thesis": dict(THESIS),
        },
    )


def property_problem(
    path: str | os.PathLike | None = None,
    seed: int = 0,
    allow_substitute: bool = True,
    **kwargs,
) -> Problem:
    """The property problem: the URA file when found, else (if allowed) the substitute.

    An explicit ``path`` that does not exist is an error (no silent fallback); the fallback is
    used only when the file is not found under the data roots and ``allow_substitute`` is True.
    ``kwargs`` go to :func:`property_real` (hyperparameters, n_restarts, fit_points).
    The chosen origin is in ``Problem.source``.
    """
    try:
        return property_real(path, seed=seed, **kwargs)
    except FileNotFoundError:
        if path is not None or not allow_substitute:
            raise
    return property_substitute(seed)
