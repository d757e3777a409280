"""The ask/tell loop, oracles that answer by row index, and regret bookkeeping."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from frontierbo._validation import SeedLike, as_generator, check_int, check_real, check_vector


class Oracle(Protocol):
    """Anything that returns a (noisy) objective value for a row index."""

    def query(self, index: int) -> float: ...


class AskTellOptimizer(Protocol):
    def ask(self) -> int: ...

    def tell(self, index: int, y: float) -> None: ...


class TableOracle:
    """Returns ``values[i] + N(0, noise_std^2)``; the noise stream is seeded (common random numbers:
    two oracles with the same seed give the same noise sequence, query by query)."""

    def __init__(self, values, noise_std: float = 0.0, seed: SeedLike = None):
        self.values = check_vector(values, "values")
        self.noise_std = check_real(noise_std, "noise_std", low=0.0, low_open=False)
        self._rng = as_generator(seed)
        self.n_queries = 0

    def query(self, index: int) -> float:
        i = check_int(index, "index", low=0, high=len(self.values) - 1)
        self.n_queries += 1
        noise = self.noise_std * self._rng.standard_normal() if self.noise_std > 0 else 0.0
        return float(self.values[i] + noise)


class RegretTrace:
    """Simple and cumulative regret of a sequence of queried rows, from noise-free ``values``.

    ``simple[k] = max(values) - max(values[i_1..i_k])`` and ``instant[k] = max(values) - values[i_k]``.
    """

    def __init__(self, values):
        self.values = check_vector(values, "values")
        self.best = float(self.values.max())
        self.instant: list[float] = []
        self.simple: list[float] = []

    def record(self, index: int) -> None:
        r = self.best - float(self.values[index])
        self.instant.append(r)
        self.simple.append(min(r, self.simple[-1]) if self.simple else r)


@dataclass(frozen=True)
class BOResult:
    """Outcome of ``run_bo``. Arrays over the T optimiser rounds unless stated.

    ``simple_regret`` has length T + 1: entry 0 is after the initial design, entry t after round t.
    ``cumulative_regret`` has length T + 1 and sums the instantaneous regret of rounds 1..t.
    """

    initial_indices: np.ndarray
    indices: np.ndarray
    observations: np.ndarray
    simple_regret: np.ndarray | None
    cumulative_regret: np.ndarray | None


def run_bo(
    optimizer: AskTellOptimizer,
    oracle: Oracle,
    iterations: int,
    initial_indices=(),
    true_values=None,
) -> BOResult:
    """Tell the initial rows, then ``iterations`` rounds of ask -> query -> tell.

    ``true_values`` (n,) noise-free objective: when given, regret traces are recorded.
    """
    iterations = check_int(iterations, "iterations", low=1)
    init = [int(i) for i in initial_indices]
    trace = RegretTrace(true_values) if true_values is not None else None
    for i in init:
        optimizer.tell(i, oracle.query(i))
        if trace is not None:
            trace.record(i)
    indices, ys = [], []
    for _ in range(iterations):
        i = optimizer.ask()
        y = oracle.query(i)
        optimizer.tell(i, y)
        indices.append(i)
        ys.append(y)
        if trace is not None:
            trace.record(i)
    simple = cumulative = None
    if trace is not None:
        k = len(init)
        s0 = trace.simple[k - 1] if k else np.nan  # undefined before any query
        simple = np.concatenate([[s0], trace.simple[k:]])
        cumulative = np.concatenate([[0.0], np.cumsum(trace.instant[k:])])
    return BOResult(np.array(init, dtype=int), np.array(indices), np.array(ys), simple, cumulative)
