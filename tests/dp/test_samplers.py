"""Exact DP noise samplers, grid mechanisms and Mironov's floating-point attack.

Statistical checks use fixed seeds and wide margins (5 standard errors, p > 1e-4), so they are
deterministic; each would fail for a wrong distribution (the likelihood-ratio check is shown to
flag a mechanism that is under-noised by a third).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from frontierbo.dp.accounting import PrivacyGuarantee
from frontierbo.dp.mechanisms import MAX_GRID_INDEX, GaussianMechanism, LaplaceMechanism
from frontierbo.dp.samplers import (
    RandomBits,
    discrete_gaussian,
    discrete_laplace,
    impossible_under,
    mironov_attack_fraction,
    naive_laplace,
    sample_bernoulli_exp,
    sample_discrete_gaussian,
    sample_discrete_laplace,
)

# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


def laplace_pmf(x: np.ndarray, t: float) -> np.ndarray:
    q = math.exp(-1.0 / t)
    return (1 - q) / (1 + q) * np.exp(-np.abs(x) / t)


def gaussian_pmf(x: np.ndarray, sigma2: float) -> np.ndarray:
    support = np.arange(-400, 401)
    norm = np.exp(-(support**2) / (2 * sigma2)).sum()
    return np.exp(-(np.asarray(x) ** 2) / (2 * sigma2)) / norm


def chi_square_pvalue(samples: np.ndarray, pmf, min_expected: float = 10.0) -> float:
    """Chi-square goodness of fit on the integers; bins with small expectation are pooled into
    the two tails."""
    n = samples.size
    lo, hi = int(samples.min()), int(samples.max())
    xs = np.arange(min(lo, -1), max(hi, 1) + 1)
    inner = xs[pmf(xs) * n >= min_expected]
    a, b = int(inner.min()), int(inner.max())
    grid = np.arange(a, b + 1)
    expected = list(pmf(grid) * n)
    observed = [int(np.sum(samples == x)) for x in grid]
    p_in = float(np.sum(pmf(grid)))
    left = float(np.sum(pmf(np.arange(a - 2000, a))))
    right = max(1.0 - p_in - left, 0.0)
    expected += [left * n, right * n]
    observed += [int(np.sum(samples < a)), int(np.sum(samples > b))]
    exp_arr, obs_arr = np.array(expected), np.array(observed)
    keep = exp_arr > 0
    stat = float(np.sum((obs_arr[keep] - exp_arr[keep]) ** 2 / exp_arr[keep]))
    return float(stats.chi2.sf(stat, keep.sum() - 1))


def clopper_pearson(k: int, n: int, alpha: float) -> tuple[float, float]:
    lo = 0.0 if k == 0 else float(stats.beta.ppf(alpha, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(1 - alpha, k + 1, n - k))
    return lo, hi


def max_ratio_lower_bound(y0: np.ndarray, y1: np.ndarray, min_count: int, alpha: float) -> float:
    """max over output points of a lower confidence bound on P(y | x0) / P(y | x1) and on its
    inverse (Clopper-Pearson bounds on both probabilities)."""
    n0, n1 = y0.size, y1.size
    v0, c0 = np.unique(y0, return_counts=True)
    v1, c1 = np.unique(y1, return_counts=True)
    counts0 = dict(zip(v0.tolist(), c0.tolist(), strict=True))
    counts1 = dict(zip(v1.tolist(), c1.tolist(), strict=True))
    best = 0.0
    for v in set(counts0) | set(counts1):
        k0, k1 = counts0.get(v, 0), counts1.get(v, 0)
        if max(k0, k1) < min_count:
            continue
        lo0, hi0 = clopper_pearson(k0, n0, alpha)
        lo1, hi1 = clopper_pearson(k1, n1, alpha)
        best = max(best, lo0 / hi1, lo1 / hi0)
    return best


# --------------------------------------------------------------------------------------------
# exact samplers
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "gamma",
    [Fraction(0), Fraction(1, 3), Fraction(1), Fraction(5, 2), Fraction(7, 3), 3.75, 2],
)
def test_bernoulli_exp_frequency(gamma):
    n = 20_000
    bits = RandomBits(12345)
    hits = sum(sample_bernoulli_exp(gamma, bits) for _ in range(n))
    p = math.exp(-float(gamma))
    if p == 1.0:
        assert hits == n
        return
    se = math.sqrt(p * (1 - p) / n)
    assert abs(hits / n - p) < 5 * se, (gamma, hits / n, p)


@pytest.mark.parametrize("t", [Fraction(1, 2), Fraction(1), Fraction(37, 10)])
def test_discrete_laplace_pmf(t):
    x = discrete_laplace(t, 20_000, rng=7)
    assert x.dtype == np.int64
    tf = float(t)
    assert chi_square_pvalue(x, lambda v: laplace_pmf(v, tf)) > 1e-4
    # per-value z-scores on the central values
    for v in range(-3, 4):
        p = laplace_pmf(np.array(v), tf)
        freq = np.mean(x == v)
        assert abs(freq - p) < 5 * math.sqrt(p * (1 - p) / x.size), (t, v, freq, p)
    q = math.exp(-1 / tf)
    var = 2 * q / (1 - q) ** 2
    assert abs(x.mean()) < 5 * math.sqrt(var / x.size)


@pytest.mark.parametrize("sigma2", [Fraction(1), Fraction(9, 2)])
def test_discrete_gaussian_variance_and_pmf(sigma2):
    x = discrete_gaussian(sigma2, 20_000, rng=11)
    s2 = float(sigma2)
    support = np.arange(-200, 201)
    pmf = gaussian_pmf(support, s2)
    var = float(np.sum(pmf * support**2))
    m4 = float(np.sum(pmf * support**4))
    assert var == pytest.approx(s2, rel=1e-3)  # the discrete Gaussian's variance is ~sigma2
    se = math.sqrt((m4 - var**2) / x.size)
    assert abs(np.mean(x.astype(float) ** 2) - var) < 5 * se
    assert chi_square_pvalue(x, lambda v: gaussian_pmf(v, s2)) > 1e-4


@pytest.mark.parametrize(
    ("draw", "param"),
    [(discrete_laplace, Fraction(37, 10)), (discrete_gaussian, Fraction(9, 2))],
)
def test_symmetry(draw, param):
    x = draw(param, 20_000, rng=3)
    pos, neg = int(np.sum(x > 0)), int(np.sum(x < 0))
    # P(x > 0) = P(x < 0): the number of positives among the non-zero draws is Binomial(., 1/2)
    m = pos + neg
    assert abs(pos - m / 2) < 5 * math.sqrt(m / 4)
    for v in (1, 2, 3):
        a, b = int(np.sum(x == v)), int(np.sum(x == -v))
        assert abs(a - b) < 5 * math.sqrt(a + b)


def test_seeded_reproducibility():
    a = discrete_laplace(Fraction(37, 10), 500, rng=42)
    b = discrete_laplace(Fraction(37, 10), 500, rng=42)
    c = discrete_laplace(Fraction(37, 10), 500, rng=43)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    g1, g2 = np.random.default_rng(5), np.random.default_rng(5)
    np.testing.assert_array_equal(discrete_gaussian(2, 300, g1), discrete_gaussian(2, 300, g2))
    # a Generator is advanced: two calls on the same one differ
    assert not np.array_equal(discrete_gaussian(2, 300, g1), discrete_gaussian(2, 300, g1))
    m = LaplaceMechanism(1.0, 1.0)
    np.testing.assert_array_equal(m.randomise([0.1, 0.2], 9), m.randomise([0.1, 0.2], 9))
    assert sample_discrete_laplace(3, 8) == sample_discrete_laplace(3, 8)
    assert sample_discrete_gaussian(Fraction(5, 2), 8) == sample_discrete_gaussian(2.5, 8)


def test_huge_scale_uses_exact_big_integers():
    # A scale far beyond 2**64: uniform integers are built from several 64-bit words.
    t = Fraction(10**30, 3)
    draws = [sample_discrete_laplace(t, RandomBits(s)) for s in range(200)]
    assert all(isinstance(d, int) for d in draws)
    mags = np.array([abs(d) for d in draws], dtype=float)
    # |X| is approximately exponential with mean t: the median is ~t ln 2
    assert 0.4 * float(t) < np.median(mags) < 1.1 * float(t)
    assert sample_bernoulli_exp(Fraction(10**40 + 1, 10**40), 0) in (True, False)


def test_random_bits_uniform_is_exact_on_non_power_of_two():
    bits = RandomBits(0)
    n = 30_000
    draws = np.array([bits.uniform(3) for _ in range(n)])
    counts = np.bincount(draws, minlength=3)
    assert set(np.unique(draws).tolist()) == {0, 1, 2}
    assert stats.chisquare(counts).pvalue > 1e-4
    big = 3 * 2**70 + 1
    assert all(0 <= bits.uniform(big) < big for _ in range(100))
    assert bits.bernoulli(0, 5) is False
    assert bits.bernoulli(5, 5) is True


# --------------------------------------------------------------------------------------------
# mechanisms
# --------------------------------------------------------------------------------------------


def test_laplace_mechanism_outputs_are_exact_grid_multiples():
    rng = np.random.default_rng(0)
    values = rng.uniform(-3, 3, size=2000)
    m = LaplaceMechanism(sensitivity=2.0, epsilon=0.5)
    y = m.randomise(values, rng)
    assert y.shape == values.shape and y.dtype == float
    g = Fraction(m.granularity)
    assert all((Fraction(v) / g).denominator == 1 for v in y.tolist())
    # the noise has the right spread: variance ~ 2 scale^2
    assert np.var(y - values) == pytest.approx(2 * m.scale**2, rel=0.1)
    assert np.asarray(m.randomise(1.0, 0)).shape == ()


def test_default_granularity_and_attributes():
    for sens, eps in [(2.0, 0.5), (1.0, 1.0), (0.3, 8.0), (1e6, 0.01)]:
        m = LaplaceMechanism(sens, eps)
        g = m.granularity
        ref = min(sens, sens / eps) * 2.0**-10
        assert math.frexp(g)[0] == 0.5  # a power of two
        assert ref / 2 < g <= ref
        assert m.scale == pytest.approx((sens + g) / eps, rel=1e-15)
        assert m.grid_scale == (Fraction(sens) + Fraction(g)) / (Fraction(eps) * Fraction(g))
        assert m.epsilon == eps
    m = LaplaceMechanism(1.0, 1.0, granularity=0.25)
    assert m.grid_scale == 5


def test_laplace_mechanism_exact_likelihood_ratio_on_outputs():
    """For every output, the exact pmf ratio between neighbours 0 and sensitivity is <= e^eps."""
    sens, eps = 1.0, 0.7
    m = LaplaceMechanism(sens, eps, granularity=2.0**-3)
    t = m.grid_scale
    k0, k1 = 0, round(sens / m.granularity)
    y = m.randomise(np.zeros(2000), 1)
    idx = [int(Fraction(v) / Fraction(m.granularity)) for v in y.tolist()]
    log_ratio = max(Fraction(abs(i - k1) - abs(i - k0)) / t for i in idx)
    assert 0 < log_ratio <= Fraction(eps)


def test_laplace_mechanism_empirical_likelihood_ratio_within_e_eps():
    sens, eps = 1.0, 1.0
    n = 40_000
    m = LaplaceMechanism(sens, eps, granularity=0.25)  # t = 5 grid steps
    y0 = m.randomise(np.zeros(n), 100)
    y1 = m.randomise(np.full(n, sens), 101)
    bound = max_ratio_lower_bound(y0, y1, min_count=200, alpha=1e-4)
    assert bound <= math.exp(eps), bound
    # The same test has teeth: a mechanism calibrated for sensitivity 0.5 but fed inputs at
    # distance 1 has true worst ratio e^(4/3) > e, and the test flags it.
    bad = LaplaceMechanism(0.5, eps, granularity=0.25)  # t = 3 grid steps
    b0 = bad.randomise(np.zeros(n), 100)
    b1 = bad.randomise(np.full(n, sens), 101)
    assert max_ratio_lower_bound(b0, b1, min_count=200, alpha=1e-4) > math.exp(eps)


def test_gaussian_mechanism():
    m = GaussianMechanism(sensitivity_l2=1.0, sigma=2.0, delta=1e-5)
    rho = (1.0 + m.granularity) ** 2 / (2 * 4.0)
    assert m.rho >= rho and m.rho == pytest.approx(rho, rel=1e-14)
    eps = rho + 2 * math.sqrt(rho * math.log(1e5))
    assert m.epsilon >= eps and m.epsilon == pytest.approx(eps, rel=1e-14)
    assert m.scale == 2.0
    y = m.randomise(np.linspace(-1, 1, 5000), 4)
    g = Fraction(m.granularity)
    assert all((Fraction(v) / g).denominator == 1 for v in y.tolist())
    assert np.var(y - np.linspace(-1, 1, 5000)) == pytest.approx(4.0, rel=0.08)
    guarantee = m.guarantee()
    assert isinstance(guarantee, PrivacyGuarantee)
    assert guarantee.delta == 1e-5 and guarantee.epsilon == m.epsilon
    vec = GaussianMechanism(1.0, 2.0, granularity=2.0**-6, dimension=3)
    assert vec.rho >= (1.0 + math.sqrt(3) * 2.0**-6) ** 2 / 8.0
    assert vec.randomise(np.zeros((4, 3)), 0).shape == (4, 3)
    with pytest.raises(ValueError, match="dimension=3"):
        vec.randomise(np.zeros(4), 0)


def test_laplace_guarantee_is_a_privacy_guarantee():
    m = LaplaceMechanism(2.0, 0.5)
    g = m.guarantee()
    assert isinstance(g, PrivacyGuarantee)
    assert (g.epsilon, g.delta, g.differentially_private) == (0.5, 0.0, True)
    assert "sensitivity=2" in g.neighbouring
    assert "Laplace" in g.mechanism and len(g.assumptions) == 3
    local = "local: any two values of one user's reward"
    assert LaplaceMechanism(2.0, 0.5, neighbouring=local).guarantee().neighbouring == local


# --------------------------------------------------------------------------------------------
# Mironov's attack
# --------------------------------------------------------------------------------------------


def brute_force_impossible(y: float, x_alt: float, width: int = 64) -> bool:
    """No float n within `width` floats of fl(y - x_alt) gives fl(x_alt + n) == y."""
    n = np.float64(y) - np.float64(x_alt)
    lo, hi = n, n
    candidates = [n]
    for _ in range(width):
        lo, hi = np.nextafter(lo, -np.inf), np.nextafter(hi, np.inf)
        candidates += [lo, hi]
    return not any(np.float64(x_alt) + c == y for c in candidates)


def test_impossible_under_is_sound_and_matches_brute_force():
    rng = np.random.default_rng(0)
    # sound: an output produced by some float noise is never declared impossible
    for scale in (1e-3, 1.0, 1e3):
        x = rng.normal(scale=10.0, size=5000)
        noise = rng.laplace(scale=scale, size=5000)
        assert not impossible_under(x + noise, x).any()
    # the textbook example: 0.3 is an odd multiple of 2**-54, but 1 + n for n near -0.7 is a
    # multiple of 2**-53, so 0.3 cannot come from input 1 (it can from input 0: n = 0.3)
    assert impossible_under(0.3, 1.0) and not impossible_under(0.3, 0.0)
    assert not impossible_under(0.3 + 2**-54, 1.0)
    # exact: agrees with a brute-force search over nearby noise floats
    ys = np.concatenate([rng.laplace(size=300), rng.uniform(0.2, 0.6, size=300)])
    flags = impossible_under(ys, 1.0)
    assert flags.any() and not flags.all()
    for y, flag in zip(ys.tolist(), flags.tolist(), strict=True):
        assert flag == brute_force_impossible(y, 1.0)


def test_mironov_attack_breaks_naive_laplace_not_the_grid_mechanism():
    n = 50_000
    sens, eps = 1.0, 1.0  # inputs 0 and 1, scale 1
    naive0 = naive_laplace(np.zeros(n), sens / eps, 1)
    naive1 = naive_laplace(np.ones(n), sens / eps, 2)
    leak = mironov_attack_fraction(naive0, 1.0)  # outputs of input 0 that rule out input 1
    false_alarm = mironov_attack_fraction(naive1, 1.0)  # never fires on the true input
    assert false_alarm == 0.0
    advantage = leak - false_alarm
    assert leak > 0.3 and advantage > 0.2, leak
    # The grid mechanism: every output is possible under both inputs.
    m = LaplaceMechanism(sens, eps)
    ours0 = m.randomise(np.zeros(n), 1)
    ours1 = m.randomise(np.ones(n), 2)
    assert mironov_attack_fraction(ours0, 1.0) == 0.0
    assert mironov_attack_fraction(ours1, 0.0) == 0.0
    # ... and provably so: outputs are grid points, which have positive probability under any
    # input because the discrete Laplace has full support on the integers.
    g = Fraction(m.granularity)
    assert all((Fraction(v) / g).denominator == 1 for v in ours0[:2000].tolist())


# --------------------------------------------------------------------------------------------
# bad inputs
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"sensitivity": 1.0, "epsilon": 0.0}, r"epsilon must be in \(0, inf\)"),
        ({"sensitivity": 1.0, "epsilon": -1.0}, r"epsilon must be in \(0, inf\)"),
        ({"sensitivity": 1.0, "epsilon": float("nan")}, r"epsilon must be in \(0, inf\)"),
        ({"sensitivity": 0.0, "epsilon": 1.0}, r"sensitivity must be in \(0, inf\)"),
        ({"sensitivity": float("nan"), "epsilon": 1.0}, r"sensitivity must be in \(0, inf\)"),
        ({"sensitivity": 1.0, "epsilon": 1.0, "granularity": 0.3}, "granularity must be a pos"),
        ({"sensitivity": 1.0, "epsilon": 1.0, "granularity": 0.0}, r"granularity must be in \(0"),
        ({"sensitivity": 1.0, "epsilon": 1.0, "granularity": -0.5}, r"granularity must be in \(0"),
        ({"sensitivity": 1.0, "epsilon": 1.0, "granularity": 2.0**-60}, "granularity=.*too fine"),
    ],
)
def test_laplace_mechanism_rejects_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        LaplaceMechanism(**kwargs)


def test_mechanisms_reject_bad_values_and_types():
    m = LaplaceMechanism(1.0, 1.0, granularity=2.0**-10)
    limit = MAX_GRID_INDEX * 2.0**-10
    with pytest.raises(ValueError, match=r"values must satisfy \|value\| < 2\*\*52 \* granularity"):
        m.randomise([0.0, limit], 0)
    m.randomise([np.nextafter(limit, 0)], 0)  # just inside is fine
    with pytest.raises(ValueError, match="values must be finite"):
        m.randomise([0.0, float("nan")], 0)
    with pytest.raises(TypeError, match="values must be an array of real numbers"):
        m.randomise(["a"], 0)
    with pytest.raises(TypeError, match="epsilon must be a real number"):
        LaplaceMechanism(1.0, "1")
    with pytest.raises(TypeError, match="rng must be"):
        m.randomise([0.0], "seed")
    with pytest.raises(ValueError, match=r"sigma must be in \(0, inf\)"):
        GaussianMechanism(1.0, 0.0)
    with pytest.raises(ValueError, match=r"sensitivity_l2 must be in \(0, inf\)"):
        GaussianMechanism(-1.0, 1.0)
    with pytest.raises(ValueError, match=r"delta must be in \(0, 1\)"):
        GaussianMechanism(1.0, 1.0, delta=1.0)
    with pytest.raises(ValueError, match=r"dimension must be an integer in \[1, inf\]"):
        GaussianMechanism(1.0, 1.0, dimension=0)
    with pytest.raises(ValueError, match="granularity must be a positive power of two"):
        GaussianMechanism(1.0, 1.0, granularity=0.1)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: sample_bernoulli_exp(-1, 0), r"gamma must be a rational number in \[0, inf\)"),
        (lambda: sample_bernoulli_exp(math.inf, 0), r"gamma must be a rational number"),
        (lambda: sample_discrete_laplace(0, 0), r"scale must be a rational number in \(0, inf\)"),
        (lambda: sample_discrete_laplace(Fraction(-1, 2), 0), r"scale must be a rational"),
        (lambda: sample_discrete_gaussian(float("nan"), 0), r"sigma2 must be a rational number"),
        (lambda: discrete_laplace(1, -1, 0), r"size must be an integer in \[0, inf\]"),
        (lambda: discrete_gaussian(1, (2, -1), 0), r"size\[1\] must be an integer in \[0, inf\]"),
        (lambda: naive_laplace([0.0], 0.0, 0), r"scale must be in \(0, inf\)"),
    ],
)
def test_samplers_reject_bad_parameters(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_samplers_reject_wrong_types():
    with pytest.raises(TypeError, match="gamma must be a rational number"):
        sample_bernoulli_exp(True, 0)
    with pytest.raises(TypeError, match="scale must be a rational number"):
        sample_discrete_laplace("2", 0)
    with pytest.raises(TypeError, match="size must be a non-negative int"):
        discrete_laplace(1, 2.5, 0)
