"""Wall-clock speed of a full GP-UCB run on the synthetic n = 10 000 grid.

Three implementations run the same problem and the same beta schedule, so they should choose the
same points:

(a) ours:   ``frontierbo.core.gp_ucb.GPUCB`` driven by ``run_bo`` (incremental O(n t) updates);
(b) naive:  a refit-every-step numpy/scipy GP written plainly below (Rasmussen & Williams,
            Algorithm 2.1): Cholesky of the t x t matrix and the full posterior mean and variance of
            all n candidates recomputed from scratch at every step;
(c) BoTorch: ``SingleTaskGP`` with the same fixed hyperparameters (no fitting), rebuilt on all data
            at every step, + ``UpperConfidenceBound`` + ``optimize_acqf_discrete`` over the n rows,
            in float64 (only when ``botorch`` is importable).

Problem: candidates ``linspace(-4, 4, 100)^2`` (10 000 rows), squared-exponential kernel with
lengthscale 1.25 and variance 1, noise variance 1e-5, prior mean 0; the objective is a GP sample
``F = L1 W L2^T`` drawn through the Kronecker factors of the kernel (``K = K1 (x) K2``); observations
are ``f(x) + N(0, 1e-5)`` with a seeded noise stream shared by all implementations. One random
initial row, then T UCB rounds with ``beta_t = 2 log(n t^2 pi^2 / (6 delta))`` (Srinivas et al.),
``t`` the UCB round; already-observed rows are excluded from the argmax in all three.

Run:  ``PYTHONPATH=src python benchmarks/gp_ucb_speed.py [--n-grid 100] [--iterations 100]
[--repeats 3] [--seed 0] [--skip-botorch]``.  See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import sys
import time

import numpy as np
import scipy
from scipy.linalg import cho_factor, cho_solve, solve_triangular
from scipy.spatial.distance import cdist

from frontierbo.core.acquisition import beta_srinivas
from frontierbo.core.exact import cholesky_with_jitter
from frontierbo.core.gp_ucb import GPUCB
from frontierbo.core.kernels import SquaredExponential
from frontierbo.core.loop import TableOracle, run_bo
from frontierbo.core.sampling import sample_from_roots

LENGTHSCALE = 1.25
SIGNAL_VARIANCE = 1.0
NOISE_VARIANCE = 1e-5
PRIOR_MEAN = 0.0
BOTORCH_INSTALL = "pip install torch==2.13.0 && pip install botorch"
STEP_TS = (10, 25, 50, 100)  # t = observations held by the GP when the step starts
STEP_WINDOW = 2  # per-step times are averaged over steps with t in [t - 2, t + 2]


# -- problem --------------------------------------------------------------------------------------
class Problem:
    """Grid candidates, the GP-sample objective and the initial row."""

    def __init__(self, n_grid: int, seed: int):
        g = np.linspace(-4.0, 4.0, n_grid)
        self.X = np.stack(np.meshgrid(g, g, indexing="ij"), axis=-1).reshape(-1, 2)
        self.n = self.X.shape[0]
        # 1-D factor of the separable SE kernel: k((a1,a2),(b1,b2)) = k1(a1,b1) k1(a2,b2)
        # with k1 = sqrt(variance) exp(-(a-b)^2 / (2 l^2)).
        K1 = math.sqrt(SIGNAL_VARIANCE) * np.exp(
            -0.5 * (g[:, None] - g[None, :]) ** 2 / LENGTHSCALE**2
        )
        L1, self.jitter = cholesky_with_jitter(K1, tuple(1e-12 * 10.0**k for k in range(13)))
        rng = np.random.default_rng(seed)
        # F[i, j] = f(g_i, g_j) ~ GP: cov(F[i,j], F[k,l]) = K1[i,k] K1[j,l]; L2 = L1 (same grid).
        self.f = sample_from_roots([L1, L1], seed=rng)[0]
        self.init = int(rng.integers(self.n))
        self.noise_seed = seed + 1

    def oracle(self) -> TableOracle:
        """A fresh oracle; every implementation sees the same noise sequence, query by query."""
        return TableOracle(self.f, noise_std=math.sqrt(NOISE_VARIANCE), seed=self.noise_seed)


# -- (a) ours -------------------------------------------------------------------------------------
def make_ours(problem: Problem, delta: float) -> GPUCB:
    kernel = SquaredExponential(LENGTHSCALE, SIGNAL_VARIANCE)
    return GPUCB(problem.X, kernel, NOISE_VARIANCE, PRIOR_MEAN, beta="srinivas", delta=delta)


def run_ours(problem: Problem, iterations: int, delta: float) -> tuple[float, np.ndarray, None]:
    """Seconds for the whole run, the chosen rows; per-step times come from ``step_times_ours``."""
    start = time.perf_counter()
    opt = make_ours(problem, delta)
    res = run_bo(opt, problem.oracle(), iterations, initial_indices=[problem.init])
    return time.perf_counter() - start, res.indices, None


def step_times_ours(problem: Problem, iterations: int, delta: float) -> np.ndarray:
    """(iterations, 2) seconds of ``ask`` and of ``query + tell`` for each step of one run.

    Step k (0-based) starts with t = k + 1 observations in the GP (1 initial row).
    """
    opt = make_ours(problem, delta)
    oracle = problem.oracle()
    opt.tell(problem.init, oracle.query(problem.init))
    out = np.empty((iterations, 2))
    clock = time.perf_counter
    for k in range(iterations):
        t0 = clock()
        i = opt.ask()
        t1 = clock()
        opt.tell(i, oracle.query(i))
        t2 = clock()
        out[k] = (t1 - t0, t2 - t1)
    return out


# -- (b) naive refit-every-step numpy GP ----------------------------------------------------------
def se_kernel(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    return SIGNAL_VARIANCE * np.exp(-0.5 * cdist(A / LENGTHSCALE, B / LENGTHSCALE, "sqeuclidean"))


def run_naive(problem: Problem, iterations: int, delta: float):
    """Seconds for the whole run, the chosen rows, seconds of each step (iterations,)."""
    clock = time.perf_counter
    start = clock()
    steps = np.empty(iterations)
    X, n = problem.X, problem.n
    oracle = problem.oracle()
    idx = [problem.init]
    ys = [oracle.query(problem.init)]
    observed = np.zeros(n, dtype=bool)
    observed[problem.init] = True
    for r in range(1, iterations + 1):
        t0 = clock()
        Xt = X[idx]
        A = se_kernel(Xt, Xt) + NOISE_VARIANCE * np.eye(len(idx))
        Kxt = se_kernel(X, Xt)  # (n, t)
        c = cho_factor(A, lower=True)
        alpha = cho_solve(c, np.asarray(ys) - PRIOR_MEAN)
        mean = PRIOR_MEAN + Kxt @ alpha
        V = solve_triangular(c[0], Kxt.T, lower=True)  # L^{-1} K_tX, (t, n)
        var = SIGNAL_VARIANCE - np.einsum("ij,ij->j", V, V)
        scores = mean + math.sqrt(beta_srinivas(r, n, delta)) * np.sqrt(np.maximum(var, 0.0))
        scores[observed] = -np.inf
        i = int(np.argmax(scores))
        observed[i] = True
        idx.append(i)
        ys.append(oracle.query(i))
        steps[r - 1] = clock() - t0
    return clock() - start, np.asarray(idx[1:]), steps


# -- (c) BoTorch ----------------------------------------------------------------------------------
def botorch_available() -> str | None:
    """``None`` when botorch imports, else the reason it does not."""
    try:
        import botorch  # noqa: F401
        import torch  # noqa: F401
    except Exception as exc:  # ImportError, or a broken torch install
        return f"{type(exc).__name__}: {exc}"
    return None


def run_botorch(problem: Problem, iterations: int, delta: float):
    """Seconds for the whole run, the chosen rows, seconds of each step (iterations,)."""
    import torch
    from botorch.acquisition import UpperConfidenceBound
    from botorch.optim import optimize_acqf_discrete

    clock = time.perf_counter
    start = clock()
    steps = np.empty(iterations)
    n = problem.n
    choices = torch.as_tensor(problem.X, dtype=torch.float64)
    oracle = problem.oracle()
    idx = [problem.init]
    ys = [oracle.query(problem.init)]
    for r in range(1, iterations + 1):
        t0 = clock()
        train_X = choices[idx]
        train_Y = torch.tensor(ys, dtype=torch.float64).unsqueeze(-1)
        model = botorch_model(train_X, train_Y)
        acq = UpperConfidenceBound(model, beta=beta_srinivas(r, n, delta))
        cand, _ = optimize_acqf_discrete(acq, q=1, choices=choices, X_avoid=train_X)
        i = int(torch.nonzero((choices == cand).all(-1))[0, 0])
        idx.append(i)
        ys.append(oracle.query(i))
        steps[r - 1] = clock() - t0
    return clock() - start, np.asarray(idx[1:]), steps


def botorch_model(train_X, train_Y):
    """SingleTaskGP with our fixed hyperparameters (no fitting), in eval mode, float64."""
    from botorch.models import SingleTaskGP
    from gpytorch.constraints import GreaterThan
    from gpytorch.kernels import RBFKernel, ScaleKernel
    from gpytorch.likelihoods import GaussianLikelihood
    from gpytorch.means import ConstantMean

    model = SingleTaskGP(
        train_X,
        train_Y,
        likelihood=GaussianLikelihood(noise_constraint=GreaterThan(1e-9)),
        covar_module=ScaleKernel(RBFKernel()),
        mean_module=ConstantMean(),
        outcome_transform=None,
    )
    # BoTorch's default noise floor (1e-4) would reject 1e-5; outputs are not rescaled.
    model.covar_module.base_kernel.lengthscale = LENGTHSCALE
    model.covar_module.outputscale = SIGNAL_VARIANCE
    model.likelihood.noise = NOISE_VARIANCE
    model.mean_module.constant = PRIOR_MEAN
    model.eval()
    return model


def check_botorch_hyperparameters(problem: Problem) -> float:
    """Max |posterior mean/std difference| between BoTorch and ours after a few observations."""
    import torch

    rows = [problem.init, 0, problem.n - 1, problem.n // 2 + 7]
    ys = problem.f[rows]
    opt = make_ours(problem, 0.025)
    for i, y in zip(rows, ys, strict=True):
        opt.tell(i, float(y))
    X = torch.as_tensor(problem.X, dtype=torch.float64)
    model = botorch_model(X[rows], torch.as_tensor(ys, dtype=torch.float64).unsqueeze(-1))
    with torch.no_grad():
        post = model.posterior(X)
        mean = post.mean.squeeze(-1).numpy()
        std = post.variance.clamp_min(0).sqrt().squeeze(-1).numpy()
    return float(max(np.abs(mean - opt.gp.mean).max(), np.abs(std - opt.gp.std).max()))


# -- incremental bound ----------------------------------------------------------------------------
def gemv_seconds(t: int, n: int, reps: int = 200) -> float:
    """Median time of one ``l @ V[:t]`` with V (t, n): touching n t numbers once."""
    rng = np.random.default_rng(123)
    V = rng.standard_normal((t, n))
    w = rng.standard_normal(t)
    out = np.empty(n)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        np.matmul(w, V, out=out)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


# -- environment ----------------------------------------------------------------------------------
def blas_description() -> str:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        env = os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS")
        return f"BLAS threads: {env or 'library default'} (install threadpoolctl for details)"
    pools = [
        f"{p['internal_api']} {p.get('version')} {p['num_threads']} thread(s)"
        for p in threadpool_info()
        if p["user_api"] == "blas"
    ]
    return "BLAS: " + ("; ".join(pools) or "unknown")


def limit_blas_threads(n_threads: int):
    """Limit BLAS (and torch) threads in this process; returns the threadpoolctl handle."""
    try:
        import torch

        torch.set_num_threads(n_threads)
    except ImportError:
        pass
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        sys.exit(
            "--blas-threads needs threadpoolctl (pip install threadpoolctl); or run with "
            f"OPENBLAS_NUM_THREADS={n_threads} OMP_NUM_THREADS={n_threads} in the environment"
        )
    return threadpool_limits(limits=n_threads, user_api="blas")


# -- reporting ------------------------------------------------------------------------------------
def _timed(fn, problem, iterations, delta, repeats, label):
    """Totals (repeats,), the chosen rows, per-step seconds (median over repeats) or None."""
    fn(problem, min(3, iterations), delta)  # warm-up (imports, allocator, BLAS threads)
    times, seqs, steps = [], [], []
    for _ in range(repeats):
        sec, seq, step = fn(problem, iterations, delta)
        times.append(sec)
        seqs.append(seq)
        steps.append(step)
        print(f"  {label}: {sec:.4f} s", flush=True)
    for s in seqs[1:]:
        if not np.array_equal(s, seqs[0]):
            print(f"  WARNING: {label} chose different sequences across repeats")
    step = None if steps[0] is None else np.median(np.stack(steps), axis=0)
    return times, seqs[0], step


def _robust_affine_fit(ts: np.ndarray, y: np.ndarray) -> tuple[float, float, float, np.ndarray]:
    """Least-squares ``y = a + b t``, refitted without points over 5 MADs off the first fit.

    Returns a, b, R^2 of the refit, and the t of the dropped points (one-off spikes such as the
    GP's storage doubling or a scheduler hiccup).
    """
    b, a = np.polyfit(ts, y, 1)
    res = y - (a + b * ts)
    mad = np.median(np.abs(res - np.median(res))) + 1e-15
    keep = np.abs(res - np.median(res)) <= 5.0 * 1.4826 * mad
    b, a = np.polyfit(ts[keep], y[keep], 1)
    yk = y[keep]
    r2 = 1.0 - ((yk - (a + b * ts[keep])) ** 2).sum() / ((yk - yk.mean()) ** 2).sum()
    return float(a), float(b), float(r2), ts[~keep]


def _compare(a: np.ndarray, b: np.ndarray) -> tuple[int, int | None]:
    same = a == b
    first = None if same.all() else int(np.argmin(same)) + 1
    return int(same.sum()), first


def _window_mean(values: np.ndarray, t: int, iterations: int) -> tuple[float, int, int]:
    lo, hi = max(1, t - STEP_WINDOW), min(iterations, t + STEP_WINDOW)  # step k has t = k + 1
    return float(values[lo - 1 : hi].mean()), lo, hi


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n-grid", type=int, default=100, help="grid side; n = n_grid^2 candidates")
    p.add_argument("--iterations", type=int, default=100, help="T, the number of UCB rounds")
    p.add_argument("--repeats", type=int, default=3, help="timed runs per implementation")
    p.add_argument("--seed", type=int, default=0, help="objective sample and initial row")
    p.add_argument(
        "--failure-probability",
        dest="delta",
        type=float,
        default=0.025,
        help="failure probability delta of the Srinivas beta_t (frontierbo's --delta is privacy)",
    )
    p.add_argument("--step-repeats", type=int, default=20, help="runs for the per-step profile")
    p.add_argument("--skip-botorch", action="store_true", help="do not run BoTorch")
    p.add_argument(
        "--blas-threads",
        type=int,
        default=None,
        help="limit BLAS and torch threads (needs threadpoolctl); default: library defaults",
    )
    args = p.parse_args(argv)
    if args.iterations < 3 or args.n_grid < 2 or args.repeats < 1 or args.step_repeats < 1:
        p.error("need --iterations >= 3, --n-grid >= 2, --repeats >= 1, --step-repeats >= 1")
    _limits = limit_blas_threads(args.blas_threads) if args.blas_threads else None  # noqa: F841
    T = args.iterations

    problem = Problem(args.n_grid, args.seed)
    n = problem.n
    print("GP-UCB speed benchmark")
    print(
        f"  n = {n} ({args.n_grid} x {args.n_grid} grid, linspace(-4, 4)^2), SE kernel "
        f"lengthscale {LENGTHSCALE}, variance {SIGNAL_VARIANCE}, noise variance {NOISE_VARIANCE:g}"
    )
    print(
        f"  T = {T} UCB rounds after 1 random initial row (row {problem.init}); "
        f"beta_t = 2 log(n t^2 pi^2 / (6 delta)), delta = {args.delta} "
        f"(beta_1 = {beta_srinivas(1, n, args.delta):.2f}, "
        f"beta_T = {beta_srinivas(T, n, args.delta):.2f})"
    )
    print(
        f"  objective: GP sample L1 W L2^T (1-D factor jitter {problem.jitter:g}), "
        f"max f = {problem.f.max():.4f}, seed = {args.seed}, repeats = {args.repeats}"
    )
    print(
        f"  python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
        f"{blas_description()}"
    )
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"  {os.cpu_count()} CPUs, load average {load} (other work on the machine skews timings)")

    reason = None if not args.skip_botorch else "--skip-botorch"
    if reason is None:
        reason = botorch_available()
        if reason is not None:
            print(f"  BoTorch not importable ({reason}); install it with:  {BOTORCH_INSTALL}")
            print("  (torch==2.13.0 first: an unpinned torch pulls GBs of CUDA libraries)")
    if reason is None:
        import botorch
        import gpytorch
        import torch

        print(
            f"  torch {torch.__version__} ({torch.get_num_threads()} threads), "
            f"botorch {botorch.__version__}, gpytorch {gpytorch.__version__}"
        )
        diff = check_botorch_hyperparameters(problem)
        print(f"  BoTorch vs ours posterior (4 observations): max |mean, std diff| = {diff:.2e}")

    print("\ntimed runs:")
    totals, seqs, steps = {}, {}, {}
    runners = {"ours": run_ours, "naive": run_naive}
    if reason is None:
        runners["botorch"] = run_botorch
    for k, fn in runners.items():
        totals[k], seqs[k], steps[k] = _timed(fn, problem, T, args.delta, args.repeats, k)

    labels = {
        "ours": "ours: GPUCB + run_bo (incremental)",
        "naive": "naive: numpy refit every step",
        "botorch": "BoTorch: SingleTaskGP + UCB",
    }
    med = {k: statistics.median(v) for k, v in totals.items()}
    print(f"\nwhole run (T = {T}), median of {args.repeats}:")
    print(f"  {'implementation':<38}{'total s':>10}{'min s':>10}{'ms/step':>10}{'x ours':>10}")
    for k, v in totals.items():
        print(
            f"  {labels[k]:<38}{med[k]:>10.4f}{min(v):>10.4f}{1e3 * med[k] / T:>10.3f}"
            f"{med[k] / med['ours']:>10.1f}"
        )
    best = {k: min(v) for k, v in totals.items()}
    print(
        f"  naive / ours   = {med['naive'] / med['ours']:.1f}x"
        f"   (from the fastest runs: {best['naive'] / best['ours']:.1f}x)"
    )
    if "botorch" in med:
        ratio = med["botorch"] / med["ours"]
        verdict = "PASS" if ratio >= 100 else "FAIL"
        print(
            f"  BoTorch / ours = {ratio:.1f}x   (target >= 100x: {verdict}; from the fastest runs: "
            f"{best['botorch'] / best['ours']:.1f}x)"
        )
    else:
        print(f"  BoTorch / ours = n/a (BoTorch skipped: {reason})")

    # -- per-step profile of ours ------------------------------------------------------------
    runs = np.stack([step_times_ours(problem, T, args.delta) for _ in range(args.step_repeats)])
    prof = np.median(runs, axis=0)  # (T, 2): median over runs, step by step
    step = prof.sum(axis=1)
    step_min = runs.sum(axis=2).min(axis=0)
    ts = np.arange(1, T + 1)  # observations held when each step starts
    print(
        f"\nper-step time in ms, mean over the steps with t in [t-{STEP_WINDOW}, t+{STEP_WINDOW}]"
        " (t = observations in the GP when the step starts); ours: ask + query + tell, median"
        f" over {args.step_repeats} instrumented runs step by step (min over runs also shown);"
        f" naive, BoTorch: median over the {args.repeats} timed runs"
    )
    others = [k for k in ("naive", "botorch") if k in steps]
    head = "".join(f"{k + ' ms':>12}" for k in others)
    print(
        f"  {'t':>5}{'steps':>10}{'ours ms':>10}{'ask ms':>9}{'tell ms':>9}{'min ms':>9}"
        f"{'ours us/t':>11}{head}"
    )
    per_t = {}
    for t in STEP_TS:
        if t > T:
            continue
        s, lo, hi = _window_mean(step, t, T)
        a, b, m = (_window_mean(x, t, T)[0] for x in (prof[:, 0], prof[:, 1], step_min))
        per_t[t] = s
        rest = "".join(f"{1e3 * _window_mean(steps[k], t, T)[0]:>12.3f}" for k in others)
        print(
            f"  {t:>5}{f'{lo}..{hi}':>10}{1e3 * s:>10.4f}{1e3 * a:>9.4f}{1e3 * b:>9.4f}"
            f"{1e3 * m:>9.4f}{1e6 * s / t:>11.3f}{rest}"
        )
    intercept, slope, r2, dropped = _robust_affine_fit(ts.astype(float), step)
    print(
        f"  ours, affine fit over the {T} steps: step = {1e3 * intercept:.4f} ms + t * "
        f"{1e3 * slope:.5f} ms  (R^2 = {r2:.3f}; one-off spikes left out at t = "
        f"{', '.join(str(int(x)) for x in dropped) or 'none'})"
    )
    dev = max(
        (abs(v - (intercept + slope * t)) / (intercept + slope * t) for t, v in per_t.items()),
        default=0.0,
    )
    verdict = "linear (affine) in t" if dev <= 0.15 else "NOT affine in t"
    print(
        f"  ours: t-independent part {1e3 * intercept:.4f} ms, t-dependent part at t={T} "
        f"{1e3 * slope * T:.4f} ms; windows deviate from the fit by at most {100 * dev:.0f}%: "
        f"{verdict} (ms / t falls with t only through the t-independent part)"
    )

    # -- incremental bound -------------------------------------------------------------------
    t_bound = min(100, T)
    bound = gemv_seconds(t_bound, n)
    per_bound = per_t.get(t_bound, _window_mean(step, t_bound, T)[0])
    rb = per_bound / bound
    print(
        f"\nincremental bound: one gemv l @ V[:{t_bound}] over a ({t_bound}, {n}) array "
        f"= {1e3 * bound:.4f} ms ({8 * t_bound * n / bound / 1e9:.1f} GB/s)"
    )
    verdict = "PASS" if rb <= 2 else "FAIL"
    print(
        f"  ours per-step at t={t_bound} / bound = {1e3 * per_bound:.4f} / {1e3 * bound:.4f} "
        f"= {rb:.2f}   (target <= 2: {verdict})"
    )
    print(
        f"  fitted t-dependent part at t={t_bound} / bound = {slope * t_bound / bound:.2f} "
        "(the O(n t) work runs at gemv speed when this is ~1)"
    )

    # -- query sequences ---------------------------------------------------------------------
    print("\nquery sequences:")
    m, first = _compare(seqs["ours"], seqs["naive"])
    verdict = "identical" if first is None else f"DIFFER, first at round {first}"
    print(f"  ours vs naive:   {m}/{T} rounds match ({verdict})")
    if "botorch" in seqs:
        m, first = _compare(seqs["ours"], seqs["botorch"])
        verdict = "identical" if first is None else f"first difference at round {first}"
        print(f"  ours vs BoTorch: {m}/{T} rounds match ({verdict})")
    f_max = problem.f.max()
    for k, s in seqs.items():
        found = max(problem.f[problem.init], problem.f[s].max())
        print(f"  {k:<8} simple regret after T: {f_max - found:.3e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
