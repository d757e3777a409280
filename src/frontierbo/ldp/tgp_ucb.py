"""TGP-UCB ([ref7] Algorithm 1) and LDP-TGP-UCB (Zhou & Tan, Algorithm 2).

Truncated GP-UCB on a finite arm set. Every received reward is truncated **once**, at its
arrival in round t: ``y_hat_t = y_bar_t * 1{|y_bar_t| <= b_t}`` (a reward above the level is
replaced by 0, not clipped), and the truncated rewards feed an exact GP posterior with
likelihood N(0, lam) (paper eqs. (2)-(3)). That posterior is the project's one GP core,
:class:`frontierbo.core.gp.FiniteDomainGP` over ``PrecomputedKernel.arms(n)`` with
``PrecomputedKernel(K)`` and ``noise_variance = lam``: each round costs one incremental update,
never a refactorisation.

Regrouping (exact): k rewards of one arm with noise variance lam carry the same information as
their mean with noise variance lam / k (the likelihoods differ by a factor free of f). The GP
therefore holds one row per distinct arm played (the mean of its truncated rewards, noise
lam / n_a) plus the rounds told since the last regrouping, and is rebuilt in that form every
``regroup_every`` rounds (default n, the number of arms). An update then costs O(n (n_p + n))
instead of O(n t) (n_p <= n arms played; at T = 10^4 and n = 100, ~40x less), and a regrouping
O(n n_p^2) every n rounds. The posterior is the same up to rounding; ``regroup_every=0`` keeps
one row per round (the reference path).

Every formula of b_t and beta_t lives in :mod:`frontierbo.ldp.parameters` (one copy in the
project):

* private (``eps_priv`` given): ``b_t = B + R + L ln t`` with ``L = 2 (B + R) / eps_priv``
  (:func:`~frontierbo.ldp.parameters.ldp_tgp_truncation`) and beta_t of
  :func:`~frontierbo.ldp.parameters.ldp_tgp_beta` (theory: Algorithm 2 line 5; practical:
  ``B + b_{t-1} sqrt(ln t)``);
* non-private: ``b_t = v^(1/(1+alpha)) t^(1/(2(1+alpha)))``
  (:func:`~frontierbo.ldp.parameters.tgp_truncation`) and beta_t of
  :func:`~frontierbo.ldp.parameters.tgp_beta`.

beta_t here is the paper's symbol for a *width* (it multiplies sigma: ``UCB = mu + beta_t
sigma``), so the algorithm exposes it as :meth:`TGPUCB.width` / :attr:`TGPUCB.last_width`
(``beta`` / ``last_beta`` stay as aliases); the selection is
:func:`frontierbo.core.acquisition.select_ucb` with uniformly random ties. The shared
constructor arguments are validated by :class:`frontierbo.ldp.arguments.LDPArguments`.

gamma_{t-1} (theory profiles) is a data-dependent surrogate
(docs/decisions.md#ldp-bo-gamma_t-surrogate-from-the-points-played),
``0.5 ln det(I + K_{t-1} / lam)`` over the points actually played, read from the GP's Cholesky
pivots: ``0.5 (ln det(K_rows + S) - sum ln s_row)`` with the rows' noise variances S, which by
Sylvester's determinant identity is the same for the per-round and the regrouped rows.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from numbers import Real

import numpy as np

from frontierbo._validation import SeedLike, as_generator, check_int, check_real
from frontierbo.core.acquisition import select_ucb
from frontierbo.core.gp import FiniteDomainGP
from frontierbo.core.kernels import PrecomputedKernel
from frontierbo.ldp.arguments import LDPArguments
from frontierbo.ldp.parameters import (
    ldp_tgp_beta,
    ldp_tgp_truncation,
    tgp_beta,
    tgp_truncation,
)

__all__ = ["TGPUCB"]

#: Largest number of observation slots reserved up front in the GP (it grows by doubling).
_MAX_INITIAL_CAPACITY = 20_000


class TGPUCB:
    """TGP-UCB / LDP-TGP-UCB with the ask/tell contract of docs/ldp-architecture.md.

    ``T``, ``B``, ``R``, ``eps_priv``, ``alpha``, ``v``, ``c``, ``lam``, ``delta``, ``profile``
    and ``beta_scale`` follow the one rule of :class:`~frontierbo.ldp.arguments.LDPArguments`
    (kept as ``self.args``), shared with ATA- and MoMA-GP-UCB.

    Parameters
    ----------
    K : (n, n) array
        Gram matrix of the arms (symmetric PSD; unit diagonal in every experiment).
    T : int >= 1
        Horizon. TGP's b_t and beta_t do not depend on it; it sizes the GP's storage.
    B : float > 0
        Bound on ``|f|`` (``||f||_H <= B``).
    R : float >= 0, required when ``eps_priv`` is given
        Bound on ``|noise|``; sets the CTL scale ``L = 2 (B + R) / eps_priv``. Unused (may be
        None) in the non-private version.
    eps_priv : float > 0 or None
        None: non-private TGP-UCB ("TGP-UCB"); a value: LDP-TGP-UCB ("LDP-TGP-UCB"), whose
        rewards are the CTL(eps_priv)-privatised ones (the environment privatises).
    alpha : float in (0, 1]
        Moment order (1 in every experiment). Must be 1 when ``eps_priv`` is given (the LDP
        version is written for alpha = 1).
    v : float > 0, required when ``eps_priv`` is None
        Non-private: the reward moment ``E|y|^(1+alpha) <= v``. Private: must be None (the CTL
        formulas fix ``K = B^2 + R^2 + 2 L^2`` inside beta_t, Algorithm 2 line 1).
    c : ignored (validated when given)
        Accepted for the common signature of the three algorithms (MoMA's noise moment).
    lam : float > 0
        Ridge / GP likelihood variance lambda (default 1).
    delta : float in (0, 1)
        Confidence (default 0.1); enters beta_t in the theory profile only.
    profile : "practical" (default) or "theory"
        Which beta_t formula of :mod:`frontierbo.ldp.parameters` to use.
    beta_scale : float >= 0
        Global multiplier of the width beta_t (default 1).
    seed : int, numpy Generator or None
        Randomness of the first arm and of tie breaks.
    truncation : None, float or callable, keyword
        Override of b_t: None (default) uses the profile formula; a float > 0 (``math.inf``
        switches truncation off) is a constant level; a callable ``t -> b_t`` (t >= 1) any
        schedule (used by tests and ablations).

    Attributes
    ----------
    name : "TGP-UCB" or "LDP-TGP-UCB".
    gp : the :class:`FiniteDomainGP` posterior over the truncated rewards (read only): one row per
        round since the last regrouping, and before them one row per arm played (mean of its
        truncated rewards, noise lam / n_a).
    t : rounds completed (rewards told).
    n_truncated : rewards replaced by 0 so far.
    last_width : the width beta_t used by the latest :meth:`ask` (None before the first UCB
        round); ``last_beta`` is its old name.
    """

    def __init__(
        self,
        K,
        T: int,
        *,
        B: float,
        R: float | None = None,
        eps_priv: float | None = None,
        alpha: float = 1.0,
        v: float | None = None,
        c: float | None = None,
        lam: float = 1.0,
        delta: float = 0.1,
        profile: str = "practical",
        beta_scale: float = 1.0,
        seed: SeedLike = None,
        truncation: float | Callable[[int], float] | None = None,
        regroup_every: int | None = None,
    ):
        kernel = PrecomputedKernel(K)  # validates K (square, finite, symmetric, PSD)
        self.n = kernel.K.shape[0]
        args = LDPArguments(
            T=T,
            B=B,
            R=R,
            eps_priv=eps_priv,
            alpha=alpha,
            v=v,
            c=c,
            lam=lam,
            delta=delta,
            profile=profile,
            beta_scale=beta_scale,
        )
        self.args = args
        args.expose(self)
        self.c = args.c
        if self.private:
            if v is not None:
                raise ValueError(
                    "v must be None for LDP-TGP-UCB: the CTL moment K = B^2 + R^2 + 2 L^2 is "
                    "fixed by B, R and eps_priv (Algorithm 2 line 1)"
                )
            self.moments = args.ctl  # line 1: L and K
            self.v = None
        else:
            self.moments = None
            self.v = args.moment("v", "TGP-UCB")
        self.name = "LDP-TGP-UCB" if self.private else "TGP-UCB"
        self._truncation = self._make_truncation(truncation)
        self._rng = as_generator(seed)
        # line 2: mu_hat_0 = 0, sigma_0^2(x) = k(x, x): the GP prior (zero mean).
        self.gp = FiniteDomainGP(
            PrecomputedKernel.arms(self.n),
            kernel,
            noise_variance=self.lam,
            capacity=min(self.T, _MAX_INITIAL_CAPACITY),
        )
        self.regroup_every = (
            self.n if regroup_every is None else check_int(regroup_every, "regroup_every", low=0)
        )
        self._t = 0  # rounds told
        self._sums = np.zeros(self.n)  # per arm: the sum of its truncated rewards
        self._counts = np.zeros(self.n, dtype=np.int64)  # per arm: rewards told
        self._log_noise = 0.0  # sum of ln(noise variance) over the GP's rows (for gamma)
        self._since_regroup = 0  # rows added since the last regrouping
        self.n_truncated = 0
        self.last_width: float | None = None
        self._std = np.empty(self.n)  # ask()'s buffers: sigma_{t-1}, then the UCB scores
        self._scores = np.empty(self.n)

    # -- parameters (formulas in frontierbo.ldp.parameters) -----------------------------------
    def _make_truncation(self, truncation) -> Callable[[int], float]:
        if truncation is None:
            if self.private:
                return lambda t: ldp_tgp_truncation(t, self.B, self.R, self.eps_priv)
            return lambda t: tgp_truncation(t, self.v, self.alpha)
        if callable(truncation):
            return truncation
        if (
            isinstance(truncation, Real)
            and not isinstance(truncation, bool)
            and truncation == math.inf
        ):
            return lambda t: math.inf
        level = check_real(truncation, "truncation", low=0.0)
        return lambda t: level

    def truncation_level(self, t: int) -> float:
        """b_t, the level applied to the reward that arrives in round t (>= 1)."""
        return float(self._truncation(check_int(t, "t", low=1)))

    @property
    def t(self) -> int:
        """Rounds completed: rewards told so far."""
        return self._t

    @property
    def gamma(self) -> float:
        """gamma_t surrogate ``0.5 ln det(I + K_t / lam)`` over the t points played,
        from the GP's Cholesky pivots: ``0.5 (ln det(K_rows + S) - sum ln s_row)`` (the module
        docstring), ``0.5 (ln det(K_t + lam I) - t ln lam)`` before any regrouping."""
        return max(0.5 * (self.gp.log_det - self._log_noise), 0.0)

    def width(self, t: int) -> float:
        """beta_t, the width (multiplier of sigma) used to select in round t >= 1 (uses b_{t-1}
        and, in the theory profile, gamma_{t-1} = :attr:`gamma` of the points played so far, i.e.
        meant for the next round t = self.t + 1, as :meth:`ask` calls it)."""
        t = check_int(t, "t", low=1)
        gamma_prev = self.gamma if self.profile == "theory" else None
        if self.private:
            # line 4: b_{t-1} = B + R + L ln(t-1); line 5: beta_t (ln 0 := 0 at t = 1)
            return ldp_tgp_beta(
                t,
                self.B,
                self.R,
                self.eps_priv,
                delta=self.delta,
                lam=self.lam,
                gamma_prev=gamma_prev,
                profile=self.profile,
                beta_scale=self.beta_scale,
            )
        return tgp_beta(
            t,
            self.B,
            self.v,
            delta=self.delta,
            alpha=self.alpha,
            lam=self.lam,
            gamma_prev=gamma_prev,
            profile=self.profile,
            beta_scale=self.beta_scale,
        )

    def beta(self, t: int) -> float:
        """Old name of :meth:`width` (the paper writes the width beta_t)."""
        return self.width(t)

    @property
    def last_beta(self) -> float | None:
        """Old name of :attr:`last_width`."""
        return self.last_width

    # -- posterior views ----------------------------------------------------------------------
    @property
    def mean(self) -> np.ndarray:
        """mu_hat_t over the arms (paper line 9), read only."""
        return self.gp.mean

    @property
    def std(self) -> np.ndarray:
        """sigma_t over the arms (paper line 10), read only."""
        return self.gp.std

    # -- ask / tell ---------------------------------------------------------------------------
    def ask(self) -> int:
        """The arm to play in round t = self.t + 1 (ties broken uniformly at random)."""
        t = self.t + 1  # line 3: for t = 1..T
        if t == 1:
            # ln(0) is undefined in beta_1 and every UCB score is equal: a uniformly random arm
            # (docs/decisions.md#ldp-bo-random-first-arm-and-random-ties).
            return int(self._rng.integers(self.n))
        width = self.width(t)  # lines 4-5
        self.last_width = width
        # line 6: x_t = argmax_x mu_hat_{t-1}(x) + beta_t sigma_{t-1}(x)
        std = self.gp.posterior_std(out=self._std)
        return select_ucb(self.gp.mean, std, width, ties="random", rng=self._rng, out=self._scores)

    def tell(self, arm: int, reward: float) -> None:
        """Receive round t's reward for ``arm`` as the learner sees it (line 7: y_bar_t, the
        CTL-privatised reward in the LDP version), truncate it once and update the posterior."""
        arm = check_int(arm, "arm", low=0, high=self.n - 1)
        reward = check_real(reward, "reward")
        t = self.t + 1
        # line 8: y_hat_t = y_bar_t * 1{|y_bar_t| <= b_t}: replaced by 0, not clipped.
        if abs(reward) <= self._truncation(t):
            y_hat = reward
        else:
            y_hat = 0.0
            self.n_truncated += 1
        # lines 9-10: mu_hat_t, sigma_t^2 = the GP posterior of Y_hat_t (noise lam), one
        # incremental rank-one update.
        self.gp.add(arm, y_hat)
        self._t = t
        self._sums[arm] += y_hat
        self._counts[arm] += 1
        self._log_noise += math.log(self.lam)
        self._since_regroup += 1
        if self.regroup_every and self._since_regroup >= self.regroup_every:
            self._regroup()

    def _regroup(self) -> None:
        """Rebuild the GP with one row per arm played: the mean of its truncated rewards with
        noise variance lam / n_a (the same posterior, see the module docstring)."""
        played = np.flatnonzero(self._counts)
        gp = FiniteDomainGP(
            PrecomputedKernel.arms(self.n),
            self.gp.kernel,
            noise_variance=self.lam,
            capacity=played.shape[0] + self.regroup_every + 1,
        )
        noise = self.lam / self._counts[played]
        for a, y, s in zip(played, self._sums[played] / self._counts[played], noise, strict=True):
            gp.add(int(a), float(y), float(s))
        self.gp = gp
        self._log_noise = float(np.log(noise).sum())
        self._since_regroup = 0

    def __repr__(self) -> str:
        eps = "" if not self.private else f", eps_priv={self.eps_priv:g}"
        return (
            f"{type(self).__name__}(name={self.name!r}, n={self.n}, T={self.T}{eps}, "
            f"profile={self.profile!r}, beta_scale={self.beta_scale:g}, t={self.t})"
        )
