"""``frontierbo run ldp-bo``: (LDP-)ATA / TGP / MoMA-GP-UCB on your own reward table.

The CSV file (header row, comma-separated, UTF-8) holds one column per **arm** and one row per
**reward observation**, like the stock data (one column per stock, one row per day). Following
the real-data recipe (:func:`frontierbo.ldp.problems.problem_from_table`,
docs/decisions.md#ldp-bo-real-data-preprocessing-from-the-reference-code):

* ``f`` = the column means (the arm means to maximise), ``B = max |f|``;
* ``K`` = the covariance (ddof = 1) of the z-scored columns, a correlation matrix;
* noise = value - column mean, ``R = max |noise|``; ``v`` = mean squared value,
  ``c`` = mean squared noise; ``alpha = 1``;
* a reward of arm a is the value of arm a in a uniformly random row.

With ``--epsilon`` each reward is privatised by CTL(eps) (Laplace scale ``2 (B + R) / eps``,
:class:`frontierbo.ldp.randomiser.CTL`) before the algorithm sees it (the LDP version);
without it the non-private heavy-tailed version runs on the raw rewards. Parameters: the
``practical`` profile, ``lam = 1``, ``delta = 0.1`` and the common ``beta_scale`` of the
reproduction (:data:`frontierbo.ldp.experiment.BETA_SCALE`) unless ``--beta-scale`` is given.

Regret is measured on ``f`` in normalised units ``f / max f`` (when ``max f > 0``; otherwise in
raw units) and in raw units. The "best arm found" is the arm played most often.

Privacy note: ``B`` and ``R`` are computed from the table itself so that every value lies in
``[-(B + R), B + R]`` (the range CTL's eps-LDP guarantee covers). In a real deployment these
bounds must be fixed in advance, not read off the users' data; the computed constants are
reported so that they can be reviewed.

Columns that are not arms (e.g. a ``Date`` column) are dropped with ``exclude``
(``--exclude Date``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from frontierbo.io import check_magnitude, column, data_path, fmt_number, read_table
from frontierbo.ldp.experiment import (
    BETA_SCALE,
    DELTA,
    LAM,
    PROFILE,
    one_blas_thread,
    run_trial,
)
from frontierbo.ldp.problems import (
    EmpiricalRewards,
    LDPProblem,
    kernel_from_samples,
    problem_from_table,
)
from frontierbo.ldp.system import ALGORITHMS as ALGORITHMS_RUN
from frontierbo.ldp.system import RUN
from frontierbo.systems.userrun import implements, trace_points

__all__ = ["format_ldp_result", "load_reward_table", "run_ldp_on_csv"]


def load_reward_table(
    path: str | os.PathLike, exclude: Sequence[str] | str | None = None
) -> tuple[list[str], np.ndarray]:
    """Read the CSV: returns the arm names (header, without ``exclude``) and the (rows, arms)
    float table.

    Raises FileNotFoundError (``--data`` missing) or ValueError naming the file, the column and
    the row: a non-numeric, empty, NaN or infinite cell, one beyond
    ``frontierbo.io.MAX_ABS_VALUE`` (1e150) in magnitude, an unknown ``--exclude`` column, a
    constant column, arm means all equal (every arm optimal: like ``run gp-ucb``'s constant
    target, a constant objective is refused), fewer than 2 arm columns or fewer than 2 rows.
    """
    path = data_path(path)
    header, rows, lines = read_table(path)
    excluded = [exclude] if isinstance(exclude, str) else list(exclude or [])
    unknown = [name for name in excluded if name not in header]
    if unknown:
        raise ValueError(
            f"--exclude column(s) {unknown} not found in --data {str(path)!r}; available "
            f"columns: {header}"
        )
    arms = [(j, name) for j, name in enumerate(header) if name not in excluded]
    for j, name in arms:
        if not name:
            raise ValueError(
                f"--data {str(path)!r}: column {j + 1} has no name in the header; every arm "
                "column needs a name"
            )
    if len(arms) < 2:
        raise ValueError(
            f"--data {str(path)!r} must have at least 2 arm columns (one per arm), got {len(arms)}"
        )
    if len(rows) < 2:
        raise ValueError(
            f"--data {str(path)!r} must have at least 2 data rows (reward observations), got "
            f"{len(rows)}"
        )
    hint = " (drop non-arm columns such as dates with --exclude)"
    table = np.empty((len(rows), len(arms)))
    for k, (j, name) in enumerate(arms):
        try:
            table[:, k] = column(rows, lines, j, name, "arm")
        except ValueError as exc:
            raise ValueError(f"--data {str(path)!r}: {exc}{hint}") from None
        check_magnitude(table[:, k], lines, name, "arm", f"--data {str(path)!r}")
    constant = [name for k, (_, name) in enumerate(arms) if np.ptp(table[:, k]) == 0.0]
    if constant:
        raise ValueError(
            f"--data {str(path)!r}: arm column(s) {constant} have the same value in every row; "
            "the kernel (covariance of the z-scored columns) is undefined for them"
        )
    means = table.mean(axis=0)
    if np.ptp(means) == 0.0:
        # The rule of every `run` command: a constant objective (here the arm means) is refused.
        raise ValueError(
            f"--data {str(path)!r}: every arm column has the same mean {means[0]:g}: every arm "
            "is optimal and there is nothing to optimise"
        )
    return [name for _, name in arms], table


def problem_from_csv(path, exclude=None) -> tuple[LDPProblem, list[str]]:
    """The :class:`LDPProblem` of a reward table (the real-data recipe) and the arm names."""
    names, table = load_reward_table(path, exclude)
    K = kernel_from_samples(table)
    source = f"user data: {os.fspath(path)} ({table.shape[0]} rows x {table.shape[1]} arms)"
    meta = {"arm_names": names, "rows": int(table.shape[0])}
    f = table.mean(axis=0)
    if float(f.max()) > 0.0:
        return problem_from_table("user", table, K, source=source, meta=meta), names
    # max f <= 0: f / max f is meaningless; regret is reported in raw units (regret_scale 1).
    noise = table - f
    problem = LDPProblem(
        "user",
        K,
        f,
        float(np.abs(f).max()),
        float(np.abs(noise).max()),
        float(np.mean(table**2)),
        float(np.mean(noise**2)),
        1.0,
        source,
        meta,
        reward_model=EmpiricalRewards(table),
        regret_scale=1.0,
    )
    return problem, names


@implements(RUN)
def run_ldp_on_csv(
    path: str | os.PathLike,
    algorithm: str,
    iterations: int,
    seed: int = 0,
    *,
    epsilon: float | None = None,
    beta_scale: float = BETA_SCALE,
    delta: float = DELTA,
    exclude: Sequence[str] | str | None = None,
    out: str | os.PathLike | None = None,
) -> dict:
    """Run (LDP-)``algorithm`` ("ata", "tgp" or "moma") for ``iterations`` rounds on the reward
    table in ``path`` (see the module doc).

    Args:
        epsilon: eps_priv > 0 of the LDP version (None: non-private).
        beta_scale: multiplier of the confidence width (>= 0).
        delta: failure probability of the confidence bounds, in (0, 1) (``--failure-probability``;
            not a privacy parameter).
        seed: non-negative int; fixes the algorithm's randomness, the row draws and the privacy
            noise (three independent streams).
        exclude: columns that are not arms.
        out: directory for ``result.json`` (:func:`frontierbo.systems.userrun.implements`).

    Returns a JSON-ready dict: the inputs, the problem constants, ``best_arm_found`` (most played
    arm: index, name, mean, share of plays), ``best_arm`` (the largest column mean),
    ``regret`` (``t``, cumulative regret normalised and raw at about 10 points, the final
    average ``R_T / T`` and ``uniform_play_average``, the expected per-round regret of a uniformly
    random arm, i.e. the mean gap over the arms), ``plays`` per arm, ``arms`` (the T arms played),
    ``notes`` (a sentence when the run did worse than uniform random play, else empty) and
    ``seconds`` (the wall time of the run; printed, not stored).
    """
    problem, names = problem_from_csv(path, exclude)
    noise_ss, privacy_ss, algo_ss = np.random.SeedSequence(seed).spawn(3)

    def _seed(ss: np.random.SeedSequence) -> int:
        return int(ss.generate_state(1, dtype=np.uint32)[0])

    T = iterations
    trace_t = trace_points(T)
    with one_blas_thread():
        res = run_trial(
            problem,
            algorithm,
            epsilon,
            T,
            noise_seed=_seed(noise_ss),
            privacy_seed=_seed(privacy_ss),
            algorithm_seed=_seed(algo_ss),
            checkpoints=trace_t,
            keep_arms=True,
            lam=LAM,
            delta=delta,
            profile=PROFILE,
            beta_scale=beta_scale,
        )
    counts = np.asarray(res["counts"])
    found = int(np.argmax(counts))
    best = problem.best_arm
    normalised = problem.regret_scale is None
    params = {
        "B": problem.B,
        "R": problem.R,
        "v": problem.v,
        "c": problem.c,
        "alpha": problem.alpha,
        "profile": PROFILE,
        "beta_scale": beta_scale,
        "lam": LAM,
        "delta": delta,
    }
    if epsilon is not None:
        params["ctl_scale"] = 2.0 * (problem.B + problem.R) / epsilon
    result = {
        "algorithm": algorithm,
        "name": res["algorithm_name"],
        "data": os.fspath(path),
        "arm_names": names,
        "n_arms": problem.n,
        "n_rows": int(problem.meta["rows"]),
        "epsilon": epsilon,
        "iterations": T,
        "seed": seed,
        "parameters": params,
        "regret_units": "f / max f" if normalised else "raw (max f <= 0)",
        "best_arm": {"index": best, "name": names[best], "mean": float(problem.f[best])},
        "best_arm_found": {
            "index": found,
            "name": names[found],
            "mean": float(problem.f[found]),
            "share_of_plays": float(counts[found] / T),
        },
        "regret": {
            "t": [int(t) for t in res["checkpoints"]],
            "cumulative": [float(r) for r in res["cum_regret"]],
            "cumulative_raw": [float(r) for r in res["cum_regret_raw"]],
            "average": res["average_regret"],
            "uniform_play_average": res["uniform_regret"],
        },
        "plays": {names[a]: int(counts[a]) for a in range(problem.n)},
        "arms": [int(a) for a in res["arms"]],
        "notes": _worse_than_uniform(problem, res, T, params.get("ctl_scale")),
        "seconds": res["seconds"],
    }
    if epsilon is not None:
        result["privacy"] = (
            f"each reward is {epsilon:g}-LDP (CTL: Laplace scale {params['ctl_scale']:.6g} on a "
            "grid, rewards in [-(B+R), B+R]); B and R were computed from this table, which a "
            "deployment must fix in advance"
        )
    return result


def _worse_than_uniform(problem: LDPProblem, res: dict, T: int, ctl_scale) -> list[str]:
    """A note when the run's average regret exceeds uniform random play's expected one (the
    mean gap over the arms, exact), with what the rewards' noise is next to the arm means'
    spread; else nothing."""
    average, uniform = res["average_regret"], res["uniform_regret"]
    if not average > uniform:
        return []
    spread = float(np.ptp(problem.f))
    if ctl_scale is None:
        noise = f"The rewards stray up to R = {fmt_number(problem.R, 4)} from their arm's mean"
        ratio = problem.R / spread
    else:
        noise = f"Each privatised reward carries Laplace noise of scale {fmt_number(ctl_scale, 4)}"
        ratio = ctl_scale / spread
    return [
        f"worse than uniform random play: average regret {fmt_number(average, 4)} > "
        f"{fmt_number(uniform, 4)}, what a uniformly random arm each round loses in expectation; "
        f"in T = {T} rounds over {problem.n} arms the algorithm did not single out the good arms. "
        f"{noise}, {fmt_number(ratio, 2)} times the spread {fmt_number(spread, 4)} of the arm "
        "means."
    ]


def format_ldp_result(result: dict) -> str:
    """A short human-readable summary of a :func:`run_ldp_on_csv` result."""
    p = result["parameters"]
    privacy = "non-private" if result["epsilon"] is None else f"eps = {result['epsilon']:g}"
    found, best, reg = result["best_arm_found"], result["best_arm"], result["regret"]
    lines = [
        f"{result['name']} on {result['data']}: {result['n_arms']} arms x {result['n_rows']} "
        f"rows, {privacy}, T = {result['iterations']}, seed = {result['seed']}",
        f"constants from the data: B = {fmt_number(p['B'])}, R = {fmt_number(p['R'])}, v = {fmt_number(p['v'])}, "
        f"c = {fmt_number(p['c'])}; profile {p['profile']}, beta_scale = {p['beta_scale']:g}",
        f"best arm found (most played, {100 * found['share_of_plays']:.1f} % of rounds): "
        f"{found['name']!r} (index {found['index']}, mean {fmt_number(found['mean'])}); best in data: "
        f"{best['name']!r} (index {best['index']}, mean {fmt_number(best['mean'])})",
        f"cumulative regret ({result['regret_units']}): "
        + "  ".join(
            f"t={t}: {fmt_number(r)}" for t, r in zip(reg["t"], reg["cumulative"], strict=True)
        ),
        f"average regret R_T/T = {fmt_number(reg['average'])} (uniform play: "
        f"{fmt_number(reg['uniform_play_average'])})",
    ]
    lines += [f"note: {note}" for note in result.get("notes", [])]
    if "privacy" in result:
        lines.append(f"privacy: {result['privacy']}")
    if "seconds" in result:
        lines.append(f"wall time: {result['seconds']:.1f} s")
    return "\n".join(lines)


def example(directory) -> list[dict]:
    """A small reward table (4 arms x 30 rows) and a run of each algorithm on it (conformance)."""
    rng = np.random.default_rng(0)
    rewards = rng.standard_t(3, size=(30, 4)) + np.arange(4) * 0.5
    path = directory / "rewards.csv"
    lines = ["a,b,c,d"] + [",".join(f"{v:.6f}" for v in row) for row in rewards]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [{"path": path, "algorithm": a, "iterations": 40, "seed": 1} for a in ALGORITHMS_RUN]
