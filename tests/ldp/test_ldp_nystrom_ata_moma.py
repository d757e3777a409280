"""Nyström embedding, (LDP-)ATA-GP-UCB and (LDP-)MoMA-GP-UCB: Algorithms 4, 1 and 3 (paper)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import fractional_matrix_power

from frontierbo.core.gp import FiniteDomainGP
from frontierbo.core.kernels import PrecomputedKernel
from frontierbo.ldp.ata_gp_ucb import ATAGPUCB
from frontierbo.ldp.moma_gp_ucb import MoMAGPUCB, median_of_means
from frontierbo.ldp.nystrom import NystromEmbedding, argmax_random_tie
from frontierbo.ldp.parameters import (
    ata_truncation,
    k_mom_orderwise,
    k_mom_theory,
    q_code,
    q_theory,
    rho,
)


def se_gram(n: int, lengthscale: float = 0.2) -> np.ndarray:
    x = np.linspace(0.0, 1.0, n)
    return np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / lengthscale**2)


def exact_gp(K: np.ndarray, lam: float) -> FiniteDomainGP:
    n = K.shape[0]
    return FiniteDomainGP(PrecomputedKernel.arms(n), PrecomputedKernel(K), noise_variance=lam)


def smooth_f(K: np.ndarray, seed: int) -> np.ndarray:
    f = K @ np.random.default_rng(seed).uniform(-1.0, 1.0, K.shape[0])
    return f / np.abs(f).max()


# ------------------------------------------------------------------------------------------------
# Nyström embedding (Algorithm 4): exactness and variance sanity
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lam", [1.0, 0.3])
def test_nystrom_is_exact_when_every_arm_is_in_the_dictionary(lam):
    n = 30
    K = se_gram(n)
    rng = np.random.default_rng(0)
    ny = NystromEmbedding(K, np.inf, lam=lam, seed=1)
    gp = exact_gp(K, lam)
    plays = np.concatenate([rng.permutation(n), rng.integers(0, n, 120)])
    for a in plays:
        ny.update(int(a))
        gp.add(int(a), 0.0)
        assert ny.m == np.count_nonzero(ny.counts)  # q = inf: every distinct arm played
        np.testing.assert_allclose(ny.variance(), gp.variance, atol=1e-8, rtol=0)
    F = ny.features
    assert F.shape == (n, n)
    np.testing.assert_allclose(F @ F.T, K, atol=1e-8, rtol=0)  # Phi^T Phi = K on arms


def test_nystrom_dictionary_size_and_inclusion_probabilities():
    n = 25
    K = se_gram(n)
    rng = np.random.default_rng(3)
    for over in ("arms", "rounds"):
        ny = NystromEmbedding(K, 20.0, dictionary_over=over, seed=4)
        for a in rng.integers(0, 8, 150):  # arms 0..7 only, many repeats
            var_before = ny.variance()
            p = ny.inclusion_probabilities()
            np.testing.assert_allclose(p, np.minimum(20.0 * var_before, 1.0))
            ny.update(int(a))
            assert ny.m <= ny.t
            if over == "arms":
                assert ny.m <= np.count_nonzero(ny.counts)  # m <= number of distinct arms
                assert len(set(ny.dictionary.tolist())) == ny.m
            assert set(ny.dictionary.tolist()) <= set(np.flatnonzero(ny.counts).tolist())
    # each candidate enters independently with probability p = min(q sigma^2, 1)
    ny = NystromEmbedding(K, np.inf, seed=5)  # a fixed state: every played arm in D
    for a in [0, 0, 0, 0, 3, 3, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9]:
        ny.update(a)
    ny.q = 2.0
    p = ny.inclusion_probabilities()
    np.testing.assert_allclose(p, np.minimum(2.0 * ny.variance(), 1.0))
    draws = 4000
    freq = np.zeros(n)
    for _ in range(draws):
        freq[ny._sample_dictionary(p)] += 1
    freq /= draws
    played = np.flatnonzero(ny.counts)
    assert np.all(p[played] < 1.0)  # the test is about genuine Bernoulli draws
    np.testing.assert_allclose(freq[played], p[played], atol=4.5 * 0.5 / np.sqrt(draws))
    assert np.all(freq[np.setdiff1d(np.arange(n), played)] == 0)


@pytest.mark.parametrize("kind", ["duplicates", "low_rank"])
@pytest.mark.parametrize("over", ["arms", "rounds"])
def test_nystrom_near_singular_dictionary_does_not_crash(kind, over):
    if kind == "duplicates":  # identical arms: K_D has identical rows
        x = np.array([0.0, 0.0, 0.0, 0.3, 0.3, 0.6, 1.0, 1.0])
        K = np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / 0.2**2)
    else:  # rank 3 Gram matrix with unit diagonal
        A = np.random.default_rng(0).normal(size=(12, 3))
        A /= np.linalg.norm(A, axis=1, keepdims=True)
        K = A @ A.T
    n = K.shape[0]
    rng = np.random.default_rng(1)
    ny = NystromEmbedding(K, 1e6, dictionary_over=over, seed=2)
    for a in np.concatenate([np.arange(n), rng.integers(0, n, 60)]):
        ny.update(int(a))
        assert np.all(np.isfinite(ny.features)) and np.all(np.isfinite(ny.V))
        assert ny.residual.min() >= -1e-10
        assert ny.variance().min() >= 0.0
    if over == "arms":
        assert ny.m == n
    F = ny.features
    np.testing.assert_allclose(F @ F.T, K, atol=1e-8)  # K K^+ K = K for a singular K too


@pytest.mark.parametrize("q", [0.5, 5.0, 50.0])
def test_nystrom_projection_residual_and_variance_are_nonnegative(q):
    n = 40
    x = np.linspace(0.0, 1.0, n)
    r = np.abs(x[:, None] - x[None, :]) / 0.2
    kernels = [se_gram(n), (1 + np.sqrt(5) * r + 5 * r**2 / 3) * np.exp(-np.sqrt(5) * r)]
    rng = np.random.default_rng(int(q * 10))
    for K in kernels:
        ny = NystromEmbedding(K, q, seed=rng)
        for a in rng.integers(0, n, 200):
            ny.update(int(a))
            F = ny.features
            resid = np.diag(K) - np.einsum("ij,ij->i", F, F)
            assert resid.min() >= -1e-10  # k(x,x) - phi^T phi = ||(I - P) phi(x)||^2
            assert ny.residual.min() >= -1e-10
            assert ny.variance().min() >= 0.0


def test_nystrom_incremental_update_equals_full_rebuild():
    n = 30
    K = se_gram(n)
    rng = np.random.default_rng(7)
    # q = inf: the dictionary only changes when a new arm is played
    ny = NystromEmbedding(K, np.inf, seed=8)
    arms = rng.integers(0, n, 400) % 6  # six arms, many repeats
    for a in arms:
        F_before = ny.features
        changed = ny.update(int(a))
        if not changed and ny.t > 1:
            assert ny.features is F_before  # features of all arms not recomputed
        F, V, var = ny.direct()
        np.testing.assert_allclose(ny.features, F, atol=1e-10, rtol=0)
        np.testing.assert_allclose(ny.V, V, atol=1e-10 * np.abs(V).max(), rtol=0)
        np.testing.assert_allclose(ny.variance(), var, atol=1e-10, rtol=0)
        np.testing.assert_allclose(ny.V_inv @ ny.V, np.eye(ny.m), atol=1e-9)
    assert ny.n_rebuilds == 6  # one per new arm
    assert ny.n_incremental == 400 - 6
    assert ny.n_rebuilds + ny.n_incremental == ny.t
    # a finite q mixes both paths; the incremental state still equals a rebuild
    ny = NystromEmbedding(K, q_code(2000), seed=9)
    for a in rng.integers(0, n, 600) % 10:
        ny.update(int(a))
    assert ny.n_rebuilds > 0 and ny.n_incremental > 0
    _, V, var = ny.direct()
    np.testing.assert_allclose(ny.variance(), var, atol=1e-10, rtol=0)
    np.testing.assert_allclose(ny.V, V, atol=1e-10 * np.abs(V).max(), rtol=0)


def test_nystrom_empty_dictionary_is_zero_dimensional():
    K = se_gram(10)
    ny = NystromEmbedding(K, 0.0, seed=0)  # p = 0 for every candidate
    for a in [1, 2, 2, 5]:
        ny.update(a)
    assert ny.m == 0 and ny.features.shape == (10, 0) and ny.V.shape == (0, 0)
    np.testing.assert_array_equal(ny.variance(), np.diag(K))
    algo = ATAGPUCB(K, 50, B=1.0, v=2.0, q=0.0, seed=0)
    moma = MoMAGPUCB(K, 50, B=1.0, c=2.0, q=0.0, k_mom=5, seed=0)
    for alg in (algo, moma):
        for _ in range(20):
            a = alg.ask()
            alg.tell(a, 1.0)
        assert alg.m == 0
        np.testing.assert_array_equal(alg.mean, 0.0)
        np.testing.assert_array_equal(alg.variance, np.diag(K))


def test_nystrom_variance_ratio_with_theory_q():
    # With the theory q, sigma_tilde^2 / sigma^2 in [1/rho, rho] on all arms in at
    # least 95 of 100 replications (Lemma 19 of [ref7] / Lemma 9).
    n = 20
    K = se_gram(n)
    q = q_theory(1000, 0.1, 0.1)
    lo, hi = 1.0 / rho(0.1), rho(0.1)
    ok = 0
    for rep in range(100):
        rng = np.random.default_rng(rep)
        ny = NystromEmbedding(K, q, seed=rng)
        gp = exact_gp(K, 1.0)
        probs = rng.dirichlet(np.full(n, 0.3))
        for a in rng.choice(n, size=60, p=probs):
            ny.update(int(a))
            gp.add(int(a), 0.0)
        ratio = ny.variance() / gp.variance
        ok += bool(np.all((ratio >= lo) & (ratio <= hi)))
    assert ok >= 95


# ------------------------------------------------------------------------------------------------
# ATA-GP-UCB (Algorithm 1; [ref7] Algorithm 2)
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cover", [True, False])
def test_ata_without_truncation_is_the_gp_posterior_mean(cover):
    n = 30
    K = se_gram(n)
    rng = np.random.default_rng(11)
    algo = ATAGPUCB(K, 300, B=1.0, v=4.0, q=np.inf, b_fixed=np.inf, seed=12)
    gp = exact_gp(K, 1.0)
    first = list(rng.permutation(n)) if cover else []
    for t in range(80):
        a = int(first[t]) if t < len(first) else algo.ask()
        y = float(rng.standard_t(3) * 2.0)
        algo.tell(a, y)
        gp.add(a, y)
    # exact in exact arithmetic whenever D = the arms played; numerically the 1e-10 eigenvalue
    # cut-off of (K_D^{1/2})^+ perturbs unplayed arms by O(sqrt(1e-10)) at most (5e-8 here)
    tol = 1e-8 if cover else 1e-6
    np.testing.assert_allclose(algo.mean, gp.mean, atol=tol, rtol=0)
    np.testing.assert_allclose(algo.variance, gp.variance, atol=tol, rtol=0)
    if cover:
        F = algo.nystrom.features
        np.testing.assert_allclose(F @ F.T, K, atol=1e-8)


@pytest.mark.parametrize("trunc_index", ["t", "tau"])
@pytest.mark.parametrize("profile", ["practical", "theory"])
def test_ata_truncated_estimate_matches_direct_formulas(trunc_index, profile):
    n = 15
    K = se_gram(n, 0.3)
    rng = np.random.default_rng(21)
    v = 1.5
    algo = ATAGPUCB(K, 100, B=1.0, v=v, q=5.0, trunc_index=trunc_index, profile=profile, seed=22)
    arms, ys, ms = [], [], []
    n_truncated = 0
    for t in range(1, 61):
        a = algo.ask()
        y = float(rng.standard_t(2) * 3.0)  # heavy tails: some products are truncated
        algo.tell(a, y)
        arms.append(a)
        ys.append(y)
        ms.append(algo.m)
        # direct implementation of lines 6-10, one column per round
        ny = algo.nystrom
        if ny.m == 0:
            np.testing.assert_array_equal(algo.mean, 0.0)
            continue
        Phi = ny.features[arms]  # (t, m)
        V = Phi.T @ Phi + np.eye(ny.m)
        np.testing.assert_allclose(ny.V, V, atol=1e-9 * np.abs(V).max())
        Vmh = np.real(fractional_matrix_power(V, -0.5))
        U = Vmh @ Phi.T  # rows u_i
        if trunc_index == "t":
            b = np.full(t, ata_truncation(t, ny.m, v, 100, 0.1, 1.0, profile))
        else:
            b = np.array(
                [ata_truncation(s + 1, ms[s], v, 100, 0.1, 1.0, profile) for s in range(t)]
            )
        assert algo.b == pytest.approx(b[-1])
        prod = U * np.array(ys)[None, :]
        keep = np.abs(prod) <= b[None, :]
        n_truncated = int((~keep).sum())
        assert algo.n_truncated == n_truncated
        r_hat = (prod * keep).sum(axis=1)
        theta = Vmh @ r_hat
        np.testing.assert_allclose(algo.theta, theta, atol=1e-8 * max(1.0, np.abs(theta).max()))
        np.testing.assert_allclose(algo.mean, ny.features @ theta, atol=1e-8)
    assert n_truncated > 0


def test_ata_tiny_truncation_level_zeroes_the_mean():
    K = se_gram(10)
    algo = ATAGPUCB(K, 30, B=1.0, v=1.0, b_fixed=1e-12, seed=0)
    for _ in range(10):
        algo.tell(algo.ask(), 5.0)
    np.testing.assert_array_equal(algo.mean, 0.0)


def test_ata_ask_tell_contract_and_parameters():
    K = se_gram(20)
    algo = ATAGPUCB(K, 100, B=1.0, R=1.0, eps_priv=1.0, seed=0)
    assert algo.name == "LDP-ATA-GP-UCB" and algo.v == pytest.approx(34.0)
    assert algo.q == pytest.approx(q_code(100, 0.1))
    assert ATAGPUCB(K, 100, B=1.0, v=4.0).name == "ATA-GP-UCB"
    theory = ATAGPUCB(K, 100, B=1.0, v=4.0, profile="theory")
    assert theory.q == pytest.approx(q_theory(100, 0.1, 0.1))
    rng = np.random.default_rng(0)
    for t in range(1, 31):
        a = algo.ask()
        assert isinstance(a, int) and 0 <= a < 20
        algo.tell(a, float(rng.normal()))
        assert algo.t == t
        assert np.isfinite(algo.width) and algo.width > 0 and algo.beta == algo.width
        assert algo.mean.shape == (20,) and algo.variance.min() >= 0.0
    assert algo.arms_played.shape == (30,) and algo.rewards.shape == (30,)
    # tell accepts any arm (e.g. an initial design), and goes past T (capacity grows)
    algo2 = ATAGPUCB(K, 5, B=1.0, v=4.0, seed=0)
    for a in range(12):
        algo2.tell(a, 0.1 * a)
    assert algo2.t == 12 and algo2.arms_played.tolist() == list(range(12))


def test_ata_rounds_dictionary_runs():
    K = se_gram(12)
    algo = ATAGPUCB(K, 60, B=1.0, v=4.0, dictionary_over="rounds", seed=3)
    rng = np.random.default_rng(3)
    for _ in range(60):
        a = algo.ask()
        algo.tell(a, float(rng.normal()))
    assert algo.m > np.count_nonzero(algo.nystrom.counts)  # duplicate arms in the dictionary
    assert np.all(np.isfinite(algo.mean)) and algo.variance.min() >= 0


# ------------------------------------------------------------------------------------------------
# MoMA-GP-UCB (Algorithm 3): median of means
# ------------------------------------------------------------------------------------------------


def test_moma_median_of_means_rejects_corrupted_rows():
    n = 20
    K = se_gram(n)
    k_mom, N = 11, 12
    corrupted = {1, 4, 8}
    algo = MoMAGPUCB(K, k_mom * N, B=1.0, c=1.0, k_mom=k_mom, beta_scale=0.3, seed=5)
    f = smooth_f(K, 5)
    rng = np.random.default_rng(6)
    for n_epoch in range(1, N + 1):
        a = algo.ask()
        for j in range(k_mom):
            assert algo.ask() == a
            y = f[a] + rng.normal()
            if n_epoch == 3 and j in corrupted:
                y += 1e6
            algo.tell(a, y)
        assert algo.epoch == n_epoch
        if n_epoch >= 3:
            assert algo.k_star not in corrupted
            assert np.all(algo.medians[sorted(corrupted)] > 1e3 * algo.medians[algo.k_star])
        assert np.abs(algo.mean).max() < 10.0


def test_moma_with_one_repetition_is_the_ridge_estimate():
    n = 25
    K = se_gram(n)
    algo = MoMAGPUCB(K, 80, B=1.0, c=1.0, k_mom=1, q=30.0, seed=2)
    f = smooth_f(K, 2)
    rng = np.random.default_rng(3)
    for _ in range(80):
        a = algo.ask()
        algo.tell(a, f[a] + rng.standard_t(3))
        if algo.m == 0:
            continue
        ny = algo.nystrom
        Phi = ny.features[algo.epoch_arms]  # one row per epoch
        y = algo.epoch_rewards[:, 0]
        V = Phi.T @ Phi + np.eye(ny.m)
        theta = np.linalg.solve(V, Phi.T @ y)  # V^{-1} Phi^T y
        assert algo.k_star == 0
        np.testing.assert_allclose(algo.theta[:, 0], theta, atol=1e-9 * max(1, abs(theta).max()))
        np.testing.assert_allclose(algo.mean, ny.features @ theta, atol=1e-9)


def test_moma_distances_match_direct_computation():
    n = 20
    K = se_gram(n)
    algo = MoMAGPUCB(K, 7 * 15, B=1.0, c=3.0, k_mom=7, seed=8)
    rng = np.random.default_rng(9)
    f = smooth_f(K, 9)
    for _ in range(7 * 15):
        a = algo.ask()
        algo.tell(a, f[a] + rng.standard_t(3))
    V, Th = algo.nystrom.V, algo.theta
    D = np.array(
        [
            [np.sqrt((Th[:, j] - Th[:, s]) @ V @ (Th[:, j] - Th[:, s])) for s in range(7)]
            for j in range(7)
        ]
    )
    np.testing.assert_allclose(algo.distances, D, rtol=1e-7, atol=1e-9)
    med = np.array([np.median(np.delete(D[j], j)) for j in range(7)])
    np.testing.assert_allclose(algo.medians, med, rtol=1e-7, atol=1e-9)
    assert algo.k_star == int(np.argmin(algo.medians))
    # even count: np.median averages the two middle values; first argmin on ties
    theta = np.array([[0.0, 1.0, 3.0, 1.0, 0.0]])  # m = 1, V = 1
    k_star, r, D = median_of_means(theta, theta)
    np.testing.assert_allclose(r, [1.0, 1.0, 2.5, 1.0, 1.0])  # 2.5 = (2 + 3) / 2
    assert k_star == 0


def test_moma_ask_tell_contract_epochs_and_leftover_rounds():
    K = se_gram(15)
    T, k_mom = 50, 7  # N = 7 epochs, 1 leftover round
    algo = MoMAGPUCB(K, T, B=1.0, R=1.0, eps_priv=2.0, k_mom=k_mom, seed=1)
    assert algo.name == "LDP-MoMA-GP-UCB" and algo.c == pytest.approx(1.0 + 8.0 * 4 / 4)
    assert algo.N == 7
    with pytest.raises(RuntimeError, match="ask"):
        algo.tell(0, 1.0)
    rng = np.random.default_rng(0)
    played = []
    for _ in range(T + 3):
        a = algo.ask()
        played.append(a)
        algo.tell(a, float(rng.normal()))
    for e in range(7):  # each epoch repeats one arm k_mom times
        assert len(set(played[e * k_mom : (e + 1) * k_mom])) == 1
    assert algo.epoch == 7 and algo.t == T + 3 and algo.n_leftover == 4
    assert set(played[7 * k_mom :]) == {played[7 * k_mom - 1]}  # leftover: keep x_N
    assert algo.epoch_arms.tolist() == played[: 7 * k_mom : k_mom]
    algo2 = MoMAGPUCB(K, T, B=1.0, c=1.0, k_mom=k_mom, seed=1)
    a = algo2.ask()
    with pytest.raises(ValueError, match="epoch's arm"):
        algo2.tell((a + 1) % 15, 0.0)
    # default repetitions by profile
    assert algo.n_epochs == algo.N
    assert MoMAGPUCB(K, 2000, B=1.0, c=1.0).k_mom == k_mom_orderwise(2000, 0.1) == 13
    th = MoMAGPUCB(K, 2000, B=1.0, c=1.0, profile="theory")
    assert th.k_mom == k_mom_theory(2000, 0.1)
    n_epochs = 2000 // th.k_mom
    assert n_epochs == th.N
    assert th.q == pytest.approx(q_theory(2000, 0.1, 0.1))


# ------------------------------------------------------------------------------------------------
# Both algorithms: performance, determinism, ties, bad inputs
# ------------------------------------------------------------------------------------------------


def _run(algo, f, T, rng, noise):
    regret = 0.0
    arms = []
    for _ in range(T):
        a = algo.ask()
        eta = rng.standard_t(3) if noise == "t" else 0.5 * rng.normal()
        algo.tell(a, f[a] + eta)
        regret += f.max() - f[a]
        arms.append(a)
    return regret / T, arms


@pytest.mark.parametrize("noise", ["t", "gauss"])
def test_both_algorithms_beat_uniform_play(noise):
    n, T = 30, 600
    K = se_gram(n)
    res = {"ATA": [], "MoMA": [], "uniform": []}
    for seed in range(3):
        f = smooth_f(K, seed)
        res["uniform"].append(np.mean(f.max() - f))
        ata = ATAGPUCB(K, T, B=1.0, v=4.0, beta_scale=0.1, seed=seed)
        moma = MoMAGPUCB(K, T, B=1.0, c=3.0, beta_scale=0.1, seed=seed)
        res["ATA"].append(_run(ata, f, T, np.random.default_rng(100 + seed), noise)[0])
        res["MoMA"].append(_run(moma, f, T, np.random.default_rng(100 + seed), noise)[0])
    uniform = np.mean(res["uniform"])
    assert np.mean(res["ATA"]) < 0.5 * uniform
    assert np.mean(res["MoMA"]) < 0.5 * uniform


@pytest.mark.parametrize("cls", [ATAGPUCB, MoMAGPUCB])
def test_determinism_under_a_fixed_seed(cls):
    K = se_gram(20)
    f = smooth_f(K, 4)
    kw = dict(B=1.0, R=1.0, eps_priv=1.0, beta_scale=0.1, k_mom=5) if cls is MoMAGPUCB else {}
    kw = kw or dict(B=1.0, R=1.0, eps_priv=1.0, beta_scale=0.1)
    runs = [
        _run(cls(K, 200, seed=17, **kw), f, 200, np.random.default_rng(1), "t") for _ in range(2)
    ]
    assert runs[0][1] == runs[1][1]
    a, b = cls(K, 200, seed=17, **kw), cls(K, 200, seed=17, **kw)
    _run(a, f, 200, np.random.default_rng(2), "gauss")
    _run(b, f, 200, np.random.default_rng(2), "gauss")
    np.testing.assert_array_equal(a.mean, b.mean)
    np.testing.assert_array_equal(a.variance, b.variance)


def test_first_arm_and_ties_are_uniformly_random():
    K = se_gram(10)
    first = {ATAGPUCB(K, 10, B=1.0, v=1.0, seed=s).ask() for s in range(60)}
    assert len(first) >= 8
    rng = np.random.default_rng(0)
    scores = np.array([1.0, 3.0, 3.0, 0.0, 3.0])
    picks = np.bincount([argmax_random_tie(scores, rng) for _ in range(3000)], minlength=5)
    assert picks[0] == picks[3] == 0
    np.testing.assert_allclose(picks[[1, 2, 4]] / 3000, 1 / 3, atol=0.04)


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        (dict(B=1.0), ValueError, "v .*required"),
        (dict(B=1.0, eps_priv=1.0), ValueError, "R "),
        (dict(B=1.0, R=1.0, eps_priv=1.0, alpha=0.5), ValueError, "alpha"),
        (dict(B=1.0, R=1.0, eps_priv=-1.0), ValueError, "eps_priv"),
        (dict(B=-1.0, v=1.0), ValueError, "B"),
        (dict(B=1.0, v=0.0), ValueError, "v"),
        (dict(B=1.0, v=1.0, profile="fast"), ValueError, "profile"),
        (dict(B=1.0, v=1.0, beta_scale=-0.1), ValueError, "beta_scale"),
        (dict(B=1.0, v=1.0, lam=0.0), ValueError, "lam"),
        (dict(B=1.0, v=1.0, delta=1.0), ValueError, "delta"),
        (dict(B=1.0, v=1.0, eps_nys=1.0), ValueError, "eps_nys"),
        (dict(B=1.0, v=1.0, q=-1.0), ValueError, "q"),
        (dict(B=1.0, v=1.0, dictionary_over="users"), ValueError, "dictionary_over"),
        (dict(B=1.0, v=1.0, trunc_index="s"), ValueError, "trunc_index"),
        (dict(B=1.0, v=1.0, b_fixed=0.0), ValueError, "b_fixed"),
        (dict(B=1.0, v=1.0, seed=-3), ValueError, "seed"),
    ],
)
def test_ata_bad_inputs_are_named(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        ATAGPUCB(se_gram(5), 10, **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        (dict(B=1.0), ValueError, "c .*required"),
        (dict(B=1.0, c=1.0, k_mom=0), ValueError, "k_mom"),
        (dict(B=1.0, c=1.0, k_mom=11), ValueError, "k_mom"),
        (dict(B=1.0, c=1.0, k_mom=2.5), TypeError, "k_mom"),
        (dict(B=1.0, c=1.0, profile="theory"), ValueError, "k_mom"),  # 24 ln(...) > T = 10
    ],
)
def test_moma_bad_inputs_are_named(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        MoMAGPUCB(se_gram(5), 10, **kwargs)


def test_bad_matrix_horizon_and_tell_inputs_are_named():
    with pytest.raises(ValueError, match="K"):
        ATAGPUCB(np.ones((3, 4)), 10, B=1.0, v=1.0)
    with pytest.raises(ValueError, match="K"):
        NystromEmbedding(np.array([[1.0, 2.0], [2.0, 1.0]]), 1.0)  # not PSD
    with pytest.raises(ValueError, match="T"):
        MoMAGPUCB(se_gram(4), 0, B=1.0, c=1.0)
    with pytest.raises(ValueError, match="lam"):
        NystromEmbedding(se_gram(4), 1.0, lam=-1.0)
    with pytest.raises(ValueError, match="eig_rtol"):
        NystromEmbedding(se_gram(4), 1.0, eig_rtol=2.0)
    algo = ATAGPUCB(se_gram(4), 10, B=1.0, v=1.0)
    with pytest.raises(ValueError, match="arm"):
        algo.tell(4, 0.0)
    with pytest.raises(ValueError, match="reward"):
        algo.tell(0, float("nan"))
    with pytest.raises(TypeError, match="arm"):
        algo.tell(1.5, 0.0)
    with pytest.raises(ValueError, match="arm"):
        NystromEmbedding(se_gram(4), 1.0).update(-1)
