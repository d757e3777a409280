"""How long a study's ask takes as it grows, beside BoTorch, and how long the CLI takes to start
beside Optuna's (issue 59, item 8).

What is measured:

* **ask latency at t told trials** (t = 10, 100, 500 by default; ``--sizes 10 100 500 2000``
  for the issue's full set): a study of n = 5 000 random rows of [0, 1]^4 (seeded), the
  objective ``-|x - 0.4|^2 + 0.1 sin(9 x_0)``. t - 1 trials are added with ``add_trials``, one
  ask is made untimed (its fit has no earlier one to start from), then ``--repeats`` asks are
  timed, each told before the next: the median and the largest. ``ours`` is the default
  (refits warm-started from the previous optimum, a full fit when the observations double);
  ``ours-full-fits`` sets ``warm_refits=False`` (every refit a full two-restart fit, as
  before). The time is ``study.ask()`` (its database transaction included).
* **BoTorch** at the same t: ``SingleTaskGP`` (its defaults, ``Standardize(1)``) fitted with
  ``fit_gpytorch_mll`` on the t points, ``qLogExpectedImprovement`` maximised over the rows
  not told with ``optimize_acqf_discrete``: the median of ``--repeats`` suggestions.
* **CLI start-up**: the wall time of ``frontierbo ask`` on a study of 12 told trials against
  ``optuna ask`` (Optuna's CLI, a random sampler over one float) on an Optuna SQLite study,
  each run ``--cli-runs`` times alternately: medians.

Run (BoTorch and Optuna are not dependencies of frontierbo)::

    pip install torch==2.13.0 && pip install botorch optuna threadpoolctl
    python benchmarks/study_latency.py                        # t = 10, 100, 500: a few minutes
    python benchmarks/study_latency.py --sizes 10 100 500 2000   # BoTorch's t = 2000: minutes

Targets (issue 59): ask <= 0.3 s at t = 500 and <= 1 s at t = 2 000; the CLI no slower than
Optuna's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from frontierbo.study.create import create_study

N, D = 5000, 4


def objective(X: np.ndarray) -> np.ndarray:
    return -np.sum((X - 0.4) ** 2, axis=-1) + 0.1 * np.sin(9 * X[..., 0])


def candidates(seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).random((N, D))


def ours(t: int, repeats: int, warm: bool, folder: str) -> list[float]:
    X = candidates()
    study = create_study(
        X, storage=os.path.join(folder, f"t{t}-{warm}.db"), direction="maximize", seed=0,
        settings={"warm_refits": warm},
    )  # fmt: skip
    rows = np.random.default_rng(1).choice(N, t - 1, replace=False)
    study.add_trials([{"row": int(r), "value": float(objective(X[r]))} for r in rows])
    first = study.ask()  # untimed: no earlier fit to start from
    study.tell(first, float(objective(first.x)))
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        trial = study.ask()
        seconds.append(time.perf_counter() - start)
        study.tell(trial, float(objective(trial.x)))
    return seconds


def botorch(t: int, repeats: int) -> list[float]:
    import torch
    from botorch.acquisition.logei import qLogExpectedImprovement
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from botorch.models.transforms import Standardize
    from botorch.optim import optimize_acqf_discrete
    from gpytorch.mlls import ExactMarginalLogLikelihood

    X = torch.tensor(candidates(), dtype=torch.float64)
    rows = np.random.default_rng(1).choice(N, t, replace=False)
    seconds = []
    for k in range(repeats):
        torch.manual_seed(k)
        start = time.perf_counter()
        train_x = X[rows]
        train_y = torch.tensor(objective(candidates()[rows]), dtype=torch.float64)[:, None]
        model = SingleTaskGP(train_x, train_y, outcome_transform=Standardize(1))
        fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
        free = np.setdiff1d(np.arange(N), rows)
        acq = qLogExpectedImprovement(model, best_f=train_y.max())
        optimize_acqf_discrete(acq, q=1, choices=X[free], max_batch_size=2048)
        seconds.append(time.perf_counter() - start)
    return seconds


def cli_startup(runs: int, folder: str) -> tuple[list[float], list[float]]:
    db = os.path.join(folder, "cli.db")
    study = create_study(candidates()[:2000], storage=db, seed=0)
    study.optimize(lambda t: float(t.x.sum()), n_trials=12)
    optuna_db = f"sqlite:///{os.path.join(folder, 'optuna.db')}"
    subprocess.run(["optuna", "create-study", "--storage", optuna_db, "--study-name", "x"],
                   check=True, capture_output=True)  # fmt: skip
    space = '{"x": {"name": "FloatDistribution", "attributes": {"low": 0.0, "high": 1.0}}}'
    commands = {
        "frontierbo ask": [sys.executable, "-m", "frontierbo.cli", "ask", "--storage", db],
        "optuna ask": ["optuna", "ask", "--storage", optuna_db, "--study-name", "x",
                       "--search-space", space],
    }  # fmt: skip
    times = {name: [] for name in commands}
    for _ in range(runs):
        for name, argv in commands.items():
            start = time.perf_counter()
            subprocess.run(argv, check=True, capture_output=True)
            times[name].append(time.perf_counter() - start)
    return times["frontierbo ask"], times["optuna ask"]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", nargs="+", type=int, default=[10, 100, 500])
    ap.add_argument("--repeats", type=int, default=5, help="timed asks per size (5)")
    ap.add_argument("--methods", nargs="+", default=["ours", "ours-full-fits", "botorch"],
                    choices=["ours", "ours-full-fits", "botorch"])  # fmt: skip
    ap.add_argument("--cli-runs", type=int, default=5, help="runs of each CLI (5; 0: none)")
    ap.add_argument("--threads", type=int, default=1, help="torch / BLAS threads (1)")
    args = ap.parse_args(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from regret_common import limit_threads

    limits = limit_threads(args.threads, ["botorch"] if "botorch" in args.methods else [])
    print(f"study_latency: n = {N} rows x {D}, threads {args.threads}, "
          f"load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}")  # fmt: skip
    print("\n| t | " + " | ".join(f"{m} median / max" for m in args.methods) + " |")
    print("|---|" + "---|" * len(args.methods))
    with tempfile.TemporaryDirectory(prefix="study-latency-") as folder:
        for t in args.sizes:
            cells = []
            for m in args.methods:
                if m == "botorch":
                    s = botorch(t, max(1, min(args.repeats, 3)))
                else:
                    s = ours(t, args.repeats, m == "ours", folder)
                cells.append(f"{statistics.median(s):.3f} s / {max(s):.3f} s")
            print(f"| {t} | " + " | ".join(cells) + " |", flush=True)
        if args.cli_runs:
            mine, theirs = cli_startup(args.cli_runs, folder)
            print(
                f"\nCLI: frontierbo ask {statistics.median(mine):.3f} s, optuna ask "
                f"{statistics.median(theirs):.3f} s (medians of {args.cli_runs}; ratio "
                f"{statistics.median(mine) / statistics.median(theirs):.2f})"
            )
    del limits


if __name__ == "__main__":
    main()
