"""Exactness checks of the ε-Macro-BO planners (thesis Chapter 4) on tiny domain doubles."""

from __future__ import annotations

import copy
import logging
import math

import numpy as np
import pytest
from doubles import TorusGrid, expected_max_of_lines, make_gp

from frontierbo.macro.baselines import db_gp_ucb
from frontierbo.macro.epsilon_macro_bo import (
    EpsilonMacroBO,
    KeyedNormalSampler,
    _Evaluation,
    exhaustive_nodes,
    run_nodes,
    tree_nodes,
)
from frontierbo.macro.input_tree import build_input_tree
from frontierbo.macro.most_likely import MostLikelyPlanner, most_likely_q
from frontierbo.macro.parameters import (
    epsilon_for_samples,
    parameters_for_epsilon,
    samples_formula,
)


class Line:
    """Cells 0..n-1 on a line, kappa = 1; from cell i move to i - 1 or i + 1 (if inside), except
    that cell ``dead`` has no macro-action at all."""

    kappa = 1

    def __init__(self, n: int, dead: int):
        self.inputs = np.arange(n, dtype=float)[:, None]
        self._n, self.dead = n, dead

    @property
    def n(self) -> int:
        return self._n

    def macro_actions(self, location: int) -> np.ndarray:
        if location == self.dead:
            return np.zeros((0, 1), dtype=int)
        return np.array([[j] for j in (location - 1, location + 1) if 0 <= j < self._n])


class ArraySampler:
    """Fixed standard normals per input path: an array (N^(t-1), N, kappa) per path, drawn once
    from a seed keyed by the path, so any evaluation order sees the same samples."""

    def __init__(self, N: int, kappa: int, seed: int = 0, scale: float = 1.0):
        self.N, self.kappa, self.seed, self.scale = N, kappa, seed, scale
        self.arrays: dict[tuple[int, ...], np.ndarray] = {}

    def node(self, path: tuple[int, ...], index: int) -> np.ndarray:
        if path not in self.arrays:
            rng = np.random.default_rng([self.seed, len(path), *path])
            shape = (self.N ** (len(path) - 1), self.N, self.kappa)
            self.arrays[path] = self.scale * rng.standard_normal(shape)
        return self.arrays[path][index]

    def __call__(self, path, first, out):
        for i in range(out.shape[0]):
            out[i] = self.node(tuple(path), first + i)


def reward(gp, x, beta, info):
    """R(x, d) of (4.4) from the GP itself."""
    mean, latent = gp.joint_posterior(np.asarray(x))
    s, eye = gp.noise_variance, np.eye(len(x))
    cov = latent + s * eye if info == "noisy" else latent
    return mean.sum() + 0.5 * beta * np.linalg.slogdet(eye + cov / s)[1]


def brute_value(gp, domain, loc, t, H, N, beta, info, sampler, path, index):
    """V_t(d_t) of (4.6) literally: a GP copy per node, samples y = mu + Psi z from the sampler."""
    if t == H:
        return 0.0
    best = -np.inf
    for a, x in enumerate(domain.macro_actions(loc)):
        q = reward(gp, x, beta, info)
        if t < H - 1:
            mean, latent = gp.joint_posterior(x)
            psi = np.linalg.cholesky(latent + gp.noise_variance * np.eye(len(x)))
            z = sampler.node(path + (a,), index)
            total = 0.0
            for ell in range(N):
                child = copy.deepcopy(gp)
                for cell, y in zip(x, mean + psi @ z[ell], strict=True):
                    child.add(int(cell), float(y))
                total += brute_value(
                    child, domain, int(x[-1]), t + 1, H, N, beta, info, sampler, path + (a,),
                    index * N + ell,
                )  # fmt: skip
            q += total / N
        best = max(best, q)
    return best


# -- the input tree ---------------------------------------------------------------------------
def test_input_tree_mean_is_linear_in_the_samples_and_psi_is_the_stage_posterior():
    """Along a path, y_s = mu_{s-1}(x_s) + Psi_s z_s (sequential GP updates) gives
    1^T mu_{t-1}(x_t) = mean_sum + sum_s coef_s . z_s, Psi Psi^T = Sigma_{t-1}(x_t), alpha = ||W||_F."""
    domain = TorusGrid(6, 2)
    gp = make_gp(domain, seed=1)
    tree = build_input_tree(gp, domain, 7, 3)
    rng = np.random.default_rng(2)
    leaf = int(np.flatnonzero(tree.level == 3)[5])
    chain = [leaf, int(tree.parent[leaf])]
    chain = [int(tree.parent[chain[1]]), *chain[::-1]]
    g = copy.deepcopy(gp)
    zs, ys, cells = [], [], []
    for t, node in enumerate(chain, start=1):
        x = tree.cells[node]
        mean, latent = g.joint_posterior(x)
        sigma = latent + gp.noise_variance * np.eye(2)
        np.testing.assert_allclose(tree.psi[node] @ tree.psi[node].T, sigma, atol=1e-10)
        linear = tree.mean_sum[node] + sum(tree.coef[node, s] @ zs[s] for s in range(t - 1))
        assert linear == pytest.approx(mean.sum(), abs=1e-10)
        if t > 1:  # W maps the planned outputs y_{1:t-1} to mu_{t-1}(x_t)
            P = np.concatenate(cells)
            W = np.linalg.solve(gp.covariance(P) + gp.noise_variance * np.eye(P.size),
                                gp.covariance(P, x)).T  # fmt: skip
            assert tree.alpha[node] == pytest.approx(np.linalg.norm(W), rel=1e-10)
        z = rng.standard_normal(2)
        y = mean + np.linalg.cholesky(sigma) @ z
        for cell, v in zip(x, y, strict=True):
            g.add(int(cell), float(v))
        zs.append(z)
        ys.append(y)
        cells.append(x)
    assert tree.alpha[chain[0]] == 0.0
    assert tree.path_cells(leaf).tolist() == np.concatenate(cells).tolist()


def test_lipschitz_and_theta_recursions():
    domain = TorusGrid(5, 2)
    tree = build_input_tree(make_gp(domain), domain, 3, 3)
    k = math.sqrt(2)
    for p in range(tree.size):
        ch = tree.children[p]
        if tree.level[p] == 3:
            assert tree.lipschitz[p] == 0.0 and tree.theta[p] == 0.0
            continue
        L = max(
            k * tree.alpha[c] + tree.lipschitz[c] * math.sqrt(1 + tree.alpha[c] ** 2) for c in ch
        )
        assert tree.lipschitz[p] == pytest.approx(L, rel=1e-12)
        th = k * L * math.sqrt(tree.trace[p]) + max(tree.theta[c] for c in ch)
        assert tree.theta[p] == pytest.approx(th, rel=1e-12)
    assert tree.theta_max == tree.theta.max()
    assert tree.sampling_constant == pytest.approx(np.max(tree.lipschitz * np.sqrt(tree.trace)))


# -- node counts (Table 4.2: A = 4, N = 100, T = 5) ------------------------------------------------
@pytest.mark.parametrize(("H", "expected"), [(1, 25), (2, 8_009), (3, 2_403_209), (4, 641_123_209)])
def test_table_4_2_node_counts_by_formula(H, expected):
    assert run_nodes(4, 100, H, 5) == expected


@pytest.mark.parametrize("H", [1, 2, 3])
def test_table_4_2_node_counts_by_running(H):
    """A receding-horizon run of T = 5 iterations, H_eff = min(H, T - t), A = 4 everywhere."""
    domain = TorusGrid(9, 4)
    gp = make_gp(domain, n_obs=1, noise=1e-3, lengthscale=2.0)
    truth = np.random.default_rng(5).normal(size=domain.n)
    planner = EpsilonMacroBO(gp, domain, H, n_samples=100, seed=3)
    location, total = 40, 0
    for t in range(5):
        plan = planner.plan(location, horizon=min(H, 5 - t))
        total += plan.nodes
        assert plan.nodes == exhaustive_nodes(4, 100, min(H, 5 - t))
        for cell in plan.macro_action:
            gp.add(int(cell), float(truth[cell]))
        location = int(plan.macro_action[-1])
    assert total == run_nodes(4, 100, H, 5) == {1: 25, 2: 8_009, 3: 2_403_209}[H]


# -- the exhaustive value against a brute-force evaluation ------------------------------------
@pytest.mark.parametrize(
    ("beta", "info", "H"),
    [(0.0, "noisy", 3), (0.7, "noisy", 3), (0.7, "latent", 3), (0.2, "noisy", 4)],
)
def test_exhaustive_value_equals_brute_force_on_a_tiny_tree(beta, info, H, monkeypatch):
    domain = TorusGrid(5, 2)
    gp = make_gp(domain, seed=4)
    N, start = 2, 12
    # blocks of one decision node above the last sampled layer too: the numbering must hold
    monkeypatch.setattr(_Evaluation, "UPPER_BLOCK", 1)
    sampler = ArraySampler(N, 2, seed=9)
    planner = EpsilonMacroBO(
        gp, domain, H, n_samples=N, beta=beta, info_covariance=info, sampler=sampler,
        block_rows=3,  # several blocks per layer: the decision-node numbering must hold
    )  # fmt: skip
    plan = planner.plan(start)
    brute = [
        reward(gp, x, beta, info)
        + sum(
            brute_value(
                _added(gp, x, y), domain, int(x[-1]), 1, H, N, beta, info, sampler, (a,), ell
            )
            for ell, y in enumerate(_samples(gp, x, sampler.node((a,), 0)))
        )
        / N
        for a, x in enumerate(domain.macro_actions(start))
    ]
    np.testing.assert_allclose(plan.q_sampled, brute, rtol=1e-10, atol=1e-10)
    assert plan.nodes == tree_nodes(build_input_tree(gp, domain, start, H), N)
    assert plan.nodes == exhaustive_nodes(4, N, H)


def _samples(gp, x, z):
    mean, latent = gp.joint_posterior(x)
    psi = np.linalg.cholesky(latent + gp.noise_variance * np.eye(len(x)))
    return [mean + psi @ zl for zl in z]


def _added(gp, x, y):
    g = copy.deepcopy(gp)
    for cell, v in zip(x, y, strict=True):
        g.add(int(cell), float(v))
    return g


def test_threads_and_blocks_do_not_change_a_fixed_sampler_plan():
    domain = TorusGrid(7, 3)
    gp = make_gp(domain, seed=6)
    sampler = ArraySampler(5, 3, seed=1)
    plans = [
        EpsilonMacroBO(gp, domain, 3, n_samples=5, sampler=sampler, block_rows=b, n_threads=k).plan(
            10
        )
        for b, k in [(5, 1), (10, 2), (1 << 15, 2)]
    ]
    for p in plans[1:]:
        np.testing.assert_allclose(p.q_sampled, plans[0].q_sampled, rtol=1e-13)
    keyed = [
        EpsilonMacroBO(gp, domain, 3, n_samples=5, seed=8, n_threads=k).plan(10) for k in (1, 2)
    ]
    np.testing.assert_array_equal(keyed[0].q_sampled, keyed[1].q_sampled)


# -- H = 1 is DB-GP-UCB ----------------------------------------------------------------------------
@pytest.mark.parametrize("beta", [0.0, 0.5, 4.0])
@pytest.mark.parametrize("info", ["noisy", "latent"])
def test_horizon_one_is_db_gp_ucb(beta, info):
    domain = TorusGrid(6, 3)
    gp = make_gp(domain, seed=7)
    for start in (0, 14, 30):
        plan = EpsilonMacroBO(gp, domain, 1, n_samples=50, beta=beta, info_covariance=info).plan(
            start
        )
        db = db_gp_ucb(gp, domain, start, beta=beta, info_covariance=info)
        np.testing.assert_allclose(plan.q_sampled, db.scores, rtol=1e-10)
        np.testing.assert_allclose(plan.q_most_likely, db.scores, rtol=1e-10)
        assert plan.action == db.action
        assert plan.nodes == 1 + 4
        assert plan.theta == 0.0 and plan.K == 0.0


# -- kappa = 1, H = 2, beta = 0: Q* exactly (4.5) --------------------------------------------------
def test_kappa_one_horizon_two_converges_to_the_bayes_optimal_value():
    domain = TorusGrid(6, 1)
    gp = make_gp(domain, seed=11, noise=0.02, lengthscale=1.2)
    start, N = 15, 40_000
    plan = EpsilonMacroBO(gp, domain, 2, n_samples=N, seed=0).plan(start)
    for a, x in enumerate(domain.macro_actions(start)):
        x1 = int(x[0])
        s = math.sqrt(gp.covariance([x1])[0, 0] + gp.noise_variance)
        nxt = domain.macro_actions(x1)[:, 0]
        c = gp.mean[nxt]
        g = gp.covariance(nxt, [x1])[:, 0] / s  # mu_1(x') = mu_0(x') + Cov(x', x1) (y - mu) / s^2
        exact = gp.mean[x1] + expected_max_of_lines(c, g)
        z = np.random.default_rng(1).standard_normal(100_000)
        sd = np.max(c[:, None] + g[:, None] * z, axis=0).std()
        assert abs(plan.q_sampled[a] - exact) < 4 * sd / math.sqrt(N)
        # V_1 with y at its mean is the most-likely value: QQ_0 = mu(x1) + max_a c_a <= Q*_0
        assert plan.q_most_likely[a] == pytest.approx(gp.mean[x1] + c.max(), rel=1e-10)


# -- Lipschitz with common random numbers (Theorem B.1) --------------------------------------------
def test_sampled_value_is_lipschitz_in_the_first_observations():
    domain = TorusGrid(6, 2)
    gp = make_gp(domain, seed=12)
    H, start = 3, 9
    tree = build_input_tree(gp, domain, start, H)
    base = ArraySampler(1, 2, seed=3)
    for trial in range(5):
        shifted = ArraySampler(1, 2, seed=3)
        shifted.arrays = dict(base.arrays)
        rng = np.random.default_rng(trial)
        q = {}
        for name, smp in (("base", base), ("shifted", shifted)):
            for a in range(4):
                smp.node((a,), 0)  # materialise, then perturb only the level-1 samples
            if name == "shifted":
                for a in range(4):
                    smp.arrays[(a,)] = smp.arrays[(a,)] + rng.normal(size=(1, 1, 2))
            q[name] = EpsilonMacroBO(gp, domain, H, n_samples=1, sampler=smp).plan(start).q_sampled
        for i, p in enumerate(tree.root_children):
            a = int(tree.action[p])
            dy = tree.psi[p] @ (shifted.arrays[(a,)][0, 0] - base.arrays[(a,)][0, 0])
            # Q_0 = R(x_1) + V_1(<x_1, y>) with one sample: R is shared, so the gap is V_1's
            assert (
                abs(q["base"][a] - q["shifted"][a])
                <= tree.lipschitz[p] * np.linalg.norm(dy) + 1e-12
            )
            assert i == a


# -- A2: most-likely observations (4.8) ------------------------------------------------------------
def _literal_most_likely(gp, domain, loc, t, H, beta, info):
    """VV_t of (4.8) literally: condition a GP copy on y = mu_t(x) (pseudo-observations)."""
    if t == H:
        return 0.0
    best = -np.inf
    for x in domain.macro_actions(loc):
        mean, _ = gp.joint_posterior(x)
        q = reward(gp, x, beta, info) + _literal_most_likely(
            _added(gp, x, mean), domain, int(x[-1]), t + 1, H, beta, info
        )
        best = max(best, q)
    return best


@pytest.mark.parametrize("beta", [0.0, 0.8])
def test_most_likely_policy_equals_its_literal_recursion(beta):
    domain = TorusGrid(5, 2)
    gp = make_gp(domain, seed=13)
    H, start = 3, 6
    plan = MostLikelyPlanner(gp, domain, H, beta=beta).plan(start)
    literal = [
        reward(gp, x, beta, "noisy")
        + _literal_most_likely(
            _added(gp, x, gp.joint_posterior(x)[0]), domain, int(x[-1]), 1, H, beta, "noisy"
        )
        for x in domain.macro_actions(start)
    ]
    np.testing.assert_allclose(plan.q, literal, rtol=1e-10)
    assert plan.method == ("dp" if beta == 0 else "enumerate")


def test_most_likely_dp_equals_enumeration_for_beta_zero():
    domain = TorusGrid(7, 3)
    gp = make_gp(domain, seed=14)
    for start in (0, 17, 33):
        dp = MostLikelyPlanner(gp, domain, 4, method="dp").plan(start)
        en = MostLikelyPlanner(gp, domain, 4, method="enumerate").plan(start)
        np.testing.assert_allclose(dp.q, en.q, rtol=1e-12)
        assert dp.action == en.action
        assert en.nodes == 1 + 4 + 16 + 64 + 256
        assert dp.nodes < en.nodes
    with pytest.raises(ValueError, match="beta = 0"):
        MostLikelyPlanner(gp, domain, 2, beta=1.0, method="dp")


def test_dead_ends_are_pruned():
    domain = Line(6, dead=0)  # from cell 1 going left reaches the dead end 0
    gp = make_gp(domain, seed=15)
    plan = EpsilonMacroBO(gp, domain, 2, n_samples=3, seed=0).plan(1)
    assert plan.q_sampled[0] == -np.inf and np.isfinite(plan.q_sampled[1])
    assert plan.action == 1
    dp = MostLikelyPlanner(gp, domain, 2).plan(1)
    en = MostLikelyPlanner(gp, domain, 2, method="enumerate").plan(1)
    np.testing.assert_array_equal(dp.q, en.q)
    assert dp.q[0] == -np.inf
    with pytest.raises(ValueError, match="no sequence"):
        EpsilonMacroBO(gp, domain, 1, n_samples=3).plan(0)


# -- (4.9) fallback and the epsilon parameters -------------------------------------------------
def test_fallback_replaces_far_sampled_values_and_is_logged(caplog):
    domain = TorusGrid(5, 2)
    gp = make_gp(domain, seed=16)
    wild = ArraySampler(2, 2, seed=0, scale=1e9)  # samples far outside any lambda H + theta
    with caplog.at_level(logging.INFO, logger="frontierbo.macro.epsilon_macro_bo"):
        planner = EpsilonMacroBO(gp, domain, 2, n_samples=2, sampler=wild)
        plan = planner.plan(7)
    assert plan.fallback.all()
    np.testing.assert_array_equal(plan.q_epsilon, plan.q_most_likely)
    assert plan.action == int(np.argmax(plan.q_most_likely))
    assert planner.fallback_count == 4 and "fallback" in caplog.text
    off = EpsilonMacroBO(gp, domain, 2, n_samples=2, sampler=wild, fallback=False).plan(7)
    assert not off.fallback.any()
    np.testing.assert_array_equal(off.q_epsilon, off.q_sampled)
    normal = EpsilonMacroBO(gp, domain, 2, n_samples=20, seed=1).plan(7)
    assert not normal.fallback.any()  # theta is large: (4.9) essentially never fires


def test_epsilon_parameters_follow_theorem_4_3():
    K, theta, H, A = 2.5, 40.0, 3, 4
    p = parameters_for_epsilon(0.9, K=K, theta=theta, horizon=H, A=A)
    lam, delta = 0.9 / (4 * 9), 0.9 / (8 * 40.0 * 3)
    c = 4 * K**2 / lam**2
    n = c * (H * math.log(4 * K**2 * H * A / (math.e * lam**2)) + math.log(2 / delta))
    assert (p.lam, p.delta, p.n_samples) == (pytest.approx(lam), pytest.approx(delta), math.ceil(n))
    back = epsilon_for_samples(p.n_samples, K=K, theta=theta, horizon=H, A=A)
    assert back.epsilon <= 0.9 * (1 + 1e-9)
    assert samples_formula(back.lam, back.delta, K, H, A) <= p.n_samples
    tighter = parameters_for_epsilon(back.epsilon * 0.999, K=K, theta=theta, horizon=H, A=A)
    assert tighter.n_samples > p.n_samples - 1
    zero = epsilon_for_samples(7, K=0.0, theta=0.0, horizon=1, A=4)
    assert (zero.epsilon, zero.n_samples) == (0.0, 7)


def test_epsilon_planner_derives_n_and_refuses_huge_trees():
    domain = TorusGrid(5, 2)
    gp = make_gp(domain, seed=17)
    plan = EpsilonMacroBO(gp, domain, 1, epsilon=0.1).plan(3)
    assert plan.params.n_samples == 1 and plan.nodes == 5
    with pytest.raises(ValueError, match="max_nodes"):
        EpsilonMacroBO(gp, domain, 3, epsilon=0.1).plan(3)
    with pytest.raises(ValueError, match="exactly one"):
        EpsilonMacroBO(gp, domain, 2)


def test_keyed_sampler_is_deterministic_and_block_keyed():
    out = [np.empty((2, 3, 2)) for _ in range(3)]
    KeyedNormalSampler(5)((0, 1), 4, out[0])
    KeyedNormalSampler(5)((0, 1), 4, out[1])
    KeyedNormalSampler(5)((0, 1), 6, out[2])
    np.testing.assert_array_equal(out[0], out[1])
    assert not np.array_equal(out[0], out[2])


def test_most_likely_q_reads_the_same_tree_as_the_planner():
    domain = TorusGrid(5, 2)
    gp = make_gp(domain, seed=18)
    tree = build_input_tree(gp, domain, 4, 2)
    plan = EpsilonMacroBO(gp, domain, 2, n_samples=4, seed=0, beta=0.3).plan(4)
    np.testing.assert_allclose(plan.q_most_likely[tree.root_rows], most_likely_q(tree, 0.3))
