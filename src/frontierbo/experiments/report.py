"""The tail every paper reproduction shares: options, sweep, results.json, CSV, figures, report.md.

A system declares its reproduction once, as a :class:`Reproduction`: the datasets it offers, its
defaults and ``--quick`` settings (data), how options become :class:`RunSpec` s, the worker of
one run, and how records become a summary, CSV rows, figures and Markdown.
:meth:`Reproduction.reproduce` does the rest the same way for every system: it validates the
options before anything is written (one error naming ``--datasets``, ``--runs``, ...), runs or
resumes the sweep into ``<out>/runs.jsonl`` (:func:`~frontierbo.experiments.runner.run_sweep`,
``n_jobs`` and ``scheduler`` passed along), writes results.json, summary.csv, the figures and
report.md, each atomically, and returns the results dict. It holds an exclusive lock on the
output directory throughout (:func:`~frontierbo.experiments.store.lock_directory`): a second
reproduction into the same ``--out`` refuses at once.

Data: before the output directory is created, every data file the chosen datasets read
(:attr:`Reproduction.inputs`) is found and checksummed (:func:`frontierbo.data.check_inputs`): a
missing file is one error naming the dataset, the places searched and the fetch command, and a
documented substitute standing in for a missing dataset is one line on stderr at the start (and
one in report.md). A run that fails later removes the output directory it created if the
directory holds nothing else than its lock file.

Published numbers live in each system package's ``published.json`` (:func:`load_published`),
not in code; report.md tables come from :func:`frontierbo.io.markdown_table`; every mean ± standard error
from :func:`frontierbo.io.mean_stderr`.
"""

from __future__ import annotations

import csv
import io
import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

from frontierbo._validation import check_int
from frontierbo.data import Input
from frontierbo.data import check_inputs as check_data
from frontierbo.experiments.runner import RunSpec, run_sweep
from frontierbo.experiments.schedulers import check_scheduler
from frontierbo.experiments.store import LOCK_FILE, ResultStore, lock_directory
from frontierbo.io import check_out_dir, write_json_atomic, write_text_atomic

__all__ = [
    "PUBLISHED_FILE",
    "Options",
    "Reproduction",
    "csv_text",
    "figure_lines",
    "fmt_pm",
    "load_published",
]

#: Name of the published-numbers file inside a system package (listed as package data).
PUBLISHED_FILE = "published.json"
#: The artefacts every reproduction writes into its output directory (figures besides).
RUNS_FILE, RESULTS_FILE, CSV_FILE, REPORT_FILE = (
    "runs.jsonl",
    "results.json",
    "summary.csv",
    "report.md",
)


@dataclass(frozen=True)
class Options:
    """The resolved options of one reproduction: what every system takes, plus its own.

    ``runs`` is None only where the system's configurations carry their own number of runs.
    ``params`` holds the system's options (after its defaults and ``--quick`` settings); read
    them as ``options["T"]``.
    """

    out: Path
    datasets: tuple[str, ...]
    quick: bool
    runs: int | None
    seed: int
    params: Mapping[str, Any] = field(default_factory=dict)
    skipped: Mapping[str, str] = field(default_factory=dict)

    def __getitem__(self, name: str) -> Any:
        return self.params[name]


def _header(options: Options) -> dict:
    return {"runs": options.runs, "seed": options.seed}


def _no_inputs(options: Options) -> tuple[Input, ...]:
    return ()


@dataclass(frozen=True)
class Reproduction:
    """What a system declares to reproduce its paper (see the module docstring).

    Attributes:
        name: the command name (``frontierbo reproduce <name>``), also the progress-bar label.
        paper: the citation written into results.json and report.md.
        datasets: the allowed values of ``--datasets``, in report order; the default is all.
        defaults: every option the system takes and its value in a full run, including
            ``"runs"`` (None: each configuration's own). Options not listed here are rejected.
        quick: the values ``--quick`` overrides (e.g. ``{"runs": 3}``).
        build_specs: ``build_specs(options) -> list[RunSpec]``; run_ids and seeds depend only
            on the options, so a stored sweep resumes.
        worker: ``worker(spec) -> dict``, module-level (picklable: it runs in other processes).
        summarise: ``summarise(records, options) -> dict``, the summary fields of results.json.
        csv_header, csv_rows: the columns of summary.csv and ``csv_rows(result)``, its rows.
        figures: ``figures(result, out) -> list[Path]``, written atomically into ``out``.
        markdown: ``markdown(result, figures) -> str``, the text of report.md.
        header: ``header(options) -> dict``, the fields of results.json that describe the
            invocation (after ``"paper"``, before ``"seconds"``); default: runs and seed.
        check: ``check(params) -> params``, validation of the system's own options (it raises
            one ValueError / TypeError naming the option), or None.
        published: the system's published numbers (:func:`load_published`).
        unavailable: ``unavailable(dataset) -> reason or None``: a dataset that needs something
            not installed (an extra, a data file). Left out of the default "all datasets" with
            one line on stderr and in report.md naming the reason and the command that enables
            it; named explicitly with ``--datasets``, it is an error carrying that reason.
        inputs: ``inputs(options) -> [Input]``: every data file the chosen datasets read
            (:class:`frontierbo.data.Input`), each with its documented substitute if it has
            one. Checked before anything is written or run (:meth:`check_inputs`).
    """

    name: str
    paper: str
    datasets: tuple[str, ...]
    defaults: Mapping[str, Any]
    quick: Mapping[str, Any]
    build_specs: Callable[[Options], list[RunSpec]]
    worker: Callable[[RunSpec], dict]
    summarise: Callable[[list[dict], Options], dict]
    csv_header: tuple[str, ...]
    csv_rows: Callable[[dict], Iterable[Sequence]]
    figures: Callable[[dict, Path], list[Path]]
    markdown: Callable[[dict, list[Path]], str]
    header: Callable[[Options], dict] = _header
    check: Callable[[dict], dict] | None = None
    published: Mapping[str, Any] = field(default_factory=dict)
    unavailable: Callable[[str], str | None] = lambda dataset: None
    inputs: Callable[[Options], Iterable[Input]] = _no_inputs

    def __post_init__(self):
        if not self.datasets:
            raise ValueError(f"Reproduction {self.name!r} must offer at least one dataset")
        unknown = set(self.quick) - set(self.defaults)
        if unknown:
            raise ValueError(f"quick settings {sorted(unknown)} are not options of {self.name}")

    def options(self, out, *, datasets=None, quick: bool = False, runs=None, seed=0, **given):
        """Resolve the options: the defaults, then the quick settings if ``quick``, then every
        option given (None: not given). Raises before anything is written."""
        unknown = sorted(set(given) - set(self.defaults))
        if unknown:
            raise TypeError(
                f"{self.name} takes no option {unknown[0]!r}; its options are "
                f"{sorted(k for k in self.defaults if k != 'runs')}"
            )
        params = {**self.defaults, **(self.quick if quick else {})}
        params.update((k, v) for k, v in {"runs": runs, **given}.items() if v is not None)
        runs = params.pop("runs", None)
        if out is None:
            raise TypeError("out (--out) must be a directory path, got None")
        out = check_out_dir(out)  # a bad --out is reported first, whatever is installed
        names = self._datasets(datasets)
        reasons = {name: self.unavailable(name) for name in names}
        skipped = {name: why for name, why in reasons.items() if why is not None}
        runs = None if runs is None else check_int(runs, "runs (--runs)", low=1)
        seed = check_int(seed, "seed (--seed)", low=0)
        params = MappingProxyType(self.check(params) if self.check else params)
        if skipped and datasets is not None:
            name, why = next(iter(skipped.items()))
            if "pip install" not in why:
                # Missing data only: the data check's message names the places searched. A
                # missing extra comes first (its reason names the data too), as it must be
                # installed before anything can run.
                check_data(
                    self.inputs(Options(out, tuple(skipped), bool(quick), runs, seed, params))
                )
            raise ImportError(f"--datasets {name}: {why}")
        if len(skipped) == len(names):
            raise ImportError(
                f"no dataset of {self.name} can run here: {next(iter(skipped.values()))}"
            )
        return Options(
            out=out,
            datasets=tuple(name for name in names if name not in skipped),
            skipped=MappingProxyType(skipped),
            quick=bool(quick),
            runs=runs,
            seed=seed,
            params=params,
        )

    def _datasets(self, datasets) -> tuple[str, ...]:
        if datasets is None:
            return self.datasets
        names = (datasets,) if isinstance(datasets, str) else tuple(datasets)
        unknown = [name for name in names if name not in self.datasets]
        if unknown or not names:
            raise ValueError(
                f"--datasets must be among {list(self.datasets)}, got {unknown or list(names)}"
            )
        return tuple(dict.fromkeys(names))  # a repeated name would repeat run_ids

    def reproduce(
        self, out, *, datasets=None, quick=False, runs=None, n_jobs=1, seed=0, scheduler=None,
        progress=True, **options,
    ) -> dict:  # fmt: skip
        """Run (or resume) the reproduction into ``out``, write every artefact, return the
        results dict (see :meth:`run`). Every system's ``reproduce`` is this.

        ``datasets``: a subset of :attr:`datasets` (default all). ``quick``: apply the
        :attr:`quick` settings. ``runs``: runs per configuration (default: the system's).
        ``n_jobs``, ``scheduler``: where the runs execute (see
        :func:`~frontierbo.experiments.runner.run_sweep`). ``seed``: the base seed of every
        run. ``options``: the system's own (the keys of :attr:`defaults`; None: the default).
        """
        options = self.options(out, datasets=datasets, quick=quick, runs=runs, seed=seed, **options)
        return self.run(options, n_jobs=n_jobs, scheduler=scheduler, progress=progress)

    def check_inputs(self, options: Options) -> tuple[str, ...]:
        """Find and checksum every data file of :attr:`inputs` (nothing is written or run).

        Returns one line per substitute that will stand in for a missing dataset. Raises
        FileNotFoundError (a required file is missing: the dataset, the places searched, the
        fetch command) or ValueError (a file's sha256 is not the registry's).
        """
        return tuple(check_data(self.inputs(options)))

    def run(self, options: Options, *, n_jobs=1, scheduler=None, progress: bool = True) -> dict:
        """Run (or resume) the sweep into ``options.out`` and write every artefact.

        Every input is checked first (:meth:`check_inputs`): a missing one fails before the
        output directory is created. The datasets left out and the substitutes in use are
        one line each on stderr. If the run fails, an output directory this call created is
        removed again when it holds nothing but the lock file.

        Returns the results dict: ``paper``, the :attr:`header` fields, ``seconds`` (wall time
        of this call, stored runs are reused), the :attr:`summarise` fields, and ``skipped``
        and ``substitutes`` where there are any.
        """
        n_jobs = check_int(n_jobs, "n_jobs (--jobs)", low=-1)
        if n_jobs == 0:
            raise ValueError("n_jobs (--jobs) must be an integer >= 1 or -1 (all cores), got 0")
        check_scheduler(scheduler)  # a bad scheduler fails before the problems are built
        substitutes = self.check_inputs(options)
        for name, why in options.skipped.items():
            _note(f"{self.name}: dataset {name} is left out: {why}")
        for line in substitutes:
            _note(f"{self.name}: {line}")
        created = _new_directories(options.out)
        # One sweep per directory at a time: a second one would run everything again beside
        # this one and race its appends; it refuses at once instead (the lock dies with us).
        with lock_directory(options.out):
            try:
                return self._run_locked(options, n_jobs, scheduler, progress, substitutes)
            except BaseException:
                _remove_if_empty(created)  # still holding the lock: nobody else is inside
                raise

    def _run_locked(
        self, options: Options, n_jobs, scheduler, progress: bool, substitutes: Sequence[str] = ()
    ) -> dict:
        started = time.time()
        store, specs = ResultStore(options.out / RUNS_FILE), self.build_specs(options)
        kw = {"desc": self.name, "scheduler": scheduler}
        records = run_sweep(specs, self.worker, store, n_jobs, progress, **kw)
        summary = self.summarise(records, options)
        seconds = round(time.time() - started, 1)
        result = {"paper": self.paper, **self.header(options), "seconds": seconds, **summary}
        if options.skipped:
            result["skipped"] = dict(options.skipped)
        if substitutes:
            result["substitutes"] = list(substitutes)
        self.write_artefacts(result, options.out)
        return result

    def write_artefacts(self, result: dict, out: Path) -> list[Path]:
        """results.json, summary.csv, the figures and report.md (each atomic); the figures."""
        write_json_atomic(out / RESULTS_FILE, result)
        write_text_atomic(out / CSV_FILE, csv_text(self.csv_header, self.csv_rows(result)))
        figures = [Path(p) for p in self.figures(result, out)]
        write_text_atomic(
            out / REPORT_FILE, _with_data_lines(self.markdown(result, figures), result)
        )
        return figures


def _with_data_lines(markdown: str, result: dict) -> str:
    """report.md with a line, under its title, naming the datasets left out and why, and one
    naming the substitutes that stood in for missing datasets."""
    lines = []
    if result.get("skipped"):
        by_reason: dict[str, list[str]] = {}
        for name, why in result["skipped"].items():
            by_reason.setdefault(why, []).append(f"`{name}`")
        reasons = "; ".join(f"{', '.join(names)}: {why}" for why, names in by_reason.items())
        lines.append(f"**Skipped** {reasons}.")
    if result.get("substitutes"):
        lines.append(f"**Substitute data**: {'; '.join(result['substitutes'])}.")
    if not lines:
        return markdown
    title, _, rest = markdown.partition("\n")
    return f"{title}\n\n" + "\n\n".join(lines) + f"\n{rest}"


def _note(text: str) -> None:
    """One line on stderr, where the CLI's errors and warnings go."""
    print(f"frontierbo: note: {text}", file=sys.stderr, flush=True)


def _new_directories(out: Path) -> list[Path]:
    """``out`` and those of its ancestors that do not exist yet, deepest first."""
    created, path = [], Path(out)
    while not path.exists() and path != path.parent:
        created.append(path)
        path = path.parent
    return created


def _remove_if_empty(created: list[Path]) -> None:
    """Remove the directories a failed run created (``created``, deepest first) when the
    output directory holds nothing but the lock file and empty folders; best effort, so that
    the run's own error is the one reported."""
    if not created:
        return
    out = created[0]
    try:
        for folder, _, files in os.walk(out):
            if any(Path(folder, f) != out / LOCK_FILE for f in files):
                return  # something of the run's: keep it (a rerun resumes from it)
        (out / LOCK_FILE).unlink(missing_ok=True)
        for folder, _, _ in sorted(os.walk(out), key=lambda w: -len(Path(w[0]).parts)):
            os.rmdir(folder)
        for parent in created[1:]:
            os.rmdir(parent)  # an ancestor made for --out only; fails if anything else is in it
    except OSError:
        pass


def load_published(package: str) -> dict:
    """The published numbers of a system: ``<package>/published.json``, a JSON object with at
    least the ``"paper"`` citation. Read as package data, so an installed wheel finds it too."""
    resource = resources.files(package).joinpath(PUBLISHED_FILE)
    try:
        text = resource.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{package} has no {PUBLISHED_FILE}; it must be listed in "
            "[tool.setuptools.package-data] of pyproject.toml"
        ) from None
    data = json.loads(text)
    if not isinstance(data, dict) or not isinstance(data.get("paper"), str):
        raise ValueError(f"{package}/{PUBLISHED_FILE} must be a JSON object with a 'paper' string")
    return data


def fmt_pm(mean, stderr, digits: int = 3) -> str:
    """``"mean ± stderr"`` with ``digits`` decimals, the cell of every mean in report.md."""
    return f"{mean:.{digits}f} ± {stderr:.{digits}f}"


def csv_text(header: Sequence, rows: Iterable[Sequence]) -> str:
    """A CSV file's text (``csv`` module dialect: CRLF line ends) from a header and rows."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue()


def figure_lines(figures: Iterable[Path], captions: Mapping[str, str] | None = None) -> list[str]:
    """report.md's list of figures: a ``## Figures`` heading and one bullet per file name, with
    the file's caption from ``captions`` (by file name; e.g. what its shaded bands are) as a
    line under it."""
    lines = ["## Figures", ""]
    for p in figures:
        name = Path(p).name
        lines.append(f"- `{name}`")
        if captions and captions.get(name):
            lines.append(f"  - {captions[name]}")
    return lines
