"""PO-GP-UCB, declared: ``run gp-ucb`` and ``run po-gp-ucb`` (rows of a CSV are candidates),
``reproduce po-gp-ucb``, the study sampler ``po-gp-ucb`` (see :mod:`frontierbo.systems.declare`),
and the hand-written ``demo``, ``privacy audit`` and ``curator`` commands."""

from __future__ import annotations

import argparse
from pathlib import Path

from frontierbo.po.experiment import DATASETS, FULL_RUNS, QUICK_RUNS
from frontierbo.po.problems.synthetic import DEFAULT_GEOMETRY, SYNTHETIC_GEOMETRIES
from frontierbo.systems.commands import jobs, positive_int
from frontierbo.systems.declare import (
    DATA,
    OUT,
    REQUIRED,
    SEED,
    Applies,
    Command,
    Param,
    Reproduction,
    System,
    load,
)

NAME = "po-gp-ucb"
ALGORITHMS = ("gp-ucb", NAME)
MECHANISMS = ("random-projection", "gaussian")
_PRIVATE = Applies("algorithm", (NAME,), "gp-ucb releases nothing")

#: The options of both commands (rows are candidates, one column is the objective).
CSV_PARAMS = (
    DATA,
    Param("target", str, REQUIRED, "column to maximise (see --minimize)"),
    Param("features", list, None, "input columns (default: all others)"),
    Param("minimize", bool, False, "minimise the target instead"),
    Param(
        "iterations", int, REQUIRED,
        "BO rounds T, one row queried per round (the --n-init rows not counted)",
        low=1, short="-T",
    ),
    SEED,
    Param("n_init", int, 1, "random initial rows", low=1),
    OUT,
    Param(
        "prefit_on_table", bool, False,
        "before the first query, fit the GP hyperparameters by maximum likelihood on up to "
        "2000 rows of the target column, as the papers do (the optimiser then knows those "
        "values); default: learn them from the queried rows only, like a study",
    ),
    Param("fit_restarts", int, 3, "random restarts of the maximum-likelihood fit", low=1,
          cli=False),
)  # fmt: skip

GP_UCB = Command(
    "gp-ucb",
    help="GP-UCB over the rows of your CSV (the target column is the objective)",
    description="GP-UCB over the rows of a CSV file: rows are the candidates, the target "
    "column plays the expensive objective (see frontierbo.po.userdata).",
    params=CSV_PARAMS,
    run="frontierbo.po.userdata:run_on_csv",
    format="frontierbo.po.userdata:format_result",
    fixed={"algorithm": "gp-ucb"},
    example="frontierbo.po.userdata:gp_ucb_example",
)

PO_GP_UCB = Command(
    NAME,
    help="PO-GP-UCB: GP-UCB on a privacy-preserving release of your CSV's inputs",
    description="PO-GP-UCB on a CSV file: the curator releases a transform of the inputs, "
    "the modeler runs GP-UCB on it and asks for outputs by row index.",
    params=CSV_PARAMS + (
        Param("epsilon", float, None, "privacy budget epsilon > 0 (required)",
              low=0.0, low_open=True, applies=_PRIVATE),
        Param("delta", float, None, "privacy parameter delta in (0, 1) (required)",
              low=0.0, high=1.0, low_open=True, high_open=True, applies=_PRIVATE),
        Param("r", int, None,
              "projection dimension (required by random-projection; gaussian: optional, "
              "default no projection)", low=1, applies=_PRIVATE),
        Param("mechanism", str, "random-projection",
              "the release: the published one (NOT DP) or the (eps, delta)-DP Gaussian one",
              choices=MECHANISMS),
    ),
    run="frontierbo.po.userdata:run_on_csv",
    format="frontierbo.po.userdata:format_result",
    fixed={"algorithm": NAME},
    example="frontierbo.po.userdata:po_gp_ucb_example",
)  # fmt: skip


def add_commands(top: argparse._SubParsersAction) -> None:
    """``curator``, ``demo`` and ``privacy audit``."""
    from frontierbo.po.service.cli import add_commands as curator_commands

    curator_commands(top)
    demo = top.add_parser("demo", help="small synthetic PO-GP-UCB experiment: table + plot")
    demo.add_argument(
        "--out", type=Path, default=Path("frontierbo-demo"), help="output directory (%(default)s)"
    )
    demo.add_argument("--runs", type=positive_int, default=20, help="runs per configuration (20)")
    demo.add_argument("--jobs", type=jobs, default=1, help="parallel worker processes (1)")
    demo.add_argument("--seed", type=int, default=0, help="base seed of every run (0)")
    demo.set_defaults(
        handler=lambda a: load("frontierbo.po.demo:demo")(
            a.out, runs=a.runs, n_jobs=a.jobs, seed=a.seed
        )
    )

    privacy = top.add_parser("privacy", help="privacy tools")
    tools = privacy.add_subparsers(dest="privacy_command", required=True, metavar="TOOL")
    audit = tools.add_parser(
        "audit", help="attack the published PO-GP-UCB release: reconstruction + distinguisher"
    )
    audit.add_argument("dataset", choices=DATASETS)
    for flag, kind, text in (
        ("--epsilon", float, "privacy budget epsilon"),
        ("--delta", float, "privacy parameter delta"),
        ("--r", int, "projection dimension"),
    ):
        audit.add_argument(flag, type=kind, default=None, help=f"{text} (default: the paper's)")
    audit.add_argument("--k", type=int, default=None, help="known rows (default d + 1)")
    audit.add_argument("--known-indices", type=int, nargs="+", default=None)
    audit.add_argument("--trials", type=int, default=200)
    audit.add_argument("--seed", type=int, default=0, help="seed of the attack's draws (0)")
    options = ("epsilon", "delta", "r", "k", "trials", "seed", "known_indices")
    audit.set_defaults(
        handler=lambda a: load("frontierbo.po.audit:audit_command")(
            a.dataset, **{name: getattr(a, name) for name in options}
        )
    )


SYSTEM = System(
    name=NAME,
    summary="private outsourced BO (curator release + GP-UCB modeler)",
    commands=(GP_UCB, PO_GP_UCB),
    reproduction=Reproduction(
        help="Kharkovskii, Dai & Low (ICML 2020): Fig. 2a-c, Fig. 3, Tables 1-12",
        description="Reproduce PO-GP-UCB's figures and tables (resumable).",
        quick=f"{QUICK_RUNS} runs per configuration",
        runs=f"runs per configuration ({FULL_RUNS})",
        datasets=DATASETS,
        reproduce="frontierbo.po.report:reproduce",
        quick_args=("--quick", "--runs", "1", "--datasets", "synthetic"),
        params=(
            Param(
                "synthetic_geometry", str, DEFAULT_GEOMETRY,
                "authors: the authors' code's grid and length-scale, a new GP sample per run; "
                "table1: the earlier grid on [-4, 4]^2 with l = 1.25 and one shared sample, the "
                "closest fit to Table 1's PO cells (see docs/po-gp-ucb.md)",
                choices=tuple(SYNTHETIC_GEOMETRIES),
            ),
        ),
    ),
    samplers={NAME: "frontierbo.po.sampler:POGPUCBSampler"},
    add_commands=add_commands,
)  # fmt: skip
