"""PO-GP-UCB as two parties: a curator that holds the data and a modeler that optimises.

The only messages (Algorithms 1-2 of the paper): the curator sends the release ``Z`` once;
then, each round, the modeler sends a row index ``i_t`` and the curator answers ``y_t``.
``Curator.query`` is that whole interface, so a network transport can replace the in-process
object. The modeler is built from ``Z`` and GP hyperparameters alone and never holds ``X``, ``M``
or the lifted data.

Algorithm 2 (the modeler), paper line numbers:

    1: Input: Z, delta', T
    2: for t = 1..T:
    3:     beta_t <- 2 log(n t^2 pi^2 / (6 delta'))             GPUCB.ask
    4:     z_t <- argmax_z  mu~_t(z) + beta_t^{1/2} sigma~_t(z)   GPUCB.ask
    5:     y_t <- curator.query(i_t)                             run_bo
    6:     update mu~_{t+1}, sigma~_{t+1}                         GPUCB.tell
"""

from __future__ import annotations

import numpy as np

from frontierbo._validation import SeedLike, as_generator, check_matrix, check_vector
from frontierbo.core.gp_ucb import GPUCB
from frontierbo.core.kernels import make_kernel
from frontierbo.core.loop import BOResult, Oracle, TableOracle, run_bo
from frontierbo.dp.accounting import PrivacyLedger
from frontierbo.po.random_projection import Release


class Curator:
    """Holds the sensitive inputs ``X`` (n, d) and the objective; releases ``Z``; answers queries.

    ``values`` (n,) are the objective values of the rows; ``query(i)`` returns
    ``values[i] + N(0, noise_std^2)``. ``mechanism`` is any object with
    ``release(X, seed) -> Release`` and ``guarantee() -> PrivacyGuarantee``. ``seed`` drives the release; ``noise_seed`` the query noise
    (by default a sub-stream of ``seed``). Passing the same ``noise_seed`` to a baseline's
    ``TableOracle`` gives both methods the same noise draws (common random numbers).
    """

    def __init__(
        self,
        inputs,
        values,
        mechanism,
        noise_std: float = 0.0,
        seed: SeedLike = None,
        noise_seed: SeedLike = None,
        ledger: PrivacyLedger | None = None,
    ):
        self._inputs = check_matrix(inputs, "inputs", min_rows=2)
        values = check_vector(values, "values", length=self._inputs.shape[0])
        self.mechanism = mechanism
        self.ledger = ledger
        self._release_rng = as_generator(seed)
        if noise_seed is None:
            noise_seed = self._release_rng.spawn(1)[0]
        self._oracle = TableOracle(values, noise_std, noise_seed)
        self.queries: list[int] = []

    @property
    def n(self) -> int:
        return self._inputs.shape[0]

    def release(self) -> Release:
        """Algorithm 1 (or another mechanism) on the held inputs.

        With a ``ledger``, the mechanism's guarantee is spent first: a release that would exceed
        the budget (or is not differentially private) raises ``BudgetExceededError`` / a
        ``ValueError`` and nothing is released.
        """
        if self.ledger is not None:
            self.ledger.spend(self.mechanism.guarantee(), label=self.mechanism.name)
        return self.mechanism.release(self._inputs, self._release_rng)

    def query(self, index: int) -> float:
        """The output for row ``index`` (Algorithm 2, line 5); the curator logs the index."""
        y = self._oracle.query(index)
        self.queries.append(int(index))
        return y


class POGPUCBModeler(GPUCB):
    """Algorithm 2: GP-UCB on the released ``Z`` with the curator's GP hyperparameters.

    Parameters
    ----------
    Z : array (n, r), the release.
    lengthscale, signal_variance, noise_variance, prior_mean : the GP hyperparameters handed over
        by the curator (in the units of the normalised inputs; isotropic kernel).
    delta_prime : ``delta'`` of line 3 (default ``delta_ucb / 2 = 0.025`` as in Theorem 3;
        docs/decisions.md#po-gp-ucb-delta-prime-is-half-of-delta_ucb).
    kernel : ``"se"`` (the paper's) or an isotropic Matérn (``"matern32"``, ``"matern52"``).
    exclude_observed, predictive_variance : see ``GPUCB``.
    uncertainty : ``"std"`` (default, line 4 as published) or ``"variance"`` (the authors'
        public code: ``mu~ + beta_t^{1/2} sigma~^2``), a reproduction aid; see ``GPUCB``.
    """

    def __init__(
        self,
        Z,
        lengthscale: float,
        signal_variance: float,
        noise_variance: float,
        prior_mean: float = 0.0,
        delta_prime: float = 0.025,
        kernel: str = "se",
        exclude_observed: bool = True,
        predictive_variance: bool = False,
        uncertainty: str = "std",
    ):
        super().__init__(
            Z,
            make_kernel(kernel, float(lengthscale), signal_variance),
            noise_variance,
            prior_mean,
            beta="srinivas",
            delta=delta_prime,
            exclude_observed=exclude_observed,
            predictive_variance=predictive_variance,
            uncertainty=uncertainty,
        )

    @classmethod
    def from_release(cls, release: Release, **hyperparameters) -> POGPUCBModeler:
        return cls(release.Z, **hyperparameters)

    def optimize(
        self, curator: Oracle, iterations: int, initial_indices=(), true_values=None
    ) -> BOResult:
        """Lines 2-7 for ``iterations`` rounds, after telling the initial rows."""
        return run_bo(self, curator, iterations, initial_indices, true_values)


def random_initial_rows(n: int, n_init: int, seed: SeedLike = None) -> np.ndarray:
    """``n_init`` distinct random row indices (the initial design, not counted in T)."""
    return as_generator(seed).choice(n, size=n_init, replace=False)
