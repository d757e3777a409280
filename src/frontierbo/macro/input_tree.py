"""The tree of input paths of one planning call and everything on it that depends only on inputs.

From the agent's location every sequence of ``H`` feasible macro-actions ``x_1, ..., x_H`` is an
*input path*; the input tree holds one node per prefix ``x_{1:t}`` (level ``t = 1..H``) in
depth-first preorder, so the descendants of node ``p`` are the contiguous range
``p + 1 .. end[p] - 1``. Prefixes that cannot be extended to ``H`` macro-actions (a dead end of a
graph) are pruned: a policy of horizon ``H`` must take ``H`` macro-actions.

Given the data ``d_0`` held by the GP, the noisy outputs along a path have the joint law
``y_{1:t} ~ N(mu_0(x_{1:t}), S)`` with ``S = Cov_0(x_{1:t}) + sigma_n^2 I`` (thesis eq. (4.1)). With
the Cholesky factor ``S = L L^T`` cut into ``kappa x kappa`` blocks ``L_{s r}``:

* ``Psi_t = L_{t t}`` is the lower Cholesky factor of ``Sigma_{t-1}(x_t)`` (the posterior covariance
  of the noisy outputs of ``x_t`` given ``d_0`` and ``x_{1:t-1}``; (4.1), (B.12));
* sampling stage by stage, ``y_s = mu_{s-1}(x_s) + Psi_s z_s``, is ``y_{1:t} = mu_0 + L z`` jointly, so
  ``1^T mu_{t-1}(x_t) = 1^T mu_0(x_t) + sum_{s<t} (L_{t s}^T 1) . z_s``: the reward's mean term is
  linear in the whitened samples of the ancestors with coefficients ``coef[p, s] = L_{t s}^T 1``
  (docs/decisions.md#macro-bo-linear-mean-tree-evaluation);
* ``W(x_{1:t}) = L_{t,<t} L_{<t,<t}^{-1}`` maps the planned outputs ``y_{1:t-1}`` to ``mu_{t-1}(x_t)``
  and ``alpha = ||W||_F`` (Lemma B.1).

``alpha`` (hence ``L_t``, ``K`` and ``theta``) is taken with respect to the outputs planned inside
the tree, not ``y_0``: every node of one planning call shares ``d_0``, and every use of the
Lipschitz bound (Lemma B.3, Corollary 1, Theorem 4.2) compares nodes that differ only in planned
outputs, where the bound with this ``W`` is valid and tighter than with the thesis's full ``W``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from frontierbo._validation import check_int, check_real
from frontierbo.core.gp import FiniteDomainGP

#: The covariance in the information term 0.5 beta log|I + sigma_n^-2 Sigma|
#: (docs/decisions.md#macro-bo-information-term-uses-the-noisy-covariance).
INFO_COVARIANCES = ("noisy", "latent")


@dataclass(frozen=True)
class InputTree:
    """Input paths from one location and their input-only quantities (arrays over nodes).

    Attributes:
        horizon: ``H``; kappa: macro-action length; location: the agent's location.
        root_actions: (m,) all rows of ``domain.macro_actions(location)``; ``root_children`` the
            level-1 nodes, ``root_rows[i]`` the row of root child ``i`` (pruned rows are absent).
        level: (P,) level ``t`` of each node; ``parent`` (P,) (-1 at level 1); ``end`` (P,) one past
            the last descendant; ``action`` (P,) the row of ``x_t`` in its location's
            ``macro_actions``; ``cells`` (P, kappa).
        children: per node, the (c,) int array of its children.
        mean_sum: (P,) ``1^T mu_0(x_t)``; ``info``: (P,) ``0.5 log|I + sigma_n^-2 Sigma_{t-1}(x_t)|``
            (beta not applied); ``psi``: (P, kappa, kappa); ``coef``: (P, H-1, kappa), row ``s-1``
            the coefficient of the level-``s`` sample (zero for ``s >= t``); ``alpha``, ``trace``
            (``Tr Sigma_{t-1}(x_t)``), ``lipschitz`` (``L_t(x_{1:t})``, Def. B.1), ``theta``
            (``theta_{t-1}(x_{1:t})``,
            docs/decisions.md#macro-bo-computable-most-likely-error-bound-theta) (P,).
        lipschitz_root: ``L_0``; ``sampling_constant``: ``K`` (B.17); ``theta_max``: ``theta``;
        max_actions: ``A`` (the largest number of children of the root or a node).
    """

    horizon: int
    kappa: int
    location: int
    noise_variance: float
    root_actions: np.ndarray
    root_children: np.ndarray
    root_rows: np.ndarray
    level: np.ndarray
    parent: np.ndarray
    end: np.ndarray
    action: np.ndarray
    cells: np.ndarray
    children: tuple[np.ndarray, ...]
    mean_sum: np.ndarray
    info: np.ndarray
    psi: np.ndarray
    coef: np.ndarray
    alpha: np.ndarray
    trace: np.ndarray
    lipschitz: np.ndarray
    theta: np.ndarray
    lipschitz_root: float
    sampling_constant: float
    theta_max: float
    max_actions: int

    @property
    def size(self) -> int:
        """Number of input nodes ``P``."""
        return int(self.level.shape[0])

    def path(self, node: int) -> tuple[int, ...]:
        """The action rows ``(a_1, ..., a_t)`` leading to ``node`` (the key of its samples)."""
        rows = []
        while node >= 0:
            rows.append(int(self.action[node]))
            node = int(self.parent[node])
        return tuple(reversed(rows))

    def path_cells(self, node: int) -> np.ndarray:
        """The cells ``x_{1:t}`` of ``node``'s path, (t * kappa,)."""
        blocks = []
        while node >= 0:
            blocks.append(self.cells[node])
            node = int(self.parent[node])
        return np.concatenate(blocks[::-1])


def build_input_tree(
    gp: FiniteDomainGP,
    domain,
    location: int,
    horizon: int,
    *,
    info_covariance: str = "noisy",
) -> InputTree:
    """Enumerate the input paths of depth ``horizon`` from ``location`` and precompute."""
    if gp.n != domain.n:
        raise ValueError(f"gp has {gp.n} candidates but the domain has {domain.n} cells")
    location = check_int(location, "location", low=0, high=domain.n - 1)
    H = check_int(horizon, "horizon", low=1)
    if info_covariance not in INFO_COVARIANCES:
        raise ValueError(
            f"info_covariance must be one of {INFO_COVARIANCES}, got {info_covariance!r}"
        )
    noise = check_real(gp.noise_variance, "gp.noise_variance", low=0.0)
    kappa = int(domain.kappa)

    # -- enumerate feasible paths depth-first (prune prefixes that cannot reach level H) --------
    levels: list[int] = []
    parents: list[int] = []
    actions: list[int] = []
    cells: list[np.ndarray] = []
    ends: list[int] = []
    cache: dict[int, np.ndarray] = {}

    def macro_actions(loc: int) -> np.ndarray:
        if loc not in cache:
            cache[loc] = np.asarray(domain.macro_actions(loc), dtype=np.int64).reshape(-1, kappa)
        return cache[loc]

    def feasible(loc: int, remaining: int, memo: dict) -> bool:
        if remaining == 0:
            return True
        key = (loc, remaining)
        if key not in memo:
            memo[key] = any(feasible(int(x[-1]), remaining - 1, memo) for x in macro_actions(loc))
        return memo[key]

    memo: dict = {}

    def expand(loc: int, t: int, parent: int) -> None:
        for row, x in enumerate(macro_actions(loc)):
            if not feasible(int(x[-1]), H - t, memo):
                continue
            node = len(levels)
            levels.append(t)
            parents.append(parent)
            actions.append(row)
            cells.append(x)
            ends.append(-1)
            if t < H:
                expand(int(x[-1]), t + 1, node)
            ends[node] = len(levels)

    expand(location, 1, -1)
    if not levels:
        raise ValueError(
            f"no sequence of {H} macro-actions starts at location {location} (dead ends); "
            "plan with a smaller horizon"
        )
    level = np.asarray(levels, dtype=np.int64)
    parent = np.asarray(parents, dtype=np.int64)
    end = np.asarray(ends, dtype=np.int64)
    action = np.asarray(actions, dtype=np.int64)
    cell = np.asarray(cells, dtype=np.int64).reshape(-1, kappa)
    P = level.shape[0]
    kids: list[list[int]] = [[] for _ in range(P)]
    for node in range(P):
        if parent[node] >= 0:
            kids[parent[node]].append(node)
    children = tuple(np.asarray(k, dtype=np.int64) for k in kids)
    root_children = np.flatnonzero(level == 1)

    # -- path covariances from one block of the core posterior (no second GP) ---------------
    unique, inverse = np.unique(cell, return_inverse=True)
    cov = gp.covariance(unique)  # latent Cov_0 of every cell of the tree, given d_0
    cov = 0.5 * (cov + cov.T)
    local = inverse.reshape(P, kappa)
    mean_sum = gp.mean[cell].sum(axis=1)
    psi = np.empty((P, kappa, kappa))
    coef = np.zeros((P, max(H - 1, 0), kappa))
    alpha = np.zeros(P)
    for t in range(1, H + 1):
        nodes = np.flatnonzero(level == t)
        chain = np.empty((nodes.shape[0], t), dtype=np.int64)  # ancestor at each level
        chain[:, t - 1] = nodes
        for s in range(t - 2, -1, -1):
            chain[:, s] = parent[chain[:, s + 1]]
        idx = local[chain].reshape(nodes.shape[0], t * kappa)  # path cells, (n_t, t kappa)
        S = cov[idx[:, :, None], idx[:, None, :]]
        S += noise * np.eye(t * kappa)
        L = np.linalg.cholesky(S)
        last = slice((t - 1) * kappa, t * kappa)
        psi[nodes] = L[:, last, last]
        for s in range(t - 1):
            coef[nodes, s] = L[:, last, s * kappa : (s + 1) * kappa].sum(axis=1)
        if t > 1:
            head = L[:, : (t - 1) * kappa, : (t - 1) * kappa]
            lower = L[:, last, : (t - 1) * kappa]
            # W = L_{t,<t} L_{<t,<t}^{-1}:  W^T = L_{<t,<t}^{-T} L_{t,<t}^T
            W = np.linalg.solve(np.swapaxes(head, 1, 2), np.swapaxes(lower, 1, 2))
            alpha[nodes] = np.sqrt((W**2).sum(axis=(1, 2)))
    sigma = psi @ np.swapaxes(psi, 1, 2)  # Sigma_{t-1}(x_t), noisy (4.1)
    trace = np.einsum("pii->p", sigma)
    if info_covariance == "noisy":  # thesis (4.4) and authors' code: Sigma includes sigma_n^2 I
        info = 0.5 * np.linalg.slogdet(np.eye(kappa) + sigma / noise)[1]
    else:  # latent Sigma - sigma_n^2 I: |I + (Sigma - s I)/s| = |Sigma / s| (B.2)
        info = np.log(np.diagonal(psi, axis1=1, axis2=2)).sum(axis=1) - 0.5 * kappa * math.log(
            noise
        )

    # -- Lipschitz constants (Definition B.1) and theta (Theorem 4.2), bottom-up -------------
    root_k = math.sqrt(kappa)
    lipschitz = np.zeros(P)
    theta = np.zeros(P)
    for node in range(P - 1, -1, -1):
        ch = children[node]
        if ch.size:
            lipschitz[node] = np.max(
                root_k * alpha[ch] + lipschitz[ch] * np.sqrt(1.0 + alpha[ch] ** 2)
            )
            below = float(theta[ch].max())
        else:
            below = 0.0
        theta[node] = root_k * lipschitz[node] * math.sqrt(trace[node]) + below
    lipschitz_root = float(
        np.max(
            root_k * alpha[root_children]
            + lipschitz[root_children] * np.sqrt(1.0 + alpha[root_children] ** 2)
        )
    )
    sampling_constant = float(np.max(lipschitz * np.sqrt(trace)))
    max_actions = max(root_children.size, max((c.size for c in children), default=0))
    return InputTree(
        horizon=H,
        kappa=kappa,
        location=location,
        noise_variance=noise,
        root_actions=macro_actions(location),
        root_children=root_children,
        root_rows=action[root_children],
        level=level,
        parent=parent,
        end=end,
        action=action,
        cells=cell,
        children=children,
        mean_sum=mean_sum,
        info=info,
        psi=psi,
        coef=coef,
        alpha=alpha,
        trace=trace,
        lipschitz=lipschitz,
        theta=theta,
        lipschitz_root=lipschitz_root,
        sampling_constant=sampling_constant,
        theta_max=float(theta.max()),
        max_actions=int(max_actions),
    )
