"""frontierbo's Optuna sampler against Optuna's GPSampler and TPESampler, all inside Optuna:
simple regret and seconds per trial (issue 59, item 6).

What is measured: simple regret r_T = f* - max_{t <= T} f(x_t) after T = 20 and 40 trials, and
the wall time of one trial's ``study.ask(distributions)`` + ``study.tell(trial, value)`` (the
sampler's work and Optuna's in-memory bookkeeping; never the objective), averaged over the
model-based trials (n0 + 1 .. T). Everything is maximised.

Problems: ``branin`` and ``hartmann6`` of ``space_regret.py`` (imported from there, with their
f* computed at start): Branin on [-5, 10] x [0, 15] with its sign flipped, and 6-D Hartmann on
the unit cube.

Methods, each an ``optuna.create_study(direction="maximize", sampler=...)`` asked with Optuna's
``FloatDistribution``s (``space_regret.OptunaMethod``), all with the initial design size n0 =
max(2, min(10, d + 1)) (``--n-initial``) and ``seed``:

* ``frontierbo``: ``FrontierboSampler(seed=seed, n_startup_trials=n0)`` (GP-EI: trial 0 random
  as Optuna knows no search space yet, trials 1 .. n0 - 1 frontierbo's scrambled Sobol design);
* ``optuna-gp``: ``optuna.samplers.GPSampler(seed=seed, n_startup_trials=n0)``;
* ``optuna-tpe``: ``optuna.samplers.TPESampler(seed=seed, n_startup_trials=n0)``;
* ``frontierbo-study`` (not run by default): a frontierbo study itself (``space_regret.Ours``),
  the same model without Optuna around it.

The methods of one (problem, seed) run interleaved, one trial each in turn (the order rotated
per seed), so machine load hits them alike; every BLAS / torch pool gets ``--threads`` threads
(default 1).

Run (Optuna and torch are not dependencies of frontierbo)::

    pip install torch==2.13.0 && pip install optuna threadpoolctl
    python benchmarks/optuna_sampler.py                        # 3 seeds, T = 40
    python benchmarks/optuna_sampler.py --seeds 10 --budget 40 --out optuna_sampler.json

Output, per problem: mean simple regret ± s.e. over seeds at each T and seconds per trial; then
frontierbo's mean regret / each baseline's at each T ("ok": ours <= its mean + its s.e.) and its
time per trial / ours; last, the issue's target: regret within one s.e. of Optuna's GPSampler or
better at every T, at a fraction of its time.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from regret_common import (
    check_imports,
    checkpoints,
    limit_threads,
    print_ratios,
    print_regret_table,
    resume,
    save_results,
    summarise_methods,
    within_se,
)
from space_regret import OptunaMethod, Ours, Problem, make_problems

PROBLEMS = ("branin", "hartmann6")
METHODS = ("frontierbo", "optuna-gp", "optuna-tpe", "frontierbo-study")
DEFAULT_METHODS = ("frontierbo", "optuna-gp", "optuna-tpe")
FORMAT = "frontierbo-optuna-sampler/1"


class FrontierboMethod(OptunaMethod):
    """An Optuna study with :class:`FrontierboSampler`, asked exactly as the Optuna baselines."""

    def __init__(self, p: Problem, seed: int, n0: int):
        import optuna

        from frontierbo.integration.optuna import FrontierboSampler

        super().__init__(p, seed, n0, "tpe")  # the distributions; the study is replaced
        sampler = FrontierboSampler(seed=seed, n_startup_trials=n0)
        self.study = optuna.create_study(direction="maximize", sampler=sampler)


def make_method(method: str, p: Problem, seed: int, n0: int):
    if method == "frontierbo":
        return FrontierboMethod(p, seed, n0)
    if method == "frontierbo-study":
        return Ours(p, seed, n0, "gp-ei")
    return OptunaMethod(p, seed, n0, method.removeprefix("optuna-"))


def run_interleaved(p: Problem, seed: int, methods: list[str], args) -> dict[str, dict]:
    """One run of each method on ``p`` with ``seed``, one trial each in turn."""
    n0 = p.n_initial(args.n_initial)
    runners = {m: make_method(m, p, seed, n0) for m in methods}
    values = {m: [] for m in methods}
    seconds = {m: [] for m in methods}
    try:
        for _ in range(args.budget):
            for m, runner in runners.items():
                start = time.perf_counter()
                x = runner.ask()
                elapsed = time.perf_counter() - start
                value = float(p.f(x))
                start = time.perf_counter()
                runner.tell(value)
                seconds[m].append(elapsed + time.perf_counter() - start)
                values[m].append(value)
    finally:
        for runner in runners.values():
            runner.close()
    out = {}
    for m in methods:
        v = np.array(values[m])
        out[m] = {
            "problem": p.name, "method": m, "seed": seed, "budget": args.budget,
            "n_initial": n0, "f_max": p.f_max, "values": v.tolist(),
            "regret": (p.f_max - np.maximum.accumulate(v)).tolist(), "ask_seconds": seconds[m],
        }  # fmt: skip
    return out


def run_all(args, problems: dict[str, Problem], runs: list[dict]) -> list[dict]:
    done = {(r["problem"], r["method"], r["seed"]): r for r in runs}
    for seed in range(args.seeds):
        for i, name in enumerate(args.problems):
            p = problems[name]
            todo = [
                m for m in args.methods
                if (name, m, seed) not in done or done[(name, m, seed)]["budget"] < args.budget
            ]  # fmt: skip
            if not todo:
                continue
            shift = (seed + i) % len(todo)
            todo = todo[shift:] + todo[:shift]
            start = time.perf_counter()
            result = run_interleaved(p, seed, todo, args)
            done.update({(name, m, seed): r for m, r in result.items()})
            if args.out:
                save_results(args.out, list(done.values()), FORMAT, ".optuna-sampler-")
            cells = ", ".join(f"{m} {result[m]['regret'][-1]:.3g}" for m in todo)
            print(
                f"  {name:9s} seed {seed:2d}: regret@{args.budget} {cells} "
                f"({time.perf_counter() - start:.1f} s)",
                flush=True,
            )
    return list(done.values())


def print_tables(runs: list[dict], args, problems: dict[str, Problem]) -> None:
    Ts = checkpoints(args.budget)
    verdicts = []
    for name in args.problems:
        rows = summarise_methods(runs, name, args)
        if not rows:
            continue
        p = problems[name]
        print(
            f"\n{name}: {len(p.params)} floats; f* = {p.f_max:.6f}, initial design "
            f"{p.n_initial(args.n_initial)}, budget {args.budget}; simple regret mean ± s.e. "
            "over seeds; seconds per trial (ask + tell) over the model-based trials"
        )
        print_regret_table(rows, Ts, 3, _seconds)
        if "frontierbo" in rows:
            print_ratios(rows, "frontierbo", Ts, exclude=("frontierbo", "frontierbo-study"))
        if "frontierbo" in rows and "optuna-gp" in rows:
            (mine, my_sec, _), (theirs, their_sec, _) = rows["frontierbo"], rows["optuna-gp"]
            verdicts.append((name, all(within_se(mine[T], theirs[T]) for T in Ts),
                             their_sec / my_sec))  # fmt: skip
    if verdicts:
        print("\ntarget (regret within one s.e. of Optuna's GPSampler or better at every T):")
        print("| problem | regret | GPSampler's time / ours |")
        print("|---|---|---|")
        for name, ok, speed in verdicts:
            print(f"| {name} | {'ok' if ok else 'WORSE'} | {speed:.3g}x |")


def _seconds(sec: float) -> str:
    return f"{sec * 1e3:.3g} ms" if sec < 1 else f"{sec:.3g} s"


def parse(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problems", nargs="+", choices=PROBLEMS, default=list(PROBLEMS))
    ap.add_argument("--methods", nargs="+", choices=METHODS, default=list(DEFAULT_METHODS))
    ap.add_argument("--seeds", type=int, default=3, help="seeds 0 .. N-1 (default 3)")
    ap.add_argument("--budget", type=int, default=40, help="trials per run (default 40)")
    ap.add_argument("--n-initial", type=int, default=None,
                    help="initial design size of every method (default max(2, min(10, d + 1)))")  # fmt: skip
    ap.add_argument("--out", default=None, help="per-seed results (JSON), resumed if it exists")
    ap.add_argument("--threads", type=int, default=1, help="torch / BLAS threads (default 1)")
    args = ap.parse_args(argv)
    for name, low in (("seeds", 1), ("budget", 2), ("threads", 1), ("n_initial", 2)):
        value = getattr(args, name)
        if value is not None and value < low:
            ap.error(f"--{name.replace('_', '-')} must be an integer >= {low}, got {value}")
    if args.n_initial is not None and args.n_initial > args.budget:
        ap.error(f"--n-initial must be <= --budget ({args.budget}), got {args.n_initial}")
    return args


def main(argv=None) -> None:
    args = parse(argv)
    check_imports(args.methods)
    try:
        import optuna
    except ImportError:
        sys.exit("this benchmark needs Optuna: pip install 'frontierbo[optuna]'")

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    limits = limit_threads(args.threads, args.methods)  # noqa: F841 - held for the whole run
    previous = resume(args.out, FORMAT)
    problems = make_problems()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"optuna_sampler: {args.seeds} seeds, T = {args.budget}, methods "
        f"{', '.join(args.methods)}; optuna {optuna.__version__}; threads {args.threads}, "
        f"{os.cpu_count()} cores, load average {load:.2f}",
        flush=True,
    )
    start = time.perf_counter()
    runs = run_all(args, problems, previous)
    print(f"\n{time.perf_counter() - start:.0f} s; results: {args.out or '(not saved: --out)'}")
    print_tables(runs, args, problems)


if __name__ == "__main__":
    main()
