"""The white-box PGD reference: one checked query, the oracle's range mode, honest failures."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from frontierbo.attack.base import execute  # noqa: E402
from frontierbo.attack.oracle import QueryOracle  # noqa: E402
from frontierbo.attack.victims import Victim  # noqa: E402
from frontierbo.attack.whitebox import WhiteBoxPGD  # noqa: E402


class Linear(torch.nn.Module):
    """Logits ``W x + b`` of the 16 pixels: class 1 wins iff their mean exceeds -0.12, class 0
    otherwise, class 2 never (its logit -10 is below max(-4 S, 4 S + 15.36) >= 7.68)."""

    def __init__(self):
        super().__init__()
        w = torch.zeros(3, 16)
        w[0], w[1] = -4.0, 4.0
        self.w = torch.nn.Parameter(w)
        self.b = torch.nn.Parameter(torch.tensor([0.0, 15.36, -10.0]))

    def forward(self, x):
        return x.reshape(x.shape[0], -1) @ self.w.T + self.b


def _victim():
    return Victim(Linear(), (4, 4, 1))


def _oracle(victim, target, delta_max, range_mode="clip"):
    x0 = np.full((4, 4, 1), -0.3)  # class 0
    return QueryOracle(victim, x0, target, delta_max, budget=5, range_mode=range_mode)


def test_pgd_reaches_a_feasible_target_with_one_checked_query():
    victim = _victim()
    oracle = _oracle(victim, target=1, delta_max=0.3)
    result = execute(WhiteBoxPGD(victim), oracle, seed=0)
    assert result.success and result.queries == 1 and oracle.queries == 1
    assert np.abs(result.x_adv - oracle.x0).max() <= 0.3 + 1e-9
    assert result.x_adv.mean() > -0.12


def test_pgd_fails_honestly_outside_the_reachable_set():
    victim = _victim()
    for target, delta_max in ((1, 0.1), (2, 0.5)):  # too small a ball; a class that never wins
        oracle = _oracle(victim, target, delta_max)
        result = execute(WhiteBoxPGD(victim, steps=50), oracle, seed=1)
        assert not result.success and oracle.queries == 1
        assert result.details["white_box_objective"] == pytest.approx(
            result.best_objective, abs=1e-5
        )


@pytest.mark.parametrize("range_mode", ["clip", "rescale"])
def test_pgd_inputs_are_the_oracle_inputs(range_mode):
    oracle = _oracle(_victim(), 1, 0.3, range_mode)
    u = np.random.default_rng(2).uniform(-1, 1, size=(4, 4, 1))
    x0 = torch.tensor(np.array(oracle.x0), dtype=torch.float64)[None]
    x = WhiteBoxPGD._input(oracle, x0, torch.tensor(u)[None])[0].numpy()
    np.testing.assert_allclose(x, oracle.input_for(u), atol=1e-12)


def test_rescale_mode_widens_what_pgd_can_reach():
    """x0 = -0.3, delta 0.15: clipping reaches -0.15 (class 0 stays); the reference's rescale
    reaches (-0.3 + 0.15) / 1.3 = -0.115 > -0.12 (class 1), 0.185 away from x0."""
    victim = _victim()
    clip = execute(WhiteBoxPGD(victim), _oracle(victim, 1, 0.15), seed=0)
    rescale = execute(WhiteBoxPGD(victim), _oracle(victim, 1, 0.15, "rescale"), seed=0)
    assert not clip.success and rescale.success
    assert np.abs(rescale.x_adv + 0.3).max() == pytest.approx(0.3 - 0.15 / 1.3)  # > 0.15


def test_invalid_settings_name_the_parameter():
    with pytest.raises(ValueError, match="steps"):
        WhiteBoxPGD(_victim(), steps=0)
    with pytest.raises(ValueError, match="step_size"):
        WhiteBoxPGD(_victim(), step_size=0.0)


def test_latent_pgd_searches_upsampled_fields():
    """side = 2: the perturbation is Up(z) of a 2 x 2 field; a constant field reaches the same
    mean as the full-resolution search on this mean-only victim."""
    from frontierbo.attack.resize import upsample

    victim = _victim()
    oracle = _oracle(victim, 1, 0.3)
    result = execute(WhiteBoxPGD(victim, side=2), oracle, seed=0)
    assert result.success and oracle.queries == 1
    u = (result.x_adv - oracle.x0) / 0.3
    z = u[[0, 0, 3, 3], [0, 3, 0, 3], 0].reshape(2, 2, 1)  # the corners carry the field
    np.testing.assert_allclose(upsample(z, (4, 4, 1)), u, atol=1e-6)
    with pytest.raises(ValueError, match="side"):
        WhiteBoxPGD(victim, side=0)


class EdgeFirst(torch.nn.Module):
    """Two groups of 8 pixels, means ``a`` (first) and ``b``: logits ``1`` (class 0) and
    ``20 (a + 0.5)(b - 0.2) + 2 b`` (class 1, the target). At ``a = -0.5`` (the box's edge) the
    target's gradient pushes ``a`` down, off the box, until ``b`` passes 0.2; class 1 then wins
    only once ``a`` has come back up: at ``a = -0.2``, ``b = 0.3`` its logit is 1.2."""

    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.tensor(20.0))

    def forward(self, x):
        flat = x.reshape(x.shape[0], -1)
        a, b = flat[:, :8].mean(1), flat[:, 8:].mean(1)
        target = self.scale * (a + 0.5) * (b - 0.2) + 2.0 * b
        return torch.stack([torch.ones_like(target), target], dim=1)


def _edge_oracle(victim):
    x0 = np.concatenate([np.full(8, -0.5), np.zeros(8)]).reshape(4, 4, 1)  # class 0
    return QueryOracle(victim, x0, 1, 0.3, budget=1)


def test_pgd_moves_pixels_back_from_the_box_edge():
    """A pixel pushed past the image box must not freeze: the default PGD reaches the target
    (the earlier PGD, which kept u in [-1, 1] only, froze the first 8 pixels at -0.5)."""
    victim = Victim(EdgeFirst(), (4, 4, 1))
    result = execute(WhiteBoxPGD(victim), _edge_oracle(victim), seed=0)
    assert result.success and result.queries == 1
    assert result.x_adv[:2].mean() > -0.4  # the first 8 pixels came back up
    earlier = WhiteBoxPGD(victim, starts=2, losses=("objective",), project=False, decay=False)
    assert not execute(earlier, _edge_oracle(victim), seed=0).success


@pytest.mark.parametrize("loss", ["objective", "ce", "margin"])
def test_pgd_keeps_u_in_the_box_the_clip_leaves_alone(loss):
    """In clip mode every iterate lies in [max(-1, (lower - x0)/delta), min(1, (upper -
    x0)/delta)] (so x0 + delta u needs no clip); in rescale mode in [-1, 1]."""
    victim = _victim()
    x0 = np.linspace(-0.5, 0.5, 16).reshape(4, 4, 1)  # both edges and the inside
    oracle = QueryOracle(victim, x0, 2, 0.3, budget=1)  # class 2 never wins: every step runs
    pgd = WhiteBoxPGD(victim, steps=30, losses=(loss,))
    low, high = pgd.bounds(oracle)
    np.testing.assert_allclose(low, np.maximum(-1, (-0.5 - x0) / 0.3))
    np.testing.assert_allclose(high, np.minimum(1, (0.5 - x0) / 0.3))
    seen = []

    def up(u):  # the identity at full resolution, recording every iterate
        seen.append(u.detach()[0].numpy().astype(float))
        return u

    with torch.enable_grad():
        for z0 in (np.zeros(x0.shape), np.random.default_rng(0).uniform(low, high)):
            assert not pgd._ascend(oracle, z0, up, loss, low, high)[2]
    assert len(seen) == 2 * 31
    assert all(np.all(u >= low - 1e-6) and np.all(u <= high + 1e-6) for u in seen)  # float32
    assert any(np.any(u <= low + 1e-6) and np.any(u >= high - 1e-6) for u in seen)  # at the edges
    rescale = QueryOracle(victim, x0, 2, 0.3, budget=1, range_mode="rescale")
    low, high = pgd.bounds(rescale)
    assert np.all(low == -1) and np.all(high == 1)


def test_invalid_losses_are_named():
    with pytest.raises(ValueError, match="losses"):
        WhiteBoxPGD(_victim(), losses=("hinge",))
    with pytest.raises(ValueError, match="losses"):
        WhiteBoxPGD(_victim(), losses=())
