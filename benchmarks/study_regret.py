"""Sample efficiency of a frontierbo GP-UCB study against the tools users would pick (issue 13, 5).

What is measured: simple regret r_T = max_i f(x_i) - max_{t <= T} f(x_t) after T = 20, 40, 80
evaluations (max over the *finite* candidate set, so r_T = 0 means its best row was found), and
the wall time per suggestion: the ask / model fit / acquisition time only, never the objective
(a table lookup here) nor the bookkeeping of the tell. Everything is maximised.

Problems (each a finite candidate set drawn once per seed, ``default_rng([seed, crc32(name)])``):

* ``branin``: 1000 uniform rows of [-5, 10] x [0, 15], f = -branin (global max -0.397887).
* ``hartmann3``: 1000 uniform rows of [0, 1]^3, f = sum_i alpha_i exp(-sum_j A_ij (x_j - P_ij)^2)
  (the positive form of the usual minimisation; global max 3.86278).
* ``hartmann6``: 2000 uniform rows of [0, 1]^6, the same form (global max 3.32237).
* ``property``: the PO-GP-UCB paper's Singapore private-property data
  (:func:`frontierbo.po.problems.property.load_property_data`, the seeded 2004-row subsample of
  ``ura/ura_private_projects.csv``): candidates its preprocessed (lon, lat) rows, f = -log
  price_psm as in the paper, i.e. find the cheapest property per m^2. Skipped with a note when
  the data file is not found (see :mod:`frontierbo.data` for where it is looked for).

Methods, all with the same candidates, budget and initial design size n0 =
``GPUCBSampler().initial_trials(d)`` (= max(2, min(10, d + 1))):

* ``ours``: ``frontierbo.create_study(..., algorithm="gp-ucb")`` in a temporary SQLite file,
  default settings; the time is that of ``study.ask()`` (one database transaction included).
* ``ours-ei``: the same study with ``algorithm="gp-ei"``: log expected improvement on the same
  model (our answer to BoTorch's qLogEI, on our GP and fits).
* ``botorch``: BoTorch 0.18 ``SingleTaskGP`` with its defaults, ``Normalize(d, bounds=`` the
  candidates' column ranges ``)`` and ``Standardize(1)``, refitted with ``fit_gpytorch_mll``
  before every suggestion; ``qLogExpectedImprovement`` (q = 1) maximised over the rows not yet
  queried with ``optimize_acqf_discrete``. Its n0 initial rows are the very rows our study
  starts with (frontierbo's random sampler with the same seed), so the two differ only after.
* ``optuna-gp`` / ``optuna-tpe``: Optuna's ``GPSampler`` / ``TPESampler`` (seeded,
  ``n_startup_trials=n0``, otherwise defaults) on the *continuous* box spanned by the
  candidates (``suggest_float`` per column between its min and max). The suggested point is
  snapped to the nearest row not yet evaluated (Euclidean distance on columns scaled to the unit
  cube by the candidates' ranges), and Optuna is told that row's value *at that row's
  coordinates* (the asked trial is closed as FAIL, which both samplers ignore, and the snapped
  row is added with ``study.add_trial``), so its model never sees a value at a point it was not
  evaluated at. This is how a continuous sampler is made fair on a finite set: a categorical
  over row ids would throw away the geometry that its model relies on.
* ``random``: uniformly random rows without repetition (frontierbo's random sampler).

Fairness: the same seed-derived candidate set for every method, the same initial design size
(and for ``botorch`` the same initial rows), the same budget, and the same threads:
``--threads`` (default 1) limits torch and every BLAS / OpenMP pool through threadpoolctl.
Each method's own randomness (study seed, ``torch.manual_seed``, sampler seed) is the seed.
The time per suggestion is averaged over the model-based suggestions (trial n0 onwards; all
trials for ``random``); the per-trial times are in the JSON file.

Run (BoTorch, GPyTorch and Optuna are not dependencies of frontierbo)::

    pip install torch==2.13.0 && pip install botorch optuna threadpoolctl
    python benchmarks/study_regret.py --out study_regret.json            # 30 seeds, T = 80
    python benchmarks/study_regret.py --seeds 2 --budget 20 --problems branin hartmann3

Results are written after every finished run (atomically: a temporary file, then
``os.replace``); a run started again with the same ``--out`` skips the (problem, method, seed)
runs already there, so a long benchmark can be done in chunks and interrupted at any time. One
process per ``--out`` file: two processes writing one file would overwrite each other's runs.

Output, per problem: mean simple regret ± standard error over seeds at each T and the mean time
per suggestion for every method; then, per baseline, our regret / its regret at each T ("ok":
ours <= its mean + its standard error) and its time per suggestion / ours.
"""

from __future__ import annotations

import os
import tempfile
import time
import warnings
import zlib
from dataclasses import dataclass

import numpy as np

from frontierbo.study.create import candidates_sha256, create_study
from frontierbo.study.samplers import GPUCBSampler, RandomSampler, SamplerAskTell, unit_cube
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
    limit_threads,
    parser,
    print_ratios,
    print_regret_table,
    problem_rows,
    resume,
    save_results,
)

PROBLEMS = ("branin", "hartmann3", "hartmann6", "property")
METHODS = ("ours", "ours-ei", "botorch", "optuna-gp", "optuna-tpe", "random")
#: our study algorithm behind each of our method names
OURS = {"ours": "gp-ucb", "ours-ei": "gp-ei"}
FORMAT = "frontierbo-study-regret/1"


# -- problems -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Problem:
    """A finite maximisation problem: ``candidates`` (n, d) and their ``values`` (n,)."""

    name: str
    candidates: np.ndarray
    values: np.ndarray

    @property
    def n_initial(self) -> int:
        return GPUCBSampler().initial_trials(self.candidates.shape[1])


def make_problem(name: str, seed: int) -> Problem:
    """The candidate set of ``name`` for ``seed`` (FileNotFoundError: property data missing)."""
    if name == "property":
        from frontierbo.po.problems.property import load_property_data

        data = load_property_data(seed=seed)  # its own seeded subsample; values = -log price
        return Problem(name, data.inputs, data.values)
    rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
    if name == "branin":
        from frontierbo.po.problems.branin import branin

        X = rng.uniform([-5.0, 0.0], [10.0, 15.0], size=(1000, 2))
        return Problem(name, X, -branin(X[:, 0], X[:, 1]))
    if name == "hartmann3":
        X = rng.uniform(size=(1000, 3))
        return Problem(name, X, hartmann(X, HARTMANN3_A, HARTMANN3_P))
    X = rng.uniform(size=(2000, 6))
    return Problem(name, X, hartmann(X, HARTMANN6_A, HARTMANN6_P))


# -- methods: each returns (rows in query order, seconds per suggestion) --------------------------
def run_ours(
    p: Problem, budget: int, seed: int, algorithm: str = "gp-ucb"
) -> tuple[list[int], list[float]]:
    rows, seconds = [], []
    with tempfile.TemporaryDirectory(prefix="study-regret-") as folder:
        study = create_study(
            p.candidates, storage=os.path.join(folder, "study.db"), algorithm=algorithm,
            seed=seed, direction="maximize",
        )  # fmt: skip
        for _ in range(budget):
            start = time.perf_counter()
            trial = study.ask()
            seconds.append(time.perf_counter() - start)
            study.tell(trial, float(p.values[trial.row]))
            rows.append(trial.row)
        study.storage.close()
    return rows, seconds


def random_rows(p: Problem, count: int, seed: int) -> tuple[list[int], list[float]]:
    """Uniform rows without repetition: the rows a random (or GP-UCB, during its initial
    design) study with this seed asks."""
    loop = SamplerAskTell(p.candidates, RandomSampler(), seed=seed)
    rows, seconds = [], []
    for _ in range(count):
        start = time.perf_counter()
        row = loop.ask()
        seconds.append(time.perf_counter() - start)
        loop.tell(row, float(p.values[row]))
        rows.append(row)
    return rows, seconds


def run_botorch(p: Problem, budget: int, seed: int) -> tuple[list[int], list[float]]:
    import torch
    from botorch.acquisition.logei import qLogExpectedImprovement
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from botorch.models.transforms import Normalize, Standardize
    from botorch.optim import optimize_acqf_discrete
    from gpytorch.mlls import ExactMarginalLogLikelihood

    torch.manual_seed(seed)  # fit restarts and the qMC sampler
    X = torch.tensor(p.candidates, dtype=torch.float64)
    y = torch.tensor(p.values, dtype=torch.float64).unsqueeze(-1)
    bounds = torch.stack([X.min(dim=0).values, X.max(dim=0).values])
    rows, seconds = random_rows(p, min(p.n_initial, budget), seed)
    free = np.ones(len(X), dtype=bool)
    free[rows] = False
    while len(rows) < budget:
        start = time.perf_counter()
        model = SingleTaskGP(
            X[rows],
            y[rows],
            input_transform=Normalize(X.shape[1], bounds=bounds),
            outcome_transform=Standardize(1),
        )
        with warnings.catch_warnings():  # an occasional line-search warning is not news here
            warnings.simplefilter("ignore")
            fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
        acq = qLogExpectedImprovement(model, best_f=y[rows].max())
        remaining = np.flatnonzero(free)
        choice, _ = optimize_acqf_discrete(acq, q=1, choices=X[remaining])
        # the choice is one of the rows given: find which (the first free one of equal rows)
        match = torch.all(X[remaining] == choice, dim=1).nonzero()
        row = int(remaining[int(match[0, 0])])
        seconds.append(time.perf_counter() - start)
        rows.append(row)
        free[row] = False
    return rows, seconds


def run_optuna(p: Problem, budget: int, seed: int, kind: str) -> tuple[list[int], list[float]]:
    import optuna
    from optuna.distributions import FloatDistribution
    from optuna.trial import TrialState, create_trial

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    n0 = p.n_initial
    if kind == "gp":
        sampler = optuna.samplers.GPSampler(seed=seed, n_startup_trials=n0)
    else:
        sampler = optuna.samplers.TPESampler(seed=seed, n_startup_trials=n0)
    lo, hi = p.candidates.min(axis=0), p.candidates.max(axis=0)
    names = [f"x{j}" for j in range(len(lo))]
    space = {
        k: FloatDistribution(float(a), float(b)) for k, a, b in zip(names, lo, hi, strict=True)
    }
    scaled, span = unit_cube(p.candidates), np.where(hi > lo, hi - lo, 1.0)
    study = optuna.create_study(direction="maximize", sampler=sampler)
    free = np.ones(len(p.values), dtype=bool)
    rows, seconds = [], []
    for _ in range(budget):
        start = time.perf_counter()
        trial = study.ask(space)
        x = (np.array([trial.params[k] for k in names]) - lo) / span
        remaining = np.flatnonzero(free)
        row = int(remaining[np.argmin(((scaled[remaining] - x) ** 2).sum(axis=1))])
        seconds.append(time.perf_counter() - start)
        study.tell(trial, state=TrialState.FAIL)
        params = {k: float(v) for k, v in zip(names, p.candidates[row], strict=True)}
        study.add_trial(create_trial(params=params, distributions=space, value=p.values[row]))
        rows.append(row)
        free[row] = False
    return rows, seconds


def run_method(method: str, p: Problem, budget: int, seed: int):
    if method in OURS:
        return run_ours(p, budget, seed, OURS[method])
    if method == "botorch":
        return run_botorch(p, budget, seed)
    if method == "random":
        return random_rows(p, budget, seed)
    return run_optuna(p, budget, seed, method.removeprefix("optuna-"))


def record(method: str, p: Problem, seed: int, rows: list[int], seconds: list[float]) -> dict:
    values = p.values[rows]
    return {
        "problem": p.name,
        "method": method,
        "seed": seed,
        "budget": len(rows),
        "n_candidates": len(p.values),
        "d": p.candidates.shape[1],
        "n_initial": p.n_initial,
        "candidates_sha256": candidates_sha256(p.candidates),
        "f_max": float(p.values.max()),
        "rows": [int(r) for r in rows],
        "values": values.tolist(),
        "regret": (p.values.max() - np.maximum.accumulate(values)).tolist(),
        "ask_seconds": seconds,
    }


def run_all(args, runs: list[dict]) -> list[dict]:
    done = {(r["problem"], r["method"], r["seed"]): r for r in runs}
    for name in args.problems:
        for seed in range(args.seeds):
            try:
                p = make_problem(name, seed)
            except FileNotFoundError as exc:
                print(f"note: skipping problem {name!r}: {exc}", flush=True)
                break
            sha = candidates_sha256(p.candidates)
            for method in args.methods:
                old = done.get((name, method, seed))
                if old is not None and old["candidates_sha256"] != sha:
                    raise ValueError(
                        f"{args.out!r}: the {name} candidates of seed {seed} differ from the "
                        "stored run's; use another --out"
                    )
                if old is not None and old["budget"] >= args.budget:
                    continue
                start = time.perf_counter()
                rows, seconds = run_method(method, p, args.budget, seed)
                done[(name, method, seed)] = record(method, p, seed, rows, seconds)
                save_results(args.out, list(done.values()), FORMAT, ".study-regret-")
                print(
                    f"  {name:9s} {method:10s} seed {seed:3d}: regret@{args.budget} "
                    f"{done[(name, method, seed)]['regret'][-1]:.4g} "
                    f"({time.perf_counter() - start:.1f} s)",
                    flush=True,
                )
    return list(done.values())


# -- the tables -----------------------------------------------------------------------------------
def print_tables(runs: list[dict], args) -> None:
    Ts = checkpoints(args.budget)
    for problem, rows in problem_rows(runs, args):
        first = next(r for r in runs if r["problem"] == problem)
        print(
            f"\n{problem}: n = {first['n_candidates']}, d = {first['d']}, initial design "
            f"{first['n_initial']}, budget {args.budget}; simple regret mean ± s.e. over seeds"
        )
        print_regret_table(rows, Ts, 4, lambda sec: f"{sec * 1e3:.3g} ms")
        for name in [m for m in OURS if m in rows]:
            print_ratios(rows, name, Ts, exclude=(*OURS, "random"))


# -- entry point ----------------------------------------------------------------------------------
def parse(argv=None):
    ap = parser(__doc__, PROBLEMS, METHODS, METHODS)
    ap.add_argument("--seeds", type=int, default=30, help="seeds 0 .. N-1 (default 30)")
    ap.add_argument("--budget", type=int, default=80, help="evaluations per run (default 80)")
    add_out_threads(ap, "study_regret.json", "per-seed results (JSON), resumed")
    args = ap.parse_args(argv)
    check_args(ap, args, (("seeds", 1), ("budget", 2), ("threads", 1)))
    return args


def main(argv=None) -> None:
    args = parse(argv)
    check_imports(args.methods)
    limits = limit_threads(args.threads, args.methods)  # noqa: F841 - held for the whole run
    previous = resume(args.out, FORMAT)
    runs = run_all(args, previous)
    print(f"\nresults: {args.out}; threads: {args.threads}")
    print_tables(runs, args)


if __name__ == "__main__":
    main()
