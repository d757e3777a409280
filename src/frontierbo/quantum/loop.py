"""The stage loop shared by Q-GP-UCB, Q-LinUCB and their classical baselines, and regret per query.

A *stage* is one UCB decision plus one call ``oracle.estimate(reward, accuracy, delta)``; the
oracle reports how many queries it spent (``accuracy`` is the target accuracy of the estimate,
the paper's ``epsilon_s``).  The loop passes the accuracy by position to the oracle and to the
algorithm's ``tell`` / ``observe``, whatever their parameter is called.  Classical GP-UCB / LinUCB are the same loop with
:class:`SinglePullOracle` (one pull, one query, weight 1).  Regret is charged per query (paper
section 3.2): a stage on an arm with gap ``g`` that spent ``N`` queries adds ``N g``.

Stopping (Algorithm 1, line 5 of the paper;
docs/decisions.md#quantum-bo-stop-rule-finishes-the-last-stage): IQAE's query count is random and
known only after the call, so the loop runs whole stages while fewer than ``budget`` queries were
spent (the reference code's rule) and the regret curve is cut at ``budget`` queries; the last
stage's surplus is never charged.  An oracle that knows its count in advance (``planned_queries``,
e.g. the Line-4 counts of :class:`~frontierbo.quantum.oracles.TheoryOracle`) gets the paper's Line 5
instead: stop *before* a stage whose queries would exceed the budget, leaving the rest unused.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from frontierbo._validation import (
    SeedLike,
    as_generator,
    check_int,
    check_probability,
    check_vector,
)
from frontierbo.core.loop import Feedback, run_loop
from frontierbo.quantum.oracles import MeanOracle

__all__ = ["SinglePullOracle", "StagedRun", "run_stages"]


class SinglePullOracle:
    """Classical bandit feedback: one draw of the reward, one query, whatever the ``accuracy``.

    ``rng`` may be a ``numpy.random.Generator`` (default) or a legacy ``numpy.random.RandomState``
    (to replay the reference code's ``np.random`` streams).
    """

    def __init__(self, rng: SeedLike = None):
        self.rng = rng if isinstance(rng, np.random.RandomState) else as_generator(rng, "rng")

    def estimate(self, reward, accuracy: float, delta: float) -> tuple[float, int]:
        """One draw: ``(reward sample, 1)``; ``accuracy`` and ``delta`` are ignored."""
        return float(reward.sample(self.rng)), 1


@dataclass
class StagedRun:
    """Record of one run, one entry per stage (the initial point, if any, is stage 0).

    ``points`` are GP point indices (``>= n_arms`` for an extra point such as a continuous initial
    input); ``gaps`` are ``f_max - f(point)``; ``queries`` the oracle queries of each stage;
    ``accuracies`` the target accuracy each stage's estimate was asked for; ``betas`` the UCB
    width used (NaN for the initial point).
    """

    points: list[int] = field(default_factory=list)
    gaps: list[float] = field(default_factory=list)
    queries: list[int] = field(default_factory=list)
    accuracies: list[float] = field(default_factory=list)
    estimates: list[float] = field(default_factory=list)
    betas: list[float] = field(default_factory=list)

    def append(self, point, gap, queries, accuracy, estimate, beta) -> None:
        self.points.append(int(point))
        self.gaps.append(float(gap))
        self.queries.append(int(queries))
        self.accuracies.append(float(accuracy))
        self.estimates.append(float(estimate))
        self.betas.append(float(beta))

    @property
    def num_stages(self) -> int:
        return len(self.points)

    @property
    def total_queries(self) -> int:
        return int(sum(self.queries))

    def cumulative_regret(self, budget: int | None = None) -> np.ndarray:
        """Cumulative regret after each query, ``R[q-1] = sum of the first q per-query regrets``,
        cut at ``budget`` queries."""
        per_query = np.repeat(
            np.asarray(self.gaps, dtype=float), np.asarray(self.queries, dtype=int)
        )
        if budget is not None:
            per_query = per_query[:budget]
        return np.cumsum(per_query)

    def regret_at(self, checkpoints) -> np.ndarray:
        """``R(q)`` at the given query counts (``R(0) = 0``); NaN beyond the queries spent."""
        curve = np.concatenate([[0.0], self.cumulative_regret()])
        q = np.asarray(checkpoints, dtype=int)
        out = np.full(q.shape, np.nan)
        ok = q < curve.size
        out[ok] = curve[q[ok]]
        return out


def run_stages(
    algorithm,
    rewards,
    values,
    oracle: MeanOracle,
    budget: int,
    *,
    delta: float = 0.05,
    initial=None,
    max_stages: int = 10**7,
) -> StagedRun:
    """Run stages until ``budget`` queries are spent (the last stage completes).

    The stages go through the shared loop :func:`frontierbo.core.loop.run_loop` (cost = oracle
    queries).

    Args:
        algorithm: ``ask() -> Stage``, ``tell(index, y, accuracy)``,
            ``observe(point, y, accuracy)``.
        rewards: ``rewards(i)`` -> reward distribution of arm ``i``.
        values: (n_arms,) true mean rewards (regret only; never shown to the algorithm).
        oracle: ``estimate(reward, accuracy, delta) -> (y, queries)``.
        budget: query budget ``T``.
        delta: failure probability passed to the oracle at every stage (reference: IQAE's 0.05;
            the paper's theory: ``delta / (2 m_bar)``).
        initial: optional ``(point, reward, value, accuracy)``: one stage on an extra point before
            the UCB stages (the reference code's random initial input, queried with accuracy 1).
        max_stages: safety cap on the number of stages.
    """
    values = check_vector(values, "values")
    budget = check_int(budget, "budget", low=1)
    delta = check_probability(delta, "delta")
    f_max = float(values.max())
    run = StagedRun()
    spent = 0
    if initial is not None:
        point, reward, value, accuracy = initial
        y, n = oracle.estimate(reward, accuracy, delta)
        algorithm.observe(point, y, accuracy)
        run.append(point, f_max - value, n, accuracy, y, float("nan"))
        spent += n
    if spent >= budget:
        return run
    planned = getattr(oracle, "planned_queries", None)
    # planned_cost and estimate both need the stage's reward; build it once per arm in a row
    arm_reward = functools.lru_cache(maxsize=1)(rewards)

    def reward_of(stage):
        return arm_reward(stage.index)

    def estimate(stage) -> Feedback:
        y, n = oracle.estimate(reward_of(stage), stage.accuracy, delta)
        return Feedback(y, n)

    def tell(stage, feedback: Feedback) -> None:
        algorithm.tell(stage.index, feedback.value, stage.accuracy)
        run.append(
            stage.index,
            f_max - values[stage.index],
            feedback.cost,
            stage.accuracy,
            feedback.value,
            stage.width,
        )

    run_loop(
        algorithm,
        estimate,
        budget - spent,
        tell=tell,
        # Algorithm 1, line 5: an oracle that knows its count stops before overshooting
        planned_cost=None
        if planned is None
        else lambda stage: planned(reward_of(stage), stage.accuracy, delta),
        max_steps=max_stages - run.num_stages,
    )
    return run
