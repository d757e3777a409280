"""Exactness checks of the macro-action baselines (thesis Section 4.4)."""

from __future__ import annotations

import copy
import functools
import math

import numpy as np
import pytest
from doubles import MOVES, TorusGrid
from doubles import make_gp as _make_gp
from scipy.special import erfc

from frontierbo.core.acquisition import beta_srinivas
from frontierbo.macro.baselines import expected_improvement, greedy_batch
from frontierbo.macro.baselines_batch import bbo_lp, gp_bucb, gp_bucb_beta, gp_ucb_pe
from frontierbo.macro.q_ei import ei, q_ei, q_expected_improvement, q_expected_improvement_mc
from frontierbo.macro.rollout import Rollout

make_gp = functools.partial(_make_gp, n_obs=4, prior_mean=0.2)


class AllPaths(TorusGrid):
    """side x side torus; from a cell every path of kappa 4-neighbour moves (4^kappa rows, rows
    sharing prefixes — what the greedy filter has to handle)."""

    def step(self, cell: int, move: int) -> int:
        r, c = divmod(cell, self.side)
        dr, dc = MOVES[move]
        return ((r + dr) % self.side) * self.side + (c + dc) % self.side

    def macro_actions(self, location: int) -> np.ndarray:
        rows = []
        for moves in np.ndindex(*(4,) * self.kappa):
            cell, path = int(location), []
            for mv in moves:
                cell = self.step(cell, mv)
                path.append(cell)
            rows.append(path)
        return np.array(rows)


def fake_posterior(gp, prefix, ys=None):
    """Mean and latent variance of every cell after observing ``ys`` at ``prefix`` on a copy."""
    fake = copy.deepcopy(gp)
    for k, cell in enumerate(prefix):
        fake.add(int(cell), float(gp.mean[cell] if ys is None else ys[k]))
    return fake.mean, fake.variance


# -- shared pieces ------------------------------------------------------------------------------
def test_expected_improvement_is_the_textbook_formula():
    # mu = 1, sigma = 2, y* = 0.5: Z = 0.25, EI = 0.5 Phi(0.25) + 2 phi(0.25)
    hand = 0.5 * 0.5987063256829237 + 2.0 * 0.38666811680284924
    assert expected_improvement(1.0, 2.0, 0.5) == pytest.approx(hand, abs=1e-12)
    assert q_expected_improvement([1.0], [[4.0]], 0.5) == pytest.approx(hand, abs=1e-12)
    assert expected_improvement([0.3, 1.0], [0.0, 0.0], 0.5).tolist() == [0.0, 0.5]


def test_the_hallucinated_posterior_equals_the_gp_after_fake_observations():
    domain = AllPaths(5, 3)
    gp = make_gp(domain, seed=3)
    rows, prefix = np.arange(domain.n), np.array([7, 8, 13])
    mean, var = gp.hallucinated(rows, prefix)
    ref_mean, ref_var = fake_posterior(gp, prefix)
    np.testing.assert_allclose(var, ref_var, atol=1e-12)
    np.testing.assert_allclose(mean, gp.mean, atol=0)  # hallucinated: the mean stays mu_t
    np.testing.assert_allclose(ref_mean, gp.mean, atol=1e-12)  # ... as the GP confirms
    ys = [0.9, -1.2, 0.4]
    mean, var = gp.hallucinated(rows, prefix, ys)
    ref_mean, ref_var = fake_posterior(gp, prefix, ys)
    np.testing.assert_allclose(mean, ref_mean, atol=1e-12)
    np.testing.assert_allclose(var, ref_var, atol=1e-12)


# -- footnote 11 of the thesis ---------------------------------------------------------------------
def check_greedy_invariants(domain, choice, actions, step_ref):
    """At every step j the rows still scored are exactly those consistent with the chosen prefix,
    their scores are step_ref(j, prefix, cells) and the chosen j-th cell has the largest."""
    x = choice.macro_action
    np.testing.assert_array_equal(x, actions[choice.action])
    for j in range(domain.kappa):
        alive = np.all(actions[:, :j] == x[:j], axis=1)
        col = choice.step_scores[:, j]
        np.testing.assert_array_equal(~np.isnan(col), alive)
        ref = step_ref(j, x[:j], actions[alive, j])
        np.testing.assert_allclose(col[alive], ref, rtol=1e-12, atol=1e-12)
        assert col[choice.action] == np.nanmax(col)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gp_bucb_scores_are_ucb_with_the_hallucinated_variance(seed):
    domain = AllPaths(5, 3)
    gp = make_gp(domain, seed=seed)
    loc, t = 12, 2
    choice = gp_bucb(gp, domain, loc, iteration=t)
    actions = domain.macro_actions(loc)

    def ref(j, prefix, cells):
        beta = 0.2 * 2 * math.log(domain.n * (3 * t + j + 1) ** 2 * math.pi**2 / (6 * 0.1))
        assert beta == pytest.approx(gp_bucb_beta(t, j + 1, 3, domain.n))
        _, var = fake_posterior(gp, prefix)  # a copy of the GP told the prefix's means
        return gp.mean[cells] + math.sqrt(beta) * np.sqrt(var[cells])

    check_greedy_invariants(domain, choice, actions, ref)


def test_gp_ucb_pe_and_bbo_lp_follow_their_step_scores():
    domain = AllPaths(5, 3)
    gp = make_gp(domain, seed=4)
    loc, actions = 6, domain.macro_actions(6)
    beta = beta_srinivas(1, domain.n, 0.1)

    def pe(j, prefix, cells):
        if j == 0:
            return gp.mean[cells] + math.sqrt(beta) * gp.std[cells]
        return fake_posterior(gp, prefix)[1][cells]

    check_greedy_invariants(domain, gp_ucb_pe(gp, domain, loc), actions, pe)

    best = gp.observed_values.max()
    var = gp.variance + gp.noise_variance

    def lp(j, prefix, cells):
        score = np.log1p(np.exp(expected_improvement(gp.mean[cells], np.sqrt(var[cells]), best)))
        for xi in prefix:
            dist = np.hypot(*(domain.inputs[cells] - domain.inputs[xi]).T)
            score *= 0.5 * erfc(-(3.0 * dist - best + gp.mean[xi]) / math.sqrt(2 * var[xi]))
        return score

    check_greedy_invariants(domain, bbo_lp(gp, domain, loc, lipschitz=3.0), actions, lp)


def test_greedy_batch_ties_are_seeded_and_lowest_without_a_seed():
    actions = np.array([[1, 2], [1, 2], [3, 4], [3, 4]])
    flat = greedy_batch(actions, lambda j, p, c: np.zeros(c.size))
    assert flat.action == 0 and flat.macro_action.tolist() == [1, 2]
    picks = [
        greedy_batch(actions, lambda j, p, c: np.zeros(c.size), seed=s).action for s in range(40)
    ]
    assert set(picks) == {0, 1, 2, 3}
    again = [
        greedy_batch(actions, lambda j, p, c: np.zeros(c.size), seed=s).action for s in range(40)
    ]
    assert picks == again


# -- q-EI (closed form vs MC) ----------------------------------------------------------------------
@pytest.mark.parametrize("q,seed", [(4, 0), (4, 1), (5, 2), (5, 3)])
def test_q_ei_closed_form_matches_monte_carlo(q, seed):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(q, q))
    cov = A @ A.T / q + 0.05 * np.eye(q)
    mean = rng.normal(size=q)
    best = float(rng.normal(0.5, 0.5))
    closed = q_expected_improvement(mean, cov, best)
    mc, se = q_expected_improvement_mc(mean, cov, best, draws=1_000_000, seed=seed + 100)
    # 3 Monte Carlo standard errors + 2e-4 for the Genz QMC of the
    # q + q^2 probabilities in the closed form (absolute error ~1e-5 each)
    assert abs(closed - mc) <= 3 * se + 2e-4


def test_q_ei_of_a_gp_macro_action_matches_monte_carlo():
    domain = AllPaths(5, 4)
    gp = make_gp(domain, seed=5)
    x = domain.macro_actions(12)[77]
    mean, latent = gp.joint_posterior(x)
    cov = latent + gp.noise_variance * np.eye(4)
    best = gp.observed_values.max()
    mc, se = q_expected_improvement_mc(mean, cov, best, draws=1_000_000, seed=7)
    assert abs(q_expected_improvement(mean, cov, best) - mc) <= 3 * se + 2e-4


# -- κ = 1 reductions ------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(4))
def test_kappa_one_reductions(seed):
    domain = AllPaths(6, 1)
    gp = make_gp(domain, seed=seed, n_obs=6)
    for loc in (0, 14, 29):
        cells = domain.macro_actions(loc)[:, 0]
        std = gp.std[cells]
        noisy = np.sqrt(gp.variance[cells] + gp.noise_variance)
        best = gp.observed_values.max()
        ei_ref = expected_improvement(gp.mean[cells], noisy, best)
        t = 3
        b_bucb = gp_bucb_beta(t, 1, 1, domain.n)  # tau = t + 1
        b_pe = beta_srinivas(t + 1, domain.n, 0.1)
        ucb_bucb = int(np.argmax(gp.mean[cells] + math.sqrt(b_bucb) * std))
        ucb_pe = int(np.argmax(gp.mean[cells] + math.sqrt(b_pe) * std))
        # GP-BUCB = GP-UCB, GP-UCB-PE = GP-UCB (with their betas)
        assert gp_bucb(gp, domain, loc, iteration=t).action == ucb_bucb
        assert gp_ucb_pe(gp, domain, loc, iteration=t).action == ucb_pe
        assert gp_bucb(gp, domain, loc, beta=b_pe).action == ucb_pe
        # BBO-LP = argmax softplus-EI = argmax EI; q-EI(q=1) = EI; EI baseline = EI
        lp = bbo_lp(gp, domain, loc)
        np.testing.assert_allclose(lp.step_scores[:, 0], np.logaddexp(0, ei_ref), rtol=1e-12)
        assert lp.action == int(np.argmax(ei_ref))
        qe, e = q_ei(gp, domain, loc), ei(gp, domain, loc)
        np.testing.assert_allclose(qe.scores, ei_ref, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(e.scores, ei_ref, rtol=1e-12, atol=1e-15)
        assert qe.action == e.action == int(np.argmax(ei_ref))
        # Rollout with h = 1 is its base policy's step: argmax EI
        r1 = Rollout(gp, domain, horizon=1).plan(loc)
        np.testing.assert_allclose(r1.scores, ei_ref, rtol=1e-12, atol=1e-15)
        assert r1.action == int(np.argmax(ei_ref))


# -- Rollout ---------------------------------------------------------------------------------------
def brute_rollout(gp, domain, cell, steps, best, gamma, nodes, weights, final):
    """sum_q w_q [r(y_q) + gamma W] after moving to ``cell``, on deep copies of the GP."""
    mean, var = gp.mean[cell], gp.variance[cell] + gp.noise_variance
    total = 0.0
    for u, w in zip(nodes, weights, strict=True):
        y = mean + math.sqrt(var) * u
        child = copy.deepcopy(gp)
        child.add(int(cell), float(y))
        total += w * (max(0.0, y - best) + gamma * brute_base(
            child, domain, int(cell), steps, max(best, y), gamma, nodes, weights, final))  # fmt: skip
    return total


def brute_base(gp, domain, pos, steps, best, gamma, nodes, weights, final):
    if steps == 0:
        return 0.0
    cells = domain.macro_actions(pos)[:, 0]
    ei_ = expected_improvement(
        gp.mean[cells], np.sqrt(gp.variance[cells] + gp.noise_variance), best
    )
    if steps == 1:
        return float(ei_[np.argmax(gp.mean[cells] if final == "mean" else ei_)])
    c = int(cells[np.argmax(ei_)])
    return brute_rollout(gp, domain, c, steps - 1, best, gamma, nodes, weights, final)


@pytest.mark.parametrize("horizon,quadrature,final,gamma", [
    (2, 1, "mean", 1.0), (3, 3, "mean", 1.0), (3, 3, "ei", 0.9), (4, 1, "ei", 1.0),
])  # fmt: skip
def test_rollout_values_equal_a_brute_force_on_gp_copies(horizon, quadrature, final, gamma):
    domain = AllPaths(6, 1)
    gp = make_gp(domain, seed=11, n_obs=5)
    planner = Rollout(gp, domain, horizon=horizon, quadrature=quadrature, final_step=final,
                      gamma=gamma)  # fmt: skip
    raw, w = np.polynomial.hermite.hermgauss(quadrature)
    u, w = math.sqrt(2) * raw, w / math.sqrt(math.pi)
    actions, q = planner.values(8)
    best = gp.observed_values.max()
    ref = [brute_rollout(gp, domain, int(c), horizon - 1, best, gamma, u, w, final)
           for c in actions[:, 0]]  # fmt: skip
    np.testing.assert_allclose(q, ref, rtol=1e-10, atol=1e-12)
    if quadrature == 3:
        np.testing.assert_allclose(raw, [-1.224744871391589, 0, 1.224744871391589], atol=1e-12)
        np.testing.assert_allclose(w * math.sqrt(math.pi), [0.2954089752, 1.1816359006, 0.2954089752],
                                   atol=1e-9)  # fmt: skip


def test_rollout_and_ei_reject_macro_actions():
    domain = AllPaths(4, 2)
    gp = make_gp(domain)
    with pytest.raises(ValueError, match="kappa"):
        Rollout(gp, domain)
    with pytest.raises(ValueError, match="kappa"):
        ei(gp, domain, 0)
