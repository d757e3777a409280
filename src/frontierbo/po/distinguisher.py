"""**ATTACK** on our own PO-GP-UCB release: the neighbouring-dataset distinguisher (Definition 1).

Is ``Z`` released from ``X`` or from ``X'`` (one row moved by a vector of L2 norm <= 1)? The
release ``Z = (X - 1 m^T) A`` has ``colspan(Z) = colspan(X_c)``, which decides it with
certainty; :func:`audit_distinguisher` plays the game and turns its outcome into a lower bound on
epsilon (:func:`frontierbo.dp.audit.epsilon_lower_bound`). It exists to audit the releases this
package produces, never to be pointed at someone else's data.
"""

from __future__ import annotations

import warnings

import numpy as np

from frontierbo._validation import (
    SeedLike,
    as_generator,
    check_int,
    check_matrix,
    check_positive,
    check_probability,
    check_real,
    check_vector,
)
from frontierbo.dp.audit import epsilon_lower_bound, trials_to_certify
from frontierbo.po.random_projection import NotDifferentiallyPrivateWarning

#: Default tolerance of :func:`column_space_distinguisher` (relative residual), see its docstring.
DEFAULT_COLSPAN_TOL = 1e-8


def _column_basis(X_candidate) -> np.ndarray:
    """Orthonormal basis (n, rank) of the column space of the centred candidate data."""
    Xc = X_candidate - X_candidate.mean(axis=0)
    U, s, _ = np.linalg.svd(Xc, full_matrices=False)
    if s.size == 0 or s[0] == 0:
        return U[:, :0]
    rank = int(np.sum(s > max(Xc.shape) * np.finfo(float).eps * s[0]))
    return U[:, :rank]


def _residual_with_basis(Z: np.ndarray, Q: np.ndarray) -> float:
    norm_z = np.linalg.norm(Z)
    if norm_z == 0:
        return 0.0
    return float(np.linalg.norm(Z - Q @ (Q.T @ Z)) / norm_z)


def column_space_residual(Z, X_candidate) -> float:
    """``||Z - P Z||_F / ||Z||_F`` with P the orthogonal projector onto span(centred X_candidate).

    0 (up to rounding) when Z's columns lie in the column space of the centred candidate data.
    Cost O(n d^2 + n d r).
    """
    Z = check_matrix(Z, "Z")
    X_candidate = check_matrix(X_candidate, "X_candidate", min_rows=2)
    if Z.shape[0] != X_candidate.shape[0]:
        raise ValueError(
            f"X_candidate must have the same number of rows as Z ({Z.shape[0]}), "
            f"got {X_candidate.shape[0]}"
        )
    return _residual_with_basis(Z, _column_basis(X_candidate))


def column_space_distinguisher(Z, X_candidate, tol: float = DEFAULT_COLSPAN_TOL) -> bool:
    """**ATTACK** (for auditing our own releases): decide whether ``Z`` was released from
    ``X_candidate`` (True) rather than from a neighbour, by testing
    ``colspan(Z) within colspan(X_candidate - mean)`` through :func:`column_space_residual`.

    Choice of ``tol`` (default 1e-8): for the PO-GP-UCB release the residual under the true
    data is pure rounding error — centring, a backward-stable SVD and two matrix products each
    contribute a relative error of order ``p u`` with ``u = 1.1e-16`` and ``p`` a modest
    dimension-dependent factor, so it stays below ~1e-12 for any n up to 10^6 (measured: ~1e-15
    on the four paper data sets). Under a neighbour whose row i moved by ``v`` (``||v|| <= 1``),
    the release contains the component ``(I - P)(e_i - 1/n) v^T A``, relative size about
    ``||v|| / ||X_c||_F >= ||v|| / (25 sqrt(n))`` for data of max row norm 25, i.e. >= ~1e-4 at
    n = 36000 for a unit move (measured: 4e-4 to 2e-3). 1e-8 sits orders of magnitude from both.
    A move much smaller than ~1e-6 would be missed; Definition 1 neighbours may move by less than
    1, so :func:`audit_distinguisher` uses unit moves (the boundary case).
    """
    tol = check_positive(tol, "tol")
    return column_space_residual(Z, X_candidate) <= tol


def _neighbour(
    X: np.ndarray, rng: np.random.Generator, row, shift
) -> tuple[np.ndarray, int, np.ndarray]:
    n, d = X.shape
    row = int(rng.integers(n)) if row is None else check_int(row, "row", low=0, high=n - 1)
    if shift is None:
        v = rng.standard_normal(d)
        v /= np.linalg.norm(v)
    else:
        v = check_vector(shift, "shift", length=d)
        norm = float(np.linalg.norm(v))
        if norm > 1.0 + 1e-12:
            raise ValueError(
                f"shift must have L2 norm in [0, 1] (Definition 1 neighbours), got {norm:g}"
            )
    Xp = X.copy()
    Xp[row] += v
    return Xp, row, v


def audit_distinguisher(
    X,
    mechanism,
    n_trials: int = 200,
    seed: SeedLike = 0,
    row: int | None = None,
    shift=None,
    *,
    delta: float | None = None,
    claimed_epsilon: float | None = None,
    alpha: float = 0.05,
    tol: float = DEFAULT_COLSPAN_TOL,
) -> dict:
    """**ATTACK** audit (our own mechanism): the Definition 1 neighbouring-dataset game.

    Builds a neighbour ``X'`` (row ``row`` — random by default — moved by ``shift``, by default a
    random unit vector). In each of ``n_trials`` trials a fair coin ``b`` picks ``X`` (b = 0) or
    ``X'`` (b = 1), ``mechanism.release(data, seed)`` is called with a fresh integer seed, and
    :func:`column_space_distinguisher` against ``X`` guesses b ("X" when the residual is <= tol).

    ``mechanism`` is any object with ``release(X, seed) -> Release`` (``.Z`` (n, r)). For a noisy
    (private) release this test says "X'" always; use the residuals returned here, or any other
    statistic, with :func:`threshold_audit` instead.

    Returns a dict: ``accuracy``, ``tpr`` (said "X" when it was X), ``fpr`` (said "X" when it
    was X'), counts, ``epsilon_point`` = ln((TPR - delta) / FPR) (inf when FPR = 0) and
    ``epsilon_lower_bound``, its (1 - alpha)-confidence version (Clopper-Pearson lower bound on
    TPR and upper bound on FPR, alpha / 2 each), ``violation`` (lower bound > claimed epsilon;
    None when no claim is known), ``trials_to_certify`` (trials a perfect distinguisher would need
    to refute the claim), the residuals of every trial and the neighbour used. ``delta`` and
    ``claimed_epsilon`` default to ``mechanism.delta`` / ``mechanism.epsilon`` when present.
    """
    X = check_matrix(X, "X", min_rows=2)
    if not callable(getattr(mechanism, "release", None)):
        raise TypeError("mechanism must have a release(X, seed) method returning a Release")
    n_trials = check_int(n_trials, "n_trials", low=2)
    alpha = check_probability(alpha, "alpha")
    tol = check_positive(tol, "tol")
    if delta is None:
        delta = getattr(mechanism, "delta", 0.0)
    delta = check_real(delta, "delta", low=0.0, high=1.0, low_open=False)
    if claimed_epsilon is None:
        claimed_epsilon = getattr(mechanism, "epsilon", None)
    if claimed_epsilon is not None:
        claimed_epsilon = check_real(claimed_epsilon, "claimed_epsilon", low=0.0, low_open=False)
    rng = as_generator(seed)
    Xp, row, v = _neighbour(X, rng, row, shift)
    Q = _column_basis(X)
    coins = rng.integers(0, 2, size=n_trials)
    seeds = rng.integers(0, 2**62, size=n_trials)
    residuals = np.empty(n_trials)
    with warnings.catch_warnings():
        # The audited release warns on every call; the audit states the result itself.
        warnings.simplefilter("ignore", NotDifferentiallyPrivateWarning)
        for t in range(n_trials):
            data = X if coins[t] == 0 else Xp
            rel = mechanism.release(data, int(seeds[t]))
            Z = check_matrix(getattr(rel, "Z", rel), "release.Z")
            if Z.shape[0] != X.shape[0]:
                raise ValueError(f"release.Z must have n = {X.shape[0]} rows, got {Z.shape[0]}")
            residuals[t] = _residual_with_basis(Z, Q)
    says_x = residuals <= tol
    is_x = coins == 0
    n_x, n_xp = int(is_x.sum()), int((~is_x).sum())
    tp, fp = int(np.sum(says_x & is_x)), int(np.sum(says_x & ~is_x))
    bound = epsilon_lower_bound(tp, n_x, fp, n_xp, delta, alpha)
    violation = None
    if claimed_epsilon is not None:
        violation = bool(bound["epsilon_lower_bound"] > claimed_epsilon)
    res_x, res_xp = residuals[is_x], residuals[~is_x]
    return {
        "n_trials": n_trials,
        "n_X": n_x,
        "n_Xprime": n_xp,
        "accuracy": float(np.mean(says_x == is_x)),
        "tpr": bound["p_numerator"],
        "fpr": bound["p_denominator"],
        "tpr_lower": bound["p_numerator_lower"],
        "fpr_upper": bound["p_denominator_upper"],
        "epsilon_point": bound["epsilon_point"],
        "epsilon_lower_bound": bound["epsilon_lower_bound"],
        "claimed_epsilon": claimed_epsilon,
        "delta": delta,
        "alpha": alpha,
        "violation": violation,
        "trials_to_certify": (
            trials_to_certify(claimed_epsilon, delta, alpha)
            if claimed_epsilon is not None
            else None
        ),
        "tol": tol,
        "max_residual_X": float(res_x.max()) if res_x.size else float("nan"),
        "min_residual_Xprime": float(res_xp.min()) if res_xp.size else float("nan"),
        "residuals_X": res_x,
        "residuals_Xprime": res_xp,
        "row": row,
        "shift": v,
    }


__all__ = [
    "DEFAULT_COLSPAN_TOL",
    "audit_distinguisher",
    "column_space_distinguisher",
    "column_space_residual",
]
