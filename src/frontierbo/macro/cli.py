"""ε-Macro-BO's commands: ``run macro-bo`` (an agent's macro-actions over your own field: the
rows of a CSV are locations, see :mod:`frontierbo.macro.userdata`) and ``reproduce macro-bo``
(the thesis's E1–E6, :mod:`frontierbo.macro.report`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from frontierbo.experiments.system import (
    System,
    add_sweep_arguments,
    positive_int,
    reproduce_command,
    with_written_note,
)
from frontierbo.flags import add_renamed

NAME = "macro-bo"
#: ``--method`` choices (the keys of ``frontierbo.macro.userdata.METHODS``).
METHODS = ("eps-macro-bo", "anytime", "nonmyopic-gp-ucb", "db-gp-ucb")
DEFAULT_HORIZON = 3
DEFAULT_SAMPLES = 50
DEFAULT_ITERATIONS = 5


def add_run_commands(run: argparse._SubParsersAction) -> None:
    parser = run.add_parser(
        NAME,
        allow_abbrev=False,  # another system's --k must not be read as --kappa
        help="nonmyopic BO with macro-actions (eps-Macro-BO) on a field: rows are locations",
        description="An agent moves over a field given as a CSV file (one row per location: "
        "coordinates and the measured value) by --iterations macro-actions of --kappa moves "
        "each (every move observes one location) and plans --horizon macro-actions ahead; the GP hyperparameters are learned from the "
        "measurements so far, before every plan (or fitted on the whole table with "
        "--prefit-on-table, as the thesis did). Rows are 0-based data rows.",
    )
    parser.add_argument(
        "--data", required=True, help="CSV file with a header row, one row per location"
    )
    parser.add_argument(
        "--edges",
        default=None,
        help="CSV edge list (header row, two columns of 0-based data rows, e.g. from,to): "
        "macro-actions follow its paths; without it the locations must form a full regular grid "
        "and macro-actions are straight lines",
    )
    parser.add_argument(
        "--directed", action="store_true", help="the --edges are one-way (default: both ways)"
    )
    parser.add_argument("--x", default="x", help="column of the first coordinate (x)")
    parser.add_argument("--y", default="y", help="column of the second coordinate (y)")
    parser.add_argument(
        "--target",
        default="value",
        help="column of the measurements, the objective to maximise (value)",
    )
    add_renamed(parser, "--value", "--target", "the column of the measurements")
    parser.add_argument("--kappa", type=positive_int, default=4, help="moves per macro-action (4)")
    parser.add_argument(
        "--iterations",
        type=positive_int,
        default=DEFAULT_ITERATIONS,
        help=f"rounds: macro-actions after the start, --iterations x --kappa observations "
        f"({DEFAULT_ITERATIONS})",
    )
    add_renamed(
        parser,
        "--budget",
        "--iterations",
        "macro-actions, not observations: --budget 20 with --kappa 4 is --iterations 5",
    )
    parser.add_argument(
        "--method",
        choices=METHODS,
        default="eps-macro-bo",
        help="eps-macro-bo (exhaustive, default), anytime (300 tree expansions per step), "
        "nonmyopic-gp-ucb (most-likely observations) or db-gp-ucb (myopic)",
    )
    parser.add_argument(
        "--horizon",
        type=positive_int,
        default=None,
        help=f"macro-actions of lookahead H ({DEFAULT_HORIZON}; not for db-gp-ucb)",
    )
    parser.add_argument(
        "--samples",
        type=positive_int,
        default=None,
        help=f"samples N per macro-action ({DEFAULT_SAMPLES}; eps-macro-bo and anytime only); "
        "the search tree grows as (macro-actions x N)^H",
    )
    parser.add_argument(
        "--beta", type=float, default=0.0, help="weight of the exploration bonus, >= 0 (0)"
    )
    parser.add_argument(
        "--start",
        type=int,
        default=None,
        help="data row of the start location (default: drawn from --seed)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of every random choice (0)")
    parser.add_argument(
        "--out", type=Path, default=None, help="directory for result.json and trajectory.png"
    )
    parser.add_argument(
        "--prefit-on-table",
        action="store_true",
        help="before the run, fit the GP hyperparameters by maximum likelihood on the whole "
        "value column, as the thesis did (the planner then knows values it has not visited); "
        "default: learn them from the measurements so far, refitted before every plan",
    )
    parser.set_defaults(handler=_run)


def _run(args) -> str:
    from frontierbo.macro.userdata import PLOT_FILENAME, format_macro_result, run_macro_on_csv

    if args.directed and args.edges is None:
        raise ValueError("--directed applies to --edges only: give an edge list")
    if args.horizon is not None and args.method == "db-gp-ucb":
        raise ValueError("--horizon does not apply to db-gp-ucb, which plans one macro-action")
    if args.samples is not None and args.method not in ("eps-macro-bo", "anytime"):
        raise ValueError(
            f"--samples applies to eps-macro-bo and anytime only; {args.method} draws no samples"
        )
    result = run_macro_on_csv(
        args.data,
        edges=args.edges,
        directed=args.directed,
        x=args.x,
        y=args.y,
        value=args.target,
        kappa=args.kappa,
        budget=args.iterations * args.kappa,
        method=args.method,
        horizon=DEFAULT_HORIZON if args.horizon is None else args.horizon,
        n_samples=DEFAULT_SAMPLES if args.samples is None else args.samples,
        beta=args.beta,
        start=args.start,
        seed=args.seed,
        out=args.out,
        prefit_on_table=args.prefit_on_table,
    )
    text = with_written_note(format_macro_result(result), args.out)
    if args.out is not None:
        text += f"\nwritten {json.dumps(str(Path(args.out) / PLOT_FILENAME))}"
    return text


def add_reproduce_command(reproduce: argparse._SubParsersAction) -> None:
    from frontierbo.macro.experiment import DATASETS, EXPERIMENTS

    parser = reproduce.add_parser(
        NAME,
        help="Kharkovskii et al. (AISTATS 2020, thesis Ch. 4): E1-E6, Tables B.1-B.8",
        description="Reproduce the eps-Macro-BO experiments (resumable): E1 plankton, E2 "
        "traffic, E3 temperature, E4 vs Rollout, E5 trajectories, E6 runtime.",
    )
    add_sweep_arguments(
        parser,
        quick="N <= 20 (exhaustive), N <= 50 and 100 iterations (anytime); 10 realizations "
        "for E1, 3 for the others",
        runs="realizations per experiment (E1 250, E2/E3 35, E4 106, E5 1, E6 35)",
        datasets=DATASETS,
    )
    parser.add_argument(
        "--experiments",
        nargs="+",
        choices=EXPERIMENTS,
        default=None,
        metavar="E",
        help=f"subset of {', '.join(EXPERIMENTS)} (default: all; --datasets filters them)",
    )
    parser.set_defaults(handler=_reproduce)


def _reproduce(args) -> str:
    from frontierbo.macro.report import reproduce

    return reproduce_command(args, NAME, reproduce, experiments=args.experiments)


SYSTEM = System(
    name=NAME,
    summary="nonmyopic BO over macro-actions (eps-Macro-BO, anytime eps-Macro-BO)",
    add_run_commands=add_run_commands,
    add_reproduce_command=add_reproduce_command,
    quick_reproduce=("--quick", "--runs", "2", "--experiments", "e1", "e5"),
)
