"""Quantum BO's commands: ``run quantum-bo`` (rows of a CSV are arms) and ``reproduce quantum-bo``.

The oracle's accuracy is chosen by the algorithm each stage (it is not a privacy budget and has no
flag); ``--failure-probability`` is the failure probability of each stage's estimate (the papers'
delta; ``--delta`` is only the privacy delta, :mod:`frontierbo.flags`). ``--queries`` is the query
budget T: oracle queries in all (a stage spends many), not rounds.
"""

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
from frontierbo.quantum.experiment import MAIN_SETTINGS, QUICK_RUNS, QUICK_T

NAME = "quantum-bo"
ALGORITHMS = ("q-gp-ucb", "gp-ucb", "q-linucb", "linucb")


def add_run_commands(run: argparse._SubParsersAction) -> None:
    parser = run.add_parser(
        NAME,
        help="Q-GP-UCB, Q-LinUCB and classical baselines on an arm table: rows are arms",
        description="Quantum BO on a CSV file whose rows are arms: reward column p (Bernoulli) "
        "or mean and sigma (Gaussian); the other columns are features "
        "(see frontierbo.quantum.userdata).",
    )
    parser.add_argument("--data", required=True, help="CSV file with a header row")
    parser.add_argument(
        "--queries",
        type=int,
        required=True,
        metavar="T",
        help="query budget T: oracle queries in all, the initial arm's included (a stage "
        "spends many)",
    )
    note = "the query budget T, oracle queries in all, not rounds"
    add_renamed(parser, "-T", "--queries", note)
    add_renamed(parser, "--iterations", "--queries", note)
    parser.add_argument("--seed", type=int, default=0, help="seed of every random choice (0)")
    parser.add_argument(
        "--algorithm", choices=ALGORITHMS, default="q-gp-ucb", help="the algorithm (q-gp-ucb)"
    )
    parser.add_argument(
        "--features", nargs="+", default=None, help="feature columns (default: all others)"
    )
    parser.add_argument(
        "--lengthscale",
        type=float,
        default=None,
        help="SE length-scale on the min-max normalised features (0.2; GP methods only)",
    )
    width = parser.add_mutually_exclusive_group()
    width.add_argument(
        "--width",
        default=None,
        help="UCB width (multiplies sigma): 'log', 'theory' or a number "
        "(default: log for quantum methods, sqrt(2) for classical ones)",
    )
    add_renamed(parser, "--beta", "--width", "the UCB width, a multiplier of sigma")
    parser.add_argument(
        "--weighting",
        choices=("paper", "reference"),
        default="paper",
        help="quantum methods: eq. 3 (paper, default) or the authors' code (reference)",
    )
    parser.add_argument(
        "--encoding",
        choices=("exact", "reference"),
        default="exact",
        help="quantum methods: amplitude encoding of the rewards (exact)",
    )
    parser.add_argument(
        "--backend",
        choices=("numpy", "statevector", "aer"),
        default="numpy",
        help="quantum methods: NumPy IQAE simulator (default) or Qiskit circuits "
        "(statevector, aer; needs frontierbo[quantum])",
    )
    parser.add_argument(
        "--failure-probability",
        type=float,
        default=0.05,
        metavar="DELTA",
        help="failure probability delta of each stage's estimate, also the confidence of the "
        "'theory' width (0.05; not a privacy parameter)",
    )
    add_renamed(parser, "--delta", "--failure-probability", "--delta is only the privacy delta")
    parser.add_argument("--out", type=Path, default=None, help="directory for result.json")
    parser.set_defaults(handler=_run)


def _run(args) -> str:
    from frontierbo.quantum.userdata import format_quantum_result, run_quantum_on_csv

    width = args.width
    if args.lengthscale is not None and args.algorithm in ("q-linucb", "linucb"):
        raise ValueError(
            f"--lengthscale applies to the GP methods q-gp-ucb and gp-ucb only; {args.algorithm} "
            "uses the linear kernel on the normalised features"
        )
    result = run_quantum_on_csv(
        args.data,
        args.queries,
        args.seed,
        algorithm=args.algorithm,
        features=args.features,
        lengthscale=0.2 if args.lengthscale is None else args.lengthscale,
        width=width,
        weighting=args.weighting,
        encoding=args.encoding,
        backend=args.backend,
        delta=args.failure_probability,
        out=args.out,
    )
    return with_written_note(format_quantum_result(result), args.out)


def add_reproduce_command(reproduce: argparse._SubParsersAction) -> None:
    parser = reproduce.add_parser(
        NAME,
        help="Dai et al. (NeurIPS 2023): synthetic and AutoML regret curves, T = 3e4 shape test",
        description="Reproduce the quantum BO experiments (resumable).",
    )
    quick_t = " / ".join(str(t) for t in QUICK_T.values())
    add_sweep_arguments(
        parser,
        quick=f"T = {quick_t} (synthetic / AutoML) and {QUICK_RUNS} runs",
        runs="runs per configuration (10 synthetic / 5 AutoML)",
        datasets=MAIN_SETTINGS,
    )
    parser.add_argument(
        "--source",
        choices=("reference", "generated"),
        default=None,
        help="the authors' synthetic function and RFF draws (quantum/synth_function.json under "
        "the data root, validation use) or the project's own seeded ones; default: the "
        "authors' when the file is found, else the project's (the report says which)",
    )
    parser.add_argument(
        "--noisy",
        action="store_true",
        help="also run Q-GP-UCB on noisy Qiskit-Aer circuits (synthetic, 3 runs; about a "
        "minute per run; extra [quantum])",
    )
    parser.set_defaults(handler=_reproduce)


def _reproduce(args) -> str:
    from frontierbo.quantum.report import reproduce

    return reproduce_command(args, NAME, reproduce, noisy=args.noisy, source=args.source)


SYSTEM = System(
    name=NAME,
    summary="quantum BO with an amplitude-estimation oracle (Q-GP-UCB, Q-LinUCB)",
    add_run_commands=add_run_commands,
    add_reproduce_command=add_reproduce_command,
    quick_reproduce=("--quick", "--runs", "1", "--datasets", "synthetic-bernoulli"),
)
