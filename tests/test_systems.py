"""Conformance: every registered system passes the same checks (the contract of
frontierbo.systems, like scikit-learn's check_estimator).

* every declared ``run`` command: the Python call and the command line agree (signature and
  defaults), the same seed writes the same result.json, each declared range refuses a value
  outside it naming the flag and writing nothing (frontierbo.systems.checks);
* every declared study sampler is seeded and resumes from its database; the
  ``frontierbo.samplers`` entry points are exactly the declared samplers;

* its smallest reproduction (``reproduce <name> <quick_args>``) runs and writes the shared
  artefacts: runs.jsonl, results.json, summary.csv, report.md and at least one figure; a second
  call resumes from the store and recomputes nothing;
* each of its ``run`` commands' ``--help`` lists only its own options, and another system's
  option is rejected by argparse with one line naming the command;
* it is listed in ``frontierbo --help``.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest

from frontierbo.cli import build_parser
from frontierbo.registry import systems
from frontierbo.systems import checks
from frontierbo.systems.declare import load

SYSTEMS = systems()
COMMANDS = [c for s in SYSTEMS for c in s.commands]
SAMPLERS = {name: s.sampler_settings.get(name, {}) for s in SYSTEMS for name in s.samplers}


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.name)
def test_command_signature_matches_its_declaration(command):
    checks.check_signature(command)


@pytest.mark.filterwarnings(
    "ignore::frontierbo.po.random_projection.NotDifferentiallyPrivateWarning"
)
@pytest.mark.parametrize("command", [c for c in COMMANDS if c.example], ids=lambda c: c.name)
def test_command_is_seeded_for_each_algorithm(command, tmp_path):
    for i, kwargs in enumerate(load(command.example)(tmp_path)):
        (tmp_path / str(i)).mkdir()
        result = checks.check_seeded(command, kwargs, tmp_path / str(i))
        assert load(command.format)(result)


@pytest.mark.filterwarnings(
    "ignore::frontierbo.po.random_projection.NotDifferentiallyPrivateWarning"
)
@pytest.mark.parametrize("command", [c for c in COMMANDS if c.example], ids=lambda c: c.name)
def test_command_refuses_values_outside_its_declared_ranges(command, tmp_path):
    kwargs = load(command.example)(tmp_path)[0]
    assert checks.check_refuses_bad_values(command, kwargs, tmp_path) > 0


def test_every_command_has_an_example():
    assert [c.name for c in COMMANDS if not c.example] == []


def test_entry_points_are_the_declared_samplers():
    from importlib.metadata import entry_points

    published = {e.name: e.value for e in entry_points(group="frontierbo.samplers")}
    declared = {name: target for s in SYSTEMS for name, target in s.samplers.items()}
    assert {k: published.get(k) for k in declared} == declared


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_sampler_is_seeded_and_resumes(name, tmp_path):
    rng = np.random.default_rng(0)
    candidates = rng.uniform(size=(12, 2))
    values = np.sin(3 * candidates[:, 0]) + candidates[:, 1]
    objective = lambda row, request: values[row]  # noqa: E731
    rows = checks.check_sampler(name, candidates, objective, tmp_path, SAMPLERS[name])
    assert all(0 <= r < 12 for r in rows)


SHARED_ARTEFACTS = ("runs.jsonl", "results.json", "summary.csv", "report.md")


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _run_parsers() -> dict[str, argparse.ArgumentParser]:
    return _subparsers(_subparsers(build_parser())["run"])


def _owned_run_commands(system) -> list[str]:
    return [c.name for c in system.commands]


def _flags(parser: argparse.ArgumentParser) -> set[str]:
    return {
        flag
        for action in parser._actions
        if action.help is not argparse.SUPPRESS
        for flag in action.option_strings
        if flag.startswith("--") and flag != "--help"
    }


def test_registry_names_are_unique_and_listed_in_help():
    names = [s.name for s in SYSTEMS]
    assert len(set(names)) == len(names) == 5
    out = build_parser().format_help()
    for name in names:
        assert name in out


@pytest.mark.filterwarnings(
    "ignore::frontierbo.po.random_projection.NotDifferentiallyPrivateWarning"
)
@pytest.mark.parametrize("system", SYSTEMS, ids=lambda s: s.name)
def test_quick_reproduction_writes_the_shared_artefacts_and_resumes(system, cli, tmp_path):
    for module in system.reproduction.requires:
        pytest.importorskip(module, reason=f"{system.name}'s optional extra is not installed")
    out = tmp_path / system.name
    quick = system.reproduction.quick_args
    status, text, err = cli(["reproduce", system.name, *quick, "--out", out])
    assert status == 0, err
    for name in SHARED_ARTEFACTS:
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name
    assert list(out.glob("*.png")), "no figure written"
    results = json.loads((out / "results.json").read_text())
    assert isinstance(results, dict) and results
    assert text.rstrip().splitlines()[-1].startswith(f"written to {out}/")
    runs = (out / "runs.jsonl").read_text().splitlines()
    status, _, err = cli(["reproduce", system.name, *quick, "--out", out])
    assert status == 0, err
    assert (out / "runs.jsonl").read_text().splitlines() == runs  # resumed: nothing re-run


@pytest.mark.parametrize("system", SYSTEMS, ids=lambda s: s.name)
def test_run_help_lists_only_its_own_options(system):
    parsers = _run_parsers()
    own = _owned_run_commands(system)
    assert own, f"{system.name} registers no run command"
    for command in own:
        flags = _flags(parsers[command])
        text = parsers[command].format_help()
        for flag in flags:
            assert flag in text
        for other, parser in parsers.items():
            for flag in _flags(parser) - flags:
                assert f"{flag} " not in text and f"{flag}\n" not in text, (command, other, flag)


@pytest.mark.parametrize("system", SYSTEMS, ids=lambda s: s.name)
def test_run_rejects_another_systems_option(system, cli, tmp_path):
    parsers = _run_parsers()
    command = _owned_run_commands(system)[0]
    foreign = sorted(set().union(*(_flags(p) for p in parsers.values())) - _flags(parsers[command]))
    assert foreign
    status, _, err = cli(["run", command, foreign[0], "1"])
    assert status == 2
    assert err.startswith(f"frontierbo: error: frontierbo run {command}: ")
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("system", SYSTEMS, ids=lambda s: s.name)
def test_reproduce_takes_the_shared_sweep_options(system):
    parser = _subparsers(_subparsers(build_parser())["reproduce"])[system.name]
    flags = _flags(parser)
    for flag in ("--quick", "--runs", "--jobs", "--out", "--seed", "--datasets", "--scheduler"):
        assert flag in flags
    assert "--dask" in flags
