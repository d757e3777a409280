"""The query oracle of a black-box attack (the threat model of the thesis's Section 5.1,
eqs. (5.1)-(5.2)): the only door to the attacked model.

    Q(u), u in [-1, 1]^D a normalised full-resolution perturbation:
      6  if q = T: raise BudgetExhausted (the model is not called)
      1  delta <- delta_max u
      2  x <- clip(x_0 + delta, lower, upper)       (or the BayesOpt code's "rescale")
      3  p <- F(x);  q <- q + 1
      4  y <- log(p_tgt + 1e-30) - log(sum_{c != tgt} p_c + 1e-30)                      (5.2)
      5  if argmax p = tgt: record success at query q, raise AttackSucceeded; else return y

Every algorithm and baseline queries through one :class:`QueryOracle`, so the budget ``T`` can
never be exceeded, success is detected the same way for all (by the argmax, even when y <= 0),
and every query is logged (index, objective, predicted class, target score, L_inf distance).

Clipping towards the valid range never moves ``x`` further from a valid ``x_0``, so
``||x - x_0||_inf <= delta_max`` holds in ``"clip"`` mode. ``"rescale"`` is the BayesOpt code's
``x = (x_0 + delta) / (1 + 2 delta_max)`` (for the range [-0.5, 0.5]), offered for parity runs
only (docs/decisions.md#bos-pixel-range-by-clipping): it does not keep the L_inf bound (up to
``(delta_max + max|x_0| 2 delta_max) / (1 + 2 delta_max)``, 0.375 for MNIST's 0.3), so in that
mode a query of ``Q(u)`` succeeds on the argmax alone, as in the reference code, and the log keeps
the distance it reached.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from frontierbo._validation import check_int, check_real

#: Added inside both logarithms of (5.2), as the reference codes do.
TINY = 1e-30
RANGE_MODES = ("clip", "rescale")


def margin_objective(probabilities, target: int):
    """(5.2): ``log(p_tgt + 1e-30) - log(sum_{c != tgt} p_c + 1e-30)`` along the last axis
    (``logit(p_tgt)`` when the scores sum to 1, so ``y > 0`` implies success)."""
    p = np.asarray(probabilities, dtype=float)
    others = p.sum(axis=-1) - p[..., target]
    return np.log(p[..., target] + TINY) - np.log(others + TINY)


class AttackSucceeded(Exception):
    """Raised by the query that made the model predict the target class (it stops the attack)."""

    def __init__(self, query: int, x_adv: np.ndarray, objective: float):
        super().__init__(f"the target class was reached at query {query}")
        self.query, self.x_adv, self.objective = query, x_adv, objective


class BudgetExhausted(Exception):
    """Raised instead of a query beyond the budget (the model is not called)."""


@dataclass(frozen=True)
class QueryRecord:
    """One logged query: its 1-based index, y of (5.2), the predicted class, the target's score
    and ``||x - x_0||_inf`` of the queried input."""

    index: int
    objective: float
    predicted: int
    target_score: float
    linf: float


class QueryOracle:
    """``Q(u)`` (module docstring) for one attack instance.

    Args:
        model: ``model(x) -> p``: a batch ``x`` of shape ``(1, *x0.shape)`` to its class scores
            ``(1, C)`` (a probability vector: the score-based threat model).
        x0: the benign input, inside ``[lower, upper]``.
        target: the target class, an index into the scores.
        delta_max: the L_inf bound (> 0; 0.3 MNIST, 0.05 CIFAR-10).
        budget: ``T``, the most queries the model may receive (900 in the thesis).
        lower, upper: the valid input range ([-0.5, 0.5] for the C&W victims).
        range_mode: ``"clip"`` (default) or ``"rescale"`` (module doc).
    """

    def __init__(
        self,
        model: Callable[[np.ndarray], np.ndarray],
        x0,
        target: int,
        delta_max: float,
        budget: int,
        *,
        lower: float = -0.5,
        upper: float = 0.5,
        range_mode: str = "clip",
    ):
        if not callable(model):
            raise TypeError(f"model must be callable, got {type(model).__name__}")
        if range_mode not in RANGE_MODES:
            raise ValueError(f"range_mode must be one of {RANGE_MODES}, got {range_mode!r}")
        self.lower = check_real(lower, "lower")
        self.upper = check_real(upper, "upper")
        if not self.lower < self.upper:
            raise ValueError(f"lower must be < upper, got {lower} and {upper}")
        x0 = np.array(x0, dtype=float)
        if x0.size == 0 or not np.all(np.isfinite(x0)):
            raise ValueError("x0 must be a non-empty array of finite values")
        if x0.min() < self.lower or x0.max() > self.upper:
            raise ValueError(f"x0 must lie in [{self.lower}, {self.upper}]")
        x0.flags.writeable = False
        self.model, self.x0, self.range_mode = model, x0, range_mode
        self.target = check_int(target, "target", low=0)
        self.delta_max = check_real(delta_max, "delta_max", low=0.0)
        self.budget = check_int(budget, "budget", low=1)
        self._log: list[QueryRecord] = []
        self.success: AttackSucceeded | None = None

    @property
    def queries(self) -> int:
        """Queries made so far (``q``)."""
        return len(self._log)

    @property
    def remaining(self) -> int:
        return self.budget - self.queries

    @property
    def log(self) -> tuple[QueryRecord, ...]:
        return tuple(self._log)

    def input_for(self, u) -> np.ndarray:
        """Lines 1-2: the model input for the normalised perturbation ``u`` (no query)."""
        u = np.asarray(u, dtype=float)
        if u.shape != self.x0.shape:
            raise ValueError(f"u must have the shape of x0 {self.x0.shape}, got {u.shape}")
        if not np.all(np.isfinite(u)) or np.abs(u).max() > 1.0 + 1e-12:
            raise ValueError("u must be a normalised perturbation with values in [-1, 1]")
        x = self.x0 + self.delta_max * np.clip(u, -1.0, 1.0)  # line 1
        if self.range_mode == "clip":  # line 2
            return np.clip(x, self.lower, self.upper)
        return x / (1.0 + 2.0 * self.delta_max)

    def __call__(self, u) -> float:
        """One query: y of (5.2) for ``u``; raises :class:`AttackSucceeded` on success and
        :class:`BudgetExhausted` when the budget is spent."""
        return self._query(self.input_for(u), in_ball=self.range_mode == "clip")[1]

    def query_input(self, x) -> float:
        """One query of a model input ``x`` itself, for attacks that search outside the L_inf
        ball (ZOO, AutoZOOM: an L2 loss with a distortion penalty).

        ``x`` must lie in ``[lower, upper]``. Reaching the target counts as success only when
        ``||x - x_0||_inf <= delta_max``
        (docs/decisions.md#bos-zoo-and-autozoom-succeed-only-inside-the-ball); a hit outside
        the ball is logged (``predicted``, ``linf``) and the attack goes on.
        """
        return self._query(self._checked_input(x))[1]

    def scores(self, x) -> np.ndarray:
        """One query of a model input ``x`` (as :meth:`query_input`) that returns the whole
        probability vector ``F(x)``, for attacks whose loss needs more than y (ZOO's
        ``max_{i != t} log F_i``, GenAttack's win margin)."""
        return self._query(self._checked_input(x))[0]

    def _checked_input(self, x) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        if x.shape != self.x0.shape:
            raise ValueError(f"x must have the shape of x0 {self.x0.shape}, got {x.shape}")
        if not np.all(np.isfinite(x)) or x.min() < self.lower or x.max() > self.upper:
            raise ValueError(f"x must be finite and lie in [{self.lower}, {self.upper}]")
        return x

    def _query(self, x: np.ndarray, in_ball: bool = True) -> tuple[np.ndarray, float]:
        if self.success is not None:
            raise RuntimeError(f"the attack already succeeded at query {self.success.query}")
        if self.queries >= self.budget:  # line 6: refuse before querying
            raise BudgetExhausted(f"the budget of {self.budget} queries is spent")
        p = self._scores(x)  # line 3
        y = float(margin_objective(p, self.target))  # line 4
        predicted = int(np.argmax(p))
        linf = float(np.abs(x - self.x0).max())
        self._log.append(QueryRecord(self.queries + 1, y, predicted, float(p[self.target]), linf))
        # line 5 (the tolerance absorbs the rounding of x_0 + delta_max u)
        inside = linf <= self.delta_max * (1.0 + 1e-9) or not in_ball
        if predicted == self.target and inside:
            self.success = AttackSucceeded(self.queries, x, y)
            raise self.success
        return p, y

    def _scores(self, x: np.ndarray) -> np.ndarray:
        p = np.asarray(self.model(x[None]), dtype=float)
        if p.ndim != 2 or p.shape[0] != 1 or p.shape[1] <= self.target:
            raise ValueError(
                f"model must return scores of shape (1, C) with C > target = {self.target}, "
                f"got shape {p.shape}"
            )
        p = p[0]
        if not np.all(np.isfinite(p)) or p.min() < 0.0 or abs(p.sum() - 1.0) > 1e-4:
            raise ValueError("model must return a probability vector (finite, >= 0, sum 1)")
        return p
