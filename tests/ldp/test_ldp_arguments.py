"""LDPArguments: one validation of the shared constructor arguments of the three LDP algorithms."""

import dataclasses
import itertools
import math

import numpy as np
import pytest

from frontierbo.core.kernels import SquaredExponential
from frontierbo.ldp.arguments import LDPArguments
from frontierbo.ldp.ata_gp_ucb import ATAGPUCB
from frontierbo.ldp.moma_gp_ucb import MoMAGPUCB
from frontierbo.ldp.parameters import ata_beta, ctl_moments, ldp_tgp_beta
from frontierbo.ldp.tgp_ucb import TGPUCB

ALGORITHMS = (TGPUCB, ATAGPUCB, MoMAGPUCB)
T = 50


def gram(n=6):
    x = np.linspace(0.0, 1.0, n)[:, None]
    return SquaredExponential(0.3, 1.0)(x)


def outcome(make):
    """``"ok"`` or the exception's type name."""
    try:
        make()
    except (TypeError, ValueError) as exc:
        return type(exc).__name__
    return "ok"


def shared_kwargs(B, R, eps, alpha):
    kw = {"B": B, "R": R, "eps_priv": eps, "alpha": alpha}
    if eps is None:  # each non-private algorithm needs its moment; each ignores the other one
        kw.update(v=2.0, c=1.5)
    return kw


GRID = list(
    itertools.product(
        [0.0, 1e-9, 1.0, -1.0, math.inf],  # B
        [None, 0.0, 1.0, math.inf],  # R
        [None, 1.0],  # eps_priv
        [0.5, 1.0, 0.0, 1.5],  # alpha
    )
)


@pytest.mark.parametrize(("B", "R", "eps", "alpha"), GRID)
def test_the_three_algorithms_accept_and_reject_alike(B, R, eps, alpha):
    kw = shared_kwargs(B, R, eps, alpha)
    expected = outcome(lambda: LDPArguments(T=T, **kw))
    got = {
        cls.__name__: outcome(lambda cls=cls: cls(gram(), T, seed=0, **kw)) for cls in ALGORITHMS
    }
    assert set(got.values()) == {expected}, got


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        # the two drifts: TGP-UCB took alpha < 1 with a privacy level, ATA/MoMA took B = 0
        (dict(B=1.0, R=1.0, eps_priv=1.0, alpha=0.5), "alpha must be 1 when eps_priv is given"),
        (dict(B=0.0, v=2.0, c=1.5), r"B must be in \(0, inf\)"),
        (dict(B=1.0, eps_priv=1.0), r"R \(the noise bound.*required"),
        (dict(B=1.0, v=2.0, c=1.5, R=math.inf), r"R must be in \[0, inf\)"),
        (dict(B=1.0, R=1.0, eps_priv=0.0), r"eps_priv must be in \(0, inf\)"),
        (dict(B=1.0, v=2.0, c=-1.0), r"c must be in \(0, inf\)"),
        (dict(B=1.0, v=0.0, c=1.5), r"v must be in \(0, inf\)"),
        (dict(B=1.0, v=2.0, c=1.5, lam=0.0), r"lam must be in \(0, inf\)"),
        (dict(B=1.0, v=2.0, c=1.5, delta=1.0), r"delta must be in \(0, 1\)"),
        (dict(B=1.0, v=2.0, c=1.5, profile="fast"), "profile must be one of"),
        (dict(B=1.0, v=2.0, c=1.5, beta_scale=-0.1), r"beta_scale must be in \[0, inf\)"),
    ],
)
@pytest.mark.parametrize("cls", ALGORITHMS)
def test_one_message_per_bad_argument(cls, kwargs, match):
    with pytest.raises(ValueError, match=match):
        LDPArguments(T=T, **kwargs)
    with pytest.raises(ValueError, match=match):
        cls(gram(), T, seed=0, **kwargs)


def test_horizon_and_types():
    for cls in ALGORITHMS:
        with pytest.raises(ValueError, match=r"T must be an integer in \[1, inf\]"):
            cls(gram(), 0, B=1.0, v=2.0, c=1.5)
        with pytest.raises(TypeError, match="B must be a real number"):
            cls(gram(), T, B="1", v=2.0, c=1.5)


def test_arguments_are_frozen_and_resolve_the_moments():
    args = LDPArguments(T=T, B=1.0, R=1.0, eps_priv=1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        args.B = 2.0
    assert args.private and args.ctl == ctl_moments(1.0, 1.0, 1.0)
    assert (args.moment("v", "ATA-GP-UCB"), args.moment("c", "MoMA-GP-UCB")) == (34.0, 33.0)
    assert LDPArguments(T=T, B=1.0, R=1.0, eps_priv=1.0, v=5.0).moment("v", "ATA") == 5.0
    plain = LDPArguments(T=np.int64(T), B=1, c=3)
    assert plain.T == T and isinstance(plain.T, int) and isinstance(plain.B, float)
    assert not plain.private and plain.ctl is None and plain.moment("c", "MoMA-GP-UCB") == 3.0
    with pytest.raises(ValueError, match=r"v \(the moment bound.*required.*ATA-GP-UCB"):
        plain.moment("v", "ATA-GP-UCB")


def test_algorithms_keep_the_validated_values():
    kw = dict(B=2, R=0, eps_priv=2, lam=0.5, delta=0.2, beta_scale=0.3)
    for cls in ALGORITHMS:
        algo = cls(gram(), T, seed=0, **kw)
        assert algo.args == LDPArguments(T=T, **kw)
        assert (algo.B, algo.R, algo.eps_priv, algo.lam) == (2.0, 0.0, 2.0, 0.5)
        assert (algo.delta, algo.beta_scale, algo.alpha, algo.T) == (0.2, 0.3, 1.0, T)
    assert ATAGPUCB(gram(), T, **kw).v == ctl_moments(2.0, 0.0, 2.0)["v"]
    assert MoMAGPUCB(gram(), T, **kw).c == ctl_moments(2.0, 0.0, 2.0)["c"]
    with pytest.raises(ValueError, match="v must be None for LDP-TGP-UCB"):
        TGPUCB(gram(), T, v=3.0, **kw)  # TGP's private formulas fix the moment themselves


def test_width_is_the_new_name_of_the_sigma_multiplier():
    tgp = TGPUCB(gram(), T, B=1.0, R=1.0, eps_priv=2.0, seed=0, beta_scale=0.3)
    assert tgp.last_width is None and tgp.last_beta is None
    tgp.tell(tgp.ask(), 0.1)
    arm = tgp.ask()
    assert tgp.last_width == tgp.last_beta == ldp_tgp_beta(2, 1.0, 1.0, 2.0, beta_scale=0.3)
    assert tgp.width(5) == tgp.beta(5)
    ucb = tgp.gp.mean + tgp.last_width * tgp.gp.std
    assert ucb[arm] == ucb.max()
    ata = ATAGPUCB(gram(), T, B=1.0, v=2.0, seed=0)
    assert math.isnan(ata.width)
    ata.tell(ata.ask(), 0.5)
    assert ata.width == ata.beta == ata_beta(1, ata.m, 2.0, T, 1.0)
    np.testing.assert_array_equal(ata.ucb(), ata.mean + ata.width * np.sqrt(ata.variance))
