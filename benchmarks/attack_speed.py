"""Wall time of the pieces of a BOS² query, and of a BayesOpt-attack iteration, against n.

For each n in ``--sizes`` (points in D_per) and latent dimension d (MNIST 196 = 14x14x1, CIFAR-10
588 = 14x14x3), on synthetic additive data in ``[-1, 1]^d``:

* ``learn``: Alg. 7 line 2 (20 candidate decompositions, then 5 restarts) — once per loop;
* ``refit``: the 5-restart MLE of the chosen decomposition — every 5 queries;
* ``acquire``: Add-GP-UCB over 12 groups (5 000 pool points + L-BFGS-B) — every query; the mean
  over the 5 queries of a refit period (the scalable profile draws and whitens its pool at the
  first of them and extends it at the others);
* ``add``: the posterior with one more point (an O(n^2) Cholesky extension) — every query;
* ``per query``: acquire + add + refit / 5, the steady-state cost of one perturbation query;
* ``bayesopt``: the BayesOpt attack's UCB step (10 000 points, 5 L-BFGS-B starts) + refit / 5
  on the same n in its chosen side.

The settings are the paper profile's (``--profile fast`` for the CI profile's). Single BLAS thread
by default (``--blas-threads``), as the reproduction's workers run.

Run: ``python benchmarks/attack_speed.py [--sizes 50,200,500,900] [--dims 196,588]
[--profile paper|fast] [--blas-threads 1]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np

#: Alg. 7 re-learns the hyperparameters every 5 queries.
REFIT_EVERY = 5


def _data(n: int, d: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    Z = rng.uniform(-1, 1, size=(n, d))
    w = rng.normal(size=d)
    y = np.tanh(Z @ w / np.sqrt(d)) + 0.1 * np.sin(3 * Z[:, : d // 4]).sum(1) / np.sqrt(d)
    return Z, y - 3.0


def _timed(fn, repeats: int = 1):
    best = np.inf
    out = None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def bench_bos2(n: int, d: int, settings) -> dict:
    from frontierbo.attack.add_gp_ucb import AdditiveModel

    Z, y = _data(n, d)
    learn, model = _timed(lambda: AdditiveModel.learn(Z, y, settings, np.random.default_rng(0)))
    refit, _ = _timed(lambda: model.refit(np.random.default_rng(1)))
    rng = np.random.default_rng(2)
    acquire = add = 0.0
    for _ in range(REFIT_EVERY):  # one refit period: a pool of the fit is reused in it
        seconds, z = _timed(lambda: model.maximize_ucb(rng))  # noqa: B023
        acquire += seconds / REFIT_EVERY
        seconds, model = _timed(lambda: model.add(z, -2.0))  # noqa: B023
        add += seconds / REFIT_EVERY
    return {
        "learn": learn,
        "refit": refit,
        "acquire": acquire,
        "add": add,
        "per query": acquire + add + refit / REFIT_EVERY,
    }


def bench_bayesopt(n: int, d: int, fast: bool) -> float:
    """One steady-state BayesOpt iteration at the same n and latent d: the UCB maximisation
    (10 000 candidates, 5 L-BFGS-B starts) plus a fifth of the 5-restart refit."""
    from frontierbo.attack import bayesopt_attack as bo
    from frontierbo.attack.add_gp_ucb import standardise
    from frontierbo.core.exact import ExactGP
    from frontierbo.core.kernels import Matern52

    attack = (
        bo.BayesOptAttack(n_random=1000, fit_maxiter=50, lbfgs_maxiter=50)
        if fast
        else bo.BayesOptAttack()
    )
    Z, y = _data(n, d)
    ys = standardise(y)
    refit, (kernel, _) = _timed(
        lambda: attack._fit(Z, ys, Matern52(1.0, 1.0), attack.n_restarts, np.random.default_rng(1))
    )
    gp = ExactGP(Z, ys, kernel, attack.noise_variance)
    acquire, _ = _timed(
        lambda: bo.UCB(gp, attack.beta_sqrt).maximize(
            np.random.default_rng(2),
            n_random=attack.n_random,
            n_batches=attack.n_batches,
            n_starts=attack.n_starts,
            maxiter=attack.lbfgs_maxiter,
        )
    )
    return acquire + refit / attack.refit_every


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="50,200,500,900")
    parser.add_argument("--dims", default="196,588")
    parser.add_argument("--profile", choices=("paper", "scalable", "fast"), default="paper")
    parser.add_argument("--blas-threads", type=int, default=1)
    args = parser.parse_args()

    from threadpoolctl import threadpool_limits

    from frontierbo.attack.experiment import PERTURBATION_PROFILES

    fast = args.profile == "fast"
    settings = PERTURBATION_PROFILES[args.profile]()
    limit = threadpool_limits(args.blas_threads) if args.blas_threads > 0 else None
    print(f"profile {args.profile}, BLAS threads {args.blas_threads or 'default'}; seconds")
    header = f"{'d':>5} {'n':>5} {'learn':>8} {'refit':>8} {'acquire':>8} {'add':>7} "
    print(header + f"{'per query':>10} {'bayesopt':>9} {'ratio':>6}")
    for d in (int(v) for v in args.dims.split(",")):
        for n in (int(v) for v in args.sizes.split(",")):
            row = bench_bos2(n, d, settings)
            bayes = bench_bayesopt(n, d, fast)
            print(
                f"{d:>5} {n:>5} {row['learn']:>8.2f} {row['refit']:>8.2f} "
                f"{row['acquire']:>8.3f} {row['add']:>7.3f} {row['per query']:>10.3f} "
                f"{bayes:>9.3f} {row['per query'] / bayes:>6.2f}",
                flush=True,
            )
    if limit is not None:
        limit.restore_original_limits()


if __name__ == "__main__":
    main()
