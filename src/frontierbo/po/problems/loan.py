"""Loan applications data set of the PO-GP-UCB paper (Section 4): n = 36000, d = 3.

Inputs: LendingClub ``funded_amnt_inv`` (dollars), ``int_rate`` (percent), ``annual_inc``
(dollars), divided by the thesis ARD length-scales, centred and scaled to max row norm 25 (so
the modeler's isotropic length-scale is the scale s). Objective: log ROI, maximised, with
ROI = (total_pymnt - funded_amnt) / funded_amnt restricted to ROI > 0
(docs/decisions.md#po-gp-ucb-loan-roi-definition).

The real 2007-2011 file is not available offline; :func:`loan_substitute` generates a
calibrated stand-in (docs/decisions.md#po-gp-ucb-loan-substitute-data), and
:func:`load_lendingclub_csv` reads a user-supplied CSV.
"""

from __future__ import annotations

import csv
import math
import os

import numpy as np

from frontierbo._validation import SeedLike, as_generator, check_int, check_positive
from frontierbo.data import resolve_data_path, verify_sha256
from frontierbo.po.problems.base import Problem, preprocess_inputs, singular_values

LOAN_FILE = "lendingclub/loans.csv"
N_LOAN = 36000
FEATURES = ("funded_amnt_inv", "int_rate", "annual_inc")
ROI_COLUMNS = ("total_pymnt", "funded_amnt")
# Thesis hyperparameters: ARD length-scales in raw units (dollars, percent, dollars).
THESIS_LENGTHSCALES = (18985.93, 10.505, 171490.464)
THESIS = {"mean": -2.742, "signal_variance": 2.118, "noise_variance": 0.83}
# sigma_min interval implied by Tables 4-6 and the substitute's target (its middle)
# (docs/decisions.md#po-gp-ucb-sigma_min-intervals-implied-by-the-captions).
SIGMA_MIN_RANGE = (202.4, 223.7)
SUBSTITUTE_SIGMA_MIN = 213.0


def _thesis_problem(X_raw: np.ndarray, values: np.ndarray, source: str, meta: dict) -> Problem:
    """Preprocess raw (n, 3) features with the thesis length-scales; thesis GP hyperparameters."""
    X, s = preprocess_inputs(X_raw, lengthscales=THESIS_LENGTHSCALES)
    meta = {
        **meta,
        "raw_lengthscales": list(THESIS_LENGTHSCALES),
        "scale": s,
        "singular_values": singular_values(X).tolist(),
    }
    return Problem(
        name="loan",
        inputs=X,
        values=values,
        lengthscale=s,  # l = 1 after the ARD division, times the max-norm scale s
        signal_variance=THESIS["signal_variance"],
        noise_variance=THESIS["noise_variance"],
        prior_mean=THESIS["mean"],
        observation_noise_std=0.0,  # recorded (or stored) values already contain the noise
        source=source,
        meta=meta,
    )


# --------------------------------------------------------------------------- real CSV loader


def _parse_number(text: str) -> float:
    """'10.65%', ' 10.65 ', '1,000' -> float; raises ValueError for anything else."""
    return float(text.strip().rstrip("%").replace(",", "").strip())


def _find_header(lines: list[str], path) -> int:
    """Index of the header line; LendingClub files may start with a 'Notes offered by' line."""
    for i, line in enumerate(lines[:10]):
        if "funded_amnt_inv" in line:
            return i
    raise ValueError(
        f"LendingClub file {str(path)!r}: no header with the column 'funded_amnt_inv' in its "
        "first 10 lines"
    )


def read_lendingclub_csv(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray, int]:
    """Parse a LendingClub CSV into raw features and log ROI for the rows with ROI > 0.

    Returns:
        (X_raw, log_roi, n_skipped): X_raw (m, 3) = funded_amnt_inv [$], int_rate [%],
        annual_inc [$]; log_roi (m,); n_skipped rows that were unparseable, had
        funded_amnt <= 0 or ROI <= 0 (footer lines of the official files are skipped too).
    """
    with open(path, encoding="utf-8", newline="") as fh:
        lines = fh.read().splitlines()
    start = _find_header(lines, path)
    reader = csv.reader(lines[start:])
    header = [h.strip() for h in next(reader)]
    needed = FEATURES + ROI_COLUMNS
    missing = [c for c in needed if c not in header]
    if missing:
        raise ValueError(
            f"LendingClub file {str(path)!r} lacks column(s) {missing}; needed: {list(needed)}"
        )
    idx = [header.index(c) for c in needed]
    rows, skipped = [], 0
    for record in reader:
        try:
            rows.append([_parse_number(record[i]) for i in idx])
        except (ValueError, IndexError):
            skipped += 1
    data = np.asarray(rows, dtype=float).reshape(-1, len(needed))
    total_pymnt, funded = data[:, 3], data[:, 4]
    ok = np.all(np.isfinite(data), axis=1) & (funded > 0)
    roi = np.where(ok, (total_pymnt - funded) / np.where(funded > 0, funded, 1.0), -1.0)
    keep = ok & (roi > 0)
    return data[keep, :3], np.log(roi[keep]), skipped + int(np.sum(~keep))


def load_lendingclub_csv(
    path: str | os.PathLike, seed: SeedLike = 0, n: int = N_LOAN, sha256: str | None = None
) -> Problem:
    """The loan problem from a user-supplied LendingClub CSV.

    Args:
        path: CSV with columns funded_amnt_inv, int_rate ("10.65%" or 10.65), annual_inc,
            total_pymnt, funded_amnt (others ignored).
        seed: seed of the subsample of ``n`` rows (sorted row order); all rows if fewer.
        n: rows to keep (36000 in the paper).
        sha256: optional expected checksum of the file.

    Returns:
        Problem with inputs (n, 3) preprocessed with the thesis length-scales, values (n,) =
        log ROI, thesis hyperparameters (mean -2.742, sigma_y^2 2.118, sigma_n^2 0.83).
    """
    n = check_int(n, "n", low=2)
    file = resolve_data_path(LOAN_FILE, path)
    digest = verify_sha256(file, sha256) if sha256 is not None else None
    X_raw, log_roi, skipped = read_lendingclub_csv(file)
    if X_raw.shape[0] < 2:
        raise ValueError(f"LendingClub file {str(file)!r} has fewer than 2 rows with ROI > 0")
    rows = np.arange(X_raw.shape[0])
    if X_raw.shape[0] > n:
        rows = np.sort(as_generator(seed).choice(X_raw.shape[0], size=n, replace=False))
    meta = {
        "seed": seed if not isinstance(seed, np.random.Generator) else "generator",
        "n_available": int(X_raw.shape[0]),
        "n_skipped": skipped,
        "sha256": digest,
        "roi": "(total_pymnt - funded_amnt) / funded_amnt, rows with ROI > 0",
    }
    # the file by name: where it lies is not part of the problem (nor of a run's identity)
    return _thesis_problem(X_raw[rows], log_roi[rows], f"real file {file.name}", meta)


# --------------------------------------------------------------------------- substitute


def _substitute_features(rng: np.random.Generator, n: int) -> np.ndarray:
    """Raw (n, 3) features before the income cap (our approximate marginals and tail;
    docs/decisions.md#po-gp-ucb-loan-substitute-data).

    funded_amnt_inv ~ lognormal(median 9000, log-sd 0.65) clipped to [0, 35000]; int_rate ~
    N(12, 3.7) clipped to [5.42, 24.59], correlation 0.3 with log amount; annual_inc ~
    lognormal(median 59000, log-sd 0.6), with 0.5 % of rows from a Pareto tail (x_m = 200000,
    alpha = 1.5) and floored at 4000. The tail is ours: real 2007-2011 incomes reach millions,
    and without it the income cap cannot bring sigma_min down to the target (a pure lognormal
    gives sigma_min ~ 344 even uncapped).
    """
    z_amt, z_rate, z_inc = rng.standard_normal((3, n))
    amount = np.clip(np.exp(math.log(9000.0) + 0.65 * z_amt), 0.0, 35000.0)
    rho = 0.3
    rate = np.clip(12.0 + 3.7 * (rho * z_amt + math.sqrt(1 - rho**2) * z_rate), 5.42, 24.59)
    income = np.exp(math.log(59000.0) + 0.6 * z_inc)
    tail = rng.random(n) < 0.005
    income[tail] = 200000.0 * (1.0 - rng.random(int(tail.sum()))) ** (-1.0 / 1.5)
    return np.column_stack([amount, rate, np.maximum(income, 4000.0)])


def _sigma_min_with_cap(scaled: np.ndarray, income_scaled: np.ndarray, cap_scaled: float) -> float:
    """sigma_min after centring and max-norm-25 scaling, for incomes capped at ``cap_scaled``.

    ``scaled`` holds the (n, 3) features already divided by the length-scales; only the income
    column changes with the cap, and sigma_min needs only the 3 x 3 Gram of the centred data
    and the largest row norm: O(n) per evaluation.
    """
    scaled[:, 2] = np.minimum(income_scaled, cap_scaled)
    centred = scaled - scaled.mean(axis=0)
    largest_sq = float(np.max(np.einsum("ij,ij->i", centred, centred)))
    gram_min = float(np.linalg.eigvalsh(centred.T @ centred)[0])
    return 25.0 * math.sqrt(max(gram_min, 0.0) / largest_sq)


def calibrate_income_cap(
    X_raw: np.ndarray, target: float = SUBSTITUTE_SIGMA_MIN, tol: float = 1e-9
) -> tuple[float, float]:
    """Income cap [$] such that sigma_min of the preprocessed features equals ``target``.

    sigma_min(cap) first rises (capping everything removes the income spread) and then falls
    (the capped top incomes set the max row norm); bisection on log cap runs on the falling
    branch, between the cap that maximises sigma_min on a coarse grid and the largest income.

    Returns:
        (cap, sigma_min reached).
    """
    scaled = X_raw / np.asarray(THESIS_LENGTHSCALES)
    income = scaled[:, 2].copy()
    work = scaled.copy()

    def sigma_min(log_cap: float) -> float:
        return _sigma_min_with_cap(work, income, math.exp(log_cap))

    grid = np.linspace(math.log(np.median(income)), math.log(income.max()), 40)
    values = [sigma_min(c) for c in grid]
    lo, hi = float(grid[int(np.argmax(values))]), float(grid[-1])
    if not sigma_min(hi) <= target <= sigma_min(lo):
        raise RuntimeError(
            f"income cap calibration: target sigma_min {target} is outside "
            f"[{sigma_min(hi):.1f}, {sigma_min(lo):.1f}] reachable with this sample"
        )
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if sigma_min(mid) > target else (lo, mid)
    cap_scaled = math.exp(0.5 * (lo + hi))
    return cap_scaled * THESIS_LENGTHSCALES[2], sigma_min(0.5 * (lo + hi))


def rff_sample(
    X_scaled: np.ndarray,
    rng: np.random.Generator,
    signal_variance: float,
    n_features: int = 2000,
    chunk: int = 4096,
) -> np.ndarray:
    """Approximate SE-GP sample (unit length-scale) by random Fourier features.

    f(x) = sqrt(2 sigma_y^2 / D) sum_j w_j cos(omega_j^T x + b_j), omega_j ~ N(0, I),
    b_j ~ U[0, 2 pi), w_j ~ N(0, 1); X_scaled (n, d) are inputs divided by the length-scales.
    Returns (n,).

    The n x D cosines dominate the cost (72e6 for the loan set), so they are evaluated in
    float32 (about 4x faster than float64 here) in row chunks, and summed in float64: the
    error, ~1e-5 relative to sigma_y, is far below the noise sd of the data set.
    """
    d = X_scaled.shape[1]
    omega = rng.standard_normal((n_features, d))
    phase = rng.uniform(0.0, 2.0 * math.pi, n_features)
    weights = rng.standard_normal(n_features) * math.sqrt(2.0 * signal_variance / n_features)
    omega32, phase32 = omega.T.astype(np.float32), phase.astype(np.float32)
    X32 = X_scaled.astype(np.float32)
    f = np.empty(X_scaled.shape[0])
    for start in range(0, X_scaled.shape[0], chunk):
        x = X32[start : start + chunk]
        # d rank-1 updates instead of a (chunk, d) @ (d, D) product: BLAS is slow for tiny d.
        block = np.multiply.outer(x[:, 0], omega32[0])
        for k in range(1, d):
            block += np.multiply.outer(x[:, k], omega32[k])
        block += phase32
        f[start : start + chunk] = np.cos(block, out=block).astype(np.float64) @ weights
    return f


def loan_substitute(
    seed: SeedLike = 0,
    n: int = N_LOAN,
    target_sigma_min: float = SUBSTITUTE_SIGMA_MIN,
    n_features: int = 2000,
) -> Problem:
    """Calibrated stand-in for the LendingClub data
    (docs/decisions.md#po-gp-ucb-loan-substitute-data).

    Features as in :func:`_substitute_features`, the income cap calibrated by bisection so that
    sigma_min of the preprocessed (n, 3) inputs equals ``target_sigma_min`` (213, the middle of
    [202.4, 223.7)); values = -2.742 + f(x) + eta with f an RFF draw (D = ``n_features``) of
    the ARD SE GP (sigma_y^2 = 2.118) and eta ~ N(0, 0.83), both drawn once and stored.
    """
    n = check_int(n, "n", low=100)
    target_sigma_min = check_positive(target_sigma_min, "target_sigma_min")
    n_features = check_int(n_features, "n_features", low=1)
    rng = as_generator(seed)
    X_raw = _substitute_features(rng, n)
    cap, reached = calibrate_income_cap(X_raw, target_sigma_min)
    X_raw[:, 2] = np.minimum(X_raw[:, 2], cap)
    f = rff_sample(
        X_raw / np.asarray(THESIS_LENGTHSCALES), rng, THESIS["signal_variance"], n_features
    )
    eta = math.sqrt(THESIS["noise_variance"]) * rng.standard_normal(n)
    meta = {
        "seed": seed if not isinstance(seed, np.random.Generator) else "generator",
        "income_cap": cap,
        "n_capped": int(np.sum(X_raw[:, 2] >= cap)),
        "target_sigma_min": target_sigma_min,
        "sigma_min_reached": reached,
        "rff_features": n_features,
    }
    source = "substitute generator (calibrated LendingClub-like features, RFF GP outputs)"
    return _thesis_problem(X_raw, THESIS["mean"] + f + eta, source, meta)


def loan_problem(path: str | os.PathLike | None = None, seed: SeedLike = 0, **kwargs) -> Problem:
    """The loan problem: a real CSV (``path``, or ``lendingclub/loans.csv`` under the data
    root) when there is one, else the substitute. ``Problem.source`` says which.

    An explicit ``path`` that does not exist is an error. ``kwargs`` go to the chosen builder.
    """
    if path is None:
        try:
            path = resolve_data_path(LOAN_FILE)
        except FileNotFoundError:
            return loan_substitute(seed, **kwargs)
    return load_lendingclub_csv(path, seed=seed, **kwargs)
