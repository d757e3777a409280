"""Run GP-UCB or PO-GP-UCB on your own data: a CSV file whose rows are the candidates.

The CSV file is the whole finite domain. Each data row is one candidate input (the feature
columns) together with its recorded objective value (the target column). The optimiser only
sees the rows it queries: the target column plays the oracle, with no extra observation noise
because the recorded values already are the outputs. Regret is measured against the best row in
the file.

What happens in :func:`run_on_csv` depends on where the GP hyperparameters come from.

By default (like a study, :mod:`frontierbo.study`) they come only from the rows queried so far:
    ``gp-ucb``: the study's GP-UCB sampler (Matérn-5/2 ARD on the unit-cube-scaled features, MAP
    hyperparameters refitted on the observed values after every query, UCB with beta = 4).
    ``po-gp-ucb``: the curator scales every column by its range (no output involved), centres
    them and scales to a largest row norm of 25, and releases ``Z`` (Algorithm 1); the modeler
    runs the same sampler on ``Z`` with one isotropic lengthscale, asking the curator for outputs
    by row index only (Algorithm 2's protocol, hyperparameters learned by the modeler).

With ``prefit_on_table=True`` (``--prefit-on-table``), as the papers do (maximum
likelihood on the data set, Section 4 of the paper):
P0  The curator fits GP hyperparameters by maximum likelihood (ARD squared exponential, constant
    mean, Gaussian noise; at most 2000 rows; seeded) on the raw inputs **and the whole target
    column**. It divides every feature column by its fitted length-scale, centres the columns and
    scales them to a largest row norm of 25 (factor ``s``), so the modeler's isotropic
    length-scale is ``s``.
    ``gp-ucb``: GP-UCB (delta' = 0.025) on those normalised inputs.
    ``po-gp-ucb``: ``Curator`` -> ``release()`` (Algorithm 1) -> ``POGPUCBModeler`` on the release
    ``Z``, which talks to the curator only through row indices (Algorithm 2).
    The optimiser has then seen up to 2000 values before its first query: fine for reproducing
    the papers, not optimisation.

Both algorithms get the same random initial rows (and, prefitted, the same hyperparameters)
for a given seed.
We always maximise internally: with ``minimize=True`` the target is negated on loading and every
value reported back (best value, regret) is given in the target's original units and sign.

WARNING: the PO-GP-UCB release is NOT differentially private (see docs/privacy.md and
:mod:`frontierbo.po.random_projection`); do not use it to protect sensitive inputs.

Row numbers in messages and results are 0-based data-row indices (the header is not a row);
messages about a bad cell also give the line of the file.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Sequence

import numpy as np
from tqdm import tqdm

from frontierbo._validation import check_int, check_positive, check_probability
from frontierbo.core.fit import fit_hyperparameters
from frontierbo.core.gp_ucb import GPUCB
from frontierbo.core.kernels import make_kernel
from frontierbo.core.loop import TableOracle, run_bo
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
from frontierbo.po.gaussian_release import GaussianRowMechanism, noise_aware_hyperparameters
from frontierbo.po.po_gp_ucb import Curator, POGPUCBModeler, random_initial_rows
from frontierbo.po.problems.base import DEFAULT_MAX_NORM, preprocess_inputs
from frontierbo.po.random_projection import RandomProjectionMechanism
from frontierbo.study.samplers import GPUCBSampler, SamplerAskTell

__all__ = [
    "ALGORITHMS",
    "DELTA_PRIME",
    "PRIVACY_NOTE",
    "RESULT_FILENAME",
    "format_result",
    "load_csv_problem",
    "run_on_csv",
]

#: The algorithms ``run_on_csv`` accepts.
ALGORITHMS = ("gp-ucb", "po-gp-ucb")
#: The privacy caveat carried by every po-gp-ucb result.
PRIVACY_NOTE = "NOT differentially private (see docs/privacy.md)"
#: Curator mechanisms for po-gp-ucb (``--mechanism``).
MECHANISMS = ("random_projection", "gaussian")


def gaussian_privacy_note(epsilon: float, delta: float) -> str:
    """What the Gaussian release guarantees on this path, and what it does not."""
    return (
        f"({epsilon:g}, {delta:g})-DP for the released feature rows (one row moving by <= 1 in L2, "
        "in the normalised units); NOT covered: the target values, the normalisation scale and "
        "the GP hyperparameters fitted on the raw data (see docs/privacy.md)"
    )


#: GP-UCB's delta' = delta_ucb / 2 with delta_ucb = 0.05 (Theorem 3 of the paper;
#: docs/decisions.md#po-gp-ucb-delta-prime-is-half-of-delta_ucb).
DELTA_PRIME = 0.025
#: Rows used by the maximum-likelihood fit (a random subset when the file is larger).
FIT_MAX_POINTS = 2000
#: Seconds before an automatic progress bar appears (a quick run stays silent).
PROGRESS_DELAY = 2.0
#: Fits on this many rows or more take seconds (about 20 s for 800 rows, 2 min for 2000 on two
#: cores), and the fit can only report after its first optimiser step: its bar shows at once.
SLOW_FIT_ROWS = 500


def load_csv_problem(
    path: str | os.PathLike,
    target: str,
    features: Sequence[str] | str | None = None,
    minimize: bool = False,
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Read a CSV file (header row, comma-separated, UTF-8) into an optimisation problem.

    Args:
        path: the CSV file (``--data``).
        target: name of the column holding the objective value of each row (``--target``).
        features: names of the input columns (``--features``); a single string is one name.
            Default: every column except the target, which must then all be numeric.
        minimize: the target is to be minimised; ``y`` is then the NEGATED target, because the
            optimisers always maximise.

    Returns:
        ``(X, y, feature_names)``: ``X`` (n, d) float inputs in file order, ``y`` (n,) the
        target (negated when ``minimize``), and the feature column names in ``X``'s order.

    Raises:
        FileNotFoundError: ``path`` is not an existing file (the message names ``--data``).
        ValueError: a missing target or feature column, a non-numeric, empty, NaN or infinite
            value in a used column, or one beyond ``frontierbo.io.MAX_ABS_VALUE`` (1e150) in
            magnitude, which the fit could not square (message names the column and the 0-based
            row), fewer than 2 rows (n < 2), or a malformed file. Each message names the
            parameter at fault.
    """
    path = data_path(path)
    if not isinstance(target, str) or not target.strip():
        raise TypeError(f"--target must be a non-empty column name, got {target!r}")
    if not isinstance(minimize, bool | np.bool_):
        raise TypeError(f"minimize must be True or False, got {minimize!r}")
    target = target.strip()
    header, rows, lines = read_table(path)
    available = ", ".join(repr(name) for name in header)

    if target not in header:
        raise ValueError(
            f"--target column {target!r} not found in --data {str(path)!r}; "
            f"available columns: {available}"
        )
    t_col = header.index(target)

    names = select_feature_columns(
        header, rows, features, [target], f"the --target column {target!r}", f"--data {str(path)!r}"
    )

    n = len(rows)
    if n < 2:
        raise ValueError(f"--data {str(path)!r} must have at least 2 data rows (n >= 2), got n={n}")
    where = f"--data {str(path)!r}"
    y = column(rows, lines, t_col, target, "--target")
    check_magnitude(y, lines, target, "--target", where)
    X = np.column_stack(
        [column(rows, lines, header.index(name), name, "feature") for name in names]
    )
    for j, name in enumerate(names):
        check_magnitude(X[:, j], lines, name, "feature", where)
    if minimize:
        y = -y
    return X, y, names


# -- the run ------------------------------------------------------------------------------------
def _check_params(
    algorithm, iterations, seed, epsilon, delta, r, n_init, out, fit_restarts, mechanism
):
    """Every check that does not need the data; returns the validated values."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {list(ALGORITHMS)}, got {algorithm!r}")
    if mechanism not in MECHANISMS:
        raise ValueError(
            f"mechanism (--mechanism) must be one of {list(MECHANISMS)}, got {mechanism!r}"
        )
    iterations = check_int(iterations, "iterations (--iterations)", low=1)
    seed = check_int(seed, "seed (--seed)", low=0)
    n_init = check_int(n_init, "n_init (--n-init)", low=1)
    fit_restarts = check_int(fit_restarts, "fit_restarts", low=1)
    privacy = None
    if algorithm == "po-gp-ucb":
        required = ((epsilon, "epsilon"), (delta, "delta"))
        if mechanism == "random_projection":
            required += ((r, "r"),)
        for value, flag in required:
            if value is None:
                raise ValueError(f"{flag} (--{flag}) is required for po-gp-ucb")
        privacy = (
            check_positive(epsilon, "epsilon (--epsilon)"),
            check_probability(delta, "delta (--delta)"),
            None if r is None else check_int(r, "r (--r)", low=1),
        )
    out = check_out_dir(out)
    return iterations, seed, n_init, fit_restarts, privacy, out


def _check_data_params(X, y, iterations, n_init, target, features):
    """Checks that need the loaded data (still before any work)."""
    n = X.shape[0]
    if n_init > n - 1:
        raise ValueError(
            f"n_init (--n-init) must be in [1, n - 1] = [1, {n - 1}] for n={n} rows, got {n_init}"
        )
    if iterations > n - n_init:
        raise ValueError(
            f"iterations (--iterations) must be <= n - n_init = {n} - {n_init} = {n - n_init} "
            f"(rows are never queried twice), got {iterations}"
        )
    if np.ptp(X, axis=0).max() == 0:
        raise ValueError(
            f"the --features columns {features} are identical in every row: "
            "there is nothing to choose between"
        )
    if np.ptp(y) == 0:
        # The one rule of every `run` command (quantum-bo's reward column too): a constant
        # objective is refused. Every row would be optimal and the regret 0 whatever is chosen,
        # so the run could show nothing (and the fit has no scale to learn); most often it means
        # the wrong column was named.
        raise ValueError(
            f"the --target column {target!r} has the same value in every row: every row is "
            "optimal and there is nothing to optimise (is it the right column?)"
        )


def run_on_csv(
    path: str | os.PathLike,
    target: str,
    algorithm: str,
    iterations: int,
    seed: int,
    features: Sequence[str] | str | None = None,
    minimize: bool = False,
    epsilon: float | None = None,
    delta: float | None = None,
    r: int | None = None,
    n_init: int = 1,
    out: str | os.PathLike | None = None,
    fit_restarts: int = 3,
    mechanism: str = "random_projection",
    progress: bool | None = None,
    prefit_on_table: bool = False,
) -> dict:
    """Optimise the target column of a CSV file with GP-UCB or PO-GP-UCB (see module doc).

    Args:
        path, target, features, minimize: see :func:`load_csv_problem`.
        algorithm: ``"gp-ucb"`` or ``"po-gp-ucb"``.
        iterations: BO rounds T, 1 <= T <= n - n_init (rows are never queried twice).
        seed: non-negative int; fixes the fit, the initial rows and the random projection.
        epsilon, delta, r: PO-GP-UCB's (epsilon > 0, delta in (0, 1), integer r >= 1);
            required for ``po-gp-ucb``, ignored for ``gp-ucb``.
        n_init: random initial rows observed before round 1, in [1, n - 1] (not counted in T).
        out: directory; when given, ``out/result.json`` is written atomically at the end (the
            directory is created only after the run succeeded; an existing file is replaced).
        fit_restarts: random restarts of the maximum-likelihood fit.
        mechanism: the curator's release for ``po-gp-ucb``: ``"random_projection"`` (the
            paper's Algorithm 1, not DP) or ``"gaussian"`` (an (epsilon, delta)-DP release;
            an (epsilon, delta) outside its exact sampler's range is refused before any work,
            with the range that works).
        progress: progress bars on stderr (the fit, then the queries): None (default) shows
            them on a terminal for a run that lasts more than :data:`PROGRESS_DELAY` seconds,
            True always, False never.
        prefit_on_table: fit the hyperparameters on the whole target column first, as the
            papers do (module doc); default False: learn them from the queried rows only.

    Returns:
        A JSON-ready dict: ``algorithm, data, target, features, minimize, n, d, iterations,
        n_init, seed``; ``hyperparameters`` (raw ARD ``lengthscales``, ``signal_variance``,
        ``noise_variance``, ``mean`` of the internal, maximised objective = -target when
        minimising, plus the normalisation ``scale`` and the modeler's ``lengthscale``);
        ``best`` (``index``, ``value`` in the target's sign, ``features``: name -> raw value)
        over every observed row; ``best_in_data`` (``index``, ``value``); ``simple_regret``
        (T + 1 values, target units: entry 0 after the initial rows, entry t after round t);
        ``initial_indices`` and ``queried_indices`` (the T rows chosen, in order). For
        ``po-gp-ucb`` also ``release`` (``omega, sigma_min, branch, c_prime, epsilon, delta, r``;
        a non-finite ``c_prime`` is stored as null) and ``privacy`` = :data:`PRIVACY_NOTE`.

    Raises:
        FileNotFoundError, ValueError, TypeError: for any bad argument, before any work is done
        and before any file is created: a constant target (every row optimal), a value beyond
        1e150 in magnitude, an unwritable ``out``, an (epsilon, delta) the Gaussian release
        cannot calibrate. ``po-gp-ucb`` with ``random_projection`` emits a
        ``NotDifferentiallyPrivateWarning``.
    """
    iterations, seed, n_init, fit_restarts, privacy, out = _check_params(
        algorithm, iterations, seed, epsilon, delta, r, n_init, out, fit_restarts, mechanism
    )
    if progress is not None and not isinstance(progress, bool):
        raise TypeError(f"progress must be True, False or None, got {progress!r}")
    X_raw, y, names = load_csv_problem(path, target, features, minimize)
    _check_data_params(X_raw, y, iterations, n_init, target.strip(), names)
    n, d = X_raw.shape
    gaussian_mech = None
    if algorithm == "po-gp-ucb" and mechanism == "gaussian":
        gaussian_mech = GaussianRowMechanism(*privacy)
        try:
            # The normalised inputs have row norms <= DEFAULT_MAX_NORM, so every entry too.
            gaussian_mech.check_range(d, DEFAULT_MAX_NORM)
        except ValueError as exc:
            raise ValueError(f"--epsilon {privacy[0]:g} / --delta {privacy[1]:g}: {exc}") from None
    sign = -1.0 if minimize else 1.0

    # Independent seeded streams; none depends on the algorithm, so both methods share the fit
    # and the initial rows for a given seed.
    fit_ss, init_ss, curator_ss = np.random.SeedSequence(seed).spawn(3)

    if prefit_on_table:  # P0: hyperparameters on the raw table, isotropic, max row norm 25
        fit = _prefit(X_raw, y, fit_ss, fit_restarts, progress, algorithm)
        raw_lengthscales = np.atleast_1d(fit.kernel.lengthscale).astype(float)
    else:  # each column by its range: no output involved
        fit, raw_lengthscales = None, _column_ranges(X_raw)
    inputs, scale = preprocess_inputs(X_raw, raw_lengthscales, DEFAULT_MAX_NORM)
    initial = random_initial_rows(n, n_init, np.random.default_rng(init_ss))

    release_info = None
    learned = None
    if algorithm == "gp-ucb":
        if fit is not None:
            optimizer = GPUCB(
                inputs,
                make_kernel("se", scale, fit.kernel.variance),
                fit.noise_variance,
                fit.mean,
                beta="srinivas",
                delta=DELTA_PRIME,
            )
        else:
            optimizer = learned = SamplerAskTell(X_raw, GPUCBSampler(), seed)
        with _bar(progress, n_init + iterations, f"{algorithm}: queries") as bar:
            oracle = _Counted(TableOracle(y), bar)
            bo = run_bo(optimizer, oracle, iterations, initial, true_values=y)
    else:
        eps, dlt, proj_dim = privacy
        if gaussian_mech is not None:
            mech = gaussian_mech
        else:
            mech = RandomProjectionMechanism(eps, dlt, proj_dim)  # warns: not DP
        curator = Curator(inputs, y, mech, seed=np.random.default_rng(curator_ss))
        release = curator.release()
        with _bar(progress, n_init + iterations, f"{algorithm}: queries") as bar:
            if fit is not None:
                hyper = {
                    "lengthscale": scale,  # isotropic, in the units of the normalised inputs
                    "signal_variance": fit.kernel.variance,
                    "noise_variance": fit.noise_variance,
                    "prior_mean": fit.mean,
                }
                if mechanism == "gaussian":
                    noise = (release.info["noise_std"], release.Z.shape[1])
                    hyper.update(
                        noise_aware_hyperparameters(
                            scale, hyper["signal_variance"], hyper["noise_variance"], *noise
                        )
                    )
                modeler = POGPUCBModeler.from_release(release, delta_prime=DELTA_PRIME, **hyper)
                bo = modeler.optimize(_Counted(curator, bar), iterations, initial, true_values=y)
            else:  # the modeler learns one isotropic lengthscale on Z from its own queries
                sampler = GPUCBSampler(ard=False, scaling="common")
                learned = SamplerAskTell(release.Z, sampler, seed)
                bo = run_bo(learned, _Counted(curator, bar), iterations, initial, true_values=y)
        keys = ("omega", "sigma_min", "branch", "c_prime", "noise_std", "epsilon", "delta", "r")
        release_info = {"mechanism": mechanism} | {
            k: release.info[k] for k in keys if k in release.info
        }

    observed = np.concatenate([bo.initial_indices, bo.indices]).astype(int)
    best_row = int(observed[np.argmax(y[observed])])
    top_row = int(np.argmax(y))
    result = {
        "algorithm": algorithm,
        "data": os.fspath(path),
        "target": target.strip(),
        "features": list(names),
        "minimize": bool(minimize),
        "n": int(n),
        "d": int(d),
        "iterations": iterations,
        "n_init": n_init,
        "seed": seed,
        "hyperparameters": _hyperparameters(fit, learned, raw_lengthscales, scale),
        "best": {
            "index": best_row,
            "value": float(sign * y[best_row]),
            "features": {name: float(X_raw[best_row, j]) for j, name in enumerate(names)},
        },
        "best_in_data": {"index": top_row, "value": float(sign * y[top_row])},
        "simple_regret": [float(v) for v in bo.simple_regret],
        "initial_indices": [int(i) for i in bo.initial_indices],
        "queried_indices": [int(i) for i in bo.indices],
    }
    if release_info is not None:
        result["release"] = release_info
        gaussian = mechanism == "gaussian"
        result["privacy"] = gaussian_privacy_note(*privacy[:2]) if gaussian else PRIVACY_NOTE
    result = finite_or_null(result)
    if out is not None:
        write_json_atomic(out / RESULT_FILENAME, result, strict=True)
    return result


def _prefit(X_raw, y, fit_ss, fit_restarts: int, progress, algorithm: str):
    """P0: maximum likelihood on (up to FIT_MAX_POINTS rows of) the whole table, with the
    core's adaptive subset (restarts on 500 rows; the subset doubles while the estimate
    moves)."""
    fit_points = min(X_raw.shape[0], FIT_MAX_POINTS)
    fit_desc = f"{algorithm}: fitting the GP ({fit_points} rows)"
    with _bar(progress, fit_restarts, fit_desc, at_once=fit_points >= SLOW_FIT_ROWS) as bar:
        fit = fit_hyperparameters(
            X_raw,
            y,
            kernel="se",
            ard=True,
            n_restarts=fit_restarts,
            seed=np.random.default_rng(fit_ss),
            max_points=FIT_MAX_POINTS,
            subset="adaptive",  # restarts on 500 rows, then warm-started on more
            callback=lambda restart: bar.update(max(restart - bar.n, 0)),
        )
        bar.update(fit_restarts - bar.n)
    return fit


def _column_ranges(X_raw: np.ndarray) -> np.ndarray:
    span = np.ptp(X_raw, axis=0)
    return np.where(span > 0, span, 1.0)


def _hyperparameters(fit, learned, raw_lengthscales, scale: float) -> dict:
    """What the result reports about the GP: the table fit (prefit), or the last fit the sampler
    made on the queried rows (in its own units: unit-cube features, standardised outputs)."""
    common = {"scale": float(scale), "max_norm": DEFAULT_MAX_NORM}
    if fit is not None:
        return {
            "source": "table: maximum likelihood on the target column (--prefit-on-table)",
            "lengthscales": raw_lengthscales.tolist(),
            "signal_variance": float(fit.kernel.variance),
            "noise_variance": float(fit.noise_variance),
            "mean": float(fit.mean),
            "fit_points": int(fit.n_points),
            "lengthscale": float(scale),
            "delta_prime": DELTA_PRIME,
        } | common
    last = learned.last_fit() or {}
    return {
        "source": "queried rows only: MAP, refitted after every query",
        "lengthscales": last.get("lengthscale"),
        "signal_variance": last.get("variance"),
        "noise_variance": last.get("noise_variance"),
        "mean": last.get("mean"),
        "fit_points": last.get("observations"),
        "units": "inputs scaled as the sampler scales them, outputs standardised",
    } | common


def _bar(progress: bool | None, total: int, desc: str, at_once: bool = False) -> tqdm:
    """A progress bar on stderr that vanishes when done: automatic (None: on a terminal, after
    :data:`PROGRESS_DELAY` seconds unless ``at_once``), forced (True) or off (False)."""
    disable = None if progress is None else not progress  # None: tqdm checks for a terminal
    delay = PROGRESS_DELAY if progress is None and not at_once else 0.0
    return tqdm(total=total, desc=desc, leave=False, disable=disable, delay=delay, file=sys.stderr)


class _Counted:
    """An oracle (``query(index) -> value``) that ticks a progress bar at every query."""

    def __init__(self, oracle, bar: tqdm):
        self._oracle, self._bar = oracle, bar

    def query(self, index: int) -> float:
        value = self._oracle.query(index)
        self._bar.update(1)
        return value


# -- reporting ----------------------------------------------------------------------------------
def format_result(result: dict) -> str:
    """A short human-readable summary of a :func:`run_on_csv` result."""
    goal = "minimised" if result["minimize"] else "maximised"
    best, top = result["best"], result["best_in_data"]
    lines = [
        f"{result['algorithm']} on {result['data']}: n={result['n']} rows, d={result['d']} "
        f"features ({', '.join(result['features'])}), target {result['target']!r} ({goal}), "
        f"T={result['iterations']}, n_init={result['n_init']}, seed={result['seed']}",
        f"best row found: {best['index']} with {result['target']} = {fmt_number(best['value'])} "
        f"(best in file: {fmt_number(top['value'])} at row {top['index']})",
        "  " + ", ".join(f"{k} = {fmt_number(v)}" for k, v in best["features"].items()),
    ]
    regret = result["simple_regret"]
    T = len(regret) - 1
    step = 10 if T <= 100 else math.ceil(T / 10)
    ts = sorted(set(range(0, T + 1, step)) | {T})
    lines.append(
        "simple regret (target units): " + "  ".join(f"t={t}: {fmt_number(regret[t])}" for t in ts)
    )
    if "release" in result:
        rel = result["release"]
        common = (
            f"epsilon={fmt_number(rel['epsilon'])}, delta={fmt_number(rel['delta'])}, r={rel['r']}"
        )
        if rel["mechanism"] == "gaussian":
            lines.append(f"release: Gaussian, noise sd={fmt_number(rel['noise_std'])}, {common}")
        else:
            lines.append(
                f"release: branch={rel['branch']}, omega={fmt_number(rel['omega'])}, "
                f"sigma_min={fmt_number(rel['sigma_min'])}, C'={fmt_number(rel['c_prime'])}, {common}"
            )
    if "privacy" in result:
        lines.append(f"privacy: {result['privacy']}")
    return "\n".join(lines)
