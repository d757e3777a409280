"""Privacy audits of a release mechanism: attacks on OUR OWN releases, to measure what they leak.

Everything in this module that is marked **ATTACK** demonstrates an attack. It exists to audit the
releases this package produces (the PO-GP-UCB random projection, and later the private
mechanisms), never to be pointed at someone else's data.

Two attacks on the PO-GP-UCB release ``Z = r^{-1/2} X~ M`` (Algorithm 1 of the paper;
``docs/privacy.md``, ``docs/decisions.md#po-gp-ucb-the-release-leaks-the-column-space``). In both
branches ``Z = (X - 1 m^T) A`` for one unknown d x r matrix ``A``, i.e. ``z_j = x_j A - b`` with
``b = m A``:

* :func:`reconstruction_attack` / :func:`audit_reconstruction` — an adversary who knows d + 1
  affinely independent original rows (and their indices) solves for ``(A, b)`` and recovers every
  other row as ``x_j = (z_j + b) A^+``.
* :func:`column_space_distinguisher` / :func:`audit_distinguisher` — the paper's Definition 1
  neighbouring-dataset game: is ``Z`` released from ``X`` or from ``X'`` (one row moved by a
  vector of L2 norm <= 1)? ``colspan(Z) = colspan(X_c)`` decides it with certainty.

The empirical bound on epsilon uses the hypothesis-testing form of (epsilon, delta)-DP: for
every event O and neighbours X, X', ``P(M(X) in O) <= e^eps P(M(X') in O) + delta``, so
``eps >= ln((P(M(X) in O) - delta) / P(M(X') in O))``. A statistically valid lower bound replaces
the two probabilities by one-sided Clopper-Pearson bounds (each at level alpha / 2, so both hold
jointly with probability >= 1 - alpha). :func:`threshold_audit` does this for any scalar test
statistic (used for empirical DP audits of private mechanisms, where the column-space test is
useless), and :func:`run_audits` / :func:`format_audit_table` / :func:`audit_command` run and
print the audits of the four PO-GP-UCB data sets.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

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
from frontierbo.dp.audit import (
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_lower_bound,
    threshold_audit,
    trials_to_certify,
)
from frontierbo.po.random_projection import (
    NotDifferentiallyPrivateWarning,
    RandomProjectionMechanism,
)

#: Known rows whose centred smallest/largest singular value ratio is below this are rejected as
#: (numerically) affinely dependent: the solve would amplify rounding errors by more than 1e10.
AFFINE_RTOL = 1e-10

#: Default tolerance of :func:`column_space_distinguisher` (relative residual), see its docstring.
DEFAULT_COLSPAN_TOL = 1e-8

#: A row counts as "recovered" when its error relative to the data scale is below this.
RECOVERED_RTOL = 1e-6

#: The threshold (if-branch) configuration of each PO-GP-UCB data set: (log eps, r, delta), plus
#: one else-branch epsilon named in the paper's text (Section 4 and App. A, Fig. 2 and 3).
PAPER_AUDIT_CONFIGS: dict[str, dict] = {
    "synthetic": {"log_eps": 1.1, "r": 10, "delta": 1e-5, "else_log_eps": 1.0},
    "loan": {"log_eps": 2.9, "r": 15, "delta": 1e-5, "else_log_eps": 2.0},
    "property": {"log_eps": 2.8, "r": 15, "delta": 1e-4, "else_log_eps": 1.0},
    "branin": {"log_eps": 2.3, "r": 10, "delta": 1e-3, "else_log_eps": 2.0},
}


# --------------------------------------------------------------------------------------------
# Attack 1: reconstruction from d + 1 known rows
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# Attack 2: neighbouring-dataset distinguisher (Definition 1)
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# The audits of the four PO-GP-UCB data sets
# --------------------------------------------------------------------------------------------


def _configs_for(name: str, epsilon, delta, r, include_else: bool) -> list[dict]:
    if name not in PAPER_AUDIT_CONFIGS:
        raise ValueError(f"datasets must be drawn from {sorted(PAPER_AUDIT_CONFIGS)}, got {name!r}")
    paper = PAPER_AUDIT_CONFIGS[name]
    dl = paper["delta"] if delta is None else delta
    rr = paper["r"] if r is None else r
    if epsilon is not None:
        return [{"epsilon": epsilon, "log_eps": None, "delta": dl, "r": rr}]
    out = [
        {"epsilon": math.exp(paper["log_eps"]), "log_eps": paper["log_eps"], "delta": dl, "r": rr}
    ]
    if include_else:
        le = paper["else_log_eps"]
        out.append({"epsilon": math.exp(le), "log_eps": le, "delta": dl, "r": rr})
    return out


def audit_release(
    X,
    mechanism,
    *,
    k: int | None = None,
    n_trials: int = 200,
    seed: int = 0,
    known_indices=None,
    alpha: float = 0.05,
) -> dict:
    """**ATTACK** audit of one mechanism on one data set: one release, the reconstruction attack
    on it, and the distinguisher game. Returns ``{"release_info", "reconstruction",
    "distinguisher"}``."""
    X = check_matrix(X, "X", min_rows=2)
    seed = check_int(seed, "seed", low=0)
    ss = np.random.SeedSequence(seed)
    s_release, s_recon, s_dist = (int(c.generate_state(1)[0]) for c in ss.spawn(3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotDifferentiallyPrivateWarning)
        rel = mechanism.release(X, s_release)
    recon = audit_reconstruction(X, rel, k=k, seed=s_recon, indices=known_indices)
    dist = audit_distinguisher(X, mechanism, n_trials=n_trials, seed=s_dist, alpha=alpha)
    return {
        "release_info": dict(getattr(rel, "info", {})),
        "reconstruction": recon,
        "distinguisher": dist,
    }


def run_audits(
    datasets: Sequence[str] = ("synthetic", "branin", "loan", "property"),
    epsilon: float | None = None,
    delta: float | None = None,
    r: int | None = None,
    *,
    k: int | None = None,
    n_trials: int = 200,
    seed: int = 0,
    include_else: bool = True,
    alpha: float = 0.05,
    problems: dict | None = None,
) -> list[dict]:
    """**ATTACK** audits of the PO-GP-UCB release on the paper's data sets.

    For each data set, by default two configurations: the paper's threshold configuration (the
    largest epsilon of its epsilon sweep, if-branch: synthetic e^1.1, r = 10, delta = 1e-5;
    loan e^2.9, 15, 1e-5; property e^2.8, 15, 1e-4; Branin e^2.3, 10, 1e-3) and one else-branch
    epsilon named in the paper (synthetic e^1.0, loan e^2.0, property e^1.0, Branin e^2.0), to
    show that lifting the singular values does not help. ``epsilon`` / ``delta`` / ``r`` override
    the paper's values for every data set (a given ``epsilon`` gives one configuration).
    ``problems`` may map names to already built problems (or (n, d) input matrices).

    Returns one dict per configuration: ``dataset``, ``n``, ``d``, ``epsilon``, ``log_eps``,
    ``delta``, ``r``, ``branch``, ``omega``, ``sigma_min``, ``reconstruction`` and
    ``distinguisher`` (the dicts of :func:`audit_reconstruction` / :func:`audit_distinguisher`).
    """
    if isinstance(datasets, str):
        datasets = (datasets,)
    if epsilon is not None:
        epsilon = check_positive(epsilon, "epsilon")
    if delta is not None:
        delta = check_probability(delta, "delta")
    if r is not None:
        r = check_int(r, "r", low=1)
    configs = [(name, _configs_for(name, epsilon, delta, r, include_else)) for name in datasets]
    problems = {} if problems is None else dict(problems)
    results = []
    for name, cfgs in configs:
        if name not in problems:
            from frontierbo.po.problems import get_problem

            problems[name] = get_problem(name, seed=0)
        X = check_matrix(getattr(problems[name], "inputs", problems[name]), "inputs", min_rows=2)
        for cfg in cfgs:
            mech = RandomProjectionMechanism(cfg["epsilon"], cfg["delta"], cfg["r"])
            out = audit_release(X, mech, k=k, n_trials=n_trials, seed=seed, alpha=alpha)
            info = out["release_info"]
            results.append(
                {
                    "dataset": name,
                    "n": X.shape[0],
                    "d": X.shape[1],
                    **cfg,
                    "branch": info.get("branch"),
                    "omega": info.get("omega"),
                    "sigma_min": info.get("sigma_min"),
                    "reconstruction": out["reconstruction"],
                    "distinguisher": out["distinguisher"],
                }
            )
    return results


def _fmt_eps(log_eps: float | None, eps: float) -> str:
    if log_eps is not None and abs(math.exp(log_eps) - eps) <= 1e-12 * eps:
        txt = f"{log_eps:.1f}" if round(log_eps, 1) == log_eps else f"{log_eps:g}"
        return f"e^{txt} = {eps:.4g}"
    return f"{eps:.4g}"


def _fmt_lb(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.2f}"


def _fmt_violation(v) -> str:
    return "n/a" if v is None else ("yes" if v else "no")


def format_audit_table(results: Sequence[dict]) -> str:
    """Markdown table of :func:`run_audits` results: dataset, epsilon, r, branch, k, errors,
    distinguisher accuracy, TPR, FPR, the epsilon lower bound (point / 95 % confidence), whether
    the confidence bound exceeds the claimed epsilon, and the column-space residuals (largest
    under X, smallest under X')."""
    head = (
        "| dataset | n × d | ε | δ | r | branch | k | max rel. error | median rel. error "
        "| rows recovered | distinguisher accuracy | TPR | FPR | ε lower bound (point) "
        "| ε lower bound (conf.) | certified violation | colspan residual X / X' |"
    )
    lines = [head, "|" + "---|" * 17]
    for res in results:
        rec, dis = res["reconstruction"], res["distinguisher"]
        conf = f"{_fmt_lb(dis['epsilon_lower_bound'])} ({100 * (1 - dis['alpha']):g} %)"
        lines.append(
            f"| {res['dataset']} | {res['n']} × {res['d']} | "
            f"{_fmt_eps(res.get('log_eps'), res['epsilon'])} | {res['delta']:g} | {res['r']} | "
            f"{res['branch']} | {rec['k']} | {rec['max_rel_error']:.1e} | "
            f"{rec['median_rel_error']:.1e} | {rec['n_recovered']}/{rec['n_unknown']} | "
            f"{dis['accuracy']:.3f} | {dis['tpr']:.3f} | {dis['fpr']:.3f} | "
            f"{_fmt_lb(dis['epsilon_point'])} | {conf} | {_fmt_violation(dis['violation'])} | "
            f"{dis['max_residual_X']:.0e} / {dis['min_residual_Xprime']:.0e} |"
        )
    return "\n".join(lines)


def audit_command(
    dataset: str,
    epsilon: float | None = None,
    delta: float | None = None,
    r: int | None = None,
    k: int | None = None,
    trials: int = 200,
    seed: int = 0,
    known_indices=None,
) -> str:
    """The printable report of ``frontierbo privacy audit`` (**ATTACK** audit of our release).

    Builds the data set, releases it with the PO-GP-UCB mechanism (``epsilon``/``delta``/``r``
    default to the paper's threshold configuration of that data set), runs the reconstruction
    attack with ``k`` known rows (default d + 1; or the rows ``known_indices``) and the
    distinguisher game with ``trials`` trials, and returns the report text.
    """
    if dataset not in PAPER_AUDIT_CONFIGS:
        raise ValueError(f"dataset must be one of {sorted(PAPER_AUDIT_CONFIGS)}, got {dataset!r}")
    trials = check_int(trials, "trials", low=2)
    seed = check_int(seed, "seed", low=0)
    if epsilon is not None:
        epsilon = check_positive(epsilon, "epsilon")
    if delta is not None:
        delta = check_probability(delta, "delta")
    if r is not None:
        r = check_int(r, "r", low=1)
    if k is not None:
        k = check_int(k, "k", low=1)
    cfg = _configs_for(dataset, epsilon, delta, r, include_else=False)[0]
    from frontierbo.po.problems import get_problem

    problem = get_problem(dataset, seed=0)
    X = np.asarray(problem.inputs)
    mech = RandomProjectionMechanism(cfg["epsilon"], cfg["delta"], cfg["r"])
    out = audit_release(X, mech, k=k, n_trials=trials, seed=seed, known_indices=known_indices)
    rec, dis, info = out["reconstruction"], out["distinguisher"], out["release_info"]
    row = {
        "dataset": dataset,
        "n": X.shape[0],
        "d": X.shape[1],
        **cfg,
        "branch": info.get("branch"),
        "reconstruction": rec,
        "distinguisher": dis,
    }
    conf = 100 * (1 - dis["alpha"])
    verdict = (
        "VIOLATED: the lower bound exceeds the claimed epsilon"
        if dis["violation"]
        else "not certified statistically with this many trials (a perfect distinguisher needs "
        f"about {dis['trials_to_certify']:.2g} trials to certify epsilon > "
        f"{dis['claimed_epsilon']:.3g}); the separation itself is exact (probability 1 under X, "
        "0 under X'), so no (epsilon, delta < 1) guarantee holds"
    )
    lines = [
        f"Privacy audit (ATTACK on our own release) — PO-GP-UCB random projection, {dataset}",
        f"data: n = {X.shape[0]}, d = {X.shape[1]} ({problem.source})",
        f"release: epsilon = {_fmt_eps(cfg.get('log_eps'), cfg['epsilon'])}, delta = "
        f"{cfg['delta']:g}, r = {cfg['r']}, omega = {info.get('omega', float('nan')):.4g}, "
        f"sigma_min = {info.get('sigma_min', float('nan')):.4g}, branch = {info.get('branch')}",
        "",
        f"1. Reconstruction from k = {rec['k']} known rows {rec['known_indices']}:",
        f"   max relative error {rec['max_rel_error']:.2e}, median {rec['median_rel_error']:.2e}; "
        f"{rec['n_recovered']} of {rec['n_unknown']} unknown rows recovered within "
        f"{RECOVERED_RTOL:g} of the data scale {rec['scale']:.4g}",
        f"2. Neighbouring-dataset distinguisher (row {dis['row']} moved by a vector of norm "
        f"{np.linalg.norm(dis['shift']):.3g}), {dis['n_trials']} trials:",
        f"   accuracy {dis['accuracy']:.3f}, TPR {dis['tpr']:.3f} ({dis['n_X']} releases from X), "
        f"FPR {dis['fpr']:.3f} ({dis['n_Xprime']} from X')",
        f"   column-space residual: max under X {dis['max_residual_X']:.1e}, min under X' "
        f"{dis['min_residual_Xprime']:.1e} (tolerance {dis['tol']:g})",
        f"   epsilon lower bound: point {_fmt_lb(dis['epsilon_point'])}, {conf:g} % confidence "
        f"{_fmt_lb(dis['epsilon_lower_bound'])} (claimed {dis['claimed_epsilon']:.4g}, "
        f"delta {dis['delta']:g}) — {verdict}",
        "",
        format_audit_table([row]),
        "",
        "The release is a fixed linear image of the centred data: it is NOT differentially "
        "private (docs/privacy.md).",
    ]
    return "\n".join(lines)


__all__ = [
    "AFFINE_RTOL",
    "DEFAULT_COLSPAN_TOL",
    "PAPER_AUDIT_CONFIGS",
    "RECOVERED_RTOL",
    "ReconstructionResult",
    "audit_command",
    "audit_distinguisher",
    "audit_reconstruction",
    "audit_release",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "column_space_distinguisher",
    "column_space_residual",
    "epsilon_lower_bound",
    "format_audit_table",
    "reconstruction_attack",
    "run_audits",
    "threshold_audit",
    "trials_to_certify",
]
