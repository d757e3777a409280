"""The ``Problem`` container shared by every benchmark, and the curator's preprocessing step P0.

A problem is a finite optimisation domain: ``n`` candidate rows (already preprocessed, see
:func:`preprocess_inputs`), the noise-free objective value of every row (to be MAXIMISED), and the
GP hyperparameters the modeler uses, all in the units of the preprocessed inputs.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from frontierbo._validation import check_matrix, check_positive, check_real, check_vector
from frontierbo.io import to_jsonable

DEFAULT_MAX_NORM = 25.0


@dataclass(frozen=True, eq=False, repr=False)
class Problem:
    """A finite-domain benchmark as the curator holds it.

    Attributes:
        name: short identifier ("synthetic", "branin", "loan", "property").
        inputs: (n, d) inputs after step P0 (ARD division if any, centring, max row norm 25).
        values: (n,) noise-free objective to maximise; regret is computed on these.
        lengthscale: isotropic SE length-scale, in the units of ``inputs``.
        signal_variance: GP signal variance sigma_y^2 (units of ``values`` squared).
        noise_variance: GP noise variance sigma_n^2 used by the modeler.
        prior_mean: constant GP prior mean (units of ``values``).
        observation_noise_std: std of the Gaussian noise the oracle adds to ``values[i]`` on a
            query; 0 when the recorded values already contain the noise (real data sets).
        source: where the data came from ("generated", "real file <path>", "substitute ...").
        meta: everything else (scale s, raw length-scales, MLE results, checksums, ...).

    The arrays are stored as read-only copies so that cached problems cannot be mutated.
    """

    name: str
    inputs: np.ndarray
    values: np.ndarray
    lengthscale: float
    signal_variance: float
    noise_variance: float
    prior_mean: float
    observation_noise_std: float
    source: str
    meta: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        if not isinstance(self.source, str):
            raise TypeError(f"source must be a string, got {self.source!r}")
        inputs = check_matrix(self.inputs, "inputs").copy()
        values = check_vector(self.values, "values", length=inputs.shape[0]).copy()
        inputs.flags.writeable = False
        values.flags.writeable = False
        set_ = object.__setattr__  # frozen dataclass: assign the validated copies once, here
        set_(self, "inputs", inputs)
        set_(self, "values", values)
        set_(self, "lengthscale", check_positive(self.lengthscale, "lengthscale"))
        set_(self, "signal_variance", check_positive(self.signal_variance, "signal_variance"))
        set_(self, "noise_variance", check_positive(self.noise_variance, "noise_variance"))
        set_(self, "prior_mean", check_real(self.prior_mean, "prior_mean"))
        set_(
            self,
            "observation_noise_std",
            check_real(
                self.observation_noise_std, "observation_noise_std", low=0.0, low_open=False
            ),
        )
        if not isinstance(self.meta, dict):
            raise TypeError(f"meta must be a dict, got {type(self.meta).__name__}")
        set_(self, "meta", dict(self.meta))

    @property
    def n(self) -> int:
        """Number of candidate rows."""
        return int(self.inputs.shape[0])

    @property
    def d(self) -> int:
        """Input dimension."""
        return int(self.inputs.shape[1])

    @property
    def sigma_y(self) -> float:
        """Signal standard deviation sqrt(signal_variance); the unit of regrets in reports."""
        return math.sqrt(self.signal_variance)

    @property
    def max_value(self) -> float:
        """max_i values[i], i.e. f(x*)."""
        return float(np.max(self.values))

    def __repr__(self) -> str:
        return (
            f"Problem(name={self.name!r}, n={self.n}, d={self.d}, lengthscale={self.lengthscale:.6g}, "
            f"signal_variance={self.signal_variance:.6g}, noise_variance={self.noise_variance:.6g}, "
            f"prior_mean={self.prior_mean:.6g}, "
            f"observation_noise_std={self.observation_noise_std:.3g}, source={self.source!r})"
        )


def preprocess_inputs(
    X_raw, lengthscales=None, max_norm: float = DEFAULT_MAX_NORM
) -> tuple[np.ndarray, float]:
    """Step P0 of the protocol: make the kernel isotropic, centre, scale to a max row norm.

    Args:
        X_raw: (n, d) raw inputs.
        lengthscales: None, a positive float, or (d,) positive ARD length-scales (raw units);
            each column is divided by its length-scale first so that the SE kernel becomes
            isotropic with length-scale 1.
        max_norm: the largest row norm after scaling (25 in every experiment of the paper).

    Returns:
        (X, s): X is (n, d) with zero column means and max_i ||X_i|| = max_norm; s is the scale
        factor applied after centring, so an isotropic length-scale l (in the units after the
        division) becomes s * l in the units of X.

    The order is centre first, then scale: scaling first and centring later would shrink the
    data of a one-sided domain and change sigma_min, hence the privacy branch
    (docs/decisions.md#po-gp-ucb-centre-before-scaling-to-max-norm-25).
    """
    X = check_matrix(X_raw, "X_raw").copy()
    max_norm = check_positive(max_norm, "max_norm")
    if lengthscales is not None:
        ls = np.broadcast_to(np.asarray(lengthscales, dtype=float), (X.shape[1],))
        if not np.all(np.isfinite(ls)) or np.any(ls <= 0):
            raise ValueError(
                f"lengthscales must be positive and finite with {X.shape[1]} entries, "
                f"got {lengthscales!r}"
            )
        X = X / ls
    X -= X.mean(axis=0)
    largest = float(np.max(np.linalg.norm(X, axis=1)))
    if largest <= 0.0:
        raise ValueError("X_raw must contain at least two distinct rows (all rows are equal)")
    s = max_norm / largest
    return X * s, s


def singular_values(X) -> np.ndarray:
    """Singular values (min(n, d),) of an (n, d) matrix, largest first.

    sigma_min of the preprocessed inputs decides the branch of the curator (Algorithm 1, line 6).
    """
    return np.linalg.svd(check_matrix(X, "X"), compute_uv=False)


# -- the problem file shared with worker processes -------------------------------------------
_SCALARS = (
    "lengthscale",
    "signal_variance",
    "noise_variance",
    "prior_mean",
    "observation_noise_std",
)


def _header(problem: Problem) -> dict:
    header = {k: getattr(problem, k) for k in _SCALARS}
    header.update(name=problem.name, source=problem.source, meta=to_jsonable(problem.meta))
    return header


def problem_checksum(problem: Problem) -> str:
    """sha256 (hex) of a problem's content: its arrays and its scalars and meta as canonical JSON.

    The identity a reproduction keys its runs on (never a path, which depends on how ``--out``
    was spelled or where the folder was moved). It survives :func:`save_problem` /
    :func:`read_problem` unchanged. Meta entries measured while the problem was built (the
    MLE's ``mle_seconds``; any key :func:`~frontierbo.experiments.identity.is_measured` names)
    are left out: they differ in every process, and a resumed sweep must find the same identity.
    They stay in ``meta`` and in the saved file.
    """
    from frontierbo.experiments.identity import without_measured

    h = hashlib.sha256()
    for a in (problem.inputs, problem.values):
        a = np.ascontiguousarray(a, dtype=np.float64)
        h.update(f"{a.shape}".encode())
        h.update(a.tobytes())
    header = without_measured(_header(problem))
    h.update(json.dumps(header, sort_keys=True, allow_nan=True).encode())
    return h.hexdigest()


def save_problem(problem: Problem, path: str | Path) -> Path:
    """Write a problem as ``.npz`` (arrays) + embedded JSON (scalars, meta), atomically.

    The temporary file has a unique name in the target folder, so two processes writing the
    same path never write into each other's file; the last rename wins.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            header = json.dumps(_header(problem))
            np.savez(fh, inputs=problem.inputs, values=problem.values, header=header)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def read_problem(path: str | Path) -> Problem:
    """A problem written by :func:`save_problem` (uncached)."""
    with np.load(path) as data:
        header = json.loads(str(data["header"]))
        return Problem(inputs=data["inputs"], values=data["values"], **header)


@lru_cache(maxsize=8)
def load_problem(path: str, checksum: str | None = None) -> Problem:
    """:func:`read_problem`, cached per process (every run of a worker reads the same file).

    With ``checksum``, the content must have that :func:`problem_checksum`: a file replaced
    under a run (another sweep, a moved folder) fails loudly instead of giving other numbers.
    """
    problem = read_problem(path)
    if checksum is not None and problem_checksum(problem) != checksum:
        raise ValueError(
            f"problem file {path} does not hold the problem this run was planned with "
            f"(checksum {checksum[:12]}...); run the reproduction again to rewrite it"
        )
    return problem
