"""Benchmark problems of the PO-GP-UCB paper: synthetic GP grid, Branin-Hoo, loans, property.

Every builder returns a :class:`Problem` whose inputs are already preprocessed (step P0:
ARD division, centring, max row norm 25) and whose values are to be maximised.
"""

from __future__ import annotations

from collections.abc import Callable

from frontierbo.data import (
    DATA_ENV,
    KNOWN_SHA256,
    data_available,
    file_sha256,
    resolve_data_path,
    verify_sha256,
)
from frontierbo.po.problems.base import Problem, preprocess_inputs, singular_values
from frontierbo.po.problems.branin import branin, branin_grid, branin_problem
from frontierbo.po.problems.loan import (
    calibrate_income_cap,
    load_lendingclub_csv,
    loan_problem,
    loan_substitute,
)
from frontierbo.po.problems.property import (
    load_property_data,
    property_problem,
    property_real,
    property_substitute,
)
from frontierbo.po.problems.synthetic import grid_inputs, sample_gp_on_grid, synthetic_gp_grid

PROBLEMS: dict[str, Callable[..., Problem]] = {
    "synthetic": synthetic_gp_grid,
    "branin": branin_problem,
    "loan": loan_problem,
    "property": property_problem,
}


def get_problem(name: str, seed: int = 0, **kwargs) -> Problem:
    """Build a problem by name ("synthetic", "branin", "loan", "property"); kwargs go to the
    builder (e.g. ``half_width`` for synthetic, ``path`` for loan/property)."""
    try:
        builder = PROBLEMS[name]
    except (KeyError, TypeError):
        raise ValueError(f"name must be one of {sorted(PROBLEMS)}, got {name!r}") from None
    return builder(seed=seed, **kwargs)


__all__ = [
    "DATA_ENV",
    "KNOWN_SHA256",
    "PROBLEMS",
    "Problem",
    "branin",
    "branin_grid",
    "branin_problem",
    "calibrate_income_cap",
    "data_available",
    "file_sha256",
    "get_problem",
    "grid_inputs",
    "load_lendingclub_csv",
    "load_property_data",
    "loan_problem",
    "loan_substitute",
    "preprocess_inputs",
    "property_problem",
    "property_real",
    "property_substitute",
    "resolve_data_path",
    "sample_gp_on_grid",
    "singular_values",
    "synthetic_gp_grid",
    "verify_sha256",
]
