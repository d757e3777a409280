"""Algorithm 7 of the thesis (Section 5.2): PerturbationBO, one loop of
Add-GP-UCB in the latent space ``d*`` with Bayesian optimal stopping.

The thesis's lines 9-11 reuse ``i = i_0`` for the first query after the initial phase
(docs/decisions.md#bos-loop-indices-of-algorithm-7); here ``i`` is incremented before each query, so
the loop's queries are ``i = 1..i_max``.

    1   D_proj <- {(Down_s(u), y) : (u, y) in D_per}                 (all of D_per)
    2   learn a new additive decomposition (best of 20 permutations)  (add_gp_ucb)
    3   for i = 1..min(i_0, b):  z_i <- argmax alpha_i;  y_i <- Q(Up(z_i));  update the GP
        (hyperparameters re-learned when i mod 5 = 0)
    4   if b <= i_0: return
    5   policy <- SolveBOS(y_{1:i_0}, y*, N = b, n_loop)              (if stopping)
    7   repeat  i <- i + 1;  z_i, y_i as in line 3;
                if Decide(y_{1:i}, i) = D_1: break                  (only D_1 stops)
        until i = b
    8   return i, {Up(z_j)}, {y_j}

Line 1 uses all of D_per (docs/decisions.md#bos-each-loop-trains-on-all-past-perturbations); line 2
runs at every loop (docs/decisions.md#bos-decomposition-relearned-at-every-loop); only D_1 stops a
loop (docs/decisions.md#bos-only-d1-stops-a-loop).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from frontierbo._validation import check_int, check_real
from frontierbo.attack.add_gp_ucb import AddGPSettings, AdditiveModel
from frontierbo.attack.bos import decide, solve_bos
from frontierbo.attack.oracle import QueryOracle
from frontierbo.attack.resize import downsample_many, side_of, upsample


@dataclass(frozen=True)
class StoppingSettings:
    """SolveBOS's constants, the BO-BOS code's "small K1" setting
    (docs/decisions.md#bos-stopping-constants-from-bo-bos)."""

    k1: float = 100.0
    gamma: float = 0.99
    k2: float = 99.0
    cost: float = 1.0
    grid: int = 100
    samples: int = 100_000
    min_samples: int = 30

    def __post_init__(self):
        for name in ("k1", "k2", "cost"):
            check_real(getattr(self, name), name, low=0.0)
        check_real(self.gamma, "gamma", low=0.0, high=1.0, high_open=False)
        check_int(self.grid, "grid", low=3)
        check_int(self.samples, "samples", low=1)
        check_int(self.min_samples, "min_samples", low=0)


@dataclass
class LoopOutcome:
    """What one loop added to D_per: its latent dimension, queries ``i`` and outputs."""

    dimension: int
    perturbations: list
    outputs: list
    stopped_early: bool = False

    @property
    def length(self) -> int:
        return len(self.outputs)


def perturbation_bo(
    oracle: QueryOracle,
    perturbations: np.ndarray,
    outputs: np.ndarray,
    dimension: int,
    loop_budget: int,
    incumbent: float,
    loop_index: int,
    rng: np.random.Generator,
    *,
    settings: AddGPSettings,
    stopping: StoppingSettings | None,
    initial_queries: int = 8,
    refit_every: int = 5,
    outcome: LoopOutcome | None = None,
) -> LoopOutcome:
    """One loop of Algorithm 7.

    Args:
        perturbations, outputs: D_per, normalised full-resolution perturbations (n, H, W, c) and
            their objectives (n,).
        dimension: ``d* = s^2 c``; loop_budget: ``b <= i_max`` (truncated to the budget left).
        incumbent: ``y*``, the best objective before this loop (Section 5.2 of the thesis).
        loop_index: ``n_loop`` (0-based), which scales the stopping cost K1.
        stopping: SolveBOS settings, or None for the ablation "BOS² (no stopping)".
        outcome: filled in place as queries happen (so the caller's log survives a success).
    """
    shape = oracle.x0.shape
    side = side_of(dimension, shape[-1])
    out = outcome if outcome is not None else LoopOutcome(dimension, [], [])
    model = AdditiveModel.learn(  # lines 1-2
        downsample_many(perturbations, side), outputs, settings, rng
    )

    def step(model: AdditiveModel, i: int) -> AdditiveModel:
        z = model.maximize_ucb(rng)
        u = upsample(z, shape)
        out.perturbations.append(u)
        out.outputs.append(oracle(u))
        model = model.add(z, out.outputs[-1])
        return model.refit(rng) if i % refit_every == 0 else model

    for i in range(1, min(initial_queries, loop_budget) + 1):  # line 3
        model = step(model, i)
    if loop_budget <= initial_queries:  # line 4
        return out
    policy = None
    if stopping is not None:  # line 5
        policy = solve_bos(
            np.array(out.outputs[:initial_queries]),
            incumbent,
            loop_budget,
            loop_index,
            rng,
            **asdict(stopping),
        )
    i = initial_queries
    while i < loop_budget:  # line 7
        i += 1
        model = step(model, i)
        if policy is not None and decide(policy, np.array(out.outputs)):
            out.stopped_early = i < loop_budget
            break
    return out  # line 8
