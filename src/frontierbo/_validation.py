"""Input validation at the library boundary.

Every check raises ``ValueError`` (or ``TypeError`` for the wrong kind of object) with one
message that names the parameter and the allowed range, so a user sees exactly what to fix.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

SeedLike = int | np.random.Generator | None


def as_generator(seed: SeedLike, name: str = "seed") -> np.random.Generator:
    """Return a ``numpy.random.Generator`` from an int seed, a Generator, or None (fresh entropy)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        return np.random.default_rng()
    if isinstance(seed, Integral) and not isinstance(seed, bool):
        if int(seed) < 0:
            raise ValueError(f"{name} must be an integer in [0, inf), got {seed!r}")
        return np.random.default_rng(int(seed))
    raise TypeError(
        f"{name} must be a non-negative int, a numpy.random.Generator or None, got {seed!r}"
    )


def check_matrix(value, name: str, *, min_rows: int = 1, n_cols: int | None = None) -> np.ndarray:
    """A finite float matrix of shape (n, d) with n >= ``min_rows``; 1-D input is one column."""
    arr = np.asarray(value, dtype=float)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array of shape (n, d), got shape {arr.shape}")
    if arr.shape[0] < min_rows:
        raise ValueError(f"{name} must have at least {min_rows} row(s), got {arr.shape[0]}")
    if arr.shape[1] < 1:
        raise ValueError(f"{name} must have at least 1 column, got shape {arr.shape}")
    if n_cols is not None and arr.shape[1] != n_cols:
        raise ValueError(f"{name} must have {n_cols} column(s), got {arr.shape[1]}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return arr


def check_vector(value, name: str, *, length: int | None = None, min_length: int = 1) -> np.ndarray:
    """A finite 1-D float array, optionally of an exact length."""
    arr = np.asarray(value, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array, got shape {arr.shape}")
    if length is not None and arr.shape[0] != length:
        raise ValueError(f"{name} must have length {length}, got {arr.shape[0]}")
    if arr.shape[0] < min_length:
        raise ValueError(f"{name} must have at least {min_length} element(s), got {arr.shape[0]}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return arr


def check_real(value, name: str, *, low=None, high=None, low_open=True, high_open=True) -> float:
    """A finite real number inside the given (open or closed) interval."""
    if isinstance(value, bool) or not isinstance(value, Real | np.floating | np.integer):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    x = float(value)
    lo_txt = "-inf" if low is None else f"{low:g}"
    hi_txt = "inf" if high is None else f"{high:g}"
    allowed = f"{'(' if low_open else '['}{lo_txt}, {hi_txt}{')' if high_open else ']'}"
    bad = not math.isfinite(x)
    if low is not None:
        bad |= x <= low if low_open else x < low
    if high is not None:
        bad |= x >= high if high_open else x > high
    if bad:
        raise ValueError(f"{name} must be in {allowed}, got {value!r}")
    return x


def check_positive(value, name: str) -> float:
    """A finite real number > 0."""
    return check_real(value, name, low=0.0)


def check_probability(value, name: str) -> float:
    """A real number in the open interval (0, 1)."""
    return check_real(value, name, low=0.0, high=1.0)


def check_int(value, name: str, *, low: int | None = None, high: int | None = None) -> int:
    """An integer in the closed interval [low, high]."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    x = int(value)
    if (low is not None and x < low) or (high is not None and x > high):
        lo_txt = "-inf" if low is None else str(low)
        hi_txt = "inf" if high is None else str(high)
        raise ValueError(f"{name} must be an integer in [{lo_txt}, {hi_txt}], got {value!r}")
    return x
