"""A deterministic 2-D view of candidate rows for the dashboard's scatter.

The page redraws the scatter at every refresh, so the picture must not move between calls: SVD
returns each principal direction up to its sign, which is fixed here by a rule on the direction
itself (its largest-magnitude loading is positive), not on the rows, so row order does not
matter either.
"""

from __future__ import annotations

import numpy as np

from frontierbo._validation import check_matrix


def pca2(X) -> np.ndarray:
    """``(n, 2)``: the centred rows of ``X`` on their two principal directions (SVD), each
    direction's sign fixed so that its largest-magnitude loading is positive. One column (or a
    1-D ``X``) gives a zero second coordinate; constant columns add nothing."""
    X = check_matrix(X, "X")
    centred = X - X.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    out = np.zeros((X.shape[0], 2))
    for k in range(min(2, vt.shape[0])):
        lead = vt[k][np.argmax(np.abs(vt[k]))]
        out[:, k] = centred @ (vt[k] if lead >= 0 else -vt[k])
    return out
