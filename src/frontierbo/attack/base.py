"""The contract every attack follows (BOS², its ablation and the four baselines).

An attack is an object with ``name`` and ``attack(oracle, rng, details)``. It queries the model
only through the :class:`~frontierbo.attack.oracle.QueryOracle` and either returns (it gave up
before the budget was spent, e.g. an optimiser converged) or is stopped by the oracle's
:class:`AttackSucceeded` / :class:`BudgetExhausted`. It writes what the log should keep (loops,
chosen dimensions, stopping decisions) into the ``details`` dict as it goes, so the record
survives those exceptions. :func:`execute` turns all of that into one :class:`AttackResult`; the
experiment code never handles an attack's exceptions itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from frontierbo._threads import one_blas_thread
from frontierbo._validation import SeedLike, as_generator
from frontierbo.attack.oracle import AttackSucceeded, BudgetExhausted, QueryOracle


class Attack(Protocol):
    """A black-box attack: ``attack(oracle, rng, details)`` queries through ``oracle`` only."""

    name: str

    def attack(self, oracle: QueryOracle, rng: np.random.Generator, details: dict) -> None: ...


@dataclass(frozen=True)
class AttackResult:
    """What one attack instance did.

    ``queries`` is the number of model queries made: the 1-based index of the successful query
    when ``success``. ``x_adv`` is the adversarial input (None on failure); ``best_objective`` the
    largest y of (5.2) seen; ``stopped_by`` one of ``"success"``, ``"budget"``, ``"gave-up"``.
    """

    success: bool
    queries: int
    x_adv: np.ndarray | None
    best_objective: float
    stopped_by: str
    details: dict = field(default_factory=dict)


def execute(attack: Attack, oracle: QueryOracle, seed: SeedLike = 0) -> AttackResult:
    """Run ``attack`` on ``oracle`` with a seeded Generator and collect the outcome.

    BLAS runs on one thread meanwhile (:func:`~frontierbo._threads.one_blas_thread`): the GP
    matrices of an attack are small and a second thread made the BO attacks many times slower
    on a busy 2-core machine."""
    rng = as_generator(seed)
    details: dict = {}
    try:
        with one_blas_thread():
            attack.attack(oracle, rng, details)
        stopped_by = "budget" if oracle.remaining == 0 else "gave-up"
    except AttackSucceeded:
        stopped_by = "success"
    except BudgetExhausted:
        stopped_by = "budget"
    objectives = [r.objective for r in oracle.log]
    success = oracle.success is not None
    return AttackResult(
        success=success,
        queries=oracle.success.query if success else oracle.queries,
        x_adv=oracle.success.x_adv if success else None,
        best_objective=max(objectives) if objectives else float("-inf"),
        stopped_by=stopped_by,
        details=details,
    )
