"""``--out`` is checked before any work, and one output folder takes one sweep at a time
(issue 10, defects found by a reliability probe)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from frontierbo.experiments.store import (
    LOCK_FILE,
    DirectoryLockedError,
    ResultStore,
    lock_directory,
)
from frontierbo.io import check_out_dir
from frontierbo.registry import systems

ROOT = Path(__file__).resolve().parents[2]


# -- check_out_dir ------------------------------------------------------------------------------
def test_writable_out_passes_and_leaves_nothing_behind(tmp_path):
    assert check_out_dir(tmp_path) == tmp_path
    assert check_out_dir(tmp_path / "new" / "deeper") == tmp_path / "new" / "deeper"
    assert list(tmp_path.iterdir()) == []  # the probes are gone, nothing was created
    assert check_out_dir(None) is None


@pytest.mark.parametrize(
    ("out", "message"),
    [
        # Tests may run as root, whom permission bits do not stop: /proc refuses new entries
        # and nothing can live under a regular file, for anyone.
        ("/proc/x", r"--out '/proc/x' cannot be created or written \(.+\); choose a writable"),
        ("/proc", r"--out '/proc' cannot be created or written"),
        ("FILE/x/y", r"--out '.*f\.txt/x/y' cannot be created: '.*f\.txt' is a file, not a dir"),
        ("FILE", r"--out '.*f\.txt' exists and is not a directory"),
    ],
)
def test_unwritable_out_is_one_value_error_naming_out(tmp_path, out, message):
    regular = tmp_path / "f.txt"
    regular.write_text("keep")
    with pytest.raises(ValueError, match=message):
        check_out_dir(out.replace("FILE", str(regular)))
    assert regular.read_text() == "keep"


@pytest.mark.parametrize("system", [s.name for s in systems()])
@pytest.mark.parametrize("out", ["/proc/x", "FILE/x"])
def test_every_reproduce_rejects_an_unwritable_out_at_once(cli, tmp_path, system, out):
    regular = tmp_path / "f.txt"
    regular.write_text("")
    started = time.perf_counter()
    status, _, err = cli(
        ["reproduce", system, "--quick", "--out", out.replace("FILE", str(regular))]
    )
    assert status == 2 and err.startswith("frontierbo: error: --out "), err
    assert len(err.strip().splitlines()) == 1
    assert time.perf_counter() - started < 10  # before any run (a quick sweep takes longer)


@pytest.mark.parametrize("command", ["ldp-bo", "quantum-bo"])
def test_every_other_run_command_rejects_an_unwritable_out(cli, tmp_path, command):
    data = tmp_path / "d.csv"
    if command == "ldp-bo":
        data.write_text("a,b\n1,2\n3,5\n")
        extra = ["--algorithm", "ata", "--iterations", "3"]
    else:
        data.write_text("x,p\n0,0.1\n1,0.9\n")
        extra = ["--queries", "3"]
    status, _, err = cli(["run", command, "--data", data, "--out", "/proc/x", *extra])
    assert status == 2 and "--out '/proc/x' cannot be created or written" in err, err


# -- one sweep per output folder ----------------------------------------------------------------
def test_lock_is_exclusive_and_released_on_exit(tmp_path):
    held = r"--out '.*out' is in use: another frontierbo process \(pid \d+\) holds its lock"
    with lock_directory(tmp_path / "out") as path:
        assert path == tmp_path / "out" / LOCK_FILE
        with pytest.raises(DirectoryLockedError, match=held), lock_directory(tmp_path / "out"):
            pass
    with lock_directory(tmp_path / "out"):  # released: taken again at once
        pass


def test_reproduce_refuses_an_out_another_process_holds(cli, tmp_path):
    with lock_directory(tmp_path):
        status, _, err = cli(["reproduce", "ldp-bo", "--quick", "--out", tmp_path])
    assert status == 2, err
    assert "--out" in err and "is in use: another frontierbo process" in err
    assert not (tmp_path / "runs.jsonl").exists()  # it refused before building anything


SWEEP = textwrap.dedent(
    """
    import os, sys, time
    from frontierbo.experiments.report import Reproduction
    from frontierbo.experiments.runner import RunSpec
    from frontierbo.experiments.store import DirectoryLockedError

    SIGNALS = sys.argv[2]

    def worker(spec):
        if spec.config["i"] == 0:  # hold the folder until the test has tried a second sweep
            open(os.path.join(SIGNALS, "started"), "w").close()
            deadline = time.monotonic() + 120
            while not os.path.exists(os.path.join(SIGNALS, "release")):
                if time.monotonic() > deadline:
                    sys.exit("never released")
                time.sleep(0.02)
        time.sleep(0.01)
        return {"value": spec.config["i"]}

    SLOW = Reproduction(
        name="slow", paper="p", datasets=("a",), defaults={"runs": 40},
        quick={}, build_specs=lambda o: [RunSpec(f"r{i}", {"i": i}, i) for i in range(o.runs)],
        worker=worker, summarise=lambda records, o: {"n": len(records)},
        csv_header=("n",), csv_rows=lambda r: [[r["n"]]], figures=lambda r, out: [],
        markdown=lambda r, f: "# slow\\n",
    )
    try:
        print(SLOW.reproduce(sys.argv[1], progress=False)["n"])
    except DirectoryLockedError as exc:
        print(exc, file=sys.stderr)
        sys.exit(3)
    """
)


def test_a_second_sweep_into_one_out_refuses_and_no_line_is_lost_or_doubled(tmp_path):
    # The first sweep signals (a file) once it holds the folder and waits for a release, so
    # the test neither probes the lock (a probe could make the first sweep refuse) nor races
    # the first sweep's end on a loaded machine.
    script = tmp_path / "sweep.py"
    script.write_text(SWEEP)
    out, signals = tmp_path / "out", tmp_path / "signals"
    signals.mkdir()
    command = [sys.executable, str(script), str(out), str(signals)]
    first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not (signals / "started").exists():
            if first.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the first sweep never started: {first.communicate()[1]!r}")
            time.sleep(0.02)
        with pytest.raises(DirectoryLockedError), lock_directory(out):
            pass
        second = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert second.returncode == 3, second.stderr
        assert f"--out {str(out)!r} is in use: another frontierbo process" in second.stderr
        (signals / "release").touch()
        stdout, stderr = first.communicate(timeout=120)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 0, stderr
    assert stdout.decode().strip() == "40"
    lines = (out / "runs.jsonl").read_text().splitlines()
    ids = [json.loads(line)["run_id"] for line in lines]
    assert sorted(ids) == sorted(f"r{i}" for i in range(40))  # each run once, none lost
    assert len(ResultStore(out / "runs.jsonl").load()) == 40
    # Once the first is done the folder is free again, and a rerun resumes (computes nothing).
    again = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and again.stdout.strip() == "40", again.stderr
    assert (out / "runs.jsonl").read_text().splitlines() == lines
