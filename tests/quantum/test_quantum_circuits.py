"""Tests for the Qiskit circuits and the Qiskit IQAE oracle (frontierbo.quantum.circuits)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

pytest.importorskip("qiskit_algorithms")
pytest.importorskip("qiskit_aer")

from qiskit.quantum_info import Statevector  # noqa: E402

import frontierbo  # noqa: E402
from frontierbo.quantum.circuits import (  # noqa: E402
    QiskitIQAEOracle,
    estimation_problem,
    generic_noise_model,
    state_preparation,
)
from frontierbo.quantum.oracles import IQAEOracle  # noqa: E402
from frontierbo.quantum.rewards import BernoulliReward, GaussianReward  # noqa: E402

ALPHA = 0.05


@dataclass(frozen=True)
class SkewedReward(GaussianReward):
    """A grid reward with asymmetric probabilities (p_i proportional to i + 1), so that the exact
    encoding's amplitude is not 1/2 and the little-endian grid order is actually tested."""

    def support(self):
        values, _ = super().support()
        probs = np.arange(1.0, values.size + 1.0)
        return values, probs / probs.sum()


# ------------------------------------------------------------------------------------- circuits
BERNOULLI = [BernoulliReward(p) for p in (0.0, 0.05, 0.3, 0.5, 0.93, 1.0)]
GAUSSIAN = [
    GaussianReward(0.85, 0.3),
    GaussianReward(0.85, 0.4),
    GaussianReward(0.2, 0.3, num_qubits=3),
    GaussianReward(-1.5, 0.4, num_qubits=3),
    GaussianReward(0.5, 0.05),
    SkewedReward(0.85, 0.3),
    SkewedReward(0.1, 0.4, num_qubits=3),
]


@pytest.mark.parametrize("encoding", ["exact", "reference"])
@pytest.mark.parametrize("reward", BERNOULLI + GAUSSIAN, ids=repr)
def test_statevector_amplitude_equals_encoding(reward, encoding):
    if isinstance(reward, SkewedReward) and encoding == "reference":
        pytest.skip("the reference encoding assumes the symmetric grid (a = 1/2)")
    circuit, objective = state_preparation(reward, encoding)
    expected_qubits = 1 if isinstance(reward, BernoulliReward) else reward.num_qubits + 1
    assert circuit.num_qubits == expected_qubits
    if isinstance(reward, GaussianReward):
        assert objective == ([reward.num_qubits] if encoding == "exact" else [0])
    state = Statevector(circuit)
    amplitude = state.probabilities(objective)[1]
    assert amplitude == pytest.approx(reward.encoding(encoding).amplitude, abs=1e-9)
    if isinstance(reward, GaussianReward):
        # little-endian: grid point i is the basis state |i> of the uncertainty register
        _, probs = reward.support()
        np.testing.assert_allclose(
            state.probabilities(range(reward.num_qubits)), probs, rtol=0, atol=1e-9
        )


def test_skewed_reward_amplitude_is_not_one_half():
    enc = SkewedReward(0.85, 0.3).encoding("exact")
    assert abs(enc.amplitude - 0.5) > 0.05  # so the test above can see a wrong grid order


def test_reference_circuit_is_the_papers_seven_qubits():
    circuit, objective = state_preparation(GaussianReward(0.7, 0.4), "reference")
    assert circuit.num_qubits == 7 and objective == [0]
    # the objective qubit of the paper's code is an uncertainty qubit, not the amplitude target
    target = Statevector(circuit).probabilities([6])[1]
    assert abs(target - 0.5) > 1e-3


def test_estimation_problem():
    problem = estimation_problem(BernoulliReward(0.3))
    assert problem.objective_qubits == [0]
    assert problem.post_processing(0.25) == 0.25
    assert problem.grover_operator.num_qubits == 1


# -------------------------------------------------------------------------- deterministic anchors
# (accuracy_a, powers, queries, a_hat for p = 1):
# docs/decisions.md#quantum-bo-iqae-deterministic-anchors
ANCHORS = [
    (0.5, [0, 0], 6, 0.982739),
    (0.05, [0, 0, 3], 489, 0.999684),
    (0.01, [0, 0, 3, 30], 5841, 0.999996),
]


@pytest.fixture(scope="module")
def oracles():
    return {
        "numpy": IQAEOracle(0),
        "statevector": QiskitIQAEOracle(backend="statevector", seed=0),
        "aer": QiskitIQAEOracle(backend="aer", seed=0),
    }


@pytest.mark.parametrize(("eps", "powers", "queries", "a_one"), ANCHORS)
@pytest.mark.parametrize("p", [0.0, 1.0])
def test_deterministic_anchors_identical(oracles, p, eps, powers, queries, a_one):
    results = {}
    for name, oracle in oracles.items():
        est, q = oracle.estimate(BernoulliReward(p), eps, ALPHA)
        assert oracle.last_result.powers == powers, name
        results[name] = (est, q)
    expected = a_one if p == 1.0 else 1.0 - a_one
    for name, (est, q) in results.items():
        assert q == queries, name
        assert est == pytest.approx(expected, abs=1e-6), name
        assert est == pytest.approx(results["numpy"][0], abs=1e-12), name


def test_applications_query_count_matches_numpy():
    r = BernoulliReward(1.0)
    ours = IQAEOracle(0, query_count="applications")
    theirs = QiskitIQAEOracle(backend="statevector", seed=0, query_count="applications")
    assert ours.estimate(r, 0.01, ALPHA)[1] == theirs.estimate(r, 0.01, ALPHA)[1]
    assert theirs.estimate(r, 0.5, ALPHA)[1] == 105  # one k = 0 round (powers [0, 0])


# ----------------------------------------------------------------------- equality in distribution
def _sample(oracle, reward, eps, n, delta=ALPHA):
    """Estimates, query counts and largest Grover power of ``n`` calls."""
    est, queries, kmax = [], [], []
    for _ in range(n):
        e, q = oracle.estimate(reward, eps, delta)
        est.append(e)
        queries.append(q)
        kmax.append(max(oracle.last_result.powers))
    return np.array(est), np.array(queries), np.array(kmax)


def _chi2_pvalue(q1, q2):
    """Chi-square homogeneity test of two discrete samples; values seen fewer than 10 times in
    total are pooled into one cell (dropped if that cell is still below 10)."""
    values, totals = np.unique(np.concatenate([q1, q2]), return_counts=True)
    table = np.array([[np.sum(q == v) for v in values] for q in (q1, q2)])
    big = totals >= 10
    cols = [table[:, big]]
    if (~big).any() and table[:, ~big].sum() >= 10:
        cols.append(table[:, ~big].sum(axis=1, keepdims=True))
    table = np.hstack(cols)
    if table.shape[1] < 2:
        return 1.0  # a single common value
    return float(stats.chi2_contingency(table).pvalue)


def _pvalues(sample, reference):
    (e1, q1, _), (e2, q2, _) = sample, reference
    return float(stats.ks_2samp(e1, e2).pvalue), _chi2_pvalue(q1, q2)


# (reward, encoding, accuracy, qiskit calls per backend): accuracy_a ~ 0.02 and 0.05, so k > 0.
CASES = {
    "bernoulli": (BernoulliReward(0.3), "exact", 0.02, 150),
    "gaussian3": (GaussianReward(0.85, 0.3, num_qubits=3), "exact", 0.09, 80),
}
N_NUMPY = 3000


@pytest.fixture(scope="module")
def samples():
    out = {}
    for case, (reward, encoding, eps, n) in CASES.items():
        out[case, "numpy"] = _sample(IQAEOracle(1, encoding=encoding), reward, eps, N_NUMPY)
        for i, backend in enumerate(("statevector", "aer")):
            oracle = QiskitIQAEOracle(backend=backend, seed=100 + i, encoding=encoding)
            out[case, backend] = _sample(oracle, reward, eps, n)
    return out


@pytest.mark.parametrize("backend", ["statevector", "aer"])
@pytest.mark.parametrize("case", list(CASES))
def test_equal_in_distribution_to_numpy(samples, case, backend):
    assert np.mean(samples[case, backend][2] > 0) > 0.9  # Grover powers k > 0 are used
    p_est, p_q = _pvalues(samples[case, backend], samples[case, "numpy"])
    assert p_est > 1e-3, (case, backend, p_est)
    assert p_q > 1e-3, (case, backend, p_q)


def test_statevector_and_aer_agree(samples):
    for case in CASES:
        p_est, p_q = _pvalues(samples[case, "statevector"], samples[case, "aer"])
        assert p_est > 1e-3 and p_q > 1e-3, (case, p_est, p_q)


def test_planted_bugs_are_rejected(samples):
    """The same tests reject slightly wrong simulators, so the tests above can fail: an amplitude
    off by 0.002 (a tenth of the accuracy) changes the estimates, and IQAE run with alpha = 0.1
    (same 172 shots per round) changes the choice of Grover powers and hence the query counts."""
    reward, _, eps, _ = CASES["bernoulli"]
    shifted = _sample(IQAEOracle(2), BernoulliReward(reward.p + 0.002), eps, N_NUMPY)
    wrong_alpha = _sample(IQAEOracle(3, shots=172), reward, eps, N_NUMPY, delta=0.1)
    for backend in ("statevector", "aer"):
        p_est, _ = _pvalues(samples["bernoulli", backend], shifted)
        assert p_est < 1e-3, (backend, p_est)
        _, p_q = _pvalues(samples["bernoulli", backend], wrong_alpha)
        assert p_q < 1e-3, (backend, p_q)


# --------------------------------------------------------------------------------------- seeding
@pytest.mark.parametrize("backend", ["statevector", "aer"])
def test_seeding(backend):
    r, eps = BernoulliReward(0.3), 0.05
    a = [QiskitIQAEOracle(backend=backend, seed=7) for _ in range(2)]
    seq = [[o.estimate(r, eps, ALPHA) for _ in range(4)] for o in a]
    assert seq[0] == seq[1]  # reproducible from the seed
    assert len(set(seq[0])) > 1  # but the calls differ
    fixed = QiskitIQAEOracle(backend=backend, seed_mode="fixed")
    assert len({fixed.estimate(r, eps, ALPHA) for _ in range(3)}) == 1  # seed_simulator=0


# ----------------------------------------------------------------------------------------- noise
def test_noisy_aer_runs():
    oracle = QiskitIQAEOracle(backend="aer", noise_model=generic_noise_model(), seed=0)
    est, q = oracle.estimate(BernoulliReward(0.3), 0.05, ALPHA)
    assert math.isfinite(est) and 0.0 <= est <= 1.0
    assert q > 0


# ---------------------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"backend": "qasm"}, "backend"),
        ({"encoding": "linear"}, "encoding"),
        ({"seed_mode": "random"}, "seed_mode"),
        ({"query_count": "all"}, "query_count"),
        ({"confint_method": "wilson"}, "confint_method"),
        ({"shots": 0}, "shots"),
        ({"optimization_level": 4}, "optimization_level"),
        ({"max_iterations": 0}, "max_iterations"),
        ({"seed": -1}, "seed"),
        ({"seed": -1, "seed_mode": "fixed"}, "seed"),
        ({"backend": "statevector", "noise_model": object()}, "noise_model"),
    ],
)
def test_bad_constructor_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        QiskitIQAEOracle(**kwargs)


def test_bad_constructor_types():
    with pytest.raises(TypeError, match="noise_model"):
        QiskitIQAEOracle(backend="aer", noise_model="fake_washington")
    with pytest.raises(TypeError, match="seed"):
        QiskitIQAEOracle(seed_mode="fixed", seed=np.random.default_rng(0))
    with pytest.raises(TypeError, match="backend_options"):
        QiskitIQAEOracle(backend="aer", backend_options=["method"])


def test_max_iterations_stops_qiskits_loop():
    oracle = QiskitIQAEOracle(seed=0, max_iterations=1)
    with pytest.raises(RuntimeError, match="max_iterations"):
        oracle.estimate(BernoulliReward(0.3), 0.01, ALPHA)  # needs several rounds


@pytest.mark.parametrize(
    ("accuracy", "delta", "name"),
    [(0.0, 0.05, "accuracy"), (-0.1, 0.05, "accuracy"), (0.1, 0.0, "delta"), (0.1, 1.0, "delta")],
)
def test_bad_estimate_arguments(accuracy, delta, name):
    oracle = QiskitIQAEOracle(seed=0)
    with pytest.raises(ValueError, match=name):
        oracle.estimate(BernoulliReward(0.3), accuracy, delta)


def test_bad_reward_and_encoding():
    with pytest.raises(TypeError, match="reward"):
        QiskitIQAEOracle(seed=0).estimate(0.3, 0.1, 0.05)
    with pytest.raises(TypeError, match="reward"):
        state_preparation(0.3)
    with pytest.raises(ValueError, match="encoding"):
        state_preparation(BernoulliReward(0.3), "linear")


def test_import_without_qiskit_and_clear_error():
    """The module imports without Qiskit; using it says which extra to install."""
    code = (
        "import sys\n"
        "for m in ('qiskit', 'qiskit_aer', 'qiskit_algorithms'): sys.modules[m] = None\n"
        "from frontierbo.quantum import circuits\n"
        "from frontierbo.quantum.rewards import BernoulliReward\n"
        "try:\n"
        "    circuits.state_preparation(BernoulliReward(0.5))\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    src = str(Path(frontierbo.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert "frontierbo[quantum]" in out.stdout
