"""Privacy accounting: what a release guarantees, how guarantees compose, and a budget ledger.

* :class:`PrivacyGuarantee` — the statement every release or randomiser returns: an (epsilon,
  delta) pair, the mechanism, the neighbouring relation it is stated for, the assumptions it rests
  on and whether it is differential privacy at all (``PrivacyGuarantee.none`` when it is not).
* :func:`basic_composition` — sequential composition: epsilons and deltas add.
* :func:`advanced_composition` — the heterogeneous advanced composition theorem (Dwork, Rothblum &
  Vadhan 2010; Dwork & Roth 2014, Thm 3.20, in the heterogeneous form of Kairouz, Oh & Viswanath
  2015): for mechanisms that are (eps_i, delta_i)-DP, adaptively composed, and any
  ``delta_slack`` in (0, 1), the composition is (eps_total, delta_total)-DP with

      eps_total   = sqrt(2 ln(1/delta_slack) * sum_i eps_i^2) + sum_i eps_i (e^{eps_i} - 1)
      delta_total = sum_i delta_i + delta_slack.

  The basic bound (sum eps_i, sum delta_i) is also valid; whenever its epsilon is not larger it
  dominates (smaller epsilon and smaller delta), so it is returned instead. The result says which
  rule was used (``result.rule``).
* :class:`PrivacyLedger` — a curator-side budget: ``spend`` records a release only if the composed
  total stays within the budget, otherwise raises :class:`BudgetExceededError` and records nothing.

Any composition that involves a guarantee that is not differentially private is not differentially
private: epsilon = inf, delta = 1.

Composition theorems hold for guarantees stated for the *same* neighbouring relation on the *same*
dataset; the ledger enforces that all its entries name the same relation.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from numbers import Real

import numpy as np

from frontierbo._validation import check_probability, check_real

__all__ = [
    "BudgetExceededError",
    "CompositionResult",
    "PrivacyGuarantee",
    "PrivacyLedger",
    "advanced_composition",
    "basic_composition",
    "compose",
]

#: Relative/absolute tolerance used when comparing a composed total with a budget.
BUDGET_TOLERANCE = 1e-12

_COMPOSITIONS = ("basic", "advanced")


def _check_epsilon(value, name: str) -> float:
    """A real number in [0, inf]; ``math.inf`` means "no guarantee"."""
    if isinstance(value, bool) or not isinstance(value, Real | np.floating | np.integer):
        raise TypeError(f"{name} must be a real number in [0, inf], got {value!r}")
    x = float(value)
    if math.isnan(x) or x < 0:
        raise ValueError(f"{name} must be in [0, inf] (math.inf means no guarantee), got {value!r}")
    return x


def _check_delta(value, name: str) -> float:
    """A real number in the closed interval [0, 1]."""
    return check_real(value, name, low=0.0, high=1.0, low_open=False, high_open=False)


def _check_text(value, name: str, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {value!r}")
    if not allow_empty and not value.strip():
        raise ValueError(f"{name} must be a non-empty string, got {value!r}")
    return value


def _within(total: float, budget: float) -> bool:
    """``total <= budget`` up to :data:`BUDGET_TOLERANCE` (relative or absolute)."""
    if total <= budget:
        return True
    return math.isclose(total, budget, rel_tol=BUDGET_TOLERANCE, abs_tol=BUDGET_TOLERANCE)


def _fmt(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.6g}"


@dataclass(frozen=True)
class PrivacyGuarantee:
    """The privacy statement attached to one release.

    Parameters
    ----------
    epsilon : in [0, inf]; ``math.inf`` only for a release that is not differentially private.
    delta : in [0, 1]; 1 only for a release that is not differentially private.
    mechanism : what produced the release, e.g. ``"Gaussian mechanism"``.
    neighbouring : one sentence naming the neighbouring relation the guarantee is stated for, e.g.
        ``"substitution: one row changes by at most 1 in L2 norm (Definition 1 of Kharkovskii et
        al. 2020)"`` or ``"local: any two values of one user's reward"``.
    assumptions : what the guarantee rests on (clipping, bounded inputs, trusted curator, ...).
    differentially_private : ``True`` requires a finite epsilon and delta < 1; ``False`` requires
        epsilon = inf and delta = 1 (use :meth:`PrivacyGuarantee.none`).
    """

    epsilon: float
    delta: float
    mechanism: str
    neighbouring: str
    assumptions: tuple[str, ...] = field(default_factory=tuple)
    differentially_private: bool = True

    def __post_init__(self) -> None:
        eps = _check_epsilon(self.epsilon, "epsilon")
        delta = _check_delta(self.delta, "delta")
        _check_text(self.mechanism, "mechanism")
        _check_text(self.neighbouring, "neighbouring")
        assumptions = self.assumptions
        if isinstance(assumptions, str) or not isinstance(assumptions, Iterable):
            raise TypeError(
                f"assumptions must be a tuple of strings (one per assumption), got {assumptions!r}"
            )
        assumptions = tuple(assumptions)
        for i, a in enumerate(assumptions):
            _check_text(a, f"assumptions[{i}]")
        if not isinstance(self.differentially_private, bool | np.bool_):
            raise TypeError(
                f"differentially_private must be True or False, got {self.differentially_private!r}"
            )
        dp = bool(self.differentially_private)
        if dp and (math.isinf(eps) or delta >= 1.0):
            raise ValueError(
                "differentially_private=True requires a finite epsilon and delta < 1, got "
                f"epsilon={eps!r}, delta={delta!r}; use PrivacyGuarantee.none(mechanism, reason) "
                "for a release without a guarantee"
            )
        if not dp and (not math.isinf(eps) or delta != 1.0):
            raise ValueError(
                "differentially_private=False requires epsilon=inf and delta=1 (no guarantee), "
                f"got epsilon={eps!r}, delta={delta!r}; use PrivacyGuarantee.none(mechanism, reason)"
            )
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(self, "delta", delta)
        object.__setattr__(self, "assumptions", assumptions)
        object.__setattr__(self, "differentially_private", dp)

    @classmethod
    def none(cls, mechanism: str, reason: str) -> PrivacyGuarantee:
        """The statement for a release that is NOT differentially private (epsilon=inf, delta=1)."""
        _check_text(reason, "reason")
        return cls(
            epsilon=math.inf,
            delta=1.0,
            mechanism=mechanism,
            neighbouring="none: no neighbouring relation is protected",
            assumptions=(reason,),
            differentially_private=False,
        )

    def describe(self) -> str:
        """One line, e.g. ``"(1.5, 1e-05)-DP, Gaussian mechanism, substitution neighbours: ..."``."""
        if not self.differentially_private:
            reason = "; ".join(self.assumptions) or "no reason given"
            return f"NOT differentially private: {reason} (mechanism: {self.mechanism})"
        relation, _, detail = self.neighbouring.partition(":")
        if detail:
            neighbours = f"{relation.strip()} neighbours: {detail.strip()}"
        else:
            neighbours = f"neighbours: {self.neighbouring.strip()}"
        text = f"({_fmt(self.epsilon)}, {_fmt(self.delta)})-DP, {self.mechanism}, {neighbours}"
        if self.assumptions:
            text += "; assumes " + "; ".join(self.assumptions)
        return text

    def as_dict(self) -> dict:
        """Plain types for logs and JSON (epsilon may be ``inf``)."""
        return {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "mechanism": self.mechanism,
            "neighbouring": self.neighbouring,
            "assumptions": list(self.assumptions),
            "differentially_private": self.differentially_private,
        }


class CompositionResult(tuple):
    """An ``(epsilon, delta)`` pair that also says which rule produced it.

    Unpacks and compares like a plain tuple: ``eps, delta = result``; ``result.rule`` is
    ``"basic"``, ``"advanced"`` or ``"non-private"`` (some composed release had no guarantee).
    """

    def __new__(cls, epsilon: float, delta: float, rule: str):
        obj = super().__new__(cls, (float(epsilon), float(delta)))
        obj._rule = rule
        return obj

    def __getnewargs__(self):
        return (self[0], self[1], self._rule)

    @property
    def epsilon(self) -> float:
        return self[0]

    @property
    def delta(self) -> float:
        return self[1]

    @property
    def rule(self) -> str:
        return self._rule

    @property
    def differentially_private(self) -> bool:
        """A finite epsilon and delta < 1 (a delta capped at 1 is no guarantee)."""
        return math.isfinite(self[0]) and self[1] < 1.0

    def __repr__(self) -> str:
        return f"CompositionResult(epsilon={self[0]!r}, delta={self[1]!r}, rule={self._rule!r})"


def _non_private() -> CompositionResult:
    return CompositionResult(math.inf, 1.0, "non-private")


def _check_guarantees(guarantees, name: str = "guarantees") -> list[PrivacyGuarantee]:
    if isinstance(guarantees, PrivacyGuarantee) or not isinstance(guarantees, Iterable):
        raise TypeError(f"{name} must be an iterable of PrivacyGuarantee, got {guarantees!r}")
    out = list(guarantees)
    for i, g in enumerate(out):
        if not isinstance(g, PrivacyGuarantee):
            raise TypeError(f"{name}[{i}] must be a PrivacyGuarantee, got {g!r}")
    return out


def basic_composition(guarantees: Iterable[PrivacyGuarantee]) -> CompositionResult:
    """Sequential (basic) composition: ``(sum eps_i, sum delta_i)`` (delta capped at 1).

    Returns ``(inf, 1)`` with ``rule="non-private"`` if any guarantee is not DP; ``(0, 0)`` for
    no guarantees.
    """
    gs = _check_guarantees(guarantees)
    if any(not g.differentially_private for g in gs):
        return _non_private()
    eps = math.fsum(g.epsilon for g in gs)
    delta = min(1.0, math.fsum(g.delta for g in gs))
    return CompositionResult(eps, delta, "basic")


def _check_sequence(values, name: str, check) -> list[float]:
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a sequence of real numbers, got {values!r}")
    items = list(np.ravel(values)) if isinstance(values, np.ndarray) else list(values)
    return [check(v, f"{name}[{i}]") for i, v in enumerate(items)]


def _eps_expm1(eps: float) -> float:
    """``eps (e^eps - 1)`` without OverflowError (inf for huge eps)."""
    try:
        return eps * math.expm1(eps)
    except OverflowError:
        return math.inf


def advanced_composition(
    epsilons: Sequence[float], deltas: Sequence[float], delta_slack: float
) -> CompositionResult:
    """Heterogeneous advanced composition, or the basic bound when that is smaller.

    For adaptively composed (eps_i, delta_i)-DP mechanisms and ``delta_slack`` in (0, 1):

        advanced: eps = sqrt(2 ln(1/delta_slack) sum eps_i^2) + sum eps_i (e^{eps_i} - 1),
                  delta = sum delta_i + delta_slack
        basic:    eps = sum eps_i,  delta = sum delta_i

    (for k identical mechanisms the advanced bound is sqrt(2k ln(1/delta_slack)) eps +
    k eps (e^eps - 1)). Both are valid upper bounds. When the basic epsilon is not larger than the
    advanced one the basic pair dominates (its delta has no slack), so it is returned with
    ``rule="basic"``; otherwise the advanced pair with ``rule="advanced"``. Deltas are capped at 1.
    An infinite epsilon (a release without a guarantee) gives ``(inf, 1)``, ``rule="non-private"``.
    """
    eps = _check_sequence(epsilons, "epsilons", _check_epsilon)
    dels = _check_sequence(deltas, "deltas", _check_delta)
    if len(eps) != len(dels):
        raise ValueError(
            f"epsilons and deltas must have the same length, got {len(eps)} and {len(dels)}"
        )
    slack = check_probability(delta_slack, "delta_slack")
    if any(math.isinf(e) for e in eps):
        return _non_private()
    sum_delta = math.fsum(dels)
    basic_eps = math.fsum(eps)
    sq = math.fsum(e * e for e in eps)
    adv_eps = math.sqrt(2.0 * math.log(1.0 / slack) * sq) + math.fsum(_eps_expm1(e) for e in eps)
    if basic_eps <= adv_eps:
        return CompositionResult(basic_eps, min(1.0, sum_delta), "basic")
    return CompositionResult(adv_eps, min(1.0, sum_delta + slack), "advanced")


def compose(
    guarantees: Iterable[PrivacyGuarantee],
    composition: str = "basic",
    delta_slack: float | None = None,
) -> CompositionResult:
    """Compose guarantees with ``composition="basic"`` or ``"advanced"`` (needs ``delta_slack``)."""
    composition = _check_composition(composition)
    gs = _check_guarantees(guarantees)
    if composition == "basic":
        if delta_slack is not None:
            raise ValueError("delta_slack is only used with composition='advanced', got a value")
        return basic_composition(gs)
    if delta_slack is None:
        raise ValueError("delta_slack must be in (0, 1) for composition='advanced', got None")
    if any(not g.differentially_private for g in gs):
        check_probability(delta_slack, "delta_slack")
        return _non_private()
    return advanced_composition([g.epsilon for g in gs], [g.delta for g in gs], delta_slack)


def _check_composition(composition) -> str:
    if composition not in _COMPOSITIONS:
        raise ValueError(f"composition must be 'basic' or 'advanced', got {composition!r}")
    return composition


class BudgetExceededError(ValueError):
    """A release would take the ledger's composed total beyond its (epsilon, delta) budget."""


class PrivacyLedger:
    """A curator-side record of releases against an (epsilon, delta) budget.

    Parameters
    ----------
    epsilon_budget : in [0, inf] (inf: track only, no epsilon limit).
    delta_budget : in [0, 1].
    composition : ``"basic"`` (sums) or ``"advanced"`` (see :func:`advanced_composition`).
    delta_slack : required for ``"advanced"``, in (0, 1) and at most ``delta_budget``; it counts
        against ``delta_budget`` whenever the advanced bound is the one used.
    neighbouring : the neighbouring relation every entry must be stated for; by default the
        relation of the first recorded release.

    Budgets are compared with a tolerance of 1e-12 (relative or absolute), so spending exactly the
    budget in several pieces is accepted despite rounding.
    """

    def __init__(
        self,
        epsilon_budget: float,
        delta_budget: float,
        composition: str = "basic",
        delta_slack: float | None = None,
        neighbouring: str | None = None,
    ):
        self.epsilon_budget = _check_epsilon(epsilon_budget, "epsilon_budget")
        self.delta_budget = _check_delta(delta_budget, "delta_budget")
        self.composition = _check_composition(composition)
        if self.composition == "basic":
            if delta_slack is not None:
                raise ValueError(
                    f"delta_slack is only used with composition='advanced', got {delta_slack!r}"
                )
        else:
            if delta_slack is None:
                raise ValueError(
                    "delta_slack must be in (0, 1) and <= delta_budget for "
                    "composition='advanced', got None"
                )
            delta_slack = check_probability(delta_slack, "delta_slack")
            if delta_slack > self.delta_budget:
                raise ValueError(
                    f"delta_slack must be in (0, delta_budget={self.delta_budget:g}] because it "
                    f"counts against delta_budget, got {delta_slack!r}"
                )
        self.delta_slack = delta_slack
        self.neighbouring = (
            None if neighbouring is None else _check_text(neighbouring, "neighbouring")
        )
        self._entries: list[tuple[str, PrivacyGuarantee]] = []

    @property
    def entries(self) -> list[tuple[str, PrivacyGuarantee]]:
        """``(label, guarantee)`` for every recorded release, oldest first (a copy)."""
        return list(self._entries)

    def _compose(self, guarantees: list[PrivacyGuarantee]) -> CompositionResult:
        return compose(guarantees, self.composition, self.delta_slack)

    def total(self) -> CompositionResult:
        """The composed (epsilon, delta) of everything recorded so far."""
        return self._compose([g for _, g in self._entries])

    def remaining(self) -> tuple[float, float]:
        """``budget - total`` per coordinate, floored at 0 (inf for an infinite budget).

        Under advanced composition the cost of the next release is not additive; ask
        :meth:`can_spend` before releasing.
        """
        eps, delta = self.total()
        rem_eps = (
            math.inf if math.isinf(self.epsilon_budget) else max(0.0, self.epsilon_budget - eps)
        )
        return rem_eps, max(0.0, self.delta_budget - delta)

    def _refusal(self, guarantee: PrivacyGuarantee) -> ValueError | None:
        """The error ``spend`` would raise for ``guarantee``, or None when it can be recorded."""
        if not isinstance(guarantee, PrivacyGuarantee):
            raise TypeError(f"guarantee must be a PrivacyGuarantee, got {guarantee!r}")
        budget = f"(epsilon={_fmt(self.epsilon_budget)}, delta={_fmt(self.delta_budget)})"
        cur_eps, cur_delta = self.total()
        if not guarantee.differentially_private and not (
            math.isinf(self.epsilon_budget) and self.delta_budget >= 1.0
        ):
            reason = "; ".join(guarantee.assumptions)
            return BudgetExceededError(
                f"release by {guarantee.mechanism!r} is not differentially private ({reason}); "
                f"the privacy budget {budget} cannot pay for it (only (inf, 1) can)"
            )
        if guarantee.differentially_private:
            relation = self.neighbouring
            if relation is None:
                relation = next(
                    (g.neighbouring for _, g in self._entries if g.differentially_private), None
                )
            if relation is not None and guarantee.neighbouring != relation:
                return ValueError(
                    f"guarantee is stated for neighbouring relation {guarantee.neighbouring!r} but "
                    f"this ledger composes guarantees for {relation!r}; composition theorems only "
                    "hold for one relation"
                )
        new_eps, new_delta = self._compose([g for _, g in self._entries] + [guarantee])
        if _within(new_eps, self.epsilon_budget) and _within(new_delta, self.delta_budget):
            return None
        return BudgetExceededError(
            f"privacy budget {budget} exceeded: current total is (epsilon={_fmt(cur_eps)}, "
            f"delta={_fmt(cur_delta)}) and this release [{guarantee.describe()}] "
            f"would bring it to (epsilon={_fmt(new_eps)}, "
            f"delta={_fmt(new_delta)}) under {self.composition} composition"
        )

    def can_spend(self, guarantee: PrivacyGuarantee) -> bool:
        """Whether :meth:`spend` would accept ``guarantee`` now."""
        return self._refusal(guarantee) is None

    def spend(self, guarantee: PrivacyGuarantee, label: str = "") -> CompositionResult:
        """Record a release if the composed total stays within budget; return the new total.

        Raises :class:`BudgetExceededError` (recording nothing) otherwise, including for a release
        that is not differentially private under a finite budget; a ``ValueError`` (recording
        nothing) for a guarantee stated for a different neighbouring relation than the ledger's.
        """
        label = _check_text(label, "label", allow_empty=True)
        error = self._refusal(guarantee)
        if error is not None:
            raise error
        self._entries.append((label, guarantee))
        return self.total()

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        eps, delta = self.total()
        return (
            f"PrivacyLedger(budget=({_fmt(self.epsilon_budget)}, {_fmt(self.delta_budget)}), "
            f"composition={self.composition!r}, entries={len(self._entries)}, "
            f"total=({_fmt(eps)}, {_fmt(delta)}))"
        )
