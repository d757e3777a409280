"""Reward distributions of one arm, and how a quantum oracle encodes them as an amplitude.

A quantum Monte Carlo (QMC) oracle for arm ``x`` (paper eq. 2) prepares a state whose
objective-qubit amplitude ``a`` is an affine function of the mean reward.  Amplitude estimation
returns ``a_hat`` with ``|a_hat - a| <= eps_a`` w.p. ``>= 1 - alpha``; the reward estimate is
``offset + scale * a_hat``.  :class:`AmplitudeEncoding` carries that map, so the numpy simulator
(:mod:`frontierbo.quantum.oracles`) and the Qiskit circuits (:mod:`frontierbo.quantum.circuits`)
share it and differ only in how ``a_hat`` is produced.

Two encodings:

``"exact"`` (default, Montanaro's bounded-reward construction)
    For a finite reward distribution with values ``v_i`` in ``[low, high]`` and probabilities
    ``p_i``: prepare ``sum_i sqrt(p_i)|i>`` and rotate the objective qubit by
    ``2 arcsin sqrt(g_i)``, ``g_i = (v_i - low) / (high - low)``, controlled on ``|i>``.  Then
    ``a = (E[v] - low) / (high - low)`` exactly, ``eps_a = eps / (high - low)`` and the
    guarantee is ``|y - E[v]| <= eps`` w.p. ``>= 1 - alpha``.

``"reference"`` (the Q-GP-UCB authors' code)
    See docs/decisions.md#quantum-bo-gaussian-reference-encoding-measures-qubit-0.
    Bernoulli: identical to ``"exact"``.  Gaussian: the objective is the least-significant qubit of
    the 64-point grid, whose one-probability is exactly 1/2 (the grid is symmetric about the mean),
    and ``y = mean + (12 sigma / pi)(a_hat - 1/2)`` with ``eps_a = eps / (3 sigma)``.  The
    oracle thus estimates a *known* amplitude; ``sigma`` acts only through the query count and the
    error scale, and the guarantee is ``|y - mean| <= (4/pi) eps``.  Kept so that the published
    figures can be compared query for query.

Names.  In frontierbo ``epsilon`` is a privacy budget (PO-GP-UCB, LDP BO), so the target accuracy
of a mean estimate is called ``accuracy`` in the quantum API (the papers' ``epsilon`` / ``eps_s``;
formulas in docstrings and comments keep the papers' symbols ``eps``, ``eps_s``), and its
amplitude-scale counterpart ``accuracy_a`` (the reference code's ``epsilon_a``, formula symbol
``eps_a``; qiskit's ``epsilon_target``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from frontierbo._validation import check_int, check_real

__all__ = [
    "ENCODINGS",
    "AmplitudeEncoding",
    "BernoulliReward",
    "GaussianReward",
    "RewardDistribution",
]

ENCODINGS = ("exact", "reference")

#: Bounds on the amplitude-scale target, as in the reference code
#: (docs/decisions.md#quantum-bo-amplitude-scale-accuracy-is-clipped).
ACCURACY_A_MIN, ACCURACY_A_MAX = 1e-6, 0.5


@dataclass(frozen=True)
class AmplitudeEncoding:
    """How a reward's mean is read off an estimated amplitude.

    Attributes:
        amplitude: ``a``, the probability that the objective qubit reads 1.
        offset, scale: the reward estimate is ``offset + scale * a_hat``.
        accuracy_scale: the amplitude-scale target is ``accuracy_a = accuracy * accuracy_scale``
            (clipped to ``[1e-6, 0.5]``).
    """

    amplitude: float
    offset: float
    scale: float
    accuracy_scale: float

    def accuracy_a(self, accuracy: float) -> float:
        """Amplitude-scale accuracy ``eps_a`` for a reward-scale target ``accuracy`` (clipped,
        docs/decisions.md#quantum-bo-amplitude-scale-accuracy-is-clipped)."""
        return float(np.clip(accuracy * self.accuracy_scale, ACCURACY_A_MIN, ACCURACY_A_MAX))

    def to_reward(self, a_hat: float) -> float:
        return self.offset + self.scale * a_hat


def _check_encoding(encoding: str) -> str:
    if encoding not in ENCODINGS:
        raise ValueError(f"encoding must be one of {ENCODINGS}, got {encoding!r}")
    return encoding


@dataclass(frozen=True)
class BernoulliReward:
    """Reward 1 with probability ``p``, else 0 (bounded noise, 1 qubit)."""

    p: float

    def __post_init__(self):
        check_real(self.p, "p", low=0.0, high=1.0, low_open=False, high_open=False)

    @property
    def mean(self) -> float:
        return float(self.p)

    @property
    def num_qubits(self) -> int:
        return 1

    def support(self) -> tuple[np.ndarray, np.ndarray]:
        """Values ``(0, 1)`` and their probabilities."""
        return np.array([0.0, 1.0]), np.array([1.0 - self.p, self.p])

    def sample(self, rng, size=None):
        """Classical draws; ``rng`` is a ``numpy.random.Generator`` or a legacy ``RandomState``."""
        return rng.binomial(1, self.p, size=size)

    def encoding(self, kind: str = "exact") -> AmplitudeEncoding:
        _check_encoding(kind)  # both encodings coincide: a = p, y = a_hat
        return AmplitudeEncoding(amplitude=self.mean, offset=0.0, scale=1.0, accuracy_scale=1.0)


@dataclass(frozen=True)
class GaussianReward:
    """Reward ``N(mean, sigma^2)``; its quantum oracle uses a normal discretised on ``2**num_qubits``
    equally spaced points over ``mean -+ 3 sigma`` (probabilities proportional to the density,
    renormalised), as qiskit-finance's ``NormalDistribution`` in the reference code.

    Classical draws (:meth:`sample`) are from the untruncated normal, as the classical baselines in
    the paper.  The grid is symmetric about ``mean``, so its mean is exactly ``mean``.
    """

    mean: float
    sigma: float
    num_qubits: int = 6

    def __post_init__(self):
        check_real(self.mean, "mean")
        check_real(self.sigma, "sigma", low=0.0)
        check_int(self.num_qubits, "num_qubits", low=1, high=16)

    @property
    def low(self) -> float:
        return self.mean - 3.0 * self.sigma

    @property
    def high(self) -> float:
        return self.mean + 3.0 * self.sigma

    def support(self) -> tuple[np.ndarray, np.ndarray]:
        """The ``2**num_qubits`` grid values and their probabilities."""
        values = np.linspace(self.low, self.high, 2**self.num_qubits)
        density = np.exp(-0.5 * ((values - self.mean) / self.sigma) ** 2)
        return values, density / density.sum()

    def sample(self, rng, size=None):
        """Classical draws; ``rng`` is a ``numpy.random.Generator`` or a legacy ``RandomState``."""
        return rng.normal(self.mean, self.sigma, size=size)

    def encoding(self, kind: str = "exact") -> AmplitudeEncoding:
        if _check_encoding(kind) == "reference":
            return AmplitudeEncoding(
                amplitude=0.5,
                offset=self.mean - 6.0 * self.sigma / math.pi,
                scale=12.0 * self.sigma / math.pi,
                accuracy_scale=1.0 / (3.0 * self.sigma),
            )
        values, probs = self.support()
        width = self.high - self.low
        amplitude = float(probs @ ((values - self.low) / width))
        return AmplitudeEncoding(
            amplitude=min(1.0, max(0.0, amplitude)),
            offset=self.low,
            scale=width,
            accuracy_scale=1.0 / width,
        )


RewardDistribution = BernoulliReward | GaussianReward
