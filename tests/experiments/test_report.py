"""The shared reproduction tail (frontierbo.experiments.report): Markdown tables, the published-
numbers loader, options, and a small fake reproduction run end to end (artefacts, resume)."""

from __future__ import annotations

import fnmatch
import json
import sys
import tomllib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import frontierbo.experiments.report as report_module
from frontierbo.experiments.report import (
    PUBLISHED_FILE,
    Reproduction,
    csv_text,
    figure_lines,
    fmt_pm,
    load_published,
)
from frontierbo.experiments.runner import RunSpec, seed_for
from frontierbo.experiments.store import ResultStore, write_text_atomic
from frontierbo.io import markdown_table, mean_stderr

ROOT = Path(__file__).resolve().parents[2]
SYSTEM_PACKAGES = ("frontierbo.po", "frontierbo.ldp", "frontierbo.quantum")


# -- Markdown tables ----------------------------------------------------------------------------
def test_markdown_table_exact_output():
    table = markdown_table(["a", "b"], [[1, "x"], [2.5, None]])
    assert table == "| a | b |\n|---|---|\n| 1 | x |\n| 2.5 | None |"
    aligned = markdown_table(["l", "r", "c"], [["1", "2", "3"]], align="lrc")
    assert aligned.splitlines()[1] == "|:---|---:|:---:|"
    assert markdown_table(["only"], []) == "| only |\n|---|"


def test_markdown_table_cells_cannot_break_the_table():
    table = markdown_table(["a|b", "c"], [["x | y", "two\nlines"]])
    assert table.splitlines() == ["| a\\|b | c |", "|---|---|", "| x \\| y | two lines |"]


@pytest.mark.parametrize(
    ("header", "rows", "align", "message"),
    [
        (["a", "b"], [[1]], None, r"row 0 has 1 cells, the header 2"),
        (["a", "b"], [[1, 2]], "l", r"align must have one of 'l', 'r', 'c' per column \(2\)"),
        (["a"], [[1]], "x", r"align must have one of"),
    ],
)
def test_markdown_table_rejects_bad_shapes(header, rows, align, message):
    with pytest.raises(ValueError, match=message):
        markdown_table(header, rows, align=align)


def test_number_and_csv_helpers():
    assert fmt_pm(0.12345, 0.0049) == "0.123 ± 0.005"
    assert fmt_pm(np.float64(42.0), 2.28, 2) == "42.00 ± 2.28"
    assert csv_text(["a", "b"], [[1, "x,y"], [None, 2.5]]) == 'a,b\r\n1,"x,y"\r\n,2.5\r\n'
    assert figure_lines([Path("/tmp/fig_a.png")]) == ["## Figures", "", "- `fig_a.png`"]


def test_mean_stderr_ddof():
    values = [[1.0, 10.0], [3.0, 10.0], [5.0, 13.0]]
    mean, se = mean_stderr(values)
    np.testing.assert_allclose(mean, [3.0, 11.0])
    np.testing.assert_allclose(se, [2.0 / np.sqrt(3), np.sqrt(3.0) / np.sqrt(3)])
    _, se0 = mean_stderr(values, ddof=0)
    np.testing.assert_allclose(se0, np.std(values, axis=0) / np.sqrt(3))
    mean1, se1 = mean_stderr([[2.0, 4.0]])
    np.testing.assert_array_equal(mean1, [2.0, 4.0])
    np.testing.assert_array_equal(se1, [0.0, 0.0])


# -- published numbers --------------------------------------------------------------------------
@pytest.mark.parametrize("package", SYSTEM_PACKAGES)
def test_every_system_loads_its_published_numbers(package):
    data = load_published(package)
    assert isinstance(data["paper"], str) and data["paper"]
    assert data == load_published(package)  # a fresh copy each time, equal content


def test_published_files_are_package_data_in_pyproject():
    """An installed wheel holds exactly the files [tool.setuptools.package-data] lists."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["frontierbo"]
    for package in SYSTEM_PACKAGES:
        relative = f"{package.split('.', 1)[1]}/{PUBLISHED_FILE}"
        assert (ROOT / "src" / "frontierbo" / relative).is_file()
        assert any(fnmatch.fnmatch(relative, p) for p in patterns), (relative, patterns)


def test_load_published_errors(tmp_path, monkeypatch):
    for name, content in (("nofile", None), ("badfile", "[1, 2]")):
        pkg = tmp_path / name
        pkg.mkdir()
        (pkg / "__init__.py").write_text("")
        if content is not None:
            (pkg / PUBLISHED_FILE).write_text(content)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(FileNotFoundError, match=r"nofile has no published\.json.*package-data"):
        load_published("nofile")
    with pytest.raises(ValueError, match="must be a JSON object with a 'paper' string"):
        load_published("badfile")
    for name in ("nofile", "badfile"):
        sys.modules.pop(name, None)


# -- a fake reproduction, end to end ------------------------------------------------------------
CALLS: list[str] = []  # run_ids the worker computed (n_jobs=1: the worker runs in this process)


def square_worker(spec: RunSpec) -> dict:
    CALLS.append(spec.run_id)
    noise = np.random.default_rng(spec.seed).normal(0.0, 0.1)
    return {"value": spec.config["x"] ** 2 + noise}


def _specs(options) -> list[RunSpec]:
    specs = []
    for i, name in enumerate(options.datasets):
        for run in range(options.runs):
            config = {"x": options["scale"] * (i + 1)}
            specs.append(RunSpec(f"{name}|run={run}", config, seed_for(options.seed, name, run)))
    return specs


def _summarise(records, options) -> dict:
    groups: dict[str, list[float]] = {}
    for rec in records:
        groups.setdefault(rec["run_id"].split("|")[0], []).append(rec["value"])
    return {
        "by_dataset": {name: [float(v) for v in mean_stderr(vals)] for name, vals in groups.items()}
    }


def _figures(result, out) -> list[Path]:
    return [write_text_atomic(out / "fig_values.txt", json.dumps(result["by_dataset"]))]


def _markdown(result, figures) -> str:
    rows = [[name, fmt_pm(m, se)] for name, (m, se) in result["by_dataset"].items()]
    lines = [f"# Fake ({result['paper']})", "", markdown_table(["dataset", "value"], rows), ""]
    return "\n".join(lines + figure_lines(figures) + [""])


FAKE = Reproduction(
    name="fake",
    paper="Nobody, A Fake Paper, 2024",
    datasets=("a", "b", "c"),
    defaults={"runs": 4, "scale": 1.0},
    quick={"runs": 2},
    build_specs=_specs,
    worker=square_worker,
    summarise=_summarise,
    csv_header=("dataset", "mean", "stderr"),
    csv_rows=lambda result: ([name, *v] for name, v in result["by_dataset"].items()),
    figures=_figures,
    markdown=_markdown,
    header=lambda options: {"runs": options.runs, "seed": options.seed, "scale": options["scale"]},
)


def test_fake_reproduction_writes_every_artefact(tmp_path):
    CALLS.clear()
    result = FAKE.reproduce(tmp_path, datasets=["b", "a"], quick=True, seed=3, progress=False)
    assert list(result) == ["paper", "runs", "seed", "scale", "seconds", "by_dataset"]
    assert result["runs"] == 2 and result["seed"] == 3 and isinstance(result["seconds"], float)
    assert list(result["by_dataset"]) == ["b", "a"] and len(CALLS) == 4
    stored = json.loads((tmp_path / "results.json").read_text())
    assert stored == json.loads(json.dumps(result))
    b_mean, b_se = result["by_dataset"]["b"]  # x = 1 for the first dataset given
    assert abs(b_mean - 1.0) < 0.5 and b_se > 0
    assert (tmp_path / "summary.csv").read_bytes().decode() == csv_text(
        ["dataset", "mean", "stderr"], [[k, *v] for k, v in result["by_dataset"].items()]
    )
    report = (tmp_path / "report.md").read_text()
    assert report.startswith(
        "# Fake (Nobody, A Fake Paper, 2024)\n\n| dataset | value |\n|---|---|\n"
    )
    assert f"| b | {fmt_pm(b_mean, b_se)} |" in report and report.endswith("- `fig_values.txt`\n")
    assert (tmp_path / "fig_values.txt").is_file()
    assert len(ResultStore(tmp_path / "runs.jsonl").load()) == 4
    assert not list(tmp_path.glob(".*.tmp"))  # no temp file left behind


def test_fake_reproduction_resumes_and_recomputes_nothing(tmp_path):
    CALLS.clear()
    first = FAKE.reproduce(tmp_path, progress=False)
    assert len(CALLS) == 3 * 4
    CALLS.clear()
    again = FAKE.reproduce(tmp_path, progress=False)
    assert CALLS == [] and again["by_dataset"] == first["by_dataset"]
    with pytest.raises(ValueError, match="different config"):
        FAKE.reproduce(tmp_path, scale=2.0, progress=False)  # same run_ids, other parameters


def test_fake_reproduction_interrupted_resumes_without_repeating(tmp_path):
    def dying(spec):
        if len(CALLS) == 5:
            raise KeyboardInterrupt("killed")
        return square_worker(spec)

    CALLS.clear()
    with pytest.raises(KeyboardInterrupt):
        replace(FAKE, worker=dying).reproduce(tmp_path, progress=False)
    assert not (tmp_path / "results.json").exists()
    done = [r["run_id"] for r in ResultStore(tmp_path / "runs.jsonl").load()]
    assert done == CALLS
    CALLS.clear()
    resumed = FAKE.reproduce(tmp_path, progress=False)
    assert len(CALLS) == 12 - 5 and not set(CALLS) & set(done)
    fresh = FAKE.reproduce(tmp_path / "fresh", progress=False)
    assert resumed["by_dataset"] == fresh["by_dataset"]


def test_a_failing_report_keeps_the_previous_artefacts(tmp_path):
    FAKE.reproduce(tmp_path, progress=False)
    before = {name: (tmp_path / name).read_bytes() for name in ("report.md", "summary.csv")}

    def broken(result, figures):
        raise RuntimeError("report bug")

    with pytest.raises(RuntimeError, match="report bug"):
        replace(FAKE, markdown=broken).reproduce(tmp_path, progress=False)
    assert (tmp_path / "report.md").read_bytes() == before["report.md"]
    json.loads((tmp_path / "results.json").read_text())  # complete, never half written
    assert not list(tmp_path.glob(".*.tmp"))


def test_options_are_resolved_and_validated_before_anything_is_written(tmp_path):
    out = tmp_path / "out"
    full, quick = FAKE.options(out), FAKE.options(out, quick=True, runs=None, scale=None)
    assert (full.runs, full["scale"], full.datasets, full.quick) == (4, 1.0, ("a", "b", "c"), False)
    assert (quick.runs, quick["scale"], quick.quick) == (2, 1.0, True)
    assert FAKE.options(out, quick=True, runs=7, scale=3.0).runs == 7
    with pytest.raises(
        ValueError, match=r"--datasets must be among \['a', 'b', 'c'\], got \['z'\]"
    ):
        FAKE.reproduce(out, datasets=["a", "z"])
    with pytest.raises(ValueError, match=r"--datasets must be among"):
        FAKE.reproduce(out, datasets=[])
    with pytest.raises(
        TypeError, match=r"fake takes no option 'beta_scale'; its options are \['scale'\]"
    ):
        FAKE.reproduce(out, beta_scale=0.1)
    with pytest.raises(ValueError, match=r"runs \(--runs\)"):
        FAKE.reproduce(out, runs=0)
    with pytest.raises(ValueError, match=r"seed \(--seed\)"):
        FAKE.reproduce(out, seed=-1)
    with pytest.raises(ValueError, match=r"n_jobs \(--jobs\)"):
        FAKE.reproduce(out, n_jobs=0)
    with pytest.raises(ValueError, match="scheduler"):
        FAKE.reproduce(out, scheduler="no-such-scheduler")
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match="--out .* is not a directory"):
        FAKE.reproduce(tmp_path / "file")
    assert not out.exists()
    with pytest.raises(ValueError, match="quick settings"):
        replace(FAKE, quick={"T": 5})


def test_n_jobs_and_scheduler_are_passed_to_run_sweep(tmp_path, monkeypatch):
    seen = {}
    real = report_module.run_sweep

    def spy(specs, worker, store, n_jobs, progress, **kw):
        seen.update(n_jobs=n_jobs, progress=progress, **kw)
        return real(specs, worker, store, 1, progress, desc=kw["desc"])

    monkeypatch.setattr(report_module, "run_sweep", spy)
    FAKE.reproduce(tmp_path, n_jobs=3, scheduler="local", progress=False, datasets="a")
    assert seen == {"n_jobs": 3, "progress": False, "desc": "fake", "scheduler": "local"}


def test_parallel_and_sequential_sweeps_agree(tmp_path):
    a = FAKE.reproduce(tmp_path / "a", progress=False)
    b = FAKE.reproduce(tmp_path / "b", n_jobs=2, progress=False)
    assert a["by_dataset"] == b["by_dataset"]
