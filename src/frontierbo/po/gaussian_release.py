"""A provably (epsilon, delta)-differentially private release for outsourced BO.

Neighbouring relation (Definition 1 of Kharkovskii et al. 2020): X and X' (n x d) differ in one
row, by a vector of L2 norm at most 1. The curator releases

    Z = X P + sigma * G,     G ~ N(0, 1) i.i.d. (n x k),

with P = I_d (k = d, the default) or P = M / sqrt(r) for a d x r Gaussian matrix M drawn
independently of the data (k = r, dimension reduction for large d; Kenthapadi et al. 2013).

Proof sketch. Read Z as one vector in R^{n k}. Between neighbours, X P - X' P = e_i (v^T P) has
L2 norm ||v^T P|| <= ||P||_2 ||v|| <= ||P||_2 =: Delta. P is drawn without looking at the data, so
conditionally on P this is the Gaussian mechanism with L2 sensitivity Delta, which is
(epsilon, delta)-DP iff  Phi(Delta/(2 sigma) - eps sigma/Delta) - e^eps Phi(-Delta/(2 sigma) -
eps sigma/Delta) <= delta  (Balle & Wang 2018, Thm 8); we take the smallest such sigma (their
analytic calibration). A mixture over P of (epsilon, delta)-DP mechanisms is (epsilon, delta)-DP,
and releasing nothing about P keeps it so. Post-processing (the modeler's whole BO run) cannot
weaken it.

Not covered: the outputs y_t (sent in the clear, as in the paper), any data-dependent
preprocessing before the mechanism (e.g. scaling to a max row norm computed from the data; use a
public scale for an end-to-end guarantee), and GP hyperparameters fitted on the raw data.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr

from frontierbo._validation import (
    SeedLike,
    as_generator,
    check_int,
    check_matrix,
    check_positive,
    check_probability,
    check_real,
)
from frontierbo.dp.accounting import PrivacyGuarantee
from frontierbo.dp.mechanisms import (
    MAX_GRID_INDEX,
    MAX_GRID_SCALE,
    GaussianMechanism,
    _default_granularity,
)
from frontierbo.po.random_projection import SUBSTITUTION_NEIGHBOURS, Release

__all__ = [
    "GaussianRowMechanism",
    "analytic_gaussian_sigma",
    "classical_gaussian_sigma",
    "gaussian_delta",
    "noise_aware_hyperparameters",
    "zcdp_epsilon",
    "zcdp_gaussian_sigma",
]


def gaussian_delta(sigma: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """The exact delta of the Gaussian mechanism with noise ``sigma`` at ``epsilon``
    (Balle & Wang 2018, Thm 8), computed in log space to stay accurate for large epsilon."""
    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    first = math.exp(log_ndtr(a - b))
    second = math.exp(epsilon + log_ndtr(-a - b))
    return max(first - second, 0.0)


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The smallest noise ``sigma`` with ``gaussian_delta(sigma, epsilon) <= delta`` (bisection
    on log sigma; delta(sigma) is decreasing). Returned value is within 1e-10 relative of it,
    rounded up so that the guarantee holds."""
    epsilon = check_positive(epsilon, "epsilon")
    delta = check_probability(delta, "delta")
    sensitivity = check_positive(sensitivity, "sensitivity")
    lo, hi = 1e-6 * sensitivity, sensitivity
    while gaussian_delta(hi, epsilon, sensitivity) > delta:
        hi *= 2.0
    while gaussian_delta(lo, epsilon, sensitivity) <= delta:
        lo /= 2.0
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if gaussian_delta(mid, epsilon, sensitivity) <= delta:
            hi = mid
        else:
            lo = mid
        if hi / lo - 1.0 < 1e-12:
            break
    return hi


def zcdp_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The smallest sigma whose rho = Delta^2 / (2 sigma^2)-zCDP converts to (epsilon, delta)-DP by
    ``epsilon = rho + 2 sqrt(rho ln(1/delta))`` (Bun & Steinke 2016, Prop 1.3); the conversion
    the discrete Gaussian needs (Canonne, Kamath & Steinke 2020)."""
    epsilon = check_positive(epsilon, "epsilon")
    log_inv = -math.log(check_probability(delta, "delta"))
    # sqrt(rho) = sqrt(L + eps) - sqrt(L), written without the subtraction: for small eps the
    # difference cancels catastrophically (a relative error of 2e-6 at eps = 1e-9, delta = 1e-5),
    # which made sigma too small and the claimed epsilon false.
    sqrt_rho = epsilon / (math.sqrt(log_inv + epsilon) + math.sqrt(log_inv))
    return check_positive(sensitivity, "sensitivity") / (math.sqrt(2.0) * sqrt_rho)


def zcdp_epsilon(sigma: float, delta: float, sensitivity: float = 1.0) -> float:
    """The epsilon at ``delta`` of the Gaussian mechanism with noise ``sigma`` under the zCDP
    conversion: ``rho + 2 sqrt(rho ln(1/delta))`` with ``rho = Delta^2 / (2 sigma^2)`` (the
    inverse of :func:`zcdp_gaussian_sigma`)."""
    rho = sensitivity * sensitivity / (2.0 * sigma * sigma)
    return rho + 2.0 * math.sqrt(rho * -math.log(delta))


def classical_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Dwork & Roth's ``sqrt(2 ln(1.25/delta)) Delta / epsilon`` (valid for epsilon < 1 only)."""
    return math.sqrt(2.0 * math.log(1.25 / delta)) * sensitivity / epsilon


class GaussianRowMechanism:
    """(epsilon, delta)-DP release ``Z = X P + sigma G`` (see the module docstring for the proof).

    Parameters
    ----------
    epsilon : > 0;  delta : in (0, 1).
    r : optional projection dimension; None (default) releases noisy rows in the original d.
    sensitivity : the L2 bound on how far one row may move (1 in the paper's Definition 1).
    hardened : True (default): exact discrete Gaussian noise on a power-of-two grid
        (``mechanisms.GaussianMechanism``), immune to floating-point attacks (Mironov 2012), with
        sigma from the zCDP conversion (about 30 % more noise than the analytic calibration).
        False: real-valued noise from numpy with the analytic calibration — an idealised model of
        the mechanism (its float sampling is not hardened), fast, used by the reproduction.
    """

    name = "gaussian"
    differentially_private = True

    def __init__(
        self,
        epsilon: float,
        delta: float,
        r: int | None = None,
        sensitivity: float = 1.0,
        hardened: bool = True,
    ):
        self.epsilon = check_positive(epsilon, "epsilon")
        self.delta = check_probability(delta, "delta")
        self.r = None if r is None else check_int(r, "r", low=1)
        self.sensitivity = check_positive(sensitivity, "sensitivity")
        self.hardened = bool(hardened)
        # Without a projection the calibration is data-independent: compute it once.
        self._sigma = (
            None
            if r is not None or self.hardened
            else analytic_gaussian_sigma(self.epsilon, self.delta, self.sensitivity)
        )

    def check_range(self, dim: int, max_abs: float) -> None:
        """Raise the ValueError :meth:`release` would raise for an (n x ``dim``) matrix whose
        entries are at most ``max_abs`` in magnitude, without drawing anything: lets a caller
        reject an (epsilon, delta) outside the hardened sampler's range before any work.

        Only the hardened release without a projection is checked here (with ``r`` the L2
        sensitivity depends on the projection drawn, and :meth:`release` checks it)."""
        dim = check_int(dim, "dim", low=1)
        max_abs = check_real(max_abs, "max_abs", low=0.0, low_open=False)
        if self.hardened and self.r is None:
            self._discrete_mechanism(self.sensitivity, dim, max_abs)

    def release(self, X, seed: SeedLike = None) -> Release:
        X = check_matrix(X, "X", min_rows=1)
        rng = as_generator(seed)
        n, d = X.shape
        if self.r is None:
            P, op_norm = None, 1.0
        else:
            P = rng.standard_normal((d, self.r)) / math.sqrt(self.r)
            op_norm = float(np.linalg.norm(P, 2))
        delta_l2 = self.sensitivity * op_norm
        signal = X if P is None else X @ P
        if self.hardened:
            max_abs = float(np.max(np.abs(signal)))
            discrete = self._discrete_mechanism(delta_l2, signal.shape[1], max_abs)
            sigma, Z = discrete.sigma, discrete.randomise(signal, rng)
        else:
            sigma = self._sigma or analytic_gaussian_sigma(self.epsilon, self.delta, delta_l2)
            Z = signal + sigma * rng.standard_normal(signal.shape)
        info = {
            "hardened": self.hardened,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "r": self.r,
            "noise_std": sigma,
            "l2_sensitivity": delta_l2,
            "projection_norm": op_norm,
            "branch": None,
        }
        return Release(Z, self.name, True, info, self.guarantee())

    def _discrete_mechanism(
        self, delta_l2: float, dim: int, max_abs: float = 0.0
    ) -> GaussianMechanism:
        """The grid mechanism whose zCDP guarantee converts to at most (epsilon, delta), for
        values of magnitude up to ``max_abs``.

        Rounding both neighbours to the grid adds up to sqrt(dim) grid steps to the sensitivity;
        the grid is 2^-10 of the noise scale, so that costs about 0.1 % more noise. The exact
        sampler works on at most 2^45 grid steps of noise and values below 2^52 grid steps
        (:mod:`frontierbo.dp.mechanisms`); an (epsilon, delta) outside that range is refused with
        the range that works, and the guarantee is checked, never assumed: a release that
        could not keep its stated epsilon raises (also under ``python -O``)."""
        eps, dlt = self.epsilon, self.delta
        pair = f"epsilon={eps:g} with delta={dlt:g}"
        sigma0 = zcdp_gaussian_sigma(eps, dlt, delta_l2)
        gamma = _default_granularity(min(delta_l2, sigma0), "sigma")
        total = delta_l2 + math.sqrt(dim) * gamma
        margin = 1.0 + 1e-9
        sigma = zcdp_gaussian_sigma(eps, dlt, total) * margin
        if sigma > MAX_GRID_SCALE * gamma:
            eps_min = zcdp_epsilon(MAX_GRID_SCALE * gamma / margin, dlt, total)
            raise ValueError(
                f"{pair} is outside the range of the hardened Gaussian release: epsilon is too "
                f"small (noise sd {sigma:.3g}, {sigma / delta_l2:.3g} times the L2 sensitivity "
                f"{delta_l2:g}, exceeds the exact sampler's 2**45 grid steps of {gamma:.3g}); "
                f"supported at this delta: epsilon >= {_round_sig(eps_min, up=True)}"
            )
        if max_abs >= MAX_GRID_INDEX * gamma:
            limit = max_abs * 2.0**-40
            if delta_l2 < limit:
                hint = (
                    f"the values are more than 2**40 times the L2 sensitivity {delta_l2:g}; "
                    "rescale the data"
                )
            else:
                eps_max = zcdp_epsilon(limit, dlt, delta_l2)
                hint = f"supported at this delta: epsilon <= {_round_sig(eps_max, up=False)}"
            raise ValueError(
                f"{pair} is outside the range of the hardened Gaussian release: epsilon is too "
                f"large (noise sd {sigma:.3g}) for values up to {max_abs:.3g} in magnitude: the "
                f"exact sampler's grid (2**-10 of the noise, {gamma:.3g}) covers values below "
                f"2**52 grid steps only; {hint}"
            )
        mech = GaussianMechanism(
            delta_l2,
            sigma,
            gamma,
            delta=dlt,
            dimension=dim,
            neighbouring=SUBSTITUTION_NEIGHBOURS,
        )
        if not mech.epsilon <= eps:
            raise ValueError(
                f"the hardened Gaussian release cannot certify {pair}: its calibrated noise "
                f"(sd {sigma!r}) gives epsilon={mech.epsilon!r}; refusing to release"
            )
        return mech

    def guarantee(self) -> PrivacyGuarantee:
        """(epsilon, delta)-DP under substitution neighbours, for the matrix given to release."""
        return PrivacyGuarantee(
            self.epsilon,
            self.delta,
            "Gaussian mechanism on every row, "
            + (
                "exact discrete Gaussian on a grid, zCDP calibration (Canonne et al. 2020)"
                if self.hardened
                else "real-valued noise, analytic calibration (Balle & Wang 2018); float "
                "sampling not hardened (idealised)"
            ),
            SUBSTITUTION_NEIGHBOURS
            if self.sensitivity == 1.0
            else f"substitution: one row changes by at most {self.sensitivity:g} in L2 norm",
            (
                "the released matrix is the one given to the mechanism; data-dependent "
                "preprocessing before it (e.g. a max-norm scale) is not covered",
                "the objective values y_t are not protected",
            ),
        )


def _round_sig(x: float, *, up: bool, digits: int = 3) -> str:
    """``x`` to ``digits`` significant digits, rounded up or down (a range bound that holds)."""
    exponent = math.floor(math.log10(x)) - digits + 1
    scaled = x / 10.0**exponent
    m = math.ceil(scaled * (1 + 1e-12)) if up else math.floor(scaled * (1 - 1e-12))
    return f"{m * 10.0**exponent:.{digits}g}"


def noise_aware_hyperparameters(
    lengthscale: float, signal_variance: float, noise_variance: float, noise_std: float, dim: int
) -> dict:
    """GP hyperparameters for a modeler that sees rows ``z = x + N(0, noise_std^2 I_dim)``.

    With a flat prior on x given z, ``x_i - x_j | z ~ N(z_i - z_j, 2 noise_std^2 I)``, and the
    expected SE kernel is ``c sigma_y^2 exp(-||z_i - z_j||^2 / (2 l'^2))`` for i != j, with
    ``l'^2 = l^2 + 2 noise_std^2`` and ``c = (l^2 / l'^2)^(dim/2)``; on the diagonal it stays
    ``sigma_y^2``. So the modeler uses length-scale l', signal variance c sigma_y^2, and adds the
    remaining ``(1 - c) sigma_y^2`` to the observation noise (it is independent per row).
    """
    l2 = check_positive(lengthscale, "lengthscale") ** 2
    sy2 = check_positive(signal_variance, "signal_variance")
    s2 = check_positive(noise_std, "noise_std") ** 2
    dim = check_int(dim, "dim", low=1)
    l2_new = l2 + 2.0 * s2
    c = (l2 / l2_new) ** (dim / 2.0)
    return {
        "lengthscale": math.sqrt(l2_new),
        "signal_variance": c * sy2,
        "noise_variance": float(noise_variance) + (1.0 - c) * sy2,
    }
