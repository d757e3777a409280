"""A reproduction checks every data input before it runs (issue 60 item 3).

A missing input is one line (the dataset, where it was looked for, how to get it), exit status
2, before the output folder exists; a corrupt one likewise; a documented substitute standing in
for a missing dataset is one line on stderr at the start and one in report.md; a run that fails
later removes an output folder it created and left empty. The data roots are a temporary folder
(``$FRONTIERBO_DATA``) and nothing else, and the sweep is replaced by one that fails the test, so
a check that lets a run start is caught at once instead of running for minutes.
"""

from __future__ import annotations

import hashlib
import importlib
import json

import pytest

import frontierbo.experiments.report as report_module
from frontierbo import data
from frontierbo.data import DATA_ENV, DataFile, Dataset, Input, check_inputs
from frontierbo.experiments.report import Reproduction
from frontierbo.experiments.runner import RunSpec
from frontierbo.experiments.store import LOCK_FILE
from frontierbo.registry import systems


class SweepStarted(AssertionError):
    """Raised by the test's stand-in for the sweep: the check let a run start."""


@pytest.fixture
def root(tmp_path, monkeypatch):
    """An empty data root, the only one searched; any sweep that starts fails the test."""
    root = tmp_path / "data"
    root.mkdir()
    monkeypatch.setenv(DATA_ENV, str(root))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(data, "searched_roots", lambda: [(f"${DATA_ENV}", root)])
    monkeypatch.chdir(tmp_path)

    def no_sweep(*args, **kwargs):
        raise SweepStarted("a run started although an input is missing")

    monkeypatch.setattr(report_module, "run_sweep", no_sweep)
    return root


@pytest.fixture
def stop_after_check(monkeypatch):
    """Make every reproduction fail just after its checks (the out folder is then created)."""

    def stop(self, *args, **kwargs):
        raise RuntimeError("stopped by the test after the checks")

    monkeypatch.setattr(Reproduction, "_run_locked", stop)


def _put(root, relative: str, text: str = "not the registered bytes\n"):
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _notes(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("frontierbo: note:")]


# -- a missing or corrupt input: one line, exit 2, nothing created, nothing run ----------------
def test_a_missing_dataset_named_with_datasets_is_one_line_before_anything_runs(root, cli):
    out = root.parent / "out"
    status, text, err = cli(["reproduce", "macro-bo", "--quick", "--datasets", "temperature",
                             "--out", out])  # fmt: skip
    assert status == 2 and text == ""
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("frontierbo: error: temperature (E3) needs dataset 'macro-temperature'")
    assert "macro/temperature/all_neighbours.txt" in err
    assert f"searched ${DATA_ENV} ({root})" in err  # where it was looked for
    assert "`frontierbo data fetch macro-temperature`" in err and f"set {DATA_ENV}" in err
    assert not out.exists()


def test_a_corrupt_input_fails_before_plankton_runs_for_minutes(root, cli):
    """The issue's case: E1 ran for minutes, then E3's data failed. Now the E3 files are
    checked (present, so not skipped, but not the registered bytes) before any run."""
    for relative in data.registry()["macro-temperature"].files:
        _put(root, relative.path)
    out = root.parent / "out"
    status, _, err = cli(["reproduce", "macro-bo", "--quick", "--out", out])
    assert status == 2 and len(err.strip().splitlines()) == 1, err
    assert "temperature (E3)" in err and "dataset 'macro-temperature'" in err
    assert "macro/temperature/all_neighbours.txt" in err and "sha256" in err
    assert "`frontierbo data fetch macro-temperature --force`" in err
    assert not out.exists()


def test_an_existing_out_folder_is_left_as_it_was(root, cli):
    out = root.parent / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    status, _, err = cli(["reproduce", "macro-bo", "--quick", "--datasets", "temperature",
                          "--out", out])  # fmt: skip
    assert status == 2 and "macro-temperature" in err
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]  # no lock file either


def test_a_run_that_fails_after_creating_its_folder_removes_it(root, cli):
    out = root.parent / "out"
    status, _, err = cli(["reproduce", "macro-bo", "--quick", "--datasets", "traffic",
                          "--experiments", "e1", "--out", out])  # fmt: skip
    assert status == 2 and "none of --experiments e1 runs on --datasets traffic" in err
    assert not out.exists()


def test_quantum_source_reference_names_the_dataset_and_why_it_cannot_be_fetched(root, cli):
    out = root.parent / "out"
    status, _, err = cli(["reproduce", "quantum-bo", "--quick", "--source", "reference",
                          "--out", out])  # fmt: skip
    assert status == 2 and len(err.strip().splitlines()) == 1, err
    assert "needs dataset 'quantum-reference'" in err and f"({root})" in err
    assert "`frontierbo data fetch quantum-reference` cannot download it" in err
    assert f"if you have a copy, set {DATA_ENV}" in err
    assert not out.exists()


NOT_PRIVATE = "ignore::frontierbo.po.random_projection.NotDifferentiallyPrivateWarning"


# -- substitutes and skipped datasets: one line each on stderr at the start --------------------
SUBSTITUTES = [
    ("macro-bo", ["--datasets", "traffic", "--experiments", "e2"], "traffic (E2)", "macro-traffic"),
    ("po-gp-ucb", ["--datasets", "property"], "private property prices (property)", "ura"),
    ("ldp-bo", ["--datasets", "light"], "Light sensors (light)", "ldp"),
    ("quantum-bo", ["--datasets", "synthetic-gauss0.3"], "the synthetic settings",
     "quantum-reference"),
    ("bos2", ["--datasets", "mnist"], "the MNIST instances", "mnist-idx"),
]  # fmt: skip


@pytest.mark.filterwarnings(NOT_PRIVATE)
@pytest.mark.parametrize(("name", "args", "used_for", "dataset"), SUBSTITUTES)
def test_a_substitute_is_announced_on_stderr_and_a_failed_run_leaves_no_folder(
    name, args, used_for, dataset, root, cli, stop_after_check
):
    reproduction = _reproduction(name)
    why = reproduction.unavailable(args[1])
    if why is not None:
        pytest.skip(f"{name} --datasets {args[1]}: {why}")
    out = root.parent / "results" / "nested" / "out"
    status, _, err = cli(["reproduce", name, "--quick", *args, "--out", out])
    assert status == 2 and err.rstrip().endswith("stopped by the test after the checks"), err
    notes = [line for line in _notes(err) if "stands in" in line]
    assert len(notes) == 1, err
    assert notes[0].startswith(f"frontierbo: note: {name}: {used_for}: dataset '{dataset}' was "
                               "not found under a data root, so ")  # fmt: skip
    assert f"{DATA_ENV}" in notes[0]
    # the run created out (and its parents) and failed: nothing of it is left
    assert not (root.parent / "results").exists()


@pytest.mark.filterwarnings(NOT_PRIVATE)
def test_the_loan_substitute_names_the_file_it_stands_in_for(root, cli, stop_after_check):
    status, _, err = cli(["reproduce", "po-gp-ucb", "--quick", "--datasets", "loan",
                          "--out", root.parent / "out"])  # fmt: skip
    assert status == 2
    (note,) = _notes(err)
    assert "file 'lendingclub/loans.csv' was not found" in note
    assert "calibrated LendingClub-like substitute" in note
    assert "`frontierbo data fetch` has no dataset for it" in note


def test_a_dataset_left_out_by_default_is_announced_too(root, cli, stop_after_check):
    status, _, err = cli(["reproduce", "macro-bo", "--quick", "--out", root.parent / "out"])
    assert status == 2
    skipped = [line for line in _notes(err) if "left out" in line]
    assert skipped == [
        "frontierbo: note: macro-bo: dataset temperature is left out: needs the Intel-lab "
        "corridor graph (macro/temperature/*) under a data root: frontierbo data fetch "
        "macro-temperature"
    ]
    assert any("dataset 'macro-traffic'" in line for line in _notes(err))
    assert not (root.parent / "out").exists()


def test_every_system_declares_its_inputs():
    for system in systems():
        reproduction = _reproduction(system.name)
        assert reproduction.inputs is not report_module._no_inputs, system.name


def _reproduction(name: str) -> Reproduction:
    """The :class:`Reproduction` behind ``frontierbo reproduce <name>``."""
    (system,) = [s for s in systems() if s.name == name]
    package = system.reproduction.reproduce.split(":")[0].rsplit(".", 1)[0]
    return importlib.import_module(f"{package}.report").REPRODUCTION


# -- a small reproduction end to end: report.md, results.json, the folder on failure ------------
CALLS: list[str] = []


def _worker(spec: RunSpec) -> dict:
    CALLS.append(spec.run_id)
    if spec.config.get("fail"):
        raise RuntimeError(f"run {spec.run_id} failed")
    return {"value": 1.0}


TOY = Reproduction(
    name="toy",
    paper="A Toy Paper",
    datasets=("real",),
    defaults={"runs": 2, "fail_from": None},
    quick={},
    build_specs=lambda options: [
        RunSpec(f"r{i}", {"fail": options["fail_from"] is not None and i >= options["fail_from"]})
        for i in range(options.runs)
    ],
    worker=_worker,
    summarise=lambda records, options: {"n": len(records)},
    csv_header=("n",),
    csv_rows=lambda result: [[result["n"]]],
    figures=lambda result, out: [],
    markdown=lambda result, figures: "# Toy\n\nbody\n",
    inputs=lambda options: [Input("the real runs", ("toy/real.csv",), "a generated stand-in")],
)


@pytest.fixture
def toy_registry(tmp_path, monkeypatch):
    """An empty data root and a registry holding one fetchable file, toy/real.csv."""
    root = tmp_path / "data"
    root.mkdir()
    body = b"x,y\n1,2\n"
    entry = DataFile("toy/real.csv", hashlib.sha256(body).hexdigest(), len(body), "https://x/y")
    toy = Dataset("toy-data", "a toy", "here", "CC0", "tests", (entry,))
    monkeypatch.setattr(data, "registry", lambda: {"toy-data": toy})
    monkeypatch.setattr(data, "searched_roots", lambda: [("test root", root)])
    monkeypatch.setenv(DATA_ENV, str(root))
    return root, body


def test_the_substitute_line_is_in_report_md_and_results_json(toy_registry, tmp_path, capsys):
    CALLS.clear()
    result = TOY.reproduce(tmp_path / "out", progress=False)
    err = capsys.readouterr().err
    (note,) = _notes(err)
    assert note == (
        "frontierbo: note: toy: the real runs: dataset 'toy-data' was not found under a data "
        "root, so a generated stand-in stands in for it (get it with `frontierbo data fetch "
        f"toy-data` or set {DATA_ENV} to a data root holding toy/real.csv)"
    )
    assert result["substitutes"] == [note.removeprefix("frontierbo: note: toy: ")]
    report = (tmp_path / "out" / "report.md").read_text()
    assert report.startswith(f"# Toy\n\n**Substitute data**: {result['substitutes'][0]}.\n")
    stored = json.loads((tmp_path / "out" / "results.json").read_text())
    assert stored["substitutes"] == result["substitutes"]


def test_a_present_input_with_the_registered_bytes_runs_without_a_note(toy_registry, tmp_path,
                                                                       capsys):  # fmt: skip
    root, body = toy_registry
    (root / "toy").mkdir()
    (root / "toy" / "real.csv").write_bytes(body)
    result = TOY.reproduce(tmp_path / "out", progress=False)
    assert "substitutes" not in result and _notes(capsys.readouterr().err) == []
    assert "Substitute" not in (tmp_path / "out" / "report.md").read_text()


def test_a_failed_run_keeps_a_folder_holding_stored_runs(toy_registry, tmp_path):
    CALLS.clear()
    out = tmp_path / "out"
    with pytest.raises(RuntimeError, match="run r1 failed"):
        TOY.reproduce(out, fail_from=1, progress=False)
    assert CALLS == ["r0", "r1"]
    assert (out / "runs.jsonl").is_file()  # r0 is stored: a rerun resumes from it
    with pytest.raises(RuntimeError, match="run r0 failed"):
        TOY.reproduce(tmp_path / "empty", fail_from=0, progress=False)
    assert not (tmp_path / "empty").exists()


def test_a_failed_run_in_an_existing_folder_keeps_the_folder(toy_registry, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(RuntimeError, match="run r0 failed"):
        TOY.reproduce(out, fail_from=0, progress=False)
    assert [p.name for p in out.iterdir()] == [LOCK_FILE]


# -- check_inputs itself -------------------------------------------------------------------------
def test_check_inputs_messages(toy_registry):
    root, body = toy_registry
    required = [Input("the toy", ("toy/real.csv",))]
    with pytest.raises(FileNotFoundError) as missing:
        check_inputs(required)
    message = str(missing.value)
    assert "\n" not in message
    assert message.startswith("the toy needs dataset 'toy-data': toy/real.csv not found; ")
    assert f"searched test root ({root})" in message
    assert "`frontierbo data fetch toy-data`" in message
    (root / "toy").mkdir()
    (root / "toy" / "real.csv").write_bytes(body + b"changed")
    with pytest.raises(ValueError, match=r"has sha256 .*not the registered .*--force`$"):
        check_inputs(required)
    (root / "toy" / "real.csv").write_bytes(body)
    assert check_inputs(required) == []
    unregistered = Input("yours", ("mine/own.csv",), "a stand-in")
    _put(root, "mine/own.csv", "anything")  # not registered: no checksum to compare
    assert check_inputs([unregistered]) == []


def test_check_inputs_says_why_a_dataset_cannot_be_fetched(root):
    with pytest.raises(FileNotFoundError) as missing:
        check_inputs([Input("property", ("ura/ura_private_projects.csv",))])
    message = str(missing.value)
    assert "`frontierbo data fetch ura` cannot download it: derived in the project" in message
    assert f"if you have a copy, set {DATA_ENV} to a data root holding" in message


def test_an_input_needs_files():
    with pytest.raises(ValueError, match="files must be a non-empty tuple"):
        Input("nothing", ())
    with pytest.raises(ValueError, match="files must be a non-empty tuple"):
        Input("a string", "a/b.csv")


def test_quantum_report_names_its_substitute_once(tmp_path, monkeypatch, cli):
    root = tmp_path / "data"
    root.mkdir()
    monkeypatch.setenv(DATA_ENV, str(root))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(data, "searched_roots", lambda: [(f"${DATA_ENV}", root)])
    out = tmp_path / "out"
    status, _, err = cli(["reproduce", "quantum-bo", "--quick", "--datasets", "synthetic-gauss0.3",
                          "--out", out])  # fmt: skip
    assert status == 0, err
    lines = (out / "report.md").read_text().splitlines()
    assert sum("substitute" in line.lower() for line in lines) == 1, lines[:8]
