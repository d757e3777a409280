"""Q-GP-UCB, Q-LinUCB, the classical baselines, the oracles and the stage loop (paper §4-§5)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from frontierbo.quantum.linear import LinUCB, QLinUCB
from frontierbo.quantum.loop import SinglePullOracle, StagedRun, run_stages
from frontierbo.quantum.oracles import (
    ClassicalMonteCarloOracle,
    IQAEOracle,
    TheoryOracle,
    fallback_queries,
    lemma1_queries,
)
from frontierbo.quantum.q_gp_ucb import QGPUCB, ClassicalGPUCB
from frontierbo.quantum.rewards import BernoulliReward, GaussianReward


def _features(n=12, M=7, seed=0):
    rng = np.random.default_rng(seed)
    Phi = rng.normal(size=(n, M))
    return Phi / np.linalg.norm(Phi, axis=1, keepdims=True)  # k(x, x) = 1


def _feature_form(Phi, idx, y, eps, lam, exponent=2):
    """App. A eq. (6): V = lam I + Phi^T W Phi; mu = phi^T V^-1 sum phi y / eps^exponent."""
    X = Phi[idx]
    w = 1.0 / np.asarray(eps) ** 2
    V = lam * np.eye(Phi.shape[1]) + X.T @ (w[:, None] * X)
    b = X.T @ (np.asarray(y) / np.asarray(eps) ** exponent)
    mean = Phi @ np.linalg.solve(V, b)
    var = lam * np.einsum("ij,ji->i", Phi, np.linalg.solve(V, Phi.T))
    return mean, var


@pytest.mark.parametrize("lam", [1.0, 1.0002])
@pytest.mark.parametrize("weighting", ["paper", "reference"])
def test_kernel_form_equals_feature_form(lam, weighting):
    Phi = _features()
    rng = np.random.default_rng(1)
    idx = rng.integers(0, 12, size=9)
    eps = rng.uniform(0.01, 1.0, size=9)
    y = rng.normal(size=9)
    algo = QGPUCB(Phi @ Phi.T, lam=lam, weighting=weighting)
    for i, yi, ei in zip(idx, y, eps, strict=True):
        algo.observe(int(i), yi, ei)
    mean, var = _feature_form(Phi, idx, y, eps, lam, exponent=2 if weighting == "paper" else 3)
    np.testing.assert_allclose(algo.mean, mean, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(algo.std**2, var, rtol=1e-8, atol=1e-8)


def test_weighted_krr_minimiser_and_reduction_to_plain_gp():
    Phi = _features(M=5)
    rng = np.random.default_rng(2)
    idx, eps, y = rng.integers(0, 12, 6), rng.uniform(0.05, 1, 6), rng.normal(size=6)
    algo = QGPUCB(Phi @ Phi.T)
    for i, yi, ei in zip(idx, y, eps, strict=True):
        algo.observe(int(i), yi, ei)
    # argmin_theta sum eps^-2 (y - phi theta)^2 + ||theta||^2 as an augmented least squares
    A = np.vstack([Phi[idx] / eps[:, None], np.eye(5)])
    theta = np.linalg.lstsq(A, np.concatenate([y / eps, np.zeros(5)]), rcond=None)[0]
    np.testing.assert_allclose(algo.mean, Phi @ theta, atol=1e-9)
    # all eps = 1: the plain GP posterior of eq. (1) with noise lambda = 1
    classic = ClassicalGPUCB(Phi @ Phi.T)
    for i, yi in zip(idx, y, strict=True):
        classic.tell(int(i), yi)
    K = Phi @ Phi.T
    A1 = K[np.ix_(idx, idx)] + np.eye(6)
    mean = K[:, idx] @ np.linalg.solve(A1, y)
    var = 1.0 - np.einsum("ij,ji->i", K[:, idx], np.linalg.solve(A1, K[idx, :]))
    np.testing.assert_allclose(classic.mean, mean, atol=1e-10)
    np.testing.assert_allclose(classic.std**2, var, atol=1e-10)


def test_variance_does_not_depend_on_observations():
    Phi = _features()
    a, b = QGPUCB(Phi @ Phi.T), QGPUCB(Phi @ Phi.T)
    for i, e in [(3, 0.5), (7, 0.2), (3, 0.1)]:
        a.observe(i, 1.0, e)
        b.observe(i, -42.0, e)
    np.testing.assert_array_equal(a.std, b.std)
    assert not np.allclose(a.mean, b.mean)


@pytest.mark.parametrize("lam", [1.0, 1.0002])
def test_determinant_doubles_every_stage(lam):
    """App. D: eps_s = sigma_{s-1}(x_s)/sqrt(lam) => det V_s = 2 det V_{s-1}, gamma_s = s/2 ln 2."""
    Phi = _features(n=15, M=40)
    algo = QGPUCB(Phi @ Phi.T, lam=lam, width="theory", B=1.0, delta=0.1)
    rng = np.random.default_rng(3)
    for s in range(1, 31):
        i = int(rng.integers(0, 15))  # any arm sequence, not only UCB's
        before = algo.std[i] ** 2
        eps = algo.std[i] / math.sqrt(lam)
        assert eps <= 1.0 + 1e-12
        assert algo.width() == pytest.approx(
            1.0 + math.sqrt((s - 1) * math.log(2) + 2 + 2 * math.log(2 / 0.1)), rel=1e-8
        )
        algo.tell(i, 0.3, eps)
        assert algo.information_gain == pytest.approx(s / 2 * math.log(2), rel=1e-8)
        assert algo.std[i] ** 2 == pytest.approx(before / 2, rel=1e-7)


def test_ask_returns_ucb_argmax_and_accuracy():
    Phi = _features()
    algo = QGPUCB(Phi @ Phi.T, width=1.5)
    algo.observe(2, 0.9, 0.3)
    algo.observe(5, -0.4, 0.5)
    stage = algo.ask()
    ucb = algo.mean + 1.5 * algo.std
    assert stage.index == int(np.argmax(ucb))
    assert stage.accuracy == pytest.approx(algo.std[stage.index])
    assert stage.width == 1.5
    assert QGPUCB(Phi @ Phi.T, width="log").width() == 1.0  # 1 + ln n with n = 0 observations


def test_extra_points_are_observed_but_never_chosen():
    Phi = _features(n=6)
    algo = QGPUCB(Phi @ Phi.T, n_arms=5, width=100.0)
    algo.observe(5, 10.0, 1.0)
    for _ in range(20):
        s = algo.ask()
        assert 0 <= s.index < 5
        algo.tell(s.index, 0.0, s.accuracy)


def test_q_linucb_is_q_gp_ucb_with_the_linear_kernel():
    rng = np.random.default_rng(4)
    X = rng.uniform(0, 1, size=(10, 3))
    algo = QLinUCB(X, width="theory", S=2.0, delta=0.1)
    idx, ys, epss = [], [], []
    for _ in range(6):
        stage = algo.ask()
        V = np.eye(3) + sum((X[i, :, None] * X[i]) / e**2 for i, e in zip(idx, epss, strict=True))
        assert stage.accuracy == pytest.approx(
            math.sqrt(X[stage.index] @ np.linalg.solve(V, X[stage.index]))
        )
        s_inv = sum(1 / e**2 for e in epss)
        rho = math.sqrt(2 * 3 * math.log((1 + algo.L**2 * s_inv) / 0.1)) + 2.0
        assert stage.width == pytest.approx(rho)
        y = float(X[stage.index] @ [0.2, -0.1, 0.4] + rng.normal(0, 0.1))
        algo.tell(stage.index, y, stage.accuracy)
        idx.append(stage.index), ys.append(y), epss.append(stage.accuracy)
    w = 1 / np.array(epss) ** 2
    V = np.eye(3) + X[idx].T @ (w[:, None] * X[idx])
    theta = np.linalg.solve(V, X[idx].T @ (w * np.array(ys)))
    np.testing.assert_allclose(algo.mean, X @ theta, atol=1e-9)


def test_linucb_oful_radius():
    X = np.random.default_rng(5).uniform(0, 1, size=(8, 2))
    algo = LinUCB(X, width="theory", R=0.5, S=1.0, delta=0.05)
    for t in range(4):
        s = algo.ask()
        expect = 0.5 * math.sqrt(2 * math.log((1 + t * algo.L**2) / 0.05)) + 1.0
        assert s.width == pytest.approx(expect)
        algo.tell(s.index, 0.1)


def test_bad_arguments_name_the_parameter():
    K = np.eye(3)
    with pytest.raises(ValueError, match="weighting"):
        QGPUCB(K, weighting="cubic")
    with pytest.raises(ValueError, match="width must be one of"):
        QGPUCB(K, width="srinivas")
    with pytest.raises(ValueError, match="width"):
        ClassicalGPUCB(K, width=-1.0)
    with pytest.raises(ValueError, match="lam"):
        QGPUCB(K, lam=0)
    with pytest.raises(ValueError, match="n_arms"):
        QGPUCB(K, n_arms=4)
    with pytest.raises(ValueError, match="accuracy"):
        QGPUCB(K).observe(0, 1.0, 0.0)
    with pytest.raises(ValueError, match="gram"):
        QGPUCB(np.full((2, 2), np.nan))


# ------------------------------------------------------------------------------ oracles
def test_rewards_and_encodings():
    g = GaussianReward(0.85, 0.3)
    values, probs = g.support()
    assert values.size == 64 and probs.sum() == pytest.approx(1.0)
    assert probs @ values == pytest.approx(0.85, abs=1e-12)
    exact, ref = g.encoding("exact"), g.encoding("reference")
    assert exact.amplitude == pytest.approx(0.5, abs=1e-12)
    assert exact.to_reward(0.5) == pytest.approx(0.85)
    assert exact.accuracy_a(0.18) == pytest.approx(0.1)  # eps / (6 sigma)
    assert ref.to_reward(0.5) == pytest.approx(0.85)
    assert ref.to_reward(0.6) - 0.85 == pytest.approx(12 * 0.3 / math.pi * 0.1)
    assert ref.accuracy_a(0.09) == pytest.approx(0.1)  # eps / (3 sigma)
    assert ref.accuracy_a(10.0) == 0.5  # clipped as the reference code
    assert BernoulliReward(0.3).encoding().amplitude == 0.3
    with pytest.raises(ValueError, match="p"):
        BernoulliReward(1.5)
    with pytest.raises(ValueError, match="sigma"):
        GaussianReward(0.0, 0.0)
    with pytest.raises(ValueError, match="encoding"):
        g.encoding("linear")


def test_fallback_and_lemma1_counts():
    # Fallback (alpha = 0.05):
    # docs/decisions.md#quantum-bo-fallback-query-count-when-iqae-uses-no-grover-power
    # Line-4 counts: Algorithm 1, line 4 and Lemma 1 of the paper
    for eps_a, n in [(0.5, 6), (0.3, 11), (0.1, 39), (0.05, 82), (0.01, 443), (0.001, 4762)]:
        assert fallback_queries(eps_a, 0.05) == n
    assert lemma1_queries(0.05, 0.1 / 200, C=2) == pytest.approx(304.04, abs=0.01)
    assert lemma1_queries(0.05, 0.1 / 200, C=2, sigma=0.5) == pytest.approx(6428.51, abs=0.01)
    with pytest.raises(ValueError, match="4 sigma"):
        lemma1_queries(2.5, 0.1, sigma=0.5)


@pytest.mark.parametrize(
    ("reward", "encoding", "scale"),
    [
        (BernoulliReward(0.3), "exact", 1.0),
        (BernoulliReward(0.9), "exact", 1.0),
        (GaussianReward(0.6, 0.3), "exact", 1.0),
        (GaussianReward(0.6, 0.4), "reference", 4 / math.pi),
    ],
)
def test_iqae_oracle_error_within_accuracy_w_p_1_minus_delta(reward, encoding, scale):
    oracle = IQAEOracle(7, encoding=encoding)
    eps, delta, n = 0.02, 0.05, 400
    errors = np.array([oracle.estimate(reward, eps, delta)[0] - reward.mean for _ in range(n)])
    failures = int(np.sum(np.abs(errors) > scale * eps + 1e-12))
    assert failures <= 30  # binomial(400, 0.05) exceeds 30 with probability < 0.02


def test_quantum_queries_grow_like_one_over_eps_classical_like_one_over_eps_squared():
    eps = np.array([0.05, 0.02, 0.01, 0.005, 0.002, 0.001])
    q_oracle, c_oracle = IQAEOracle(11), ClassicalMonteCarloOracle(11)
    reward = BernoulliReward(0.3)
    q = [np.mean([q_oracle.estimate(reward, e, 0.05)[1] for _ in range(60)]) for e in eps]
    c = [c_oracle.estimate(reward, e, 0.05)[1] for e in eps]
    q_slope = -np.polyfit(np.log(eps), np.log(q), 1)[0]
    c_slope = -np.polyfit(np.log(eps), np.log(c), 1)[0]
    # Lemma 1 of the paper; band: docs/decisions.md#quantum-bo-iqae-query-scaling-test-grid
    assert 0.9 <= q_slope <= 1.4
    assert c_slope == pytest.approx(2.0, abs=0.01)


def test_classical_monte_carlo_sample_size_and_coverage():
    assert ClassicalMonteCarloOracle.sample_size(BernoulliReward(0.5), 0.1, 0.05) == math.ceil(
        math.log(40) / 0.02
    )
    assert ClassicalMonteCarloOracle.sample_size(GaussianReward(0, 0.3), 0.1, 0.05) == math.ceil(
        2 * 0.09 * math.log(40) / 0.01
    )
    oracle = ClassicalMonteCarloOracle(3)
    errs = [abs(oracle.estimate(GaussianReward(1.0, 0.3), 0.05, 0.1)[0] - 1.0) for _ in range(500)]
    assert np.mean(np.array(errs) > 0.05) <= 0.1
    with pytest.raises(ValueError, match="delta"):
        oracle.estimate(BernoulliReward(0.5), 0.1, 1.0)
    with pytest.raises(ValueError, match="accuracy"):
        IQAEOracle(0).estimate(BernoulliReward(0.5), -0.1, 0.1)


# ------------------------------------------------------------------------------ loop
def test_regret_accounting_per_query():
    run = StagedRun()
    run.append(9, 0.5, 6, 1.0, 0.2, float("nan"))
    run.append(1, 0.25, 4, 0.3, 0.2, 1.0)
    run.append(0, 0.0, 100, 0.01, 1.0, 1.0)
    curve = run.cumulative_regret(12)
    np.testing.assert_allclose(curve, np.cumsum([0.5] * 6 + [0.25] * 4 + [0.0] * 2))
    np.testing.assert_allclose(run.regret_at([0, 6, 10, 110, 111]), [0, 3, 4, 4, np.nan])
    assert run.total_queries == 110


def _toy_problem():
    f = np.array([0.2, 0.9, 0.5, 0.85, 0.1, 0.4])
    x = np.linspace(0, 1, 6)[:, None]
    K = np.exp(-((x - x.T) ** 2) / (2 * 0.3**2))
    return f, K


def test_run_stages_spends_the_budget_and_finds_the_optimum():
    f, K = _toy_problem()
    algo = QGPUCB(K, width=1.0)
    run = run_stages(algo, lambda i: GaussianReward(f[i], 0.3), f, IQAEOracle(1), 5000, delta=0.05)
    q = np.asarray(run.queries)
    assert q.sum() >= 5000 and q[:-1].sum() < 5000  # the last stage started below the budget
    assert run.points[-1] == 1
    gaps = f.max() - f[run.points]
    assert run.cumulative_regret(5000)[-1] == pytest.approx(np.sum(np.repeat(gaps, q)[:5000]))


def test_theory_mode_respects_line_5_and_lemma_2():
    f, K = _toy_problem()
    T, delta, m_bar = 20_000, 0.1, 20_000
    algo = QGPUCB(K, lam=1 + 2 / T, width="theory", B=1.0, delta=delta)
    oracle = TheoryOracle(0, C=2.0)
    run = run_stages(algo, lambda i: BernoulliReward(f[i]), f, oracle, T, delta=delta / (2 * m_bar))
    assert run.total_queries <= T  # line 5: never exceeds the budget
    assert np.sum(1 / np.asarray(run.accuracies) ** 2) <= T**2  # Lemma 2
    errors = np.abs(np.asarray(run.estimates) - f[run.points])
    assert np.all(errors <= np.asarray(run.accuracies) + 1e-12)  # failure prob. delta/(2 m_bar)


def test_same_seed_same_run_and_classical_single_pull():
    f, K = _toy_problem()

    def once(seed):
        return run_stages(QGPUCB(K), lambda i: BernoulliReward(f[i]), f, IQAEOracle(seed), 3000)

    a, b, c = once(5), once(5), once(6)
    assert a.points == b.points and a.queries == b.queries and a.estimates == b.estimates
    assert a.estimates != c.estimates
    classic = run_stages(
        ClassicalGPUCB(K, width=1.0), lambda i: BernoulliReward(f[i]), f, SinglePullOracle(0), 300
    )
    assert classic.num_stages == 300 and set(classic.estimates) <= {0.0, 1.0}
