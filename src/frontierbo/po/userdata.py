"""Run GP-UCB or PO-GP-UCB on your own data: a CSV file whose rows are the candidates.

Each data row is a candidate input (the feature columns) with its recorded objective value (the
target column), which plays the oracle with no extra noise; the optimiser sees only the rows it
queries, and regret is measured against the best row in the file. Both algorithms get the same
random initial rows (and, prefitted, the same hyperparameters) for a seed. We always maximise:
``minimize`` negates the target on loading, and values are reported in the target's own sign.
Rows are 0-based data-row indices (a bad cell's message also gives its file line).

By default (like a study) the GP hyperparameters come only from the rows queried so far:
``gp-ucb`` is the study's GP-UCB sampler (Matérn-5/2 ARD on unit-cube-scaled features, MAP
refitted after every query, beta = 4); for ``po-gp-ucb`` the curator scales every column by its
range (no output involved), centres them, scales to a largest row norm of 25 and releases ``Z``
(Algorithm 1), and the modeler runs that sampler on ``Z`` with one isotropic lengthscale, asking
for outputs by row index only (Algorithm 2's protocol).

``prefit_on_table`` (P0, as the papers do, Section 4): the curator first fits the hyperparameters
by maximum likelihood (ARD squared exponential, constant mean, Gaussian noise; at most 2000 rows;
seeded) on the raw inputs **and the whole target column**, divides each feature by its
length-scale, centres and scales to a largest row norm of 25 (factor ``s``, the modeler's
isotropic length-scale); then GP-UCB (delta' = 0.025) runs on those inputs, or ``Curator`` ->
``release()`` -> ``POGPUCBModeler`` on ``Z``. Having seen up to 2000 values before its first
query is fine for reproducing the papers, not for optimisation.

WARNING: the random-projection release is NOT differentially private (docs/privacy.md,
:mod:`frontierbo.po.random_projection`); do not use it to protect sensitive inputs.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Sequence
from functools import partial
from pathlib import Path

import numpy as np

from frontierbo.core.fit import fit_hyperparameters
from frontierbo.core.gp_ucb import GPUCB
from frontierbo.core.kernels import make_kernel
from frontierbo.core.loop import TableOracle, run_bo
from frontierbo.io import (
    check_magnitude,
    column,
    data_path,
    finite_or_null,
    fmt_number,
    read_table,
    select_feature_columns,
)
from frontierbo.po.gaussian_release import GaussianRowMechanism, noise_aware_hyperparameters
from frontierbo.po.po_gp_ucb import Curator, POGPUCBModeler, random_initial_rows
from frontierbo.po.problems.base import DEFAULT_MAX_NORM, preprocess_inputs
from frontierbo.po.random_projection import (
    NOT_PRIVATE_MESSAGE,
    NotDifferentiallyPrivateWarning,
    RandomProjectionMechanism,
)
from frontierbo.po.sampler import DELTA_PRIME
from frontierbo.po.system import ALGORITHMS, PO_GP_UCB
from frontierbo.study.samplers import GPUCBSampler, SamplerAskTell
from frontierbo.systems.userrun import Counted, implements, progress_bar

__all__ = ["ALGORITHMS", "DELTA_PRIME", "PRIVACY_NOTE", "example", "format_result",
           "load_csv_problem", "run_on_csv"]  # fmt: skip

#: The privacy caveat carried by every random-projection result, printed once, as the report's
#: last line (the release's own warning is not repeated on stderr).
PRIVACY_NOTE = NOT_PRIVATE_MESSAGE


def projection_note(r: int, d: int, mechanism: str) -> str | None:
    """The warning for an ``r`` that reduces no dimension: ``r > d`` for the random projection,
    ``r >= d`` for the Gaussian release; None otherwise. Both releases take any r >= 1, and the
    paper itself uses r = 10 and 15 on 2 or 3 features, so such an r is explained, not refused."""
    if mechanism == "gaussian":
        if r < d:
            return None
        return (
            f"--r {r} is not below d = {d} features: with --mechanism gaussian the projection "
            "then reduces no dimension and only adds noise (calibrated to the drawn "
            "projection's norm, which is above 1; docs/privacy.md); leave --r out to release "
            f"the rows in their {d} coordinates"
        )
    if r <= d:
        return None
    return (
        f"--r {r} is above d = {d} features: the release Z (n x {r}) is still a rank-{d} linear "
        f"image of the centred rows, not a reduction, so it hides no more than r = {d} would "
        "(for any r >= d, d + 1 known rows reconstruct every row); a larger r keeps distances "
        "more closely (Lemma 1; the paper uses r = 10 and 15 on 2 or 3 features) but raises "
        "omega, and with it the chance of the else-branch lift, which stretches distances "
        "(C' in the report)"
    )


def gaussian_privacy_note(epsilon: float, delta: float) -> str:
    """What the Gaussian release guarantees on this path, and what it does not."""
    return (
        f"({epsilon:g}, {delta:g})-DP for the released feature rows (one row moving by <= 1 in L2, "
        "in the normalised units); NOT covered: the target values, the normalisation scale and "
        "the GP hyperparameters fitted on the raw data (see docs/privacy.md)"
    )


#: Rows used by the maximum-likelihood fit (a random subset when the file is larger).
FIT_MAX_POINTS = 2000
#: Fits on this many rows or more take seconds (about 20 s for 800 rows, 2 min for 2000 on two
#: cores), and the fit can only report after its first optimiser step: its bar shows at once.
SLOW_FIT_ROWS = 500


def load_csv_problem(
    path: str | os.PathLike,
    target: str,
    features: Sequence[str] | str | None = None,
    minimize: bool = False,
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """``(X, y, feature_names)`` of a CSV file (header row, comma-separated, UTF-8): ``X``
    (n, d) the inputs in file order, ``y`` (n,) the target, NEGATED when ``minimize`` (the
    optimisers maximise), the feature names in ``X``'s order (default: every other column).

    Raises FileNotFoundError (naming ``--data``) or ValueError naming the parameter, column
    and 0-based row at fault: a missing column, a non-numeric, empty, NaN or infinite value in a
    used column, one beyond ``frontierbo.io.MAX_ABS_VALUE`` (1e150) in magnitude (the fit could
    not square it), fewer than 2 rows, a malformed file.
    """
    path = data_path(path)
    if not isinstance(target, str) or not target.strip():
        raise TypeError(f"--target must be a non-empty column name, got {target!r}")
    if not isinstance(minimize, bool | np.bool_):
        raise TypeError(f"minimize must be True or False, got {minimize!r}")
    target, where = target.strip(), f"--data {str(path)!r}"
    header, rows, lines = read_table(path)
    if target not in header:
        available = ", ".join(repr(name) for name in header)
        raise ValueError(
            f"--target column {target!r} not found in {where}; available columns: {available}"
        )
    names = select_feature_columns(
        header, rows, features, [target], f"the --target column {target!r}", where
    )
    if len(rows) < 2:
        raise ValueError(f"{where} must have at least 2 data rows (n >= 2), got n={len(rows)}")
    y = column(rows, lines, header.index(target), target, "--target")
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
        # The rule of every `run` command: a constant objective is refused. Every row would be
        # optimal and the regret 0 whatever is chosen (and the fit has no scale to learn); most
        # often it means the wrong column was named.
        raise ValueError(
            f"the --target column {target!r} has the same value in every row: every row is "
            "optimal and there is nothing to optimise (is it the right column?)"
        )


@implements(PO_GP_UCB)  # gp-ucb's parameters are a subset; `algorithm` is fixed by each command
def run_on_csv(
    path: str | os.PathLike,
    target: str,
    algorithm: str,
    iterations: int,
    seed: int = 0,
    features: Sequence[str] | str | None = None,
    minimize: bool = False,
    epsilon: float | None = None,
    delta: float | None = None,
    r: int | None = None,
    n_init: int = 1,
    out: str | os.PathLike | None = None,
    fit_restarts: int = 3,
    mechanism: str = "random-projection",
    progress: bool | None = None,
    prefit_on_table: bool = False,
) -> dict:
    """Optimise the target column of a CSV file with ``algorithm`` (module doc); ``progress``:
    bars on stderr (None: on a terminal, for a run longer than a moment). Returns a JSON-ready
    dict: the inputs, ``hyperparameters`` (their source and values), ``best`` (row, value in the
    target's sign, raw features) over the observed rows, ``best_in_data``, ``simple_regret``
    (T + 1 values, target units: entry 0 after the initial rows), ``initial_indices``,
    ``queried_indices``; for ``po-gp-ucb`` also ``release`` (the mechanism's constants) and
    ``privacy`` (what it guarantees: the random projection is NOT differentially private, said
    there and not again as a warning). An ``r`` that is not a reduction warns why before any
    work (:func:`projection_note`).
    """
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {list(ALGORITHMS)}, got {algorithm!r}")
    # r: the random projection's dimension; the Gaussian release projects only when given one
    needed = {"epsilon": epsilon, "delta": delta} | ({"r": r} if mechanism != "gaussian" else {})
    missing = [name for name, value in needed.items() if value is None]
    if algorithm == "po-gp-ucb" and missing:
        raise ValueError(f"{missing[0]} (--{missing[0]}) is required for po-gp-ucb")
    if progress is not None and not isinstance(progress, bool):
        raise TypeError(f"progress must be True, False or None, got {progress!r}")
    X_raw, y, names = load_csv_problem(path, target, features, minimize)
    _check_data_params(X_raw, y, iterations, n_init, target.strip(), names)
    n, d = X_raw.shape
    note = None if algorithm != "po-gp-ucb" or r is None else projection_note(r, d, mechanism)
    if note is not None:
        warnings.warn(note, UserWarning, stacklevel=3)
    mech = None
    if algorithm == "po-gp-ucb" and mechanism == "gaussian":
        mech = GaussianRowMechanism(epsilon, delta, r)
        try:  # the normalised inputs have row norms <= DEFAULT_MAX_NORM, so every entry too
            mech.check_range(d, DEFAULT_MAX_NORM)
        except ValueError as exc:
            raise ValueError(f"--epsilon {epsilon:g} / --delta {delta:g}: {exc}") from None
    sign = -1.0 if minimize else 1.0

    # Independent seeded streams; none depends on the algorithm, so both methods share the fit
    # and the initial rows for a given seed.
    fit_ss, init_ss, curator_ss = np.random.SeedSequence(seed).spawn(3)

    if prefit_on_table:  # P0: hyperparameters on the raw table, isotropic, max row norm 25
        fit = _prefit(X_raw, y, fit_ss, fit_restarts, progress, algorithm)
        raw_lengthscales = np.atleast_1d(fit.kernel.lengthscale).astype(float)
    else:  # each column by its range: no output involved
        span = np.ptp(X_raw, axis=0)
        fit, raw_lengthscales = None, np.where(span > 0, span, 1.0)
    inputs, scale = preprocess_inputs(X_raw, raw_lengthscales, DEFAULT_MAX_NORM)
    initial = random_initial_rows(n, n_init, np.random.default_rng(init_ss))

    release = learned = None
    if algorithm == "gp-ucb":
        oracle = TableOracle(y)
    else:  # the modeler talks to the curator through row indices only
        if mech is None:
            mech = RandomProjectionMechanism(epsilon, delta, r)
        oracle = Curator(inputs, y, mech, seed=np.random.default_rng(curator_ss))
        with warnings.catch_warnings():
            # not DP: the result's "privacy" says so, as the report's last line; once is enough
            warnings.simplefilter("ignore", NotDifferentiallyPrivateWarning)
            release = oracle.release()
    if fit is None:  # learned from the queried rows; on Z, one isotropic lengthscale
        sampler = GPUCBSampler() if release is None else GPUCBSampler(ard=False, scaling="common")
        optimizer = learned = SamplerAskTell(X_raw if release is None else release.Z, sampler, seed)
    elif release is None:
        kernel = make_kernel("se", scale, fit.kernel.variance)
        optimizer = GPUCB(
            inputs, kernel, fit.noise_variance, fit.mean, beta="srinivas", delta=DELTA_PRIME
        )
    else:
        hyper = {
            "lengthscale": scale,  # isotropic, in the units of the normalised inputs
            "signal_variance": fit.kernel.variance,
            "noise_variance": fit.noise_variance,
            "prior_mean": fit.mean,
        }
        if mechanism == "gaussian":
            noise = (release.info["noise_std"], release.Z.shape[1])
            variances = (hyper["signal_variance"], hyper["noise_variance"])
            hyper |= noise_aware_hyperparameters(scale, *variances, *noise)
        optimizer = POGPUCBModeler.from_release(release, delta_prime=DELTA_PRIME, **hyper)
    with progress_bar(progress, n_init + iterations, f"{algorithm}: queries") as bar:
        bo = run_bo(optimizer, Counted(oracle, bar), iterations, initial, true_values=y)

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
    if release is not None:
        keys = ("omega", "sigma_min", "branch", "c_prime", "noise_std", "epsilon", "delta", "r")
        info = {k: release.info[k] for k in keys if k in release.info}
        result["release"] = {"mechanism": mechanism} | info
        gaussian = mechanism == "gaussian"
        result["privacy"] = gaussian_privacy_note(epsilon, delta) if gaussian else PRIVACY_NOTE
    return finite_or_null(result)


def _prefit(X_raw, y, fit_ss, fit_restarts: int, progress, algorithm: str):
    """P0: maximum likelihood on (up to FIT_MAX_POINTS rows of) the whole table, with the
    core's adaptive subset (restarts on 500 rows; the subset doubles while the estimate
    moves)."""
    fit_points = min(X_raw.shape[0], FIT_MAX_POINTS)
    fit_desc = f"{algorithm}: fitting the GP ({fit_points} rows)"
    with progress_bar(progress, fit_restarts, fit_desc, at_once=fit_points >= SLOW_FIT_ROWS) as bar:
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
        common = f"epsilon={fmt_number(rel['epsilon'])}, delta={fmt_number(rel['delta'])}"
        common += f", r={rel['r']}"
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


def example(directory, algorithm: str | None = None) -> list[dict]:
    """A 40-row CSV (3 features) and a small run on it for gp-ucb and for po-gp-ucb with each
    mechanism (the conformance checks); given ``algorithm``: its runs only, without the key
    (which its command fixes)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, size=(40, 3))
    y = np.sin(3.0 * X[:, 0]) + X[:, 1] ** 2 - 0.5 * X[:, 2]
    path = Path(directory) / "rows.csv"
    lines = ["a,b,c,y"] + [",".join(f"{v:.6f}" for v in row) for row in np.column_stack([X, y])]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    common = {"path": path, "target": "y", "iterations": 6, "seed": 1, "fit_restarts": 1}
    private = {"epsilon": 2.0, "delta": 1e-3}
    runs = [
        ("gp-ucb", {}),
        ("po-gp-ucb", {"mechanism": "random-projection", "r": 3, **private}),
        ("po-gp-ucb", {"mechanism": "gaussian", **private}),
    ]
    if algorithm is None:
        return [{"algorithm": name, **common, **kwargs} for name, kwargs in runs]
    return [{**common, **kwargs} for name, kwargs in runs if name == algorithm]


gp_ucb_example = partial(example, algorithm="gp-ucb")
po_gp_ucb_example = partial(example, algorithm="po-gp-ucb")
