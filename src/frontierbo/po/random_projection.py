"""PO-GP-UCB, the curator part (Kharkovskii, Dai & Low, ICML 2020, Algorithm 1).

    1: Input: X (n x d), eps, delta, r
    2: X <- X - 1 1^T X / n                                  centre every column
    3: M <- d x r matrix of i.i.d. N(0, 1)
    4: X = U Sigma V^T                                        thin SVD
    5: omega <- 16 sqrt(r log(2/delta)) log(16 r/delta) / eps  (thesis Alg. 2, line 5)
    6: if sigma_min(X) >= omega:
    7:     Z <- r^{-1/2} X M
    8: else:
    9:     X~ <- U sqrt(Sigma^2 + omega^2 I) V^T                 lift the singular values
   10:     Z <- r^{-1/2} X~ M
   12: release Z

Line 5 is the thesis's form, not the paper text's
(docs/decisions.md#po-gp-ucb-omega-uses-the-thesis-form).

``lift="additive"`` replaces line 9 by ``X~ <- U (Sigma + omega I) V^T``: what the authors' public
code (``Mitan/po-gp-ucb``, ``DatasetTransformer.py``) computes. A reproduction aid only.

WARNING — this release is NOT differentially private. ``Z`` is a fixed linear image of the
centred data, so its column space equals the data's: neighbouring datasets are told apart with
certainty and d + 1 known rows reconstruct every other row (docs/privacy.md,
docs/decisions.md#po-gp-ucb-the-release-leaks-the-column-space). It is implemented faithfully to
reproduce the paper. Use it only where the inputs are not sensitive.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from frontierbo._validation import (
    SeedLike,
    as_generator,
    check_int,
    check_matrix,
    check_positive,
    check_probability,
)
from frontierbo.dp.accounting import PrivacyGuarantee

SUBSTITUTION_NEIGHBOURS = "substitution: one row changes by at most 1 in L2 norm (Definition 1 of Kharkovskii et al. 2020)"

NOT_PRIVATE_MESSAGE = (
    "the PO-GP-UCB random-projection release is NOT differentially private: its column space "
    "equals the data's, so a few known rows reconstruct all others (see docs/privacy.md)"
)


#: The singular-value lifts of line 9 (``RandomProjectionMechanism(lift=...)``).
LIFTS = ("sqrt", "additive")


class NotDifferentiallyPrivateWarning(UserWarning):
    """Emitted when a release that is not differentially private is produced."""


def warn_not_private(stacklevel: int = 3) -> None:
    """Issue the one-line warning (Python shows it once per call site by default)."""
    warnings.warn(NOT_PRIVATE_MESSAGE, NotDifferentiallyPrivateWarning, stacklevel=stacklevel)


def omega_threshold(r: int, epsilon: float, delta: float, variant: str = "thesis") -> float:
    """Algorithm 1 line 5: the singular-value threshold omega.

    ``variant="thesis"`` (default): ``16 sqrt(r ln(2/delta)) ln(16 r/delta) / eps`` which equals
    ``8 ln(8/delta_0) / eps_0`` with the proof's ``eps_0 = eps / sqrt(4 r ln(2/delta))`` and
    ``delta_0 = delta / (2r)``. ``variant="paper_literal"``: the paper text's
    ``16 sqrt(r) ln(2/delta) ln(16 r/delta) / eps`` (kept for the record only).
    """
    r = check_int(r, "r", low=1)
    epsilon = check_positive(epsilon, "epsilon")
    delta = check_probability(delta, "delta")
    log2d = np.log(2.0 / delta)
    if variant == "thesis":
        root = np.sqrt(r * log2d)
    elif variant == "paper_literal":
        root = np.sqrt(r) * log2d
    else:
        raise ValueError(f"variant must be 'thesis' or 'paper_literal', got {variant!r}")
    return float(16.0 * root * np.log(16.0 * r / delta) / epsilon)


@dataclass(frozen=True)
class Release:
    """What the curator hands to the modeler (``Z``) plus the curator's own log (``info``).

    Only ``Z`` (n, r) — row i is the image of data row i — goes to the modeler. ``info`` records,
    for logging and tests: mechanism, omega, sigma_min, branch ("if"/"else"), singular values and
    C' = 1 + 1[sigma_min < omega] omega^2 / sigma_min^2 (Theorem 2).
    """

    Z: np.ndarray
    mechanism: str
    differentially_private: bool
    info: dict = field(default_factory=dict)
    guarantee: PrivacyGuarantee | None = None


class RandomProjectionMechanism:
    """PO-GP-UCB's release mechanism (Algorithm 1). Not differentially private (see module doc).

    Parameters
    ----------
    epsilon : > 0;  delta : in (0, 1);  r : projection dimension >= 1.
    omega_variant : ``"thesis"`` (default) or ``"paper_literal"``.
    projection : optional fixed d x r matrix M (tests; by default a fresh N(0,1) draw per release).
    omega : optional override of the threshold (tests).
    lift : how line 9 lifts the singular values in the else-branch: ``"sqrt"`` (default, the
        paper: sigma_i -> sqrt(sigma_i^2 + omega^2)) or ``"additive"`` (sigma_i -> sigma_i + omega),
        a reproduction aid: the authors' public code does this. Both give sigma_min >= omega;
        the additive lift stretches the data more (by up to (1 + omega / sigma_min) instead of
        sqrt(1 + omega^2 / sigma_min^2)).
    """

    name = "random_projection"
    differentially_private = False

    def __init__(
        self,
        epsilon: float,
        delta: float,
        r: int,
        omega_variant: str = "thesis",
        projection=None,
        omega: float | None = None,
        lift: str = "sqrt",
    ):
        if lift not in LIFTS:
            raise ValueError(f"lift must be one of {LIFTS}, got {lift!r}")
        self.lift = lift
        self.epsilon = check_positive(epsilon, "epsilon")
        self.delta = check_probability(delta, "delta")
        self.r = check_int(r, "r", low=1)
        self.omega = (
            omega_threshold(self.r, self.epsilon, self.delta, omega_variant)
            if omega is None
            else check_positive(omega, "omega")
        )
        self.projection = None if projection is None else check_matrix(projection, "projection")
        if self.projection is not None and self.projection.shape[1] != self.r:
            shape = self.projection.shape
            raise ValueError(f"projection must have r={self.r} columns, got shape {shape}")

    def release(self, X, seed: SeedLike = None) -> Release:
        """Run Algorithm 1 on ``X`` (n, d) and return the release."""
        warn_not_private()
        X = check_matrix(X, "X", min_rows=2)
        rng = as_generator(seed)
        n, d = X.shape
        X = X - X.mean(axis=0)  # line 2
        M = rng.standard_normal((d, self.r)) if self.projection is None else self.projection  # 3
        if M.shape[0] != d:
            raise ValueError(f"projection must have d={d} rows, got {M.shape[0]}")
        U, s, Vt = np.linalg.svd(X, full_matrices=False)  # line 4 (thin)
        sigma_min = float(s[-1]) if n >= d else 0.0
        if sigma_min >= self.omega:  # line 6
            branch, Xt = "if", X  # line 7
        else:
            branch = "else"  # line 9: U sqrt(Sigma^2 + omega^2) V^T (or U (Sigma + omega) V^T)
            lifted = np.sqrt(s**2 + self.omega**2) if self.lift == "sqrt" else s + self.omega
            Xt = (U * lifted) @ Vt
        Z = (Xt @ M) / np.sqrt(self.r)  # lines 7 / 10
        c_prime = 1.0
        if branch == "else" and sigma_min > 0:
            # C' = the largest squared stretch of a distance (Theorem 2), along sigma_min's axis.
            c_prime = (
                1.0 + self.omega**2 / sigma_min**2
                if self.lift == "sqrt"
                else (1.0 + self.omega / sigma_min) ** 2
            )
        info = {
            "omega": self.omega,
            "sigma_min": sigma_min,
            "branch": branch,
            "singular_values": s.tolist(),
            "c_prime": float(c_prime) if sigma_min > 0 or branch == "if" else float("inf"),
            "epsilon": self.epsilon,
            "delta": self.delta,
            "r": self.r,
            "lift": self.lift,
        }
        guarantee = PrivacyGuarantee.none(self.name, NOT_PRIVATE_MESSAGE)
        return Release(Z, self.name, False, info, guarantee)

    def guarantee(self) -> PrivacyGuarantee:
        """What a release of this mechanism guarantees: nothing (see the module docstring)."""
        return PrivacyGuarantee.none(self.name, NOT_PRIVATE_MESSAGE)
