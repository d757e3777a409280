"""Nyström embedding over a finite arm set (Algorithm 4 of the paper, Algorithm 3 in [ref7]).

Given the Gram matrix ``K`` (n x n) of the arms, a dictionary ``D`` of arms and the play counts
``n_a``, the embedding and the "DTC" surrogate posterior quantities are

* ``phi(x) = (K_D^{1/2})^+ k_D(x)`` in R^m, m = |D| (the symmetric pseudo-inverse square root,
  computed by an eigendecomposition of ``K_D`` with eigenvalues below ``eig_rtol * max`` treated
  as zero), so that ``phi(x)^T phi(y) = k_D(x)^T K_D^+ k_D(y)`` (the projected kernel);
* ``V = lam I_m + sum_a n_a phi(a) phi(a)^T`` (one term per round, grouped by arm);
* ``sigma^2(x) = k(x, x) - phi(x)^T phi(x) + lam phi(x)^T V^{-1} phi(x)``.

Dictionary sampling (lines 1-4 of Algorithm 4): every candidate ``x_i`` enters ``D`` independently
with probability ``p_i = min(q sigma_{t-1}^2(x_i), 1)``, where ``sigma_{t-1}^2`` is the variance
*before* the newest play is accounted for. Two readings are offered:

* ``dictionary_over="arms"`` (default, the [ref7] code): the candidates are the *distinct* arms
  played so far (in increasing arm index, one Bernoulli draw each), so ``m <= n``;
* ``dictionary_over="rounds"`` (the literal paper): the candidates are the rounds ``i = 1..t``, so
  an arm played many times may enter ``D`` several times; the pseudo-inverse absorbs the duplicate
  rows of ``K_D``. ``m`` can then grow to ``t`` (O(t^3) per rebuild: small horizons only).

An empty dictionary gives a 0-dimensional embedding: ``mu == 0`` and ``sigma^2 = k(x, x)``
(docs/decisions.md#ldp-bo-empty-nystrom-dictionary-gives-a-0-dimensional-embedding).

Incremental updates: when the resampled dictionary equals the previous one, the features of all
arms stay as they are and ``V`` changes by the rank-one term ``phi(a) phi(a)^T`` of the new play.
``V^{-1}`` and the quadratic forms ``phi(x)^T V^{-1} phi(x)`` of all arms are then updated by
Sherman-Morrison in O(m^2 + n m). Only a changed dictionary triggers a rebuild, O(m^3 + n m^2).
``n_rebuilds`` and ``n_incremental`` count the two paths. A rebuild reuses the features of a
recent dictionary (``cache_size`` = 64 dictionaries, least recently used first out; the features
depend on the dictionary alone, so this is bit-identical): once the most played arms have
p = q sigma^2 < 1 the dictionary flips between a few sets (at T = 10^4, 72 % of the rounds
rebuild; 19-99 % of those rebuilds find their dictionary in the cache, by problem).

The module also holds what ATA-GP-UCB and MoMA-GP-UCB share (:class:`NystromUCBBase`): the
common constructor, whose shared arguments are validated by
:class:`frontierbo.ldp.arguments.LDPArguments` as TGP-UCB's are, and the UCB selection,
:func:`frontierbo.core.acquisition.select_ucb` with the width beta_t (the paper's symbol for the
multiplier of sigma) and uniformly random ties.
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np
from scipy.linalg.lapack import dtrtri

from frontierbo._validation import SeedLike, as_generator, check_int, check_real
from frontierbo.core.acquisition import select_max, select_ucb, ucb_scores
from frontierbo.core.kernels import PrecomputedKernel
from frontierbo.ldp.arguments import LDPArguments
from frontierbo.ldp.parameters import q_code, q_theory

#: The two dictionary-sampling readings (see the module docstring).
DICTIONARY_OVER = ("arms", "rounds")


class NystromEmbedding:
    """Sampled Nyström embedding of ``n`` arms with the DTC posterior variance, updated per play.

    Parameters
    ----------
    K : array (n, n)
        Gram matrix of the arms (symmetric positive semi-definite).
    q : float
        Oversampling parameter: inclusion probability ``min(q sigma^2, 1)``, q in [0, inf]
        (``np.inf`` puts every candidate with a positive variance in the dictionary; 0 keeps
        it empty).
    lam : float
        Ridge / surrogate noise variance lambda > 0.
    dictionary_over : ``"arms"`` (default) or ``"rounds"``
        Sample over the distinct arms played so far, or over every round (the literal paper).
    seed : int, Generator or None
        Randomness of the Bernoulli draws. Pass the algorithm's generator to share one stream.
    eig_rtol : float
        Eigenvalues of ``K_D`` below ``eig_rtol * max eigenvalue`` are treated as zero.

    Call :meth:`update` once per play (the arm just played). The attributes ``features`` (n, m),
    ``V`` (m, m), ``V_inv`` (m, m) and ``dictionary`` (m,) are the current state; treat them as
    read-only.
    """

    def __init__(
        self,
        K,
        q: float,
        *,
        lam: float = 1.0,
        dictionary_over: str = "arms",
        seed: SeedLike = None,
        eig_rtol: float = 1e-10,
    ):
        self.K = PrecomputedKernel(K).K  # validated: square, finite, symmetric, PSD; read-only
        if isinstance(q, Real) and not isinstance(q, bool) and q == math.inf:
            self.q = math.inf
        else:
            self.q = check_real(q, "q", low=0.0, low_open=False)
        self.lam = check_real(lam, "lam", low=0.0)
        if dictionary_over not in DICTIONARY_OVER:
            raise ValueError(
                f"dictionary_over must be one of {DICTIONARY_OVER}, got {dictionary_over!r}"
            )
        self.dictionary_over = dictionary_over
        self.eig_rtol = check_real(eig_rtol, "eig_rtol", low=0.0, high=1.0)
        self.rng = as_generator(seed)
        n = self.K.shape[0]
        self._diag = np.diag(self.K).copy()
        self.counts = np.zeros(n, dtype=np.int64)  # n_a: plays of each arm
        self._rounds: list[int] = []  # the arm of each round (for dictionary_over="rounds")
        self.n_rebuilds = 0
        self.n_incremental = 0
        self.n_cache_hits = 0  # rebuilds whose embedding came from the cache
        self.cache_size = 64
        self._cache: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}
        self._set_empty()

    # -- state ------------------------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of arms."""
        return self.K.shape[0]

    @property
    def m(self) -> int:
        """Dictionary size (the embedding dimension)."""
        return self.dictionary.shape[0]

    @property
    def t(self) -> int:
        """Number of plays recorded so far."""
        return len(self._rounds)

    @property
    def residual(self) -> np.ndarray:
        """``k(x, x) - phi(x)^T phi(x)`` for every arm (n,): the projection residual, >= 0 up to
        rounding. Not clipped."""
        return self._resid

    def variance(self) -> np.ndarray:
        """DTC variance ``sigma^2(x)`` of every arm (n,), clipped at 0 (a new array)."""
        var = self._resid + self.lam * self._quad
        return np.maximum(var, 0.0, out=var)

    def inclusion_probabilities(self, variance: np.ndarray | None = None) -> np.ndarray:
        """``p = min(q sigma^2, 1)`` of every arm (n,) for the given (default: current) variance."""
        var = self.variance() if variance is None else np.asarray(variance, dtype=float)
        with np.errstate(invalid="ignore"):  # inf * 0 -> nan when q = inf and sigma^2 = 0
            p = self.q * var
        p[np.isnan(p)] = 0.0
        return np.minimum(p, 1.0, out=p)

    # -- update -----------------------------------------------------------------------------
    def update(self, arm: int) -> bool:
        """Record one play of ``arm``, resample the dictionary, update ``V`` and the variance.

        The inclusion probabilities use the variance before this play (``sigma_{t-1}``). Returns
        True if the dictionary changed (a rebuild), False for the incremental rank-one path.
        """
        a = check_int(arm, "arm", low=0, high=self.n - 1)
        p = self.inclusion_probabilities()  # line 3: p_{t,i} = min(q sigma_{t-1}^2(x_i), 1)
        self.counts[a] += 1
        self._rounds.append(a)
        new_dict = self._sample_dictionary(p)  # lines 1-4: D_t
        if np.array_equal(new_dict, self.dictionary):
            self._rank_one(a)
            self.n_incremental += 1
            return False
        self._rebuild(new_dict)  # lines 5-6: K_D, phi_t = (K_D^{1/2})^+ k_D
        self.n_rebuilds += 1
        return True

    def _sample_dictionary(self, p: np.ndarray) -> np.ndarray:
        """Lines 2-4: one Bernoulli(p_i) per candidate; returns the arms of ``D`` (with repeats
        in the rounds reading), in candidate order."""
        if self.dictionary_over == "arms":
            cand = np.flatnonzero(self.counts)  # distinct arms played, increasing index
        else:
            cand = np.asarray(self._rounds, dtype=np.int64)  # one candidate per round
        z = self.rng.random(cand.shape[0]) < p[cand]
        return cand[z]

    def _set_empty(self) -> None:
        n = self.n
        self.dictionary = np.zeros(0, dtype=np.int64)
        self.features = np.zeros((n, 0))
        self.V = np.zeros((0, 0))
        self.V_inv = np.zeros((0, 0))
        self._resid = self._diag.copy()
        self._quad = np.zeros(n)  # phi(x)^T V^{-1} phi(x)

    def _embed(self, dictionary: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Features (n, m) and projection residual (n,) for a dictionary, from scratch."""
        KD = self.K[np.ix_(dictionary, dictionary)]
        s, U = np.linalg.eigh(KD)
        smax = s[-1] if s.size else 0.0
        keep = s > self.eig_rtol * smax if smax > 0 else np.zeros(s.shape, dtype=bool)
        Uk = U[:, keep]
        # G = k_D(x)^T U diag(s^{-1/2}) in eigen-coordinates: the squared norm is computed here,
        # where each component is accurate to O(eps) even for small kept eigenvalues.
        G = (self.K[:, dictionary] @ Uk) / np.sqrt(s[keep])
        resid = self._diag - np.einsum("ij,ij->i", G, G)
        # phi(x) = U_k diag(s^{-1/2}) U_k^T k_D(x) = (K_D^{1/2})^+ k_D(x): rows of G U_k^T
        return G @ Uk.T, resid

    def _posterior(self, features: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``V``, ``V^{-1}`` and the quadratic forms of all arms for the current counts."""
        m = features.shape[1]
        played = np.flatnonzero(self.counts)
        Fp = features[played]
        V = Fp.T @ (self.counts[played, None] * Fp)
        V[np.diag_indices(m)] += self.lam
        V = 0.5 * (V + V.T)
        L = np.linalg.cholesky(V)
        Linv, info = dtrtri(L, lower=1)  # L^{-1}: a triangular inverse, not a general solve
        if info != 0:  # pragma: no cover - L has a positive diagonal (V >= lam I)
            raise np.linalg.LinAlgError(f"triangular inverse failed (info {info})")
        V_inv = Linv.T @ Linv
        W = features @ Linv.T  # rows L^{-1} phi(x)
        quad = np.einsum("ij,ij->i", W, W)
        return V, V_inv, quad

    def _cached_embed(self, dictionary: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_embed`, remembered for the last :attr:`cache_size` dictionaries (the features
        depend on the dictionary only, and the resampled dictionary often returns to a recent
        one: the arms with p < 1 are few). Bit-identical to recomputing."""
        key = dictionary.tobytes()
        hit = self._cache.pop(key, None)
        if hit is None:
            F, resid = self._embed(dictionary)
            F.setflags(write=False)
            resid.setflags(write=False)
            hit = (F, resid)
            while self._cache and len(self._cache) >= self.cache_size:
                self._cache.pop(next(iter(self._cache)))  # the least recently used
        else:
            self.n_cache_hits += 1
        if self.cache_size > 0:
            self._cache[key] = hit  # (re)inserted last: the most recently used
        return hit

    def _rebuild(self, dictionary: np.ndarray) -> None:
        if dictionary.shape[0] == 0:  # 0-dim embedding: mu = 0, sigma^2 = k(x, x)
            self._set_empty()
            return
        self.dictionary = dictionary
        self.features, resid = self._cached_embed(dictionary)
        self._resid = resid.copy()
        self.V, self.V_inv, self._quad = self._posterior(self.features)

    def _rank_one(self, a: int) -> None:
        """``V += phi_a phi_a^T``; Sherman-Morrison on ``V^{-1}`` and on every quadratic form."""
        if self.m == 0:
            return
        phi = self.features[a]
        w = self.V_inv @ phi
        denom = 1.0 + phi @ w
        self.V += np.outer(phi, phi)
        self.V_inv -= np.outer(w, w / denom)
        fw = self.features @ w  # phi(x)^T V^{-1} phi_a for every arm
        fw *= fw
        fw /= denom
        self._quad -= fw

    # -- reference (tests) ------------------------------------------------------------------
    def direct(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(features, V, variance)`` recomputed from scratch for the current dictionary and
        counts (no incremental update; the state is not modified)."""
        if self.m == 0:
            return np.zeros((self.n, 0)), np.zeros((0, 0)), self._diag.copy()
        F, resid = self._embed(self.dictionary)
        V, _, quad = self._posterior(F)
        return F, V, np.maximum(resid + self.lam * quad, 0.0)

    def __repr__(self) -> str:
        return (
            f"NystromEmbedding(n={self.n}, m={self.m}, t={self.t}, q={self.q:.4g}, "
            f"dictionary_over={self.dictionary_over!r})"
        )


# ------------------------------------------------------------------------------------------------
# Shared machinery of the Nyström GP-UCB algorithms (ATA-GP-UCB, MoMA-GP-UCB)
# ------------------------------------------------------------------------------------------------


def argmax_random_tie(scores: np.ndarray, rng: np.random.Generator) -> int:
    """Index of the maximum of ``scores``; ties are broken uniformly at random
    (docs/decisions.md#ldp-bo-random-first-arm-and-random-ties).

    Kept for its callers: it is :func:`frontierbo.core.acquisition.select_max` with
    ``ties="random"``.
    """
    return select_max(scores, ties="random", rng=rng)


class NystromUCBBase:
    """Arguments, parameter profile and UCB selection common to ATA- and MoMA-GP-UCB.

    The constructor follows the contract of ``docs/ldp-architecture.md``; the shared arguments
    are :class:`~frontierbo.ldp.arguments.LDPArguments` (kept as ``self.args``). ``moment`` names
    the moment the subclass needs (``"v"`` for ATA, ``"c"`` for MoMA). In the LDP version
    (``eps_priv`` given) it defaults to the CTL formula of
    :func:`frontierbo.ldp.parameters.ctl_moments`; in the non-private version it is required.

    ``width`` is the paper's beta_t for the next selection (a multiplier of sigma; NaN before the
    first update, when the selection is a uniformly random arm); ``beta`` is its old name.
    """

    base_name = "GP-UCB"
    moment = "v"

    def __init__(
        self,
        K,
        T,
        *,
        B,
        R=None,
        eps_priv=None,
        alpha=1.0,
        v=None,
        c=None,
        lam=1.0,
        delta=0.1,
        profile="practical",
        beta_scale=1.0,
        seed: SeedLike = None,
        eps_nys=0.1,
        q=None,
        dictionary_over="arms",
        eig_rtol=1e-10,
    ):
        self.K = PrecomputedKernel(K).K
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
        self.eps_nys = check_real(eps_nys, "eps_nys", low=0.0, high=1.0)
        self.name = ("LDP-" if self.private else "") + self.base_name
        setattr(self, self.moment, args.moment(self.moment, self.base_name))
        if q is None:  # dictionary oversampling: the [ref7]-code form unless profile="theory"
            q = (
                q_theory(self.T, self.delta, self.eps_nys)
                if profile == "theory"
                else q_code(self.T, self.eps_nys)
            )
        self.rng = as_generator(seed)
        self.nystrom = NystromEmbedding(
            self.K,
            q,
            lam=self.lam,
            dictionary_over=dictionary_over,
            seed=self.rng,
            eig_rtol=eig_rtol,
        )
        self.q = self.nystrom.q
        self.mean = np.zeros(self.n)  # mu_tilde_0 = 0
        self.variance = np.diag(self.K).copy()  # sigma_tilde_0^2 = k(x, x)
        self.width = math.nan  # beta_t of the next selection (set after the first update)
        self.t = 0  # rounds told so far

    @property
    def n(self) -> int:
        """Number of arms."""
        return self.K.shape[0]

    @property
    def m(self) -> int:
        """Current Nyström dictionary size."""
        return self.nystrom.m

    @property
    def beta(self) -> float:
        """Old name of :attr:`width`."""
        return self.width

    def ucb(self) -> np.ndarray:
        """``mu_tilde + beta_t sigma_tilde`` of every arm (n,) with the current width beta_t."""
        return ucb_scores(self.mean, np.sqrt(self.variance), self.width)

    def _select(self, fresh: bool) -> int:
        """argmax of the UCB, ties uniformly at random; a uniformly random arm when ``fresh``
        (no update yet: all scores are equal;
        docs/decisions.md#ldp-bo-random-first-arm-and-random-ties)."""
        if fresh:
            return int(self.rng.integers(self.n))
        std = np.sqrt(self.variance)
        return select_ucb(self.mean, std, self.width, ties="random", rng=self.rng, out=std)

    def _check_tell(self, arm, reward) -> tuple[int, float]:
        a = check_int(arm, "arm", low=0, high=self.n - 1)
        return a, check_real(reward, "reward")
