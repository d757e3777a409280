"""The experiments of the thesis's Section 4.4, as data.

A *run* is one receding-horizon episode (budget B = 20 observations) of one method on
one *realization* of one dataset variant:

* plankton (E1, E4–E6): realization r is a fresh GP field (its own seed) started at the centre;
* traffic (E2) and temperature (E3): one field; realization r is a start region drawn among those
  with a macro-action and its own per-location subsample of 20 macro-actions (the reference
  code's seeds 0..34), shared by every method of that realization.

A *variant* fixes kappa, the macro-actions kept per location (20 or all) and, for E5, the buoy's
prior observation. The run id ``<dataset>/<variant>/r<r>/<method>`` depends on nothing else, so
the experiments share runs: E6's baselines are E1's first 35 realizations, E2's H = 2 row is also
the β = 0 entry of its β-sweep. (The thesis ran its β-sweeps separately, hence Table B.2's β = 0
row differs from Table B.1's; here they are the same runs,
docs/decisions.md#macro-bo-beta-sweeps-reuse-the-main-runs.)

Methods are named by keys (:data:`METHODS`); an experiment lists the method keys of its tables.
The anytime planner runs in two profiles
(docs/decisions.md#macro-bo-anytime-profiles-paper-and-reference): ``paper`` (the thesis's Algorithm
4: most-likely initial bounds, line 26's ``argmax Q_lo``, the thesis's last stage, the (4.12)
fallback, λ from ε(N)) and ``reference`` (the authors' code, which produced the published
numbers: infinite initial bounds, ``argmax Q_hi``, exact last stage, λ = 5, no fallback). Both
intersect returned bounds (docs/decisions.md#macro-bo-anytime-bounds-are-intersected). The β-sweeps
and the downsampling study use the reference profile.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from frontierbo.data import Input
from frontierbo.experiments.report import load_published
from frontierbo.experiments.runner import RunSpec, seed_for
from frontierbo.macro import data as macro_data
from frontierbo.macro import runner

DATASETS = ("plankton", "traffic", "temperature")
EXPERIMENTS = ("e1", "e2", "e3", "e4", "e5", "e6")
PUBLISHED = load_published("frontierbo.macro")
BUDGET = 20
#: Anytime profiles (module doc): keyword options of :func:`runner.anytime`.
ANYTIME_PROFILES = {
    "paper": {},
    "reference": {
        "lam": 5.0,
        "init": "infinite",
        "action_rule": "upper",
        "last_stage": "exact",
        "fallback": False,
    },
}


@dataclass(frozen=True)
class Method:
    """One compared method: its report label, the runner builder's name and its options.
    ``samples`` marks the sample size the ``--quick`` cap applies to (A1 / A3)."""

    label: str
    builder: str
    options: tuple = ()
    samples: str | None = None

    def build(self, caps: dict) -> runner.MacroMethod:
        options = dict(self.options)
        if self.samples == "a1":
            options["n_samples"] = min(options["n_samples"], caps["a1_samples"])
        elif self.samples == "a3":
            options["n_samples"] = min(options["n_samples"], caps["anytime_samples"])
            options["iterations"] = min(options["iterations"], caps["anytime_iterations"])
        return getattr(runner, self.builder)(**options)


def _a1(h: int, n: int | None = None, beta: float = 0.0) -> Method:
    """A1 with N = 100 (capped by ``--quick``) or a fixed ``n`` (E4–E6 study N itself)."""
    suffix = "" if beta == 0 else f", β = {beta:g}"
    options = (("horizon", h), ("n_samples", n or 100), ("beta", beta))
    label = f"ε-Macro-BO H={h}{'' if n is None else f', N={n}'}{suffix}"
    return Method(label, "epsilon_macro_bo", options, None if n else "a1")


def _a3(h: int, profile: str, beta: float = 0.0) -> Method:
    suffix = "" if beta == 0 else f", β = {beta:g}"
    options = (
        ("horizon", h),
        ("n_samples", 300),
        ("iterations", 1500),
        ("beta", beta),
        *ANYTIME_PROFILES[profile].items(),
    )
    return Method(f"anytime ε-Macro-BO H={h} ({profile}){suffix}", "anytime", options, "a3")


BASELINES = {
    "db-gp-ucb": Method("DB-GP-UCB", "db_gp_ucb"),
    "nm-gp-ucb-h4": Method("nonmyopic GP-UCB H=4", "most_likely", (("horizon", 4),)),
    "gp-ucb-pe": Method("GP-UCB-PE", "gp_ucb_pe"),
    "gp-bucb": Method("GP-BUCB", "gp_bucb"),
    "q-ei": Method("q-EI", "q_ei"),
    "bbo-lp": Method("BBO-LP", "bbo_lp"),
}
BETAS = {
    "e1": (0.0, 0.1, 0.3, 0.6, 1.0, 2.0, 4.0, 10.0),
    "e2": (0.0, 0.2, 0.5, 1.0, 2.0, 4.0, 10.0),
    "e3": (0.0, 1.0, 2.0, 3.0, 4.0),
}


def _beta_key(prefix: str, beta: float) -> str:
    return prefix if beta == 0 else f"{prefix}-b{beta:g}"


def _methods() -> dict[str, Method]:
    methods = {f"eps-h{h}": _a1(h) for h in (2, 3, 4)}
    methods.update((f"eps-h4-n{n}", _a1(4, n)) for n in (1, 5, 20, 25, 50))
    for h in (2, 3):
        methods.update((_beta_key(f"eps-h{h}", b), _a1(h, beta=b)) for b in BETAS["e1"])
    for profile, tag in (("paper", ""), ("reference", "-ref")):
        methods.update((f"any-h{h}{tag}", _a3(h, profile)) for h in (2, 3, 4))
    for h in (2, 3):
        for b in BETAS["e2"] + BETAS["e3"]:
            methods[_beta_key(f"any-h{h}-ref", b)] = _a3(h, "reference", b)
    methods.update(BASELINES)
    methods["ei"] = Method("EI (all moves, κ = 1)", "ei")
    methods["rollout-4"] = Method("Rollout-4-10", "rollout", (("horizon", 4),))
    return methods


METHODS = _methods()


@dataclass(frozen=True)
class Variant:
    """How a dataset is instantiated for a run: ``kappa``, macro-actions kept per location
    (``None``: all) and the extra prior cells of ``d_0`` (E5's buoy, as (row, col))."""

    kappa: int
    max_actions: int | None = 20
    buoy: tuple[int, int] | None = None

    @property
    def key(self) -> str:
        actions = "" if self.max_actions == 20 else f"-{self.max_actions or 'all'}"
        return f"k{self.kappa}{actions}{'-buoy' if self.buoy else ''}"


@dataclass(frozen=True)
class Experiment:
    """One experiment of the thesis's Section 4.4: its dataset, runs (full / ``--quick``) and
    tables, each a list of ``(method key, variant)`` rows."""

    key: str
    title: str
    dataset: str
    runs: int
    quick_runs: int
    tables: dict[str, tuple[tuple[str, Variant], ...]] = field(default_factory=dict)

    def rows(self):
        """Every distinct (method, variant) of the experiment, in table order."""
        return tuple(dict.fromkeys(r for rows in self.tables.values() for r in rows))


_MAIN = ("db-gp-ucb", "nm-gp-ucb-h4", "gp-ucb-pe", "gp-bucb", "q-ei", "bbo-lp")


def _graph_experiment(key: str, dataset: str, title: str) -> Experiment:
    k5, k5_all, k1_all = Variant(5), Variant(5, None), Variant(1, None)
    anytime = [f"any-h{h}{tag}" for tag in ("", "-ref") for h in (4, 3, 2)]
    betas = [_beta_key(f"any-h{h}-ref", b) for h in (2, 3) for b in BETAS[key]]
    return Experiment(
        key,
        title,
        dataset,
        runs=35,
        quick_runs=3,
        tables={
            "main": tuple((m, k5) for m in anytime + list(_MAIN)),
            "beta": tuple((m, k5) for m in betas),
            "downsampling": (
                ("any-h4-ref", k5),
                ("any-h2-ref", k5_all),
                ("any-h2-ref", k5),
                ("ei", k1_all),
            ),
        },
    )


def _experiments() -> dict[str, Experiment]:
    k4 = Variant(4)
    e1_main = ("eps-h4", "eps-h3", "eps-h2", *_MAIN)
    e1_beta = tuple(_beta_key(f"eps-h{h}", b) for h in (2, 3) for b in BETAS["e1"])
    return {
        "e1": Experiment(
            "e1",
            "E1 simulated plankton density (Table B.1, B.2, Fig. 4.6)",
            "plankton",
            runs=250,
            quick_runs=10,
            tables={
                "main": tuple((m, k4) for m in e1_main),
                "beta": tuple((m, k4) for m in e1_beta),
            },
        ),
        "e2": _graph_experiment("e2", "traffic", "E2 traffic mobility demand (Tables B.3–B.5)"),
        "e3": _graph_experiment("e3", "temperature", "E3 lab temperature (Tables B.6–B.8)"),
        "e4": Experiment(
            "e4",
            "E4 ε-Macro-BO vs Rollout, κ = 1 (Fig. 4.11)",
            "plankton",
            runs=106,
            quick_runs=3,
            tables={"main": (("eps-h4-n20", Variant(1)), ("rollout-4", Variant(1)))},
        ),
        "e5": Experiment(
            "e5",
            "E5 myopic vs nonmyopic trajectories, κ = 2 (Fig. 4.12)",
            "plankton",
            runs=1,
            quick_runs=1,
            tables={
                "main": (
                    ("eps-h4-n1", Variant(2, buoy=(5, 5))),
                    ("db-gp-ucb", Variant(2, buoy=(5, 5))),
                )
            },
        ),
        "e6": Experiment(
            "e6",
            "E6 performance vs planning time (Fig. 4.13)",
            "plankton",
            runs=35,
            quick_runs=3,
            tables={
                "main": tuple((m, k4) for m in ("eps-h4-n50", "eps-h4-n25", "eps-h4-n5", *_MAIN))
            },
        ),
    }


EXPERIMENT_SPECS = _experiments()

#: The reproduction's options and their full-run values; what ``--quick`` changes.
DEFAULTS = {
    "runs": None,
    "experiments": EXPERIMENTS,
    "a1_samples": 100,
    "anytime_samples": 300,
    "anytime_iterations": 1500,
}
QUICK = {"a1_samples": 20, "anytime_samples": 50, "anytime_iterations": 100}


def check_options(params: dict) -> dict:
    experiments = params["experiments"]
    names = (experiments,) if isinstance(experiments, str) else tuple(experiments)
    unknown = [e for e in names if e not in EXPERIMENTS]
    if unknown or not names:
        raise ValueError(f"--experiments must be among {list(EXPERIMENTS)}, got {unknown or []}")
    params["experiments"] = tuple(dict.fromkeys(names))
    for name in ("a1_samples", "anytime_samples", "anytime_iterations"):
        value = params[name]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return params


def unavailable(dataset: str) -> str | None:
    """Why ``dataset`` cannot run here, or None: E3's lab graph is a data file (plankton is
    generated and traffic has a seeded substitute)."""
    from frontierbo.data import FETCH_COMMAND, data_available

    if dataset == "temperature" and not all(
        data_available(rel) for rel in macro_data.TEMPERATURE_FILES
    ):
        return (
            "needs the Intel-lab corridor graph (macro/temperature/*) under a data root: "
            f"{FETCH_COMMAND} macro-temperature"
        )
    return None


#: What E2 runs on without the taxi files (``macro_data.traffic``'s fallback).
TRAFFIC_SUBSTITUTE = (
    "a seeded substitute road graph with GP-drawn demand "
    "(docs/decisions.md#macro-bo-traffic-substitute-graph)"
)


def required_inputs(options) -> list[Input]:
    """The data files the chosen experiments read (checked before anything runs): E2's taxi
    grid (a seeded substitute graph stands in without it) and E3's corridor graph."""
    datasets = {experiment.dataset for experiment in selected(options)}
    inputs = []
    if "traffic" in datasets:
        inputs.append(Input("traffic (E2)", macro_data.TRAFFIC_FILES, TRAFFIC_SUBSTITUTE))
    if "temperature" in datasets:
        inputs.append(Input("temperature (E3)", macro_data.TEMPERATURE_FILES))
    return inputs


def selected(options) -> list[Experiment]:
    """The chosen experiments whose dataset is among ``--datasets``."""
    return [
        EXPERIMENT_SPECS[e]
        for e in options["experiments"]
        if EXPERIMENT_SPECS[e].dataset in options.datasets
    ]


def runs_of(experiment: Experiment, options) -> int:
    if options.runs is not None:
        return min(options.runs, experiment.runs) if experiment.key == "e5" else options.runs
    return experiment.quick_runs if options.quick else experiment.runs


def run_id(dataset: str, variant: Variant, realization: int, method: str) -> str:
    return f"{dataset}/{variant.key}/r{realization:03d}/{method}"


def build_specs(options) -> list[RunSpec]:
    """One RunSpec per (dataset, variant, realization, method) of the chosen experiments;
    shared rows are run once."""
    caps = {k: options[k] for k in ("a1_samples", "anytime_samples", "anytime_iterations")}
    chosen = selected(options)
    if not chosen:
        skipped = "".join(f"; {name} {why}" for name, why in options.skipped.items())
        raise ValueError(
            f"none of --experiments {' '.join(options['experiments'])} runs on --datasets "
            f"{' '.join(options.datasets)}; E1, E4-E6 use plankton, E2 traffic, E3 temperature"
            f"{skipped}"
        )
    specs: dict[str, RunSpec] = {}
    for experiment in chosen:
        for r in range(runs_of(experiment, options)):
            for method, variant in experiment.rows():
                rid = run_id(experiment.dataset, variant, r, method)
                if rid in specs:
                    continue
                config = {
                    "dataset": experiment.dataset,
                    "kappa": variant.kappa,
                    "max_actions": variant.max_actions,
                    "buoy": variant.buoy,
                    "realization": r,
                    "method": method,
                    "base_seed": options.seed,
                    **({"caps": caps} if METHODS[method].samples else {}),
                }
                specs[rid] = RunSpec(rid, config, seed_for(options.seed, rid))
    return list(specs.values())


# -- one run --------------------------------------------------------------------------------------
@lru_cache(maxsize=4)
def _dataset(name: str, kappa: int, max_actions, realization: int, base_seed: int):
    """The dataset of one realization (cached: a worker runs many methods on it)."""
    if name == "plankton":
        return macro_data.plankton(seed_for(base_seed, "plankton", realization), kappa=kappa)
    actions_seed = seed_for(base_seed, name, "actions", realization)
    if name == "traffic":
        return macro_data.traffic(actions_seed, kappa=kappa, max_actions=max_actions)
    return macro_data.temperature(
        seed_for(base_seed, "temperature"),
        kappa=kappa,
        max_actions=max_actions,
        actions_seed=actions_seed,
    )


@lru_cache(maxsize=64)
def start_of(name: str, realization: int, base_seed: int) -> int:
    """The start of a realization: plankton's centre; on a graph a draw among the locations
    with a macro-action of the E2/E3 domain (kappa 5, 20 kept), the same for every variant."""
    if name == "plankton":
        return int(_dataset(name, 4, 20, realization, base_seed).start)
    ds = _dataset(name, 5, 20, realization, base_seed)
    return int(ds.starts(1, seed=seed_for(base_seed, name, "start", realization))[0])


def run_worker(spec: RunSpec) -> dict:
    """One run: the metrics M1–M4 at n = 0, kappa, ..., 20 and the visited cells."""
    c = spec.config
    ds = _dataset(c["dataset"], c["kappa"], c["max_actions"], c["realization"], c["base_seed"])
    method = METHODS[c["method"]].build(c.get("caps", {}))
    prior = () if c["buoy"] is None else (ds.domain.cell(*c["buoy"]),)
    run = runner.run_macro(
        method,
        ds,
        start=start_of(c["dataset"], c["realization"], c["base_seed"]),
        budget=BUDGET,
        seed=spec.seed,
        prior_locations=prior,
    )
    metrics = run.metrics(ds)
    return {
        "n": metrics["n"],
        "avg_output": metrics["m1"],
        "simple_regret": metrics["m2"],
        "nodes": metrics["m3"],
        "seconds_per_iteration": metrics["m4"],
        "locations": run.locations,
        "source": ds.source,
    }


def realization_field(dataset: str, realization: int, base_seed: int, kappa: int = 2):
    """The dataset of a realization (for plots: E5's field)."""
    return _dataset(dataset, kappa, 20, realization, base_seed)
