"""frontierbo: Bayesian optimisation where classic BO breaks.

A thin dispatcher: every command belongs to a system registered in :mod:`frontierbo.registry`
(or to studies, :mod:`frontierbo.study.cli`), which adds its own sub-parsers (so ``--help`` shows only the options that apply and argparse
rejects another system's flags by itself). Every bad input ends in one line
``frontierbo: error: <message naming the parameter>`` and exit status 2; nothing is written
before the inputs are validated.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

from frontierbo import __version__
from frontierbo.dashboard.cli import add_commands as dashboard_commands
from frontierbo.data_cli import add_commands as data_commands
from frontierbo.flags import NEGATIVE_NUMBER
from frontierbo.study.cli import add_commands as study_commands

#: Exceptions a handler raises for bad input or a missing extra (one line, exit status 2).
USER_ERRORS = (ValueError, TypeError, FileNotFoundError, RuntimeError, ImportError)


class UsageError(Exception):
    """A command-line parsing error (argparse's ``error``), printed like a handler's error."""


class _Parser(argparse.ArgumentParser):
    """Raises instead of exiting; no abbreviated flags (``--beta`` must not mean ``--beta-scale``)."""

    def __init__(self, *args, **kwargs):
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = NEGATIVE_NUMBER  # -1e3 is a value of every command
        self.set_defaults(command_prog=self.prog)  # the innermost command's prog wins

    def error(self, message: str):
        raise UsageError(f"{self.prog}: {message}")


#: Commands that belong to no system: a parser for one of them skips the systems' (their
#: declarations import each system's experiments, a second of a CLI ask's start-up).
STUDY_COMMANDS = frozenset({"ask", "tell", "study", "dashboard", "data"})


def build_parser(with_systems: bool = True) -> argparse.ArgumentParser:
    if with_systems:  # imported here: a study command needs no system
        from frontierbo.registry import systems
        from frontierbo.systems.commands import add_system
    registered = systems() if with_systems else []
    listing = "; ".join(f"{s.name}: {s.summary}" for s in registered)
    parser = _Parser(
        prog="frontierbo",
        description=f"{__doc__.splitlines()[0]} Systems: {listing}.",
    )
    parser.add_argument("--version", action="version", version=f"frontierbo {__version__}")
    top = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    if with_systems:
        run = top.add_parser("run", help="optimise on your own CSV file").add_subparsers(
            dest="run_command", required=True, metavar="ALGORITHM"
        )
        reproduce = top.add_parser(
            "reproduce", help="reproduce a paper's figures and tables"
        ).add_subparsers(dest="paper", required=True, metavar="PAPER")
        for system in registered:
            add_system(system, run, reproduce, top)
    study_commands(top)
    dashboard_commands(top)
    data_commands(top)
    return parser


def _one_line_warning(message, category, filename, lineno, line=None) -> str:
    return f"frontierbo: warning: {message}\n"


def main(argv: list[str] | None = None) -> int:
    warnings.formatwarning = _one_line_warning
    if (sys.argv[1:] if argv is None else argv) == ["--version"]:  # without building every parser
        print(f"frontierbo {__version__}")
        return 0
    try:
        words = sys.argv[1:] if argv is None else argv
        light = bool(words) and words[0] in STUDY_COMMANDS
        args, unknown = build_parser(with_systems=not light).parse_known_args(argv)
        if unknown:
            raise UsageError(
                f"{args.command_prog}: unrecognized arguments: {' '.join(unknown)} "
                f"(see {args.command_prog} --help)"
            )
        text = args.handler(args)
    except (UsageError, *USER_ERRORS) as exc:
        print(f"frontierbo: error: {exc}", file=sys.stderr)
        return 2
    if text:
        try:
            print(text, flush=True)
        except BrokenPipeError:
            # the reader stopped early (`frontierbo ... | head`): not an error of ours; point
            # stdout at devnull so the interpreter's final flush does not raise again
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
