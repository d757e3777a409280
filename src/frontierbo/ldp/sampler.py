"""The LDP paper's algorithms as study samplers, with tells privatised on the evaluator's side.

``algorithm="ata-gp-ucb"``, ``"tgp-ucb"`` or ``"moma-gp-ucb"`` (:mod:`~frontierbo.ldp.ata_gp_ucb`,
:mod:`~frontierbo.ldp.tgp_ucb`, :mod:`~frontierbo.ldp.moma_gp_ucb`). With ``epsilon`` they are the
LDP versions: :meth:`Study.tell` passes every value through CTL(epsilon) (discrete Laplace of
scale ``2 (B + R) / epsilon`` after clipping to ``[-(B + R), B + R]``) *in the process that
tells*, before anything is written, so the database, every other worker and the algorithm see
only privatised values. That is the paper's model: the user privatises, the learner sees
``y_bar``. Without ``epsilon`` they are the non-private heavy-tailed algorithms on raw values.

What holds (``privacy()`` returns it as a :class:`~frontierbo.dp.accounting.PrivacyGuarantee`):
each told value, as stored, is ``epsilon``-LDP with respect to that value, for every input (the
clipping makes it unconditional). The noise comes from fresh OS entropy, deliberately *not* from
the study's seed: the seed is stored in the database, and noise that could be re-drawn from it
could be subtracted. So a study's asks are reproducible from its database, and its privatised
values are not re-drawable. Rows, trial numbers and timestamps are stored in the clear (the
paper's learner sees them too). Values the user reports for the same row twice are two
separate releases (epsilon each): LDP is per report.

The bandit model of the paper: ``candidates`` are the arms, a trial is one pull (a row may be
asked many times), ``horizon`` is the planned number of trials T (the parameters q, b_t, beta_t,
k_mom depend on it), ``B`` bounds ``|f|`` and ``R`` the noise. The kernel is a squared
exponential with variance 1 (the paper's ``k(x, x) <= 1``) on the candidates scaled to the unit
cube, with ``lengthscale`` in those units. The algorithms are sequential: one trial at a time.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

import numpy as np

from frontierbo._validation import check_int, check_positive
from frontierbo.core.kernels import make_kernel
from frontierbo.ldp.arguments import LDPArguments
from frontierbo.ldp.experiment import ALGORITHMS, BETA_SCALE, DELTA, LAM, PROFILE
from frontierbo.ldp.randomiser import CTL
from frontierbo.study.samplers import ReplaySampler, unit_cube


class _Pulls:
    """An LDP algorithm and the arm it was asked for (asked once per round: its ask may draw)."""

    def __init__(self, algorithm):
        self.algorithm, self.asked = algorithm, None

    def ask(self) -> int:
        if self.asked is None:
            self.asked = int(self.algorithm.ask())
        return self.asked

    def tell(self, row: int, value: float) -> None:
        arm = self.ask()
        if arm != row:
            raise RuntimeError(
                f"the study's history does not replay: the algorithm asks row {arm}, the trial "
                f"told row {row} (was the study's history written by another algorithm?)"
            )
        self.algorithm.tell(row, value)
        self.asked = None


@dataclass(frozen=True)
class _LDPSampler(ReplaySampler):
    """Common settings of the three samplers (see the module doc)."""

    horizon: int = 0
    B: float = 0.0
    R: float | None = None
    epsilon: float | None = None
    lengthscale: float = 0.2
    v: float | None = None
    c: float | None = None
    lam: float = LAM
    delta: float = DELTA
    profile: str = PROFILE
    beta_scale: float = BETA_SCALE
    variant = ""

    def __post_init__(self):
        check_int(self.horizon, "horizon (the planned number of trials T)", low=1)
        check_positive(self.lengthscale, "lengthscale")
        # the paper's one rule per argument (B > 0, R required with epsilon, moments, ...)
        args = self.arguments()
        args.moment("c" if self.variant == "moma" else "v", self.name)

    def arguments(self) -> LDPArguments:
        return LDPArguments(
            T=self.horizon, B=self.B, R=self.R, eps_priv=self.epsilon, v=self.v, c=self.c,
            lam=self.lam, delta=self.delta, profile=self.profile, beta_scale=self.beta_scale,
        )  # fmt: skip

    def settings(self) -> dict:
        out = super().settings()
        out.pop("name")
        return out

    # -- the evaluator's side --------------------------------------------------------------
    def randomiser(self) -> CTL | None:
        if self.epsilon is None:
            return None
        return CTL(self.epsilon, self.B, self.R, clip_to_sensitivity=True)

    def privacy(self):
        """The guarantee of each stored value (None for the non-private algorithms)."""
        ctl = self.randomiser()
        return None if ctl is None else ctl.guarantee()

    @property
    def privatise_tell(self):
        ctl = self.randomiser()
        if ctl is None:
            return None
        return lambda value: ctl.randomise(value, None)  # None: fresh OS entropy, not the seed

    # -- ReplaySampler -----------------------------------------------------------------------
    def build(self, candidates: np.ndarray, seed: int) -> _Pulls:
        X = unit_cube(candidates)
        K = make_kernel("se", self.lengthscale, 1.0)(X)
        module, cls_name, _, _ = ALGORITHMS[self.variant]
        cls = getattr(importlib.import_module(module), cls_name)
        kw = {"R": self.R, "eps_priv": self.epsilon, "v": self.v, "c": self.c}
        return _Pulls(
            cls(K, self.horizon, B=self.B, lam=self.lam, delta=self.delta, profile=self.profile,
                beta_scale=self.beta_scale, seed=np.random.default_rng([seed, 0x1D9]), **kw)
        )  # fmt: skip

    def replay(self, pulls: _Pulls, row: int, value: float, request: dict) -> None:
        pulls.tell(row, value)

    def choose(self, pulls: _Pulls, history, rng) -> int:
        return pulls.ask()


@dataclass(frozen=True)
class ATAGPUCBSampler(_LDPSampler):
    """(LDP-)ATA-GP-UCB (the paper's Algorithm 1) over the study's candidates."""

    name: str = field(default="ata-gp-ucb", init=False)
    variant = "ata"


@dataclass(frozen=True)
class TGPUCBSampler(_LDPSampler):
    """(LDP-)TGP-UCB over the study's candidates."""

    name: str = field(default="tgp-ucb", init=False)
    variant = "tgp"


@dataclass(frozen=True)
class MoMAGPUCBSampler(_LDPSampler):
    """(LDP-)MoMA-GP-UCB over the study's candidates (each chosen row is asked k_mom times)."""

    name: str = field(default="moma-gp-ucb", init=False)
    variant = "moma"
