"""MoMA-GP-UCB (Algorithm 3 of the paper) and LDP-MoMA-GP-UCB (Corollary 1 of the paper).

Median-of-means approximate GP-UCB with the Nyström embedding of Algorithm 4 of the paper
(:class:`frontierbo.ldp.nystrom.NystromEmbedding`)::

    1:  mu_0(x) = 0, sigma_0^2(x) = k(x, x)
    2:  k_mom = ceil(24 ln(4 e T / delta));  N = floor(T / k_mom)
    3:  for n = 1..N:                                                        (epochs)
    4:    x_n = argmax_x mu_{n-1}(x) + beta_n sigma_{n-1}(x)                 (n = 1: random arm)
    5:    play x_n k_mom times -> y_{n,1..k_mom}   (LDP: each privatised by the environment)
    6:    phi_n = NystromEmbedding({(x_i, sigma_{n-1}(x_i))}_{i=1..n}, q);  m_n = dim phi_n
    7:    V_n = Phi_n^T Phi_n + lam I_{m_n}
    8:    theta_{n,j} = V_n^{-1} sum_{i<=n} y_{i,j} phi_n(x_i),   j = 1..k_mom
    9:    r_j = median{ ||theta_{n,j} - theta_{n,s}||_{V_n} : s != j }
    10:   k* = argmin_j r_j
    11:   mu_n(x) = phi_n(x)^T theta_{n,k*}
    12:   sigma_n^2(x) = k(x,x) - phi_n(x)^T phi_n(x) + lam phi_n(x)^T V_n^{-1} phi_n(x)

Ask/tell: ``ask`` returns the epoch's arm x_n (chosen at the epoch's first ``ask``) until it has
been told k_mom rewards; the epoch closes on the k_mom-th ``tell`` (lines 6-12 run there).

Choices (every one a keyword):

* ``k_mom``: default :func:`frontierbo.ldp.parameters.k_mom_theory` (``ceil(24 ln(4eT/delta))``,
  line 2) for ``profile="theory"`` and :func:`~frontierbo.ldp.parameters.k_mom_orderwise`
  (``ceil(ln(4eT/delta))``, the order-wise value without the constant 24) for
  ``profile="practical"`` (the default profile): the theory value leaves only N = 29 epochs at
  T = 10^4 (docs/decisions.md#ldp-bo-order-wise-k_mom-in-the-practical-profile).
  An explicit ``k_mom`` overrides both.
* Leftover rounds: after the N epochs, the ``T - N k_mom`` remaining rounds (and any round
  beyond T) keep playing x_N; their rewards are not used
  (docs/decisions.md#ldp-bo-moma-leftover-rounds-replay-the-last-arm).
* Median over the k_mom - 1 distances: ``np.median`` (mean of the two middle values for an even
  count); argmin: the first minimiser. With k_mom = 1 there is no distance and k* = the only
  estimate, which is then the ridge estimate V^{-1} Phi^T y.
* All pairwise ``||.||_{V_n}`` distances come from the Gram matrix ``Theta^T V_n Theta``
  (``V_n Theta = Phi^T Y``, so the Gram matrix costs O(k_mom^2 m_n)).
* beta_{n+1} comes from :func:`frontierbo.ldp.parameters.moma_beta` (m_n of this epoch, moment
  ``c``: LDP default the CTL ``c = R^2 + 8 (B+R)^2 / eps^2`` with alpha = 1) times
  ``beta_scale``; q as in ATA-GP-UCB.

The sums ``sum_i y_{i,j} phi_n(x_i)`` are kept as per-arm reward sums (n x k_mom), so an epoch
close costs O(n m k_mom + m^2 k_mom + k_mom^2 m + m^3) plus the embedding update, and a round
inside an epoch costs O(1).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from frontierbo._validation import check_int
from frontierbo.ldp.nystrom import NystromUCBBase
from frontierbo.ldp.parameters import k_mom_orderwise, k_mom_theory, moma_beta, n_epochs

__all__ = ["MoMAGPUCB", "median_of_means"]


def median_of_means(theta: np.ndarray, VTheta: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """Lines 9-10: the median-of-means selection among the columns of ``theta`` (m, k).

    ``VTheta`` is ``V theta`` (m, k) (it equals ``Phi^T Y`` in MoMA, so ``V`` is never applied).
    Returns ``(k_star, r, D)``: the first argmin of the medians, the medians ``r`` (k,) and the
    matrix of pairwise distances ``D[j, s] = ||theta_j - theta_s||_V`` (k, k).
    """
    k = theta.shape[1]
    G = theta.T @ VTheta  # Theta^T V Theta
    G = 0.5 * (G + G.T)
    g = np.diag(G)
    D = np.sqrt(np.maximum(g[:, None] + g[None, :] - 2.0 * G, 0.0))
    np.fill_diagonal(D, 0.0)
    if k == 1:
        r = np.zeros(1)
    else:
        off = D[~np.eye(k, dtype=bool)].reshape(k, k - 1)  # s != j
        r = np.median(off, axis=1)  # line 9
    return int(np.argmin(r)), r, D  # line 10: first minimiser


class MoMAGPUCB(NystromUCBBase):
    """(LDP-)MoMA-GP-UCB over ``n`` arms with Gram matrix ``K``, as an ask/tell optimiser.

    Parameters are those of :class:`frontierbo.ldp.ata_gp_ucb.ATAGPUCB` (``c``, the noise moment
    ``E|eta|^(1+alpha) <= c``, replaces ``v``: required when ``eps_priv`` is None, CTL default
    otherwise; ``v`` is ignored), plus

    k_mom : int, optional
        Repetitions per epoch, in [1, T]; default by profile (see the module docstring).

    After each epoch: ``mean``/``variance`` (n,) are mu_n/sigma_n^2, ``width`` is beta_{n+1} (a
    multiplier of sigma; ``beta`` is its old name),
    ``theta`` (m_n, k_mom) the k_mom estimates, ``medians`` (k_mom,), ``distances``
    (k_mom, k_mom) and ``k_star`` the selected estimate (0-based), ``epoch`` = n.
    """

    base_name = "MoMA-GP-UCB"
    moment = "c"

    def __init__(self, K, T, *, k_mom=None, **common):
        # The shared keywords (B, R, eps_priv, ..., eig_rtol) are NystromUCBBase's.
        super().__init__(K, T, **common)
        if k_mom is None:  # line 2 (theory) or the order-wise value (practical)
            k_mom = (
                k_mom_theory(self.T, self.delta)
                if self.profile == "theory"
                else k_mom_orderwise(self.T, self.delta)
            )
            if k_mom > self.T:
                raise ValueError(
                    f"the {self.profile} k_mom = {k_mom} exceeds T = {self.T} (no epoch fits): "
                    f"pass k_mom, an integer in [1, {self.T}]"
                )
        self.k_mom = check_int(k_mom, "k_mom", low=1, high=self.T)
        self.N = n_epochs(self.T, self.k_mom)  # line 2: N = floor(T / k_mom)
        self.epoch = 0  # epochs closed so far (n)
        self.n_leftover = 0  # rounds played after the N epochs
        self._arm: int | None = None  # x_n of the open epoch
        self._j = 0  # rewards told in the open epoch
        self._buf = np.empty(self.k_mom)  # y_{n,1..k_mom} of the open epoch
        self._S = np.zeros((self.n, self.k_mom))  # sum_{i: x_i = a} y_{i,j}, per arm a
        self._epoch_arms: list[int] = []
        self._Y = np.empty((self.N, self.k_mom))  # y_{i,j} of every closed epoch
        self.theta = np.zeros((0, self.k_mom))
        self.medians = np.zeros(self.k_mom)
        self.distances = np.zeros((self.k_mom, self.k_mom))
        self.k_star: int | None = None

    # -- ask / tell -------------------------------------------------------------------------
    def ask(self) -> int:
        """The arm to play now: the open epoch's x_n (after the N epochs: x_N)."""
        if self._arm is None:
            # line 4: x_n = argmax mu_{n-1} + beta_n sigma_{n-1}, ties at random; n = 1: random
            self._arm = self._select(fresh=self.epoch == 0)
        return self._arm

    def tell(self, arm: int, reward: float) -> None:
        """Record one of the k_mom rewards of the epoch's arm; the k_mom-th closes the epoch."""
        a, y = self._check_tell(arm, reward)
        if self._arm is None:
            raise RuntimeError("call ask() before tell(): the epoch's arm is chosen by ask()")
        if a != self._arm:
            raise ValueError(
                f"arm must be the epoch's arm {self._arm} (MoMA plays it k_mom = {self.k_mom} "
                f"times), got {arm!r}"
            )
        self.t += 1
        if self.epoch >= self.N:  # leftover rounds: keep playing x_N, the reward is not used
            self.n_leftover += 1
            return
        self._buf[self._j] = y  # line 5: y_{n,j}
        self._j += 1
        if self._j == self.k_mom:
            self._close_epoch()

    def _close_epoch(self) -> None:
        n = self.epoch + 1
        x = self._arm
        self._epoch_arms.append(x)
        self._Y[n - 1] = self._buf
        self._S[x] += self._buf
        ny = self.nystrom
        ny.update(x)  # line 6: resample D_n with sigma_{n-1}; phi_n, m_n (and line 7's V_n)
        m = ny.m
        if m == 0:  # empty dictionary: 0-dim embedding, mu = 0 and sigma^2 = k(x, x)
            self.theta = np.zeros((0, self.k_mom))
            self.medians = np.zeros(self.k_mom)
            self.distances = np.zeros((self.k_mom, self.k_mom))
            self.k_star = 0
            self.mean = np.zeros(self.n)
        else:
            F = ny.features  # (n, m): phi_n(x) of every arm
            played = np.flatnonzero(ny.counts)
            Z = F[played].T @ self._S[played]  # (m, k): column j = sum_i y_{i,j} phi_n(x_i)
            self.theta = cho_solve(cho_factor(ny.V), Z)  # line 8: theta_{n,j} = V_n^{-1} Z_j
            # lines 9-10 (V_n theta = Z, so the Gram matrix Theta^T V_n Theta = Theta^T Z)
            self.k_star, self.medians, self.distances = median_of_means(self.theta, Z)
            self.mean = F @ self.theta[:, self.k_star]  # line 11: mu_n = phi_n^T theta_{n,k*}
        self.variance = ny.variance()  # line 12: sigma_n^2 (DTC), clipped at 0
        self.width = moma_beta(  # beta_{n+1}, with m_n, for epoch n + 1's line 4
            n,
            m,
            self.c,
            self.B,
            alpha=self.alpha,
            lam=self.lam,
            eps_nys=self.eps_nys,
            profile=self.profile,
            beta_scale=self.beta_scale,
        )
        self.epoch = n
        self._j = 0
        if n < self.N:
            self._arm = None  # the next ask() picks x_{n+1}; after epoch N keep x_N

    @property
    def n_epochs(self) -> int:
        """N = floor(T / k_mom), the number of epochs (alias of ``N``)."""
        return self.N

    # -- history ----------------------------------------------------------------------------
    @property
    def epoch_arms(self) -> np.ndarray:
        """x_1..x_n of the closed epochs (n,) (a copy)."""
        return np.asarray(self._epoch_arms, dtype=np.int64)

    @property
    def epoch_rewards(self) -> np.ndarray:
        """y_{i,j} of the closed epochs (n, k_mom) (a copy)."""
        return self._Y[: self.epoch].copy()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(name={self.name!r}, n={self.n}, T={self.T}, "
            f"k_mom={self.k_mom}, N={self.N}, epoch={self.epoch}, m={self.m})"
        )
