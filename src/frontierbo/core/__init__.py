"""The shared GP core: kernels, finite-domain and exact GPs, MLE fitting, acquisition (finite
domains and boxes), GP sampling, the ask/tell loop."""

from frontierbo.core.acquisition import (
    AllExcludedError,
    beta_srinivas,
    make_beta_schedule,
    select_max,
    select_ucb,
    ucb,
    ucb_scores,
    width_from_beta,
)
from frontierbo.core.fit import FitResult, fit_hyperparameters
from frontierbo.core.gp import FiniteDomainGP
from frontierbo.core.gp_ucb import GPUCB, gp_bucb_scores
from frontierbo.core.kernels import (
    Matern32,
    Matern52,
    PrecomputedKernel,
    SquaredExponential,
    make_kernel,
)
from frontierbo.core.loop import BOResult, Oracle, RegretTrace, TableOracle, run_bo
from frontierbo.core.sampling import (
    grid_points,
    psd_root,
    sample_from_roots,
    sample_kronecker,
    sample_se_on_grid,
)

__all__ = [
    "GPUCB",
    "AllExcludedError",
    "BOResult",
    "FiniteDomainGP",
    "FitResult",
    "Matern32",
    "Matern52",
    "Oracle",
    "PrecomputedKernel",
    "RegretTrace",
    "SquaredExponential",
    "TableOracle",
    "beta_srinivas",
    "fit_hyperparameters",
    "gp_bucb_scores",
    "grid_points",
    "make_beta_schedule",
    "make_kernel",
    "psd_root",
    "run_bo",
    "sample_from_roots",
    "sample_kronecker",
    "sample_se_on_grid",
    "select_max",
    "select_ucb",
    "ucb",
    "ucb_scores",
    "width_from_beta",
]
