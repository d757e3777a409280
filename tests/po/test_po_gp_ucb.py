"""PO-GP-UCB curator (Algorithm 1) and modeler (Algorithm 2) of the paper: exact values and
properties (Lemma 1, Theorem 2, Lemma 7)."""

import inspect
import warnings

import numpy as np
import pytest

from frontierbo.core.gp_ucb import GPUCB
from frontierbo.core.kernels import SquaredExponential
from frontierbo.core.loop import TableOracle
from frontierbo.po.po_gp_ucb import Curator, POGPUCBModeler
from frontierbo.po.random_projection import (
    NotDifferentiallyPrivateWarning,
    RandomProjectionMechanism,
    omega_threshold,
)

pytestmark = pytest.mark.filterwarnings(
    "ignore::frontierbo.po.random_projection.NotDifferentiallyPrivateWarning"
)

SIGMA_GRID = 1030.8785


def grid(h=4.0, size=100):
    g = np.linspace(-h, h, size)
    X = np.stack(np.meshgrid(g, g, indexing="ij"), -1).reshape(-1, 2)
    return X * 25.0 / np.linalg.norm(X, axis=1).max()


@pytest.mark.parametrize(
    ("r", "log_eps", "delta", "expected"),
    [
        (10, None, 1e-5, 2932.274231),
        (10, 1.1, 1e-5, 976.069301),
        (15, 1.3, 1e-5, 1002.663585),
        (20, 1.5, 1e-5, 963.953971),
        (15, 2.9, 1e-5, 202.434286),
        (15, 2.8, 1e-4, 174.215138),
        (10, 2.3, 1e-3, 167.586196),
        (1, None, 0.5, 65.289475),
    ],
)
def test_omega_key_values(r, log_eps, delta, expected):
    eps = 1.0 if log_eps is None else np.exp(log_eps)
    assert omega_threshold(r, eps, delta) == pytest.approx(expected, rel=1e-6)


def test_omega_literal_variant_and_proof_identity():
    assert omega_threshold(10, 1.0, 1e-5, "paper_literal") == pytest.approx(10244.542276, rel=1e-6)
    rng = np.random.default_rng(0)
    for _ in range(50):
        r, eps, delta = int(rng.integers(1, 100)), rng.uniform(0.05, 20), rng.uniform(1e-9, 0.9)
        eps0, delta0 = eps / np.sqrt(4 * r * np.log(2 / delta)), delta / (2 * r)
        expected = 8 * np.log(8 / delta0) / eps0
        assert omega_threshold(r, eps, delta) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("h", [1.0, 2.5, 4.0, 5.0])
def test_sigma_min_of_the_synthetic_grid(h):
    s = np.linalg.svd(grid(h) - grid(h).mean(0), compute_uv=False)
    np.testing.assert_allclose(s, SIGMA_GRID, atol=1e-3)
    rel = RandomProjectionMechanism(np.exp(1.1), 1e-5, 10).release(grid(h), 0)
    assert rel.info["sigma_min"] == pytest.approx(SIGMA_GRID, abs=1e-3)


IF_CASES = [(1.1, r) for r in (3, 6, 8, 10, 11)] + [(1.3, r) for r in (3, 9, 12, 15)]
IF_CASES += [(1.5, r) for r in (5, 10, 15, 20, 21, 22)]
ELSE_CASES = [(1.1, r) for r in (12, 15, 20)] + [(1.3, r) for r in (16, 20, 30)]
ELSE_CASES += [(1.5, r) for r in (23, 30, 50)] + [(1.0, 10), (0.9, 10), (0.0, 10)]


@pytest.mark.parametrize(("log_eps", "r"), IF_CASES + ELSE_CASES)
def test_branch_table_of_tables_1_to_3(log_eps, r):
    rel = RandomProjectionMechanism(np.exp(log_eps), 1e-5, r).release(grid(), 1)
    assert rel.info["branch"] == ("if" if (log_eps, r) in IF_CASES else "else")
    assert rel.Z.shape == (10000, r)


TOY = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 2.0], [0.0, -2.0]])


def test_toy_lift_by_hand():
    mech = RandomProjectionMechanism(1.0, 0.5, 2, projection=np.eye(2), omega=2.0)
    rel = mech.release(TOY)
    lifted = np.array([[3**0.5, 0], [-(3**0.5), 0], [0, 6**0.5], [0, -(6**0.5)]])
    np.testing.assert_allclose(rel.Z, lifted / np.sqrt(2), atol=1e-12)
    assert rel.info["branch"] == "else"
    np.testing.assert_allclose(rel.info["singular_values"], [8**0.5, 2**0.5])
    assert rel.info["c_prime"] == pytest.approx(1 + 4 / 2)
    mech_if = RandomProjectionMechanism(1.0, 0.5, 2, projection=np.eye(2), omega=1.0)
    np.testing.assert_allclose(mech_if.release(TOY).Z, TOY / np.sqrt(2), atol=1e-12)


def test_lift_is_basis_free_on_random_data():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((50, 3)) @ np.diag([5.0, 2.0, 0.5])
    Xc = X - X.mean(0)
    omega = 4.0
    rel = RandomProjectionMechanism(1.0, 0.5, 3, projection=np.eye(3), omega=omega).release(X)
    lifted = rel.Z * np.sqrt(3)
    s = np.linalg.svd(Xc, compute_uv=False)
    np.testing.assert_allclose(np.linalg.svd(lifted, compute_uv=False), np.sqrt(s**2 + omega**2))
    w, Q = np.linalg.eigh(Xc.T @ Xc)
    basis_free = Xc @ Q @ np.diag(w**-0.5 * np.sqrt(w + omega**2)) @ Q.T
    np.testing.assert_allclose(lifted, basis_free, atol=1e-9)
    assert np.linalg.svd(lifted, compute_uv=False).min() >= omega


@pytest.mark.parametrize(
    ("log_eps", "r", "factor"),
    [
        (0.9, 10, 1.5289),
        (0.0, 10, 3.0151),
        (1.1, 15, 1.5528),
        (1.1, 20, 1.7164),
        (1.3, 20, 1.5180),
        (1.5, 30, 1.5407),
    ],
)
def test_grid_else_branch_is_uniform_scaling(log_eps, r, factor):
    X = grid()
    M = np.sqrt(r) * np.eye(2, r)  # M M^T = r I: exact distances
    rel = RandomProjectionMechanism(np.exp(log_eps), 1e-5, r, projection=M).release(X)
    np.testing.assert_allclose(rel.Z[:, :2], factor * X, rtol=2e-4)


def test_centring_invariance_and_row_order_equivariance():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((30, 2))
    M = rng.standard_normal((2, 5))
    mech = RandomProjectionMechanism(1.0, 1e-3, 5, projection=M)
    np.testing.assert_allclose(mech.release(X).Z, mech.release(X + [7.0, -3.0]).Z, atol=1e-10)
    perm = rng.permutation(30)
    np.testing.assert_allclose(mech.release(X[perm]).Z, mech.release(X).Z[perm], atol=1e-10)


def test_lemma7_distance_bounds_with_lift():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((40, 2)) @ np.diag([3.0, 1.0])
    Xc = X - X.mean(0)
    omega = 6.0
    rel = RandomProjectionMechanism(1.0, 0.5, 2, projection=np.sqrt(2) * np.eye(2), omega=omega)
    Zt = rel.release(X).Z
    sigma_min = np.linalg.svd(Xc, compute_uv=False).min()
    iu = np.triu_indices(40, 1)
    dx = np.linalg.norm(Xc[:, None] - Xc[None], axis=-1)[iu]
    dz = np.linalg.norm(Zt[:, None] - Zt[None], axis=-1)[iu]
    ratio = dz / dx
    assert ratio.min() >= 1 - 1e-9
    assert ratio.max() <= np.sqrt(1 + omega**2 / sigma_min**2) + 1e-9


def test_jl_distances_within_lemma1_bound_if_branch():
    """Lemma 1 with n=20, nu=0.5, mu=0.1, r = ceil(8 ln(400/0.1)/0.25) = 266: the fraction of
    projections with any pair outside [(1-nu), (1+nu)] must be <= mu (in practice ~ 0)."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((20, 3)) * 30.0  # sigma_min large: if-branch at eps=e^8
    r = int(np.ceil(8 * np.log(400 / 0.1) / 0.25))
    assert r == 266
    iu = np.triu_indices(20, 1)
    dx2 = (np.linalg.norm(X[:, None] - X[None], axis=-1) ** 2)[iu]
    failures = 0
    for trial in range(100):
        rel = RandomProjectionMechanism(np.exp(8.0), 0.1, r).release(X, trial)
        assert rel.info["branch"] == "if"
        dz2 = (np.linalg.norm(rel.Z[:, None] - rel.Z[None], axis=-1) ** 2)[iu]
        failures += np.any((dz2 < 0.5 * dx2) | (dz2 > 1.5 * dx2))
    assert failures / 100 <= 0.1


def test_projection_unbiased_for_squared_distances():
    X = np.array([[0.0, 0.0], [3.0, 4.0], [1.0, -2.0]])
    mech = RandomProjectionMechanism(np.exp(6.0), 0.5, 4, omega=1e-6)
    d2 = np.array(
        [np.sum((mech.release(X, s).Z[0] - mech.release(X, s).Z[1]) ** 2) for s in range(2000)]
    )
    se = d2.std(ddof=1) / np.sqrt(len(d2))
    assert abs(d2.mean() - 25.0) < 4 * se


def test_same_seed_same_release():
    X = grid(size=20)
    a = RandomProjectionMechanism(1.0, 1e-5, 6).release(X, 7)
    b = RandomProjectionMechanism(1.0, 1e-5, 6).release(X, 7)
    np.testing.assert_array_equal(a.Z, b.Z)


def test_release_warns_not_private():
    with pytest.warns(NotDifferentiallyPrivateWarning, match="NOT differentially private"):
        RandomProjectionMechanism(1.0, 1e-5, 3).release(TOY, 0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"epsilon": 0.0, "delta": 0.1, "r": 3}, r"epsilon must be in \(0, inf\)"),
        ({"epsilon": float("nan"), "delta": 0.1, "r": 3}, "epsilon must be in"),
        ({"epsilon": 1.0, "delta": 1.0, "r": 3}, r"delta must be in \(0, 1\)"),
        ({"epsilon": 1.0, "delta": 0.0, "r": 3}, r"delta must be in \(0, 1\)"),
        ({"epsilon": 1.0, "delta": 0.1, "r": 0}, r"r must be an integer in \[1, inf\]"),
    ],
)
def test_mechanism_rejects_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        RandomProjectionMechanism(**kwargs)


def assert_same_choices(modeler, baseline, oracle, iterations, init):
    """Feed both optimisers the same observations; at every step the modeler's choice must
    maximise the baseline's UCB up to 1e-9 (grids have exact mirror ties that rounding decides)
    and both posteriors must agree."""
    for i in init:
        y = oracle.query(i)
        modeler.tell(i, y)
        baseline.tell(i, y)
    for _ in range(iterations):
        scores = baseline.acquisition().copy()
        scores[baseline.gp.observed_indices] = -np.inf
        i = modeler.ask()
        baseline.ask()
        assert scores[i] >= scores.max() - 1e-9
        np.testing.assert_allclose(modeler.gp.mean, baseline.gp.mean, atol=1e-9)
        np.testing.assert_allclose(modeler.gp.variance, baseline.gp.variance, atol=1e-9)
        y = oracle.query(i)
        modeler.tell(i, y)
        baseline.tell(i, y)


def test_exact_distance_projection_gives_identical_queries_to_gp_ucb():
    """M M^T = r I and the if-branch (Algorithm 1, line 7) keep distances exactly, so
    PO-GP-UCB = non-private GP-UCB."""
    X = grid(size=40)
    s = 25.0 / (4 * np.sqrt(2))
    rng = np.random.default_rng(6)
    f = np.convolve(rng.standard_normal(len(X)), np.ones(7) / 7, mode="same")
    r = 10
    mech = RandomProjectionMechanism(np.exp(9.0), 1e-5, r, projection=np.sqrt(r) * np.eye(2, r))
    curator = Curator(X, f, mech, noise_std=1e-3, seed=1, noise_seed=11)
    release = curator.release()
    assert release.info["branch"] == "if"
    hyper = {"lengthscale": 1.25 * s, "signal_variance": 1.0, "noise_variance": 1e-5}
    modeler = POGPUCBModeler.from_release(release, **hyper)
    baseline = GPUCB(X, SquaredExponential(1.25 * s, 1.0), 1e-5)
    assert_same_choices(modeler, baseline, curator, 25, [123])
    assert curator.queries[0] == 123 and len(curator.queries) == 26


def test_curator_and_table_oracle_share_noise_with_the_same_seed():
    X = grid(size=10)
    f = X[:, 0]
    curator = Curator(X, f, RandomProjectionMechanism(1.0, 0.1, 2), 0.5, seed=3, noise_seed=11)
    oracle = TableOracle(f, 0.5, seed=11)
    assert [curator.query(i) for i in (4, 7, 4)] == [oracle.query(i) for i in (4, 7, 4)]


def test_grid_else_branch_equals_gp_ucb_with_shrunk_lengthscale():
    X = grid(size=30)
    s = 25.0 / (4 * np.sqrt(2))
    f = np.sin(X[:, 0] / 5 + 0.3) + np.cos(X[:, 1] / 7 + 0.7)
    r = 10
    mech = RandomProjectionMechanism(np.exp(0.9), 1e-5, r, projection=np.sqrt(r) * np.eye(2, r))
    curator = Curator(X, f, mech, seed=0)
    rel = curator.release()
    assert rel.info["branch"] == "else"
    factor = np.sqrt(rel.info["c_prime"])
    modeler = POGPUCBModeler(rel.Z, 1.25 * s, 1.0, 1e-5)
    baseline = GPUCB(X, SquaredExponential(1.25 * s / factor, 1.0), 1e-5)
    assert_same_choices(modeler, baseline, curator, 20, [5])


def test_modeler_never_holds_the_inputs():
    params = inspect.signature(POGPUCBModeler.__init__).parameters
    assert "X" not in params and "inputs" not in params and "projection" not in params
    X = grid(size=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rel = Curator(X, X[:, 0], RandomProjectionMechanism(1.0, 1e-5, 4), seed=0).release()
    modeler = POGPUCBModeler.from_release(
        rel, lengthscale=5.0, signal_variance=1.0, noise_variance=1e-5
    )
    held = [v for v in vars(modeler).values()] + [v for v in vars(modeler.gp).values()]
    for value in held:
        if isinstance(value, np.ndarray) and value.shape == X.shape:
            assert not np.allclose(value, X - X.mean(0)) and not np.allclose(value, X)
    np.testing.assert_array_equal(modeler.gp.candidates, rel.Z)


def test_curator_rejects_bad_index():
    curator = Curator(TOY, np.arange(4.0), RandomProjectionMechanism(1.0, 0.1, 2), seed=0)
    with pytest.raises(ValueError, match=r"index must be an integer in \[0, 3\]"):
        curator.query(4)


# -- the additive lift of the authors' code (issue 10) ----------------------------------------
def test_additive_lift_adds_omega_to_every_singular_value():
    X = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 2.0], [0.0, -2.0]])  # sigma = 2.828, 1.414
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mech = RandomProjectionMechanism(
            1.0, 1e-5, 2, projection=np.eye(2), omega=2.0, lift="additive"
        )
        rel = mech.release(X, 0)
        sqrt_rel = RandomProjectionMechanism(1.0, 1e-5, 2, projection=np.eye(2), omega=2.0).release(
            X
        )
    assert rel.info["branch"] == "else" and rel.info["lift"] == "additive"
    lifted = np.linalg.svd(rel.Z * np.sqrt(2), compute_uv=False)
    np.testing.assert_allclose(lifted, [np.sqrt(8) + 2, np.sqrt(2) + 2], rtol=1e-12)
    assert rel.info["c_prime"] == pytest.approx((1 + 2 / np.sqrt(2)) ** 2)
    np.testing.assert_allclose(
        np.linalg.svd(sqrt_rel.Z * np.sqrt(2), compute_uv=False), [np.sqrt(12), np.sqrt(6)]
    )
    assert sqrt_rel.info["c_prime"] == pytest.approx(3.0) and sqrt_rel.info["lift"] == "sqrt"
    with pytest.raises(ValueError, match="lift must be one of"):
        RandomProjectionMechanism(1.0, 1e-5, 2, lift="multiplicative")


def test_additive_lift_leaves_the_if_branch_alone():
    X = grid(size=20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = RandomProjectionMechanism(np.exp(9.0), 1e-5, 5, lift="additive").release(X, 3)
        b = RandomProjectionMechanism(np.exp(9.0), 1e-5, 5).release(X, 3)
    assert a.info["branch"] == "if"
    np.testing.assert_array_equal(a.Z, b.Z)
