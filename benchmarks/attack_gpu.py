"""What a GPU would buy the BOS² reproduction: its dominant arithmetic, numpy on one CPU core
against torch on an accelerator, side by side.

The GP attacks' code is numpy on the CPU (``frontierbo.core``), so a GPU does not speed them up as
they are. This measures how much it would if the heaviest pieces moved to torch, with the shapes
the profiles in ``docs/bos2-attack.md`` ("Where a failing instance's time goes") name:

* ``victim``: one query, one image through the victim CNN (``load_victim(..., device=)``);
* ``pool``: BOS²'s whitening of a fresh acquisition pool after a refit, per group
  ``V_j = L^{-1} k_j(X_j, P_j)`` and the variances ``k_j(p, p) - ||V_j p||^2``, for 12 groups of
  ``d / 12`` latent dimensions, 5 000 + n pool points and n data;
* ``bayesopt``: the BayesOpt attack's UCB scoring of 10 000 random candidates in its chosen side's
  space (``--bayesopt-dim``; CIFAR-10's side 20 is 1 200) against n data.

Squared-exponential kernels, float64 on both sides (the GP code's precision); the accelerator
side includes the host-to-device copies of its inputs and the copy of its result back. A best
of ``--repeats`` wall times after one warm-up.

Run: ``python benchmarks/attack_gpu.py [--sizes 200,900] [--device cuda] [--blas-threads 1]``
"""

from __future__ import annotations

import argparse
import functools
import time

import numpy as np
from scipy.linalg import cholesky, solve_triangular

GROUPS, POOL, CANDIDATES = 12, 5000, 10_000


def _se(A, B, lengthscale, xp=np):
    """Squared-exponential cross-kernel; ``xp``: numpy, or torch for tensors on a device."""
    sq = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * A @ B.T
    return xp.exp(-0.5 * sq.clip(min=0.0) / lengthscale**2)


def _data(n: int, d: int, m: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X, P = rng.uniform(-1, 1, (n, d)), rng.uniform(-1, 1, (m, d))
    lengthscale = np.sqrt(d)  # the median heuristic's scale on uniform data
    K = _se(X, X, lengthscale) + 1e-2 * np.eye(n)
    return X, P, cholesky(K, lower=True), rng.normal(size=n), lengthscale


def _timed(fn, repeats: int) -> float:
    fn()  # warm-up: kernel compilation, allocator, caches
    best = np.inf
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def pool_cpu(X, P, L, lengthscale):
    out = []
    for g in np.array_split(np.arange(X.shape[1]), GROUPS):
        V = solve_triangular(L, _se(X[:, g], P[:, g], lengthscale), lower=True, check_finite=False)
        out.append(1.0 - np.einsum("ij,ij->j", V, V))
    return out


def pool_gpu(torch, device, X, P, L, lengthscale):
    Xt, Pt, Lt = (torch.as_tensor(a, device=device) for a in (X, P, L))
    out = []
    for g in np.array_split(np.arange(X.shape[1]), GROUPS):
        idx = torch.as_tensor(g, device=device)
        Kxp = _se(Xt[:, idx], Pt[:, idx], lengthscale, torch)
        V = torch.linalg.solve_triangular(Lt, Kxp, upper=False)
        out.append(1.0 - (V * V).sum(0))
    return [v.cpu().numpy() for v in out]


def score_cpu(X, C, L, y, lengthscale):
    Kxc = _se(X, C, lengthscale)
    V = solve_triangular(L, Kxc, lower=True, check_finite=False)
    w = solve_triangular(L, y, lower=True, check_finite=False)
    return V.T @ w + 2.0 * np.sqrt(np.maximum(1.0 - np.einsum("ij,ij->j", V, V), 1e-12))


def score_gpu(torch, device, X, C, L, y, lengthscale):
    Xt, Ct, Lt, yt = (torch.as_tensor(a, device=device) for a in (X, C, L, y))
    V = torch.linalg.solve_triangular(Lt, _se(Xt, Ct, lengthscale, torch), upper=False)
    w = torch.linalg.solve_triangular(Lt, yt[:, None], upper=False)[:, 0]
    ucb = V.T @ w + 2.0 * torch.sqrt((1.0 - (V * V).sum(0)).clamp_min(1e-12))
    return ucb.cpu().numpy()


def _row(name: str, cpu_fn, acc_fn, repeats: int, atol: float) -> tuple[str, float, float]:
    """One piece: both sides agree (so the accelerator side computes the same thing), then time."""
    ref, got = cpu_fn(), acc_fn()
    gap = max(
        float(np.abs(np.asarray(a) - np.asarray(b)).max()) for a, b in zip(ref, got, strict=True)
    )
    assert gap < atol, f"{name}: the two sides differ by {gap:.1e} (tolerance {atol:.0e})"
    return name, _timed(cpu_fn, repeats), _timed(acc_fn, repeats)


def victim_rows(torch, device, repeats: int) -> list[tuple[str, float, float]]:
    from frontierbo.attack.victims import load_victim

    rows = []
    for name in ("mnist", "cifar10"):
        cpu, acc = load_victim(name), load_victim(name, device=device)
        x = np.random.default_rng(0).uniform(size=(1, *cpu.input_shape))
        scale = max(float(np.abs(cpu.logits(x)).max()), 1.0)  # logits: a relative tolerance
        queries = functools.partial(_queries, x=x, count=20)
        row = _row(f"victim {name}, 1 image", functools.partial(queries, cpu),
                   functools.partial(queries, acc), repeats, 1e-4 * scale)  # fmt: skip
        rows.append((row[0], row[1] / 20, row[2] / 20))
    return rows


def _queries(victim, x, count: int):
    return [victim.logits(x) for _ in range(count)]


def gp_rows(torch, device, n: int, args) -> list[tuple[str, float, float]]:
    X, P, L, _, ls = _data(n, args.latent_dim, POOL + n)
    pool = _row(f"pool whitening, n={n}, d={args.latent_dim}",
                functools.partial(pool_cpu, X, P, L, ls),
                functools.partial(pool_gpu, torch, device, X, P, L, ls), args.repeats, 1e-8)  # fmt: skip
    X, C, L, y, ls = _data(n, args.bayesopt_dim, CANDIDATES)
    score = _row(f"BayesOpt scoring, n={n}, D={args.bayesopt_dim}",
                 lambda: [score_cpu(X, C, L, y, ls)],
                 lambda: [score_gpu(torch, device, X, C, L, y, ls)], args.repeats, 1e-8)  # fmt: skip
    return [pool, score]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="200,900", help="data points n")
    ap.add_argument("--latent-dim", type=int, default=324, help="BOS²'s d (MNIST's side 18)")
    ap.add_argument("--bayesopt-dim", type=int, default=1200, help="CIFAR-10's side 20 x 3")
    ap.add_argument("--device", default="cuda", help="torch device of the accelerator side")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--blas-threads", type=int, default=1, help="CPU side (the workers use 1)")
    args = ap.parse_args(argv)
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(args.blas_threads)
    # float32 as on the CPU: TF32 convolutions would move the victim's logits by ~1e-3
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit("--device cuda: torch sees no CUDA device here")
    print(f"accelerator: {args.device}", end="")
    if args.device.startswith("cuda"):
        print(f" ({torch.cuda.get_device_name()})", end="")
    print(f"; CPU side: numpy/scipy on {args.blas_threads} BLAS thread(s)\n")
    with threadpool_limits(args.blas_threads):
        rows = victim_rows(torch, args.device, args.repeats)
        for n in (int(s) for s in args.sizes.split(",")):
            rows += gp_rows(torch, args.device, n, args)
    print(f"| piece | CPU (ms) | {args.device} (ms) | ratio |")
    print("|---|---:|---:|---:|")
    for name, t_cpu, t_acc in rows:
        print(f"| {name} | {1e3 * t_cpu:.2f} | {1e3 * t_acc:.2f} | {t_cpu / t_acc:.1f}x |")


if __name__ == "__main__":
    main()
