"""A3: anytime ε-Macro-BO (thesis Algorithm 4) and the ⟨ω, ε⟩-Macro-BO policy (4.12).

The planner (lines 39-51; line numbers are those of the thesis's Algorithm 4) builds the input
tree and the constants, grows the search tree of :mod:`frontierbo.macro.anytime_search` (lines
1-38: the bounds, RefineBounds, saturation, the node counter, the samples) and chooses:

    line 43     lambda = 1 / (4H / eps + 1 / (2 theta)),  delta = eps / (8 theta H)
    lines 46-51 omega = V_hi*_0 - V_lo*_0;  Q^we_0 = Q_lo*_0 if |Q_lo*_0 - QQ_0| <= 2 lambda + omega
                + theta, else QQ_0 (A2's value);  pi^we(d_0) = argmax Q^we_0                   (4.12)

``fallback=True`` applies (4.12); ``False`` is the authors' code's plain ``argmax Q_lo*_0``
(docs/decisions.md#macro-bo-anytime-variants-are-options).

Stopping ("while resources permit", line 44): ``iterations`` ConstructTree calls after the initial
expansion of the root (the experiments' "1500 iterations"), ``max_nodes``, ``time_limit`` seconds,
or saturation, whichever comes first.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

import numpy as np

from frontierbo._validation import SeedLike, check_int, check_real
from frontierbo.core.gp import FiniteDomainGP
from frontierbo.macro.anytime_search import AnytimeSearch
from frontierbo.macro.epsilon_macro_bo import KeyedNormalSampler, Sampler
from frontierbo.macro.input_tree import build_input_tree
from frontierbo.macro.most_likely import most_likely_q
from frontierbo.macro.parameters import epsilon_for_samples

logger = logging.getLogger(__name__)


def anytime_lambda(epsilon: float, horizon: int, theta: float) -> float:
    """Line 43: ``lambda = 1 / (4H / eps + 1 / (2 theta))`` (``1 / (2 theta) = inf`` at ``theta = 0``)."""
    if epsilon <= 0.0 or theta <= 0.0:
        return 0.0
    return 1.0 / (4.0 * horizon / epsilon + 1.0 / (2.0 * theta))


def anytime_delta(epsilon: float, horizon: int, theta: float) -> float:
    """Line 43: ``delta = eps / (8 theta H)``, capped at 1."""
    if theta <= 0.0:
        return 1.0
    return min(1.0, epsilon / (8.0 * theta * horizon))


@dataclass(frozen=True)
class AnytimePlan:
    """One planning call of anytime ε-Macro-BO.

    Arrays are indexed by the rows of ``domain.macro_actions(location)`` (``-inf`` / ``+inf`` on
    rows with no feasible continuation): ``q_lower`` / ``q_upper`` = ``Q_lo*_0`` / ``Q_hi*_0``,
    ``q_most_likely`` = ``QQ_0``, ``q_policy`` = ``Q^we_0`` (4.12), ``fallback`` the rows where
    ``QQ_0`` replaced ``Q_lo*_0``. ``v_lower`` / ``v_upper`` the root bounds, ``omega`` their gap
    (line 46). ``history`` (calls, nodes, v_lower, v_upper) after every ConstructTree call.
    """

    action: int
    macro_action: np.ndarray
    q_lower: np.ndarray
    q_upper: np.ndarray
    q_most_likely: np.ndarray
    q_policy: np.ndarray
    fallback: np.ndarray
    v_lower: float
    v_upper: float
    omega: float
    lam: float
    delta: float
    epsilon: float | None
    theta: float
    nodes: int
    calls: int
    saturated: bool
    seconds: float
    horizon: int
    history: tuple[tuple[int, int, float, float], ...]


class AnytimeEpsilonMacroBO:
    """Anytime ε-Macro-BO planner (Algorithm 4 lines 39-51).

    Args:
        gp: the GP holding ``d_0`` (rows = the domain's cells); read, never changed.
        domain: a :class:`~frontierbo.macro.domain.MacroDomain`.
        horizon: ``H``.
        n_samples: ``N`` samples per action at a new node (experiments: 300).
        epsilon: target loss; ``lambda`` then follows from line 43. Or give ``lam`` directly
            (authors' code: 5.0). With neither, ``epsilon`` is A1's Theorem-4.3 inversion for ``N``
            (:func:`~frontierbo.macro.parameters.epsilon_for_samples`; loose) and ``lambda`` line 43.
        iterations: ConstructTree calls after the root's expansion (experiments: 1500);
            ``None`` = unlimited. ``max_nodes`` / ``time_limit`` (seconds) further bounds.
        beta, info_covariance: as in A1 (:mod:`~frontierbo.macro.epsilon_macro_bo`).
        init, assign, action_rule, last_stage, refine: :mod:`~frontierbo.macro.anytime_search`;
            fallback: module doc.
        sampler, seed: the A1 sampler contract (:mod:`~frontierbo.macro.anytime_search`); default
            ``KeyedNormalSampler(seed)``.
    """

    def __init__(
        self,
        gp: FiniteDomainGP,
        domain,
        horizon: int,
        *,
        n_samples: int,
        epsilon: float | None = None,
        lam: float | None = None,
        iterations: int | None = 1500,
        max_nodes: int | None = None,
        time_limit: float | None = None,
        beta: float = 0.0,
        info_covariance: str = "noisy",
        init: str = "most_likely",
        assign: str = "intersect",
        action_rule: str = "lower",
        last_stage: str = "thesis",
        refine: bool = True,
        fallback: bool = True,
        sampler: Sampler | None = None,
        seed: SeedLike = None,
    ):
        if epsilon is not None and lam is not None:
            raise ValueError("give at most one of epsilon and lam")
        self.gp, self.domain = gp, domain
        self.horizon = check_int(horizon, "horizon", low=1)
        self.n_samples = check_int(n_samples, "n_samples", low=1)
        self.epsilon = None if epsilon is None else check_real(epsilon, "epsilon", low=0.0)
        self.lam = None if lam is None else check_real(lam, "lam", low=0.0, low_open=False)
        self.iterations = None if iterations is None else check_int(iterations, "iterations", low=0)
        self.max_nodes = None if max_nodes is None else check_int(max_nodes, "max_nodes", low=1)
        self.time_limit = (
            None
            if time_limit is None
            else check_real(time_limit, "time_limit", low=0.0, low_open=False)
        )
        self.beta = check_real(beta, "beta", low=0.0, low_open=False)
        self.info_covariance = info_covariance
        self.options = dict(
            init=init, assign=assign, action_rule=action_rule, last_stage=last_stage, refine=refine
        )
        self.fallback = bool(fallback)
        self.sampler = KeyedNormalSampler(seed) if sampler is None else sampler
        self.fallback_count = 0

    def search(self, location: int, horizon: int | None = None) -> tuple[AnytimeSearch, dict]:
        """Lines 40-43: the input tree, ``theta``, ``lambda``, ``delta``; an empty search."""
        H = self.horizon if horizon is None else check_int(horizon, "horizon", low=1)
        # lines 40-41: Sigma_t, L_{t+1} per input path (and QQ_0 below, line 41)
        tree = build_input_tree(
            self.gp, self.domain, location, H, info_covariance=self.info_covariance
        )
        # line 42: theta (docs/decisions.md#macro-bo-computable-most-likely-error-bound-theta)
        theta = tree.theta_max
        epsilon = self.epsilon
        if self.lam is not None:
            lam = self.lam
        else:
            if epsilon is None:
                epsilon = epsilon_for_samples(
                    self.n_samples,
                    K=tree.sampling_constant,
                    theta=theta,
                    horizon=H,
                    A=tree.max_actions,
                ).epsilon
            lam = anytime_lambda(epsilon, H, theta)  # line 43
        delta = anytime_delta(epsilon, H, theta) if epsilon is not None else math.nan
        run = AnytimeSearch(
            tree, self.n_samples, lam, beta=self.beta, sampler=self.sampler, **self.options
        )
        return run, {"epsilon": epsilon, "lam": lam, "delta": delta, "theta": theta}

    def plan(self, location: int, horizon: int | None = None) -> AnytimePlan:
        start = time.perf_counter()
        run, par = self.search(location, horizon)
        tree, H = run.tree, run.H
        history = []
        run.construct()  # the root's expansion (first pass of line 45)
        history.append((run.calls, run.nodes, run.v_lower, run.v_upper))
        while not run.saturated:  # line 44: while resources permit
            if self.iterations is not None and run.calls - 1 >= self.iterations:
                break
            if self.max_nodes is not None and run.nodes >= self.max_nodes:
                break
            if self.time_limit is not None and time.perf_counter() - start >= self.time_limit:
                break
            run.construct()  # line 45
            history.append((run.calls, run.nodes, run.v_lower, run.v_upper))
        omega = run.v_upper - run.v_lower  # line 46
        m = tree.root_actions.shape[0]
        rows = tree.root_rows
        q_lo, q_hi = np.full(m, -np.inf), np.full(m, np.inf)
        q_lo[rows], q_hi[rows] = run.q_lower, run.q_upper
        qq = np.full(m, -np.inf)
        qq[rows] = most_likely_q(tree, self.beta)  # line 41: QQ_0(x_1, d_0)
        fired = np.zeros(m, dtype=bool)
        if self.fallback:  # lines 47-50 (4.12); an unbounded Q_lo*_0 (init="infinite") too
            limit = 2.0 * par["lam"] + omega + par["theta"]
            with np.errstate(invalid="ignore"):
                close = np.abs(q_lo[rows] - qq[rows]) <= limit
            fired[rows] = ~(close & np.isfinite(q_lo[rows]))
        q_pol = np.where(fired, qq, q_lo)
        if fired.any():
            self.fallback_count += int(fired.sum())
            logger.info(
                "anytime eps-Macro-BO (4.12) fallback at location %d: rows %s use QQ_0",
                tree.location,
                np.flatnonzero(fired).tolist(),
            )
        action = int(np.argmax(q_pol))  # line 51, ties: the first row
        return AnytimePlan(
            action=action,
            macro_action=tree.root_actions[action].copy(),
            q_lower=q_lo,
            q_upper=q_hi,
            q_most_likely=qq,
            q_policy=q_pol,
            fallback=fired,
            v_lower=run.v_lower,
            v_upper=run.v_upper,
            omega=omega,
            lam=par["lam"],
            delta=par["delta"],
            epsilon=par["epsilon"],
            theta=par["theta"],
            nodes=run.nodes,
            calls=run.calls,
            saturated=run.saturated,
            seconds=time.perf_counter() - start,
            horizon=H,
            history=tuple(history),
        )
