"""ε-Macro-BO, declared: ``run macro-bo`` (an agent's macro-actions over your own field: the
rows of a CSV are locations, :mod:`frontierbo.macro.userdata`) and ``reproduce macro-bo`` (the
thesis's E1–E6, :mod:`frontierbo.macro.report`); see :mod:`frontierbo.systems.declare`."""

from __future__ import annotations

from pathlib import Path

from frontierbo.macro.experiment import DATASETS, EXPERIMENTS
from frontierbo.systems.declare import (
    REQUIRED,
    SEED,
    Applies,
    Command,
    Param,
    Reproduction,
    System,
)

NAME = "macro-bo"
#: ``--method`` choices and their labels.
METHODS = {
    "eps-macro-bo": "ε-Macro-BO (A1)",
    "anytime": "anytime ε-Macro-BO (A3)",
    "nonmyopic-gp-ucb": "nonmyopic GP-UCB (A2)",
    "db-gp-ucb": "DB-GP-UCB (B1, myopic)",
}
#: Methods that draw ``N`` samples per macro-action / that plan over a horizon.
SAMPLED = ("eps-macro-bo", "anytime")
NONMYOPIC = ("eps-macro-bo", "anytime", "nonmyopic-gp-ucb")
#: What ``--horizon`` / ``--samples`` mean when not given (None in Python too).
DEFAULT_HORIZON = 3
DEFAULT_SAMPLES = 50
#: Tree expansions per planning call of the anytime method (ConstructTree calls).
ANYTIME_ITERATIONS = 300

RUN = Command(
    NAME,
    help="nonmyopic BO with macro-actions (eps-Macro-BO) on a field: rows are locations",
    description="An agent moves over a field given as a CSV file (one row per location: "
    "coordinates and the measured value) by --iterations macro-actions of --kappa moves each "
    "(every move observes one location) and plans --horizon macro-actions ahead; the GP "
    "hyperparameters are learned from the measurements so far, before every plan (or fitted on "
    "the whole table with --prefit-on-table, as the thesis did). Rows are 0-based data rows.",
    params=(
        Param("path", Path, REQUIRED, "CSV file with a header row, one row per location",
              flag="--data"),
        Param(
            "edges", Path, None,
            "CSV edge list (header row, two columns of 0-based data rows, e.g. from,to): "
            "macro-actions follow its paths; without it the locations must form a full regular "
            "grid and macro-actions are straight lines",
        ),
        Param("directed", bool, False, "the --edges are one-way (default: both ways)"),
        Param("x", str, "x", "column of the first coordinate"),
        Param("y", str, "y", "column of the second coordinate"),
        Param("value", str, "value", "column of the measurements, the objective to maximise",
              flag="--target", renamed=(("--value", "the column of the measurements"),)),
        Param("kappa", int, 4, "moves per macro-action", low=1),
        Param(
            "iterations", int, 5,
            "rounds: macro-actions after the start, --iterations x --kappa observations", low=1,
            renamed=(("--budget", "macro-actions, not observations: --budget 20 with --kappa 4 "
                      "is --iterations 5"),),
        ),
        Param(
            "method", str, "eps-macro-bo",
            f"eps-macro-bo (exhaustive), anytime ({ANYTIME_ITERATIONS} tree expansions per step), "
            "nonmyopic-gp-ucb (most-likely observations) or db-gp-ucb (myopic)",
            choices=tuple(METHODS),
        ),
        Param(
            "horizon", int, None,
            f"macro-actions of lookahead H ({DEFAULT_HORIZON}; not for db-gp-ucb)", low=1,
            applies=Applies("method", NONMYOPIC, "db-gp-ucb plans one macro-action"),
        ),
        Param(
            "n_samples", int, None,
            f"samples N per macro-action ({DEFAULT_SAMPLES}; eps-macro-bo and anytime only); "
            "the search tree grows as (macro-actions x N)^H", low=1, flag="--samples",
            applies=Applies("method", SAMPLED, "the other methods draw no samples"),
        ),
        Param("beta", float, 0.0, "weight of the exploration bonus", low=0.0),
        Param("start", int, None, "data row of the start location (default: drawn from --seed)",
              low=0),
        SEED,
        Param("out", Path, None, "directory for result.json and trajectory.png"),
        Param(
            "prefit_on_table", bool, False,
            "before the run, fit the GP hyperparameters by maximum likelihood on the whole "
            "value column, as the thesis did (the planner then knows values it has not "
            "visited); default: learn them from the measurements so far, refitted before every "
            "plan",
        ),
    ),
    run="frontierbo.macro.userdata:run_macro_on_csv",
    format="frontierbo.macro.userdata:format_macro_result",
    written=("result.json", "trajectory.png"),
    example="frontierbo.macro.userdata:example",
)  # fmt: skip

SYSTEM = System(
    name=NAME,
    summary="nonmyopic BO over macro-actions (eps-Macro-BO, anytime eps-Macro-BO)",
    commands=(RUN,),
    reproduction=Reproduction(
        help="Kharkovskii et al. (AISTATS 2020, thesis Ch. 4): E1-E6, Tables B.1-B.8",
        description="Reproduce the eps-Macro-BO experiments (resumable): E1 plankton, E2 "
        "traffic, E3 temperature, E4 vs Rollout, E5 trajectories, E6 runtime.",
        quick="N <= 20 (exhaustive), N <= 50 and 100 iterations (anytime); 10 realizations "
        "for E1, 3 for the others",
        runs="realizations per experiment (E1 250, E2/E3 35, E4 106, E5 1, E6 35)",
        datasets=DATASETS,
        reproduce="frontierbo.macro.report:reproduce",
        quick_args=("--quick", "--runs", "2", "--experiments", "e1", "e5"),
        params=(
            Param(
                "experiments", list, None,
                f"subset of {', '.join(EXPERIMENTS)} (default: all; --datasets filters them)",
                choices=EXPERIMENTS, metavar="E",
            ),
        ),
    ),
)  # fmt: skip
