"""Algorithm 5 of the thesis (Section 5.2): the BOS² attack, with its initialisation (Section 5.3).

Initialisation (thesis Section 5.3): 10 random latent points in each of
``d_init = {6^2, 14^2, 18^2} x c``; D_per holds the 30 upsampled perturbations and their outputs,
D_dim one tuple ``((d, 10), max y)`` per initial dimension (``t_0 = 10`` literally, as in the
thesis).

    1  t <- 0; n_loop <- 0
    2  while q_init + t < T:
         2.1  d* <- DimensionBO(D_dim, t, i_max, d_allowed)                          (Alg. 6)
         2.2  b <- min(i_max, T - q_init - t)                              (budget guard)
         2.3  (i, {u_j}, {y_j}) <- PerturbationBO(D_per, d*, b, y* = max y of D_per, n_loop)
         2.4  D_per <- D_per + {(u_j, y_j)}
         2.5  D_dim <- D_dim + {((d*, t + i), max_j y_j)}         (this loop's outputs only)
         2.6  t <- t + i;  n_loop <- n_loop + 1
    3  return failure                     (success ends the attack inside the oracle)

The budget guard of line 2.2 is ours (docs/decisions.md#bos-last-loop-truncated-to-the-budget-left).
``T - q_init - t`` is the oracle's remaining budget: whether the 30 initial queries count towards
``T`` (``count_init_in_budget``, docs/decisions.md#bos-initial-queries-count-towards-the-budget) is
the oracle's budget, set by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.stats import qmc

from frontierbo._validation import check_int
from frontierbo.attack.add_gp_ucb import AddGPSettings
from frontierbo.attack.dimension_bo import DimensionBO, DimensionDatum
from frontierbo.attack.oracle import QueryOracle
from frontierbo.attack.perturbation_bo import LoopOutcome, StoppingSettings, perturbation_bo
from frontierbo.attack.resize import INIT_SIDES, SIDES, latent_dimensions, upsample

INIT_SAMPLING = ("uniform", "lhs")


@dataclass(frozen=True)
class BOS2:
    """The BOS² attack (``stopping=None`` is the ablation "BOS² (no stopping)").

    Defaults are the thesis's (Section 5.3): ``i_max = 40``, ``i_0 = 8``, 10 initial points in each
    of ``d_init``, 12 groups of 20 candidate decompositions, hyperparameters every 5 queries.
    """

    name: str = "bos2"
    stopping: StoppingSettings | None = field(default_factory=StoppingSettings)
    perturbation: AddGPSettings = field(default_factory=AddGPSettings)
    i_max: int = 40
    initial_queries: int = 8
    refit_every: int = 5
    sides: tuple[int, ...] = SIDES
    init_sides: tuple[int, ...] = INIT_SIDES
    init_per_dimension: int = 10
    init_sampling: str = "uniform"
    dimension_beta_sqrt: float = 2.0
    dimension_restarts: int = 5

    def __post_init__(self):
        check_int(self.i_max, "i_max", low=1)
        check_int(self.initial_queries, "initial_queries", low=1, high=self.i_max)
        check_int(self.refit_every, "refit_every", low=1)
        check_int(self.init_per_dimension, "init_per_dimension", low=1)
        if self.init_sampling not in INIT_SAMPLING:
            raise ValueError(
                f"init_sampling must be one of {INIT_SAMPLING}, got {self.init_sampling!r}"
            )

    def initial_points(self, d: int, rng: np.random.Generator) -> np.ndarray:
        """``init_per_dimension`` latent points in ``[-1, 1]^d``
        (docs/decisions.md#bos-uniform-initial-points)."""
        if self.init_sampling == "lhs":  # the BayesOpt code's pyDOE.lhs
            return 2.0 * qmc.LatinHypercube(d=d, seed=rng).random(self.init_per_dimension) - 1.0
        return rng.uniform(-1.0, 1.0, size=(self.init_per_dimension, d))

    def initialise(self, oracle: QueryOracle, rng: np.random.Generator, details: dict):
        """The initialisation (thesis Section 5.3): D_per (perturbations, outputs) and D_dim."""
        shape, channels = oracle.x0.shape, oracle.x0.shape[-1]
        perturbations, outputs, dim_data = [], [], []
        details["init"] = {"queries": 0, "dimensions": []}
        for d in latent_dimensions(channels, self.init_sides):
            ys = []
            for z in self.initial_points(d, rng):
                u = upsample(z, shape)
                perturbations.append(u)
                ys.append(oracle(u))
                outputs.append(ys[-1])
                details["init"]["queries"] += 1
            dim_data.append(((d, self.init_per_dimension), max(ys)))
            details["init"]["dimensions"].append(d)
        return np.array(perturbations), np.array(outputs), dim_data

    def attack(self, oracle: QueryOracle, rng: np.random.Generator, details: dict) -> None:
        perturbations, outputs, dim_data = self.initialise(oracle, rng, details)
        allowed = latent_dimensions(oracle.x0.shape[-1], self.sides)
        dimension_bo = DimensionBO(
            allowed,
            budget=oracle.budget,
            i_max=self.i_max,
            beta_sqrt=self.dimension_beta_sqrt,
            n_restarts=self.dimension_restarts,
        )
        loops = details.setdefault("loops", [])
        t, n_loop = 0, 0  # line 1
        while oracle.remaining > 0:  # line 2
            d_star, _ = dimension_bo(dim_data, t, rng)  # 2.1
            loop_budget = min(self.i_max, oracle.remaining)  # 2.2
            outcome = LoopOutcome(d_star, [], [])
            loops.append({"dimension": d_star, "start": oracle.queries, "outcome": outcome})
            perturbation_bo(  # 2.3
                oracle,
                perturbations,
                outputs,
                d_star,
                loop_budget,
                float(outputs.max()),
                n_loop,
                rng,
                settings=self.perturbation,
                stopping=self.stopping,
                initial_queries=self.initial_queries,
                refit_every=self.refit_every,
                outcome=outcome,
            )
            perturbations = np.concatenate([perturbations, np.array(outcome.perturbations)])  # 2.4
            outputs = np.concatenate([outputs, outcome.outputs])
            dim_data.append(((d_star, t + outcome.length), max(outcome.outputs)))  # 2.5
            t, n_loop = t + outcome.length, n_loop + 1  # 2.6


def loop_summary(details: dict) -> list[dict]:
    """The per-loop log in plain types: dimension, first query, length, best y, early stop."""
    rows = []
    for loop in details.get("loops", []):
        o: LoopOutcome = loop["outcome"]
        rows.append(
            {
                "dimension": loop["dimension"],
                "start": loop["start"],
                "length": o.length,
                "best": max(o.outputs) if o.outputs else None,
                "stopped_early": o.stopped_early,
            }
        )
    return rows


__all__ = ["BOS2", "DimensionDatum", "loop_summary"]
