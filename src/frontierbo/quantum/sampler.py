"""Q-GP-UCB (Dai et al. 2023, Algorithm 1) as a study sampler: ``algorithm="q-gp-ucb"``; and
the paper's Q-LinUCB baseline, ``algorithm="q-linucb"``, with the same protocol.

A trial is one *stage*: ask returns the row ``x_s`` and a request ``{"accuracy": eps_s,
"delta": delta}``; the evaluator estimates the row's mean reward to within ``eps_s`` with
probability at least ``1 - delta`` with its own oracle (quantum amplitude estimation on its
circuit, e.g. :class:`~frontierbo.quantum.oracles.IQAEOracle`, or a classical Monte Carlo
average) and tells the estimate; the model weights it by ``1 / eps_s^2`` (line 7). How many
oracle queries the stage cost is the evaluator's business (the regret of the paper counts
them); the study records the stage.

As in the reproduction (:mod:`frontierbo.quantum.userdata`): the first trial is a uniformly
random row estimated to accuracy 1 (the reference code's initial point; it is observed, not a
stage), then UCB stages with the ``"log"`` width ``1 + ln n``; the kernel is a squared
exponential with variance 1 on the candidates scaled to the unit cube (``lengthscale`` in those
units), ``lambda = 1``. Stages are sequential (eps_s depends on every earlier estimate) and may
choose a row again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from frontierbo._validation import check_positive, check_probability
from frontierbo.core.kernels import make_kernel
from frontierbo.quantum.linear import QLinUCB
from frontierbo.quantum.q_gp_ucb import QGPUCB, WEIGHTINGS, WIDTH_SCHEDULES
from frontierbo.study.samplers import ReplaySampler, unit_cube

#: The accuracy of the initial random row (the reference code's).
INITIAL_ACCURACY = 1.0


@dataclass(frozen=True)
class _StageSampler(ReplaySampler):
    """Stages on a weighted posterior (Q-GP-UCB, Q-LinUCB): the initial random row at accuracy
    1, then each stage's arm with its accuracy as the request."""

    lam: float = 1.0
    #: the failure probability each stage's estimate may have (the request's "delta")
    oracle_delta: float = 0.05
    weighting: str = "paper"

    def _check(self) -> None:
        if isinstance(self.width, str) and self.width not in WIDTH_SCHEDULES:
            raise ValueError(
                f"width must be one of {WIDTH_SCHEDULES} or a number, got {self.width!r}"
            )
        if not isinstance(self.width, str):
            check_positive(self.width, "width")
        if self.weighting not in WEIGHTINGS:
            raise ValueError(f"weighting must be one of {WEIGHTINGS}, got {self.weighting!r}")
        check_probability(self.oracle_delta, "oracle_delta")
        self.build(np.eye(2), 0)  # the algorithm's own checks (lam, delta, bounds)

    def settings(self) -> dict:
        out = super().settings()
        out.pop("name")
        return out

    def replay(self, algorithm, row: int, value: float, request: dict) -> None:
        accuracy = request.get("accuracy", INITIAL_ACCURACY)
        if request.get("initial"):
            algorithm.observe(row, value, accuracy)
        else:
            algorithm.tell(row, value, accuracy)  # line 7

    def choose(self, algorithm, history, rng) -> tuple[int, dict]:
        if history.rows.size == 0:  # the initial random row (not a stage)
            row = int(rng.integers(history.candidates.shape[0]))
            return row, {"accuracy": INITIAL_ACCURACY, "delta": self.oracle_delta, "initial": True}
        stage = algorithm.ask()  # lines 2-3
        return stage.index, {"accuracy": stage.accuracy, "delta": self.oracle_delta}


@dataclass(frozen=True)
class QGPUCBSampler(_StageSampler):
    """Q-GP-UCB over the study's candidates; see the module doc."""

    lengthscale: float = 0.2
    width: float | str = "log"
    #: the RKHS-norm bound and confidence of the "theory" width
    B: float = 1.0
    delta: float = 0.1
    name: str = field(default="q-gp-ucb", init=False)

    def __post_init__(self):
        check_positive(self.lengthscale, "lengthscale")
        self._check()

    def build(self, candidates: np.ndarray, seed: int) -> QGPUCB:
        gram = make_kernel("se", self.lengthscale, 1.0)(unit_cube(candidates))
        return QGPUCB(gram, lam=self.lam, width=self.width, B=self.B, delta=self.delta,
                      weighting=self.weighting)  # fmt: skip


@dataclass(frozen=True)
class QLinUCBSampler(_StageSampler):
    """Q-LinUCB (the paper's linear baseline, Theorem 6's width by default) over the study's
    candidates scaled to the unit cube, as ``run quantum-bo`` scales its features."""

    width: float | str = "theory"
    #: the bound on ||theta*|| of the "theory" width
    S: float = 1.0
    delta: float = 0.1
    name: str = field(default="q-linucb", init=False)

    def __post_init__(self):
        self._check()

    def build(self, candidates: np.ndarray, seed: int) -> QLinUCB:
        return QLinUCB(unit_cube(candidates), lam=self.lam, width=self.width, S=self.S,
                       delta=self.delta, weighting=self.weighting)  # fmt: skip
