"""ATA-GP-UCB ([ref7] Algorithm 2) and LDP-ATA-GP-UCB (Algorithm 1 of the paper).

Adaptively truncated approximate GP-UCB with the Nyström embedding of Algorithm 4 of the paper
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
  current level b_t; ``"tau"`` uses the level b_tau of the sample's own round (the paper's
  Algorithm 1, line 8 as written;
  docs/decisions.md#ldp-bo-ata-truncates-every-sample-with-the-current-b_t).
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
change, whose features come from a cache of recent dictionaries when they can), the
eigendecomposition of V_t (O(m^3); see :func:`inverse_sqrt` for why a Cholesky factor does not
do) and line 8. Line 8 is an O(m t) re-truncation of the whole history ([ref7]); here it costs
O(n m) plus O(t) to file the new reward (:class:`ArmRewardIndex`; the direct pass is
:meth:`ATAGPUCB.truncated_sums_reference`, and ``trunc_index="tau"`` always uses it). At
T = 10^4 on 100 arms that is 0.4-0.8 ms per round, two thirds of it in the two
eigendecompositions (V_t, and K_D on a dictionary change).
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np

from frontierbo._validation import check_real
from frontierbo.ldp.nystrom import NystromUCBBase
from frontierbo.ldp.parameters import ata_beta, ata_truncation

__all__ = ["ATAGPUCB", "TRUNC_INDEX"]

#: Readings of the truncation level in line 8
#: (docs/decisions.md#ldp-bo-ata-truncates-every-sample-with-the-current-b_t).
TRUNC_INDEX = ("t", "tau")


def inverse_sqrt(V: np.ndarray) -> np.ndarray:
    """The symmetric inverse square root V^{-1/2} of a symmetric positive-definite V (m, m).

    Line 8 truncates the coordinates of V^{-1/2} phi one by one, so the estimate depends on the
    choice of square root (a Cholesky whitening L^{-1} phi truncates other coordinates: another
    algorithm); the paper's is the symmetric one, from the eigendecomposition V = W diag(e) W^T.
    """
    e, W = np.linalg.eigh(V)
    return (W / np.sqrt(e)) @ W.T


class ArmRewardIndex:
    """The received rewards grouped by arm, for line 8 with one level b for every round.

    u_{i,tau} depends on tau only through the arm x_tau, and ``|u y| <= b <=> |y| <= b / |u|``
    (u != 0; every reward is kept when u = 0). So arm a contributes ``u_{i,a} S_a(b / |u_{i,a}|)``
    to r_hat_i, where ``S_a(c)`` is the sum of a's rewards with ``|y| <= c``: a prefix sum of
    a's rewards sorted by |y|. A query whose limit is at least the arm's largest |y| keeps all
    of them (almost every query: a round truncates a handful of the m t products); the others
    are answered by two vectorised binary searches (O(n m) per round instead of the O(m t)
    pass):

    * ``abs_sorted``: every |y| received, sorted; a limit c has the global rank
      ``#{|y| <= c}`` (``searchsorted(..., side="right")``);
    * ``keys``: per reward, ``arm * STRIDE + #{|y'| < |y|}`` (its left rank), stored arm by arm
      in |y| order, hence sorted. Reward y of arm a satisfies ``|y| <= c`` iff its left rank is
      below c's rank, so ``searchsorted(keys, a * STRIDE + rank(c)) - start[a]`` counts them;
    * ``prefix``: per arm a leading 0 and the cumulative sums of its rewards in |y| order.

    Adding a reward costs O(t) (array insertions and the rank shift of the larger rewards).
    """

    STRIDE = 1 << 40  # > any number of rewards: arm a's keys lie in [a STRIDE, (a + 1) STRIDE)

    def __init__(self, n: int, capacity: int = 1024):
        self.n = n
        self.t = 0
        self.start = np.zeros(n + 1, dtype=np.int64)  # arm a's rewards: [start[a], start[a+1])
        # Buffers with room to insert in place (grown by doubling); the public arrays are views
        # of their first t (prefix: t + n) entries.
        self._buf = {
            "abs_y": np.zeros(capacity),  # |y| arm by arm, ascending within an arm
            "y": np.zeros(capacity),  # the rewards in the same order
            "keys": np.zeros(capacity, dtype=np.int64),
            "abs_sorted": np.zeros(capacity),  # every |y|, ascending
            "prefix": np.zeros(capacity + n),  # arm a: n_a + 1 entries from start[a] + a, 0 first
        }
        self._views()

    def _views(self) -> None:
        t, buf = self.t, self._buf
        self.abs_y, self.y, self.keys = buf["abs_y"][:t], buf["y"][:t], buf["keys"][:t]
        self.abs_sorted, self.prefix = buf["abs_sorted"][:t], buf["prefix"][: t + self.n]

    @staticmethod
    def _insert(arr: np.ndarray, length: int, pos: int, value) -> None:
        """Insert ``value`` at ``pos`` into the first ``length`` entries of ``arr``, in place."""
        arr[pos + 1 : length + 1] = arr[pos:length]  # overlapping: NumPy copies via a buffer
        arr[pos] = value

    def add(self, a: int, y: float) -> None:
        """Record reward ``y`` of arm ``a``."""
        t, buf = self.t, self._buf
        if t + 1 > buf["y"].shape[0]:
            for name, arr in buf.items():
                grown = np.zeros(2 * arr.shape[0] + (self.n if name == "prefix" else 0), arr.dtype)
                grown[: arr.shape[0]] = arr
                buf[name] = grown
            self._views()  # the views below must see the new buffers
        ay = abs(y)
        lo, hi = int(self.start[a]), int(self.start[a + 1])
        pos = lo + int(np.searchsorted(self.abs_y[lo:hi], ay))
        rank = int(np.searchsorted(self.abs_sorted, ay))  # #{|y'| < |y|}
        self.keys[self.abs_y > ay] += 1  # the larger rewards' left ranks move up by one
        self._insert(buf["keys"], t, pos, a * self.STRIDE + rank)
        self._insert(buf["abs_y"], t, pos, ay)
        self._insert(buf["y"], t, pos, y)
        self._insert(buf["abs_sorted"], t, rank, ay)
        base = lo + a  # arm a's leading 0 in prefix
        self._insert(buf["prefix"], t + self.n, base + 1, 0.0)
        np.cumsum(buf["y"][lo : hi + 1], out=buf["prefix"][base + 1 : base + hi - lo + 2])
        self.start[a + 1 :] += 1
        self.t = t + 1
        self._views()

    def truncated_sums(self, Ut: np.ndarray, b: float) -> tuple[np.ndarray, int]:
        """``r_hat_i = sum_tau u_{i,tau} y_tau 1{|u_{i,tau} y_tau| <= b}`` for the rows ``Ut``
        (n, m) of u per arm. Returns ``(r_hat, kept)``, ``kept`` the number of products that
        were not zeroed."""
        played = np.flatnonzero(np.diff(self.start))
        U = Ut[played]  # (p, m)
        end = self.start[played + 1]  # one past each arm's last reward
        absu = np.abs(U)
        with np.errstate(divide="ignore", invalid="ignore"):
            limit = np.where(absu != 0.0, b / absu, math.inf)  # |y| <= b / |u|
        pos = np.repeat(end[:, None], U.shape[1], axis=1)  # all of arm a's rewards kept ...
        cut = limit < self.abs_y[end - 1][:, None]  # ... unless its largest |y| is above
        if cut.any():  # rare (a few products per round): search only those
            rows = np.nonzero(cut)[0]
            rank = np.searchsorted(self.abs_sorted, limit[cut], side="right")  # #{|y| <= c}
            # start[a] + #{arm a's |y| <= limit}
            pos[cut] = np.searchsorted(self.keys, played[rows] * self.STRIDE + rank)
        kept = int((pos - self.start[played, None]).sum())
        S = self.prefix[pos + played[:, None]]  # S_a(limit): arm a's prefix is shifted by a
        U *= S
        return U.sum(axis=0), kept


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
        self._index = ArmRewardIndex(self.n, cap)  # line 8's sums with one level b_t
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
        self._index.add(a, y)
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
            V_mhalf = inverse_sqrt(ny.V)  # line 6: V_t^{-1/2}, symmetric (V_t kept by ny)
            Ut = F @ V_mhalf  # line 7: row a is u_{., tau} for every round tau with x_tau = a
            if self.trunc_index == "tau":
                r, kept = self._truncated_sums_direct(Ut, self._b[:t])  # line 8 with b_tau
            else:
                r, kept = self._index.truncated_sums(Ut, b)  # line 8 with the current b_t
            self.n_truncated = t * m - kept
            self.theta = V_mhalf @ r  # line 9: theta_t = V_t^{-1/2} r_hat
            self.mean = F @ self.theta  # line 10: mu_t(x) = phi_t(x)^T theta_t
            self.variance = ny.variance()  # line 11: sigma_t^2 (DTC), clipped at 0
        self.width = self._width(t, m)  # beta_{t+1}, with m_t, for round t + 1's line 3
        self.t = t

    # -- line 8: truncated sums r_hat_i = sum_tau u_{i,tau} y_tau 1{|u_{i,tau} y_tau| <= b} -----
    def _truncated_sums_direct(self, Ut: np.ndarray, levels: np.ndarray) -> tuple[np.ndarray, int]:
        """Line 8 as written, a pass over the whole history (O(m t)): round tau's products are
        truncated at ``levels[tau - 1]``. Returns ``(r_hat, kept)``, ``kept`` the number of
        products u_{i,tau} y_bar_tau that were not zeroed."""
        t = levels.shape[0]
        P = np.take(Ut, self._arms[:t], axis=0)  # (t, m): u_{i,tau}, one row per round
        P *= self._y[:t, None]  # u_{i,tau} y_bar_tau
        keep = np.abs(P) <= levels[:, None]  # 1{|u_{i,tau} y_bar_tau| <= b}
        return np.sum(P, axis=0, where=keep), int(np.count_nonzero(keep))

    def truncated_sums_reference(self, Ut: np.ndarray, b: float) -> tuple[np.ndarray, int]:
        """Line 8 with the level ``b`` for every round told so far, by the direct pass: the
        reference of the fast path (:meth:`ArmRewardIndex.truncated_sums`) for tests."""
        return self._truncated_sums_direct(Ut, np.full(self.t, float(b)))

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
