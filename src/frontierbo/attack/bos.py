"""Bayesian optimal stopping of one perturbation loop (SolveBOS, Decide): eq. (5.5) of the
thesis, solved as in the BO-BOS reference code (``run_BOS``) by forward simulation, a summary
statistic on a grid and approximate backward induction.

After ``i_0`` queries of a loop with budget ``N``, the loop's running best ``m_j = max_{k<=j} y_k``
becomes an error-like curve ``e_j = m_j / lambda`` in ``[0, 1)`` (``lambda = 1.1 min y_{1:i_0} < 0``;
``e`` falls as the loop improves, ``e = 0`` is the success boundary). The loop should end (D1) when
it is unlikely to beat the incumbent ``e* = y* / lambda`` (outcome theta_1); D2 concludes that it
will (theta_2) and, like D0, keeps the loop running. Only D1 stops. The curve is ours
(docs/decisions.md#bos-the-loop-as-a-learning-curve); the constants are BO-BOS's
(docs/decisions.md#bos-stopping-constants-from-bo-bos).

    SolveBOS(y_{1:i_0}, y*, N, n_loop)
    1   K1 <- K1_init / gamma^n_loop;  T_b <- N - i_0
    2   e_{1:i_0}, e* from the running best and lambda
    3   fit a GP to {(j, e_j)}: zero mean, Freeze-Thaw kernel (alpha, beta by MLE), noise 1e-3
    4   draw S joint posterior samples of f at t = i_0+1..N            E in R^{S x T_b}
    5   discard samples with an entry >= 1 or <= 0                       S' remain
    6   running means  Ebar_s = (1/s) sum_{u<=s} E_u
    7   cells  kappa(v) = max{k : v > g_k},  g = linspace(0, 1, G)
    8   outcome z = 1[E_{T_b} > e*]                                      (theta_1: no improvement)
    9   n_{s,k}, p_{s,k}; L_D1 = K1 (1 - p) + C s, L_D2 = K2 p + C s   (1e4 where n = 0)
    10  backward: rho_{T_b} = min(L_D2, L_D1);  L_D0(s, k) = mean of rho_{s+1} over the cell's
        samples if n_{s,k} > 30, else 0;  rho_s = min(L_D2, L_D1, L_D0)
    11  A[s, k] = argmin (L_D2, L_D1[, L_D0]), continue where L_D0 = 0
    12  return A, g, lambda, e*

The reference code loops over the samples in Python; here each step is one ``bincount`` over the
cell indices, so S = 100 000 samples x 32 steps take a fraction of a second.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from frontierbo._validation import as_generator, check_int, check_real, check_vector
from frontierbo.core.exact import ExactGP, cholesky_with_jitter
from frontierbo.core.kernel_fit import fit_kernel
from frontierbo.core.kernels import ExponentialDecay
from frontierbo.core.sampling import sample_from_roots

#: Action codes of the reference implementation: 1 = D2 (conclude theta_2, keep going),
#: 2 = D1 (conclude theta_1: stop the loop), 3 = D0 (continue). The reference writes 0 for
#: "continue because L_D0 = 0"; both mean the same, so one code is used.
D2, D1, CONTINUE = 1, 2, 3
STOP = D1

#: Terminal loss of a cell no sample visits (reference ``run_BOS``): D1 and D2 tie, D0 wins.
EMPTY_CELL_LOSS = 1e4
#: Noise variance of the forward-simulation GP, fixed (reference: "to produce more diverse and
#: realistic forward simulation samples").
FORWARD_NOISE = 1e-3
#: MLE box for the Freeze-Thaw kernel's alpha and beta
#: (docs/decisions.md#bos-freeze-thaw-kernel-fit): wide, both positive, starting at 1.
KERNEL_BOUNDS = ((1e-3, 1e3), (1e-3, 1e3))
OUTCOMES = ("final", "trajectory")


# -- the error curve (docs/decisions.md#bos-the-loop-as-a-learning-curve) ------------------------
def curve_scale(y_init) -> float:
    """``lambda = min(1.1 min(y_{1:i_0}), -1e-8)``: negative, so errors of outputs ``y <= 0`` lie in
    ``[0, 1/1.1]``."""
    y = check_vector(y_init, "y_init")
    return min(1.1 * float(np.min(y)), -1e-8)


def error_curve(y, scale: float) -> np.ndarray:
    """``e_j = max_{k<=j} y_k / lambda`` (``scale = lambda < 0``): shape (len(y),), non-increasing
    while ``y`` only improves on the running best."""
    y = check_vector(y, "y")
    return np.maximum.accumulate(y) / check_real(scale, "scale", high=0.0)


def cell_index(values, grid: np.ndarray) -> np.ndarray:
    """Step 7: ``kappa(v) = max{k : v > g_k}`` for values in ``(0, 1)``, in ``0..G-2``."""
    return np.searchsorted(grid, values, side="left") - 1


# -- the policy ------------------------------------------------------------------------------
@dataclass(frozen=True)
class StoppingPolicy:
    """SolveBOS's result, all Decide needs plus the statistics behind each action.

    Attributes:
        actions: ``A``, shape (T_b, G-1), codes ``D2``, ``D1`` (stop) or ``CONTINUE``; row
            ``s - 1`` is the decision after query ``i_0 + s`` of the loop.
        grid: ``g = linspace(0, 1, G)``, the cell boundaries of the statistic ``Ebar_s``.
        scale: ``lambda``, fixed here and reused by Decide; incumbent_error: ``e*``.
        initial_steps: ``i_0``; k1: the ``K1`` used (``K1_init / gamma^n_loop``).
        stop_probability: ``p_{s,k} = P(theta_1 | s, k)`` (T_b, G-1), NaN where no sample fell.
        counts: ``n_{s,k}`` (T_b, G-1), forward samples per cell.
        kept_samples: ``S'``; kernel: the fitted ``ExponentialDecay`` (None if built by hand).
    """

    actions: np.ndarray
    grid: np.ndarray
    scale: float
    incumbent_error: float
    initial_steps: int
    k1: float
    stop_probability: np.ndarray
    counts: np.ndarray
    kept_samples: int = 0
    kernel: ExponentialDecay | None = None

    def __post_init__(self):
        if self.actions.ndim != 2 or self.actions.shape[1] != len(self.grid) - 1:
            raise ValueError(
                f"actions must have shape (T_b, G-1) = (T_b, {len(self.grid) - 1}), "
                f"got {self.actions.shape}"
            )

    @property
    def steps(self) -> int:
        """``T_b = N - i_0``, the decisions the loop can take."""
        return self.actions.shape[0]

    @property
    def horizon(self) -> int:
        """``N``, the loop budget the policy was solved for."""
        return self.initial_steps + self.steps

    def action(self, s: int, k: int) -> int:
        """``A[s, k]`` for step ``s`` in ``1..T_b`` and cell ``k`` in ``0..G-2``."""
        return int(self.actions[s - 1, k])

    def cell(self, value: float) -> int:
        """``kappa(value)``, clamped to ``0..G-2`` for a state outside ``(0, 1)``
        (docs/decisions.md#bos-decide-clamps-the-state-to-the-grid)."""
        return int(np.clip(cell_index(value, self.grid), 0, len(self.grid) - 2))


# -- steps 9-11, a pure function of the simulated statistics -----------------------------------
class Induction(NamedTuple):
    """Backward induction's result, each of shape (T_b, n_cells)."""

    actions: np.ndarray
    stop_probability: np.ndarray
    counts: np.ndarray
    rho: np.ndarray


def backward_induction(
    cells,
    outcome,
    k1: float,
    k2: float,
    cost: float,
    min_samples: int,
    *,
    n_cells: int = 99,
) -> Induction:
    """Steps 9-11 of SolveBOS for given forward samples.

    Args:
        cells: ``kappa(Ebar_s(omega))``, int array (S', T_b), values in ``0..n_cells-1``.
        outcome: ``z(omega)``, bool (S',), True for theta_1 (no improvement).
        k1, k2, cost: the losses ``K1``, ``K2`` and ``C`` per step.
        min_samples: a cell needs *more than* this many samples for a continuation estimate.
    """
    cells = np.asarray(cells)
    outcome = np.asarray(outcome, dtype=float)
    n_samples, steps = cells.shape
    # step 9: one bincount over (step, cell) pairs gives every n_{s,k} and sum of z
    flat = (cells + n_cells * np.arange(steps)).ravel()
    counts = np.bincount(flat, minlength=steps * n_cells).reshape(steps, n_cells)
    hits = np.bincount(flat, weights=np.repeat(outcome, steps), minlength=steps * n_cells)
    populated = counts > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(populated, hits.reshape(steps, n_cells) / counts, np.nan)
    step_cost = cost * np.arange(1, steps + 1)[:, None]
    loss_d1 = np.where(populated, k1 * (1.0 - p) + step_cost, EMPTY_CELL_LOSS)
    loss_d2 = np.where(populated, k2 * p + step_cost, EMPTY_CELL_LOSS)

    rho = np.empty((steps, n_cells))
    actions = np.empty((steps, n_cells), dtype=np.int64)
    # steps 10-11 at s = T_b: stop either way; argmin's tie goes to D2 (listed first)
    rho[-1] = np.minimum(loss_d2[-1], loss_d1[-1])
    actions[-1] = np.where(loss_d1[-1] < loss_d2[-1], D1, D2)
    for s in range(steps - 2, -1, -1):
        # step 10: L_D0 = the cell's average of rho_{s+1} at each sample's next cell
        next_rho = rho[s + 1][cells[:, s + 1]]
        total = np.bincount(cells[:, s], weights=next_rho, minlength=n_cells)
        dense = counts[s] > min_samples
        # reference quirk: a sparse cell's L_D0 = 0, so rho_s = 0 there and it propagates
        loss_d0 = np.where(dense, total / np.maximum(counts[s], 1), 0.0)
        stacked = np.stack([loss_d2[s], loss_d1[s], loss_d0])
        rho[s] = stacked.min(axis=0)
        # step 11: argmin over (D2, D1, D0), ties to the first; L_D0 = 0 means continue
        actions[s] = np.where(loss_d0 == 0.0, CONTINUE, np.argmin(stacked, axis=0) + 1)
    return Induction(actions, p, counts, rho)


# -- steps 3-5: forward simulation ------------------------------------------------------------
def forward_samples(
    errors: np.ndarray,
    horizon: int,
    samples: int,
    rng: np.random.Generator,
    *,
    fit_restarts: int = 1,
) -> tuple[np.ndarray, ExponentialDecay]:
    """Steps 3-4: ``E`` (samples, N - i_0), joint draws of the latent curve at ``t = i_0+1..N`` from
    the Freeze-Thaw GP fitted to ``errors`` (``e_{1:i_0}``), and the fitted kernel."""
    i0 = len(errors)
    steps_seen = np.arange(1, i0 + 1, dtype=float)[:, None]
    fit = fit_kernel(  # step 3: MLE of alpha, beta; zero mean, raw targets, noise fixed
        steps_seen,
        errors,
        ExponentialDecay(1.0, 1.0),
        bounds=KERNEL_BOUNDS,
        noise_variance=FORWARD_NOISE,
        n_restarts=fit_restarts,
        maxiter=200,
        seed=rng,
    )
    gp = ExactGP(steps_seen, errors, fit.kernel, FORWARD_NOISE)
    # step 4: only columns i_0+1..N are kept, so only their block of the joint posterior is needed
    future = np.arange(i0 + 1, horizon + 1, dtype=float)[:, None]
    mean, cov = gp.predict(future, full_cov=True)
    chol, _ = cholesky_with_jitter(cov)
    draws = mean + sample_from_roots([chol], size=samples, seed=rng)
    return draws, fit.kernel


def _outcome(
    draws: np.ndarray, errors: np.ndarray, incumbent_error: float, form: str
) -> np.ndarray:
    """Step 8: theta_1 (no improvement on ``e*``) per sample."""
    if form == "final":
        return draws[:, -1] > incumbent_error
    # trajectory form: the curve never got below e*, initial part included
    return (errors.min() >= incumbent_error) & (draws.min(axis=1) >= incumbent_error)


# -- SolveBOS ----------------------------------------------------------------------------------
def solve_bos(
    y_init,
    incumbent: float,
    horizon: int,
    loop_index: int,
    rng,
    *,
    k1: float = 100.0,
    gamma: float = 0.99,
    k2: float = 99.0,
    cost: float = 1.0,
    grid: int = 100,
    samples: int = 100_000,
    min_samples: int = 30,
    outcome: str = "final",
    fit_restarts: int = 1,
) -> StoppingPolicy:
    """SolveBOS (eq. (5.5) of the thesis) after the loop's first ``i_0 = len(y_init)`` queries.

    Args:
        y_init: the loop's first outputs ``y_{1:i_0}`` (objective (5.2), <= 0 before success).
        incumbent: ``y*``, the best output of the attack before this loop.
        horizon: ``N``, the loop budget; ``N > i_0``.
        loop_index: ``n_loop`` (0-based), giving ``K1 = k1 / gamma^n_loop``.
        rng: a ``numpy.random.Generator`` (or int seed) for the samples (and extra MLE starts).
        k1, gamma, k2, cost: ``K1_init``, ``gamma``, ``K2``, ``C``; grid: ``G`` boundaries;
        samples: ``S``; min_samples: a cell needs more than this many samples to get a
        continuation estimate; outcome: ``"final"`` (``E_{T_b} > e*``, the reference) or
        ``"trajectory"`` (the whole curve stays ``>= e*``, the thesis's theta_1 exactly).
        fit_restarts: L-BFGS-B runs of the kernel MLE; the first starts at alpha = beta = 1, as
            the reference's single GPy ``optimize()`` does, the others at random in the bounds.
    """
    y_init = check_vector(y_init, "y_init")
    i0 = len(y_init)
    incumbent = check_real(incumbent, "incumbent")
    horizon = check_int(horizon, "horizon", low=2)
    if horizon <= i0:
        raise ValueError(f"horizon must exceed i_0 = len(y_init) = {i0}, got {horizon}")
    loop_index = check_int(loop_index, "loop_index", low=0)
    rng = as_generator(rng, "rng")
    k1, k2 = check_real(k1, "k1", low=0.0), check_real(k2, "k2", low=0.0)
    gamma = check_real(gamma, "gamma", low=0.0, high=1.0, high_open=False)
    cost = check_real(cost, "cost", low=0.0, low_open=False)
    grid = check_int(grid, "grid", low=2)
    samples = check_int(samples, "samples", low=1)
    min_samples = check_int(min_samples, "min_samples", low=0)
    fit_restarts = check_int(fit_restarts, "fit_restarts", low=1)
    if outcome not in OUTCOMES:
        raise ValueError(f"outcome must be one of {OUTCOMES}, got {outcome!r}")

    k1_now = k1 / gamma**loop_index  # step 1
    scale = curve_scale(y_init)  # step 2
    errors = error_curve(y_init, scale)
    incumbent_error = incumbent / scale
    draws, kernel = forward_samples(errors, horizon, samples, rng, fit_restarts=fit_restarts)
    draws = draws[np.all((draws > 0.0) & (draws < 1.0), axis=1)]  # step 5
    running_mean = np.cumsum(draws, axis=1) / np.arange(1, draws.shape[1] + 1)  # step 6
    g = np.linspace(0.0, 1.0, grid)
    cells = cell_index(running_mean, g)  # step 7
    z = _outcome(draws, errors, incumbent_error, outcome)  # step 8
    result = backward_induction(  # steps 9-11
        cells, z, k1_now, k2, cost, min_samples, n_cells=grid - 1
    )
    for arr in (result.actions, result.stop_probability, result.counts, g):
        arr.setflags(write=False)
    return StoppingPolicy(  # step 12
        actions=result.actions,
        grid=g,
        scale=scale,
        incumbent_error=incumbent_error,
        initial_steps=i0,
        k1=k1_now,
        stop_probability=result.stop_probability,
        counts=result.counts,
        kept_samples=len(draws),
        kernel=kernel,
    )


# -- Decide (the BO-BOS code's ``objective_functions.py``) ---------------------------------------
def decide(policy: StoppingPolicy, y_loop) -> bool:
    """Decide after query ``i = len(y_loop)`` of the loop: True iff ``A[s, k] = D1`` (stop).

    ``y_loop`` holds all of the loop's outputs ``y_{1:i}``, with ``i_0 < i <= N``.
    """
    y = check_vector(y_loop, "y_loop")
    i0 = policy.initial_steps
    s = len(y) - i0  # step 1
    if not 1 <= s <= policy.steps:
        raise ValueError(
            f"y_loop must hold i in [{i0 + 1}, {policy.horizon}] outputs (i_0 + 1 to N), "
            f"got {len(y)}"
        )
    errors = error_curve(y, policy.scale)  # step 2, with the lambda fixed at solve time
    state = float(errors[i0:].mean())  # step 3: mean error over queries i_0+1..i
    return policy.action(s, policy.cell(state)) == D1  # step 4: only D1 stops


__all__ = [
    "CONTINUE",
    "D1",
    "D2",
    "STOP",
    "Induction",
    "StoppingPolicy",
    "backward_induction",
    "cell_index",
    "curve_scale",
    "decide",
    "error_curve",
    "forward_samples",
    "solve_bos",
]
