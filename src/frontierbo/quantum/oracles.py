"""Mean estimators behind one interface: ``estimate(reward, epsilon, delta) -> (estimate, queries)``.

* :class:`IQAEOracle` -- quantum Monte Carlo by Iterative Amplitude Estimation, simulated exactly
  in distribution in NumPy (:func:`frontierbo.quantum.iqae.iqae_simulate`).
* :class:`frontierbo.quantum.circuits.QiskitIQAEOracle` -- the same estimator on real Qiskit
  circuits (statevector or Aer sampler, optional noise model; extra ``[quantum]``).
* :class:`ClassicalMonteCarloOracle` -- the classical sample mean with a Hoeffding /
  sub-Gaussian sample size, ``O(1/epsilon^2)`` pulls (the baseline the quantum speed-up is against).

``epsilon`` is the target accuracy on the reward scale and ``delta`` the failure probability: the
guarantee is ``P(|estimate - E[reward]| > epsilon) <= delta`` (for the ``"reference"`` Gaussian
encoding the error scale is ``(4/pi) epsilon``, see :mod:`frontierbo.quantum.rewards`).
``queries`` is the number of oracle queries charged to the arm: each one costs one classical pull
in the paper's regret (spec section 1.2).

Query counts of IQAE.  ``query_count="reference"`` (default) is what the paper's figures count:
qiskit's ``num_oracle_queries`` (applications of the Grover operator, ``sum_rounds shots * k``),
and, when that is 0 (every round used ``k = 0``, typical for ``epsilon_a >= 0.1``), the fallback
``ceil((0.8 / epsilon_a) ln((2/alpha) log2(pi / (4 epsilon_a))))`` of the reference code (spec
2.7.1 step 5).  ``query_count="applications"`` counts every application of ``A`` or its inverse,
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
    """Anything that estimates an arm's mean reward to accuracy ``epsilon`` w.p. ``1 - delta``."""

    def estimate(
        self, reward: RewardDistribution, epsilon: float, delta: float
    ) -> tuple[float, int]: ...


def fallback_queries(epsilon_a: float, alpha: float) -> int:
    """Reference code's query count when IQAE used no Grover power (6 at ``epsilon_a = 0.5``)."""
    return int(
        math.ceil((0.8 / epsilon_a) * math.log((2 / alpha) * math.log2(math.pi / (4 * epsilon_a))))
    )


def _check_targets(epsilon: float, delta: float) -> tuple[float, float]:
    epsilon = check_real(epsilon, "epsilon", low=0.0)
    delta = check_real(delta, "delta", low=0.0, high=1.0)
    return epsilon, delta


def _check_choice(value: str, name: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    return value


def count_queries(result, epsilon_a: float, alpha: float, query_count: str) -> int:
    """Queries charged for one IQAE run (an ``IQAEResult`` or anything with the same two fields)."""
    if query_count == "applications":
        return int(result.num_a_applications)
    n = int(result.num_oracle_queries)
    return n if n > 0 else fallback_queries(epsilon_a, alpha)


class IQAEOracle:
    """Quantum Monte Carlo mean estimation by IQAE, simulated in NumPy (equal in distribution to
    qiskit-algorithms' ``IterativeAmplitudeEstimation`` on an ideal device).

    Args:
        rng: seed or ``numpy.random.Generator`` for the measurement outcomes.
        encoding: ``"exact"`` or ``"reference"`` (see :mod:`frontierbo.quantum.rewards`).
        query_count: ``"reference"`` or ``"applications"`` (module docstring).
        confint_method: ``"beta"`` (Clopper-Pearson, qiskit's default) or ``"chernoff"``.
        shots: shots per IQAE round; default the reference code's ``ceil(32 ln((2/alpha)
            log2(pi/(4 epsilon_a))))``.
        seed_mode: ``"stream"`` (default): one random stream over all calls; ``"fixed"``: every
            call restarts from ``rng`` (an int seed), so the outcome is a deterministic function of
            ``(amplitude, epsilon_a)`` -- the reference code's ``seed_simulator=0`` on every call
            (spec 2.7.1 step 7), e.g. the same error at every call of the Gaussian reference
            encoding (whose amplitude is always 1/2).

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
        self, reward: RewardDistribution, epsilon: float, delta: float
    ) -> tuple[float, int]:
        epsilon, delta = _check_targets(epsilon, delta)
        enc = reward.encoding(self.encoding)
        eps_a = enc.epsilon_a(epsilon)
        rng = np.random.default_rng(self.seed) if self.seed_mode == "fixed" else self.rng
        result = iqae_simulate(
            enc.amplitude,
            eps_a,
            delta,
            rng,
            confint_method=self.confint_method,
            shots=self.shots,
        )
        self.last_result = result
        return enc.to_reward(result.estimation), count_queries(
            result, eps_a, delta, self.query_count
        )


class ClassicalMonteCarloOracle:
    """Sample mean of ``n`` classical pulls, ``n`` from a concentration bound:

    * bounded rewards in ``[low, high]`` (Bernoulli): Hoeffding,
      ``n = ceil((high - low)^2 ln(2/delta) / (2 epsilon^2))``;
    * Gaussian rewards: ``n = ceil(2 sigma^2 ln(2/delta) / epsilon^2)`` (sub-Gaussian tail).

    Either way ``P(|mean_n - E[reward]| > epsilon) <= delta`` and ``n = O(1/epsilon^2)``.
    """

    def __init__(self, rng: SeedLike = None, *, max_samples: int = 10**8):
        self.rng = as_generator(rng, "rng")
        self.max_samples = max_samples

    @staticmethod
    def sample_size(reward: RewardDistribution, epsilon: float, delta: float) -> int:
        epsilon, delta = _check_targets(epsilon, delta)
        if hasattr(reward, "sigma"):
            n = 2.0 * reward.sigma**2 * math.log(2 / delta) / epsilon**2
        else:
            values, _ = reward.support()
            n = (values.max() - values.min()) ** 2 * math.log(2 / delta) / (2 * epsilon**2)
        return max(1, int(math.ceil(n)))

    def estimate(
        self, reward: RewardDistribution, epsilon: float, delta: float
    ) -> tuple[float, int]:
        n = self.sample_size(reward, epsilon, delta)
        if n > self.max_samples:
            raise ValueError(
                f"epsilon={epsilon} needs {n} classical samples, more than max_samples="
                f"{self.max_samples}; raise max_samples or epsilon"
            )
        return float(self.reward_mean(reward, n)), n

    def reward_mean(self, reward: RewardDistribution, n: int) -> float:
        # Sums of i.i.d. draws have closed-form laws: one draw instead of n (same distribution).
        if hasattr(reward, "sigma"):
            return reward.mean + reward.sigma * self.rng.standard_normal() / math.sqrt(n)
        return self.rng.binomial(n, reward.p) / n


def lemma1_queries(
    epsilon: float, delta: float, *, C: float = 2.0, sigma: float | None = None
) -> float:
    """Line 4 of Algorithm 1 (Lemma 1 counts, real-valued), with ``delta`` the per-stage failure
    probability (the paper's ``delta / (2 m_bar)``):

    * bounded noise: ``N = (C / eps) ln(1/delta)``;
    * variance ``sigma^2`` (needs ``eps < 4 sigma``):
      ``N = (C sigma / eps) log2(8 sigma/eps)^{3/2} log2(log2(8 sigma/eps)) ln(1/delta)``.
    """
    epsilon, delta = _check_targets(epsilon, delta)
    C = check_real(C, "C", low=1.0)
    if sigma is None:
        return C / epsilon * math.log(1 / delta)
    sigma = check_real(sigma, "sigma", low=0.0)
    if epsilon >= 4 * sigma:
        raise ValueError(f"epsilon must be < 4 sigma = {4 * sigma:g} (Lemma 1b), got {epsilon}")
    r = math.log2(8 * sigma / epsilon)
    return C * sigma / epsilon * r**1.5 * math.log2(r) * math.log(1 / delta)


class TheoryOracle:
    """Algorithm 1's "theory mode": Line-4 query counts ``ceil(lemma1_queries)`` and a declared
    error model (not from the paper, spec 2.7.4): ``y = mean + U``, ``U ~ Uniform[-eps, eps]``, and
    with probability ``delta`` an unrestricted error ``U ~ Uniform[-1, 1]``.

    ``planned_queries`` lets :func:`~frontierbo.quantum.loop.run_stages` apply Line 5 (stop
    *before* a stage that would exceed the budget).
    """

    def __init__(self, rng: SeedLike = None, *, C: float = 2.0, bounded: bool = True):
        self.rng = as_generator(rng, "rng")
        self.C = check_real(C, "C", low=1.0)
        self.bounded = bool(bounded)

    def planned_queries(self, reward: RewardDistribution, epsilon: float, delta: float) -> int:
        sigma = None if self.bounded else getattr(reward, "sigma", None)
        return int(math.ceil(lemma1_queries(epsilon, delta, C=self.C, sigma=sigma)))

    def estimate(
        self, reward: RewardDistribution, epsilon: float, delta: float
    ) -> tuple[float, int]:
        n = self.planned_queries(reward, epsilon, delta)
        width = 1.0 if self.rng.random() < delta else epsilon
        return reward.mean + self.rng.uniform(-width, width), n
