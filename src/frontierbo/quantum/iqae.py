"""Exact classical simulation of qiskit-algorithms' Iterative Amplitude Estimation (IQAE).

This module re-implements ``qiskit_algorithms.IterativeAmplitudeEstimation.estimate``
(qiskit-algorithms 0.4.0, ``amplitude_estimators/iae.py``; Grinko, Gacon, Zoufal & Woerner 2021)
line by line, replacing the only quantum step -- "measure the objective qubit of
:math:`Q^k A|0\\rangle` ``shots`` times" -- by one draw ``Binomial(shots, sin^2((2k+1) theta_a))``
with :math:`a = \\sin^2(\\theta_a)`.  On an ideal (noiseless) simulator this is exactly the law of
qiskit's one-counts, each round's counts are independent given ``k``, and ``k`` is a deterministic
function of the past counts, so the whole run (powers, intervals, estimate, query count) has
exactly qiskit's distribution.  See ``docs/quantum-iqae.md``.

Names.  This module works on the amplitude scale only and keeps qiskit's names so that it reads
line by line against ``iae.py``: ``epsilon_target`` is the target half-width of the amplitude
interval (the oracles' ``accuracy_a``, :mod:`frontierbo.quantum.rewards`) and
``epsilon_estimated`` the achieved one.  They are never a privacy budget.

Shots.  qiskit-algorithms does not derive the number of shots from ``epsilon_target``/``alpha``:
it uses whatever the sampler reports (``ret.metadata["shots"]``), the same number every round.  The
Q-GP-UCB reference code sets the sampler's shots to
``ceil(32 * ln((2 / alpha) * log2(pi / (4 * eps_a))))``
(docs/decisions.md#quantum-bo-iqae-shots-per-round-from-the-reference-code), which is the default
here (:func:`default_shots`); pass ``shots=`` to mimic any other sampler setting.

Query count.  ``num_oracle_queries`` is *exactly* qiskit's ``result.num_oracle_queries``:
``sum over rounds of shots * k`` = the number of applications of the Grover operator ``Q``
(rounds with ``k = 0`` count zero; the state preparation ``A`` is not counted).  The number of
``A``-plus-``A^dagger`` applications, ``sum shots * (2k + 1)``, is reported separately as
``num_a_applications``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.special import betaincinv

from frontierbo._validation import SeedLike, as_generator, check_int, check_real

__all__ = ["IQAEResult", "default_shots", "iqae_simulate"]

_CONFINT_METHODS = ("beta", "chernoff")


@dataclass(frozen=True)
class IQAEResult:
    """Outcome of one simulated IQAE run (field names follow qiskit's result object).

    Attributes:
        estimation: midpoint of the final amplitude interval (qiskit ``result.estimation``).
        confidence_interval: final amplitude interval ``(a_l, a_u)``.
        num_oracle_queries: ``sum_rounds shots * k`` (qiskit ``result.num_oracle_queries``).
        num_a_applications: ``sum_rounds shots * (2k + 1)`` (``A``/``A^dagger`` applications).
        shots: shots per round (the same every round, as with a qiskit sampler).
        shots_per_round: one entry per round (all equal to ``shots``).
        one_counts: measured one-counts per round.
        powers: Grover powers, qiskit convention -- a leading prior ``0`` then one ``k`` per round.
        theta_intervals: intervals for ``theta / (2 pi)`` (prior ``[0, 1/4]`` first), as qiskit.
        estimate_intervals: amplitude intervals (prior ``[0, 1]`` first), as qiskit.
        num_rounds: number of measurement rounds (qiskit's ``num_iterations``).
        max_rounds: qiskit's ``max_rounds`` used to split ``alpha`` across rounds.
    """

    estimation: float
    confidence_interval: tuple[float, float]
    num_oracle_queries: int
    num_a_applications: int
    shots: int
    shots_per_round: list[int] = field(repr=False)
    one_counts: list[int] = field(repr=False)
    powers: list[int]
    theta_intervals: list[list[float]] = field(repr=False)
    estimate_intervals: list[list[float]] = field(repr=False)
    num_rounds: int
    max_rounds: int

    @property
    def epsilon_estimated(self) -> float:
        """Half-width of the final amplitude interval (qiskit ``result.epsilon_estimated``)."""
        return (self.confidence_interval[1] - self.confidence_interval[0]) / 2


def default_shots(epsilon_target: float, alpha: float) -> int:
    """Shots per round used by the Q-GP-UCB reference code: ``ceil(32 ln((2/a) log2(pi/(4 eps))))``.

    Gives 105, 129, 153, 163, 172, 177, 182, 187, 191 at ``alpha = 0.05`` and
    ``epsilon_target`` = 0.5, 0.3, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001
    (docs/decisions.md#quantum-bo-iqae-shots-per-round-from-the-reference-code).
    """
    eps = check_real(epsilon_target, "epsilon_target", low=0.0, high=0.5, high_open=False)
    a = check_real(alpha, "alpha", low=0.0, high=1.0)
    return int(math.ceil(32.0 * math.log((2.0 / a) * math.log2(math.pi / (4.0 * eps)))))


def _find_next_k(
    k: int, upper_half_circle: bool, theta_l: float, theta_u: float, min_ratio: float
) -> tuple[int, bool]:
    """Mirror of ``IterativeAmplitudeEstimation._find_next_k`` (same arithmetic, same order)."""
    old_scaling = 4 * k + 2  # K := 4k + 2
    max_scaling = int(1 / (2 * (theta_u - theta_l)))
    scaling = max_scaling - (max_scaling - 2) % 4  # bring into the form 4 * k_max + 2
    while scaling >= min_ratio * old_scaling:
        theta_min = scaling * theta_l - int(scaling * theta_l)
        theta_max = scaling * theta_u - int(scaling * theta_u)
        if theta_min <= theta_max <= 0.5 and theta_min <= 0.5:
            return int((scaling - 2) / 4), True  # extrapolated interval in the upper half-circle
        elif theta_max >= 0.5 and theta_max >= theta_min >= 0.5:
            return int((scaling - 2) / 4), False  # ... in the lower half-circle
        scaling -= 4
    return int(k), upper_half_circle  # no feasible k: keep the old one


def _clopper_pearson_confint(counts: int, shots: int, alpha: float) -> tuple[float, float]:
    """Mirror of qiskit's ``_clopper_pearson_confint``.

    qiskit calls ``scipy.stats.beta.ppf(q, a, b)``; ``scipy.special.betaincinv(a, b, q)`` is the
    same Boost routine (bit-identical results, checked) without the ``rv_continuous`` overhead.
    """
    lower, upper = 0.0, 1.0
    if counts != 0:  # beta quantile is nan for counts == 0
        lower = float(betaincinv(counts, shots - counts + 1, alpha / 2))
    if counts != shots:  # ... and for counts == shots
        upper = float(betaincinv(counts + 1, shots - counts, 1 - alpha / 2))
    return lower, upper


def _chernoff_confint(
    value: float, shots: int, max_rounds: int, alpha: float
) -> tuple[float, float]:
    """Mirror of qiskit's ``_chernoff_confint``: ``value -+ sqrt(3 ln(2 max_rounds / alpha) / shots)``."""
    eps = math.sqrt(3 * math.log(2 * max_rounds / alpha) / shots)
    return max(0.0, value - eps), min(1.0, value + eps)


def iqae_simulate(
    amplitude: float,
    epsilon_target: float,
    alpha: float,
    rng: SeedLike = None,
    *,
    confint_method: str = "beta",
    min_ratio: float = 2.0,
    shots: int | None = None,
    max_iterations: int = 10_000,
) -> IQAEResult:
    """Simulate one run of qiskit-algorithms' IQAE on an ideal device, exactly in distribution.

    Args:
        amplitude: true amplitude ``a`` in ``[0, 1]`` (probability of the good state after ``A``).
        epsilon_target: target half-width, in ``(0, 0.5]`` (as qiskit).
        alpha: failure probability, in ``(0, 1)`` (as qiskit).
        rng: int seed, ``numpy.random.Generator`` or None.  Exactly one ``rng.binomial`` draw is
            made per round.
        confint_method: ``"beta"`` (Clopper-Pearson, qiskit's default) or ``"chernoff"``.
        min_ratio: minimal ``K_{i+1} / K_i`` for ``_find_next_k``; must be > 1.
        shots: shots per round (the sampler's shot count in qiskit); default
            :func:`default_shots` ``(epsilon_target, alpha)``.
        max_iterations: safety cap on the number of rounds (not in qiskit).  With
            ``confint_method="chernoff"`` qiskit's loop can run forever: its Chernoff interval uses
            only the last round's frequency (qiskit-algorithms issue #55), so after one
            non-covering interval the theta interval can stay wider than ``epsilon / pi`` for
            ever at a fixed ``k``.  qiskit would then hang; here a ``RuntimeError`` is raised.

    Returns:
        An :class:`IQAEResult`; ``num_oracle_queries`` equals qiskit's count ``sum shots * k``.
    """
    a_true = check_real(amplitude, "amplitude", low=0.0, high=1.0, low_open=False, high_open=False)
    epsilon = check_real(epsilon_target, "epsilon_target", low=0.0, high=0.5, high_open=False)
    alpha = check_real(alpha, "alpha", low=0.0, high=1.0)
    if confint_method not in _CONFINT_METHODS:
        raise ValueError(
            f"confint_method must be one of {_CONFINT_METHODS}, got {confint_method!r}"
        )
    min_ratio = check_real(min_ratio, "min_ratio", low=1.0)
    n_shots = default_shots(epsilon, alpha) if shots is None else check_int(shots, "shots", low=1)
    max_iterations = check_int(max_iterations, "max_iterations", low=1)
    gen = as_generator(rng, "rng")
    theta_a = math.asin(math.sqrt(a_true))

    # --- estimate(): initialise memory variables -------------------------------------------
    powers = [0]  # list of powers k: Q^k
    theta_intervals = [[0.0, 1 / 4]]  # a priori knowledge of theta / 2 / pi
    a_intervals = [[0.0, 1.0]]  # a priori knowledge of the amplitude
    num_oracle_queries = 0
    num_a_applications = 0
    num_one_shots: list[int] = []
    # maximum number of rounds (qiskit uses np.log; math.log is the same correctly-rounded libm)
    max_rounds = int(math.log(min_ratio * math.pi / 8 / epsilon) / math.log(min_ratio)) + 1
    upper_half_circle = True  # initially theta is in the upper half-circle
    num_iterations = 0

    # --- estimate(): main "do while" loop on the theta-interval width -----------------------
    while theta_intervals[-1][1] - theta_intervals[-1][0] > epsilon / math.pi:
        num_iterations += 1
        if num_iterations > max_iterations:
            raise RuntimeError(
                f"IQAE did not reach epsilon_target={epsilon} within max_iterations="
                f"{max_iterations} rounds (qiskit's loop would not terminate either; typical "
                "with confint_method='chernoff', see qiskit-algorithms issue #55)"
            )
        # _find_next_k(powers[-1], upper_half_circle, theta_intervals[-1], min_ratio)
        k, upper_half_circle = _find_next_k(
            powers[-1], upper_half_circle, theta_intervals[-1][0], theta_intervals[-1][1], min_ratio
        )
        powers.append(k)

        # sampler.run([Q^k A|0> with measurement]) + _good_state_probability: on an ideal device
        # the objective qubit reads 1 with probability sin^2((2k+1) theta_a), i.i.d. over shots.
        p_one = min(1.0, max(0.0, math.sin((2 * k + 1) * theta_a) ** 2))
        one_counts = int(gen.binomial(n_shots, p_one))
        prob = one_counts / n_shots
        num_one_shots.append(one_counts)

        # track number of Q-oracle calls (qiskit: num_oracle_queries += shots * k)
        num_oracle_queries += n_shots * k
        num_a_applications += n_shots * (2 * k + 1)

        # pool the samples of consecutive rounds that used the same k (same loop as qiskit)
        j = 1
        round_shots = n_shots
        round_one_counts = one_counts
        if num_iterations > 1:
            while powers[num_iterations - j] == powers[num_iterations] and num_iterations >= j + 1:
                j = j + 1
                round_shots += n_shots
                round_one_counts += num_one_shots[-j]

        # compute a_min_i, a_max_i.  NB: qiskit's chernoff branch uses this round's `prob` with
        # the pooled `round_shots`; mirrored as is.
        if confint_method == "chernoff":
            a_i_min, a_i_max = _chernoff_confint(prob, round_shots, max_rounds, alpha)
        else:
            a_i_min, a_i_max = _clopper_pearson_confint(
                round_one_counts, round_shots, alpha / max_rounds
            )

        # compute theta_min_i, theta_max_i (in units of 2 pi)
        if upper_half_circle:
            theta_min_i = math.acos(1 - 2 * a_i_min) / 2 / math.pi
            theta_max_i = math.acos(1 - 2 * a_i_max) / 2 / math.pi
        else:
            theta_min_i = 1 - math.acos(1 - 2 * a_i_max) / 2 / math.pi
            theta_max_i = 1 - math.acos(1 - 2 * a_i_min) / 2 / math.pi

        # compute theta_u, theta_l of this iteration
        scaling = 4 * k + 2  # current K_i factor
        theta_u = (int(scaling * theta_intervals[-1][1]) + theta_max_i) / scaling
        theta_l = (int(scaling * theta_intervals[-1][0]) + theta_min_i) / scaling
        theta_intervals.append([theta_l, theta_u])

        # compute a_u_i, a_l_i
        a_u = math.sin(2 * math.pi * theta_u) ** 2
        a_l = math.sin(2 * math.pi * theta_l) ** 2
        a_intervals.append([a_l, a_u])

    # --- estimate(): result = midpoint of the last amplitude interval -----------------------
    confidence_interval = (a_intervals[-1][0], a_intervals[-1][1])
    estimation = float(np.mean(confidence_interval))
    return IQAEResult(
        estimation=estimation,
        confidence_interval=confidence_interval,
        num_oracle_queries=num_oracle_queries,
        num_a_applications=num_a_applications,
        shots=n_shots,
        shots_per_round=[n_shots] * num_iterations,
        one_counts=num_one_shots,
        powers=powers,
        theta_intervals=theta_intervals,
        estimate_intervals=a_intervals,
        num_rounds=num_iterations,
        max_rounds=max_rounds,
    )
