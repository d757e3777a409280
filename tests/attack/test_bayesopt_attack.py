"""The BayesOpt attack baseline, GP-BO-auto-dr
(docs/decisions.md#bos-bayesopt-baseline-follows-gpldr)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import qmc

from frontierbo._threads import one_blas_thread
from frontierbo.attack.add_gp_ucb import standardise
from frontierbo.attack.base import execute
from frontierbo.attack.bayesopt_attack import UCB, BayesOptAttack
from frontierbo.attack.oracle import QueryOracle
from frontierbo.attack.resize import downsample_many, upsample
from frontierbo.core.exact import ExactGP
from frontierbo.core.kernel_fit import fit_kernel
from frontierbo.core.kernels import Matern52

SHAPE = (28, 28, 1)
FAST = {"n_random": 300, "sides": (6, 10, 14)}


@pytest.fixture(autouse=True)
def _single_blas_thread():
    """The matrices here are small (n <= 75): on a busy 2-core machine a second BLAS thread only
    adds contention (these tests took 50-70 s instead of 3 s)."""
    with one_blas_thread():
        yield


class SmoothSoftmax:
    """A linear softmax victim whose weights are upsampled 6x6 fields (so a latent space sees
    them); it records every input it is queried on."""

    def __init__(self, scale: float, bias, seed: int = 3):
        rng = np.random.default_rng(seed)
        fields = [upsample(rng.normal(size=36), SHAPE).ravel() for _ in range(len(bias))]
        self.W, self.b = scale * np.stack(fields), np.asarray(bias, dtype=float)
        self.inputs = []

    def __call__(self, x):
        self.inputs.append(x[0].copy())
        z = x.reshape(x.shape[0], -1) @ self.W.T + self.b
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)


def _hopeless_oracle(budget: int) -> tuple[SmoothSoftmax, QueryOracle]:
    """Class 0 wins by a logit margin of 10, far beyond any perturbation: the budget ends it."""
    model = SmoothSoftmax(0.05, [10.0] + [0.0] * 9)
    x0 = np.random.default_rng(1).uniform(-0.5, 0.5, size=SHAPE)  # clipping acts at the edges
    return model, QueryOracle(model, x0, target=4, delta_max=0.3, budget=budget)


def _gp(n: int, d: int, seed: int) -> ExactGP:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    y = standardise(np.sin(2 * X[:, 0]) + X[:, 1:].sum(1) / d)
    return ExactGP(X, y, Matern52(1.7, 0.8), 1e-6)


def test_ucb_value_and_gradient_agree_with_the_exact_gp_and_finite_differences():
    gp = _gp(25, 9, seed=0)
    acq = UCB(gp, beta_sqrt=3.0)
    for z in np.random.default_rng(1).uniform(-1, 1, size=(5, 9)):
        value, grad = acq.value_and_gradient(z)
        mean, dmean = gp.mean_gradient(z)
        var, dvar = gp.variance_gradient(z)
        sigma = np.sqrt(var + 1e-6)  # sigma includes the noise variance, as GPy's predict
        assert value == pytest.approx(mean + 3.0 * sigma, abs=1e-10)
        assert value == pytest.approx(acq(z[None])[0], abs=1e-10)
        np.testing.assert_allclose(grad, dmean + 3.0 * dvar / (2 * sigma), atol=1e-10)
        fd = [
            (acq.value_and_gradient(z + h)[0] - acq.value_and_gradient(z - h)[0]) / 2e-6
            for h in 1e-6 * np.eye(9)
        ]
        np.testing.assert_allclose(grad, fd, atol=1e-6)


def test_ucb_optimiser_is_at_least_as_good_as_every_random_candidate():
    gp = _gp(40, 16, seed=2)
    acq = UCB(gp, beta_sqrt=3.0)
    z, value = acq.maximize(np.random.default_rng(5), n_random=1000, n_batches=4)
    # the same generator state reproduces the candidate pool: 4 batches of 250, data in the first
    rng = np.random.default_rng(5)
    pool = np.vstack([rng.uniform(-1, 1, size=(250, 16)) for _ in range(4)] + [gp.X])
    assert np.all(np.abs(z) <= 1.0)
    assert value == pytest.approx(acq(z[None])[0], abs=1e-10)
    assert value >= acq(pool).max() - 1e-12


def test_side_selection_picks_the_side_of_the_largest_marginal_likelihood():
    # perturbations clustered near 0 (as BO's queries become) with y linear in the 8 x 8 latent
    rng = np.random.default_rng(0)
    latent = np.clip(0.2 * rng.normal(size=(40, 64)), -1, 1)
    U = np.stack([upsample(z, SHAPE) for z in latent])
    y = latent @ rng.normal(size=64)
    attack = BayesOptAttack(sides=(6, 8, 12, 20), fit_maxiter=200)
    choice = attack.select_side(U, y)
    direct = {}
    for s in attack.sides:  # one fit from variance 1, lengthscale 1 per side, as the reference
        Z = downsample_many(U, s)
        fit = fit_kernel(
            Z,
            standardise(y),
            Matern52(1.0, 1.0),
            bounds=[attack.variance_bounds, attack.lengthscale_bounds],
            noise_variance=1e-6,
            n_restarts=1,
            maxiter=200,
        )
        direct[s] = ExactGP(Z, standardise(y), fit.kernel, 1e-6).log_marginal_likelihood()
    assert max(direct.values()) - min(direct.values()) > 1.0  # the choice is not a tie
    assert choice.side == max(direct, key=direct.get) == 8  # the side that generated y
    for s in attack.sides:
        assert choice.log_likelihoods[s] == pytest.approx(direct[s], abs=1e-6)
    np.testing.assert_allclose(choice.Z, downsample_many(U, 8))


def test_a_side_far_from_its_data_scale_stays_on_the_white_noise_plateau():
    # Latin-hypercube points of [-1, 1]^400 lie ~ 10 lengthscales apart at the start (1, 1):
    # K ~ I, the gradient vanishes and the likelihood is that of white noise, as in the reference
    attack = BayesOptAttack(sides=(20,))
    U = attack.initial_perturbations(SHAPE, np.random.default_rng(0))
    y = np.random.default_rng(1).normal(size=30)
    choice = attack.select_side(U, y)
    assert choice.log_likelihoods[20] == pytest.approx(-15 * (1 + np.log(2 * np.pi)), abs=1e-4)


def test_initial_design_is_a_latin_hypercube_of_the_full_resolution_box():
    attack = BayesOptAttack(n_init=30)
    U = attack.initial_perturbations(SHAPE, np.random.default_rng(4))
    assert U.shape == (30, *SHAPE)
    strata = np.floor((U.reshape(30, -1) + 1.0) / 2.0 * 30).astype(int)
    assert np.all(np.sort(strata, axis=0) == np.arange(30)[:, None])  # each stratum once
    expected = 2 * qmc.LatinHypercube(d=784, rng=np.random.default_rng(4)).random(30) - 1
    np.testing.assert_array_equal(U.reshape(30, -1), expected)


def test_attack_keeps_the_budget_ball_and_range_and_the_reference_schedule():
    model, oracle = _hopeless_oracle(budget=45)
    attack = BayesOptAttack(reselect_every=10, **FAST)
    result = execute(attack, oracle, seed=0)
    assert result.stopped_by == "budget" and not result.success
    assert len(model.inputs) == oracle.queries == 45
    X = np.array(model.inputs)
    assert X.min() >= -0.5 and X.max() <= 0.5
    assert np.abs(X - oracle.x0).max() <= 0.3 + 1e-12
    # the first 30 queries are the Latin hypercube, clipped into the range
    U = attack.initial_perturbations(SHAPE, np.random.default_rng(0))
    np.testing.assert_allclose(X[:30], np.clip(oracle.x0 + 0.3 * U, -0.5, 0.5))
    d = result.details
    assert d["iterations"] == 15
    # update(itr=0) runs before and after the first BO query; then after BO query k = itr
    assert [(s["iteration"], s["n"]) for s in d["selections"]] == [(0, 30), (0, 31), (10, 41)]
    assert [(r["iteration"], r["n"]) for r in d["refits"]] == [(0, 30), (0, 31), (5, 36), (10, 41)]
    sides = [s["side"] for s in d["selections"]]
    assert d["query_sides"] == [sides[0]] + [sides[1]] * 10 + [sides[2]] * 4
    for s in d["selections"]:
        assert s["side"] == max(s["log_likelihoods"], key=s["log_likelihoods"].get)


def test_attack_is_deterministic_for_a_fixed_seed():
    traces = []
    for seed in (7, 7, 8):
        model, oracle = _hopeless_oracle(budget=38)
        result = execute(BayesOptAttack(**FAST), oracle, seed=seed)
        traces.append((np.array(model.inputs), [r.objective for r in oracle.log], result.details))
    np.testing.assert_array_equal(traces[0][0], traces[1][0])
    assert traces[0][1] == traces[1][1] and traces[0][2] == traces[1][2]
    assert not np.array_equal(traces[0][0], traces[2][0])


def test_attack_succeeds_on_an_easy_instance_after_the_initial_design():
    model = SmoothSoftmax(0.1, [3.0] + [0.0] * 9)
    x0 = np.zeros(SHAPE)
    oracle = QueryOracle(model, x0, target=1, delta_max=0.3, budget=70)
    result = execute(BayesOptAttack(n_random=500), oracle, seed=0)
    assert result.success and result.stopped_by == "success"
    # no Latin-hypercube point reached the target: the GP-UCB queries did
    assert 30 < result.queries < 70 and result.details["iterations"] == result.queries - 30
    assert np.argmax(model(result.x_adv[None])[0]) == 1
    assert np.abs(result.x_adv - x0).max() <= 0.3 + 1e-12
    assert max(r.objective for r in oracle.log[30:]) > max(r.objective for r in oracle.log[:30])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"sides": ()}, "sides"),
        ({"sides": (6, 6)}, "sides"),
        ({"sides": (1, 6)}, r"sides\[i\]"),
        ({"n_init": 1}, "n_init"),
        ({"reselect_every": 0}, "reselect_every"),
        ({"n_random": 4, "n_batches": 5}, "n_batches"),
        ({"beta_sqrt": -1.0}, "beta_sqrt"),
        ({"noise_variance": 0.0}, "noise_variance"),
        ({"lengthscale_bounds": (2.0, 10.0)}, "lengthscale_bounds"),
        ({"init_lengthscale": 20.0, "lengthscale_bounds": (0.1, 10.0)}, "lengthscale_bounds"),
        ({"init_lengthscale": 0.0}, "init_lengthscale"),
    ],
)
def test_constructor_rejects_bad_settings(kwargs, match):
    with pytest.raises(ValueError, match=match):
        BayesOptAttack(**kwargs)


def test_attack_rejects_sides_larger_than_the_image():
    small = QueryOracle(lambda x: np.full((1, 2), 0.5), np.zeros((8, 8, 1)), 1, 0.3, 5)
    with pytest.raises(ValueError, match="max\\(sides\\) = 20"):
        BayesOptAttack().attack(small, np.random.default_rng(0), {})
    assert small.queries == 0


def test_ucb_refuses_an_ard_kernel():
    X = np.random.default_rng(0).uniform(-1, 1, size=(5, 3))
    gp = ExactGP(X, np.zeros(5), Matern52(np.ones(3), 1.0), 1e-6)
    with pytest.raises(ValueError, match="isotropic"):
        UCB(gp, 3.0)
