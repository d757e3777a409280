"""ATA-GP-UCB ([ref7] Algorithm 2) and LDP-ATA-GP-UCB (Algorithm 1 of the paper), spec §2.3.

Adaptively truncated approximate GP-UCB with the Nyström embedding of spec §2.2
(:class:`frontierbo.ldp.nystrom.NystromEmbedding`)::

    1: mu_0(x) = 0, sigma_0^2(x) = k(x, x)
    2: for t = 1..T:
    3:   x_t = argmax_x mu_{t-1}(x) + beta_t sigma_{t-1}(x)                   (t = 1: random arm)
    4:   receive y_bar_t (LDP: CTL(eps_priv)(y_t), privatised by the environment; else y_t)
    5:   phi_t = NystromEmbedding({(x_i, sigma_{t-1}(x_i))}_{i<=t}, q);  m_t = dim phi_t
    6:   V_t = Phi_t^T Phi_t + lam I_{m_t}
    7:   rows u_1..u_{m_t} of V_t^{-1/2} Phi_t^T                               (m_t x t)
    8:   r_i = sum_{tau<=t} u_{i,tau} y_bar_tau 1{|u_{i,tau} y_bar_tau| <= b}
    9:   theta_t = V_t^{-1/2} r
    10:  mu_t(x) = phi_t(x)^T theta_t
    11:  sigma_t^2(x) = k(x,x) - phi_t(x)^T phi_t(x) + lam phi_t(x)^T V_t^{-1} phi_t(x)

Choices (every one a keyword):

* ``trunc_index="t"`` (default, [ref7] Algorithm 2 and code): line 8 truncates every sample with the
  current level b_t; ``"tau"`` uses the level b_tau of the sample's own round (the seed's reading).
* ``b_fixed``: a constant truncation level for every round instead of the profile's b_t
  (``np.inf`` disables truncation: then mu_t is the ridge / GP posterior mean of the received
  rewards in the Nyström feature space).
* b_t and beta_{t+1} come from :func:`frontierbo.ldp.parameters.ata_truncation` and
  :func:`frontierbo.ldp.parameters.ata_beta` for the chosen ``profile`` ("practical": [ref7]-code
  forms; "theory": Theorem 2 / [ref7] Thm 4), with the moment ``v`` (LDP default: the CTL
  ``v = B^2 + R^2 + 8 (B+R)^2 / eps^2``, alpha = 1) and the global multiplier ``beta_scale``.
  b_t and beta_{t+1} use this round's dictionary size m_t; beta_{t+1} selects in round t + 1.
* ``V_t^{-1/2}`` is the symmetric inverse square root (eigendecomposition of V_t): the
  coordinate-wise truncation of line 8 depends on that choice, and it is the paper's.
* The dictionary is sampled over the distinct arms played (``dictionary_over="arms"``, default)
  or over the rounds (``"rounds"``, the literal paper); see :mod:`frontierbo.ldp.nystrom`.

Cost per round: the embedding update (O(m^2 + n m) incremental, O(m^3 + n m^2) on a dictionary
change), the eigendecomposition of V_t (O(m^3)) and the re-truncation of the whole history
(O(m t): the per-round arms and rewards are kept in arrays and gathered by arm). That is the
spec's O(m^2 (t + n)) per round, the cost that MoMA-GP-UCB avoids.
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np

from frontierbo._validation import check_real
from frontierbo.ldp.nystrom import NystromUCBBase
from frontierbo.ldp.parameters import ata_beta, ata_truncation

__all__ = ["ATAGPUCB", "TRUNC_INDEX"]

#: Readings of the truncation level in line 8 (spec §2.3, §2.9 item 3).
TRUNC_INDEX = ("t", "tau")


class ATAGPUCB(NystromUCBBase):
    """(LDP-)ATA-GP-UCB over ``n`` arms with Gram matrix ``K``, as an ask/tell optimiser.

    ``T``, ``B``, ``R``, ``eps_priv``, ``alpha``, ``v``, ``c``, ``lam``, ``delta``, ``profile``
    and ``beta_scale`` follow the one rule of :class:`~frontierbo.ldp.arguments.LDPArguments`
    (``B`` in (0, inf); ``alpha`` must be 1 when ``eps_priv`` is given), shared with TGP-UCB.

    Parameters
    ----------
    K : array (n, n)
        Gram matrix of the arms.
    T : int
        Horizon (enters q, b_t and beta_t; the algorithm itself does not stop at T).
    B : float > 0
        Bound on |f|.
    R : float, optional
        Noise bound; required when ``eps_priv`` is given.
    eps_priv : float, optional
        None: non-private ATA-GP-UCB (``v`` required). Given: LDP-ATA-GP-UCB, ``alpha`` must be
        1 and ``v`` defaults to the CTL second moment.
    alpha, v : moment order in (0, 1] and the bound ``E|y|^(1+alpha) <= v``.
    c : ignored (accepted, and validated, for the common constructor of the LDP algorithms).
    lam, delta : ridge lambda > 0 (default 1) and confidence delta in (0, 1) (default 0.1).
    profile : ``"practical"`` (default) or ``"theory"``; see :mod:`frontierbo.ldp.parameters`.
    beta_scale : multiplier of every width beta_t (>= 0, default 1).
    seed : int, Generator or None; one stream for ties, the first arm and the dictionary draws.
    eps_nys : Nyström accuracy epsilon in (0, 1) (default 0.1).
    q : dictionary oversampling; default ``q_code(T, eps_nys)`` (practical) or
        ``q_theory(T, delta, eps_nys)`` (theory).
    dictionary_over : ``"arms"`` (default) or ``"rounds"``.
    trunc_index : ``"t"`` (default) or ``"tau"``; see the module docstring.
    b_fixed : constant truncation level overriding the profile (``np.inf``: no truncation).
    eig_rtol : relative eigenvalue cut-off of the Nyström pseudo-inverse (default 1e-10).

    After each ``tell``: ``mean`` and ``variance`` (n,) are mu_t and sigma_t^2, ``width`` is
    beta_{t+1} (the paper's width, a multiplier of sigma; ``beta`` is its old name), ``b`` is
    b_t, ``theta`` is theta_t (m_t,) and ``n_truncated`` the number of products
    ``u_{i,tau} y_bar_tau`` (of the m_t t) that line 8 zeroed.
    """

    base_name = "ATA-GP-UCB"
    moment = "v"

    def __init__(self, K, T, *, trunc_index="t", b_fixed=None, **common):
        # The shared keywords (B, R, eps_priv, ..., eig_rtol) are NystromUCBBase's.
        super().__init__(K, T, **common)
        if trunc_index not in TRUNC_INDEX:
            raise ValueError(f"trunc_index must be one of {TRUNC_INDEX}, got {trunc_index!r}")
        self.trunc_index = trunc_index
        if b_fixed is None or (isinstance(b_fixed, Real) and b_fixed == math.inf):
            self.b_fixed = None if b_fixed is None else math.inf
        else:
            self.b_fixed = check_real(b_fixed, "b_fixed", low=0.0)
        cap = max(self.T, 16)
        self._arms = np.empty(cap, dtype=np.int64)  # x_tau of every round
        self._y = np.empty(cap)  # y_bar_tau as received
        self._b = np.empty(cap)  # b_tau (used by trunc_index="tau")
        # Per arm: its rewards sorted by |y| and the prefix sums of y in that order, so that
        # line 8's truncated sums need one binary search per (arm, i), not a pass over history.
        self._abs_sorted = [np.empty(0) for _ in range(self.n)]
        self._prefix = [np.zeros(1) for _ in range(self.n)]
        self.b = math.nan
        self.n_truncated = 0  # products u_{i,tau} y_bar_tau zeroed in the last update
        self.theta = np.zeros(0)

    # -- ask / tell -------------------------------------------------------------------------
    def ask(self) -> int:
        """The arm to play in the next round."""
        # line 3: x_t = argmax mu_{t-1} + beta_t sigma_{t-1}, ties at random; t = 1: random arm
        return self._select(fresh=self.t == 0)

    def tell(self, arm: int, reward: float) -> None:
        """Record the reward of ``arm`` (as received: privatised in the LDP version) and update."""
        a, y = self._check_tell(arm, reward)
        t = self.t + 1  # line 2: round t
        self._grow(t)
        self._arms[t - 1] = a
        self._y[t - 1] = y  # line 4: y_bar_t
        self._insert_sorted(a, y)
        ny = self.nystrom
        ny.update(a)  # line 5: resample D_t with sigma_{t-1}, phi_t, m_t (and line 6's V_t)
        m = ny.m
        b = self._truncation(t, m)
        self._b[t - 1] = b
        self.b = b
        if m == 0:  # empty dictionary: 0-dim embedding, mu = 0 and sigma^2 = k(x, x)
            self.n_truncated = 0
            self.theta = np.zeros(0)
            self.mean = np.zeros(self.n)
            self.variance = ny.variance()
        else:
            F = ny.features  # (n, m): phi_t(x) of every arm
            e, W = np.linalg.eigh(ny.V)  # line 6: V_t = Phi_t^T Phi_t + lam I (kept by ny)
            V_mhalf = (W / np.sqrt(e)) @ W.T  # V_t^{-1/2}, symmetric
            Ut = F @ V_mhalf  # line 7: row a is u_{., tau} for every round tau with x_tau = a
            if self.trunc_index == "tau":
                r = self._truncated_sums_direct(Ut, t)  # line 8 with b_tau
            else:
                r = self._truncated_sums_sorted(Ut, b)  # line 8 with the current b_t
            self.theta = V_mhalf @ r  # line 9: theta_t = V_t^{-1/2} r_hat
            self.mean = F @ self.theta  # line 10: mu_t(x) = phi_t(x)^T theta_t
            self.variance = ny.variance()  # line 11: sigma_t^2 (DTC), clipped at 0
        self.width = self._width(t, m)  # beta_{t+1}, with m_t, for round t + 1's line 3
        self.t = t

    # -- line 8: truncated sums r_hat_i = sum_tau u_{i,tau} y_tau 1{|u_{i,tau} y_tau| <= b} -----
    def _insert_sorted(self, a: int, y: float) -> None:
        """Keep arm a's rewards sorted by |y|, with prefix sums of y in that order."""
        pos = int(np.searchsorted(self._abs_sorted[a], abs(y)))
        self._abs_sorted[a] = np.insert(self._abs_sorted[a], pos, abs(y))
        ys = np.diff(self._prefix[a])
        self._prefix[a] = np.concatenate([[0.0], np.cumsum(np.insert(ys, pos, y))])

    def _truncated_sums_sorted(self, Ut: np.ndarray, b: float) -> np.ndarray:
        """Line 8 with one level b for every round: u_{i,tau} depends on tau only through the
        arm x_tau, and |u y| <= b <=> |y| <= b / |u|, so arm a contributes u_{i,a} times the sum
        of its rewards with |y| <= b / |u_{i,a}|: a binary search in its sorted rewards."""
        r = np.zeros(Ut.shape[1])
        kept = 0
        for a in np.flatnonzero(self.nystrom.counts):
            u = Ut[a]
            with np.errstate(divide="ignore"):
                limit = np.where(u != 0.0, b / np.abs(u), math.inf)
            k = np.searchsorted(self._abs_sorted[a], limit, side="right")
            r += u * self._prefix[a][k]
            kept += int(k.sum())
        self.n_truncated = int(self.t + 1) * Ut.shape[1] - kept
        return r

    def _truncated_sums_direct(self, Ut: np.ndarray, t: int) -> np.ndarray:
        """Line 8 with each round's own level b_tau: a pass over the whole history."""
        P = np.take(Ut, self._arms[:t], axis=0)  # (t, m): u_{i,tau}, one row per round
        P *= self._y[:t, None]  # u_{i,tau} y_bar_tau
        keep = np.abs(P) <= self._b[:t, None]  # 1{|u_{i,tau} y_bar_tau| <= b_tau}
        self.n_truncated = int(keep.size - np.count_nonzero(keep))
        return np.sum(P, axis=0, where=keep)

    # -- parameters (frontierbo.ldp.parameters holds the formulas) ---------------------------
    def _truncation(self, t: int, m: int) -> float:
        if self.b_fixed is not None:
            return self.b_fixed
        return ata_truncation(t, m, self.v, self.T, self.delta, self.alpha, self.profile)

    def _width(self, t: int, m: int) -> float:
        return ata_beta(
            t,
            m,
            self.v,
            self.T,
            self.B,
            delta=self.delta,
            alpha=self.alpha,
            lam=self.lam,
            eps_nys=self.eps_nys,
            profile=self.profile,
            beta_scale=self.beta_scale,
        )

    def _grow(self, size: int) -> None:
        cap = self._arms.shape[0]
        if size <= cap:
            return
        new = max(size, 2 * cap)
        self._arms = np.concatenate([self._arms, np.empty(new - cap, dtype=np.int64)])
        self._y = np.concatenate([self._y, np.empty(new - cap)])
        self._b = np.concatenate([self._b, np.empty(new - cap)])

    # -- history ----------------------------------------------------------------------------
    @property
    def arms_played(self) -> np.ndarray:
        """The arm of every round so far (t,) (a copy)."""
        return self._arms[: self.t].copy()

    @property
    def rewards(self) -> np.ndarray:
        """The received reward of every round so far (t,) (a copy)."""
        return self._y[: self.t].copy()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(name={self.name!r}, n={self.n}, T={self.T}, t={self.t}, "
            f"m={self.m}, profile={self.profile!r})"
        )
