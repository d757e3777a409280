"""Exact GP posterior over a finite candidate set, updated incrementally.

For candidates ``X`` (n rows) and observations at rows ``i_1..i_t`` with noise variances
``s_1..s_t``, write ``A = K_tt + diag(s)`` and its Cholesky factor ``A = L L^T``. We keep

* ``V = L^{-1} K_{tX}`` (t x n): the whitened cross-covariance, one row per observation;
* ``w = L^{-1} (y - m)`` (t,): the whitened residuals;

so that ``mean = m + V^T w`` and ``variance = k(x, x) - sum_k V[k]^2`` (paper eq. (1)).

Adding observation t+1 at row i needs only column ``i`` of ``V``: ``l = V[:, i] = L^{-1} K_{t,i}``
is the new row of ``L``, ``L_{t+1,t+1} = sqrt(k_ii + s - ||l||^2)``, and the new row of ``V`` is
``(k(x_i, X) - l^T V) / L_{t+1,t+1}``. One update costs O(n t + n d) and never refactorises.
Per-observation noise variances make this the weighted GP that Q-GP-UCB needs as well.

``dtype="float32"`` stores ``V`` (the only O(n t) state) in single precision: half the memory and
half the traffic of the gemv that dominates an update at large n. The kernel row that feeds a new
row of ``V`` is rounded to float32 (its squared distances are formed in float64 first: the
expansion ``|a|^2 + |b|^2 - 2 a.b`` cancels) and the O(n t) product runs in float32 BLAS. The
t x t factor ``L`` is kept in float64 besides (8 t^2 bytes, small while t << n): the new row
``l`` is solved from it, not read off the rounded ``V``, so ``L``, ``w`` and the log determinant
are float64-accurate, and :meth:`FiniteDomainGP.posterior_at` gives float64-accurate values at a
few rows; the accumulated ``mean`` and variance (n,) stay float64, so rounding does not build up
in them across updates, but they carry the float32 block's error, about
``eps32 * cond(K_tt + diag(s))`` relative. In float32 ``V`` grows in blocks (each as large as all
before it) instead of being copied into a twice larger array, so its peak memory is the rows in
use, not the old and the new array side by side. float64 (the default) keeps one contiguous
block and is bit-for-bit the computation of earlier releases: reproductions use it.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import blas, cho_factor, cho_solve, solve_triangular

from frontierbo._validation import check_int, check_matrix, check_real
from frontierbo.core.kernels import PrecomputedKernel, StationaryKernel

#: Relative floor for a new Cholesky pivot; below it the pivot is lifted by jitter.
_PIVOT_FLOOR = 1e-12

#: Storage precisions of the whitened block ``V`` (``FiniteDomainGP(dtype=...)``).
DTYPES = ("float64", "float32")


def check_dtype(dtype) -> np.dtype:
    """``dtype`` as a numpy dtype, one of :data:`DTYPES` (a name, a numpy type or a dtype)."""
    try:
        value = np.dtype(dtype)
    except (TypeError, ValueError):
        value = None
    if dtype is None or value is None or value.name not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
    return value


class FiniteDomainGP:
    """GP posterior over ``n`` fixed candidate rows with O(n t) incremental updates.

    Parameters
    ----------
    candidates : array (n, d)
        The finite domain. Row ``i`` is candidate ``i``.
    kernel : StationaryKernel or PrecomputedKernel
        Prior covariance (same units as ``candidates``); a ``PrecomputedKernel`` (Gram matrix)
        with ``candidates = PrecomputedKernel.arms(n)`` for arms without coordinates.
    noise_variance : float
        Default Gaussian observation-noise variance sigma_n^2 (>= 0).
    prior_mean : float
        Constant prior mean ``m``.
    capacity : int
        Initial number of observation slots; grows by doubling.
    dtype : ``"float64"`` (default) or ``"float32"``
        Precision of the whitened t x n block ``V`` and of the kernel rows that feed it (module
        docstring): float32 halves its memory (:attr:`block_nbytes`) and the time of an update at
        large n; mean, variance, the t x t factor and the log determinant stay float64, and
        :meth:`posterior_at` is float64-accurate. float64 is exact to the last bit across
        releases: keep it for reproductions.

    ``mean`` is the (n,) posterior mean of the latent function (treat it as read-only);
    ``variance`` and ``std`` are fresh (n,) arrays (variance clipped at 0), and
    :meth:`posterior_variance` / :meth:`posterior_std` write them into a caller's buffer.
    """

    def __init__(
        self,
        candidates,
        kernel: StationaryKernel | PrecomputedKernel,
        noise_variance: float,
        prior_mean: float = 0.0,
        capacity: int = 64,
        dtype="float64",
    ):
        self.dtype = check_dtype(dtype)
        self.candidates = check_matrix(candidates, "candidates")
        self.kernel = kernel
        self.noise_variance = check_real(noise_variance, "noise_variance", low=0.0, low_open=False)
        self.prior_mean = check_real(prior_mean, "prior_mean")
        n = self.candidates.shape[0]
        self._prior_var = kernel.diag(self.candidates)
        # Constant parts of k(x_i, X) = variance * shape(|z_i|^2 + |z|^2 - 2 z_i.z), z = X / l:
        # cached so that add() spends O(n d) on the kernel row, not a fresh sqdist of all n rows.
        if hasattr(kernel, "row"):  # a precomputed Gram matrix: rows are looked up
            if kernel.K.shape[0] != n:
                raise ValueError(
                    f"kernel has {kernel.K.shape[0]} arms but there are {n} candidates"
                )
            self._scaled = self._sqnorm = None
        else:
            self._scaled = kernel.scaled(self.candidates)
            self._sqnorm = np.einsum("ij,ij->i", self._scaled, self._scaled)
        self._scratch = np.empty(n)
        self.mean = np.full(n, self.prior_mean)
        self._var = self._prior_var.copy()
        cap = check_int(capacity, "capacity", low=1)
        # float64: one block, grown by copying; float32: blocks appended, never copied
        self._single = self.dtype == np.float64
        self._blocks = [np.empty((cap, n), dtype=self.dtype)]
        # float64 keeps only the pivots (diagonal of L): the off-diagonal row of L is a column
        # of V; float32 keeps all of L in float64 besides, the rounded V being no source for it
        self._L = None if self._single else np.zeros((cap, cap))
        self._pivots = np.zeros(cap)
        self._w = np.empty(cap)
        self._idx: list[int] = []
        self._y: list[float] = []
        self._noise: list[float] = []

    # -- state ------------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return self.candidates.shape[0]

    @property
    def t(self) -> int:
        """Number of observations so far."""
        return len(self._idx)

    @property
    def block_nbytes(self) -> int:
        """Bytes allocated for the whitened block ``V`` (all its rows of capacity)."""
        return sum(block.nbytes for block in self._blocks)

    @property
    def observed_indices(self) -> np.ndarray:
        return np.asarray(self._idx, dtype=int)

    @property
    def observed_values(self) -> np.ndarray:
        return np.asarray(self._y, dtype=float)

    @property
    def variance(self) -> np.ndarray:
        """Latent posterior variance (n,), clipped at 0 (a new array)."""
        return self.posterior_variance()

    @property
    def std(self) -> np.ndarray:
        """Latent posterior standard deviation (n,) (a new array)."""
        return self.posterior_std()

    def posterior_variance(self, out: np.ndarray | None = None, *, clip: bool = True) -> np.ndarray:
        """Latent posterior variance (n,), written into ``out`` (one pass, no temporary) if given.

        ``clip=False`` gives the incrementally updated value itself, which rounding can leave
        slightly below 0 at observed rows; ``clip=True`` (default) clips it at 0.
        """
        if clip:
            return np.maximum(self._var, 0.0, out=out)
        if out is None:
            return self._var.copy()
        np.copyto(out, self._var)
        return out

    def posterior_std(self, out: np.ndarray | None = None) -> np.ndarray:
        """Latent posterior standard deviation (n,), written into ``out`` if given (two passes)."""
        var = self.posterior_variance(out=out)
        return np.sqrt(var, out=var)

    @property
    def log_det(self) -> float:
        """``ln det(K_tt + diag(noise))`` from the Cholesky pivots, O(t). With equal noise
        lambda, ``0.5 * (log_det - t ln lambda)`` is the information gain
        ``0.5 ln det(I + K_tt / lambda)`` of the observed points."""
        t = self.t
        return float(2.0 * np.log(self._pivots[:t]).sum()) if t else 0.0

    def predictive_variance(self) -> np.ndarray:
        """Variance of a noisy observation ``y(x)``: latent variance + sigma_n^2 (thesis eq. 3.2)."""
        return self.variance + self.noise_variance

    # -- joint posterior of a batch ----------------------------------------------------------
    def covariance(self, rows_a, rows_b=None) -> np.ndarray:
        """Latent posterior covariance (ka, kb) between candidate rows ``rows_a`` and ``rows_b``
        (default ``rows_a``): ``k(A, B) - V[:, A]^T V[:, B]``, O(ka kb (d + t)).

        Serves batch and nonmyopic planners (the joint law of a kappa-point macro-action, and the
        posterior after hypothetical observations along a path, which is linear algebra on these
        blocks) without touching the incremental state.
        """
        a = self._rows(rows_a, "rows_a")
        b = a if rows_b is None else self._rows(rows_b, "rows_b")
        cov = self.kernel(self.candidates[a], self.candidates[b])
        t = self.t
        if t:
            cov -= self._columns(a, t).T @ self._columns(b, t)
        return cov

    def joint_posterior(self, rows) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean (k,) and latent covariance (k, k) of the candidate rows ``rows``."""
        rows = self._rows(rows, "rows")
        cov = self.covariance(rows)
        cov = 0.5 * (cov + cov.T)  # exact symmetry for Cholesky / sampling downstream
        return self.mean[rows].copy(), cov

    def hallucinated(self, rows, pending, values=None) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean (c,) and latent variance (c,) at candidate ``rows`` (None: all n) given
        the data plus hypothetical noisy observations (noise ``sigma_n^2``) at the rows
        ``pending`` with ``values``, the state itself unchanged.

        ``values=None`` hallucinates each pending row at its posterior mean (GP-BUCB, Desautels
        et al. 2014): the mean stays ``mu_t``, the variance shrinks around the pending rows.
        Given values, the fantasies of a lookahead. With ``S = Cov_t(pending) + sigma_n^2 I``:
        ``mu = mu_t + Cov_t(rows, pending) S^-1 (values - mu_t(pending))`` and
        ``var = var_t - diag(Cov_t(rows, pending) S^-1 Cov_t(pending, rows))``, clipped at 0:
        O(p c (d + t) + p^3) by linear algebra on :meth:`covariance` blocks, no copy of the GP.
        """
        pending = np.asarray(pending, dtype=np.int64).reshape(-1)
        if rows is None:  # slices of the state, not gathered copies of all n rows
            mean, var = self.mean.copy(), self.posterior_variance()
        else:
            rows = np.asarray(rows, dtype=np.int64).reshape(-1)
            mean, var = self.mean[rows].copy(), self.posterior_variance()[rows]
        if pending.size == 0:
            return mean, var
        S = self.covariance(pending) + self.noise_variance * np.eye(pending.size)
        factor = cho_factor(0.5 * (S + S.T), lower=True)
        if rows is None:
            # the p rows (p, n) as add() builds a row of V, and S^-1 (p, p) times them: a wide
            # solve or product through another BLAS than add()'s woke two pools of BLAS threads
            # against each other (10 ms instead of 0.5 at p = 4, n = 5000 on 2 cores)
            t, cross = self.t, np.empty((pending.size, self.n))
            for row, i in zip(cross, pending, strict=True):
                self._kernel_row(int(i), out=row)
                if t:
                    self._subtract_projection(self._column(int(i), t), row, t)
            solved = cho_solve(factor, np.eye(pending.size), check_finite=False) @ cross
        else:
            cross = self.covariance(pending, rows)  # (p, c)
            solved = cho_solve(factor, cross, check_finite=False)
        var = np.maximum(var - np.einsum("pc,pc->c", cross, solved), 0.0)
        if values is not None:
            resid = np.asarray(values, dtype=float).reshape(-1) - self.mean[pending]
            mean += cross.T @ cho_solve(factor, resid, check_finite=False)
        return mean, var

    def _rows(self, rows, name: str) -> np.ndarray:
        rows = np.asarray(rows)
        if rows.ndim != 1 or rows.size == 0 or not np.issubdtype(rows.dtype, np.integer):
            raise ValueError(f"{name} must be a non-empty 1-D array of row indices, got {rows!r}")
        if rows.min() < 0 or rows.max() >= self.n:
            raise ValueError(f"{name} must be row indices in [0, {self.n - 1}], got {rows!r}")
        return rows

    # -- update -----------------------------------------------------------------------------
    def add(self, index: int, y: float, noise_variance: float | None = None) -> None:
        """Condition on ``y`` observed at candidate ``index`` (noise variance default sigma_n^2)."""
        i = check_int(index, "index", low=0, high=self.n - 1)
        y = check_real(y, "y")
        s = self.noise_variance if noise_variance is None else noise_variance
        s = check_real(s, "noise_variance", low=0.0, low_open=False)
        t = self.t
        self._ensure_capacity(t + 1)
        if self._single:
            l_row = l_wide = self._blocks[0][:t, i]
        else:  # the new row of L solved in float64, not read off the rounded V
            l_wide = self._solve_factor(self._cross([i])[:, 0])
            l_row = l_wide.astype(self.dtype)  # what the float32 gemv reads
        pivot2 = self._prior_var[i] + s - l_wide @ l_wide
        pivot2 = max(pivot2, _PIVOT_FLOOR * max(self._prior_var[i], 1e-300))
        pivot = np.sqrt(pivot2)
        v = self._kernel_row(i, out=self._row(t))  # the new row of V, built in place
        if t:
            # v <- v - V[:t]^T l: the O(n t) gemv, the only step that grows with t
            self._subtract_projection(l_row, v, t)
        v *= 1.0 / pivot
        w = (y - self.prior_mean - l_wide @ self._w[:t]) / pivot
        self._pivots[t] = pivot
        self._w[t] = w
        if self._L is not None:
            self._L[t, :t] = l_wide
            self._L[t, t] = pivot
        if self._single:
            blas.daxpy(v, self.mean, a=w)  # mean += w v, in place
            np.multiply(v, v, out=self._scratch)
        else:  # mean and variance accumulate the stored float32 row in float64
            wide = self._scratch
            np.copyto(wide, v)
            blas.daxpy(wide, self.mean, a=w)
            np.multiply(wide, wide, out=wide)
        self._var -= self._scratch
        self._idx.append(i)
        self._y.append(y)
        self._noise.append(s)

    def add_many(self, indices, ys) -> None:
        """Condition on ``ys`` observed at candidates ``indices`` (noise sigma_n^2), in order:
        the posterior of :meth:`add` called for each, to rounding. A GP with no observation
        yet (float64) factors ``K_tt + sigma_n^2 I`` once and solves the whole t x n block
        with BLAS-3 (``trsm``) instead of t matrix-vector passes over it; otherwise, or when
        that factor is not positive definite, it adds them one by one."""
        indices = self._rows(indices, "indices")
        ys = np.asarray(ys, dtype=float).reshape(-1)
        if ys.shape != indices.shape or not np.all(np.isfinite(ys)):
            raise ValueError(f"ys must be {indices.size} finite values, got {ys!r}")
        if self.t == 0 and self._single and indices.size > 1:
            try:
                self._add_first(indices, ys)
                return
            except np.linalg.LinAlgError:
                pass  # rank-deficient: the pivot floor of add() handles it
        for i, y in zip(indices, ys, strict=True):
            self.add(int(i), float(y))

    def _add_first(self, indices: np.ndarray, ys: np.ndarray) -> None:
        t, s = indices.size, self.noise_variance
        K = self._cross_of(indices)
        K[np.diag_indices(t)] += s
        L = np.linalg.cholesky(K)
        floor = _PIVOT_FLOOR * np.maximum(self._prior_var[indices], 1e-300)
        if np.any(np.diag(L) ** 2 < floor):
            raise np.linalg.LinAlgError("a pivot under the floor")
        self._ensure_capacity(t)
        V = self._blocks[0][:t]
        for r, i in enumerate(indices):
            self._kernel_row(int(i), out=V[r])
        # V <- L^{-1} V in place: V.T is Fortran-ordered, so trsm solves X L^T = V^T on it
        blas.dtrsm(1.0, L, V.T, side=1, lower=1, trans_a=1, overwrite_b=True)
        w = solve_triangular(L, ys - self.prior_mean, lower=True, check_finite=False)
        self._pivots[:t] = np.diag(L)
        self._w[:t] = w
        self.mean = self.prior_mean + V.T @ w
        self._var = self._prior_var - np.einsum("tn,tn->n", V, V)
        self._idx.extend(int(i) for i in indices)
        self._y.extend(float(y) for y in ys)
        self._noise.extend([s] * t)

    def _cross_of(self, rows: np.ndarray) -> np.ndarray:
        """``k(X[rows], X[rows])`` (t, t) from the cached scaled candidates."""
        if self._scaled is None:
            return np.asarray(self.kernel.K, dtype=float)[np.ix_(rows, rows)].copy()
        z, sq = self._scaled[rows], self._sqnorm[rows]
        r2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * (z @ z.T), 0.0)
        return self.kernel.from_sqdist(r2, out=r2)

    # -- the t x t factor ---------------------------------------------------------------------
    def cholesky_factor(self) -> np.ndarray:
        """The lower Cholesky factor ``L`` (t, t) of ``K_tt + diag(noise)``, float64, a new array
        (float64 mode reads its rows off ``V``; float32 mode keeps it in float64)."""
        t = self.t
        if self._L is not None:
            return self._L[:t, :t].copy()
        # row k of L is l = V[:k, i_k], the column of V when observation k came in
        L = np.tril(self._blocks[0][:t, self._idx].T, -1)
        L[np.diag_indices(t)] = self._pivots[:t]
        return L

    def posterior_at(self, rows) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean (k,) and latent variance (k,) (clipped at 0) at candidate ``rows``,
        solved in float64 from the t x t factor: O(k t (t + d)), no pass over the n rows.

        With ``dtype="float32"`` these are the float64-accurate values that ``mean[rows]`` and
        ``variance[rows]`` approximate (the float32 block is accurate to about
        ``eps32 * cond(K_tt + diag(noise))``); in float64 they agree with them to rounding.
        """
        rows = self._rows(rows, "rows")
        t = self.t
        var = self._prior_var[rows].copy()
        if t == 0:
            return np.full(rows.size, self.prior_mean), var
        W = self._solve_factor(self._cross(rows), self.cholesky_factor())  # (t, k)
        mean = self.prior_mean + W.T @ self._w[:t]
        var -= np.einsum("tk,tk->k", W, W)
        return mean, np.maximum(var, 0.0, out=var)

    def _cross(self, rows) -> np.ndarray:
        """``k(X_observed, X[rows])`` (t, k)."""
        return self.kernel(self.candidates[self._idx], self.candidates[rows])

    def _solve_factor(self, b: np.ndarray, L: np.ndarray | None = None) -> np.ndarray:
        """``L^{-1} b`` for b (t,) or (t, k) (``L`` default: the kept float64 factor)."""
        if b.shape[0] == 0:
            return b.astype(np.float64)
        L = self._L[: b.shape[0], : b.shape[0]] if L is None else L
        return solve_triangular(L, b, lower=True, check_finite=False)

    # -- storage of V -----------------------------------------------------------------------
    def _pieces(self, t: int):
        """The first ``t`` rows of ``V`` as contiguous (k, n) slices of its blocks, in order."""
        for block in self._blocks:
            if t <= 0:
                return
            k = min(t, block.shape[0])
            yield block[:k]
            t -= k

    def _row(self, r: int) -> np.ndarray:
        """Row ``r`` of ``V`` (n,), a view to write into."""
        for block in self._blocks:
            if r < block.shape[0]:
                return block[r]
            r -= block.shape[0]
        raise IndexError(r)

    def _column(self, i: int, t: int) -> np.ndarray:
        """``V[:t, i]`` (t,) in the storage dtype (a strided view in float64)."""
        if self._single:
            return self._blocks[0][:t, i]
        parts = [piece[:, i] for piece in self._pieces(t)]
        return np.concatenate(parts) if parts else np.empty(0, dtype=self.dtype)

    def _columns(self, rows: np.ndarray, t: int) -> np.ndarray:
        """``V[:t, rows]`` (t, k) in float64."""
        if self._single:
            return self._blocks[0][:t, rows]
        return np.concatenate([piece[:, rows] for piece in self._pieces(t)]).astype(np.float64)

    def _subtract_projection(self, l_row: np.ndarray, out: np.ndarray, t: int) -> None:
        """``out -= V[:t]^T l_row`` in place (``l_row`` in the storage dtype, t >= 1).

        ``V[:t].T`` of a C-ordered block is Fortran-ordered, so BLAS reads it without a copy and
        accumulates into ``out`` in place. A float64 ``out`` of a float32 ``V`` (the batch rows
        of :meth:`hallucinated`) receives the float32 product, widened.
        """
        if self._single:
            blas.dgemv(-1.0, self._blocks[0][:t].T, l_row, beta=1.0, y=out, overwrite_y=True)
            return
        start = 0
        for piece in self._pieces(t):
            part = l_row[start : start + piece.shape[0]]
            start += piece.shape[0]
            if out.dtype == np.float32:
                blas.sgemv(-1.0, piece.T, part, beta=1.0, y=out, overwrite_y=True)
            else:
                out -= blas.sgemv(1.0, piece.T, part)

    def _kernel_row(self, i: int, out: np.ndarray) -> np.ndarray:
        """``k(x_i, X)`` (n,) written into ``out`` from the cached scaled candidates, O(n d).

        A float32 ``out`` gets the squared distances formed in float64 (in the scratch buffer:
        their expansion cancels) and rounded, then the kernel's shape evaluated in float32.
        """
        if self._scaled is None:
            return self.kernel.row(i, out)
        r2 = out if out.dtype == np.float64 else self._scratch
        z = self._scaled
        np.dot(z, -2.0 * z[i], out=r2)
        r2 += self._sqnorm[i]
        r2 += self._sqnorm
        np.maximum(r2, 0.0, out=r2)
        if r2 is not out:
            np.copyto(out, r2, casting="same_kind")
        return self.kernel.from_sqdist(out, out=out)

    def _ensure_capacity(self, size: int) -> None:
        cap = self._pivots.shape[0]
        if size <= cap:
            return
        new_cap = max(size, 2 * cap)
        if self._single:
            V = np.empty((new_cap, self.n))
            V[:cap] = self._blocks[0]
            self._blocks = [V]
        else:  # a new block, the old rows stay where they are: no copy, no double peak
            self._blocks.append(np.empty((new_cap - cap, self.n), dtype=self.dtype))
        if self._L is not None:
            L = np.zeros((new_cap, new_cap))
            L[:cap, :cap] = self._L
            self._L = L
        pivots = np.zeros(new_cap)
        pivots[:cap] = self._pivots
        w = np.empty(new_cap)
        w[:cap] = self._w
        self._pivots, self._w = pivots, w

    # -- reference implementation (tests, debugging) ------------------------------------------
    def direct_posterior(self) -> tuple[np.ndarray, np.ndarray]:
        """Mean and latent variance recomputed from scratch with ``np.linalg.solve`` (O(t^3 + n t^2))."""
        if self.t == 0:
            return self.mean.copy(), self.variance
        Xt = self.candidates[self._idx]
        A = self.kernel(Xt) + np.diag(self._noise)
        Kxt = self.kernel(self.candidates, Xt)
        alpha = np.linalg.solve(A, self.observed_values - self.prior_mean)
        mean = self.prior_mean + Kxt @ alpha
        var = self._prior_var - np.einsum("ij,ji->i", Kxt, np.linalg.solve(A, Kxt.T))
        return mean, np.maximum(var, 0.0)

    def direct_covariance(self, rows_a, rows_b=None) -> np.ndarray:
        """:meth:`covariance` recomputed from scratch with ``np.linalg.solve`` (reference)."""
        a = self._rows(rows_a, "rows_a")
        b = a if rows_b is None else self._rows(rows_b, "rows_b")
        Xa, Xb = self.candidates[a], self.candidates[b]
        prior = self.kernel(Xa, Xb)
        if self.t == 0:
            return prior
        Xt = self.candidates[self._idx]
        A = self.kernel(Xt) + np.diag(self._noise)
        return prior - self.kernel(Xa, Xt) @ np.linalg.solve(A, self.kernel(Xt, Xb))
