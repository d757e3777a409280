"""LDP BO's commands: ``run ldp-bo`` (columns of a CSV are arms) and ``reproduce ldp-bo``."""

from __future__ import annotations

import argparse
from pathlib import Path

from frontierbo.experiments.system import (
    System,
    add_sweep_arguments,
    reproduce_command,
    with_written_note,
)
from frontierbo.flags import add_renamed
from frontierbo.ldp.experiment import (
    BETA_SCALE,
    DATASETS,
    DELTA,
    FULL_T,
    FULL_TRIALS,
    QUICK_T,
    QUICK_TRIALS,
)

NAME = "ldp-bo"
ALGORITHMS = ("ata", "tgp", "moma")


def add_run_commands(run: argparse._SubParsersAction) -> None:
    parser = run.add_parser(
        NAME,
        help="ATA-, TGP- or MoMA-GP-UCB (eps-LDP or not) on a reward table: columns are arms",
        description="Heavy-tailed / locally private BO on a CSV file whose columns are arms and "
        "whose rows are reward observations (see frontierbo.ldp.userdata).",
    )
    parser.add_argument("--data", required=True, help="CSV file with a header row")
    parser.add_argument(
        "--algorithm",
        choices=ALGORITHMS,
        required=True,
        help="the algorithm: ATA-, TGP- or MoMA-GP-UCB",
    )
    parser.add_argument(
        "--iterations", "-T", type=int, required=True, help="rounds T (one arm played per round)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of every random choice (0)")
    parser.add_argument(
        "--epsilon",
        type=float,
        default=None,
        help="local-DP privacy budget of each reward (CTL randomiser); omit for the non-private "
        "version",
    )
    parser.add_argument(
        "--failure-probability",
        type=float,
        default=DELTA,
        metavar="DELTA",
        help="failure probability delta of the confidence bounds: the UCB width grows with "
        "ln(1/delta) (%(default)s; not a privacy parameter)",
    )
    add_renamed(parser, "--delta", "--failure-probability", "--delta is only the privacy delta")
    parser.add_argument(
        "--beta-scale",
        type=float,
        default=BETA_SCALE,
        help="common multiplier of the confidence width (%(default)s)",
    )
    parser.add_argument(
        "--exclude", nargs="+", default=None, help="columns that are not arms (e.g. Date)"
    )
    parser.add_argument("--out", type=Path, default=None, help="directory for result.json")
    parser.set_defaults(handler=_run)


def _run(args) -> str:
    from frontierbo.ldp.userdata import format_ldp_result, run_ldp_on_csv

    result = run_ldp_on_csv(
        args.data,
        args.algorithm,
        args.iterations,
        args.seed,
        epsilon=args.epsilon,
        beta_scale=args.beta_scale,
        delta=args.failure_probability,
        exclude=args.exclude,
        out=args.out,
    )
    return with_written_note(format_ldp_result(result), args.out)


def add_reproduce_command(reproduce: argparse._SubParsersAction) -> None:
    parser = reproduce.add_parser(
        NAME,
        help="Zhou & Tan (AAAI 2021): private, heavy-tailed and bounded settings (E1-E3)",
        description="Reproduce the LDP / heavy-tailed BO experiments (resumable).",
    )
    add_sweep_arguments(
        parser,
        quick=f"T = {QUICK_T} and {QUICK_TRIALS} trials (full: T = {FULL_T})",
        runs=f"trials per configuration ({FULL_TRIALS})",
        datasets=DATASETS,
    )
    parser.add_argument(
        "--beta-scale",
        type=float,
        default=BETA_SCALE,
        help="the common confidence-width multiplier of every algorithm (%(default)s)",
    )
    parser.set_defaults(handler=_reproduce)


def _reproduce(args) -> str:
    from frontierbo.ldp.report import reproduce

    return reproduce_command(args, NAME, reproduce, beta_scale=args.beta_scale)


SYSTEM = System(
    name=NAME,
    summary="local-DP and heavy-tailed BO (CTL randomiser; ATA-, TGP-, MoMA-GP-UCB)",
    add_run_commands=add_run_commands,
    add_reproduce_command=add_reproduce_command,
    quick_reproduce=("--quick", "--runs", "1", "--datasets", "synthetic-se"),
)
