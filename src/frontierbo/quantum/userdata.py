"""``frontierbo run quantum-bo``: Q-GP-UCB, GP-UCB, Q-LinUCB or LinUCB on your own arm table.

The CSV file (header row, comma-separated, UTF-8) holds one row per **arm**.  Its reward columns
are the ground truth of a simulation:

* a column ``p``: arm ``i`` pays 1 with probability ``p_i``, else 0
  (:class:`~frontierbo.quantum.rewards.BernoulliReward`, ``p`` in ``[0, 1]``);
* otherwise columns ``mean`` and ``sigma``: arm ``i`` pays ``N(mean_i, sigma_i^2)``
  (:class:`~frontierbo.quantum.rewards.GaussianReward`, ``sigma > 0``; its quantum oracle uses the
  64-point grid over ``mean -+ 3 sigma``).

The features are the ``features`` columns (default: every other column), numeric and finite,
min-max normalised to ``[0, 1]`` per column (a constant column becomes 0).  The GP methods use the
squared exponential kernel (variance 1, ``lengthscale`` in normalised units) on them; the linear
methods use the normalised features directly (linear kernel ``x^T x'``, no intercept).

Protocol (as the reproduction, :mod:`frontierbo.quantum.experiment`, on a finite domain):
``lambda = 1``; first one seeded uniformly random arm is queried with accuracy 1 (the reference
code's initial point), then UCB stages run until ``budget`` queries are spent (the last stage
completes, so a quantum method's queries can exceed ``budget``: the summary's second line says
by how much and why; regret is cut at ``budget`` queries, :func:`~frontierbo.quantum.loop.run_stages`).
Quantum methods estimate the chosen arm's mean to the stage's accuracy ``eps_s`` (the paper's
``epsilon_s``, chosen by the algorithm; not a privacy budget) with IQAE (failure
probability ``delta`` per stage), simulated in NumPy (``backend="numpy"``) or run on Qiskit
circuits (``"statevector"`` / ``"aer"``, extra ``frontierbo[quantum]``); classical methods pull
the arm once per query.  Each query on an arm with gap ``f* - f(x)`` adds that gap to the regret.

Because the table holds the true means, the result reports the regret exactly.  Row numbers are
0-based data-row indices (the header is not a row).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence

import numpy as np

from frontierbo.io import (
    check_magnitude,
    column,
    data_path,
    finite_or_null,
    fmt_number,
    read_table,
    select_feature_columns,
)
from frontierbo.quantum.rewards import BernoulliReward, GaussianReward
from frontierbo.quantum.system import ALGORITHMS, GP, QUANTUM, RUN
from frontierbo.systems.userrun import implements, trace_points

__all__ = ["example", "format_quantum_result", "load_arm_table", "run_quantum_on_csv"]

#: SE length-scale of the GP methods on the normalised features by default.
LENGTHSCALE = 0.2
#: Regulariser lambda (the experiments' value).
LAM = 1.0
#: Width multiplier of the classical methods by default (the synthetic experiments').
CLASSICAL_BETA = math.sqrt(2.0)
_INSTALL_HINT = "install the extra frontierbo[quantum] (pip install 'frontierbo[quantum]')"


# -- reading the CSV ----------------------------------------------------------------------------
def load_arm_table(path: str | os.PathLike, features: Sequence[str] | str | None = None) -> dict:
    """Read an arm table (see the module doc): a dict with ``model`` (``"bernoulli"`` or
    ``"gaussian"``), ``p`` or ``mean`` and ``sigma`` ((n,) arrays), ``means`` (n,), ``features``
    (names), ``X_raw`` and ``X`` (n, d; the min-max normalised features), ``min`` / ``max`` per
    feature column. A bad file, column or cell is one FileNotFoundError / ValueError naming it.

    A constant mean reward is refused, as ``run gp-ucb`` refuses a constant target (one rule for
    every ``run`` command): every arm would be optimal and the regret 0 whatever is played, so the
    run could show nothing, and most often the wrong column was given.
    """
    path = data_path(path)
    header, rows, lines = read_table(path)
    where = f"--data {str(path)!r}"
    available = ", ".join(repr(name) for name in header)

    if "p" in header:
        extra = [name for name in ("mean", "sigma") if name in header]
        if extra:
            raise ValueError(
                f"{where} has both the Bernoulli reward column 'p' and the Gaussian column(s) "
                f"{extra}: give either 'p' or 'mean' and 'sigma', not both"
            )
        model, reward_names = "bernoulli", ["p"]
    elif "mean" in header or "sigma" in header:
        missing = [name for name in ("mean", "sigma") if name not in header]
        if missing:
            raise ValueError(
                f"{where}: Gaussian rewards need columns 'mean' and 'sigma'; missing column "
                f"{missing[0]!r} (available columns: {available})"
            )
        model, reward_names = "gaussian", ["mean", "sigma"]
    else:
        raise ValueError(
            f"{where} has no reward columns: add a column 'p' (Bernoulli success probability) or "
            f"columns 'mean' and 'sigma' (Gaussian rewards); available columns: {available}"
        )

    reserved = f"the reward column(s) {reward_names}"
    names = select_feature_columns(header, rows, features, reward_names, reserved, where)

    n = len(rows)
    if n < 2:
        raise ValueError(f"{where} must have at least 2 data rows (one per arm), got {n}")
    out: dict = {"model": model, "features": names}
    for name in reward_names:
        out[name] = column(rows, lines, header.index(name), name, "reward")
        check_magnitude(out[name], lines, name, "reward", where)
    # the one constraint of each reward model, named with its column, row and file line
    name, bad, why = (
        ("p", (out["p"] < 0.0) | (out["p"] > 1.0), "is outside [0, 1] (a success probability)")
        if model == "bernoulli"
        else ("sigma", out["sigma"] <= 0.0, "must be > 0 (the reward's standard deviation)")
    )
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            f"reward column {name!r}, row {i} (file line {lines[i]}): {name} = "
            f"{out[name][i]:g} {why}"
        )
    out["means"] = out[reward_names[0]].copy()
    if np.ptp(out["means"]) == 0.0:
        column_name = reward_names[0]
        raise ValueError(
            f"{where}: the reward column {column_name!r} has the same value "
            f"{out['means'][0]:g} in every row: every arm is optimal and there is nothing to "
            "optimise (is it the right column?)"
        )
    X_raw = np.column_stack(
        [column(rows, lines, header.index(name), name, "feature") for name in names]
    )
    for j, name in enumerate(names):
        check_magnitude(X_raw[:, j], lines, name, "feature", where)
    lo, hi = X_raw.min(axis=0), X_raw.max(axis=0)
    width = hi - lo
    safe = np.where(width > 0, width, 1.0)
    X = np.where(width > 0, (X_raw - lo) / safe, 0.0)
    out.update(X_raw=X_raw, X=X, min=lo, max=hi)
    return out


# -- the oracle and the algorithm -------------------------------------------------------------
def _make_oracle(algorithm: str, backend: str, encoding: str, rng: np.random.Generator):
    from frontierbo.quantum.loop import SinglePullOracle
    from frontierbo.quantum.oracles import IQAEOracle

    if algorithm not in QUANTUM:
        return SinglePullOracle(rng)
    if backend == "numpy":
        return IQAEOracle(rng, encoding=encoding)
    try:
        from frontierbo.quantum.circuits import QiskitIQAEOracle

        return QiskitIQAEOracle(backend=backend, seed=rng, encoding=encoding)
    except ImportError as exc:
        raise ValueError(
            f"backend (--backend) {backend!r} runs Qiskit circuits, which are not installed: "
            f"{_INSTALL_HINT} ({exc})"
        ) from None


def _make_algorithm(algorithm: str, X: np.ndarray, lengthscale: float, width, weighting, delta):
    from frontierbo.core.kernels import SquaredExponential
    from frontierbo.quantum.linear import LinUCB, QLinUCB
    from frontierbo.quantum.q_gp_ucb import QGPUCB, ClassicalGPUCB

    if algorithm == "q-linucb":
        return QLinUCB(X, lam=LAM, width=width, delta=delta, weighting=weighting)
    if algorithm == "linucb":
        return LinUCB(X, lam=LAM, width=width, delta=delta)
    gram = SquaredExponential(lengthscale, 1.0)(X)
    if algorithm == "q-gp-ucb":
        return QGPUCB(gram, lam=LAM, width=width, delta=delta, weighting=weighting)
    return ClassicalGPUCB(gram, lam=LAM, width=width, delta=delta)


# -- the run ------------------------------------------------------------------------------------
@implements(RUN)
def run_quantum_on_csv(
    path: str | os.PathLike,
    budget: int,
    seed: int = 0,
    *,
    algorithm: str = "q-gp-ucb",
    features: Sequence[str] | str | None = None,
    lengthscale: float | None = None,
    width: float | str | None = None,
    weighting: str | None = None,
    encoding: str | None = None,
    backend: str | None = None,
    delta: float = 0.05,
    out: str | os.PathLike | None = None,
) -> dict:
    """Run ``algorithm`` for ``budget`` queries on the arm table in ``path`` (module doc; each
    keyword is a flag of ``run quantum-bo``, :data:`frontierbo.quantum.system.RUN`). ``seed``
    fixes the initial arm and the oracle's randomness (independent streams; the initial arm does
    not depend on ``algorithm``).

    Returns a JSON-ready dict: the inputs and ``parameters``; ``total_queries``, ``over_budget``
    (the queries spent beyond ``budget``: the last stage runs whole, module doc), ``num_stages``,
    ``last_stage_start`` (queries spent before the last stage, ``< budget``); ``regret``
    (``at_budget`` = cumulative regret after ``budget`` queries, ``average`` = that / budget, a
    trace ``queries`` / ``cumulative``); ``best_arm`` (``index``, ``features`` raw, ``mean``);
    ``recommended`` (``last_stage`` and ``posterior_mean``: the arm of the last stage and the arm
    with the highest posterior mean, each with ``index``, ``mean``, ``gap``, ``features``);
    ``distinct_arms`` (sorted, the initial arm included); ``queries_per_arm`` and
    ``stages_per_arm`` (length n); for quantum methods ``stages``: one dict per stage (stage 0 is
    the initial arm) with ``arm, epsilon, queries, started_at, estimate, beta``, where the stored
    key ``epsilon`` holds the stage's accuracy and ``beta`` its width (the keys keep their names
    so that results stay comparable); ``seconds``, the wall time of the run (printed, not stored
    in result.json).
    """
    quantum = algorithm in QUANTUM
    lengthscale = LENGTHSCALE if lengthscale is None else lengthscale
    if width is None:
        width = "log" if quantum else CLASSICAL_BETA
    weighting, encoding, backend = weighting or "paper", encoding or "exact", backend or "numpy"
    table = load_arm_table(path, features)
    init_ss, oracle_ss = np.random.SeedSequence(seed).spawn(2)
    oracle = _make_oracle(algorithm, backend, encoding, np.random.default_rng(oracle_ss))

    from frontierbo.quantum.loop import run_stages

    X, means, names = table["X"], table["means"], table["features"]
    n, d = X.shape
    if table["model"] == "bernoulli":
        rewards = [BernoulliReward(float(p)) for p in table["p"]]
    else:
        rewards = [
            GaussianReward(float(m), float(s))
            for m, s in zip(table["mean"], table["sigma"], strict=True)
        ]
    started = time.perf_counter()
    algo = _make_algorithm(algorithm, X, lengthscale, width, weighting, delta)
    first = int(np.random.default_rng(init_ss).integers(n))
    try:
        run = run_stages(
            algo,
            rewards.__getitem__,
            means,
            oracle,
            budget,
            delta=delta,
            initial=(first, rewards[first], float(means[first]), 1.0),
        )
    except RuntimeError as exc:
        hint = ""
        if algorithm == "q-linucb" and "variance" in str(exc):
            hint = (
                " (an arm whose min-max normalised features are all 0, i.e. the minimum of every "
                "feature column, has no posterior variance under the linear kernel, which has no "
                "intercept, so Q-LinUCB cannot estimate it; use q-gp-ucb or other features)"
            )
        raise RuntimeError(f"{algorithm}: {exc}{hint}") from None
    seconds = time.perf_counter() - started

    points = np.asarray(run.points, dtype=int)
    queries = np.asarray(run.queries, dtype=int)
    started_at = np.concatenate([[0], np.cumsum(queries)[:-1]])
    curve = run.cumulative_regret(budget)
    trace_q = trace_points(budget)
    best = int(np.argmax(means))
    f_max = float(means[best])
    last = int(points[-1])
    post = algo.mean
    top_post = int(np.argmax(post))

    def arm(i: int, **extra) -> dict:
        return {
            "index": int(i),
            "mean": float(means[i]),
            "gap": f_max - float(means[i]),
            "features": {name: float(table["X_raw"][i, j]) for j, name in enumerate(names)},
        } | extra

    params = {
        "kernel": "squared_exponential" if algorithm in GP else "linear",
        "lengthscale": lengthscale if algorithm in GP else None,
        "beta": width,  # the stored key keeps its name (results stay comparable)
        "lam": LAM,
        "delta": delta,
        "weighting": weighting if quantum else None,
        "encoding": encoding if quantum else None,
        "backend": backend if quantum else None,
        "oracle": (
            ("IQAE, NumPy simulator" if backend == "numpy" else f"IQAE, Qiskit {backend}")
            if quantum
            else "one classical pull per query"
        ),
        "initial": {"arm": first, "epsilon": 1.0},  # stored key: the accuracy of stage 0
        "normalisation": {
            name: {"min": float(table["min"][j]), "max": float(table["max"][j])}
            for j, name in enumerate(names)
        },
    }
    result = {
        "algorithm": algorithm,
        "name": ALGORITHMS[algorithm],
        "data": os.fspath(path),
        "reward_model": table["model"],
        "features": list(names),
        "n_arms": int(n),
        "d": int(d),
        "budget": budget,
        "seed": seed,
        "parameters": params,
        "total_queries": int(queries.sum()),
        "over_budget": max(0, int(queries.sum()) - budget),
        "num_stages": int(points.size),
        "last_stage_start": int(started_at[-1]),
        "regret": {
            "at_budget": float(curve[-1]),
            "average": float(curve[-1] / budget),
            "queries": [int(q) for q in trace_q],
            "cumulative": [float(curve[q - 1]) for q in trace_q],
        },
        "best_arm": {k: v for k, v in arm(best).items() if k != "gap"},
        "recommended": {
            "last_stage": arm(last),
            "posterior_mean": arm(top_post, posterior_mean=float(post[top_post])),
        },
        "distinct_arms": sorted(int(i) for i in np.unique(points)),
        "queries_per_arm": np.bincount(points, weights=queries, minlength=n).astype(int).tolist(),
        "stages_per_arm": np.bincount(points, minlength=n).astype(int).tolist(),
        "seconds": seconds,
    }
    if quantum:
        result["stages"] = [
            {
                "stage": s,
                "arm": int(points[s]),
                "epsilon": run.accuracies[s],  # stored key kept, as "beta" below
                "queries": int(queries[s]),
                "started_at": int(started_at[s]),
                "estimate": run.estimates[s],
                "beta": run.betas[s],
            }
            for s in range(points.size)
        ]
    return finite_or_null(result)


# -- reporting ----------------------------------------------------------------------------------
def _arm_text(arm: dict) -> str:
    feats = ", ".join(f"{k} = {fmt_number(v, 4)}" for k, v in arm["features"].items())
    return f"row {arm['index']} ({feats}; mean {fmt_number(arm['mean'], 4)})"


def _over_budget_lines(result: dict) -> list[str]:
    """Where the queries spent exceed T: by how much and why (one line, right under the
    header); nothing when the budget was kept."""
    over = result["total_queries"] - result["budget"]
    if over <= 0:
        return []
    k = result["num_stages"] - 1
    last = result["total_queries"] - result["last_stage_start"]
    stage = f"stage {k}" + (", the random initial arm" if k == 0 else "")
    stages = result.get("stages")
    if stages:
        stage += f", accuracy {fmt_number(stages[-1]['epsilon'], 4)}"
    return [
        f"budget T = {result['budget']} exceeded by {over} queries: the last stage ({stage}) "
        f"started at query {result['last_stage_start']} and needed {last}. IQAE's query count is "
        "random and known only after the estimate, so the last stage runs whole (as in the "
        "reference code; cut short, its estimate would miss its accuracy); the regret below "
        f"counts the first {result['budget']} queries only."
    ]


def format_quantum_result(result: dict, max_stages: int = 6) -> str:
    """A short human-readable summary of a :func:`run_quantum_on_csv` result."""
    p = result["parameters"]
    model = "Bernoulli" if result["reward_model"] == "bernoulli" else "Gaussian"
    kernel = "linear kernel"
    if p["kernel"] != "linear":
        kernel = f"SE kernel, lengthscale {fmt_number(p['lengthscale'], 4)}"
    beta = p["beta"] if isinstance(p["beta"], str) else fmt_number(p["beta"], 4)
    oracle = p["oracle"]
    if p["backend"] is not None:
        oracle += f", encoding {p['encoding']}, weighting {p['weighting']}"
    reg = result["regret"]
    rec = result["recommended"]
    budget = result["budget"]
    lines = [
        f"{result['name']} on {result['data']}: {result['n_arms']} arms ({model} rewards), "
        f"d = {result['d']} ({', '.join(result['features'])}), budget T = {budget} queries, "
        f"seed = {result['seed']}",
        *_over_budget_lines(result),
        f"{kernel} on min-max normalised features, beta = {beta}, delta = {fmt_number(p['delta'], 4)}; "
        f"oracle: {oracle}",
        f"spent {result['total_queries']} queries in {result['num_stages']} stages (last stage "
        f"started at {result['last_stage_start']}); {len(result['distinct_arms'])} distinct "
        "arms visited",
        f"cumulative regret at T = {budget}: {fmt_number(reg['at_budget'], 4)} "
        f"(average per query {fmt_number(reg['average'], 4)})",
        f"best arm: {_arm_text(result['best_arm'])}",
        f"recommended: last stage's arm {_arm_text(rec['last_stage'])}, "
        f"gap {fmt_number(rec['last_stage']['gap'], 4)}",
        f"             highest posterior mean {_arm_text(rec['posterior_mean'])}, "
        f"gap {fmt_number(rec['posterior_mean']['gap'], 4)}",
    ]
    stages = result.get("stages")
    if stages:
        lines.append("stages (stage 0: the random initial arm):")
        lines.append("  stage  arm  accuracy  queries  estimate")
        half = max_stages // 2
        shown = stages if len(stages) <= max_stages else stages[:half] + [None] + stages[-half:]
        for st in shown:
            if st is None:
                lines.append(f"  ... {len(stages) - 2 * half} more stages ...")
                continue
            lines.append(
                f"  {st['stage']:>5}  {st['arm']:>3}  {fmt_number(st['epsilon'], 4):>8}  "
                f"{st['queries']:>7}  {fmt_number(st['estimate'], 4):>8}"
            )
    else:
        plays = result["queries_per_arm"]
        most = int(np.argmax(plays))
        lines.append(
            f"most pulled arm: row {most} ({100.0 * plays[most] / result['total_queries']:.1f} % "
            "of the pulls)"
        )
    if "seconds" in result:
        lines.append(f"wall time: {result['seconds']:.1f} s")
    return "\n".join(lines)


def example(directory) -> list[dict]:
    """A 20-arm Bernoulli table (1-D, a peak at x = 0.7) and a short run of each algorithm on it
    (the conformance checks)."""
    x = np.linspace(0.0, 1.0, 20)
    p = 0.1 + 0.8 * np.exp(-((x - 0.7) ** 2) / 0.05)
    path = directory / "arms.csv"
    lines = ["x,p"] + [f"{a:.4f},{b:.4f}" for a, b in zip(x, p, strict=True)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [{"path": path, "budget": 300, "seed": 1, "algorithm": a} for a in ALGORITHMS]
