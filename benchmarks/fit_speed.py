"""Hyperparameter fitting: ours (``core.fit.fit_hyperparameters``) against BoTorch / GPyTorch's
``fit_gpytorch_mll`` on the same data, the same model and the same threads.

Model for both: exact GP, Matérn-5/2 ARD kernel with an output scale, constant mean, Gaussian
noise (> 1e-6), maximum likelihood without priors, float64. GPyTorch switches to conjugate
gradients and Lanczos above 800 points unless told otherwise; ``max_cholesky_size`` is raised so
both fit the exact likelihood (``--gpytorch-default`` keeps GPyTorch's own switch). Both final
hyperparameters are scored by the same function (our exact NLL), so the likelihood column
compares optima, not implementations.

Data: Hartmann-3 at uniform random points of [0, 1]^3 plus N(0, 0.05^2) noise.

"adaptive" is ours with ``subset="adaptive"``: the restarts on 500 rows, then warm-started fits
on 1 000, 2 000, ... rows until the estimate stops moving or all rows are in; its NLL is scored
on all n rows like the others.

Run: ``python benchmarks/fit_speed.py [--sizes 500,1000,2000] [--restarts 1] [--threads 1]``
(needs ``pip install botorch``; not a dependency of frontierbo).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

HARTMANN3_A = np.array([[3.0, 10, 30], [0.1, 10, 35], [3.0, 10, 30], [0.1, 10, 35]])
HARTMANN3_P = 1e-4 * np.array(
    [[3689, 1170, 2673], [4699, 4387, 7470], [1091, 8732, 5547], [381, 5743, 8828]]
)
HARTMANN3_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])


def hartmann3(X: np.ndarray) -> np.ndarray:
    inner = np.einsum("ij,nij->ni", HARTMANN3_A, (X[:, None, :] - HARTMANN3_P[None]) ** 2)
    return np.exp(-inner) @ HARTMANN3_ALPHA


def data(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, 3))
    return X, hartmann3(X) + 0.05 * rng.standard_normal(n)


def exact_nll(X, y, variance, lengthscales, noise, mean) -> float:
    from frontierbo.core.fit import negative_log_likelihood
    from frontierbo.core.kernels import Matern52

    theta = np.concatenate([[np.log(variance)], np.log(lengthscales), [np.log(noise), mean]])
    return negative_log_likelihood(theta, X, y, Matern52(np.ones(X.shape[1]), 1.0))[0]


def fit_ours(X, y, restarts: int, seed: int, direct: bool = False, subset: str = "fixed"):
    """Our fit; ``direct``: with the textbook NLL (W and every dK formed) instead of the fast
    path, to show what the fast path saves."""
    from frontierbo.core import fit as core_fit
    from frontierbo.core.fit import fit_hyperparameters

    fast = core_fit.negative_log_likelihood
    if direct:
        core_fit.negative_log_likelihood = core_fit.negative_log_likelihood_direct
    start = time.perf_counter()
    fit = fit_hyperparameters(
        X, y, kernel="matern52", ard=True, n_restarts=restarts, seed=seed, max_points=len(y),
        min_noise_variance=1e-6, subset=subset,
    )  # fmt: skip
    seconds = time.perf_counter() - start
    core_fit.negative_log_likelihood = fast
    ls = np.atleast_1d(fit.kernel.lengthscale)
    return seconds, exact_nll(X, y, fit.kernel.variance, ls, fit.noise_variance, fit.mean)


def fit_botorch(X, y, exact: bool):
    import gpytorch
    import torch
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from gpytorch.constraints import GreaterThan
    from gpytorch.kernels import MaternKernel, ScaleKernel
    from gpytorch.likelihoods import GaussianLikelihood
    from gpytorch.mlls import ExactMarginalLogLikelihood

    tx = torch.tensor(X, dtype=torch.float64)
    ty = torch.tensor(y, dtype=torch.float64)[:, None]
    start = time.perf_counter()
    likelihood = GaussianLikelihood(noise_constraint=GreaterThan(1e-6))
    kernel = ScaleKernel(MaternKernel(nu=2.5, ard_num_dims=X.shape[1]))
    model = SingleTaskGP(
        tx, ty, likelihood=likelihood, covar_module=kernel, outcome_transform=None,
        input_transform=None,
    )  # fmt: skip
    mll = ExactMarginalLogLikelihood(model.likelihood, model)
    size = 10**9 if exact else 800
    with gpytorch.settings.max_cholesky_size(size):
        fit_gpytorch_mll(mll)
    seconds = time.perf_counter() - start
    variance = model.covar_module.outputscale.item()
    ls = model.covar_module.base_kernel.lengthscale.detach().numpy().ravel()
    noise = model.likelihood.noise.item()
    mean = model.mean_module.constant.item()
    return seconds, exact_nll(X, y, variance, ls, noise, mean)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="500,1000,2000")
    parser.add_argument("--restarts", type=int, default=1, help="our random restarts (1)")
    parser.add_argument("--threads", type=int, default=1, help="BLAS / torch threads (1)")
    parser.add_argument("--gpytorch-default", action="store_true", help="CG above 800 points")
    args = parser.parse_args()

    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(args.threads)
    limit = threadpool_limits(args.threads)
    print(f"threads {args.threads}; our restarts {args.restarts}; NLL: our exact formula")
    print(f"{'n':>6} {'ours s':>8} {'textbook s':>10} {'adaptive s':>10} {'botorch s':>10} "
          f"{'botorch/ours':>12} {'ours NLL':>12} {'adaptive NLL':>12} {'botorch NLL':>12}")  # fmt: skip
    for n in (int(v) for v in args.sizes.split(",")):
        X, y = data(n)
        ours_s, ours_nll = fit_ours(X, y, args.restarts, seed=0)
        direct_s, _ = fit_ours(X, y, args.restarts, seed=0, direct=True)
        adaptive_s, adaptive_nll = fit_ours(X, y, args.restarts, seed=0, subset="adaptive")
        bt_s, bt_nll = fit_botorch(X, y, exact=not args.gpytorch_default)
        print(
            f"{n:>6} {ours_s:>8.2f} {direct_s:>10.2f} {adaptive_s:>10.2f} {bt_s:>10.2f} "
            f"{bt_s / ours_s:>12.2f} {ours_nll:>12.3f} {adaptive_nll:>12.3f} {bt_nll:>12.3f}",
            flush=True,
        )
    limit.restore_original_limits()


if __name__ == "__main__":
    main()
