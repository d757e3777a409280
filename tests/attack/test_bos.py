"""Bayesian optimal stopping, SolveBOS and Decide (eq. (5.5) of the thesis)."""

import numpy as np
import pytest

from frontierbo.attack.bos import (
    CONTINUE,
    D1,
    D2,
    EMPTY_CELL_LOSS,
    StoppingPolicy,
    backward_induction,
    cell_index,
    curve_scale,
    decide,
    error_curve,
    forward_samples,
    solve_bos,
)
from frontierbo.core.exact import ExactGP

#: A loop that improves quickly, then slowly: lambda = -11, e_{1:8} from 0.909 down to 0.532.
Y_INIT = np.array([-10.0, -8.0, -7.0, -6.5, -6.2, -6.0, -5.9, -5.85])
FAST = 20_000


@pytest.fixture(scope="module")
def policy():
    """Default settings (S = 100 000), horizon 40, i_0 = 8, the third loop of an attack."""
    return solve_bos(Y_INIT, -5.0, 40, 2, np.random.default_rng(0))


# -- the error curve ----------------------------------------------------------------------------
def test_curve_scale_and_error_curve_by_hand():
    assert curve_scale([-2.0, -3.0, -1.0]) == pytest.approx(-3.3)
    # outputs > 0 (already a success) or = 0 hit the guard lambda <= -1e-8
    assert curve_scale([1.0, 2.0]) == -1e-8
    assert curve_scale([0.0]) == -1e-8
    e = error_curve([-2.0, -3.0, -1.0, -1.5], -2.2)
    np.testing.assert_allclose(e, [2 / 2.2, 2 / 2.2, 1 / 2.2, 1 / 2.2])
    with pytest.raises(ValueError, match="scale"):
        error_curve([-1.0], 0.5)


def test_cell_index_is_the_last_grid_point_strictly_below():
    g = np.linspace(0.0, 1.0, 5)  # 0, .25, .5, .75, 1
    np.testing.assert_array_equal(
        cell_index([1e-9, 0.25, 0.2500001, 0.6, 0.999], g), [0, 0, 1, 2, 3]
    )


# -- backward induction (steps 9-11) by hand ----------------------------------------------------
def test_backward_induction_on_a_hand_computed_toy():
    # 3 samples, 2 steps, 3 cells; K1 = 10, K2 = 8, C = 1, a cell needs > 1 sample to continue.
    # s = 1: cell 0 = {w0, w1}, p = 1/2: L_D1 = 10/2 + 1 = 6, L_D2 = 8/2 + 1 = 5;
    #        cell 1 = {w2}, p = 0 (sparse); cell 2 empty.
    # s = 2: cell 0 = {w0}, p = 1: L_D1 = 2, L_D2 = 10 -> D1, rho = 2;
    #        cell 1 = {w1, w2}, p = 0: L_D1 = 12, L_D2 = 2 -> D2, rho = 2;
    #        cell 2 empty: 1e4 each, the tie goes to D2.
    # s = 1, cell 0: L_D0 = (rho(0) + rho(1)) / 2 = 2 < 5 -> continue, rho = 2;
    #        cells 1, 2 (n <= 1): L_D0 = 0 -> continue, rho = 0.
    cells = np.array([[0, 0], [0, 1], [1, 1]])
    z = np.array([True, False, False])
    out = backward_induction(cells, z, 10.0, 8.0, 1.0, 1, n_cells=3)
    np.testing.assert_array_equal(out.counts, [[2, 1, 0], [1, 2, 0]])
    np.testing.assert_array_equal(out.stop_probability, [[0.5, 0.0, np.nan], [1.0, 0.0, np.nan]])
    np.testing.assert_array_equal(out.actions, [[CONTINUE] * 3, [D1, D2, D2]])
    np.testing.assert_allclose(out.rho, [[2.0, 0.0, 0.0], [2.0, 2.0, EMPTY_CELL_LOSS]])
    # with min_samples = 0 the single sample of cell 1 at s = 1 gets L_D0 = rho_2(1) = 2, and
    # L_D2 = 0 + 1 = 1 wins
    out0 = backward_induction(cells, z, 10.0, 8.0, 1.0, 0, n_cells=3)
    assert out0.actions[0, 1] == D2 and out0.rho[0, 1] == 1.0


def test_zero_continuation_of_sparse_cells_propagates_backwards():
    # 3 steps, all three samples in cell 0 at s = 1 (dense, p = 1, L_D1 = 1 would stop), but the
    # next step's cells are sparse: rho_2 = 0 there, so L_D0(1, 0) = 0 and the cell continues.
    cells = np.array([[0, 0, 0], [0, 1, 1], [0, 1, 1]])
    out = backward_induction(cells, np.ones(3, bool), 100.0, 99.0, 1.0, 2, n_cells=2)
    assert out.rho[1, 0] == 0.0 and out.rho[1, 1] == 0.0
    assert out.rho[0, 0] == 0.0 and out.actions[0, 0] == CONTINUE
    assert set(out.actions[-1]) <= {D1, D2}


def _reference_induction(cells, z, k1, k2, cost, min_samples, n_cells):
    """The reference ``run_BOS`` loops, transcribed sample by sample (the slow oracle)."""
    n_samples, steps = cells.shape
    losses = np.zeros((steps, n_cells, 3))
    for s in range(steps):
        hits, n = np.zeros(n_cells), np.zeros(n_cells)
        for w in range(n_samples):
            hits[cells[w, s]] += z[w]
            n[cells[w, s]] += 1
        for k in range(n_cells):
            if n[k]:
                p = hits[k] / n[k]
                losses[s, k, :2] = k2 * p + cost * (s + 1), k1 * (1 - p) + cost * (s + 1)
            else:
                losses[s, k, :2] = 1e4
    for s in range(steps - 2, -1, -1):
        tot, n = np.zeros(n_cells), np.zeros(n_cells)
        for w in range(n_samples):
            nxt = losses[s + 1, cells[w, s + 1], : 2 if s + 1 == steps - 1 else 3]
            tot[cells[w, s]] += nxt.min()
            n[cells[w, s]] += 1
        for k in range(n_cells):
            losses[s, k, 2] = tot[k] / n[k] if n[k] > min_samples else 0.0
    actions = np.zeros((steps, n_cells), int)
    actions[-1] = np.argmin(losses[-1, :, :2], axis=1) + 1
    for s in range(steps - 1):
        for k in range(n_cells):
            actions[s, k] = np.argmin(losses[s, k]) + 1 if losses[s, k, 2] != 0 else CONTINUE
    return actions


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_vectorised_induction_matches_the_reference_loops(seed):
    rng = np.random.default_rng(seed)
    walk = np.clip(np.cumsum(rng.integers(-1, 2, size=(400, 6)), axis=1) + 5, 0, 9)
    z = rng.random(400) < 0.4 + 0.05 * walk[:, -1]
    fast = backward_induction(walk, z, 100.0, 99.0, 1.0, 10, n_cells=10)
    slow = _reference_induction(walk, z, 100.0, 99.0, 1.0, 10, 10)
    np.testing.assert_array_equal(fast.actions, slow)


# -- forward simulation (steps 3-4) ------------------------------------------------------------
def test_forward_samples_follow_the_gp_posterior():
    errors = error_curve(Y_INIT, curve_scale(Y_INIT))
    draws, kernel = forward_samples(errors, 20, 50_000, np.random.default_rng(3))
    assert draws.shape == (50_000, 12)
    steps = np.arange(1, 9, dtype=float)[:, None]
    mean, cov = ExactGP(steps, errors, kernel, 1e-3).predict(
        np.arange(9, 21, dtype=float)[:, None], full_cov=True
    )
    np.testing.assert_allclose(
        draws.mean(axis=0), mean, atol=5 * np.sqrt(cov.diagonal().max() / 5e4)
    )
    np.testing.assert_allclose(np.cov(draws.T), cov, atol=0.05 * cov.max())


# -- SolveBOS: the table (docs/decisions.md#bos-stopping-constants-from-bo-bos) ------------
def test_policy_table_shape_k1_and_codes(policy):
    assert policy.actions.shape == (32, 99) and policy.steps == 32 and policy.horizon == 40
    assert policy.k1 == pytest.approx(100.0 / 0.99**2)
    assert policy.initial_steps == 8 and policy.scale == pytest.approx(-11.0)
    assert policy.incumbent_error == pytest.approx(5.0 / 11.0)
    np.testing.assert_allclose(policy.grid, np.linspace(0, 1, 100))
    assert set(np.unique(policy.actions[-1])) <= {D1, D2}
    assert set(np.unique(policy.actions)) <= {D1, D2, CONTINUE}
    sparse = policy.counts[:-1] <= 30
    assert sparse.any() and np.all(policy.actions[:-1][sparse] == CONTINUE)
    # every kept sample sits in exactly one cell per step
    assert np.all(policy.counts.sum(axis=1) == policy.kept_samples)
    assert 0.9 * 100_000 < policy.kept_samples <= 100_000
    p = policy.stop_probability
    assert np.all(np.isnan(p) == (policy.counts == 0))
    assert np.nanmin(p) >= 0.0 and np.nanmax(p) <= 1.0


def test_policy_is_read_only(policy):
    with pytest.raises(ValueError):
        policy.actions[0, 0] = D1


def test_same_seed_same_policy():
    a = solve_bos(Y_INIT, -5.0, 30, 0, 11, samples=FAST)
    b = solve_bos(Y_INIT, -5.0, 30, 0, np.random.default_rng(11), samples=FAST)
    np.testing.assert_array_equal(a.actions, b.actions)
    np.testing.assert_array_equal(a.counts, b.counts)
    c = solve_bos(Y_INIT, -5.0, 30, 0, 12, samples=FAST)
    assert not np.array_equal(a.counts, c.counts)


# -- sanity scenarios ----------------------------------------------------------------------------
def test_a_no_stop_when_the_loop_already_beats_the_incumbent():
    # y* = -100: e* = 100/11 > 1, above every kept sample, so p = 0 and D2 always beats D1
    pol = solve_bos(Y_INIT, -100.0, 40, 0, 0, samples=FAST)
    assert pol.incumbent_error > 1.0
    assert not np.any(pol.actions == D1)
    assert np.nanmax(pol.stop_probability) == 0.0


def test_b_stop_at_once_when_improvement_is_impossible():
    # y* = 0: e* = 0 <= every kept sample, so p = 1 where n > 0 and L_D1 = C s < K2 + C s
    pol = solve_bos(Y_INIT, 0.0, 40, 0, 0, samples=FAST)
    populated = pol.counts[0] > 30
    assert np.all(pol.stop_probability[pol.counts > 0] == 1.0)
    assert populated.sum() >= 5
    assert np.mean(pol.actions[0][populated] == D1) >= 0.9
    # a flat continuation (no improvement at query 9) stays at e = 0.532, a populated cell
    loop = np.append(Y_INIT, -9.0)
    state = error_curve(loop, pol.scale)[8:].mean()
    assert pol.counts[0, pol.cell(state)] > 30
    assert decide(pol, loop)  # stops at i = i_0 + 1


@pytest.mark.parametrize(
    "y_init, incumbent",
    [
        (Y_INIT, -5.0),
        (Y_INIT, -6.0),
        ([-20.0, -15.0, -15.0, -12.0, -12.0, -11.0, -11.0, -11.0], -10.0),
        ([-5.0, -4.8, -4.7, -4.6, -4.6, -4.55, -4.5, -4.5], -4.0),
    ],
)
def test_b_prime_stop_only_where_theta_1_is_likely_enough(y_init, incumbent):
    for loop_index in (0, 60):
        pol = solve_bos(y_init, incumbent, 40, loop_index, 4, samples=FAST)
        stop = pol.actions == D1
        assert stop.any()  # the scenarios are not trivial
        threshold = pol.k1 / (pol.k1 + 99.0)
        assert np.all(pol.stop_probability[stop] >= threshold)


def test_c_larger_k1_stops_in_fewer_cells():
    scenarios = [
        (Y_INIT, -5.0),
        ([-20.0, -15.0, -15.0, -12.0, -12.0, -11.0, -11.0, -11.0], -10.0),
        ([-5.0, -4.8, -4.7, -4.6, -4.6, -4.55, -4.5, -4.5], -4.0),
        ([-30.0, -25.0, -18.0, -14.0, -13.0, -12.5, -12.2, -12.0], -11.0),
    ]

    def stop_fraction(loop_index):
        fractions = [
            np.mean(solve_bos(y, inc, 40, loop_index, seed, samples=FAST).actions == D1)
            for seed, (y, inc) in enumerate(scenarios)
        ]
        return np.mean(fractions)

    small, large = stop_fraction(0), stop_fraction(100)  # K1 = 100 vs 100 / 0.99^100 = 273
    assert 0.0 < large <= small


def test_trajectory_outcome_never_stops_a_loop_that_already_improved():
    # e* = 6/11 = 0.545 > e_8 = 0.532: the loop's best already beats y*, so theta_1 is impossible
    # in the trajectory form, while the reference's final-value form can still stop
    traj = solve_bos(Y_INIT, -6.0, 40, 0, 0, samples=FAST, outcome="trajectory")
    final = solve_bos(Y_INIT, -6.0, 40, 0, 0, samples=FAST)
    assert not np.any(traj.actions == D1)
    assert np.any(final.actions == D1)


# -- Decide: only D1 stops (docs/decisions.md#bos-only-d1-stops-a-loop) -------------------------
def _hand_policy(code):
    """i_0 = 2, T_b = 2, three cells on g = (0, 1/3, 2/3, 1), lambda = -1; cell 1 at s = 1 holds
    ``code``, everything else continues."""
    actions = np.full((2, 3), CONTINUE)
    actions[0, 1] = code
    return StoppingPolicy(
        actions=actions,
        grid=np.linspace(0, 1, 4),
        scale=-1.0,
        incumbent_error=0.5,
        initial_steps=2,
        k1=100.0,
        stop_probability=np.full((2, 3), np.nan),
        counts=np.zeros((2, 3), int),
    )


def test_only_d1_stops():
    # m = (-.5, -.5, -.4), e = (.5, .5, .4): state at s = 1 is 0.4, cell 1
    loop = [-0.5, -0.6, -0.4]
    assert decide(_hand_policy(D1), loop)
    assert not decide(_hand_policy(D2), loop)
    assert not decide(_hand_policy(CONTINUE), loop)
    assert _hand_policy(D1).action(1, 1) == D1


def test_decide_clamps_states_outside_the_unit_interval():
    pol = _hand_policy(D1)
    pol.actions[0] = (D1, D2, D2)
    assert decide(pol, [-0.5, -0.6, 0.3])  # e_3 = -0.3 <= 0: cell 0
    pol.actions[0] = (D2, D2, D1)
    assert decide(pol, [-5.0, -6.0, -7.0])  # e_3 = 5 >= 1: cell 2


def test_decide_only_between_i0_plus_1_and_n():
    pol = _hand_policy(D1)
    with pytest.raises(ValueError, match=r"y_loop must hold i in \[3, 4\]"):
        decide(pol, [-0.5, -0.6])
    with pytest.raises(ValueError, match="y_loop"):
        decide(pol, [-0.5] * 5)


# -- validation --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"horizon": 8}, "horizon must exceed i_0"),
        ({"horizon": 5}, "horizon must exceed i_0"),
        ({"samples": 0}, "samples"),
        ({"loop_index": -1}, "loop_index"),
        ({"gamma": 1.5}, "gamma"),
        ({"k1": 0.0}, "k1"),
        ({"grid": 1}, "grid"),
        ({"min_samples": -1}, "min_samples"),
        ({"outcome": "mean"}, "outcome must be one of"),
        ({"y_init": []}, "y_init"),
        ({"y_init": [-1.0, np.nan]}, "y_init"),
    ],
)
def test_solve_bos_rejects_bad_arguments(kwargs, match):
    args = {"y_init": Y_INIT, "incumbent": -5.0, "horizon": 40, "loop_index": 0, "rng": 0}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        solve_bos(
            args.pop("y_init"),
            args.pop("incumbent"),
            args.pop("horizon"),
            args.pop("loop_index"),
            args.pop("rng"),
            **args,
        )
