"""``frontierbo run macro-bo``: nonmyopic BO over macro-actions on your own field.

The table (:mod:`frontierbo.macro.field`) is replayed, as the thesis did with its real traffic and
temperature data (E2, E3): an agent starts at one location, executes ``iterations`` macro-actions
of ``kappa`` moves and observes the table's values along them (no noise added,
docs/decisions.md#macro-bo-no-noise-added-at-execution). Every value is known, so the regret is
exact. Methods: ``eps-macro-bo`` (A1, exhaustive ε-Macro-BO), ``anytime`` (A3, a fixed number of
tree expansions per plan), ``nonmyopic-gp-ucb`` (A2, the most-likely-observation planner) and
``db-gp-ucb`` (B1, myopic: horizon 1); ``beta`` weighs the exploration bonus of (4.2). Row numbers
are 0-based data rows; the metrics are M1 (average output minus the table's mean) and M2 (simple
regret against the table's maximum) at ``n = 0, kappa, ..., iterations * kappa`` (thesis
Section 4.4).
"""

from __future__ import annotations

import os

import numpy as np

from frontierbo._validation import check_int
from frontierbo.io import finite_or_null, fmt_number
from frontierbo.macro.data import GPHyperparameters, MacroDataset
from frontierbo.macro.domains import GraphDomain, GridDomain
from frontierbo.macro.field import MapRefit, load_field, streams
from frontierbo.macro.system import (
    ANYTIME_ITERATIONS,
    DEFAULT_HORIZON,
    DEFAULT_SAMPLES,
    METHODS,
    RUN,
    SAMPLED,
)
from frontierbo.systems.userrun import implements

__all__ = ["example", "format_macro_result", "run_macro_on_csv"]

#: The figure written into ``out`` beside result.json.
PLOT_FILENAME = "trajectory.png"


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
    row = check_int(start, "start (--start)", low=0, high=dataset.domain.n - 1)
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


@implements(RUN)
def run_macro_on_csv(
    path,
    *,
    edges=None,
    directed: bool = False,
    x: str = "x",
    y: str = "y",
    value: str = "value",
    kappa: int = 4,
    iterations: int = 5,
    method: str = "eps-macro-bo",
    horizon: int | None = None,
    n_samples: int | None = None,
    beta: float = 0.0,
    start: int | None = None,
    seed: int = 0,
    out=None,
    hyperparameters: GPHyperparameters | None = None,
    prefit_on_table: bool = False,
) -> dict:
    """Run ``method`` on the field in ``path`` (module doc; the keywords are ``run macro-bo``'s
    flags, :data:`frontierbo.macro.system.RUN`). ``hyperparameters``: a GP to plan with instead
    of learning or fitting one. Near the end the runner plans with ``min(H, iterations left)``.

    Returns a JSON-ready dict: the settings, ``domain``, ``hyperparameters`` (the last plan's
    GP, its ``source`` and ``fit``), ``start``, ``trajectory`` (one entry per observation, ``n =
    0`` the start), ``iterations`` (rows, horizon and nodes of each macro-action), ``metrics``,
    ``best`` (the best value found), ``table_best`` (the table's maximum) and ``seconds`` (the
    planning wall time; printed, not stored). ``out`` also gets ``trajectory.png``.
    """
    if directed and edges is None:
        raise ValueError("--directed applies to --edges only: give an edge list")
    horizon = DEFAULT_HORIZON if horizon is None else horizon
    n_samples = DEFAULT_SAMPLES if n_samples is None else n_samples
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
        prefit_on_table=prefit_on_table,
    )
    _, _, start_ss, plan_ss = streams(seed)
    start_cell, drawn = _start_cell(dataset, start, start_ss)

    from frontierbo.macro.runner import run_macro

    planner = _method(method, horizon, n_samples, beta)
    learned = None
    if dataset.meta["hyperparameters_source"] == "learned":
        learned = MapRefit(dataset.domain.inputs, seed)
    budget = iterations * kappa
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
            }
            for t in range(run.paths.shape[0])
        ],
        "metrics": {
            "n": metrics["n"].tolist(),
            "average_normalized_output": metrics["m1"].tolist(),
            "simple_regret": metrics["m2"].tolist(),
            "nodes": int(metrics["m3"]),
            "normaliser": dataset.empirical_mean,
            "max_value": dataset.max_value,
        },
        "best": trajectory[best_n],
        "table_best": _location(dataset, top_row),
        # wall time is not a result: userrun keeps it out of result.json (M4, printed)
        "seconds": float(np.sum(run.seconds)),
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
    iterations = result["budget"] // result["kappa"]
    lines = [
        f"{result['name']} on {result['data']}: {dom['n']} locations ({where}; "
        f"{acts['min']}-{acts['max']} per location)",
        f"kappa = {result['kappa']}, budget = {result['budget']} observations "
        f"({iterations} iterations), " + ", ".join(settings),
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
    lines.append(f"nodes explored: {met['nodes']}")
    if "seconds" in result:
        lines[-1] += f"; planning time per iteration: {result['seconds'] / iterations:.3g} s"
    lines.append(
        f"best value found: {fmt_number(best['value'], 6)} at {_where(best)}, n = {best['n']}; "
        f"table maximum {fmt_number(top['value'], 6)} at row {top['row']}"
    )
    return "\n".join(lines)


def example(directory) -> list[dict]:
    """A 5 x 5 grid field and a tiny run of each method on it (conformance checks)."""
    path = directory / "field.csv"
    cells = [(x, y, np.sin(x) + 0.5 * np.cos(1.3 * y)) for y in range(5) for x in range(5)]
    path.write_text("x,y,value\n" + "".join(f"{x},{y},{v:.6f}\n" for x, y, v in cells))
    tiny = {"path": path, "kappa": 2, "iterations": 2, "seed": 1}
    return [
        {**tiny, "method": "eps-macro-bo", "horizon": 2, "n_samples": 3},
        {**tiny, "method": "anytime", "horizon": 2, "n_samples": 3},
        {**tiny, "method": "nonmyopic-gp-ucb", "horizon": 2},
        {**tiny, "method": "db-gp-ucb"},
    ]
