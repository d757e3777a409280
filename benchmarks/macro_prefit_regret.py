"""What known hyperparameters are worth to ε-Macro-BO: the thesis's GP against one learned on the
way (``frontierbo run macro-bo`` without ``--prefit-on-table``).

The thesis plans with GP hyperparameters fixed before the run: the generating ones for the
plankton field (E1) and ones fitted a priori on the whole traffic table (E2). A user with a real
field has neither; :class:`frontierbo.macro.field.MapRefit` learns them before every plan from
the measurements so far (MAP under BoTorch's priors). For each dataset and seed both variants
run :func:`frontierbo.macro.runner.run_macro` from the same start with the same planner seeds;
the script prints M1 (average normalised output) and M2 (simple regret) at the end of the budget,
mean ± standard error over seeds, and the seconds per run.

Datasets: ``plankton`` (E1, a GP draw per seed; fixed start, kappa 4) and ``traffic`` (E2, the
real taxi-demand graph read from the data root, kappa 5, a start drawn per seed; skipped with a
note when the data is missing). Planner: ``nonmyopic-gp-ucb`` (the most-likely policy, A2) with
H = 2 by default, or ``eps-macro-bo`` (A1, ``--samples`` per macro-action) with ``--method``.

Run: ``python benchmarks/macro_prefit_regret.py [--seeds 10] [--iterations 5]
[--method nonmyopic-gp-ucb] [--datasets plankton traffic]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def load(name: str, seed: int):
    from frontierbo.macro import data

    if name == "plankton":
        return data.plankton(seed=seed, kappa=4)
    return data.traffic(seed=seed, kappa=5)


def planner(method: str, horizon: int, samples: int):
    from frontierbo.macro import runner

    if method == "eps-macro-bo":
        return runner.epsilon_macro_bo(horizon, samples)
    return runner.most_likely(horizon)


def one_run(dataset, method, seed: int, learned: bool) -> tuple[float, float, float]:
    from frontierbo.macro.field import MapRefit
    from frontierbo.macro.runner import run_macro

    start = int(dataset.starts(1, seed=np.random.default_rng([seed, 1]))[0])
    refit = MapRefit(dataset.domain.inputs, seed) if learned else None
    began = time.perf_counter()
    budget = ITERATIONS * dataset.domain.kappa
    run = run_macro(method, dataset, start=start, budget=budget, seed=seed, refit=refit)
    seconds = time.perf_counter() - began
    metrics = run.metrics(dataset)
    return float(metrics["m1"][-1]), float(metrics["m2"][-1]), seconds


def summary(values) -> str:
    a = np.asarray(values, dtype=float)
    return f"{a.mean():.4g} ± {a.std(ddof=1) / np.sqrt(a.size) if a.size > 1 else 0:.2g}"


ITERATIONS = 5


def main(argv=None) -> None:
    global ITERATIONS
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", nargs="+", default=["plankton", "traffic"])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--iterations", type=int, default=5, help="macro-actions per run (5)")
    ap.add_argument("--method", choices=("nonmyopic-gp-ucb", "eps-macro-bo"),
                    default="nonmyopic-gp-ucb")  # fmt: skip
    ap.add_argument("--horizon", type=int, default=2)
    ap.add_argument("--samples", type=int, default=10, help="N of eps-macro-bo (10)")
    args = ap.parse_args(argv)
    ITERATIONS = args.iterations
    method = planner(args.method, args.horizon, args.samples)
    print(f"{args.method}, H = {args.horizon}, {args.iterations} macro-actions, {args.seeds} seeds")
    print(
        "| dataset | hyperparameters | M1 (avg. normalised output) | M2 (simple regret) | s / run |"
    )
    print("|---|---|---|---|---|")
    for name in args.datasets:
        rows = {False: [], True: []}
        try:
            for seed in range(args.seeds):
                dataset = load(name, seed)
                for learned in (False, True):
                    rows[learned].append(one_run(dataset, method, seed, learned))
        except FileNotFoundError as exc:
            print(f"| {name} | skipped: {exc} | | | |")
            continue
        for learned, label in ((False, "the thesis's (known)"), (True, "learned on the way")):
            m1, m2, sec = zip(*rows[learned], strict=True)
            print(f"| {name} | {label} | {summary(m1)} | {summary(m2)} | {np.mean(sec):.2f} |")


if __name__ == "__main__":
    main()
