"""The (epsilon, delta)-DP Gaussian release: calibration, release, noise-aware modeler kernel."""

import math
import warnings

import numpy as np
import pytest

from frontierbo.core.kernels import SquaredExponential
from frontierbo.po.gaussian_release import (
    GaussianRowMechanism,
    analytic_gaussian_sigma,
    classical_gaussian_sigma,
    gaussian_delta,
    noise_aware_hyperparameters,
)


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, math.exp(1.1), 7.4, 50.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-5, 1e-9])
def test_analytic_sigma_is_the_smallest_that_satisfies_delta(epsilon, delta):
    sigma = analytic_gaussian_sigma(epsilon, delta)
    assert gaussian_delta(sigma, epsilon) <= delta
    assert gaussian_delta(sigma * (1 - 1e-6), epsilon) > delta
    if epsilon < 1:  # the classical bound is valid (and loose) only there
        assert sigma <= classical_gaussian_sigma(epsilon, delta)


def test_analytic_sigma_known_value_and_scaling():
    # Balle & Wang (2018): eps = 1, delta = 1e-5, Delta = 1 needs sigma ~ 3.73
    assert analytic_gaussian_sigma(1.0, 1e-5) == pytest.approx(3.7306, abs=1e-4)
    assert analytic_gaussian_sigma(1.0, 1e-5, 2.5) == pytest.approx(2.5 * 3.7306316, rel=1e-8)


def test_gaussian_delta_cross_checked_with_dp_accounting():
    dpa = pytest.importorskip("dp_accounting")
    sigma = analytic_gaussian_sigma(1.0, 1e-5)
    accountant = dpa.pld.PLDAccountant()
    accountant.compose(dpa.GaussianDpEvent(noise_multiplier=sigma))
    assert accountant.get_epsilon(1e-5) == pytest.approx(1.0, abs=2e-3)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"epsilon": 0.0, "delta": 1e-5}, "epsilon"),
        ({"epsilon": 1.0, "delta": 0.0}, "delta"),
        ({"epsilon": 1.0, "delta": 1.0}, "delta"),
        ({"epsilon": 1.0, "delta": 1e-5, "r": 0}, "r"),
        ({"epsilon": 1.0, "delta": 1e-5, "sensitivity": -1.0}, "sensitivity"),
    ],
)
def test_mechanism_rejects_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        GaussianRowMechanism(**kwargs)


def test_release_shape_noise_and_flags():
    X = np.random.default_rng(0).uniform(-5, 5, (4000, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a DP release must not warn that it is not DP
        rel = GaussianRowMechanism(1.0, 1e-5, hardened=False).release(X, 3)
    assert rel.differentially_private and rel.mechanism == "gaussian"
    assert rel.Z.shape == X.shape
    sigma = rel.info["noise_std"]
    assert sigma == pytest.approx(3.7306, abs=1e-4)
    resid = (rel.Z - X).ravel()
    assert resid.std() == pytest.approx(sigma, rel=0.03) and abs(resid.mean()) < 0.1
    again = GaussianRowMechanism(1.0, 1e-5, hardened=False).release(X, 3)
    np.testing.assert_array_equal(rel.Z, again.Z)


def test_projection_calibrates_to_its_operator_norm():
    X = np.random.default_rng(1).standard_normal((50, 30))
    rel = GaussianRowMechanism(2.0, 1e-5, r=8, hardened=False).release(X, 0)
    assert rel.Z.shape == (50, 8)
    norm = rel.info["projection_norm"]
    assert rel.info["l2_sensitivity"] == pytest.approx(norm)
    assert rel.info["noise_std"] == pytest.approx(analytic_gaussian_sigma(2.0, 1e-5, norm))


def test_noise_aware_hyperparameters_by_hand():
    h = noise_aware_hyperparameters(3.0, 2.0, 0.01, 1.5, 2)
    l2 = 9.0 + 2 * 1.5**2
    c = 9.0 / l2
    assert h["lengthscale"] == pytest.approx(math.sqrt(l2))
    assert h["signal_variance"] == pytest.approx(2.0 * c)
    assert h["noise_variance"] == pytest.approx(0.01 + (1 - c) * 2.0)


def test_noise_aware_kernel_is_the_expected_kernel():
    """E[k(x_i, x_j) | z] with x_i - x_j ~ N(z_i - z_j, 2 s^2 I) equals c k_{l'}(z_i, z_j)."""
    rng = np.random.default_rng(2)
    l, s, dim = 2.0, 0.9, 3
    k = SquaredExponential(l, 1.0)
    h = noise_aware_hyperparameters(l, 1.0, 1e-6, s, dim)
    k_aware = SquaredExponential(h["lengthscale"], h["signal_variance"])
    for dz in ([0.0, 0.0, 0.0], [1.0, -0.5, 2.0], [3.0, 0.0, 0.0]):
        dz = np.array(dz)
        diffs = dz + math.sqrt(2) * s * rng.standard_normal((200_000, dim))
        mc = k(diffs, np.zeros((1, dim)))[:, 0]
        expected = k_aware(dz[None], np.zeros((1, dim)))[0, 0]
        assert mc.mean() == pytest.approx(expected, abs=4 * mc.std() / math.sqrt(len(mc)))


def test_curator_ledger_refuses_over_budget_and_non_private_releases():
    from frontierbo.dp.accounting import BudgetExceededError, PrivacyLedger
    from frontierbo.po.po_gp_ucb import Curator
    from frontierbo.po.random_projection import RandomProjectionMechanism

    X = np.random.default_rng(0).uniform(-1, 1, (30, 2))
    ledger = PrivacyLedger(1.5, 1e-5)
    curator = Curator(X, X[:, 0], GaussianRowMechanism(1.0, 5e-6), seed=0, ledger=ledger)
    first = curator.release()
    assert first.guarantee.epsilon == 1.0 and first.guarantee.differentially_private
    with pytest.raises(BudgetExceededError, match="exceeded"):
        curator.release()  # 1.0 + 1.0 > 1.5
    assert ledger.total() == (1.0, 5e-6)
    published = Curator(X, X[:, 0], RandomProjectionMechanism(1.0, 1e-5, 3), seed=0, ledger=ledger)
    with pytest.raises(ValueError, match="not differentially private"):
        published.release()
    assert len(ledger.entries) == 1


def test_release_guarantees_describe_themselves():
    from frontierbo.po.random_projection import RandomProjectionMechanism

    X = np.random.default_rng(0).uniform(-1, 1, (30, 2))
    g = GaussianRowMechanism(2.0, 1e-6).release(X, 0).guarantee
    assert g.describe().startswith("(2, 1e-06)-DP")
    with pytest.warns(UserWarning):
        p = RandomProjectionMechanism(2.0, 1e-6, 3).release(X, 0).guarantee
    assert not p.differentially_private and "NOT differentially private" in p.describe()


def test_hardened_release_is_exact_on_its_grid_and_within_its_claim():
    from fractions import Fraction

    from frontierbo.po.gaussian_release import zcdp_gaussian_sigma

    X = np.random.default_rng(4).uniform(-5, 5, (3000, 2))
    mech = GaussianRowMechanism(1.0, 1e-5)  # hardened by default
    rel = mech.release(X, 0)
    assert rel.info["hardened"] and rel.guarantee.epsilon == 1.0
    sigma = rel.info["noise_std"]
    assert zcdp_gaussian_sigma(1.0, 1e-5) < sigma < 1.01 * zcdp_gaussian_sigma(1.0, 1e-5)
    assert (rel.Z - X).std() == pytest.approx(sigma, rel=0.04)
    gamma = mech._discrete_mechanism(1.0, 2).granularity
    assert all(Fraction(float(z)) % Fraction(gamma) == 0 for z in rel.Z.ravel()[:500])
    # Outputs are grid points and the discrete Gaussian has full support on the grid, so no
    # output rules out any input: the floating-point attack has nothing to work with.


def test_zcdp_sigma_conversion_by_hand():
    from frontierbo.po.gaussian_release import zcdp_gaussian_sigma

    sigma = zcdp_gaussian_sigma(1.0, 1e-5)
    rho = 1.0 / (2 * sigma**2)
    assert rho + 2 * math.sqrt(rho * math.log(1e5)) == pytest.approx(1.0, rel=1e-12)


# -- the calibration's range (issue 10: a privacy check was an `assert`) -------------------------
SMALL_EPSILONS = [1e-9, 3e-9, 1e-8, 1e-7, 1e-6, 2.9e-6]


@pytest.mark.parametrize("delta", [1e-12, 1e-5, 0.5])
def test_zcdp_sigma_inverts_exactly_for_tiny_and_huge_epsilon(delta):
    """sqrt(L + eps) - sqrt(L) cancelled for small eps (2e-6 relative at 1e-9): sigma came out
    too small and the claimed epsilon was false. The inverse must hold to rounding everywhere."""
    from frontierbo.po.gaussian_release import zcdp_epsilon, zcdp_gaussian_sigma

    for epsilon in [1e-12, 1e-10, *SMALL_EPSILONS, 1e-3, 1.0, 1e3, 1e300]:
        sigma = zcdp_gaussian_sigma(epsilon, delta)
        assert zcdp_epsilon(sigma, delta) == pytest.approx(epsilon, rel=1e-14)


@pytest.mark.parametrize("delta", [1e-12, 1e-5, 0.5])
def test_small_epsilon_releases_within_its_claim(delta):
    """The probe's failing range (1e-9 .. 2.9e-6) releases, and never above the stated epsilon."""
    X = np.random.default_rng(1).uniform(-1, 1, (4, 3))
    for epsilon in SMALL_EPSILONS:
        mech = GaussianRowMechanism(epsilon, delta)
        rel = mech.release(X, 2)  # was a bare AssertionError
        discrete = mech._discrete_mechanism(1.0, 3, 1.0)
        assert rel.guarantee.epsilon == epsilon and rel.info["noise_std"] == discrete.sigma
        assert discrete.epsilon <= epsilon
        assert discrete.epsilon > epsilon * (1 - 1e-6)  # tight: no noise is wasted either


def _range_error(epsilon, delta, *, dim=2, max_abs=25.0) -> str:
    with pytest.raises(ValueError) as info:
        GaussianRowMechanism(epsilon, delta).check_range(dim, max_abs)
    return str(info.value)


def test_epsilon_below_the_samplers_range_is_refused_with_the_range():
    with pytest.raises(ValueError, match="epsilon is too small"):
        GaussianRowMechanism(1e-12, 1e-5).release(np.ones((2, 2)), 0)  # named granularity
    message = _range_error(1e-12, 1e-5)
    assert "epsilon=1e-12 with delta=1e-05 is outside the range" in message
    assert "epsilon is too small" in message and "granularity" not in message
    bound = float(message.rsplit("epsilon >= ", 1)[1])
    GaussianRowMechanism(bound, 1e-5).check_range(2, 25.0)  # the stated bound works
    assert "too small" in _range_error(bound * 0.99, 1e-5)  # and it is nearly tight


def test_epsilon_above_the_samplers_range_is_refused_with_the_range():
    message = _range_error(1e300, 1e-300)
    assert "epsilon=1e+300 with delta=1e-300 is outside the range" in message
    assert "epsilon is too large" in message and "granularity" not in message
    bound = float(message.rsplit("epsilon <= ", 1)[1])
    GaussianRowMechanism(bound, 1e-300).check_range(2, 25.0)
    X = np.full((2, 2), 25.0)
    GaussianRowMechanism(bound, 1e-300).release(X, 0)  # release agrees with check_range
    with pytest.raises(ValueError, match="epsilon is too large"):
        GaussianRowMechanism(1e300, 1e-300).release(X, 0)
    assert "rescale the data" in _range_error(1.0, 1e-5, max_abs=1e13)


CHEAT = """
import numpy as np
import frontierbo.po.gaussian_release as g
true_sigma = g.zcdp_gaussian_sigma
g.zcdp_gaussian_sigma = lambda *a: 0.5 * true_sigma(*a)  # a calibration bug: half the noise
try:
    g.GaussianRowMechanism(1.0, 1e-5).release(np.zeros((2, 2)), 0)
except ValueError as exc:
    print("refused:", exc)
else:
    print("released")
"""


@pytest.mark.parametrize("flags", [[], ["-O"]])
def test_a_broken_calibration_is_refused_also_under_python_O(flags):
    """The guarantee is checked by code, not by an assert that -O strips."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, *flags, "-c", CHEAT], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("refused: the hardened Gaussian release cannot certify"), (
        done.stdout
    )


def test_no_assert_guards_anything_in_the_library():
    """`python -O` removes asserts: no check in src/ may be one."""
    import ast
    from pathlib import Path

    src = Path(__file__).resolve().parents[2] / "src" / "frontierbo"
    found = [
        f"{path.relative_to(src)}:{node.lineno}"
        for path in sorted(src.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Assert)
    ]
    assert found == []
