"""The user-side randomiser of LDP-BO: CTL ("Convert-to-Laplace", Curator 1 of the paper).

Each user (one BO round; MoMA's k_mom repeated plays are k_mom different users) privatises its own
scalar reward before the learner sees it::

    y_bar = y + Lap,   Lap ~ Laplace(scale = 2 (B + R) / eps_priv)

where ``B`` bounds the function (``|f(x)| <= ||f||_H sqrt(k(x, x)) <= B``) and ``R`` the noise
(``|eta| <= R`` almost surely, the paper's assumption), so every reward lies in
``[-(B + R), B + R]``, the sensitivity is ``2 (B + R)`` and Lemma 1 of the paper gives eps-LDP.

Implementation: the noise comes from the hardened grid mechanism
:class:`frontierbo.dp.mechanisms.LaplaceMechanism` (exact discrete Laplace on the grid
``granularity * Z``), never from ``rng.laplace`` (floating-point Laplace noise is not DP,
Mironov 2012). The grid mechanism rounds ``y`` to the grid and calibrates its noise to the
sensitivity *plus one grid step*, so its exact Laplace scale is ``noise_scale = (2 (B + R) +
granularity) / eps_priv``, larger than the paper's nominal ``scale = 2 (B + R) / eps_priv`` by
the factor ``1 + granularity / (2 (B + R)) <= 1 + 2**-10`` at the default granularity. Both are
exposed; the moment formulas of the algorithms (:func:`frontierbo.ldp.parameters.ctl_moments`)
use the nominal ``scale`` as the paper does (the 0.1 % difference is far below every other
constant in them).

Clipping (docs/decisions.md#ldp-bo-optional-clipping-to-the-sensitivity-range): the paper
adds the noise to the raw ``y`` without clipping. Pure eps-LDP needs ``|y| <= B + R``, which holds
in the bounded-noise model of the paper (then clipping is a no-op). ``clip_to_sensitivity=True``
clips ``y`` to ``[-(B + R), B + R]`` first, which makes the guarantee hold for *every* input; it is
off by default to stay faithful.

Unbounded noise (Section 4.5 of the paper): with i.i.d. sub-Weibull(theta) noise, set
``R = K1 ln(T / delta)^theta`` (:func:`sub_weibull_R`; :meth:`CTL.for_sub_weibull`). Then with
probability at least ``1 - delta`` over the noise, every one of the T rewards satisfies
``|y| <= B + R`` and each release is eps-LDP; this is the paper's (eps, delta)-LDP statement. See
:meth:`CTL.for_sub_weibull` for exactly what it does and does not cover.
"""

from __future__ import annotations

import math

import numpy as np

from frontierbo._validation import (
    SeedLike,
    check_int,
    check_positive,
    check_probability,
    check_real,
)
from frontierbo.dp.accounting import PrivacyGuarantee
from frontierbo.dp.mechanisms import LaplaceMechanism
from frontierbo.dp.samplers import RandomBits

__all__ = ["CTL", "sub_weibull_K1", "sub_weibull_R"]


def _check_bounds(B, R) -> tuple[float, float]:
    B = check_real(B, "B", low=0.0, low_open=False)
    R = check_real(R, "R", low=0.0, low_open=False)
    if B + R <= 0.0:
        raise ValueError(
            f"B + R must be in (0, inf) (the rewards' range [-(B+R), B+R] sets the sensitivity), "
            f"got B={B!r}, R={R!r}"
        )
    return B, R


def sub_weibull_R(K1, T, delta, theta) -> float:
    """Noise bound for sub-Weibull noise (Section 4.5 of the paper): ``R = K1 ln(T / delta)^theta``.

    If the noise values eta_1..eta_T are i.i.d. sub-Weibull(theta) (``P(|eta| >= x) <= a
    exp(-b x^(1/theta))``) and ``K1`` is large enough (see :func:`sub_weibull_K1`), then
    ``P(exists t <= T: |eta_t| > R) <= delta``.

    Parameters: ``K1`` in [0, inf); ``T`` integer >= 1 (the horizon); ``delta`` in (0, 1);
    ``theta`` in (0, inf) (1/2 sub-Gaussian, 1 sub-exponential). ``ln(T/delta) > 0`` always.
    """
    K1 = check_real(K1, "K1", low=0.0, low_open=False)
    T = check_int(T, "T", low=1)
    delta = check_probability(delta, "delta")
    theta = check_positive(theta, "theta")
    return K1 * math.log(T / delta) ** theta


def sub_weibull_K1(a, b, theta, T, delta) -> float:
    """The smallest ``K1`` for which :func:`sub_weibull_R` is a valid bound (union bound).

    For a tail ``P(|eta| >= x) <= a exp(-b x^(1/theta))`` (eq. (5) of the paper), ``P(exists t <= T:
    |eta_t| > R) <= T a exp(-b R^(1/theta)) <= delta`` as soon as
    ``R >= (ln(a T / delta) / b) ** theta``; dividing by ``ln(T/delta) ** theta`` gives
    ``K1 = (max(ln(a T / delta), 0) / (b ln(T / delta))) ** theta``.
    ``a`` and ``b`` in (0, inf), ``theta`` in (0, inf), ``T`` integer >= 1, ``delta`` in (0, 1).
    """
    a = check_positive(a, "a")
    b = check_positive(b, "b")
    theta = check_positive(theta, "theta")
    T = check_int(T, "T", low=1)
    delta = check_probability(delta, "delta")
    return (max(math.log(a * T / delta), 0.0) / (b * math.log(T / delta))) ** theta


class CTL:
    """Convert-to-Laplace randomiser CTL(eps_priv) of one user's reward (Curator 1, Lemma 1).

    Parameters
    ----------
    eps_priv : privacy level, in (0, inf).
    B : bound on ``|f|`` (``||f||_H <= B`` with ``k(x, x) <= 1``), in [0, inf).
    R : bound on ``|noise|``, in [0, inf). ``B + R`` must be > 0.
    clip_to_sensitivity : clip ``y`` to ``[-(B + R), B + R]`` before adding noise (default False,
        as in the paper; a no-op when ``|y| <= B + R``, which holds for bounded noise).
    granularity : grid step of the underlying :class:`LaplaceMechanism` (a positive power of two);
        default the mechanism's (the largest power of two ``<= 2**-10 min(2 (B+R), scale)``).

    Attributes
    ----------
    eps_priv, B, R, clip_to_sensitivity
    bound : ``B + R``; rewards in ``[-bound, bound]`` are covered by the guarantee.
    sensitivity : ``2 (B + R)``.
    scale : the paper's nominal Laplace scale ``L = 2 (B + R) / eps_priv``.
    noise_scale : the exact Laplace scale of the noise actually added,
        ``(2 (B + R) + granularity) / eps_priv`` (the grid mechanism pays one grid step for
        rounding ``y`` to the grid); ``scale <= noise_scale <= scale (1 + 2**-10)`` by default.
        The noise is discrete Laplace on the grid, with variance ``2 noise_scale**2`` up to a
        relative ``O(granularity**2 / noise_scale**2)``.
    granularity : the grid step; outputs are exact multiples of it.
    mechanism : the :class:`LaplaceMechanism` used.
    delta : 0 for the bounded-noise CTL; the sub-Weibull failure probability for a CTL made by
        :meth:`for_sub_weibull` (``sub_weibull`` then holds ``K1, T, delta, theta``).
    """

    def __init__(self, eps_priv, B, R, clip_to_sensitivity: bool = False, *, granularity=None):
        self.eps_priv = check_positive(eps_priv, "eps_priv")
        self.B, self.R = _check_bounds(B, R)
        if not isinstance(clip_to_sensitivity, bool | np.bool_):
            raise TypeError(
                f"clip_to_sensitivity must be True or False, got {clip_to_sensitivity!r}"
            )
        self.clip_to_sensitivity = bool(clip_to_sensitivity)
        self.bound = self.B + self.R
        self.sensitivity = 2.0 * self.bound
        self.scale = self.sensitivity / self.eps_priv
        self.neighbouring = (
            f"local: any two rewards of one user in [-(B+R), B+R] = [{-self.bound:g}, "
            f"{self.bound:g}]; every user's reward (one per round) is randomised separately"
        )
        self.mechanism = LaplaceMechanism(
            self.sensitivity, self.eps_priv, granularity, neighbouring=self.neighbouring
        )
        self.granularity = self.mechanism.granularity
        self.noise_scale = self.mechanism.scale
        self.delta = 0.0
        self.sub_weibull: dict | None = None

    # -- construction for unbounded noise ---------------------------------------------------------
    @classmethod
    def for_sub_weibull(
        cls,
        eps_priv,
        B,
        K1,
        T,
        delta,
        theta,
        clip_to_sensitivity: bool = False,
        *,
        granularity=None,
    ) -> CTL:
        """CTL for i.i.d. sub-Weibull(theta) noise (Section 4.5): ``R = K1 ln(T / delta)^theta``.

        When the (eps, delta) statement holds: the noise values eta_1..eta_T of the (at most) T
        rounds are i.i.d. sub-Weibull(theta) and ``K1`` is large enough that the event
        ``E = {|eta_t| <= R for every t <= T}`` has probability ``>= 1 - delta`` (for a tail
        ``a exp(-b x^(1/theta))`` take ``K1 >= sub_weibull_K1(a, b, theta, T, delta)``). On
        ``E`` every reward satisfies ``|y_t| <= B + R`` and every release is eps-LDP (Lemma 1);
        the complement of ``E`` has probability ``<= delta``. This is the paper's
        (eps, delta)-LDP claim (Section 4.5): delta is the probability, *over the data*, that some
        reward falls outside the covered range. It is not the worst-case (eps, delta) of
        Definition 1: without clipping, a reward with ``|y| > B + R`` is not protected at level
        eps (its privacy loss against a neighbour grows with ``|y| - (B + R)``).

        With ``clip_to_sensitivity=True`` every reward is clipped into the range, so the release
        is pure eps-LDP for every input (:meth:`guarantee` then states delta = 0); delta then
        only bounds the probability that clipping changed a reward (a regret, not a privacy,
        matter).
        """
        R = sub_weibull_R(K1, T, delta, theta)
        ctl = cls(eps_priv, B, R, clip_to_sensitivity, granularity=granularity)
        ctl.delta = 0.0 if ctl.clip_to_sensitivity else float(delta)
        ctl.sub_weibull = {
            "K1": float(K1),
            "T": int(T),
            "delta": float(delta),
            "theta": float(theta),
        }
        return ctl

    # -- randomisation ---------------------------------------------------------------------------
    def _prepare(self, y) -> np.ndarray:
        try:
            x = np.asarray(y, dtype=float)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"y must be a real number or an array of real numbers, got {y!r}"
            ) from exc
        if not np.all(np.isfinite(x)):
            raise ValueError("y must be finite (no NaN or inf)")
        if self.clip_to_sensitivity:
            x = np.clip(x, -self.bound, self.bound)
        return x

    def randomise(self, y, rng: SeedLike | RandomBits = None):
        """Privatised reward(s) ``y_bar = y + Lap``: a float for a scalar ``y``, else an array
        of the same shape with independent noise per entry (each entry is one user).

        ``y`` is clipped to ``[-(B+R), B+R]`` first iff ``clip_to_sensitivity``. ``rng``: an int
        seed, a ``numpy.random.Generator``, a :class:`RandomBits` (reuse one for many scalar
        calls: cheaper) or None (fresh OS entropy). Outputs are exact multiples of
        ``granularity`` (``y`` is rounded to the grid, which moves it by at most
        ``granularity / 2``).
        """
        x = self._prepare(y)
        out = self.mechanism.randomise(x, rng)
        return float(out) if out.ndim == 0 else out

    def __call__(self, y, rng: SeedLike | RandomBits = None):
        """Alias of :meth:`randomise`."""
        return self.randomise(y, rng)

    def log_pmf(self, z, y) -> np.ndarray:
        """Exact ``log P(randomise(y) == z)`` (broadcast over ``z`` and ``y``).

        With ``k = round(y' / granularity)`` (``y'`` = ``y`` clipped iff clipping is on),
        ``m = z / granularity`` and ``t`` the discrete Laplace scale in grid steps,
        ``P = (1 - e^{-1/t}) / (1 + e^{-1/t}) e^{-|m - k| / t}`` if ``m`` is an integer, else 0
        (log = -inf). Used to check the LDP inequality analytically.
        """
        x = self._prepare(y)
        zz = np.asarray(z, dtype=float)
        g = self.granularity
        k = np.rint(x / g)
        m = zz / g
        on_grid = m == np.rint(m)
        t = float(self.mechanism.grid_scale)
        log_norm = math.log(-math.expm1(-1.0 / t)) - math.log1p(math.exp(-1.0 / t))
        logp = log_norm - np.abs(np.rint(m) - k) / t
        return np.where(on_grid, logp, -np.inf)

    # -- statements ------------------------------------------------------------------------------
    def moments(self) -> dict[str, float]:
        """The paper's moment constants for this CTL: ``ctl_moments(B, R, eps_priv)``."""
        from frontierbo.ldp.parameters import ctl_moments

        return ctl_moments(self.B, self.R, self.eps_priv)

    def guarantee(self) -> PrivacyGuarantee:
        """eps-LDP (delta = 0) for one user's reward; ``(eps, delta)`` in the paper's sense for a
        sub-Weibull CTL without clipping (see :meth:`for_sub_weibull`)."""
        base = self.mechanism.guarantee().assumptions[1:]  # grid rounding, RNG quality
        if self.clip_to_sensitivity:
            range_assumption = (
                f"every reward is clipped to [-(B+R), B+R] = [{-self.bound:g}, {self.bound:g}] "
                "before the noise (clip_to_sensitivity=True), so the guarantee holds for every "
                "input"
            )
        else:
            range_assumption = (
                f"|y| <= B + R = {self.bound:g} for every reward (|f(x)| <= B since ||f||_H <= B "
                "and k(x,x) <= 1; |noise| <= R almost surely, the paper's assumption); "
                "clip_to_sensitivity is off, so a reward outside this range is NOT covered"
            )
        assumptions = [range_assumption]
        if self.sub_weibull is not None:
            sw = self.sub_weibull
            event = (
                f"the noise of the at most T={sw['T']} rounds is i.i.d. sub-Weibull(theta="
                f"{sw['theta']:g}) and K1={sw['K1']:g} makes P(exists t <= T: |noise_t| > R) <= "
                f"delta={sw['delta']:g} with R = K1 ln(T/delta)^theta = {self.R:g} "
                "(Section 4.5 of the paper)"
            )
            if self.clip_to_sensitivity:
                assumptions.append(
                    event + "; with clipping this only bounds how often a reward is changed "
                    "(regret), the privacy guarantee is pure"
                )
            else:
                assumptions.append(
                    event + "; on that event every release is eps-LDP, and delta is the "
                    "probability over the data that some reward falls outside [-(B+R), B+R] "
                    "(the paper's (eps, delta)-LDP, Section 4.5), not a worst-case delta over "
                    "inputs"
                )
        mechanism = (
            f"CTL (Convert-to-Laplace, Curator 1): y + Laplace noise of nominal scale "
            f"2(B+R)/eps = {self.scale:g} (exact scale {self.noise_scale:g}), discrete Laplace "
            f"on the grid {self.granularity:g}*Z"
        )
        return PrivacyGuarantee(
            epsilon=self.eps_priv,
            delta=self.delta,
            mechanism=mechanism,
            neighbouring=self.neighbouring,
            assumptions=tuple(assumptions) + tuple(base),
        )

    def __repr__(self) -> str:
        extra = "" if self.sub_weibull is None else f", sub_weibull={self.sub_weibull!r}"
        return (
            f"CTL(eps_priv={self.eps_priv!r}, B={self.B!r}, R={self.R!r}, "
            f"clip_to_sensitivity={self.clip_to_sensitivity!r}{extra})"
        )
