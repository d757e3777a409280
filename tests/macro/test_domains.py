"""Grid and graph macro-action domains (macro/domains.py; thesis Sections 4.1, 4.4)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from frontierbo.macro.domain import MacroDomain
from frontierbo.macro.domains import (
    GRID_DIRECTIONS,
    GraphDomain,
    GridDomain,
    enumerate_simple_paths,
    sample_start_locations,
)


# -- grid -------------------------------------------------------------------------------------
def test_grid_cells_are_row_major_with_coordinates_origin_plus_spacing():
    grid = GridDomain((3, 4), kappa=1, spacing=(0.5, 2.0), origin=(1.0, -1.0))
    assert grid.n == 12 and grid.inputs.shape == (12, 2)
    assert grid.cell(2, 1) == 9 and grid.row_col(9) == (2, 1)
    np.testing.assert_allclose(grid.inputs[9], [1.0 + 2 * 0.5, -1.0 + 1 * 2.0])
    members = {"inputs", "kappa", "n", "macro_actions"}
    assert members <= set(dir(MacroDomain)) | set(MacroDomain.__annotations__)
    assert all(hasattr(grid, name) for name in members)


def test_grid_action_counts_at_corners_edges_and_interior():
    grid = GridDomain((10, 10), kappa=4)
    assert grid.macro_actions(grid.cell(0, 0)).shape == (2, 4)  # down, right
    assert grid.macro_actions(grid.cell(9, 9)).shape == (2, 4)  # up, left
    assert grid.macro_actions(grid.cell(0, 5)).shape == (3, 4)  # edge: no "up"
    assert grid.macro_actions(grid.cell(5, 5)).shape == (4, 4)
    # cells 1..3 from a border cannot go 4 cells towards it; cell 4 can
    assert grid.macro_actions(grid.cell(3, 5)).shape == (3, 4)
    assert grid.macro_actions(grid.cell(4, 5)).shape == (4, 4)


def test_grid_counts_match_the_boundary_formula_everywhere():
    rows, cols, kappa = 7, 9, 3
    grid = GridDomain((rows, cols), kappa=kappa)
    r, c = np.divmod(np.arange(rows * cols), cols)
    inside = [r >= kappa, r <= rows - 1 - kappa, c >= kappa, c <= cols - 1 - kappa]
    expected = np.sum(inside, axis=0)
    np.testing.assert_array_equal(grid.action_counts, expected)
    assert sum(grid.macro_actions(i).shape[0] for i in range(grid.n)) == expected.sum()


def test_grid_actions_are_straight_lines_of_kappa_cells_starting_next_to_the_location():
    grid = GridDomain((8, 6), kappa=3)
    for loc in range(grid.n):
        r0, c0 = grid.row_col(loc)
        actions = grid.macro_actions(loc)
        for action, d in zip(actions, grid.directions(loc), strict=True):
            dr, dc = GRID_DIRECTIONS[d]
            cells = [grid.row_col(int(i)) for i in action]
            assert cells == [(r0 + k * dr, c0 + k * dc) for k in range(1, 4)]
        assert len(set(grid.directions(loc).tolist())) == actions.shape[0]


def test_grid_too_small_for_kappa_has_dead_ends_and_arrays_are_read_only():
    grid = GridDomain((3, 3), kappa=3)
    assert grid.macro_actions(4).shape == (0, 3)
    assert grid.action_counts.sum() == 0
    actions = GridDomain((5, 5), kappa=2).macro_actions(12)
    with pytest.raises(ValueError):
        actions[0, 0] = 0


def test_grid_checks_its_arguments():
    with pytest.raises(ValueError, match=r"kappa must be an integer in \[1, inf\]"):
        GridDomain((4, 4), kappa=0)
    with pytest.raises(ValueError, match="shape must be a pair"):
        GridDomain((4,), kappa=1)
    with pytest.raises(ValueError, match="spacing must be a positive"):
        GridDomain((4, 4), kappa=1, spacing=-1.0)
    with pytest.raises(ValueError, match=r"location must be an integer in \[0, 15\]"):
        GridDomain((4, 4), kappa=1).macro_actions(16)


# -- graph ------------------------------------------------------------------------------------
def _reference_paths(n, edges, kappa, directed):
    """All simple paths of kappa moves by depth-first search (the slow, obvious definition)."""
    moves = {i: set() for i in range(n)}
    for a, b in edges:
        if a != b:
            moves[a].add(b)
            if not directed:
                moves[b].add(a)
    found = {i: set() for i in range(n)}

    def extend(start, path):
        if len(path) == kappa + 1:
            found[start].add(tuple(path[1:]))
            return
        for nxt in moves[path[-1]]:
            if nxt not in path:
                extend(start, [*path, nxt])

    for s in range(n):
        extend(s, [s])
    return found


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("kappa", [1, 2, 4])
def test_graph_paths_equal_a_depth_first_reference(directed, kappa):
    rng = np.random.default_rng(5)
    n = 12
    edges = rng.integers(0, n, size=(30, 2))  # includes self-loops and duplicates
    graph = GraphDomain(np.arange(n)[:, None], edges, kappa, directed=directed, max_actions=None)
    reference = _reference_paths(n, edges.tolist(), kappa, directed)
    for s in range(n):
        got = graph.macro_actions(s)
        assert got.shape[1] == kappa
        assert {tuple(p) for p in got.tolist()} == reference[s]
        assert got.shape[0] == len(reference[s]) == graph.full_action_counts[s]


def test_graph_paths_are_simple_and_follow_edges():
    rng = np.random.default_rng(2)
    n = 40
    edges = rng.integers(0, n, size=(140, 2))
    graph = GraphDomain(rng.random((n, 2)), edges, 5, directed=True, max_actions=None)
    moves = {tuple(e) for e in graph.edges.tolist()}
    assert graph.action_counts.sum() > 0
    for s in range(n):
        for path in graph.macro_actions(s).tolist():
            walk = [s, *path]
            assert len(set(walk)) == 6  # no node repeated, the start included
            assert all((a, b) in moves for a, b in itertools.pairwise(walk))


def test_undirected_graph_moves_both_ways_and_dead_ends_are_empty():
    graph = GraphDomain(np.zeros((4, 1)), [[0, 1], [1, 2]], 1, directed=False)
    np.testing.assert_array_equal(graph.neighbours(1), [0, 2])
    assert graph.macro_actions(3).shape == (0, 1)
    directed = GraphDomain(np.zeros((4, 1)), [[0, 1], [1, 2]], 1, directed=True)
    assert directed.macro_actions(2).shape == (0, 1)
    np.testing.assert_array_equal(directed.macro_actions(0), [[1]])


def _dense_graph(seed=0):
    rng = np.random.default_rng(seed)
    n = 30
    edges = rng.integers(0, n, size=(150, 2))
    return n, rng.random((n, 2)), edges


def test_graph_subsample_keeps_at_most_max_actions_from_the_full_set():
    n, X, edges = _dense_graph()
    full = GraphDomain(X, edges, 4, max_actions=None)
    sub = GraphDomain(X, edges, 4, max_actions=20, seed=3)
    assert full.full_action_counts.max() > 20  # the cap binds somewhere
    np.testing.assert_array_equal(sub.full_action_counts, full.full_action_counts)
    np.testing.assert_array_equal(sub.action_counts, np.minimum(full.action_counts, 20))
    for s in range(n):
        chosen = {tuple(p) for p in sub.macro_actions(s).tolist()}
        assert len(chosen) == sub.macro_actions(s).shape[0]  # without replacement
        assert chosen <= {tuple(p) for p in full.macro_actions(s).tolist()}


def test_graph_subsample_is_fixed_by_the_seed():
    _, X, edges = _dense_graph()
    a = GraphDomain(X, edges, 4, max_actions=20, seed=3)
    b = GraphDomain(X, edges, 4, max_actions=20, seed=3)
    c = GraphDomain(X, edges, 4, max_actions=20, seed=4)
    busy = int(np.argmax(a.full_action_counts))
    for s in range(a.n):
        np.testing.assert_array_equal(a.macro_actions(s), b.macro_actions(s))
        np.testing.assert_array_equal(a.macro_actions(s), a.macro_actions(s))  # fixed at build
    assert not np.array_equal(a.macro_actions(busy), c.macro_actions(busy))


def test_graph_subsample_is_uniform_over_the_paths_of_a_node():
    _, X, edges = _dense_graph()
    full = GraphDomain(X, edges, 3, max_actions=None)
    node = int(np.argmax(full.full_action_counts))
    paths = [tuple(p) for p in full.macro_actions(node).tolist()]
    m, keep, runs = len(paths), 5, 400
    assert m > 2 * keep
    hits = dict.fromkeys(paths, 0)
    for seed in range(runs):
        sub = GraphDomain(X, edges, 3, max_actions=keep, seed=seed)
        for p in sub.macro_actions(node).tolist():
            hits[tuple(p)] += 1
    p_in = keep / m
    se = np.sqrt(p_in * (1 - p_in) / runs)
    freq = np.array(list(hits.values())) / runs
    assert np.max(np.abs(freq - p_in)) < 4.5 * se


def test_enumeration_on_a_traffic_sized_graph_matches_the_degree_recursion_for_kappa_1():
    rng = np.random.default_rng(1)
    n = 2500
    edges = rng.integers(0, n, size=(8000, 2))
    graph = GraphDomain(rng.random((n, 2)), edges, 1, max_actions=None)
    np.testing.assert_array_equal(graph.full_action_counts, graph.out_degree)
    indptr = np.concatenate([[0], np.cumsum(graph.out_degree)])
    starts, paths = enumerate_simple_paths(indptr, graph.edges[:, 1], n, 2)
    # 2 moves: every out-neighbour's out-neighbours, minus the walks that come back to the start
    back = sum(int(s in graph.neighbours(int(t))) for s in range(n) for t in graph.neighbours(s))
    two_step = sum(int(graph.out_degree[int(t)]) for s in range(n) for t in graph.neighbours(s))
    assert paths.shape == (two_step - back, 2)
    assert np.all(np.diff(starts) >= 0)


def test_graph_checks_its_arguments():
    X = np.zeros((3, 1))
    with pytest.raises(ValueError, match=r"edges must hold node indices in \[0, 2\]"):
        GraphDomain(X, [[0, 3]], 1)
    with pytest.raises(ValueError, match=r"edges must be an \(m, 2\) array"):
        GraphDomain(X, [[0, 1, 2]], 1)
    with pytest.raises(ValueError, match=r"max_actions must be an integer in \[1, inf\]"):
        GraphDomain(X, [[0, 1]], 1, max_actions=0)
    with pytest.raises(ValueError, match="integer node indices"):
        GraphDomain(X, [[0.5, 1.0]], 1)


# -- start locations --------------------------------------------------------------------------
def test_start_locations_are_seeded_and_only_where_enough_actions_exist():
    grid = GridDomain((10, 10), kappa=4)
    starts = sample_start_locations(grid, 200, seed=9, min_actions=4)
    assert np.all(grid.action_counts[starts] >= 4)
    np.testing.assert_array_equal(starts, sample_start_locations(grid, 200, 9, min_actions=4))
    assert len(set(starts.tolist())) > 1
    graph = GraphDomain(np.zeros((4, 1)), [[0, 1], [1, 2]], 1)
    assert set(sample_start_locations(graph, 50, seed=0).tolist()) == {0, 1}
    assert set(sample_start_locations(graph, 200, seed=0, min_actions=0).tolist()) == {0, 1, 2, 3}
    with pytest.raises(ValueError, match="min_actions must be at most 1"):
        sample_start_locations(graph, 1, seed=0, min_actions=2)
