"""A1: exhaustive ε-Macro-BO, the "Exact" planner (thesis Chapter 4, eqs. (4.6), (4.9)).

The comments number the steps of a planning call: 1 the input tree; 2 the recursion (4.6)
(2a the reward R, 2b the last stage, 2c a sampled stage); 3 the root's Q_0 and QQ_0; 4 the test
of (4.9); 5 the argmax.

    V_t(d_t)             = max_{x_{t+1} in A(x_t)} Q_t(x_{t+1}, d_t),             V_H = 0      (4.6)
    Q_t(x_{t+1}, d_t)    = R(x_{t+1}, d_t) + 1/N sum_l V_{t+1}(<x_{1:t+1}, y_{1:t} (+) y^l>),
    y^l = mu_t(x_{t+1}) + Psi z^l,  z^l ~ N(0, I_kappa) i.i.d., fresh at every node           (B.12)
    R(x_{t+1}, d_t)      = 1^T mu_t(x_{t+1}) + 0.5 beta log|I + Sigma_t(x_{t+1}) / sigma_n^2| (4.4)
    pi^eps(d_0)          = argmax_{x_1} Q^eps_0(x_1, d_0),  Q^eps = Q if |Q - QQ| <= lambda H + theta,
                           else QQ (the most-likely value of A2)                            (4.9)

At the last stage ``t = H - 1`` the expectation of ``V_H = 0`` is exact, so no samples are drawn
there (step 2b; the node counts of Table 4.2 assume it,
docs/decisions.md#macro-bo-no-samples-at-the-last-stage).

How it is computed (docs/decisions.md#macro-bo-linear-mean-tree-evaluation; not in the thesis):
everything that depends only on inputs is precomputed once per call on the input tree
(:mod:`frontierbo.macro.input_tree`); there ``1^T mu_t(x_{t+1})`` is ``1^T mu_0(x_{t+1})`` plus a
fixed linear function of the whitened samples ``z`` drawn along the path, so a decision node is
summarised by one number per input node below it (the *offsets*), and a whole layer of samples
updates them with one matrix product. The root's subtrees are processed depth-first and the decision
nodes in blocks, which bounds memory; the blocks of the last sampled layer (almost all the work) can
run on several threads.

Samples. A sampler is called as ``sampler(path, first, out)``: ``path`` is the tuple of action
rows ``(a_1, ..., a_t)`` of the macro-action ``x_t`` being sampled, and ``out`` (m, N, kappa) must
be filled with the samples of the decision nodes ``d_{t-1}`` numbered ``first .. first + m - 1``,
where a decision node reached by the sample indices ``(l_1, ..., l_{t-1})`` has number
``l_1 N^{t-2} + ... + l_{t-1}`` (lexicographic). A test can so fix every sample of the tree. The
default :class:`KeyedNormalSampler` draws each block from a Generator seeded by (seed, path,
first): a plan is a deterministic function of ``seed`` and ``block_rows``, whatever the threads.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from frontierbo._validation import SeedLike, check_int, check_real
from frontierbo.core.gp import FiniteDomainGP
from frontierbo.macro.input_tree import InputTree, build_input_tree
from frontierbo.macro.most_likely import most_likely_q
from frontierbo.macro.parameters import (
    EpsilonParameters,
    epsilon_for_samples,
    parameters_for_epsilon,
)

logger = logging.getLogger(__name__)

#: ``sampler(path, first, out)`` fills ``out`` (m, N, kappa) with standard normals (module doc).
Sampler = Callable[[tuple[int, ...], int, np.ndarray], None]


class KeyedNormalSampler:
    """The default sampler: block ``(path, first)`` from ``PCG64(SeedSequence((seed, t, *path,
    first)))``, so blocks are independent of the order (and thread) in which they are drawn."""

    def __init__(self, seed: SeedLike = None):
        if isinstance(seed, np.random.Generator):
            self.entropy = int(seed.integers(2**63))
        elif seed is None:
            self.entropy = int(np.random.SeedSequence().entropy)
        else:
            self.entropy = check_int(seed, "seed", low=0)

    def __call__(self, path: tuple[int, ...], first: int, out: np.ndarray) -> None:
        key = np.random.SeedSequence([self.entropy, len(path), *path, first])
        np.random.Generator(np.random.PCG64(key)).standard_normal(out=out.reshape(-1))


def exhaustive_nodes(A: int, N: int, horizon: int) -> int:
    """Nodes of one planning call with ``A`` actions everywhere (Table 4.2 convention):
    ``h_1 = A``, ``h_k = A N + A N h_{k-1}``, nodes ``= 1 + h_H``."""
    h = A
    for _ in range(horizon - 1):
        h = A * N + A * N * h
    return 1 + h


def run_nodes(A: int, N: int, horizon: int, iterations: int) -> int:
    """Nodes of a whole run of ``T`` iterations with ``H_eff = min(H, T - t)``
    (docs/decisions.md#macro-bo-horizon-shrinks-at-the-end-of-the-budget)."""
    return sum(exhaustive_nodes(A, N, min(horizon, iterations - t)) for t in range(iterations))


def tree_nodes(tree: InputTree, N: int) -> int:
    """Nodes of one planning call on ``tree`` (any number of actions per location): the root,
    ``N^t`` decision nodes per input node at a level ``t < H`` and ``N^(H-1)`` terminal pairs per
    input node at level ``H``."""
    H = tree.horizon
    return 1 + int(sum(N ** int(t) if t < H else N ** (H - 1) for t in tree.level.tolist()))


@dataclass(frozen=True)
class MacroPlan:
    """One planning call of ε-Macro-BO.

    Arrays are indexed by the rows of ``domain.macro_actions(location)`` (``-inf`` on a row that
    has no feasible continuation): ``q_sampled`` = ``Q_0`` (4.6), ``q_most_likely`` = ``QQ_0`` (A2),
    ``q_epsilon`` = ``Q^eps_0`` (4.9), ``fallback`` the rows where ``QQ_0`` replaced ``Q_0``.
    ``action`` is the chosen row (first maximum of ``q_epsilon``) and ``macro_action`` its cells;
    ``nodes`` the node count; ``params`` epsilon, lambda, delta, N; ``theta`` and ``K``
    (:mod:`~frontierbo.macro.input_tree`).
    """

    action: int
    macro_action: np.ndarray
    q_sampled: np.ndarray
    q_most_likely: np.ndarray
    q_epsilon: np.ndarray
    fallback: np.ndarray
    nodes: int
    params: EpsilonParameters
    theta: float
    K: float
    horizon: int


class EpsilonMacroBO:
    """Exhaustive ε-Macro-BO planner.

    Args:
        gp: the GP holding the data ``d_0`` (its rows are the domain's cells); read, never changed.
        domain: a :class:`~frontierbo.macro.domain.MacroDomain`.
        horizon: ``H`` (a receding-horizon runner passes ``min(H, T - t)`` to :meth:`plan`).
        n_samples: ``N`` given directly (all the thesis's experiments); ``epsilon`` then follows
            by inverting Theorem 4.3 (loose; it only sets ``lambda`` of the fallback test).
        epsilon: the target loss instead; ``N`` then follows from Theorem 4.3 (often huge:
            a call whose node count would exceed ``max_nodes`` raises ``ValueError``).
        beta: exploration weight of (4.4) (thesis form ``0.5 beta log det``,
            docs/decisions.md#macro-bo-beta-scaled-as-in-the-thesis).
        fallback: apply (4.9) (default); ``False`` plans with ``argmax Q_0`` as the authors' code
            and the experiments do (docs/decisions.md#macro-bo-exhaustive-fallback-on-by-default).
            When it fires it is logged (``logging.INFO``) and recorded.
        info_covariance: ``"noisy"`` (thesis (4.4), default) or ``"latent"``
            (docs/decisions.md#macro-bo-information-term-uses-the-noisy-covariance).
        sampler: ``sampler(path, first, out)`` (module doc); default :class:`KeyedNormalSampler`.
        seed: seed of the default sampler.
        block_rows: samples (decision nodes x N) per block of the last sampled layer.
        n_threads: threads for those blocks (the sampler must then be thread-safe, as the
            default one is).
    """

    def __init__(
        self,
        gp: FiniteDomainGP,
        domain,
        horizon: int,
        *,
        n_samples: int | None = None,
        epsilon: float | None = None,
        beta: float = 0.0,
        fallback: bool = True,
        info_covariance: str = "noisy",
        sampler: Sampler | None = None,
        seed: SeedLike = None,
        block_rows: int = 1 << 15,
        n_threads: int = 1,
        max_nodes: int = 10**10,
    ):
        if (n_samples is None) == (epsilon is None):
            raise ValueError("give exactly one of n_samples (N) and epsilon")
        self.gp = gp
        self.domain = domain
        self.horizon = check_int(horizon, "horizon", low=1)
        self.n_samples = None if n_samples is None else check_int(n_samples, "n_samples", low=1)
        self.epsilon = None if epsilon is None else check_real(epsilon, "epsilon", low=0.0)
        self.beta = check_real(beta, "beta", low=0.0, low_open=False)
        self.fallback = bool(fallback)
        self.info_covariance = info_covariance
        self.sampler = KeyedNormalSampler(seed) if sampler is None else sampler
        self.block_rows = check_int(block_rows, "block_rows", low=1)
        self.n_threads = check_int(n_threads, "n_threads", low=1)
        self.max_nodes = check_int(max_nodes, "max_nodes", low=1)
        self.fallback_count = 0  # root actions replaced by (4.9), over all calls

    # -- the planning call --------------------------------------------------------------------
    def plan(self, location: int, horizon: int | None = None) -> MacroPlan:
        H = self.horizon if horizon is None else check_int(horizon, "horizon", low=1)
        # step 1: the input tree, W / Sigma / Psi / alpha, L_t (Def. B.1), theta_t
        tree = build_input_tree(
            self.gp, self.domain, location, H, info_covariance=self.info_covariance
        )
        K, theta, A = tree.sampling_constant, tree.theta_max, tree.max_actions
        if self.n_samples is not None:
            params = epsilon_for_samples(self.n_samples, K=K, theta=theta, horizon=H, A=A)
        else:
            params = parameters_for_epsilon(self.epsilon, K=K, theta=theta, horizon=H, A=A)
        N = params.n_samples
        expected = tree_nodes(tree, N)
        if expected > self.max_nodes:
            raise ValueError(
                f"the tree has {expected:.3g} nodes (N = {N}, H = {H}) > max_nodes = "
                f"{self.max_nodes:.3g}; choose a larger epsilon or give n_samples"
            )
        # steps 2-3: Q_0(x_1, d_0) for every root macro-action by the recursion (4.6)
        run = _Evaluation(tree, N, self.beta, self.sampler, self.block_rows, self.n_threads)
        q = np.full(tree.root_actions.shape[0], -np.inf)
        q[tree.root_rows] = run.root_values()
        # step 3: QQ_0(x_1, d_0) (A2); step 4: the (4.9) test with threshold lambda H + theta
        qq = np.full_like(q, -np.inf)
        qq[tree.root_rows] = most_likely_q(tree, self.beta)
        fired = np.zeros(q.shape[0], dtype=bool)
        if self.fallback:
            rows = tree.root_rows
            fired[rows] = np.abs(q[rows] - qq[rows]) > params.lam * H + theta
        q_eps = np.where(fired, qq, q)
        if fired.any():
            self.fallback_count += int(fired.sum())
            logger.info(
                "eps-Macro-BO (4.9) fallback at location %d: rows %s use QQ_0 "
                "(|Q_0 - QQ_0| > lambda H + theta = %.4g)",
                tree.location,
                np.flatnonzero(fired).tolist(),
                params.lam * H + theta,
            )
        # step 5: argmax, ties to the first row (authors' code keeps the first strictly greater)
        action = int(np.argmax(q_eps))
        return MacroPlan(
            action=action,
            macro_action=tree.root_actions[action].copy(),
            q_sampled=q,
            q_most_likely=qq,
            q_epsilon=q_eps,
            fallback=fired,
            nodes=run.nodes,
            params=params,
            theta=theta,
            K=K,
            horizon=H,
        )


class _Evaluation:
    """The recursion (4.6) over one input tree, decision nodes in blocks (step 2)."""

    #: offsets (decision nodes x N x descendants) per block above the last sampled layer
    UPPER_BLOCK = 1 << 21

    def __init__(self, tree: InputTree, N: int, beta: float, sampler, block_rows, n_threads):
        self.tree, self.N, self.sampler = tree, N, sampler
        self.H, self.kappa = tree.horizon, tree.kappa
        self.const = tree.mean_sum + beta * tree.info  # R at zero offsets (step 2a)
        self.block_rows = max(block_rows, N)
        self.n_threads = n_threads
        self.nodes = 1  # the root
        self._local = threading.local()
        self._paths: dict[int, tuple[int, ...]] = {}

    def root_values(self) -> np.ndarray:
        tree = self.tree
        values = np.empty(tree.root_children.shape[0])
        pool = ThreadPoolExecutor(self.n_threads) if self.n_threads > 1 else None
        self._pool = pool
        try:
            for i, p in enumerate(tree.root_children.tolist()):
                off = np.zeros((1, tree.end[p] - p))  # d_0: nothing sampled yet
                values[i] = self._q(p, 0, off)[0]
        finally:
            if pool is not None:
                pool.shutdown()
        return values

    def _path(self, p: int) -> tuple[int, ...]:
        if p not in self._paths:
            self._paths[p] = self.tree.path(p)
        return self._paths[p]

    def _q(self, p: int, first: int, off: np.ndarray) -> np.ndarray:
        """``Q_{t-1}(x_t = p, d_{t-1})`` (m,) for the decision nodes ``first .. first + m - 1``;
        ``off`` (m, 1 + descendants): their offsets of ``p`` and of every input node below it."""
        tree, N, H = self.tree, self.N, self.H
        t = int(tree.level[p])
        m = off.shape[0]
        r = self.const[p] + off[:, 0]  # step 2a: R(x_t, d_{t-1})
        if t == H:  # step 2b (t - 1 = H - 1): V_H = 0 exactly, no samples
            self.nodes += m
            return r
        D = int(tree.end[p] - p - 1)
        if t == H - 1:  # the last sampled layer: all children terminal
            self.nodes += m * N * (1 + D)
            return r + self._last_layer(p, first, off)
        # step 2c: N samples per decision node, the children's offsets, max over children
        out = np.empty(m)
        B = tree.coef[p + 1 : tree.end[p], t - 1]  # (D, kappa): weight of z_t in each offset
        rows = max(1, self.UPPER_BLOCK // (N * max(D, self.kappa)))
        for i0 in range(0, m, rows):
            i1 = min(m, i0 + rows)
            mc = i1 - i0
            z = np.empty((mc, N, self.kappa))
            self.sampler(self._path(p), first + i0, z)
            self.nodes += mc * N
            child = z.reshape(mc * N, self.kappa) @ B.T  # (mc N, D)
            child.reshape(mc, N, D)[...] += off[i0:i1, None, 1:]
            v = np.full(mc * N, -np.inf)
            for c in tree.children[p].tolist():
                lo, hi = c - p - 1, int(tree.end[c]) - p - 1
                np.maximum(v, self._q(c, (first + i0) * N, child[:, lo:hi]), out=v)
            out[i0:i1] = r[i0:i1] + v.reshape(mc, N).mean(axis=1)  # 1/N sum_l V_t
        return out

    def _last_layer(self, p: int, first: int, off: np.ndarray) -> np.ndarray:
        """``1/N sum_l max_{x_H} R(x_H, d_{H-1}^l)`` (m,) for a node ``p`` at level ``H - 1``."""
        m = off.shape[0]
        rows = max(1, self.block_rows // self.N)
        chunks = [(i0, min(m, i0 + rows)) for i0 in range(0, m, rows)]
        ch = self.tree.children[p]
        base = (off[:, 1:] + self.const[ch]).T  # (D, m): R of each terminal child at z = 0
        B = self.tree.coef[ch, int(self.tree.level[p]) - 1]  # (D, kappa)

        def block(bounds: tuple[int, int]) -> np.ndarray:
            i0, i1 = bounds
            return self._block(p, first + i0, i1 - i0, base[:, i0:i1], B)

        if self._pool is None or len(chunks) == 1:
            parts = [block(c) for c in chunks]
        else:
            parts = list(self._pool.map(block, chunks))
        return np.concatenate(parts)

    def _block(self, p: int, first: int, m: int, base: np.ndarray, B: np.ndarray) -> np.ndarray:
        N, kappa, D = self.N, self.kappa, B.shape[0]
        ws = self._workspace()
        z = ws["z"][: m * N * kappa].reshape(m, N, kappa)
        self.sampler(self._path(p), first, z)
        vals = ws["vals"][: D * m * N].reshape(D, m * N)
        np.matmul(B, z.reshape(m * N, kappa).T, out=vals)  # one product for the whole layer
        vals3 = vals.reshape(D, m, N)
        vals3 += base[:, :, None]
        best = np.max(vals3, axis=0, out=ws["best"][: m * N].reshape(m, N))  # V_{H-1}(d^l)
        return best.mean(axis=1)

    def _workspace(self) -> dict[str, np.ndarray]:
        ws = getattr(self._local, "ws", None)
        rows = max(self.block_rows // self.N, 1) * self.N
        D = self.tree.max_actions
        if ws is None or ws["z"].shape[0] < rows * self.kappa or ws["vals"].shape[0] < rows * D:
            ws = {
                "z": np.empty(rows * self.kappa),
                "vals": np.empty(rows * D),
                "best": np.empty(rows),
            }
            self._local.ws = ws
        return ws
