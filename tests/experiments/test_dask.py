"""Sweeps on a Dask cluster: same records as a local sweep, streamed into the store, resumable.

One two-process LocalCluster on loopback (no dashboard) serves the module; its address string is
passed to ``run_sweep`` so the "connect to an existing cluster" path is the one tested, plus one
sweep with ``scheduler="dask"``, which starts and closes a cluster of its own.
"""

from __future__ import annotations

import functools
import json
import logging
import time
from pathlib import Path

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

from frontierbo.experiments.runner import RunSpec, run_sweep, seed_for  # noqa: E402
from frontierbo.experiments.schedulers import check_scheduler  # noqa: E402
from frontierbo.experiments.store import ResultStore  # noqa: E402


# Workers run in the cluster's processes, so they are module-level (picklable by reference) and
# keep their bookkeeping in files, not in this process's memory.
def toy_worker(spec: RunSpec) -> dict:
    """A deterministic fake BO run: a simple-regret trace of shape (5,) from spec.seed."""
    rng = np.random.default_rng(spec.seed)
    trace = np.minimum.accumulate(rng.random(5) * spec.config["scale"])
    return {"simple_regret": trace, "final": trace[-1], "n_evals": np.int64(5)}


def marking_worker(mark_dir: str, spec: RunSpec) -> dict:
    """toy_worker that leaves a file per run it computes, to see which runs were recomputed."""
    (Path(mark_dir) / spec.run_id).touch()
    return toy_worker(spec)


def failing_worker(store_path: str, fail_id: str, spec: RunSpec) -> dict:
    """toy_worker, except that run ``fail_id`` raises once another run has been stored."""
    if spec.run_id != fail_id:
        return toy_worker(spec)
    deadline = time.monotonic() + 30.0
    while time.monotonic() < deadline and not _stored_ids(Path(store_path)):
        time.sleep(0.02)
    raise RuntimeError(f"simulated failure of {spec.run_id}")


def _stored_ids(path: Path) -> list[str]:
    if not path.exists():
        return []
    return [json.loads(line)["run_id"] for line in path.read_text().splitlines() if line]


def make_specs(n: int = 8) -> list[RunSpec]:
    return [RunSpec(f"run{i}", {"scale": float(i + 1)}, seed_for(0, "dask", i)) for i in range(n)]


@pytest.fixture(scope="module")
def address():
    """The scheduler address of a 2-process, 1-thread-each LocalCluster on loopback."""
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},  # health checks only, free port
        silence_logs=logging.ERROR,
    ) as cluster:
        yield cluster.scheduler_address


@pytest.fixture(scope="module")
def local_records(tmp_path_factory):
    """The reference: the same sweep run sequentially in this process."""
    store = ResultStore(tmp_path_factory.mktemp("local") / "runs.jsonl")
    return run_sweep(make_specs(), toy_worker, store, n_jobs=1, progress=False)


def test_address_sweep_equals_local(address, local_records, tmp_path):
    assert address.startswith("tcp://127.0.0.1:")
    store = ResultStore(tmp_path / "runs.jsonl")
    records = run_sweep(make_specs(), toy_worker, store, progress=False, scheduler=address)
    assert records == local_records  # seeds depend only on run identity
    assert sorted(_stored_ids(store.path)) == sorted(s.run_id for s in make_specs())


def test_dask_scheduler_starts_its_own_cluster(local_records, tmp_path):
    store = ResultStore(tmp_path / "runs.jsonl")
    records = run_sweep(make_specs(), toy_worker, store, n_jobs=2, progress=False, scheduler="dask")
    assert records == local_records


def test_client_object_is_used_and_left_open(address, local_records, tmp_path):
    with distributed.Client(address) as client:
        store = ResultStore(tmp_path / "runs.jsonl")
        records = run_sweep(make_specs(), toy_worker, store, progress=False, scheduler=client)
        assert records == local_records
        assert client.status == "running"  # the caller's client: run_sweep must not close it
        assert client.submit(abs, -3).result() == 3


def test_worker_error_keeps_finished_runs_and_resumes(address, local_records, tmp_path):
    specs = make_specs()
    store = ResultStore(tmp_path / "runs.jsonl")
    failing = functools.partial(failing_worker, str(store.path), "run3")
    with pytest.raises(RuntimeError, match="simulated failure of run3"):
        run_sweep(specs, failing, store, progress=False, scheduler=address)
    kept = store.load()
    kept_ids = {rec["run_id"] for rec in kept}
    assert kept_ids and "run3" not in kept_ids  # the runs finished before the error are stored
    by_id = {rec["run_id"]: rec for rec in local_records}
    assert all(rec == by_id[rec["run_id"]] for rec in kept)

    marks = tmp_path / "marks"
    marks.mkdir()
    marking = functools.partial(marking_worker, str(marks))
    records = run_sweep(specs, marking, store, progress=False, scheduler=address)
    assert records == local_records
    assert {p.name for p in marks.iterdir()} == {s.run_id for s in specs} - kept_ids
    ids = _stored_ids(store.path)
    assert sorted(ids) == sorted(s.run_id for s in specs)  # every run exactly once


def test_finished_sweep_does_not_contact_a_cluster(local_records, tmp_path):
    store = ResultStore(tmp_path / "runs.jsonl")
    for rec in local_records:
        store.append(rec)
    # Nothing listens on port 1: connecting would fail, so passing means no connection was made.
    records = run_sweep(
        make_specs(), toy_worker, store, progress=False, scheduler="tcp://127.0.0.1:1"
    )
    assert records == local_records


@pytest.mark.parametrize("scheduler", ["dask", "tcp://127.0.0.1:1", "tls://[::1]:8786", None])
def test_check_scheduler_accepts_without_connecting(scheduler):
    assert check_scheduler(scheduler) == scheduler
