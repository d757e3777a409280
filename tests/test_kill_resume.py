"""Kill -> resume of every dataset of every system's quick reproduction (issue 56 item 8).

``frontierbo reproduce <system> --quick --datasets <d> --out <out>`` runs in a child process
that is SIGKILLed as soon as its first run is stored; the store is then cut to that first record
plus half of the next line (a kill in the middle of an append). The same command, in a new
process, must resume into the same ``--out``: no "different config or seed" refusal (a run's
identity must not depend on anything measured at run time, such as a fit's wall-clock seconds,
which differ in every process), the killed process's record kept as it was, and every planned
run stored exactly once. The planned runs come from a third process, this one.

The cheapest settings each reproduction allows are used; the README's test command runs one
dataset per system (:data:`QUICK_CASE`), CI's second call (``-m slow``) the others.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from frontierbo.io import to_jsonable
from frontierbo.registry import SYSTEM_MODULES, systems

#: Per system: the arguments after ``--quick --datasets <d>`` that make its smallest sweep with
#: at least two runs, and the same as options of its Reproduction.
CHEAPEST = {
    "po-gp-ucb": (["--runs", "1"], {"runs": 1}),
    "ldp-bo": (["--runs", "1"], {"runs": 1}),
    "quantum-bo": (["--runs", "1"], {"runs": 1}),
    "macro-bo": (["--runs", "1"], {"runs": 1}),
    # BOS² itself is minutes per run; GenAttack on one image and two targets is the cheapest
    # sweep with two runs (the store and the identity do not depend on the method).
    "bos2": (
        ["--runs", "1", "--targets", "2", "--methods", "genattack"],
        {"runs": 1, "targets": 2, "methods": ("genattack",)},
    ),
}
REPRODUCTIONS = {
    system.name: importlib.import_module(module.rpartition(".")[0] + ".report").REPRODUCTION
    for module, system in zip(SYSTEM_MODULES, systems(), strict=True)
}
#: The one dataset per system in the README's test command; the others run in CI's slow call.
QUICK_CASE = {
    "po-gp-ucb": "synthetic",
    "ldp-bo": "synthetic-se",
    "quantum-bo": "synthetic-bernoulli",
    "macro-bo": "plankton",
    "bos2": "cifar10",
}
CASES = [
    pytest.param(name, dataset, marks=[] if QUICK_CASE[name] == dataset else [pytest.mark.slow])
    for name, reproduction in REPRODUCTIONS.items()
    for dataset in reproduction.datasets
]
_CLI = "import sys; from frontierbo.cli import main; sys.exit(main(sys.argv[1:]))"


def test_every_system_has_a_cheapest_setting():
    assert set(CHEAPEST) == set(REPRODUCTIONS) == set(QUICK_CASE)
    for name, dataset in QUICK_CASE.items():
        assert dataset in REPRODUCTIONS[name].datasets, name


def _command(name: str, dataset: str, out: Path) -> list[str]:
    args = ["reproduce", name, "--quick", "--datasets", dataset, *CHEAPEST[name][0]]
    return [sys.executable, "-c", _CLI, *args, "--out", str(out)]


def _kill_after_first_record(command: list[str], runs: Path, cwd: Path, limit: float = 900):
    """Start ``command`` and SIGKILL it once ``runs`` holds a complete record (it may finish
    first, on a fast sweep); returns its stderr."""
    with open(cwd / "killed.err", "wb") as err:
        child = subprocess.Popen(
            command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True
        )
        deadline = time.monotonic() + limit
        try:
            while child.poll() is None and time.monotonic() < deadline:
                if runs.is_file() and b"\n" in runs.read_bytes():
                    break
                time.sleep(0.02)
        finally:
            if child.poll() is None:
                os.killpg(child.pid, signal.SIGKILL)
            child.wait()
    return (cwd / "killed.err").read_text(errors="replace")


def _json(value) -> str:
    return json.dumps(to_jsonable(value), sort_keys=True)


@pytest.mark.filterwarnings(
    "ignore::frontierbo.po.random_projection.NotDifferentiallyPrivateWarning"
)
@pytest.mark.parametrize(("name", "dataset"), CASES)
def test_a_killed_quick_reproduction_resumes(name, dataset, tmp_path):
    reproduction = REPRODUCTIONS[name]
    why = reproduction.unavailable(dataset)
    if why is not None:
        pytest.skip(f"{name} --datasets {dataset}: {why}")
    out, runs = tmp_path / "out", tmp_path / "out" / "runs.jsonl"
    command = _command(name, dataset, out)

    err = _kill_after_first_record(command, runs, tmp_path)
    lines = runs.read_bytes().split(b"\n") if runs.is_file() else []
    assert len(lines) >= 2 and lines[0], f"no run was stored before the kill:\n{err}"
    first, following = lines[0] + b"\n", lines[1] or lines[0]
    runs.write_bytes(first + following[: max(len(following) // 2, 1)])  # torn second line

    resumed = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert resumed.returncode == 0, resumed.stderr
    assert "different config" not in resumed.stderr
    stored = runs.read_bytes()
    assert stored.startswith(first)  # the killed process's record is kept, not recomputed
    records = [json.loads(line) for line in stored.splitlines()]
    ids = [record["run_id"] for record in records]
    assert len(set(ids)) == len(ids), "a run is stored twice"

    options = reproduction.options(
        tmp_path / "plan", datasets=[dataset], quick=True, **CHEAPEST[name][1]
    )
    planned = {s.run_id: _json((s.config, s.seed)) for s in reproduction.build_specs(options)}
    assert set(ids) == set(planned), "a planned run is missing"
    for record in records:  # the identity is the same in every process
        assert _json((record["config"], record["seed"])) == planned[record["run_id"]]
