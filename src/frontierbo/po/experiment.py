"""Reproduction of the PO-GP-UCB paper (Kharkovskii, Dai & Low, ICML 2020): Fig. 2a-c, Fig. 3
(Branin) and Tables 1-12, with the published numbers (the tables and the text of Section 4 and
App. A) beside ours.

Configurations are data (``SETUPS``: the design here, the paper's numbers in ``published.json``).
One *run* is (dataset, profile, method, log eps, r, run index). Within a run index every
configuration shares the initial row, the query-noise stream and (synthetic) the GP sample
(common random numbers, docs/decisions.md#po-gp-ucb-common-random-numbers-within-a-run). Two
profiles (:data:`PROFILES`): ``"paper"`` runs the published algorithms, each configuration with
its own projection M; ``"reference"`` runs them as the authors' public code does. This module
builds the runs, runs one and summarises them (everything results.json holds);
:mod:`frontierbo.po.report` presents them.

Runs are keyed on content, never on paths: a run's config names its problem by
:func:`~frontierbo.po.problems.base.problem_checksum`, and the file the worker reads travels
beside the config (:class:`ProblemRunSpec`), so a sweep resumes whatever ``--out`` looks like.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from frontierbo.core.gp_ucb import GPUCB
from frontierbo.core.kernels import SquaredExponential
from frontierbo.core.loop import TableOracle, run_bo
from frontierbo.experiments.report import Options, load_published
from frontierbo.experiments.runner import RunSpec, run_sweep, seed_for
from frontierbo.experiments.store import ResultStore
from frontierbo.io import mean_stderr
from frontierbo.po.gaussian_release import GaussianRowMechanism, noise_aware_hyperparameters
from frontierbo.po.po_gp_ucb import Curator, POGPUCBModeler, random_initial_rows
from frontierbo.po.problems.base import (
    _SCALARS,
    Problem,
    load_problem,
    problem_checksum,
    read_problem,
    save_problem,
)
from frontierbo.po.problems.synthetic import SYNTHETIC_GEOMETRIES, resample
from frontierbo.po.random_projection import RandomProjectionMechanism, omega_threshold

NON_PRIVATE = "gp-ucb"
PO = "po-gp-ucb"
#: (epsilon, delta)-DP Gaussian release (privacy/gaussian_release.py), GP-UCB with the curator's
#: hyperparameters ("plain") or with the noise-aware expected kernel ("aware").
GAUSSIAN = "gaussian-release"
GAUSSIAN_AWARE = "gaussian-release-aware"
PRIVATE_METHODS = (GAUSSIAN, GAUSSIAN_AWARE)
#: log epsilon grid of the privacy-utility figure (plus each dataset's threshold epsilon).
PRIVACY_LOG_EPS = (0.0, 1.0, 2.0, 3.0, 4.0, 5.0)

PAPER, REFERENCE = "paper", "reference"
#: How each profile runs GP-UCB and Algorithm 1. "paper": as published (UCB on the standard
#: deviation with delta' = delta_ucb / 2, the lift sqrt(S^2 + omega^2), a fresh M for every
#: configuration). "reference": as the authors' public code Mitan/po-gp-ucb does (UCB.py: mean +
#: sqrt(2 log(n t^2 pi^2 / (6 * 0.1))) * variance; DatasetTransformer.py: S + omega;
#: NormalMatrixGenerator.py: one M per seed and r, shared by every epsilon).
PROFILES = {
    PAPER: {"uncertainty": "std", "delta_prime": 0.025, "lift": "sqrt", "shared_projection": False},
    REFERENCE: {
        "uncertainty": "variance",
        "delta_prime": 0.1,
        "lift": "additive",
        "shared_projection": True,
    },
}


#: The paper's numbers (Tables 1-12, the text's gaps, the captions' sigma_min intervals, the
#: demo's S_50): package data, beside the design below.
PUBLISHED = load_published("frontierbo.po")


@dataclass(frozen=True)
class TableSpec:
    """One of Tables 1-12: fixed eps, a list of r, the published S_T per r."""

    number: int
    log_eps: float
    paper: dict[int, float]  # r -> published mean S_T
    threshold_r: int  # the largest tested r the caption says satisfies sigma_min >= omega


@dataclass(frozen=True)
class DatasetSetup:
    name: str
    title: str
    delta: float
    iterations: int
    sweep_r: int
    sweep_log_eps: tuple[float, ...]
    paper_gaps: dict[float, float]  # log eps -> published S_T(PO) - S_T(non-private), in sigma_y
    tables: tuple[TableSpec, ...] = field(default_factory=tuple)
    privacy_log_eps: tuple[float, ...] = ()
    paper_sigma_min: tuple[float, float] | None = None  # the interval the captions imply

    @property
    def privacy_grid(self) -> tuple[float, ...]:
        """The privacy-utility figure's epsilons: the common grid and the threshold epsilon
        (none when the setup has no privacy-utility grid, as in the demo)."""
        if not self.privacy_log_eps:
            return ()
        return tuple(sorted(set(self.privacy_log_eps) | {max(self.sweep_log_eps)}))


def _setup(name: str, title: str, delta: float, iterations: int, sweep_r: int, sweep_log_eps):
    """A dataset's design (the arguments) joined with its published numbers."""
    pub = PUBLISHED["datasets"][name]
    tables = tuple(
        TableSpec(
            t["number"], t["log_eps"], {int(r): v for r, v in t["S_T"].items()}, t["threshold_r"]
        )
        for t in pub["tables"]
    )
    gaps = {float(le): gap for le, gap in pub["gaps"].items()}
    sigma_min = tuple(pub["sigma_min_interval"])
    design = (name, title, delta, iterations, sweep_r, sweep_log_eps)
    return DatasetSetup(*design, gaps, tables, PRIVACY_LOG_EPS, sigma_min)


SETUPS: dict[str, DatasetSetup] = {
    s.name: s
    for s in (
        _setup("synthetic", "Synthetic GP (Fig. 2a)", 1e-5, 50, 10, (0.0, 0.3, 0.6, 0.9, 1.0, 1.1)),
        _setup("loan", "Loan applications (Fig. 2b)", 1e-5, 50, 15, (1.0, 1.5, 2.0, 2.5, 2.8, 2.9)),
        _setup(
            "property",
            "Private property prices (Fig. 2c)",
            1e-4,
            100,
            15,
            (0.5, 1.0, 1.5, 2.0, 2.5, 2.7, 2.8),
        ),
        _setup("branin", "Branin-Hoo (Fig. 3)", 1e-3, 50, 10, (1.8, 2.0, 2.2, 2.3)),
    )
}
DATASETS = tuple(SETUPS)
#: Runs per configuration: the paper's 50, or ``--quick``'s 3.
FULL_RUNS, QUICK_RUNS = 50, 3


# -- configurations ---------------------------------------------------------------------------
def configurations(
    setup: DatasetSetup, profile: str = PAPER
) -> list[tuple[str, float | None, int | None]]:
    """Unique (method, log eps, r) triples of one dataset: the eps sweep, the Tables' r sweeps
    and (paper profile) the privacy-utility comparison (published vs private releases over an
    eps grid). The reference profile runs the published algorithm's cells only."""
    configs = [(NON_PRIVATE, None, None)]
    configs += [(PO, le, setup.sweep_r) for le in setup.sweep_log_eps]
    for table in setup.tables:
        configs += [(PO, table.log_eps, r) for r in table.paper]
    if profile == PAPER:
        for le in setup.privacy_grid:
            configs += [(PO, le, setup.sweep_r)] + [(m, le, None) for m in PRIVATE_METHODS]
    return list(dict.fromkeys(configs))


def config_key(method: str, log_eps: float | None, r: int | None, profile: str = PAPER) -> str:
    """A configuration's name (its run ids are ``<dataset>|<key>|run=<i>``); the paper
    profile's keys are those of earlier versions, the reference profile's start with ``ref|``."""
    key = method if method == NON_PRIVATE else f"{method}|logeps={log_eps:g}"
    key += "" if r is None or method == NON_PRIVATE else f"|r={r}"
    return key if profile == PAPER else f"ref|{key}"


@dataclass(frozen=True)
class ProblemRunSpec(RunSpec):
    """A :class:`RunSpec` plus the file its worker reads the problem from.

    ``problem_file`` is not part of ``config`` (which is what a resumed sweep compares): the
    config names the problem by its checksum, so the same runs match whatever path the
    output folder has today. The worker checks the file against that checksum.
    """

    problem_file: str = ""


def dataset_specs(
    setup: DatasetSetup,
    problem: Problem,
    problem_file: Path,
    runs: int,
    base_seed: int,
    n_init: int = 1,
    profiles: tuple[str, ...] = (PAPER, REFERENCE),
) -> list[ProblemRunSpec]:
    """One :class:`ProblemRunSpec` per (profile, configuration, run) of one dataset."""
    checksum = problem_checksum(problem)
    per_run = bool(problem.meta.get("per_run", False))
    file = str(Path(problem_file).resolve())  # workers may run in another directory
    specs = []
    for profile in profiles:
        settings = PROFILES[profile]
        for method, log_eps, r in configurations(setup, profile):
            for run in range(runs):
                if settings["shared_projection"]:  # one M per (seed, r), as the authors' code
                    release_seed = seed_for(base_seed, setup.name, "projection", str(r), run)
                else:
                    release_seed = seed_for(
                        base_seed, setup.name, "release", str(log_eps), str(r), run
                    )
                config = {
                    "dataset": setup.name,
                    "problem_sha256": checksum,
                    "profile": profile,
                    "method": method,
                    "log_eps": log_eps,
                    "r": r,
                    "delta": setup.delta,
                    "iterations": setup.iterations,
                    "n_init": n_init,
                    "delta_prime": settings["delta_prime"],
                    "run": run,
                    "release_seed": release_seed,
                    "function_seed": (
                        seed_for(base_seed, setup.name, "function", run) if per_run else None
                    ),
                }
                run_id = f"{setup.name}|{config_key(method, log_eps, r, profile)}|run={run}"
                seed = seed_for(base_seed, setup.name, "run", run)
                specs.append(ProblemRunSpec(run_id, config, seed, problem_file=file))
    return specs


def check_options(params: dict) -> dict:
    """The reproduction's own options: ``synthetic_geometry`` names a synthetic geometry."""
    geometry = params.get("synthetic_geometry")
    if geometry not in SYNTHETIC_GEOMETRIES:
        raise ValueError(
            f"synthetic_geometry must be one of {sorted(SYNTHETIC_GEOMETRIES)}, got {geometry!r}"
        )
    return params


def header(options: Options) -> dict:
    """The fields of results.json that describe the invocation."""
    geometry = options["synthetic_geometry"]
    return {"runs": options.runs, "seed": options.seed, "synthetic_geometry": geometry}


def build_specs(options: Options) -> list[RunSpec]:
    """Every run of the reproduction; builds each dataset's problem and caches it under
    ``<out>/problems`` for the workers (``options["problem_factory"]``, default
    :func:`~frontierbo.po.problems.get_problem` with the base seed)."""
    factory = options["problem_factory"] or _default_factory(
        options.seed, options["synthetic_geometry"]
    )
    specs = []
    for name in options.datasets:
        problem = factory(name)
        path = save_problem(problem, problem_path(options.out, name, problem_checksum(problem)))
        specs += dataset_specs(SETUPS[name], problem, path, options.runs, options.seed)
    return specs


def required_inputs(options: Options) -> list:
    """The data files the chosen real datasets read (checked before anything runs); their
    documented substitutes stand in without them. None with a ``problem_factory`` of the
    caller's, which builds the problems itself."""
    from frontierbo.data import Input
    from frontierbo.po.problems.loan import LOAN_FILE
    from frontierbo.po.problems.property import URA_FILE

    if options["problem_factory"] is not None:
        return []
    real = {
        "loan": Input(
            "loan applications (loan)",
            (LOAN_FILE,),
            "the calibrated LendingClub-like substitute "
            "(docs/decisions.md#po-gp-ucb-loan-substitute-data)",
        ),
        "property": Input(
            "private property prices (property)",
            (URA_FILE,),
            "the 15-cluster substitute with GP-drawn prices "
            "(docs/decisions.md#po-gp-ucb-property-data-from-the-ura-file)",
        ),
    }
    return [real[name] for name in options.datasets if name in real]


def _default_factory(seed: int, geometry: str = "authors"):
    from frontierbo.po.problems import get_problem

    def factory(name: str) -> Problem:
        kwargs = {"geometry": geometry} if name == "synthetic" else {}
        return get_problem(name, seed=seed, **kwargs)

    return factory


def problem_path(out: Path, name: str, checksum: str) -> Path:
    """Where a reproduction into ``out`` caches the problem of dataset ``name``: the name
    carries the content's checksum, so two problems never share a file."""
    return Path(out) / "problems" / f"{name}-{checksum[:16]}.npz"


# -- one run ----------------------------------------------------------------------------------
def run_once(problem: Problem, config: dict, seed: int) -> dict:
    """One BO run (Section 4 of the paper): the non-private baseline on X, or PO-GP-UCB on a fresh
    release, as the config's profile (:data:`PROFILES`) says; initial row and noise are shared
    (docs/decisions.md#po-gp-ucb-common-random-numbers-within-a-run)."""
    if config.get("function_seed") is not None:
        problem = resample(problem, config["function_seed"])
    settings = PROFILES[config.get("profile", PAPER)]
    rng = np.random.default_rng(seed)
    init_rng, noise_rng = rng.spawn(2)
    init = random_initial_rows(problem.n, config["n_init"], init_rng)
    hyper = {
        "lengthscale": problem.lengthscale,
        "signal_variance": problem.signal_variance,
        "noise_variance": problem.noise_variance,
        "prior_mean": problem.prior_mean,
    }
    T = config["iterations"]
    if config["method"] == NON_PRIVATE:
        kernel = SquaredExponential(hyper["lengthscale"], hyper["signal_variance"])
        opt = GPUCB(
            problem.inputs,
            kernel,
            problem.noise_variance,
            problem.prior_mean,
            delta=config["delta_prime"],
            uncertainty=settings["uncertainty"],
        )
        oracle = TableOracle(problem.values, problem.observation_noise_std, noise_rng)
        res = run_bo(opt, oracle, T, init, problem.values)
        return {"simple_regret": res.simple_regret, "indices": res.indices}
    eps = math.exp(config["log_eps"])
    if config["method"] == PO:
        mech = RandomProjectionMechanism(eps, config["delta"], config["r"], lift=settings["lift"])
    else:
        # The idealised (real-valued, analytic) release: the hardened one is ~1000x slower per
        # release and adds ~30 % more noise at equal (eps, delta); see docs/privacy.md.
        mech = GaussianRowMechanism(eps, config["delta"], config["r"], hardened=False)
    curator = Curator(
        problem.inputs,
        problem.values,
        mech,
        problem.observation_noise_std,
        seed=config["release_seed"],
        noise_seed=noise_rng,
    )
    release = curator.release()
    if config["method"] == GAUSSIAN_AWARE:
        hyper.update(
            noise_aware_hyperparameters(
                hyper["lengthscale"],
                hyper["signal_variance"],
                hyper["noise_variance"],
                release.info["noise_std"],
                release.Z.shape[1],
            )
        )
    modeler = POGPUCBModeler.from_release(
        release,
        delta_prime=config["delta_prime"],
        uncertainty=settings["uncertainty"],
        **hyper,
    )
    res = modeler.optimize(curator, T, init, problem.values)
    keys = ("omega", "sigma_min", "branch", "c_prime", "noise_std")
    info = {k: release.info[k] for k in keys if k in release.info}
    return {"simple_regret": res.simple_regret, "indices": res.indices, **info}


def run_worker(spec: ProblemRunSpec) -> dict:
    """Module-level worker for ``run_sweep`` (picklable): loads the cached problem and runs."""
    import warnings

    from frontierbo.po.random_projection import NotDifferentiallyPrivateWarning

    problem = load_problem(spec.problem_file, spec.config["problem_sha256"])
    with warnings.catch_warnings():
        # The sweep warns once, up front; thousands of identical warnings help nobody.
        warnings.simplefilter("ignore", NotDifferentiallyPrivateWarning)
        return run_once(problem, spec.config, spec.seed)


# -- sweep and summary ------------------------------------------------------------------------
def run_dataset(
    setup: DatasetSetup,
    problem: Problem,
    out: Path,
    runs: int,
    n_jobs: int,
    base_seed: int,
    progress: bool = True,
    profiles: tuple[str, ...] = (PAPER,),
) -> dict:
    """Run (or resume) every configuration of one dataset; return its summary (the demo)."""
    path = save_problem(problem, problem_path(out, setup.name, problem_checksum(problem)))
    specs = dataset_specs(setup, problem, path, runs, base_seed, profiles=profiles)
    store = ResultStore(Path(out) / "runs.jsonl")
    records = run_sweep(specs, run_worker, store, n_jobs, progress, desc=setup.name)
    return summarise_dataset(setup, problem, records)


def summarise_dataset(setup: DatasetSetup, problem: Problem, records: list[dict]) -> dict:
    """Mean +- standard error of S_t per configuration, plus omega / sigma_min / branch."""
    groups: dict[str, list[dict]] = {}
    for rec in records:
        c = rec["config"]
        key = config_key(c["method"], c["log_eps"], c["r"], c.get("profile", PAPER))
        groups.setdefault(key, []).append(rec)
    configs = {}
    for key, recs in groups.items():
        c, first = recs[0]["config"], recs[0]
        mean, stderr = mean_stderr([rec["simple_regret"] for rec in recs])
        configs[key] = {
            "profile": c.get("profile", PAPER),
            "method": c["method"],
            "log_eps": c["log_eps"],
            "r": c["r"],
            **{k: first.get(k) for k in ("branch", "omega", "noise_std", "sigma_min", "c_prime")},
            "n_runs": len(recs),
            "mean": mean,
            "stderr": stderr,
        }
    finals = [
        r["simple_regret"][-1]
        for r in records
        if r["config"]["method"] == NON_PRIVATE and r["config"].get("profile", PAPER) == PAPER
    ]
    return {
        "dataset": setup.name,
        "title": setup.title,
        "source": problem.source,
        "n": problem.n,
        "d": problem.d,
        "sigma_y": problem.sigma_y,
        "hyperparameters": {k: getattr(problem, k) for k in _SCALARS},
        "sigma_min": float(
            np.linalg.svd(problem.inputs - problem.inputs.mean(0), compute_uv=False)[-1]
        ),
        "delta": setup.delta,
        "iterations": setup.iterations,
        "configs": configs,
        "non_private_final_modes": regret_modes(finals),
    }


def summarise(records: list[dict], options) -> dict:
    """Each dataset's summary, and the reconstruction / distinguisher audits of the release."""
    by_name: dict[str, list[dict]] = {}
    for rec in records:
        by_name.setdefault(rec["config"]["dataset"], []).append(rec)
    problems = {}
    for name in options.datasets:
        checksum = by_name[name][0]["config"]["problem_sha256"]
        problems[name] = read_problem(problem_path(options.out, name, checksum))
    summaries = {
        name: summarise_dataset(SETUPS[name], problems[name], by_name[name])
        for name in options.datasets
    }
    from frontierbo.po.audit import run_audits  # scipy.stats: not at every command's start

    audits = run_audits(options.datasets, n_trials=200, seed=options.seed, problems=problems)
    return {"datasets": summaries, "audit": audits}


def regret_modes(finals, top: int = 3) -> list[tuple[float, float]]:
    """The most frequent final regrets (rounded to 1e-3) with their fraction of runs."""
    values, counts = np.unique(np.round(np.asarray(finals, dtype=float), 3), return_counts=True)
    order = np.argsort(-counts, kind="stable")[:top]
    return [(float(values[i]), float(counts[i] / len(finals))) for i in order]


def final(summary: dict, key: str) -> tuple[float, float]:
    c = summary["configs"][key]
    return float(c["mean"][-1]), float(c["stderr"][-1])


def expected_branch(sigma_min: float, log_eps: float, r: int, delta: float) -> str:
    return "if" if sigma_min >= omega_threshold(r, math.exp(log_eps), delta) else "else"
