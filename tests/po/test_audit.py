"""Privacy audits (frontierbo.po.audit, .reconstruction, .distinguisher): ATTACKS on our own
PO-GP-UCB release, and the generic threshold audit (frontierbo.dp.audit) used for empirical DP
checks of private mechanisms."""

import math

import numpy as np
import pytest

from frontierbo.dp.audit import (
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_lower_bound,
    threshold_audit,
    trials_to_certify,
)
from frontierbo.po.audit import audit_command, format_audit_table, run_audits
from frontierbo.po.distinguisher import (
    audit_distinguisher,
    column_space_distinguisher,
    column_space_residual,
)
from frontierbo.po.problems.synthetic import synthetic_gp_grid
from frontierbo.po.random_projection import RandomProjectionMechanism
from frontierbo.po.reconstruction import audit_reconstruction, reconstruction_attack

pytestmark = pytest.mark.filterwarnings(
    "ignore::frontierbo.po.random_projection.NotDifferentiallyPrivateWarning"
)


@pytest.fixture(scope="module")
def grid_X():
    return np.asarray(synthetic_gp_grid(0, grid_size=30).inputs)  # (900, 2), max norm 25


@pytest.fixture(scope="module")
def random_X():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((500, 3)) @ np.diag([3.0, 1.0, 0.5])
    X -= X.mean(axis=0)
    return 25 * X / np.linalg.norm(X, axis=1).max()


# Branch "if": omega overridden far below sigma_min; branch "else": a small epsilon.
MECHS = {
    "if": lambda r: RandomProjectionMechanism(3.0, 1e-5, r, omega=1e-3),
    "else": lambda r: RandomProjectionMechanism(0.05, 1e-5, r),
}


@pytest.mark.parametrize("branch", ["if", "else"])
@pytest.mark.parametrize("extra", [0, 7])
@pytest.mark.parametrize("data", ["grid_X", "random_X"])
def test_reconstruction_exact(branch, extra, data, request):
    X = request.getfixturevalue(data)
    d = X.shape[1]
    rel = MECHS[branch](10).release(X, seed=5)
    assert rel.info["branch"] == branch
    out = audit_reconstruction(X, rel, k=d + 1 + extra, seed=1)
    assert out["k"] == d + 1 + extra
    assert out["max_rel_error"] < 1e-8
    assert out["median_rel_error"] < 1e-10
    assert out["n_recovered"] == out["n_unknown"] == X.shape[0] - out["k"]
    assert out["fit_residual"] < 1e-10


def test_reconstruction_attack_returns_map(random_X):
    X = random_X
    M = np.random.default_rng(0).standard_normal((3, 4))
    mech = RandomProjectionMechanism(3.0, 1e-5, 4, projection=M, omega=1e-3)
    Z = mech.release(X).Z
    idx = np.array([2, 40, 77, 300])
    res = reconstruction_attack(Z, idx, X[idx])
    np.testing.assert_allclose(res.A, M / 2.0, atol=1e-10)  # A = M / sqrt(r)
    np.testing.assert_allclose(res.b, X.mean(axis=0) @ M / 2.0, atol=1e-10)
    np.testing.assert_allclose(res.X_hat, X, atol=1e-9)
    assert res.known_indices.tolist() == idx.tolist()


def test_reconstruction_given_indices(grid_X):
    rel = MECHS["else"](10).release(grid_X, seed=2)
    out = audit_reconstruction(grid_X, rel.Z, indices=[0, 31, 500])
    assert out["known_indices"] == [0, 31, 500]
    assert out["max_rel_error"] < 1e-8


def test_reconstruction_errors(random_X):
    X = random_X
    Z = MECHS["if"](10).release(X, seed=0).Z
    with pytest.raises(ValueError, match=r"known_rows must have at least d \+ 1 = 4 rows"):
        reconstruction_attack(Z, [0, 1, 2], X[[0, 1, 2]])
    collinear = np.array([[0.0, 0, 0], [1, 1, 1], [2, 2, 2], [3, 3, 3]])
    with pytest.raises(ValueError, match="known_rows must be affinely independent"):
        reconstruction_attack(Z, [0, 1, 2, 3], collinear)
    coplanar = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]])
    with pytest.raises(ValueError, match="affine rank 2"):
        reconstruction_attack(Z, [0, 1, 2, 3], coplanar)
    with pytest.raises(ValueError, match="known_rows must have one row per known index"):
        reconstruction_attack(Z, [0, 1, 2, 3, 4], X[:4])
    with pytest.raises(ValueError, match=r"Z must have at least d = 3 columns \(r >= d\)"):
        reconstruction_attack(Z[:, :2], [0, 1, 2, 3], X[:4])
    with pytest.raises(ValueError, match=r"known_indices must contain integers in \[0, 499\]"):
        reconstruction_attack(Z, [0, 1, 2, 500], X[:4])
    with pytest.raises(TypeError, match="known_indices must contain integers"):
        reconstruction_attack(Z, [0.0, 1.0, 2.0, 3.0], X[:4])
    with pytest.raises(ValueError, match="known_indices must not contain repeated"):
        reconstruction_attack(Z, [0, 1, 1, 3], X[:4])
    with pytest.raises(ValueError, match="release_Z must have n = 500 rows"):
        audit_reconstruction(X, Z[:-1])
    with pytest.raises(ValueError, match=r"k must be an integer in \[4, 499\]"):
        audit_reconstruction(X, Z, k=3)


def test_column_space_distinguisher(grid_X):
    mech = MECHS["else"](10)
    Z = mech.release(grid_X, seed=0).Z
    Xp = grid_X.copy()
    Xp[17] += np.array([0.6, 0.8])
    assert column_space_residual(Z, grid_X) < 1e-12
    assert column_space_distinguisher(Z, grid_X)
    assert not column_space_distinguisher(Z, Xp)
    assert column_space_residual(Z, Xp) > 1e-6
    with pytest.raises(ValueError, match="X_candidate must have the same number of rows"):
        column_space_distinguisher(Z, grid_X[:-1])
    with pytest.raises(ValueError, match=r"tol must be in \(0, inf\)"):
        column_space_distinguisher(Z, grid_X, tol=0.0)


@pytest.mark.parametrize("branch", ["if", "else"])
def test_distinguisher_perfect_on_published_release(grid_X, branch):
    mech = MECHS[branch](10)
    out = audit_distinguisher(grid_X, mech, n_trials=120, seed=4)
    assert out["accuracy"] == 1.0
    assert out["tpr"] == 1.0 and out["fpr"] == 0.0
    assert math.isinf(out["epsilon_point"])
    assert out["n_X"] + out["n_Xprime"] == 120
    # CP bounds at alpha/2 with zero / all successes.
    assert out["tpr_lower"] == pytest.approx(0.025 ** (1 / out["n_X"]))
    assert out["fpr_upper"] == pytest.approx(1 - 0.025 ** (1 / out["n_Xprime"]))
    expected = math.log((out["tpr_lower"] - mech.delta) / out["fpr_upper"])
    assert out["epsilon_lower_bound"] == pytest.approx(expected)
    assert out["max_residual_X"] < 1e-12 < 1e-6 < out["min_residual_Xprime"]
    assert np.linalg.norm(out["shift"]) == pytest.approx(1.0)
    assert out["violation"] == (out["epsilon_lower_bound"] > mech.epsilon)


def test_distinguisher_zero_shift_and_errors(grid_X):
    mech = MECHS["if"](10)
    out = audit_distinguisher(grid_X, mech, n_trials=20, seed=0, row=3, shift=[0.0, 0.0])
    assert out["tpr"] == out["fpr"] == 1.0 and out["epsilon_lower_bound"] == 0.0
    assert out["violation"] is False
    with pytest.raises(ValueError, match=r"shift must have L2 norm in \[0, 1\]"):
        audit_distinguisher(grid_X, mech, row=0, shift=[1.0, 1.0])
    with pytest.raises(ValueError, match=r"row must be an integer in \[0, 899\]"):
        audit_distinguisher(grid_X, mech, row=900)
    with pytest.raises(ValueError, match=r"n_trials must be an integer in \[2, inf\]"):
        audit_distinguisher(grid_X, mech, n_trials=1)
    with pytest.raises(TypeError, match="mechanism must have a release"):
        audit_distinguisher(grid_X, object())


def test_distinguisher_useless_on_gaussian_release(grid_X):
    gaussian = pytest.importorskip("frontierbo.po.gaussian_release")
    mech = gaussian.GaussianRowMechanism(1.0, 1e-5)
    out = audit_distinguisher(grid_X, mech, n_trials=40, seed=0)
    assert out["tpr"] == 0.0 and out["epsilon_lower_bound"] == 0.0 and not out["violation"]


def test_threshold_audit_laplace():
    rng = np.random.default_rng(0)
    a, b = rng.laplace(0.0, 1.0, 20_000), rng.laplace(1.0, 1.0, 20_000)  # true eps = 1
    ok = threshold_audit(a, b, claimed_epsilon=1.0, claimed_delta=0.0)
    assert 0.5 < ok["epsilon_lower_bound"] < 1.0
    assert ok["violation"] is False
    assert ok["p_numerator_lower"] <= ok["p_numerator"]
    assert ok["p_denominator_upper"] >= ok["p_denominator"]
    assert ok["n_numerator"] == ok["n_denominator"] == 10_000
    bad = threshold_audit(a, b, claimed_epsilon=0.3, claimed_delta=0.0)
    assert bad["violation"] is True
    # Same distribution: no information; symmetric in the order of the samples.
    same = threshold_audit(a, rng.laplace(0.0, 1.0, 20_000), 0.1, 0.0)
    assert same["epsilon_lower_bound"] < 0.1 and not same["violation"]
    swapped = threshold_audit(b, a, 1.0, 0.0)
    assert 0.5 < swapped["epsilon_lower_bound"] < 1.0


def test_threshold_audit_gaussian_release_statistic(random_X):
    """The generic audit on a private mechanism: the moved row's coordinate along the shift."""
    gaussian = pytest.importorskip("frontierbo.po.gaussian_release")
    X = random_X[:20]
    mech = gaussian.GaussianRowMechanism(1.0, 1e-5)
    v = np.array([1.0, 0.0, 0.0])
    Xp = X.copy()
    Xp[0] += v
    stat = [
        np.array([mech.release(D, seed=s).Z[0] @ v for s in range(off, off + 1500)])
        for D, off in ((X, 0), (Xp, 10_000))
    ]
    out = threshold_audit(stat[0], stat[1], mech.epsilon, mech.delta)
    assert not out["violation"]
    assert out["epsilon_lower_bound"] < 1.0


def test_threshold_audit_bad_inputs():
    a = np.zeros(100)
    with pytest.raises(ValueError, match=r"claimed_epsilon must be in \[0, inf\)"):
        threshold_audit(a, a, -1.0, 0.0)
    with pytest.raises(ValueError, match=r"claimed_delta must be in \[0, 1\)"):
        threshold_audit(a, a, 1.0, 1.0)
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\)"):
        threshold_audit(a, a, 1.0, 0.0, alpha=0.0)
    with pytest.raises(ValueError, match="sample_statistic_Xprime must have at least 4"):
        threshold_audit(a, a[:3], 1.0, 0.0)
    with pytest.raises(ValueError, match="sample_statistic_X must be finite"):
        threshold_audit(np.full(10, np.nan), a, 1.0, 0.0)


def test_clopper_pearson_and_bound_helpers():
    assert clopper_pearson_upper(0, 100, 0.05) == pytest.approx(1 - 0.05 ** (1 / 100))
    assert clopper_pearson_lower(100, 100, 0.05) == pytest.approx(0.05 ** (1 / 100))
    assert clopper_pearson_lower(0, 10, 0.05) == 0.0 and clopper_pearson_upper(10, 10, 0.05) == 1
    lo, hi = clopper_pearson_lower(30, 100, 0.025), clopper_pearson_upper(30, 100, 0.025)
    assert 0.2 < lo < 0.3 < hi < 0.4
    b = epsilon_lower_bound(50, 100, 10, 100, delta=0.0)
    assert b["epsilon_point"] == pytest.approx(math.log(5.0))
    assert 0 < b["epsilon_lower_bound"] < b["epsilon_point"]
    # A perfect distinguisher with trials_to_certify(eps) trials just certifies eps.
    n = math.ceil(trials_to_certify(2.0) / 2)
    assert epsilon_lower_bound(n, n, 0, n, 0.0)["epsilon_lower_bound"] > 2.0 - 0.05


def test_run_audits_and_table(grid_X):
    res = run_audits(("synthetic",), problems={"synthetic": grid_X}, n_trials=30)
    assert [r["branch"] for r in res] == ["else", "else"]  # small grid: sigma_min < omega
    assert [r["log_eps"] for r in res] == [1.1, 1.0]
    assert all(r["reconstruction"]["max_rel_error"] < 1e-8 for r in res)
    assert all(r["distinguisher"]["accuracy"] == 1.0 for r in res)
    table = format_audit_table(res)
    assert table.count("\n") == 3 and "| synthetic | 900 × 2 | e^1.1 = 3.004 |" in table
    one = run_audits("synthetic", epsilon=0.5, r=4, problems={"synthetic": grid_X}, n_trials=10)
    assert len(one) == 1 and one[0]["r"] == 4 and one[0]["delta"] == 1e-5
    with pytest.raises(ValueError, match="datasets must be drawn from"):
        run_audits(("nope",))
    with pytest.raises(ValueError, match=r"epsilon must be in \(0, inf\)"):
        run_audits(("synthetic",), epsilon=-1.0)


def test_audit_command_report():
    text = audit_command("synthetic", trials=40, seed=1)
    assert "ATTACK on our own release" in text and "NOT differentially private" in text
    assert "branch = if" in text and "accuracy 1.000" in text
    assert "9997 of 9997 unknown rows recovered" in text
    text = audit_command(
        "synthetic", epsilon=0.5, r=3, k=5, trials=10, known_indices=[1, 50, 400, 999, 5000]
    )
    assert (
        "[1, 50, 400, 999, 5000]" in text and "epsilon = 0.5," in text and "branch = else" in text
    )
    with pytest.raises(ValueError, match="dataset must be one of"):
        audit_command("mnist")
    with pytest.raises(ValueError, match=r"trials must be an integer in \[2, inf\]"):
        audit_command("synthetic", trials=0)
