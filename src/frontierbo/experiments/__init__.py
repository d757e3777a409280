"""Experiment infrastructure: crash-safe result store, resumable parallel sweeps, plots.

Plotting lives in :mod:`frontierbo.experiments.plots` and is not imported here, so running a
sweep does not pay for importing matplotlib.
"""

from frontierbo.experiments.runner import RunSpec, aggregate, run_sweep, seed_for
from frontierbo.experiments.store import (
    ResultStore,
    atomic_output,
    to_jsonable,
    write_json_atomic,
    write_text_atomic,
)

__all__ = [
    "ResultStore",
    "RunSpec",
    "aggregate",
    "atomic_output",
    "run_sweep",
    "seed_for",
    "to_jsonable",
    "write_json_atomic",
    "write_text_atomic",
]
