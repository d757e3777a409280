"""Test doubles shared by the macro tests: a torus grid domain and a small seeded GP.

(Imported as ``doubles``: pytest puts this folder on ``sys.path`` for its test modules.)
"""

import numpy as np

from frontierbo.core.gp import FiniteDomainGP
from frontierbo.core.kernels import SquaredExponential

MOVES = ((-1, 0), (1, 0), (0, -1), (0, 1))


class TorusGrid:
    """side x side cells on a torus; 4 straight macro-actions of kappa cells from every cell."""

    def __init__(self, side: int, kappa: int):
        self.side, self.kappa = side, kappa
        r, c = np.divmod(np.arange(side * side), side)
        self.inputs = np.column_stack([r, c]).astype(float)

    @property
    def n(self) -> int:
        return self.side**2

    def macro_actions(self, location: int) -> np.ndarray:
        r, c = divmod(int(location), self.side)
        k = np.arange(1, self.kappa + 1)
        return np.array(
            [((r + dr * k) % self.side) * self.side + (c + dc * k) % self.side for dr, dc in MOVES]
        )


def make_gp(domain, seed=0, n_obs=3, noise=0.05, lengthscale=1.5, prior_mean=0.3):
    """A GP over the domain's cells with ``n_obs`` seeded observations at distinct cells."""
    rng = np.random.default_rng(seed)
    kernel = SquaredExponential(lengthscale, 1.0)
    gp = FiniteDomainGP(domain.inputs, kernel, noise, prior_mean=prior_mean)
    for i in rng.choice(domain.n, n_obs, replace=False):
        gp.add(int(i), float(rng.normal()))
    return gp
