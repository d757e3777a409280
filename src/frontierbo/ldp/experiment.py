"""Experiments of "Local Differential Privacy for Bayesian Optimization" (Zhou & Tan, AAAI 2021):
the E1-E3 grid of spec ``ldp-bo.md`` §4.6, as data, run by the project's resumable sweep.

One *run* is (setting, algorithm, trial). A *setting* is a problem and a privacy level:

* ``private``  (E1, E3): LDP-ATA / LDP-TGP / LDP-MoMA on ``synthetic-matern``, ``synthetic-se``,
  ``light`` and ``stock`` at eps_priv in {0.5, 1, 2}; the raw reward is privatised by
  CTL(eps_priv) before the learner sees it.
* ``heavy``    (E2): the non-private ATA / TGP / MoMA on heavy-tailed rewards: the synthetic
  functions with Student-t(3) noise, and light / stock raw rewards.
* ``bounded``  (reference): the non-private algorithms on exactly the rewards the private
  synthetic runs privatise (U[-1, 1] noise), so "private >= non-private" compares like with
  like (spec §6.2 item 3). For light / stock the ``heavy`` runs are that reference.

Environment loop (docs/ldp-architecture.md): ``x = algo.ask()``; ``y = problem.sample_reward(x,
noise_rng)``; ``reward = ctl.randomise(y, privacy_bits)`` when private; ``algo.tell(x, reward)``.
Common random numbers: within a trial every setting and algorithm of a dataset family shares the
function ``f`` (a new synthetic ``f`` per trial, spec §4.2) and the seed of the reward-noise
stream; each (trial, eps) has its own privacy-noise stream and each (trial, algorithm) its own
algorithm seed. Every seed is stored with the run.

Regret is measured on the true ``f`` in normalised units ``f / max f`` (``problem.f_normalised``;
the synthetic ``f`` is already ``f / max |f|``), and in raw units. Per run we store the cumulative
regret at ~50 checkpoints, not every round.

Parameters (spec §6.3-§6.4): the ``practical`` profile and ONE common ``beta_scale`` for every
algorithm and setting (default :data:`BETA_SCALE`), never tuned per algorithm.

This module builds the runs, runs one and summarises them, with the paper's qualitative claims
checked (everything results.json holds); :mod:`frontierbo.ldp.report` presents them.
"""

from __future__ import annotations

import contextlib
import importlib
import math
import time
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from frontierbo._validation import check_int, check_real
from frontierbo.core.loop import Feedback, run_loop
from frontierbo.experiments.report import Options, load_published
from frontierbo.experiments.runner import RunSpec, seed_for
from frontierbo.io import mean_stderr

#: The three algorithms: key -> (module, class, non-private label, private label).
ALGORITHMS: dict[str, tuple[str, str, str, str]] = {
    "ata": ("frontierbo.ldp.ata_gp_ucb", "ATAGPUCB", "ATA-GP-UCB", "LDP-ATA-GP-UCB"),
    "tgp": ("frontierbo.ldp.tgp_ucb", "TGPUCB", "TGP-UCB", "LDP-TGP-UCB"),
    "moma": ("frontierbo.ldp.moma_gp_ucb", "MoMAGPUCB", "MoMA-GP-UCB", "LDP-MoMA-GP-UCB"),
}
#: Dataset families (the private problem names of :func:`frontierbo.ldp.problems.get_ldp_problem`).
DATASETS = ("synthetic-matern", "synthetic-se", "light", "stock")
#: The non-private heavy-tailed problem of each family (E2).
HEAVY_TAILED = {
    "synthetic-matern": "synthetic-matern-t",
    "synthetic-se": "synthetic-se-t",
    "light": "light",
    "stock": "stock",
}
EPSILONS = (0.5, 1.0, 2.0)
#: The headline eps of E1 and the second eps of E3 for the real data (spec §4.6).
HEADLINE_EPS = 1.0
E3_REAL_EPS = 2.0
DATASET_TITLES = {
    "synthetic-matern": "Synthetic, Matérn-5/2",
    "synthetic-se": "Synthetic, SE",
    "light": "Light sensors",
    "stock": "Stock prices",
}
KINDS = ("private", "heavy", "bounded")

#: Full / quick horizons and trials (spec §4.6, §5.3).
FULL_T, FULL_TRIALS = 10_000, 10
QUICK_T, QUICK_TRIALS = 1_000, 2
#: The one common confidence-width multiplier (spec §6.3-§6.4): with beta_scale = 1 no algorithm
#: exploits at feasible horizons; 0.1 is the documented common choice, the same for all.
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
        """Which of E1-E3 (spec §4.6) this setting belongs to ("ref": reference only)."""
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
    from frontierbo.ldp.problems import get_ldp_problem

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


def one_blas_thread():
    """A context limiting BLAS to one thread when ``threadpoolctl`` is installed (optional).

    The matrices of one run are tiny (m, n <= 100): a second BLAS thread only adds
    synchronisation, and on a busy 2-core machine it made ATA-GP-UCB 6-9x slower
    (benchmarks/ldp_speed.py). Without threadpoolctl nothing changes (set
    ``OPENBLAS_NUM_THREADS=1`` in the environment instead)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - optional dependency
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


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


# -- summaries --------------------------------------------------------------------------------
def summarise_settings(records: list[dict], setting_list: list[Setting], algorithms) -> dict:
    """Per setting and algorithm: R_T/T (mean, std, stderr over trials), the R_t/t curve at the
    checkpoints (mean, std), raw R_T, seconds per run, and diagnostics."""
    by_key: dict[tuple[str, str], list[dict]] = {}
    for rec in records:
        c = rec["config"]
        key = (Setting(c["kind"], c["family"], c["problem"], c["eps"]).key, c["algorithm"])
        by_key.setdefault(key, []).append(rec)
    summary = {}
    for s in setting_list:
        entry = {
            "kind": s.kind,
            "family": s.family,
            "problem": s.problem,
            "eps": s.eps,
            "title": s.title,
            "experiments": list(s.experiments),
            "algorithms": {},
        }
        for alg in algorithms:
            recs = by_key.get((s.key, alg), [])
            if not recs:
                continue
            cps = np.asarray(recs[0]["checkpoints"], dtype=float)
            curves = np.array([np.asarray(r["cum_regret"]) / cps for r in recs])
            avg = np.array([r["average_regret"] for r in recs])
            n = len(recs)
            avg_mean, avg_stderr = mean_stderr(avg)
            entry["algorithms"][alg] = {
                "label": algorithm_label(alg, s.eps),
                "n_trials": n,
                "avg_regret_mean": float(avg_mean),
                "avg_regret_std": float(avg.std(ddof=1)) if n > 1 else 0.0,
                "avg_regret_stderr": float(avg_stderr),
                "final_regret_raw_mean": float(np.mean([r["final_regret_raw"] for r in recs])),
                "checkpoints": cps,
                "curve_mean": curves.mean(axis=0),
                "curve_std": curves.std(axis=0, ddof=1) if n > 1 else np.zeros(cps.shape),
                "seconds_mean": float(np.mean([r["seconds"] for r in recs])),
                "uniform_regret_mean": float(np.mean([r["uniform_regret"] for r in recs])),
                "best_arm_share_mean": float(np.mean([r["best_arm_share"] for r in recs])),
                "diagnostics": {
                    k: float(np.mean([r[k] for r in recs]))
                    for k in ("n_truncated", "k_mom", "m", "n_epochs")
                    if all(k in r for r in recs)
                },
                "sources": sorted({r["source"] for r in recs}),
            }
        summary[s.key] = entry
    return summary


# -- results.json: parameters, summary, the paper's claims checked ------------------------------
def header(options) -> dict:
    return {
        "T": options["T"],
        "trials": options.runs,
        "seed": options.seed,
        "parameters": {
            "profile": PROFILE,
            "beta_scale": options["beta_scale"],
            "lam": LAM,
            "delta": DELTA,
            "epsilons": list(options["epsilons"]),
            "synthetic_kwargs": options["synthetic_kwargs"],
            "algorithm_kwargs": options["algorithm_kwargs"],
        },
        "algorithms": list(options["algorithms"]),
        "datasets": list(options.datasets),
    }


def summarise(records: list[dict], options) -> dict:
    setting_list = settings(options.datasets, options["epsilons"])
    summary = summarise_settings(records, setting_list, options["algorithms"])
    return {
        "settings": summary,
        "checks": orderings(summary, options.datasets, options["epsilons"]),
    }


def _mean(entry: dict, alg: str) -> float | None:
    a = entry["algorithms"].get(alg)
    return None if a is None else a["avg_regret_mean"]


def orderings(summary: dict, datasets, epsilons) -> dict:
    """The qualitative checks of spec §6.2, computed on R_T/T (mean over trials)."""
    names = ("private_ordering", "heavy_ordering", "eps_monotone", "private_vs_nonprivate")
    checks: dict[str, list] = {
        name: [] for name in (*names, "sublinear", "timing", "below_uniform")
    }
    for e in summary.values():
        algs = e["algorithms"]
        if e["kind"] not in ("private", "heavy") or not algs:
            continue
        best = min(algs, key=lambda a: algs[a]["avg_regret_mean"])
        row = {"setting": e["title"], "kind": e["kind"], "best": best, "order": _order(algs)}
        if "moma" in algs:
            moma = algs["moma"]
            gap = moma["avg_regret_mean"] - algs[best]["avg_regret_mean"]
            se = math.hypot(moma["avg_regret_stderr"], algs[best]["avg_regret_stderr"])
            row["moma_gap"] = gap
            row["moma_competitive"] = bool(gap <= se)
        if e["kind"] == "heavy" and "ata" in algs and "tgp" in algs:
            row["ata_le_tgp"] = bool(
                algs["ata"]["avg_regret_mean"] <= algs["tgp"]["avg_regret_mean"]
            )
        checks[f"{e['kind']}_ordering"].append(row)
    by_key = {(e["kind"], e["family"], e["eps"]): e for e in summary.values()}
    for family in datasets:
        ref = by_key.get(("bounded" if family.startswith("synthetic") else "heavy", family, None))
        for alg in ALGORITHMS:
            values = [
                (eps, _mean(by_key[("private", family, eps)], alg))
                for eps in sorted(epsilons)
                if ("private", family, eps) in by_key
            ]
            values = [(eps, v) for eps, v in values if v is not None]
            if len(values) >= 2:
                regrets = [v for _, v in values]
                checks["eps_monotone"].append(
                    {
                        "family": family,
                        "algorithm": alg,
                        "by_eps": values,
                        "non_increasing": bool(np.all(np.diff(regrets) <= 0)),
                        "extreme": bool(regrets[0] > regrets[-1]),
                    }
                )
            ref_value = None if ref is None else _mean(ref, alg)
            if ref_value is not None and values:
                checks["private_vs_nonprivate"].append(
                    {
                        "family": family,
                        "algorithm": alg,
                        "non_private": ref_value,
                        "private": values,
                        "holds": bool(all(v >= ref_value for _, v in values)),
                    }
                )
    for e in summary.values():
        _setting_checks(e, checks)
    return checks


def _setting_checks(e: dict, checks: dict) -> None:
    """Sublinearity, below-uniform and timing of one setting, appended to ``checks``."""
    algs = e["algorithms"]
    for alg in ("moma", "ata"):
        if alg not in algs:
            continue
        cps, curve = np.asarray(algs[alg]["checkpoints"]), np.asarray(algs[alg]["curve_mean"])
        half = curve[cps >= cps[-1] / 2]
        checks["sublinear"].append(
            {
                "setting": e["title"],
                "algorithm": alg,
                "half": float(half[0]),
                "end": float(half[-1]),
                "decreasing": bool(half[-1] < half[0]),
            }
        )
    for alg, a in algs.items():
        below = bool(a["avg_regret_mean"] < a["uniform_regret_mean"])
        checks["below_uniform"].append(
            {"setting": e["title"], "algorithm": alg, "label": a["label"], "below": below}
        )
    if "moma" in algs and "ata" in algs:
        ata, moma = algs["ata"]["seconds_mean"], algs["moma"]["seconds_mean"]
        checks["timing"].append(
            {
                "setting": e["title"],
                "ata_seconds": ata,
                "moma_seconds": moma,
                "ratio": ata / max(moma, 1e-9),
            }
        )


def _order(algs: dict) -> str:
    ranked = sorted(algs, key=lambda a: algs[a]["avg_regret_mean"])
    return " < ".join(algs[a]["label"] for a in ranked)
