"""Grid and graph domains of ε-Macro-BO (thesis Sections 4.1, 4.4.1–4.4.3).

Both implement :class:`frontierbo.macro.domain.MacroDomain`. A macro-action taken at a location
is the sequence of the ``kappa`` cells the agent then visits, *not* counting the location itself
(it was observed when the agent arrived); its last cell is the next location.

* :class:`GridDomain`: an ``(rows, cols)`` grid; cell ``i = r * cols + c`` (row-major, the order
  of ``values.reshape(rows, cols)``) has coordinates ``origin + (r, c) * spacing``. The
  macro-actions are straight lines of ``kappa`` cells in the 4 cardinal directions, kept only when
  every cell lies inside the grid (the AUV dives of the plankton experiment, thesis Section 4.4.1).
* :class:`GraphDomain`: cells are the nodes of a directed or undirected graph; the macro-actions
  at a node are the simple paths of ``kappa`` moves starting there (no node repeated, the start
  included), the cruising trajectories of thesis Sections 4.4.2–4.4.3. When a node has more than
  ``max_actions`` of them, ``max_actions`` are drawn uniformly without replacement, once, when the
  domain is built.

Every macro-action array is computed at construction and returned read-only, so a planner can
call :meth:`macro_actions` in its inner loop at no cost.

:func:`grid_layout` says whether scattered ``(x, y)`` locations form a full regular grid (and
where each sits in it): a user's field becomes a :class:`GridDomain` that way, and plots draw it
as an image.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from frontierbo._validation import SeedLike, as_generator, check_int, check_matrix

#: The 4 cardinal moves of a grid macro-action, as (d row, d col), in the order of the actions.
GRID_DIRECTIONS: tuple[tuple[int, int], ...] = ((-1, 0), (1, 0), (0, -1), (0, 1))


def _readonly(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def _check_location(location, n: int) -> int:
    return check_int(location, "location", low=0, high=n - 1)


class _ActionTable:
    """Macro-actions of every location stored as one (P, kappa) array with CSR offsets."""

    def __init__(self, paths: np.ndarray, starts: np.ndarray, n: int, kappa: int):
        order = np.argsort(starts, kind="stable")
        self.paths = _readonly(np.ascontiguousarray(paths[order].reshape(-1, kappa)))
        counts = np.bincount(starts, minlength=n)
        self.offsets = _readonly(np.concatenate([[0], np.cumsum(counts)]).astype(np.int64))
        self.counts = _readonly(counts.astype(np.int64))

    def of(self, location: int) -> np.ndarray:
        return self.paths[self.offsets[location] : self.offsets[location + 1]]


class GridDomain:
    """A rectangular grid with straight-line macro-actions of ``kappa`` cells.

    Args:
        shape: ``(rows, cols)``, each >= 1.
        kappa: macro-action length (cells visited per step), >= 1.
        spacing: distance between neighbouring cells, a positive float or one per axis
            ``(along rows, along cols)``; in the kernel's length-scale units.
        origin: coordinates of cell (0, 0), a pair of floats.

    Attributes:
        inputs: (rows * cols, 2) coordinates ``origin + (r, c) * spacing`` of cell ``r*cols + c``.
        kappa: the macro-action length.
        shape: ``(rows, cols)``.
    """

    def __init__(self, shape, kappa: int, spacing=1.0, origin=(0.0, 0.0)):
        if len(tuple(shape)) != 2:
            raise ValueError(f"shape must be a pair (rows, cols), got {shape!r}")
        rows = check_int(shape[0], "shape[0] (rows)", low=1)
        cols = check_int(shape[1], "shape[1] (cols)", low=1)
        self.kappa = check_int(kappa, "kappa", low=1)
        step = np.broadcast_to(np.asarray(spacing, dtype=float), (2,)).copy()
        if not np.all(np.isfinite(step)) or np.any(step <= 0):
            raise ValueError(f"spacing must be a positive float or a pair of them, got {spacing!r}")
        start = np.asarray(origin, dtype=float)
        if start.shape != (2,) or not np.all(np.isfinite(start)):
            raise ValueError(f"origin must be a pair of finite floats, got {origin!r}")
        self.shape = (rows, cols)
        self.spacing = (float(step[0]), float(step[1]))
        r, c = np.divmod(np.arange(rows * cols), cols)
        self.inputs = _readonly(start + np.column_stack([r, c]) * step)

        # cells[i, a, k] = k-th cell of action a at cell i; valid when the whole line is inside.
        moves = np.asarray(GRID_DIRECTIONS)[:, None, :] * np.arange(1, self.kappa + 1)[:, None]
        rr = r[:, None, None] + moves[None, :, :, 0]
        cc = c[:, None, None] + moves[None, :, :, 1]
        inside = ((rr >= 0) & (rr < rows) & (cc >= 0) & (cc < cols)).all(axis=2)
        cells = rr * cols + cc
        loc, direction = np.nonzero(inside)
        self._table = _ActionTable(cells[loc, direction], loc, self.n, self.kappa)
        self._directions = _readonly(direction[np.argsort(loc, kind="stable")])

    @property
    def n(self) -> int:
        """Number of cells, ``rows * cols``."""
        return self.shape[0] * self.shape[1]

    def cell(self, row: int, col: int) -> int:
        """Index of the cell in grid row ``row`` and column ``col``."""
        row = check_int(row, "row", low=0, high=self.shape[0] - 1)
        col = check_int(col, "col", low=0, high=self.shape[1] - 1)
        return row * self.shape[1] + col

    def row_col(self, location: int) -> tuple[int, int]:
        """``(row, col)`` of cell ``location``."""
        r, c = divmod(_check_location(location, self.n), self.shape[1])
        return int(r), int(c)

    def macro_actions(self, location: int) -> np.ndarray:
        """The straight lines of ``kappa`` cells from ``location`` that stay inside the grid, an
        int array (m, kappa) with m <= 4, in the order of :data:`GRID_DIRECTIONS`."""
        return self._table.of(_check_location(location, self.n))

    def directions(self, location: int) -> np.ndarray:
        """Index into :data:`GRID_DIRECTIONS` of each row of ``macro_actions(location)``."""
        loc = _check_location(location, self.n)
        return self._directions[self._table.offsets[loc] : self._table.offsets[loc + 1]]

    @property
    def action_counts(self) -> np.ndarray:
        """Number of macro-actions at every cell, shape (n,)."""
        return self._table.counts

    def __repr__(self) -> str:
        return f"GridDomain(shape={self.shape}, kappa={self.kappa}, spacing={self.spacing})"


#: Relative tolerance of "equally spaced" (CSV coordinates such as 0.1 k are not exact floats).
SPACING_RTOL = 1e-6


# -- locations that form a full grid ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class GridLayout:
    """A full regular grid of locations: distinct sorted ``xs`` (nx,) and ``ys`` (ny,), their
    spacings, and each location's grid ``row`` (index into xs) and ``col`` (index into ys)."""

    xs: np.ndarray
    ys: np.ndarray
    spacing: tuple[float, float]
    row: np.ndarray
    col: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        return self.xs.size, self.ys.size

    @property
    def cell(self) -> np.ndarray:
        """Each location's cell ``row * ny + col`` of a ``GridDomain(shape)``."""
        return self.row * self.ys.size + self.col


def _axis(values: np.ndarray, name: str) -> tuple[np.ndarray, float] | str:
    """Distinct sorted values and their spacing, or why they are not equally spaced."""
    distinct = np.unique(values)
    if distinct.size == 1:
        return distinct, 1.0  # one line of cells: any positive spacing (no move along it)
    steps = np.diff(distinct)
    step = float(steps.mean())
    if not np.allclose(steps, step, rtol=SPACING_RTOL, atol=0.0):
        return (
            f"the {distinct.size} distinct {name} values are not equally spaced (steps from "
            f"{steps.min():g} to {steps.max():g})"
        )
    return distinct, step


def grid_layout(x, y) -> GridLayout | str:
    """The grid formed by the points ``(x[i], y[i])`` (distinct points), or a sentence saying why
    they do not form a full regular grid."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    axes = [_axis(x, "x"), _axis(y, "y")]
    for axis in axes:
        if isinstance(axis, str):
            return axis
    (xs, dx), (ys, dy) = axes
    if xs.size * ys.size != x.size:
        return (
            f"{xs.size} distinct x values and {ys.size} distinct y values make "
            f"{xs.size * ys.size} grid locations, but there are {x.size}"
        )
    # n distinct points inside an n-point grid: every combination appears exactly once
    return GridLayout(xs, ys, (dx, dy), np.searchsorted(xs, x), np.searchsorted(ys, y))


def enumerate_simple_paths(
    indptr: np.ndarray, indices: np.ndarray, n: int, kappa: int
) -> tuple[np.ndarray, np.ndarray]:
    """Every simple path of ``kappa`` moves from every node of a graph in CSR form.

    A path from node s is ``(v_1, ..., v_kappa)`` with an edge s -> v_1 and v_j -> v_{j+1}, and
    s, v_1, ..., v_kappa pairwise distinct. All starts advance together, one move per round:
    each partial path is repeated once per out-edge of its last node and the extensions that
    revisit a node are dropped, so the work is a few array operations per move.

    Returns:
        (starts, paths): ``starts`` (P,) the start of each path and ``paths`` (P, kappa), grouped
        by start in increasing order, and within a start in lexicographic order of the
        neighbour positions in ``indices`` (deterministic).
    """
    degree = np.diff(indptr)
    walks = np.arange(n, dtype=np.int64)[:, None]  # column 0 is the start
    for _ in range(kappa):
        last = walks[:, -1]
        reps = degree[last]
        parent = np.repeat(np.arange(walks.shape[0]), reps)
        # position of each extension among its parent's out-edges: 0..deg-1
        first = np.repeat(np.cumsum(reps) - reps, reps)
        rank = np.arange(parent.shape[0]) - first
        nxt = indices[indptr[last[parent]] + rank]
        prefix = walks[parent]
        fresh = (prefix != nxt[:, None]).all(axis=1)
        walks = np.column_stack([prefix[fresh], nxt[fresh]])
    return walks[:, 0].copy(), walks[:, 1:].copy()


class GraphDomain:
    """A graph whose macro-actions are simple paths of ``kappa`` moves.

    Args:
        inputs: (n, d) coordinates of the n nodes (row i is node i; the GP candidates).
        edges: (m, 2) integer node pairs ``(from, to)``; duplicates are merged and self-loops
            dropped (a simple path never uses one; the traffic files list 2 182 of them).
        kappa: macro-action length (moves, i.e. cells visited per step), >= 1.
        directed: when False every edge is also a move in the opposite direction.
        max_actions: keep at most this many macro-actions per node (drawn uniformly without
            replacement, once, from ``seed``); None keeps all of them.
        seed: int, Generator or None for the subsampling.

    Attributes:
        inputs, kappa: as in :class:`~frontierbo.macro.domain.MacroDomain`.
        edges: (m, 2) the distinct moves ``(from, to)``, sorted (both directions of an undirected
            edge).
        out_degree: (n,) number of distinct moves out of each node (self-loops not counted).
        full_action_counts: (n,) number of simple paths of ``kappa`` moves from each node before
            subsampling (the "available macro-actions" statistics of thesis Sections 4.4.2–4.4.3).
        action_counts: (n,) number of macro-actions each node offers after subsampling.
    """

    def __init__(
        self,
        inputs,
        edges,
        kappa: int,
        directed: bool = True,
        max_actions: int | None = 20,
        seed: SeedLike = 0,
    ):
        self.inputs = _readonly(check_matrix(inputs, "inputs").copy())
        n = self.inputs.shape[0]
        self.kappa = check_int(kappa, "kappa", low=1)
        if max_actions is not None:
            max_actions = check_int(max_actions, "max_actions", low=1)
        self.max_actions = max_actions
        self.directed = bool(directed)
        pairs = np.asarray(edges)
        if pairs.size == 0:
            pairs = np.zeros((0, 2), dtype=np.int64)
        if pairs.ndim != 2 or pairs.shape[1] != 2:
            raise ValueError(
                f"edges must be an (m, 2) array of node pairs, got shape {pairs.shape}"
            )
        if not np.issubdtype(pairs.dtype, np.integer) and (
            not np.all(np.isfinite(pairs)) or np.any(pairs != np.round(pairs))
        ):
            raise ValueError("edges must hold integer node indices")
        pairs = pairs.astype(np.int64)
        if pairs.size and (pairs.min() < 0 or pairs.max() >= n):
            raise ValueError(
                f"edges must hold node indices in [0, {n - 1}], got values from {pairs.min()} to "
                f"{pairs.max()}"
            )
        pairs = pairs[pairs[:, 0] != pairs[:, 1]]
        if not self.directed:
            pairs = np.concatenate([pairs, pairs[:, ::-1]])
        pairs = np.unique(pairs, axis=0)  # sorted by (from, to): the CSR order below
        self.edges = _readonly(pairs)
        indptr = np.concatenate([[0], np.cumsum(np.bincount(pairs[:, 0], minlength=n))])
        self._indptr = _readonly(indptr.astype(np.int64))
        self._indices = _readonly(pairs[:, 1].copy())
        self.out_degree = _readonly(np.diff(self._indptr))

        starts, paths = enumerate_simple_paths(self._indptr, self._indices, n, self.kappa)
        self.full_action_counts = _readonly(np.bincount(starts, minlength=n).astype(np.int64))
        if max_actions is not None and paths.shape[0]:
            keep = self._subsample(starts, max_actions, as_generator(seed))
            starts, paths = starts[keep], paths[keep]
        self._table = _ActionTable(paths, starts, n, self.kappa)

    @staticmethod
    def _subsample(starts: np.ndarray, limit: int, rng: np.random.Generator) -> np.ndarray:
        """Indices of a uniform sample of at most ``limit`` paths per start (sorted).

        Each path gets an independent uniform key; the ``limit`` smallest keys of a start are a
        uniform sample without replacement of its paths.
        """
        keys = rng.random(starts.shape[0])
        order = np.lexsort((keys, starts))  # by start, then key
        first = np.searchsorted(starts[order], starts[order], side="left")
        rank = np.arange(order.shape[0]) - first
        return np.sort(order[rank < limit])

    @property
    def n(self) -> int:
        """Number of nodes."""
        return self.inputs.shape[0]

    def neighbours(self, location: int) -> np.ndarray:
        """The nodes one move away from ``location`` (sorted)."""
        loc = _check_location(location, self.n)
        return self._indices[self._indptr[loc] : self._indptr[loc + 1]]

    def macro_actions(self, location: int) -> np.ndarray:
        """The (subsampled) simple paths of ``kappa`` moves from ``location``: (m, kappa) ints."""
        return self._table.of(_check_location(location, self.n))

    @property
    def action_counts(self) -> np.ndarray:
        """Number of macro-actions each node offers (after subsampling), shape (n,)."""
        return self._table.counts

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return (
            f"GraphDomain(n={self.n}, {kind}, moves={self.edges.shape[0]}, kappa={self.kappa}, "
            f"max_actions={self.max_actions})"
        )


def sample_start_locations(
    domain, size: int = 1, seed: SeedLike = None, min_actions: int = 1
) -> np.ndarray:
    """Start locations drawn uniformly, with replacement, among the cells of ``domain`` that
    offer at least ``min_actions`` macro-actions (thesis Section 4.4.2: starts with >= 1
    macro-action).

    Args:
        domain: a :class:`GridDomain`, :class:`GraphDomain` or any MacroDomain.
        size: number of starts, >= 1.
        seed: int, Generator or None.
        min_actions: >= 0; 0 allows every cell (the temperature experiment's uniform starts).

    Returns:
        int array (size,) of cell indices.
    """
    size = check_int(size, "size", low=1)
    min_actions = check_int(min_actions, "min_actions", low=0)
    rng = as_generator(seed)
    counts = getattr(domain, "action_counts", None)
    if counts is None:
        counts = np.array([domain.macro_actions(i).shape[0] for i in range(domain.n)])
    eligible = np.flatnonzero(np.asarray(counts) >= min_actions)
    if eligible.size == 0:
        raise ValueError(
            f"min_actions must be at most {int(np.max(counts))} (the most macro-actions any cell "
            f"of this domain offers), got {min_actions}"
        )
    return eligible[rng.integers(0, eligible.size, size=size)]
