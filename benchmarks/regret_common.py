"""What the regret benchmarks share (``space_regret.py``, ``study_regret.py``): the Hartmann
function, the atomic results file, thread limits and import checks, and the tables' statistics.

Imported as ``regret_common``: a script run as ``python benchmarks/<name>.py`` has this folder on
``sys.path``, as does anything that imports the scripts with ``benchmarks/`` on it.
"""

from __future__ import annotations

import json
import math
import os
import sys
import tempfile
from collections.abc import Callable, Iterable

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


def within_se(ours: tuple, theirs: tuple) -> bool:
    """(mean, s.e.) pairs: our mean <= their mean + their standard error (within it or better)."""
    (a, _), (b, se) = ours, theirs
    return a <= b + (0.0 if math.isnan(se) else se)


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
