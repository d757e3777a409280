"""Kernels, the incremental finite-domain GP and maximum-likelihood fitting."""

import numpy as np
import pytest
from scipy.optimize import approx_fprime

from frontierbo.core.fit import (
    LogNormalPriors,
    fit_hyperparameters,
    negative_log_likelihood,
    negative_log_likelihood_direct,
)
from frontierbo.core.gp import FiniteDomainGP
from frontierbo.core.kernels import Matern32, Matern52, SquaredExponential, make_kernel

KERNELS = [
    SquaredExponential(1.3, 2.0),
    SquaredExponential(np.array([0.7, 2.0]), 0.5),
    Matern32(1.1, 1.5),
    Matern32(np.array([0.4, 1.2]), 1.0),
    Matern52(0.9, 0.8),
    Matern52(np.array([1.5, 0.6]), 3.0),
]


def test_kernel_values_by_hand():
    a, b = np.array([[0.0, 0.0]]), np.array([[3.0, 4.0]])  # distance 5
    assert SquaredExponential(5.0, 2.0)(a, b)[0, 0] == pytest.approx(2.0 * np.exp(-0.5))
    r = 1.0  # distance 5 / lengthscale 5
    assert Matern32(5.0, 1.0)(a, b)[0, 0] == pytest.approx(
        (1 + np.sqrt(3) * r) * np.exp(-np.sqrt(3))
    )
    m52 = (1 + np.sqrt(5) + 5 / 3) * np.exp(-np.sqrt(5))
    assert Matern52(5.0, 1.0)(a, b)[0, 0] == pytest.approx(m52)
    # ARD: dividing each axis by its lengthscale
    ard = SquaredExponential(np.array([3.0, 4.0]), 1.0)(a, b)[0, 0]
    assert ard == pytest.approx(np.exp(-0.5 * 2.0))


@pytest.mark.parametrize("kernel", KERNELS, ids=repr)
def test_kernel_matrix_symmetric_psd(kernel):
    X = np.random.default_rng(0).uniform(-2, 2, (60, 2))
    K = kernel(X)
    assert np.allclose(K, K.T)
    assert np.allclose(np.diag(K), kernel.variance)
    assert np.linalg.eigvalsh(K).min() > -1e-9 * kernel.variance
    assert np.allclose(kernel(X, X), K, atol=1e-12)


@pytest.mark.parametrize("kernel", KERNELS, ids=repr)
def test_nll_gradient_matches_finite_differences(kernel):
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 4, (30, 2))
    y = np.sin(X[:, 0]) + 0.2 * rng.standard_normal(30)
    theta = np.concatenate([kernel.log_params, [np.log(0.05), 0.2]])
    nll, grad = negative_log_likelihood(theta, X, y, kernel)
    numeric = approx_fprime(theta, lambda t: negative_log_likelihood(t, X, y, kernel)[0], 1e-7)
    np.testing.assert_allclose(grad, numeric, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ["se", "matern32", "matern52"])
@pytest.mark.parametrize("ard", [True, False])
def test_fast_nll_equals_the_textbook_formula(name, ard):
    """The fast path (no W, no dK, lower-triangle inverse) against R&W (5.9) term by term."""
    rng = np.random.default_rng(2)
    X = rng.uniform(0, 1, (70, 3))
    y = np.sin(4 * X).sum(axis=1) + 0.1 * rng.standard_normal(70)
    template = make_kernel(name, np.ones(3) if ard else 1.0, 1.0)
    for _ in range(3):
        logs = np.log(rng.uniform(0.1, 1.5, 3 if ard else 1))
        theta = np.concatenate([[rng.normal()], logs, [rng.uniform(-8, 0), rng.normal()]])
        fast, grad_fast = negative_log_likelihood(theta, X, y, template)
        direct, grad_direct = negative_log_likelihood_direct(theta, X, y, template)
        assert fast == pytest.approx(direct, rel=1e-12, abs=1e-9)
        np.testing.assert_allclose(grad_fast, grad_direct, rtol=1e-9, atol=1e-9)


def test_map_fit_pulls_lengthscales_towards_the_prior():
    """Three points of a function of x1 only: ML is free to send l_2 to its bound, the MAP
    estimate keeps it near the prior's mode. The penalty is the log-normal's negative log
    density of each value (BoTorch's), or the normal's of its log with density="log"."""
    priors = LogNormalPriors.dimension_scaled(2)
    loc = np.sqrt(2) + 0.5 * np.log(2)
    assert priors.lengthscale_loc == pytest.approx(loc)
    theta = np.array([0.0, 1.0, 2.0, -4.0, 0.0])
    value, grad = priors.penalty(theta)
    z = (theta[1:3] - loc) / np.sqrt(3)
    assert value == pytest.approx(0.5 * (z @ z) + 1.0 + 2.0 - 4.0)  # + log l1 + log l2 + log s2
    np.testing.assert_allclose(grad[1:3], z / np.sqrt(3) + 1.0)
    assert grad[0] == grad[-1] == 0.0 and grad[-2] == 1.0  # log noise at its prior mean -4
    # the log-normal's mode exp(loc - scale^2) is where the penalty is flat
    mode_l, mode_noise = priors.mode()
    assert mode_l == pytest.approx(np.exp(loc - 3.0)) and mode_noise == pytest.approx(np.exp(-5.0))
    at_mode = np.array([0.0, np.log(mode_l), np.log(mode_l), np.log(mode_noise), 0.0])
    np.testing.assert_allclose(priors.penalty(at_mode)[1], 0.0, atol=1e-12)
    log_density = LogNormalPriors.dimension_scaled(2, density="log")
    value, grad = log_density.penalty(theta)
    assert value == pytest.approx(0.5 * (z @ z))
    np.testing.assert_allclose(grad[1:3], z / np.sqrt(3))
    assert log_density.mode() == pytest.approx((np.exp(loc), np.exp(-4.0)))
    with pytest.raises(ValueError, match="density"):
        LogNormalPriors(1.0, 1.0, density="theta")
    X = np.array([[0.1, 0.2], [0.5, 0.9], [0.9, 0.4]])
    y = np.sin(3 * X[:, 0])
    ml = fit_hyperparameters(X, y, "matern52", n_restarts=3, seed=0)
    post = fit_hyperparameters(X, y, "matern52", n_restarts=3, seed=0, priors=priors)
    gap = lambda fit: abs(np.log(fit.kernel.lengthscale[1]) - np.log(mode_l))  # noqa: E731
    assert gap(post) < gap(ml)


def test_a_held_variance_stays_and_the_rest_is_the_optimum_given_it():
    rng = np.random.default_rng(4)
    X = rng.random((25, 2))
    y = np.sin(6 * X[:, 0]) + 0.3 * X[:, 1]
    y = (y - y.mean()) / y.std()
    priors = LogNormalPriors.dimension_scaled(2)
    held = fit_hyperparameters(X, y, "matern52", n_restarts=3, seed=0, priors=priors, variance=1.0)
    assert held.kernel.variance == 1.0
    free = fit_hyperparameters(X, y, "matern52", n_restarts=3, seed=0, priors=priors)
    assert free.kernel.variance != 1.0 and free.nll <= held.nll + 1e-9  # the free fit is no worse
    # the held fit is a stationary point of the objective in the parameters it optimised
    theta = np.concatenate([[0.0], np.log(held.kernel.lengthscale),
                            [np.log(held.noise_variance), held.mean]])  # fmt: skip
    from frontierbo.core.fit import _map_objective

    _, grad = _map_objective(theta, X, y, held.kernel, priors)
    lo_noise = np.log(1e-10)
    free_params = [1, 2, 4] + ([3] if theta[3] > lo_noise + 1e-6 else [])
    np.testing.assert_allclose(grad[free_params], 0.0, atol=1e-3)
    with pytest.raises(ValueError, match=r"variance must be in \(0, inf\)"):
        fit_hyperparameters(X, y, variance=0.0)


def test_make_kernel_rejects_unknown_and_bad_lengthscale():
    with pytest.raises(ValueError, match="kernel must be one of"):
        make_kernel("rbf")
    with pytest.raises(ValueError, match="lengthscale"):
        SquaredExponential(-1.0)
    with pytest.raises(ValueError, match="variance"):
        SquaredExponential(1.0, 0.0)


def _random_gp(kernel, noise=1e-2, n=200, seed=0):
    X = np.random.default_rng(seed).uniform(-3, 3, (n, 2))
    return FiniteDomainGP(X, kernel, noise, prior_mean=0.3)


def test_posterior_prior_and_one_observation_by_hand():
    sy2, sn2 = 1.0, 1e-5
    gp = FiniteDomainGP(np.array([[0.0], [10.0]]), SquaredExponential(1.0, sy2), sn2)
    assert np.allclose(gp.mean, 0.0) and np.allclose(gp.variance, sy2)
    gp.add(0, 2.0)
    assert gp.mean[0] == pytest.approx(sy2 * 2.0 / (sy2 + sn2))
    assert gp.variance[0] == pytest.approx(sy2 * sn2 / (sy2 + sn2), rel=1e-9)
    assert gp.variance[0] == pytest.approx(9.9999e-6, rel=1e-4)
    assert gp.predictive_variance()[0] == pytest.approx(gp.variance[0] + sn2)


@pytest.mark.parametrize("kernel", KERNELS, ids=repr)
def test_incremental_posterior_equals_direct_formula(kernel):
    gp = _random_gp(kernel)
    rng = np.random.default_rng(2)
    for step in range(40):
        i = int(rng.integers(gp.n))  # repeats included
        gp.add(i, float(rng.standard_normal()), noise_variance=None if step % 3 else 0.05)
        if step % 13 == 0 or step == 39:
            mean, var = gp.direct_posterior()
            np.testing.assert_allclose(gp.mean, mean, atol=1e-8)
            np.testing.assert_allclose(gp.variance, var, atol=1e-8)


def test_posterior_tiny_noise_stays_close_and_nonnegative():
    # sigma_n^2 = 1e-5 on a dense grid (the synthetic experiment's regime): ill-conditioned.
    g = np.linspace(-1, 1, 30)
    gp = FiniteDomainGP(g[:, None], SquaredExponential(0.5, 1.0), 1e-5)
    rng = np.random.default_rng(3)
    for i in rng.permutation(30)[:20]:
        gp.add(int(i), float(np.sin(3 * g[i])))
    mean, var = gp.direct_posterior()
    assert np.all(gp.variance >= 0)
    np.testing.assert_allclose(gp.mean, mean, atol=1e-8)
    np.testing.assert_allclose(gp.variance, var, atol=1e-8)


def test_noise_free_repeat_uses_jitter_not_nan():
    gp = FiniteDomainGP(np.array([[0.0], [1.0]]), SquaredExponential(1.0, 1.0), 0.0)
    gp.add(0, 1.0)
    gp.add(0, 1.0)
    assert np.all(np.isfinite(gp.mean)) and np.all(gp.variance >= 0)
    assert gp.mean[0] == pytest.approx(1.0, abs=1e-6)


def test_capacity_growth_keeps_posterior():
    gp = FiniteDomainGP(np.linspace(0, 5, 50)[:, None], Matern52(1.0, 1.0), 0.1, capacity=2)
    for i in range(0, 50, 5):
        gp.add(i, float(np.cos(i)))
    mean, var = gp.direct_posterior()
    np.testing.assert_allclose(gp.mean, mean, atol=1e-10)
    np.testing.assert_allclose(gp.variance, var, atol=1e-10)


def test_gp_rejects_bad_input():
    with pytest.raises(ValueError, match="candidates must be finite"):
        FiniteDomainGP(np.array([[0.0], [np.nan]]), SquaredExponential(), 0.1)
    gp = FiniteDomainGP(np.zeros((3, 1)), SquaredExponential(), 0.1)
    with pytest.raises(ValueError, match=r"index must be an integer in \[0, 2\]"):
        gp.add(3, 1.0)
    with pytest.raises(ValueError, match="y must be"):
        gp.add(0, float("nan"))
    with pytest.raises(ValueError, match="noise_variance"):
        FiniteDomainGP(np.zeros((3, 1)), SquaredExponential(), -1.0)


@pytest.mark.slow  # a multi-restart MLE fit: seconds
def test_mle_recovers_known_hyperparameters():
    """Sample from a GP with known hyperparameters; MLE within a stated tolerance.

    Tolerances: lengthscales and signal variance within 35 % (400 points give a few effective
    samples of the variance), noise variance within 30 %, mean within 1 (prior sd 1.2).
    """
    rng = np.random.default_rng(4)
    X = rng.uniform(0, 10, (400, 2))
    true = SquaredExponential(np.array([1.5, 3.0]), 1.5)
    K = true(X) + 1e-8 * np.eye(400)
    y = (
        0.7
        + np.linalg.cholesky(K) @ rng.standard_normal(400)
        + np.sqrt(0.05) * rng.normal(size=400)
    )
    fit = fit_hyperparameters(X, y, kernel="se", ard=True, n_restarts=4, seed=0)
    np.testing.assert_allclose(fit.kernel.lengthscale, [1.5, 3.0], rtol=0.35)
    assert fit.kernel.variance == pytest.approx(1.5, rel=0.35)
    assert fit.noise_variance == pytest.approx(0.05, rel=0.3)
    assert fit.mean == pytest.approx(0.7, abs=1.0)
    assert fit.nll <= min(fit.restarts_nll) + 1e-9


def test_mle_isotropic_and_seeded():
    rng = np.random.default_rng(5)
    X = rng.uniform(0, 5, (80, 1))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.standard_normal(80)
    a = fit_hyperparameters(X, y, kernel="matern52", ard=False, n_restarts=2, seed=3)
    b = fit_hyperparameters(X, y, kernel="matern52", ard=False, n_restarts=2, seed=3)
    assert isinstance(a.kernel.lengthscale, float)
    assert a.nll == b.nll and a.kernel.lengthscale == b.kernel.lengthscale


def test_mle_rejects_bad_input():
    with pytest.raises(ValueError, match="y must have length 3"):
        fit_hyperparameters(np.zeros((3, 1)), np.zeros(2))
    with pytest.raises(ValueError, match="X must have at least 2 row"):
        fit_hyperparameters(np.zeros((1, 1)), np.zeros(1))
    with pytest.raises(ValueError, match="n_restarts"):
        fit_hyperparameters(np.zeros((3, 1)), np.arange(3.0), n_restarts=0)


def test_precomputed_kernel_gp_equals_the_coordinate_gp():
    X = np.random.default_rng(7).uniform(-2, 2, (40, 2))
    se = SquaredExponential(0.8, 1.3)
    from frontierbo.core.kernels import PrecomputedKernel

    pre = PrecomputedKernel(se(X))
    a = FiniteDomainGP(X, se, 0.05)
    b = FiniteDomainGP(PrecomputedKernel.arms(40), pre, 0.05)
    for i, y in [(3, 1.0), (17, -0.5), (3, 0.7), (31, 2.0)]:
        a.add(i, y)
        b.add(i, y)
    np.testing.assert_allclose(b.mean, a.mean, atol=1e-10)
    np.testing.assert_allclose(b.variance, a.variance, atol=1e-10)
    mean, var = b.direct_posterior()
    np.testing.assert_allclose(b.mean, mean, atol=1e-8)
    np.testing.assert_allclose(b.variance, var, atol=1e-8)


def test_precomputed_kernel_rejects_bad_matrices():
    from frontierbo.core.kernels import PrecomputedKernel

    with pytest.raises(ValueError, match="square"):
        PrecomputedKernel(np.ones((2, 3)))
    with pytest.raises(ValueError, match="symmetric"):
        PrecomputedKernel(np.array([[1.0, 0.5], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="positive semi-definite"):
        PrecomputedKernel(np.array([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match="arm indices"):
        PrecomputedKernel(np.eye(2))(np.array([[2.0]]))


def test_log_det_matches_direct_and_gives_information_gain():
    X = np.random.default_rng(8).uniform(0, 3, (25, 1))
    gp = FiniteDomainGP(X, Matern52(0.7, 1.0), 0.3)
    assert gp.log_det == 0.0
    for i in (2, 9, 2, 20):
        gp.add(i, 0.0)
    Kt = gp.kernel(X[gp.observed_indices]) + 0.3 * np.eye(4)
    assert gp.log_det == pytest.approx(np.linalg.slogdet(Kt)[1], rel=1e-12)
    gain = 0.5 * np.linalg.slogdet(np.eye(4) + gp.kernel(X[gp.observed_indices]) / 0.3)[1]
    assert 0.5 * (gp.log_det - 4 * np.log(0.3)) == pytest.approx(gain, rel=1e-12)


def test_joint_posterior_of_a_batch_matches_the_direct_solve():
    rng = np.random.default_rng(3)
    X = rng.uniform(0, 1, (80, 2))
    gp = FiniteDomainGP(X, SquaredExponential(0.3, 1.5), noise_variance=0.01, prior_mean=0.2)
    rows = np.array([4, 17, 17, 60])  # a repeated row: a path may revisit a cell
    mean0, cov0 = gp.joint_posterior(rows)
    np.testing.assert_allclose(cov0, gp.kernel(X[rows]), atol=1e-14)
    for i in rng.choice(80, 12, replace=False):
        gp.add(int(i), float(np.sin(5 * X[i, 0])), noise_variance=0.01 * (1 + i % 3))
    mean, cov = gp.joint_posterior(rows)
    np.testing.assert_allclose(mean, gp.direct_posterior()[0][rows], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(cov, gp.direct_covariance(rows), rtol=1e-8, atol=1e-12)
    np.testing.assert_array_equal(cov, cov.T)
    np.testing.assert_allclose(np.diag(cov), gp.posterior_variance(clip=False)[rows], atol=1e-12)
    other = np.array([0, 1, 2])
    np.testing.assert_allclose(
        gp.covariance(rows, other), gp.direct_covariance(rows, other), rtol=1e-8, atol=1e-12
    )


def test_conditioning_on_hypothetical_observations_equals_adding_them():
    """The planner's algebra on covariance blocks = the GP after the observations (no state)."""
    rng = np.random.default_rng(4)
    X = rng.uniform(0, 1, (50, 1))
    gp = FiniteDomainGP(X, Matern52(0.2, 1.0), noise_variance=0.05)
    gp.add(3, 0.4)
    path, query, y = np.array([10, 20, 30]), np.arange(50), np.array([0.1, -0.3, 0.8])
    s = gp.noise_variance
    gain = np.linalg.solve(gp.covariance(path) + s * np.eye(3), gp.covariance(path, query)).T
    mean = gp.mean[query] + gain @ (y - gp.mean[path])
    cov = gp.covariance(query) - gain @ gp.covariance(path, query)
    for i, v in zip(path, y, strict=True):
        gp.add(int(i), float(v))
    np.testing.assert_allclose(mean, gp.mean, atol=1e-10)
    np.testing.assert_allclose(np.diag(cov), gp.posterior_variance(clip=False), atol=1e-10)


@pytest.mark.parametrize("rows", [[], [[1, 2]], [-1], [80], [0.5]])
def test_joint_posterior_rejects_bad_rows(rows):
    gp = FiniteDomainGP(np.zeros((80, 1)), SquaredExponential(1.0, 1.0), 0.1)
    with pytest.raises(ValueError, match="rows"):
        gp.joint_posterior(np.array(rows))


def test_adaptive_subset_reaches_the_fixed_optimum_from_fewer_restarts():
    """Restarts on 500 rows, then a warm start on 700: the same optimum as three restarts on all
    700 rows; small data takes the fixed path; a bad choice is one clear error."""
    rng = np.random.default_rng(4)
    X = rng.uniform(size=(700, 2))
    y = np.sin(4 * X[:, 0]) + X[:, 1] ** 2 + 0.05 * rng.standard_normal(700)
    fixed = fit_hyperparameters(X, y, "matern52", n_restarts=3, seed=0, min_noise_variance=1e-6)
    adaptive = fit_hyperparameters(
        X, y, "matern52", n_restarts=3, seed=0, min_noise_variance=1e-6, subset="adaptive"
    )
    assert adaptive.n_points in (500, 700)
    if adaptive.n_points == 700:
        assert adaptive.nll == pytest.approx(fixed.nll, abs=1e-3)
        np.testing.assert_allclose(adaptive.kernel.lengthscale, fixed.kernel.lengthscale, rtol=1e-2)
    small = fit_hyperparameters(X[:300], y[:300], subset="adaptive", n_restarts=2, seed=1)
    same = fit_hyperparameters(X[:300], y[:300], n_restarts=2, seed=1)
    assert small.restarts_nll == same.restarts_nll and small.n_points == 300
    with pytest.raises(ValueError, match="subset must be one of"):
        fit_hyperparameters(X, y, subset="half")


def test_add_many_is_add_after_add_to_rounding():
    """One factorisation and a BLAS-3 solve give the posterior of t single adds; later adds,
    a GP that already has observations and float32 take the one-by-one path."""
    rng = np.random.default_rng(3)
    X = rng.random((400, 3))
    kernel = make_kernel("matern52", np.array([0.3, 0.5, 0.4]), 1.3)
    rows, ys = rng.choice(400, 60, replace=False), rng.standard_normal(60)
    one, many = FiniteDomainGP(X, kernel, 1e-4, 0.2), FiniteDomainGP(X, kernel, 1e-4, 0.2)
    for i, y in zip(rows, ys, strict=True):
        one.add(int(i), float(y))
    many.add_many(rows, ys)
    np.testing.assert_allclose(many.mean, one.mean, rtol=0, atol=1e-10)
    np.testing.assert_allclose(many.variance, one.variance, rtol=0, atol=1e-12)
    np.testing.assert_allclose(many.cholesky_factor(), one.cholesky_factor(), atol=1e-12)
    assert many.log_det == pytest.approx(one.log_det, abs=1e-9)
    assert list(many.observed_indices) == list(rows)
    one.add(5, 0.3)
    many.add_many([5], [0.3])  # one more: the one-by-one path on the batch's block
    np.testing.assert_allclose(many.mean, one.mean, rtol=0, atol=1e-10)
    single = FiniteDomainGP(X, kernel, 1e-4, 0.2, dtype="float32")
    batch = FiniteDomainGP(X, kernel, 1e-4, 0.2, dtype="float32")
    for i, y in zip(rows, ys, strict=True):
        single.add(int(i), float(y))
    batch.add_many(rows, ys)  # float32 adds one by one: the same bits
    np.testing.assert_array_equal(batch.mean, single.mean)
    with pytest.raises(ValueError, match="ys must be 2 finite values"):
        FiniteDomainGP(X, kernel, 1e-4).add_many([1, 2], [0.0, np.nan])
