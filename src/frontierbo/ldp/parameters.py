"""Every parameter formula of Zhou & Tan and its [ref7] baselines, as small validated functions.

Two profiles (docs/decisions.md#ldp-bo-theory-and-practical-parameter-profiles):

* ``"theory"``: the constants of the theorems (Theorem 2 for LDP-ATA, [ref7] Thm 4 for ATA,
  Algorithm 2 line 5 for LDP-TGP, [ref7] Thm 1 for TGP, Theorem 4 / Corollary 1 for MoMA).
* ``"practical"``: the "order-wise" forms run in the [ref7] MATLAB code (ATA, TGP), and our
  order-wise LDP-TGP and MoMA forms below (constants dropped).

Every confidence width takes ``beta_scale`` (>= 0, default 1) and returns ``beta_scale * beta``.

Naming. The functions ``*_beta`` keep the papers' symbol beta_t, but what they return is a
*width* in frontierbo's sense (:mod:`frontierbo.core.acquisition`): it multiplies sigma,
``UCB = mu + beta_t sigma``. It is not the beta of GP-UCB / BoTorch, whose square root
multiplies sigma. The algorithms expose it as ``width``.

Indexing. ``ata_beta(t, ...)`` and ``moma_beta(n, ...)`` return the width computed *after* the
update of round t (epoch n), i.e. the one used to select in round t + 1 (epoch n + 1), as
Theorems 2 and 4 write beta_{t+1}. ``tgp_beta(t, ...)`` / ``ldp_tgp_beta(t, ...)`` return beta_t,
the width used to select in round t (Algorithm 2 line 5 writes it with b_{t-1}, gamma_{t-1}).

Edge cases (documented choices):

* ``ln(t - 1)`` at t = 1 (LDP-TGP): ``ln 0`` is undefined. We use ``ln(max(t - 1, 1))``, i.e.
  ``ln 0 := 0``: ``b_0 := B + R`` and the ``sqrt(K (ln(t-1) + 1))`` term becomes ``sqrt(K)``.
  beta_1 is irrelevant anyway (all UCB scores are equal at t = 1, the first arm is uniformly
  random), this only keeps the value finite
  (docs/decisions.md#ldp-bo-ln-0-taken-as-0-in-the-first-round).
* ``ln(4 m T / delta)`` with an empty Nyström dictionary (m = 0): ATA theory uses ``max(m, 1)``
  inside the logarithm. In beta the log is multiplied by ``sqrt(m) = 0`` so nothing changes; in
  b_t this gives the m = 1 level
  (docs/decisions.md#ldp-bo-empty-nystrom-dictionary-gives-a-0-dimensional-embedding).
* The practical ATA ``ln((m + 1) T)`` is 0 only for m = 0 and T = 1; b_t is then ``inf`` (no
  truncation).
"""

from __future__ import annotations

import math

from frontierbo._validation import check_int, check_positive, check_probability, check_real

__all__ = [
    "PROFILES",
    "ata_beta",
    "ata_truncation",
    "ctl_moments",
    "k_mom_orderwise",
    "k_mom_theory",
    "ldp_tgp_beta",
    "ldp_tgp_truncation",
    "moma_beta",
    "n_epochs",
    "q_code",
    "q_theory",
    "rho",
    "tgp_beta",
    "tgp_truncation",
]

#: The parameter profiles.
PROFILES = ("theory", "practical")


# ------------------------------------------------------------------------------------------------
# Validation helpers
# ------------------------------------------------------------------------------------------------


def _profile(profile) -> str:
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of 'theory', 'practical', got {profile!r}")
    return profile


def _nonneg(value, name: str) -> float:
    return check_real(value, name, low=0.0, low_open=False)


def _alpha(alpha) -> float:
    return check_real(alpha, "alpha", low=0.0, high=1.0, high_open=False)


def _eps_nys(eps_nys) -> float:
    return check_probability(eps_nys, "eps_nys")


def _horizon(T) -> int:
    return check_int(T, "T", low=1)


def _scale(beta_scale) -> float:
    return _nonneg(beta_scale, "beta_scale")


def _bounds(B, R) -> tuple[float, float]:
    B = _nonneg(B, "B")
    R = _nonneg(R, "R")
    if B + R <= 0.0:
        raise ValueError(f"B + R must be in (0, inf), got B={B!r}, R={R!r}")
    return B, R


def _nystrom_bias(B: float, eps_nys: float) -> float:
    """``B (1 + 1 / sqrt(1 - eps))``: the RKHS-norm term of the Nystrom confidence widths."""
    return B * (1.0 + 1.0 / math.sqrt(1.0 - eps_nys))


def _t_factor(t: int, alpha: float) -> float:
    """``t ** ((1 - alpha) / (2 (1 + alpha)))`` (1 for alpha = 1)."""
    return float(t) ** ((1.0 - alpha) / (2.0 * (1.0 + alpha)))


# ------------------------------------------------------------------------------------------------
# Nyström oversampling (Algorithm 4) and median-of-means repetitions (Algorithm 3)
# ------------------------------------------------------------------------------------------------


def rho(eps_nys) -> float:
    """``rho = (1 + eps_nys) / (1 - eps_nys)`` (Lemma 8); ``eps_nys`` in (0, 1).
    ``rho(0.1) = 1.2222``."""
    e = _eps_nys(eps_nys)
    return (1.0 + e) / (1.0 - e)


def q_theory(T, delta, eps_nys=0.1) -> float:
    """Theory dictionary oversampling ``q = 6 rho ln(4 T / delta) / eps_nys^2`` (Theorems 2
    and 4; Lemma 8 itself has 2T/delta, the theorems 4T/delta after a union bound).
    ``T`` integer >= 1, ``delta`` in (0, 1), ``eps_nys`` in (0, 1). 9459.4 at T = 10^4,
    delta = eps_nys = 0.1."""
    T = _horizon(T)
    delta = check_probability(delta, "delta")
    e = _eps_nys(eps_nys)
    return 6.0 * rho(e) * math.log(4.0 * T / delta) / (e * e)


def q_code(T, eps_nys=0.1) -> float:
    """[ref7]-code oversampling ``q = ln(T) / eps_nys^2``
    (docs/decisions.md#ldp-bo-theory-and-practical-parameter-profiles). 921.0 at
    T = 10^4; note q = 0 at T = 1 (every sampling probability is 0: empty dictionary)."""
    T = _horizon(T)
    e = _eps_nys(eps_nys)
    return math.log(T) / (e * e)


def k_mom_theory(T, delta) -> int:
    """Median-of-means repetitions ``k_mom = ceil(24 ln(4 e T / delta))`` (Algorithm 3,
    line 2 and Theorem 4 of the paper; Lemma 11 and its proof write eT/delta and 2eT/delta, we use
    the algorithm's 4eT/delta). 334 at T = 10^4, delta = 0.1."""
    T = _horizon(T)
    delta = check_probability(delta, "delta")
    return math.ceil(24.0 * math.log(4.0 * math.e * T / delta))


def k_mom_orderwise(T, delta) -> int:
    """Order-wise repetitions without the constant 24: ``ceil(ln(4 e T / delta))``
    (docs/decisions.md#ldp-bo-order-wise-k_mom-in-the-practical-profile).
    14 at T = 10^4 and 13 at T = 2000 (delta = 0.1)."""
    T = _horizon(T)
    delta = check_probability(delta, "delta")
    return math.ceil(math.log(4.0 * math.e * T / delta))


def n_epochs(T, k_mom) -> int:
    """Number of MoMA epochs ``N = floor(T / k_mom)`` (Algorithm 3, line 2); the ``T - N k_mom``
    leftover rounds are handled by the algorithm. ``k_mom`` must be an integer in [1, T]
    (``k_mom > T`` would give no epoch at all)."""
    T = _horizon(T)
    k_mom = check_int(k_mom, "k_mom", low=1, high=T)
    return T // k_mom


# ------------------------------------------------------------------------------------------------
# CTL moments (Lemma 1 of the paper and its proof)
# ------------------------------------------------------------------------------------------------


def ctl_moments(B, R, eps_priv) -> dict[str, float]:
    """Moment constants of the CTL-privatised reward (Lemma 1 and its consequences).

    * ``L = 2 (B + R) / eps_priv`` (Laplace scale);
    * ``v = K = B^2 + R^2 + 2 L^2 = B^2 + R^2 + 8 (B + R)^2 / eps_priv^2``, the bound on
      ``E[y_bar^2 | F_{t-1}]`` (``v`` for LDP-ATA, ``K`` for LDP-TGP);
    * ``c = R^2 + 2 L^2``, the bound on ``E[(eta + Lap)^2]`` (LDP-MoMA, Corollary 1).

    ``B``, ``R`` in [0, inf) with ``B + R > 0``; ``eps_priv`` in (0, inf). For B = R = 1,
    eps = 1: L = 4, v = K = 34, c = 33. The nominal L is used, as in the paper (the grid
    mechanism's exact scale is larger by at most a factor 1 + 2**-10, see
    :class:`frontierbo.ldp.randomiser.CTL`).
    """
    B, R = _bounds(B, R)
    eps = check_positive(eps_priv, "eps_priv")
    L = 2.0 * (B + R) / eps
    v = B * B + R * R + 2.0 * L * L
    return {"L": L, "v": v, "K": v, "c": R * R + 2.0 * L * L}


# ------------------------------------------------------------------------------------------------
# ATA-GP-UCB ([ref7] Algorithm 2) / LDP-ATA-GP-UCB (Algorithm 1)
# ------------------------------------------------------------------------------------------------


def ata_truncation(t, m, v, T, delta=0.1, alpha=1.0, profile="practical") -> float:
    """Truncation level b_t of (LDP-)ATA-GP-UCB (Algorithm 1, line 8).

    * ``"theory"`` ([ref7] Thm 4; for alpha = 1 and the CTL ``v`` this is Theorem 2's LDP form
      ``b_t = sqrt(v / ln(4 m_t T / delta))``)::

          b_t = (v / ln(4 m_t T / delta))^(1/(1+alpha)) * t^((1-alpha)/(2(1+alpha)))

      with ``max(m_t, 1)`` inside the log (empty dictionary, see module doc).
    * ``"practical"`` ([ref7] code ``ata_gp_ucb_nystrom.m``)::

          b_t = t^((1-alpha)/(2(1+alpha))) * (v / ln((m_t + 1) T))^(1/(1+alpha))

      (``inf`` if ``(m_t + 1) T = 1``).

    Parameters: ``t`` round, integer >= 1; ``m`` the current dictionary size m_t, integer >= 0;
    ``v`` in (0, inf) the moment bound ``E|y|^(1+alpha) <= v`` (for LDP: ``ctl_moments(...)["v"]``
    with alpha = 1); ``T`` horizon, integer >= 1; ``delta`` in (0, 1) (theory only);
    ``alpha`` in (0, 1]; ``profile`` in {"theory", "practical"}.
    """
    t = check_int(t, "t", low=1)
    m = check_int(m, "m", low=0)
    v = check_positive(v, "v")
    T = _horizon(T)
    delta = check_probability(delta, "delta")
    alpha = _alpha(alpha)
    profile = _profile(profile)
    if profile == "theory":
        log_term = math.log(4.0 * max(m, 1) * T / delta)
    else:
        log_term = math.log((m + 1) * T)
        if log_term == 0.0:
            return math.inf
    return (v / log_term) ** (1.0 / (1.0 + alpha)) * _t_factor(t, alpha)


def ata_beta(
    t,
    m,
    v,
    T,
    B,
    delta=0.1,
    alpha=1.0,
    lam=1.0,
    eps_nys=0.1,
    profile="practical",
    beta_scale=1.0,
) -> float:
    """Confidence width beta_{t+1} of (LDP-)ATA-GP-UCB after round t's update (Algorithm 1).

    A width: it multiplies sigma (``UCB = mu + beta_{t+1} sigma``), not a beta of GP-UCB.

    * ``"theory"`` ([ref7] Thm 4; for alpha = 1 Theorem 2's LDP form
      ``B (1 + 1/sqrt(1-eps_nys)) + 4 sqrt(ln(4 m_t T/delta) v m_t / lam)``)::

          beta_{t+1} = B (1 + 1/sqrt(1 - eps_nys))
                       + 4 sqrt(m_t / lam) v^(1/(1+alpha)) ln(4 m_t T/delta)^(alpha/(1+alpha))
                         t^((1-alpha)/(2(1+alpha)))

      (``max(m_t, 1)`` inside the log). Example: m = 50, T = 2000, delta = 0.1, v = 34,
      B = 1 gives about 645.
    * ``"practical"`` ([ref7] code)::

          beta_{t+1} = B sqrt(lam) + sqrt(m_t) v^(1/(1+alpha)) ln((m_t + 1) T)^(alpha/(1+alpha))
                       t^((1-alpha)/(2(1+alpha)))

      (about 141 in the same example).

    Returns ``beta_scale * beta_{t+1}``. Parameters as :func:`ata_truncation`, plus ``B`` in
    [0, inf), ``lam`` in (0, inf), ``eps_nys`` in (0, 1) (theory only), ``beta_scale`` in
    [0, inf).
    """
    t = check_int(t, "t", low=1)
    m = check_int(m, "m", low=0)
    v = check_positive(v, "v")
    T = _horizon(T)
    B = _nonneg(B, "B")
    delta = check_probability(delta, "delta")
    alpha = _alpha(alpha)
    lam = check_positive(lam, "lam")
    e = _eps_nys(eps_nys)
    profile = _profile(profile)
    s = _scale(beta_scale)
    a1 = 1.0 / (1.0 + alpha)
    tf = _t_factor(t, alpha)
    if profile == "theory":
        log_term = math.log(4.0 * max(m, 1) * T / delta)
        beta = (
            _nystrom_bias(B, e) + 4.0 * math.sqrt(m / lam) * v**a1 * (log_term ** (alpha * a1)) * tf
        )
    else:
        log_term = math.log((m + 1) * T)
        beta = B * math.sqrt(lam) + math.sqrt(m) * v**a1 * log_term ** (alpha * a1) * tf
    return s * beta


# ------------------------------------------------------------------------------------------------
# TGP-UCB ([ref7] Algorithm 1) and LDP-TGP-UCB (Algorithm 2)
# ------------------------------------------------------------------------------------------------


def tgp_truncation(t, v, alpha=1.0) -> float:
    """Truncation level of non-private TGP-UCB: ``b_t = v^(1/(1+alpha)) t^(1/(2(1+alpha)))``
    (the theory [ref7 Thm 1] and the [ref7] code use the same form, Theta(t^(1/4))
    for alpha = 1). ``t`` integer >= 0 (b_0 = 0), ``v`` in (0, inf), ``alpha`` in (0, 1]."""
    t = check_int(t, "t", low=0)
    v = check_positive(v, "v")
    alpha = _alpha(alpha)
    return v ** (1.0 / (1.0 + alpha)) * float(t) ** (1.0 / (2.0 * (1.0 + alpha)))


def ldp_tgp_truncation(t, B, R, eps_priv) -> float:
    """Truncation level of LDP-TGP-UCB: ``b_t = B + R + L ln t`` with ``L = 2 (B+R)/eps_priv``
    (Algorithm 2, lines 4 and 8; the same form in both profiles). ``b_1 = B + R``.
    ``t`` integer >= 0; t = 0 uses ``ln 0 := 0`` (b_0 = B + R, module doc). For B = R = 1,
    eps = 1: b_1000 = 29.63, b_10^4 = 38.84."""
    t = check_int(t, "t", low=0)
    B, R = _bounds(B, R)
    L = ctl_moments(B, R, eps_priv)["L"]
    return B + R + L * math.log(max(t, 1))


def tgp_beta(
    t, B, v, delta=0.1, alpha=1.0, lam=1.0, gamma_prev=None, profile="practical", beta_scale=1.0
) -> float:
    """Confidence width beta_t of non-private TGP-UCB, used to select in round t ([ref7] Thm 1).

    A width: it multiplies sigma (``UCB = mu + beta_t sigma``), not a beta of GP-UCB.

    * ``"theory"`` ([ref7] Thm 1, ``beta_{t+1} = B + 3/sqrt(lam) b_t sqrt(ln|I_t + K_t/lam| +
      2 ln(1/delta))`` shifted by one)::

          beta_t = B + (3 / sqrt(lam)) b_{t-1} sqrt(2 gamma_prev + 2 ln(1/delta))

      where ``gamma_prev = 0.5 ln det(I + K_{t-1}/lam)`` is the information gain of the t - 1
      points played so far (so ``2 gamma_prev`` is the log-determinant; e.g. from
      ``FiniteDomainGP.log_det``: ``0.5 (log_det - (t-1) ln lam)``) and
      ``b_{t-1} = tgp_truncation(t-1, v, alpha)`` (b_0 = 0, so beta_1 = B).
    * ``"practical"`` ([ref7] code)::

          beta_t = B sqrt(lam) + t^(1/(2(1+alpha))) v^(1/(1+alpha)) sqrt(ln t)

    Returns ``beta_scale * beta_t``. ``t`` integer >= 1; ``B`` in [0, inf); ``v`` in (0, inf);
    ``delta`` in (0, 1); ``alpha`` in (0, 1]; ``lam`` in (0, inf); ``gamma_prev`` in [0, inf),
    required for the theory profile; ``beta_scale`` in [0, inf).
    """
    t = check_int(t, "t", low=1)
    B = _nonneg(B, "B")
    v = check_positive(v, "v")
    delta = check_probability(delta, "delta")
    alpha = _alpha(alpha)
    lam = check_positive(lam, "lam")
    profile = _profile(profile)
    s = _scale(beta_scale)
    if profile == "theory":
        if gamma_prev is None:
            raise ValueError(
                "gamma_prev must be given (a real number in [0, inf), the information gain "
                "0.5 ln det(I + K_{t-1}/lam)) for profile='theory'"
            )
        g = _nonneg(gamma_prev, "gamma_prev")
        b_prev = tgp_truncation(t - 1, v, alpha)
        beta = B + 3.0 / math.sqrt(lam) * b_prev * math.sqrt(2.0 * g + 2.0 * math.log(1.0 / delta))
    else:
        beta = B * math.sqrt(lam) + float(t) ** (1.0 / (2.0 * (1.0 + alpha))) * v ** (
            1.0 / (1.0 + alpha)
        ) * math.sqrt(math.log(t))
    return s * beta


def ldp_tgp_beta(
    t, B, R, eps_priv, delta=0.1, lam=1.0, gamma_prev=None, profile="practical", beta_scale=1.0
) -> float:
    """Confidence width beta_t of LDP-TGP-UCB, used to select in round t (Algorithm 2, line 5).

    A width: it multiplies sigma (``UCB = mu + beta_t sigma``), not a beta of GP-UCB.

    With ``L = 2 (B+R)/eps_priv``, ``K = B^2 + R^2 + 2 L^2`` and
    ``b_{t-1} = B + R + L ln(t-1)`` (:func:`ldp_tgp_truncation`):

    * ``"theory"`` (Algorithm 2 line 5)::

          beta_t = B + (2 sqrt(2) / sqrt(lam)) b_{t-1} sqrt(gamma_prev + ln(1/delta))
                     + (1 / sqrt(lam)) sqrt(K (ln(t-1) + 1))

      ``gamma_prev`` = gamma_{t-1}, by default the data-dependent surrogate
      ``0.5 ln det(I + K_{t-1}/lam)`` over the points played (the caller computes it;
      docs/decisions.md#ldp-bo-gamma_t-surrogate-from-the-points-played).
    * ``"practical"`` (docs/decisions.md#ldp-bo-theory-and-practical-parameter-profiles):
      ``beta_t = B + b_{t-1} sqrt(ln t)`` (so beta_1 = B).

    At t = 1, ``ln(t - 1) := 0`` (module doc). Returns
    ``beta_scale * beta_t``. ``t`` integer >= 1; ``B``, ``R`` in [0, inf) with B + R > 0;
    ``eps_priv`` in (0, inf); ``delta`` in (0, 1); ``lam`` in (0, inf); ``gamma_prev`` in
    [0, inf), required for the theory profile; ``beta_scale`` in [0, inf).
    """
    t = check_int(t, "t", low=1)
    B, R = _bounds(B, R)
    mom = ctl_moments(B, R, eps_priv)
    delta = check_probability(delta, "delta")
    lam = check_positive(lam, "lam")
    profile = _profile(profile)
    s = _scale(beta_scale)
    b_prev = ldp_tgp_truncation(t - 1, B, R, eps_priv)
    if profile == "theory":
        if gamma_prev is None:
            raise ValueError(
                "gamma_prev must be given (a real number in [0, inf), gamma_{t-1}, e.g. "
                "0.5 ln det(I + K_{t-1}/lam)) for profile='theory'"
            )
        g = _nonneg(gamma_prev, "gamma_prev")
        log_prev = math.log(max(t - 1, 1))
        beta = (
            B
            + 2.0 * math.sqrt(2.0) / math.sqrt(lam) * b_prev * math.sqrt(g + math.log(1.0 / delta))
            + math.sqrt(mom["K"] * (log_prev + 1.0)) / math.sqrt(lam)
        )
    else:
        beta = B + b_prev * math.sqrt(math.log(t))
    return s * beta


# ------------------------------------------------------------------------------------------------
# MoMA-GP-UCB (Algorithm 3) / LDP-MoMA-GP-UCB
# ------------------------------------------------------------------------------------------------


def moma_beta(
    n, m, c, B, alpha=1.0, lam=1.0, eps_nys=0.1, profile="practical", beta_scale=1.0
) -> float:
    """Confidence width beta_{n+1} of (LDP-)MoMA-GP-UCB after epoch n (Algorithm 3).

    A width: it multiplies sigma (``UCB = mu + beta_{n+1} sigma``), not a beta of GP-UCB.

    * ``"theory"`` (Theorem 4 with the proof's lambda^{-1/2}; LDP: Corollary 1 with the CTL ``c``
      and alpha = 1;
      docs/decisions.md#ldp-bo-moma-theory-width-keeps-the-lambda-factor-of-the-proof)::

          beta_{n+1} = B (1 + 1/sqrt(1 - eps_nys))
                       + lam^(-1/2) 3 (9 m_n c)^(1/(1+alpha)) n^((1-alpha)/(2(1+alpha)))

    * ``"practical"``::

          beta_{n+1} = B sqrt(lam) + sqrt(m_n) c^(1/(1+alpha)) n^((1-alpha)/(2(1+alpha)))

      which is ``B sqrt(lam) + sqrt(m_n c)`` for alpha = 1 (all experiments). For alpha < 1 we
      write ``sqrt(m_n) c^(1/(1+alpha))`` (in reward units, like the [ref7]-code ATA form
      ``sqrt(m) v^(1/(1+alpha))``) rather than ``sqrt(m_n c)``.

    Returns ``beta_scale * beta_{n+1}``. ``n`` epoch, integer >= 1; ``m`` dictionary size m_n,
    integer >= 0; ``c`` in (0, inf) the noise moment ``E|eta|^(1+alpha) <= c`` (LDP:
    ``ctl_moments(...)["c"]``); ``B`` in [0, inf); ``alpha`` in (0, 1]; ``lam`` in (0, inf);
    ``eps_nys`` in (0, 1) (theory only); ``beta_scale`` in [0, inf).
    """
    n = check_int(n, "n", low=1)
    m = check_int(m, "m", low=0)
    c = check_positive(c, "c")
    B = _nonneg(B, "B")
    alpha = _alpha(alpha)
    lam = check_positive(lam, "lam")
    e = _eps_nys(eps_nys)
    profile = _profile(profile)
    s = _scale(beta_scale)
    a1 = 1.0 / (1.0 + alpha)
    nf = _t_factor(n, alpha)
    if profile == "theory":
        beta = _nystrom_bias(B, e) + 3.0 / math.sqrt(lam) * (9.0 * m * c) ** a1 * nf
    else:
        beta = B * math.sqrt(lam) + math.sqrt(m) * c**a1 * nf
    return s * beta
