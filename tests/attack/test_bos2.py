"""Algorithms 5, 6, 7 and Add-GP-UCB (thesis Section 5.2)."""

from __future__ import annotations

import numpy as np
import pytest

from frontierbo._threads import one_blas_thread
from frontierbo.attack import bos2 as bos2_module
from frontierbo.attack import perturbation_bo as pbo_module
from frontierbo.attack.add_gp_ucb import AddGPSettings, AdditiveModel
from frontierbo.attack.base import execute
from frontierbo.attack.bos2 import BOS2, loop_summary
from frontierbo.attack.dimension_bo import DimensionBO, candidate_inputs, select_dimension
from frontierbo.attack.oracle import QueryOracle
from frontierbo.attack.perturbation_bo import LoopOutcome, StoppingSettings
from frontierbo.core.additive import split_groups

FAST = AddGPSettings(
    n_decompositions=3, fit_maxiter=30, refit_restarts=2, n_random=300, lbfgs_maxiter=30
)
MNIST_DIMS = (36, 64, 100, 144, 196, 256, 324)


@pytest.fixture(autouse=True)
def _single_blas_thread():
    # as attack.base.execute does: small GP matrices; a second thread only adds contention
    with one_blas_thread():
        yield


class SoftmaxModel:
    """A linear softmax classifier on flattened inputs."""

    def __init__(self, dim: int, classes: int = 10, seed: int = 0, scale: float = 0.3):
        self.W = scale * np.random.default_rng(seed).normal(size=(classes, dim))

    def __call__(self, x):
        z = x.reshape(x.shape[0], -1) @ self.W.T
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)


def _instance(budget: int, scale: float = 0.3, target_rank: int = 0, delta_max: float = 0.3):
    """A 28x28x1 instance; with scale 0 every class scores 0.1 and the argmax is class 0."""
    model = SoftmaxModel(784, scale=scale)
    x0 = np.random.default_rng(1).uniform(-0.5, 0.5, size=(28, 28, 1))
    target = int(np.argsort(model(x0[None])[0])[target_rank])
    return QueryOracle(model, x0, target, delta_max, budget)


def test_initialisation_makes_30_queries_and_the_initial_data():
    # the thesis's initial design (Section 5.3): 30 queries, D_dim tuples with t_0 = 10
    oracle = _instance(budget=100)
    details: dict = {}
    U, y, dim_data = BOS2().initialise(oracle, np.random.default_rng(0), details)
    assert oracle.queries == 30 and U.shape == (30, 28, 28, 1) and y.shape == (30,)
    assert [x for x, _ in dim_data] == [(36, 10), (196, 10), (324, 10)]
    assert [v for _, v in dim_data] == [max(y[0:10]), max(y[10:20]), max(y[20:30])]
    assert np.abs(U).max() <= 1.0
    np.testing.assert_allclose(y, [r.objective for r in oracle.log])


def test_dimension_bo_scores_look_ahead_by_i_max():
    # the thesis's worked example (Section 5.2): at t = 50 with i_max = 40 the scored tuples
    # are (d_0, 90)
    inputs = candidate_inputs(MNIST_DIMS, t=50, i_max=40)
    assert inputs.tolist() == [[d, 90] for d in MNIST_DIMS]


def test_select_dimension_is_the_ucb_argmax_of_a_stub_posterior():
    # Algorithm 6: mu + 2 sigma; ties to the first in list order
    # (docs/decisions.md#bos-dimension-gp-scaling-and-bounds)
    mean = np.array([0.0, 1.0, 0.5, 1.2, 0.0, 0.0, 0.0])
    var = np.array([0.0, 0.25, 1.0, 0.0, 0.0, 0.0, 0.0])  # scores 0, 2, 2.5, 1.2, ...
    d, scores = select_dimension(lambda x: (mean, var), MNIST_DIMS, 0, 40)
    assert d == 100
    np.testing.assert_allclose(scores[:4], [0.0, 2.0, 2.5, 1.2])
    d, _ = select_dimension(lambda x: (np.ones(7), np.zeros(7)), MNIST_DIMS, 0, 40)
    assert d == 36


def test_dimension_bo_fits_and_picks_a_dimension_near_the_best_data():
    data = [((36, 10), -5.0), ((196, 10), -1.0), ((324, 10), -4.0), ((196, 50), -0.8)]
    dim_bo = DimensionBO(MNIST_DIMS, budget=900)
    d, scores = dim_bo(data, 40, np.random.default_rng(0))
    assert d in MNIST_DIMS and scores.shape == (7,)
    assert 100 <= d <= 256  # the UCB peaks around the good observations, not at the bad ends


def test_augmentation_of_d_dim_follows_the_worked_example(monkeypatch):
    # the thesis's worked example (Section 5.2): ((196, 90), -10.3) at t = 50 after a 40-query
    # loop, then ((196, 173), -2.4)
    fake_plan = [(36, 50, -20.0), (196, 40, -10.3), (64, 60, -9.0), (196, 23, -2.4), (36, 1, -30.0)]
    seen = []

    def fake_dimension_bo(self, data, t, rng):
        seen.append((list(data), t))
        return fake_plan[len(seen) - 1][0], None

    def fake_loop(oracle, U, y, dimension, loop_budget, incumbent, loop_index, rng, **kw):
        _, length, best = fake_plan[loop_index]
        out = kw["outcome"]
        for i in range(length):
            oracle(np.zeros(oracle.x0.shape))
            out.perturbations.append(np.zeros(oracle.x0.shape))
            out.outputs.append(best if i == 0 else best - 1.0)
        return out

    monkeypatch.setattr(DimensionBO, "__call__", fake_dimension_bo)
    monkeypatch.setattr(bos2_module, "perturbation_bo", fake_loop)
    oracle = _instance(
        budget=30 + 174, scale=0.0, target_rank=-1
    )  # a constant model never reaches the target
    result = execute(BOS2(), oracle, seed=0)
    assert result.stopped_by == "budget" and oracle.queries == 204
    assert [t for _, t in seen] == [0, 50, 90, 150, 173]
    assert seen[2][0][-1] == ((196, 90), -10.3)
    assert seen[4][0][-2:] == [((64, 150), -9.0), ((196, 173), -2.4)]


def test_decomposition_is_the_max_likelihood_candidate_and_partitions_the_coordinates():
    rng = np.random.default_rng(3)
    Z = rng.uniform(-1, 1, size=(25, 36))
    y = np.sin(2 * Z[:, 0]) + Z[:, 5] ** 2
    settings = AddGPSettings(n_decompositions=5, fit_maxiter=40, refit_restarts=2)
    model = AdditiveModel.learn(Z, y, settings, np.random.default_rng(11))
    # the permutations learn() drew, replayed: restarts=1 fits draw no random numbers
    replay = np.random.default_rng(11)
    candidates = [split_groups(replay.permutation(36), 12) for _ in range(5)]
    best = int(np.argmin(model.decomposition_nlls))
    chosen = [np.sort(g) for g in model.kernel.groups]
    assert all(np.array_equal(a, b) for a, b in zip(chosen, candidates[best], strict=True))
    assert sorted(np.concatenate(chosen).tolist()) == list(range(36))
    assert {g.size for g in chosen} == {3}


def test_add_gp_ucb_finds_each_group_optimum():
    # one coordinate per group: a dense grid gives each group's true optimum over [-1, 1]
    rng = np.random.default_rng(4)
    Z = rng.uniform(-1, 1, size=(15, 3))
    y = np.sin(3 * Z[:, 0]) - (Z[:, 1] - 0.3) ** 2 + 0.5 * Z[:, 2]
    settings = AddGPSettings(n_groups=3, n_decompositions=2, n_random=50, beta_sqrt=3.0)
    model = AdditiveModel.learn(Z, y, settings, rng)
    z = model.maximize_ucb(np.random.default_rng(0))
    grid = np.linspace(-1, 1, 4001)[:, None]
    for j, g in enumerate(model.kernel.groups):
        best_on_grid = model.component_ucb(j, grid).max()
        assert model.component_ucb(j, z[g][None])[0] >= best_on_grid - 1e-6
    assert np.all(np.abs(z) <= 1.0)


def test_pool_of_a_fit_is_extended_exactly_as_data_arrive():
    """``pool_refresh="fit"``: after k queries the cached pool posteriors equal the component
    posteriors of a fresh factorisation, and new data join the start candidates."""
    rng = np.random.default_rng(5)
    Z = rng.uniform(-1, 1, size=(40, 12))
    y = np.sin(2 * Z).sum(axis=1)
    settings = AddGPSettings(
        n_groups=4, n_decompositions=2, fit_maxiter=30, refit_restarts=1, n_random=200,
        pool_refresh="fit",
    )  # fmt: skip
    model = AdditiveModel.learn(Z, y, settings, rng)
    for _ in range(4):
        z = model.maximize_ucb(rng)
        model = model.add(z, float(np.sin(2 * z).sum()))
    pool = model._pool
    assert pool.n0 == 40 and model.Z.shape[0] == 44 and pool.pool.shape == (240, 12)
    fresh = AdditiveModel(model.kernel, model.Z, model.y, settings)
    for j, g in enumerate(model.kernel.groups):
        mean, var = pool.component(j)
        expected_mean, expected_var = fresh.gp.component(j, pool.pool[:, g])
        np.testing.assert_allclose(mean, expected_mean, atol=1e-8)
        np.testing.assert_allclose(var, expected_var, atol=1e-8)
    points, ucb = model._pool_ucb(rng)
    assert points.shape[0] == 244 and ucb(0).shape == (244,)  # the 4 new data are candidates
    assert model.refit(rng)._pool is None  # a new fit draws a new pool


def _fast_bos2(**kw):
    kw.setdefault("stopping", StoppingSettings(samples=2000))
    return BOS2(perturbation=FAST, **kw)


def test_budget_is_never_exceeded_and_loops_have_the_allowed_lengths():
    # docs/decisions.md#bos-last-loop-truncated-to-the-budget-left, with and without stopping
    for attack in (_fast_bos2(), _fast_bos2(stopping=None)):
        oracle = _instance(budget=30 + 60, scale=0.0, target_rank=-1)
        result = execute(attack, oracle, seed=2)
        assert result.stopped_by == "budget" and oracle.queries == 90
        rows = loop_summary(result.details)
        assert sum(r["length"] for r in rows) == 60
        for r in rows[:-1]:
            assert 8 <= r["length"] <= 40
            if attack.stopping is None:
                assert r["length"] == 40
        assert rows[-1]["length"] <= 40
        assert all(r.linf <= 0.3 + 1e-9 for r in oracle.log)


def test_stopping_is_never_consulted_before_query_i0_plus_one(monkeypatch):
    lengths = []
    real_decide = pbo_module.decide

    def spy(policy, y):
        lengths.append(len(y))
        return real_decide(policy, y)

    monkeypatch.setattr(pbo_module, "decide", spy)
    execute(_fast_bos2(), _instance(budget=30 + 50, scale=0.0, target_rank=-1), seed=0)
    assert lengths and min(lengths) == 9


def test_bos2_is_deterministic_and_succeeds_on_an_easy_instance():
    traces = []
    for _ in range(2):
        oracle = _instance(budget=200, target_rank=-3)
        result = execute(_fast_bos2(), oracle, seed=5)
        traces.append([r.objective for r in oracle.log])
    assert traces[0] == traces[1]  # same seed, same query trace
    assert result.success and 30 < result.queries <= 200  # after the initial design
    assert result.x_adv is not None
    assert np.abs(result.x_adv - oracle.x0).max() <= 0.3 + 1e-9


def test_loop_outcome_length():
    out = LoopOutcome(36, [np.zeros(1)] * 3, [1.0, 2.0, 0.5])
    assert out.length == 3


def test_invalid_settings_name_the_parameter():
    with pytest.raises(ValueError, match="initial_queries"):
        BOS2(initial_queries=50)
    with pytest.raises(ValueError, match="init_sampling"):
        BOS2(init_sampling="sobol")


def test_scalable_profile_ranks_at_shared_values_and_fits_on_a_subset(monkeypatch):
    from frontierbo.attack import add_gp_ucb

    sizes = []
    real_fit = add_gp_ucb._fit

    def spy(template, Z, ys, settings, restarts, rng):
        sizes.append(len(Z))
        return real_fit(template, Z, ys, settings, restarts, rng)

    monkeypatch.setattr(add_gp_ucb, "_fit", spy)
    rng = np.random.default_rng(3)
    Z = rng.uniform(-1, 1, size=(40, 36))
    y = np.sin(2 * Z[:, 0]) + Z[:, 5] ** 2
    settings = AddGPSettings(
        n_decompositions=6, fit_maxiter=30, refit_restarts=2, rank_decompositions="shared",
        fit_points=15,
    )  # fmt: skip
    model = AdditiveModel.learn(Z, y, settings, np.random.default_rng(0))
    assert sizes == [15]  # only the winner is fitted, on 15 of the 40 points
    assert len(model.decomposition_nlls) == 6 and model.Z.shape == (40, 36)  # posterior: all
    model.refit(np.random.default_rng(1))
    assert sizes == [15, 15]
    with pytest.raises(ValueError, match="rank_decompositions"):
        AddGPSettings(rank_decompositions="best")
    with pytest.raises(ValueError, match="pool_refresh"):
        AddGPSettings(pool_refresh="never")
