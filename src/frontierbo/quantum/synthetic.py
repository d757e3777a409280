"""The 1-D synthetic problem of quantum BO (Section 6 of the paper): 20 arms ``linspace(0, 1, 20)``
whose values are either the authors' published GP sample (``source="reference"``, read at run time
from the data root, :mod:`frontierbo.quantum.features`) or the project's own draw with the same
recipe (``source="generated"``, docs/decisions.md#quantum-bo-generated-synthetic-function).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from frontierbo._validation import SeedLike, as_generator, check_int, check_positive, check_vector
from frontierbo.core.sampling import sample_from_roots
from frontierbo.quantum.features import (
    REFERENCE_SHA256,
    load_reference_validation_data,
    reference_section,
)
from frontierbo.quantum.problems import NOISE_TYPES, PathLike, QuantumBOProblem, readonly

__all__ = ["SOURCES", "generate_synthetic_values", "synthetic_problem"]

SOURCES = ("reference", "generated")

SYNTHETIC_N_ARMS = 20
SYNTHETIC_LENGTHSCALE = 0.1
SYNTHETIC_VARIANCE = 1.0
SYNTHETIC_JITTER = 1e-10


def _se_gram(x: np.ndarray, lengthscale: float, variance: float) -> np.ndarray:
    sq = (x[:, None, :] - x[None, :, :]) ** 2
    return variance * np.exp(-0.5 * sq.sum(axis=-1) / lengthscale**2)


def generate_synthetic_values(seed: SeedLike = 0, n_arms: int = SYNTHETIC_N_ARMS) -> np.ndarray:
    """The project's own synthetic function: one draw from ``N(0, K)`` with ``K`` the SE Gram
    matrix on ``linspace(0, 1, n_arms)`` (length scale 0.1, variance 1, +1e-10 jitter), min-max
    scaled to ``[0, 1]``.  The draw is ``L z`` with ``L`` the Cholesky factor and ``z ~ N(0, I)``
    from the seeded generator (``core.sampling.sample_from_roots``;
    docs/decisions.md#quantum-bo-generated-synthetic-function)."""
    n_arms = check_int(n_arms, "n_arms", low=2)
    gen = as_generator(seed)
    grid = np.linspace(0.0, 1.0, n_arms)[:, None]
    K = _se_gram(grid, SYNTHETIC_LENGTHSCALE, SYNTHETIC_VARIANCE)
    f = sample_from_roots([np.linalg.cholesky(K + SYNTHETIC_JITTER * np.eye(n_arms))], seed=gen)[0]
    span = f.max() - f.min()
    if span <= 0.0:  # pragma: no cover - a constant draw has probability zero
        raise ValueError("the GP draw is constant; use another seed")
    return (f - f.min()) / span


class _NearestGridValue:
    """``value_at`` of a grid function: the value of the nearest grid point (first on ties)."""

    def __init__(self, domain: np.ndarray, values: np.ndarray):
        self._domain = readonly(domain)
        self._values = readonly(values)

    def index(self, x) -> int:
        x = np.asarray(x, dtype=float).reshape(-1)
        return int(np.argmin(np.sum((self._domain - x) ** 2, axis=1)))

    def __call__(self, x) -> float:
        return float(self._values[self.index(x)])

    def __repr__(self) -> str:
        return f"NearestGridValue(n={self._domain.shape[0]})"


def synthetic_problem(
    noise: str = "gaussian",
    sigma: float | None = 0.3,
    source: str = "reference",
    seed: SeedLike = 0,
    path: PathLike | None = None,
    *,
    verify: bool = True,
) -> QuantumBOProblem:
    """The 1-D synthetic problem (Section 6 of the paper): 20 arms ``linspace(0, 1, 20)``.

    Args:
        noise: ``"gaussian"`` (``N(f, sigma^2)``) or ``"bernoulli"`` (1 w.p. ``f``).
        sigma: Gaussian noise standard deviation (paper: 0.3 or 0.4); ignored (set to None)
            for Bernoulli noise.
        source: ``"reference"`` -- the authors' 20 values read from ``quantum/synth_function.json``
            (unlicensed; read at run time for validation/comparison, never shipped);
            ``"generated"`` -- the project's own GP draw (:func:`generate_synthetic_values`).
        seed: seed of the generated draw (unused for ``"reference"``).
        path: explicit path of the reference JSON (``"reference"`` only).
        verify: check the reference file's sha256.

    ``value_at(x)`` is the value of the grid point nearest to ``x`` (the reference code snaps its
    continuous initial point to the grid).
    """
    if noise not in NOISE_TYPES:
        raise ValueError(f"noise must be one of {NOISE_TYPES}, got {noise!r}")
    if source not in SOURCES:
        raise ValueError(f"source must be one of {SOURCES}, got {source!r}")
    domain = np.linspace(0.0, 1.0, SYNTHETIC_N_ARMS)[:, None]
    info: dict[str, Any] = {
        "source": source,
        "gp_lengthscale": SYNTHETIC_LENGTHSCALE,
        "gp_variance": SYNTHETIC_VARIANCE,
    }
    if source == "reference":
        data = load_reference_validation_data(path, verify=verify)
        section = reference_section(data, "synthetic")
        values = check_vector(section.get("f"), "reference synthetic f", length=SYNTHETIC_N_ARMS)
        info.update(file=data["_file"], sha256=REFERENCE_SHA256 if verify else None)
        info["licence"] = "unlicensed authors' data: validation/comparison only"
    else:
        if path is not None:
            raise ValueError("path applies only to source='reference'")
        values = generate_synthetic_values(seed)
        info.update(seed=seed if not isinstance(seed, np.random.Generator) else None)
    if noise == "bernoulli":
        sigma = None
        name = "synthetic-bernoulli"
    else:
        if sigma is None:
            raise ValueError("sigma must be given for Gaussian noise")
        sigma = check_positive(sigma, "sigma")
        name = f"synthetic-gauss{sigma:g}"
    return QuantumBOProblem(
        name=name,
        domain=domain,
        values=values,
        noise=noise,
        sigma=sigma,
        value_at=_NearestGridValue(domain, values),
        info=info,
    )
