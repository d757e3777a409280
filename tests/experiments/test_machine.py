"""Each stored record says what machine computed it (frontierbo.experiments.machine)."""

from __future__ import annotations

import importlib.util
import platform

import numpy as np
import pytest
import scipy

from frontierbo.experiments.machine import describe_machine
from frontierbo.experiments.runner import RunSpec, run_sweep
from frontierbo.experiments.store import ResultStore


def plain_worker(spec: RunSpec) -> dict:
    return {"value": spec.seed % 7}


def labelled_worker(spec: RunSpec) -> dict:
    return {"value": 1, "machine": "the worker's own label"}


def test_the_description_names_the_cpu_architecture_and_the_numeric_libraries():
    text = describe_machine()
    assert f"({platform.machine()}, " in text
    assert f"numpy {np.__version__}" in text and f"scipy {scipy.__version__}" in text
    assert ("torch " in text) == (importlib.util.find_spec("torch") is not None)
    assert describe_machine() == text  # stable within a process


def test_the_description_does_not_change_when_a_package_loads_its_own_blas():
    before = _fresh_description()
    pytest.importorskip("qiskit_aer")  # loads an OpenBLAS of its own (0.3.15)
    assert _fresh_description() == before


def _fresh_description() -> str:
    describe_machine.cache_clear()
    return describe_machine()


def test_every_record_of_a_sweep_carries_the_machine_in_both_executors(tmp_path):
    specs = [RunSpec(f"r{i}", {"i": i}, seed=i) for i in range(3)]
    for n_jobs in (1, 2):
        store = ResultStore(tmp_path / f"runs{n_jobs}.jsonl")
        records = run_sweep(specs, plain_worker, store, n_jobs=n_jobs, progress=False)
        assert [r["value"] for r in records] == [0, 1, 2]
        assert {r["machine"] for r in records} == {describe_machine()}
        stored = sorted(store.load(), key=lambda r: r["run_id"])  # in order of completion
        assert stored == records  # stored, not only returned


def test_a_machine_the_worker_set_itself_is_kept(tmp_path):
    store = ResultStore(tmp_path / "runs.jsonl")
    (record,) = run_sweep([RunSpec("r", {}, 0)], labelled_worker, store, progress=False)
    assert record["machine"] == "the worker's own label"
