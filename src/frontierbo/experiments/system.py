"""The contract every system package fulfils, and the command-line pieces they share.

A *system* (PO-GP-UCB, LDP BO, quantum BO, ...) is one package over the shared layers. It tells
the command line what it offers by exposing one :class:`System` value (conventionally
``frontierbo.<package>.cli.SYSTEM``), listed in :mod:`frontierbo.registry`:

* ``add_run_commands(run_subparsers)``: its ``frontierbo run <name>`` sub-parser(s), each with
  ``set_defaults(handler=...)``; a handler takes the parsed namespace and returns the text to
  print. Each command has its own sub-parser, so ``--help`` lists only its own options and
  argparse rejects another system's flags by itself.
* ``add_reproduce_command(reproduce_subparsers)``: its ``frontierbo reproduce <name>``
  sub-parser, built on :func:`add_sweep_arguments` so that every reproduction takes the same
  ``--quick --runs --jobs --out --seed --datasets --scheduler/--dask``.
* ``add_commands(top_level_subparsers)`` (optional): any other top-level command it owns
  (``demo``, ``privacy``).
* ``quick_reproduce``: the arguments after ``frontierbo reproduce <name>`` that make its
  smallest complete reproduction; the conformance test (``tests/test_systems.py``) runs it and
  checks the shared artefacts (``requires``: the optional modules it needs, e.g. torch).

Handlers raise ``ValueError`` / ``TypeError`` / ``FileNotFoundError`` / ``RuntimeError`` with a
message naming the parameter; the dispatcher prints it as one line and exits with status 2.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from frontierbo.experiments.schedulers import check_scheduler
from frontierbo.io import RESULT_FILENAME

__all__ = [
    "SCHEDULERS",
    "System",
    "add_sweep_arguments",
    "default_out",
    "jobs",
    "positive_int",
    "reproduce_command",
    "reproduce_text",
    "scheduler_from_args",
    "with_written_note",
]

Registrar = Callable[[argparse._SubParsersAction], None]

#: ``--scheduler`` choices; a running cluster is named with ``--dask tcp://host:port`` instead.
SCHEDULERS = ("local", "dask")


@dataclass(frozen=True)
class System:
    """What one system package registers with the command line (see the module docstring)."""

    name: str
    summary: str
    add_run_commands: Registrar
    add_reproduce_command: Registrar
    quick_reproduce: tuple[str, ...]
    add_commands: Registrar | None = None
    #: modules of an optional extra that the quick reproduction needs (the conformance test
    #: skips it without them, as the README's plain ``[test]`` install has none of them)
    requires: tuple[str, ...] = ()

    def __post_init__(self):
        if not self.name or self.name != self.name.strip().lower():
            raise ValueError(f"System.name must be a lower-case command name, got {self.name!r}")


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


def reproduce_command(args: argparse.Namespace, name: str, reproduce, **options) -> str:
    """Run a system's ``reproduce(out, **shared, **options)`` from the shared sweep options and
    return what ``frontierbo reproduce <name>`` prints."""
    out = args.out or default_out(name, args.quick)
    result = reproduce(
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


def with_written_note(text: str, out) -> str:
    """``text`` plus the line naming ``out/result.json`` when ``--out`` was given."""
    if out is None:
        return text
    return text + f"\nwritten {json.dumps(str(Path(out) / RESULT_FILENAME))}"


def reproduce_text(out: Path, result: dict) -> str:
    """What ``frontierbo reproduce`` prints: the report, then where it was written and how long it took."""
    report = (Path(out) / "report.md").read_text(encoding="utf-8")
    return report + f"\nwritten to {out}/ in {result['seconds']} s"
