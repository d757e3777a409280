"""The command line of a declared system: ``frontierbo run <command>``, ``frontierbo reproduce
<system>`` and their ``--help``, built from :mod:`frontierbo.systems.declare`.

Each command has its own sub-parser, so ``--help`` lists only its own options and argparse
rejects another system's flags by itself. A handler takes the parsed namespace and returns the
text to print; it raises ``ValueError`` / ``TypeError`` / ``FileNotFoundError`` /
``RuntimeError`` with a message naming the parameter, which the dispatcher prints as one line
(exit status 2).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from frontierbo.experiments.schedulers import check_scheduler
from frontierbo.io import RESULT_FILENAME
from frontierbo.systems.declare import Command, Reproduction, System, load

__all__ = [
    "SCHEDULERS",
    "add_command",
    "add_reproduction",
    "add_sweep_arguments",
    "add_system",
    "default_out",
    "jobs",
    "positive_int",
    "reproduce_text",
    "scheduler_from_args",
    "written_note",
]

#: ``--scheduler`` choices; a running cluster is named with ``--dask tcp://host:port`` instead.
SCHEDULERS = ("local", "dask")


def add_system(
    system: System,
    run: argparse._SubParsersAction,
    reproduce: argparse._SubParsersAction,
    top: argparse._SubParsersAction,
) -> None:
    """Every command ``system`` declares, under ``run``, ``reproduce`` and the top level."""
    for command in system.commands:
        add_command(run, command)
        if command.top_level:
            add_command(top, command, name=command.top_level)
    add_reproduction(reproduce, system.name, system.reproduction)
    if system.add_commands is not None:
        system.add_commands(top)


def add_command(
    subparsers: argparse._SubParsersAction, command: Command, name: str | None = None
) -> argparse.ArgumentParser:
    """``command``'s sub-parser (its declared options) with the handler that runs it."""
    parser = subparsers.add_parser(
        name or command.name, help=command.help, description=command.description
    )
    for param in command.params:
        if param.cli:
            param.add_to(parser)
    parser.set_defaults(handler=lambda args: run_command(command, args))
    return parser


def run_command(command: Command, args: argparse.Namespace) -> str:
    """Run ``command`` on the parsed options; the text it prints."""
    values = {p.name: getattr(args, p.dest) for p in command.params if p.cli}
    result = load(command.run)(**command.fixed, **values)
    return written_note(load(command.format)(result), values.get("out"), command.written)


def written_note(text: str, out, files: tuple[str, ...] = (RESULT_FILENAME,)) -> str:
    """``text`` plus one line per file written into ``out`` (when ``--out`` was given)."""
    if out is None:
        return text
    return "\n".join([text, *(f"written {json.dumps(str(Path(out) / f))}" for f in files)])


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value}")
    return value


def jobs(text: str) -> int:
    """argparse type: worker processes, an integer >= 1 or -1 for all cores."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1 or -1, got {text!r}") from None
    if value == 0 or value < -1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1 or -1 (all cores), got {value}")
    return value


def add_reproduction(
    reproduce: argparse._SubParsersAction, name: str, declared: Reproduction
) -> argparse.ArgumentParser:
    """``frontierbo reproduce <name>``: the shared sweep options and the declared ones."""
    parser = reproduce.add_parser(name, help=declared.help, description=declared.description)
    add_sweep_arguments(
        parser, quick=declared.quick, runs=declared.runs, datasets=declared.datasets
    )
    for param in declared.params:
        param.add_to(parser)

    def handle(args: argparse.Namespace) -> str:
        out = args.out or default_out(name, args.quick)
        options = {p.name: getattr(args, p.dest) for p in declared.params}
        result = load(declared.reproduce)(
            out,
            datasets=args.datasets,
            quick=args.quick,
            runs=args.runs,
            n_jobs=args.jobs,
            seed=args.seed,
            scheduler=scheduler_from_args(args),
            **options,
        )
        return reproduce_text(out, result)

    parser.set_defaults(handler=handle)
    return parser


def add_sweep_arguments(
    parser: argparse.ArgumentParser, *, quick: str, runs: str, datasets: tuple[str, ...]
) -> None:
    """The options every ``frontierbo reproduce <system>`` shares.

    ``quick`` and ``runs`` are the system's own help texts (what ``--quick`` shrinks, the default
    number of runs); ``datasets`` are the allowed values of ``--datasets``.
    """
    parser.add_argument("--quick", action="store_true", help=f"quick, smaller run: {quick}")
    parser.add_argument("--runs", type=positive_int, default=None, help=runs)
    parser.add_argument(
        "--jobs", type=jobs, default=1, help="parallel worker processes (-1: all cores)"
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="output directory (default results/<system>)"
    )
    parser.add_argument("--seed", type=int, default=0, help="base seed of every run (0)")
    parser.add_argument(
        "--datasets",
        nargs="+",
        default=None,
        metavar="NAME",
        help=f"subset of {', '.join(datasets)} (default: all)",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--scheduler",
        choices=SCHEDULERS,
        default="local",
        help="local: joblib processes on this machine; dask: a Dask LocalCluster with --jobs "
        "workers (extra [dask])",
    )
    where.add_argument(
        "--dask",
        metavar="ADDRESS",
        default=None,
        help="run the sweep on a running Dask cluster, e.g. tcp://host:8786 (extra [dask]; "
        "see docs/dask.md)",
    )


def scheduler_from_args(args: argparse.Namespace) -> str:
    """The ``scheduler`` argument of ``run_sweep`` for ``--scheduler`` / ``--dask``, checked
    before any work (a malformed address fails here, not after the problems were built)."""
    scheduler = args.dask if args.dask is not None else args.scheduler
    try:
        check_scheduler(scheduler)
    except ValueError as exc:
        flag = "--dask" if args.dask is not None else "--scheduler"
        raise ValueError(f"{flag} {scheduler!r}: {exc}") from None
    return scheduler


def default_out(name: str, quick: bool) -> Path:
    """``results/<name>`` (``results/<name>-quick`` for a quick run)."""
    return Path(f"results/{name}{'-quick' if quick else ''}")


def reproduce_text(out: Path, result: dict) -> str:
    """What ``frontierbo reproduce`` prints: the report, then where it was written and how long it took."""
    report = (Path(out) / "report.md").read_text(encoding="utf-8")
    return report + f"\nwritten to {out}/ in {result['seconds']} s"
