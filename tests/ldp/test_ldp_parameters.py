"""CTL randomiser (Lemma 1, Section 4.5) and parameter formulas (Theorems 2 and 4, [ref7])."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from frontierbo.dp.accounting import PrivacyGuarantee
from frontierbo.ldp.parameters import (
    ata_beta,
    ata_truncation,
    ctl_moments,
    k_mom_orderwise,
    k_mom_theory,
    ldp_tgp_beta,
    ldp_tgp_truncation,
    moma_beta,
    n_epochs,
    q_code,
    q_theory,
    rho,
    tgp_beta,
    tgp_truncation,
)
from frontierbo.ldp.randomiser import CTL, sub_weibull_K1, sub_weibull_R

N_DRAWS = 10**6
B1, R1, EPS1 = 1.0, 1.0, 1.0


@pytest.fixture(scope="module")
def draws():
    """10^6 CTL draws (B = R = eps = 1) for y = f + eta with f = B and eta = +-R (Rademacher):
    the worst case E[y^2] = B^2 + R^2 of the bounded model; one vectorised randomise call."""
    ctl = CTL(EPS1, B1, R1)
    rng = np.random.default_rng(20240601)
    y = B1 + R1 * rng.choice([-1.0, 1.0], size=N_DRAWS)
    y_bar = ctl.randomise(y, np.random.default_rng(7))
    return ctl, y, y_bar


# ------------------------------------------------------------------------------------------------
# CTL: scale, moments, tail (Curator 1, Lemma 1)
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("B", "R", "eps"), [(1, 1, 1), (1, 1, 0.5), (237.33, 203.29, 2.0), (0, 3, 5)]
)
def test_ctl_scale(B, R, eps):
    ctl = CTL(eps, B, R)
    assert ctl.scale == 2 * (B + R) / eps
    assert ctl.sensitivity == 2 * (B + R)
    g = ctl.granularity
    assert ctl.noise_scale == pytest.approx((2 * (B + R) + g) / eps, rel=1e-15)
    assert ctl.scale <= ctl.noise_scale <= ctl.scale * (1 + 2**-10)
    assert ctl.mechanism.sensitivity == 2 * (B + R) and ctl.mechanism.epsilon == eps


def test_ctl_noise_mean_and_variance(draws):
    ctl, y, y_bar = draws
    assert y_bar.shape == y.shape
    noise = y_bar - y
    L = ctl.scale
    assert abs(noise.mean()) <= 4 * math.sqrt(2) * L / 1e3
    assert noise.var() == pytest.approx(2 * ctl.noise_scale**2, rel=0.01)
    # outputs are exact grid points
    assert np.all(y_bar / ctl.granularity == np.rint(y_bar / ctl.granularity))


def test_ctl_second_moment_bound(draws):
    ctl, y, y_bar = draws
    mom = ctl.moments()
    assert mom == ctl_moments(B1, R1, EPS1)
    assert np.mean(y**2) == pytest.approx(B1**2 + R1**2, rel=0.01)
    sq = y_bar**2
    se = sq.std() / math.sqrt(sq.size)
    # exact mechanism: the bound with its exact scale (nominal bound v is 0.2 % smaller)
    assert sq.mean() <= B1**2 + R1**2 + 2 * ctl.noise_scale**2 + 4 * se
    assert sq.mean() <= mom["v"] * (1 + 2**-9) + 4 * se
    # this y is the worst case: the bound is attained
    assert sq.mean() == pytest.approx(mom["v"], rel=0.01)


@pytest.mark.parametrize("tau", [2.0, 10.0, 100.0])
def test_ctl_tail(draws, tau):
    ctl, y, y_bar = draws
    noise = np.abs(y_bar - y)
    p_hat = np.mean(noise > ctl.noise_scale * math.log(tau))
    p = 1.0 / tau
    mc = 4 * math.sqrt(p * (1 - p) / noise.size)
    discretisation = p / float(ctl.mechanism.grid_scale)  # O(1/t) for the discrete Laplace
    assert abs(p_hat - p) <= mc + discretisation


# ------------------------------------------------------------------------------------------------
# Analytic LDP check (Definition 1, Lemma 1)
# ------------------------------------------------------------------------------------------------


def _y_grid(bound: float, rng) -> np.ndarray:
    return np.concatenate(
        [np.linspace(-bound, bound, 41), rng.uniform(-bound, bound, 40), [-bound, bound]]
    )


@pytest.mark.parametrize(("B", "R", "eps"), [(1, 1, 1), (1, 1, 0.5), (2, 0.5, 5), (3, 1, 0.1)])
def test_ctl_ldp_exact_pmf_ratio(B, R, eps):
    """For the grid mechanism P(m | k) = C exp(-|m - k|/t); the log ratio between inputs y and
    y' is exactly (|m - k'| - |m - k|)/t. Check it is <= eps in exact rational arithmetic."""
    ctl = CTL(eps, B, R)
    g = Fraction(ctl.granularity)
    t = ctl.mechanism.grid_scale  # Fraction, exact
    ys = _y_grid(ctl.bound, np.random.default_rng(0))
    ks = [int(k) for k in np.rint(ys / ctl.granularity)]
    centre = (max(ks) + min(ks)) // 2
    span = int(3 * t)
    ms = list(range(centre - span, centre + span + 1, max(1, span // 50))) + [max(ks), min(ks)]
    worst = Fraction(0)
    for m in ms:
        d = [abs(m - k) for k in ks]
        worst = max(worst, Fraction(max(d) - min(d)) / t)
    assert worst <= Fraction(eps)
    assert worst >= Fraction(eps) * (1 - 2 * g / Fraction(ctl.sensitivity))  # nearly tight
    # the same through the float log-pmf (all grid outputs z)
    z = np.array(ms, dtype=float) * ctl.granularity
    lp = ctl.log_pmf(z[:, None], ys[None, :])
    assert np.all(np.isfinite(lp))
    assert float(np.max(lp.max(axis=1) - lp.min(axis=1))) <= eps + 1e-9
    # the paper's continuous Laplace density with the nominal scale L = 2(B+R)/eps
    zc = np.linspace(-5 * ctl.bound, 5 * ctl.bound, 201)
    logp = -np.abs(zc[:, None] - ys[None, :]) / ctl.scale
    assert float(np.max(logp.max(axis=1) - logp.min(axis=1))) <= eps * (1 + 1e-12)


def test_ctl_log_pmf_normalised_and_off_grid():
    ctl = CTL(1.0, 1.0, 1.0)
    t = float(ctl.mechanism.grid_scale)
    m = np.arange(-int(60 * t), int(60 * t) + 1)
    p = np.exp(ctl.log_pmf(m * ctl.granularity, 0.3))
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    assert ctl.log_pmf(0.5 * ctl.granularity, 0.0) == -np.inf


def test_ctl_out_of_range_needs_clipping():
    """Rewards outside [-(B+R), B+R] break eps-LDP unless clip_to_sensitivity is on."""
    eps = 1.0
    z = np.linspace(-40, 40, 81)
    raw = CTL(eps, 1.0, 1.0)
    ratio = raw.log_pmf(z, 6.0) - raw.log_pmf(z, -2.0)
    assert np.max(np.abs(ratio)) > 1.9 * eps
    clipped = CTL(eps, 1.0, 1.0, clip_to_sensitivity=True)
    ratio = clipped.log_pmf(z, 6.0) - clipped.log_pmf(z, -2.0)
    assert np.max(np.abs(ratio)) <= eps + 1e-9


# ------------------------------------------------------------------------------------------------
# Clipping, scalar/array API, guarantee
# ------------------------------------------------------------------------------------------------


def test_ctl_clipping():
    on = CTL(1.0, 1.0, 1.0, clip_to_sensitivity=True)
    off = CTL(1.0, 1.0, 1.0)
    # same random bits: clipping maps 100 to B + R = 2 exactly
    assert on.randomise(100.0, 5) == on.randomise(2.0, 5) == off.randomise(2.0, 5)
    assert off.randomise(100.0, 5) == pytest.approx(off.randomise(2.0, 5) + 98.0)
    assert on.randomise(-7.0, 5) == off.randomise(-2.0, 5)
    # in-range rewards are unchanged by clipping (no-op in the bounded model)
    ys = np.array([-2.0, -0.3, 0.0, 1.5, 2.0])
    np.testing.assert_array_equal(on.randomise(ys, 11), off.randomise(ys, 11))


def test_ctl_scalar_and_array():
    ctl = CTL(2.0, 1.0, 0.5)
    assert isinstance(ctl.randomise(0.1, 0), float)
    out = ctl.randomise(np.zeros((3, 4)), np.random.default_rng(1))
    assert out.shape == (3, 4)
    assert ctl(0.1, 0) == ctl.randomise(0.1, 0)


def test_ctl_guarantee():
    g = CTL(0.5, 1.0, 2.0).guarantee()
    assert isinstance(g, PrivacyGuarantee)
    assert g.epsilon == 0.5 and g.delta == 0.0 and g.differentially_private
    assert g.neighbouring.startswith("local: any two rewards of one user in [-(B+R), B+R]")
    assert any("|y| <= B + R = 3" in a for a in g.assumptions)
    gc = CTL(0.5, 1.0, 2.0, clip_to_sensitivity=True).guarantee()
    assert gc.delta == 0.0 and any("clipped" in a for a in gc.assumptions)


def test_sub_weibull():
    T, delta, theta, K1 = 1000, 0.1, 0.5, 2.0
    r_bound = sub_weibull_R(K1, T, delta, theta)
    assert r_bound == pytest.approx(K1 * math.log(T / delta) ** theta)
    ctl = CTL.for_sub_weibull(1.0, 1.0, K1, T, delta, theta)
    assert r_bound == ctl.R
    assert ctl.scale == 2 * (1.0 + r_bound)
    g = ctl.guarantee()
    assert (g.epsilon, g.delta) == (1.0, delta)
    assert any("sub-Weibull" in a for a in g.assumptions)
    gc = CTL.for_sub_weibull(1.0, 1.0, K1, T, delta, theta, clip_to_sensitivity=True).guarantee()
    assert gc.delta == 0.0
    # Laplace noise of scale s: P(|eta| >= x) = exp(-x/s), i.e. a = 1, b = 1/s, theta = 1 -> K1 = s
    s = 0.7
    k1 = sub_weibull_K1(1.0, 1.0 / s, 1.0, T, delta)
    assert k1 == pytest.approx(s)
    r_bound = sub_weibull_R(k1, T, delta, 1.0)
    assert 1 - (1 - math.exp(-r_bound / s)) ** T <= delta


# ------------------------------------------------------------------------------------------------
# Parameter values (Theorems 2 and 4, Corollary 1; the [ref7] code)
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("eps", "L", "Kv", "c", "b1000", "b10k"),
    [
        (0.5, 8, 130, 129, 57.26, 75.68),
        (1, 4, 34, 33, 29.63, 38.84),
        (2, 2, 10, 9, 15.82, 20.42),
        (5, 0.8, 3.28, 2.28, 7.526, 9.368),
    ],
)
def test_ctl_table(eps, L, Kv, c, b1000, b10k):
    mom = ctl_moments(1, 1, eps)
    assert mom["L"] == pytest.approx(L)
    assert mom["v"] == pytest.approx(Kv) and mom["K"] == pytest.approx(Kv)
    assert mom["c"] == pytest.approx(c)
    assert round(ldp_tgp_truncation(1000, 1, 1, eps), 3 if eps == 5 else 2) == b1000
    assert round(ldp_tgp_truncation(10**4, 1, 1, eps), 3 if eps == 5 else 2) == b10k
    assert ldp_tgp_truncation(1, 1, 1, eps) == 2.0  # b_1 = B + R


def test_moma_counts():
    assert k_mom_theory(10**4, 0.1) == 334 and n_epochs(10**4, 334) == 29
    assert k_mom_theory(10**3, 0.1) == 279 and n_epochs(10**3, 279) == 3
    assert k_mom_theory(5000, 0.1) == 317 and n_epochs(5000, 317) == 15
    assert k_mom_theory(2 * 10**4, 0.1) == 351 and n_epochs(2 * 10**4, 351) == 56
    assert k_mom_theory(10**4, 0.05) == 351 and n_epochs(10**4, 351) == 28
    assert k_mom_orderwise(10**4, 0.1) == 14 and n_epochs(10**4, 14) == 714
    assert k_mom_orderwise(2000, 0.1) == 13 and n_epochs(2000, 13) == 153


def test_nystrom_q_and_rho():
    assert round(q_theory(10**4, 0.1, 0.1), 1) == 9459.4
    assert round(q_theory(10**3, 0.1, 0.1), 1) == 7770.9
    assert round(q_code(10**4), 1) == 921.0
    assert round(q_code(10**3, 0.1), 1) == 690.8
    assert round(rho(0.1), 4) == 1.2222


def test_ata_example_section_6_3():
    theory = ata_beta(1, 50, 34, 2000, 1.0, delta=0.1, profile="theory")
    practical = ata_beta(1, 50, 34, 2000, 1.0, delta=0.1, profile="practical")
    assert theory == pytest.approx(645, abs=1)
    assert theory == pytest.approx(1 + 1 / math.sqrt(0.9) + 4 * math.sqrt(math.log(4e6) * 34 * 50))
    assert practical == pytest.approx(141, abs=0.5)
    assert practical == pytest.approx(1 + math.sqrt(50 * 34 * math.log(51 * 2000)))
    assert ata_beta(1, 50, 34, 2000, 1.0, profile="theory", beta_scale=0.1) == pytest.approx(
        0.1 * theory
    )


def test_ata_truncation_forms():
    v, T, delta = 34.0, 2000, 0.1
    assert ata_truncation(7, 50, v, T, delta, profile="theory") == pytest.approx(
        math.sqrt(v / math.log(4 * 50 * T / delta))
    )
    assert ata_truncation(7, 50, v, T, profile="practical") == pytest.approx(
        math.sqrt(v / math.log(51 * T))
    )
    a = 0.5
    assert ata_truncation(9, 10, v, T, delta, alpha=a, profile="theory") == pytest.approx(
        (v / math.log(40 * T / delta)) ** (1 / 1.5) * 9 ** (0.5 / 3)
    )
    # empty dictionary: max(m, 1) in the theory log; practical inf only for (m+1) T = 1
    assert ata_truncation(1, 0, v, T, delta, profile="theory") == ata_truncation(
        1, 1, v, T, delta, profile="theory"
    )
    assert ata_truncation(1, 0, v, 1, profile="practical") == math.inf
    assert ata_beta(1, 0, v, T, 1.0, profile="theory") == pytest.approx(1 + 1 / math.sqrt(0.9))


def test_tgp_forms():
    B, R, eps, lam, delta = 1.0, 1.0, 1.0, 1.0, 0.1
    # LDP practical: beta_t = B + b_{t-1} sqrt(ln t); beta_1 = B
    assert ldp_tgp_beta(1, B, R, eps) == B
    assert ldp_tgp_beta(1001, B, R, eps) == pytest.approx(B + 29.631021 * math.sqrt(math.log(1001)))
    # LDP theory (Algorithm 2 line 5), with ln 0 := 0 at t = 1
    g = 3.5
    expected = (
        B
        + 2 * math.sqrt(2) * (2 + 4 * math.log(9)) * math.sqrt(g + math.log(10))
        + math.sqrt(34 * (math.log(9) + 1))
    )
    assert ldp_tgp_beta(10, B, R, eps, delta, lam, g, "theory") == pytest.approx(expected)
    beta1 = ldp_tgp_beta(1, B, R, eps, delta, lam, 0.0, "theory")
    assert beta1 == pytest.approx(
        B + 2 * math.sqrt(2) * 2 * math.sqrt(math.log(10)) + math.sqrt(34)
    )
    # non-private
    assert tgp_truncation(16, 3.0) == pytest.approx(math.sqrt(3.0) * 2)
    assert tgp_truncation(0, 3.0) == 0.0
    assert tgp_beta(1, B, 3.0, profile="theory", gamma_prev=0.0) == B
    assert tgp_beta(17, B, 3.0, delta, 1.0, 1.0, 2.0, "theory") == pytest.approx(
        B + 3 * math.sqrt(3.0) * 2 * math.sqrt(4.0 + 2 * math.log(10))
    )
    assert tgp_beta(16, B, 3.0, lam=4.0) == pytest.approx(
        2 * B + 2 * math.sqrt(3.0) * math.sqrt(math.log(16))
    )
    with pytest.raises(ValueError, match="gamma_prev must be given"):
        ldp_tgp_beta(3, B, R, eps, profile="theory")


def test_moma_beta_forms():
    m, c, B = 20, 33.0, 1.0
    assert moma_beta(4, m, c, B, profile="practical") == pytest.approx(1 + math.sqrt(m * c))
    assert moma_beta(4, m, c, B, profile="theory") == pytest.approx(
        1 + 1 / math.sqrt(0.9) + 3 * math.sqrt(9 * m * c)
    )
    a, n, lam = 0.5, 8, 4.0
    assert moma_beta(n, m, c, B, a, lam, 0.2, "theory", 0.5) == pytest.approx(
        0.5 * (B * (1 + 1 / math.sqrt(0.8)) + 0.5 * 3 * (9 * m * c) ** (1 / 1.5) * n ** (0.5 / 3))
    )
    assert moma_beta(n, m, c, B, a, lam, profile="practical") == pytest.approx(
        2 * B + math.sqrt(m) * c ** (1 / 1.5) * n ** (0.5 / 3)
    )


# ------------------------------------------------------------------------------------------------
# Bad inputs: one clear error naming the parameter and its range
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: CTL(0.0, 1, 1), r"eps_priv must be in \(0, inf\)"),
        (lambda: CTL(-1.0, 1, 1), r"eps_priv must be in \(0, inf\)"),
        (lambda: ctl_moments(1, 1, 0), r"eps_priv must be in \(0, inf\)"),
        (lambda: CTL(1.0, -1, 1), r"B must be in \[0, inf\)"),
        (lambda: CTL(1.0, 1, -0.5), r"R must be in \[0, inf\)"),
        (lambda: CTL(1.0, 0, 0), r"B \+ R must be in \(0, inf\)"),
        (lambda: ldp_tgp_truncation(5, 1, -1, 1), r"R must be in \[0, inf\)"),
        (lambda: k_mom_theory(0, 0.1), r"T must be an integer in \[1, inf\]"),
        (lambda: q_code(0), r"T must be an integer in \[1, inf\]"),
        (lambda: ata_beta(1, 5, 34, 0, 1), r"T must be an integer in \[1, inf\]"),
        (lambda: k_mom_theory(10, 0.0), r"delta must be in \(0, 1\)"),
        (lambda: k_mom_orderwise(10, 1.0), r"delta must be in \(0, 1\)"),
        (lambda: q_theory(10, 1.5, 0.1), r"delta must be in \(0, 1\)"),
        (lambda: sub_weibull_R(1, 10, -0.1, 1), r"delta must be in \(0, 1\)"),
        (lambda: rho(0.0), r"eps_nys must be in \(0, 1\)"),
        (lambda: rho(1.0), r"eps_nys must be in \(0, 1\)"),
        (lambda: q_theory(10, 0.1, 1.2), r"eps_nys must be in \(0, 1\)"),
        (lambda: ata_beta(1, 5, 34, 10, 1, profile="Theory"), "profile must be one of"),
        (lambda: tgp_beta(2, 1, 3, profile="code"), "profile must be one of"),
        (lambda: moma_beta(2, 3, 4, 1, profile=None), "profile must be one of"),
        (lambda: ata_truncation(1, 5, 34, 10, profile="fast"), "profile must be one of"),
        (lambda: n_epochs(100, 101), r"k_mom must be an integer in \[1, 100\]"),
        (lambda: ata_truncation(0, 5, 34, 10), r"t must be an integer in \[1, inf\]"),
        (lambda: moma_beta(1, 3, 4, 1, alpha=1.5), r"alpha must be in \(0, 1\]"),
        (lambda: moma_beta(1, 3, 4, 1, beta_scale=-1), r"beta_scale must be in \[0, inf\)"),
        (lambda: CTL(1.0, 1, 1).randomise(np.nan, 0), "y must be finite"),
    ],
)
def test_bad_inputs(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_bad_types():
    with pytest.raises(TypeError, match="T must be an integer"):
        k_mom_theory(1e4, 0.1)
    with pytest.raises(TypeError, match="clip_to_sensitivity must be True or False"):
        CTL(1.0, 1, 1, clip_to_sensitivity="yes")
