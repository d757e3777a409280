"""Experiments of "Local Differential Privacy for Bayesian Optimization" (Zhou & Tan, AAAI 2021):
the E1-E3 grid (docs/decisions.md#ldp-bo-experiment-grid-e1-e3), as data, run by the project's
resumable sweep.

One *run* is (setting, algorithm, trial). A *setting* is a problem and a privacy level:

* ``private``  (E1, E3): LDP-ATA / LDP-TGP / LDP-MoMA on ``synthetic-matern``, ``synthetic-se``,
  ``light`` and ``stock`` at eps_priv in {0.5, 1, 2}; the raw reward is privatised by
  CTL(eps_priv) before the learner sees it.
* ``heavy``    (E2): the non-private ATA / TGP / MoMA on heavy-tailed rewards: the synthetic
  functions with Student-t(3) noise, and light / stock raw rewards.
* ``bounded``  (reference): the non-private algorithms on exactly the rewards the private
  synthetic runs privatise (U[-1, 1] noise), so "private >= non-private" compares like with
  like. For light / stock the ``heavy`` runs are that reference.

Environment loop (docs/ldp-architecture.md): ``x = algo.ask()``; ``y = problem.sample_reward(x,
noise_rng)``; ``reward = ctl.randomise(y, privacy_bits)`` when private; ``algo.tell(x, reward)``.
Common random numbers: within a trial every setting and algorithm of a dataset family shares the
function ``f`` (a new synthetic ``f`` per trial, as in the paper) and the seed of the reward-noise
stream; each (trial, eps) has its own privacy-noise stream and each (trial, algorithm) its own
algorithm seed. Every seed is stored with the run.

Regret is measured on the true ``f`` in normalised units ``f / max f`` (``problem.f_normalised``;
the synthetic ``f`` is already ``f / max |f|``), and in raw units. Per run we store the cumulative
regret at ~50 checkpoints, not every round.

Parameters: the ``practical`` profile and ONE common ``beta_scale`` for every algorithm and
setting (default :data:`BETA_SCALE`), never tuned per algorithm
(docs/decisions.md#ldp-bo-one-common-beta_scale-for-every-algorithm).

This module builds the runs, runs one and summarises them, with the paper's qualitative claims
checked (everything results.json holds); :mod:`frontierbo.ldp.report` presents them.
"""

from __future__ import annotations

import importlib
import time
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from frontierbo._threads import one_blas_thread
from frontierbo._validation import check_int, check_real
from frontierbo.core.loop import Feedback, run_loop
from frontierbo.experiments.report import Options, load_published
from frontierbo.experiments.runner import RunSpec, seed_for

#: The three algorithms: key -> (module, class, non-private label, private label).
ALGORITHMS: dict[str, tuple[str, str, str, str]] = {
    "ata": ("frontierbo.ldp.ata_gp_ucb", "ATAGPUCB", "ATA-GP-UCB", "LDP-ATA-GP-UCB"),
    "tgp": ("frontierbo.ldp.tgp_ucb", "TGPUCB", "TGP-UCB", "LDP-TGP-UCB"),
    "moma": ("frontierbo.ldp.moma_gp_ucb", "MoMAGPUCB", "MoMA-GP-UCB", "LDP-MoMA-GP-UCB"),
}
#: Dataset families (the private problem names of :func:`frontierbo.ldp.datasets.get_ldp_problem`).
DATASETS = ("synthetic-matern", "synthetic-se", "light", "stock")
#: The non-private heavy-tailed problem of each family (E2).
HEAVY_TAILED = {
    "synthetic-matern": "synthetic-matern-t",
    "synthetic-se": "synthetic-se-t",
    "light": "light",
    "stock": "stock",
}
EPSILONS = (0.5, 1.0, 2.0)
#: The headline eps of E1 and the second eps of E3 for the real data
#: (docs/decisions.md#ldp-bo-experiment-grid-e1-e3).
HEADLINE_EPS = 1.0
E3_REAL_EPS = 2.0
DATASET_TITLES = {
    "synthetic-matern": "Synthetic, Matérn-5/2",
    "synthetic-se": "Synthetic, SE",
    "light": "Light sensors",
    "stock": "Stock prices",
}
KINDS = ("private", "heavy", "bounded")

#: Full / quick horizons and trials (docs/decisions.md#ldp-bo-experiment-grid-e1-e3).
FULL_T, FULL_TRIALS = 10_000, 10
QUICK_T, QUICK_TRIALS = 1_000, 2
#: The one common confidence-width multiplier: with beta_scale = 1 no algorithm exploits at
#: feasible horizons; 0.1 is the documented common choice, the same for all
#: (docs/decisions.md#ldp-bo-one-common-beta_scale-for-every-algorithm).
BETA_SCALE = 0.1
PROFILE = "practical"
LAM = 1.0
DELTA = 0.1
#: Cumulative regret is stored at this many checkpoints per run.
N_CHECKPOINTS = 50
#: The reproduction's options and their full-run values (``runs``: trials per setting), and
#: what ``--quick`` changes.
DEFAULTS = {
    "runs": FULL_TRIALS,
    "T": FULL_T,
    "beta_scale": BETA_SCALE,
    "epsilons": EPSILONS,
    "algorithms": tuple(ALGORITHMS),
    "synthetic_kwargs": None,
    "algorithm_kwargs": None,
}
QUICK = {"runs": QUICK_TRIALS, "T": QUICK_T}
#: The citation (the paper publishes no numbers, only the orderings report.md checks).
PUBLISHED = load_published("frontierbo.ldp")


@dataclass(frozen=True)
class Setting:
    """A problem and a privacy level (``eps`` None: non-private)."""

    kind: str  # "private" | "heavy" | "bounded"
    family: str  # dataset family, one of DATASETS
    problem: str  # name for get_ldp_problem
    eps: float | None

    @property
    def key(self) -> str:
        return f"{self.kind}|{self.problem}|eps={eps_text(self.eps)}"

    @property
    def experiments(self) -> tuple[str, ...]:
        """Which of E1-E3 this setting belongs to ("ref": reference only;
        docs/decisions.md#ldp-bo-experiment-grid-e1-e3)."""
        if self.kind == "heavy":
            return ("E2",)
        if self.kind == "bounded":
            return ("ref",)
        tags = []
        if self.family != "synthetic-se":
            tags.append("E1")
        if (self.family == "synthetic-se" and self.eps == HEADLINE_EPS) or (
            self.family in ("light", "stock") and self.eps == E3_REAL_EPS
        ):
            tags.append("E3")
        return tuple(tags) or ("sweep",)

    @property
    def title(self) -> str:
        base = DATASET_TITLES[self.family]
        if self.kind == "private":
            return f"{base}, LDP eps={self.eps:g}"
        if self.kind == "heavy":
            noise = "Student-t(3) noise" if self.family.startswith("synthetic") else "raw rewards"
            return f"{base}, non-private, {noise}"
        return f"{base}, non-private, U[-1,1] noise"


def eps_text(eps: float | None) -> str:
    return "none" if eps is None else f"{eps:g}"


def algorithm_label(alg: str, eps: float | None) -> str:
    _, _, plain, private = ALGORITHMS[alg]
    return plain if eps is None else private


def settings(datasets=DATASETS, epsilons=EPSILONS) -> list[Setting]:
    """Every setting of the grid for the given dataset families, in report order."""
    out = []
    for family in datasets:
        if family not in DATASETS:
            raise ValueError(f"datasets must be among {list(DATASETS)}, got {family!r}")
        out += [Setting("private", family, family, float(e)) for e in epsilons]
        out.append(Setting("heavy", family, HEAVY_TAILED[family], None))
        if family.startswith("synthetic"):
            out.append(Setting("bounded", family, family, None))
    return out


def checkpoint_times(T: int, k: int = N_CHECKPOINTS) -> np.ndarray:
    """About ``k`` rounds ``t`` in [1, T], evenly spaced and ending at T, where R_t is stored."""
    return np.unique(np.round(np.linspace(T / k, T, k)).astype(int).clip(1, T))


def check_options(params: dict) -> dict:
    """Validate the reproduction's own options (see :data:`DEFAULTS`)."""
    algorithms = tuple(params["algorithms"])
    unknown = [a for a in algorithms if a not in ALGORITHMS]
    if unknown or not algorithms:
        raise ValueError(f"algorithms must be among {list(ALGORITHMS)}, got {unknown or []}")
    return {
        **params,
        "T": check_int(params["T"], "T", low=2),
        "beta_scale": check_real(
            params["beta_scale"], "beta_scale (--beta-scale)", low=0.0, low_open=False
        ),
        "epsilons": tuple(params["epsilons"]),
        "algorithms": algorithms,
        "synthetic_kwargs": dict(params["synthetic_kwargs"] or {}),
        "algorithm_kwargs": dict(params["algorithm_kwargs"] or {}),
    }


def required_inputs(options: Options) -> list:
    """The data files the chosen real datasets read (checked before anything runs); the
    documented surrogates stand in without them
    (docs/decisions.md#ldp-bo-surrogate-light-and-stock-data)."""
    from frontierbo.data import Input
    from frontierbo.ldp.realdata import LIGHT_FILE, STOCK_FILE

    files = {"light": LIGHT_FILE, "stock": STOCK_FILE}
    return [
        Input(
            f"{DATASET_TITLES[family]} ({family})",
            (files[family],),
            f"the {'light-sensor' if family == 'light' else 'stock-price'} surrogate with the "
            "real means (docs/decisions.md#ldp-bo-surrogate-light-and-stock-data)",
        )
        for family in options.datasets
        if family in files
    ]


def build_specs(options: Options) -> list[RunSpec]:
    """One :class:`RunSpec` per (setting, algorithm, trial); the config holds every parameter
    and seed, so a resumed sweep refuses a store made with different ones."""
    specs = []
    for s in settings(options.datasets, options["epsilons"]):
        for alg in options["algorithms"]:
            for trial in range(options.runs):
                config = {
                    "kind": s.kind,
                    "family": s.family,
                    "problem": s.problem,
                    "eps": s.eps,
                    "algorithm": alg,
                    "trial": trial,
                    "T": options["T"],
                    "profile": PROFILE,
                    "beta_scale": options["beta_scale"],
                    "lam": LAM,
                    "delta": DELTA,
                    "synthetic_kwargs": dict(options["synthetic_kwargs"]),
                    "algorithm_kwargs": dict(options["algorithm_kwargs"].get(alg, {})),
                    **_seeds(options.seed, s, alg, trial),
                }
                run_id = f"{s.key}|{alg}|trial={trial}"
                specs.append(RunSpec(run_id, config, config["algorithm_seed"]))
    return specs


def _seeds(base_seed: int, s: Setting, alg: str, trial: int) -> dict[str, int]:
    """A new f per trial, shared by every setting / algorithm of the family (common random
    numbers); the privacy noise per (trial, eps), the algorithm's per (trial, algorithm)."""
    return {
        "problem_seed": seed_for(base_seed, s.family, "problem", trial),
        "noise_seed": seed_for(base_seed, s.family, "noise", trial),
        "privacy_seed": seed_for(base_seed, s.family, "privacy", eps_text(s.eps), trial),
        "algorithm_seed": seed_for(base_seed, s.family, "algorithm", alg, trial),
    }


# -- problems and algorithms ------------------------------------------------------------------
@lru_cache(maxsize=16)
def _problem(name: str, seed: int, kwargs_items: tuple):
    from frontierbo.ldp.datasets import get_ldp_problem

    kwargs = dict(kwargs_items) if name.startswith("synthetic") else {}
    return get_ldp_problem(name, seed, **kwargs)


def load_problem(config: dict):
    """The run's problem (cached per process): a new synthetic f per trial, fixed real data."""
    items = tuple(sorted(config.get("synthetic_kwargs", {}).items()))
    return _problem(config["problem"], config["problem_seed"], items)


def make_algorithm(alg: str, problem, T: int, eps: float | None, seed: int, **params):
    """Build one algorithm with the ask/tell contract for ``problem``.

    Private: ``B``, ``R`` and ``eps_priv`` (moments default to the CTL formulas). Non-private:
    ``B`` and the problem's moments ``v`` (ATA, TGP) and ``c`` (MoMA). ``params``: ``lam``,
    ``delta``, ``profile``, ``beta_scale`` and algorithm-specific keywords.
    """
    module, cls_name, _, _ = ALGORITHMS[alg]
    cls = getattr(importlib.import_module(module), cls_name)
    if eps is not None:
        kw = {"B": problem.B, "R": problem.R, "eps_priv": eps}
    else:
        kw = {"B": problem.B, "alpha": problem.alpha}
        kw["c" if alg == "moma" else "v"] = problem.c if alg == "moma" else problem.v
    return cls(problem.K, T, seed=seed, **kw, **params)


def run_trial(
    problem,
    alg: str,
    eps: float | None,
    T: int,
    *,
    noise_seed: int,
    privacy_seed: int,
    algorithm_seed: int,
    checkpoints=None,
    keep_arms: bool = False,
    **params,
) -> dict:
    """One run of the environment loop; returns per-checkpoint cumulative regret and diagnostics.

    ``params`` go to :func:`make_algorithm`. Regret per round is ``f*_norm - f_norm[x_t]``
    (normalised) and ``f* - f[x_t]`` (raw). ``keep_arms``: also return the T arms played and
    the number of plays per arm.
    """
    from frontierbo.dp.samplers import RandomBits
    from frontierbo.ldp.randomiser import CTL

    algo = make_algorithm(alg, problem, T, eps, algorithm_seed, **params)
    noise_rng = np.random.default_rng(noise_seed)
    ctl = None if eps is None else CTL(eps, problem.B, problem.R)
    bits = None if eps is None else RandomBits(np.random.default_rng(privacy_seed))

    def pull(arm: int) -> Feedback:
        # the user's side: draw the reward, then privatise it before the learner sees it
        y = problem.sample_reward(arm, noise_rng)
        return Feedback(y if ctl is None else ctl.randomise(y, bits))

    started = time.perf_counter()
    arms = np.asarray(run_loop(algo, pull, T).actions, dtype=int)
    seconds = time.perf_counter() - started
    fn = problem.f_normalised
    cum_norm = np.cumsum(fn.max() - fn[arms])
    cum_raw = np.cumsum(problem.f.max() - problem.f[arms])
    cps = checkpoint_times(T) if checkpoints is None else np.asarray(checkpoints, dtype=int)
    counts = np.bincount(arms, minlength=problem.n)
    out = {
        "algorithm_name": getattr(algo, "name", alg),
        "checkpoints": cps,
        "cum_regret": cum_norm[cps - 1],
        "cum_regret_raw": cum_raw[cps - 1],
        "final_regret": float(cum_norm[-1]),
        "final_regret_raw": float(cum_raw[-1]),
        "average_regret": float(cum_norm[-1] / T),
        "uniform_regret": float(fn.max() - fn.mean()),
        "best_arm": int(problem.best_arm),
        "most_played": int(np.argmax(counts)),
        "best_arm_share": float(counts[problem.best_arm] / T),
        "seconds": seconds,
        "source": problem.source,
    }
    for attr in ("n_truncated", "k_mom", "m", "n_epochs"):
        value = getattr(algo, attr, None)
        if isinstance(value, int | float | np.integer | np.floating) and not callable(value):
            out[attr] = value
    if keep_arms:
        out["arms"] = arms
        out["counts"] = counts
    return out


def run_worker(spec: RunSpec) -> dict:
    """Module-level worker for :func:`run_sweep` (picklable)."""
    c = spec.config
    problem = load_problem(c)
    with one_blas_thread():
        return _run_config(problem, c)


def _run_config(problem, c: dict) -> dict:
    return run_trial(
        problem,
        c["algorithm"],
        c["eps"],
        c["T"],
        noise_seed=c["noise_seed"],
        privacy_seed=c["privacy_seed"],
        algorithm_seed=c["algorithm_seed"],
        lam=c["lam"],
        delta=c["delta"],
        profile=c["profile"],
        beta_scale=c["beta_scale"],
        **c["algorithm_kwargs"],
    )
