"""Quantum BO (Q-GP-UCB) problems: the 1-D synthetic function, the Pima AutoML grid, RFF features.

* :class:`RandomFourierFeatures` -- the "cosine-normalised" random Fourier features (Appendix J of
  the paper;
  docs/decisions.md#quantum-bo-random-fourier-features-normalised-as-in-the-reference-code),
  ``phi(x) = sqrt(v) * c(x) / ||c(x)||_2`` with ``c(x) = sqrt(2/M) cos(s x + b)``, so that
  ``phi(x) . phi(x) = v`` exactly.  Used by GP-UCB and Q-GP-UCB alike.
* :func:`synthetic_problem` -- 20 arms ``linspace(0, 1, 20)``; the values are either the authors'
  published GP sample (``source="reference"``, read at run time from the data root) or the
  project's own draw with the same recipe (``source="generated"``,
  docs/decisions.md#quantum-bo-generated-synthetic-function).
* :func:`automl_problem` -- tuning an RBF SVM (``C``, ``gamma``) on the Pima Indians Diabetes data;
  25 arms on a 5x5 grid of normalised inputs, reward = validation accuracy (Section 6 of the
  paper).  Needs scikit-learn (extra ``frontierbo[automl]``).
* :func:`get_quantum_problem` -- the five named settings of the paper (:data:`QUANTUM_PROBLEMS`).

Data files (found by :func:`frontierbo.data.resolve_data_path`: an explicit ``path``, the
``FRONTIERBO_DATA`` root, or ``../shared/data``):

* ``quantum/synth_function.json`` -- numbers from the authors' repository, which has **no licence**.
  It is read at run time for validation and comparison only and is never copied into the package.
* ``pima/diabetes.csv`` -- the Pima data (CC0).
"""

from __future__ import annotations

import functools
import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

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
from frontierbo.quantum.rewards import BernoulliReward, GaussianReward

__all__ = [
    "AUTOML_GRID",
    "NOISE_TYPES",
    "PIMA_COLUMNS",
    "PIMA_FILE",
    "PIMA_SHA256",
    "QUANTUM_PROBLEMS",
    "REFERENCE_FILE",
    "REFERENCE_RFF_KEYS",
    "REFERENCE_SHA256",
    "QuantumBOProblem",
    "RandomFourierFeatures",
    "SVMAccuracy",
    "automl_domain",
    "automl_problem",
    "generate_synthetic_values",
    "get_quantum_problem",
    "load_pima",
    "load_reference_validation_data",
    "reference_features",
    "svm_hyperparameters",
    "synthetic_problem",
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

PIMA_FILE = "pima/diabetes.csv"
PIMA_SHA256 = KNOWN_SHA256[PIMA_FILE]
PIMA_COLUMNS = (
    "Pregnancies",
    "Glucose",
    "BloodPressure",
    "SkinThickness",
    "Insulin",
    "BMI",
    "DiabetesPedigreeFunction",
    "Age",
    "Outcome",
)
PIMA_ROWS, PIMA_POSITIVES = 768, 268

NOISE_TYPES = ("gaussian", "bernoulli")
SOURCES = ("reference", "generated")

#: Normalised grid of each AutoML input
#: (docs/decisions.md#quantum-bo-automl-grid-and-split-as-in-the-reference-code); index ``5*i + j``
#: is ``(grid[i], grid[j])``.
AUTOML_GRID = (0.0, 0.25, 0.5, 0.75, 1.0)
#: ``C = u0 * (1 - 1e-4) + 1e-4`` and the same for ``gamma`` (reference code).
HYPER_LOW = 1e-4

SYNTHETIC_N_ARMS = 20
SYNTHETIC_LENGTHSCALE = 0.1
SYNTHETIC_VARIANCE = 1.0
SYNTHETIC_JITTER = 1e-10

_AUTOML_EXTRA_MSG = (
    "the AutoML (Pima SVM) problem needs scikit-learn; install it with "
    "`pip install 'frontierbo[automl]'` (or `pip install 'scikit-learn>=1.3'`)"
)


def _readonly(arr: np.ndarray) -> np.ndarray:
    arr = np.array(arr, dtype=float, copy=True)
    arr.setflags(write=False)
    return arr


# --------------------------------------------------------------------------- random features


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
        object.__setattr__(self, "frequencies", _readonly(s))
        object.__setattr__(self, "phases", _readonly(b))
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


def _reference_section(data: dict, key: str) -> dict:
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
    section = _reference_section(data, key)
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


# --------------------------------------------------------------------------- problem container


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
        object.__setattr__(self, "domain", _readonly(domain))
        object.__setattr__(self, "values", _readonly(values))
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


# --------------------------------------------------------------------------- synthetic


def _se_gram(x: np.ndarray, lengthscale: float, variance: float) -> np.ndarray:
    sq = (x[:, None, :] - x[None, :, :]) ** 2
    return variance * np.exp(-0.5 * sq.sum(axis=-1) / lengthscale**2)


def generate_synthetic_values(seed: SeedLike = 0, n_arms: int = SYNTHETIC_N_ARMS) -> np.ndarray:
    """The project's own synthetic function: one draw from ``N(0, K)`` with ``K`` the SE Gram
    matrix on ``linspace(0, 1, n_arms)`` (length scale 0.1, variance 1, +1e-10 jitter), min-max
    scaled to ``[0, 1]``.  The draw is ``L z`` with ``L`` the Cholesky factor and ``z ~ N(0, I)``
    from the seeded generator (docs/decisions.md#quantum-bo-generated-synthetic-function)."""
    n_arms = check_int(n_arms, "n_arms", low=2)
    gen = as_generator(seed)
    grid = np.linspace(0.0, 1.0, n_arms)[:, None]
    K = _se_gram(grid, SYNTHETIC_LENGTHSCALE, SYNTHETIC_VARIANCE)
    L = np.linalg.cholesky(K + SYNTHETIC_JITTER * np.eye(n_arms))
    f = L @ gen.standard_normal(n_arms)
    span = f.max() - f.min()
    if span <= 0.0:  # pragma: no cover - a constant draw has probability zero
        raise ValueError("the GP draw is constant; use another seed")
    return (f - f.min()) / span


class _NearestGridValue:
    """``value_at`` of a grid function: the value of the nearest grid point (first on ties)."""

    def __init__(self, domain: np.ndarray, values: np.ndarray):
        self._domain = _readonly(domain)
        self._values = _readonly(values)

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
        section = _reference_section(data, "synthetic")
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


# --------------------------------------------------------------------------- AutoML (Pima SVM)


def _import_sklearn():
    try:
        from sklearn.model_selection import train_test_split
        from sklearn.svm import SVC
    except ImportError as exc:
        raise ImportError(_AUTOML_EXTRA_MSG) from exc
    return SVC, train_test_split


def automl_missing() -> str | None:
    """Why the AutoML problem cannot run on this install (scikit-learn missing), or None."""
    try:
        _import_sklearn()
    except ImportError as exc:
        return str(exc)
    return None


def load_pima(
    path: PathLike | None = None, *, verify: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """The Pima Indians Diabetes data (``pima/diabetes.csv``): ``(features (768, 8), labels (768,))``.

    The header must be the nine README columns (8 features then ``Outcome``); labels are 0/1
    integers.  With ``verify`` the sha256 (:data:`PIMA_SHA256`), the 768 rows and the 268
    positives are checked.  Zeros that stand for missing values are kept as they are.

    Raises:
        FileNotFoundError: the file is not found (the message lists the places searched).
        ValueError: wrong checksum, header, shape or labels.
    """
    file = resolve_data_path(PIMA_FILE, path)
    if verify:
        verify_sha256(file, PIMA_SHA256)
    with open(file, encoding="utf-8") as fh:
        header = tuple(col.strip() for col in fh.readline().strip().split(","))
        if header != PIMA_COLUMNS:
            raise ValueError(
                f"{str(file)!r}: header must be {','.join(PIMA_COLUMNS)}, got {','.join(header)}"
            )
        try:
            table = np.loadtxt(fh, delimiter=",", dtype=float, ndmin=2)
        except ValueError as exc:
            raise ValueError(f"{str(file)!r}: cannot parse the rows as numbers: {exc}") from None
    if table.shape[1] != len(PIMA_COLUMNS):
        raise ValueError(f"{str(file)!r}: expected 9 columns, got {table.shape[1]}")
    features, outcome = table[:, :-1], table[:, -1]
    if not np.all(np.isin(outcome, (0.0, 1.0))):
        raise ValueError(f"{str(file)!r}: Outcome must be 0 or 1")
    labels = outcome.astype(int)
    if verify and (table.shape[0] != PIMA_ROWS or int(labels.sum()) != PIMA_POSITIVES):
        raise ValueError(
            f"{str(file)!r}: expected {PIMA_ROWS} rows with {PIMA_POSITIVES} positives, got "
            f"{table.shape[0]} rows with {int(labels.sum())} positives"
        )
    return features, labels


def svm_hyperparameters(u) -> tuple[float, float]:
    """``(C, gamma)`` of a normalised input ``u`` in ``[0, 1]^2``: ``u * (1 - 1e-4) + 1e-4``."""
    u = check_vector(np.atleast_1d(np.asarray(u, dtype=float)), "u", length=2)
    if u.min() < 0.0 or u.max() > 1.0:
        raise ValueError(f"u must lie in [0, 1]^2, got {u.tolist()}")
    C, gamma = u * (1.0 - HYPER_LOW) + HYPER_LOW
    return float(C), float(gamma)


class SVMAccuracy:
    """Validation accuracy of ``SVC(kernel="rbf", C, gamma)`` on the Pima split (Section 6 of
    the paper; docs/decisions.md#quantum-bo-automl-grid-and-split-as-in-the-reference-code).

    The split is ``train_test_split(features, labels, test_size=0.3, stratify=labels,
    random_state=0)`` (537 train / 231 validation rows).  ``probability=True`` of the reference
    code is dropped: it does not change ``predict``.  Results are cached per input (an LRU cache
    keyed on the tuple of floats; :meth:`cache_info`).

    Args:
        features, labels: the data; by default :func:`load_pima` (``path``, ``verify``).
    """

    def __init__(
        self,
        features=None,
        labels=None,
        *,
        path: PathLike | None = None,
        verify: bool = True,
        test_size: float = 0.3,
        random_state: int = 0,
    ):
        SVC, train_test_split = _import_sklearn()
        self._svc = SVC
        if (features is None) != (labels is None):
            raise ValueError("give both features and labels, or neither (to load Pima)")
        if features is None:
            features, labels = load_pima(path, verify=verify)
        features = check_matrix(features, "features", min_rows=2)
        labels = np.asarray(labels)
        if labels.shape != (features.shape[0],):
            raise ValueError(f"labels must have shape ({features.shape[0]},), got {labels.shape}")
        self.x_train, self.x_val, self.y_train, self.y_val = train_test_split(
            features, labels, test_size=test_size, stratify=labels, random_state=random_state
        )
        for arr in (self.x_train, self.x_val, self.y_train, self.y_val):
            arr.setflags(write=False)
        self._cached = functools.lru_cache(maxsize=None)(self._evaluate)

    @property
    def n_val(self) -> int:
        """Number of validation rows (231 for Pima)."""
        return int(self.y_val.shape[0])

    def _evaluate(self, key: tuple[float, float]) -> int:
        C, gamma = svm_hyperparameters(key)
        model = self._svc(kernel="rbf", C=C, gamma=gamma).fit(self.x_train, self.y_train)
        return int(np.sum(model.predict(self.x_val) == self.y_val))

    def correct(self, u) -> int:
        """Number of correct validation predictions at the normalised input ``u``."""
        svm_hyperparameters(u)  # validate before caching
        key = tuple(float(v) for v in np.atleast_1d(np.asarray(u, dtype=float)))
        return self._cached(key)

    def __call__(self, u) -> float:
        """Validation accuracy at the normalised input ``u`` in ``[0, 1]^2``."""
        return self.correct(u) / self.n_val

    def cache_info(self):
        """``functools.lru_cache`` statistics of the fitted inputs."""
        return self._cached.cache_info()

    def __repr__(self) -> str:
        return (
            f"SVMAccuracy(train={self.y_train.shape[0]}, val={self.n_val}, "
            f"cached={self.cache_info().currsize})"
        )


def automl_domain() -> np.ndarray:
    """The 25 normalised inputs; index ``5*i + j`` is ``(grid[i], grid[j])`` (reference order)."""
    return np.array([[ci, gj] for ci in AUTOML_GRID for gj in AUTOML_GRID], dtype=float)


def automl_problem(
    sigma: float = 0.05,
    path: PathLike | None = None,
    *,
    verify: bool = True,
    svm: SVMAccuracy | None = None,
) -> QuantumBOProblem:
    """The AutoML problem (Section 6 of the paper): RBF-SVM ``(C, gamma)`` tuning on Pima, 25 arms.

    The values are the validation accuracies computed with scikit-learn (176/231 at the best arm,
    index 15: ``C_norm = 0.75``, ``gamma_norm = 0``); Gaussian noise with standard deviation
    ``sigma`` (paper: 0.01 or 0.05).  ``value_at`` is the :class:`SVMAccuracy` callable (the
    reference code evaluates the SVM at its continuous initial point).  ``svm`` reuses an
    existing :class:`SVMAccuracy` (and its cache).
    Needs scikit-learn (``frontierbo[automl]``).
    """
    sigma = check_positive(sigma, "sigma")
    checked = verify and svm is None  # a reused SVMAccuracy vouches for its own data
    if svm is None:
        svm = SVMAccuracy(path=path, verify=verify)
    domain = automl_domain()
    correct = np.array([svm.correct(u) for u in domain], dtype=int)
    values = correct / svm.n_val
    k = len(AUTOML_GRID)
    info = {
        "source": "pima",
        "grid_1d": list(AUTOML_GRID),
        "domain_order": "index = 5*i + j with C_norm=grid[i], gamma_norm=grid[j]",
        "C": "C_norm*(1-1e-4)+1e-4",
        "gamma": "gamma_norm*(1-1e-4)+1e-4",
        f"correct_of_{svm.n_val}": correct.reshape(k, k).tolist(),
        "n_train": int(svm.y_train.shape[0]),
        "n_val": svm.n_val,
        "sha256": PIMA_SHA256 if checked else None,
    }
    return QuantumBOProblem(
        name=f"automl-sigma{sigma:g}",
        domain=domain,
        values=values,
        noise="gaussian",
        sigma=sigma,
        value_at=svm,
        info=info,
    )


# --------------------------------------------------------------------------- by name

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
    if kind == "synthetic":
        return synthetic_problem(**fixed, **kwargs)
    return automl_problem(**fixed, **kwargs)
