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
completes; regret is cut at ``budget`` queries, :func:`~frontierbo.quantum.loop.run_stages`).
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

from frontierbo._validation import check_int, check_real
from frontierbo.io import (
    RESULT_FILENAME,
    check_magnitude,
    check_out_dir,
    column,
    data_path,
    finite_or_null,
    fmt_number,
    read_table,
    select_feature_columns,
    write_json_atomic,
)
from frontierbo.quantum.q_gp_ucb import WEIGHTINGS, WIDTH_SCHEDULES
from frontierbo.quantum.rewards import ENCODINGS, BernoulliReward, GaussianReward

__all__ = [
    "ALGORITHMS",
    "BACKENDS",
    "RESULT_FILENAME",
    "format_quantum_result",
    "load_arm_table",
    "run_quantum_on_csv",
]

#: ``--algorithm`` choices of ``frontierbo run quantum-bo`` and their labels.
ALGORITHMS = {
    "q-gp-ucb": "Q-GP-UCB",
    "gp-ucb": "GP-UCB",
    "q-linucb": "Q-LinUCB",
    "linucb": "LinUCB",
}
QUANTUM = ("q-gp-ucb", "q-linucb")
LINEAR = ("q-linucb", "linucb")
#: ``--backend`` choices: the NumPy IQAE simulator or Qiskit circuits.
BACKENDS = ("numpy", "statevector", "aer")
#: Reserved reward column names.
REWARD_COLUMNS = ("p", "mean", "sigma")
#: Regulariser lambda (the experiments' value).
LAM = 1.0
#: Width multiplier of the classical methods by default (the synthetic experiments').
CLASSICAL_BETA = math.sqrt(2.0)
#: Number of points of the stored / printed regret trace.
TRACE_POINTS = 10
_INSTALL_HINT = "install the extra frontierbo[quantum] (pip install 'frontierbo[quantum]')"


# -- reading the CSV ----------------------------------------------------------------------------
def load_arm_table(path: str | os.PathLike, features: Sequence[str] | str | None = None) -> dict:
    """Read an arm table (see the module doc).

    Returns a dict with ``model`` (``"bernoulli"`` or ``"gaussian"``), ``p`` or ``mean`` and
    ``sigma`` ((n,) arrays), ``means`` (n,), ``features`` (names), ``X_raw`` (n, d) and ``X``
    (n, d), the min-max normalised features, and ``min`` / ``max`` per feature column.

    Raises FileNotFoundError (``--data`` missing) or ValueError naming the column (and the row
    for a bad cell): missing reward columns, both ``p`` and ``mean``/``sigma``, a non-numeric,
    empty, NaN or infinite value, one beyond ``frontierbo.io.MAX_ABS_VALUE`` (1e150) in
    magnitude, ``p`` outside ``[0, 1]``, ``sigma <= 0``, the same mean reward for every arm, an
    unknown, duplicate or reward ``--features`` column, no feature column, fewer than 2 arms.

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
    if model == "bernoulli":
        bad = np.flatnonzero((out["p"] < 0.0) | (out["p"] > 1.0))
        if bad.size:
            i = int(bad[0])
            raise ValueError(
                f"reward column 'p', row {i} (file line {lines[i]}): p = {out['p'][i]:g} is "
                "outside [0, 1] (a success probability)"
            )
        out["means"] = out["p"].copy()
    else:
        bad = np.flatnonzero(out["sigma"] <= 0.0)
        if bad.size:
            i = int(bad[0])
            raise ValueError(
                f"reward column 'sigma', row {i} (file line {lines[i]}): sigma = "
                f"{out['sigma'][i]:g} must be > 0 (the reward's standard deviation)"
            )
        out["means"] = out["mean"].copy()
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


# -- parameters ---------------------------------------------------------------------------------
def _parse_width(width, algorithm: str):
    """``None`` -> the algorithm's default; ``"log"``/``"theory"``; a positive number (or its text)."""
    if width is None:
        return "log" if algorithm in QUANTUM else CLASSICAL_BETA
    if isinstance(width, str):
        text = width.strip()
        if text in WIDTH_SCHEDULES:
            return text
        try:
            width = float(text)
        except ValueError:
            raise ValueError(
                f"width (--width) must be 'log', 'theory' or a positive number, got {width!r}"
            ) from None
    try:
        return check_real(width, "width (--width)", low=0.0)
    except TypeError:
        raise TypeError(
            f"width (--width) must be 'log', 'theory' or a positive number, got {width!r}"
        ) from None


def _choice(value, name: str, allowed) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {list(allowed)}, got {value!r}")
    return value


def _check_params(algorithm, budget, seed, lengthscale, width, weighting, encoding, backend, delta):
    algorithm = _choice(algorithm, "algorithm (--algorithm)", ALGORITHMS)
    budget = check_int(budget, "budget (--queries)", low=1)
    seed = check_int(seed, "seed (--seed)", low=0)
    lengthscale = check_real(lengthscale, "lengthscale (--lengthscale)", low=0.0)
    width = _parse_width(width, algorithm)
    weighting = _choice(weighting, "weighting (--weighting)", WEIGHTINGS)
    encoding = _choice(encoding, "encoding (--encoding)", ENCODINGS)
    backend = _choice(backend, "backend (--backend)", BACKENDS)
    delta = check_real(delta, "delta (--failure-probability)", low=0.0, high=1.0)
    if algorithm not in QUANTUM:
        for flag, value, default in (
            ("weighting (--weighting)", weighting, "paper"),
            ("encoding (--encoding)", encoding, "exact"),
            ("backend (--backend)", backend, "numpy"),
        ):
            if value != default:
                raise ValueError(
                    f"{flag}={value!r} applies to the quantum algorithms {list(QUANTUM)} only; "
                    f"{algorithm} pulls one classical reward per query"
                )
    return algorithm, budget, seed, lengthscale, width, weighting, encoding, backend, delta


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
def run_quantum_on_csv(
    path: str | os.PathLike,
    budget: int,
    seed: int = 0,
    *,
    algorithm: str = "q-gp-ucb",
    features: Sequence[str] | str | None = None,
    lengthscale: float = 0.2,
    width: float | str | None = None,
    weighting: str = "paper",
    encoding: str = "exact",
    backend: str = "numpy",
    delta: float = 0.05,
    out: str | os.PathLike | None = None,
) -> dict:
    """Run ``algorithm`` for ``budget`` queries on the arm table in ``path`` (module doc).

    Args:
        budget: query budget ``T >= 1`` (``--queries``): every oracle query costs one.
        seed: non-negative int; fixes the initial arm and the oracle's randomness (independent
            streams; the initial arm does not depend on ``algorithm``).
        algorithm: ``"q-gp-ucb"``, ``"gp-ucb"``, ``"q-linucb"`` or ``"linucb"``.
        features: feature columns (default: every column except the reward columns).
        lengthscale: SE length-scale on the normalised features (GP methods; ignored by linear).
        width: UCB width (multiplies sigma; ``--width``, the papers' beta): a positive number,
            ``"log"`` (``1 + ln n``) or ``"theory"``
            (Theorem 3 / 6 for the quantum methods, GP-UCB's / OFUL's for the classical ones);
            default ``"log"`` for quantum methods, ``sqrt(2)`` for classical ones.
        weighting: ``"paper"`` (eq. 3) or ``"reference"`` (authors' code); quantum methods only.
        encoding: amplitude encoding ``"exact"`` or ``"reference"``; quantum methods only.
        backend: ``"numpy"`` (exact-in-distribution IQAE simulator), ``"statevector"`` or
            ``"aer"`` (Qiskit circuits, extra ``frontierbo[quantum]``); quantum methods only.
        delta: failure probability of every stage's estimate, in (0, 1) (also the confidence of
            the ``"theory"`` width; ``--failure-probability``, not a privacy parameter).
        out: directory; when given, ``out/result.json`` is written atomically after the run,
            without ``seconds``: two runs with the same inputs and seed write identical files.

    Returns a JSON-ready dict: the inputs and ``parameters``; ``total_queries``, ``num_stages``,
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

    Raises:
        FileNotFoundError, ValueError, TypeError: for any bad argument, before any work is done
        and before any file is created.
    """
    algorithm, budget, seed, lengthscale, width, weighting, encoding, backend, delta = (
        _check_params(
            algorithm, budget, seed, lengthscale, width, weighting, encoding, backend, delta
        )
    )
    out = check_out_dir(out)
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
    trace_q = np.unique(np.round(np.linspace(budget / TRACE_POINTS, budget, TRACE_POINTS)))
    trace_q = trace_q.astype(int).clip(1, budget)
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

    quantum = algorithm in QUANTUM
    params = {
        "kernel": "linear" if algorithm in LINEAR else "squared_exponential",
        "lengthscale": None if algorithm in LINEAR else lengthscale,
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
    result = finite_or_null(result)
    if out is not None:
        # Wall time is not a result: kept out of the file so that a seed fixes its bytes.
        stored = {key: value for key, value in result.items() if key != "seconds"}
        write_json_atomic(out / RESULT_FILENAME, stored)
    return result


# -- reporting ----------------------------------------------------------------------------------
def _arm_text(arm: dict) -> str:
    feats = ", ".join(f"{k} = {fmt_number(v, 4)}" for k, v in arm["features"].items())
    return f"row {arm['index']} ({feats}; mean {fmt_number(arm['mean'], 4)})"


def format_quantum_result(result: dict, max_stages: int = 6) -> str:
    """A short human-readable summary of a :func:`run_quantum_on_csv` result."""
    p = result["parameters"]
    model = "Bernoulli" if result["reward_model"] == "bernoulli" else "Gaussian"
    kernel = (
        "linear kernel"
        if p["kernel"] == "linear"
        else f"SE kernel, lengthscale {fmt_number(p['lengthscale'], 4)}"
    )
    beta = p["beta"] if isinstance(p["beta"], str) else fmt_number(p["beta"], 4)
    if p["backend"] is None:
        oracle = p["oracle"]
    else:
        oracle = f"{p['oracle']}, encoding {p['encoding']}, weighting {p['weighting']}"
    reg = result["regret"]
    rec = result["recommended"]
    budget = result["budget"]
    lines = [
        f"{result['name']} on {result['data']}: {result['n_arms']} arms ({model} rewards), "
        f"d = {result['d']} ({', '.join(result['features'])}), budget T = {budget} queries, "
        f"seed = {result['seed']}",
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
