"""GP-UCB: beta schedule, ask/tell contract, regret bookkeeping, and performance vs random;
GP-BUCB's scores with pending rows."""

import numpy as np
import pytest

from frontierbo.core.acquisition import beta_srinivas, make_beta_schedule, ucb_scores
from frontierbo.core.gp import FiniteDomainGP
from frontierbo.core.gp_ucb import GPUCB, gp_bucb_scores
from frontierbo.core.kernels import SquaredExponential
from frontierbo.core.loop import RegretTrace, TableOracle, run_bo


@pytest.mark.parametrize(
    ("n", "t", "expected"),
    [
        (10000, 1, 26.7938),
        (10000, 10, 36.0042),
        (10000, 50, 42.4419),
        (36000, 1, 29.3557),
        (36000, 50, 45.0038),
        (2004, 1, 23.5790),
        (2004, 100, 41.9996),
        (961, 1, 22.1091),
        (961, 50, 37.7572),
    ],
)
def test_beta_srinivas_values(n, t, expected):
    # line 3 of Algorithm 2 of the PO-GP-UCB paper, at the n of its data sets
    assert beta_srinivas(t, n, 0.025) == pytest.approx(expected, abs=1e-4)
    assert beta_srinivas(t, n, 0.05) == pytest.approx(expected - 2 * np.log(2), abs=1e-4)


def test_beta_schedule_rejects_bad_values():
    with pytest.raises(ValueError, match=r"delta must be in \(0, 1\)"):
        beta_srinivas(1, 10, 1.5)
    with pytest.raises(ValueError, match="beta must be"):
        make_beta_schedule("ucb", 10, 0.1)
    with pytest.raises(ValueError, match="beta must be in"):
        make_beta_schedule(-1.0, 10, 0.1)
    assert make_beta_schedule(2.5, 10, 0.1)(7) == 2.5


def _grid_problem(n=400, seed=0):
    g = np.linspace(0, 1, n)[:, None]
    rng = np.random.default_rng(seed)
    kernel = SquaredExponential(0.08, 1.0)
    f = np.linalg.cholesky(kernel(g) + 1e-9 * np.eye(n)) @ rng.standard_normal(n)
    return g, f, kernel


def test_ask_picks_argmax_ucb_lowest_index_on_ties_and_never_repeats():
    X = np.linspace(0, 1, 5)[:, None]
    opt = GPUCB(X, SquaredExponential(0.3, 1.0), 1e-4, beta=1.0)
    assert opt.ask() == 0  # all UCB values equal: lowest index
    opt.tell(0, 0.0)
    seen = {0}
    for _ in range(4):
        i = opt.ask()
        assert i not in seen
        seen.add(i)
        opt.tell(i, 0.0)
    with pytest.raises(RuntimeError, match="all candidates have been observed"):
        opt.ask()


def test_repeats_allowed_when_not_excluding():
    X = np.array([[0.0], [5.0]])
    opt = GPUCB(X, SquaredExponential(0.5, 1.0), 0.01, beta=0.01, exclude_observed=False)
    opt.tell(0, 3.0)
    opt.tell(1, -3.0)
    assert opt.ask() == 0 and opt.ask() == 0


def test_regret_trace_bookkeeping():
    values = np.array([0.0, 2.0, 5.0, 1.0])
    tr = RegretTrace(values)
    for i in [0, 3, 1, 2, 0]:
        tr.record(i)
    assert tr.instant == [5.0, 4.0, 3.0, 0.0, 5.0]
    assert tr.simple == [5.0, 4.0, 3.0, 0.0, 0.0]


def test_run_bo_regret_properties_and_reproducibility():
    X, f, kernel = _grid_problem()
    results = []
    for _ in range(2):
        opt = GPUCB(X, kernel, 1e-4)
        results.append(run_bo(opt, TableOracle(f, 0.01, seed=9), 30, [17], f))
    a, b = results
    np.testing.assert_array_equal(a.indices, b.indices)
    s = a.simple_regret
    assert len(s) == 31 and np.all(s >= 0) and np.all(np.diff(s) <= 0)
    assert (s[-1] == 0) == (int(np.argmax(f)) in set(a.indices) | {17})
    inst = f.max() - f[a.indices]
    np.testing.assert_allclose(a.cumulative_regret, np.concatenate([[0], np.cumsum(inst)]))


def test_gp_ucb_beats_random_search_on_average():
    """Mean simple regret after 15 rounds over 20 seeded GP samples: GP-UCB < random / 3."""
    ucb, rnd = [], []
    for seed in range(20):
        X, f, kernel = _grid_problem(seed=seed)
        rng = np.random.default_rng(seed)
        init = rng.choice(len(f), 1, replace=False)
        res = run_bo(GPUCB(X, kernel, 1e-4), TableOracle(f, 0.01, seed=seed), 15, init, f)
        ucb.append(res.simple_regret[-1])
        picks = np.concatenate([init, rng.choice(len(f), 15, replace=False)])
        rnd.append(f.max() - f[picks].max())
    assert np.mean(ucb) < np.mean(rnd) / 3


def test_table_oracle_common_random_numbers():
    a, b = TableOracle(np.zeros(3), 1.0, seed=4), TableOracle(np.zeros(3), 1.0, seed=4)
    assert [a.query(i) for i in (0, 1, 2)] == [b.query(i) for i in (2, 2, 0)]
    with pytest.raises(ValueError, match="index"):
        a.query(3)


# -- the std / variance switch, the kernel check and repeated asks (issue 10) -----------------
def _observed_opt(**kwargs):
    X, f, kernel = _grid_problem(n=60)
    opt = GPUCB(X, kernel, 1e-4, **kwargs)
    for i in (3, 30, 47):
        opt.tell(i, float(f[i]))
    return opt


def test_uncertainty_variance_multiplies_the_variance_by_sqrt_beta():
    std, var = _observed_opt(delta=0.1), _observed_opt(delta=0.1, uncertainty="variance")
    n, t = std.gp.n, 4
    width = np.sqrt(2 * np.log(n * t**2 * np.pi**2 / (6 * 0.1)))  # Mitan/po-gp-ucb UCB.py
    np.testing.assert_allclose(
        var.acquisition(t), var.gp.mean + width * var.gp.posterior_variance(), rtol=1e-12
    )
    np.testing.assert_allclose(std.acquisition(t), std.gp.mean + width * std.gp.std, rtol=1e-12)
    scores = var.acquisition(1).copy()
    scores[var.gp.observed_indices] = -np.inf
    assert var.ask() == int(np.argmax(scores))
    with pytest.raises(ValueError, match="uncertainty must be one of"):
        GPUCB(np.zeros((2, 1)), SquaredExponential(1.0, 1.0), 0.1, uncertainty="sd")


def test_std_path_is_unchanged_by_the_switch():
    a, b = _observed_opt(), _observed_opt(uncertainty="std")
    assert a.ask() == b.ask()
    ref = a.gp.mean + np.sqrt(beta_srinivas(2, a.gp.n, 0.025)) * np.sqrt(a.gp.posterior_variance())
    np.testing.assert_array_equal(a.acquisition(), ref)


def test_missing_kernel_is_a_type_error_naming_kernel():
    with pytest.raises(TypeError, match="kernel must be a kernel object.*got None"):
        GPUCB(np.zeros((3, 1)), None, 0.1)
    with pytest.raises(TypeError, match="kernel"):
        GPUCB(np.zeros((3, 1)), "se", 0.1)


def test_ask_twice_without_tell_returns_the_pending_row_and_keeps_t():
    opt = _observed_opt()
    first = opt.ask()
    assert opt.t == 1 and opt.pending == first
    assert opt.ask() == first and opt.t == 1  # a retry, not a new round
    opt.tell(first, 0.0)
    assert opt.pending is None
    second = opt.ask()
    assert second != first and opt.t == 2


def test_gp_bucb_hallucinates_pending_rows_at_the_posterior_mean():
    g, f, kernel = _grid_problem(n=60, seed=3)
    gp = FiniteDomainGP(g, kernel, 1e-3)
    for i in (5, 17, 40):
        gp.add(i, float(f[i]))
    width = 2.0
    plain = gp_bucb_scores(gp, width)
    np.testing.assert_array_equal(plain, ucb_scores(gp.mean, gp.std, width))  # nothing pending
    pending = [30, 31]
    scores = gp_bucb_scores(gp, width, pending)
    mean, var = gp.hallucinated(None, pending)
    np.testing.assert_array_equal(mean, gp.mean)  # the mean stays mu_t
    # the same as a GP told its own posterior mean at the pending rows, one after the other
    told = FiniteDomainGP(g, kernel, 1e-3)
    for i in (5, 17, 40):
        told.add(i, float(f[i]))
    for i in pending:
        told.add(i, float(told.mean[i]))
    np.testing.assert_allclose(var, told.variance, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(scores, mean + width * np.sqrt(var), rtol=0, atol=1e-15)
    assert np.all(scores <= plain + 1e-12) and scores[30] < plain[30]
    rows = np.array([3, 30, 59])  # a few rows: the covariance blocks of these rows only
    np.testing.assert_allclose(gp_bucb_scores(gp, width, pending, rows), scores[rows], rtol=1e-12)
    np.testing.assert_allclose(gp.hallucinated(rows, pending)[1], var[rows], rtol=1e-9, atol=1e-15)
