"""Metrics M1–M4 of ε-Macro-BO's experiments (thesis Section 4.4).

For one run with outputs ``y_0, y_1, ..., y_B`` (``y_0`` the start location's value, then the
``B = kappa T`` values observed along the macro-actions, in order):

    M1  ybar_n = 1/(n+1) sum_{i=0..n} (y_i - m)        average normalised output
    M2  S_n    = max_{x in X} f(x) - max_{0<=i<=n} y_i  simple regret
    M3  nodes explored in all the run's search trees (summed over its T iterations)
    M4  planning seconds per BO iteration (mean over its T iterations)

M1 and M2 are reported at ``n = 0, kappa, 2 kappa, ..., B``. The normaliser ``m`` is the
dataset's empirical mean (the tables, the authors' code; default,
docs/decisions.md#macro-bo-m1-normalised-by-the-dataset-mean) or the GP's prior mean (the thesis's
footnote 12; option). ``max f`` is the dataset's largest value. Over runs: mean and standard error
(``frontierbo.io.mean_stderr``); the thesis quotes differences between methods in units of
``sigma_y``.
"""

from __future__ import annotations

import numpy as np

from frontierbo._validation import check_int, check_real, check_vector
from frontierbo.io import mean_stderr

#: Normalisers of M1 (docs/decisions.md#macro-bo-m1-normalised-by-the-dataset-mean): the dataset's
#: empirical mean (default) or the prior mean.
NORMALISERS = ("empirical", "prior")


def average_normalized_output(outputs, m: float) -> np.ndarray:
    """M1 after every observation: ``ybar_n = sum_{i<=n} (y_i - m) / (n + 1)``, n = 0..B."""
    y = check_vector(outputs, "outputs")
    m = check_real(m, "m")
    return np.cumsum(y - m) / np.arange(1, y.size + 1)


def simple_regret(outputs, max_value: float) -> np.ndarray:
    """M2 after every observation: ``S_n = max f - max_{i<=n} y_i``, n = 0..B."""
    y = check_vector(outputs, "outputs")
    return check_real(max_value, "max_value") - np.maximum.accumulate(y)


def checkpoints(n_outputs: int, kappa: int) -> np.ndarray:
    """The ``n`` at which M1 and M2 are reported: ``0, kappa, 2 kappa, ...`` up to ``B``."""
    n_outputs = check_int(n_outputs, "n_outputs", low=1)
    kappa = check_int(kappa, "kappa", low=1)
    return np.arange(0, n_outputs, kappa)


def run_metrics(
    outputs,
    nodes,
    seconds,
    *,
    kappa: int,
    m: float,
    max_value: float,
) -> dict[str, np.ndarray | float | int]:
    """M1–M4 of one run.

    Args:
        outputs: ``(y_0, ..., y_B)``, B = kappa T.
        nodes: (T,) nodes explored per iteration.
        seconds: (T,) planning seconds per iteration.
        kappa: the macro-action length.
        m: the M1 normaliser; ``max_value``: ``max f`` of M2.

    Returns ``{"n", "m1", "m2"}`` (arrays at the checkpoints), ``"m3"`` (total nodes) and
    ``"m4"`` (mean seconds per iteration).
    """
    y = check_vector(outputs, "outputs")
    nodes = np.asarray(nodes, dtype=np.int64).reshape(-1)
    seconds = np.asarray(seconds, dtype=float).reshape(-1)
    if nodes.size == 0 or nodes.size != seconds.size:
        raise ValueError(
            f"nodes and seconds must have one entry per iteration, got {nodes.size}, {seconds.size}"
        )
    if y.size != 1 + kappa * nodes.size:
        raise ValueError(
            f"outputs must have 1 + kappa T = {1 + kappa * nodes.size} entries, got {y.size}"
        )
    n = checkpoints(y.size, kappa)
    return {
        "n": n,
        "m1": average_normalized_output(y, m)[n],
        "m2": simple_regret(y, max_value)[n],
        "m3": int(nodes.sum()),
        "m4": float(seconds.mean()),
    }


def aggregate(metrics: list[dict]) -> dict[str, tuple]:
    """Mean and standard error (``std(ddof=1)/sqrt(R)``) of M1–M4 over ``R`` runs' dicts of
    :func:`run_metrics`: ``{"n": n, "m1": (mean, se), "m2": ..., "m3": ..., "m4": ...}``."""
    if not metrics:
        raise ValueError("aggregate needs at least one run")
    n = metrics[0]["n"]
    if any(not np.array_equal(r["n"], n) for r in metrics):
        raise ValueError("runs of different lengths cannot be aggregated")
    out: dict[str, tuple] = {"n": n}
    for key in ("m1", "m2", "m3", "m4"):
        mean, se = mean_stderr(np.array([r[key] for r in metrics], dtype=float))
        out[key] = (mean, se)
    return out


def in_sigma_units(a, b, sigma_y: float):
    """``(a - b) / sigma_y``: a difference of M1 or M2 in the thesis's units of ``sigma_y``."""
    sigma_y = check_real(sigma_y, "sigma_y", low=0.0)
    return (np.asarray(a, dtype=float) - np.asarray(b, dtype=float)) / sigma_y
