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

**Studies over a search space** (:mod:`frontierbo.study.space`) ask for a point instead of a
row: a sampler that serves them has ``suggest_point(context) -> point`` (the point in the
space's unit-cube encoding), its ``context.history`` a :class:`SpaceHistory`. The built-in
three do (:func:`serves_spaces`); the systems' samplers choose among rows and do not:

* :class:`RandomSampler`: a uniformly random point (random search);
* the GP samplers (:meth:`GPSampler.suggest_point`): a scrambled Sobol initial design, then the
  same model fitted on the told points' encodings, scoring a candidate set fresh for every ask
  (:func:`~frontierbo.study.space.candidate_pool`: Sobol points plus neighbours of the best
  points) with the finite-domain GP, and a gradient polish (L-BFGS-B, ``core.optimize``) of
  the acquisition over the continuous coordinates of the best few candidates, on
  ``core.exact.ExactGP``'s analytic input gradients. Pending points are GP-BUCB's
  hallucinations, as pending rows are.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields

import numpy as np
from scipy.special import erfcx, log_ndtr, ndtr

from frontierbo._threads import one_blas_thread
from frontierbo._validation import check_int, check_real
from frontierbo.core.acquisition import make_beta_schedule, select_max, width_from_beta
from frontierbo.core.exact import ExactGP
from frontierbo.core.fit import LogNormalPriors, fit_hyperparameters
from frontierbo.core.gp import FiniteDomainGP
from frontierbo.core.gp_ucb import gp_bucb_scores
from frontierbo.core.kernels import make_kernel
from frontierbo.core.optimize import maximize_from_starts, ucb_and_gradient
from frontierbo.study.space import N_CENTERS, Space, candidate_pool, row_keys

KERNELS = ("matern52", "matern32", "se")
SCALINGS = ("unit-cube", "common", "none")
#: Candidates of a space study's ask whose continuous coordinates are polished, and the
#: L-BFGS-B iterations of each.
N_STARTS, POLISH_ITERATIONS = 4, 200
#: Observations up to which ``refit_every="auto"`` refits after every new one.
AUTO_REFIT_ALL = 128
#: Posterior variance below which the polish treats the standard deviation as constant.
VARIANCE_FLOOR = 1e-12
_SQRT2, _SQRT_HALF_PI = math.sqrt(2.0), math.sqrt(math.pi / 2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


@dataclass(frozen=True)
class History:
    """What a sampler may know when asked for trial ``number``.

    ``rows`` / ``values``: the told trials in the order they were told (values in the
    maximisation sense: a minimising study negates them); ``pending``: rows asked by other
    workers and not told yet; ``failed``: rows whose evaluation failed (no value: never a
    value of the model, never asked again). ``candidates`` (n, d) are the study's rows.
    """

    candidates: np.ndarray
    rows: np.ndarray
    values: np.ndarray
    pending: np.ndarray
    number: int
    #: the told trials' requests (dicts, aligned with ``rows``; empty dicts when none)
    requests: tuple = ()
    #: the search space whose encoded points ``candidates`` are (a space study's ask), or None
    space: Space | None = None
    failed: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))

    @property
    def asked(self) -> np.ndarray:
        return np.concatenate([self.rows, self.pending, self.failed]).astype(int)

    @property
    def design_dimension(self) -> int:
        """The dimension the initial design's size follows: the space's parameters, else the
        candidates' columns."""
        return self.candidates.shape[1] if self.space is None else self.space.n_params


@dataclass(frozen=True)
class SpaceHistory:
    """What a sampler may know when asked for trial ``number`` of a study over ``space``.

    ``points`` (t, dims) / ``values``: the told trials' encoded points (the space's unit cube)
    in the order they were told, values in the maximisation sense; ``pending`` (p, dims): the
    points asked by other workers and not told yet; ``failed``: the points whose evaluation
    failed (none when None)."""

    space: Space
    points: np.ndarray
    values: np.ndarray
    pending: np.ndarray
    number: int
    failed: np.ndarray | None = None

    @property
    def asked(self) -> np.ndarray:
        failed = np.zeros((0, self.space.dims)) if self.failed is None else self.failed
        return np.vstack([self.points, self.pending, failed])


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
    if row in set(history.failed.tolist()):  # a repeating sampler's rule picked it again
        raise ValueError(
            f"algorithm {sampler.name!r} chose row {row} again, whose evaluation failed; it "
            "cannot skip a row: tell a value for that row, or make a study without it"
        )
    if not getattr(sampler, "repeats", False) and row in set(history.asked.tolist()):
        raise RuntimeError(f"sampler {sampler.name!r} suggested row {row} again")
    return row, dict(request)


def serves_spaces(sampler) -> bool:
    """Whether ``sampler`` can drive a study over a search space: the built-in samplers, or
    one whose class says ``spaces = True`` and has ``suggest_point``."""
    builtin = type(sampler) in (GPEISampler, GPUCBSampler, RandomSampler)
    return hasattr(sampler, "suggest_point") and (builtin or getattr(sampler, "spaces", False))


def suggest_point(sampler, history: SpaceHistory, seed: int, fits) -> tuple[np.ndarray, dict]:
    """``sampler``'s ``(point, request)`` for trial ``history.number`` of a space study, with the
    study's seeding (the trial's Generator is ``default_rng([seed, number])``): ``point`` is a
    valid point of the space's encoding (:meth:`Space.snap` leaves it unchanged) that nobody
    has asked."""
    rng = np.random.default_rng([seed, history.number])
    out = sampler.suggest_point(SuggestContext(history, rng, seed, fits))
    z, request = out if isinstance(out, tuple) else (out, {})
    space = history.space
    z = np.asarray(z, dtype=float).reshape(-1)
    if z.shape != (space.dims,) or not np.all(np.isfinite(z)):
        raise RuntimeError(f"sampler {sampler.name!r} suggested {z!r}, not a point of the space")
    if not np.array_equal(space.snap(z)[0], z):
        raise RuntimeError(f"sampler {sampler.name!r} suggested {z!r}, not a valid point")
    if row_keys(z[None])[0] in set(row_keys(history.asked)):
        raise RuntimeError(f"sampler {sampler.name!r} suggested an asked point again")
    return z, dict(request)


def _space_complete(space: Space) -> ValueError:
    return ValueError(
        f"every one of the {space.cardinality} points of the space has been asked: the study is "
        "complete"
    )


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

    def suggest_point(self, context: SuggestContext) -> np.ndarray:
        """A uniformly random point of the space (each parameter independent; a discrete point
        already asked is drawn again)."""
        return _random_point(context.history, context.rng)


def _random_point(h: SpaceHistory, rng: np.random.Generator) -> np.ndarray:
    space, taken = h.space, set(row_keys(h.asked))
    size = space.cardinality
    if size is not None and len(taken) >= size:
        raise _space_complete(space)
    for _ in range(1000):
        z = space.from_unit(rng.random((1, space.n_params)))[0]
        if row_keys(z[None])[0] not in taken:
            return z
    free = [z for z, key in zip(space.grid(), row_keys(space.grid()), strict=True)
            if key not in taken]  # fmt: skip
    return free[int(rng.integers(len(free)))]


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
    #: refit after this many new observations, or "auto": after each one up to
    #: :data:`AUTO_REFIT_ALL` observations, then when they have grown by 1/64 since the last
    #: fit (every 31 at 2 000); between refits the posterior is the last fit's
    refit_every: int | str = "auto"
    fit_restarts: int = 2
    #: refit with one restart from the previous fit's optimum, except at the first fit and
    #: whenever the observations have doubled since the last full fit (``fit_restarts``);
    #: False: every refit is a full fit (ten times slower at 500 observations)
    warm_refits: bool = True
    #: one lengthscale per column (True) or one for all (False: for inputs whose distances
    #: already mean something, such as PO-GP-UCB's release)
    ard: bool = True
    #: "unit-cube": each column scaled by its range; "common": every column divided by the
    #: largest range (distances kept up to one factor, so the priors see unit-sized inputs);
    #: "none": the candidates as given (the priors assume unit-sized inputs)
    scaling: str = "unit-cube"
    #: fit the kernel's variance (True), or hold it at 1, the standardised values' variance
    #: (False: BoTorch's SingleTaskGP since 0.12, which has no output scale); None: fitted
    #: on candidate rows, held on a search space (what measured better on each, docs/studies.md)
    fit_variance: bool | None = None

    def __post_init__(self):
        if self.n_initial is not None:
            check_int(self.n_initial, "n_initial", low=1)
        if self.kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {KERNELS}, got {self.kernel!r}")
        if self.refit_every != "auto" and (
            isinstance(self.refit_every, bool) or not isinstance(self.refit_every, int)
            or self.refit_every < 1
        ):  # fmt: skip
            raise ValueError(
                f"refit_every must be an integer >= 1 or 'auto', got {self.refit_every!r}"
            )
        check_int(self.fit_restarts, "fit_restarts", low=1)
        for flag in ("ard", "warm_refits"):
            if not isinstance(getattr(self, flag), bool):
                raise ValueError(f"{flag} must be true or false, got {getattr(self, flag)!r}")
        if self.fit_variance is not None and not isinstance(self.fit_variance, bool):
            raise ValueError(f"fit_variance must be true, false or null, got {self.fit_variance!r}")
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
        return select_max(self.scores(gp, h), exclude=excluded)

    def scores(self, gp: FiniteDomainGP, h: History) -> np.ndarray:
        """The acquisition at every candidate (n,), pending rows hallucinated (GP-BUCB)."""
        raise NotImplementedError

    def acquisition(self, gp: FiniteDomainGP, h: History):
        """``f(mean, var, dmean, dvar) -> (value, gradient)``: :meth:`scores`' acquisition at
        one point from the posterior there (pending points included in ``var``) and their
        gradients, for the polish of a space study's ask."""
        raise NotImplementedError

    # -- studies over a search space ---------------------------------------------------------
    def suggest_point(self, context: SuggestContext) -> np.ndarray:
        """The next point of a space study (module doc): the initial design, then the best of
        a fresh candidate set under :meth:`scores`, polished on the continuous coordinates."""
        h: SpaceHistory = context.history
        space = h.space
        t, p = h.values.size, h.pending.shape[0]
        if t + p < self.initial_trials(space.n_params) or t < 2:
            return _design_point(h, context.seed)
        centers = h.points[np.argsort(-h.values, kind="stable")[:N_CENTERS]]
        pool = candidate_pool(space, context.rng, centers, h.asked)
        if pool.shape[0] == 0:
            raise _space_complete(space)
        X = np.vstack([h.points, h.pending, pool])
        rows = History(X, np.arange(t), h.values, np.arange(t, t + p), h.number, space=space)
        gp = self.posterior_on(X, rows, context)
        scores = self.scores(gp, rows)[t + p :]
        order = t + p + np.argsort(-scores, kind="stable")[:N_STARTS]
        if not space.continuous.any():
            return X[order[0]]
        return self.polish(gp, rows, X[order], set(row_keys(h.asked)))

    def polish(self, gp: FiniteDomainGP, h: History, starts: np.ndarray, taken: set) -> np.ndarray:
        """The best of ``starts`` (best first) and L-BFGS-B's ends from each, over the
        continuous coordinates only (the others stay at the start's values), under the
        acquisition of :meth:`scores` evaluated by ``ExactGP`` on the told and pending points
        (pending ones at the posterior mean: the same mean, GP-BUCB's variance). An end in
        ``taken`` (the points asked, as :func:`row_keys`) is never returned."""
        observed = h.candidates[np.concatenate([h.rows, h.pending])]
        y = np.concatenate([gp.observed_values, gp.mean[h.pending]])
        exact = ExactGP(observed, y, gp.kernel, gp.noise_variance, gp.prior_mean)
        acquisition = self.acquisition(gp, h)
        free = np.flatnonzero(h.space.continuous)

        def at(base):
            def value_and_gradient(x):
                z = base.copy()
                z[free] = x
                value, grad = acquisition(*exact.mean_variance_gradient(z))
                return value, grad[free]

            return value_and_gradient

        best, best_value = starts[0], at(starts[0])(starts[0][free])[0]
        with one_blas_thread():  # t x t solves: a second BLAS thread only synchronises
            for start in starts:
                f = at(start)
                x, value = maximize_from_starts(
                    f, start[free][None], f(start[free])[0], [(0.0, 1.0)] * free.size,
                    maxiter=POLISH_ITERATIONS,
                )  # fmt: skip
                if value > best_value:
                    z = start.copy()
                    z[free] = x
                    if row_keys(z[None])[0] not in taken:  # L-BFGS-B may stop on a bound
                        best, best_value = z, value
        return best

    def posterior(self, h: History, context: SuggestContext) -> FiniteDomainGP:
        """The GP on the unit-cube candidates given the standardised observations (the told
        ones: :meth:`select` hallucinates the pending rows)."""
        return self.posterior_on(self.inputs(h.candidates), h, context)

    def posterior_on(self, X: np.ndarray, h: History, context: SuggestContext) -> FiniteDomainGP:
        """The GP on inputs ``X`` (the candidates as the GP sees them), as :meth:`posterior`."""
        mu, sd = standardisation(h.values)
        y = (h.values - mu) / sd
        hyper = self.hyperparameters(X, h, context)
        # the fit standardised its own (earlier) values: carry its mean and scales over
        ratio = hyper["y_std"] / sd
        mean = (hyper["mean"] * hyper["y_std"] + hyper["y_mean"] - mu) / sd
        lengthscale = np.asarray(hyper["lengthscale"]) if self.ard else hyper["lengthscale"][0]
        kernel = make_kernel(self.kernel, lengthscale, hyper["variance"] * ratio**2)
        gp = FiniteDomainGP(X, kernel, hyper["noise_variance"] * ratio**2, mean)
        gp.add_many(h.rows, y)  # one factorisation and a BLAS-3 solve, not t passes
        return gp

    def inputs(self, candidates: np.ndarray) -> np.ndarray:
        """The candidates as the GP sees them (``scaling``)."""
        if self.scaling == "unit-cube":
            return unit_cube(candidates)
        if self.scaling == "common":
            return candidates / common_scale(candidates)
        return candidates

    def fit_schedule(self, t: int, t_min: int) -> tuple[int, int]:
        """``(t_fit, t_previous)``: the observations the fit for ``t`` uses, and those of the
        fit scheduled before it (``refit_every``); every worker and every resume agrees."""
        if t < t_min:
            return t, t - 1
        if self.refit_every != "auto":
            t_fit = t - (t - t_min) % self.refit_every
            return t_fit, t_fit - self.refit_every
        previous, t_fit = t_min - 1, t_min
        while True:
            step = 1 if t_fit < AUTO_REFIT_ALL else t_fit // 64
            if t_fit + step > t:
                return t_fit, previous
            previous, t_fit = t_fit, t_fit + step

    def fits_variance(self, h: History) -> bool:
        """Whether the fit includes the kernel's variance (``fit_variance``; None: on rows)."""
        return h.space is None if self.fit_variance is None else self.fit_variance

    def hyperparameters(self, X, h: History, context: SuggestContext) -> dict:
        """The MAP fit on the observations at the last scheduled count (cached in the study)."""
        t_min = self.initial_trials(h.design_dimension)
        t = h.rows.size
        t_fit, t_previous = self.fit_schedule(t, t_min)
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
        initial = _previous_optimum(context.fits.get(t_previous), y_mean, y_std)
        warm = self.warm_refits and initial is not None and not _doubled(t_fit, t_previous, t_min)
        fit = fit_hyperparameters(
            X[h.rows[:t_fit]],
            (values - y_mean) / y_std,
            kernel=self.kernel,
            ard=self.ard,
            n_restarts=1 if warm else self.fit_restarts,
            seed=np.random.default_rng([context.seed, t_fit]),
            min_noise_variance=1e-6,
            priors=priors,
            initial=initial,
            variance=None if self.fits_variance(h) else 1.0,
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
            check_real(self.beta, "beta", low=0.0)
        check_real(self.delta, "delta", low=0.0, high=1.0)

    def width(self, gp: FiniteDomainGP, h: History) -> float:
        """``sqrt(beta_t)`` for this trial."""
        return width_from_beta(make_beta_schedule(self.beta, gp.n, self.delta)(self.round(h)))

    def scores(self, gp: FiniteDomainGP, h: History) -> np.ndarray:
        return gp_bucb_scores(gp, self.width(gp, h), h.pending)

    def acquisition(self, gp: FiniteDomainGP, h: History):
        width = self.width(gp, h)

        def ucb(mean, var, dmean, dvar):
            return ucb_and_gradient(mean, var, dmean, dvar, width, VARIANCE_FLOOR)

        return ucb

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

    def scores(self, gp: FiniteDomainGP, h: History) -> np.ndarray:
        best = float(np.max(gp.observed_values))  # told values
        mean, var = gp.hallucinated(None, h.pending)  # GP-BUCB's variance
        return log_expected_improvement(mean - best - self.xi, np.sqrt(var))

    def acquisition(self, gp: FiniteDomainGP, h: History):
        threshold = float(np.max(gp.observed_values)) + self.xi

        def log_ei(mean, var, dmean, dvar):
            return log_expected_improvement_and_gradient(mean - threshold, var, dmean, dvar)

        return log_ei


def standardisation(values: np.ndarray) -> tuple[float, float]:
    """``(mean, sd)`` the GP's outputs are standardised with (sd 1 for equal values): the
    posterior mean in the values' units is ``mean + sd * gp.mean``."""
    sd = float(values.std())
    return float(values.mean()), sd if sd > 0 else 1.0


def _doubled(t: int, previous: int, t_min: int) -> bool:
    """Whether the fit after ``t`` observations is the first since their number doubled
    (``t_min``, ``2 t_min``, ``4 t_min``, ... crossed since the fit at ``previous``)."""
    return (t // t_min).bit_length() > (max(previous, 0) // t_min).bit_length()


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
    pdf = np.exp(-0.5 * zn * zn - _LOG_SQRT_2PI)  # scipy.stats' norm, without its import time
    log_h[near] = np.log(np.maximum(pdf + zn * ndtr(zn), 1e-300))
    u = -z[~near]
    log_pdf = -0.5 * u * u - _LOG_SQRT_2PI
    log_h[~near] = log_pdf + np.log1p(-u * np.sqrt(np.pi / 2) * erfcx(u / np.sqrt(2)))
    out[pos] = np.log(std[pos]) + log_h
    flat = ~pos & (gain > 0)
    out[flat] = np.log(gain[flat])
    return out


def log_expected_improvement_and_gradient(
    gain: float, var: float, dgain: np.ndarray, dvar: np.ndarray, floor: float = VARIANCE_FLOOR
) -> tuple[float, np.ndarray]:
    """:func:`log_expected_improvement` at one point and its gradient from those of ``gain``
    and ``var`` (``var`` floored at ``floor``). With ``s = sqrt(var)``, ``z = gain / s``:
    ``d/dgain = Phi(z) / (s h(z))`` and ``d/ds = phi(z) / (s h(z))``, the ratios formed in log
    space so that they stay finite far below the incumbent."""
    if var <= floor:
        var, dvar = floor, np.zeros_like(dvar)
    s = math.sqrt(var)
    z = gain / s
    log_phi = -0.5 * z * z - _LOG_SQRT_2PI
    if z > -5.0:  # h(z) = phi(z) + z Phi(z), as log_expected_improvement (scalar math: faster)
        log_h = math.log(max(math.exp(log_phi) + z * 0.5 * math.erfc(-z / _SQRT2), 1e-300))
    else:
        u = -z  # h(z) = phi(u) (1 - u R(u)), R the Mills ratio (log_expected_improvement)
        log_h = log_phi + math.log1p(-u * _SQRT_HALF_PI * float(erfcx(u / _SQRT2)))
    d_gain = math.exp(float(log_ndtr(z)) - log_h) / s
    d_std = math.exp(log_phi - log_h) / s
    return math.log(s) + log_h, d_gain * dgain + d_std * dvar / (2.0 * s)


def _design_point(h: SpaceHistory, seed: int) -> np.ndarray:
    """Trial ``number``'s point of the initial design: point ``number`` of one scrambled Sobol
    sequence over the space (scrambled by ``default_rng([seed, 0])``, so every worker and every
    resume shares it); in a discrete space, the next point of the sequence nobody has asked."""
    space, taken = h.space, set(row_keys(h.asked))
    size = space.cardinality
    if size is not None and len(taken) >= size:
        raise _space_complete(space)
    n = 1 << max(6, int(np.ceil(np.log2(h.number + 64))))
    sequence = space.sobol(n, np.random.default_rng([seed, 0]))
    for z, key in zip(sequence[h.number :], row_keys(sequence[h.number :]), strict=True):
        if key not in taken:
            return z
    return _random_point(h, np.random.default_rng([seed, h.number]))


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
