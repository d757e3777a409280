"""FiniteDomainGP(dtype="float32"): the whitened block in single precision.

The tolerances come from the unit roundoff: a posterior computed through a Cholesky factor of
``A = K_tt + diag(noise)`` is accurate to about ``eps * cond(A)`` relative to its scale (Higham,
Accuracy and Stability of Numerical Algorithms, ch. 10), plus ``eps * t`` for the sums of t
terms; :func:`roundoff` is ``4 eps (cond(A) + t)`` times ``max |y - m|`` (mean) or ``k(x, x)``
(variance). Measured on the problems below, float32 against float64 stays below 0.01 of it
with ``eps32``, and the float64 solves of :meth:`FiniteDomainGP.posterior_at` below 0.25 with
``eps64``.
"""

import tracemalloc

import numpy as np
import pytest

from frontierbo.core.exact import cholesky_with_jitter
from frontierbo.core.gp import FiniteDomainGP
from frontierbo.core.gp_ucb import GPUCB, gp_bucb_scores
from frontierbo.core.kernels import (
    Matern32,
    Matern52,
    PrecomputedKernel,
    SquaredExponential,
)
from frontierbo.core.sampling import sample_from_roots

EPS32 = float(np.finfo(np.float32).eps)
EPS64 = float(np.finfo(np.float64).eps)
KERNELS = [SquaredExponential(0.2, 1.0), Matern52(0.2, 1.0), Matern32(np.array([0.3, 0.1]), 2.0)]


def twin_gps(kernel, noise, seed, n=1500, t=120, capacity=64):
    """A float64 and a float32 GP told the same ``t`` noisy values at the same random rows."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, (n, 2))
    f = np.sin(6.0 * X).sum(1)
    gps = [FiniteDomainGP(X, kernel, noise, 0.3, capacity, dtype=d) for d in ("float64", "float32")]
    for i in rng.choice(n, t, replace=False):
        y = f[i] + 0.01 * rng.standard_normal()
        for gp in gps:
            gp.add(int(i), y)
    return gps


def condition(gp) -> float:
    rows = gp.observed_indices
    A = gp.kernel(gp.candidates[rows]) + gp.noise_variance * np.eye(rows.size)
    return float(np.linalg.cond(A))


def roundoff(eps: float, gp) -> float:
    """Relative accuracy ``4 eps (cond(A) + t)`` of a posterior solved through A's factor."""
    return 4.0 * eps * (condition(gp) + gp.t)


@pytest.mark.parametrize("noise", [1e-1, 1e-2, 1e-4, 1e-6])
@pytest.mark.parametrize("kernel", KERNELS, ids=repr)
@pytest.mark.parametrize("seed", [0, 1])
def test_float32_posterior_within_roundoff_bound(kernel, noise, seed):
    gp64, gp32 = twin_gps(kernel, noise, seed)
    tol32, tol64 = roundoff(EPS32, gp64), roundoff(EPS64, gp64)
    scale = np.abs(gp64.observed_values - gp64.prior_mean).max()
    mean_err = np.abs(gp32.mean - gp64.mean).max()
    assert mean_err <= tol32 * scale
    assert np.abs(gp32.variance - gp64.variance).max() <= tol32 * kernel.variance
    assert mean_err > 0.0  # float32 is not float64 in disguise
    assert gp32.mean.dtype == gp32.variance.dtype == np.float64
    assert gp32.log_det == pytest.approx(gp64.log_det, rel=tol32)
    # posterior_at solves in float64 from the t x t factor, which float32 keeps in float64
    rows = np.arange(0, 1500, 7)
    for gp in (gp32, gp64):
        mean, var = gp.posterior_at(rows)
        assert np.abs(mean - gp64.mean[rows]).max() <= tol64 * scale
        assert np.abs(var - gp64.variance[rows]).max() <= tol64 * kernel.variance
    mean_ref, var_ref = gp64.direct_posterior()  # and the incremental float64 GP itself
    assert np.abs(gp64.mean - mean_ref).max() <= tol64 * scale
    assert np.abs(gp64.variance - var_ref).max() <= tol64 * kernel.variance


def test_float32_well_conditioned_is_a_few_ulps():
    """With noise 10 % of the signal (cond(A) ~ 300) both agree to 16 float32 ulps."""
    gp64, gp32 = twin_gps(SquaredExponential(0.2, 1.0), 0.1, seed=3)
    assert condition(gp64) < 1e3
    assert np.abs(gp32.mean - gp64.mean).max() <= 16 * EPS32 * np.abs(gp64.observed_values).max()
    assert np.abs(gp32.variance - gp64.variance).max() <= 16 * EPS32


def test_float32_batch_posteriors_within_bound():
    """covariance, joint_posterior, hallucinated and GP-BUCB read float32 V across its blocks."""
    gp64, gp32 = twin_gps(Matern52(0.2, 1.0), 1e-3, seed=4, t=150, capacity=8)
    tol = roundoff(EPS32, gp64)  # for covariances (scale k = 1)
    tol_mean = tol * max(1.0, np.abs(gp64.observed_values - gp64.prior_mean).max())
    rows, others = np.arange(0, 1500, 37), np.arange(5, 1500, 101)
    np.testing.assert_allclose(
        gp32.covariance(rows, others), gp64.covariance(rows, others), atol=tol
    )
    m32, c32 = gp32.joint_posterior(rows)
    m64, c64 = gp64.joint_posterior(rows)
    np.testing.assert_allclose(c32, c64, atol=tol)
    np.testing.assert_allclose(m32, m64, atol=tol_mean)
    pending = [3, 700, 1200]
    for sub in (None, rows):
        for values in (None, [0.1, -0.4, 0.9]):
            a, b = gp32.hallucinated(sub, pending, values), gp64.hallucinated(sub, pending, values)
            np.testing.assert_allclose(a[0], b[0], atol=2 * tol_mean)
            np.testing.assert_allclose(a[1], b[1], atol=tol)
            assert a[1].min() >= 0.0
    # |sqrt(a) - sqrt(b)| <= sqrt(|a - b|): the std near 0 is only accurate to sqrt(tol)
    scores32, scores64 = gp_bucb_scores(gp32, 2.0, pending), gp_bucb_scores(gp64, 2.0, pending)
    np.testing.assert_allclose(scores32, scores64, atol=tol_mean + 2.0 * np.sqrt(tol))


def test_float32_blocks_match_one_block():
    """Growing V in blocks (capacity 3: blocks of 3, 3, 6, 12, ... rows) gives the posterior of
    one large block; float64's copy-on-grow does not change a bit."""
    kernel = SquaredExponential(0.2, 1.0)
    gp64, gp32 = twin_gps(kernel, 1e-2, seed=5, capacity=3)
    one64, one32 = twin_gps(kernel, 1e-2, seed=5, capacity=512)
    tol = roundoff(EPS32, gp64)
    np.testing.assert_allclose(gp32.mean, one32.mean, atol=tol)
    np.testing.assert_allclose(gp32.variance, one32.variance, atol=tol)
    np.testing.assert_array_equal(gp64.mean, one64.mean)
    np.testing.assert_array_equal(
        gp64.posterior_variance(clip=False), one64.posterior_variance(clip=False)
    )
    assert gp32.block_nbytes * 2 == gp64.block_nbytes == 192 * 1500 * 8  # 120 rows: 3 * 2**6


def test_float32_precomputed_kernel():
    rng = np.random.default_rng(6)
    G = rng.standard_normal((300, 300))
    K = G @ G.T / 300
    gps = [
        FiniteDomainGP(PrecomputedKernel.arms(300), PrecomputedKernel(K), 1e-2, dtype=d)
        for d in ("float64", "float32")
    ]
    for i in rng.choice(300, 90, replace=False):
        for gp in gps:
            gp.add(int(i), float(np.sin(i)))
    tol = roundoff(EPS32, gps[0]) * np.abs(K).max()
    np.testing.assert_allclose(gps[1].mean, gps[0].mean, atol=tol)
    np.testing.assert_allclose(gps[1].variance, gps[0].variance, atol=tol)


def test_float32_variance_clipped_nonnegative():
    """Nearly noiseless observations on a fine grid: the unclipped float32 variance may dip
    below 0 at observed rows; what the GP hands out never does."""
    g = np.linspace(0.0, 1.0, 60)
    X = np.stack(np.meshgrid(g, g, indexing="ij"), -1).reshape(-1, 2)
    gp = FiniteDomainGP(X, SquaredExponential(0.5, 1.0), 1e-10, dtype="float32")
    rng = np.random.default_rng(7)
    for i in rng.choice(X.shape[0], 80, replace=False):
        gp.add(int(i), float(np.cos(3 * X[i]).sum()))
    assert gp.variance.min() >= 0.0
    assert np.isfinite(gp.std).all() and gp.std.min() >= 0.0
    out = np.empty(X.shape[0])
    assert gp.posterior_std(out=out) is out and out.min() >= 0.0


def test_block_memory_is_half():
    X = np.random.default_rng(8).uniform(size=(1000, 3))
    kernel = SquaredExponential(0.3, 1.0)
    gp64 = FiniteDomainGP(X, kernel, 1e-3)
    gp32 = FiniteDomainGP(X, kernel, 1e-3, dtype=np.float32)
    assert gp64.dtype == np.float64 and gp32.dtype == np.float32
    capacity = {0: 64, 1: 64, 64: 64, 65: 128, 128: 128, 129: 256, 199: 256}  # rows, by t
    for t in range(200):
        if t in capacity:
            assert gp32.block_nbytes == 4 * 1000 * capacity[t]
            assert gp64.block_nbytes == 2 * gp32.block_nbytes
        for gp in (gp64, gp32):
            gp.add(t, 0.1 * t)


def test_float32_growth_does_not_copy_the_block():
    """Observation 65 of a capacity-64 GP: float64 copies its block into a twice larger one
    (old + new live together), float32 only allocates a new 64-row block."""
    n = 20_000
    X = np.random.default_rng(9).uniform(size=(n, 2))
    peaks = {}
    for dtype in ("float64", "float32"):
        gp = FiniteDomainGP(X, SquaredExponential(0.3, 1.0), 1e-3, dtype=dtype)
        for t in range(64):
            gp.add(t, 0.0)
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        gp.add(64, 0.0)
        peaks[dtype] = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
    row32, row64 = 4 * n, 8 * n
    assert peaks["float64"] >= 128 * row64  # the new 128-row float64 array
    assert peaks["float32"] <= 64 * row32 + 4 * row64  # one 64-row block + O(n) temporaries


def ucb_lockstep(m: int, seed: int, T: int):
    """The ``gp_ucb_speed`` problem (a GP sample on linspace(-4, 4, m)^2, SE lengthscale 1.25,
    noise variance 1e-5) run by float64 GP-UCB, with a float32 GPUCB told the same rows and
    values. Per round: float32 asked for float64's row; the float32 scores' argmax was it."""
    g = np.linspace(-4.0, 4.0, m)
    X = np.stack(np.meshgrid(g, g, indexing="ij"), -1).reshape(-1, 2)
    kernel, noise = SquaredExponential(1.25, 1.0), 1e-5
    rng = np.random.default_rng(seed)
    L1 = cholesky_with_jitter(SquaredExponential(1.25, 1.0)(g[:, None]))[0]
    f = sample_from_roots([L1, L1], seed=rng)[0]
    a, b = GPUCB(X, kernel, noise), GPUCB(X, kernel, noise, dtype="float32")
    assert a.gp.dtype == np.float64 and b.gp.dtype == np.float32
    i = int(rng.integers(m * m))
    rounds = []
    for r in range(T + 1):
        if r:
            i, j = a.ask(), b.ask()
            raw = b.acquisition(b.t)
            raw[b.gp.observed_indices] = -np.inf
            rounds.append((i == j, i == int(raw.argmax())))
        y = f[i] + np.sqrt(noise) * rng.standard_normal()
        a.tell(i, y)
        b.tell(i, y)
    return np.array(rounds)


def test_gp_ucb_float32_picks_float64_rows():
    """n = 10 000, T = 100, noise 1e-5 (cond(A) ~ 1e8): the float32 scores' own argmax is
    float64's row in 96-98 % of rounds (the grid's neighbours are nearer than the float32
    error); deciding among the top rows in float64 makes it 100 % (issue 58 asks >= 95 %)."""
    rounds = np.concatenate([ucb_lockstep(100, seed, T=100) for seed in range(3)])
    assert rounds[:, 0].mean() >= 0.99
    assert rounds[:, 1].mean() < rounds[:, 0].mean()  # the float64 decision is needed here


def test_gp_ucb_float32_deterministic():
    X = np.random.default_rng(10).uniform(size=(2000, 2))
    f = np.sin(5 * X).sum(1)

    def run():
        opt = GPUCB(X, Matern52(0.3, 1.0), 1e-4, dtype="float32")
        rows = []
        for _ in range(60):
            i = opt.ask()
            rows.append(i)
            opt.tell(i, f[i])
        return rows, opt.gp.mean.copy()

    (r1, m1), (r2, m2) = run(), run()
    assert r1 == r2
    np.testing.assert_array_equal(m1, m2)


@pytest.mark.parametrize("bad", ["float16", "int64", np.complex128, None, "f8,f8", "nonsense"])
def test_dtype_rejected_with_allowed_values(bad):
    X = np.zeros((3, 1))
    with pytest.raises(ValueError, match=r"dtype must be one of \('float64', 'float32'\)"):
        FiniteDomainGP(X, SquaredExponential(), 0.1, dtype=bad)
    with pytest.raises(ValueError, match="dtype must be one of"):
        GPUCB(X, SquaredExponential(), 0.1, dtype=bad)


@pytest.mark.parametrize("good", ["float32", np.float32, np.dtype("f4"), "f4"])
def test_dtype_spellings(good):
    gp = FiniteDomainGP(np.zeros((3, 1)), SquaredExponential(), 0.1, dtype=good)
    assert gp.dtype == np.float32
    assert FiniteDomainGP(np.zeros((3, 1)), SquaredExponential(), 0.1).dtype == np.float64


@pytest.mark.parametrize(
    "options",
    [{}, {"predictive_variance": True}, {"uncertainty": "variance"}, {"exclude_observed": False}],
    ids=repr,
)
def test_gp_ucb_float32_options_pick_float64_rows(options):
    """Every GPUCB option scores the float32 shortlist as float64 would; with no data every
    row ties and both take row 0."""
    X = np.random.default_rng(11).uniform(-2.0, 2.0, (3000, 2))
    f = np.sin(3.0 * X).sum(1)
    kernel = Matern52(0.4, 1.0)
    a = GPUCB(X, kernel, 1e-6, beta=4.0, **options)
    b = GPUCB(X, kernel, 1e-6, beta=4.0, dtype="float32", **options)
    rows64, rows32 = [], []
    for _ in range(60):
        i, j = a.ask(), b.ask()
        rows64.append(i)
        rows32.append(j)
        a.tell(i, f[i])
        b.tell(i, f[i])
    assert rows64[0] == rows32[0] == 0
    assert rows32 == rows64
