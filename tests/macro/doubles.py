"""Test doubles shared by the macro tests: a torus grid domain and a small seeded GP.

(Imported as ``doubles``: pytest puts this folder on ``sys.path`` for its test modules.)
"""

import numpy as np
from scipy.stats import norm

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


def expected_max_of_lines(c, g):
    """E[max_a (c_a + g_a Z)], Z ~ N(0, 1), by integrating between the breakpoints."""
    cuts = sorted(
        {(c[i] - c[j]) / (g[j] - g[i]) for i in range(len(c)) for j in range(i) if g[i] != g[j]}
    )
    edges = [-np.inf, *cuts, np.inf]
    total = 0.0
    for u, v in zip(edges[:-1], edges[1:], strict=True):
        mid = (
            (u + v) / 2
            if np.isfinite(u) and np.isfinite(v)
            else (v - 1 if np.isfinite(v) else u + 1)
        )
        a = int(np.argmax(c + g * (0.0 if not np.isfinite(mid) else mid)))
        total += c[a] * (norm.cdf(v) - norm.cdf(u)) + g[a] * (norm.pdf(u) - norm.pdf(v))
    return total


def exact_q_kappa_one_horizon_two(gp, domain, start) -> np.ndarray:
    """Q*_0 of every move from ``start`` for kappa = 1, H = 2, beta = 0 (thesis eq. (4.5)):
    ``mu(x1) + E[max_a mu_1(x')]`` with ``mu_1`` linear in the one Gaussian output at x1."""
    out = []
    for x in domain.macro_actions(start):
        x1 = int(x[0])
        s = np.sqrt(gp.covariance([x1])[0, 0] + gp.noise_variance)
        nxt = domain.macro_actions(x1)[:, 0]
        g = gp.covariance(nxt, [x1])[:, 0] / s
        out.append(gp.mean[x1] + expected_max_of_lines(gp.mean[nxt], g))
    return np.array(out)
