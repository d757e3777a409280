"""**ATTACK** on our own PO-GP-UCB release: recover every data row from d + 1 known rows.

The release ``Z = r^{-1/2} X~ M`` (Algorithm 1 of the paper) is ``Z = (X - 1 m^T) A`` for one
unknown d x r matrix ``A``, i.e. ``z_j = x_j A - b`` with ``b = m A``: an adversary who knows
d + 1 affinely independent original rows (and their indices) solves for ``(A, b)`` and recovers
every other row as ``x_j = (z_j + b) A^+`` (``docs/privacy.md``,
``docs/decisions.md#po-gp-ucb-the-release-leaks-the-column-space``). It exists to audit the
releases this package produces, never to be pointed at someone else's data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from frontierbo._validation import SeedLike, as_generator, check_int, check_matrix

#: Known rows whose centred smallest/largest singular value ratio is below this are rejected as
#: (numerically) affinely dependent: the solve would amplify rounding errors by more than 1e10.
AFFINE_RTOL = 1e-10

#: A row counts as "recovered" when its error relative to the data scale is below this.
RECOVERED_RTOL = 1e-6


@dataclass(frozen=True)
class ReconstructionResult:
    """Output of :func:`reconstruction_attack`.

    Attributes:
        X_hat: (n, d) reconstructed original rows (known rows included, re-derived from Z).
        A: (d, r) estimated linear map, b: (r,) estimated offset (``z_j = x_j A - b``).
        known_indices: (k,) indices of the rows the adversary knew.
        fit_residual: ``||Z_K - [X_K, -1] [A; b]||_F / ||Z_K||_F`` on the known rows; ~1e-15
            for an exactly affine release, large for a noisy (e.g. private) one.
        design_condition: condition number of the centred known rows (their affine spread).
    """

    X_hat: np.ndarray
    A: np.ndarray
    b: np.ndarray
    known_indices: np.ndarray
    fit_residual: float
    design_condition: float


def _check_indices(indices, n: int, name: str) -> np.ndarray:
    arr = np.asarray(indices)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(
            f"{name} must be a non-empty 1-D array of row indices, got shape {arr.shape}"
        )
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{name} must contain integers in [0, {n - 1}], got dtype {arr.dtype}")
    if arr.min() < 0 or arr.max() >= n:
        raise ValueError(
            f"{name} must contain integers in [0, {n - 1}], got values in [{arr.min()}, {arr.max()}]"
        )
    if np.unique(arr).size != arr.size:
        raise ValueError(f"{name} must not contain repeated indices")
    return arr.astype(np.int64)


def _affine_condition(rows: np.ndarray) -> tuple[int, float]:
    """(numerical affine rank, s_max / s_min) of a set of rows (rank counted at AFFINE_RTOL)."""
    centred = rows - rows.mean(axis=0)
    s = np.linalg.svd(centred, compute_uv=False)
    d = rows.shape[1]
    if s.size < d or s[0] == 0:
        return int(np.sum(s > 0)), math.inf
    rank = int(np.sum(s > AFFINE_RTOL * s[0]))
    return rank, float(s[0] / s[d - 1]) if s[d - 1] > 0 else math.inf


def reconstruction_attack(Z, known_indices, known_rows) -> ReconstructionResult:
    """**ATTACK** (for auditing our own releases): recover every input row from a release
    ``Z = (X - 1 m^T) A`` given k >= d + 1 known original rows.

    The release satisfies ``z_j = x_j A - b`` (``b = m A``) for an unknown d x r matrix ``A``.
    The k known pairs give the linear system ``Z_K = [X_K, -1] [A; b]`` in (d + 1) r unknowns,
    solved by least squares (exact for k = d + 1 affinely independent rows). Every row is then
    ``x_j = (z_j + b) A^+``; ``A`` has rank d when r >= d, so ``A A^+ = I_d``.

    Args:
        Z: (n, r) release; row j is the image of data row j.
        known_indices: (k,) distinct row indices the adversary knows.
        known_rows: (k, d) the original rows at those indices.

    Raises:
        ValueError: k < d + 1, affinely dependent known rows, shape mismatch, r < d, or a
            release whose estimated map has rank < d.
    """
    Z = check_matrix(Z, "Z")
    n, r = Z.shape
    known_indices = _check_indices(known_indices, n, "known_indices")
    known_rows = check_matrix(known_rows, "known_rows")
    k, d = known_rows.shape
    if known_indices.size != k:
        raise ValueError(
            f"known_rows must have one row per known index ({known_indices.size}), got {k} rows"
        )
    if r < d:
        raise ValueError(
            f"Z must have at least d = {d} columns (r >= d) for the rows to be recoverable, "
            f"got r = {r}"
        )
    if k < d + 1:
        raise ValueError(
            f"known_rows must have at least d + 1 = {d + 1} rows (k >= d + 1 for d = {d} "
            f"columns), got k = {k}"
        )
    rank, cond = _affine_condition(known_rows)
    if rank < d:
        raise ValueError(
            f"known_rows must be affinely independent (affine rank d = {d}), got affine rank "
            f"{rank} (centred singular values below {AFFINE_RTOL:g} x the largest)"
        )
    design = np.hstack([known_rows, -np.ones((k, 1))])
    ZK = Z[known_indices]
    W, *_ = np.linalg.lstsq(design, ZK, rcond=None)
    A, b = W[:d], W[d]
    norm_zk = np.linalg.norm(ZK)
    fit_residual = float(np.linalg.norm(ZK - design @ W) / norm_zk) if norm_zk > 0 else 0.0
    s_a = np.linalg.svd(A, compute_uv=False)
    if s_a[0] == 0 or s_a[d - 1] <= AFFINE_RTOL * s_a[0]:
        raise ValueError(
            f"Z must be a rank-d image of the data (estimated map A has rank < d = {d}); "
            "rows cannot be recovered"
        )
    X_hat = (Z + b) @ np.linalg.pinv(A)
    return ReconstructionResult(
        X_hat=X_hat,
        A=A,
        b=b,
        known_indices=known_indices,
        fit_residual=fit_residual,
        design_condition=cond,
    )


def _release_matrix(release_Z) -> np.ndarray:
    return check_matrix(getattr(release_Z, "Z", release_Z), "release_Z")


def audit_reconstruction(
    X,
    release_Z,
    k: int | None = None,
    seed: SeedLike = 0,
    indices=None,
    *,
    max_draws: int = 100,
) -> dict:
    """**ATTACK** audit (our own release): run :func:`reconstruction_attack` with k known rows.

    Picks ``k`` (default d + 1) random known rows (redrawn, up to ``max_draws`` times, when a
    draw is affinely dependent — e.g. collinear grid points) or uses the given ``indices``.

    Errors are relative to the data scale: ``error_j = ||x_hat_j - x_j|| / max_i ||x_i - mean||``.

    Returns a dict: ``k``, ``n``, ``d``, ``r``, ``known_indices``, ``max_rel_error`` and
    ``median_rel_error`` over the unknown rows, ``n_unknown``, ``n_recovered`` (unknown rows with
    error < 1e-6) and ``fraction_recovered``, ``fit_residual``, ``design_condition``, ``scale``.
    """
    X = check_matrix(X, "X", min_rows=2)
    Z = _release_matrix(release_Z)
    n, d = X.shape
    if Z.shape[0] != n:
        raise ValueError(f"release_Z must have n = {n} rows (one per row of X), got {Z.shape[0]}")
    if indices is not None:
        idx = _check_indices(indices, n, "indices")
        if k is not None and check_int(k, "k", low=1) != idx.size:
            raise ValueError(f"k must equal len(indices) = {idx.size} when both are given, got {k}")
    else:
        k = d + 1 if k is None else check_int(k, "k", low=d + 1, high=n - 1)
        max_draws = check_int(max_draws, "max_draws", low=1)
        rng = as_generator(seed)
        for _ in range(max_draws):
            idx = np.sort(rng.choice(n, size=k, replace=False))
            if _affine_condition(X[idx])[0] == d:
                break
        else:
            raise ValueError(
                f"X must contain k = {k} affinely independent rows; {max_draws} random draws "
                "were all affinely dependent"
            )
    res = reconstruction_attack(Z, idx, X[idx])
    centred = X - X.mean(axis=0)
    scale = float(np.linalg.norm(centred, axis=1).max())
    if scale == 0:
        raise ValueError("X must not have all rows equal (the data scale is 0)")
    err = np.linalg.norm(res.X_hat - X, axis=1) / scale
    unknown = np.ones(n, dtype=bool)
    unknown[idx] = False
    err_u = err[unknown] if unknown.any() else np.zeros(0)
    n_rec = int(np.sum(err_u < RECOVERED_RTOL))
    return {
        "n": n,
        "d": d,
        "r": Z.shape[1],
        "k": int(idx.size),
        "known_indices": idx.tolist(),
        "n_unknown": int(err_u.size),
        "max_rel_error": float(err_u.max()) if err_u.size else 0.0,
        "median_rel_error": float(np.median(err_u)) if err_u.size else 0.0,
        "n_recovered": n_rec,
        "fraction_recovered": n_rec / err_u.size if err_u.size else 1.0,
        "fit_residual": res.fit_residual,
        "design_condition": res.design_condition,
        "scale": scale,
    }


__all__ = [
    "AFFINE_RTOL",
    "RECOVERED_RTOL",
    "ReconstructionResult",
    "audit_reconstruction",
    "reconstruction_attack",
]
