"""``frontierbo study create | show | plot``, ``frontierbo ask`` and ``frontierbo tell``: a
study from the shell, one command per step, so an experiment run by hand (or by a script on
another machine) can be driven by BO::

    frontierbo study create --candidates rows.csv --storage study.db
    frontierbo ask --storage study.db            # {"trial": 0, "row": 17, "params": {...}}
    frontierbo tell --storage study.db --trial 0 --value 3.2

or over a search space (a JSON file ``{"params": [...]}``, :mod:`frontierbo.study.space`)::

    frontierbo study create --space space.json --storage study.db --direction minimize
    frontierbo ask --storage study.db            # {"trial": 0, "params": {"lr": 0.003, ...}}

    frontierbo study show --storage study.db
    frontierbo study plot --storage study.db --out best.png
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import sys
import warnings
from pathlib import Path

from frontierbo.study.storage import default_storage

STORAGE_HELP = (
    "the study database: a SQLite file, or a database URL (default $FRONTIERBO_STORAGE, else "
    "study.db)"
)


def finite_float(flag: str):
    """An argparse ``type``: a finite number, else one error naming ``flag``."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(
                f"{flag} must be a finite number (e.g. 3.2, -1e3), got {text!r}"
            )
        return value

    parse.__name__ = "finite number"
    return parse


def add_commands(top: argparse._SubParsersAction) -> None:
    study = top.add_parser(
        "study", help="persistent ask/tell studies over a CSV of candidates or a search space"
    ).add_subparsers(dest="study_command", required=True, metavar="ACTION")
    _add_create(study)
    _add_show(study)
    _add_plot(study)
    _add_inspection(study)

    ask = top.add_parser(
        "ask",
        help="ask a study for the next candidate (prints JSON)",
        description="Reserve the next trial of a study and print it as JSON: trial number, row "
        "index and feature values by column name (a space study: trial number and typed "
        "params by name). Evaluate it, then tell the value.",
    )
    _storage_arguments(ask)
    ask.set_defaults(handler=_cli_errors(_ask))

    tell = top.add_parser(
        "tell",
        help="tell a study the value of a trial (or that it failed)",
        description="Record the value measured for a pending trial (once per trial), or "
        "--state fail (the evaluation failed: no value, the row is not offered again) or "
        "--state abandoned (given up: the row may be asked again).",
    )
    _storage_arguments(tell)
    which = tell.add_mutually_exclusive_group(required=True)
    which.add_argument("--trial", type=int, help="the trial number from ask")
    which.add_argument(
        "--row", type=int, help="a candidate row measured without an ask (a warm start)"
    )
    which.add_argument(
        "--params", type=_json_object("--params"), metavar="JSON",
        help='a point measured without an ask, e.g. \'{"lr": 0.01, "act": "relu"}\'',
    )  # fmt: skip
    tell.add_argument(
        "--value",
        type=finite_float("--value"),
        default=None,
        help="the measured value (a finite number; negative ones as -3, -0.5 or -1e3); "
        "required unless --state fail or abandoned",
    )
    tell.add_argument(
        "--state", choices=("complete", "fail", "abandoned"), default="complete",
        help="complete (default: with --value), fail or abandoned (without --value)",
    )  # fmt: skip
    tell.set_defaults(handler=_cli_errors(_tell))


def _json_object(flag: str):
    """An argparse ``type``: a JSON object, else one error naming ``flag``."""

    def parse(text: str) -> dict:
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = None
        if not isinstance(value, dict):
            raise argparse.ArgumentTypeError(
                f"{flag} must be a JSON object such as '{{\"lr\": 0.01}}', got {text!r}"
            )
        return value

    parse.__name__ = "JSON object"
    return parse


def _storage_arguments(parser) -> None:
    parser.add_argument("--storage", default=default_storage(), help=STORAGE_HELP)
    parser.add_argument("--name", default=None, help="the study (needed if there are several)")


def _add_create(study) -> None:
    from frontierbo.study.samplers import available_samplers

    create = study.add_parser(
        "create",
        help="create a study from a CSV of candidate rows or a search space (JSON)",
        description="Create a study from --candidates, a CSV file of rows, whose columns are "
        "classified (create prints each column's kind and why). Features: numbers (float), "
        "whole numbers (int), True/False (bool), and text with repeated values (categorical, "
        "one-hot, at most 100 categories). Carried, never modelled (returned with its row by "
        "ask and study show): an index (a first column of row numbers 0..n-1 or 1..n while "
        "another feature remains, or an unnamed first column of distinct whole numbers), a "
        "column named like an ID (with a word id, ids, uuid or guid, or named name, key, "
        "label, index or idx) holding text or distinct whole numbers, and text whose values "
        "are all distinct or all the same. A column mixing numbers and words is refused "
        "(unless named like an ID), naming the first word. --features (exactly these; the "
        "rest carried), --ids and --categorical override the rule. The rows are stored in "
        'the database with their sha256. Or --space: a JSON file {"params": [{"name": "lr", '
        '"type": "float", "low": 1e-5, "high": 0.1, "log": true}, {"name": "layers", "type": '
        '"int", "low": 1, "high": 8}, {"name": "act", "type": "categorical", "choices": '
        '["relu", "tanh"]}]} (float: low, high, log, step; int: low, high, log).',
    )
    create.add_argument(
        "--candidates", default=None,
        help="CSV file, one candidate per row; its columns are classified as above",
    )  # fmt: skip
    create.add_argument(
        "--space",
        default=None,
        help="JSON file of a search space (instead of --candidates): float, int and "
        "categorical parameters",
    )
    create.add_argument(
        "--features", nargs="+", default=None,
        help="the feature columns, exactly (default: classified; the other columns are carried)",
    )  # fmt: skip
    create.add_argument(
        "--ids", nargs="+", default=None, metavar="COLUMN",
        help="columns to carry, not model (IDs, names, notes)",
    )  # fmt: skip
    create.add_argument(
        "--categorical", nargs="+", default=None, metavar="COLUMN",
        help="columns that are categorical features, e.g. numeric codes of a batch (one-hot)",
    )  # fmt: skip
    create.add_argument("--storage", default=default_storage(), help=STORAGE_HELP)
    create.add_argument("--name", default="default", help="study name (default)")
    create.add_argument(
        "--algorithm",
        choices=sorted(available_samplers()),
        default=None,
        help="sampler (gp-ei: expected improvement; gp-ucb, random); the systems' algorithms need settings, e.g. q-gp-ucb, "
        "po-gp-ucb (candidates = the curator's release), ata-gp-ucb --set horizon=200 "
        "--set B=1 --set R=1 --set epsilon=1 (tells privatised by the telling process)",
    )
    create.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a setting of the algorithm, e.g. beta=2 or n_initial=5 (repeatable)",
    )
    create.add_argument(
        "--direction", choices=("minimize", "maximize"), default=None,
        help="minimize (default, as Optuna) or maximize the told values",
    )  # fmt: skip
    create.add_argument("--seed", type=int, default=None, help="seed of the study (0)")
    create.add_argument(
        "--pending-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="offer a trial again when it stays pending this long, its worker presumably dead "
        "(default 86400, a day; inf: never); with --load-if-exists it replaces the stored one",
    )
    create.add_argument(
        "--observed", type=Path, default=None, metavar="CSV",
        help="points measured before the study (a warm start): the features or params by "
        "name and the --target column; told as trials of the new study",
    )  # fmt: skip
    create.add_argument("--target", default=None, help="the value column of --observed")
    create.add_argument(
        "--load-if-exists",
        action="store_true",
        help="reuse a study of that name: same rows; --algorithm, --set, --direction, --seed "
        "and --features, if given, must be what it was created with",
    )
    create.set_defaults(handler=_cli_errors(_create))


def _add_show(study) -> None:
    show = study.add_parser("show", help="table of the trials and the best so far")
    _storage_arguments(show)
    show.add_argument("--json", action="store_true", help="print JSON instead of a table")
    show.set_defaults(handler=_cli_errors(_show))


def _add_plot(study) -> None:
    plot = study.add_parser("plot", help="best value so far against trials (PNG)")
    _storage_arguments(plot)
    plot.add_argument("--out", type=Path, default=Path("best.png"), help="PNG file (best.png)")
    plot.set_defaults(handler=_cli_errors(_plot))


def _add_inspection(study) -> None:
    listing = study.add_parser("list", help="the studies of a storage, one line each")
    listing.add_argument("--storage", default=default_storage(), help=STORAGE_HELP)
    listing.add_argument("--json", action="store_true", help="print JSON instead of a table")
    listing.set_defaults(handler=_cli_errors(_list))

    best = study.add_parser(
        "best",
        help="the best trial, and the model's best (for noisy values)",
        description="The trial with the best told value, and the told trial whose posterior "
        "mean is best (the study's GP fitted on the told values): with noisy values the "
        "luckiest observation is not the best point.",
    )
    _storage_arguments(best)
    best.add_argument("--json", action="store_true", help="print JSON instead of text")
    best.set_defaults(handler=_cli_errors(_best))

    export = study.add_parser(
        "export",
        help="the trials as CSV or JSON (params, value, state, times, row)",
        description="Write every trial, one record each, with Optuna's column names: number, "
        "value, state, datetime_start, datetime_complete, duration, row, params_<name>, "
        "carried_<name>. To standard output, or atomically to --out.",
    )
    _storage_arguments(export)
    export.add_argument("--format", choices=("csv", "json"), default="csv", help="(csv)")
    export.add_argument("--out", type=Path, default=None, help="a file (default: standard output)")
    export.set_defaults(handler=_cli_errors(_export))

    optimize = study.add_parser(
        "optimize",
        help="optimise a shell command: fill its {params}, read the number it prints",
        description="Run --command once per trial with {name} filled from the trial's params "
        "({trial}, {row} too), without a shell; its value is the last number it prints on "
        "standard output (or the last match of --value-regex). A non-zero exit status, a "
        "--trial-timeout or no number fails the trial; Ctrl-C kills the running commands and "
        'abandons their trials. Example: --command "python train.py --lr {lr} --layers '
        '{layers}" --n-trials 40.',
    )
    _storage_arguments(optimize)
    optimize.add_argument("--command", required=True, help="the command line, with {params}")
    optimize.add_argument("--n-trials", type=int, default=None, help="trials to run")
    optimize.add_argument(
        "--timeout", type=finite_float("--timeout"), default=None,
        help="seconds after which no new trial starts",
    )  # fmt: skip
    optimize.add_argument(
        "--n-jobs", type=int, default=1, help="commands running at once (1; -1: one per CPU)"
    )
    optimize.add_argument(
        "--value-regex", default=None,
        help="where the value is in the output (its first group, or the whole match)",
    )  # fmt: skip
    optimize.add_argument(
        "--trial-timeout", type=finite_float("--trial-timeout"), default=None,
        help="seconds after which one command is killed and its trial failed",
    )  # fmt: skip
    optimize.set_defaults(handler=_cli_errors(_optimize))

    enqueue = study.add_parser(
        "enqueue",
        help="ask a given point next (before the sampler chooses)",
        description="Queue a point: the next ask of any worker returns it. Also the way to "
        "offer a failed row again.",
    )
    _storage_arguments(enqueue)
    point = enqueue.add_mutually_exclusive_group(required=True)
    point.add_argument("--row", type=int, help="a candidate row")
    point.add_argument("--params", type=_json_object("--params"), metavar="JSON",
                       help="a point of the space (or a row's features) as JSON")  # fmt: skip
    enqueue.set_defaults(handler=_cli_errors(_enqueue))

    delete = study.add_parser(
        "delete",
        help="delete a study and its trials from a storage",
        description="Delete the study --name with its trials and fits, in one transaction.",
    )
    delete.add_argument("--storage", default=default_storage(), help=STORAGE_HELP)
    delete.add_argument("--name", required=True, help="the study to delete")
    delete.set_defaults(handler=_cli_errors(_delete))


# -- handlers ---------------------------------------------------------------------------------------
def _cli_errors(handler):
    """``handler`` with the study's errors in the shell's words: an error about ``storage``
    or ``pending_timeout`` (the Python parameters) names ``--storage`` / ``--pending-timeout``
    (the flags)."""

    @functools.wraps(handler)
    def run(args):
        try:
            return handler(args)
        except (ValueError, FileNotFoundError) as exc:
            text = str(exc)
            for name in ("storage", "pending_timeout"):
                if text.startswith(f"{name} ") and len(exc.args) == 1:
                    flag = "--" + name.replace("_", "-")
                    raise type(exc)(flag + text[len(name) :]) from exc
            raise

    return run


def _settings(pairs: list[str]) -> dict | None:
    if not pairs:  # none given: a new study's defaults, a loaded study's own
        return None
    out = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--set must be KEY=VALUE, got {pair!r}")
        try:
            out[key.strip()] = json.loads(text)
        except json.JSONDecodeError:
            out[key.strip()] = text
    return out


def _create(args) -> str:
    from frontierbo.study.create import create_study
    from frontierbo.study.tables import read_candidates

    if (args.candidates is None) == (args.space is None):
        raise ValueError(
            "give --candidates (a CSV of rows) or --space (a JSON search space)"
            + (", not both" if args.space is not None else "")
        )
    if args.space is not None:
        return _create_space(args)
    table = read_candidates(
        args.candidates, features=args.features, ids=args.ids, categorical=args.categorical
    )
    X, names = table.X, [c.name for c in table.features]
    observed = _observed(args, names, table.row_of)
    with warnings.catch_warnings(record=True) as caught:  # e.g. duplicate rows: one line each
        warnings.simplefilter("always")
        study = create_study(
            table,
            storage=args.storage,
            algorithm=args.algorithm,
            settings=_settings(args.settings),
            name=args.name,
            direction=args.direction,
            seed=args.seed,
            pending_timeout=args.pending_timeout,
            load_if_exists=args.load_if_exists,
        )
    for warning in caught:
        print(f"frontierbo: warning: {warning.message}", file=sys.stderr)
    added = _add_observed(study, observed)
    timeout = _seconds(study.pending_timeout)
    if "pending_timeout" in study.updated:
        timeout += f" (was {_seconds(study.updated['pending_timeout'][0])})"
    return added + (
        f"study {study.name!r} in {study.storage.url}: {X.shape[0]} candidates, "
        f"{len(names)} features ({', '.join(names)}), algorithm {study.algorithm}, "
        f"{_direction(study)}, pending timeout {timeout}, {len(study.trials)} trials so far\n"
        "columns: " + "; ".join(table.describe())
    )


def _create_space(args) -> str:
    from frontierbo.study.create import create_study
    from frontierbo.study.space import Space

    for flag in ("features", "ids", "categorical"):
        if getattr(args, flag, None) is not None:
            raise ValueError(f"--{flag} applies to --candidates; a --space names its params")
    space = Space.from_json(args.space, flag="--space")
    observed = _observed(args, space.names, space.encode)
    study = create_study(
        space=space,
        storage=args.storage,
        algorithm=args.algorithm,
        settings=_settings(args.settings),
        name=args.name,
        direction=args.direction,
        seed=args.seed,
        pending_timeout=args.pending_timeout,
        load_if_exists=args.load_if_exists,
    )
    timeout = _seconds(study.pending_timeout)
    if "pending_timeout" in study.updated:
        timeout += f" (was {_seconds(study.updated['pending_timeout'][0])})"
    added = _add_observed(study, observed)
    kinds = ", ".join(f"{p.name} ({_kind(p)})" for p in space.params)
    return added + (
        f"study {study.name!r} in {study.storage.url}: a space of {len(space)} params "
        f"({kinds}), algorithm {study.algorithm}, {_direction(study)}, pending timeout "
        f"{timeout}, {len(study.trials)} trials so far"
    )


def _counts(trials) -> str:
    """How many trials are pending, and failed or abandoned where there are any."""
    counts = {
        state: sum(t.state == state for t in trials) for state in ("pending", "fail", "abandoned")
    }
    words = {"pending": "pending", "fail": "failed", "abandoned": "abandoned"}
    return ", ".join(
        f"{n} {words[state]}" for state, n in counts.items() if n or state == "pending"
    )


def _observed(args, names: list[str], locate):
    """``(params, values)`` of ``--observed``, each point checked by ``locate(params)`` (a
    row number, or an encoded point) before the study is made; or None."""
    from frontierbo.study.tables import read_observed

    if (args.observed is None) != (args.target is None):
        raise ValueError("--observed and --target go together: the file and its value column")
    if args.observed is None:
        return None
    params, values = read_observed(args.observed, args.target, names)
    seen = {}
    for line, point in enumerate(params, start=2):
        try:
            where = locate(point)
        except ValueError as exc:
            raise ValueError(f"--observed line {line}: {exc}") from None
        if isinstance(where, int) and where in seen:
            raise ValueError(
                f"--observed lines {seen[where]} and {line} are the same candidate row {where}"
            )
        seen.setdefault(where, line) if isinstance(where, int) else None
    return params, values


def _add_observed(study, observed) -> str:
    """Tell the observed points to a new study, all or none; a line saying how many."""
    if observed is None:
        return ""
    if study.trials:
        raise ValueError(
            f"--observed adds to a new study; study {study.name!r} already has "
            f"{len(study.trials)} trials (tell more with frontierbo tell --params / --row)"
        )
    params, values = observed
    try:
        study.add_trials(
            [{"params": p, "value": float(v)} for p, v in zip(params, values, strict=True)]
        )
    except ValueError as exc:
        raise ValueError(f"--observed: {exc}") from exc
    return f"told {len(values)} observed points (--observed)\n"


def _direction(study) -> str:
    """The direction, and how to change it when it is the default (Optuna's minimize)."""
    if study.direction == "minimize":
        return "direction minimize (lower values are better; --direction maximize to maximise)"
    return "direction maximize (higher values are better)"


def _kind(param) -> str:
    if param.type == "categorical":
        return f"{len(param.choices)} choices"
    return f"{'log ' if param.log else ''}{param.type}"


def _seconds(timeout: float | None) -> str:
    return "never" if timeout is None else f"{timeout:g} s"


def _load(args):
    from frontierbo.study.create import load_study

    return load_study(storage=args.storage, name=args.name)


def _ask(args) -> str:
    study = _load(args)
    trial = study.ask()
    row = {} if trial.row is None else {"row": trial.row}  # a space study has no rows
    out = {"trial": trial.number, **row, "params": trial.params, "direction": study.direction}
    if trial.carried:  # a CSV's IDs and text
        out["carried"] = trial.carried
    if trial.request:  # how to evaluate it (e.g. Q-GP-UCB's accuracy)
        out["request"] = trial.request
    return json.dumps(out)


def _tell(args) -> str:
    if args.state == "complete" and args.value is None:
        raise ValueError("--value is required (or --state fail / abandoned, without a value)")
    if args.state != "complete" and args.value is not None:
        raise ValueError(f"--state {args.state} takes no --value")
    study = _load(args)
    if args.trial is None:  # measured without an ask
        if args.state == "abandoned":
            raise ValueError("--state abandoned applies to an asked --trial")
        trial = study.add_trial(
            value=args.value, params=args.params, row=args.row, state=args.state
        )
        return f"added trial {trial.number}: {_shown(trial)}, " + (
            f"value {trial.value:g}" if trial.value is not None else "failed"
        )
    trial = study.tell(args.trial, args.value, state=args.state)
    if args.state != "complete":
        again = "not offered again" if args.state == "fail" else "its row may be asked again"
        where = "" if trial.row is None else f" (row {trial.row})"
        return f"trial {trial.number}{where} {args.state}: no value, {again}"
    best = study.best_trial
    told = "privatised to " if getattr(study.sampler, "privatise_tell", None) else ""
    row = "" if trial.row is None else f" (row {trial.row})"  # a space study has no rows
    return (
        f"trial {trial.number}{row} {told}= {trial.value:g}; best so far "
        f"{best.value:g} (trial {best.number})"
    )


def _show(args) -> str:
    from frontierbo.io import markdown_table

    study = _load(args)
    if study.space is not None:
        return _show_space(study, args.json)
    trials = study.trials
    if args.json:
        return json.dumps({"study": study.name, "trials": [t.to_dict() for t in trials]})
    best = study.best_trial
    table = study.table  # a CSV's study: typed features and the carried IDs / text
    carried = [] if table is None else list(table.carried)
    features = study.columns if table is None else [c.name for c in table.features]
    body = [
        [str(t.number), str(t.row), *(_cell(t.carried[c]) for c in carried),
         *map(_cell, t.params.values()), t.state, "" if t.value is None else f"{t.value:g}"]
        for t in trials
    ]  # fmt: skip
    header = ["trial", "row", *carried, *features, "state", "value"]
    kinds = "r" * len(features) if table is None else "".join(
        "l" if c.kind == "categorical" else "r" for c in table.features
    )  # fmt: skip
    lines = [
        f"study {study.name!r} ({study.algorithm}, {study.direction}): {len(trials)} trials, "
        f"{_counts(trials)}",
        "",
        markdown_table(header, body, "rr" + "l" * len(carried) + kinds + "lr"),
    ]
    if best is not None:
        ids = "".join(f", {k} {v}" for k, v in best.carried.items())
        lines += ["", f"best: trial {best.number}, row {best.row}{ids}, value {best.value:g}"]
    privacy = getattr(study.sampler, "privacy", None)
    guarantee = privacy() if privacy is not None else None
    if guarantee is not None:
        lines += [
            f"values are privatised by the teller ({guarantee.epsilon:g}-LDP per value): the "
            "best value is a noisy one"
        ]
    return "\n".join(lines)


def _show_space(study, as_json: bool) -> str:
    """``study show`` of a space study: one column per parameter (typed values)."""
    from frontierbo.io import markdown_table

    trials = study.trials
    if as_json:
        return json.dumps({"study": study.name, "trials": [t.to_dict() for t in trials]})
    names = study.space.names
    body = [
        [str(t.number), *(_cell(t.params[n]) for n in names), t.state,
         "" if t.value is None else f"{t.value:g}"]
        for t in trials
    ]  # fmt: skip
    align = "r" + "".join("l" if p.type == "categorical" else "r" for p in study.space) + "lr"
    lines = [
        f"study {study.name!r} ({study.algorithm}, {study.direction}) over a space of "
        f"{len(names)} params: {len(trials)} trials, "
        f"{_counts(trials)}",
        "",
        markdown_table(["trial", *names, "state", "value"], body, align),
    ]
    best = study.best_trial
    if best is not None:
        shown = ", ".join(f"{k}={_cell(v)}" for k, v in best.params.items())
        lines += ["", f"best: trial {best.number}, value {best.value:g}: {shown}"]
    return "\n".join(lines)


def _cell(value) -> str:
    """A table cell: numbers as %g (ints and categories as they are), empty for None."""
    if value is None:
        return ""
    return f"{value:g}" if isinstance(value, float) else str(value)


def _list(args) -> str:
    from frontierbo.io import markdown_table
    from frontierbo.study.create import study_summaries

    studies = study_summaries(storage=args.storage)
    if args.json:
        return json.dumps({"studies": studies})
    if not studies:
        return f"no studies in {args.storage}"
    body = [
        [s["name"], s["kind"], s["algorithm"], s["direction"], str(s["trials"]),
         ", ".join(f"{n} {state}" for state, n in sorted(s["states"].items())),
         "" if s["best_value"] is None else f"{s['best_value']:g}"]
        for s in studies
    ]  # fmt: skip
    header = ["study", "over", "algorithm", "direction", "trials", "states", "best value"]
    return markdown_table(header, body, "lllllll")


def _best(args) -> str:
    study = _load(args)
    best = study.best_trial
    if best is None:
        raise ValueError(f"study {study.name!r} has no told value yet")
    by_model = study.best_by_model()
    if args.json:
        out = {"trial": best.number, "value": best.value, "params": best.params}
        out |= {"row": best.row} if best.row is not None else {}
        if by_model is not None:
            trial, mean = by_model
            out["by_model"] = {"trial": trial.number, "mean": mean, "value": trial.value,
                               "params": trial.params}  # fmt: skip
        return json.dumps(out)
    lines = [f"best value: {best.value:g}, trial {best.number}: {_shown(best)}"]
    if by_model is not None:
        trial, mean = by_model
        lines.append(
            f"best by the model (posterior mean {mean:g}, told {trial.value:g}): trial "
            f"{trial.number}: {_shown(trial)}"
        )
    return "\n".join(lines)


def _shown(trial) -> str:
    row = "" if trial.row is None else f"row {trial.row}, "
    return row + ", ".join(f"{k}={_cell(v)}" for k, v in {**trial.carried, **trial.params}.items())


def _export(args) -> str:
    from frontierbo.io import write_text_atomic
    from frontierbo.study.records import export_text

    text = export_text(_load(args), args.format)
    if args.out is None:
        return text.rstrip("\n")
    write_text_atomic(args.out, text)
    return f"wrote {args.out}"


def _optimize(args) -> str:
    from frontierbo.study.command import CommandFailed, CommandObjective

    study = _load(args)
    fields = set(study.space.names if study.space is not None else study.columns)
    if study.table is not None:
        fields = {c.name for c in study.table.features}
    if args.trial_timeout is not None and args.trial_timeout <= 0:
        raise ValueError(f"--trial-timeout must be seconds > 0, got {args.trial_timeout:g}")
    objective = CommandObjective(args.command, fields, args.value_regex, args.trial_timeout)
    before = len(study.trials)

    def report(study, trial) -> None:
        what = (
            f"value {trial.value:g}" if trial.state == "complete"
            else f"failed ({objective.failures.get(trial.number, 'no value')})"
        )  # fmt: skip
        best = study.best_trial
        tail = "" if best is None else f"; best {best.value:g} (trial {best.number})"
        print(f"trial {trial.number} {what}: {_shown(trial)}{tail}", file=sys.stderr, flush=True)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # `report` says why a trial failed
            study.optimize(
                objective, n_trials=args.n_trials, timeout=args.timeout, n_jobs=args.n_jobs,
                catch=(CommandFailed,), callbacks=(report,),
            )  # fmt: skip
    except KeyboardInterrupt:
        mine = study.trials[before:]
        print(
            f"frontierbo: interrupted: {sum(t.state == 'complete' for t in mine)} trials told, "
            f"{sum(t.state == 'abandoned' for t in mine)} abandoned (their points may be asked "
            "again)", file=sys.stderr,
        )  # fmt: skip
        raise SystemExit(130) from None
    mine = study.trials[before:]
    counts = ", ".join(
        f"{sum(t.state == state for t in mine)} {state}" for state in ("complete", "fail")
    )
    best = study.best_trial
    head = f"study {study.name!r}: ran {len(mine)} trials ({counts})"
    return (
        head
        if best is None
        else f"{head}; best value {best.value:g}, trial {best.number}: {_shown(best)}"
    )


def _enqueue(args) -> str:
    trial = _load(args).enqueue_trial(params=args.params, row=args.row)
    return f"trial {trial.number} waits to be asked: {_shown(trial)}"


def _delete(args) -> str:
    from frontierbo.study.create import delete_study

    n = delete_study(name=args.name, storage=args.storage)
    return f"deleted study {args.name!r} and its {n} trials"


def _plot(args) -> str:
    from frontierbo.study.plots import plot_best_so_far

    study = _load(args)
    path = plot_best_so_far(study, args.out)
    return f"wrote {path}"
