"""Quantum BO, declared: ``run quantum-bo`` (rows of a CSV are arms), ``reproduce quantum-bo`` and
the study samplers Q-GP-UCB and Q-LinUCB (see :mod:`frontierbo.systems.declare`).

The oracle's accuracy is chosen by the algorithm each stage (it is not a privacy budget and has no
flag); ``--failure-probability`` is the failure probability of each stage's estimate (the papers'
delta; ``--delta`` is only the privacy delta, :mod:`frontierbo.flags`). ``--queries`` is the query
budget T: oracle queries in all (a stage spends many), not rounds.
"""

from __future__ import annotations

from frontierbo._validation import check_real
from frontierbo.quantum.experiment import MAIN_SETTINGS, QUICK_RUNS, QUICK_T
from frontierbo.systems.declare import (
    DATA,
    OUT,
    REQUIRED,
    SEED,
    Applies,
    Command,
    Param,
    Reproduction,
    System,
    failure_probability,
)

NAME = "quantum-bo"
#: ``--algorithm`` choices and their labels.
ALGORITHMS = {
    "q-gp-ucb": "Q-GP-UCB",
    "gp-ucb": "GP-UCB",
    "q-linucb": "Q-LinUCB",
    "linucb": "LinUCB",
}
QUANTUM = ("q-gp-ucb", "q-linucb")
GP = ("q-gp-ucb", "gp-ucb")
#: The named widths (:data:`frontierbo.quantum.q_gp_ucb.WIDTH_SCHEDULES`).
WIDTHS = ("log", "theory")


def check_width(value, label: str):
    """``"log"``, ``"theory"`` or a positive number (a number's text too, as on the command line)."""
    wrong = f"{label} must be 'log', 'theory' or a positive number, got {value!r}"
    if isinstance(value, str):
        if value.strip() in WIDTHS:
            return value.strip()
        try:
            value = float(value)
        except ValueError:
            raise ValueError(wrong) from None
    try:
        return check_real(value, label, low=0.0)
    except TypeError:
        raise TypeError(wrong) from None


def _quantum_only(name: str, help: str, choices: tuple[str, ...]) -> Param:
    """A setting of the quantum methods' oracle or weighting; None is its first choice."""
    return Param(
        name, str, None, f"quantum methods: {help}", choices=choices,
        applies=Applies("algorithm", QUANTUM, "a classical method pulls one reward per query"),
    )  # fmt: skip


QUERIES_NOTE = "the query budget T, oracle queries in all, not rounds"

RUN = Command(
    NAME,
    help="Q-GP-UCB, Q-LinUCB and classical baselines on an arm table: rows are arms",
    description="Quantum BO on a CSV file whose rows are arms: reward column p (Bernoulli) "
    "or mean and sigma (Gaussian); the other columns are features "
    "(see frontierbo.quantum.userdata).",
    params=(
        DATA,
        Param(
            "budget", int, REQUIRED,
            "query budget T: oracle queries in all, the initial arm's included (a stage spends "
            "many; the last stage runs whole and may end past T, by an amount the report states; "
            "regret counts the first T)", low=1, flag="--queries", metavar="T",
            renamed=(("-T", QUERIES_NOTE), ("--iterations", QUERIES_NOTE)),
        ),
        SEED,
        Param("algorithm", str, "q-gp-ucb", "the algorithm", choices=tuple(ALGORITHMS)),
        Param("features", list, None, "feature columns (default: all others)"),
        Param(
            "lengthscale", float, None,
            "SE length-scale on the min-max normalised features (0.2; GP methods only)",
            low=0.0, low_open=True,
            applies=Applies("algorithm", GP, "the linear methods use the linear kernel on the "
                            "normalised features"),
        ),
        Param(
            "width", str, None,
            "UCB width (multiplies sigma): 'log', 'theory' or a number (default: log for quantum "
            "methods, sqrt(2) for classical ones)",
            check=check_width, renamed=(("--beta", "the UCB width, a multiplier of sigma"),),
        ),
        _quantum_only("weighting", "eq. 3 (paper, default) or the authors' code (reference)",
                      ("paper", "reference")),
        _quantum_only("encoding", "amplitude encoding of the rewards (exact)",
                      ("exact", "reference")),
        _quantum_only("backend", "NumPy IQAE simulator (default) or Qiskit circuits "
                      "(statevector, aer; needs frontierbo[quantum])",
                      ("numpy", "statevector", "aer")),
        failure_probability(
            0.05, "each stage's estimate, also the confidence of the 'theory' width"
        ),
        OUT,
    ),
    run="frontierbo.quantum.userdata:run_quantum_on_csv",
    format="frontierbo.quantum.userdata:format_quantum_result",
    example="frontierbo.quantum.userdata:example",
)  # fmt: skip

SYSTEM = System(
    name=NAME,
    summary="quantum BO with an amplitude-estimation oracle (Q-GP-UCB, Q-LinUCB)",
    commands=(RUN,),
    reproduction=Reproduction(
        help="Dai et al. (NeurIPS 2023): synthetic and AutoML regret curves, T = 3e4 shape test",
        description="Reproduce the quantum BO experiments (resumable).",
        quick=f"T = {' / '.join(str(t) for t in QUICK_T.values())} (synthetic / AutoML) and "
        f"{QUICK_RUNS} runs",
        runs="runs per configuration (10 synthetic / 5 AutoML)",
        datasets=MAIN_SETTINGS,
        reproduce="frontierbo.quantum.report:reproduce",
        quick_args=("--quick", "--runs", "1", "--datasets", "synthetic-bernoulli"),
        params=(
            Param(
                "source", str, None,
                "the authors' synthetic function and RFF draws (quantum/synth_function.json "
                "under the data root, validation use) or the project's own seeded ones; default: "
                "the authors' when the file is found, else the project's (the report says which)",
                choices=("reference", "generated"),
            ),
            Param(
                "noisy", bool, False,
                "also run Q-GP-UCB on noisy Qiskit-Aer circuits (synthetic, 3 runs; about a "
                "minute per run; extra [quantum])",
            ),
        ),
    ),
    samplers={
        "q-gp-ucb": "frontierbo.quantum.sampler:QGPUCBSampler",
        "q-linucb": "frontierbo.quantum.sampler:QLinUCBSampler",
    },
)  # fmt: skip
