"""Tests for the NumPy simulation of qiskit-algorithms' IQAE (frontierbo.quantum.iqae)."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from scipy import stats

from frontierbo.quantum.iqae import default_shots, iqae_simulate

# Shots and deterministic anchors (p = 1) of qiskit-algorithms 0.4.0:
# docs/decisions.md#quantum-bo-iqae-shots-per-round-from-the-reference-code and
# docs/decisions.md#quantum-bo-iqae-deterministic-anchors.
ANCHORS = [
    (0.5, 105, [0, 0], 0, 0.982739),
    (0.3, 129, [0, 0], 0, 0.983301),
    (0.1, 153, [0, 0], 0, 0.984597),
    (0.05, 163, [0, 0, 3], 489, 0.999684),
    (0.02, 172, [0, 0, 3], 516, 0.999677),
    (0.01, 177, [0, 0, 3, 30], 5841, 0.999996),
    (0.005, 182, [0, 0, 3, 30], 6006, 0.999996),
    (0.002, 187, [0, 0, 3, 30], 6171, 0.999996),
    (0.001, 191, [0, 0, 3, 30, 270], 57873, 1.000000),
]


@pytest.mark.parametrize(("eps", "shots", "powers", "queries", "est"), ANCHORS)
def test_deterministic_anchors(eps, shots, powers, queries, est):
    assert default_shots(eps, 0.05) == shots
    r1 = iqae_simulate(1.0, eps, 0.05, 0)
    r0 = iqae_simulate(0.0, eps, 0.05, 1)
    for r in (r1, r0):
        assert r.shots == shots
        assert r.powers == powers
        assert r.num_oracle_queries == queries
        assert r.shots_per_round == [shots] * (len(powers) - 1)
        assert r.num_a_applications == sum(shots * (2 * k + 1) for k in powers[1:])
    assert r1.estimation == pytest.approx(est, abs=1e-6)
    assert 1 - r0.estimation == pytest.approx(est, abs=1e-6)


def test_seed_reproducible_and_interval_contains_estimate():
    a = iqae_simulate(0.37, 0.01, 0.05, 123)
    b = iqae_simulate(0.37, 0.01, 0.05, np.random.default_rng(123))
    assert a == b
    lo, hi = a.confidence_interval
    assert lo <= a.estimation <= hi
    assert a.epsilon_estimated <= 0.01 + 1e-12


# ----------------------------------------------------------------------------- qiskit comparison
def _bernoulli_problem(p):
    from qiskit import QuantumCircuit
    from qiskit_algorithms import EstimationProblem

    a_op = QuantumCircuit(1)
    a_op.ry(2 * math.asin(math.sqrt(p)), 0)
    return EstimationProblem(a_op, objective_qubits=[0])


class _ScriptedSampler:
    """Duck-typed ``BaseSamplerV2``: returns one-counts Binomial(shots, sin^2((2k+1) theta)).

    ``k`` is read off the circuit (number of ``Q`` gates) and the draw uses the same Generator
    calls as ``iqae_simulate``, so both see identical counts for identical seeds.  The ideal
    probability is cross-checked against the statevector of the actual circuit.
    """

    def __init__(self, p, shots, seed, max_calls=10_000):
        self.calls = 0
        self.max_calls = max_calls
        self.theta = math.asin(math.sqrt(p))
        self.shots = shots
        self.rng = np.random.default_rng(seed)

    def run(self, pubs):
        from qiskit.quantum_info import Statevector

        self.calls += 1
        if self.calls > self.max_calls:
            raise RuntimeError("scripted sampler: too many rounds")
        (circuit,) = pubs[0]
        k = sum(1 for inst in circuit.data if inst.operation.name == "Q")
        p_one = min(1.0, max(0.0, math.sin((2 * k + 1) * self.theta) ** 2))
        sv = Statevector(circuit.remove_final_measurements(inplace=False))
        assert abs(sv.probabilities([0])[1] - p_one) < 1e-9
        ones = int(self.rng.binomial(self.shots, p_one))
        counts = {"1": ones, "0": self.shots - ones}

        class _Bits:
            def get_counts(self):
                return counts

        class _Data:
            c0 = _Bits()

            def keys(self):
                return ["c0"]

        class _Pub:
            data = _Data()
            metadata = {"shots": self.shots}

        class _Job:
            def result(self):
                return [_Pub()]

        return _Job()


@pytest.mark.parametrize(
    ("p", "eps", "method"),
    [
        (0.3, 0.01, "beta"),
        (0.5, 0.02, "beta"),
        (0.93, 0.005, "beta"),
        (0.07, 0.01, "chernoff"),
        (0.5, 0.1, "chernoff"),
    ],
)
def test_exact_match_with_qiskit_given_same_counts(p, eps, method):
    pytest.importorskip("qiskit_algorithms")
    from qiskit_algorithms import IterativeAmplitudeEstimation

    problem = _bernoulli_problem(p)
    shots = default_shots(eps, 0.05)
    for seed in range(4):
        sampler = _ScriptedSampler(p, shots, seed)
        iae = IterativeAmplitudeEstimation(eps, 0.05, confint_method=method, sampler=sampler)
        ref = iae.estimate(problem)
        ours = iqae_simulate(p, eps, 0.05, seed, confint_method=method)
        assert ours.powers == ref.powers
        assert ours.num_oracle_queries == ref.num_oracle_queries
        np.testing.assert_allclose(ours.theta_intervals, ref.theta_intervals, rtol=0, atol=1e-13)
        np.testing.assert_allclose(
            ours.estimate_intervals, ref.estimate_intervals, rtol=0, atol=1e-13
        )
        assert ours.estimation == pytest.approx(ref.estimation, abs=1e-13)


def test_qiskit_statevector_sampler_anchor():
    pytest.importorskip("qiskit_algorithms")
    from qiskit.primitives import StatevectorSampler
    from qiskit_algorithms import IterativeAmplitudeEstimation

    sampler = StatevectorSampler(default_shots=default_shots(0.01, 0.05), seed=0)
    ref = IterativeAmplitudeEstimation(0.01, 0.05, sampler=sampler).estimate(
        _bernoulli_problem(1.0)
    )
    ours = iqae_simulate(1.0, 0.01, 0.05, 0)
    assert ref.powers == ours.powers == [0, 0, 3, 30]
    assert ref.num_oracle_queries == ours.num_oracle_queries == 5841
    assert ref.estimation == pytest.approx(ours.estimation, abs=1e-12)


def test_distribution_matches_qiskit_statevector_sampler():
    """200 real qiskit runs (seeded StatevectorSampler) vs 200 simulated runs at eps = 0.05."""
    pytest.importorskip("qiskit_algorithms")
    from qiskit.primitives import StatevectorSampler
    from qiskit_algorithms import IterativeAmplitudeEstimation

    p, eps, alpha, n = 0.3, 0.05, 0.05, 200
    problem = _bernoulli_problem(p)
    shots = default_shots(eps, alpha)
    ref_est, ref_q = [], []
    for seed in range(n):
        sampler = StatevectorSampler(default_shots=shots, seed=10_000 + seed)
        r = IterativeAmplitudeEstimation(eps, alpha, sampler=sampler).estimate(problem)
        ref_est.append(r.estimation)
        ref_q.append(r.num_oracle_queries)
    sims = [iqae_simulate(p, eps, alpha, seed) for seed in range(n)]
    our_est = [r.estimation for r in sims]
    our_q = [r.num_oracle_queries for r in sims]

    assert stats.ks_2samp(ref_est, our_est).pvalue > 0.01
    values = sorted(set(ref_q) | set(our_q))
    table = np.array([[ref_q.count(v) for v in values], [our_q.count(v) for v in values]])
    table = table[:, table.sum(axis=0) >= 10]  # keep cells with enough mass for chi-square
    if table.shape[1] >= 2:
        assert stats.chi2_contingency(table).pvalue > 0.01


# ------------------------------------------------------------------------------------ statistics
def test_chernoff_nontermination_is_qiskits():
    """qiskit's Chernoff loop can run forever (issue #55); ours raises after max_iterations."""
    pytest.importorskip("qiskit_algorithms")
    from qiskit_algorithms import AlgorithmError, IterativeAmplitudeEstimation

    p, eps, seed, cap = 0.3, 0.005, 0, 60
    sampler = _ScriptedSampler(p, default_shots(eps, 0.05), seed, max_calls=cap)
    iae = IterativeAmplitudeEstimation(eps, 0.05, confint_method="chernoff", sampler=sampler)
    with pytest.raises(AlgorithmError):
        iae.estimate(_bernoulli_problem(p))
    with pytest.raises(RuntimeError, match="max_iterations"):
        iqae_simulate(p, eps, 0.05, seed, confint_method="chernoff", max_iterations=cap)


def test_coverage():
    method = "beta"
    alpha, n = 0.05, 500
    for a in (0.0, 0.05, 0.3, 0.5, 0.77, 0.9, 1.0):
        for eps in (0.1, 0.02, 0.005):
            errs = np.array(
                [
                    abs(iqae_simulate(a, eps, alpha, s, confint_method=method).estimation - a)
                    for s in range(n)
                ]
            )
            assert np.mean(errs <= eps) >= 1 - alpha, (a, eps)


def test_queries_scale_like_one_over_epsilon():
    # docs/decisions.md#quantum-bo-iqae-query-scaling-test-grid.  (At eps >= 0.1 most runs never
    # leave k = 0, so the count is 0 and the log-log fit is meaningless; the count also grows in
    # steps because k jumps 3 -> 30 -> 270.)
    eps = np.array([0.05, 0.03, 0.02, 0.01, 0.007, 0.005, 0.003, 0.002, 0.0015, 0.001])
    slopes = []
    for a in (0.05, 0.3, 0.5, 0.9):
        mean_q = [
            np.mean([iqae_simulate(a, e, 0.05, s).num_oracle_queries for s in range(200)])
            for e in eps
        ]
        slope = np.polyfit(np.log(1 / eps), np.log(mean_q), 1)[0]
        assert 0.9 <= slope <= 1.4, (a, slope)  # far from the classical 2
        slopes.append(slope)
    assert 0.8 <= np.mean(slopes) <= 1.2


def test_speed():
    t0 = time.perf_counter()
    for s in range(200):
        iqae_simulate(0.3, 0.01, 0.05, s)
    assert (time.perf_counter() - t0) / 200 < 0.01


# ----------------------------------------------------------------------------------- validation
@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"amplitude": -0.1}, "amplitude"),
        ({"amplitude": 1.2}, "amplitude"),
        ({"amplitude": float("nan")}, "amplitude"),
        ({"epsilon_target": 0.0}, "epsilon_target"),
        ({"epsilon_target": 0.6}, "epsilon_target"),
        ({"alpha": 0.0}, "alpha"),
        ({"alpha": 1.0}, "alpha"),
        ({"confint_method": "wilson"}, "confint_method"),
        ({"min_ratio": 1.0}, "min_ratio"),
        ({"shots": 0}, "shots"),
        ({"rng": -1}, "rng"),
    ],
)
def test_bad_inputs_named(kwargs, name):
    args = {"amplitude": 0.3, "epsilon_target": 0.05, "alpha": 0.05, "rng": 0} | kwargs
    with pytest.raises(ValueError, match=name):
        iqae_simulate(**args)


def test_bad_input_types():
    with pytest.raises(TypeError, match="amplitude"):
        iqae_simulate("0.3", 0.05, 0.05)
    with pytest.raises(TypeError, match="shots"):
        iqae_simulate(0.3, 0.05, 0.05, shots=10.5)
