"""UCB acquisition on a finite domain: the scores, the one selection rule, the GP-UCB schedule.

Two names, one meaning each, library-wide:

* ``beta`` is the beta of Srinivas et al. (2010) and of BoTorch's ``UpperConfidenceBound``:
  ``UCB = mean + sqrt(beta) * std``. :func:`beta_srinivas`, :func:`make_beta_schedule`,
  :func:`ucb` and ``GPUCB(beta=...)`` use it.
* ``width`` is a multiplier of the standard deviation: ``UCB = mean + width * std``, so
  ``width = sqrt(beta)`` (:func:`width_from_beta`). :func:`ucb_scores` and :func:`select_ucb`
  take a width, and so do the LDP and quantum algorithms, whose papers write their sigma
  multiplier as ``beta_t`` (the LDP paper functions keep that symbol in their names, e.g.
  :func:`frontierbo.ldp.parameters.ata_beta`, and document that they return a width).

Selection (:func:`select_ucb`, :func:`select_max`) is written once here for every UCB method:
rows in ``exclude`` (observed rows, as an index array or a boolean mask) get ``-inf``; ties are
broken by the lowest index (``ties="lowest"``, as ``np.argmax``) or uniformly at random among the
exactly tied rows with the caller's seeded generator (``ties="random"``: one
``rng.choice(tied)`` call, made only when two or more rows tie); a selection with every row
excluded raises :class:`AllExcludedError`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from frontierbo._validation import check_int, check_positive, check_probability, check_real

__all__ = [
    "TIES",
    "AllExcludedError",
    "beta_srinivas",
    "make_beta_schedule",
    "select_max",
    "select_ucb",
    "ucb",
    "ucb_scores",
    "width_from_beta",
]

#: The tie rules of :func:`select_max`.
TIES = ("lowest", "random")
_NEG_INF = -math.inf


class AllExcludedError(ValueError):
    """Every row was excluded from a selection: nothing is left to choose."""


# -- the GP-UCB schedule (beta: sqrt(beta) multiplies std) ------------------------------------
def beta_srinivas(t: int, n: int, delta: float) -> float:
    """GP-UCB's ``beta_t = 2 log(n t^2 pi^2 / (6 delta))`` (Srinivas et al. 2010, Thm 1).

    ``t >= 1`` is the UCB round, ``n`` the number of candidates, ``delta`` in (0, 1). A beta:
    the UCB is ``mean + sqrt(beta_t) * std``.
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


def width_from_beta(beta: float) -> float:
    """The width ``sqrt(beta)`` of a beta in [0, inf) (module docstring)."""
    if isinstance(beta, float | np.floating) and 0.0 <= beta < math.inf:  # GPUCB.ask's fast path
        return math.sqrt(beta)
    return math.sqrt(check_real(beta, "beta", low=0.0, low_open=False))


# -- scores ------------------------------------------------------------------------------------
def ucb_scores(mean, std, width: float, *, out: np.ndarray | None = None) -> np.ndarray:
    """``mean + width * std`` (n,), written into ``out`` if given (``out`` may be ``std`` itself).

    Two passes over n and no temporary when ``out`` is given. ``width`` in [0, inf).
    """
    if not 0.0 <= width < math.inf:  # also rejects NaN
        raise ValueError(f"width must be in [0, inf), got {width!r}")
    if _shape(mean) != _shape(std):
        raise ValueError(
            f"mean and std must have the same shape, got {np.shape(mean)} and {np.shape(std)}"
        )
    out = np.multiply(std, width, out=out)
    out += mean
    return out


def ucb(mean, std, beta: float, *, out: np.ndarray | None = None) -> np.ndarray:
    """Upper confidence bound ``mean + sqrt(beta) * std`` (elementwise; ``beta`` in [0, inf))."""
    return ucb_scores(mean, std, width_from_beta(beta), out=out)


# -- selection -----------------------------------------------------------------------------------
def select_ucb(
    mean,
    std,
    width: float,
    *,
    exclude=None,
    ties: str = "lowest",
    rng: np.random.Generator | None = None,
    out: np.ndarray | None = None,
) -> int:
    """The row maximising ``mean + width * std``: :func:`ucb_scores`, then :func:`select_max`.

    ``out`` receives the scores (excluded rows set to ``-inf``); it may be ``std`` itself, so a
    caller that computes ``std`` into a buffer selects with no temporary array.
    """
    scores = ucb_scores(mean, std, width, out=out)
    return select_max(scores, exclude=exclude, ties=ties, rng=rng)


def select_max(
    scores: np.ndarray,
    *,
    exclude=None,
    ties: str = "lowest",
    rng: np.random.Generator | None = None,
) -> int:
    """Index of the largest of ``scores`` (n,) outside ``exclude``.

    Parameters
    ----------
    scores : float array (n,)
        Modified in place when ``exclude`` is given (its rows are set to ``-inf``).
    exclude : None, integer array of row indices, or boolean mask (n,)
        Indices follow numpy indexing (in [-n, n), a negative one counts from the end).
    ties : ``"lowest"`` (default) or ``"random"``
        ``"random"``: uniformly among the rows equal to the maximum, by one
        ``rng.choice(tied_rows)`` call made only when two or more rows tie (so a run's random
        stream does not depend on how often there was no tie to break).
    rng : numpy Generator, required for ``ties="random"``
    """
    if ties != "lowest" and ties != "random":
        raise ValueError(f"ties must be one of {TIES}, got {ties!r}")
    if ties == "random" and not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator for ties='random', got {rng!r}")
    if exclude is not None:
        rows = _rows(exclude, scores.shape[0])
        try:
            scores[rows] = -np.inf
        except IndexError:
            raise ValueError(
                f"exclude must hold row indices in [-{scores.shape[0]}, {scores.shape[0]}), "
                f"got {exclude!r}"
            ) from None
    if ties == "lowest":
        i = int(scores.argmax())  # the method: np.argmax's dispatch costs ~10% of GPUCB.ask
        if not scores[i] > _NEG_INF:  # -inf or NaN: a rare path, so the O(n) checks live there
            _unselectable(scores, exclude)
        return i
    top = scores.max()
    if not top > _NEG_INF:
        _unselectable(scores, exclude)
    best = np.flatnonzero(scores == top)
    return int(best[0]) if best.shape[0] == 1 else int(rng.choice(best))


def _shape(a) -> tuple:
    return a.shape if isinstance(a, np.ndarray) else np.shape(a)


def _rows(exclude, n: int) -> np.ndarray:
    """``exclude`` as a 1-D integer index array or a boolean mask of n rows (shape checked)."""
    rows = exclude if isinstance(exclude, np.ndarray) else np.asarray(exclude)
    kind = rows.dtype.kind
    if rows.ndim == 1 and kind in "iu":  # GPUCB.ask's path: no copy, no pass over the rows
        return rows
    if kind == "b":
        if rows.shape != (n,):
            raise ValueError(f"exclude as a boolean mask must have shape ({n},), got {rows.shape}")
        return rows
    if rows.ndim == 1 and rows.size == 0:  # [] is float to numpy
        return rows.astype(np.intp)
    raise TypeError(
        f"exclude must be a 1-D array of row indices or a boolean mask, got {exclude!r}"
    )


def _unselectable(scores: np.ndarray, exclude) -> None:
    """Raise the reason why no row has a score above -inf."""
    n = scores.shape[0]
    if np.isnan(scores).any():
        raise ValueError("the UCB scores contain NaN: check the posterior and the width")
    if exclude is not None:
        excluded = np.zeros(n, dtype=bool)
        excluded[_rows(exclude, n)] = True
        if excluded.all():
            raise AllExcludedError(f"every row is excluded ({n} of {n}): nothing left to select")
    raise ValueError("no row outside exclude has a UCB score above -inf")
