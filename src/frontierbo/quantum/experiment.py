"""Experiments of "Quantum Bayesian Optimization" (Dai et al., NeurIPS 2023), as data.

One *run* is (setting, method, run index). Settings (Section 6 and Appendix J of the paper): the
1-D synthetic function on 20 points with Gaussian noise sigma = 0.3 / 0.4 or Bernoulli rewards
(T = 10^4 queries, 10 runs) and the AutoML task (SVM on Pima, 5x5 grid of C and gamma,
sigma = 0.01 / 0.05, T = 5000, 5 runs). Methods:

* ``gp-ucb`` / ``linucb``: classical, one pull per query (:class:`SinglePullOracle`);
* ``q-gp-ucb``: Algorithm 1 with the paper's weighting (eq. 3) and the experiments' ``1 + ln n``;
* ``q-gp-ucb-reference``: the authors' code (mean weights ``1/eps^3``, IQAE re-seeded with 0 on
  every call), to compare with the published figures; ``q-gp-ucb-reference-random``: the same
  weighting with fresh IQAE randomness per call (how fragile the published plateau is);
* ``q-gp-ucb-beta1``: the paper's weighting with ``beta = 1`` (the setting where the paper-faithful
  algorithm flattens:
  docs/decisions.md#quantum-bo-calibration-figures-from-an-independent-re-simulation);
* ``q-linucb``: Q-GP-UCB with the linear kernel (paper weighting, ``1 + ln n``);
* ``q-gp-ucb-reference-noisy`` (``--noisy``, extra ``[quantum]``): the reference code on real
  Qiskit circuits run by Aer with a noise model (paper Fig. 3; qiskit-ibm-runtime's FakeWashington
  is not installed, so Qiskit's ``GenericBackendV2`` noise model on 7 qubits stands in);
* ``q-gp-ucb-classical-mc``: the staged algorithm with a classical Monte Carlo estimator
  (``O(1/eps^2)`` pulls), the ablation behind the paper's "QMC is essential".

Protocol of the reference code
(docs/decisions.md#quantum-bo-experiment-protocol-of-the-reference-code): cosine-normalised random
Fourier features with ``lambda = 1``; a continuous random initial input ``x_0 ~ U[0,1]^d`` queried
first (weight 1); IQAE with ``alpha = 0.05`` and the reference amplitude encoding; stages run until
``T`` queries are spent and the regret curve is cut at ``T``. Random streams: ``x_0`` and the
classical rewards come from ``numpy.random.RandomState(seed + run)`` in the order the reference code
draws them, so with ``seed = 0`` GP-UCB replays the published runs exactly; each quantum method's
IQAE outcomes come from its own ``Generator``.

Function / RFF source (``source``): ``"reference"`` reads the authors' numbers from
``quantum/synth_function.json`` (unlicensed, never shipped: only under a data root);
``"generated"`` uses the project's own seeded draws with the paper's recipe; ``"auto"`` (the
default) is ``"reference"`` when the file is found and ``"generated"`` otherwise, which the
report then says (:data:`SOURCE_SUBSTITUTE`). The authors' function was an unseeded
``np.random`` draw, so it cannot be regenerated. The AutoML settings need ``pima/diabetes.csv``
(CC0, ``frontierbo data fetch pima``) and are skipped, with the reason, without it.

This module builds the runs, runs one and summarises them, with the checks
(docs/decisions.md#quantum-bo-experiment-level-checks-and-their-bands) against the published numbers
(``published.json``; everything results.json holds); :mod:`frontierbo.quantum.report` presents them.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from frontierbo.experiments.report import Options, load_published
from frontierbo.experiments.runner import RunSpec, seed_for


@dataclass(frozen=True)
class Method:
    """How to build one compared method: its label, classical or quantum, kernel or linear, the
    mean weighting, ``beta`` (the multiplier of sigma, passed to the algorithm as ``width``) and
    the estimator (``iqae``, ``classical-mc``, ``aer-noisy``)."""

    label: str
    quantum: bool
    linear: bool = False
    weighting: str = "paper"
    beta: str | float = "log"
    oracle: str = "iqae"
    iqae_seed: str = "stream"


METHODS: dict[str, Method] = {
    "gp-ucb": Method("GP-UCB", quantum=False),
    "q-gp-ucb": Method("Q-GP-UCB", quantum=True),
    "q-gp-ucb-reference": Method(
        "Q-GP-UCB (reference code)", quantum=True, weighting="reference", iqae_seed="fixed"
    ),
    "q-gp-ucb-reference-random": Method(
        "Q-GP-UCB (reference weighting, random IQAE)", quantum=True, weighting="reference"
    ),
    "q-gp-ucb-beta1": Method("Q-GP-UCB (beta = 1)", quantum=True, beta=1.0),
    "linucb": Method("LinUCB", quantum=False, linear=True),
    "q-linucb": Method("Q-LinUCB", quantum=True, linear=True),
    "q-gp-ucb-reference-noisy": Method(
        "Q-GP-UCB (reference code, noisy Aer)",
        quantum=True,
        weighting="reference",
        iqae_seed="fixed",
        oracle="aer-noisy",
    ),
    "q-gp-ucb-classical-mc": Method("Q-GP-UCB, classical MC", quantum=True, oracle="classical-mc"),
}


@dataclass(frozen=True)
class Setting:
    """One experiment: a problem and the reference code's hyper-parameters for it."""

    key: str
    problem: str
    T: int
    runs: int
    title: str
    rff_quantum: tuple[str, float, int, float] = field(
        default=("rff_synth_sigma0.3", 0.1, 100, 1.0)
    )
    rff_classical: tuple[str, float, int, float] = field(
        default=("rff_synth_sigma0.3", 0.1, 100, 1.0)
    )
    classical_beta: float = math.sqrt(2.0)


_AUTOML_Q = ("rff_automl_qgpucb_ls0.2", 0.2, 200, 0.5)
_AUTOML_C = ("rff_automl_gpucb_ls1.0", 1.0, 200, 0.5)
SETTINGS: dict[str, Setting] = {
    s.key: s
    for s in (
        Setting(
            "synthetic-gauss0.3",
            "synthetic-gauss0.3",
            10_000,
            10,
            "synthetic, Gaussian sigma = 0.3",
        ),
        Setting(
            "synthetic-gauss0.4",
            "synthetic-gauss0.4",
            10_000,
            10,
            "synthetic, Gaussian sigma = 0.4",
        ),
        Setting("synthetic-bernoulli", "synthetic-bernoulli", 10_000, 10, "synthetic, Bernoulli"),
        Setting(
            "automl-sigma0.01",
            "automl-sigma0.01",
            5_000,
            5,
            "AutoML (SVM on Pima), sigma = 0.01",
            _AUTOML_Q,
            _AUTOML_C,
            1.0,
        ),
        Setting(
            "automl-sigma0.05",
            "automl-sigma0.05",
            5_000,
            5,
            "AutoML (SVM on Pima), sigma = 0.05",
            _AUTOML_Q,
            _AUTOML_C,
            1.0,
        ),
        Setting(
            "synthetic-gauss0.3-long",
            "synthetic-gauss0.3",
            30_000,
            10,
            "synthetic, Gaussian sigma = 0.3, T = 3e4",
        ),
    )
}
#: Methods run by default (the noisy Qiskit-Aer one needs ``--noisy``: ~1 min per run).
DEFAULT_METHODS = tuple(m for m in METHODS if m != "q-gp-ucb-reference-noisy")
NOISY_METHOD = "q-gp-ucb-reference-noisy"
NOISY_RUNS = 3
#: The main five settings (Fig. 1 of the paper) and the long-horizon shape test
#: (docs/decisions.md#quantum-bo-long-horizon-shape-test).
MAIN_SETTINGS = tuple(k for k in SETTINGS if not k.endswith("-long"))
SHAPE_SETTING = "synthetic-gauss0.3-long"
SHAPE_METHODS = ("gp-ucb", "q-gp-ucb-beta1", "q-gp-ucb-reference", "q-gp-ucb-reference-random")
SHAPE_QUERIES = (1_000, 3_000, 10_000, 30_000)
#: ``--quick``: shorter horizons (by setting family) and fewer runs.
QUICK_T = {"synthetic": 2_000, "automl": 1_000}
QUICK_RUNS = 3
#: The reproduction's options and their full-run values (``runs`` / ``T`` None: each setting's
#: own; ``shape``: the T = 3e4 shape test; ``noisy``: the Qiskit-Aer runs), and what ``--quick``
#: changes.
DEFAULTS = {
    "runs": None,
    "T": None,
    "methods": DEFAULT_METHODS,
    "source": "auto",
    "noisy": False,
    "shape": True,
}
QUICK = {"runs": QUICK_RUNS, "T": QUICK_T, "shape": False}
SOURCES = ("auto", "reference", "generated")
#: Why ``source="auto"`` fell back to the project's draws (the report's and results' note).
SOURCE_SUBSTITUTE = (
    "quantum/synth_function.json (the authors' unlicensed numbers, never shipped) was not found "
    "under a data root, so the project's own seeded GP function and RFF draws stand in "
    "(`--source generated`; same recipe, docs/decisions.md#quantum-bo-generated-synthetic-function)"
)
#: The authors' published numbers and our calibration re-simulation (package data).
PUBLISHED = load_published("frontierbo.quantum")
#: Published R(q) as ``{setting: {method: {q: (mean, se)}}}``; Q-GP-UCB is the reference code.
PUBLISHED_REGRET = {
    key: {m: {int(q): tuple(v) for q, v in by_q.items()} for m, by_q in methods.items()}
    for key, methods in PUBLISHED["regret"].items()
}

#: IQAE confidence (the reference code's alpha) passed as every stage's delta.
STAGE_DELTA = 0.05
LAM = 1.0
#: Query counts at which R(T) is reported
#: (docs/decisions.md#quantum-bo-published-numbers-read-from-the-authors-result-pickles).
REPORT_QUERIES = (10, 100, 500, 1000, 2000, 3000, 5000, 10_000, 30_000)


def checkpoints(T: int) -> np.ndarray:
    """Query counts where the cumulative regret is stored: ~200 evenly spaced + the report's."""
    grid = np.round(np.linspace(0, T, 201)).astype(int)
    extra = [q for q in REPORT_QUERIES if q <= T]
    return np.unique(np.concatenate([grid, extra]))


def horizon(T, key: str) -> int | None:
    """The horizon of setting ``key``: ``T`` itself, or ``T[family]`` for a mapping keyed by
    ``"synthetic"`` / ``"automl"`` (like :data:`QUICK_T`); None: the setting's own."""
    if isinstance(T, Mapping):
        return T["synthetic" if key.startswith("synthetic") else "automl"]
    return None if T is None else int(T)


def setting_specs(
    setting_keys, methods, *, seed: int = 0, T=None, runs=None, source="reference"
) -> list[RunSpec]:
    """One :class:`RunSpec` per (setting, method, run); ``T`` (see :func:`horizon`) and
    ``runs`` override the setting's."""
    specs = []
    for key in setting_keys:
        s = SETTINGS[key]
        for m in methods:
            if m not in METHODS:
                raise ValueError(f"methods must be among {list(METHODS)}, got {m!r}")
            for run in range(s.runs if runs is None else runs):
                config = {
                    "setting": key,
                    "method": m,
                    "run": run,
                    "T": s.T if T is None else horizon(T, key),
                    "source": source,
                    "legacy_seed": seed + run,
                    "oracle_seed": seed_for(seed, key, m, run),
                    "stage_delta": STAGE_DELTA,
                    "lam": LAM,
                }
                specs.append(RunSpec(f"{key}|{m}|run={run}", config, config["oracle_seed"]))
    return specs


def unavailable(setting: str) -> str | None:
    """Why ``setting`` cannot run on this install (the AutoML ones need scikit-learn and the
    Pima file), or None."""
    from frontierbo.data import FETCH_COMMAND, data_available
    from frontierbo.quantum.automl import PIMA_FILE, automl_missing

    if not setting.startswith("automl"):
        return None
    reasons = [automl_missing()]
    if not data_available(PIMA_FILE):
        reasons.append(f"needs {PIMA_FILE} (CC0) under a data root: {FETCH_COMMAND} pima")
    return "; ".join(r for r in reasons if r) or None


def check_options(params: dict) -> dict:
    """Validate the reproduction's own options (see :data:`DEFAULTS`)."""
    if params["source"] not in SOURCES:
        raise ValueError(f"source (--source) must be one of {SOURCES}, got {params['source']!r}")
    params = resolve_source(params)
    unknown = [m for m in params["methods"] if m not in METHODS]
    if unknown or not params["methods"]:
        raise ValueError(f"methods must be among {list(METHODS)}, got {unknown or []}")
    flags = {"noisy": bool(params["noisy"]), "shape": bool(params["shape"])}
    return {**params, "methods": tuple(params["methods"]), **flags}


def resolve_source(params: dict) -> dict:
    """``source="auto"``: the reference file when present, else the project's draws (and
    ``source_note`` says so); ``"reference"`` without the file fails here, before any run."""
    from frontierbo.data import Input, check_inputs, data_available
    from frontierbo.quantum.features import REFERENCE_FILE

    source, note = params["source"], params.get("source_note")
    if source == "auto":
        source = "reference" if data_available(REFERENCE_FILE) else "generated"
        note = None if source == "reference" else SOURCE_SUBSTITUTE
    elif source == "reference":  # FileNotFoundError naming the places searched and the fix
        check_inputs([Input(REFERENCE_INPUT, (REFERENCE_FILE,))])
    return {**params, "source": source, "source_note": note}


#: What reads the authors' synthetic function and RFF draws, as messages name it.
REFERENCE_INPUT = "the synthetic settings (--source reference)"


def required_inputs(options: Options) -> list:
    """The data files the chosen settings read (checked before anything runs): the Pima file
    of the AutoML settings, and the authors' synthetic function and RFF draws (``--source
    reference``, or ``auto`` where the project's own draws stand in without them)."""
    from frontierbo.data import Input
    from frontierbo.quantum.automl import PIMA_FILE
    from frontierbo.quantum.features import REFERENCE_FILE

    inputs = []
    if any(key.startswith("automl") for key in options.datasets):
        inputs.append(Input("the AutoML settings", (PIMA_FILE,)))
    synthetic = options["shape"] or any(k.startswith("synthetic") for k in options.datasets)
    if synthetic and options["source"] == "reference":
        inputs.append(Input(REFERENCE_INPUT, (REFERENCE_FILE,)))
    elif synthetic and options.params.get("source_note"):  # "auto" fell back to "generated"
        generated = (
            "the project's own seeded GP function and RFF draws (`--source generated`, "
            "docs/decisions.md#quantum-bo-generated-synthetic-function)"
        )
        inputs.append(Input("the synthetic settings", (REFERENCE_FILE,), generated))
    return inputs


def build_specs(options: Options) -> list[RunSpec]:
    """The main settings; with ``shape`` the long shape-test runs, with ``noisy`` the noisy
    Qiskit-Aer runs on the synthetic settings (at most :data:`NOISY_RUNS` each)."""
    methods, runs = options["methods"], options.runs
    common = {"seed": options.seed, "source": options["source"]}
    specs = setting_specs(options.datasets, methods, T=options["T"], runs=runs, **common)
    if options["shape"]:
        shape_methods = [m for m in SHAPE_METHODS if m in methods]
        specs += setting_specs([SHAPE_SETTING], shape_methods, runs=runs, **common)
    if options["noisy"]:
        synthetic = [k for k in options.datasets if k.startswith("synthetic")]
        n_noisy = min(runs or NOISY_RUNS, NOISY_RUNS)
        specs += setting_specs(synthetic, [NOISY_METHOD], T=options["T"], runs=n_noisy, **common)
    return specs


# -- building one run ---------------------------------------------------------------------------
@lru_cache(maxsize=8)
def load_problem(name: str, source: str):
    from frontierbo.quantum.problems import get_quantum_problem

    kwargs = {"source": source} if name.startswith("synthetic") else {}
    return get_quantum_problem(name, **kwargs)


@lru_cache(maxsize=8)
def load_features(spec: tuple, source: str, d: int):
    """The RFF map: the authors' draw (``source="reference"``) or the project's own seeded draw."""
    from frontierbo.quantum.features import RandomFourierFeatures, reference_features

    key, lengthscale, M, variance = spec
    if source == "reference":
        return reference_features(key)
    return RandomFourierFeatures.draw(d, M, lengthscale, variance, seed_for(0, "rff", key))


def make_algorithm(method: Method, setting: Setting, problem, x0, lam: float, source: str):
    """The algorithm over the arms plus the extra point ``x0`` (GP point index ``n``)."""
    from frontierbo.quantum.linear import LinUCB, QLinUCB
    from frontierbo.quantum.q_gp_ucb import QGPUCB, ClassicalGPUCB

    points = np.vstack([problem.domain, x0[None, :]])
    n = problem.n
    if method.linear:
        if method.quantum:
            return QLinUCB(points, n_arms=n, lam=lam, width=method.beta, weighting=method.weighting)
        return LinUCB(points, n_arms=n, lam=lam, width=setting.classical_beta)
    rff = load_features(
        setting.rff_quantum if method.quantum else setting.rff_classical, source, problem.d
    )
    Phi = rff(points)
    gram = Phi @ Phi.T
    if method.quantum:
        return QGPUCB(gram, n_arms=n, lam=lam, width=method.beta, weighting=method.weighting)
    return ClassicalGPUCB(gram, n_arms=n, lam=lam, width=setting.classical_beta)


def make_oracle(method: Method, legacy: np.random.RandomState, oracle_seed: int):
    from frontierbo.quantum.loop import SinglePullOracle
    from frontierbo.quantum.oracles import ClassicalMonteCarloOracle, IQAEOracle

    if not method.quantum:
        return SinglePullOracle(legacy)
    if method.oracle == "classical-mc":
        return ClassicalMonteCarloOracle(oracle_seed)
    if method.oracle == "aer-noisy":
        from frontierbo.quantum.circuits import QiskitIQAEOracle, generic_noise_model

        return QiskitIQAEOracle(
            backend="aer",
            noise_model=generic_noise_model(7, seed=0),
            seed=0,
            seed_mode="fixed",
            encoding="reference",
        )
    if method.iqae_seed == "fixed":
        return IQAEOracle(0, encoding="reference", seed_mode="fixed")
    return IQAEOracle(oracle_seed, encoding="reference")


def run_one(config: dict) -> dict:
    """One run; returns the regret curve at :func:`checkpoints` and the stage structure."""
    from frontierbo.quantum.loop import run_stages

    setting, method = SETTINGS[config["setting"]], METHODS[config["method"]]
    problem = load_problem(setting.problem, config["source"])
    T = config["T"]
    legacy = np.random.RandomState(config["legacy_seed"])
    x0 = legacy.uniform(0.0, 1.0, size=problem.d)  # the reference code's first draw
    started = time.perf_counter()
    algo = make_algorithm(method, setting, problem, x0, config["lam"], config["source"])
    oracle = make_oracle(method, legacy, config["oracle_seed"])
    initial = (problem.n, problem.reward_at(x0), problem.mean_at(x0), 1.0)
    run = run_stages(
        algo,
        problem.reward,
        problem.values,
        oracle,
        T,
        delta=config["stage_delta"],
        initial=initial,
    )
    seconds = time.perf_counter() - started
    cps = checkpoints(T)
    curve = np.concatenate([[0.0], run.cumulative_regret(T)])
    arms = np.asarray(run.points[1:], dtype=int)
    queries = np.asarray(run.queries[1:], dtype=int)
    out = {
        "checkpoints": cps,
        "cum_regret": curve[cps],
        "final_regret": float(curve[T]),
        "num_stages": run.num_stages,
        "total_queries": run.total_queries,
        "distinct_arms": int(np.unique(arms).size),
        "best_index": problem.best_index,
        "last_arm": int(arms[-1]),
        "x0": x0,
        "initial_queries": int(run.queries[0]),
        "seconds": seconds,
        "source": problem.info.get("source", config["source"]),
    }
    if method.quantum:  # a few dozen stages: keep them all
        out.update(
            stage_arms=arms, stage_queries=queries, stage_epsilons=np.asarray(run.accuracies[1:])
        )
    else:
        counts = np.bincount(arms, minlength=problem.n)
        out.update(
            most_played=int(np.argmax(counts)),
            best_share=float(counts[problem.best_index] / arms.size),
        )
    return out


def run_worker(spec: RunSpec) -> dict:
    """Module-level worker for :func:`run_sweep` (picklable)."""
    return run_one(spec.config)
