"""What the table prefit is worth: ``frontierbo run`` with and without ``--prefit-on-table`` on the
PO-GP-UCB paper's datasets.

``--prefit-on-table`` fits the GP hyperparameters by maximum likelihood on (up to 2 000 rows of)
the whole target column before the first query, as the papers do: the optimiser has then seen
the values it is about to search. The default learns them only from the rows queried so far
(docs/studies.md). For each dataset, algorithm and seed both variants run the same command path
(:func:`frontierbo.po.userdata.run_on_csv` on a CSV written once) with the same initial row; the
script prints the mean simple regret ± standard error at a few T, and the wall time per run.

Datasets: Branin (the paper's 31 × 31 grid of ``-log f_B``) and the Singapore property prices
(``-log`` price per m², 2 004 rows subsampled as in the paper, read from the data root; skipped
with a note when the file is missing).

Run: ``python benchmarks/prefit_regret.py [--seeds 10] [--iterations 40]
[--algorithms gp-ucb po-gp-ucb] [--modes prefit queried]``
"""

from __future__ import annotations

import argparse
import csv
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

PO_ARGS = {"epsilon": 1.0, "delta": 1e-4, "r": 15}  # a mid-range release of the paper's grid


def branin_table():
    from frontierbo.po.problems.branin import branin_grid

    X, g = branin_grid(31)
    return X, g, ("x1", "x2")


def property_table():
    from frontierbo.po.problems.property import load_property_data

    data = load_property_data(seed=0)
    return data.inputs, data.values, ("lon", "lat")


DATASETS = {"branin": branin_table, "property": property_table}


def write(folder: Path, name: str, X, y, columns) -> Path:
    path = folder / f"{name}.csv"
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow([*columns, "y"])
        writer.writerows(np.column_stack([X, y]).tolist())
    return path


def regret_curves(path, algorithm, seeds, iterations, prefit):
    from frontierbo.po.random_projection import NotDifferentiallyPrivateWarning
    from frontierbo.po.userdata import run_on_csv

    curves, seconds = [], []
    kwargs = PO_ARGS if algorithm == "po-gp-ucb" else {}
    for seed in range(seeds):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NotDifferentiallyPrivateWarning)
            result = run_on_csv(
                path, "y", algorithm, iterations, seed, prefit_on_table=prefit, progress=False,
                **kwargs,
            )  # fmt: skip
        seconds.append(time.perf_counter() - start)
        curves.append(result["simple_regret"])
    return np.array(curves), float(np.mean(seconds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--iterations", type=int, default=40)
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    parser.add_argument("--algorithms", nargs="+", default=["gp-ucb", "po-gp-ucb"])
    parser.add_argument(
        "--modes", nargs="+", default=["prefit", "queried"], choices=["prefit", "queried"],
        help="table prefit, queried rows only, or both (default)",
    )  # fmt: skip
    args = parser.parse_args()
    checkpoints = sorted({10, args.iterations // 2, args.iterations} - {0})
    header = "  ".join(f"{'T=' + str(t):>15}" for t in checkpoints)
    print(f"{args.seeds} seeds; simple regret mean ± s.e.; seconds per run")
    print(f"{'dataset':>9} {'algorithm':>10} {'hyperparameters':>16}  {header}  {'s/run':>6}")
    with tempfile.TemporaryDirectory() as folder:
        for name in args.datasets:
            try:
                X, y, columns = DATASETS[name]()
            except FileNotFoundError as exc:
                print(f"{name}: skipped ({exc})")
                continue
            path = write(Path(folder), name, X, y, columns)
            for algorithm in args.algorithms:
                for prefit in [m == "prefit" for m in args.modes]:
                    curves, sec = regret_curves(
                        path, algorithm, args.seeds, args.iterations, prefit
                    )
                    mean = curves.mean(axis=0)
                    se = (
                        curves.std(axis=0, ddof=1) / np.sqrt(len(curves))
                        if len(curves) > 1
                        else 0 * mean
                    )
                    cells = "  ".join(f"{mean[t]:>7.3f} ± {se[t]:<5.3f}" for t in checkpoints)
                    label = "table prefit" if prefit else "queried only"
                    print(
                        f"{name:>9} {algorithm:>10} {label:>16}  {cells}  {sec:>6.1f}", flush=True
                    )


if __name__ == "__main__":
    main()
