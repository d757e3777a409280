"""The one ask/tell loop every system's runs go through, oracles that answer by row index, and
regret bookkeeping.

:func:`run_loop` is the general loop: ``action = policy.ask()``, ``feedback =
evaluate(action)``, ``policy.tell(action, feedback.value)``, until the budget is spent. An action
is whatever the policy proposes and the evaluator understands: a row index (GP-UCB, LDP BO), a
stage ``(arm, accuracy)`` (quantum BO), a path of rows (macro-actions) or a point in a box
(attacks); the loop never looks inside it. Each evaluation reports its cost (one query, or the
oracle queries a quantum estimate spent), and the loop stops once ``budget`` is spent: the last
step completes and may overshoot, unless the evaluator can tell the cost *before* evaluating
(``planned_cost``), in which case a step that would overshoot is not taken.

:func:`run_bo` is the finite-domain special case (row indices, unit cost, regret traces).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from frontierbo._validation import SeedLike, as_generator, check_int, check_real, check_vector


class Oracle(Protocol):
    """Anything that returns a (noisy) objective value for a row index."""

    def query(self, index: int) -> float: ...


class AskTellOptimizer(Protocol):
    def ask(self) -> int: ...

    def tell(self, index: int, y: float) -> None: ...


class Policy(Protocol):
    """Anything with ``ask() -> action`` and ``tell(action, value)``."""

    def ask(self) -> Any: ...

    def tell(self, action: Any, value: Any) -> None: ...


@dataclass(frozen=True)
class Feedback:
    """What one evaluation returns: the value told to the policy and what it cost (>= 1)."""

    value: Any
    cost: int = 1


@dataclass
class LoopTrace:
    """One entry per step of :func:`run_loop`: the action, its feedback value and its cost."""

    actions: list = field(default_factory=list)
    values: list = field(default_factory=list)
    costs: list[int] = field(default_factory=list)

    @property
    def spent(self) -> int:
        return int(sum(self.costs))

    def __len__(self) -> int:
        return len(self.actions)


def run_loop(
    policy: Policy,
    evaluate: Callable[[Any], Feedback],
    budget: int,
    *,
    tell: Callable[[Any, Feedback], None] | None = None,
    planned_cost: Callable[[Any], int] | None = None,
    max_steps: int | None = None,
) -> LoopTrace:
    """Ask, evaluate, tell until ``budget`` (total cost) is spent; returns the trace.

    Args:
        policy: ``ask() -> action`` and ``tell(action, value)``.
        evaluate: ``evaluate(action) -> Feedback`` (the objective, an oracle, a randomiser...).
        budget: total cost to spend, >= 1 (with unit costs: the number of steps).
        tell: replaces ``policy.tell(action, feedback.value)`` when the policy needs more of the
            feedback (e.g. the accuracy a quantum estimate was made with).
        planned_cost: ``planned_cost(action) -> cost`` known before evaluating; a step whose
            cost would exceed the budget is then not taken (Q-GP-UCB's Algorithm 1, line 5).
        max_steps: safety cap on the number of steps (RuntimeError when reached).
    """
    budget = check_int(budget, "budget", low=1)
    trace = LoopTrace()
    spent = 0
    while spent < budget:
        if max_steps is not None and len(trace) >= max_steps:
            raise RuntimeError(f"run_loop: more than max_steps={max_steps} steps")
        action = policy.ask()
        if planned_cost is not None and spent + planned_cost(action) > budget:
            break
        feedback = evaluate(action)
        if feedback.cost < 1:
            raise RuntimeError(
                f"an evaluation reported cost {feedback.cost}; every step costs >= 1"
            )
        if tell is None:
            policy.tell(action, feedback.value)
        else:
            tell(action, feedback)
        trace.actions.append(action)
        trace.values.append(feedback.value)
        trace.costs.append(int(feedback.cost))
        spent += feedback.cost
    return trace


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
    steps = run_loop(optimizer, lambda i: Feedback(oracle.query(i)), iterations)
    indices, ys = steps.actions, steps.values
    if trace is not None:
        for i in indices:
            trace.record(i)
    simple = cumulative = None
    if trace is not None:
        k = len(init)
        s0 = trace.simple[k - 1] if k else np.nan  # undefined before any query
        simple = np.concatenate([[s0], trace.simple[k:]])
        cumulative = np.concatenate([[0.0], np.cumsum(trace.instant[k:])])
    return BOResult(np.array(init, dtype=int), np.array(indices), np.array(ys), simple, cumulative)
