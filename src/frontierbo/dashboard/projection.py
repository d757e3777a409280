"""A deterministic 2-D view of candidate rows for the dashboard's scatter."""

from __future__ import annotations

import numpy as np


def pca2(X) -> np.ndarray:
    """``(n, 2)``: the centred rows on their two principal directions (SVD), each direction's
    sign fixed so that its largest-magnitude loading is positive (the same picture on every
    call and for any row order). One column gives a zero second coordinate."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"X must be a non-empty 2-D array, got shape {X.shape}")
    centred = X - X.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    out = np.zeros((X.shape[0], 2))
    for k in range(min(2, vt.shape[0])):
        direction = vt[k] * np.sign(vt[k][np.argmax(np.abs(vt[k]))] or 1.0)
        out[:, k] = centred @ direction
    return out
