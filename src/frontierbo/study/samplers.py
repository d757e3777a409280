"""What a study asks next: samplers over a finite candidate set (Optuna's word for it).

A sampler is a small object with ``name``, ``settings()`` (JSON, stored with the study so that
:func:`~frontierbo.study.study.load_study` rebuilds it) and ``suggest(context) -> row`` (or
``(row, request)``, see below). It sees only what the study has observed (:class:`History`):
the told rows and values, and the rows still pending with other workers. It never sees a value
it was not told, and its randomness comes from ``context.rng``, seeded by the study's seed and
the trial number, so a study resumed from its database asks exactly what it would have asked.

Optional parts of the contract (scikit-learn style: absent means the default):

* ``repeats = True``: the sampler may ask a row again (bandit algorithms); otherwise every row
  is asked at most once.
* ``sequential = True``: each choice needs the previous value, so the study refuses a second
  ask while a trial is pending (parallel workers need GP-BUCB-style samplers).
* ``suggest`` returning ``(row, request)``: ``request`` (a JSON dict) tells the evaluator how to
  evaluate, e.g. Q-GP-UCB's target accuracy; it is stored with the trial and returned by ask.
* ``privatise_tell(value) -> value``: applied by :meth:`Study.tell` in the evaluator's process
  before anything is written (LDP samplers): the database never holds the raw value.

Samplers are found by name (:func:`make_sampler`): the built-in ones below, then the
``frontierbo.samplers`` entry-point group, through which each system (and any other package)
registers its algorithms (``pyproject.toml``; :func:`available_samplers`).

* :class:`RandomSampler`: uniform over the rows not yet asked.
* :class:`GPUCBSampler`: GP-UCB (Srinivas et al. 2010) with hyperparameters learned only from the
  observed values, and GP-BUCB (Desautels et al. 2014, ``core.gp_ucb.gp_bucb_scores``) for
  pending rows.
* :class:`GPEISampler`: expected improvement (in log space) on the same model.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

import numpy as np
from scipy.special import erfcx
from scipy.stats import norm

from frontierbo._validation import check_int, check_real
from frontierbo.core.acquisition import make_beta_schedule, select_max, width_from_beta
from frontierbo.core.fit import LogNormalPriors, fit_hyperparameters
from frontierbo.core.gp import FiniteDomainGP
from frontierbo.core.gp_ucb import gp_bucb_scores
from frontierbo.core.kernels import make_kernel

KERNELS = ("matern52", "matern32", "se")
SCALINGS = ("unit-cube", "common", "none")


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
    #: the told trials' requests (dicts, aligned with ``rows``; empty dicts when none)
    requests: tuple = ()

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


def suggest_trial(sampler, history: History, seed: int, fits) -> tuple[int, dict]:
    """``sampler``'s ``(row, request)`` for trial ``history.number``, with the study's seeding:
    the trial's Generator is ``default_rng([seed, number])`` (a study and an in-memory replay
    agree). ``request`` is ``{}`` for samplers that return a bare row."""
    rng = np.random.default_rng([seed, history.number])
    out = sampler.suggest(SuggestContext(history, rng, seed, fits))
    row, request = out if isinstance(out, tuple) else (out, {})
    row = int(row)
    if not 0 <= row < history.candidates.shape[0]:
        raise RuntimeError(f"sampler {sampler.name!r} suggested row {row}, outside the candidates")
    if not getattr(sampler, "repeats", False) and row in set(history.asked.tolist()):
        raise RuntimeError(f"sampler {sampler.name!r} suggested row {row} again")
    return row, dict(request)


def suggest_row(sampler, history: History, seed: int, fits) -> int:
    """The row of :func:`suggest_trial` (for the ``core.loop`` interface, which has no
    requests)."""
    return suggest_trial(sampler, history, seed, fits)[0]


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
    * Pending rows enter as hallucinated observations at the posterior mean (GP-BUCB,
      ``FiniteDomainGP.hallucinated``): the mean is unchanged, the variance shrinks around
      them, so parallel workers spread out.
    * A subclass scores the rows nobody has asked yet (:meth:`select`) on the GP of the told
      values and the rows still pending.
    """

    n_initial: int | None = None
    kernel: str = "matern52"
    refit_every: int = 1
    fit_restarts: int = 2
    #: one lengthscale per column (True) or one for all (False: for inputs whose distances
    #: already mean something, such as PO-GP-UCB's release)
    ard: bool = True
    #: "unit-cube": each column scaled by its range; "common": every column divided by the
    #: largest range (distances kept up to one factor, so the priors see unit-sized inputs);
    #: "none": the candidates as given (the priors assume unit-sized inputs)
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
        """The GP on the unit-cube candidates given the standardised observations (the told
        ones: :meth:`select` hallucinates the pending rows)."""
        X = self.inputs(h.candidates)
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
        return gp

    def inputs(self, candidates: np.ndarray) -> np.ndarray:
        """The candidates as the GP sees them (``scaling``)."""
        if self.scaling == "unit-cube":
            return unit_cube(candidates)
        if self.scaling == "common":
            return candidates / common_scale(candidates)
        return candidates

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
            lengthscale, noise = priors.mode()
            return {
                "variance": 1.0,
                "lengthscale": [lengthscale] * (X.shape[1] if self.ard else 1),
                "noise_variance": noise,
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
            initial=_previous_optimum(context.fits.get(t_fit - self.refit_every), y_mean, y_std),
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
        beta = make_beta_schedule(self.beta, gp.n, self.delta)(self.round(h))
        scores = gp_bucb_scores(gp, width_from_beta(beta), h.pending)
        return select_max(scores, exclude=excluded)

    def round(self, h: History) -> int:
        """The t of beta_t: this trial's position among all trials, 1-based."""
        return h.rows.size + h.pending.size + 1


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
        best = float(np.max(gp.observed_values))  # told values
        mean, var = gp.hallucinated(None, h.pending)  # GP-BUCB's variance
        scores = log_expected_improvement(mean - best - self.xi, np.sqrt(var))
        return select_max(scores, exclude=excluded)


def _previous_optimum(hyper: dict | None, y_mean: float, y_std: float) -> np.ndarray | None:
    """The log parameters of an earlier fit, in this fit's standardisation (a warm start: the
    last restart begins there instead of at a random point)."""
    if hyper is None or "neg_log_posterior" not in hyper:  # none, or the priors' stand-in
        return None
    ratio = hyper["y_std"] / y_std
    mean = (hyper["mean"] * hyper["y_std"] + hyper["y_mean"] - y_mean) / y_std
    return np.concatenate([
        [np.log(hyper["variance"] * ratio**2)], np.log(hyper["lengthscale"]),
        [np.log(hyper["noise_variance"] * ratio**2), mean],
    ])  # fmt: skip


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


def common_scale(candidates: np.ndarray) -> float:
    """The largest column range of the candidates (1 when every column is constant)."""
    span = float(np.max(np.ptp(candidates, axis=0)))
    return span if span > 0 else 1.0


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


class ReplaySampler:
    """Base of samplers that wrap a system's sequential ask / tell algorithm (LDP, Q-GP-UCB).

    ``build`` returns any state object; ``choose`` may leave it holding the asked row (an
    algorithm whose ask consumes randomness must not be asked twice for one trial), and
    ``replay`` must then use it. A study keeps no algorithm object between asks (another process may ask next), so the
    algorithm is rebuilt from the study's seed and the told trials are replayed in the order
    they were told: ``build(candidates, seed)`` makes it, ``replay(algorithm, row, value,
    request)`` feeds one told trial, ``choose(algorithm, history, rng) -> (row, request)`` asks
    it. Everything is deterministic given the history, so any process rebuilds the same state.
    A process keeps its latest replayed state (keyed by the exact history), so asking again after
    one more tell replays one trial, not all of them.

    Subclasses are frozen dataclasses; these algorithms choose each row from the previous
    value, so they are ``sequential`` and may ask a row again (``repeats``).
    """

    repeats = True
    sequential = True

    def suggest(self, context: SuggestContext):
        h = context.history
        told = list(zip(h.rows.tolist(), h.values.tolist(), h.requests or [{}] * h.rows.size,
                        strict=True))  # fmt: skip
        key = (_fingerprint(h.candidates), context.seed)
        cached = _REPLAYS.get(self)
        if cached is not None and cached[0] == key and told[: len(cached[1])] == cached[1]:
            algorithm, done = cached[2], len(cached[1])
        else:
            algorithm, done = self.build(h.candidates, context.seed), 0
        for row, value, request in told[done:]:
            self.replay(algorithm, row, value, request)
        _REPLAYS[self] = (key, told, algorithm)
        return self.choose(algorithm, h, context.rng)

    def settings(self) -> dict:
        return asdict(self)


#: Each replay sampler's latest algorithm state in this process (see ReplaySampler).
_REPLAYS: dict = {}


def _fingerprint(candidates: np.ndarray) -> str:
    import hashlib

    data = np.ascontiguousarray(candidates, dtype=float)
    return hashlib.sha1(repr(data.shape).encode() + data.tobytes()).hexdigest()


#: The built-in samplers; the systems' algorithms come from the entry points.
SAMPLERS = {"gp-ucb": GPUCBSampler, "gp-ei": GPEISampler, "random": RandomSampler}
#: The entry-point group through which a package registers samplers (name -> class).
ENTRY_POINT_GROUP = "frontierbo.samplers"


def available_samplers() -> dict:
    """Every sampler name a study can use: the built-in ones and the registered ones (the
    ``frontierbo.samplers`` entry points, loaded when asked for)."""
    from importlib.metadata import entry_points

    found = dict(SAMPLERS)
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(entry.name, entry)
    return found


def make_sampler(algorithm: str, settings: dict | None = None, extra: dict | None = None):
    """The sampler called ``algorithm`` with ``settings`` (keyword arguments)."""
    known = {**available_samplers(), **(extra or {})}
    if algorithm not in known:
        raise ValueError(f"algorithm must be one of {sorted(known)}, got {algorithm!r}")
    settings = dict(settings or {})
    cls = known[algorithm]
    if not isinstance(cls, type):  # an entry point: import the system's module now
        try:
            cls = cls.load()
        except ImportError as exc:
            raise ImportError(f"algorithm {algorithm!r} could not be loaded: {exc}") from exc
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
