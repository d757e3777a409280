"""Mean estimators behind one interface: ``estimate(reward, accuracy, delta) -> (estimate, queries)``.

* :class:`IQAEOracle` -- quantum Monte Carlo by Iterative Amplitude Estimation, simulated exactly
  in distribution in NumPy (:func:`frontierbo.quantum.iqae.iqae_simulate`).
* :class:`frontierbo.quantum.circuits.QiskitIQAEOracle` -- the same estimator on real Qiskit
  circuits (statevector or Aer sampler, optional noise model; extra ``[quantum]``).
* :class:`ClassicalMonteCarloOracle` -- the classical sample mean with a Hoeffding /
  sub-Gaussian sample size, ``O(1/eps^2)`` pulls (the baseline the quantum speed-up is against).

``accuracy`` (the paper's ``epsilon``, written ``eps`` in formulas; in frontierbo ``epsilon`` is a
privacy budget) is the target accuracy on the reward scale and ``delta`` the failure probability:
the guarantee is ``P(|estimate - E[reward]| > accuracy) <= delta`` (for the ``"reference"``
Gaussian encoding the error scale is ``(4/pi) accuracy``, see :mod:`frontierbo.quantum.rewards`).
``accuracy_a`` (``eps_a``) is the same target on the amplitude scale.
``queries`` is the number of oracle queries charged to the arm: each one costs one classical pull
in the paper's regret (Section 3.2 of the paper).

Query counts of IQAE.  ``query_count="reference"`` (default) is what the paper's figures count:
qiskit's ``num_oracle_queries`` (applications of the Grover operator, ``sum_rounds shots * k``),
and, when that is 0 (every round used ``k = 0``, typical for ``eps_a >= 0.1``), the fallback
``ceil((0.8 / eps_a) ln((2/alpha) log2(pi / (4 eps_a))))`` of the reference code
(docs/decisions.md#quantum-bo-fallback-query-count-when-iqae-uses-no-grover-power).
``query_count="applications"`` counts every application of ``A`` or its inverse,
``sum_rounds shots * (2k + 1)``, a conservative count that also charges the ``k = 0`` shots.
"""

from __future__ import annotations

import math
from typing import Protocol

import numpy as np

from frontierbo._validation import SeedLike, as_generator, check_real
from frontierbo.quantum.iqae import iqae_simulate
from frontierbo.quantum.rewards import ENCODINGS, RewardDistribution

__all__ = [
    "QUERY_COUNTS",
    "ClassicalMonteCarloOracle",
    "IQAEOracle",
    "MeanOracle",
    "TheoryOracle",
    "fallback_queries",
    "lemma1_queries",
]

QUERY_COUNTS = ("reference", "applications")
SEED_MODES = ("stream", "fixed")


class MeanOracle(Protocol):
    """Anything that estimates an arm's mean reward to ``accuracy`` w.p. ``1 - delta``.

    The stage loop passes the three arguments by position, so an oracle written for the old
    signature ``estimate(reward, epsilon, delta)`` still works."""

    def estimate(
        self, reward: RewardDistribution, accuracy: float, delta: float
    ) -> tuple[float, int]: ...


def fallback_queries(accuracy_a: float, alpha: float) -> int:
    """Reference code's query count when IQAE used no Grover power (6 at ``accuracy_a = 0.5``):
    ``ceil((0.8 / eps_a) ln((2/alpha) log2(pi / (4 eps_a))))``."""
    eps_a = accuracy_a
    return int(math.ceil((0.8 / eps_a) * math.log((2 / alpha) * math.log2(math.pi / (4 * eps_a)))))


def _check_targets(accuracy: float, delta: float) -> tuple[float, float]:
    accuracy = check_real(accuracy, "accuracy", low=0.0)
    delta = check_real(delta, "delta", low=0.0, high=1.0)
    return accuracy, delta


def _check_choice(value: str, name: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    return value


def count_queries(result, accuracy_a: float, alpha: float, query_count: str) -> int:
    """Queries charged for one IQAE run (an ``IQAEResult`` or anything with the same two fields)."""
    if query_count == "applications":
        return int(result.num_a_applications)
    n = int(result.num_oracle_queries)
    return n if n > 0 else fallback_queries(accuracy_a, alpha)


class IQAEOracle:
    """Quantum Monte Carlo mean estimation by IQAE, simulated in NumPy (equal in distribution to
    qiskit-algorithms' ``IterativeAmplitudeEstimation`` on an ideal device).

    Args:
        rng: seed or ``numpy.random.Generator`` for the measurement outcomes.
        encoding: ``"exact"`` or ``"reference"`` (see :mod:`frontierbo.quantum.rewards`).
        query_count: ``"reference"`` or ``"applications"`` (module docstring).
        confint_method: ``"beta"`` (Clopper-Pearson, qiskit's default) or ``"chernoff"``.
        shots: shots per IQAE round; default the reference code's ``ceil(32 ln((2/alpha)
            log2(pi/(4 eps_a))))``.
        seed_mode: ``"stream"`` (default): one random stream over all calls; ``"fixed"``: every
            call restarts from ``rng`` (an int seed), so the outcome is a deterministic function of
            ``(amplitude, accuracy_a)`` -- the reference code's ``seed_simulator=0`` on every call
            (docs/decisions.md#quantum-bo-fixed-seed-mode-replays-seed-0), e.g. the same error
            at every call of the Gaussian reference encoding (whose amplitude is always 1/2).

    IQAE's confidence level is ``alpha = delta``.  ``last_result`` keeps the last ``IQAEResult``.
    """

    def __init__(
        self,
        rng: SeedLike = None,
        *,
        encoding: str = "exact",
        query_count: str = "reference",
        confint_method: str = "beta",
        shots: int | None = None,
        seed_mode: str = "stream",
    ):
        self.seed_mode = _check_choice(seed_mode, "seed_mode", SEED_MODES)
        if seed_mode == "fixed" and not isinstance(rng, int | np.integer):
            raise ValueError(f"seed_mode='fixed' needs an int seed as rng, got {rng!r}")
        self.seed = rng
        self.rng = as_generator(rng, "rng")
        self.encoding = _check_choice(encoding, "encoding", ENCODINGS)
        self.query_count = _check_choice(query_count, "query_count", QUERY_COUNTS)
        self.confint_method = confint_method
        self.shots = shots
        self.last_result = None

    def estimate(
        self, reward: RewardDistribution, accuracy: float, delta: float
    ) -> tuple[float, int]:
        """One IQAE run: ``(estimate of E[reward], queries charged)``."""
        accuracy, delta = _check_targets(accuracy, delta)
        enc = reward.encoding(self.encoding)
        accuracy_a = enc.accuracy_a(accuracy)
        rng = np.random.default_rng(self.seed) if self.seed_mode == "fixed" else self.rng
        result = iqae_simulate(
            enc.amplitude,
            accuracy_a,
            delta,
            rng,
            confint_method=self.confint_method,
            shots=self.shots,
        )
        self.last_result = result
        return enc.to_reward(result.estimation), count_queries(
            result, accuracy_a, delta, self.query_count
        )


class ClassicalMonteCarloOracle:
    """Sample mean of ``n`` classical pulls, ``n`` from a concentration bound:

    * bounded rewards in ``[low, high]`` (Bernoulli): Hoeffding,
      ``n = ceil((high - low)^2 ln(2/delta) / (2 eps^2))``;
    * Gaussian rewards: ``n = ceil(2 sigma^2 ln(2/delta) / eps^2)`` (sub-Gaussian tail),

    with ``eps = accuracy``.  Either way ``P(|mean_n - E[reward]| > eps) <= delta`` and
    ``n = O(1/eps^2)``.
    """

    def __init__(self, rng: SeedLike = None, *, max_samples: int = 10**8):
        self.rng = as_generator(rng, "rng")
        self.max_samples = max_samples

    @staticmethod
    def sample_size(reward: RewardDistribution, accuracy: float, delta: float) -> int:
        """The number of pulls ``n`` of the class docstring."""
        eps, delta = _check_targets(accuracy, delta)
        if hasattr(reward, "sigma"):
            n = 2.0 * reward.sigma**2 * math.log(2 / delta) / eps**2
        else:
            values, _ = reward.support()
            n = (values.max() - values.min()) ** 2 * math.log(2 / delta) / (2 * eps**2)
        return max(1, int(math.ceil(n)))

    def estimate(
        self, reward: RewardDistribution, accuracy: float, delta: float
    ) -> tuple[float, int]:
        """The mean of ``sample_size`` pulls: ``(estimate, pulls)``."""
        n = self.sample_size(reward, accuracy, delta)
        if n > self.max_samples:
            raise ValueError(
                f"accuracy={accuracy} needs {n} classical samples, more than max_samples="
                f"{self.max_samples}; raise max_samples or accuracy"
            )
        return float(self.reward_mean(reward, n)), n

    def reward_mean(self, reward: RewardDistribution, n: int) -> float:
        # Sums of i.i.d. draws have closed-form laws: one draw instead of n (same distribution).
        if hasattr(reward, "sigma"):
            return reward.mean + reward.sigma * self.rng.standard_normal() / math.sqrt(n)
        return self.rng.binomial(n, reward.p) / n


def lemma1_queries(
    accuracy: float, delta: float, *, C: float = 2.0, sigma: float | None = None
) -> float:
    """Line 4 of Algorithm 1 (Lemma 1 counts, real-valued) for ``eps = accuracy``, with ``delta``
    the per-stage failure probability (the paper's ``delta / (2 m_bar)``):

    * bounded noise: ``N = (C / eps) ln(1/delta)``;
    * variance ``sigma^2`` (needs ``eps < 4 sigma``):
      ``N = (C sigma / eps) log2(8 sigma/eps)^{3/2} log2(log2(8 sigma/eps)) ln(1/delta)``.
    """
    eps, delta = _check_targets(accuracy, delta)
    C = check_real(C, "C", low=1.0)
    if sigma is None:
        return C / eps * math.log(1 / delta)
    sigma = check_real(sigma, "sigma", low=0.0)
    if eps >= 4 * sigma:
        raise ValueError(f"accuracy must be < 4 sigma = {4 * sigma:g} (Lemma 1b), got {eps}")
    r = math.log2(8 * sigma / eps)
    return C * sigma / eps * r**1.5 * math.log2(r) * math.log(1 / delta)


class TheoryOracle:
    """Algorithm 1's "theory mode": Line-4 query counts ``ceil(lemma1_queries)`` and a declared
    error model (not from the paper, docs/decisions.md#quantum-bo-theory-mode-error-model):
    ``y = mean + U``, ``U ~ Uniform[-eps, eps]`` with ``eps = accuracy``, and with probability
    ``delta`` an unrestricted error ``U ~ Uniform[-1, 1]``.

    ``planned_queries`` lets :func:`~frontierbo.quantum.loop.run_stages` apply Line 5 (stop
    *before* a stage that would exceed the budget).
    """

    def __init__(self, rng: SeedLike = None, *, C: float = 2.0, bounded: bool = True):
        self.rng = as_generator(rng, "rng")
        self.C = check_real(C, "C", low=1.0)
        self.bounded = bool(bounded)

    def planned_queries(self, reward: RewardDistribution, accuracy: float, delta: float) -> int:
        """Line 4's ``ceil(N)`` (:func:`lemma1_queries`), known before the call."""
        sigma = None if self.bounded else getattr(reward, "sigma", None)
        return int(math.ceil(lemma1_queries(accuracy, delta, C=self.C, sigma=sigma)))

    def estimate(
        self, reward: RewardDistribution, accuracy: float, delta: float
    ) -> tuple[float, int]:
        """``(mean + U, planned_queries)`` with the error ``U`` of the class docstring."""
        n = self.planned_queries(reward, accuracy, delta)
        half_width = 1.0 if self.rng.random() < delta else accuracy
        return reward.mean + self.rng.uniform(-half_width, half_width), n
