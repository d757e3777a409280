"""Wall-clock speed of one planning call of exhaustive ε-Macro-BO on the 50 x 50 plankton grid.

Problem (E1, Section 4.4.1 of the thesis): a plankton field from ``frontierbo.macro.data.plankton``
(a seeded GP draw, SE kernel with length-scale 0.5 km, signal variance 1, noise variance 1e-5) —
or, when that module is absent, a seeded GP draw with the same hyperparameters on the same grid;
straight-dive macro-actions of kappa = 4 cells in 4 directions (A = 4); d_0 = the start cell
(25, 25) and its value; beta = 0. For each H in {2, 3, 4} and N in {5, 25, 50, 100} it times one
planning call (``EpsilonMacroBO.plan``, median of ``--repeats``) and prints nodes (Table 4.2
convention), seconds and nodes per second. A configuration whose projected time (its node count at
the best rate measured so far) exceeds ``--max-seconds`` is skipped, with the projection printed.

Target (issue 11): H = 4, N = 100 (3.2e8 nodes) in under 10 s on 2 CPU cores.

Run:  ``python benchmarks/macro_speed.py [--threads 2] [--repeats 3] [--seed 0] [--max-seconds 60]``
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import numpy as np

from frontierbo.core.gp import FiniteDomainGP
from frontierbo.core.kernels import SquaredExponential
from frontierbo.macro.epsilon_macro_bo import EpsilonMacroBO, exhaustive_nodes

HORIZONS = (2, 3, 4)
SAMPLES = (5, 25, 50, 100)


def problem(seed: int, kappa: int):
    """(domain, values, start, kernel, noise variance, prior mean) of the plankton grid."""
    try:
        from frontierbo.macro.data import plankton
    except ImportError:  # macro/data.py not there yet: a seeded GP draw on the same grid
        plankton = None
    if plankton is not None:
        ds = plankton(seed, kappa=kappa)
        hyp = ds.hyperparameters
        return ds.domain, ds.values, ds.start, hyp.kernel(), hyp.noise_variance, hyp.prior_mean
    from frontierbo.macro.domains import GridDomain

    domain = GridDomain((50, 50), kappa, spacing=0.1, origin=(-0.5, -0.5))
    kernel = SquaredExponential(0.5, 1.0)
    K = kernel(domain.inputs) + 1e-5 * np.eye(domain.n)
    values = np.linalg.cholesky(K) @ np.random.default_rng(seed).standard_normal(domain.n)
    return domain, values, domain.cell(25, 25), kernel, 1e-5, 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=2, help="threads of the last sampled layer")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0, help="plankton realization and sampler seed")
    ap.add_argument("--kappa", type=int, default=4)
    ap.add_argument("--block-rows", type=int, default=1 << 15)
    ap.add_argument("--max-seconds", type=float, default=60.0, help="skip configurations above")
    args = ap.parse_args()

    domain, values, start, kernel, noise, prior_mean = problem(args.seed, args.kappa)
    gp = FiniteDomainGP(domain.inputs, kernel, noise, prior_mean)
    gp.add(start, float(values[start]))  # d_0 = the start location and its measurement
    print(
        f"# macro_speed: 50x50 grid, kappa={args.kappa}, A={len(domain.macro_actions(start))}, "
        f"beta=0, threads={args.threads}, block_rows={args.block_rows}, repeats={args.repeats}"
    )
    print(
        f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, "
        f"load {os.getloadavg()[0]:.2f}, numpy {np.__version__}"
    )
    print(f"{'H':>2} {'N':>4} {'nodes':>13} {'seconds':>9} {'nodes/s':>10}  action")
    best_rate = 0.0
    for H in HORIZONS:
        for N in SAMPLES:
            nodes = exhaustive_nodes(4, N, H)
            if best_rate and nodes / best_rate > args.max_seconds:
                print(
                    f"{H:>2} {N:>4} {nodes:>13,} {'skipped':>9} {'':>10}  "
                    f"(projected {nodes / best_rate:.0f} s)"
                )
                continue
            planner = EpsilonMacroBO(
                gp,
                domain,
                H,
                n_samples=N,
                seed=args.seed,
                n_threads=args.threads,
                block_rows=args.block_rows,
            )
            times = []
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                plan = planner.plan(start)
                times.append(time.perf_counter() - t0)
            sec = statistics.median(times)
            rate = plan.nodes / sec
            best_rate = max(best_rate, rate)
            print(f"{H:>2} {N:>4} {plan.nodes:>13,} {sec:>9.3f} {rate:>10.3g}  {plan.action}")


if __name__ == "__main__":
    main()
