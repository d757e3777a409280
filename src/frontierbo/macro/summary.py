"""The summary of ``reproduce macro-bo``: per experiment and table, each row's metrics over its
realizations (mean ± s.e. of M1–M4 at n = 0, kappa, ..., 20) beside the thesis's numbers, and
the differences the thesis quotes in units of sigma_y, paired over realizations."""

from __future__ import annotations

import numpy as np

from frontierbo.io import mean_stderr
from frontierbo.macro.experiment import (
    METHODS,
    PUBLISHED,
    runs_of,
    selected,
)


def row_key(method: str, variant) -> str:
    """``method@variant``: a row of a table (the key of published.json's rows)."""
    return f"{method}@{variant.key}"


def published_key(key: str) -> str:
    """The thesis's row for one of ours: the anytime rows are the reference code's."""
    return key.replace("-ref", "")


def _label(method: str, variant) -> str:
    label = METHODS[method].label
    return label if variant.max_actions or "all" in label else f"{label} (all actions)"


def _pm(values) -> list[float]:
    mean, se = mean_stderr(np.asarray(values, dtype=float))
    return [float(mean), float(se)]


def _row(records: list[dict]) -> dict:
    m1 = np.array([r["avg_output"] for r in records], dtype=float)
    m2 = np.array([r["simple_regret"] for r in records], dtype=float)
    m1_mean, m1_se = mean_stderr(m1)
    m2_mean, m2_se = mean_stderr(m2)
    return {
        "runs": len(records),
        "n": records[0]["n"],
        "avg_output_curve": [m1_mean.tolist(), m1_se.tolist()],
        "simple_regret_curve": [m2_mean.tolist(), m2_se.tolist()],
        "avg_output": [float(m1_mean[-1]), float(m1_se[-1])],
        "simple_regret": [float(m2_mean[-1]), float(m2_se[-1])],
        "nodes": _pm([r["nodes"] for r in records]),
        "seconds_per_iteration": _pm([r["seconds_per_iteration"] for r in records]),
    }


def _records_by_row(experiment, records: list[dict], runs: int) -> dict[str, list[dict]]:
    """The records of each row, realizations ``0 .. runs - 1`` only (E6 shares E1's runs)."""
    rows = {(m, v.kappa, v.max_actions, v.buoy): row_key(m, v) for m, v in experiment.rows()}
    out: dict[str, list[dict]] = {key: [] for key in rows.values()}
    for rec in records:
        c = rec["config"]
        if c["dataset"] != experiment.dataset or c["realization"] >= runs:
            continue
        buoy = tuple(c["buoy"]) if c["buoy"] else None
        key = rows.get((c["method"], c["kappa"], c["max_actions"], buoy))
        if key is not None:
            out[key].append(rec)
    for found in out.values():
        found.sort(key=lambda r: r["config"]["realization"])
    return out


def _thesis_rows(by_row: dict) -> dict[str, str]:
    """Our row standing for each thesis row: the reference-code profile where there are two
    (the published anytime rows came from the authors' code)."""
    out: dict[str, str] = {}
    for key, records in by_row.items():
        if records and (published_key(key) not in out or "-ref" in key):
            out[published_key(key)] = key
    return out


def _difference(claim: dict, by_row: dict, ours: dict, sigma_y: float) -> dict | None:
    key_a, key_b = ours.get(claim["a"]), ours.get(claim["b"])
    if key_a is None or key_b is None:
        return None
    pairs = {r["config"]["realization"]: r for r in by_row[key_b]}
    common = [
        (r, pairs[r["config"]["realization"]])
        for r in by_row[key_a]
        if r["config"]["realization"] in pairs
    ]
    out = {"a": key_a, "b": key_b, "runs": len(common)}
    for metric in ("avg_output", "simple_regret"):
        diff = [(x[metric][-1] - y[metric][-1]) / sigma_y for x, y in common]
        out[metric] = _pm(diff) if len(diff) > 1 else [float(diff[0]), 0.0]
        out[f"{metric}_thesis"] = claim.get(metric)
    return out


def summarise_experiment(experiment, records: list[dict], runs: int) -> dict:
    by_row = _records_by_row(experiment, records, runs)
    published = PUBLISHED["tables"].get(experiment.key, {})
    tables = {}
    for name, rows in experiment.tables.items():
        thesis = published.get(name, {}).get("rows", {})
        table = {}
        for method, variant in rows:
            key = row_key(method, variant)
            if not by_row[key]:
                continue
            options = dict(METHODS[method].options)
            table[key] = {
                "label": _label(method, variant),
                "horizon": options.get("horizon", 1),
                "beta": options.get("beta", 0.0),
                **_row(by_row[key]),
                "thesis": thesis.get(published_key(key), {}),
            }
        tables[name] = {"source": published.get(name, {}).get("source"), "rows": table}
    sigma_y = PUBLISHED["sigma_y"][experiment.dataset]
    ours = _thesis_rows(by_row)
    claims = PUBLISHED["differences"].get(experiment.key, [])
    diffs = [_difference(c, by_row, ours, sigma_y) for c in claims]
    nodes_thesis = PUBLISHED["nodes"].get(experiment.key, {})
    sources = sorted({r["source"] for rows in by_row.values() for r in rows})
    out = {
        "title": experiment.title,
        "dataset": experiment.dataset,
        "source": sources,
        "sigma_y": sigma_y,
        "tables": tables,
        "differences": [d for d in diffs if d is not None],
        "nodes_thesis": nodes_thesis,
    }
    if experiment.key == "e5":
        out["trajectories"] = {key: rows[0]["locations"] for key, rows in by_row.items() if rows}
        out["realization"] = 0
    return out


def summarise(records: list[dict], options) -> dict:
    """results.json's fields: the options and one summary per chosen experiment."""
    return {
        "options": {
            "experiments": list(options["experiments"]),
            "a1_samples": options["a1_samples"],
            "anytime_samples": options["anytime_samples"],
            "anytime_iterations": options["anytime_iterations"],
            "quick": options.quick,
        },
        "experiments": {
            e.key: summarise_experiment(e, records, runs_of(e, options)) for e in selected(options)
        },
    }
