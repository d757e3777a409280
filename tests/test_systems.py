"""Conformance: every registered system passes the same checks (the contract of
frontierbo.experiments.system, like scikit-learn's check_estimator).

* its smallest reproduction (``reproduce <name> <quick_reproduce>``) runs and writes the shared
  artefacts: runs.jsonl, results.json, summary.csv, report.md and at least one figure; a second
  call resumes from the store and recomputes nothing;
* each of its ``run`` commands' ``--help`` lists only its own options, and another system's
  option is rejected by argparse with one line naming the command;
* it is listed in ``frontierbo --help``.
"""

from __future__ import annotations

import argparse
import json

import pytest

from frontierbo.cli import build_parser
from frontierbo.registry import systems

SYSTEMS = systems()
SHARED_ARTEFACTS = ("runs.jsonl", "results.json", "summary.csv", "report.md")


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _run_parsers() -> dict[str, argparse.ArgumentParser]:
    return _subparsers(_subparsers(build_parser())["run"])


def _owned_run_commands(system) -> list[str]:
    probe = argparse.ArgumentParser()
    system.add_run_commands(probe.add_subparsers())
    return list(_subparsers(probe))


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
    for module in system.requires:
        pytest.importorskip(module, reason=f"{system.name}'s optional extra is not installed")
    out = tmp_path / system.name
    status, text, err = cli(["reproduce", system.name, *system.quick_reproduce, "--out", out])
    assert status == 0, err
    for name in SHARED_ARTEFACTS:
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name
    assert list(out.glob("*.png")), "no figure written"
    results = json.loads((out / "results.json").read_text())
    assert isinstance(results, dict) and results
    assert text.rstrip().splitlines()[-1].startswith(f"written to {out}/")
    runs = (out / "runs.jsonl").read_text().splitlines()
    status, _, err = cli(["reproduce", system.name, *system.quick_reproduce, "--out", out])
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
