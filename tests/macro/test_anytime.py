"""A3 anytime ε-Macro-BO (Algorithm 4) and the ⟨ω, ε⟩ policy (4.12) on tiny domain doubles
(thesis Section 4.3.1; Tables 4.4-4.6 for the node counter)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from doubles import TorusGrid, exact_q_kappa_one_horizon_two, make_gp

import frontierbo.macro.anytime as anytime_module
from frontierbo.macro.anytime import AnytimeEpsilonMacroBO, anytime_delta, anytime_lambda
from frontierbo.macro.anytime_search import fresh_node_cost
from frontierbo.macro.epsilon_macro_bo import EpsilonMacroBO, tree_nodes
from frontierbo.macro.input_tree import build_input_tree
from frontierbo.macro.most_likely import MostLikelyPlanner


class Complete:
    """n cells on a line, kappa = 1; from every cell a move to each of the other n - 1 cells."""

    kappa = 1

    def __init__(self, n: int):
        self.inputs = np.arange(n, dtype=float)[:, None]
        self._n = n

    @property
    def n(self) -> int:
        return self._n

    def macro_actions(self, location: int) -> np.ndarray:
        return np.array([[j] for j in range(self._n) if j != location])


class NodeSampler:
    """Fixed standard normals per (input path, decision node), whatever the block size of the
    call: A1 (blocks of nodes) and A3 (one node per call) see the same samples."""

    def __init__(self, N: int, kappa: int, seed: int = 0):
        self.N, self.kappa, self.seed = N, kappa, seed
        self.calls = 0

    def node(self, path: tuple[int, ...], index: int) -> np.ndarray:
        rng = np.random.default_rng([self.seed, len(path), *path, index])
        return rng.standard_normal((self.N, self.kappa))

    def __call__(self, path, first, out):
        self.calls += 1
        for i in range(out.shape[0]):
            out[i] = self.node(tuple(path), first + i)


def reward(gp, x, beta):
    """R(x, d) of (4.4) (noisy Sigma) from the GP itself."""
    mean, latent = gp.joint_posterior(np.asarray(x))
    s, eye = gp.noise_variance, np.eye(len(x))
    return mean.sum() + 0.5 * beta * np.linalg.slogdet(eye + (latent + s * eye) / s)[1]


def planner(gp, domain, H, N, seed=0, **kw):
    kw.setdefault("lam", 0.1)
    kw.setdefault("iterations", None)
    return AnytimeEpsilonMacroBO(
        gp, domain, H, n_samples=N, sampler=NodeSampler(N, domain.kappa, seed), **kw
    )


# -- lines 7-8 and 12: R and VV at sampled nodes are those of the GP with the samples added -----
@pytest.mark.parametrize("beta", [0.0, 0.7])
def test_reward_and_most_likely_value_at_sampled_nodes_match_the_updated_gp(beta):
    domain = TorusGrid(6, 2)
    gp = make_gp(domain, seed=1)
    H, N = 3, 4
    run, _ = planner(gp, domain, H, N, beta=beta).search(7)
    run.construct()
    tree = run.tree
    checked = 0
    # walk root -> explored child (level 1) -> its actions; compare with a literal GP copy
    for a, c in enumerate(tree.root_children.tolist()):
        x = tree.cells[c]
        assert run.root.reward[a] == pytest.approx(reward(gp, x, beta), abs=1e-10)
        mean, latent = gp.joint_posterior(x)
        for j, child in run.root.children[a].items():
            g = copy.deepcopy(gp)
            y = mean + tree.psi[c] @ run.root.z[a][j]
            for cell, v in zip(x, y, strict=True):
                g.add(int(cell), float(v))
            # VV_1 at child j (line 7) = A2 on the updated GP with horizon H - 1
            vv = run.most_likely_values(
                c, run._child_offsets(run.root, c, run.root.z[a][j : j + 1])
            )
            ml = MostLikelyPlanner(g, domain, H - 1, beta=beta, method="enumerate")
            assert vv[0] == pytest.approx(ml.plan(int(x[-1])).q.max(), abs=1e-9)
            for b, c2 in enumerate(tree.children[c].tolist()):
                x2 = tree.cells[c2]
                assert child.reward[b] == pytest.approx(reward(g, x2, beta), abs=1e-9)
                checked += 1
    assert checked == 16
    # the root's QQ_0 is A2's
    plan = planner(gp, domain, H, N, beta=beta, iterations=0).plan(7)
    ml = MostLikelyPlanner(gp, domain, H, beta=beta, method="enumerate").plan(7)
    np.testing.assert_allclose(plan.q_most_likely, ml.q, atol=1e-10)


# -- full expansion vs the exhaustive value --------------------------------------------------------
@pytest.mark.parametrize("H", [2, 3])
@pytest.mark.parametrize("init", ["most_likely", "infinite"])
@pytest.mark.parametrize("last_stage", ["thesis", "exact"])
def test_full_expansion_without_refinement_is_exhaustive_shifted_by_lambda(H, init, last_stage):
    """Identical samples, refinement off, overwrite: V_lo*_0 = V_0 - k lambda and V_hi*_0 =
    V_0 + k lambda exactly (k = H, or H - 1 with the exact last stage), per root action too; the
    decision is A1's and the node count is A1's."""
    domain = TorusGrid(6, 2)
    gp = make_gp(domain, seed=2)
    N, lam = 3, 0.1
    a3 = planner(
        gp, domain, H, N, lam=lam, init=init, last_stage=last_stage, refine=False,
        assign="overwrite", fallback=False,
    ).plan(7)  # fmt: skip
    a1 = EpsilonMacroBO(gp, domain, H, n_samples=N, sampler=NodeSampler(N, 2), fallback=False).plan(
        7
    )
    k = H if last_stage == "thesis" else H - 1
    assert a3.saturated
    np.testing.assert_allclose(a3.q_lower, a1.q_sampled - k * lam, atol=1e-10)
    np.testing.assert_allclose(a3.q_upper, a1.q_sampled + k * lam, atol=1e-10)
    assert a3.v_lower == pytest.approx(a1.q_sampled.max() - k * lam, abs=1e-10)
    assert a3.v_upper == pytest.approx(a1.q_sampled.max() + k * lam, abs=1e-10)
    assert a3.omega == pytest.approx(2 * k * lam, abs=1e-10)
    assert a3.action == a1.action
    assert a3.nodes == a1.nodes == tree_nodes(build_input_tree(gp, domain, 7, H), N)


@pytest.mark.parametrize("action_rule", ["lower", "upper"])
@pytest.mark.parametrize("init", ["most_likely", "infinite"])
def test_with_refinement_full_expansion_is_within_h_lambda_and_reaches_the_exhaustive_tree(
    action_rule, init
):
    """With refinement: V_lo*_0 >= V_0 - H lambda, V_hi*_0 <= V_0 + H lambda; and
    with an unlimited budget the search saturates with A1's node count and decision."""
    domain = TorusGrid(6, 2)
    gp = make_gp(domain, seed=3)
    H, N, lam = 3, 4, 0.05
    a3 = planner(gp, domain, H, N, lam=lam, init=init, action_rule=action_rule).plan(9)
    a1 = EpsilonMacroBO(gp, domain, H, n_samples=N, sampler=NodeSampler(N, 2), fallback=False)
    a1 = a1.plan(9)
    assert a3.saturated
    assert a3.v_lower >= a1.q_sampled.max() - H * lam - 1e-10
    assert a3.v_upper <= a1.q_sampled.max() + H * lam + 1e-10
    assert np.all(a3.q_lower >= a1.q_sampled - H * lam - 1e-10)
    assert np.all(a3.q_upper <= a1.q_sampled + H * lam + 1e-10)
    assert np.all(a3.q_lower <= a3.q_upper)
    assert a3.nodes == a1.nodes
    assert not a3.fallback.any()
    assert a3.action == a1.action  # measured on this fixed-seed instance (not a theorem)


# -- monotone bounds (intersecting assignments) -------------------------------------------------
@pytest.mark.parametrize("action_rule", ["lower", "upper"])
@pytest.mark.parametrize("init", ["most_likely", "infinite"])
@pytest.mark.parametrize("refine", [True, False])
def test_bounds_tighten_monotonically_with_the_budget(action_rule, init, refine):
    domain = TorusGrid(6, 2)
    gp = make_gp(domain, seed=4)
    plan = planner(
        gp, domain, 3, 5, lam=0.05, init=init, action_rule=action_rule, refine=refine
    ).plan(11)
    lo = np.array([h[2] for h in plan.history])
    hi = np.array([h[3] for h in plan.history])
    assert plan.saturated and len(plan.history) == plan.calls
    assert np.all(lo[1:] >= lo[:-1] - 1e-12)  # +-inf allowed (init="infinite", no refinement)
    assert np.all(hi[1:] <= hi[:-1] + 1e-12)
    assert np.all(lo <= hi)
    omega = hi - lo
    assert np.all(omega[1:] <= omega[:-1] + 1e-12)  # omega non-increasing
    # a larger iteration budget gives bounds at least as tight (same samples)
    prev = None
    for it in (0, 5, 20, 80):
        p = planner(
            gp, domain, 3, 5, lam=0.05, init=init, action_rule=action_rule, refine=refine,
            iterations=it,
        ).plan(11)  # fmt: skip
        assert p.calls == min(it + 1, plan.calls)
        if prev is not None:
            assert p.v_lower >= prev.v_lower - 1e-12 and p.v_upper <= prev.v_upper + 1e-12
        prev = p


def test_most_likely_init_brackets_the_exhaustive_value_at_every_budget_when_horizon_is_two():
    """At H = 2 the children sit at t = H - 1 where VV = V* = V (Theta_1 = 0), so with the
    thesis's init the bounds are exact after the first call: V_lo*_0 <= V_0 <= V_hi*_0 (with
    V_hi* - V_lo* = 2 lambda) at every budget."""
    domain = TorusGrid(6, 2)
    gp = make_gp(domain, seed=5)
    N, lam = 6, 0.05
    a1 = EpsilonMacroBO(gp, domain, 2, n_samples=N, sampler=NodeSampler(N, 2), fallback=False)
    value = a1.plan(3).q_sampled.max()
    for it in (0, 3, 30):
        p = planner(gp, domain, 2, N, lam=lam, iterations=it).plan(3)
        assert p.v_lower == pytest.approx(value - lam, abs=1e-10)
        assert p.v_upper == pytest.approx(value + lam, abs=1e-10)


# -- node counter (docs/decisions.md#macro-bo-anytime-node-counter) --------------------------------
def test_node_counter_table_4_4_convention():
    """A = 20, H = 2, N = 300, 1500 iterations: 421 + 1500 * 21 nodes (no saturation)."""
    domain = Complete(21)
    gp = make_gp(domain, n_obs=2, lengthscale=3.0)
    plan = AnytimeEpsilonMacroBO(gp, domain, 2, n_samples=300, iterations=1500, seed=0).plan(0)
    assert fresh_node_cost(20, 2) == 421 and fresh_node_cost(20, 1) == 21
    assert plan.calls == 1501 and not plan.saturated
    assert plan.nodes == 421 + 1500 * 21


def test_node_counter_is_consistent_with_the_tree():
    domain = TorusGrid(6, 2)
    gp = make_gp(domain, seed=6)
    run, _ = planner(gp, domain, 3, 3).search(5)
    run.construct()
    assert run.nodes == fresh_node_cost(4, 3) == 85
    while not run.saturated:
        before = run.nodes
        run.construct()
        assert run.nodes - before in (0, fresh_node_cost(4, 1), fresh_node_cost(4, 2))
        assert run.nodes == run.count_nodes()
    assert run.nodes == tree_nodes(run.tree, 3)
    # H = 2: every iteration expands one new d_1 (cost 1 + A) until all A N are explored
    run, _ = planner(gp, domain, 2, 10).search(5)
    run.construct()
    k = 0
    while not run.saturated:
        run.construct()
        k += 1
        assert run.nodes == 21 + 5 * k
    assert k == 4 * 10 - 4 and run.nodes == 1 + 4 * 10 * 5


# -- stopping rules -----------------------------------------------------------------------------
def test_budgets_stop_the_search():
    domain = TorusGrid(6, 2)
    gp = make_gp(domain, seed=7)
    assert planner(gp, domain, 3, 5, iterations=0).plan(4).calls == 1
    assert planner(gp, domain, 3, 5, iterations=7).plan(4).calls == 8
    assert planner(gp, domain, 3, 5, time_limit=0.0).plan(4).calls == 1
    p = planner(gp, domain, 3, 5, max_nodes=200).plan(4)
    assert 200 <= p.nodes < 200 + fresh_node_cost(4, 2)
    assert p.history[-2][1] < 200 and not p.saturated
    with pytest.raises(ValueError, match="init"):
        planner(gp, domain, 3, 5, init="zero").plan(4)
    with pytest.raises(ValueError, match="at most one"):
        AnytimeEpsilonMacroBO(gp, domain, 3, n_samples=5, epsilon=1.0, lam=1.0)


# -- line 43 and the policy (4.12) --------------------------------------------------------------
def test_lambda_and_delta_of_line_43():
    assert anytime_lambda(2.0, 3, 5.0) == pytest.approx(1.0 / (4 * 3 / 2.0 + 1 / 10.0))
    assert anytime_delta(2.0, 3, 5.0) == pytest.approx(2.0 / (8 * 5.0 * 3))
    assert anytime_lambda(2.0, 1, 0.0) == 0.0 and anytime_delta(2.0, 1, 0.0) == 1.0
    domain = TorusGrid(6, 2)
    gp = make_gp(domain, seed=8)
    p = planner(gp, domain, 2, 3, lam=None, epsilon=0.5, iterations=2).plan(4)
    assert p.lam == pytest.approx(anytime_lambda(0.5, 2, p.theta))
    assert p.delta == pytest.approx(anytime_delta(0.5, 2, p.theta))


def test_policy_4_12_falls_back_to_the_most_likely_value(monkeypatch):
    domain = TorusGrid(6, 2)
    gp = make_gp(domain, seed=9)
    base = planner(gp, domain, 2, 3, iterations=3).plan(4)
    limit = 2 * base.lam + base.omega + base.theta
    ok = np.abs(base.q_lower - base.q_most_likely) <= limit
    np.testing.assert_array_equal(base.fallback, ~ok)
    np.testing.assert_array_equal(base.q_policy, np.where(ok, base.q_lower, base.q_most_likely))
    assert base.action == int(np.argmax(base.q_policy))
    # force |Q_lo* - QQ| > 2 lambda + omega + theta on row 2: QQ_0 replaces Q_lo*_0 there
    real = anytime_module.most_likely_q

    def shifted(tree, beta):
        q = real(tree, beta)
        q[2] += 10 * limit + 1.0
        return q

    monkeypatch.setattr(anytime_module, "most_likely_q", shifted)
    a3 = planner(gp, domain, 2, 3, iterations=3)
    p = a3.plan(4)
    assert p.fallback.tolist() == [False, False, True, False]
    assert p.q_policy[2] == p.q_most_likely[2] and p.action == 2
    assert a3.fallback_count == 1
    monkeypatch.setattr(anytime_module, "most_likely_q", real)
    # an unbounded Q_lo*_0 (init="infinite", no refinement, one call) always falls back
    inf = planner(gp, domain, 2, 3, iterations=0, init="infinite", refine=False).plan(4)
    assert np.isinf(inf.omega) and inf.fallback.all()
    np.testing.assert_array_equal(inf.q_policy, inf.q_most_likely)
    off = planner(gp, domain, 2, 3, iterations=3, fallback=False).plan(4)
    assert not off.fallback.any() and off.action == int(np.argmax(off.q_lower))


# -- the bounds bracket the Bayes-optimal value (Theorem B.3) --------------------------------------
@pytest.mark.parametrize("budget", [None, 3])
def test_bounds_bracket_the_exact_bayes_optimal_values_by_quadrature(budget):
    """kappa = 1, H = 2, beta = 0: Q*_0 by exact integration; with N = 4000 the sampling error
    (~0.01) is far inside lambda = 0.05, so Q_lo* <= Q*_0 <= Q_hi* for every move, fully
    expanded or after a few ConstructTree calls (most-likely init, intersected bounds)."""
    domain = TorusGrid(6, 1)
    gp = make_gp(domain, seed=11, noise=0.02, lengthscale=1.2)
    start = 15
    exact = exact_q_kappa_one_horizon_two(gp, domain, start)
    plan = AnytimeEpsilonMacroBO(
        gp, domain, 2, n_samples=4000, lam=0.05, iterations=budget, seed=0
    ).plan(start)
    assert np.all(plan.q_lower <= exact) and np.all(exact <= plan.q_upper)
    assert plan.v_lower <= exact.max() <= plan.v_upper
    if budget is None:
        assert plan.saturated
        gap = plan.q_upper - plan.q_lower  # 2 H lambda at most (refinement may tighten it)
        assert np.all(gap > 0) and np.all(gap <= 4 * 0.05 + 1e-12)
