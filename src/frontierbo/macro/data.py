"""The phenomena of the ε-Macro-BO experiments (thesis Sections 4.4.1–4.4.3).

Each loader returns a :class:`MacroDataset`: the domain, the value observed at every cell, the GP
hyperparameters the planners use, and where the values come from (``source``):

* :func:`plankton` (E1, E4–E6): ``"synthetic"``, a seeded GP draw on a 50 x 50 grid, exactly the
  thesis's protocol.
* :func:`traffic` (E2): ``"real"``, the Singapore taxi-demand grid of slot 18 read from the
  shared data folder (reference data, never committed); when those files are absent, or on
  request, ``"substitute"``, a seeded road-like graph with GP-drawn values
  (:func:`traffic_substitute`).
* :func:`temperature` (E3): ``"substitute"``, the real corridor graph of the Intel Berkeley lab
  with GP-drawn values (the lab's readings are not available offline).

Units: plankton in km, traffic in grid cells (docs/decisions.md#macro-bo-traffic-in-grid-units),
temperature in metres; every length-scale is in the units of its domain's ``inputs``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

import numpy as np

from frontierbo._validation import SeedLike, as_generator, check_int, check_probability
from frontierbo.core.kernels import SquaredExponential
from frontierbo.core.sampling import sample_kronecker, sample_se_on_grid
from frontierbo.data import KNOWN_SHA256, data_available, resolve_data_path, verify_sha256
from frontierbo.macro.domains import GraphDomain, GridDomain, sample_start_locations

SOURCES = ("real", "substitute", "synthetic")

TRAFFIC_FILES = ("macro/traffic/slot18/tlog18.dom", "macro/traffic/slot18/tlog18.cfg")
TEMPERATURE_FILES = (
    "macro/temperature/all_neighbours.txt",
    "macro/temperature/mote_locs.txt",
    "macro/temperature/fake_coordinates.txt",
)

#: Traffic grid of the taxi data: 50 x 100 regions, cell id (1-based) = 100 r + c + 1.
TRAFFIC_SHAPE = (50, 100)
#: The slot-18 accessible regions (the size of the substitute's road network).
TRAFFIC_ACCESSIBLE = 2506


@dataclass(frozen=True)
class GPHyperparameters:
    """A constant prior mean and an ARD squared-exponential kernel plus Gaussian noise.

    ``lengthscale`` has one entry per input column, in the units of the domain's ``inputs``.
    """

    prior_mean: float
    lengthscale: tuple[float, ...]
    signal_variance: float
    noise_variance: float

    def kernel(self) -> SquaredExponential:
        """The SE kernel ``sigma_y^2 exp(-0.5 sum_j (x_j - x'_j)^2 / l_j^2)`` (thesis Chapter 3)."""
        return SquaredExponential(np.array(self.lengthscale, dtype=float), self.signal_variance)

    @property
    def sigma_y(self) -> float:
        """Signal standard deviation, the unit of the differences the thesis quotes."""
        return math.sqrt(self.signal_variance)


@dataclass(frozen=True, eq=False)
class MacroDataset:
    """A phenomenon on a macro-action domain.

    Attributes:
        name: ``"plankton"``, ``"traffic"`` or ``"temperature"``.
        domain: the :class:`GridDomain` or :class:`GraphDomain` (its ``inputs`` are the cells).
        values: (n,) read-only, the measurement an agent gets at each cell (noise included,
            drawn once per cell: executing a macro-action adds none,
            docs/decisions.md#macro-bo-no-noise-added-at-execution).
        hyperparameters: the GP the planners use.
        source: ``"real"`` (measured values), ``"substitute"`` (values or graph generated in
            place of unavailable data) or ``"synthetic"`` (generated, as in the thesis).
        start: the fixed start cell (plankton's centre), or None when starts are drawn.
        start_min_actions: drawn starts need at least this many macro-actions (traffic 1,
            temperature 0: uniform over all nodes).
        meta: read-only details (files and checksums, generator settings, graph statistics).
    """

    name: str
    domain: GridDomain | GraphDomain
    values: np.ndarray
    hyperparameters: GPHyperparameters
    source: str
    start: int | None = None
    start_min_actions: int = 1
    meta: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self):
        if self.source not in SOURCES:
            raise ValueError(f"source must be one of {SOURCES}, got {self.source!r}")
        values = np.array(self.values, dtype=float)
        if values.shape != (self.domain.n,):
            raise ValueError(f"values must have shape ({self.domain.n},), got {values.shape}")
        values.flags.writeable = False
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "meta", MappingProxyType(dict(self.meta)))

    @property
    def empirical_mean(self) -> float:
        """Mean of the values: the normaliser of metric M1
        (docs/decisions.md#macro-bo-m1-normalised-by-the-dataset-mean)."""
        return float(self.values.mean())

    @property
    def max_value(self) -> float:
        """Largest value: the reference of the simple regret M2."""
        return float(self.values.max())

    def starts(self, size: int = 1, seed: SeedLike = None) -> np.ndarray:
        """``size`` start cells: the fixed start repeated, or uniform draws among the cells with
        at least ``start_min_actions`` macro-actions (from ``seed``)."""
        size = check_int(size, "size", low=1)
        if self.start is not None:
            return np.full(size, self.start, dtype=np.int64)
        return sample_start_locations(self.domain, size, seed, self.start_min_actions)


# -- E1: plankton ---------------------------------------------------------------------------------
#: Thesis Section 4.4.1: 5 km x 5 km, 50 x 50 cells of 0.1 km, l = 0.5 km, sigma_y^2 = 1,
#: sigma_n^2 = 1e-5.
PLANKTON_HYPERPARAMETERS = GPHyperparameters(
    prior_mean=0.0, lengthscale=(0.5, 0.5), signal_variance=1.0, noise_variance=1e-5
)


def plankton(seed: SeedLike = 0, kappa: int = 4, grid_size: int = 50) -> MacroDataset:
    """A simulated plankton density field (E1): a GP draw plus per-cell noise on a grid.

    The grid has ``grid_size`` x ``grid_size`` cells of 0.1 km; cell (r, c) sits at
    ``(-0.5 + 0.1 r, -0.5 + 0.1 c)`` km, the reference code's frame (its units x 2 km), so its
    buoy at (0, 0) is cell (5, 5) and its start (1.0, 1.0) units = (2, 2) km is cell (25, 25),
    the fixed start. Values are ``f + eps`` with ``f`` the GP draw (Kronecker-factored, exact)
    and ``eps ~ N(0, sigma_n^2)`` once per cell, both from ``seed``.

    Args:
        seed: int, Generator or None; one realization per seed.
        kappa: macro-action length (4 in E1, 1 in E4, 2 in E5).
        grid_size: cells per side, >= 2 (50 in the thesis).
    """
    grid_size = check_int(grid_size, "grid_size", low=2)
    hyp = PLANKTON_HYPERPARAMETERS
    domain = GridDomain((grid_size, grid_size), kappa, spacing=0.1, origin=(-0.5, -0.5))
    rng = as_generator(seed)
    axis = -0.5 + 0.1 * np.arange(grid_size)
    f = sample_se_on_grid([axis, axis], hyp.kernel(), seed=rng)[0]
    values = hyp.prior_mean + f + math.sqrt(hyp.noise_variance) * rng.standard_normal(f.size)
    centre = min(25, grid_size - 1)
    return MacroDataset(
        name="plankton",
        domain=domain,
        values=values,
        hyperparameters=hyp,
        source="synthetic",
        start=domain.cell(centre, centre),
        meta={"grid_size": grid_size, "units": "km"},
    )


# -- E2: traffic ----------------------------------------------------------------------------------
def _traffic_paths(directory) -> tuple[Path, Path]:
    if directory is None:
        return tuple(resolve_data_path(rel) for rel in TRAFFIC_FILES)
    folder = Path(directory).expanduser()
    return tuple(resolve_data_path(rel, folder / Path(rel).name) for rel in TRAFFIC_FILES)


def _read_dom(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Parse a ``.dom`` file: (cells (5000, 2) ints, values (5000,), edges (m, 2) cell ids)."""
    cells, values, src, dst = [], [], [], []
    with open(path) as fh:
        for number, line in enumerate(fh, start=1):
            parts = line.split()
            if not parts:
                continue
            n_out = int(float(parts[4])) if len(parts) >= 5 else -1
            if n_out < 0 or len(parts) != 5 + n_out:
                raise ValueError(
                    f"{path}: line {number} must read 'r c value supply n k_1 .. k_n', got {line!r}"
                )
            cells.append((int(float(parts[0])), int(float(parts[1]))))
            values.append(float(parts[2]))
            ids = [int(float(k)) - 1 for k in parts[5:]]
            src.extend([len(cells) - 1] * n_out)
            dst.extend(ids)
    cells = np.array(cells, dtype=np.int64)
    expected = np.column_stack(np.divmod(np.arange(cells.shape[0]), TRAFFIC_SHAPE[1]))
    if cells.shape[0] != TRAFFIC_SHAPE[0] * TRAFFIC_SHAPE[1] or np.any(cells != expected):
        raise ValueError(
            f"{path}: expected 5000 cells (r, c) in row-major order of a 50 x 100 grid"
        )
    return cells, np.array(values), np.column_stack([src, dst]).astype(np.int64)


def _read_cfg_hyperparameters(path: Path) -> GPHyperparameters:
    for line in Path(path).read_text().splitlines():
        if line.startswith("hyp:"):
            noise, ell1, ell2, signal, mean = (float(x) for x in line.split()[1:6])
            return GPHyperparameters(mean, (ell1, ell2), signal, noise)
    raise ValueError(f"{path}: no 'hyp: noise l1 l2 signal mean' line")


def traffic(
    seed: SeedLike = 0,
    kappa: int = 5,
    max_actions: int | None = 20,
    directory=None,
    substitute: bool | None = None,
    verify: bool = True,
) -> MacroDataset:
    """The taxi mobility-demand phenomenon of E2 (slot 18), or its substitute.

    Reads ``tlog18.dom`` and ``tlog18.cfg`` (``shared/data/macro/traffic/slot18``; reference
    data without a licence, never copied into this repository). Nodes are the 2 506 regions
    reachable by road (value > -2), in row-major order, at grid coordinates (r, c); values are
    log(pickups) with the file's -1 (zero pickups) read as 0, as the reference code does. Edges
    are the directed neighbour lists (self-loops dropped). Hyperparameters are the cfg's, in
    grid units (docs/decisions.md#macro-bo-traffic-in-grid-units: l = 0.5249 along the 50-row axis,
    0.5687 along the 100-column axis).

    Args:
        seed: int, Generator or None: the per-location subsample of macro-actions (real data),
            or everything (substitute).
        kappa: moves per macro-action (5 in E2).
        max_actions: macro-actions kept per region (20; None keeps all, the "all" variant).
        directory: a folder holding the two files; default: the shared data root.
        substitute: None uses the files when present and :func:`traffic_substitute`
            otherwise; True always uses the substitute; False requires the files.
        verify: check the files' sha256 (turn off for your own files of the same format).

    Raises:
        FileNotFoundError: the files are missing and ``substitute`` is False (or a
            ``directory`` is given without them).
        ValueError: a checksum or the file format does not match.
    """
    if substitute is None:
        substitute = directory is None and not all(data_available(rel) for rel in TRAFFIC_FILES)
    if substitute:
        return traffic_substitute(seed, kappa=kappa, max_actions=max_actions)
    dom_path, cfg_path = _traffic_paths(directory)
    checks = {}
    for rel, path in zip(TRAFFIC_FILES, (dom_path, cfg_path), strict=True):
        checks[rel] = verify_sha256(path, KNOWN_SHA256[rel]) if verify else "not verified"
    cells, raw, listed = _read_dom(dom_path)
    accessible = raw > -2
    node = np.full(raw.shape[0], -1, dtype=np.int64)
    node[accessible] = np.arange(int(accessible.sum()))
    listed_degree = np.bincount(listed[:, 0], minlength=raw.shape[0])
    # An edge leaving the road network would make a cell with no value a path cell.
    if np.any(~accessible[listed[:, 0]]) or np.any(~accessible[listed[:, 1]]):
        raise ValueError(f"{dom_path}: a neighbour list links an inaccessible region")
    domain = GraphDomain(
        cells[accessible].astype(float),
        node[listed],
        kappa,
        directed=True,
        max_actions=max_actions,
        seed=seed,
    )
    return MacroDataset(
        name="traffic",
        domain=domain,
        values=np.where(raw[accessible] == -1.0, 0.0, raw[accessible]),
        hyperparameters=_read_cfg_hyperparameters(cfg_path),
        source="real",
        start_min_actions=1,
        meta={
            "slot": 18,
            "files": {
                rel: str(p) for rel, p in zip(TRAFFIC_FILES, (dom_path, cfg_path), strict=True)
            },
            "sha256": checks,
            "grid_cells": cells[accessible],
            "listed_out_degree_max": int(listed_degree.max()),
            "units": "grid cells",
        },
    )


#: E2's hyperparameters (tlog18.cfg), used by the substitute without reading the file.
TRAFFIC_HYPERPARAMETERS = GPHyperparameters(
    prior_mean=1.5673, lengthscale=(0.5249, 0.5687), signal_variance=0.7486, noise_variance=0.0111
)


def traffic_substitute(
    seed: SeedLike = 0,
    kappa: int = 5,
    max_actions: int | None = 20,
    n_accessible: int = TRAFFIC_ACCESSIBLE,
    edge_probability: float = 0.44,
    district_lengthscale: float = 6.0,
) -> MacroDataset:
    """A road-like stand-in for the traffic data
    (docs/decisions.md#macro-bo-traffic-substitute-graph), fully generated from ``seed``.

    On the same 50 x 100 grid: the ``n_accessible`` cells where a smooth GP field (length-scale
    ``district_lengthscale`` cells) is highest form the road network's districts; every move to
    one of the 8 neighbouring accessible cells is a road with probability ``edge_probability``
    (directed, independently). The defaults were tuned to the real slot-18 graph (2 506 regions,
    mean out-degree 3.27, 178.0 length-5 paths per region on average): seeds 0..4 give mean
    out-degree 3.18-3.29 and 168-192 paths per region on average (max 797-968; real 1 193).
    Values are a GP draw with E2's hyperparameters (:data:`TRAFFIC_HYPERPARAMETERS`,
    grid units) plus N(0, sigma_n^2) per cell; they follow the GP prior (mean 1.5673), not the
    real log-demand's skewed distribution (mean 0.74, many zeros).
    """
    n_cells = TRAFFIC_SHAPE[0] * TRAFFIC_SHAPE[1]
    n_accessible = check_int(n_accessible, "n_accessible", low=2, high=n_cells)
    edge_probability = check_probability(edge_probability, "edge_probability")
    layout_rng, value_rng, action_rng = as_generator(seed).spawn(3)
    rows, cols = TRAFFIC_SHAPE
    axes = [np.arange(rows, dtype=float), np.arange(cols, dtype=float)]
    district = SquaredExponential(district_lengthscale, 1.0)  # checks the length-scale
    field_ = sample_se_on_grid(axes, district, seed=layout_rng)[0]
    accessible = np.zeros(n_cells, dtype=bool)
    accessible[np.argsort(-field_, kind="stable")[:n_accessible]] = True
    node = np.full(n_cells, -1, dtype=np.int64)
    node[accessible] = np.arange(n_accessible)
    r, c = np.divmod(np.arange(n_cells), cols)
    src, dst = [], []
    for dr in (-1, 0, 1):
        for dc in (-1, 0, 1):
            if dr == dc == 0:
                continue
            rr, cc = r + dr, c + dc
            inside = accessible & (rr >= 0) & (rr < rows) & (cc >= 0) & (cc < cols)
            target = np.where(inside, rr * cols + cc, 0)
            ok = inside & accessible[target]
            src.append(np.flatnonzero(ok))
            dst.append(target[ok])
    src, dst = np.concatenate(src), np.concatenate(dst)
    road = layout_rng.random(src.size) < edge_probability
    domain = GraphDomain(
        np.column_stack([r, c])[accessible].astype(float),
        np.column_stack([node[src[road]], node[dst[road]]]),
        kappa,
        directed=True,
        max_actions=max_actions,
        seed=action_rng,
    )
    hyp = TRAFFIC_HYPERPARAMETERS
    f = sample_se_on_grid(axes, hyp.kernel(), seed=value_rng)[0][accessible]
    noise = math.sqrt(hyp.noise_variance) * value_rng.standard_normal(n_accessible)
    return MacroDataset(
        name="traffic",
        domain=domain,
        values=hyp.prior_mean + f + noise,
        hyperparameters=hyp,
        source="substitute",
        start_min_actions=1,
        meta={
            "generator": "traffic_substitute",
            "n_accessible": n_accessible,
            "edge_probability": edge_probability,
            "district_lengthscale": float(district_lengthscale),
            "units": "grid cells",
        },
    )


# -- E3: temperature ------------------------------------------------------------------------------
#: The reference code's slot-16 fit to the 41 Intel-lab readings (metres; thesis Section 4.4.3).
TEMPERATURE_HYPERPARAMETERS = GPHyperparameters(
    prior_mean=17.851283,
    lengthscale=(4.005779, 11.381141),
    signal_variance=0.596355,
    noise_variance=0.059732,
)


def _read_rows(path: Path, skip_header: bool = False) -> list[list[float]]:
    lines = Path(path).read_text().splitlines()[1 if skip_header else 0 :]
    try:
        return [[float(x) for x in line.split()] for line in lines if line.strip()]
    except ValueError as err:
        raise ValueError(f"{path}: every line must hold numbers ({err})") from None


def temperature(
    seed: SeedLike = 0,
    kappa: int = 5,
    max_actions: int | None = 20,
    directory=None,
    verify: bool = True,
    actions_seed: SeedLike = None,
) -> MacroDataset:
    """The Intel Berkeley lab corridor graph of E3 with GP-drawn temperatures.

    The graph is real: the 54 motes (``mote_locs.txt``, metres) and the 91 midpoints of the
    hand-made corridor edges (``fake_coordinates.txt``), node ``i`` = id ``i + 1``, with the
    undirected mote <-> midpoint adjacency of ``all_neighbours.txt`` (145 nodes, degree <= 6).
    The thesis's values are not: they were 41 Intel-lab readings at epoch 88590 plus GP
    predictions at the other 104 nodes, and neither the lab's ``data.txt`` nor the reference
    code's derived file is available offline. The values here are therefore one GP prior draw
    at all 145 nodes with the reference code's fitted hyperparameters
    (:data:`TEMPERATURE_HYPERPARAMETERS`), plus N(0, sigma_n^2) per node, the noise the
    reference code added to its predictions; ``source`` is ``"substitute"``.

    Args:
        seed: int, Generator or None: the values and the per-node macro-action subsample.
        actions_seed: when given, the subsample is drawn from it instead (so that runs share
            one field and each draws its own candidate macro-actions, as in E3).
        kappa: moves per macro-action (5 in E3).
        max_actions: macro-actions kept per node (20; None keeps all).
        directory: a folder holding the three files; default: the shared data root.
        verify: check the files' sha256.

    Raises:
        FileNotFoundError: a file is missing (the message says where it was searched).
        ValueError: a checksum or the file format does not match.
    """
    if directory is None:
        paths = [resolve_data_path(rel) for rel in TEMPERATURE_FILES]
    else:
        folder = Path(directory).expanduser()
        paths = [resolve_data_path(rel, folder / Path(rel).name) for rel in TEMPERATURE_FILES]
    checks = {}
    for rel, path in zip(TEMPERATURE_FILES, paths, strict=True):
        checks[rel] = verify_sha256(path, KNOWN_SHA256[rel]) if verify else "not verified"
    adjacency = _read_rows(paths[0])
    n = len(adjacency)
    inputs = np.full((n, 2), np.nan)
    for row in _read_rows(paths[1], skip_header=True) + _read_rows(paths[2]):
        node = int(row[0]) - 1
        if not 0 <= node < n or len(row) != 3:
            raise ValueError(f"node coordinates must read 'id x y' with id in [1, {n}]: {row}")
        inputs[node] = row[1:]
    if np.isnan(inputs).any():
        missing = (np.flatnonzero(np.isnan(inputs[:, 0])) + 1).tolist()
        raise ValueError(f"the coordinate files give no position for node id(s) {missing}")
    edges = np.array([(int(r[0]) - 1, int(k) - 1) for r in adjacency for k in r[1:]], dtype=int)
    values_rng, action_rng = as_generator(seed).spawn(2)
    if actions_seed is not None:
        action_rng = as_generator(actions_seed)
    domain = GraphDomain(
        inputs, edges, kappa, directed=False, max_actions=max_actions, seed=action_rng
    )
    hyp = TEMPERATURE_HYPERPARAMETERS
    f = sample_kronecker([hyp.kernel()(inputs)], seed=values_rng)[0]
    noise = math.sqrt(hyp.noise_variance) * values_rng.standard_normal(n)
    return MacroDataset(
        name="temperature",
        domain=domain,
        values=hyp.prior_mean + f + noise,
        hyperparameters=hyp,
        source="substitute",
        start_min_actions=0,
        meta={
            "files": {rel: str(p) for rel, p in zip(TEMPERATURE_FILES, paths, strict=True)},
            "sha256": checks,
            "values": "GP prior draw (Intel-lab readings unavailable offline)",
            "units": "m",
        },
    )
