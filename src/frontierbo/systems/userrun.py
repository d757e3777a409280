"""The one run-on-your-data path: a declared command's run function, validated at the boundary.

:func:`implements` wraps a system's run function (``run_ldp_on_csv``, ``run_on_csv``, ...): a
Python call and ``frontierbo run <command>`` both go through it, so both

1. bind the arguments to the function's signature and check each declared parameter
   (:meth:`~frontierbo.systems.declare.Param.validate`: one error naming the keyword and the flag)
   and each :class:`~frontierbo.systems.declare.Applies` rule, and ``out`` (writable), before any
   work and before any file is created;
2. run the function on the checked values (it reads its table, runs its loop and returns a
   JSON-ready dict; ``seconds`` is its wall time);
3. write ``out/result.json`` atomically when ``out`` is given: strict JSON, without
   ``seconds`` (wall time is not a result), so that the same inputs and seed give the same bytes.

Shared pieces of the run functions live here too: the progress bar, the regret trace points.
"""

from __future__ import annotations

import functools
import inspect
import sys

import numpy as np
from tqdm import tqdm

from frontierbo.io import RESULT_FILENAME, check_out_dir, finite_or_null, write_json_atomic
from frontierbo.systems.declare import Command

__all__ = ["PROGRESS_DELAY", "Counted", "implements", "progress_bar", "trace_points", "validate"]

#: Seconds before an automatic progress bar appears (a quick run stays silent).
PROGRESS_DELAY = 2.0


def validate(command: Command, values: dict) -> dict:
    """``values`` (keyword -> value) with every declared parameter checked; ``out`` checked as
    a writable directory. Raises one ValueError / TypeError naming the parameter."""
    checked = dict(values)
    for param in command.params:
        if param.name in checked:
            checked[param.name] = param.validate(checked[param.name])
    for param in command.params:
        rule = param.applies
        if rule is None or checked.get(param.name) in (None, False):
            continue
        chosen = checked.get(rule.selector)
        if chosen not in rule.values:
            *others, last = rule.values
            allowed = f"{', '.join(others)} and {last}" if others else last
            why = f": {rule.why}" if rule.why else ""
            raise ValueError(f"{param.option} applies to {allowed} only, not {chosen}{why}")
    if "out" in checked:
        checked["out"] = check_out_dir(checked["out"])
    return checked


def implements(command: Command):
    """Decorate ``command``'s run function: validation first, ``result.json`` last (module doc)."""

    def decorate(function):
        signature = inspect.signature(function)

        @functools.wraps(function)
        def run(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            values = validate(command, bound.arguments)
            result = function(**values)
            out = values.get("out")
            if out is not None:
                stored = {key: value for key, value in result.items() if key != "seconds"}
                write_json_atomic(out / RESULT_FILENAME, finite_or_null(stored), strict=True)
            return result

        run.command = command
        return run

    return decorate


def progress_bar(progress: bool | None, total: int, desc: str, at_once: bool = False) -> tqdm:
    """A progress bar on stderr that vanishes when done: automatic (None: on a terminal, after
    :data:`PROGRESS_DELAY` seconds unless ``at_once``), forced (True) or off (False)."""
    disable = None if progress is None else not progress  # None: tqdm checks for a terminal
    delay = PROGRESS_DELAY if progress is None and not at_once else 0.0
    return tqdm(total=total, desc=desc, leave=False, disable=disable, delay=delay, file=sys.stderr)


class Counted:
    """An oracle (``query(index) -> value``) that ticks a progress bar at every query."""

    def __init__(self, oracle, bar: tqdm):
        self._oracle, self._bar = oracle, bar

    def query(self, index: int) -> float:
        value = self._oracle.query(index)
        self._bar.update(1)
        return value


def trace_points(T: int, points: int = 10) -> np.ndarray:
    """About ``points`` rounds in [1, T], evenly spaced and ending at T (the printed trace)."""
    t = np.unique(np.round(np.linspace(T / points, T, points)).astype(int))
    return t.clip(1, T)
