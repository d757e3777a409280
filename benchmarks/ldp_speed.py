"""Wall-clock of one run of each LDP-BO algorithm and its per-step cost as t grows.

Problem: the 100-arm synthetic problem of Zhou & Tan 2021, Fig. 2 (``synthetic-se`` or
``synthetic-matern``, one seeded f), rewards privatised by CTL(eps) (default eps = 1, the E1
headline; ``--non-private`` for the heavy-tailed versions on the same problem's raw rewards).
Parameters as in the reproduction: the ``practical`` profile, the common ``beta_scale`` (0.1),
lambda = 1, delta = 0.1. Every algorithm sees the same reward-noise and privacy-noise seeds.

Printed per algorithm: the whole-run wall-clock; the mean ms per step (ask + tell, environment
excluded) in windows of ``--window`` rounds ending at t = 250, 500, 1000, 2000 (scaled to T); the
Nyström dictionary size m_t at the window's end for ATA and MoMA. Then the MoMA/ATA wall-clock
ratio, and a growth check: between consecutive windows, the time of one Nyström update divided
by the work its path needs (``m^2 + n m`` incremental, ``m^3 + n m^2`` on a dictionary change):
a ratio near 1 means the update grows no faster than the dictionary size requires. ATA's line 8
costs O(n m) plus O(t) to file a reward (``ArmRewardIndex``); TGP's step is one GP update on at
most n_p + n rows (``FiniteDomainGP``, regrouped every n rounds), MoMA's an O(1) round plus an
epoch close every k_mom rounds.

``--full-run``: instead, one run of every algorithm on every dataset family (private, eps =
``--eps``) at T (default the full reproduction's 10^4), printed as seconds per run, and the
projected wall time of the full ``frontierbo reproduce ldp-bo`` (540 runs): the sum over its
settings, algorithms and trials of the measured per-run time of that (family, algorithm),
divided by ``--jobs`` (default 2). A projection from one seed per cell, on whatever load the
machine has; the full run's own per-run seconds are in its runs.jsonl. To get the "before"
figure of a change, run the same command with ``PYTHONPATH`` pointing at the old sources.

BLAS threads: one by default (``--blas-threads 1``, via threadpoolctl), like the reproduction's
workers: the matrices are tiny (m, n <= 100), and on a busy 2-core machine a second OpenBLAS
thread made ATA-GP-UCB 6-9x slower. ``--blas-threads 0`` leaves the library default.

Run:  ``PYTHONPATH=src python benchmarks/ldp_speed.py [--T 2000] [--eps 1] [--kernel se]
[--non-private] [--seed 0] [--window 100] [--blas-threads 1]`` or
``python benchmarks/ldp_speed.py --full-run [--T 10000] [--jobs 2]``.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import time

import numpy as np

from frontierbo.dp.samplers import RandomBits
from frontierbo.ldp.datasets import get_ldp_problem
from frontierbo.ldp.experiment import (
    ALGORITHMS,
    BETA_SCALE,
    DATASETS,
    DELTA,
    FULL_T,
    FULL_TRIALS,
    LAM,
    PROFILE,
    make_algorithm,
    settings,
)
from frontierbo.ldp.randomiser import CTL

CHECKPOINTS = (250, 500, 1000, 2000)  # at T = 2000; scaled by T / 2000 otherwise


def run_timed(problem, alg: str, T: int, eps, seed: int) -> dict:
    """One run; per-step seconds of ask + tell (the environment's sampling is excluded), and for
    the Nyström algorithms the seconds of each ``NystromEmbedding.update`` and its path."""
    algo = make_algorithm(
        alg,
        problem,
        T,
        eps,
        seed,
        lam=LAM,
        delta=DELTA,
        profile=PROFILE,
        beta_scale=BETA_SCALE,
    )
    noise_rng = np.random.default_rng(seed + 1)
    ctl = None if eps is None else CTL(eps, problem.B, problem.R)
    bits = None if eps is None else RandomBits(np.random.default_rng(seed + 2))
    steps = np.empty(T)
    m = np.zeros(T, dtype=int)
    nys = np.full(T, np.nan)  # seconds of the Nyström update made in round t (if any)
    rebuilt = np.zeros(T, dtype=bool)
    clock = time.perf_counter
    current = [0]
    ny = getattr(algo, "nystrom", None)
    if ny is not None:
        update = ny.update

        def timed_update(arm):  # instance attribute: shadows the method for this object only
            start = clock()
            changed = update(arm)
            nys[current[0]] = clock() - start
            rebuilt[current[0]] = bool(changed)
            return changed

        ny.update = timed_update
    regret = 0.0
    fn = problem.f_normalised
    total_start = clock()
    for t in range(T):
        current[0] = t
        t0 = clock()
        arm = algo.ask()
        t1 = clock()
        y = problem.sample_reward(arm, noise_rng)
        reward = y if ctl is None else ctl.randomise(y, bits)
        t2 = clock()
        algo.tell(arm, reward)
        t3 = clock()
        steps[t] = (t1 - t0) + (t3 - t2)
        m[t] = getattr(algo, "m", 0)
        regret += fn.max() - fn[arm]
    total = clock() - total_start
    return {
        "name": getattr(algo, "name", alg),
        "total": total,
        "algo_seconds": float(steps.sum()),
        "steps": steps,
        "m": m,
        "nystrom": nys,
        "rebuilt": rebuilt,
        "avg_regret": regret / T,
        "k_mom": getattr(algo, "k_mom", None),
    }


def window_stats(res: dict, ends, width: int) -> list[dict]:
    """Per window of rounds (t_end - width, t_end]: mean ms per step, m at t_end, and the median
    ms of the Nyström updates on the incremental and on the rebuild path (NaN if none; medians,
    because single updates of ~0.1 ms are at the mercy of the scheduler)."""
    out = []
    for end in ends:
        sl = slice(max(end - width, 0), end)
        nys, rebuilt = res["nystrom"][sl], res["rebuilt"][sl]
        done = ~np.isnan(nys)
        inc, reb = nys[done & ~rebuilt], nys[done & rebuilt]
        out.append(
            {
                "t": end,
                "ms": 1e3 * float(res["steps"][sl].mean()),
                "m": int(res["m"][end - 1]),
                "updates": int(done.sum()),
                "rebuilds": int(reb.size),
                "inc_ms": 1e3 * float(np.median(inc)) if inc.size else math.nan,
                "reb_ms": 1e3 * float(np.median(reb)) if reb.size else math.nan,
            }
        )
    return out


def full_run_projection(T: int, eps: float, seed: int, jobs: int) -> None:
    """Seconds per run of each (family, algorithm) at T, and the projected full-run wall time."""
    seconds: dict[tuple[str, str], float] = {}
    print(f"seconds per run at T = {T} (private, eps = {eps:g}, seed {seed}):")
    print(f"  {'family':<18} {'n':>4} " + " ".join(f"{a:>8}" for a in ALGORITHMS))
    for family in DATASETS:
        problem = get_ldp_problem(family, seed)
        row = []
        for alg in ALGORITHMS:
            res = run_timed(problem, alg, T, eps, seed)
            seconds[family, alg] = res["total"]
            row.append(f"{res['total']:8.2f}")
        print(f"  {family:<18} {problem.n:>4} " + " ".join(row))
    grid = settings()
    per_alg = {alg: 0.0 for alg in ALGORITHMS}
    for s in grid:
        for alg in ALGORITHMS:
            per_alg[alg] += FULL_TRIALS * seconds[s.family, alg]
    total = sum(per_alg.values())
    n_runs = len(grid) * len(ALGORITHMS) * FULL_TRIALS
    print(
        f"\nprojected full reproduction ({len(grid)} settings x {len(ALGORITHMS)} algorithms x "
        f"{FULL_TRIALS} trials = {n_runs} runs at T = {T}): {total / 60:.1f} CPU-minutes, "
        f"{total / jobs / 60:.1f} min wall on {jobs} workers"
    )
    print(
        "  by algorithm (CPU-minutes): "
        + ", ".join(f"{a} {v / 60:.1f}" for a, v in per_alg.items())
    )


def _ms(x: float) -> str:
    return "     -" if math.isnan(x) else f"{x:6.3f}"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--T", type=int, default=None, help="horizon (default 2000; 10^4 with --full-run)"
    )
    ap.add_argument(
        "--full-run",
        action="store_true",
        help="time every (family, algorithm) once and project the full reproduction's wall time",
    )
    ap.add_argument("--jobs", type=int, default=2, help="workers of the projected full run")
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--non-private", action="store_true")
    ap.add_argument("--kernel", choices=("se", "matern"), default="se")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--window", type=int, default=100, help="rounds per per-step window")
    ap.add_argument(
        "--blas-threads",
        type=int,
        default=1,
        help="BLAS threads (default 1, as the reproduction's workers; 0: leave the default); "
        "needs threadpoolctl",
    )
    args = ap.parse_args(argv)
    if args.blas_threads > 0:
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:
            print("threadpoolctl is not installed: BLAS threads left at the default")
        else:
            threadpool_limits(limits=args.blas_threads, user_api="blas")
    if args.full_run:
        T = FULL_T if args.T is None else args.T
        print(
            f"python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} CPUs, "
            f"load average {os.getloadavg()[0]:.2f}"
        )
        full_run_projection(T, args.eps, args.seed, args.jobs)
        return
    T = 2000 if args.T is None else args.T
    eps = None if args.non_private else args.eps
    name = f"synthetic-{args.kernel}" + ("-t" if eps is None else "")
    problem = get_ldp_problem(name, args.seed)
    ends = sorted({max(1, min(T, round(c * T / 2000))) for c in CHECKPOINTS})
    width = max(1, min(args.window, ends[0]))

    print(
        f"LDP-BO speed: {name} (n = {problem.n}), T = {T}, "
        f"{'non-private' if eps is None else f'eps = {eps:g}'}, profile {PROFILE}, "
        f"beta_scale {BETA_SCALE:g}, seed {args.seed}"
    )
    print(
        f"python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.2f}, BLAS threads "
        f"{args.blas_threads if args.blas_threads > 0 else 'default'}"
    )
    results = {}
    for alg in ALGORITHMS:
        results[alg] = res = run_timed(problem, alg, T, eps, args.seed)
        extra = "" if res["k_mom"] is None else f", k_mom = {res['k_mom']}"
        print(
            f"\n{res['name']}: run {res['total']:.2f} s (algorithm {res['algo_seconds']:.2f} s), "
            f"R_T/T = {res['avg_regret']:.3f}{extra}"
        )
        print(
            f"  {'t':>6} {'ms/step':>8} {'m_t':>4} {'updates':>7} {'rebuilds':>8} "
            f"{'inc ms':>6} {'rebuild ms':>10}   (means over the {width} rounds up to t)"
        )
        for w in window_stats(res, ends, width):
            print(
                f"  {w['t']:>6} {w['ms']:>8.3f} {w['m']:>4} {w['updates']:>7} {w['rebuilds']:>8} "
                f"{_ms(w['inc_ms'])} {_ms(w['reb_ms']):>10}"
            )

    ata, moma = results["ata"], results["moma"]
    print(
        f"\nwall-clock ratio MoMA/ATA = {moma['total'] / ata['total']:.3f} "
        f"(ATA/MoMA = {ata['total'] / moma['total']:.1f}x); "
        f"TGP/ATA = {results['tgp']['total'] / ata['total']:.3f}"
    )
    n = problem.n
    print(
        "\nNyström growth check: time of one update divided by the work its path needs, "
        "m^2 + n m (incremental, Sherman-Morrison) or m^3 + n m^2 (rebuild); it should not grow "
        "with t at a given m (first window = 1.00):"
    )
    for alg in ("ata", "moma"):
        stats = window_stats(results[alg], ends, width)
        for path, key, work in (
            ("incremental", "inc_ms", lambda m: m * m + n * m),
            ("rebuild", "reb_ms", lambda m: m**3 + n * m * m),
        ):
            norm = [
                (w["t"], w[key] / work(w["m"])) for w in stats if not math.isnan(w[key]) and w["m"]
            ]
            if len(norm) < 2:
                print(f"  {results[alg]['name']}, {path}: too few updates on this path")
                continue
            base = norm[0][1]
            rel = [(t, v / base) for t, v in norm]
            verdict = "ok" if max(v for _, v in rel) <= 2.0 else "GROWS faster than m requires"
            print(
                f"  {results[alg]['name']}, {path}: "
                + ", ".join(f"t={t}: {v:.2f}" for t, v in rel)
                + f" ({verdict})"
            )


if __name__ == "__main__":
    main()
