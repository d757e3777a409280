"""A user's field for ``run macro-bo``, read as a :class:`~frontierbo.macro.data.MacroDataset`.

The CSV file (header row, comma-separated, UTF-8) holds one row per location: its coordinates and
the measurement there. Where the agent may move:

* without an edge list, the locations must form a full regular grid (every combination of the
  distinct x and y values once, each set equally spaced). Grid row ``r`` is the r-th smallest x,
  column ``c`` the c-th smallest y; a macro-action is a straight line of ``kappa`` cells along one
  of the 4 axis directions inside the grid (E1's AUV dives; :class:`GridDomain`);
* with an edge list (two columns of 0-based data-row indices, e.g. ``from,to``; undirected unless
  ``directed``), a macro-action is a simple path of ``kappa`` moves along the edges, at most
  ``max_actions`` of them per location drawn once from the seed (E2, E3; :class:`GraphDomain`).

The GP hyperparameters are given, fitted once on the whole table (:func:`fit_field_hyperparameters`,
as the thesis did, Section 4.4: the fit sees values the agent has not visited), or learned before
every plan from the measurements so far (:class:`MapRefit`, as a study learns them).
"""

from __future__ import annotations

import os

import numpy as np

from frontierbo._validation import check_int, check_real
from frontierbo.core.fit import LogNormalPriors, fit_hyperparameters
from frontierbo.core.gp import FiniteDomainGP
from frontierbo.io import check_magnitude, column, data_path, read_table
from frontierbo.macro.data import GPHyperparameters, MacroDataset
from frontierbo.macro.domains import GraphDomain, GridDomain, grid_layout

__all__ = ["MapRefit", "fit_field_hyperparameters", "load_field", "streams"]

#: Random restarts of the maximum-likelihood fit, and the rows it uses at most (an exact GP fit
#: is O(n^3) per step; 1000 rows take seconds, 2000 about a minute).
FIT_RESTARTS = 5
FIT_MAX_POINTS = 1000


def streams(seed: int) -> list[np.random.SeedSequence]:
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
    path = data_path(path, "--edges")
    header, rows, lines = read_table(path, "--edges")
    where = f"--edges {str(path)!r}"
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
    """SE-ARD kernel and noise by maximum marginal likelihood (:data:`FIT_RESTARTS` seeded
    restarts, on at most :data:`FIT_MAX_POINTS` rows, the subset adaptive); the prior mean is the
    sample mean of ``values``. Returns ``(hyperparameters, {nll, n_points, fitted_mean})``."""
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
    """The field in ``path`` (module doc; the keywords are ``run macro-bo``'s flags).

    ``hyperparameters`` None: fitted on the whole table when ``prefit_on_table``, else the priors'
    modes, placeholders for a run that learns them (:class:`MapRefit`). ``max_actions``: graph
    only, macro-actions kept per location (None keeps all). The cells are the grid cells in
    row-major order (grid) or the CSV rows (graph); ``meta`` maps them to the CSV rows
    (``row_of_cell``, ``cell_of_row``) and holds ``file``, ``columns``, ``domain`` ("grid" or
    "graph"), ``edges``, ``directed``, ``inputs`` (CSV row order), ``hyperparameters_source``
    ("fitted", "given" or "learned") and ``fit`` (its details, or None).
    """
    if hyperparameters is not None:
        hyperparameters = _check_hyperparameters(hyperparameters)
    names = _column_names(x, y, value)
    path = data_path(path)
    inputs, values = _read_field(path, names)
    n = values.size
    domain_ss, fit_ss, _, _ = streams(seed)

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
