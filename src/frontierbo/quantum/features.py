"""Random Fourier features and the authors' reference file (their synthetic function and RFF
draws) for quantum BO (Q-GP-UCB).

* :class:`RandomFourierFeatures` -- the "cosine-normalised" random Fourier features (Appendix J of
  the paper;
  docs/decisions.md#quantum-bo-random-fourier-features-normalised-as-in-the-reference-code),
  ``phi(x) = sqrt(v) * c(x) / ||c(x)||_2`` with ``c(x) = sqrt(2/M) cos(s x + b)``, so that
  ``phi(x) . phi(x) = v`` exactly.  Used by GP-UCB and Q-GP-UCB alike.
* :func:`load_reference_validation_data`, :func:`reference_features` -- ``quantum/synth_function.json``
  (found by :func:`frontierbo.data.resolve_data_path`: an explicit ``path``, the
  ``FRONTIERBO_DATA`` root, or ``../shared/data``): numbers from the authors' repository, which
  has **no licence**.  It is read at run time for validation and comparison only and is never
  copied into the package.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass

import numpy as np

from frontierbo._validation import (
    SeedLike,
    as_generator,
    check_int,
    check_matrix,
    check_positive,
    check_vector,
)
from frontierbo.data import KNOWN_SHA256, resolve_data_path, verify_sha256
from frontierbo.quantum.problems import readonly

__all__ = [
    "REFERENCE_FILE",
    "REFERENCE_RFF_KEYS",
    "REFERENCE_SHA256",
    "RandomFourierFeatures",
    "load_reference_validation_data",
    "reference_features",
    "reference_section",
]

PathLike = str | os.PathLike

REFERENCE_FILE = "quantum/synth_function.json"
REFERENCE_SHA256 = KNOWN_SHA256[REFERENCE_FILE]
REFERENCE_RFF_KEYS = (
    "rff_synth_sigma0.3",
    "rff_synth_sigma0.4_and_bernoulli",
    "rff_automl_qgpucb_ls0.2",
    "rff_automl_gpucb_ls1.0",
)


@dataclass(frozen=True, eq=False)
class RandomFourierFeatures:
    """Cosine-normalised random Fourier features
    (docs/decisions.md#quantum-bo-random-fourier-features-normalised-as-in-the-reference-code).

    ``phi(x) = sqrt(v) * c(x) / ||c(x)||_2`` with ``c(x) = sqrt(2/M) cos(s x + b)``.  The
    ``sqrt(2/M)`` factor cancels in the normalisation and is kept only to mirror the reference
    code.  ``phi(x) . phi(x) = v`` for every ``x``, so the implied kernel has constant diagonal
    ``v``; it is *not* the plain RFF approximation of the SE kernel (which has no normalisation).

    Attributes:
        frequencies: ``s``, shape ``(M, d)`` (rows ``~ N(0, l^-2 I)`` for an SE kernel of
            length scale ``l``).
        phases: ``b``, shape ``(M,)`` (``~ U[0, 2 pi)``).
        variance: ``v > 0`` (``v_kernel`` of the reference code).
    """

    frequencies: np.ndarray
    phases: np.ndarray
    variance: float = 1.0

    def __post_init__(self):
        s = check_matrix(self.frequencies, "frequencies")
        b = check_vector(self.phases, "phases")
        if b.shape[0] != s.shape[0]:
            raise ValueError(
                f"phases must have one entry per frequency row: frequencies has {s.shape[0]} "
                f"rows, phases has {b.shape[0]}"
            )
        v = check_positive(self.variance, "variance")
        object.__setattr__(self, "frequencies", readonly(s))
        object.__setattr__(self, "phases", readonly(b))
        object.__setattr__(self, "variance", v)

    @property
    def num_features(self) -> int:
        """``M``."""
        return int(self.frequencies.shape[0])

    @property
    def dim(self) -> int:
        """``d``, the input dimension."""
        return int(self.frequencies.shape[1])

    @classmethod
    def draw(
        cls,
        d: int,
        M: int,
        lengthscale: float,
        variance: float = 1.0,
        rng: SeedLike = None,
    ) -> RandomFourierFeatures:
        """Draw ``s`` with rows ``~ N(0, lengthscale^-2 I_d)`` and ``b ~ U[0, 2 pi)`` (plain RFF).

        ``rng`` is an int seed, a ``numpy.random.Generator`` or None (fresh entropy).  The
        frequencies are drawn before the phases.
        """
        d = check_int(d, "d", low=1)
        M = check_int(M, "M", low=1)
        lengthscale = check_positive(lengthscale, "lengthscale")
        gen = as_generator(rng, "rng")
        frequencies = gen.normal(0.0, 1.0 / lengthscale, size=(M, d))
        phases = gen.uniform(0.0, 2.0 * math.pi, size=M)
        return cls(frequencies, phases, variance)

    def __call__(self, X) -> np.ndarray:
        """Features of the rows of ``X`` (shape ``(n, d)``; a 1-D array is ``n`` points when
        ``d == 1``): an ``(n, M)`` array whose rows have squared 2-norm ``variance``."""
        X = check_matrix(X, "X", n_cols=self.dim)
        raw = math.sqrt(2.0 / self.num_features) * np.cos(X @ self.frequencies.T + self.phases)
        norms = np.linalg.norm(raw, axis=1, keepdims=True)
        if np.any(norms == 0.0):
            raise ValueError(
                "a feature vector is exactly zero, so it cannot be normalised; draw new features"
            )
        return math.sqrt(self.variance) * raw / norms

    def gram(self, X, Y=None) -> np.ndarray:
        """The feature kernel ``Phi(X) Phi(Y)^T`` (``Y = X`` by default): ``(n, m)``."""
        phi_x = self(X)
        phi_y = phi_x if Y is None else self(Y)
        return phi_x @ phi_y.T


# --------------------------------------------------------------------------- reference data


def load_reference_validation_data(path: PathLike | None = None, *, verify: bool = True) -> dict:
    """Read ``quantum/synth_function.json`` (the authors' numbers) and return it as a dict.

    The file holds numbers extracted from the authors' public repository
    ``daizhongxiang/Quantum_Bayesian_Optimization``, which has **no licence**.  It is therefore read
    at run time from the data root (``path``, ``$FRONTIERBO_DATA`` or ``../shared/data``, see
    :func:`frontierbo.data.resolve_data_path`) and never copied into the package; use it
    for validation and comparison only (e.g. checking that a run reproduces the published regret
    curves).  The project's own equivalent function and RFF draws come from
    :func:`synthetic_problem` with ``source="generated"`` and :meth:`RandomFourierFeatures.draw`.

    Args:
        path: explicit path of the JSON file; by default the data roots are searched.
        verify: check the file's sha256 (:data:`REFERENCE_SHA256`).

    Raises:
        FileNotFoundError: the file is not found (the message lists the places searched).
        ValueError: sha256 mismatch, or the file is not a JSON object.
    """
    file = resolve_data_path(REFERENCE_FILE, path)
    if verify:
        verify_sha256(file, REFERENCE_SHA256)
    with open(file, encoding="utf-8") as fh:
        try:
            data = json.load(fh)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{str(file)!r} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{str(file)!r} must hold a JSON object, got {type(data).__name__}")
    data["_file"] = str(file)
    return data


def reference_section(data: dict, key: str) -> dict:
    """``data[key]`` of the reference file, a dict (ValueError naming the file otherwise)."""
    section = data.get(key)
    if not isinstance(section, dict):
        raise ValueError(f"reference data file {data.get('_file', '?')!r} has no section {key!r}")
    return section


def reference_features(
    key: str,
    path: PathLike | None = None,
    *,
    verify: bool = True,
    data: dict | None = None,
) -> RandomFourierFeatures:
    """The authors' RFF draw stored under ``key`` (one of :data:`REFERENCE_RFF_KEYS`).

    ``rff_synth_*``: ``M = 100``, ``d = 1``, ``v = 1`` (the two synthetic draws are identical);
    ``rff_automl_qgpucb_ls0.2`` / ``rff_automl_gpucb_ls1.0``: ``M = 200``, ``d = 2``, ``v = 0.5``.
    ``data`` (a dict from :func:`load_reference_validation_data`) avoids reading the file again.
    Validation/comparison only (see :func:`load_reference_validation_data`).
    """
    if key not in REFERENCE_RFF_KEYS:
        raise ValueError(f"key must be one of {list(REFERENCE_RFF_KEYS)}, got {key!r}")
    if data is None:
        data = load_reference_validation_data(path, verify=verify)
    section = reference_section(data, key)
    try:
        features = RandomFourierFeatures(
            np.asarray(section["s"], dtype=float),
            np.asarray(section["b"], dtype=float),
            float(section["v_kernel"]),
        )
    except KeyError as exc:
        raise ValueError(f"reference RFF section {key!r} lacks the field {exc.args[0]!r}") from None
    if "M" in section and int(section["M"]) != features.num_features:
        raise ValueError(
            f"reference RFF section {key!r}: M = {section['M']} but s has "
            f"{features.num_features} rows"
        )
    return features
