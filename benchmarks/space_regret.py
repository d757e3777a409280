"""Studies over search spaces against BoTorch and Optuna: simple regret and time per suggestion
(issue 58, item 5).

What is measured: simple regret r_T = f* - max_{t <= T} f(x_t) after T = 20, 40, 80
evaluations (f* the problem's known global maximum, so r_T >= 0), and the wall time per
suggestion: the ask / model fit / acquisition time only, never the objective (a formula here)
nor the bookkeeping of the tell. Everything is maximised.

Problems (each a search space, written as frontierbo's JSON space, and a formula):

* ``branin``: x1 in [-5, 10], x2 in [0, 15] (floats), f = -branin; f* = -0.397887.
* ``hartmann6``: x0 .. x5 in [0, 1] (floats), f = the 6-D Hartmann function with its sign
  flipped, sum_i alpha_i exp(-sum_j A_ij (x_j - P_ij)^2); f* = 3.32237.
* ``log3``: three log-scaled floats, ``lr`` in [1e-5, 1e-1], ``wd`` in [1e-7, 1e-2] and ``eps``
  in [1e-9, 1e-6] (4, 5 and 3 decades); f = Hartmann-3 (sign flipped) of the parameters'
  positions on their log10 ranges, u = (log10 v - log10 low) / (log10 high - log10 low);
  f* = 3.86278, at lr = 2.9e-5, wd = 6.0e-5, eps = 3.6e-7. A method that searched these
  linearly would put 90 % of its points in each range's top decade; every method here is told
  that they are log-scaled (BoTorch models the log10 coordinates, Optuna gets ``log=True``).
* ``mixed``: ``x0``, ``x1`` in [0, 1] (floats), ``layers`` in 1 .. 8 (int) and ``act`` in
  {relu, tanh, gelu} (categorical); f = w_act * Hartmann-3(T_act(x0, x1), (layers - 1) / 7)
  with w = 0.8, 0.9, 1.0 and T_act a different symmetry of the square per choice (relu: as is,
  tanh: x0 and x1 swapped, gelu: x0 -> 1 - x0), so each choice has its optimum elsewhere and
  the int interacts with both floats; f* = 3.86074 (act = gelu, layers = 7), found by
  multistart L-BFGS-B over (x0, x1) for each int value.

Each f* is computed when the script starts by L-BFGS-B from the literature's maximiser
(Branin, Hartmann) and printed; the regret of every method is measured against it.

Methods, all with the same initial design size n0 (default max(2, min(10, parameters + 1)),
``--n-initial``) counted in T, each drawing its initial design its own way (seeded):

* ``ours``: ``frontierbo.create_study(space=..., direction="maximize", seed=seed,
  settings={"n_initial": n0})`` in a temporary SQLite file, algorithm ``gp-ei`` (the default:
  log expected improvement); a scrambled Sobol initial design. The time is that of
  ``study.ask()`` (one database transaction included).
* ``ours-ucb``: the same study with ``algorithm="gp-ucb"`` (not run by default).
* ``botorch``: BoTorch 0.18, refitted before every suggestion with ``fit_gpytorch_mll``:
  ``SingleTaskGP`` (its defaults: Matern-5/2 ARD, dimension-scaled priors; ``Standardize(1)``)
  on the unit-cube encoding (log floats on their log10 range), ``LogExpectedImprovement``
  maximised by ``optimize_acqf`` (``num_restarts=10, raw_samples=512``, the tutorials'
  values). On ``mixed``: ``MixedSingleTaskGP(cat_dims=[act])`` (its categorical kernel) with
  the int as an ordinal coordinate, and ``optimize_acqf_mixed`` over every (layers, act) pair
  as fixed features, the floats optimised for each (``num_restarts`` / ``raw_samples``
  ``--botorch-mixed-restarts`` / ``--botorch-mixed-raw``, default 2 / 64 per pair, i.e. 48 /
  1536 over the 24 pairs). Initial design: ``n0`` scrambled Sobol points
  (``SobolEngine(seed=seed)``). Each suggestion runs in ``torch.random.fork_rng`` seeded by
  (seed, trial), so its result does not depend on the methods it is interleaved with.
* ``optuna-gp`` / ``optuna-tpe``: Optuna's ``GPSampler`` / ``TPESampler`` (``seed=seed``,
  ``n_startup_trials=n0``, otherwise defaults), ask / tell with ``FloatDistribution`` (``log``),
  ``IntDistribution`` and ``CategoricalDistribution``.
* ``random``: frontierbo's random sampler on the space (a study with ``algorithm="random"``).

Fairness: the methods of one (problem, seed) run *interleaved*, one suggestion each in turn
(the order rotated per seed), so a change of machine load hits them all alike; the same
threads for all (``--threads``, default 1: torch and every BLAS / OpenMP pool through
threadpoolctl). The time per suggestion is averaged over the model-based suggestions (trial n0
onwards; every trial for ``random``); the per-trial times are in the JSON file (``--out``).

Run (BoTorch, GPyTorch and Optuna are not dependencies of frontierbo)::

    pip install torch==2.13.0 && pip install botorch optuna threadpoolctl
    python benchmarks/space_regret.py                  # 2 seeds, T = 20: a few minutes
    python benchmarks/space_regret.py --full --out space_regret.json   # 10 seeds, T = 80
    python benchmarks/space_regret.py --seeds 5 --budget 40 --problems branin mixed

With ``--out`` the runs are written after each (problem, seed) (atomically) and a run started
again with the same file skips the (problem, method, seed) runs already there.

Output, per problem: mean simple regret ± standard error over seeds at each T and the mean
time per suggestion of every method; then, for ours against each baseline, our mean regret /
its mean regret at each T ("ok": ours <= its mean + its standard error) and its time per
suggestion / ours; last, per problem, whether the issue's target holds: regret within one s.e.
of BoTorch or better at every T, at <= 1/5 of its time per suggestion.
"""

from __future__ import annotations

import itertools
import math
import os
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from frontierbo.study.create import create_study
from regret_common import (
    HARTMANN3_A,
    HARTMANN3_P,
    HARTMANN6_A,
    HARTMANN6_P,
    add_out_threads,
    check_args,
    check_imports,
    checkpoints,
    hartmann,
    parser,
    print_ratios,
    print_regret_table,
    problem_rows,
    run_benchmark,
    run_interleaved,
    seconds_text,
    verdict,
)

PROBLEMS = ("branin", "hartmann6", "log3", "mixed")
METHODS = ("ours", "ours-ucb", "botorch", "optuna-gp", "optuna-tpe", "random")
DEFAULT_METHODS = ("ours", "botorch", "optuna-gp", "optuna-tpe", "random")
#: our study algorithm behind each of our method names
OURS = {"ours": "gp-ei", "ours-ucb": "gp-ucb", "random": "random"}
FORMAT = "frontierbo-space-regret/1"
#: the issue's target: BoTorch's time per suggestion / ours at least this
TIME_TARGET = 5.0
# Hartmann maximisers (https://www.sfu.ca/~ssurjano/hart3.html, hart6.html); the constants and
# the function are in regret_common.
HARTMANN3_ARGMAX = (0.114614, 0.555649, 0.852547)
HARTMANN6_ARGMAX = (0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573)
#: mixed: the weight of each activation and the symmetry of the square it applies to (x0, x1)
MIXED_ACTS = {
    "relu": (0.8, lambda a, b: (a, b)),
    "tanh": (0.9, lambda a, b: (b, a)),
    "gelu": (1.0, lambda a, b: (1.0 - a, b)),
}
LOG3_RANGES = {"lr": (1e-5, 1e-1), "wd": (1e-7, 1e-2), "eps": (1e-9, 1e-6)}


def branin(x1, x2):
    b, c, t = 5.1 / (4 * math.pi**2), 5 / math.pi, 1 / (8 * math.pi)
    return (x2 - b * x1**2 + c * x1 - 6) ** 2 + 10 * (1 - t) * np.cos(x1) + 10


# -- problems -------------------------------------------------------------------------------------
@dataclass
class Problem:
    """A maximisation problem over a search space: ``space`` (frontierbo's JSON form),
    ``f(params) -> float`` and its global maximum ``f_max``."""

    name: str
    space: dict
    f: Callable[[dict], float]
    f_max: float = field(default=math.nan)

    @property
    def params(self) -> list[dict]:
        return self.space["params"]

    def n_initial(self, override: int | None) -> int:
        return override if override is not None else max(2, min(10, len(self.params) + 1))


def _float(name, low, high, log=False):
    return {"name": name, "type": "float", "low": low, "high": high, "log": log}


def _log_position(v: float, low: float, high: float) -> float:
    return (math.log10(v) - math.log10(low)) / (math.log10(high) - math.log10(low))


def _maximise(f, starts, bounds) -> float:
    """max f over ``bounds`` by L-BFGS-B from each of ``starts``."""
    from scipy.optimize import minimize

    best = -math.inf
    for x0 in starts:
        res = minimize(lambda x: -f(x), x0, method="L-BFGS-B", bounds=bounds,
                       options={"ftol": 1e-15, "gtol": 1e-12})  # fmt: skip
        best = max(best, -float(res.fun), float(f(np.asarray(x0))))
    return best


def make_problems() -> dict[str, Problem]:
    """Every problem, its f* computed (module doc)."""

    def h3(u):
        return float(hartmann(np.asarray(u, dtype=float), HARTMANN3_A, HARTMANN3_P)[0])

    def h6(u):
        return float(hartmann(np.asarray(u, dtype=float), HARTMANN6_A, HARTMANN6_P)[0])

    problems = {
        "branin": Problem(
            "branin",
            {"params": [_float("x1", -5.0, 10.0), _float("x2", 0.0, 15.0)]},
            lambda p: -float(branin(p["x1"], p["x2"])),
        ),
        "hartmann6": Problem(
            "hartmann6",
            {"params": [_float(f"x{j}", 0.0, 1.0) for j in range(6)]},
            lambda p: h6([p[f"x{j}"] for j in range(6)]),
        ),
        "log3": Problem(
            "log3",
            {"params": [_float(k, lo, hi, log=True) for k, (lo, hi) in LOG3_RANGES.items()]},
            lambda p: h3([_log_position(p[k], *LOG3_RANGES[k]) for k in LOG3_RANGES]),
        ),
        "mixed": Problem(
            "mixed",
            {
                "params": [
                    _float("x0", 0.0, 1.0),
                    _float("x1", 0.0, 1.0),
                    {"name": "layers", "type": "int", "low": 1, "high": 8},
                    {"name": "act", "type": "categorical", "choices": list(MIXED_ACTS)},
                ]
            },
            lambda p: _mixed(p, h3),
        ),
    }
    box = [(0.0, 1.0)] * 6
    problems["branin"].f_max = _maximise(
        lambda x: -float(branin(x[0], x[1])), [(-math.pi, 12.275)], [(-5, 10), (0, 15)]
    )
    problems["hartmann6"].f_max = _maximise(h6, [HARTMANN6_ARGMAX], box)
    problems["log3"].f_max = _maximise(h3, [HARTMANN3_ARGMAX], box[:3])
    # mixed: for each int value, multistart over the square (the best act's weight is 1 and
    # its symmetry maps the square onto itself)
    grid = np.array(list(itertools.product(np.linspace(0.02, 0.98, 13), repeat=2)))
    best = -math.inf
    for layers in range(1, 9):
        u3 = (layers - 1) / 7
        values = hartmann(np.column_stack([grid, np.full(len(grid), u3)]), HARTMANN3_A,
                          HARTMANN3_P)  # fmt: skip
        starts = grid[np.argsort(-values)[:4]]
        best = max(best, _maximise(lambda x, u3=u3: h3([x[0], x[1], u3]), starts, box[:2]))
    problems["mixed"].f_max = best
    return problems


def _mixed(p: dict, h3) -> float:
    weight, symmetry = MIXED_ACTS[p["act"]]
    a, b = symmetry(p["x0"], p["x1"])
    return weight * h3([a, b, (p["layers"] - 1) / 7])


# -- methods: each an ask() -> params / tell(value) object ------------------------------------------
class Ours:
    """A frontierbo study over the space in a temporary SQLite file."""

    def __init__(self, p: Problem, seed: int, n0: int, algorithm: str):
        self.folder = tempfile.TemporaryDirectory(prefix="space-regret-")
        settings = None if algorithm == "random" else {"n_initial": n0}
        self.study = create_study(
            space=p.space, storage=os.path.join(self.folder.name, "study.db"),
            algorithm=algorithm, settings=settings, direction="maximize", seed=seed,
        )  # fmt: skip
        self.trial = None

    def ask(self) -> dict:
        self.trial = self.study.ask()
        return self.trial.params

    def tell(self, value: float) -> None:
        self.study.tell(self.trial, value)

    def close(self) -> None:
        self.study.storage.close()
        self.folder.cleanup()


class OptunaMethod:
    def __init__(self, p: Problem, seed: int, n0: int, kind: str):
        import optuna
        from optuna.distributions import (
            CategoricalDistribution,
            FloatDistribution,
            IntDistribution,
        )

        optuna.logging.set_verbosity(optuna.logging.ERROR)
        if kind == "gp":
            sampler = optuna.samplers.GPSampler(seed=seed, n_startup_trials=n0)
        else:
            sampler = optuna.samplers.TPESampler(seed=seed, n_startup_trials=n0)
        self.distributions = {}
        for q in p.params:
            if q["type"] == "float":
                dist = FloatDistribution(q["low"], q["high"], log=q.get("log", False))
            elif q["type"] == "int":
                dist = IntDistribution(q["low"], q["high"], log=q.get("log", False))
            else:
                dist = CategoricalDistribution(q["choices"])
            self.distributions[q["name"]] = dist
        self.study = optuna.create_study(direction="maximize", sampler=sampler)
        self.trial = None

    def ask(self) -> dict:
        self.trial = self.study.ask(self.distributions)
        return dict(self.trial.params)

    def tell(self, value: float) -> None:
        self.study.tell(self.trial, value)

    def close(self) -> None:
        pass


class BoTorchMethod:
    """BoTorch on the unit-cube encoding: a float's (log10) position in its range, an int's
    position (an ordinal coordinate, its values enumerated), a categorical's index."""

    def __init__(self, p: Problem, seed: int, n0: int, mixed_restarts: int, mixed_raw: int):
        import torch

        self.p, self.seed, self.n0 = p, seed, n0
        self.mixed_restarts, self.mixed_raw = mixed_restarts, mixed_raw
        self.cat_dims = [j for j, q in enumerate(p.params) if q["type"] == "categorical"]
        self.fixed_dims = [j for j, q in enumerate(p.params) if q["type"] != "float"]
        engine = torch.quasirandom.SobolEngine(len(p.params), scramble=True, seed=seed)
        self.design = engine.draw(n0, dtype=torch.float64).numpy()
        self.X: list[np.ndarray] = []
        self.y: list[float] = []
        self.z = None

    # the encoding
    def _from_design(self, u: np.ndarray) -> np.ndarray:
        z = u.copy()
        for j, q in enumerate(self.p.params):
            if q["type"] == "int":
                k = q["high"] - q["low"] + 1
                z[j] = min(math.floor(u[j] * k), k - 1) / (k - 1)
            elif q["type"] == "categorical":
                z[j] = min(math.floor(u[j] * len(q["choices"])), len(q["choices"]) - 1)
        return z

    def _decode(self, z: np.ndarray) -> dict:
        out = {}
        for j, q in enumerate(self.p.params):
            if q["type"] == "float":
                u = min(max(float(z[j]), 0.0), 1.0)
                if q.get("log"):
                    lo, hi = math.log(q["low"]), math.log(q["high"])
                    v = math.exp(lo + u * (hi - lo))
                else:
                    v = q["low"] + u * (q["high"] - q["low"])
                out[q["name"]] = min(max(v, q["low"]), q["high"])
            elif q["type"] == "int":
                out[q["name"]] = q["low"] + int(round(float(z[j]) * (q["high"] - q["low"])))
            else:
                out[q["name"]] = q["choices"][int(round(float(z[j])))]
        return out

    def _fixed_features(self) -> list[dict]:
        levels = []
        for j in self.fixed_dims:
            q = self.p.params[j]
            if q["type"] == "int":
                k = q["high"] - q["low"] + 1
                levels.append([i / (k - 1) for i in range(k)])
            else:
                levels.append([float(i) for i in range(len(q["choices"]))])
        return [dict(zip(self.fixed_dims, combo, strict=True)) for combo in
                itertools.product(*levels)]  # fmt: skip

    def ask(self) -> dict:
        t = len(self.y)
        if t < self.n0:
            self.z = self._from_design(self.design[t])
        else:
            import torch

            with torch.random.fork_rng():  # its own stream: independent of the interleaving
                torch.manual_seed(self.seed * 100_003 + t)
                self.z = self._suggest(torch)
        return self._decode(self.z)

    def _suggest(self, torch) -> np.ndarray:
        from botorch.acquisition import LogExpectedImprovement
        from botorch.fit import fit_gpytorch_mll
        from botorch.models import MixedSingleTaskGP, SingleTaskGP
        from botorch.models.transforms import Standardize
        from botorch.optim import optimize_acqf, optimize_acqf_mixed
        from gpytorch.mlls import ExactMarginalLogLikelihood

        X = torch.tensor(np.array(self.X), dtype=torch.float64)
        Y = torch.tensor(self.y, dtype=torch.float64).unsqueeze(-1)
        d = X.shape[1]
        upper = torch.ones(d, dtype=torch.float64)
        for j in self.cat_dims:
            upper[j] = len(self.p.params[j]["choices"]) - 1
        bounds = torch.stack([torch.zeros(d, dtype=torch.float64), upper])
        with warnings.catch_warnings():  # an occasional line-search warning is not news here
            warnings.simplefilter("ignore")
            if self.cat_dims:
                model = MixedSingleTaskGP(X, Y, cat_dims=self.cat_dims,
                                          outcome_transform=Standardize(1))  # fmt: skip
            else:
                model = SingleTaskGP(X, Y, outcome_transform=Standardize(1))
            fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
            acq = LogExpectedImprovement(model, best_f=Y.max())
            if self.fixed_dims:
                x, _ = optimize_acqf_mixed(
                    acq, bounds, q=1, num_restarts=self.mixed_restarts,
                    raw_samples=self.mixed_raw, fixed_features_list=self._fixed_features(),
                )  # fmt: skip
            else:
                x, _ = optimize_acqf(acq, bounds, q=1, num_restarts=10, raw_samples=512)
        return x.detach().numpy().reshape(-1)

    def tell(self, value: float) -> None:
        self.X.append(self.z)
        self.y.append(value)

    def close(self) -> None:
        pass


def make_method(method: str, p: Problem, seed: int, n0: int, args):
    if method in OURS:
        return Ours(p, seed, n0, OURS[method])
    if method == "botorch":
        return BoTorchMethod(p, seed, n0, args.botorch_mixed_restarts, args.botorch_mixed_raw)
    return OptunaMethod(p, seed, n0, method.removeprefix("optuna-"))


# -- the tables -----------------------------------------------------------------------------------
def print_tables(runs: list[dict], args, problems: dict[str, Problem]) -> None:
    Ts = checkpoints(args.budget)
    verdicts = []
    for name, rows in problem_rows(runs, args):
        p = problems[name]
        kinds = ", ".join(
            f"{q['name']} {q['type']}{' log' if q.get('log') else ''}" for q in p.params
        )
        print(
            f"\n{name}: {kinds}; f* = {p.f_max:.6f}, initial design {p.n_initial(args.n_initial)}"
            f", budget {args.budget}; simple regret mean ± s.e. over seeds"
        )
        print_regret_table(rows, Ts, 3, seconds_text)
        for ours in [m for m in ("ours", "ours-ucb") if m in rows]:
            print_ratios(rows, ours, Ts, exclude=OURS)
        if (v := verdict(rows, "ours", "botorch", Ts)) is not None:
            verdicts.append((name, *v))
    if verdicts:
        print(
            f"\ntarget (regret within one s.e. of BoTorch or better at every T, BoTorch's time "
            f"per suggestion >= {TIME_TARGET:g}x ours):"
        )
        print("| problem | regret | time ratio | target |")
        print("|---|---|---|---|")
        for name, regret_ok, speed in verdicts:
            holds = regret_ok and speed >= TIME_TARGET
            print(
                f"| {name} | {'ok' if regret_ok else 'WORSE'} | {speed:.3g}x | "
                f"{'holds' if holds else 'MISSED'} |"
            )


# -- entry point ----------------------------------------------------------------------------------
def parse(argv=None):
    ap = parser(__doc__, PROBLEMS, METHODS, DEFAULT_METHODS)
    ap.add_argument("--full", action="store_true", help="the issue's size: 10 seeds, T = 80")
    ap.add_argument("--seeds", type=int, help="seeds 0 .. N-1 (default 2; --full: 10)")
    ap.add_argument("--budget", type=int, help="evaluations per run (default 20; --full: 80)")
    ap.add_argument("--n-initial", type=int, default=None,
                    help="initial design size of every method (default max(2, min(10, "
                    "parameters + 1)))")  # fmt: skip
    ap.add_argument(
        "--botorch-mixed-restarts",
        type=int,
        default=2,
        help="optimize_acqf_mixed num_restarts per (int, category) pair (default 2)",
    )
    ap.add_argument(
        "--botorch-mixed-raw",
        type=int,
        default=64,
        help="optimize_acqf_mixed raw_samples per (int, category) pair (default 64)",
    )
    add_out_threads(ap)
    args = ap.parse_args(argv)
    if args.seeds is None:
        args.seeds = 10 if args.full else 2
    if args.budget is None:
        args.budget = 80 if args.full else 20
    check_args(ap, args, (("seeds", 1), ("budget", 2), ("threads", 1), ("n_initial", 2),
                          ("botorch_mixed_restarts", 1), ("botorch_mixed_raw", 1)))  # fmt: skip
    return args


def main(argv=None) -> None:
    args = parse(argv)
    check_imports(args.methods)
    # a suggestion's seconds: its ask only; the params asked are stored
    make = partial(make_method, args=args)
    run = partial(run_interleaved, args=args, make=make, keep_params=True)
    runs, problems = run_benchmark("space_regret", args, make_problems, run, FORMAT)
    print_tables(runs, args, problems)


if __name__ == "__main__":
    main()
