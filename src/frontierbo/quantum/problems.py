"""Quantum BO (Q-GP-UCB) problems: the finite-arm container and the paper's five settings by name.

* :class:`QuantumBOProblem` -- arms in ``[0, 1]^d``, their true mean rewards and the noise;
* :func:`get_quantum_problem` -- the five named settings of the paper (:data:`QUANTUM_PROBLEMS`):
  the 1-D synthetic function (:mod:`frontierbo.quantum.synthetic`) and the Pima AutoML grid
  (:mod:`frontierbo.quantum.automl`); the random Fourier features and the authors' reference file
  are in :mod:`frontierbo.quantum.features`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from frontierbo._validation import check_int, check_matrix, check_positive, check_vector
from frontierbo.quantum.rewards import BernoulliReward, GaussianReward

__all__ = ["NOISE_TYPES", "QUANTUM_PROBLEMS", "QuantumBOProblem", "get_quantum_problem", "readonly"]

PathLike = str | os.PathLike

NOISE_TYPES = ("gaussian", "bernoulli")


def readonly(arr: np.ndarray) -> np.ndarray:
    """A read-only float copy of ``arr``."""
    arr = np.array(arr, dtype=float, copy=True)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class QuantumBOProblem:
    """A finite-arm reward problem for (Q-)GP-UCB / (Q-)LinUCB.

    Attributes:
        name: e.g. ``"synthetic-gauss0.3"``.
        domain: ``(n, d)`` arm inputs in ``[0, 1]^d``.
        values: ``(n,)`` true mean rewards ``f(x_i)``.
        noise: ``"gaussian"`` (reward ``N(f, sigma^2)``) or ``"bernoulli"`` (reward 1 w.p. ``f``).
        sigma: the Gaussian noise standard deviation; None for Bernoulli noise.
        value_at: true mean reward at a continuous input in ``[0, 1]^d`` (the reference code's
            random initial point is continuous): nearest grid point for the synthetic function,
            the SVM accuracy at that point for AutoML.
        info: provenance and extra facts (source, sha256, counts, ...).
    """

    name: str
    domain: np.ndarray
    values: np.ndarray
    noise: str
    sigma: float | None
    value_at: Callable[[np.ndarray], float]
    info: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        domain = check_matrix(self.domain, "domain")
        if domain.min() < 0.0 or domain.max() > 1.0:
            raise ValueError("domain must lie in [0, 1]^d (normalised inputs)")
        values = check_vector(self.values, "values", length=domain.shape[0])
        if self.noise not in NOISE_TYPES:
            raise ValueError(f"noise must be one of {NOISE_TYPES}, got {self.noise!r}")
        if self.noise == "bernoulli":
            if self.sigma is not None:
                raise ValueError(f"sigma must be None for Bernoulli noise, got {self.sigma!r}")
            if values.min() < 0.0 or values.max() > 1.0:
                raise ValueError(
                    "values must lie in [0, 1] for Bernoulli noise (they are probabilities), got "
                    f"range [{values.min():g}, {values.max():g}]"
                )
            sigma = None
        else:
            if self.sigma is None:
                raise ValueError("sigma (the Gaussian noise standard deviation) must be given")
            sigma = check_positive(self.sigma, "sigma")
        if not callable(self.value_at):
            raise TypeError(f"value_at must be callable, got {self.value_at!r}")
        if not isinstance(self.info, dict):
            raise TypeError(f"info must be a dict, got {type(self.info).__name__}")
        object.__setattr__(self, "domain", readonly(domain))
        object.__setattr__(self, "values", readonly(values))
        object.__setattr__(self, "sigma", sigma)

    @property
    def n(self) -> int:
        """Number of arms."""
        return int(self.domain.shape[0])

    @property
    def d(self) -> int:
        """Input dimension."""
        return int(self.domain.shape[1])

    @property
    def f_max(self) -> float:
        """The best mean reward ``max_i f(x_i)``."""
        return float(self.values.max())

    @property
    def best_index(self) -> int:
        """Index of the first arm attaining :attr:`f_max`."""
        return int(np.argmax(self.values))

    @property
    def gaps(self) -> np.ndarray:
        """``f_max - values`` (per-arm instantaneous regret)."""
        return self.f_max - self.values

    def _distribution(self, mean: float) -> BernoulliReward | GaussianReward:
        if self.noise == "bernoulli":
            return BernoulliReward(float(mean))
        return GaussianReward(float(mean), float(self.sigma))

    def reward(self, i: int) -> BernoulliReward | GaussianReward:
        """Reward distribution of arm ``i`` (``0 <= i < n``)."""
        i = check_int(i, "i", low=0, high=self.n - 1)
        return self._distribution(self.values[i])

    def check_point(self, x) -> np.ndarray:
        """``x`` as a length-``d`` vector in ``[0, 1]^d`` (ValueError otherwise)."""
        x = check_vector(np.atleast_1d(np.asarray(x, dtype=float)), "x", length=self.d)
        if x.min() < 0.0 or x.max() > 1.0:
            raise ValueError(f"x must lie in [0, 1]^{self.d}, got {x.tolist()}")
        return x

    def mean_at(self, x) -> float:
        """True mean reward at a continuous input ``x`` in ``[0, 1]^d``."""
        return float(self.value_at(self.check_point(x)))

    def reward_at(self, x) -> BernoulliReward | GaussianReward:
        """Reward distribution at a continuous input ``x`` in ``[0, 1]^d`` (via ``value_at``)."""
        return self._distribution(self.mean_at(x))


_PROBLEM_SPECS: dict[str, tuple[str, dict[str, Any]]] = {
    "synthetic-gauss0.3": ("synthetic", {"noise": "gaussian", "sigma": 0.3}),
    "synthetic-gauss0.4": ("synthetic", {"noise": "gaussian", "sigma": 0.4}),
    "synthetic-bernoulli": ("synthetic", {"noise": "bernoulli", "sigma": None}),
    "automl-sigma0.01": ("automl", {"sigma": 0.01}),
    "automl-sigma0.05": ("automl", {"sigma": 0.05}),
}

#: Names accepted by :func:`get_quantum_problem` (the paper's five settings).
QUANTUM_PROBLEMS = tuple(_PROBLEM_SPECS)


def get_quantum_problem(name: str, **kwargs) -> QuantumBOProblem:
    """Build one of :data:`QUANTUM_PROBLEMS` by name.

    Synthetic names accept ``source`` (``"reference"`` default, or ``"generated"``), ``seed``,
    ``path`` and ``verify``; AutoML names accept ``path``, ``verify`` and ``svm``.  The noise type
    and ``sigma`` are fixed by the name.
    """
    if name not in _PROBLEM_SPECS:
        raise ValueError(f"name must be one of {list(QUANTUM_PROBLEMS)}, got {name!r}")
    kind, fixed = _PROBLEM_SPECS[name]
    clash = sorted(set(kwargs) & ({"noise", "sigma"}))
    if clash:
        raise TypeError(f"{clash} are fixed by the problem name {name!r}; pick another name")
    allowed = (
        {"source", "seed", "path", "verify"} if kind == "synthetic" else {"path", "verify", "svm"}
    )
    unknown = sorted(set(kwargs) - allowed)
    if unknown:
        raise TypeError(f"{unknown} do not apply to {name!r}; allowed: {sorted(allowed)}")
    # imported here: both modules build on this one's container
    if kind == "synthetic":
        from frontierbo.quantum.synthetic import synthetic_problem

        return synthetic_problem(**fixed, **kwargs)
    from frontierbo.quantum.automl import automl_problem

    return automl_problem(**fixed, **kwargs)
