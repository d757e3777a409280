"""Behavioural checks on plankton at CI size (thesis Table B.1, Fig. 4.6): fixed seeds, paired
realizations, only the sign of effects the thesis reports as large (> 4 s.e. at 250 runs)."""

from __future__ import annotations

import numpy as np
import pytest
from joblib import Parallel, delayed

from frontierbo.macro import runner
from frontierbo.macro.data import plankton

REALIZATIONS = 60
METHODS = {
    "eps-h2": lambda: runner.epsilon_macro_bo(2, n_samples=20),
    "eps-h3": lambda: runner.epsilon_macro_bo(3, n_samples=20),
    "eps-h4": lambda: runner.epsilon_macro_bo(4, n_samples=20),
    "eps-h2-b10": lambda: runner.epsilon_macro_bo(2, n_samples=20, beta=10.0),
    "db-gp-ucb": runner.db_gp_ucb,
    "nm-gp-ucb-h4": lambda: runner.most_likely(4),
    "q-ei": runner.q_ei,
    "gp-bucb": runner.gp_bucb,
}


def _realization(r: int) -> dict[str, tuple[float, float]]:
    ds = plankton(seed=1000 + r)
    out = {}
    for key, make in METHODS.items():
        metrics = runner.run_macro(make(), ds, seed=r).metrics(ds)
        out[key] = (metrics["m1"][-1], metrics["m2"][-1])
    return out


@pytest.fixture(scope="module")
def finals():
    runs = Parallel(n_jobs=2)(delayed(_realization)(r) for r in range(REALIZATIONS))
    return {k: np.array([run[k] for run in runs]) for k in METHODS}  # (R, 2): m1, m2


@pytest.mark.slow
def test_a_nonmyopic_and_joint_batch_methods_beat_q_ei_and_gp_bucb_in_average_output(finals):
    for good in ("eps-h2", "eps-h3", "eps-h4", "db-gp-ucb", "nm-gp-ucb-h4"):
        for weak in ("q-ei", "gp-bucb"):
            assert finals[good][:, 0].mean() > finals[weak][:, 0].mean(), (good, weak)


@pytest.mark.slow
def test_b_a_large_beta_costs_average_output(finals):
    gap = finals["eps-h2"][:, 0] - finals["eps-h2-b10"][:, 0]
    assert gap.mean() > 0.3


@pytest.mark.slow
def test_c_lookahead_four_has_no_more_simple_regret_than_db_gp_ucb(finals):
    paired = finals["eps-h4"][:, 1] - finals["db-gp-ucb"][:, 1]
    assert paired.mean() <= 0.0
