"""LDP BO, declared: ``run ldp-bo`` (columns of a CSV are arms), ``reproduce ldp-bo`` and the
study samplers ATA-, TGP- and MoMA-GP-UCB (see :mod:`frontierbo.systems.declare`)."""

from __future__ import annotations

from frontierbo.ldp.experiment import (
    BETA_SCALE,
    DATASETS,
    DELTA,
    FULL_T,
    FULL_TRIALS,
    QUICK_T,
    QUICK_TRIALS,
)
from frontierbo.systems.declare import (
    DATA,
    OUT,
    REQUIRED,
    SEED,
    Command,
    Param,
    Reproduction,
    System,
    failure_probability,
)

NAME = "ldp-bo"
ALGORITHMS = ("ata", "tgp", "moma")

BETA_SCALE_PARAM = Param(
    "beta_scale",
    float,
    BETA_SCALE,
    "common multiplier of the confidence width of every algorithm",
    low=0.0,
)

RUN = Command(
    NAME,
    help="ATA-, TGP- or MoMA-GP-UCB (eps-LDP or not) on a reward table: columns are arms",
    description="Heavy-tailed / locally private BO on a CSV file whose columns are arms and "
    "whose rows are reward observations (see frontierbo.ldp.userdata).",
    params=(
        DATA,
        Param(
            "algorithm", str, REQUIRED, "the algorithm: ATA-, TGP- or MoMA-GP-UCB",
            choices=ALGORITHMS,
        ),
        Param(
            "iterations", int, REQUIRED, "rounds T (one arm played per round)", low=1, short="-T"
        ),
        SEED,
        Param(
            "epsilon", float, None,
            "local-DP privacy budget of each reward (CTL randomiser); omit for the non-private "
            "version", low=0.0, low_open=True,
        ),
        failure_probability(DELTA, "the confidence bounds: the UCB width grows with ln(1/delta)"),
        BETA_SCALE_PARAM,
        Param("exclude", list, None, "columns that are not arms (e.g. Date)"),
        OUT,
    ),
    run="frontierbo.ldp.userdata:run_ldp_on_csv",
    format="frontierbo.ldp.userdata:format_ldp_result",
    example="frontierbo.ldp.userdata:example",
)  # fmt: skip

SYSTEM = System(
    name=NAME,
    summary="local-DP and heavy-tailed BO (CTL randomiser; ATA-, TGP-, MoMA-GP-UCB)",
    commands=(RUN,),
    reproduction=Reproduction(
        help="Zhou & Tan (AAAI 2021): private, heavy-tailed and bounded settings (E1-E3)",
        description="Reproduce the LDP / heavy-tailed BO experiments (resumable).",
        quick=f"T = {QUICK_T} and {QUICK_TRIALS} trials (full: T = {FULL_T})",
        runs=f"trials per configuration ({FULL_TRIALS})",
        datasets=DATASETS,
        reproduce="frontierbo.ldp.report:reproduce",
        quick_args=("--quick", "--runs", "1", "--datasets", "synthetic-se"),
        params=(BETA_SCALE_PARAM,),
    ),
    samplers={
        "ata-gp-ucb": "frontierbo.ldp.sampler:ATAGPUCBSampler",
        "tgp-ucb": "frontierbo.ldp.sampler:TGPUCBSampler",
        "moma-gp-ucb": "frontierbo.ldp.sampler:MoMAGPUCBSampler",
    },
    sampler_settings={
        "ata-gp-ucb": {"horizon": 20, "B": 2.0, "R": 1.0, "v": 2.0},
        "tgp-ucb": {"horizon": 20, "B": 2.0, "R": 1.0, "v": 2.0},
        "moma-gp-ucb": {"horizon": 20, "B": 2.0, "R": 1.0, "c": 2.0},
    },
)
