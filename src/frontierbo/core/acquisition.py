"""Acquisition functions on a finite domain and the GP-UCB exploration schedule."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from frontierbo._validation import check_int, check_positive, check_probability


def beta_srinivas(t: int, n: int, delta: float) -> float:
    """GP-UCB's ``beta_t = 2 log(n t^2 pi^2 / (6 delta))`` (Srinivas et al. 2010, Thm 1).

    ``t >= 1`` is the UCB round, ``n`` the number of candidates, ``delta`` in (0, 1).
    """
    t = check_int(t, "t", low=1)
    n = check_int(n, "n", low=1)
    delta = check_probability(delta, "delta")
    return 2.0 * np.log(n * t * t * np.pi**2 / (6.0 * delta))


def make_beta_schedule(beta, n: int, delta: float) -> Callable[[int], float]:
    """``beta`` may be ``"srinivas"``, a positive constant, or a callable ``t -> beta_t``."""
    if isinstance(beta, str):
        if beta != "srinivas":
            raise ValueError(
                f"beta must be 'srinivas', a positive number or a callable, got {beta!r}"
            )
        check_probability(delta, "delta")
        return lambda t: beta_srinivas(t, n, delta)
    if callable(beta):
        return beta
    value = check_positive(beta, "beta")
    return lambda t: value


def ucb(mean: np.ndarray, std: np.ndarray, beta: float) -> np.ndarray:
    """Upper confidence bound ``mean + sqrt(beta) * std`` (elementwise)."""
    return mean + np.sqrt(beta) * std
