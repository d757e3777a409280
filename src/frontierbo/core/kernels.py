"""Covariance functions: stationary squared exponential and Matérn 3/2, 5/2; the Freeze-Thaw
exponential-decay kernel of learning curves; a precomputed Gram matrix. (Sums over coordinate
groups are in ``core.additive``.)

Every kernel is ``k(a, b) = variance * shape(r)`` with the scaled distance
``r = || (a - b) / lengthscale ||``. ``lengthscale`` is a float (isotropic) or a length-d array
(ARD). Units: ``lengthscale`` in input units, ``variance`` in squared output units.

For maximum-likelihood fitting each kernel exposes its log-parameters
``[log variance, log lengthscale_1..m]`` and the derivative of the covariance matrix with respect
to each of them, ``dK/dlog(theta)``.
"""

from __future__ import annotations

import numpy as np

from frontierbo._validation import check_matrix, check_positive


class StationaryKernel:
    """Base class: ``k(a, b) = variance * shape(r)``, ``r`` the lengthscale-scaled distance."""

    name = "stationary"

    def __init__(self, lengthscale=1.0, variance: float = 1.0):
        ls = np.asarray(lengthscale, dtype=float)
        if ls.ndim > 1 or ls.size == 0 or not np.all(np.isfinite(ls)) or np.any(ls <= 0):
            raise ValueError(
                f"lengthscale must be a positive float or a 1-D array of positive floats, "
                f"got {lengthscale!r}"
            )
        self.lengthscale = float(ls) if ls.ndim == 0 else ls.copy()
        self.variance = check_positive(variance, "variance")

    # -- shape functions of r (and r^2) implemented by subclasses ------------------------------
    def _shape(self, r2: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _dshape(self, r2: np.ndarray) -> np.ndarray:
        """``g(r) = -(d shape / dr) / r``, so that ``d k / d log l_j = variance * g * s_j``
        with ``s_j = (a_j - b_j)^2 / l_j^2`` (finite at r = 0 for every kernel here)."""
        raise NotImplementedError

    @classmethod
    def shape_and_dshape(cls, r2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``shape(r2)`` and ``g(r2)`` together (elementwise on any array; subclasses fuse the
        shared exponentials)."""
        return cls._shape(None, r2), cls._dshape(None, r2)

    @classmethod
    def shape_and_scaled_dshape(cls, r2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``shape(r2)`` and ``g(r2) r2`` (``d shape / d log l`` of an isotropic kernel), new
        arrays; ``r2`` is left unchanged."""
        shape, g = cls.shape_and_dshape(r2)
        return shape, g * r2

    # -- public API ---------------------------------------------------------------------------
    @property
    def ard(self) -> bool:
        return isinstance(self.lengthscale, np.ndarray)

    def scaled(self, X: np.ndarray) -> np.ndarray:
        """Inputs divided by the lengthscale(s): shape (n, d)."""
        X = np.asarray(X, dtype=float)
        if self.ard and X.shape[-1] != self.lengthscale.shape[0]:
            raise ValueError(
                f"inputs must have {self.lengthscale.shape[0]} columns to match the ARD "
                f"lengthscale, got {X.shape[-1]}"
            )
        return X / self.lengthscale

    def sqdist(self, A: np.ndarray, B: np.ndarray | None = None) -> np.ndarray:
        """Scaled squared distances ``r^2``, shape (nA, nB), clipped at 0."""
        a = self.scaled(np.atleast_2d(A))
        b = a if B is None else self.scaled(np.atleast_2d(B))
        # in place, in the order of (|a|^2 + |b|^2) - 2 a.b: the acquisition pools' hot path
        cross = a @ b.T
        cross *= 2.0
        r2 = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :]
        r2 -= cross
        return np.maximum(r2, 0.0, out=r2)

    def from_sqdist(self, r2: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Covariances ``variance * shape(r2)`` from scaled squared distances ``r2``.

        With ``out`` (which may be ``r2`` itself) the result is written there.
        """
        if out is None:
            shape = self._shape(r2)
            shape *= self.variance
            return shape
        np.multiply(self._shape(r2), self.variance, out=out)
        return out

    def __call__(self, A, B=None) -> np.ndarray:
        """Covariance matrix ``K[i, j] = k(A[i], B[j])``, shape (nA, nB)."""
        K = self.from_sqdist(self.sqdist(A, B))
        if B is None:
            np.fill_diagonal(K, self.variance)
        return K

    def diag(self, A) -> np.ndarray:
        """``k(a, a)`` for every row: shape (nA,), all equal to ``variance``."""
        return np.full(np.atleast_2d(A).shape[0], self.variance)

    def grad_x(self, x, B) -> np.ndarray:
        """``d k(x, B[j]) / d x`` for one point ``x`` (d,): shape (nB, d).

        ``k = variance * shape(r)`` gives ``dk/dx = -variance * g(r) * (x - b) / l^2`` with
        ``g = -(d shape / dr) / r`` (see ``_dshape``), finite at ``r = 0``.
        """
        x = np.asarray(x, dtype=float)
        B = np.atleast_2d(B)
        diff = (x[None, :] - B) / self.lengthscale
        r2 = np.maximum((diff * diff).sum(1), 0.0)
        g = self.variance * self._dshape(r2)
        return -(g[:, None] * diff) / self.lengthscale

    # -- log-parameter interface for maximum likelihood ---------------------------------------
    @property
    def log_params(self) -> np.ndarray:
        return np.log(np.concatenate([[self.variance], np.atleast_1d(self.lengthscale)]))

    def with_log_params(self, theta: np.ndarray) -> StationaryKernel:
        """A new kernel of the same kind with ``[log variance, log lengthscale...]``."""
        theta = np.asarray(theta, dtype=float)
        ls = np.exp(theta[1:])
        return type(self)(ls if self.ard else float(ls[0]), float(np.exp(theta[0])))

    def gradients(self, X: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """``K(X, X)`` and ``[dK/dlog variance, dK/dlog l_1, ...]``, each (n, n)."""
        X = check_matrix(X, "X")
        r2 = self.sqdist(X)
        K = self.variance * self._shape(r2)
        g = self.variance * self._dshape(r2)
        if not self.ard:
            return K, [K, g * r2]
        a = self.scaled(X)
        grads = [K]
        for j in range(a.shape[1]):
            diff = a[:, j, None] - a[None, :, j]
            grads.append(g * diff * diff)
        return K, grads

    def __repr__(self) -> str:
        ls = np.array2string(np.atleast_1d(self.lengthscale), precision=4)
        return f"{type(self).__name__}(lengthscale={ls}, variance={self.variance:.4g})"


class SquaredExponential(StationaryKernel):
    """``k(a, b) = variance * exp(-r^2 / 2)``."""

    name = "se"

    def _shape(self, r2):
        return np.exp(-0.5 * r2)

    def from_sqdist(self, r2, out=None):
        if out is None:
            return self.variance * self._shape(r2)
        np.multiply(r2, -0.5, out=out)  # in place: this is the GP's per-step kernel row
        np.exp(out, out=out)
        out *= self.variance
        return out

    def _dshape(self, r2):
        return np.exp(-0.5 * r2)


class Matern32(StationaryKernel):
    """``k(a, b) = variance * (1 + sqrt(3) r) exp(-sqrt(3) r)``."""

    name = "matern32"

    def _shape(self, r2):
        s = np.sqrt(3.0 * r2)
        return (1.0 + s) * np.exp(-s)

    def _dshape(self, r2):
        return 3.0 * np.exp(-np.sqrt(3.0 * r2))


class Matern52(StationaryKernel):
    """``k(a, b) = variance * (1 + sqrt(5) r + 5 r^2 / 3) exp(-sqrt(5) r)``."""

    name = "matern52"

    def _shape(self, r2):
        # (1 + s + 5 r^2 / 3) exp(-s) on three buffers, rounded as written
        s = np.multiply(r2, 5.0)
        np.sqrt(s, out=s)
        poly = np.add(s, 1.0)
        quad = np.multiply(r2, 5.0)
        quad /= 3.0
        poly += quad
        np.negative(s, out=s)
        np.exp(s, out=s)
        poly *= s
        return poly

    def _dshape(self, r2):
        s = np.sqrt(5.0 * r2)
        return (5.0 / 3.0) * (1.0 + s) * np.exp(-s)

    @classmethod
    def shape_and_dshape(cls, r2):
        s = np.sqrt(5.0 * r2)
        e = np.exp(-s)
        e_1s = e * (1.0 + s)
        return e_1s + (5.0 / 3.0) * r2 * e, (5.0 / 3.0) * e_1s

    @classmethod
    def shape_and_scaled_dshape(cls, r2):
        # in place on two buffers: this is the additive MLE's inner loop (M x n^2 / 2 entries)
        s = np.multiply(r2, 5.0)
        np.sqrt(s, out=s)
        e = np.negative(s)
        np.exp(e, out=e)
        s += 1.0
        s *= e  # e (1 + s)
        e *= r2
        e *= 5.0 / 3.0
        e += s  # shape = e (1 + s + 5 r^2 / 3)
        s *= r2
        s *= 5.0 / 3.0  # g r^2 = 5/3 e (1 + s) r^2
        return e, s


class ExponentialDecay:
    """Freeze-Thaw exponential-decay kernel over learning-curve steps ``t > 0``
    (Swersky et al. 2014; BO-BOS's ``exp_kern.py``):
    ``k(t, t') = beta^alpha / (t + t' + beta)^alpha``.

    It is the covariance of a mixture of exponential decays ``exp(-lambda t)`` with
    ``lambda ~ Gamma(alpha, beta)``: not stationary, its variance ``k(t, t)`` shrinks as ``t`` grows.
    Log-parameters are ``[log alpha, log beta]``. Inputs are (n, 1) columns of steps.
    """

    name = "exp-decay"

    def __init__(self, alpha: float = 1.0, beta: float = 1.0):
        self.alpha = check_positive(alpha, "alpha")
        self.beta = check_positive(beta, "beta")

    def _sums(self, A, B=None) -> np.ndarray:
        a = np.asarray(A, dtype=float).reshape(-1)
        b = a if B is None else np.asarray(B, dtype=float).reshape(-1)
        return a[:, None] + b[None, :] + self.beta

    def __call__(self, A, B=None) -> np.ndarray:
        return (self.beta / self._sums(A, B)) ** self.alpha

    def diag(self, A) -> np.ndarray:
        a = np.asarray(A, dtype=float).reshape(-1)
        return (self.beta / (2.0 * a + self.beta)) ** self.alpha

    @property
    def log_params(self) -> np.ndarray:
        return np.log([self.alpha, self.beta])

    def with_log_params(self, theta) -> ExponentialDecay:
        alpha, beta = np.exp(np.asarray(theta, dtype=float))
        return ExponentialDecay(float(alpha), float(beta))

    def gradients(self, X) -> tuple[np.ndarray, list[np.ndarray]]:
        """``K`` and ``[dK/dlog alpha, dK/dlog beta]``:
        ``dK/dlog alpha = alpha K log(beta / s)``, ``dK/dlog beta = alpha K (1 - beta / s)``,
        ``s = t + t' + beta``."""
        S = self._sums(X)
        K = (self.beta / S) ** self.alpha
        return K, [self.alpha * K * np.log(self.beta / S), self.alpha * K * (1.0 - self.beta / S)]

    def __repr__(self) -> str:
        return f"ExponentialDecay(alpha={self.alpha:.4g}, beta={self.beta:.4g})"


class PrecomputedKernel:
    """A kernel given as its Gram matrix over n arms (e.g. an empirical covariance).

    Candidates are arm indices: use ``PrecomputedKernel.arms(n)`` (an (n, 1) column 0..n-1) as
    the ``candidates`` of a ``FiniteDomainGP``. ``K`` must be symmetric positive semi-definite.
    """

    name = "precomputed"

    def __init__(self, K):
        K = np.asarray(K, dtype=float)
        if K.ndim != 2 or K.shape[0] != K.shape[1] or K.shape[0] < 1:
            raise ValueError(f"K must be a square (n, n) matrix, got shape {K.shape}")
        if not np.all(np.isfinite(K)):
            raise ValueError("K must be finite (no NaN or inf)")
        if not np.allclose(K, K.T, rtol=1e-10, atol=1e-12 * max(1.0, np.abs(K).max())):
            raise ValueError("K must be symmetric")
        if np.linalg.eigvalsh(K).min() < -1e-8 * max(1.0, np.abs(K).max()):
            raise ValueError("K must be positive semi-definite")
        self.K = K.copy()
        self.K.flags.writeable = False

    @staticmethod
    def arms(n: int) -> np.ndarray:
        """The candidate matrix for n arms: indices 0..n-1 as an (n, 1) float column."""
        return np.arange(n, dtype=float)[:, None]

    def _index(self, A) -> np.ndarray:
        idx = np.asarray(A, dtype=float).reshape(-1)
        if np.any(idx != np.round(idx)) or np.any(idx < 0) or np.any(idx >= self.K.shape[0]):
            raise ValueError(f"inputs must be arm indices in [0, {self.K.shape[0] - 1}]")
        return idx.astype(int)

    def __call__(self, A, B=None) -> np.ndarray:
        a = self._index(A)
        b = a if B is None else self._index(B)
        return self.K[np.ix_(a, b)]

    def diag(self, A) -> np.ndarray:
        return np.diag(self.K)[self._index(A)]

    def row(self, i: int, out: np.ndarray) -> np.ndarray:
        """``k(arm i, every arm)`` written into ``out`` (the GP's per-step kernel row)."""
        out[:] = self.K[i]
        return out

    def __repr__(self) -> str:
        return f"PrecomputedKernel(n={self.K.shape[0]})"


KERNELS: dict[str, type[StationaryKernel]] = {
    "se": SquaredExponential,
    "matern32": Matern32,
    "matern52": Matern52,
}


def make_kernel(name: str, lengthscale=1.0, variance: float = 1.0) -> StationaryKernel:
    """Build a kernel by name: one of ``"se"``, ``"matern32"``, ``"matern52"``."""
    if name not in KERNELS:
        raise ValueError(f"kernel must be one of {sorted(KERNELS)}, got {name!r}")
    return KERNELS[name](lengthscale, variance)
