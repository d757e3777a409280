"""Where a sweep's runs execute: on this machine (joblib) or on a Dask cluster.

An :class:`Executor` turns ``(worker, specs)`` into an iterator of ``(spec, result)`` pairs in
completion order. :func:`~frontierbo.experiments.runner.run_sweep` stores each pair the moment it
arrives, in its own (client) process, so the store, resume and progress bar are the same whatever
executes the runs. :func:`make_executor` maps the ``scheduler`` argument to an executor:

* ``None`` / ``"local"``: :class:`LocalExecutor`, joblib worker processes on this machine;
* ``"dask"``: :class:`DaskExecutor` on a ``distributed.LocalCluster`` started for the sweep
  (``n_jobs`` single-threaded worker processes, loopback only, no dashboard) and closed after;
* ``"tcp://host:8786"`` (any ``protocol://host:port``): a :class:`DaskExecutor` connected to an
  existing cluster, whose size (not ``n_jobs``) sets the parallelism;
* a ``distributed.Client``: a :class:`DaskExecutor` on that client, which is left open.

``distributed`` is an optional dependency (the ``[dask]`` extra), imported only on the Dask path.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from joblib import Parallel, cpu_count, delayed

from frontierbo.experiments.machine import describe_machine

if TYPE_CHECKING:  # runner imports this module; the type is only needed for annotations
    from frontierbo.experiments.runner import RunSpec

__all__ = [
    "DaskExecutor",
    "Executor",
    "LocalExecutor",
    "call_worker",
    "check_scheduler",
    "make_executor",
]

Worker = Callable[["RunSpec"], Any]

# protocol://host:port, host a name, an IPv4 address or a bracketed IPv6 address.
_ADDRESS = re.compile(r"[a-z][a-z0-9+.-]*://(\[[0-9A-Fa-f:.]+\]|[^\s:/\[\]]+):[0-9]{1,5}")


def call_worker(
    worker: Worker, spec: RunSpec, *, exit_with: int | None = None
) -> tuple[RunSpec, Any]:
    """Run one spec; returns the spec too because unordered results arrive in any order.

    A dict result gains ``"machine"``, what it was computed on (:func:`describe_machine`), unless
    the worker set it. ``exit_with``: the pid of the sweep's process. A joblib worker process
    ends itself when that process is gone (see :func:`_watch_sweep`)."""
    if exit_with is not None:
        _watch_sweep(exit_with)
    result = worker(spec)
    if isinstance(result, dict) and "machine" not in result:
        result = {**result, "machine": describe_machine()}
    return spec, result


_WATCHED: set[int] = set()


def _watch_sweep(sweep_pid: int, period: float = 2.0) -> None:
    """Exit this worker process within ``period`` seconds of the sweep's process ending.

    A killed sweep (SIGKILL, or Ctrl-C on its terminal) leaves joblib's worker processes alive:
    they check for their parent only between runs, so each finishes the run it has, which for a
    long run is an hour of CPU for a result nobody will store (only the sweep writes the store).
    A daemon thread polls the parent and ends the process at once instead."""
    if sweep_pid in _WATCHED or os.getpid() == sweep_pid:
        return
    _WATCHED.add(sweep_pid)

    def watch():
        while True:
            time.sleep(period)
            if os.getppid() != sweep_pid:  # reparented: the sweep is gone
                os._exit(1)

    threading.Thread(target=watch, name="frontierbo-sweep-watch", daemon=True).start()


class Executor(ABC):
    """Runs a sweep's specs and yields ``(spec, result)`` as each run finishes.

    If a run raises, the iterator raises that exception (the pairs yielded before it stay valid)
    and the runs still pending are abandoned. Closing the iterator early releases its resources.
    """

    @abstractmethod
    def run(self, worker: Worker, specs: Sequence[RunSpec]) -> Iterator[tuple[RunSpec, Any]]:
        """Start the runs of ``specs``; the iterator yields them in completion order."""


class LocalExecutor(Executor):
    """``n_jobs`` joblib worker processes on this machine; ``n_jobs == 1`` runs in-process."""

    def __init__(self, n_jobs: int = 1):
        self.n_jobs = n_jobs

    def __repr__(self) -> str:
        return f"LocalExecutor(n_jobs={self.n_jobs})"

    def run(self, worker: Worker, specs: Sequence[RunSpec]) -> Iterator[tuple[RunSpec, Any]]:
        if self.n_jobs == 1 or len(specs) <= 1:
            return (call_worker(worker, spec) for spec in specs)
        # One run per task: with joblib's automatic batching a finished run waits for the rest
        # of its batch before it comes back to be stored, and a crash or a kill loses it.
        parallel = Parallel(n_jobs=self.n_jobs, batch_size=1, return_as="generator_unordered")
        me = os.getpid()
        return parallel(delayed(call_worker)(worker, spec, exit_with=me) for spec in specs)


class DaskExecutor(Executor):
    """Runs on Dask: a fresh local cluster (``"dask"``), the cluster at an address, or a Client.

    Each run is one task; its result comes back to this process as soon as it finishes. The
    worker function and specs are pickled, so the worker must be a module-level function (or
    another picklable callable) importable on every Dask worker.
    """

    def __init__(self, target: Any = "dask", n_jobs: int = 1):
        self._distributed = import_distributed(target)
        self.target = target
        self.n_jobs = n_jobs

    def __repr__(self) -> str:
        return f"DaskExecutor({self.target!r}, n_jobs={self.n_jobs})"

    def run(self, worker: Worker, specs: Sequence[RunSpec]) -> Iterator[tuple[RunSpec, Any]]:
        specs = list(specs)
        if not specs:  # nothing to do: do not start or contact a cluster
            return
        with self._client() as client:
            # pure=False: a run is never deduplicated against another sweep's identical task.
            futures = client.map(call_worker, [worker] * len(specs), specs, pure=False)
            pending = set(futures)
            del futures  # a finished run's result is freed on the cluster once it is yielded
            try:
                for future in self._distributed.as_completed(pending):
                    pending.discard(future)
                    yield future.result()  # re-raises the run's exception here
            finally:
                # Matters for a caller's Client, which outlives the sweep; a client we opened
                # cancels everything when it closes anyway.
                if pending:
                    client.cancel(list(pending))

    @contextlib.contextmanager
    def _client(self) -> Iterator[Any]:
        distributed = self._distributed
        if isinstance(self.target, distributed.Client):
            yield self.target  # the caller's client: the caller closes it
        elif self.target == "dask":
            n_workers = cpu_count() if self.n_jobs == -1 else self.n_jobs
            with (
                distributed.LocalCluster(
                    n_workers=n_workers,
                    threads_per_worker=1,  # runs are single-threaded NumPy; processes scale
                    processes=True,
                    host="127.0.0.1",  # loopback only: nothing outside this machine can connect
                    dashboard_address=None,
                    # The scheduler still serves health checks over HTTP; a free port instead of
                    # 8787 keeps two sweeps on one machine from clashing (and warning).
                    scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                ) as cluster,
                distributed.Client(cluster) as client,
            ):
                yield client
        else:
            with distributed.Client(self.target) as client:
                yield client


def import_distributed(scheduler: Any = "dask"):
    """The ``distributed`` module, or one clear ImportError naming the extra to install."""
    try:
        import distributed
    except ImportError as err:
        name = scheduler if isinstance(scheduler, str) else "dask"
        raise ImportError(
            f'scheduler {name!r} needs the [dask] extra: pip install "frontierbo[dask]"'
        ) from err
    return distributed


def make_executor(scheduler: Any, n_jobs: int) -> Executor:
    """The executor for a ``scheduler`` argument of :func:`run_sweep` (see the module docstring).

    ``n_jobs`` must already be checked (an int >= 1, or -1 for all cores).
    """
    if scheduler is None or (isinstance(scheduler, str) and scheduler == "local"):
        return LocalExecutor(n_jobs)
    if isinstance(scheduler, str) and (scheduler == "dask" or _ADDRESS.fullmatch(scheduler)):
        return DaskExecutor(scheduler, n_jobs)
    if _is_dask_client(scheduler):
        return DaskExecutor(scheduler, n_jobs)
    raise ValueError(
        "scheduler must be 'local', 'dask', a Dask scheduler address like 'tcp://host:8786', "
        f"or a distributed.Client; got {scheduler!r}"
    )


def check_scheduler(scheduler: Any) -> Any:
    """``scheduler`` unchanged if :func:`run_sweep` accepts it, else its ValueError/ImportError.

    For entry points that should fail before any work (problem set-up) rather than at the sweep.
    Connects to nothing: an address's cluster is only contacted when runs are submitted.
    """
    make_executor(scheduler, 1)
    return scheduler


def _is_dask_client(obj: Any) -> bool:
    # A Client can only exist if distributed was imported, so there is no need to import it here.
    distributed = sys.modules.get("distributed")
    return distributed is not None and isinstance(obj, distributed.Client)
