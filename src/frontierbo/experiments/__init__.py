"""Experiment infrastructure: crash-safe result store, resumable parallel sweeps, the shared
reproduction tail (:mod:`frontierbo.experiments.report`), plots.

Sweeps run on this machine or on a Dask cluster (:mod:`frontierbo.experiments.schedulers`;
``distributed`` is imported only when a Dask scheduler is used).

Plotting lives in :mod:`frontierbo.experiments.plots` and is not imported here, so running a
sweep does not pay for importing matplotlib.
"""

from frontierbo.experiments.identity import is_measured, measured_keys, without_measured
from frontierbo.experiments.report import Options, Reproduction, load_published
from frontierbo.experiments.runner import RunSpec, aggregate, run_sweep, seed_for
from frontierbo.experiments.schedulers import (
    DaskExecutor,
    Executor,
    LocalExecutor,
    check_scheduler,
    make_executor,
)
from frontierbo.experiments.store import (
    ResultStore,
    atomic_output,
    to_jsonable,
    write_json_atomic,
    write_text_atomic,
)

__all__ = [
    "DaskExecutor",
    "Executor",
    "LocalExecutor",
    "Options",
    "Reproduction",
    "ResultStore",
    "RunSpec",
    "aggregate",
    "atomic_output",
    "check_scheduler",
    "is_measured",
    "load_published",
    "make_executor",
    "measured_keys",
    "run_sweep",
    "seed_for",
    "to_jsonable",
    "without_measured",
    "write_json_atomic",
    "write_text_atomic",
]
