"""What a study asks next: samplers over a finite candidate set (Optuna's word for it).

A sampler is a small object with ``name``, ``settings()`` (JSON, stored with the study so that
:func:`~frontierbo.study.study.load_study` rebuilds it) and ``suggest(context) -> row``. It sees
only what the study has observed (:class:`History`): the told rows and values, and the rows
still pending with other workers. It never sees a value it was not told, and its randomness
comes from ``context.rng``, seeded by the study's seed and the trial number, so a study resumed
from its database asks exactly what it would have asked.

* :class:`RandomSampler`: uniform over the rows not yet asked.
* :class:`GPUCBSampler`: GP-UCB (Srinivas et al. 2010) with hyperparameters learned only from the
  observed values, and GP-BUCB (Desautels et al. 2014) for pending rows.
* :class:`GPEISampler`: expected improvement (in log space) on the same model.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

import numpy as np
from scipy.special import erfcx
from scipy.stats import norm

from frontierbo._validation import check_int, check_real
from frontierbo.core.acquisition import make_beta_schedule, select_max, select_ucb, width_from_beta
from frontierbo.core.fit import LogNormalPriors, fit_hyperparameters
from frontierbo.core.gp import FiniteDomainGP
from frontierbo.core.kernels import make_kernel

KERNELS = ("matern52", "matern32", "se")
SCALINGS = ("unit-cube", "none")


@dataclass(frozen=True)
class History:
    """What a sampler may know when asked for trial ``number``.

    ``rows`` / ``values``: the told trials in the order they were told (values in the
    maximisation sense: a minimising study negates them); ``pending``: rows asked by other
    workers and not told yet. ``candidates`` (n, d) are the study's rows.
    """

    candidates: np.ndarray
    rows: np.ndarray
    values: np.ndarray
    pending: np.ndarray
    number: int

    @property
    def asked(self) -> np.ndarray:
        return np.concatenate([self.rows, self.pending]).astype(int)


@dataclass
class SuggestContext:
    """A :class:`History`, the trial's Generator, the study's seed (for what must not depend on
    the trial, such as a fit shared by several trials) and its fit cache
    (``fits.get(t) -> dict | None``, ``fits.put(t, dict)``)."""

    history: History
    rng: np.random.Generator
    seed: int
    fits: object


def suggest_row(sampler, history: History, seed: int, fits) -> int:
    """``sampler``'s row for trial ``history.number``, with the study's seeding: the trial's
    Generator is ``default_rng([seed, number])`` (a study and an in-memory replay agree)."""
    rng = np.random.default_rng([seed, history.number])
    return int(sampler.suggest(SuggestContext(history, rng, seed, fits)))


def free_rows(history: History) -> np.ndarray:
    """The rows nobody has asked yet (a ValueError when none is left)."""
    n = history.candidates.shape[0]
    taken = np.zeros(n, dtype=bool)
    taken[history.asked] = True
    free = np.flatnonzero(~taken)
    if free.size == 0:
        raise ValueError(f"every one of the {n} candidates has been asked: the study is complete")
    return free


@dataclass(frozen=True)
class RandomSampler:
    """Uniformly random rows, without repetition."""

    name: str = field(default="random", init=False)

    def settings(self) -> dict:
        return {}

    def suggest(self, context: SuggestContext) -> int:
        return int(context.rng.choice(free_rows(context.history)))


@dataclass(frozen=True)
class GPSampler:
    """The GP model every GP sampler of a study shares, with honest hyperparameters.

    * The first ``n_initial`` trials are uniformly random rows (pending ones count, so parallel
      workers share one initial design).
    * Then a Matérn-5/2 ARD GP (``kernel``) on the candidates scaled to the unit cube (by the
      candidate set's own ranges, which involve no output) and the observed values
      standardised, with a constant mean and a noise variance. Its hyperparameters are the
      MAP estimate under BoTorch's dimension-scaled log-normal priors (:class:`LogNormalPriors`)
      on the *observed* points only, refitted after every ``refit_every`` new observations,
      ``fit_restarts`` seeded restarts.
    * Pending rows enter as hallucinated observations at the posterior mean (GP-BUCB): the
      mean is unchanged, the variance shrinks around them, so parallel workers spread out.
    * A subclass scores the rows nobody has asked yet (:meth:`select`).
    """

    n_initial: int | None = None
    kernel: str = "matern52"
    refit_every: int = 1
    fit_restarts: int = 2
    #: one lengthscale per column (True) or one for all (False: for inputs whose distances
    #: already mean something, such as PO-GP-UCB's release)
    ard: bool = True
    #: "unit-cube": columns scaled by the candidates' ranges; "none": the candidates as given
    scaling: str = "unit-cube"

    def __post_init__(self):
        if self.n_initial is not None:
            check_int(self.n_initial, "n_initial", low=1)
        if self.kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {KERNELS}, got {self.kernel!r}")
        check_int(self.refit_every, "refit_every", low=1)
        check_int(self.fit_restarts, "fit_restarts", low=1)
        if not isinstance(self.ard, bool):
            raise ValueError(f"ard must be true or false, got {self.ard!r}")
        if self.scaling not in SCALINGS:
            raise ValueError(f"scaling must be one of {SCALINGS}, got {self.scaling!r}")

    def settings(self) -> dict:
        out = asdict(self)
        out.pop("name")
        return out

    def initial_trials(self, d: int) -> int:
        """``n_initial``, or ``min(10, d + 1)``, at least 2 (a GP needs two values to scale)."""
        return self.n_initial if self.n_initial is not None else max(2, min(10, d + 1))

    def suggest(self, context: SuggestContext) -> int:
        h = context.history
        free = free_rows(h)
        if h.asked.size < self.initial_trials(h.candidates.shape[1]) or h.rows.size < 2:
            return int(context.rng.choice(free))
        excluded = np.ones(h.candidates.shape[0], dtype=bool)
        excluded[free] = False
        return self.select(self.posterior(h, context), h, excluded)

    def select(self, gp: FiniteDomainGP, h: History, excluded: np.ndarray) -> int:
        raise NotImplementedError

    def posterior(self, h: History, context: SuggestContext) -> FiniteDomainGP:
        """The GP on the unit-cube candidates given the standardised observations, pending
        rows hallucinated at the posterior mean."""
        X = unit_cube(h.candidates) if self.scaling == "unit-cube" else h.candidates
        mu, sd = h.values.mean(), h.values.std()
        y = (h.values - mu) / (sd if sd > 0 else 1.0)
        hyper = self.hyperparameters(X, h, context)
        # the fit standardised its own (earlier) values: carry its mean and scales over
        ratio = hyper["y_std"] / (sd if sd > 0 else 1.0)
        mean = (hyper["mean"] * hyper["y_std"] + hyper["y_mean"] - mu) / (sd if sd > 0 else 1.0)
        lengthscale = np.asarray(hyper["lengthscale"]) if self.ard else hyper["lengthscale"][0]
        kernel = make_kernel(self.kernel, lengthscale, hyper["variance"] * ratio**2)
        gp = FiniteDomainGP(X, kernel, hyper["noise_variance"] * ratio**2, mean)
        for row, value in zip(h.rows, y, strict=True):
            gp.add(int(row), float(value))
        for row in h.pending:  # GP-BUCB: y = the current posterior mean
            gp.add(int(row), float(gp.mean[row]))
        return gp

    def hyperparameters(self, X, h: History, context: SuggestContext) -> dict:
        """The MAP fit on the observations at the last scheduled count (cached in the study)."""
        t_min = self.initial_trials(X.shape[1])
        t = h.rows.size
        t_fit = t - (t - t_min) % self.refit_every if t >= t_min else t
        cached = context.fits.get(t_fit)
        if cached is not None:
            return cached
        # the fit uses the first t_fit observations: every worker and every resume agrees
        values = h.values[:t_fit]
        y_mean, y_std = float(values.mean()), float(values.std()) or 1.0
        priors = LogNormalPriors.dimension_scaled(X.shape[1])
        if np.ptp(values) == 0:  # nothing to learn a scale from yet: the priors' modes
            return {
                "variance": 1.0,
                "lengthscale": [float(np.exp(priors.lengthscale_loc))] * (X.shape[1] if self.ard else 1),
                "noise_variance": float(np.exp(priors.noise_loc)),
                "mean": 0.0, "y_mean": y_mean, "y_std": y_std, "observations": t_fit,
            }  # fmt: skip
        fit = fit_hyperparameters(
            X[h.rows[:t_fit]],
            (values - y_mean) / y_std,
            kernel=self.kernel,
            ard=self.ard,
            n_restarts=self.fit_restarts,
            seed=np.random.default_rng([context.seed, t_fit]),
            min_noise_variance=1e-6,
            priors=priors,
        )
        hyper = {
            "variance": float(fit.kernel.variance),
            "lengthscale": np.atleast_1d(fit.kernel.lengthscale).astype(float).tolist(),
            "noise_variance": fit.noise_variance,
            "mean": fit.mean,
            "y_mean": y_mean,
            "y_std": y_std,
            "observations": t_fit,
            "neg_log_posterior": fit.nll,
        }
        context.fits.put(t_fit, hyper)
        return hyper


@dataclass(frozen=True)
class GPUCBSampler(GPSampler):
    """GP-UCB (Srinivas et al. 2010) on the :class:`GPSampler` model: the next row maximises
    ``mean + sqrt(beta_t) std`` among the rows not asked yet (``beta``: a constant, or
    ``"srinivas"`` with ``delta``, t = observations + pending + 1)."""

    beta: float | str = 4.0
    delta: float = 0.1
    name: str = field(default="gp-ucb", init=False)

    def __post_init__(self):
        super().__post_init__()
        if self.beta != "srinivas":
            check_real(self.beta, "beta", low=0.0, low_open=False)
        check_real(self.delta, "delta", low=0.0, high=1.0)

    def select(self, gp: FiniteDomainGP, h: History, excluded: np.ndarray) -> int:
        t = h.rows.size + h.pending.size + 1
        beta = make_beta_schedule(self.beta, gp.n, self.delta)(t)
        return select_ucb(gp.mean, gp.std, width_from_beta(beta), exclude=excluded)


@dataclass(frozen=True)
class GPEISampler(GPSampler):
    """Expected improvement (Jones et al. 1998) on the :class:`GPSampler` model, scored in
    log space (LogEI, Ament et al. 2023) so that rows far below the incumbent still rank
    instead of all underflowing to 0: the next row maximises
    ``log E[max(f - best - xi, 0)]``, ``best`` the largest standardised value told."""

    xi: float = 0.0
    name: str = field(default="gp-ei", init=False)

    def __post_init__(self):
        super().__post_init__()
        check_real(self.xi, "xi", low=0.0, low_open=False)

    def select(self, gp: FiniteDomainGP, h: History, excluded: np.ndarray) -> int:
        best = float(np.max(gp.observed_values[: h.rows.size]))  # told values, not hallucinated
        scores = log_expected_improvement(gp.mean - best - self.xi, gp.std)
        return select_max(scores, exclude=excluded)


def log_expected_improvement(gain: np.ndarray, std: np.ndarray) -> np.ndarray:
    """``log(std h(gain / std))``, ``h(z) = phi(z) + z Phi(z)``, stable for very negative z:
    there ``h(z) = phi(z) (1 - |z| R(|z|))`` with the Mills ratio ``R(u) = sqrt(pi/2)
    erfcx(u / sqrt 2)``. Rows with ``std = 0`` score ``log(max(gain, 0))``."""
    gain, std = np.asarray(gain, dtype=float), np.asarray(std, dtype=float)
    out = np.full(gain.shape, -np.inf)
    pos = std > 0
    z = gain[pos] / std[pos]
    log_h = np.empty_like(z)
    near = z > -5.0
    zn = z[near]
    log_h[near] = np.log(np.maximum(norm.pdf(zn) + zn * norm.cdf(zn), 1e-300))
    u = -z[~near]
    log_h[~near] = norm.logpdf(u) + np.log1p(-u * np.sqrt(np.pi / 2) * erfcx(u / np.sqrt(2)))
    out[pos] = np.log(std[pos]) + log_h
    flat = ~pos & (gain > 0)
    out[flat] = np.log(gain[flat])
    return out


def unit_cube(candidates: np.ndarray) -> np.ndarray:
    """Each column scaled to [0, 1] by the candidate set's range (constant columns: 0)."""
    lo, span = candidates.min(axis=0), np.ptp(candidates, axis=0)
    return (candidates - lo) / np.where(span > 0, span, 1.0)


class SamplerAskTell:
    """A sampler as an in-memory ask / tell optimiser (no database): the ``core.loop`` interface
    (``ask() -> row``, ``tell(row, y)``) for replaying a table, with a study's seeding, so a
    replay asks what a study with the same seed would (``run ... --data`` uses it).

    Rows told without being asked (an initial design) count as observations; an ask not yet
    told is pending, and asking again before telling returns it.
    """

    def __init__(self, candidates, sampler, seed: int = 0):
        self.candidates = np.asarray(candidates, dtype=float)
        self.sampler, self.seed = sampler, check_int(seed, "seed", low=0)
        self.rows: list[int] = []
        self.values: list[float] = []
        self.fits = _DictFits()
        self._pending: int | None = None

    def ask(self) -> int:
        if self._pending is None:
            history = History(self.candidates, np.array(self.rows, dtype=int),
                              np.array(self.values, dtype=float), np.array([], dtype=int),
                              len(self.rows))  # fmt: skip
            self._pending = suggest_row(self.sampler, history, self.seed, self.fits)
        return self._pending

    def tell(self, row: int, y: float) -> None:
        self.rows.append(int(row))
        self.values.append(float(y))
        if row == self._pending:
            self._pending = None

    def last_fit(self) -> dict | None:
        """The most recent hyperparameters the sampler fitted (None before any fit)."""
        return self.fits[max(self.fits)] if self.fits else None


class _DictFits(dict):
    def put(self, observations: int, hyper: dict) -> None:
        self[observations] = hyper


#: The samplers a study can name (``algorithm=``); the systems' own algorithms are not
#: registered as samplers yet (issue 13).
SAMPLERS = {"gp-ucb": GPUCBSampler, "gp-ei": GPEISampler, "random": RandomSampler}


def make_sampler(algorithm: str, settings: dict | None = None, extra: dict | None = None):
    """The sampler called ``algorithm`` with ``settings`` (keyword arguments)."""
    known = {**SAMPLERS, **(extra or {})}
    if algorithm not in known:
        raise ValueError(f"algorithm must be one of {sorted(known)}, got {algorithm!r}")
    settings = dict(settings or {})
    cls = known[algorithm]
    allowed = [f.name for f in fields(cls) if f.init]
    unknown = sorted(set(settings) - set(allowed))
    if unknown:
        raise ValueError(
            f"settings of algorithm {algorithm!r}: unknown {unknown}; allowed: {allowed}"
        )
    try:
        return cls(**settings)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"settings of algorithm {algorithm!r}: {exc}") from None
