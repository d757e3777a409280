"""The search tree of A3, anytime ε-Macro-BO: thesis Algorithm 4 lines 1-38 (ExpandTree,
RefineBounds, ConstructTree), grown one ConstructTree call at a time by the planner of
:mod:`frontierbo.macro.anytime` (lines 39-51).

Line numbers in the comments are those of the thesis's Algorithm 4. Per decision node ``d_t`` and
macro-action ``x_{t+1}`` the search keeps the ``N`` samples, per-sample bounds on the children's
values and child pointers:

    lines 7-8   V_lo*_{t+1}(child l) = VV_{t+1}(child l) - Theta_{t+1},  V_hi* = VV + Theta   (4.11)
    lines 13-14 Q_lo*_t = R + 1/N sum_l V_lo*_{t+1}(child l) - lambda,  Q_hi* = ... + lambda
    lines 15-16 V_lo*_t = max Q_lo*_t,  V_hi*_t = max Q_hi*_t
    lines 21-23 (RefineBounds, Corollary 1) child i's bounds from child j's by
                L_{t+1}(x_{1:t+1}) ||y^i - y^j||

``VV`` at a sampled node (line 7) is A2's most-likely value there. Along a most-likely branch the
posterior mean does not move, so ``VV_{t+1}`` of a child is the best sum over input paths below it
of ``const + offset``, where the *offsets* (the linear effect of the samples drawn so far on
``1^T mu``, :mod:`frontierbo.macro.input_tree`) are those of the child: one backward pass over the
input subtree, for the ``N`` children of an action at once, a level at a time (in preorder the
children of a level's nodes come grouped by parent, so the best continuation of every node is one
``np.maximum.reduceat``) and a block of samples at a time. Per entry it does the rounded operations
of the plain recursion (up to exactly commuting additions), so its values are the same to the bit.

Choices (docs/decisions.md#macro-bo-anytime-variants-are-options), each an option; defaults are the
thesis's except ``assign`` (the planner adds ``fallback``, :mod:`frontierbo.macro.anytime`):

* ``init="most_likely"`` (thesis lines 7-8) or ``"infinite"`` (authors' code: ``-inf, +inf``);
* ``assign="intersect"`` (default, docs/decisions.md#macro-bo-anytime-bounds-are-intersected: always
  valid, and it makes the bounds monotone in the budget) or ``"overwrite"`` (thesis lines 10 / 29);
* ``action_rule="lower"`` (thesis line 26, argmax ``Q_lo*``) or ``"upper"``
  (authors' code, argmax ``Q_hi*``);
* ``last_stage="thesis"`` (``Q = R -+ lambda`` at ``t = H - 1``) or ``"exact"`` (authors' code:
  ``Q_lo* = Q_hi* = R``). No samples are drawn at ``t = H - 1`` in either case: ``V_H = 0`` and
  ``Theta_H = 0`` make every child's bounds exactly 0, whatever the samples;
* ``refine=True`` (RefineBounds on; ``False`` for exactness checks against A1).

Saturation (docs/decisions.md#macro-bo-finished-anytime-nodes-are-skipped; needed for an unlimited
budget to end at the exhaustive tree): a node at ``t = H - 1`` is saturated once expanded, a node
above it once every child of every action is. Lines 26 and 28 choose among the unsaturated actions /
children only (ties: the first), so no call is spent on a finished subtree; the search stops when
the root is saturated. Under the thesis's rules alone an explored child keeps a gap
``2 k lambda > 0`` for ever and could be chosen again and again.

Node counter (docs/decisions.md#macro-bo-anytime-node-counter): +1 per decision node created (the
root included) and +1 per terminal ``(d_{H-1}, action)`` pair; a fresh node at depth ``t`` costs
``c_{H-t}``, ``c_1 = 1 + A``, ``c_k = 1 + A c_{k-1}``. At full expansion it equals A1's count
(:func:`~frontierbo.macro.epsilon_macro_bo.tree_nodes`).

Samples: the contract of A1 (:mod:`frontierbo.macro.epsilon_macro_bo`), one decision node per
call: ``sampler(path, number, out)`` with ``out`` (1, N, kappa), ``path`` the action rows of the
macro-action sampled and ``number`` the lexicographic number of the decision node ``d_t`` it is
sampled from; so a sampler that serves each node from a fixed array gives A1 and A3 the same
samples.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from frontierbo._validation import check_int
from frontierbo.macro.epsilon_macro_bo import Sampler
from frontierbo.macro.input_tree import InputTree

INITS = ("most_likely", "infinite")
ASSIGNS = ("intersect", "overwrite")
ACTION_RULES = ("lower", "upper")
LAST_STAGES = ("thesis", "exact")

#: Samples per block in the VV pass: about this many (sample, input node) entries at a time. A
#: block stays in cache, and for kappa <= 8 its products ``z B^T`` (inner size kappa, memory-bound)
#: stay under OpenBLAS's multithreading threshold (m n k <= 2^18): threads on such products only
#: add wake-up latency, about 10 ms a call on a busy 2-core machine (H = 4: 6 s of a 7 s search).
_BLOCK = 1 << 15


def fresh_node_cost(A: int, depth_left: int) -> int:
    """Node cost ``c_k`` with ``A`` actions everywhere: ``c_1 = 1 + A``, ``c_k = 1 + A c_{k-1}``."""
    c = 1 + A
    for _ in range(depth_left - 1):
        c = 1 + A * c
    return c


def _sampled_values(
    z: np.ndarray, B: np.ndarray, off: np.ndarray, const: np.ndarray, rel
) -> np.ndarray:
    """``const + (off + z B^T)`` at the input nodes ``rel`` (n, len(rel)): ``const`` plus the
    children's offsets, entry by entry as :meth:`AnytimeSearch._child_offsets` forms them."""
    v = z @ B[rel].T
    v += off[rel]
    v += const[rel]
    return v


class _Node:
    """A decision node ``d_t``: input node ``p`` (level ``t``; ``-1`` at the root), its number
    among the decision nodes of ``p`` (lexicographic in the sample indices) and the offsets of the
    input nodes below ``p`` (``off[q - lo]``, ``lo = p + 1``). Once expanded below ``t = H - 1``,
    ``z`` is (m, N, kappa) and ``lower`` / ``upper`` / ``sat`` (m, N), one row per action; the
    output deviations ``Psi z`` are not kept but remade when refining (they would double the
    memory of a node, which reaches gigabytes at H = 4)."""

    __slots__ = (
        "p",
        "t",
        "number",
        "off",
        "explored",
        "saturated",
        "reward",
        "z",
        "lower",
        "upper",
        "children",
        "sat",
        "q_lower",
        "q_upper",
        "v_lower",
        "v_upper",
    )

    def __init__(self, p: int, t: int, number: int, off: np.ndarray):
        self.p, self.t, self.number, self.off = p, t, number, off
        self.explored = False
        self.saturated = False


class _Levels:
    """The input nodes of each level in preorder, for level-by-level passes over a subtree.

    Preorder keeps a subtree contiguous, so the level-``s`` nodes below ``c`` are one run of
    ``nodes[s]`` (bisect ``c + 1`` and ``end[c]``), and the children of a run of level-``s``
    nodes are one run of ``nodes[s + 1]``, grouped by parent in the parents' order: those of
    ``nodes[s][i]`` start at ``first[s][i]`` if ``has_kids[s][i]`` (always below level ``H``:
    :func:`build_input_tree` prunes dead ends).
    """

    def __init__(self, tree: InputTree):
        H = tree.horizon
        self.nodes = [np.flatnonzero(tree.level == s) for s in range(H + 1)]
        self.first: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * (H + 1)
        self.has_kids: list[np.ndarray] = [np.zeros(0, dtype=bool)] * (H + 1)
        for s in range(1, H):
            owner = np.searchsorted(self.nodes[s], tree.parent[self.nodes[s + 1]])
            counts = np.bincount(owner, minlength=self.nodes[s].size)
            self.first[s] = np.cumsum(counts) - counts
            self.has_kids[s] = counts > 0


class AnytimeSearch:
    """The search tree of one planning call (Algorithm 4 lines 1-38), grown by :meth:`construct`.

    Attributes after each call: ``v_lower`` / ``v_upper`` (root bounds), ``q_lower`` /
    ``q_upper`` (per root child of the input tree), ``nodes`` (counter), ``calls`` (ConstructTree
    calls, the initial expansion included), ``saturated``, ``root`` (the root :class:`_Node`).
    """

    def __init__(
        self,
        tree: InputTree,
        N: int,
        lam: float,
        *,
        beta: float = 0.0,
        sampler: Sampler,
        init: str = "most_likely",
        assign: str = "intersect",
        action_rule: str = "lower",
        last_stage: str = "thesis",
        refine: bool = True,
    ):
        for name, value, allowed in (
            ("init", init, INITS),
            ("assign", assign, ASSIGNS),
            ("action_rule", action_rule, ACTION_RULES),
            ("last_stage", last_stage, LAST_STAGES),
        ):
            if value not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
        self.tree, self.N, self.lam = tree, check_int(N, "n_samples", low=1), float(lam)
        self.H, self.kappa = tree.horizon, tree.kappa
        self.sampler = sampler
        self.init, self.assign, self.action_rule = init, assign, action_rule
        self.last_lam = self.lam if last_stage == "thesis" else 0.0
        self.refine = bool(refine)
        self.const = tree.mean_sum + beta * tree.info  # R at zero offsets (line 12)
        # Theta_{t+1}(x_{1:t+1}) = max_{x_{t+2}} theta_{t+1}(x_{1:t+2}), 0 at level H
        # (docs/decisions.md#macro-bo-computable-most-likely-error-bound-theta)
        self.big_theta = np.array(
            [float(tree.theta[c].max()) if c.size else 0.0 for c in tree.children]
        )
        self.nodes = 0
        self.calls = 0
        self._paths: dict[int, tuple[int, ...]] = {}
        self._levels = _Levels(tree)
        self._runs: dict[int, list] = {}
        self.root = _Node(-1, 0, 0, np.zeros(tree.size))

    # -- input-tree helpers -----------------------------------------------------------------
    def _actions(self, node: _Node) -> np.ndarray:
        return self.tree.root_children if node.p < 0 else self.tree.children[node.p]

    def _path(self, c: int) -> tuple[int, ...]:
        if c not in self._paths:
            self._paths[c] = self.tree.path(c)
        return self._paths[c]

    def _child_offsets(self, node: _Node, c: int, z: np.ndarray) -> np.ndarray:
        """Offsets (n, D) of the input nodes below ``c`` at the children with samples ``z``."""
        tree, lo = self.tree, node.p + 1
        below = slice(c + 1, int(tree.end[c]))
        B = tree.coef[below, int(tree.level[c]) - 1]  # weight of the level-t+1 sample, (D, kappa)
        return node.off[c + 1 - lo : int(tree.end[c]) - lo][None, :] + z @ B.T

    def _runs_below(self, c: int) -> list:
        """The input nodes below ``c`` level by level, deepest first, as ``(rel, starts, has)``:
        ``rel`` their positions relative to ``c + 1`` (a slice when they are all of the subtree),
        ``starts`` where each one's children begin in the next deeper run (for
        ``np.maximum.reduceat``; ``None`` for the deepest), ``has`` the mask of those with
        children (``None`` when all have). Cached: the planner asks again for every sample set."""
        runs = self._runs.get(c)
        if runs is not None:
            return runs
        tree, lv = self.tree, self._levels
        base, end = c + 1, int(tree.end[c])
        runs, deeper = [], None  # deeper: start of the next deeper run in its level's array
        for s in range(self.H, int(tree.level[c]), -1):
            a, b = (int(i) for i in np.searchsorted(lv.nodes[s], (base, end)))
            if a == b:  # only under dead ends (an unpruned tree): no deeper level either
                continue
            rel = slice(0, end - base) if b - a == end - base else lv.nodes[s][a:b] - base
            starts = has = None
            if deeper is not None:
                kids = lv.has_kids[s][a:b]
                starts = lv.first[s][a:b]
                if kids.all():
                    starts = starts - deeper
                else:
                    starts, has = starts[kids] - deeper, kids
            runs.append((rel, starts, has))
            deeper = a
        self._runs[c] = runs
        return runs

    def _best_path(self, c: int, values, n: int) -> np.ndarray:
        """``max`` over input paths below ``c`` of the sum of ``values(rel)`` (n, len(rel)) along
        the path, (n,): one backward pass, a level at a time; ``0`` below a leaf."""
        runs = self._runs_below(c)
        if not runs:
            return np.zeros(n)  # VV_H = 0
        best = None
        for rel, starts, has in runs:
            v = values(rel)
            if best is not None:
                # the best continuation per node: a max over its children's group (exact, as
                # the max of a list of per-child arrays)
                kids = np.maximum.reduceat(best, starts, axis=1)
                if has is None:
                    v += kids
                else:
                    v[:, has] += kids
            best = v
        return best.max(axis=1)

    def most_likely_values(self, c: int, child_off: np.ndarray) -> np.ndarray:
        """``VV_{t+1}`` (n,) of the decision nodes below action ``c`` with offsets ``child_off``
        (n, D): ``max`` over input paths below ``c`` of ``sum (const + offset)``."""
        const = self.const[c + 1 : int(self.tree.end[c])]
        return self._best_path(c, lambda rel: const[rel] + child_off[:, rel], child_off.shape[0])

    def _most_likely_children(self, node: _Node, c: int, z: np.ndarray) -> np.ndarray:
        """``most_likely_values(c, _child_offsets(node, c, z))`` without the (n, D) offsets:
        each level's offsets are made when the pass reaches it, for a block of samples at a time
        (see ``_BLOCK``). Same floating-point operations per entry (``const + (off + z B^T)``;
        ``+`` commutes exactly), so the same values."""
        lo, end = node.p + 1, int(self.tree.end[c])
        off = node.off[c + 1 - lo : end - lo]
        B = self.tree.coef[c + 1 : end, int(self.tree.level[c]) - 1]
        const = self.const[c + 1 : end]
        rows = max(1, _BLOCK // max(1, end - c - 1))
        out = np.empty(z.shape[0])
        for r in range(0, z.shape[0], rows):
            values = partial(_sampled_values, z[r : r + rows], B, off, const)
            out[r : r + rows] = self._best_path(c, values, out[r : r + rows].shape[0])
        return out

    # -- Algorithm 4 ------------------------------------------------------------------------
    def _expand(self, node: _Node) -> tuple[float, float]:
        """ExpandTree(t, d_t, lambda), lines 1-17."""
        H, N = self.H, self.N
        t, lo = node.t, node.p + 1
        if t == H:  # line 2
            return 0.0, 0.0
        self.nodes += 1
        node.explored = True
        acts = self._actions(node)
        m = acts.shape[0]
        node.reward = self.const[acts] + node.off[acts - lo]  # R of line 12, per action
        if t == H - 1:  # last stage: V_H = 0, Theta_H = 0, so every child's bounds are 0
            self.nodes += m  # one terminal (d_{H-1}, action) pair per action
            node.q_lower = node.reward - self.last_lam  # lines 12-14 with sum = 0
            node.q_upper = node.reward + self.last_lam
            node.saturated = True
        else:
            node.q_lower, node.q_upper = np.empty(m), np.empty(m)
            node.children = [{} for _ in range(m)]
            node.z = np.empty((m, N, self.kappa))
            if self.init == "most_likely":
                node.lower, node.upper = np.empty((m, N)), np.empty((m, N))
            else:  # authors' code
                node.lower, node.upper = np.full((m, N), -np.inf), np.full((m, N), np.inf)
            node.sat = np.zeros((m, N), dtype=bool)
            for a, c in enumerate(acts.tolist()):  # line 3
                z = node.z[a]
                self.sampler(self._path(c), node.number, node.z[a : a + 1])  # line 5
                ydev = self._deviations(node, a, c)
                if self.init == "most_likely":  # lines 6-8 (4.11)
                    vv = self._most_likely_children(node, c, z)
                    np.subtract(vv, self.big_theta[c], out=node.lower[a])
                    np.add(vv, self.big_theta[c], out=node.upper[a])
                j = int(np.argmin(np.einsum("lk,lk->l", ydev, ydev)))  # line 9: most likely
                self._descend(node, a, c, j, self._expand, ydev)  # lines 10-11
                self._q(node, a)  # lines 12-14
            node.saturated = bool(node.sat.all())  # only when N = 1 and t = H - 2
        node.v_lower = float(node.q_lower.max())  # line 15
        node.v_upper = float(node.q_upper.max())  # line 16
        return node.v_upper, node.v_lower  # line 17

    def _deviations(self, node: _Node, a: int, c: int) -> np.ndarray:
        """``y^l - mu_t(x_{t+1}) = Psi z^l`` (N, kappa) of action ``a`` (input node ``c``)."""
        return node.z[a] @ self.tree.psi[c].T

    def _descend(
        self, node: _Node, a: int, c: int, j: int, step, ydev: np.ndarray | None = None
    ) -> None:
        """Lines 10-11 / 29-30: bounds of child ``j`` of action ``a`` (input node ``c``) from
        ``step`` (ExpandTree or ConstructTree), assigned (overwrite or intersect), then
        RefineBounds (with ``ydev``, the action's deviations, if at hand)."""
        child = node.children[a].get(j)
        if child is None:
            off = self._child_offsets(node, c, node.z[a][j : j + 1])[0]
            child = _Node(c, node.t + 1, node.number * self.N + j, off)
            node.children[a][j] = child
        upper, lower = step(child)
        lo_a, up_a = node.lower[a], node.upper[a]
        if self.assign == "overwrite":
            lo_a[j], up_a[j] = lower, upper
        else:
            lo_a[j] = max(lo_a[j], lower)
            up_a[j] = min(up_a[j], upper)
        node.sat[a, j] = child.saturated
        if self.refine:
            self._refine(node, a, c, j, self._deviations(node, a, c) if ydev is None else ydev)

    def _refine(self, node: _Node, a: int, c: int, j: int, ydev: np.ndarray) -> None:
        """RefineBounds(t, d_t, x_{t+1}, j), lines 18-23 (Corollary 1); ``ydev`` line 19's."""
        d = ydev - ydev[j]
        # line 21: L ||y^i - y^j||, the norm as np.linalg.norm(d, axis=1) forms it
        b = np.sqrt(np.add.reduce(d * d, axis=1))
        b *= self.tree.lipschitz[c]
        lower, upper = node.lower[a], node.upper[a]
        keep_l, keep_u = lower[j], upper[j]
        np.maximum(lower, lower[j] - b, out=lower)  # line 22 (i = j unchanged: b = 0)
        np.minimum(upper, upper[j] + b, out=upper)  # line 23
        lower[j], upper[j] = keep_l, keep_u

    def _q(self, node: _Node, a: int) -> None:
        """Lines 12-14 / 31-33: ``Q_lo*`` and ``Q_hi*`` of action ``a`` (the mean as
        ``ndarray.mean`` forms it: sum, then divide)."""
        r = node.reward[a]
        node.q_lower[a] = r + np.add.reduce(node.lower[a]) / self.N - self.lam
        node.q_upper[a] = r + np.add.reduce(node.upper[a]) / self.N + self.lam

    def _construct(self, node: _Node) -> tuple[float, float]:
        """ConstructTree(t, d_t, lambda), lines 24-38."""
        if not node.explored:  # lines 37-38
            return self._expand(node)
        if node.saturated or node.t == self.H:
            return node.v_upper, node.v_lower
        # line 26 among the unsaturated actions (ties, also -inf ones: the first)
        open_a = np.flatnonzero(~node.sat.all(axis=1))
        key = node.q_lower if self.action_rule == "lower" else node.q_upper
        a = int(open_a[np.argmax(key[open_a])])
        # lines 27-28: the unsaturated child with the largest gap
        open_j = np.flatnonzero(~node.sat[a])
        j = int(open_j[np.argmax((node.upper[a] - node.lower[a])[open_j])])
        c = int(self._actions(node)[a])
        self._descend(node, a, c, j, self._construct)  # lines 29-30
        self._q(node, a)  # lines 31-33
        node.v_lower = float(node.q_lower.max())  # line 34
        node.v_upper = float(node.q_upper.max())  # line 35
        node.saturated = bool(node.sat.all())
        return node.v_upper, node.v_lower  # line 36

    def construct(self) -> None:
        """One ConstructTree(0, d_0, lambda) call (line 45)."""
        self._construct(self.root)
        self.calls += 1

    @property
    def saturated(self) -> bool:
        return self.root.saturated

    @property
    def v_lower(self) -> float:
        return self.root.v_lower

    @property
    def v_upper(self) -> float:
        return self.root.v_upper

    @property
    def q_lower(self) -> np.ndarray:
        return self.root.q_lower

    @property
    def q_upper(self) -> np.ndarray:
        return self.root.q_upper

    def count_nodes(self) -> int:
        """The node counter recomputed by walking the tree (a consistency check)."""
        total, stack = 0, [self.root]
        while stack:
            node = stack.pop()
            if not node.explored:
                continue
            total += 1
            if node.t == self.H - 1:
                total += self._actions(node).shape[0]
            else:
                for kids in node.children:
                    stack.extend(kids.values())
        return total
