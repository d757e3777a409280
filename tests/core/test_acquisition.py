"""The one UCB selection of core/acquisition: scores, exclusion, tie rules, errors, GPUCB."""

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from frontierbo.core.acquisition import (
    AllExcludedError,
    beta_srinivas,
    select_max,
    select_ucb,
    ucb,
    ucb_scores,
    width_from_beta,
)
from frontierbo.core.gp import FiniteDomainGP
from frontierbo.core.gp_ucb import GPUCB
from frontierbo.core.kernels import SquaredExponential

MEAN = np.array([0.0, 1.0, 2.0, -1.0, 0.5])
STD = np.array([1.0, 0.5, 0.0, 2.0, 0.25])


# -- scores ---------------------------------------------------------------------------------------
def test_scores_by_hand_width_and_beta():
    # width 2: [0 + 2, 1 + 1, 2 + 0, -1 + 4, 0.5 + 0.5] (binary fractions: exact)
    expected = np.array([2.0, 2.0, 2.0, 3.0, 1.0])
    np.testing.assert_array_equal(ucb_scores(MEAN, STD, 2.0), expected)
    np.testing.assert_array_equal(ucb(MEAN, STD, 4.0), expected)  # beta 4 = width 2
    np.testing.assert_array_equal(ucb_scores(MEAN, STD, 0.0), MEAN)
    assert width_from_beta(4.0) == 2.0 and width_from_beta(0) == 0.0
    assert width_from_beta(np.float64(2.25)) == 1.5


def test_scores_write_into_out_even_when_out_is_std():
    out = np.empty(5)
    assert ucb_scores(MEAN, STD, 2.0, out=out) is out
    std = STD.copy()
    assert ucb_scores(MEAN, std, 2.0, out=std) is std
    np.testing.assert_array_equal(std, out)


@pytest.mark.parametrize("width", [-0.5, math.inf, math.nan])
def test_bad_width_and_beta_are_named(width):
    with pytest.raises(ValueError, match=r"width must be in \[0, inf\)"):
        ucb_scores(MEAN, STD, width)
    with pytest.raises(ValueError, match="beta must be in"):
        width_from_beta(width)


def test_mismatched_shapes_are_rejected():
    with pytest.raises(ValueError, match="same shape"):
        ucb_scores(MEAN, STD[:4], 1.0)


# -- selection ------------------------------------------------------------------------------------
def test_lowest_index_breaks_ties():
    assert select_ucb(MEAN, STD, 1.0) == 2  # [1, 1.5, 2, 1, 0.75]
    assert select_ucb(MEAN, STD, 2.0) == 3  # [2, 2, 2, 3, 1]
    assert select_max(np.array([1.0, 3.0, 0.0, 3.0])) == 1


@pytest.mark.parametrize("as_mask", [False, True])
def test_exclusion_by_indices_or_mask(as_mask):
    rows = np.array([3, 0])
    exclude = np.isin(np.arange(5), rows) if as_mask else rows
    out = np.empty(5)
    assert select_ucb(MEAN, STD, 2.0, exclude=exclude, out=out) == 1  # 3 and 0 out: 1 < 2 tie
    np.testing.assert_array_equal(out, [-np.inf, 2.0, 2.0, -np.inf, 1.0])
    assert select_ucb(MEAN, STD, 2.0, exclude=[3, 0, 1, 1]) == 2  # a list, with a repeat
    assert select_ucb(MEAN, STD, 2.0, exclude=[]) == 3


@pytest.mark.parametrize("ties", ["lowest", "random"])
@pytest.mark.parametrize(
    "exclude", [np.arange(5), np.array([4, 3, 2, 1, 0, 0]), np.ones(5, dtype=bool)]
)
def test_every_row_excluded_is_an_error(ties, exclude):
    with pytest.raises(AllExcludedError, match=r"every row is excluded \(5 of 5\)"):
        select_ucb(MEAN, STD, 1.0, exclude=exclude, ties=ties, rng=np.random.default_rng(0))


def test_bad_exclude_ties_rng_and_nan_are_named():
    with pytest.raises(ValueError, match="exclude must hold row indices"):
        select_ucb(MEAN, STD, 1.0, exclude=[7])
    with pytest.raises(ValueError, match=r"boolean mask must have shape \(5,\)"):
        select_ucb(MEAN, STD, 1.0, exclude=np.ones(4, dtype=bool))
    with pytest.raises(TypeError, match="exclude must be"):
        select_ucb(MEAN, STD, 1.0, exclude=[0.5])
    with pytest.raises(ValueError, match="ties must be one of"):
        select_ucb(MEAN, STD, 1.0, ties="first")
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        select_ucb(MEAN, STD, 1.0, ties="random", rng=None)
    for ties in ("lowest", "random"):
        with pytest.raises(ValueError, match="NaN"):
            select_max(np.array([1.0, np.nan, 0.0]), ties=ties, rng=np.random.default_rng(0))


def test_random_ties_are_uniform_over_the_tied_rows():
    """7 rows, 4 of them tied at the top; 4000 seeded draws: untied rows never, tied rows
    uniformly (chi-square goodness of fit, 3 degrees of freedom, p > 0.001)."""
    scores = np.array([1.0, 5.0, 5.0, 4.999999, 5.0, 0.0, 5.0])
    rng = np.random.default_rng(12345)
    picks = np.bincount(
        [select_max(scores.copy(), ties="random", rng=rng) for _ in range(4000)], minlength=7
    )
    assert picks[[0, 3, 5]].sum() == 0
    tied = picks[[1, 2, 4, 6]]
    assert tied.sum() == 4000
    assert stats.chisquare(tied).pvalue > 1e-3


def test_random_ties_keep_the_random_stream_of_the_ldp_algorithms():
    """The rule is the one LDP-BO has always used: one ``rng.choice(tied)`` only when two or
    more rows tie, so seeded runs pick the same arms as before."""

    def reference(scores, rng):
        best = np.flatnonzero(scores == scores.max())
        return int(best[0]) if best.shape[0] == 1 else int(rng.choice(best))

    draw = np.random.default_rng(3)
    a, b = np.random.default_rng(99), np.random.default_rng(99)
    for _ in range(300):
        scores = draw.integers(0, 4, size=9).astype(float)  # frequent ties, sometimes none
        assert select_max(scores.copy(), ties="random", rng=a) == reference(scores, b)
    assert a.random() == b.random()  # the streams are still in step
    untied = np.random.default_rng(1)
    select_max(np.array([0.0, 2.0, 1.0]), ties="random", rng=untied)
    assert untied.random() == np.random.default_rng(1).random()  # no draw without a tie


# -- the GP's public posterior and GPUCB ----------------------------------------------------------
def _gp_problem(n=60, seed=0):
    X = np.linspace(0.0, 1.0, n)[:, None]
    kernel = SquaredExponential(0.15, 1.0)
    f = np.sin(7.0 * X[:, 0]) + 0.3 * np.cos(17.0 * X[:, 0])
    return X, kernel, f, np.random.default_rng(seed)


def test_posterior_variance_and_std_into_a_buffer():
    X, kernel, f, _ = _gp_problem()
    gp = FiniteDomainGP(X, kernel, 0.0)
    for i in range(0, 60, 3):  # noise-free: rounding leaves some variances just below 0
        gp.add(i, float(f[i]))
    buf = np.empty(gp.n)
    assert gp.posterior_variance(out=buf) is buf
    np.testing.assert_array_equal(buf, gp.variance)
    raw = gp.posterior_variance(clip=False)
    assert raw.min() < 0.0 and gp.variance.min() == 0.0
    np.testing.assert_array_equal(np.maximum(raw, 0.0), gp.variance)
    assert gp.posterior_variance(out=np.empty(gp.n), clip=False).tolist() == raw.tolist()
    assert gp.posterior_std(out=buf) is buf
    np.testing.assert_array_equal(buf, np.sqrt(gp.variance))
    np.testing.assert_array_equal(gp.std, buf)


@pytest.mark.parametrize("predictive", [False, True])
def test_gpucb_ask_is_the_helper_on_its_posterior(predictive):
    X, kernel, f, rng = _gp_problem()
    noise = 1e-3
    opt = GPUCB(X, kernel, noise, delta=0.1, predictive_variance=predictive)
    opt.tell(5, float(f[5]))
    for t in range(1, 25):
        gp = opt.gp
        std = np.sqrt(gp.variance + noise) if predictive else gp.std
        beta = beta_srinivas(t, gp.n, 0.1)
        np.testing.assert_array_equal(opt.acquisition(), ucb(gp.mean, std, beta))
        expected = select_ucb(gp.mean, std, math.sqrt(beta), exclude=gp.observed_indices)
        i = opt.ask()
        assert i == expected and i not in set(gp.observed_indices)
        opt.tell(i, float(f[i] + math.sqrt(noise) * rng.standard_normal()))


def test_gpucb_reports_every_row_observed():
    X = np.linspace(0.0, 1.0, 3)[:, None]
    opt = GPUCB(X, SquaredExponential(0.3, 1.0), 1e-4, beta=1.0)
    for _ in range(3):
        opt.tell(opt.ask(), 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeError, match="all candidates have been observed"):
            opt.ask()
    assert opt.t == 3  # the failed ask did not count as a round
