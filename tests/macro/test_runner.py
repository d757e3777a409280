"""The receding-horizon runner (thesis Section 4.4) and metrics M1–M4."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from frontierbo.core.gp import FiniteDomainGP
from frontierbo.macro import runner as runner_module
from frontierbo.macro.data import GPHyperparameters, MacroDataset, plankton
from frontierbo.macro.domains import GridDomain
from frontierbo.macro.epsilon_macro_bo import exhaustive_nodes, run_nodes
from frontierbo.macro.metrics import (
    aggregate,
    average_normalized_output,
    in_sigma_units,
    run_metrics,
    simple_regret,
)
from frontierbo.macro.most_likely import MostLikelyPlanner
from frontierbo.macro.runner import db_gp_ucb, epsilon_macro_bo, most_likely, run_macro

# A 1 x 7 line, kappa = 1, start in the middle (cell 3). Going right pays 1 at once and then
# little; going left pays 0.5 first and then 3 + 3: the best 3-step path is 3 -> 2 -> 1 -> 0.
TRAP = np.array([3.0, 3.0, 0.5, 0.0, 1.0, -5.0, -5.0])


def trap_dataset() -> MacroDataset:
    hyp = GPHyperparameters(
        prior_mean=0.0, lengthscale=(1.0, 1.0), signal_variance=4.0, noise_variance=1e-6
    )
    return MacroDataset("trap", GridDomain((1, 7), kappa=1), TRAP, hyp, "synthetic", start=3)


def best_paths(domain, values, start, steps):
    """Brute force: the value of every sequence of ``steps`` macro-actions from ``start``."""
    out = {}

    def walk(loc, path, total):
        if len(path) == steps:
            out[tuple(path)] = total
            return
        for x in domain.macro_actions(loc):
            walk(int(x[-1]), [*path, *x.tolist()], total + values[x].sum())

    walk(start, [], 0.0)
    return out


# -- a known best path ------------------------------------------------------------------------
def test_nonmyopic_planners_find_the_known_best_path_and_myopic_one_falls_in_the_trap():
    ds = trap_dataset()
    everything_else = [c for c in range(7) if c != 3]  # d_0 knows the field (Fig. 4.12-style)
    totals = best_paths(ds.domain, ds.values, 3, 3)
    best = max(totals, key=totals.get)
    assert best == (2, 1, 0) and totals[best] == pytest.approx(6.5)
    assert sorted(totals.values())[-2] < 6.5 - 1  # unique with a margin
    for method in (most_likely(3), epsilon_macro_bo(3, n_samples=5)):
        run = run_macro(method, ds, budget=3, prior_locations=everything_else, seed=1)
        assert run.paths.reshape(-1).tolist() == [2, 1, 0], method.name
        assert run.horizons.tolist() == [3, 2, 1]  # H_eff = min(H, T - t)
    greedy = run_macro(db_gp_ucb(), ds, budget=3, prior_locations=everything_else)
    assert greedy.paths.reshape(-1).tolist() == [4, 3, 4]  # one step at a time: 1, 0, 1
    assert greedy.values.sum() == pytest.approx(2.0)


# -- per-step logs and node counters ----------------------------------------------------------
def check_chain(run, ds):
    """Every path is the logged row of macro_actions at the agent's location, in order."""
    loc = run.start
    for t in range(len(run.actions)):
        acts = ds.domain.macro_actions(loc)
        np.testing.assert_array_equal(run.paths[t], acts[run.actions[t]])
        loc = int(run.paths[t, -1])


def test_log_shapes_and_exhaustive_node_totals_equal_run_nodes():
    ds = plankton(2)  # kappa = 4, start (25, 25): every dive of <= 20 cells stays inside (A = 4)
    H, N = 3, 4
    run = run_macro(epsilon_macro_bo(H, n_samples=N), ds, seed=5)
    T, kappa = 5, 4
    assert run.actions.shape == run.horizons.shape == run.nodes.shape == run.seconds.shape == (T,)
    assert run.paths.shape == run.measurements.shape == run.values.shape == (T, kappa)
    assert run.locations.shape == run.outputs.shape == (1 + T * kappa,)
    assert run.horizons.tolist() == [3, 3, 3, 2, 1]
    assert run.nodes.tolist() == [exhaustive_nodes(4, N, h) for h in run.horizons.tolist()]
    assert run.nodes.sum() == run_nodes(4, N, H, T)
    assert np.all(run.seconds >= 0)
    check_chain(run, ds)
    # no noise at execution (docs/decisions.md#macro-bo-no-noise-added-at-execution): the
    # measurements are the dataset values
    np.testing.assert_array_equal(run.measurements, ds.values[run.paths])
    assert run.y0 == run.value0 == ds.values[ds.start]


def test_db_gp_ucb_counts_match_table_4_2_at_h1():
    ds = plankton(3)
    run = run_macro(db_gp_ucb(), ds)
    assert run.nodes.tolist() == [5] * 5 and run.nodes.sum() == 25  # Table 4.2, H = 1
    check_chain(run, ds)


def test_most_likely_log_equals_a_replay_of_the_planner_on_the_data_so_far():
    ds = plankton(4)
    H = 4
    run = run_macro(most_likely(H), ds)
    hyp = ds.hyperparameters
    locations, outputs = run.locations, np.concatenate([[run.y0], run.measurements.reshape(-1)])
    for t in range(5):
        gp = FiniteDomainGP(ds.domain.inputs, hyp.kernel(), hyp.noise_variance, hyp.prior_mean)
        for cell, y in zip(locations[: 1 + 4 * t], outputs[: 1 + 4 * t], strict=True):
            gp.add(int(cell), float(y))
        plan = MostLikelyPlanner(gp, ds.domain, H).plan(int(locations[4 * t]), min(H, 5 - t))
        assert plan.action == run.actions[t]
        assert plan.nodes == run.nodes[t]


def test_the_run_goes_through_run_loop(monkeypatch):
    calls = []
    original = runner_module.run_loop

    def spy(policy, evaluate, budget, **kw):
        calls.append(budget)
        return original(policy, evaluate, budget, **kw)

    monkeypatch.setattr(runner_module, "run_loop", spy)
    run_macro(db_gp_ucb(), plankton(0, kappa=2), budget=6)
    assert calls == [6]  # the budget in observations; each macro-action costs kappa = 2


# -- determinism and noise --------------------------------------------------------------------
def same(a, b):
    for name in ("actions", "paths", "measurements", "values", "horizons", "nodes"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert a.y0 == b.y0


def test_runs_are_deterministic_per_seed():
    ds = plankton(6)
    method = epsilon_macro_bo(2, n_samples=3)
    same(run_macro(method, ds, seed=11), run_macro(method, ds, seed=11))
    noisy = [run_macro(db_gp_ucb(), ds, seed=s, noise_std=0.1) for s in (1, 1, 2)]
    same(noisy[0], noisy[1])
    assert not np.array_equal(noisy[0].measurements, noisy[2].measurements)
    # the GP hears the noisy value; the metrics use the dataset values at the visited cells
    r = noisy[0]
    np.testing.assert_array_equal(r.values, ds.values[r.paths])
    assert np.std(r.measurements - r.values) == pytest.approx(0.1, rel=0.6)
    np.testing.assert_array_equal(r.outputs, ds.values[r.locations])


def test_bad_arguments():
    ds = plankton(0)
    with pytest.raises(ValueError, match="multiple of kappa"):
        run_macro(db_gp_ucb(), ds, budget=10)
    no_start = MacroDataset("x", ds.domain, ds.values, ds.hyperparameters, "synthetic")
    with pytest.raises(ValueError, match="no fixed start"):
        run_macro(db_gp_ucb(), no_start)


# -- metrics ----------------------------------------------------------------------------------
def test_metrics_by_hand():
    y = [1.0, 2.0, 0.0, 4.0, 3.0]  # y_0 .. y_4, kappa = 2, T = 2
    # ybar_n = sum_{i<=n}(y_i - 1)/(n+1): 0/1, 1/2, 0/3, 3/4, 5/5
    np.testing.assert_allclose(average_normalized_output(y, 1.0), [0, 0.5, 0, 0.75, 1.0])
    # S_n = 5 - max_{i<=n} y_i
    np.testing.assert_allclose(simple_regret(y, 5.0), [4, 3, 3, 1, 1])
    m = run_metrics(y, [7, 3], [0.5, 1.5], kappa=2, m=1.0, max_value=5.0)
    assert m["n"].tolist() == [0, 2, 4]
    np.testing.assert_allclose(m["m1"], [0, 0, 1.0])
    np.testing.assert_allclose(m["m2"], [4, 3, 1])
    assert m["m3"] == 10 and m["m4"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="1 \\+ kappa T"):
        run_metrics(y[:4], [7, 3], [0.5, 1.5], kappa=2, m=1.0, max_value=5.0)

    ones = [3.0, 1.0, 1.0, 1.0, 1.0]
    other = run_metrics(ones, [9, 1], [1.0, 1.0], kappa=2, m=1.0, max_value=5.0)
    np.testing.assert_allclose(other["m1"], [2, 2 / 3, 2 / 5])  # (2 + 0 + ... + 0) / (n + 1)
    agg = aggregate([m, other])
    np.testing.assert_allclose(agg["m1"][0], [1, 1 / 3, 0.7])
    np.testing.assert_allclose(agg["m1"][1], [1, 1 / 3, 0.3])  # |a - b| / 2 for two runs
    np.testing.assert_allclose(agg["m2"][0], [3, 2.5, 1.5])  # S: [4, 3, 1] and [2, 2, 2]
    np.testing.assert_allclose(agg["m3"], (10, 0))
    np.testing.assert_allclose(agg["m4"], (1.0, 0))
    np.testing.assert_allclose(in_sigma_units([1.0, 0.5], [0.5, 0.5], 0.5), [1.0, 0.0])


def test_run_metrics_use_the_dataset_normalisers():
    ds = plankton(7)
    run = run_macro(db_gp_ucb(), ds)
    out = run.outputs
    emp = run.metrics(ds)
    n = np.arange(0, 21, 4)
    np.testing.assert_allclose(
        emp["m1"], [np.mean(out[: k + 1] - ds.values.mean()) for k in n], rtol=1e-12
    )
    np.testing.assert_allclose(emp["m2"], [ds.values.max() - out[: k + 1].max() for k in n])
    prior = run.metrics(ds, normaliser="prior")  # plankton's prior mean is 0
    np.testing.assert_allclose(prior["m1"], [np.mean(out[: k + 1]) for k in n], rtol=1e-12)
    assert emp["m3"] == 25 and emp["m4"] == pytest.approx(run.seconds.mean())
    with pytest.raises(ValueError, match="normaliser"):
        run.metrics(ds, normaliser="median")


def test_brute_force_helper_covers_every_sequence():
    ds = trap_dataset()
    totals = best_paths(ds.domain, ds.values, 3, 2)
    expected = {p for p in itertools.product(range(7), repeat=2) if abs(p[0] - 3) == 1}
    expected = {p for p in expected if abs(p[1] - p[0]) == 1}
    assert set(totals) == expected


# -- every method of the experiments through the runner ------------------------------------------
def _valid_run(run, ds):
    loc = run.start
    for t, path in enumerate(run.paths):
        rows = ds.domain.macro_actions(loc)
        assert np.array_equal(rows[run.actions[t]], path)
        loc = int(path[-1])
    np.testing.assert_array_equal(run.values, ds.values[run.paths])


@pytest.mark.parametrize(
    "method, kappa, nodes",
    [
        (runner_module.anytime(2, n_samples=5, iterations=20), 4, "tree"),
        (runner_module.anytime(2, n_samples=5, iterations=20, lam=5.0, init="infinite"), 4, "tree"),
        (runner_module.gp_bucb(), 4, "none"),
        (runner_module.gp_ucb_pe(), 4, "none"),
        (runner_module.bbo_lp(), 4, "none"),
        (runner_module.q_ei(), 4, "none"),
        (runner_module.ei(), 1, "none"),
        (runner_module.rollout(2), 1, "tree"),
    ],
    ids=lambda v: getattr(v, "name", str(v)),
)
def test_every_baseline_and_anytime_runs_through_the_runner(method, kappa, nodes):
    ds = plankton(seed=3, kappa=kappa, grid_size=12)
    start = ds.domain.cell(6, 6)
    run = run_macro(method, ds, start=start, budget=8, seed=1)
    _valid_run(run, ds)
    assert (run.nodes > 0).all() if nodes == "tree" else (run.nodes == 0).all()
    again = run_macro(method, ds, start=start, budget=8, seed=1)
    np.testing.assert_array_equal(again.paths, run.paths)


def test_greedy_batch_baselines_get_the_iteration_for_their_beta(monkeypatch):
    seen = {"gp_bucb": [], "gp_ucb_pe": []}
    for name in seen:
        real = getattr(runner_module.baselines_batch, name)

        def spy(*args, _real=real, _name=name, **kwargs):
            seen[_name].append(kwargs["iteration"])
            return _real(*args, **kwargs)

        monkeypatch.setattr(runner_module.baselines_batch, name, spy)
    ds = plankton(seed=0, kappa=2, grid_size=10)
    for method in (runner_module.gp_bucb(), runner_module.gp_ucb_pe()):
        run_macro(method, ds, start=ds.domain.cell(5, 5), budget=8, seed=0)
    assert seen == {"gp_bucb": [0, 1, 2, 3], "gp_ucb_pe": [0, 1, 2, 3]}


def test_unlimited_anytime_ends_at_the_exhaustive_node_count():
    ds = plankton(seed=2, kappa=2, grid_size=10)
    method = runner_module.anytime(2, n_samples=3, iterations=None)
    run = run_macro(method, ds, start=ds.domain.cell(5, 5), budget=4, seed=0)
    # a saturated search has built A1's whole tree: H_eff = 2, then 1 (A = 4 from the centre)
    assert run.nodes.tolist() == [exhaustive_nodes(4, 3, 2), exhaustive_nodes(4, 3, 1)]
