"""Empirical DP audits (issue 3, item 5): many seeded trials on neighbouring inputs, a
statistically valid lower bound on epsilon from a threshold test (held-out split,
Clopper-Pearson, 95 %), compared with the claimed epsilon. Each audit is also run on a
deliberately broken variant, to show that it can fail."""

import numpy as np
import pytest

from frontierbo.dp.audit import threshold_audit
from frontierbo.dp.mechanisms import LaplaceMechanism
from frontierbo.po.distinguisher import audit_distinguisher
from frontierbo.po.gaussian_release import GaussianRowMechanism
from frontierbo.po.random_projection import RandomProjectionMechanism

N_TRIALS = 20_000


def neighbours(seed=0, n=8, d=2):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, (n, d))
    v = rng.standard_normal(d)
    v /= np.linalg.norm(v)
    X2 = X.copy()
    X2[0] += v  # Definition 1: one row moves by exactly 1 in L2 norm
    return X, X2, v


def gaussian_statistics(mechanism, X, X2, v):
    """The optimal statistic for this pair: the released row 0 projected on the shift."""
    stat = []
    for data, offset in ((X, 0), (X2, N_TRIALS)):
        stat.append(
            np.array([mechanism.release(data, offset + i).Z[0] @ v for i in range(N_TRIALS)])
        )
    return stat


@pytest.mark.parametrize("hardened", [False, True])
def test_gaussian_release_passes_its_audit(hardened):
    X, X2, v = neighbours(n=2)
    mech = GaussianRowMechanism(1.0, 1e-5, hardened=hardened)
    result = threshold_audit(*gaussian_statistics(mech, X, X2, v), 1.0, 1e-5)
    assert not result["violation"]
    assert result["epsilon_lower_bound"] <= 1.0


def test_audit_catches_an_under_noised_gaussian_release():
    X, X2, v = neighbours()
    mech = GaussianRowMechanism(1.0, 1e-5, hardened=False)
    mech._sigma /= 4  # a bug: a quarter of the calibrated noise, still claiming epsilon = 1
    result = threshold_audit(*gaussian_statistics(mech, X, X2, v), 1.0, 1e-5)
    assert result["violation"] and result["epsilon_lower_bound"] > 1.0


@pytest.mark.parametrize(("true_eps", "violation"), [(1.0, False), (4.0, True)])
def test_laplace_randomiser_audit(true_eps, violation):
    """CTL's randomiser (the grid Laplace mechanism) claimed 1-DP; at true_eps = 4 it is not."""
    mech = LaplaceMechanism(1.0, true_eps)
    a = mech.randomise(np.zeros(N_TRIALS), 1)
    b = mech.randomise(np.ones(N_TRIALS), 2)
    result = threshold_audit(a, b, 1.0, 0.0)
    assert result["violation"] is violation
    if not violation:
        assert result["epsilon_lower_bound"] <= 1.0


def test_published_release_fails_its_audit():
    X, _, _ = neighbours(n=40)
    mech = RandomProjectionMechanism(1.0, 1e-5, 3)
    result = audit_distinguisher(X, mech, n_trials=300, seed=0)
    assert result["accuracy"] == 1.0
    assert result["violation"]  # certified: epsilon > 1 with 95 % confidence
    assert result["epsilon_lower_bound"] > 1.0
