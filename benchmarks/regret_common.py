"""What the regret benchmarks share (``space_regret.py``, ``study_regret.py``,
``optuna_sampler.py``): the Hartmann function, the atomic results file, the interleaved runs and
their resume-and-save loop, thread limits, import and argument checks, and the tables.

Imported as ``regret_common``: a script run as ``python benchmarks/<name>.py`` has this folder on
``sys.path``, as does anything that imports the scripts with ``benchmarks/`` on it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator

import numpy as np

#: the T at which simple regret is reported (those <= the budget; else the budget itself)
CHECKPOINTS = (20, 40, 80)
INSTALL_HINT = (
    "BoTorch, GPyTorch and Optuna are not dependencies of frontierbo; install the CPU build of "
    "torch first (pip install torch==2.13.0), then pip install botorch optuna threadpoolctl, "
    "or leave these methods out with --methods"
)

# Hartmann constants (https://www.sfu.ca/~ssurjano/hart3.html, hart6.html).
HARTMANN_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])
HARTMANN3_A = np.array([[3.0, 10, 30], [0.1, 10, 35], [3.0, 10, 30], [0.1, 10, 35]])
HARTMANN3_P = 1e-4 * np.array(
    [[3689, 1170, 2673], [4699, 4387, 7470], [1091, 8732, 5547], [381, 5743, 8828]]
)
HARTMANN6_A = np.array(
    [
        [10, 3, 17, 3.5, 1.7, 8],
        [0.05, 10, 17, 0.1, 8, 14],
        [3, 3.5, 1.7, 10, 17, 8],
        [17, 8, 0.05, 10, 0.1, 14],
    ]
)
HARTMANN6_P = 1e-4 * np.array(
    [
        [1312, 1696, 5569, 124, 8283, 5886],
        [2329, 4135, 8307, 3736, 1004, 9991],
        [2348, 1451, 3522, 2883, 3047, 6650],
        [4047, 8828, 8732, 5743, 1091, 381],
    ]
)


def hartmann(X: np.ndarray, A: np.ndarray, P: np.ndarray) -> np.ndarray:
    """sum_i alpha_i exp(-sum_j A_ij (x_j - P_ij)^2) for each row of X: Hartmann, sign flipped."""
    X = np.atleast_2d(X)
    inner = np.einsum("ij,nij->ni", A, (X[:, None, :] - P[None]) ** 2)
    return np.exp(-inner) @ HARTMANN_ALPHA


# -- the results file -----------------------------------------------------------------------------
def load_results(path: str | None, format: str) -> list[dict]:
    """The runs stored at ``path`` ([] when there is none); ValueError: not of ``format``."""
    if path is None or not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    if not isinstance(data, dict) or data.get("format") != format:
        raise ValueError(f"not a results file of this script (format {format!r})")
    return data["runs"]


def resume(path: str | None, format: str) -> list[dict]:
    """:func:`load_results`, or exit saying why a file that is there cannot be resumed from."""
    try:
        return load_results(path, format)
    except (ValueError, KeyError) as exc:  # not ours, or torn by hand: say so, touch nothing
        sys.exit(f"--out {path!r}: cannot resume from it ({exc!r}); choose another file")


def save_results(path: str, runs: list[dict], format: str, prefix: str) -> None:
    """Write atomically: an interrupted run leaves the previous file whole."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=prefix, suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump({"format": format, "runs": runs}, fh)
    os.chmod(tmp, 0o644)  # mkstemp's 0600 would make the results private to this user
    os.replace(tmp, path)


# -- interleaved runs (space_regret.py, optuna_sampler.py) ----------------------------------------
# A problem ``p`` there has ``name``, ``f(params) -> float``, ``f_max`` and ``n_initial(override)``;
# a method is an object with ask() -> params, tell(value) and close().
def run_interleaved(
    p, seed: int, methods: list[str], args, make: Callable, *, time_tell=False, keep_params=False
) -> dict[str, dict]:
    """One run of each method (``make(method, p, seed, n0)``) on ``p`` with ``seed``, one
    suggestion each in turn. The seconds of a suggestion: its ask (and its tell: ``time_tell``),
    never the objective; ``keep_params``: the asked params are stored too."""
    n0 = p.n_initial(args.n_initial)
    runners = {m: make(m, p, seed, n0) for m in methods}
    params = {m: [] for m in methods}
    values = {m: [] for m in methods}
    seconds = {m: [] for m in methods}
    try:
        for _ in range(args.budget):
            for m, runner in runners.items():
                start = time.perf_counter()
                x = runner.ask()
                elapsed = time.perf_counter() - start
                value = float(p.f(x))
                start = time.perf_counter()
                runner.tell(value)
                if time_tell:
                    elapsed += time.perf_counter() - start
                seconds[m].append(elapsed)
                params[m].append(x)
                values[m].append(value)
    finally:
        for runner in runners.values():
            runner.close()
    out = {}
    for m in methods:
        v = np.array(values[m])
        out[m] = {
            "problem": p.name, "method": m, "seed": seed, "budget": args.budget,
            "n_initial": n0, "f_max": p.f_max, **({"params": params[m]} if keep_params else {}),
            "values": v.tolist(), "regret": (p.f_max - np.maximum.accumulate(v)).tolist(),
            "ask_seconds": seconds[m],
        }  # fmt: skip
    return out


def run_all(
    args, problems: dict, runs: list[dict], run: Callable, format: str, prefix: str,
    *, cells_in_run_order: bool = False,
) -> list[dict]:  # fmt: skip
    """``runs`` and, per seed and problem, ``run(p, seed, methods)`` of the methods without a
    stored run of ``args.budget`` (their order rotated), saved to ``args.out`` after each; a
    progress line each (its methods in ``args.methods``' order, or as run)."""
    done = {(r["problem"], r["method"], r["seed"]): r for r in runs}
    for (name, _, _), r in done.items():  # a file of another problem definition: refuse it
        if name in problems and abs(r["f_max"] - problems[name].f_max) > 1e-12:
            raise ValueError(f"{name}: f* of the stored runs differs; use another --out")
    for seed in range(args.seeds):
        for i, name in enumerate(args.problems):
            p = problems[name]
            todo = [
                m for m in args.methods
                if (name, m, seed) not in done or done[(name, m, seed)]["budget"] < args.budget
            ]  # fmt: skip
            if not todo:
                continue
            shift = (seed + i) % len(todo)  # rotate who goes first in each round
            todo = todo[shift:] + todo[:shift]
            start = time.perf_counter()
            result = run(p, seed, todo)
            for m, r in result.items():
                done[(name, m, seed)] = r
            if args.out:
                save_results(args.out, list(done.values()), format, prefix)
            order = todo if cells_in_run_order else [m for m in args.methods if m in result]
            cells = ", ".join(f"{m} {result[m]['regret'][-1]:.3g}" for m in order)
            print(
                f"  {name:9s} seed {seed:2d}: regret@{args.budget} {cells} "
                f"({time.perf_counter() - start:.1f} s)",
                flush=True,
            )
    return list(done.values())


def run_benchmark(
    name: str, args, make_problems: Callable[[], dict], run: Callable, format: str,
    *, versions: str = "", cells_in_run_order: bool = False,
) -> tuple[list[dict], dict]:  # fmt: skip
    """Threads limited, ``args.out`` resumed, the problems made, a header line, then
    :func:`run_all` and its time: (every run, the problems)."""
    limits = limit_threads(args.threads, args.methods)  # noqa: F841 - held for the whole run
    previous = resume(args.out, format)
    problems = make_problems()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"{name}: {args.seeds} seeds, T = {args.budget}, methods {', '.join(args.methods)}; "
        f"{versions}threads {args.threads}, {os.cpu_count()} cores, load average {load:.2f}",
        flush=True,
    )
    start = time.perf_counter()
    prefix = f".{name.replace('_', '-')}-"
    runs = run_all(args, problems, previous, run, format, prefix,
                   cells_in_run_order=cells_in_run_order)  # fmt: skip
    print(f"\n{time.perf_counter() - start:.0f} s; results: {args.out or '(not saved: --out)'}")
    return runs, problems


# -- the tables -----------------------------------------------------------------------------------
def checkpoints(budget: int) -> list[int]:
    return [t for t in CHECKPOINTS if t <= budget] or [budget]


def summarise(runs: list[dict], problem: str, method: str, seeds: int, budget: int):
    """({T: (mean regret, standard error)}, mean model-based seconds per suggestion, runs)."""
    mine = [r for r in runs if r["problem"] == problem and r["method"] == method]
    mine = [r for r in mine if r["seed"] < seeds and r["budget"] >= budget]
    if not mine:
        return None
    regret = {}
    for T in checkpoints(budget):
        at = np.array([r["regret"][T - 1] for r in mine])
        se = at.std(ddof=1) / math.sqrt(len(at)) if len(at) > 1 else float("nan")
        regret[T] = (float(at.mean()), float(se))
    skip = 0 if method == "random" else mine[0]["n_initial"]
    times = [s for r in mine for s in r["ask_seconds"][skip:budget]]
    return regret, (float(np.mean(times)) if times else float("nan")), len(mine)


def summarise_methods(runs: list[dict], problem: str, args) -> dict[str, tuple]:
    """:func:`summarise` of each of ``args.methods`` that has runs on ``problem``."""
    rows = {m: summarise(runs, problem, m, args.seeds, args.budget) for m in args.methods}
    return {m: s for m, s in rows.items() if s is not None}


def problem_rows(runs: list[dict], args) -> Iterator[tuple[str, dict]]:
    """(problem, :func:`summarise_methods`) of each of ``args.problems`` that has runs."""
    for problem in args.problems:
        rows = summarise_methods(runs, problem, args)
        if rows:
            yield problem, rows


def within_se(ours: tuple, theirs: tuple) -> bool:
    """(mean, s.e.) pairs: our mean <= their mean + their standard error (within it or better)."""
    (a, _), (b, se) = ours, theirs
    return a <= b + (0.0 if math.isnan(se) else se)


def verdict(rows: dict, ours: str, base: str, Ts: list[int]) -> tuple[bool, float] | None:
    """(``ours`` within one s.e. of ``base`` or better at every T, base's time / ours), or None
    when ``rows`` lacks either."""
    if ours not in rows or base not in rows:
        return None
    (mine, my_sec, _), (theirs, their_sec, _) = rows[ours], rows[base]
    return all(within_se(mine[T], theirs[T]) for T in Ts), their_sec / my_sec


def seconds_text(sec: float) -> str:
    return f"{sec * 1e3:.3g} ms" if sec < 1 else f"{sec:.3g} s"


def print_regret_table(
    rows: dict, Ts: list[int], digits: int, seconds: Callable[[float], str]
) -> None:
    """Per method: seeds, mean regret ± s.e. at each T (``digits`` significant), time per
    suggestion (``seconds(sec)``)."""
    print(f"| method | seeds | {' | '.join(f'T = {T}' for T in Ts)} | s / suggestion |")
    print(f"|---|---|{'---|' * len(Ts)}---|")
    for m, (regret, sec, count) in rows.items():
        cells = " | ".join(f"{regret[T][0]:.{digits}g} ± {regret[T][1]:.2g}" for T in Ts)
        print(f"| {m} | {count} | {cells} | {seconds(sec)} |")


def print_ratios(rows: dict, ours_name: str, Ts: list[int], exclude: Iterable[str]) -> None:
    """Per baseline (the methods in ``rows`` not in ``exclude``) and T: our mean regret / its
    mean regret, and "ok" when ours <= its mean + its standard error (within its s.e. or better);
    then its time per suggestion / ours."""
    exclude = set(exclude)
    ours, our_sec, _ = rows[ours_name]
    print(f"\n| {ours_name} vs | {' | '.join(f'regret ratio T = {T}' for T in Ts)} | time ratio |")
    print(f"|---|{'---|' * len(Ts)}---|")
    for base in [m for m in rows if m not in exclude]:
        theirs, their_sec, _ = rows[base]
        cells = []
        for T in Ts:
            a, b = ours[T][0], theirs[T][0]
            ratio = "0 / 0" if a == b == 0 else (f"{a / b:.2f}" if b > 0 else "inf")
            cells.append(f"{ratio} ({'ok' if within_se(ours[T], theirs[T]) else 'WORSE'})")
        print(f"| {base} | {' | '.join(cells)} | {their_sec / our_sec:.3g}x |")


# -- entry point ----------------------------------------------------------------------------------
def parser(doc: str, problems: tuple, methods: tuple, default_methods: tuple):
    """An ArgumentParser described by ``doc``'s first paragraph, with --problems, --methods."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--problems", nargs="+", choices=problems, default=list(problems))
    ap.add_argument("--methods", nargs="+", choices=methods, default=list(default_methods))
    return ap


def add_out_threads(
    ap, default: str | None = None, help: str = "per-seed results (JSON), resumed if it exists"
) -> None:
    ap.add_argument("--out", default=default, help=help)
    ap.add_argument("--threads", type=int, default=1, help="torch / BLAS threads (default 1)")


def check_args(ap, args, lows: Iterable[tuple[str, int]]) -> None:
    """``ap.error`` for an option below its ``(name, low)`` or an --n-initial above --budget."""
    for name, low in lows:
        value = getattr(args, name)
        if value is not None and value < low:
            ap.error(f"--{name.replace('_', '-')} must be an integer >= {low}, got {value}")
    n_initial = getattr(args, "n_initial", None)
    if n_initial is not None and n_initial > args.budget:
        ap.error(f"--n-initial must be <= --budget ({args.budget}), got {n_initial}")


def limit_threads(n: int, methods: list[str]):
    """torch and every BLAS / OpenMP pool of this process to ``n`` threads (kept alive)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        sys.exit("--threads needs threadpoolctl: pip install threadpoolctl")
    if any(m in ("botorch", "optuna-gp") for m in methods):
        import torch

        torch.set_num_threads(n)
    return threadpool_limits(limits=n)


def check_imports(methods: list[str], install_hint: str = INSTALL_HINT) -> None:
    """Exit naming the first module a method of ``methods`` needs that does not import."""
    needed = {"botorch": ("torch", "botorch", "gpytorch"), "optuna-gp": ("torch", "optuna"),
              "optuna-tpe": ("optuna",)}  # fmt: skip
    for m in methods:
        for module in needed.get(m, ()):
            try:
                __import__(module)
            except ImportError:
                sys.exit(f"method {m!r} needs {module!r}, which does not import. {install_hint}")
