"""A2: the most-likely-observation policy (4.8) = nonmyopic GP-UCB over macro-actions.

Thesis eq. (4.8):

    VV_t(d_t) = max_{x_{t+1} in A(x_t)} QQ_t(x_{t+1}, d_t),           VV_H = 0,
    QQ_t(x_{t+1}, d_t) = R(x_{t+1}, d_t) + VV_{t+1}(<x_{1:t+1}, y_{1:t} (+) mu_t(x_{t+1})>).

Conditioning on pseudo-observations equal to their posterior mean leaves the posterior mean
unchanged (exact for a GP; not stated in the thesis), so along the most likely branch every stage
sees ``mu_0`` and only ``Sigma`` changes with the path:

    QQ_0(x_1, d_0) = max_{x_{2:H} feasible} sum_s [1^T mu_0(x_s) + 0.5 beta log|I + Sigma_{s-1}(x_s)/sigma_n^2|].

For ``beta = 0`` that is a longest-path dynamic programme over (stage, location); for
``beta > 0`` the information term depends on the whole path, and the input tree is enumerated.
Node counter: the DP counts the root and one node per (stage, location, macro-action) it scores;
the enumeration the root and every node of the input tree.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from frontierbo._validation import check_int, check_real
from frontierbo.core.gp import FiniteDomainGP
from frontierbo.macro.input_tree import InputTree, build_input_tree

METHODS = ("auto", "dp", "enumerate")


@dataclass(frozen=True)
class MostLikelyPlan:
    """One planning call of A2.

    ``q`` (m,) is ``QQ_0(x_1, d_0)`` for every row of ``domain.macro_actions(location)`` (``-inf``
    for a row with no feasible continuation); ``action`` the chosen row (first maximum),
    ``macro_action`` its cells, ``nodes`` the node count.
    """

    action: int
    macro_action: np.ndarray
    q: np.ndarray
    nodes: int
    method: str


def most_likely_q(tree: InputTree, beta: float) -> np.ndarray:
    """``QQ_0(x_1, d_0)`` for each root child of ``tree`` by enumeration, (c,)."""
    reward = tree.mean_sum + beta * tree.info  # R on the most likely branch: mean of mu_0
    best = np.zeros(tree.size)  # max over continuations below each node
    for node in range(tree.size - 1, -1, -1):
        ch = tree.children[node]
        best[node] = reward[node] + (best[ch].max() if ch.size else 0.0)
    return best[tree.root_children]


def most_likely_dp(
    gp: FiniteDomainGP, domain, location: int, horizon: int
) -> tuple[np.ndarray, int]:
    """``QQ_0`` for every row of ``macro_actions(location)`` when ``beta = 0`` (the DP):
    ``G_s(l) = max_{x in A(l)} [1^T mu_0(x) + G_{s+1}(end(x))]``, ``G_H = 0``. Returns ``(q, nodes)``."""
    mean = gp.mean
    memo: dict[tuple[int, int], float] = {}
    nodes = 1

    def G(s: int, loc: int) -> float:  # best sum of stages s+1..H from loc
        nonlocal nodes
        if s == horizon:
            return 0.0
        key = (s, loc)
        if key not in memo:
            acts = np.asarray(domain.macro_actions(loc), dtype=np.int64).reshape(-1, domain.kappa)
            nodes += acts.shape[0]
            vals = [mean[x].sum() + G(s + 1, int(x[-1])) for x in acts]
            memo[key] = max(vals, default=-np.inf)  # a dead end: no feasible continuation
        return memo[key]

    acts = np.asarray(domain.macro_actions(location), dtype=np.int64).reshape(-1, domain.kappa)
    nodes += acts.shape[0]
    q = np.array([mean[x].sum() + G(1, int(x[-1])) for x in acts])
    return q, nodes


class MostLikelyPlanner:
    """Nonmyopic GP-UCB generalised to macro-actions (the baseline "Nonmyopic GP-UCB H", B2).

    Args:
        gp: the GP holding the data ``d_0`` (rows = the domain's cells).
        domain: a :class:`~frontierbo.macro.domain.MacroDomain`.
        horizon: ``H`` (the experiments use 4; a runner passes ``min(H, T - t)`` per call).
        beta: exploration weight of (4.4) (thesis form ``0.5 beta log det``; default 0,
            docs/decisions.md#macro-bo-db-gp-ucb-and-nonmyopic-gp-ucb-use-beta-0).
        method: ``"dp"`` (``beta = 0`` only), ``"enumerate"``, or ``"auto"`` (DP iff ``beta = 0``).
        info_covariance: ``"noisy"`` (thesis, default) or ``"latent"``
            (docs/decisions.md#macro-bo-information-term-uses-the-noisy-covariance).
    """

    def __init__(
        self,
        gp: FiniteDomainGP,
        domain,
        horizon: int,
        *,
        beta: float = 0.0,
        method: str = "auto",
        info_covariance: str = "noisy",
    ):
        self.gp = gp
        self.domain = domain
        self.horizon = check_int(horizon, "horizon", low=1)
        self.beta = check_real(beta, "beta", low=0.0, low_open=False)
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        if method == "dp" and self.beta != 0.0:
            raise ValueError(f"method='dp' needs beta = 0, got beta={beta!r}; use 'enumerate'")
        self.method = method
        self.info_covariance = info_covariance

    def plan(self, location: int, horizon: int | None = None) -> MostLikelyPlan:
        H = self.horizon if horizon is None else check_int(horizon, "horizon", low=1)
        method = self.method
        if method == "auto":
            method = "dp" if self.beta == 0.0 else "enumerate"
        if method == "dp":
            location = check_int(location, "location", low=0, high=self.domain.n - 1)
            q, nodes = most_likely_dp(self.gp, self.domain, location, H)
            actions = np.asarray(self.domain.macro_actions(location)).reshape(-1, self.domain.kappa)
        else:
            tree = build_input_tree(
                self.gp, self.domain, location, H, info_covariance=self.info_covariance
            )
            actions = tree.root_actions
            q = np.full(actions.shape[0], -np.inf)
            q[tree.root_rows] = most_likely_q(tree, self.beta)
            nodes = 1 + tree.size
        if not np.isfinite(q).any():
            raise ValueError(f"no sequence of {H} macro-actions starts at location {location}")
        action = int(
            np.argmax(q)
        )  # ties: the first row (authors' code keeps the first strictly greater)
        return MostLikelyPlan(action, actions[action].copy(), q, int(nodes), method)
