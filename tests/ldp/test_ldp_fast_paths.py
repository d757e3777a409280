"""ATA-GP-UCB's fast paths against their references (issue 10 item 4): line 8's truncated sums
from the per-arm reward index vs the direct pass over the history, V^{-1/2} vs SciPy's matrix
power, and the Nyström embedding cache vs recomputing the features."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.linalg import fractional_matrix_power

from frontierbo.ldp.ata_gp_ucb import ATAGPUCB, ArmRewardIndex, inverse_sqrt
from frontierbo.ldp.nystrom import NystromEmbedding


def se_gram(n: int, lengthscale: float = 0.2) -> np.ndarray:
    x = np.linspace(0.0, 1.0, n)
    return np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / lengthscale**2)


def direct_sums(arms, ys, U, b):
    """Line 8 as written: one product per (coordinate, round)."""
    P = U[np.asarray(arms)] * np.asarray(ys)[:, None]
    keep = np.abs(P) <= b
    return (P * keep).sum(axis=0), int(keep.sum())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_reward_index_truncated_sums_equal_the_direct_pass(seed):
    rng = np.random.default_rng(seed)
    n, m = 12, 5
    index = ArmRewardIndex(n, capacity=4)  # grown by doubling along the way
    arms, ys = [], []
    for t in range(1, 301):
        a = int(rng.integers(n - 2))  # the last two arms are never played
        # ties in |y| (repeated values, +-y) and zeros on purpose
        y = float(rng.choice([0.0, 1.5, -1.5, 3.0])) if t % 7 == 0 else float(rng.laplace(0, 2))
        index.add(a, y)
        arms.append(a)
        ys.append(y)
        if t % 10:
            continue
        U = rng.standard_normal((n, m)) * rng.choice([0.01, 0.3, 1.0])
        U[rng.integers(n), rng.integers(m)] = 0.0  # u = 0: every product is 0 and kept
        for b in (0.0, 0.05, 0.7, 5.0, math.inf):
            r, kept = index.truncated_sums(U, b)
            r_ref, kept_ref = direct_sums(arms, ys, U, b)
            assert kept == kept_ref
            np.testing.assert_allclose(r, r_ref, rtol=1e-12, atol=1e-12 * max(1.0, t))


def test_reward_index_boundary_is_inclusive():
    index = ArmRewardIndex(3)
    for y in (1.0, -2.0, 2.0, 4.0):
        index.add(1, y)
    U = np.zeros((3, 1))
    U[1, 0] = 0.5  # products 0.5, -1, 1, 2
    r, kept = index.truncated_sums(U, 1.0)  # |u y| <= 1 keeps the first three
    assert kept == 3
    assert r[0] == pytest.approx(0.5 * (1.0 - 2.0 + 2.0))


def test_ata_fast_sums_match_the_reference_every_round():
    n = 20
    K = se_gram(n, 0.15)
    rng = np.random.default_rng(5)
    algo = ATAGPUCB(K, 400, B=1.0, v=2.0, q=20.0, seed=6)
    truncated = 0
    for _ in range(250):
        a = algo.ask()
        algo.tell(a, float(rng.standard_t(2) * 2.0))
        if algo.m == 0:
            continue
        Ut = algo.nystrom.features @ inverse_sqrt(algo.nystrom.V)
        r_ref, kept_ref = algo.truncated_sums_reference(Ut, algo.b)
        assert algo.n_truncated == algo.t * algo.m - kept_ref
        np.testing.assert_allclose(
            algo.theta, inverse_sqrt(algo.nystrom.V) @ r_ref, rtol=1e-9, atol=1e-10
        )
        truncated += algo.n_truncated
    assert truncated > 0  # the truncation was exercised


@pytest.mark.parametrize("m", [1, 4, 30])
def test_inverse_sqrt_is_the_symmetric_root(m):
    rng = np.random.default_rng(m)
    A = rng.standard_normal((m, 2 * m))
    V = A @ A.T + np.eye(m)
    S = inverse_sqrt(V)
    np.testing.assert_allclose(S, S.T, atol=1e-12)
    np.testing.assert_allclose(S @ V @ S, np.eye(m), atol=1e-10)
    np.testing.assert_allclose(S, np.real(fractional_matrix_power(V, -0.5)), atol=1e-10)


def test_embedding_cache_is_bit_identical_and_bounded():
    K = se_gram(25, 0.1)
    # three arms played often: all have p < 1, so the dictionary takes up to 8 values
    ny = NystromEmbedding(K, 20.0, seed=0)
    ny.cache_size = 4
    rng = np.random.default_rng(1)
    for _ in range(400):
        changed = ny.update(int(rng.integers(3)))
        if changed and ny.m:
            F, resid = ny._embed(ny.dictionary)  # recomputed from scratch
            np.testing.assert_array_equal(ny.features, F)
            np.testing.assert_array_equal(ny.residual, resid)
        assert len(ny._cache) <= 4
    assert ny.n_cache_hits > 0
    assert not ny.features.flags.writeable  # shared with the cache: read-only


def test_embedding_without_cache_gives_the_same_run():
    K = se_gram(25, 0.1)
    runs = []
    for size in (0, 64):
        ny = NystromEmbedding(K, 20.0, seed=0)
        ny.cache_size = size
        rng = np.random.default_rng(1)
        for _ in range(300):
            ny.update(int(rng.integers(3)))
        runs.append((ny.dictionary.copy(), ny.variance(), ny.n_cache_hits))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    np.testing.assert_array_equal(runs[0][1], runs[1][1])
    assert runs[0][2] == 0 and runs[1][2] > 0


@pytest.mark.parametrize("private", [False, True])
def test_tgp_regrouped_rows_give_the_per_round_posterior(private):
    from frontierbo.ldp.tgp_ucb import TGPUCB

    K = se_gram(12, 0.25)
    kw = {"B": 1.0, "R": 1.0, "eps_priv": 1.0} if private else {"B": 1.0, "v": 2.0}
    fast = TGPUCB(K, 400, lam=0.7, seed=0, regroup_every=5, profile="theory", **kw)
    ref = TGPUCB(K, 400, lam=0.7, seed=0, regroup_every=0, profile="theory", **kw)
    rng = np.random.default_rng(3)
    for t in range(1, 301):
        a = int(rng.integers(8))  # the same arms for both: repeats of every arm
        y = float(rng.standard_t(3) * 3.0)  # some rewards are truncated
        fast.tell(a, y)
        ref.tell(a, y)
        if t % 25 == 0:
            np.testing.assert_allclose(fast.mean, ref.mean, rtol=0, atol=1e-9)
            np.testing.assert_allclose(fast.std, ref.std, rtol=0, atol=1e-9)
            assert fast.gamma == pytest.approx(ref.gamma, rel=1e-9)
            assert fast.width(t + 1) == pytest.approx(ref.width(t + 1), rel=1e-9)
    assert fast.n_truncated == ref.n_truncated > 0
    assert fast.gp.t <= 8 + 5 and ref.gp.t == 300  # regrouped: few rows
