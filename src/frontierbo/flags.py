"""One meaning per command-line flag: the flags that more than one command takes, and the rule.

Every flag that two commands share means the same thing in both: the same ``dest`` (so the
handlers read the same attribute) and a help text that says so (it names one of the entry's
``keywords``). ``tests/test_flags.py`` walks every sub-parser of ``frontierbo`` and checks
:data:`FLAGS` with :func:`violations`.

The words that used to mean several things (issue 57):

* ``--delta`` is only the privacy parameter delta of (epsilon, delta)-DP. The probability that
  an optimiser's confidence bounds fail (the delta of "with probability at least 1 - delta": LDP
  BO's UCB width, each IQAE stage of quantum BO) is ``--failure-probability``.
* Counts: ``--iterations`` (``-T``) is how many rounds the optimiser's loop runs, one decision
  per round (a row or an arm for GP-UCB, PO-GP-UCB and LDP BO, a macro-action of ``--kappa``
  moves for macro-bo); what is observed before the first round (the ``--n-init`` rows,
  macro-bo's start) is not counted. ``--queries`` is a query budget: how many times the black box
  (the curator's table, the quantum oracle, the classifier under attack) may be queried in all,
  the initial queries included (Q-GP-UCB spends many queries per stage; only ``reproduce bos2
  --init-not-in-budget`` leaves BOS²'s 30 initial queries out, by name).

A renamed flag is refused with one line naming its new name (:func:`add_renamed`).
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = [
    "FLAGS",
    "NEGATIVE_NUMBER",
    "Flag",
    "Renamed",
    "add_renamed",
    "option_uses",
    "violations",
]


#: What a parser must take as a (negative) number, not as an option: argparse's own matcher knows
#: only -3 and -0.5, so ``--value -1e3`` was "expected one argument". -inf and -nan parse too, to
#: be refused by the option's own check, which names it. (No frontierbo flag looks like one.)
NEGATIVE_NUMBER = re.compile(
    r"^-(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$|^-(inf|infinity|nan)$", re.IGNORECASE
)


@dataclass(frozen=True)
class Flag:
    """What a shared flag means: its ``dest`` and the words its help must use (any one)."""

    dest: str
    meaning: str
    keywords: tuple[str, ...]


#: Every flag that more than one command takes (and the renamed flags' new names), by meaning.
FLAGS: dict[str, Flag] = {
    # -- privacy
    "--epsilon": Flag("epsilon", "the privacy budget epsilon of (local) DP", ("privacy",)),
    "--delta": Flag(
        "delta", "the privacy parameter delta of (epsilon, delta)-DP", ("privacy parameter",)
    ),
    "--r": Flag("r", "the projection dimension of the random-projection release", ("projection",)),
    "--mechanism": Flag("mechanism", "the curator's release mechanism", ("release",)),
    # -- the optimiser
    "--failure-probability": Flag(
        "failure_probability",
        "the delta of 'with probability at least 1 - delta': the probability that the "
        "optimiser's confidence bounds fail (not a privacy parameter)",
        ("failure probability",),
    ),
    "--iterations": Flag(
        "iterations",
        "rounds of the optimiser's loop, one decision each; the initial observations not counted",
        ("rounds",),
    ),
    "-T": Flag("iterations", "short for --iterations (the papers' T)", ("rounds",)),
    "--queries": Flag(
        "queries",
        "a query budget: queries of the black box in all, the initial ones included",
        ("queries", "query budget"),
    ),
    "--algorithm": Flag("algorithm", "the optimisation algorithm", ("algorithm", "sampler")),
    "--beta": Flag("beta", "the weight of the exploration term", ("exploration", "width")),
    "--beta-scale": Flag("beta_scale", "multiplier of the UCB confidence width", ("width",)),
    "--n-init": Flag("n_init", "random initial rows before the first round", ("initial",)),
    "--prefit-on-table": Flag(
        "prefit_on_table",
        "fit the GP hyperparameters on the whole table before the run",
        ("maximum likelihood",),
    ),
    "--seed": Flag("seed", "the seed of the random choices", ("seed",)),
    # -- the data
    "--data": Flag("data", "the input CSV file", ("CSV",)),
    "--target": Flag("target", "the CSV column of the objective", ("column",)),
    "--features": Flag("features", "the CSV columns of the inputs", ("columns",)),
    "--minimize": Flag("minimize", "minimise the target column", ("minimise",)),
    "--datasets": Flag("datasets", "a subset of the reproduction's datasets", ("subset",)),
    "--root": Flag("root", "a data root", ("data root",)),
    "--url": Flag("url", "the URL of the server the command reads from", ("URL",)),
    # -- output, studies, services
    "--out": Flag("out", "where the command writes its output", ("directory", "file")),
    "--json": Flag("json", "print JSON", ("JSON",)),
    "--name": Flag("name", "the study's name", ("study",)),
    "--storage": Flag("storage", "the study database", ("study database",)),
    "--row": Flag("row", "a candidate row of the study", ("candidate row",)),
    "--params": Flag("params", "a point of the study as JSON", ("point",)),
    "--db": Flag("db", "the curator's database", ("database",)),
    "--host": Flag("host", "the address to listen on", ("address",)),
    "--port": Flag("port", "the port to listen on", ("port",)),
    # -- reproductions
    "--quick": Flag("quick", "a smaller reproduction", ("quick",)),
    "--runs": Flag(
        "runs",
        "independent repetitions of each configuration",
        ("runs", "trials", "realizations", "images per"),
    ),
    "--jobs": Flag("jobs", "parallel worker processes", ("worker",)),
    "--scheduler": Flag("scheduler", "where the sweep's runs execute", ("joblib",)),
    "--dask": Flag("dask", "a running Dask cluster for the sweep", ("Dask",)),
    "--profile": Flag(
        "profile",
        "what a reproduction reproduces: the paper as written or the authors' code",
        ("paper",),
    ),  # fmt: skip
    "--fitting": Flag(
        "fitting", "how the attacks' GPs learn their hyperparameters", ("learn their GPs",)
    ),
    # -- the attack (``attack`` and ``run bos2`` take the same options)
    "--model": Flag("model", "the torch classifier under attack", ("torch",)),
    "--images": Flag("images", "the .npz of images to attack", (".npz",)),
    "--target-class": Flag("target_class", "the attack's target class(es)", ("target class",)),
    "--attack": Flag("attack", "the attack method", ("attack",)),
    "--architecture": Flag("architecture", "a built-in victim architecture", ("architecture",)),
    "--model-module": Flag(
        "model_module", "the Python file that defines the model's class", ("Python file",)
    ),
    "--model-class": Flag("model_class", "the model's class in --model-module", ("class",)),
    "--input-scale": Flag("input_scale", "the input range the model expects", ("range",)),
    "--delta-max": Flag("delta_max", "the L_inf bound of the perturbation", ("L_inf",)),
    "--groups": Flag("groups", "additive groups of the perturbation GP", ("groups",)),
}


class Renamed(argparse.Action):
    """A flag that was renamed: using it is a usage error that names the new flag."""

    def __init__(self, option_strings, dest, new: str, note: str, **kwargs):
        self.new, self.note = new, note
        kwargs.update(nargs="?", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        parser.error(f"{option_string} was renamed {self.new} ({self.note})")


def add_renamed(parser: argparse.ArgumentParser, old: str, new: str, note: str) -> None:
    """Refuse the old flag ``old`` with one line: it is now ``new``, ``note`` says what it is."""
    parser.add_argument(old, action=Renamed, new=new, note=note, dest=f"renamed_{old.lstrip('-')}")


def option_uses(
    parser: argparse.ArgumentParser, command: tuple[str, ...] = ()
) -> Iterator[tuple[str, str, argparse.Action]]:
    """``(command, flag, action)`` for every option string of every (sub-)command of
    ``parser``, recursively (``--help`` left out)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from option_uses(sub, (*command, name))
        elif not isinstance(action, argparse._HelpAction):
            for flag in action.option_strings:
                yield " ".join(command), flag, action


def violations(parser: argparse.ArgumentParser) -> list[str]:
    """Every way ``parser`` breaks one-meaning-per-flag (empty: none).

    A flag that two commands take must be in :data:`FLAGS`; every use of a flag in
    :data:`FLAGS` must have its ``dest`` and a help naming one of its keywords (a hidden,
    deprecated alias is not checked for help); a renamed flag must point to a flag its command
    takes.
    """
    found = []
    commands = defaultdict(set)
    flags_of = defaultdict(set)
    for command, flag, action in option_uses(parser):
        flags_of[command].add(flag)
        if isinstance(action, Renamed):
            continue
        commands[flag].add(command)
    for command, flag, action in option_uses(parser):
        where = f"{flag} of `{command}`"
        if isinstance(action, Renamed):
            if action.new not in flags_of[command]:
                found.append(f"{where} was renamed {action.new}, which `{command}` does not take")
            continue
        entry = FLAGS.get(flag)
        if entry is None:
            if len(commands[flag]) > 1:
                found.append(
                    f"{flag} is taken by {len(commands[flag])} commands "
                    f"({', '.join(sorted(commands[flag]))}) but has no entry in FLAGS"
                )
            continue
        if action.dest != entry.dest:
            found.append(f"{where} stores {action.dest!r}, not {entry.dest!r} ({entry.meaning})")
        if action.help is argparse.SUPPRESS:
            continue
        text = (action.help or "").lower()
        if not any(word.lower() in text for word in entry.keywords):
            found.append(
                f"{where}: help {action.help!r} does not say {entry.meaning!r} "
                f"(it names none of {', '.join(entry.keywords)})"
            )
    unused = sorted(set(FLAGS) - set(commands))
    if unused:
        found.append(f"FLAGS entries that no command takes: {', '.join(unused)}")
    return sorted(set(found))
