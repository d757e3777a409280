"""Privacy accounting: guarantees, basic/advanced composition, the budget ledger.

Cross-checked against Google's ``dp-accounting`` (test-only dependency): the PLD accountant (tight
for Laplace and for generic (eps, delta) mechanisms) and the optimal homogeneous composition
theorem of Kairouz, Oh & Viswanath (``dp_accounting.pld.accountant.advanced_composition``).
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from frontierbo.dp.accounting import (
    BudgetExceededError,
    CompositionResult,
    PrivacyGuarantee,
    PrivacyLedger,
    advanced_composition,
    basic_composition,
    compose,
)

SUBST = "substitution: one row changes by at most 1 in L2 norm (Definition 1 of Kharkovskii 2020)"
LOCAL = "local: any two values of one user's reward"


def g(eps, delta=0.0, mechanism="Gaussian mechanism", neighbouring=SUBST, assumptions=()):
    return PrivacyGuarantee(eps, delta, mechanism, neighbouring, assumptions)


def drv(eps, k, slack):
    """Advanced composition for k identical eps-DP mechanisms, by hand."""
    return math.sqrt(2 * k * math.log(1 / slack)) * eps + k * eps * (math.exp(eps) - 1)


# ---------------------------------------------------------------- PrivacyGuarantee


def test_guarantee_fields_and_describe():
    p = g(1.5, 1e-5, assumptions=("rows clipped to L2 norm 1",))
    assert p.differentially_private
    assert p.assumptions == ("rows clipped to L2 norm 1",)
    text = p.describe()
    assert text.startswith("(1.5, 1e-05)-DP, Gaussian mechanism, substitution neighbours")
    assert "clipped" in text and "\n" not in text
    assert p == g(1.5, 1e-5, assumptions=["rows clipped to L2 norm 1"])  # list -> tuple
    hash(p)
    with pytest.raises(AttributeError):
        p.epsilon = 2.0  # frozen


def test_guarantee_none():
    p = PrivacyGuarantee.none("random_projection", "column space equals the data's")
    assert (p.epsilon, p.delta, p.differentially_private) == (math.inf, 1.0, False)
    assert p.assumptions == ("column space equals the data's",)
    assert p.describe().startswith("NOT differentially private: column space equals the data's")
    assert p.as_dict()["differentially_private"] is False


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"epsilon": -0.1}, "epsilon"),
        ({"epsilon": float("nan")}, "epsilon"),
        ({"delta": -1e-9}, "delta"),
        ({"delta": 1.5}, "delta"),
        ({"delta": float("nan")}, "delta"),
        ({"mechanism": ""}, "mechanism"),
        ({"neighbouring": "  "}, "neighbouring"),
        ({"epsilon": math.inf}, "differentially_private=True"),
        ({"delta": 1.0}, "differentially_private=True"),
        ({"differentially_private": False}, "differentially_private=False"),
    ],
)
def test_guarantee_bad_inputs(kwargs, name):
    args = {"epsilon": 1.0, "delta": 1e-6, "mechanism": "m", "neighbouring": SUBST} | kwargs
    with pytest.raises(ValueError, match=name):
        PrivacyGuarantee(**args)


def test_guarantee_bad_types():
    with pytest.raises(TypeError, match="epsilon"):
        PrivacyGuarantee("1", 0.0, "m", SUBST)
    with pytest.raises(TypeError, match="assumptions"):
        PrivacyGuarantee(1.0, 0.0, "m", SUBST, assumptions="one string")
    with pytest.raises(ValueError, match="reason"):
        PrivacyGuarantee.none("m", "")


# ---------------------------------------------------------------- composition


def test_basic_composition_by_hand():
    res = basic_composition([g(0.5, 1e-6), g(0.25, 2e-6), g(1.0)])
    assert res == (1.75, 3e-6)
    assert isinstance(res, CompositionResult) and res.rule == "basic"
    assert res.epsilon == 1.75 and res.delta == 3e-6
    assert basic_composition([]) == (0.0, 0.0)
    assert pickle.loads(pickle.dumps(res)).rule == "basic"


def test_advanced_k_identical_by_hand():
    k, eps, slack = 100, 0.01, 1e-6
    res = advanced_composition([eps] * k, [1e-8] * k, slack)
    # sqrt(2*100*ln(1e6)) * 0.01 + 100 * 0.01 * (e^0.01 - 1)
    expected = math.sqrt(200 * math.log(1e6)) * 0.01 + 1.0 * math.expm1(0.01)
    assert expected == pytest.approx(0.53570234406, rel=1e-10)
    assert res.rule == "advanced"
    assert res.epsilon == pytest.approx(expected, rel=1e-12)
    assert res.delta == pytest.approx(k * 1e-8 + slack, rel=1e-12)
    assert res.epsilon < k * eps  # advanced beats basic (1.0) for many small eps


def test_advanced_heterogeneous_by_hand():
    eps = [0.1, 0.2, 0.05, 0.3]
    deltas = [1e-7, 0.0, 2e-7, 1e-7]
    slack = 1e-5
    s2 = 0.01 + 0.04 + 0.0025 + 0.09
    expected = math.sqrt(2 * math.log(1e5) * s2) + sum(e * (math.exp(e) - 1) for e in eps)
    basic = sum(eps)
    res = advanced_composition(eps, deltas, slack)
    adv_only = min(expected, basic)
    assert res.epsilon == pytest.approx(adv_only, rel=1e-12)
    # here basic (0.65) is smaller than advanced (~1.87): the min rule picks basic, without slack
    assert expected > basic and res.rule == "basic"
    assert res.delta == pytest.approx(4e-7, rel=1e-12)
    # many heterogeneous small eps: advanced wins
    eps2 = list(np.linspace(0.001, 0.02, 300))
    res2 = advanced_composition(eps2, np.zeros(300), slack)
    s2b = sum(e * e for e in eps2)
    expected2 = math.sqrt(2 * math.log(1e5) * s2b) + sum(e * math.expm1(e) for e in eps2)
    assert res2.rule == "advanced"
    assert res2.epsilon == pytest.approx(expected2, rel=1e-12)
    assert res2.delta == pytest.approx(slack, rel=1e-12)


def test_advanced_le_basic_and_min_rule():
    # many small eps: advanced strictly better
    res = advanced_composition([0.01] * 100, [0.0] * 100, 1e-6)
    assert res.rule == "advanced" and res.epsilon < 1.0
    assert res.epsilon == pytest.approx(drv(0.01, 100, 1e-6), rel=1e-12)
    # a few large eps: the advanced formula is worse, the basic bound is returned
    res = advanced_composition([1.0, 2.0, 1.5], [1e-6] * 3, 1e-6)
    assert drv(1.0, 3, 1e-6) > 3.0
    assert res.rule == "basic" and res == pytest.approx((4.5, 3e-6), rel=1e-12)
    # never worse than basic
    rng = np.random.default_rng(0)
    for _ in range(50):
        k = int(rng.integers(1, 200))
        e = rng.uniform(0, 0.5, size=k)
        r = advanced_composition(e, np.zeros(k), 1e-6)
        assert r.epsilon <= e.sum() + 1e-12
    # huge eps does not overflow
    assert advanced_composition([800.0], [0.0], 0.5).rule == "basic"


def test_non_dp_poisons_composition():
    bad = PrivacyGuarantee.none("random_projection", "not DP")
    assert basic_composition([g(0.1), bad]) == (math.inf, 1.0)
    assert basic_composition([g(0.1), bad]).rule == "non-private"
    assert advanced_composition([0.1, math.inf], [0, 0], 1e-6) == (math.inf, 1.0)
    res = compose([g(0.1), bad], "advanced", 1e-6)
    assert res == (math.inf, 1.0) and not res.differentially_private


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: advanced_composition([-0.1], [0.0], 1e-6), "epsilons"),
        (lambda: advanced_composition([float("nan")], [0.0], 1e-6), "epsilons"),
        (lambda: advanced_composition([0.1], [1.1], 1e-6), "deltas"),
        (lambda: advanced_composition([0.1], [-0.1], 1e-6), "deltas"),
        (lambda: advanced_composition([0.1], [0.0], 0.0), "delta_slack"),
        (lambda: advanced_composition([0.1], [0.0], 1.0), "delta_slack"),
        (lambda: advanced_composition([0.1], [0.0], float("nan")), "delta_slack"),
        (lambda: advanced_composition([0.1, 0.2], [0.0], 1e-6), "same length"),
        (lambda: compose([g(0.1)], "fancy"), "composition"),
        (lambda: compose([g(0.1)], "advanced"), "delta_slack"),
        (lambda: compose([g(0.1)], "basic", 1e-6), "delta_slack"),
    ],
)
def test_composition_bad_inputs(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_composition_bad_types():
    with pytest.raises(TypeError, match=r"guarantees\[1\]"):
        basic_composition([g(0.1), (0.1, 0.0)])
    with pytest.raises(TypeError, match="guarantees"):
        basic_composition(g(0.1))


# ---------------------------------------------------------------- ledger


def test_ledger_refuses_over_budget_and_keeps_state():
    ledger = PrivacyLedger(1.0, 1e-5)
    ledger.spend(g(0.6, 4e-6), label="first")
    before = (ledger.total(), ledger.entries, ledger.remaining())
    assert not ledger.can_spend(g(0.5, 1e-6))
    with pytest.raises(BudgetExceededError) as info:
        ledger.spend(g(0.5, 1e-6), label="second")
    msg = str(info.value)
    assert "epsilon=1, delta=1e-05" in msg  # the budget
    assert "epsilon=0.6, delta=4e-06" in msg  # current total
    assert "epsilon=1.1, delta=5e-06" in msg  # what it would become
    assert isinstance(info.value, ValueError)
    assert (ledger.total(), ledger.entries, ledger.remaining()) == before
    assert ledger.entries == [("first", g(0.6, 4e-6))]
    # a delta overrun alone is refused too
    with pytest.raises(BudgetExceededError, match="exceeded"):
        ledger.spend(g(0.1, 7e-6))


def test_ledger_accepts_exactly_the_budget():
    ledger = PrivacyLedger(1.0, 1e-6)
    for i in range(10):
        ledger.spend(g(0.1, 1e-7), label=f"r{i}")  # 0.1 * 10 != 1.0 in floating point
    eps, delta = ledger.total()
    assert eps == pytest.approx(1.0, abs=1e-12) and delta == pytest.approx(1e-6, rel=1e-12)
    assert len(ledger) == 10 and ledger.remaining() == pytest.approx((0.0, 0.0), abs=1e-12)
    assert not ledger.can_spend(g(1e-9))
    assert ledger.can_spend(g(0.0))


def test_ledger_refuses_non_dp():
    bad = PrivacyGuarantee.none("random_projection", "column space equals the data's")
    for ledger in (PrivacyLedger(10.0, 0.1), PrivacyLedger(math.inf, 0.5)):
        assert not ledger.can_spend(bad)
        with pytest.raises(BudgetExceededError, match="not differentially private"):
            ledger.spend(bad)
        assert ledger.entries == []
    tracker = PrivacyLedger(math.inf, 1.0)  # tracking only: accepts, reports no guarantee
    assert tracker.spend(bad, "rp") == (math.inf, 1.0)
    assert tracker.remaining() == (math.inf, 0.0)


def test_ledger_advanced():
    slack = 1e-6
    ledger = PrivacyLedger(0.6, 2e-6, composition="advanced", delta_slack=slack)
    for _ in range(100):
        ledger.spend(g(0.01, 1e-9))
    eps, delta = ledger.total()
    assert ledger.total().rule == "advanced"
    assert eps == pytest.approx(drv(0.01, 100, slack), rel=1e-12)  # 0.5357 < 1.0 basic
    assert delta == pytest.approx(100 * 1e-9 + slack, rel=1e-12)
    basic = PrivacyLedger(0.6, 2e-6)
    with pytest.raises(BudgetExceededError):
        for _ in range(100):
            basic.spend(g(0.01, 1e-9))
    assert len(basic) == 60  # basic: 60 * 0.01 = 0.6 (within 1e-12) fits, the 61st does not


def test_ledger_neighbouring_must_match():
    ledger = PrivacyLedger(5.0, 1e-5)
    ledger.spend(g(0.1))
    assert not ledger.can_spend(g(0.1, neighbouring=LOCAL))
    with pytest.raises(ValueError, match="neighbouring relation"):
        ledger.spend(g(0.1, neighbouring=LOCAL))
    assert len(ledger) == 1
    fixed = PrivacyLedger(5.0, 1e-5, neighbouring=LOCAL)
    with pytest.raises(ValueError, match="neighbouring relation"):
        fixed.spend(g(0.1))


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"epsilon_budget": -1.0}, "epsilon_budget"),
        ({"epsilon_budget": float("nan")}, "epsilon_budget"),
        ({"delta_budget": 1.5}, "delta_budget"),
        ({"delta_budget": -0.1}, "delta_budget"),
        ({"composition": "renyi"}, "composition"),
        ({"composition": "advanced"}, "delta_slack"),
        ({"composition": "advanced", "delta_slack": 0.0}, "delta_slack"),
        ({"composition": "advanced", "delta_slack": 1.0}, "delta_slack"),
        ({"composition": "advanced", "delta_slack": 1e-3}, "delta_slack"),  # > delta_budget
        ({"delta_slack": 1e-7}, "delta_slack"),  # basic takes no slack
        ({"neighbouring": ""}, "neighbouring"),
    ],
)
def test_ledger_bad_inputs(kwargs, name):
    args = {"epsilon_budget": 1.0, "delta_budget": 1e-5} | kwargs
    with pytest.raises(ValueError, match=name):
        PrivacyLedger(**args)


def test_ledger_bad_spend_types():
    ledger = PrivacyLedger(1.0, 1e-5)
    with pytest.raises(TypeError, match="guarantee"):
        ledger.spend((0.1, 0.0))
    with pytest.raises(TypeError, match="label"):
        ledger.spend(g(0.1), label=3)


# ---------------------------------------------------------------- cross-check: dp-accounting


@pytest.mark.parametrize("k, eps", [(1, 0.5), (10, 0.1), (100, 0.01), (100, 0.1), (3, 1.0)])
def test_cross_check_pld_laplace(k, eps):
    """Our bound is an upper bound on the tight PLD epsilon of k composed Laplace mechanisms."""
    dpa = pytest.importorskip("dp_accounting")
    slack = 1e-6
    ours = advanced_composition([eps] * k, [0.0] * k, slack)
    acc = dpa.pld.PLDAccountant()  # add/remove-one: the Laplace mechanism's native relation
    acc.compose(dpa.LaplaceDpEvent(noise_multiplier=1.0 / eps), k)
    if ours.delta > 0:
        assert acc.get_epsilon(ours.delta) <= ours.epsilon
    else:  # pure DP: the PLD delta at our epsilon is zero up to its numerical floor (~1e-15)
        assert acc.get_delta(ours.epsilon) <= 1e-12
    if k == 1:
        assert ours == (eps, 0.0)
        assert acc.get_epsilon(1e-12) == pytest.approx(eps, abs=1e-3)


def test_cross_check_kov_optimal_composition():
    """KOV's optimal homogeneous composition is <= ours; at total delta 0 it equals basic."""
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import accountant, common

    for k, eps, delta in [(100, 0.01, 0.0), (100, 0.1, 1e-8), (50, 0.05, 1e-7), (4, 1.0, 0.0)]:
        ours = advanced_composition([eps] * k, [delta] * k, 1e-6)
        kov = accountant.advanced_composition(
            common.DifferentialPrivacyParameters(eps, delta), k, ours.delta
        )
        assert kov is not None and kov <= ours.epsilon + 1e-12
    for k, eps in [(1, 0.5), (7, 0.3), (20, 0.05)]:
        kov = accountant.advanced_composition(
            common.DifferentialPrivacyParameters(eps, 0.0), k, 0.0
        )
        assert kov == pytest.approx(basic_composition([g(eps)] * k).epsilon, rel=1e-12)


def test_cross_check_pld_heterogeneous():
    """Tight PLD composition of generic (eps_i, delta_i) mechanisms is <= our heterogeneous bound."""
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import common, privacy_loss_distribution

    rng = np.random.default_rng(1)
    eps = rng.uniform(0.005, 0.05, size=60)
    deltas = np.full(60, 1e-9)
    ours = advanced_composition(eps, deltas, 1e-6)
    assert ours.rule == "advanced"
    pld = privacy_loss_distribution.identity(value_discretization_interval=1e-4)
    for e, d in zip(eps, deltas, strict=True):
        params = common.DifferentialPrivacyParameters(float(e), float(d))
        pld = pld.compose(privacy_loss_distribution.from_privacy_parameters(params, 1e-4))
    assert pld.get_epsilon_for_delta(ours.delta) <= ours.epsilon
