"""Q-GP-UCB (Dai et al., NeurIPS 2023, Algorithm 1) and the classical GP-UCB baseline.

Both are UCB rules on one weighted GP posterior over a finite set of points (paper section 4.1):
``mu~_s(x) = k~_s(x)^T (K~_s + lambda I)^{-1} Y~_s`` with ``K~ = W^{1/2} K W^{1/2}``,
``W = diag(1/eps_tau^2)``.  Since ``(K~ + lambda I)^{-1} = W^{-1/2} (K + lambda W^{-1})^{-1}
W^{-1/2}``, this is *exactly* the ordinary GP posterior with per-observation noise variance
``lambda eps_tau^2``, so the shared :class:`~frontierbo.core.gp.FiniteDomainGP` serves as the
weighted GP with no second copy of the posterior algebra (tests check it
against eq. (3) and Appendix A, eq. (6) of the paper).

Algorithm 1, one stage ``s`` (paper line numbers)::

    2: x_s   = argmax_x  mu~_{s-1}(x) + beta_s sigma~_{s-1}(x)        -> ask()  (beta_s: a width)
    3: eps_s = sigma~_{s-1}(x_s) / sqrt(lambda)                       -> ask()
    4-6: y_s = QMC(O_{x_s}, eps_s, delta_s)  (N_s oracle queries)      -> the caller's oracle
    7: add (x_s, y_s) with weight 1/eps_s^2                           -> tell()

The paper's ``epsilon_s`` (``eps_s`` above and in formulas) is the target accuracy of stage ``s``;
in frontierbo ``epsilon`` is a privacy budget, so the code calls it ``accuracy``:
``Stage.accuracy``, ``tell(index, y, accuracy)``, ``observe(index, y, accuracy)``.

``weighting="reference"`` reproduces the authors' code, whose mean weights ``y_tau`` by
``1/eps_tau^3`` instead of ``1/eps_tau^2`` (docs/decisions.md#quantum-bo-reference-mean-weighting):
it equals the paper posterior fed with ``y_tau / eps_tau``, which is how it is implemented.  The
variance is the same in both.

The paper's ``beta_s`` multiplies ``sigma~``: it is a *width* in frontierbo's naming
(:mod:`frontierbo.core.acquisition`), so the constructors take ``width=`` and the selection is
:func:`~frontierbo.core.acquisition.select_ucb` with ties broken by the lowest index.

Points: the GP lives on ``gram.shape[0]`` points; the first ``n_arms`` are the arms that ``ask``
chooses from, the rest are extra points (e.g. the reference code's continuous random initial
point) that can only be observed through :meth:`observe`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from frontierbo._validation import check_int, check_matrix, check_probability, check_real
from frontierbo.core.acquisition import select_ucb
from frontierbo.core.gp import FiniteDomainGP
from frontierbo.core.kernels import PrecomputedKernel

__all__ = ["WEIGHTINGS", "WIDTH_SCHEDULES", "ClassicalGPUCB", "QGPUCB", "Stage"]

WEIGHTINGS = ("paper", "reference")
#: The named width schedules.
WIDTH_SCHEDULES = ("log", "theory")


@dataclass(frozen=True)
class Stage:
    """One UCB decision: the arm, the width used, the posterior there and the target accuracy
    ``eps_s`` of its estimate."""

    index: int
    width: float
    mean: float
    std: float
    accuracy: float


class _WeightedUCB:
    """UCB on the weighted GP posterior over arms (and optional extra points)."""

    def __init__(self, gram, *, n_arms=None, lam=1.0, width=1.0, B=1.0, delta=0.1):
        K = check_matrix(gram, "gram")
        self.n_points = K.shape[0]
        self.n_arms = self.n_points if n_arms is None else check_int(n_arms, "n_arms", low=1)
        if self.n_arms > self.n_points:
            raise ValueError(f"n_arms must be <= gram.shape[0]={self.n_points}, got {self.n_arms}")
        self.lam = check_real(lam, "lam", low=0.0)
        self.B = check_real(B, "B", low=0.0, low_open=False)
        self.delta = check_probability(delta, "delta")
        self.gp = FiniteDomainGP(
            PrecomputedKernel.arms(self.n_points), PrecomputedKernel(K), noise_variance=self.lam
        )
        self.width_rule = self._check_width(width)
        self._log_noise_sum = 0.0  # sum_tau ln(lambda eps_tau^2), for the information gain
        self._std = np.empty(self.n_points)  # sigma~ of every point at the latest selection
        self._scores = np.empty(self.n_arms)

    @staticmethod
    def _check_width(width):
        if isinstance(width, str):
            if width not in WIDTH_SCHEDULES:
                raise ValueError(
                    f"width must be one of {WIDTH_SCHEDULES}, a positive number or a callable, "
                    f"got {width!r}"
                )
            return width
        if callable(width):
            return width
        return check_real(width, "width", low=0.0)

    # -- the width beta_s --------------------------------------------------------------------
    @property
    def information_gain(self) -> float:
        """``gamma~ = 0.5 ln det(I + K~ / lambda)`` of the observations so far (Theorem 3)."""
        return 0.5 * (self.gp.log_det - self._log_noise_sum)

    def width(self) -> float:
        """The paper's ``beta_s``: the multiplier of ``sigma~`` in the next UCB.

        ``"log"``: ``1 + ln n`` with ``n`` the observations in the model (the reference code and
        App. J; ``n = 0`` gives 1); ``"theory"``: Theorem 3's
        ``B + sqrt(2 (gamma~ + 1 + ln(2/delta)))``; a number: constant; a callable: ``width(n)``.
        """
        n = self.gp.t
        if self.width_rule == "log":
            return 1.0 + math.log(max(n, 1))
        if self.width_rule == "theory":
            return self.B + math.sqrt(
                2.0 * (self.information_gain + 1.0 + math.log(2.0 / self.delta))
            )
        if callable(self.width_rule):
            return float(self.width_rule(n))
        return self.width_rule

    # -- posterior over the arms ---------------------------------------------------------------
    @property
    def mean(self) -> np.ndarray:
        return self.gp.mean[: self.n_arms]

    @property
    def std(self) -> np.ndarray:
        return self.gp.posterior_std()[: self.n_arms]

    def _choose(self) -> tuple[int, float, float]:
        """The arm of the next UCB (ties: first index, as numpy / the reference code), the width
        used and sigma~ there."""
        width = self.width()
        std = self.gp.posterior_std(out=self._std)
        a = self.n_arms
        i = select_ucb(self.gp.mean[:a], std[:a], width, out=self._scores)
        return i, width, float(std[i])

    def _add(self, index: int, y: float, accuracy: float) -> None:
        noise = self.lam * accuracy * accuracy
        self.gp.add(index, y, noise_variance=noise)
        self._log_noise_sum += math.log(noise)


class QGPUCB(_WeightedUCB):
    """Q-GP-UCB over a finite domain given by its Gram matrix.

    Args:
        gram: (n_points, n_points) kernel matrix, ``k(x, x) <= 1`` for the paper's guarantees.
        n_arms: the first ``n_arms`` points are the arms (default: all).
        lam: regulariser ``lambda`` (paper: ``1 + 2/T`` in theory, 1 in the experiments).
        width: the paper's ``beta_s`` (multiplies ``sigma~``): ``"log"`` (default, the
            experiments), ``"theory"``, a constant or ``n -> width``.
        B, delta: RKHS-norm bound and confidence of the ``"theory"`` width.
        weighting: ``"paper"`` (eq. 3, weights ``1/eps^2``) or ``"reference"`` (authors' code,
            mean weights ``1/eps^3``; only to reproduce the published figures).
    """

    def __init__(
        self,
        gram,
        *,
        n_arms=None,
        lam=1.0,
        width="log",
        B=1.0,
        delta=0.1,
        weighting="paper",
    ):
        super().__init__(gram, n_arms=n_arms, lam=lam, width=width, B=B, delta=delta)
        if weighting not in WEIGHTINGS:
            raise ValueError(f"weighting must be one of {WEIGHTINGS}, got {weighting!r}")
        self.weighting = weighting
        self.stages = 0

    def ask(self) -> Stage:
        """Lines 2-3: the arm ``x_s`` and its accuracy ``eps_s = sigma~_{s-1}(x_s) / sqrt(lambda)``."""
        i, width, std = self._choose()
        eps = std / math.sqrt(self.lam)
        if eps <= 0.0:
            raise RuntimeError(
                f"posterior variance at arm {i} is 0: the weighted GP cannot give it a finite weight"
            )
        return Stage(index=i, width=width, mean=float(self.gp.mean[i]), std=std, accuracy=eps)

    def tell(self, index: int, y: float, accuracy: float) -> None:
        """Line 7: add ``(x_s, y_s)`` with weight ``1/eps_s^2``, ``eps_s = accuracy``."""
        self.observe(index, y, accuracy)
        self.stages += 1

    def observe(self, index: int, y: float, accuracy: float) -> None:
        """Add an observation of any point (arm or extra) estimated to ``accuracy`` (> 0)."""
        eps = check_real(accuracy, "accuracy", low=0.0)
        y = check_real(y, "y")
        self._add(index, y / eps if self.weighting == "reference" else y, eps)


class ClassicalGPUCB(_WeightedUCB):
    """GP-UCB (paper eq. 1, one classical pull per query): the weighted posterior with every
    accuracy ``eps = 1``, i.e. noise variance ``lambda`` (the experiments' ``lambda = 1`` regardless
    of the true noise); the ``accuracy`` passed to ``tell`` / ``observe`` is ignored.  ``width`` is the multiplier of ``sigma`` (experiments: sqrt(2) synthetic,
    1 AutoML; default 1).
    """

    def __init__(self, gram, *, n_arms=None, lam=1.0, width=1.0, B=1.0, delta=0.1):
        super().__init__(gram, n_arms=n_arms, lam=lam, width=width, B=B, delta=delta)

    def ask(self) -> Stage:
        i, width, std = self._choose()
        return Stage(index=i, width=width, mean=float(self.gp.mean[i]), std=std, accuracy=1.0)

    def tell(self, index: int, y: float, accuracy: float = 1.0) -> None:
        """Add one pull ``y`` of arm ``index`` (weight 1, whatever ``accuracy``)."""
        self.observe(index, y)

    def observe(self, index: int, y: float, accuracy: float = 1.0) -> None:
        """Add one pull ``y`` of any point (weight 1, whatever ``accuracy``)."""
        self._add(index, check_real(y, "y"), 1.0)
