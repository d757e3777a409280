"""Continuous-input GP core: input gradients, additive kernels (Add-GP-UCB, eq. (5.4) of the
thesis; per-group posteriors of Kandasamy et al. 2015), the exponential-decay kernel, and the
zero-mean MLE fit."""

from __future__ import annotations

import numpy as np
import pytest

from frontierbo.core.additive import AdditiveKernel, split_groups
from frontierbo.core.exact import ExactGP, PoolPosterior, cholesky_with_jitter
from frontierbo.core.kernel_fit import fit_kernel, gram_and_gradients, zero_mean_nll
from frontierbo.core.kernels import ExponentialDecay, Matern32, Matern52, SquaredExponential


def _fd(f, x, h=1e-6):
    x = np.asarray(x, dtype=float)
    g = np.empty_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def _additive(d=7, M=3, seed=0):
    rng = np.random.default_rng(seed)
    groups = split_groups(rng.permutation(d), M)
    kernels = [Matern52(float(l), float(v)) for l, v in rng.uniform(0.5, 2.0, size=(M, 2))]
    return AdditiveKernel(groups, kernels)


def _data(n=25, d=7, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 - 0.5 * X[:, 1:].prod(axis=1) + 0.1 * rng.normal(size=n)
    return X, (y - y.mean()) / y.std()


def test_split_groups_sizes_are_near_equal_chunks():
    # docs/decisions.md#project-additive-groups-are-near-equal-chunks-of-a-permutation
    # d=36 -> all 3; d=972 -> all 81; d=100 -> 4 x 9 + 8 x 8
    for d, sizes in [(36, [3] * 12), (972, [81] * 12), (100, [9] * 4 + [8] * 8)]:
        perm = np.random.default_rng(d).permutation(d)
        groups = split_groups(perm, 12)
        assert [g.size for g in groups] == sizes
        assert np.array_equal(np.sort(np.concatenate(groups)), np.arange(d))


def test_additive_kernel_is_the_sum_of_its_group_kernels():
    k = _additive()
    X, _ = _data()
    expected = sum(kj(X[:, g]) for kj, g in zip(k.kernels, k.groups, strict=True))
    np.testing.assert_allclose(k(X), expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.diag(k(X)), k.diag(X))
    with pytest.raises(ValueError, match="partition"):
        AdditiveKernel([[0, 1], [1, 2]])


@pytest.mark.parametrize(
    "kernel", [Matern52(0.7, 1.3), Matern32(0.9, 0.8), SquaredExponential(1.1, 2.0)]
)
def test_stationary_input_gradient_matches_finite_differences(kernel):
    rng = np.random.default_rng(2)
    x, B = rng.normal(size=3), rng.normal(size=(5, 3))
    fd = np.stack([_fd(lambda z, b=b: kernel(z[None], b[None])[0, 0], x) for b in B])
    np.testing.assert_allclose(kernel.grad_x(x, B), fd, rtol=1e-6, atol=1e-9)


def test_additive_parameter_gradients_match_finite_differences():
    k = _additive()
    X, _ = _data(n=6)
    _, dK = k.gradients(X)
    theta = k.log_params
    for p in range(theta.size):
        fd = _fd(
            lambda t, p=p: k.with_log_params(np.where(np.arange(theta.size) == p, t[0], theta))(X)[
                0, 3
            ],
            theta[p : p + 1],
        )
        assert dK[p][0, 3] == pytest.approx(fd[0], rel=1e-5, abs=1e-9)


def test_exponential_decay_kernel_values_and_gradients():
    k = ExponentialDecay(alpha=2.0, beta=3.0)
    t = np.array([[1.0], [2.0], [5.0]])
    # hand-computed: k(1, 2) = 3^2 / (1 + 2 + 3)^2 = 0.25
    assert k(t)[0, 1] == pytest.approx(0.25)
    assert k.diag(t)[2] == pytest.approx((3.0 / 13.0) ** 2)
    _, dK = k.gradients(t)
    theta = k.log_params
    for p in range(2):
        fd = _fd(
            lambda a, p=p: k.with_log_params(np.where(np.arange(2) == p, a[0], theta))(t)[1, 2],
            theta[p : p + 1],
        )
        assert dK[p][1, 2] == pytest.approx(fd[0], rel=1e-6)


def test_exact_gp_matches_the_direct_formula():
    k = Matern52(0.8, 1.5)
    X, y = _data(d=3)
    gp = ExactGP(X, y, k, noise_variance=0.05, prior_mean=0.2)
    Xs = np.random.default_rng(5).uniform(-1, 1, size=(4, 3))
    A_inv = np.linalg.inv(k(X) + 0.05 * np.eye(len(y)))
    mean = 0.2 + k(Xs, X) @ A_inv @ (y - 0.2)
    cov = k(Xs) - k(Xs, X) @ A_inv @ k(X, Xs)
    m, v = gp.predict(Xs)
    np.testing.assert_allclose(m, mean, rtol=1e-9)
    np.testing.assert_allclose(v, np.diag(cov), rtol=1e-8, atol=1e-12)
    _, c = gp.predict(Xs, full_cov=True)
    np.testing.assert_allclose(c, cov, rtol=1e-8, atol=1e-12)
    _, vn = gp.predict(Xs, include_noise=True)
    np.testing.assert_allclose(vn, np.diag(cov) + 0.05, rtol=1e-8)
    sign, logdet = np.linalg.slogdet(k(X) + 0.05 * np.eye(len(y)))
    lml = -0.5 * (y - 0.2) @ A_inv @ (y - 0.2) - 0.5 * logdet - 0.5 * len(y) * np.log(2 * np.pi)
    assert gp.log_marginal_likelihood() == pytest.approx(lml, rel=1e-10)


def test_exact_gp_point_gradients_match_finite_differences():
    gp = ExactGP(*_data(d=3), Matern52(0.6, 1.0), noise_variance=1e-3)
    x = np.array([0.1, -0.3, 0.4])
    _, gm = gp.mean_gradient(x)
    _, gv = gp.variance_gradient(x)
    np.testing.assert_allclose(gm, _fd(lambda z: gp.predict(z)[0][0], x), rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(gv, _fd(lambda z: gp.predict(z)[1][0], x), rtol=1e-5, atol=1e-8)


def test_additive_components_sum_to_the_full_posterior_mean():
    k = _additive()
    X, y = _data()
    gp = ExactGP(X, y, k, noise_variance=1e-6)
    Xs = np.random.default_rng(9).uniform(-1, 1, size=(50, 7))
    means = [gp.component(j, Xs[:, g])[0] for j, g in enumerate(k.groups)]
    np.testing.assert_allclose(np.sum(means, axis=0), gp.predict(Xs)[0], rtol=1e-8, atol=1e-8)
    for j, g in enumerate(k.groups):
        mean, var = gp.component(j, Xs[:, g])
        assert np.all(var >= 0)
        # the component posterior is the posterior of the latent f_j (direct formula)
        A_inv = np.linalg.inv(k(X) + 1e-6 * np.eye(len(y)))
        Kj = k.component(j, Xs, X)
        direct = k.kernels[j].variance - np.einsum("ij,jk,ik->i", Kj, A_inv, Kj)
        np.testing.assert_allclose(var, np.maximum(direct, 0), rtol=1e-5, atol=1e-7)
        z = Xs[0, g]
        m0, v0, gm, gv = gp.component_gradient(j, z)
        assert m0 == pytest.approx(mean[0], rel=1e-10)
        assert v0 == pytest.approx(var[0], rel=1e-6, abs=1e-10)
        np.testing.assert_allclose(
            gm, _fd(lambda t, j=j: gp.component(j, t[None])[0][0], z), rtol=1e-5, atol=1e-8
        )
        np.testing.assert_allclose(
            gv, _fd(lambda t, j=j: gp.component(j, t[None])[1][0], z), rtol=1e-4, atol=1e-7
        )


@pytest.mark.parametrize(
    "kernel",
    [
        _additive(),
        Matern52(0.8, 1.3),
        Matern32(0.8, 1.3),
        SquaredExponential(0.8, 1.3),
        Matern52(np.linspace(0.6, 1.8, 7), 1.3),
    ],
    ids=["additive", "matern52", "matern32", "se", "matern52-ard"],
)
@pytest.mark.parametrize("fixed_noise", [1e-3, None])
def test_zero_mean_nll_gradient_matches_finite_differences(kernel, fixed_noise):
    # isotropic kernels take the one-group additive path (distances cached per fit), ARD ones
    # the generic path; either way the log-variance gradient is tr(W K_f), without the noise
    k = kernel
    X, y = _data()
    gram = gram_and_gradients(k, X)
    theta = k.log_params if fixed_noise else np.append(k.log_params, np.log(0.05))
    nll, grad = zero_mean_nll(theta, gram, y, fixed_noise)
    gp = ExactGP(X, y, k, noise_variance=fixed_noise or 0.05)
    assert nll == pytest.approx(-gp.log_marginal_likelihood(), rel=1e-10)
    fd = _fd(lambda t: zero_mean_nll(t, gram, y, fixed_noise)[0], theta, h=1e-5)
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-6)


def test_fit_kernel_improves_the_likelihood_and_stays_in_bounds():
    X, y = _data(n=40, d=2)
    start = Matern52(5.0, 0.05)
    before = -ExactGP(X, y, start, 1e-3).log_marginal_likelihood()
    fit = fit_kernel(X, y, start, bounds=[(1e-2, 1e2), (1e-2, 10.0)], n_restarts=3, seed=0)
    assert fit.nll < before - 1.0
    assert 1e-6 <= fit.noise_variance <= 1.0
    assert 1e-2 <= fit.kernel.lengthscale <= 10.0
    assert fit.nll == pytest.approx(min(fit.restarts_nll))
    again = fit_kernel(X, y, start, bounds=[(1e-2, 1e2), (1e-2, 10.0)], n_restarts=3, seed=0)
    assert again.nll == fit.nll  # seeded restarts
    with pytest.raises(ValueError, match="bounds"):
        fit_kernel(X, y, start, bounds=[(1.0, 0.5), (1e-2, 10.0)])


def test_packed_fast_path_equals_the_full_gradients():
    k = _additive()
    X, _ = _data(n=9)
    theta = k.log_params + 0.3
    K_full, dK = k.gradients_at(theta, k.distances(X))
    K, trace = k.gram_and_trace_at(theta, k.packed_distances(X), X.shape[0])
    np.testing.assert_allclose(K, K_full, rtol=1e-12, atol=1e-14)
    W = np.random.default_rng(0).normal(size=(9, 9))
    W = W + W.T
    np.testing.assert_allclose(trace(W), np.einsum("ab,pab->p", W, dK), rtol=1e-10, atol=1e-12)


def test_extended_gp_equals_a_new_factorisation():
    X, y = _data(n=30)
    kernel = _additive()
    x_new = np.random.default_rng(9).uniform(-1, 1, size=7)
    y_all = np.append(y, 0.7) * 1.3  # every output may change (re-standardising callers)
    grown = ExactGP(X, y_all[:-1], kernel, 1e-6).extended(x_new, y_all)
    fresh = ExactGP(np.vstack([X, x_new]), y_all, kernel, 1e-6)
    np.testing.assert_allclose(grown.L, fresh.L, atol=1e-12)
    np.testing.assert_allclose(grown.alpha, fresh.alpha, rtol=1e-9, atol=1e-9)
    Xs = np.random.default_rng(2).uniform(-1, 1, size=(5, 7))
    for a, b in zip(grown.predict(Xs), fresh.predict(Xs), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_extended_gp_refactorises_a_repeated_input_without_noise():
    X, y = _data(n=10)
    gp = ExactGP(X, y, Matern52(1.0, 1.0), noise_variance=0.0)
    y_all = np.append(y, y[3])
    grown = gp.extended(X[3], y_all)  # a zero pivot: the new factorisation, bit for bit
    fresh = ExactGP(np.vstack([X, X[3]]), y_all, gp.kernel, 0.0)
    assert np.array_equal(grown.L, fresh.L) and grown.jitter == fresh.jitter


@pytest.mark.parametrize("kernel", [_additive(), Matern52(0.8, 1.5)])
def test_pool_posterior_follows_the_gp_as_it_is_extended(kernel):
    X, y = _data(n=20)
    rng = np.random.default_rng(4)
    pool = rng.uniform(-1, 1, size=(50, 7))
    gp = ExactGP(X, y, kernel, 1e-6, prior_mean=0.3)
    posterior = PoolPosterior(gp, pool)
    for _ in range(3):  # outputs rescaled at every step, as the attacks' re-standardisation does
        x = rng.uniform(-1, 1, size=7)
        gp = gp.extended(x, 1.1 * np.append(gp.y, rng.normal()))
        posterior = posterior.extended(gp)
    assert posterior.n0 == 20 and posterior.gp is gp
    components = kernel.n_groups if hasattr(kernel, "groups") else 1
    total = np.zeros(len(pool))
    for j in range(components):
        mean, var = posterior.component(j)
        if hasattr(kernel, "groups"):
            expected_mean, expected_var = gp.component(j, pool[:, kernel.groups[j]])
            np.testing.assert_allclose(var, expected_var, atol=1e-10)
        else:
            np.testing.assert_allclose(var, gp.predict(pool)[1], atol=1e-10)
        total += mean
    np.testing.assert_allclose(total + 0.3, gp.predict(pool)[0], atol=1e-10)


def test_pool_posterior_refuses_a_gp_that_is_not_its_extension():
    X, y = _data(n=10)
    gp = ExactGP(X, y, Matern52(1.0, 1.0), noise_variance=0.0)
    posterior = PoolPosterior(gp, X[:4])
    refactorised = gp.extended(X[3], np.append(y, y[3]))  # a repeated input: a new factor
    assert posterior.extended(refactorised) is None
    assert posterior.extended(ExactGP(X[:9], y[:9], gp.kernel, 0.0)) is None
    with pytest.raises(ValueError, match="pool must have 7 column"):
        PoolPosterior(gp, X[:, :3])


def test_cholesky_with_jitter_takes_the_first_jitter_that_works():
    K = SquaredExponential(1.0, 2.0)(np.linspace(0, 1, 40)[:, None])  # numerically singular
    L, jitter = cholesky_with_jitter(K, jitters=(0.0, 1e-10, 1e-6))
    assert jitter == 1e-10 * 2.0  # relative to the mean diagonal, 2; 0 fails
    np.testing.assert_allclose(L @ L.T, K + jitter * np.eye(40), atol=1e-12)
    L0, zero = cholesky_with_jitter(K + np.eye(40))
    assert zero == 0.0 and np.array_equal(L0, np.linalg.cholesky(K + np.eye(40)))
    with pytest.raises(np.linalg.LinAlgError, match="even with jitter"):
        cholesky_with_jitter(-np.eye(3), jitters=(0.0, 1e-8))
