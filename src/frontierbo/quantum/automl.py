"""The AutoML problem of quantum BO (Section 6 of the paper): tuning an RBF SVM (``C``, ``gamma``)
on the Pima Indians Diabetes data; 25 arms on a 5x5 grid of normalised inputs, reward = validation
accuracy.  Needs scikit-learn (extra ``frontierbo[automl]``).

The data file ``pima/diabetes.csv`` (CC0) is found by :func:`frontierbo.data.resolve_data_path`
(an explicit ``path``, the ``FRONTIERBO_DATA`` root, or ``../shared/data``).
"""

from __future__ import annotations

import functools

import numpy as np

from frontierbo._validation import check_matrix, check_positive, check_vector
from frontierbo.data import KNOWN_SHA256, resolve_data_path, verify_sha256
from frontierbo.quantum.problems import PathLike, QuantumBOProblem

__all__ = [
    "AUTOML_GRID",
    "PIMA_COLUMNS",
    "PIMA_FILE",
    "PIMA_SHA256",
    "SVMAccuracy",
    "automl_domain",
    "automl_missing",
    "automl_problem",
    "load_pima",
    "svm_hyperparameters",
]

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

#: Normalised grid of each AutoML input
#: (docs/decisions.md#quantum-bo-automl-grid-and-split-as-in-the-reference-code); index ``5*i + j``
#: is ``(grid[i], grid[j])``.
AUTOML_GRID = (0.0, 0.25, 0.5, 0.75, 1.0)
#: ``C = u0 * (1 - 1e-4) + 1e-4`` and the same for ``gamma`` (reference code).
HYPER_LOW = 1e-4

_AUTOML_EXTRA_MSG = (
    "the AutoML (Pima SVM) problem needs scikit-learn; install it with "
    "`pip install 'frontierbo[automl]'` (or `pip install 'scikit-learn>=1.3'`)"
)


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
