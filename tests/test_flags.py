"""One meaning per flag (issue 57): every option of every ``frontierbo`` sub-command, walked
recursively, agrees with :data:`frontierbo.flags.FLAGS`; ``--delta`` is only the privacy delta;
one count has one name; a renamed flag is refused with a line naming its new name."""

from __future__ import annotations

import argparse

import pytest

from frontierbo.cli import build_parser, main
from frontierbo.flags import FLAGS, option_uses, violations


def _commands(flag: str) -> set[str]:
    return {
        command
        for command, name, action in option_uses(build_parser())
        if name == flag and action.help is not argparse.SUPPRESS
    }


def test_every_parser_gives_each_flag_one_meaning():
    assert violations(build_parser()) == []


def _parsers(parser: argparse.ArgumentParser, name: str = "frontierbo"):
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, child in action.choices.items():
                yield from _parsers(child, f"{name} {sub}")


def test_every_command_formats_its_help():
    # a "%" in a help text breaks argparse's formatting of --help (reproduce bos2 did)
    for name, parser in _parsers(build_parser()):
        assert parser.format_help(), name


def test_delta_is_only_the_privacy_delta():
    assert "privacy" in FLAGS["--delta"].meaning
    assert _commands("--delta") == {"run po-gp-ucb", "curator serve", "privacy audit"}
    for command, flag, action in option_uses(build_parser()):
        if flag == "--delta" and action.help is not argparse.SUPPRESS:
            assert "privacy" in action.help, command


def test_each_count_has_one_name():
    # rounds of the loop (initial observations not counted) vs a query budget (all counted)
    assert _commands("--iterations") == {"run gp-ucb", "run po-gp-ucb", "run ldp-bo",
                                         "run macro-bo"}  # fmt: skip
    assert _commands("-T") <= _commands("--iterations")
    assert _commands("--queries") == {
        "run quantum-bo", "run bos2", "attack", "reproduce bos2", "modeler",
        "curator add-modeler",
    }  # fmt: skip
    assert _commands("--failure-probability") == {"run ldp-bo", "run quantum-bo"}
    assert _commands("--budget") == set()


def test_the_checker_catches_a_flag_with_two_meanings():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    sub.add_parser("a").add_argument("--delta", help="privacy parameter delta")
    sub.add_parser("b").add_argument("--delta", help="confidence of the UCB width")
    sub.add_parser("c").add_argument("--delta", dest="conf", help="privacy parameter delta")
    sub.add_parser("d").add_argument("--fresh", help="x")
    sub.add_parser("e").add_argument("--fresh", help="x")
    found = "\n".join(violations(parser))
    assert "--delta of `b`: help 'confidence of the UCB width' does not say" in found
    assert "--delta of `c` stores 'conf', not 'delta'" in found
    assert "--fresh is taken by 2 commands (d, e) but has no entry in FLAGS" in found
    assert "--delta of `a`" not in found


RENAMED = [
    (["run", "ldp-bo", "--delta", "0.1"], "--delta was renamed --failure-probability"),
    (["run", "quantum-bo", "--delta", "0.1"], "--delta was renamed --failure-probability"),
    (["run", "quantum-bo", "-T", "100"], "-T was renamed --queries"),
    (["run", "macro-bo", "--budget", "20"], "--budget was renamed --iterations"),
    (["attack", "--budget", "900"], "--budget was renamed --queries"),
    (["run", "bos2", "--budget", "900"], "--budget was renamed --queries"),
    # --runs 0 is refused by argparse after --budget: a bad test never starts a reproduction
    (["reproduce", "bos2", "--budget", "900", "--runs", "0"], "--budget was renamed --queries"),
    (["modeler", "--iterations", "30"], "--iterations was renamed --queries"),
]


@pytest.mark.parametrize(("argv", "message"), RENAMED, ids=[" ".join(a) for a, _ in RENAMED])
def test_a_renamed_flag_is_refused_naming_the_new_one(argv, message, capsys):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("frontierbo: error: ")
    assert message in err


@pytest.mark.parametrize("value", ["-1e3", "-1E-3", "-.5", "-3"])
def test_every_command_takes_negative_numbers_as_values(value):
    """argparse's own rule reads -1e3 as an unknown option ("expected one argument"); the
    shared parser takes it as a value in every command, not only in ``tell``."""
    args = build_parser().parse_args(
        ["run", "macro-bo", "--data", "f.csv", "--target", "v", "--beta", value]
    )
    assert args.beta == float(value)
