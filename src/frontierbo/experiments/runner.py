"""Resumable, parallel experiment sweeps.

A sweep is a list of :class:`RunSpec` (identity + parameters + seed) and a worker function that
turns one spec into a result dict. :func:`run_sweep` skips runs already in the
:class:`~frontierbo.experiments.store.ResultStore`, runs the rest (in parallel with joblib, or on
a Dask cluster, see :mod:`frontierbo.experiments.schedulers`), and stores each result the moment
it finishes, so killing a sweep loses at most the runs in flight. Seeds come from
:func:`seed_for`, which depends only on a run's identity, so results do not depend on execution
order, ``n_jobs`` or the scheduler.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from numbers import Integral
from typing import Any

import numpy as np
from tqdm import tqdm

from frontierbo._validation import check_int
from frontierbo.experiments.identity import measured_keys
from frontierbo.experiments.schedulers import make_executor
from frontierbo.experiments.store import ResultStore, to_jsonable
from frontierbo.io import mean_stderr

__all__ = ["RunSpec", "aggregate", "run_sweep", "seed_for"]

_SEED_HIGH = 2**32 - 1


@dataclass(frozen=True)
class RunSpec:
    """One run of a sweep.

    Attributes:
        run_id: unique, stable name of the run (the resume key in the store).
        config: JSON-able parameters handed to the worker (stored with the result). Declared
            inputs only: a resumed sweep compares it with the stored one, so a key naming a
            value measured at run time (``seconds``, ``*_seconds``, ``machine``, ``hostname``,
            ..., see :mod:`frontierbo.experiments.identity`) is refused at any depth; such
            values belong in the worker's result.
        seed: the run's random seed, an int in [0, 2**32 - 1]; usually from :func:`seed_for`.
    """

    run_id: str
    config: dict = field(default_factory=dict)
    seed: int = 0

    def __post_init__(self):
        if not isinstance(self.run_id, str) or not self.run_id:
            raise ValueError(f"run_id must be a non-empty string, got {self.run_id!r}")
        if not isinstance(self.config, dict):
            raise TypeError(f"config must be a dict, got {type(self.config).__name__}")
        measured = measured_keys(self.config)
        if measured:
            raise ValueError(
                f"config of run {self.run_id!r} holds {', '.join(map(repr, measured))}, measured "
                "at run time: it differs between processes, so the run could never be resumed; "
                "return it from the worker (or keep it as metadata) instead"
            )
        object.__setattr__(self, "seed", check_int(self.seed, "seed", low=0, high=_SEED_HIGH))


def seed_for(base_seed: int, *keys: str | int) -> int:
    """A deterministic 32-bit seed in [0, 2**32 - 1] from ``base_seed`` and identity ``keys``.

    Uses SHA-256 of a JSON encoding (so ``"1"`` and ``1`` differ and the result is the same in
    every process and Python version), not ``hash()``, which is salted per process.
    """
    base_seed = check_int(base_seed, "base_seed", low=0)
    parts: list[Any] = [base_seed]
    for key in keys:
        if isinstance(key, str):
            parts.append(key)
        elif isinstance(key, Integral) and not isinstance(key, bool):
            parts.append(int(key))
        else:
            raise TypeError(f"keys must be str or int, got {key!r}")
    digest = hashlib.sha256(json.dumps(parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "little")


def _make_record(spec: RunSpec, result: Any) -> dict:
    """The stored record: the run's identity followed by the worker's result fields."""
    if not isinstance(result, dict):
        raise TypeError(f"worker must return a dict, got {type(result).__name__} ({spec.run_id})")
    record = {"run_id": spec.run_id, "config": spec.config, "seed": spec.seed}
    for key, value in result.items():
        if key not in record:
            record[key] = value
        elif _canonical(value) != _canonical(record[key]):  # echoing the identity is fine
            raise ValueError(f"worker result for {spec.run_id!r} overrides reserved key {key!r}")
    return record


def _canonical(value: Any) -> str:
    """A comparable JSON string (NaN-safe, order-independent for dicts)."""
    return json.dumps(to_jsonable(value), sort_keys=True)


def _check_specs(specs: Sequence[RunSpec], stored: dict[str, dict]) -> None:
    """Reject duplicate run_ids and stored runs whose config/seed differ from the spec."""
    seen: set[str] = set()
    for spec in specs:
        if not isinstance(spec, RunSpec):
            raise TypeError(f"specs must contain RunSpec objects, got {type(spec).__name__}")
        if spec.run_id in seen:
            raise ValueError(f"specs must have unique run_ids; {spec.run_id!r} repeats")
        seen.add(spec.run_id)
        old = stored.get(spec.run_id)
        # A stale record under the same id would silently be reused by resume; refuse instead.
        if old is not None and (
            _canonical(old.get("config")) != _canonical(spec.config) or old.get("seed") != spec.seed
        ):
            raise ValueError(
                f"store already has run_id {spec.run_id!r} with a different config or seed "
                f"({_difference(old, spec)}); use a new store path or a new run_id"
            )


def _difference(old: dict, spec: RunSpec) -> str:
    """What differs between a stored record and a spec of the same run_id, for the error."""
    stored = old.get("config") if isinstance(old.get("config"), dict) else {}
    keys = sorted(
        key
        for key in set(stored) | set(spec.config)
        if key not in stored
        or key not in spec.config
        or _canonical(stored[key]) != _canonical(spec.config[key])
    )
    parts = [f"config key(s) {', '.join(map(repr, keys))}"] if keys else []
    if old.get("seed") != spec.seed:
        parts.append(f"seed {old.get('seed')!r} stored, {spec.seed} planned")
    return "; ".join(parts) or "config"


def _check_n_jobs(n_jobs: int) -> int:
    n_jobs = check_int(n_jobs, "n_jobs", low=-1)
    if n_jobs == 0:
        raise ValueError("n_jobs must be an integer in [1, inf) or -1 (all cores), got 0")
    return n_jobs


def run_sweep(
    specs: Iterable[RunSpec],
    worker: Callable[[RunSpec], dict],
    store: ResultStore,
    n_jobs: int = 1,
    progress: bool = True,
    desc: str = "runs",
    scheduler: Any = None,
) -> list[dict]:
    """Run every spec not yet in ``store`` and return all their records in spec order.

    Args:
        specs: the runs; run_ids must be unique. Runs already stored are not recomputed.
        worker: ``worker(spec) -> dict`` of results (numpy arrays/scalars allowed). Must be a
            module-level function (or other picklable callable) when ``n_jobs != 1`` or on
            Dask, because it is sent to worker processes. It should seed all randomness from
            ``spec.seed`` so that results do not depend on ``n_jobs`` or the scheduler.
        store: where finished runs are appended, by this (parent) process, as each finishes.
        n_jobs: worker processes; 1 runs in-process and sequentially, -1 uses all cores. On an
            existing Dask cluster (an address or a Client) the cluster's size decides instead.
        progress: show a tqdm bar (on stderr, only when it is a terminal).
        desc: label of the progress bar.
        scheduler: where the runs execute: None or ``"local"`` (joblib processes on this
            machine); ``"dask"`` (a Dask ``LocalCluster`` of ``n_jobs`` processes started for
            the sweep); a Dask scheduler address such as ``"tcp://host:8786"``; or a
            ``distributed.Client``. Dask needs the ``[dask]`` extra. Wherever runs execute,
            results come back to this process and are stored here.

    Returns:
        One record per spec, as stored (JSON types: arrays are lists): ``run_id``, ``config``,
        ``seed`` and the worker's fields. If a worker raises, the exception propagates after
        the runs finished so far are stored; calling again resumes.
    """
    specs = list(specs)
    n_jobs = _check_n_jobs(n_jobs)
    executor = make_executor(scheduler, n_jobs)
    stored = {rec["run_id"]: rec for rec in store.load()}
    _check_specs(specs, stored)
    todo = [spec for spec in specs if spec.run_id not in stored]

    # closing: an error while storing must still stop the runs in flight (and a Dask cluster).
    with (
        contextlib.closing(executor.run(worker, todo)) as results,
        tqdm(
            total=len(specs),
            initial=len(specs) - len(todo),
            desc=desc,
            disable=None if progress else True,  # None: tqdm disables itself off a terminal
        ) as bar,
    ):
        for spec, result in results:
            store.append(_make_record(spec, result))
            bar.update(1)

    stored = {rec["run_id"]: rec for rec in store.load()}
    return [stored[spec.run_id] for spec in specs]


def aggregate(
    records: Iterable[dict], key_fn: Callable[[dict], Hashable], value_key: str
) -> dict[Hashable, dict]:
    """Group records by ``key_fn(record)`` and average the field ``value_key`` elementwise.

    Each record's ``value_key`` is an array of the same shape within a group, e.g. a simple-regret
    trace of shape (T,), or a scalar. Returns ``{key: {"mean": array, "stderr": array, "n": int}}``
    in first-seen key order, where ``stderr = std(ddof=1) / sqrt(n)`` (zeros when n == 1).
    """
    groups: dict[Hashable, list[np.ndarray]] = {}
    for rec in records:
        if value_key not in rec:
            raise KeyError(f"record {rec.get('run_id')!r} has no field value_key={value_key!r}")
        groups.setdefault(key_fn(rec), []).append(np.asarray(rec[value_key], dtype=float))
    out: dict[Hashable, dict] = {}
    for key, values in groups.items():
        shapes = {v.shape for v in values}
        if len(shapes) > 1:
            raise ValueError(
                f"{value_key!r} has differing shapes {sorted(shapes)} in group {key!r}"
            )
        stack = np.stack(values)  # (n, *shape)
        mean, stderr = mean_stderr(stack)
        out[key] = {"mean": mean, "stderr": stderr, "n": stack.shape[0]}
    return out
