"""What a system declares, once: its parameters, its ``run`` commands, its reproduction, its study
samplers.

A system package (PO-GP-UCB, LDP BO, quantum BO, ...) exposes one :class:`System` value in its
``system.py``, listed in :mod:`frontierbo.registry`. Everything else follows from it:
:mod:`frontierbo.systems.commands` builds ``frontierbo run <command>`` and ``frontierbo reproduce
<system>`` with their ``--help``; :func:`frontierbo.systems.userrun.implements` turns the
command's run function into the one run-on-your-data path (validation at the boundary, the
atomic ``result.json``); :mod:`frontierbo.systems.checks` holds the conformance checks every
command and sampler passes.

A :class:`Param` is one typed parameter: its Python keyword (``name``), its flag, its help, its
default and its allowed range. The same declaration checks a Python call and a command line, so
both refuse a bad value with the same one-line message naming the keyword and the flag.
Functions are named by ``"module:attribute"`` strings, imported only when a command runs, so that
``frontierbo --help`` imports no algorithm (nor torch).
"""

from __future__ import annotations

import argparse
import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from frontierbo._validation import check_int, check_real

__all__ = [
    "DATA",
    "OUT",
    "REQUIRED",
    "SEED",
    "Applies",
    "Command",
    "Param",
    "Reproduction",
    "System",
    "failure_probability",
    "load",
]


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


#: The default of a parameter that must be given.
REQUIRED: Any = _Required()

Registrar = Callable[[argparse._SubParsersAction], None]


def load(target: str):
    """The object a ``"module:attribute"`` string names (imported now)."""
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


@dataclass(frozen=True)
class Applies:
    """A parameter that applies to some values of another one (``selector``), e.g. ``--samples``
    to ``method in ("eps-macro-bo", "anytime")`` only. Giving it otherwise is an error."""

    selector: str
    values: tuple[str, ...]
    why: str = ""


@dataclass(frozen=True)
class Param:
    """One parameter of a command: Python keyword ``name``, type ``kind`` (int, float, str, bool,
    Path or list, a list of strings), ``default`` (:data:`REQUIRED` when it must be given; None:
    optional), help text, and the allowed values: ``low``/``high`` (closed unless ``*_open``) for
    numbers, ``choices`` for strings, or ``check(value, label) -> value`` for anything else."""

    name: str
    kind: type = float
    default: Any = None
    help: str = ""
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple = ()
    check: Callable | None = None
    flag: str | None = None
    short: str | None = None
    metavar: str | None = None
    #: old flags refused with a line naming this one: ``((old, note), ...)``
    renamed: tuple[tuple[str, str], ...] = ()
    applies: Applies | None = None
    #: False: a keyword of the Python call only (checked the same way), not a flag
    cli: bool = True

    def __post_init__(self):
        if self.kind not in (int, float, str, bool, Path, list):
            raise TypeError(
                f"Param {self.name!r}: kind must be int, float, str, bool, Path or list"
            )
        if self.kind is bool and self.default not in (False, True):
            raise ValueError(f"Param {self.name!r}: a bool flag needs a default of False or True")

    @property
    def option(self) -> str:
        return self.flag or "--" + self.name.replace("_", "-")

    @property
    def dest(self) -> str:
        """The argparse attribute (the flag's name, as argparse derives it)."""
        return self.option.lstrip("-").replace("-", "_")

    @property
    def label(self) -> str:
        """How messages name it: the keyword and the flag (the keyword alone if it has none)."""
        return f"{self.name} ({self.option})" if self.cli else self.name

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def add_to(self, parser: argparse.ArgumentParser) -> None:
        """Its argparse option (a bool is a ``store_true`` switch; a list takes one or more)."""
        from frontierbo.flags import add_renamed

        names = [self.option] + ([self.short] if self.short else [])
        help_text = self.help
        shown = not (self.default is None or self.required or self.kind is bool)
        if shown and "%(default)" not in help_text:
            help_text += " (%(default)s)"
        if self.kind is bool:
            parser.add_argument(*names, dest=self.dest, action="store_true", help=help_text)
        else:
            kwargs: dict[str, Any] = {
                "dest": self.dest,
                "help": help_text,
                "default": None if self.required else self.default,
                "required": self.required,
            }
            if self.kind in (int, float, Path):
                kwargs["type"] = self.kind
            if self.kind is list:
                kwargs["nargs"] = "+"
            if self.choices:
                kwargs["choices"] = self.choices
            if self.metavar:
                kwargs["metavar"] = self.metavar
            parser.add_argument(*names, **kwargs)
        for old, note in self.renamed:
            add_renamed(parser, old, self.option, note)

    def validate(self, value):
        """``value`` checked against the declaration (None passes for an optional parameter);
        a ValueError / TypeError names :attr:`label` and what is allowed."""
        if value is REQUIRED:
            raise TypeError(f"{self.label} is required")
        if value is None and self.default is None:
            return None
        if self.check is not None:
            return self.check(value, self.label)
        if self.kind is bool:
            if not isinstance(value, bool):
                raise TypeError(f"{self.label} must be True or False, got {value!r}")
            return value
        if self.kind is int:
            return check_int(value, self.label, low=self.low, high=self.high)
        if self.kind is float:
            return check_real(
                value,
                self.label,
                low=self.low,
                high=self.high,
                low_open=self.low_open or self.low is None,
                high_open=self.high_open or self.high is None,
            )
        if self.kind is list:
            names = [value] if isinstance(value, str) else value
            if not isinstance(names, list | tuple) or not all(isinstance(v, str) for v in names):
                raise TypeError(f"{self.label} must be a list of names, got {value!r}")
            return list(names)
        if self.kind is Path:
            if not isinstance(value, str | os.PathLike):
                raise TypeError(f"{self.label} must be a path, got {value!r}")
            return value
        if not isinstance(value, str):
            raise TypeError(f"{self.label} must be a string, got {value!r}")
        if self.choices and value not in self.choices:
            raise ValueError(f"{self.label} must be one of {list(self.choices)}, got {value!r}")
        return value


# -- the parameters several commands share: one keyword, one flag, one meaning (flags.FLAGS) --
DATA = Param("path", Path, REQUIRED, "CSV file with a header row", flag="--data")
SEED = Param("seed", int, 0, "seed of every random choice", low=0)
OUT = Param("out", Path, None, "directory for result.json")


def failure_probability(default: float, what: str) -> Param:
    """``--failure-probability`` (keyword ``delta``, the papers' name): the probability that
    ``what`` fails; ``--delta`` is refused, as it is only the privacy delta."""
    return Param(
        "delta",
        float,
        default,
        f"failure probability delta of {what} (not a privacy parameter)",
        low=0.0,
        high=1.0,
        low_open=True,
        high_open=True,
        flag="--failure-probability",
        metavar="DELTA",
        renamed=(("--delta", "--delta is only the privacy delta"),),
    )


@dataclass(frozen=True)
class Command:
    """``frontierbo run <name>``: ``params`` (every keyword of the run function the command line
    sets), the run function ``run`` and its text ``format`` (``"module:attribute"``), keyword
    arguments ``fixed`` for this command (two commands may share one function), the files a run
    with ``--out`` writes (``written``, named in the printed text) and ``top_level``: also
    reachable as ``frontierbo <name>``."""

    name: str
    help: str
    description: str
    params: tuple[Param, ...]
    run: str
    format: str
    fixed: dict = field(default_factory=dict)
    written: tuple[str, ...] = ("result.json",)
    top_level: str | None = None
    #: ``"module:function"``: ``example(directory) -> [kwargs, ...]``, small inputs (one per
    #: algorithm) on which the conformance checks run the command
    example: str | None = None

    def __post_init__(self):
        names = [p.name for p in self.params]
        if len(set(names)) != len(names):
            raise ValueError(f"command {self.name!r}: two parameters share a name")

    def param(self, name: str) -> Param:
        return next(p for p in self.params if p.name == name)


@dataclass(frozen=True)
class Reproduction:
    """``frontierbo reproduce <system>``: the shared sweep options (``--quick --runs --jobs --out
    --seed --datasets --scheduler/--dask``) with this system's help texts, its own ``params``,
    and the function ``reproduce(out, **shared, **params)`` that writes the report.
    ``quick_args`` make its smallest complete reproduction (run by the conformance test);
    ``requires``: the optional modules that one needs."""

    help: str
    description: str
    quick: str
    runs: str
    datasets: tuple[str, ...]
    reproduce: str
    quick_args: tuple[str, ...]
    params: tuple[Param, ...] = ()
    requires: tuple[str, ...] = ()


@dataclass(frozen=True)
class System:
    """One system: its name and summary (listed by ``frontierbo --help``), its ``run``
    commands, its reproduction, its study samplers (name -> ``"module:Class"``; published to
    studies through the ``frontierbo.samplers`` entry points, which must list exactly these)
    and ``add_commands`` for any other top-level command it owns (``demo``, ``curator``)."""

    name: str
    summary: str
    commands: tuple[Command, ...]
    reproduction: Reproduction
    samplers: dict = field(default_factory=dict)
    #: settings a sampler needs to be made (its required ones), for the conformance checks
    sampler_settings: dict = field(default_factory=dict)
    add_commands: Registrar | None = None

    def __post_init__(self):
        if not self.name or self.name != self.name.strip().lower():
            raise ValueError(f"System.name must be a lower-case command name, got {self.name!r}")
