"""PO-GP-UCB analysis constants against hand-computed values (Lemma 1, Theorem 3 and eq. (10)
of the paper)."""

import math

import pytest

from frontierbo.po.theory import (
    covariance_change,
    distance_inflation,
    lemma1_min_dimension,
    lemma5_c1,
    lemma6_c2,
    theorem3_bound,
    theorem3_nu,
)


@pytest.mark.parametrize(
    ("n", "nu", "expected"),
    [
        (10000, 0.5, 707.51),
        (10000, 0.1, 17687.65),
        (36000, 0.5, 789.49),
        (2004, 0.5, 604.63),
        (961, 0.5, 557.59),
    ],
)
def test_lemma1_dimension(n, nu, expected):
    assert lemma1_min_dimension(n, 0.025, nu) == pytest.approx(expected, abs=0.01)


def test_lemma1_rejects_out_of_range():
    with pytest.raises(ValueError, match=r"nu must be in \(0, 0.5\]"):
        lemma1_min_dimension(10, 0.1, 0.7)
    with pytest.raises(ValueError, match=r"mu must be in \(0, 1\)"):
        lemma1_min_dimension(10, 1.0, 0.3)


def test_distance_inflation_matches_grid_factors():
    sigma = 1030.8785
    assert distance_inflation(1192.2, sigma) == pytest.approx(1.5289**2, rel=1e-3)
    assert distance_inflation(976.1, sigma) == 1.0


def test_nu_and_covariance_change_cases():
    assert theorem3_nu(0.1, 2.0, 1.0) == pytest.approx(0.1 / (2 * math.sqrt(3) * 4))
    assert theorem3_nu(100.0, 4.0, 1.0) == pytest.approx(2 / 16)
    assert theorem3_nu(100.0, 1.0, 1.0) == 0.5
    assert covariance_change(0.01, 3.0, 100.0, 200.0) == pytest.approx(0.09)
    q = 4.0  # omega / sigma_min = 2
    expected = max(0.09, 1 - math.exp(-0.5 * (0.01 + 0.01 * q + q) * 9))
    assert covariance_change(0.01, 3.0, 200.0, 100.0) == pytest.approx(expected)


def test_c1_c2_bounds_when_c_at_most_2():
    """With C <= 2 the paper bounds C_1 <= 2 sy sqrt(2 sy^2 + sn^2)(9 sqrt2 sy^2/sn^2 + 8) and
    C_2 <= 6 sqrt2 sy^2/sn^2 L."""
    sy2, sn2, L = 1.5, 0.3, 2.0
    for C in (0.0, 0.5, 1.0, 2.0):
        bound1 = 2 * math.sqrt(sy2) * math.sqrt(2 * sy2 + sn2) * (9 * math.sqrt(2) * sy2 / sn2 + 8)
        assert lemma5_c1(C, sy2, sn2) <= bound1 + 1e-12
        assert lemma6_c2(C, sy2, sn2, L) <= 6 * math.sqrt(2) * sy2 / sn2 * L + 1e-12
    assert lemma5_c1(2.0, sy2, sn2) == pytest.approx(bound1)


def test_theorem3_bound_by_hand():
    got = theorem3_bound(0.1, 1.0, 2.0, 9.0, 5.0, 100, 1.0)
    expected = math.sqrt(
        0.01 + 24 * (2 + 3) ** 2 * math.log(100) / 100 + 24 / math.log(2) * 45 / 100
    )
    assert got == pytest.approx(expected)
