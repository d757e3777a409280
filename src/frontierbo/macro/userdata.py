"""``frontierbo run macro-bo``: nonmyopic BO over macro-actions on your own field.

The CSV file (header row, comma-separated, UTF-8) holds one row per **location** of the
phenomenon: its coordinates (columns ``x`` and ``y``) and the measurement there (``value``).
The table is replayed, as the thesis did with its real traffic and temperature data (E2, E3):
an agent starts at one location, executes macro-actions of ``kappa`` moves, and observes the
table's values along them (no noise added, docs/decisions.md#macro-bo-no-noise-added-at-execution).
Every value is known, so the regret is exact. The GP hyperparameters are learned before every plan
from the measurements so far only (:class:`MapRefit`, as a study learns them), so the run is what an
agent in a real field could do. ``prefit_on_table=True`` (``--prefit-on-table``) fits them instead
by maximum likelihood on the whole table, as the thesis fitted its datasets' hyperparameters once, a
priori (thesis Section 4.4): that fit sees every value, including those the agent has not visited
yet. Give ``hyperparameters`` to plan with a GP of your choice.

Where the agent may move:

* without an edge list, the locations must form a full regular grid: every combination of the
  distinct x values and the distinct y values appears exactly once, and each set is equally
  spaced. Grid row ``r`` is the r-th smallest x, column ``c`` the c-th smallest y (so a cell's
  domain coordinates are its ``(x, y)`` and the length-scales are ``(l_x, l_y)``). A
  macro-action is a straight line of ``kappa`` cells along one of the 4 axis directions, kept
  when it stays inside the grid (the AUV dives of E1; :class:`~frontierbo.macro.domains.GridDomain`);
* with an edge list (``--edges``: a CSV with a header and two columns of 0-based data-row indices
  of the field, e.g. ``from,to``; undirected unless ``directed``), a macro-action is a simple path
  of ``kappa`` moves along the edges, at most ``max_actions`` of them per location drawn once
  from the seed (E2, E3; :class:`~frontierbo.macro.domains.GraphDomain`).

Methods: ``eps-macro-bo`` (A1, exhaustive ε-Macro-BO with ``N`` samples per
macro-action), ``anytime`` (A3, anytime ε-Macro-BO, ``N`` samples and 300 tree expansions per
iteration), ``nonmyopic-gp-ucb`` (A2, the most-likely-observation planner) and ``db-gp-ucb``
(B1, myopic: horizon 1). ``beta`` weighs the exploration bonus of (4.2).

Row numbers are 0-based data-row indices (the header is not a row); metrics are M1 (average
output minus the table's mean) and M2 (simple regret against the table's maximum) at
``n = 0, kappa, ..., budget`` (thesis Section 4.4).
"""

from __future__ import annotations

import os

import numpy as np

from frontierbo._validation import check_int, check_real
from frontierbo.core.fit import LogNormalPriors, fit_hyperparameters
from frontierbo.core.gp import FiniteDomainGP
from frontierbo.io import (
    RESULT_FILENAME,
    check_magnitude,
    check_out_dir,
    column,
    data_path,
    finite_or_null,
    fmt_number,
    read_table,
    write_json_atomic,
)
from frontierbo.macro.data import GPHyperparameters, MacroDataset
from frontierbo.macro.domains import GraphDomain, GridDomain, GridLayout, grid_layout

__all__ = [
    "METHODS",
    "PLOT_FILENAME",
    "RESULT_FILENAME",
    "GridLayout",
    "fit_field_hyperparameters",
    "format_macro_result",
    "grid_layout",
    "load_field",
    "run_macro_on_csv",
]

#: ``--method`` choices and their labels.
METHODS = {
    "eps-macro-bo": "ε-Macro-BO (A1)",
    "anytime": "anytime ε-Macro-BO (A3)",
    "nonmyopic-gp-ucb": "nonmyopic GP-UCB (A2)",
    "db-gp-ucb": "DB-GP-UCB (B1, myopic)",
}
#: Methods that draw ``N`` samples per macro-action / that plan over a horizon.
SAMPLED = ("eps-macro-bo", "anytime")
NONMYOPIC = ("eps-macro-bo", "anytime", "nonmyopic-gp-ucb")
#: Tree expansions per planning call of the anytime method (ConstructTree calls).
ANYTIME_ITERATIONS = 300
#: Random restarts of the maximum-likelihood fit, and the rows it uses at most (an exact GP fit
#: is O(n^3) per step; 1000 rows take seconds, 2000 about a minute).
FIT_RESTARTS = 5
FIT_MAX_POINTS = 1000
#: The figure written into ``--out`` beside result.json.
PLOT_FILENAME = "trajectory.png"


def _streams(seed: int) -> list[np.random.SeedSequence]:
    """Independent seeded streams: graph subsample, fit, start draw, planners (none depends on
    the method, so methods run with one seed share the domain, the fit and the start)."""
    return np.random.SeedSequence(seed).spawn(4)


# -- reading the CSV files ----------------------------------------------------------------------
def _column_names(x, y, value) -> dict[str, str]:
    names = {"--x": x, "--y": y, "--target": value}
    for flag, name in names.items():
        if not isinstance(name, str) or not name.strip():
            raise TypeError(f"{flag} must be a column name, got {name!r}")
    if len(set(names.values())) < 3:
        raise ValueError(
            f"--x, --y and --target must name three different columns, got {x!r}, {y!r}, {value!r}"
        )
    return {flag: name.strip() for flag, name in names.items()}


def _read_field(path, names: dict[str, str]) -> tuple[np.ndarray, np.ndarray]:
    """The (n, 2) coordinates and (n,) values of the field file, checked."""
    header, rows, lines = read_table(path)
    where = f"--data {str(path)!r}"
    available = ", ".join(repr(name) for name in header)
    for flag, name in names.items():
        if name not in header:
            raise ValueError(
                f"{where} has no column {name!r} ({flag}); available columns: {available}"
            )
    if len(rows) < 2:
        raise ValueError(f"{where} must have at least 2 data rows (locations), got {len(rows)}")
    cols = {}
    for flag, name in names.items():
        role = "value" if flag == "--target" else "coordinate"
        cols[flag] = column(rows, lines, header.index(name), name, role)
        check_magnitude(cols[flag], lines, name, role, where)
    inputs = np.column_stack([cols["--x"], cols["--y"]])
    _, first, inverse = np.unique(inputs, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    repeated = np.flatnonzero(first[inverse] != np.arange(inverse.size))
    if repeated.size:
        j = int(repeated[0])
        i = int(first[inverse[j]])
        raise ValueError(
            f"{where}: rows {i} and {j} (file lines {lines[i]} and {lines[j]}) have the same "
            f"location ({names['--x']}, {names['--y']}) = ({inputs[j, 0]:g}, {inputs[j, 1]:g}); "
            "every location must appear once (average repeated measurements first)"
        )
    values = cols["--target"]
    if np.ptp(values) == 0.0:
        raise ValueError(
            f"{where}: the target column {names['--target']!r} has the same value {values[0]:g} in "
            "every row: every location is optimal and there is nothing to optimise (is it the "
            "right column?)"
        )
    return inputs, values


def _read_edges(path, n: int) -> np.ndarray:
    """The (m, 2) row-index pairs of the edge file, checked against the field's ``n`` rows."""
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"--edges must be a path, got {path!r}")
    path_ = os.fspath(path)
    if not os.path.isfile(path_):
        what = "is a directory, not a CSV file" if os.path.isdir(path_) else "does not exist"
        raise FileNotFoundError(f"--edges {path_!r} {what}")
    try:
        header, rows, lines = read_table(path)
    except ValueError as exc:
        # read_table names the file --data; this one is --edges
        raise ValueError(str(exc).replace("--data ", "--edges ", 1)) from None
    where = f"--edges {path_!r}"
    if len(header) != 2:
        raise ValueError(
            f"{where} must have exactly 2 columns (e.g. 'from,to': 0-based data-row indices of "
            f"--data), got {len(header)}: {header}"
        )
    if not rows:
        raise ValueError(f"{where} has no edges: add one row per edge")
    pairs = np.column_stack([column(rows, lines, j, header[j], "edge") for j in range(2)])
    bad = np.argwhere((pairs != np.round(pairs)) | (pairs < 0) | (pairs > n - 1))
    if bad.size:
        i, j = (int(v) for v in bad[0])
        raise ValueError(
            f"{where}: edge column {header[j]!r}, row {i} (file line {lines[i]}): "
            f"{pairs[i, j]:g} is not a data-row index of --data (integers 0 to {n - 1})"
        )
    return pairs.astype(np.int64)


# -- hyperparameters ------------------------------------------------------------------------------
def fit_field_hyperparameters(inputs, values, seed=0) -> tuple[GPHyperparameters, dict]:
    """SE-ARD kernel and noise by maximum marginal likelihood
    (:func:`frontierbo.core.fit.fit_hyperparameters`, :data:`FIT_RESTARTS` seeded restarts, on at
    most :data:`FIT_MAX_POINTS` rows, the subset adaptive); the prior mean is the sample mean of ``values`` (the fit's
    own constant mean is a nuisance parameter, reported in the details).

    Returns ``(hyperparameters, details)``, details = ``nll``, ``n_points``, ``fitted_mean``.
    """
    fit = fit_hyperparameters(
        inputs,
        values,
        kernel="se",
        ard=True,
        n_restarts=FIT_RESTARTS,
        seed=seed,
        max_points=FIT_MAX_POINTS,
        subset="adaptive",
    )
    lengthscale = tuple(float(v) for v in np.atleast_1d(fit.kernel.lengthscale))
    hyp = GPHyperparameters(
        prior_mean=float(np.mean(values)),
        lengthscale=lengthscale,
        signal_variance=float(fit.kernel.variance),
        noise_variance=float(fit.noise_variance),
    )
    return hyp, {"nll": fit.nll, "n_points": fit.n_points, "fitted_mean": fit.mean}


class MapRefit:
    """``refit(gp) -> gp`` for :func:`~frontierbo.macro.runner.run_macro`: before every plan, a
    GP whose hyperparameters come only from the measurements so far, as a study's do
    (:class:`frontierbo.study.samplers.GPSampler`).

    The SE-ARD kernel, noise and constant mean are the MAP estimate under BoTorch's
    dimension-scaled log-normal priors (:class:`~frontierbo.core.fit.LogNormalPriors`) on the
    measured cells, with coordinates scaled to the unit cube by the field's own extent (no
    value involved) and the measurements standardised; two seeded restarts, ``default_rng([seed,
    t])`` at ``t`` measurements. Until two measurements differ, the priors' modes with unit
    signal variance around the measured value stand in. ``fits`` logs every fit (raw units).
    """

    def __init__(self, inputs, seed: int = 0):
        self.inputs = np.asarray(inputs, dtype=float)
        self.lo = self.inputs.min(axis=0)
        span = np.ptp(self.inputs, axis=0)
        self.span = np.where(span > 0, span, 1.0)
        self.seed = check_int(seed, "seed", low=0)
        self.fits: list[GPHyperparameters] = []

    def hyperparameters(self, cells: np.ndarray, values: np.ndarray) -> GPHyperparameters:
        d = self.inputs.shape[1]
        priors = LogNormalPriors.dimension_scaled(d)
        y_mean, y_std = float(values.mean()), float(values.std())
        if y_std == 0:
            lengthscale, noise = priors.mode()
            return GPHyperparameters(
                prior_mean=y_mean,
                lengthscale=tuple(float(v) for v in lengthscale * self.span),
                signal_variance=1.0,
                noise_variance=noise,
            )
        fit = fit_hyperparameters(
            (self.inputs[cells] - self.lo) / self.span,
            (values - y_mean) / y_std,
            kernel="se",
            ard=True,
            n_restarts=2,
            seed=np.random.default_rng([self.seed, values.size]),
            min_noise_variance=1e-6,
            priors=priors,
        )
        return GPHyperparameters(
            prior_mean=y_mean + y_std * fit.mean,
            lengthscale=tuple(float(v) for v in np.atleast_1d(fit.kernel.lengthscale) * self.span),
            signal_variance=float(fit.kernel.variance) * y_std**2,
            noise_variance=fit.noise_variance * y_std**2,
        )

    def __call__(self, gp: FiniteDomainGP) -> FiniteDomainGP:
        cells, values = gp.observed_indices.copy(), gp.observed_values.copy()
        hyp = self.hyperparameters(cells, values)
        self.fits.append(hyp)
        fresh = FiniteDomainGP(gp.candidates, hyp.kernel(), hyp.noise_variance, hyp.prior_mean)
        for cell, y in zip(cells.tolist(), values.tolist(), strict=True):
            fresh.add(cell, y)
        return fresh


def _check_hyperparameters(hyp) -> GPHyperparameters:
    if not isinstance(hyp, GPHyperparameters):
        raise TypeError(
            f"hyperparameters must be a GPHyperparameters or None (fit), got {type(hyp).__name__}"
        )
    if len(hyp.lengthscale) != 2:
        raise ValueError(
            f"hyperparameters.lengthscale must hold 2 values (l_x, l_y), got {hyp.lengthscale!r}"
        )
    for v in hyp.lengthscale:
        check_real(v, "hyperparameters.lengthscale", low=0.0)
    check_real(hyp.signal_variance, "hyperparameters.signal_variance", low=0.0)
    check_real(hyp.noise_variance, "hyperparameters.noise_variance", low=0.0)
    check_real(hyp.prior_mean, "hyperparameters.prior_mean")
    return hyp


# -- the dataset --------------------------------------------------------------------------------
def load_field(
    path,
    *,
    x: str = "x",
    y: str = "y",
    value: str = "value",
    edges=None,
    directed: bool = False,
    kappa: int = 4,
    max_actions: int | None = 20,
    seed: int = 0,
    hyperparameters: GPHyperparameters | None = None,
    prefit_on_table: bool = True,
) -> MacroDataset:
    """Read a field (module doc) as a :class:`~frontierbo.macro.data.MacroDataset`.

    Args:
        path: the field CSV (``--data``).
        x, y, value: its column names (``--x``, ``--y``, ``--target``).
        edges: an edge-list CSV (``--edges``) for a graph domain; None needs a full grid.
        directed: the edges are one-way moves (``--directed``); default both ways.
        kappa: macro-action length (moves per macro-action), >= 1.
        max_actions: graph only: macro-actions kept per location (None keeps all).
        seed: non-negative int: the graph's macro-action subsample and the fit's restarts.
        hyperparameters: the GP to plan with; None fits it by maximum likelihood on the whole
            table (:func:`fit_field_hyperparameters`: this replays a table whose values are all
            known, like the papers' E2/E3, so the fit sees every value) when
            ``prefit_on_table``; otherwise the dataset carries the priors' modes, placeholders
            for a run that learns them (:class:`MapRefit`).

    Returns a dataset whose cells are the grid cells (grid; ordered row-major, not as the CSV)
    or the CSV rows (graph). ``meta`` holds ``file``, ``columns``, ``domain`` (``"grid"`` or
    ``"graph"``), ``row_of_cell`` (n,) and ``cell_of_row`` (n,) (the CSV row <-> cell mapping),
    ``inputs`` (n, 2) in CSV row order, ``hyperparameters_source`` (``"fitted"``, ``"given"``
    or ``"learned"``), ``fit`` (details of the fit, or None), ``edges`` (the file, or None).
    ``source`` is ``"real"``; ``start`` None; ``start_min_actions`` 1.

    Raises:
        FileNotFoundError: ``path`` or ``edges`` does not exist.
        ValueError / TypeError, naming the parameter: a missing column, a non-numeric or
            non-finite cell, fewer than 2 rows, a repeated location, a constant value column,
            locations that are not a full grid without ``edges``, an edge that is not a row
            index, ``kappa < 1``, no location with a macro-action of ``kappa`` moves, bad
            ``hyperparameters``.
    """
    kappa = check_int(kappa, "kappa (--kappa)", low=1)
    seed = check_int(seed, "seed (--seed)", low=0)
    if max_actions is not None:
        max_actions = check_int(max_actions, "max_actions", low=1)
    if hyperparameters is not None:
        hyperparameters = _check_hyperparameters(hyperparameters)
    names = _column_names(x, y, value)
    path = data_path(path)
    inputs, values = _read_field(path, names)
    n = values.size
    domain_ss, fit_ss, _, _ = _streams(seed)

    if edges is None:
        layout = grid_layout(inputs[:, 0], inputs[:, 1])
        if isinstance(layout, str):
            raise ValueError(
                f"--data {str(path)!r}: the locations ({names['--x']}, {names['--y']}) are not a "
                f"full regular grid ({layout}); give an edge list (--edges) to move between "
                "these locations along a graph"
            )
        domain = GridDomain(
            layout.shape, kappa, spacing=layout.spacing, origin=(layout.xs[0], layout.ys[0])
        )
        cell_of_row = layout.cell
        pairs = None
    else:
        pairs = _read_edges(edges, n)
        domain = GraphDomain(
            inputs,
            pairs,
            kappa,
            directed=directed,
            max_actions=max_actions,
            seed=np.random.default_rng(domain_ss),
        )
        cell_of_row = np.arange(n)
    if int(domain.action_counts.max()) == 0:
        kind = "grid" if edges is None else "graph"
        raise ValueError(
            f"kappa (--kappa) = {kappa}: no location of this {kind} offers a macro-action of "
            f"{kappa} moves; choose a smaller --kappa" + ("" if edges is None else " or add edges")
        )
    row_of_cell = np.argsort(cell_of_row)

    fit = None
    source = "given"
    if hyperparameters is None and prefit_on_table:
        hyperparameters, fit = fit_field_hyperparameters(
            inputs, values, seed=np.random.default_rng(fit_ss)
        )
        source = "fitted"
    elif hyperparameters is None:  # learned during the run; nothing read from the values
        hyperparameters = MapRefit(inputs, seed).hyperparameters(np.array([0]), np.zeros(1))
        source = "learned"
    return MacroDataset(
        name=path.stem,
        domain=domain,
        values=values[row_of_cell],
        hyperparameters=hyperparameters,
        source="real",
        start=None,
        start_min_actions=1,
        meta={
            "file": str(path),
            "columns": {"x": names["--x"], "y": names["--y"], "value": names["--target"]},
            "domain": "grid" if edges is None else "graph",
            "edges": None if edges is None else os.fspath(edges),
            "directed": bool(directed) if edges is not None else None,
            "row_of_cell": row_of_cell,
            "cell_of_row": cell_of_row,
            "inputs": inputs,
            "hyperparameters_source": source,
            "fit": fit,
        },
    )


# -- the run ------------------------------------------------------------------------------------
def _check_run_params(method, kappa, budget, horizon, n_samples, beta, seed):
    if method not in METHODS:
        raise ValueError(f"method (--method) must be one of {list(METHODS)}, got {method!r}")
    kappa = check_int(kappa, "kappa (--kappa)", low=1)
    budget = check_int(budget, "budget (observations, --iterations x --kappa)", low=1)
    if budget % kappa:
        raise ValueError(
            f"budget (observations, --iterations x --kappa) must be a multiple of kappa "
            f"(--kappa) = {kappa} (one macro-action of kappa observations per iteration), "
            f"got {budget}"
        )
    horizon = check_int(horizon, "horizon (--horizon)", low=1)
    n_samples = check_int(n_samples, "n_samples (--samples)", low=1)
    beta = check_real(beta, "beta (--beta)", low=0.0, low_open=False)
    seed = check_int(seed, "seed (--seed)", low=0)
    return kappa, budget, horizon, n_samples, beta, seed


def _method(name: str, horizon: int, n_samples: int, beta: float):
    from frontierbo.macro import runner

    if name == "eps-macro-bo":
        return runner.epsilon_macro_bo(horizon, n_samples, beta=beta)
    if name == "anytime":
        return runner.anytime(horizon, n_samples, ANYTIME_ITERATIONS, beta=beta)
    if name == "nonmyopic-gp-ucb":
        return runner.most_likely(horizon, beta=beta)
    return runner.db_gp_ucb(beta=beta)


def _start_cell(dataset: MacroDataset, start, stream) -> tuple[int, bool]:
    """The start cell: the row ``start`` (checked) or a seeded draw; and whether it was drawn."""
    meta, counts = dataset.meta, dataset.domain.action_counts
    if start is None:
        return int(dataset.starts(1, seed=np.random.default_rng(stream))[0]), True
    n = dataset.domain.n
    row = check_int(start, "start (--start)", low=0, high=n - 1)
    cell = int(meta["cell_of_row"][row])
    if counts[cell] == 0:
        raise ValueError(
            f"start (--start) = {row}: that location offers no macro-action of "
            f"{dataset.domain.kappa} moves; choose another row (or omit --start to draw one)"
        )
    return cell, False


def _location(dataset: MacroDataset, row: int, **extra) -> dict:
    x, y = dataset.meta["inputs"][row]
    value = float(dataset.values[dataset.meta["cell_of_row"][row]])
    return {**extra, "row": int(row), "x": float(x), "y": float(y), "value": value}


def _domain_summary(dataset: MacroDataset) -> dict:
    domain, counts = dataset.domain, dataset.domain.action_counts
    out = {"kind": dataset.meta["domain"], "n": int(domain.n)}
    if isinstance(domain, GridDomain):
        out.update(shape=list(domain.shape), spacing=list(domain.spacing))
    else:
        out.update(
            directed=domain.directed,
            moves=int(domain.edges.shape[0]),
            max_actions=domain.max_actions,
        )
    out["macro_actions_per_location"] = {
        "min": int(counts.min()),
        "mean": float(counts.mean()),
        "max": int(counts.max()),
        "locations_with_none": int(np.sum(counts == 0)),
    }
    return out


def run_macro_on_csv(
    path,
    *,
    edges=None,
    directed: bool = False,
    x: str = "x",
    y: str = "y",
    value: str = "value",
    kappa: int = 4,
    budget: int = 20,
    method: str = "eps-macro-bo",
    horizon: int = 3,
    n_samples: int = 50,
    beta: float = 0.0,
    start: int | None = None,
    seed: int = 0,
    out=None,
    hyperparameters: GPHyperparameters | None = None,
    prefit_on_table: bool = False,
) -> dict:
    """Run ``method`` on the field in ``path`` for ``budget`` observations (module doc).

    Args:
        path, edges, directed, x, y, value, kappa, hyperparameters: as in :func:`load_field`.
        budget: observations after the start's, a multiple of ``kappa`` (``budget / kappa``
            iterations, one macro-action each; the command line's ``--iterations`` counts the
            iterations: ``budget = iterations * kappa``).
        method: a key of :data:`METHODS`.
        horizon: ``H``, macro-actions of lookahead (nonmyopic methods; db-gp-ucb uses 1).
            Near the end of the budget the runner plans with ``min(H, iterations left)``.
        n_samples: ``N``, samples per macro-action (eps-macro-bo and anytime only). The
            exhaustive tree has about ``(A N)^H`` nodes for ``A`` macro-actions per location:
            keep it small on graphs (A up to 20).
        beta: weight of the exploration bonus of (4.2), >= 0.
        start: data-row index of the start location; default a seeded draw among the locations
            with at least one macro-action.
        seed: non-negative int; independent streams for the graph's macro-action subsample, the
            fit, the start draw and the planners' samples (none depends on ``method``).
        out: directory; when given, ``result.json`` (this dict) and ``trajectory.png`` are
            written there atomically after the run.
        prefit_on_table: without ``hyperparameters``, fit them once on the whole table before
            the run, as the thesis did (the fit sees values the agent has not visited);
            default False: learn them before every plan from the measurements so far only
            (:class:`MapRefit`), as a study does.

    Returns a JSON-ready dict: the settings (``data``, ``edges``, ``columns``, ``method``,
    ``name``, ``horizon``, ``n_samples``, ``anytime_iterations``, ``beta``, ``kappa``,
    ``budget``, ``seed``), ``domain`` (kind, size, macro-actions per location),
    ``hyperparameters`` (``prior_mean``, ``lengthscale`` ``[l_x, l_y]``, ``signal_variance``,
    ``noise_variance``, ``source`` "fitted" / "given", ``fit`` details or None), ``start``
    (``row, x, y, value, drawn``), ``trajectory`` (per visited location: ``n, row, x, y,
    value``; ``n = 0`` is the start), ``iterations`` (per macro-action: ``t, rows, horizon``
    (H_eff), ``nodes``, ``seconds``), ``metrics`` (``n``, ``average_normalized_output``,
    ``simple_regret`` at the checkpoints, ``nodes``, ``seconds_per_iteration``,
    ``normaliser`` (the table's mean), ``max_value``), ``best`` (best value found: ``n, row,
    x, y, value``) and ``table_best`` (the table's maximum: ``row, x, y, value``). Only the
    ``seconds`` entries differ between two runs with the same arguments.

    Raises:
        FileNotFoundError, ValueError, TypeError naming the parameter, before any work is done
        and before any file is created.
    """
    kappa, budget, horizon, n_samples, beta, seed = _check_run_params(
        method, kappa, budget, horizon, n_samples, beta, seed
    )
    out = check_out_dir(out)
    dataset = load_field(
        path,
        x=x,
        y=y,
        value=value,
        edges=edges,
        directed=directed,
        kappa=kappa,
        seed=seed,
        hyperparameters=hyperparameters,
        prefit_on_table=bool(prefit_on_table),
    )
    _, _, start_ss, plan_ss = _streams(seed)
    start_cell, drawn = _start_cell(dataset, start, start_ss)

    from frontierbo.macro.runner import run_macro

    planner = _method(method, horizon, n_samples, beta)
    learned = None
    if dataset.meta["hyperparameters_source"] == "learned":
        learned = MapRefit(dataset.domain.inputs, seed)
    run = run_macro(
        planner,
        dataset,
        start=start_cell,
        budget=budget,
        seed=np.random.default_rng(plan_ss),
        refit=learned,
    )
    result = finite_or_null(
        _result(dataset, run, method, planner.horizon, n_samples, beta, budget, seed, drawn,
                learned)
    )  # fmt: skip
    if out is not None:
        from frontierbo.macro.plots import plot_trajectory

        rows = [step["row"] for step in result["trajectory"]]
        graph = dataset.domain if isinstance(dataset.domain, GraphDomain) else None
        plot_trajectory(
            dataset.meta["inputs"],
            dataset.values[dataset.meta["cell_of_row"]],
            {METHODS[method]: rows},
            out / PLOT_FILENAME,
            title=f"{METHODS[method]} on {os.path.basename(result['data'])}",
            edges=None if graph is None else graph.edges,  # graph cells are the CSV rows
        )
        write_json_atomic(out / RESULT_FILENAME, result)
    return result


def _result(dataset, run, method, horizon, n_samples, beta, budget, seed, drawn, learned) -> dict:
    meta, hyp = dataset.meta, dataset.hyperparameters
    if learned is not None:  # report the GP of the last plan
        hyp = learned.fits[-1]
    row_of_cell = meta["row_of_cell"]
    rows = row_of_cell[run.locations]
    trajectory = [_location(dataset, int(r), n=i) for i, r in enumerate(rows)]
    metrics = run.metrics(dataset)
    best_n = int(np.argmax(run.outputs))  # first time the best value was seen
    top_row = int(row_of_cell[int(np.argmax(dataset.values))])
    return {
        "data": meta["file"],
        "edges": meta["edges"],
        "columns": dict(meta["columns"]),
        "method": method,
        "name": METHODS[method],
        "horizon": int(horizon),
        "n_samples": n_samples if method in SAMPLED else None,
        "anytime_iterations": ANYTIME_ITERATIONS if method == "anytime" else None,
        "beta": beta,
        "kappa": int(dataset.domain.kappa),
        "budget": budget,
        "seed": seed,
        "domain": _domain_summary(dataset),
        "hyperparameters": {
            "prior_mean": hyp.prior_mean,
            "lengthscale": list(hyp.lengthscale),
            "signal_variance": hyp.signal_variance,
            "noise_variance": hyp.noise_variance,
            "source": meta["hyperparameters_source"],
            "fit": None if meta["fit"] is None else dict(meta["fit"]),
            "fits": None if learned is None else len(learned.fits),
        },
        "start": _location(dataset, int(rows[0]), drawn=drawn),
        "trajectory": trajectory,
        "iterations": [
            {
                "t": t + 1,
                "rows": row_of_cell[run.paths[t]].tolist(),
                "horizon": int(run.horizons[t]),
                "nodes": int(run.nodes[t]),
                "seconds": float(run.seconds[t]),
            }
            for t in range(run.paths.shape[0])
        ],
        "metrics": {
            "n": metrics["n"].tolist(),
            "average_normalized_output": metrics["m1"].tolist(),
            "simple_regret": metrics["m2"].tolist(),
            "nodes": int(metrics["m3"]),
            "seconds_per_iteration": float(metrics["m4"]),
            "normaliser": dataset.empirical_mean,
            "max_value": dataset.max_value,
        },
        "best": trajectory[best_n],
        "table_best": _location(dataset, top_row),
    }


# -- reporting ----------------------------------------------------------------------------------
def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    """Right-aligned columns, two spaces apart, indented by two."""
    widths = [max(len(h), *(len(r[j]) for r in rows)) for j, h in enumerate(header)]
    return [
        "  " + "  ".join(cell.rjust(w) for cell, w in zip(line, widths, strict=True))
        for line in [header, *rows]
    ]


def _where(loc: dict) -> str:
    return f"row {loc['row']} (x = {fmt_number(loc['x'], 6)}, y = {fmt_number(loc['y'], 6)})"


def format_macro_result(result: dict) -> str:
    """What ``frontierbo run macro-bo`` prints for a :func:`run_macro_on_csv` result."""
    dom, hyp, met = result["domain"], result["hyperparameters"], result["metrics"]
    if dom["kind"] == "grid":
        where = f"{dom['shape'][0]} x {dom['shape'][1]} grid, straight-line macro-actions"
    else:
        kind = "directed" if dom["directed"] else "undirected"
        where = f"{kind} graph of {dom['moves']} moves, path macro-actions"
    acts = dom["macro_actions_per_location"]
    settings = [f"H = {result['horizon']}"]
    if result["n_samples"] is not None:
        settings.append(f"N = {result['n_samples']}")
    if result["anytime_iterations"] is not None:
        settings.append(f"{result['anytime_iterations']} tree expansions per iteration")
    settings += [f"beta = {fmt_number(result['beta'], 4)}", f"seed = {result['seed']}"]
    scales = ", ".join(fmt_number(v, 4) for v in hyp["lengthscale"])
    fitted = {
        "fitted": "fitted by maximum likelihood on the whole table (--prefit-on-table)",
        "learned": f"learned from the measurements only, refitted before each of the "
        f"{hyp.get('fits')} plans; the last fit",
    }.get(hyp["source"], "given")
    start = result["start"]
    lines = [
        f"{result['name']} on {result['data']}: {dom['n']} locations ({where}; "
        f"{acts['min']}-{acts['max']} per location)",
        f"kappa = {result['kappa']}, budget = {result['budget']} observations "
        f"({result['budget'] // result['kappa']} iterations), " + ", ".join(settings),
        f"GP ({fitted}): prior mean {fmt_number(hyp['prior_mean'], 4)}, length-scales "
        f"(x, y) = ({scales}), signal variance {fmt_number(hyp['signal_variance'], 4)}, noise "
        f"variance {fmt_number(hyp['noise_variance'], 4)}",
        f"start: {_where(start)}{', drawn from the seed' if start['drawn'] else ''}",
        "trajectory (n: observation; row: 0-based data row):",
    ]
    lines += _table(
        ["n", "row", "x", "y", "value"],
        [
            [str(s["n"]), str(s["row"]), fmt_number(s["x"], 6), fmt_number(s["y"], 6)]
            + [fmt_number(s["value"], 6)]
            for s in result["trajectory"]
        ],
    )
    lines.append(
        f"metrics (normalised by the table's mean {fmt_number(met['normaliser'], 4)}; regret "
        f"against its maximum {fmt_number(met['max_value'], 4)}):"
    )
    lines += _table(
        ["n", "average normalised output", "simple regret"],
        [
            [str(n), fmt_number(m1, 4), fmt_number(m2, 4)]
            for n, m1, m2 in zip(
                met["n"], met["average_normalized_output"], met["simple_regret"], strict=True
            )
        ],
    )
    best, top = result["best"], result["table_best"]
    lines += [
        f"nodes explored: {met['nodes']}; planning time per iteration: "
        f"{met['seconds_per_iteration']:.3g} s",
        f"best value found: {fmt_number(best['value'], 6)} at {_where(best)}, n = {best['n']}; "
        f"table maximum {fmt_number(top['value'], 6)} at row {top['row']}",
    ]
    return "\n".join(lines)
