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

import sys
from functools import partial

from regret_common import (
    add_out_threads,
    check_args,
    check_imports,
    checkpoints,
    parser,
    print_ratios,
    print_regret_table,
    problem_rows,
    run_benchmark,
    run_interleaved,
    seconds_text,
    verdict,
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


def print_tables(runs: list[dict], args, problems: dict[str, Problem]) -> None:
    Ts = checkpoints(args.budget)
    verdicts = []
    for name, rows in problem_rows(runs, args):
        p = problems[name]
        print(
            f"\n{name}: {len(p.params)} floats; f* = {p.f_max:.6f}, initial design "
            f"{p.n_initial(args.n_initial)}, budget {args.budget}; simple regret mean ± s.e. "
            "over seeds; seconds per trial (ask + tell) over the model-based trials"
        )
        print_regret_table(rows, Ts, 3, seconds_text)
        if "frontierbo" in rows:
            print_ratios(rows, "frontierbo", Ts, exclude=("frontierbo", "frontierbo-study"))
        if (v := verdict(rows, "frontierbo", "optuna-gp", Ts)) is not None:
            verdicts.append((name, *v))
    if verdicts:
        print("\ntarget (regret within one s.e. of Optuna's GPSampler or better at every T):")
        print("| problem | regret | GPSampler's time / ours |")
        print("|---|---|---|")
        for name, ok, speed in verdicts:
            print(f"| {name} | {'ok' if ok else 'WORSE'} | {speed:.3g}x |")


def parse(argv=None):
    ap = parser(__doc__, PROBLEMS, METHODS, DEFAULT_METHODS)
    ap.add_argument("--seeds", type=int, default=3, help="seeds 0 .. N-1 (default 3)")
    ap.add_argument("--budget", type=int, default=40, help="trials per run (default 40)")
    ap.add_argument("--n-initial", type=int, default=None,
                    help="initial design size of every method (default max(2, min(10, d + 1)))")  # fmt: skip
    add_out_threads(ap)
    args = ap.parse_args(argv)
    check_args(ap, args, (("seeds", 1), ("budget", 2), ("threads", 1), ("n_initial", 2)))
    return args


def main(argv=None) -> None:
    args = parse(argv)
    check_imports(args.methods)
    try:
        import optuna
    except ImportError:
        sys.exit("this benchmark needs Optuna: pip install 'frontierbo[optuna]'")

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    # one trial's seconds: its ask and its tell (Optuna's bookkeeping included)
    run = partial(run_interleaved, args=args, make=make_method, time_tell=True)
    runs, problems = run_benchmark(
        "optuna_sampler", args, make_problems, run, FORMAT,
        versions=f"optuna {optuna.__version__}; ", cells_in_run_order=True,
    )  # fmt: skip
    print_tables(runs, args, problems)


if __name__ == "__main__":
    main()
