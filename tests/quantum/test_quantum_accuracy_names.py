"""The oracle's target accuracy is called ``accuracy`` (``epsilon`` is a privacy budget in
frontierbo): keyword and positional calls agree (issue 9)."""

from __future__ import annotations

import dataclasses
import inspect
import math

import numpy as np
import pytest

from frontierbo.quantum.iqae import iqae_simulate
from frontierbo.quantum.linear import LinUCB, QLinUCB
from frontierbo.quantum.loop import SinglePullOracle, StagedRun, run_stages
from frontierbo.quantum.oracles import (
    ClassicalMonteCarloOracle,
    IQAEOracle,
    TheoryOracle,
    count_queries,
    fallback_queries,
    lemma1_queries,
)
from frontierbo.quantum.q_gp_ucb import QGPUCB, ClassicalGPUCB, Stage
from frontierbo.quantum.rewards import AmplitudeEncoding, BernoulliReward, GaussianReward

ORACLES = {
    "iqae": lambda: IQAEOracle(4, encoding="reference"),
    "iqae-fixed": lambda: IQAEOracle(0, encoding="reference", seed_mode="fixed"),
    "classical-mc": lambda: ClassicalMonteCarloOracle(4),
    "theory": lambda: TheoryOracle(4),
    "single-pull": lambda: SinglePullOracle(4),
}


@pytest.mark.parametrize("name", list(ORACLES))
def test_oracle_estimate_positional_and_keyword_agree(name):
    reward = GaussianReward(0.6, 0.3)
    runs = {}
    for how in ("positional", "accuracy"):
        oracle = ORACLES[name]()
        out = []
        for acc in (0.5, 0.1, 0.03):
            if how == "positional":
                out.append(oracle.estimate(reward, acc, 0.05))
            else:
                out.append(oracle.estimate(reward, accuracy=acc, delta=0.05))
        runs[how] = out
    assert runs["positional"] == runs["accuracy"]
    assert runs["positional"][0] != runs["positional"][2]  # the accuracy does act (or the draws)


def test_qiskit_oracle_accuracy_keyword():
    pytest.importorskip("qiskit_algorithms")
    from frontierbo.quantum.circuits import QiskitIQAEOracle

    reward = BernoulliReward(0.3)
    new = QiskitIQAEOracle(seed=7).estimate(reward, accuracy=0.1, delta=0.05)
    assert new == QiskitIQAEOracle(seed=7).estimate(reward, 0.1, 0.05)
    assert list(inspect.signature(QiskitIQAEOracle.estimate).parameters)[1:3] == [
        "reward",
        "accuracy",
    ]


def test_query_count_helpers():
    reward = GaussianReward(0.0, 0.3)
    assert fallback_queries(accuracy_a=0.5, alpha=0.05) == fallback_queries(0.5, 0.05) == 6
    assert lemma1_queries(accuracy=0.05, delta=1e-3, sigma=0.5) == lemma1_queries(
        0.05, 1e-3, sigma=0.5
    )
    n = ClassicalMonteCarloOracle.sample_size(reward, 0.1, 0.05)
    assert n == math.ceil(2 * 0.09 * math.log(40) / 0.01)
    assert ClassicalMonteCarloOracle.sample_size(reward, accuracy=0.1, delta=0.05) == n
    theory = TheoryOracle(0)
    planned = theory.planned_queries(reward, 0.1, 0.01)
    assert theory.planned_queries(reward, accuracy=0.1, delta=0.01) == planned
    result = iqae_simulate(0.3, 0.5, 0.05, 0)  # every round at k = 0: the fallback count
    assert count_queries(result, 0.5, 0.05, "reference") == 6
    assert count_queries(result, accuracy_a=0.5, alpha=0.05, query_count="reference") == 6


def test_amplitude_encoding_names():
    enc = GaussianReward(0.85, 0.3).encoding("reference")
    assert enc.accuracy_scale == pytest.approx(1 / 0.9)
    assert enc.accuracy_a(0.09) == enc.accuracy_a(accuracy=0.09) == pytest.approx(0.1)
    built = AmplitudeEncoding(0.5, 0.0, 1.0, 2.0)
    assert built == AmplitudeEncoding(amplitude=0.5, offset=0.0, scale=1.0, accuracy_scale=2.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.accuracy_scale = 3.0


def test_stage_record():
    stage = Stage(3, 1.5, 0.2, 0.4, 0.4)
    assert stage.accuracy == 0.4
    assert stage == Stage(index=3, width=1.5, mean=0.2, std=0.4, accuracy=0.4)
    assert "accuracy=0.4" in repr(stage)
    with pytest.raises(dataclasses.FrozenInstanceError):
        stage.accuracy = 0.1


def _gram(X):
    return np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 0.5)


@pytest.mark.parametrize("cls", [QGPUCB, ClassicalGPUCB, QLinUCB, LinUCB])
def test_tell_and_observe_keywords(cls):
    """Positional and ``accuracy=`` build the same posterior and stages."""
    X = np.random.default_rng(9).uniform(0, 1, size=(8, 2))
    points = X if cls in (QLinUCB, LinUCB) else _gram(X)
    algos = {how: cls(points, width=1.2) for how in ("positional", "accuracy")}
    stages = {how: [] for how in algos}
    for how, algo in algos.items():
        if how == "positional":
            algo.observe(0, 0.3, 0.8)
        else:
            algo.observe(0, 0.3, accuracy=0.8)
        for _ in range(4):
            s = algo.ask()
            y = 0.1 * s.index
            if how == "positional":
                algo.tell(s.index, y, s.accuracy)
            else:
                algo.tell(s.index, y, accuracy=s.accuracy)
            stages[how].append(s)
    assert stages["positional"] == stages["accuracy"]
    np.testing.assert_array_equal(algos["accuracy"].mean, algos["positional"].mean)
    np.testing.assert_array_equal(algos["accuracy"].std, algos["positional"].std)


def test_staged_run_record():
    run = StagedRun()
    run.append(9, 0.5, 6, 1.0, 0.2, float("nan"))
    run.append(1, 0.25, 4, accuracy=0.3, estimate=0.2, beta=1.0)
    assert run.accuracies == [1.0, 0.3]
    assert run.total_queries == 10 and run.num_stages == 2


class _OtherNameOracle:
    """A user's oracle that calls the accuracy ``epsilon`` (the papers' name)."""

    def __init__(self, seed):
        self.inner = IQAEOracle(seed, encoding="reference")

    def estimate(self, reward, epsilon, delta):
        return self.inner.estimate(reward, epsilon, delta)


class _OtherNameAlgorithm:
    """A user's algorithm with ``tell(index, y, epsilon)``."""

    def __init__(self, gram):
        self.inner = QGPUCB(gram, n_arms=6)

    def ask(self):
        return self.inner.ask()

    def tell(self, index, y, epsilon):
        self.inner.tell(index, y, epsilon)

    def observe(self, point, y, epsilon):
        self.inner.observe(point, y, epsilon)


def test_run_stages_calls_by_position():
    """``run_stages`` passes the accuracy by position, so an oracle and an algorithm that name
    that parameter otherwise work and give the same run."""
    rng = np.random.default_rng(2)
    X = rng.uniform(0, 1, size=(7, 2))  # 6 arms and one extra initial point
    values = np.array([0.2, 0.9, 0.5, 0.85, 0.1, 0.4])
    K = _gram(X)

    def rewards(i):
        return GaussianReward(values[i], 0.3)

    initial = (6, GaussianReward(0.3, 0.3), 0.3, 1.0)
    new = run_stages(
        QGPUCB(K, n_arms=6),
        rewards,
        values,
        IQAEOracle(5, encoding="reference"),
        2000,
        initial=initial,
    )
    old = run_stages(
        _OtherNameAlgorithm(K), rewards, values, _OtherNameOracle(5), 2000, initial=initial
    )
    assert new.num_stages > 5
    for name in ("points", "gaps", "queries", "accuracies", "estimates"):
        assert getattr(new, name) == getattr(old, name), name
    assert new.betas[1:] == old.betas[1:] and math.isnan(new.betas[0])
    assert new.accuracies[0] == 1.0
