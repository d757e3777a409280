"""Synthetic GP data set of the PO-GP-UCB paper (Section 4): a GP sample on a 100 x 100 grid.

Two geometries (:data:`SYNTHETIC_GEOMETRIES`):

* ``"authors"`` (the default): the setting of the authors' public code (``Mitan/po-gp-ucb``,
  ``SimulatedDomainDescriptor`` and ``HypersStorerFactory``): the grid [-1, 1]^2 scaled by
  25 / sqrt(2) (max row norm 25), length-scale 0.25 * 25 = 6.25 in those units (5.66
  length-scales per axis), signal variance 1, noise variance 1e-5, and a new GP sample for every
  run (the code draws one per seed folder).
* ``"table1"``: linspace(-4, 4, 100)^2 with l = 1.25 in grid units (6.4 length-scales per axis),
  one sample shared by every run of a base seed. Chosen before the authors' code was read
  because it matched the PO cells of Table 1 best; kept for comparison
  (docs/decisions.md#po-gp-ucb-synthetic-grid-geometry).

The SE kernel factorises over coordinates, so on a product grid its covariance matrix is a
Kronecker product K = K1 (x) K2 of the two 1-D kernel matrices. A sample is then
F = sigma_y * L1 W L2^T with L_i = chol(K_i) and W standard normal (the core's sampler,
``core.sampling.sample_from_roots``): O(N^3) instead of O(N^6) for the dense 10^4 x 10^4
Cholesky, well under a millisecond for N = 100.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from frontierbo._threads import one_blas_thread
from frontierbo._validation import SeedLike, as_generator, check_int, check_positive, check_vector
from frontierbo.core.exact import cholesky_with_jitter
from frontierbo.core.sampling import sample_from_roots
from frontierbo.po.problems.base import Problem, preprocess_inputs, singular_values

#: Named geometries of the synthetic grid (the keyword arguments of :func:`synthetic_gp_grid`).
SYNTHETIC_GEOMETRIES: dict[str, dict] = {
    "authors": {"half_width": 25.0 / math.sqrt(2.0), "lengthscale": 0.25 * 25.0, "per_run": True},
    "table1": {"half_width": 4.0, "lengthscale": 1.25, "per_run": False},
}
DEFAULT_GEOMETRY = "authors"

# Relative jitter (times sigma_y^2) for the 1-D factors; raised by x10 only if a factor fails.
_REL_JITTER = 1e-10
_JITTERS = tuple(_REL_JITTER * 10.0**k for k in range(12))


def grid_inputs(g1, g2) -> np.ndarray:
    """All points of the product grid g1 x g2 as an (len(g1) * len(g2), 2) matrix.

    Row order: row ``i = a * len(g2) + b`` holds ``(g1[a], g2[b])``, which is the order of
    ``np.kron(K1, K2)`` and of ``F.ravel()`` for an (len(g1), len(g2)) array F (C order).
    """
    g1 = check_vector(g1, "g1")
    g2 = check_vector(g2, "g2")
    A, B = np.meshgrid(g1, g2, indexing="ij")
    return np.column_stack([A.ravel(), B.ravel()])


def _se_1d(g: np.ndarray, lengthscale: float) -> np.ndarray:
    """Unit-variance 1-D SE kernel matrix exp(-0.5 (g_a - g_b)^2 / l^2), shape (len(g), len(g))."""
    diff = g[:, None] - g[None, :]
    return np.exp(-0.5 * (diff / lengthscale) ** 2)


def sample_gp_on_grid(
    g1,
    g2,
    lengthscale: float,
    signal_variance: float = 1.0,
    seed: SeedLike = None,
    size: int = 1,
) -> tuple[np.ndarray, float]:
    """Draw zero-mean SE-GP samples on the product grid g1 x g2 via the Kronecker factors.

    Args:
        g1, g2: 1-D grid coordinates (original units) of the first and second input.
        lengthscale: isotropic SE length-scale in the same units.
        signal_variance: sigma_y^2.
        seed: int, Generator or None.
        size: number of independent samples.

    Returns:
        (F, jitter): F has shape (size, len(g1) * len(g2)), columns in the row order of
        :func:`grid_inputs`; jitter is the relative jitter added to each unit-variance 1-D factor.
        The samples have covariance sigma_y^2 (K1 + j I) (x) (K2 + j I), i.e. the exact kernel
        plus a perturbation of variance about 2 j sigma_y^2 per point (2e-10 by default),
        negligible next to any noise variance used here.
    """
    g1 = check_vector(g1, "g1")
    g2 = check_vector(g2, "g2")
    lengthscale = check_positive(lengthscale, "lengthscale")
    sigma = math.sqrt(check_positive(signal_variance, "signal_variance"))
    size = check_int(size, "size", low=1)
    rng = as_generator(seed)
    # One BLAS thread: a threaded Cholesky or product rounds differently with the thread count,
    # and the same seed must give the same sample (and problem checksum, a run's identity).
    with one_blas_thread():
        L1, j1 = cholesky_with_jitter(_se_1d(g1, lengthscale), _JITTERS)
        L2, j2 = cholesky_with_jitter(_se_1d(g2, lengthscale), _JITTERS)
        # F_k = L1 W_k L2^T: cov(F[a, b], F[a', b']) = K1[a, a'] K2[b, b'] = kron(K1, K2)[i, i']
        F = sigma * sample_from_roots([L1, L2], size=size, seed=rng)
    return F, max(j1, j2)


def synthetic_gp_grid(
    seed: SeedLike = 0,
    grid_size: int = 100,
    half_width: float | None = None,
    lengthscale: float | None = None,
    signal_variance: float = 1.0,
    noise_variance: float = 1e-5,
    geometry: str = DEFAULT_GEOMETRY,
    per_run: bool | None = None,
) -> Problem:
    """The synthetic GP data set: f ~ GP(0, SE) sampled on linspace(-h, h, N)^2.

    f is drawn in the original grid units with ``lengthscale``; the inputs are then centred and
    scaled to max row norm 25 (s = 25 / (h sqrt 2)), so the modeler's length-scale is
    ``lengthscale * s``. ``geometry`` names the defaults of ``half_width``, ``lengthscale`` and
    ``per_run`` (module docstring); an explicit argument overrides its entry.

    ``per_run``: whether a reproduction draws a new sample for every run (:func:`resample`,
    seeded per run index) instead of sharing this one; recorded in ``meta["per_run"]``.

    Returns:
        Problem with inputs (N^2, 2), values (N^2,) = the noise-free sample, prior mean 0 and
        oracle noise std sqrt(noise_variance).
    """
    if geometry not in SYNTHETIC_GEOMETRIES:
        raise ValueError(
            f"geometry must be one of {sorted(SYNTHETIC_GEOMETRIES)}, got {geometry!r}"
        )
    named = SYNTHETIC_GEOMETRIES[geometry]
    half_width = named["half_width"] if half_width is None else half_width
    lengthscale = named["lengthscale"] if lengthscale is None else lengthscale
    per_run = named["per_run"] if per_run is None else bool(per_run)
    grid_size = check_int(grid_size, "grid_size", low=2)
    half_width = check_positive(half_width, "half_width")
    lengthscale = check_positive(lengthscale, "lengthscale")
    signal_variance = check_positive(signal_variance, "signal_variance")
    noise_variance = check_positive(noise_variance, "noise_variance")
    g = np.linspace(-half_width, half_width, grid_size)
    F, jitter = sample_gp_on_grid(g, g, lengthscale, signal_variance, seed=seed)
    X, s = preprocess_inputs(grid_inputs(g, g))
    return Problem(
        name="synthetic",
        inputs=X,
        values=F[0],
        lengthscale=lengthscale * s,
        signal_variance=signal_variance,
        noise_variance=noise_variance,
        prior_mean=0.0,
        observation_noise_std=math.sqrt(noise_variance),
        source=f"generated (SE-GP sample on a {grid_size}x{grid_size} grid, Kronecker factors)",
        meta={
            "seed": seed if not isinstance(seed, np.random.Generator) else "generator",
            "geometry": geometry,
            "grid_size": grid_size,
            "half_width": half_width,
            "raw_lengthscale": lengthscale,
            "per_run": per_run,
            "scale": s,
            "relative_jitter": jitter,
            "singular_values": singular_values(X).tolist(),
        },
    )


def resample(problem: Problem, seed: SeedLike) -> Problem:
    """``problem`` with a new GP sample as its values (same grid, kernel and hyperparameters).

    For a problem made by :func:`synthetic_gp_grid` (its ``meta`` holds the generator's
    parameters); a run of a reproduction with ``meta["per_run"]`` uses its own sample.
    """
    meta = problem.meta
    try:
        grid_size, half_width = meta["grid_size"], meta["half_width"]
        lengthscale = meta["raw_lengthscale"]
    except KeyError:
        raise ValueError(
            f"problem {problem.name!r} was not made by synthetic_gp_grid: cannot resample it"
        ) from None
    g = np.linspace(-half_width, half_width, grid_size)
    F, _ = sample_gp_on_grid(g, g, lengthscale, problem.signal_variance, seed=seed)
    return replace(problem, values=F[0], meta={**meta, "seed": seed})
