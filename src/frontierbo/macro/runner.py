"""The receding-horizon outer loop of ε-Macro-BO's experiments (thesis Section 4.4).

    d <- <x_0, y_0>: the start location and its measurement (optional extra prior cells)
    for t = 0, ..., T - 1 (T = B / kappa):
      1. H_eff <- min(H, T - t)
         (docs/decisions.md#macro-bo-horizon-shrinks-at-the-end-of-the-budget)
      2. plan from the current d with horizon H_eff; get the macro-action x
      3. execute x: observe the kappa measurements y at its cells
      4. d <- <x_{1:t} (+) x, y_{1:t} (+) y>; the agent moves to the last cell of x

It runs through the library's one loop, :func:`frontierbo.core.loop.run_loop`: an action is the
path of ``kappa`` cells, its evaluation returns the measurements and costs ``kappa``
observations, and the budget is ``B`` observations. :class:`RecedingHorizonPolicy` is the
ask/tell adapter: ``ask`` plans (steps 1–2) and ``tell`` conditions the GP (step 4).

Measurements (step 3, a choice recorded in docs/macro-bo.md): the dataset's values at the cells,
with no noise added at execution time (docs/decisions.md#macro-bo-no-noise-added-at-execution;
plankton's and temperature's stored values already contain their noise, drawn once per cell).
``noise_std > 0`` adds seeded i.i.d. ``N(0, noise_std^2)`` noise to every measurement (the GP is
told the noisy value); the metrics always use the dataset values at the visited cells, the thesis's
``y_i``.

Planners are built afresh for every iteration by a :class:`MacroMethod` from the current GP, a
per-iteration seed (fresh Monte Carlo samples at every call) and the 0-based iteration
``t`` (GP-BUCB's and GP-UCB-PE's beta schedules), and called as ``plan(location, horizon) ->
(.action, .nodes)``, ``.action`` a row of ``domain.macro_actions(location)``. The builders below
adapt every planner and baseline to that shape: A1 :func:`epsilon_macro_bo`, A2 = B2
:func:`most_likely`, A3 :func:`anytime`, B1 :func:`db_gp_ucb`, B3 :func:`q_ei`, B4
:func:`gp_bucb`, B5 :func:`gp_ucb_pe`, B6 :func:`bbo_lp`, B7 :func:`ei`, B8 :func:`rollout`.

Nodes (M3) count the search-tree nodes a method builds: A1–A3 their trees; DB-GP-UCB ``1 + A``
(the root and one node per macro-action, Table 4.2 at H = 1); Rollout one node per fantasised
state; the greedy-batch methods, q-EI and EI build no tree and count 0.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from frontierbo._validation import SeedLike, check_int, check_real
from frontierbo.core.gp import FiniteDomainGP
from frontierbo.core.loop import Feedback, run_loop
from frontierbo.macro import baselines, baselines_batch
from frontierbo.macro import q_ei as q_ei_module
from frontierbo.macro.anytime import AnytimeEpsilonMacroBO
from frontierbo.macro.data import MacroDataset
from frontierbo.macro.epsilon_macro_bo import EpsilonMacroBO
from frontierbo.macro.metrics import NORMALISERS, run_metrics
from frontierbo.macro.most_likely import MostLikelyPlanner
from frontierbo.macro.rollout import Rollout


class Planner(Protocol):
    """One planning call: ``plan(location, horizon)`` returns something with ``.action`` (a row of
    ``domain.macro_actions(location)``) and ``.nodes`` (nodes explored)."""

    def plan(self, location: int, horizon: int) -> Any: ...


@dataclass(frozen=True)
class MacroMethod:
    """A planning method of the runner: its name, nominal horizon ``H`` and
    ``build(gp, domain, seed, iteration) -> Planner`` (called once per iteration, ``seed`` an
    int, ``iteration`` the 0-based t)."""

    name: str
    horizon: int
    build: Callable[[FiniteDomainGP, Any, int, int], Planner]


def epsilon_macro_bo(horizon: int, n_samples: int = 100, **options) -> MacroMethod:
    """A1, exhaustive ε-Macro-BO (``options`` go to :class:`EpsilonMacroBO`: ``beta``,
    ``fallback``, ``n_threads``, ``epsilon`` instead of ``n_samples``...)."""
    if "epsilon" in options:
        options["n_samples"] = None
    else:
        options["n_samples"] = n_samples

    def build(gp, domain, seed, iteration):
        return EpsilonMacroBO(gp, domain, horizon, seed=seed, **options)

    return MacroMethod(f"eps-macro-bo H={horizon}", check_int(horizon, "horizon", low=1), build)


def anytime(horizon: int, n_samples: int = 300, iterations: int | None = 1500, **options):
    """A3, anytime ε-Macro-BO (``options`` go to :class:`AnytimeEpsilonMacroBO`: ``lam`` or
    ``epsilon``, ``init``, ``assign``, ``action_rule``, ``last_stage``, ``refine``,
    ``fallback``, ``beta``, ``max_nodes``, ``time_limit``...)."""

    def build(gp, domain, seed, iteration):
        return AnytimeEpsilonMacroBO(
            gp, domain, horizon, n_samples=n_samples, iterations=iterations, seed=seed, **options
        )

    name = f"anytime eps-macro-bo H={horizon}"
    return MacroMethod(name, check_int(horizon, "horizon", low=1), build)


def most_likely(horizon: int, **options) -> MacroMethod:
    """A2 = nonmyopic GP-UCB ``H`` (``options`` go to :class:`MostLikelyPlanner`)."""

    def build(gp, domain, seed, iteration):  # deterministic: no seed
        return MostLikelyPlanner(gp, domain, horizon, **options)

    return MacroMethod(f"nonmyopic gp-ucb H={horizon}", check_int(horizon, "horizon", low=1), build)


@dataclass(frozen=True)
class BatchPlan:
    """A baseline's choice with its node count (module doc)."""

    action: int
    macro_action: np.ndarray
    nodes: int


class _Baseline:
    """Adapter of a baseline function ``choose(location) -> choice`` (``.action``,
    ``.macro_action``) to :class:`Planner`; ``nodes(choice)`` its node count."""

    def __init__(self, choose: Callable[[int], Any], nodes: Callable[[Any], int]):
        self.choose, self.nodes = choose, nodes

    def plan(self, location: int, horizon: int = 1) -> BatchPlan:
        choice = self.choose(location)
        return BatchPlan(choice.action, choice.macro_action, int(self.nodes(choice)))


def _no_tree(choice) -> int:
    return 0


def _baseline(name: str, choose) -> MacroMethod:
    """A horizon-1 method from ``choose(gp, domain, location, seed, iteration) -> choice``."""

    def build(gp, domain, seed, iteration):
        return _Baseline(lambda loc: choose(gp, domain, loc, seed, iteration), _no_tree)

    return MacroMethod(name, 1, build)


def db_gp_ucb(beta: float = 0.0, info_covariance: str = "noisy") -> MacroMethod:
    """B1, DB-GP-UCB (one jointly optimised batch: horizon 1); ties go to the first row."""
    beta = check_real(beta, "beta", low=0.0, low_open=False)

    def build(gp, domain, seed, iteration):
        def choose(location):
            return baselines.db_gp_ucb(
                gp, domain, location, beta=beta, info_covariance=info_covariance
            )

        return _Baseline(choose, lambda choice: 1 + choice.scores.shape[0])

    return MacroMethod("db-gp-ucb", 1, build)


def gp_bucb(**options) -> MacroMethod:
    """B4, GP-BUCB as a greedy batch (``options`` go to
    :func:`~frontierbo.macro.baselines_batch.gp_bucb`: ``delta``, ``beta_scale``,
    ``domain_size``, ``first_location_mean``...); ties at random from the iteration's seed."""
    return _baseline(
        "gp-bucb",
        lambda gp, domain, loc, seed, t: baselines_batch.gp_bucb(
            gp, domain, loc, iteration=t, seed=seed, **options
        ),
    )


def gp_ucb_pe(**options) -> MacroMethod:
    """B5, GP-UCB-PE as a greedy batch (``options``: ``delta``, ``domain_size``,
    ``relevant_region``...)."""
    return _baseline(
        "gp-ucb-pe",
        lambda gp, domain, loc, seed, t: baselines_batch.gp_ucb_pe(
            gp, domain, loc, iteration=t, seed=seed, **options
        ),
    )


def bbo_lp(**options) -> MacroMethod:
    """B6, BBO-LP as a greedy batch (``options``: ``lipschitz``, ``variance_as_std``)."""
    return _baseline(
        "bbo-lp",
        lambda gp, domain, loc, seed, t: baselines_batch.bbo_lp(
            gp, domain, loc, seed=seed, **options
        ),
    )


def q_ei() -> MacroMethod:
    """B3, q-EI in closed form over the macro-actions."""
    return _baseline(
        "q-ei", lambda gp, domain, loc, seed, t: q_ei_module.q_ei(gp, domain, loc, seed=seed)
    )


def ei() -> MacroMethod:
    """B7, EI over single-step moves (kappa = 1)."""
    return _baseline(
        "ei", lambda gp, domain, loc, seed, t: q_ei_module.ei(gp, domain, loc, seed=seed)
    )


def rollout(horizon: int = 4, **options) -> MacroMethod:
    """B8, Rollout-h over single-step moves (``options`` go to :class:`Rollout`: ``gamma``,
    ``quadrature``, ``final_step``); its nodes are the fantasised states it visits."""
    horizon = check_int(horizon, "horizon", low=1)

    def build(gp, domain, seed, iteration):
        planner = Rollout(gp, domain, horizon=horizon, **options)
        return _Baseline(lambda loc: planner.plan(loc, seed=seed), lambda c: planner.states)

    return MacroMethod(f"rollout-{horizon}", 1, build)


# -- the policy adapter of run_loop ------------------------------------------------------------
class RecedingHorizonPolicy:
    """ask/tell of :func:`run_loop` for a :class:`MacroMethod` (steps 1, 2 and 4 above).

    ``ask()`` returns the macro-action (kappa,) to execute; ``tell(path, y)`` conditions the GP on
    its kappa measurements and moves the agent. Per iteration it logs the chosen row, ``H_eff``,
    the nodes and the planning seconds.
    """

    def __init__(
        self,
        method: MacroMethod,
        gp: FiniteDomainGP,
        domain,
        location: int,
        iterations: int,
        plan_seeds: Sequence[int],
        refit: Callable[[FiniteDomainGP], FiniteDomainGP] | None = None,
    ):
        self.method, self.gp, self.domain = method, gp, domain
        self.refit = refit
        self.location = check_int(location, "location", low=0, high=domain.n - 1)
        self.iterations = check_int(iterations, "iterations", low=1)
        self.plan_seeds = list(plan_seeds)
        self.t = 0
        self.actions: list[int] = []
        self.horizons: list[int] = []
        self.nodes: list[int] = []
        self.seconds: list[float] = []

    def ask(self) -> np.ndarray:
        h_eff = min(self.method.horizon, self.iterations - self.t)  # step 1
        if self.refit is not None:  # hyperparameters learned from what was measured so far
            self.gp = self.refit(self.gp)
        planner = self.method.build(self.gp, self.domain, self.plan_seeds[self.t], self.t)
        start = time.perf_counter()
        plan = planner.plan(self.location, h_eff)  # step 2
        seconds = time.perf_counter() - start
        actions = np.asarray(self.domain.macro_actions(self.location), dtype=np.int64)
        path = actions.reshape(-1, self.domain.kappa)[int(plan.action)].copy()
        self.actions.append(int(plan.action))
        self.horizons.append(h_eff)
        self.nodes.append(int(plan.nodes))
        self.seconds.append(seconds)
        return path

    def tell(self, path: np.ndarray, measurements: np.ndarray) -> None:
        for cell, y in zip(path.tolist(), np.asarray(measurements).tolist(), strict=True):
            self.gp.add(cell, y)  # step 4: d <- d (+) <x, y>
        self.location = int(path[-1])  # the agent ends at the last cell
        self.t += 1


# -- one run ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MacroRun:
    """The log of one receding-horizon run of ``T`` iterations.

    ``start`` the start cell and ``y0`` its measurement; per iteration (first axis T):
    ``actions`` the chosen row of ``macro_actions(location)``, ``paths`` (T, kappa) its cells,
    ``measurements`` (T, kappa) what the GP was told, ``values`` (T, kappa) the dataset values
    there, ``horizons`` ``H_eff``, ``nodes`` and ``seconds`` of planning.
    """

    method: str
    start: int
    y0: float
    value0: float
    actions: np.ndarray
    paths: np.ndarray
    measurements: np.ndarray
    values: np.ndarray
    horizons: np.ndarray
    nodes: np.ndarray
    seconds: np.ndarray

    @property
    def locations(self) -> np.ndarray:
        """``(x_0, x_{1,1}, ..., x_{T,kappa})``: the start and every visited cell, (1 + kappa T,)."""
        return np.concatenate([[self.start], self.paths.reshape(-1)])

    @property
    def outputs(self) -> np.ndarray:
        """``(y_0, ..., y_B)`` of the metrics: the dataset values at :attr:`locations`."""
        return np.concatenate([[self.value0], self.values.reshape(-1)])

    def metrics(self, dataset: MacroDataset, normaliser: str = "empirical") -> dict:
        """M1–M4 (:func:`frontierbo.macro.metrics.run_metrics`); ``normaliser`` "empirical"
        (the dataset mean, default, docs/decisions.md#macro-bo-m1-normalised-by-the-dataset-mean) or
        "prior" (the GP's prior mean)."""
        if normaliser not in NORMALISERS:
            raise ValueError(f"normaliser must be one of {NORMALISERS}, got {normaliser!r}")
        m = (
            dataset.empirical_mean
            if normaliser == "empirical"
            else dataset.hyperparameters.prior_mean
        )
        return run_metrics(
            self.outputs,
            self.nodes,
            self.seconds,
            kappa=self.paths.shape[1],
            m=m,
            max_value=dataset.max_value,
        )


def run_macro(
    method: MacroMethod,
    dataset: MacroDataset,
    *,
    start: int | None = None,
    budget: int = 20,
    seed: SeedLike = 0,
    noise_std: float = 0.0,
    prior_locations: Sequence[int] = (),
    refit: Callable[[FiniteDomainGP], FiniteDomainGP] | None = None,
) -> MacroRun:
    """One receding-horizon run of ``method`` on ``dataset``.

    Args:
        method: a :class:`MacroMethod` (:func:`epsilon_macro_bo`, :func:`most_likely`,
            :func:`db_gp_ucb`).
        dataset: the domain, the values measured at each cell and the GP hyperparameters.
        start: the start cell (default: the dataset's fixed start; required when it has none).
        budget: ``B`` observations after ``y_0``, a multiple of ``kappa`` (``T = B / kappa``).
        seed: seeds the planners' samples (one seed per iteration) and the measurement noise.
        noise_std: std of noise added to every measurement (0: the dataset value, as the authors'
        code).
        prior_locations: further cells in ``d_0`` besides the start (Fig. 4.12's buoy); they are
            measured like the start but are not part of the metrics' outputs.
        refit: ``refit(gp) -> gp`` called before every plan, e.g. a GP with hyperparameters
            refitted on the measurements so far (:class:`frontierbo.macro.field.MapRefit`);
            None plans with ``dataset.hyperparameters`` throughout (the thesis's way).
    """
    domain, hyp = dataset.domain, dataset.hyperparameters
    kappa = domain.kappa
    budget = check_int(budget, "budget", low=kappa)
    if budget % kappa:
        raise ValueError(f"budget must be a multiple of kappa = {kappa}, got {budget}")
    iterations = budget // kappa
    noise_std = check_real(noise_std, "noise_std", low=0.0, low_open=False)
    if start is None:
        if dataset.start is None:
            raise ValueError(f"dataset {dataset.name!r} has no fixed start; give start")
        start = dataset.start
    start = check_int(start, "start", low=0, high=domain.n - 1)
    prior = [check_int(c, "prior_locations", low=0, high=domain.n - 1) for c in prior_locations]

    noise_seq, plan_seq = np.random.SeedSequence(_entropy(seed)).spawn(2)
    noise_rng = np.random.default_rng(noise_seq)
    plan_seeds = np.random.default_rng(plan_seq).integers(2**63, size=iterations).tolist()

    def measure(cells) -> np.ndarray:  # step 3: dataset values (+ optional noise)
        y = dataset.values[np.asarray(cells, dtype=np.int64)].copy()
        if noise_std > 0:
            y += noise_std * noise_rng.standard_normal(y.shape)
        return y

    gp = FiniteDomainGP(domain.inputs, hyp.kernel(), hyp.noise_variance, hyp.prior_mean)
    y0 = float(measure([start])[0])  # d_0 = <x_0, y_0>
    gp.add(start, y0)
    for cell, y in zip(prior, measure(prior).tolist(), strict=True):
        gp.add(cell, y)

    policy = RecedingHorizonPolicy(method, gp, domain, start, iterations, plan_seeds, refit)
    trace = run_loop(
        policy,
        lambda path: Feedback(measure(path), cost=kappa),
        budget,
        planned_cost=lambda path: kappa,
    )
    paths = np.array(trace.actions, dtype=np.int64).reshape(iterations, kappa)
    return MacroRun(
        method=method.name,
        start=start,
        y0=y0,
        value0=float(dataset.values[start]),
        actions=np.array(policy.actions, dtype=np.int64),
        paths=paths,
        measurements=np.array(trace.values, dtype=float).reshape(iterations, kappa),
        values=dataset.values[paths].copy(),
        horizons=np.array(policy.horizons, dtype=np.int64),
        nodes=np.array(policy.nodes, dtype=np.int64),
        seconds=np.array(policy.seconds, dtype=float),
    )


def _entropy(seed: SeedLike) -> int:
    """An int seed for SeedSequence: the seed itself, or a draw from a Generator / fresh."""
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(2**63))
    if seed is None:
        return int(np.random.SeedSequence().entropy)
    return check_int(seed, "seed", low=0)
