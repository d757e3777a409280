"""The black-box baselines of BOS² (thesis Section 5.3)
on a linear softmax model: budget, L_inf ball and range, success rule, determinism, and the
points where GenAttack's and ZOO's two implementations must agree or differ."""

from __future__ import annotations

import numpy as np
import pytest

from frontierbo.attack.base import execute
from frontierbo.attack.baselines import (
    ArtZoo,
    AutoZoomBiLin,
    GenAttackFoolbox,
    GenAttackReference,
    ZooAdam,
    make_genattack,
)
from frontierbo.attack.baselines.zoo import Adam, ConstantSearch
from frontierbo.attack.oracle import QueryOracle


class RecordingSoftmax:
    """A linear softmax classifier on flattened inputs that keeps every input it is given."""

    def __init__(self, dim: int, classes: int = 3, seed: int = 3, scale: float = 3.0):
        self.W = scale * np.random.default_rng(seed).normal(size=(classes, dim))
        self.inputs: list[np.ndarray] = []

    def __call__(self, x):
        self.inputs.append(np.array(x[0]))
        z = x.reshape(x.shape[0], -1) @ self.W.T
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)


def instance(delta_max=0.3, budget=600, target=0, shape=(8, 8, 1), x0=None):
    """x0 with p ~ (0.003, 0.0002, 0.996): class 0 is reached by every baseline at
    delta_max 0.3 within 400 queries (ZOO-ADAM needs the most)."""
    model = RecordingSoftmax(int(np.prod(shape)))
    if x0 is None:
        x0 = np.random.default_rng(5).uniform(-0.3, 0.3, size=shape)
    return QueryOracle(model, x0, target, delta_max, budget), model


def small_zoo(**kw):
    return ZooAdam(coordinates=16, **kw)


def art_zoo(**kw):
    pytest.importorskip("art")
    return ArtZoo(classes=3, coordinates=16, **kw)


def foolbox_genattack(**kw):
    pytest.importorskip("foolbox")
    return GenAttackFoolbox(**kw)


ALL = {
    "genattack": GenAttackReference,
    "genattack-foolbox": foolbox_genattack,
    "zoo": small_zoo,
    "zoo-art": art_zoo,
    "autozoom": lambda: AutoZoomBiLin(side=4),
    "autozoom-tanh": lambda: AutoZoomBiLin(side=4, use_tanh=True),
}


@pytest.mark.parametrize("name", ALL)
def test_each_baseline_reaches_an_easy_target_and_is_deterministic(name):
    traces = []
    for _ in range(2):
        oracle, model = instance()
        result = execute(ALL[name](), oracle, seed=11)
        assert result.success and result.stopped_by == "success"
        assert len(model.inputs) == result.queries <= 400
        assert np.abs(result.x_adv - oracle.x0).max() <= 0.3 + 1e-9
        traces.append([(r.objective, r.linf) for r in oracle.log])
    assert traces[0] == traces[1]  # same seed, same query trace
    oracle, _ = instance()
    execute(ALL[name](), oracle, seed=12)
    assert [(r.objective, r.linf) for r in oracle.log] != traces[0]


@pytest.mark.parametrize("name", ALL)
def test_no_baseline_queries_beyond_the_budget(name):
    oracle, model = instance(delta_max=0.01, budget=70)  # the target is out of reach
    result = execute(ALL[name](), oracle, seed=0)
    assert not result.success and result.stopped_by == "budget"
    assert len(model.inputs) == oracle.queries == 70
    for x in model.inputs:  # every input valid, whatever the attack
        assert x.min() >= -0.5 and x.max() <= 0.5


@pytest.mark.parametrize("name", ["genattack", "genattack-foolbox"])
def test_genattack_queries_stay_in_the_ball_and_the_range(name):
    x0 = np.random.default_rng(5).uniform(-0.5, 0.5, size=(8, 8, 1))
    x0[0, :4, 0], x0[1, :4, 0] = -0.5, 0.5  # on the edges: clipping must act
    oracle, model = instance(delta_max=0.02, budget=300, x0=x0)
    assert execute(ALL[name](), oracle, seed=2).stopped_by == "budget"
    assert len(model.inputs) == 300
    for x in model.inputs:  # inside the ball and the valid range
        assert np.abs(x - x0).max() <= 0.02 + 1e-6
        assert x.min() >= -0.5 and x.max() <= 0.5


def test_reference_genattack_schedule_and_query_count():
    attack = GenAttackReference()
    assert attack.schedule(0, 0) == (0.4, 1.0)  # p_mut = 1 in the first 10 generations
    assert attack.schedule(9, 3) == (max(0.2, 0.4 * 0.9**3), 1.0)
    assert attack.schedule(10, 0) == (0.4, 0.5)
    step, p_mut = attack.schedule(10, 20)  # 0.4 * 0.9^20 = 0.0486 < alpha; 0.5 * 0.9^20 = 0.0608
    assert step == 0.2 and p_mut == pytest.approx(0.0608, abs=1e-4)
    assert GenAttackReference(adaptive=False).schedule(0, 5) == (0.2, 0.005)
    # the elite is not re-queried: steps (N - 1) + 1 queries
    oracle, model = instance(delta_max=0.01, budget=1000)
    result = execute(GenAttackReference(max_steps=9), oracle, seed=0)
    assert result.stopped_by == "gave-up" and result.details["generations"] == 10
    assert oracle.queries == len(model.inputs) == 10 * 5 + 1


def test_genattack_initial_population_is_sparse_in_the_reference_and_dense_in_foolbox():
    shape = (28, 28, 1)
    changed = {}
    for name in ("genattack", "genattack-foolbox"):
        oracle, model = instance(delta_max=0.01, budget=6, shape=shape)
        execute(ALL[name](), oracle, seed=0)
        changed[name] = [np.count_nonzero(x != oracle.x0) for x in model.inputs]
    # reference: each coordinate w.p. rho = 0.005 (about 4 of 784); foolbox: all of them
    assert np.mean(changed["genattack"]) < 15
    assert min(changed["genattack-foolbox"]) > 700


def test_foolbox_genattack_reuses_the_elite_scores():
    """foolbox evaluates the carried-over elite first in every generation after the first;
    with ``reuse_elite`` exactly those queries disappear (the scores are the same, so is the
    random stream), giving the reference's ``steps (N - 1) + 1`` queries."""
    seen = {}
    for reuse in (True, False):
        oracle, model = instance(delta_max=0.01, budget=30)
        execute(foolbox_genattack(reuse_elite=reuse), oracle, seed=0)
        seen[reuse] = [x.tobytes() for x in model.inputs]
    elites = range(6, 30, 6)
    assert all(seen[False][i] in seen[False][i - 6 : i] for i in elites)
    without_elites = [k for i, k in enumerate(seen[False]) if i not in elites]
    assert seen[True][: len(without_elites)] == without_elites


def test_make_genattack_profiles():
    assert isinstance(make_genattack("reference", population=4), GenAttackReference)
    with pytest.raises(ValueError, match="profile must be one of"):
        make_genattack("nesl")
    with pytest.raises(ValueError, match="population must be"):
        GenAttackReference(population=1)
    with pytest.raises(ValueError, match="mutation_rate"):
        GenAttackFoolbox(mutation_rate=1.5)


@pytest.mark.parametrize("name", ["zoo", "zoo-art", "autozoom", "autozoom-tanh"])
def test_zoo_and_autozoom_succeed_only_inside_the_ball(name):
    """The path does not depend on delta_max: the success query of a wide ball is the first
    target hit outside a narrow one, which is logged but is not a success
    (docs/decisions.md#bos-zoo-and-autozoom-succeed-only-inside-the-ball)."""
    wide, _ = instance(delta_max=0.3)
    success = execute(ALL[name](), wide, seed=1)
    narrow, _ = instance(delta_max=0.05)
    failure = execute(ALL[name](), narrow, seed=1)
    assert success.success and not failure.success and failure.stopped_by == "budget"
    hit = failure.details["first_hit_outside_ball"]
    assert hit["query"] == success.queries and 0.05 < hit["linf"] <= 0.3
    assert failure.details["max_linf"] > 0.05
    assert success.details["first_hit_outside_ball"] is None


def test_zoo_adam_matches_art_on_the_first_iteration():
    """With all 64 coordinates drawn, the first iteration is deterministic: ours queries the
    centre then 64 pairs, ART the 64 pairs then the updated centre, which is our second centre
    (w = -lr sign g). ART then drifts: it adds the whole modifier to the previous iterate
    (``x_adv = x_adv + noise``), so its steps grow."""
    art = pytest.importorskip("art")
    assert art.__version__ == "1.20.1"
    ours, _ = instance(target=1, budget=3 * 129)
    execute(ZooAdam(coordinates=64), ours, seed=0)
    theirs, _ = instance(target=1, budget=3 * 129)
    execute(ArtZoo(classes=3, coordinates=64), theirs, seed=0)
    y_ours = [r.objective for r in ours.log]
    y_art = [r.objective for r in theirs.log]
    assert y_art[128] == pytest.approx(y_ours[129], abs=1e-4)
    # both raise y; ART's centre moves further in the later iterations
    assert y_ours[0] < y_ours[129] < y_ours[258]
    assert y_art[0] < y_art[128] < y_art[257]
    assert y_art[257] - y_art[128] > y_ours[258] - y_ours[129]


def test_autozoom_spends_q_plus_one_queries_per_iteration():
    oracle, _ = instance(delta_max=0.01, budget=100)
    result = execute(AutoZoomBiLin(side=4, q=3, q_after_success=3), oracle, seed=0)
    assert result.details["iterations"] == 25 and result.details["side"] == 4
    oracle, _ = instance(delta_max=0.01, budget=100, shape=(9, 9, 1))
    assert execute(AutoZoomBiLin(), oracle, seed=0).details["side"] == 5  # ceil(9 / 2)


def test_settings_are_validated():
    with pytest.raises(ValueError, match="coordinates must be"):
        ZooAdam(coordinates=0)
    with pytest.raises(ValueError, match="h must be"):
        ZooAdam(h=0.0)
    with pytest.raises(ValueError, match="q must be"):
        AutoZoomBiLin(q=0)
    with pytest.raises(ValueError, match="lr must be"):
        AutoZoomBiLin(lr=-1.0)
    oracle, _ = instance()
    with pytest.raises(ValueError, match="coordinates must be <= the input size 64"):
        execute(ZooAdam(coordinates=65), oracle)


def test_adam_first_step_is_lr_times_the_sign_and_c_follows_the_binary_search():
    w = np.zeros(4)
    adam = Adam(4, lr=0.01)
    adam.step(w, np.array([0, 2]), np.array([3.0, -0.5]))  # corr m / sqrt(v) = sign(g)
    np.testing.assert_allclose(w, [-0.01, 0.0, 0.01, 0.0], rtol=1e-6)
    assert list(adam.epoch) == [2, 1, 2, 1]  # only the updated coordinates advance
    search = ConstantSearch(1.0)
    # x10 until a success, then bisection between the last failure and the success
    assert [search.update(ok) for ok in (False, False, True, False)] == [10, 100, 55, 77.5]
