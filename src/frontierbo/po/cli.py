"""PO-GP-UCB's commands: ``run gp-ucb``, ``run po-gp-ucb``, ``reproduce po-gp-ucb``, ``demo`` and
``privacy audit``."""

from __future__ import annotations

import argparse
from pathlib import Path

from frontierbo.experiments.system import (
    System,
    add_sweep_arguments,
    jobs,
    positive_int,
    reproduce_command,
    with_written_note,
)
from frontierbo.po.experiment import DATASETS, FULL_RUNS, QUICK_RUNS
from frontierbo.po.problems.synthetic import DEFAULT_GEOMETRY, SYNTHETIC_GEOMETRIES

NAME = "po-gp-ucb"


def _add_csv_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of both CSV commands (rows are candidates, one column is the objective)."""
    parser.add_argument("--data", required=True, help="CSV file with a header row")
    parser.add_argument("--target", required=True, help="column to maximise (see --minimize)")
    parser.add_argument(
        "--features", nargs="+", default=None, help="input columns (default: all others)"
    )
    parser.add_argument("--minimize", action="store_true", help="minimise the target instead")
    parser.add_argument(
        "--iterations",
        "-T",
        type=int,
        required=True,
        help="BO rounds T, one row queried per round (the --n-init rows not counted)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of every random choice (0)")
    parser.add_argument("--n-init", type=int, default=1, help="random initial rows (1)")
    parser.add_argument("--out", type=Path, default=None, help="directory for result.json")
    parser.add_argument(
        "--prefit-on-table",
        action="store_true",
        help="before the first query, fit the GP hyperparameters by maximum likelihood on up "
        "to 2000 rows of the target column, as the papers do (the optimiser then knows those "
        "values); default: learn them from the queried rows only, like a study",
    )


def add_run_commands(run: argparse._SubParsersAction) -> None:
    gp = run.add_parser(
        "gp-ucb",
        help="GP-UCB over the rows of your CSV (the target column is the objective)",
        description="GP-UCB over the rows of a CSV file: rows are the candidates, the target "
        "column plays the expensive objective (see frontierbo.po.userdata).",
    )
    _add_csv_arguments(gp)
    gp.set_defaults(handler=_run_csv, algorithm="gp-ucb")

    po = run.add_parser(
        NAME,
        help="PO-GP-UCB: GP-UCB on a privacy-preserving release of your CSV's inputs",
        description="PO-GP-UCB on a CSV file: the curator releases a transform of the inputs, "
        "the modeler runs GP-UCB on it and asks for outputs by row index.",
    )
    _add_csv_arguments(po)
    po.add_argument("--epsilon", type=float, required=True, help="privacy budget epsilon > 0")
    po.add_argument("--delta", type=float, required=True, help="privacy parameter delta in (0, 1)")
    po.add_argument("--r", type=int, default=None, help="projection dimension (random_projection)")
    po.add_argument(
        "--mechanism",
        choices=("random_projection", "gaussian"),
        default="random_projection",
        help="the published release (NOT DP, the default) or the (eps, delta)-DP Gaussian one",
    )
    po.set_defaults(handler=_run_csv, algorithm=NAME)


def _run_csv(args) -> str:
    from frontierbo.po.userdata import format_result, run_on_csv

    private = args.algorithm == NAME
    result = run_on_csv(
        args.data,
        args.target,
        args.algorithm,
        args.iterations,
        args.seed,
        features=args.features,
        minimize=args.minimize,
        epsilon=args.epsilon if private else None,
        delta=args.delta if private else None,
        r=args.r if private else None,
        n_init=args.n_init,
        out=args.out,
        mechanism=args.mechanism if private else "random_projection",
        prefit_on_table=args.prefit_on_table,
    )
    return with_written_note(format_result(result), args.out)


def add_reproduce_command(reproduce: argparse._SubParsersAction) -> None:
    parser = reproduce.add_parser(
        NAME,
        help="Kharkovskii, Dai & Low (ICML 2020): Fig. 2a-c, Fig. 3, Tables 1-12",
        description="Reproduce PO-GP-UCB's figures and tables (resumable).",
    )
    add_sweep_arguments(
        parser,
        quick=f"{QUICK_RUNS} runs per configuration",
        runs=f"runs per configuration ({FULL_RUNS})",
        datasets=DATASETS,
    )
    parser.add_argument(
        "--synthetic-geometry",
        choices=SYNTHETIC_GEOMETRIES,
        default=DEFAULT_GEOMETRY,
        help="authors: the authors' code's grid and length-scale, a new GP sample per run "
        "(default); table1: the earlier grid on [-4, 4]^2 with l = 1.25 and one shared sample, "
        "the closest fit to Table 1's PO cells (see docs/po-gp-ucb.md)",
    )
    parser.set_defaults(handler=_reproduce)


def _reproduce(args) -> str:
    from frontierbo.po.report import reproduce

    return reproduce_command(args, NAME, reproduce, synthetic_geometry=args.synthetic_geometry)


def add_commands(top: argparse._SubParsersAction) -> None:
    from frontierbo.po.service.cli import add_commands as service_commands

    service_commands(top)
    demo = top.add_parser("demo", help="small synthetic PO-GP-UCB experiment: table + plot")
    demo.add_argument(
        "--out", type=Path, default=Path("frontierbo-demo"), help="output directory (%(default)s)"
    )
    demo.add_argument("--runs", type=positive_int, default=20, help="runs per configuration (20)")
    demo.add_argument("--jobs", type=jobs, default=1, help="parallel worker processes (1)")
    demo.add_argument("--seed", type=int, default=0, help="base seed of every run (0)")
    demo.set_defaults(handler=_demo)

    privacy = top.add_parser("privacy", help="privacy tools")
    tools = privacy.add_subparsers(dest="privacy_command", required=True, metavar="TOOL")
    audit = tools.add_parser(
        "audit", help="attack the published PO-GP-UCB release: reconstruction + distinguisher"
    )
    audit.add_argument("dataset", choices=DATASETS)
    audit.add_argument(
        "--epsilon", type=float, default=None, help="privacy budget epsilon (default: the paper's)"
    )
    audit.add_argument(
        "--delta", type=float, default=None, help="privacy parameter delta (default: the paper's)"
    )
    audit.add_argument(
        "--r", type=int, default=None, help="projection dimension (default: the paper's)"
    )
    audit.add_argument("--k", type=int, default=None, help="known rows (default d + 1)")
    audit.add_argument("--known-indices", type=int, nargs="+", default=None)
    audit.add_argument("--trials", type=int, default=200)
    audit.add_argument("--seed", type=int, default=0, help="seed of the attack's draws (0)")
    audit.set_defaults(handler=_audit)


def _demo(args) -> str:
    from frontierbo.po.demo import demo

    return demo(args.out, runs=args.runs, n_jobs=args.jobs, seed=args.seed)


def _audit(args) -> str:
    from frontierbo.po.audit import audit_command

    return audit_command(
        args.dataset,
        epsilon=args.epsilon,
        delta=args.delta,
        r=args.r,
        k=args.k,
        trials=args.trials,
        seed=args.seed,
        known_indices=args.known_indices,
    )


SYSTEM = System(
    name=NAME,
    summary="private outsourced BO (curator release + GP-UCB modeler)",
    add_run_commands=add_run_commands,
    add_reproduce_command=add_reproduce_command,
    add_commands=add_commands,
    quick_reproduce=("--quick", "--runs", "1", "--datasets", "synthetic"),
)
