"""Conformance checks every declared command and study sampler passes (scikit-learn's
``check_estimator`` idea). ``tests/test_systems.py`` runs them over every registered system; a new
system gets them by being declared.

Commands (on the inputs of the command's ``example``):

* :func:`check_signature`: the run function takes every declared parameter, with the declared
  default (the command line and the Python call agree), and nothing undeclared without a default;
* :func:`check_seeded`: the same seed writes the same ``result.json`` bytes;
* :func:`check_refuses_bad_values`: each declared range or choice refuses a value outside it with
  one error naming the flag, before any file is created.

Samplers (:func:`check_sampler`): an in-memory study and one resumed from its database after
every tell ask the same rows (seeded, resumable); rows are never asked twice unless the sampler
``repeats``; unknown settings are refused naming them.
"""

from __future__ import annotations

import inspect
import math
from pathlib import Path

import numpy as np

from frontierbo.systems.declare import REQUIRED, Command, Param, load

__all__ = ["bad_values", "check_refuses_bad_values", "check_sampler", "check_seeded",
           "check_signature"]  # fmt: skip


def _require(condition: bool, message: str) -> None:
    """A failed check (an explicit raise: ``python -O`` strips ``assert``)."""
    if not condition:
        raise AssertionError(message)


def check_signature(command: Command) -> None:
    function = inspect.unwrap(load(command.run))
    signature = inspect.signature(function)
    for param in command.params:
        _require(param.name in signature.parameters, f"{command.name}: no keyword {param.name!r}")
        default = signature.parameters[param.name].default
        declared = REQUIRED if param.required else param.default
        if declared is REQUIRED:
            _require(
                default is inspect.Parameter.empty, f"{command.name}: {param.name} has a default"
            )
        else:
            _require(
                default == declared,
                f"{command.name}: {param.name} defaults to {default!r} in Python, "
                f"{declared!r} on the command line",
            )
    declared = {p.name for p in command.params} | set(command.fixed)
    for name, p in signature.parameters.items():
        if p.default is inspect.Parameter.empty:
            _require(name in declared, f"{command.name}: required keyword {name!r} not declared")


def _run(command: Command, kwargs: dict, out=None):
    return load(command.run)(**command.fixed, **{**kwargs, "out": out})


def check_seeded(command: Command, kwargs: dict, directory: Path) -> dict:
    """Two runs with the same seed write identical ``result.json`` files; returns the result."""
    first = _run(command, kwargs, directory / "a")
    _run(command, kwargs, directory / "b")
    a, b = ((directory / d / "result.json").read_bytes() for d in "ab")
    _require(a == b, f"{command.name}: the same seed wrote two different result.json files")
    return first


def bad_values(param: Param) -> list:
    """Values just outside ``param``'s declared range or choices (none if it declares none)."""
    if param.choices:
        return ["no-such-choice"]
    bad = []
    for bound, is_open, step in ((param.low, param.low_open, -1), (param.high, param.high_open, 1)):
        if bound is None or not math.isfinite(bound):
            continue
        if param.kind is int:
            bad.append(int(bound) + step)
        elif param.kind is float:
            bad.append(float(bound) if is_open else float(bound) + step * max(1.0, abs(bound)))
    if param.kind is float:
        bad.append(float("nan"))
    return bad


def check_refuses_bad_values(command: Command, kwargs: dict, directory: Path) -> int:
    """Every bad value of every declared parameter is refused with one error naming its flag,
    and nothing is written; returns how many values were tried."""
    tried = 0
    for param in command.params:
        if param.name not in kwargs and param.required:
            continue
        for value in bad_values(param):
            out = directory / f"bad-{param.name}-{tried}"
            try:
                _run(command, {**kwargs, param.name: value}, out)
            except (ValueError, TypeError) as exc:
                message = str(exc)
                _require(param.label in message, f"{param.name}={value!r}: {message!r}")
                _require("\n" not in message, f"{param.name}={value!r}: not one line")
            else:
                raise AssertionError(f"{command.name}: {param.name}={value!r} was accepted")
            _require(not out.exists(), f"{command.name}: {out} written for a bad {param.name}")
            tried += 1
    return tried


def check_sampler(
    name: str, candidates: np.ndarray, objective, directory: Path, settings=None, trials: int = 6
):
    """``name``'s asks are seeded and resumable, and rows repeat only for a ``repeats`` sampler."""
    from frontierbo.study.create import create_study, load_study
    from frontierbo.study.samplers import make_sampler

    settings = dict(settings or {})
    sampler = make_sampler(name, settings)
    try:
        make_sampler(name, {**settings, "no_such_setting": 1})
    except ValueError as exc:
        _require("no_such_setting" in str(exc), f"sampler {name!r}: {exc}")
    else:
        raise AssertionError(f"sampler {name!r} accepted an unknown setting")

    def asks(resume: bool) -> list[int]:
        storage = directory / f"{name}-{'resumed' if resume else 'straight'}.db"
        study = create_study(candidates, storage=storage, algorithm=name, settings=settings, seed=7)
        rows = []
        for _ in range(trials):
            trial = study.ask()
            rows.append(trial.row)
            study.tell(trial.number, objective(trial.row, trial.request))
            if resume:
                study = load_study(storage=storage)
        return rows

    straight, resumed = asks(False), asks(True)
    _require(straight == resumed, f"sampler {name!r}: resumed {resumed} != straight {straight}")
    if not getattr(sampler, "repeats", False):
        _require(len(set(straight)) == len(straight), f"sampler {name!r} asked a row twice")
    return straight
