"""The problems of the LDP-BO / heavy-tailed BO experiments (Fig. 2 and 3 of the paper) by name.

Problems (names of :func:`get_ldp_problem`):

=====================  ======================================================================
``synthetic-se``       SE kernel (l = 0.2), U[-1, 1] noise (R = 1): the LDP synthetic case.
``synthetic-matern``   Matern-5/2 kernel (l = 0.2), U[-1, 1] noise.
``synthetic-se-t``     SE kernel, Student-t noise with 3 degrees of freedom (heavy tails).
``synthetic-matern-t`` Matern-5/2 kernel, Student-t(3) noise.
``light``              CMU Intelligent Workplace light sensors, 41 arms (real file or surrogate).
``stock``              29 Dow-30 adjusted closing prices 2016-2019, 823 days (real or surrogate).
=====================  ======================================================================

``light`` and ``stock`` read the real file when it is found (:mod:`frontierbo.ldp.realdata`)
and fall back to a documented surrogate otherwise (:mod:`frontierbo.ldp.surrogates`).
"""

from __future__ import annotations

import os

from frontierbo._validation import SeedLike
from frontierbo.data import resolve_data_path
from frontierbo.ldp.problems import LDPProblem
from frontierbo.ldp.realdata import LIGHT_FILE, STOCK_FILE, light_sensor_problem, stock_problem
from frontierbo.ldp.surrogates import light_sensor_surrogate, stock_surrogate
from frontierbo.ldp.synthetic import synthetic_problem

# get_ldp_problem name -> (kernel, noise) of the synthetic problems.
SYNTHETIC_NAMES: dict[str, tuple[str, str]] = {
    "synthetic-se": ("se", "uniform"),
    "synthetic-matern": ("matern52", "uniform"),
    "synthetic-se-t": ("se", "student_t"),
    "synthetic-matern-t": ("matern52", "student_t"),
}
LDP_PROBLEM_NAMES = (*SYNTHETIC_NAMES, "light", "stock")


def get_ldp_problem(
    name: str,
    seed: SeedLike = 0,
    path: str | os.PathLike | None = None,
    allow_surrogate: bool = True,
    *,
    verify: bool = True,
    surrogate_seed: SeedLike = 0,
    **synthetic_kwargs,
) -> LDPProblem:
    """Build a problem by name (:data:`LDP_PROBLEM_NAMES`).

    Synthetic names (``synthetic-se``, ``synthetic-matern``, ``synthetic-se-t``,
    ``synthetic-matern-t``): :func:`synthetic_problem` with ``seed`` (a new ``f`` per trial
    seed) and ``synthetic_kwargs`` (``lengthscale``, ``n_arms``, ``n_support``, ``support``).

    ``light`` / ``stock``: the real file (``path``, or the data roots when ``path`` is None);
    if it is not found and ``allow_surrogate`` is True, the surrogate built with
    ``surrogate_seed`` (fixed across trials, like the real table); ``source`` says which. An
    explicit ``path`` that does not exist, or a sha256 mismatch, is an error (no fallback).
    ``seed`` is not used for them.
    """
    if name in SYNTHETIC_NAMES:
        kernel, noise = SYNTHETIC_NAMES[name]
        return synthetic_problem(seed, kernel=kernel, noise=noise, **synthetic_kwargs)
    if name not in ("light", "stock"):
        raise ValueError(f"name must be one of {list(LDP_PROBLEM_NAMES)}, got {name!r}")
    if synthetic_kwargs:
        raise TypeError(
            f"{sorted(synthetic_kwargs)} apply only to the synthetic problems, not {name!r}"
        )
    loader, relative, surrogate = (
        (light_sensor_problem, LIGHT_FILE, light_sensor_surrogate)
        if name == "light"
        else (stock_problem, STOCK_FILE, stock_surrogate)
    )
    if path is not None or not allow_surrogate:
        return loader(path, verify=verify)
    try:
        resolve_data_path(relative)
    except FileNotFoundError:
        return surrogate(surrogate_seed)
    return loader(None, verify=verify)
