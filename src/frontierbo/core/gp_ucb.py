"""GP-UCB (Srinivas et al. 2010) as an ask/tell optimiser over a finite domain.

    for t = 1..T:
        beta_t = 2 log(n t^2 pi^2 / (6 delta))            # or a constant, or a callable
        i_t    = argmax_i  mu_t(x_i) + beta_t^{1/2} sigma_t(x_i)
        y_t    = query(i_t);  update the GP posterior     # tell(i_t, y_t)

``tell`` also accepts rows that were not asked for (initial design): they update the posterior but
do not advance ``t``. The selection is :func:`frontierbo.core.acquisition.select_ucb` with the
width ``sqrt(beta_t)``: observed rows excluded, ties broken by the lowest row index.

Asking twice without telling returns the same pending row and does not advance ``t`` (a round is
one ask and the next tell; see :meth:`GPUCB.ask`).

:func:`gp_bucb_scores` is GP-BUCB (Desautels et al. 2014), the batch rule for rows asked but not
told yet: the UCB with the variance conditioned on those rows hallucinated at the posterior mean.
The studies' parallel workers and the macro-action baseline B4 both score with it.
"""

from __future__ import annotations

import numpy as np

from frontierbo.core.acquisition import (
    AllExcludedError,
    make_beta_schedule,
    select_max,
    select_ucb,
    ucb_scores,
    width_from_beta,
)
from frontierbo.core.gp import FiniteDomainGP
from frontierbo.core.kernels import PrecomputedKernel, StationaryKernel

#: What the UCB width multiplies (``GPUCB(uncertainty=...)``).
UNCERTAINTIES = ("std", "variance")

#: Fewest and most rows that a float32 ``GPUCB.ask`` rescores in float64.
SHORTLIST_MIN, SHORTLIST = 64, 4096


class GPUCB:
    """Ask/tell GP-UCB over ``candidates`` (n, d).

    Parameters
    ----------
    candidates : array (n, d)
    kernel : a kernel object (``SquaredExponential``, ``Matern32``, ``Matern52`` or
        ``PrecomputedKernel``);  noise_variance : sigma_n^2;  prior_mean : constant prior mean.
    beta : ``"srinivas"`` (default), a positive constant, or a callable ``t -> beta_t``; a beta in
        the sense of :mod:`frontierbo.core.acquisition`: the UCB is ``mu + sqrt(beta_t) sigma``.
    delta : the ``delta`` of the Srinivas schedule (PO-GP-UCB's ``delta' = delta_ucb / 2``).
    exclude_observed : never propose a row that was already observed (default True).
    predictive_variance : use the variance of a noisy observation (thesis eq. 3.2) in the UCB.
    uncertainty : ``"std"`` (default, GP-UCB as published) or ``"variance"``, a reproduction
        aid: the score becomes ``mu + sqrt(beta_t) * sigma^2``, i.e. the same multiplier
        ``sqrt(beta_t)`` applied to the posterior *variance*. That is what the public code of
        the PO-GP-UCB paper (``Mitan/po-gp-ucb``, ``UCB.py``) computes: its ``beta`` is
        ``sqrt(2 log(n t^2 pi^2 / (6 * 0.1)))``, Srinivas' sqrt(beta_t) with delta = 0.1, and it
        multiplies the variance. The score is then not a confidence bound (it adds y^2 units
        to y units), so it depends on the scale of the outputs; with sigma^2 <= 1 it explores
        less than GP-UCB. The keyword is not ``width``: library-wide a width multiplies the
        standard deviation (:mod:`frontierbo.core.acquisition`), and here the same number
        multiplies something else.
    """

    def __init__(
        self,
        candidates,
        kernel: StationaryKernel | PrecomputedKernel,
        noise_variance: float,
        prior_mean: float = 0.0,
        beta="srinivas",
        delta: float = 0.025,
        exclude_observed: bool = True,
        predictive_variance: bool = False,
        uncertainty: str = "std",
        dtype="float64",
    ):
        if not isinstance(kernel, StationaryKernel | PrecomputedKernel):
            raise TypeError(
                "kernel must be a kernel object such as frontierbo.core.kernels."
                f"SquaredExponential(lengthscale, variance), got {kernel!r}"
            )
        if uncertainty not in UNCERTAINTIES:
            raise ValueError(f"uncertainty must be one of {UNCERTAINTIES}, got {uncertainty!r}")
        self.gp = FiniteDomainGP(candidates, kernel, noise_variance, prior_mean, dtype=dtype)
        self.beta_schedule = make_beta_schedule(beta, self.gp.n, delta)
        self.exclude_observed = bool(exclude_observed)
        self.predictive_variance = bool(predictive_variance)
        self.uncertainty = uncertainty
        self._scores = np.empty(self.gp.n)  # ask()'s buffer for the UCB scores
        self._pending: int | None = None  # the row asked for and not yet told
        self._margin = 0.0  # float32: the shortlist's score margin, carried between rounds
        self.t = 0

    @property
    def pending(self) -> int | None:
        """The row returned by the last :meth:`ask` when no tell followed it yet, or None."""
        return self._pending

    def acquisition(self, t: int | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """UCB scores (n,) for round ``t`` (default: the next round), written into ``out`` if given.

        Same values as ``ucb(mean, std, beta_t)``, in 4 passes over n and no temporaries
        (with ``uncertainty="variance"``: ``mean + sqrt(beta_t) * variance``).
        """
        t = self.t + 1 if t is None else t
        spread = self._spread(out)
        return ucb_scores(self.gp.mean, spread, width_from_beta(self.beta_schedule(t)), out=spread)

    def ask(self) -> int:
        """The next row to query: argmax of the UCB (over unobserved rows if excluding).

        A round is one ask and the next tell: until a tell, ``ask()`` returns the same row again
        and ``t`` stays (so ``beta_t`` counts rounds, not calls, and a caller that retries
        ``ask`` after a failure gets the same proposal). The tell that ends a round may report
        another row than the one asked for (the caller evaluated something else). GP-UCB
        proposes one row at a time; the batch (pending-aware) rule is :func:`gp_bucb_scores`.
        """
        if self._pending is not None:
            return self._pending
        spread = self._spread(self._scores)
        width = width_from_beta(self.beta_schedule(self.t + 1))
        # observed_indices is O(t): excluding by index avoids another pass over n
        exclude = self.gp.observed_indices if self.exclude_observed else None
        try:
            i = select_ucb(self.gp.mean, spread, width, exclude=exclude, out=spread)
        except AllExcludedError:
            raise RuntimeError(
                "all candidates have been observed; pass exclude_observed=False to allow repeats"
            ) from None
        if self.gp.dtype != np.float64:
            i = self._decide(spread, i, width)
        self.t += 1
        self._pending = i
        return i

    def _decide(self, scores: np.ndarray, i: int, width: float) -> int:
        """float32: the float64 argmax among the rows whose float32 ``scores`` are near the top
        ``scores[i]`` (excluded rows are -inf there); ties go to the lowest row, as in float64.

        The shortlist is every row within ``margin`` of the top, at least SHORTLIST_MIN rows;
        twice the largest float32 error on it bounds the error of the rows left out, and it
        grows until the best float64 score is at least the top minus the margin plus that
        bound, or holds SHORTLIST rows. The margin carries over to the next round.
        """
        top = scores[i]
        if not np.isfinite(top):
            return i
        margin = self._margin or 1e-6 * (abs(top) + 1.0)
        free = None  # rows with a score above -inf, counted only when needed
        while True:
            low = top - margin  # -inf only past every finite score: never take excluded rows
            rows = np.flatnonzero(scores >= low if low > -np.inf else scores > low)  # ascending
            if rows.size < SHORTLIST_MIN:
                free = np.count_nonzero(scores > -np.inf) if free is None else free
                if rows.size < free:
                    margin *= 4.0
                    continue
            full = rows.size >= SHORTLIST
            if full:  # the SHORTLIST best, ties at the cut to the lowest rows (as select_max)
                vals = scores[rows]
                cut = np.partition(vals, -SHORTLIST)[-SHORTLIST]
                above = rows[vals > cut]
                rows = np.sort(np.r_[above, rows[vals == cut][: SHORTLIST - above.size]])
            exact = self._scores_at(rows, width)
            bound = 2.0 * float(np.abs(exact - scores[rows]).max())
            k = select_max(exact)  # ties: the lowest position, so the lowest row
            need = top - exact[k] + bound
            if margin >= need or full:
                break
            free = np.count_nonzero(scores > -np.inf) if free is None else free
            if rows.size == free:
                break
            margin = max(2.0 * need, 2.0 * margin)
        # the next round starts from this margin, halved when it took in many more rows
        self._margin = 0.5 * margin if rows.size > 4 * SHORTLIST_MIN else margin
        return int(rows[k])

    def _scores_at(self, rows: np.ndarray, width: float) -> np.ndarray:
        """The UCB at ``rows`` from the float64 posterior of the t x t factor."""
        mean, var = self.gp.posterior_at(rows)
        if self.predictive_variance:
            var += self.gp.noise_variance
        return mean + width * (var if self.uncertainty == "variance" else np.sqrt(var))

    def _spread(self, out: np.ndarray | None) -> np.ndarray:
        """The std (or variance) that the UCB multiplies, latent or of a noisy observation."""
        s = self.gp.posterior_variance(out=out)
        if self.predictive_variance:
            s += self.gp.noise_variance
        if self.uncertainty == "variance":
            return s
        return np.sqrt(s, out=s)

    def tell(self, index: int, y: float) -> None:
        """Record observation ``y`` at row ``index``; after an ``ask`` this ends the round."""
        self.gp.add(index, y)
        self._pending = None


def gp_bucb_scores(gp: FiniteDomainGP, width: float, pending=(), rows=None) -> np.ndarray:
    """GP-BUCB's scores ``mu_t(x) + width * sigma_{t | pending}(x)`` at candidate ``rows``
    (default: all n): the rows in ``pending``, asked but not told yet, are hallucinated at the
    posterior mean (:meth:`FiniteDomainGP.hallucinated`), which leaves the mean at ``mu_t`` and
    shrinks the latent std around them, so a batch spreads out (Desautels et al. 2014). With
    nothing pending, the GP-UCB scores of :func:`~frontierbo.core.acquisition.ucb_scores`."""
    mean, var = gp.hallucinated(rows, pending)
    return ucb_scores(mean, np.sqrt(var, out=var), width, out=var)
