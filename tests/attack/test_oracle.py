"""The query oracle and objective of BOS² (eqs. (5.1)-(5.2) of the thesis)."""

from __future__ import annotations

import numpy as np
import pytest

from frontierbo.attack.oracle import (
    AttackSucceeded,
    BudgetExhausted,
    QueryOracle,
    margin_objective,
)


class SoftmaxModel:
    """A linear softmax classifier on flattened inputs that counts its calls."""

    def __init__(self, dim: int, classes: int = 3, seed: int = 0, scale: float = 1.0):
        self.W = scale * np.random.default_rng(seed).normal(size=(classes, dim))
        self.calls = 0

    def __call__(self, x):
        self.calls += 1
        z = x.reshape(x.shape[0], -1) @ self.W.T
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)


def test_objective_is_the_logit_of_the_target_score():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(10), size=200)
    for target in (0, 3, 9):
        y = margin_objective(p, target)
        np.testing.assert_allclose(y, np.log(p[:, target] / (1 - p[:, target])), atol=1e-9)
        assert np.all(np.argmax(p[y > 0], axis=1) == target)


def test_success_is_detected_by_the_argmax_even_with_a_negative_objective():
    model = lambda x: np.array([[0.45, 0.3, 0.25]])  # noqa: E731
    oracle = QueryOracle(model, np.zeros((2, 2)), target=0, delta_max=0.1, budget=5)
    with pytest.raises(AttackSucceeded) as info:
        oracle(np.zeros((2, 2)))
    assert info.value.query == 1 and info.value.objective == pytest.approx(np.log(0.45 / 0.55))
    assert info.value.objective < 0
    with pytest.raises(RuntimeError, match="already succeeded at query 1"):
        oracle(np.zeros((2, 2)))


@pytest.mark.parametrize("delta_max", [0.05, 0.3])
def test_every_queried_input_keeps_the_bound_and_the_range(delta_max):
    rng = np.random.default_rng(1)
    x0 = rng.uniform(-0.5, 0.5, size=(4, 4))
    x0[0, 0], x0[1, 1] = -0.5, 0.5  # at the edges: clipping must act
    oracle = QueryOracle(SoftmaxModel(16), x0, target=2, delta_max=delta_max, budget=500)
    for _ in range(200):
        u = rng.uniform(-1, 1, size=x0.shape)
        x = oracle.input_for(u)
        assert x.min() >= -0.5 and x.max() <= 0.5
        assert np.abs(x - x0).max() <= delta_max + 1e-12
    # clipping changes only the coordinates that left the range
    u = np.ones_like(x0)
    x = oracle.input_for(u)
    inside = x0 + delta_max <= 0.5
    np.testing.assert_allclose(x[inside], x0[inside] + delta_max)


def test_the_budget_is_never_exceeded_and_the_model_is_not_called_beyond_it():
    model = SoftmaxModel(9, seed=3)
    x0 = np.random.default_rng(4).uniform(-0.5, 0.5, size=(3, 3))
    target = int(np.argmin(model(x0[None])[0]))  # u = 0 queries x0: the target never wins
    model.calls = 0
    oracle = QueryOracle(model, x0, target=target, delta_max=0.01, budget=4)
    ys = [oracle(np.zeros((3, 3))) for _ in range(4)]
    with pytest.raises(BudgetExhausted):
        oracle(np.zeros((3, 3)))
    assert model.calls == 4 and oracle.queries == 4 and oracle.remaining == 0
    assert [r.index for r in oracle.log] == [1, 2, 3, 4]
    assert [r.objective for r in oracle.log] == ys


def test_rescale_mode_is_the_reference_formula():
    x0 = np.full((2,), 0.4)
    oracle = QueryOracle(SoftmaxModel(2), x0, 1, delta_max=0.3, budget=3, range_mode="rescale")
    np.testing.assert_allclose(oracle.input_for(np.ones(2)), (0.4 + 0.3) / 1.6)


def test_rescale_mode_succeeds_on_the_argmax_outside_the_ball_as_the_reference_does():
    """x0 = 0.4, u = -1: (0.4 - 0.3) / 1.6 = 0.0625 lies 0.3375 > 0.3 from x0. The rescaled
    query counts (reference rule); the same input through ``query_input`` does not
    (docs/decisions.md#bos-zoo-and-autozoom-succeed-only-inside-the-ball)."""
    model = lambda x: np.array([[0.2, 0.8]]) if x.mean() < 0.1 else np.array([[0.8, 0.2]])  # noqa: E731
    x0 = np.full((2,), 0.4)
    clip = QueryOracle(model, x0, 1, delta_max=0.3, budget=3)
    clip.query_input(np.full(2, 0.0625))
    assert clip.success is None and clip.log[0].linf == pytest.approx(0.3375)
    rescale = QueryOracle(model, x0, 1, delta_max=0.3, budget=3, range_mode="rescale")
    with pytest.raises(AttackSucceeded) as info:
        rescale(-np.ones(2))
    assert info.value.query == 1 and rescale.log[0].linf == pytest.approx(0.3375)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"delta_max": 0.0}, "delta_max"),
        ({"budget": 0}, "budget"),
        ({"target": -1}, "target"),
        ({"range_mode": "wrap"}, "range_mode"),
        ({"x0": np.full((2, 2), 0.7)}, "x0 must lie in"),
    ],
)
def test_bad_arguments_name_the_parameter(kwargs, match):
    args = {"x0": np.zeros((2, 2)), "target": 1, "delta_max": 0.1, "budget": 3, **kwargs}
    with pytest.raises(ValueError, match=match):
        QueryOracle(SoftmaxModel(4), **args)


def test_bad_perturbations_and_bad_models_are_refused():
    oracle = QueryOracle(SoftmaxModel(4), np.zeros((2, 2)), 1, delta_max=0.1, budget=3)
    with pytest.raises(ValueError, match="shape of x0"):
        oracle(np.zeros(4))
    with pytest.raises(ValueError, match=r"values in \[-1, 1\]"):
        oracle(np.full((2, 2), 1.5))
    logits = QueryOracle(lambda x: np.array([[2.0, -1.0]]), np.zeros(2), 1, 0.1, 3)
    with pytest.raises(ValueError, match="probability vector"):
        logits(np.zeros(2))
    assert oracle.queries == 0
