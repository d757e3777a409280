"""frontierbo's study model as an Optuna sampler, and a frontierbo study handed to Optuna.

    import optuna
    from frontierbo.integration.optuna import FrontierboSampler

    study = optuna.create_study(sampler=FrontierboSampler(seed=0))  # the one changed line
    study.optimize(objective, n_trials=40)  # Optuna's storage, dashboard and plots as before

    optuna_study = to_optuna(frontierbo_study, storage="sqlite:///optuna.db")

**The sampler** (:class:`FrontierboSampler`) is an ``optuna.samplers.BaseSampler`` that samples
jointly (Optuna's *relative* sampling) over the intersection search space of the complete
trials (``optuna.search_space.intersection_search_space``, as Optuna's ``GPSampler``), minus
the distributions with one value. Each ask maps Optuna's distributions to a frontierbo
:class:`~frontierbo.study.space.Space`, in name order:

* ``FloatDistribution(low, high, log)`` -> ``Float(low, high, log)`` (a log float stays log);
* ``IntDistribution(low, high, log)`` -> ``Int(low, high, log)``;
* a stepped float or int (``step``; an int's step > 1) -> ``Int(0, K)``, the index ``k`` of the
  value ``low + k step`` (the same cell-centre encoding as frontierbo's stepped ``Float``);
* ``CategoricalDistribution(choices)`` -> ``Categorical`` over the choices' positions, so any
  choice Optuna accepts (``None``, bools, numbers, strings) comes back as given;

builds a :class:`~frontierbo.study.samplers.SpaceHistory` from the study (complete trials as
told points, in the order they completed, values negated when the study minimises; running and
waiting trials as pending points; failed and pruned trials as failed points: asked, never a
value), and asks the frontierbo sampler (``algorithm``, ``settings``) exactly as a frontierbo
study does (:func:`~frontierbo.study.samplers.suggest_point`, the trial's randomness from
``(seed, trial.number)``; its hyperparameter fits cached on the sampler, keyed by the told
points). Its point is decoded to Optuna's external values (the choice itself, an ``int``,
a ``float``): what ``sample_relative`` returns, since ``Trial._suggest`` passes it to
``distribution.to_internal_repr``. The sampled params are also stored as a trial system
attribute, so that other workers of the same storage see the running trial as pending.

Before the first trial completes Optuna knows no search space, so trial 0 is sampled
independently; so is every parameter outside the intersection space (dynamic ones), by an
internal ``optuna.samplers.RandomSampler(seed)``, as Optuna's own GPSampler does. Trials 1 to
``n_startup_trials - 1`` (default: the frontierbo sampler's initial design, ``min(10, d + 1)``,
at least 2) are points ``number`` of the sampler's scrambled Sobol design, as in a frontierbo
study; the GP takes over after that. A fully discrete space whose every point was asked falls
back to random sampling (Optuna allows a repeat). Multi-objective studies are refused.

**Export** (:func:`to_optuna`): a frontierbo study's complete and failed trials as an Optuna
study (same direction), for Optuna's visualisations and optuna-dashboard.

This module imports Optuna; ``import frontierbo`` does not import this module.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import numpy as np

try:
    import optuna
    from optuna.distributions import (
        BaseDistribution,
        CategoricalDistribution,
        FloatDistribution,
        IntDistribution,
    )
    from optuna.samplers import BaseSampler, RandomSampler
    from optuna.search_space import intersection_search_space
    from optuna.study import StudyDirection
    from optuna.trial import FrozenTrial, TrialState
except ImportError as exc:  # pragma: no cover - exercised by a test that hides optuna
    raise ImportError(
        f"frontierbo.integration.optuna needs Optuna ({exc}): pip install 'frontierbo[optuna]'"
    ) from exc

from frontierbo._validation import check_int
from frontierbo.study.samplers import (
    SpaceHistory,
    _DictFits,
    make_sampler,
    serves_spaces,
    suggest_point,
)
from frontierbo.study.space import Categorical, Float, Int, Space, row_keys

#: The trial system attribute (chunked as Optuna's samplers chunk theirs) holding the params
#: this sampler chose for a trial, so that a running trial is pending for every worker.
RELATIVE_PARAMS_KEY = "frontierbo:relative_params"
_ATTR_CHUNK = 2045
_STEP_TOLERANCE = 1e-8


class FrontierboSampler(BaseSampler):
    """An Optuna sampler on a frontierbo study sampler (module doc).

    ``algorithm``: a frontierbo sampler that serves search spaces (``"gp-ei"``, the default,
    ``"gp-ucb"`` or ``"random"``), with its ``settings`` (as ``create_study``'s); ``seed``: an
    integer >= 0 (None: a fresh random one), the same seed giving the same trials;
    ``n_startup_trials``: the initial design size (the sampler's ``n_initial``; default its
    own, ``min(10, d + 1)``, at least 2)."""

    def __init__(
        self,
        algorithm: str = "gp-ei",
        seed: int | None = None,
        n_startup_trials: int | None = None,
        settings: Mapping | None = None,
    ):
        if settings is not None and not isinstance(settings, Mapping):
            raise ValueError(
                f"settings must be a dict of the algorithm's settings, got {settings!r}"
            )
        settings = dict(settings or {})
        if not isinstance(algorithm, str):
            raise ValueError(f"algorithm must be a sampler's name, got {algorithm!r}")
        sampler = make_sampler(algorithm, settings)
        if not serves_spaces(sampler):
            raise ValueError(
                f"algorithm {algorithm!r} chooses among candidate rows and cannot sample Optuna's "
                "search spaces; use 'gp-ei', 'gp-ucb' or 'random'"
            )
        if n_startup_trials is not None:
            check_int(n_startup_trials, "n_startup_trials", low=1)
            if not hasattr(sampler, "initial_trials"):
                raise ValueError(
                    f"n_startup_trials: algorithm {algorithm!r} has no initial design; leave "
                    "n_startup_trials unset"
                )
            given = settings.get("n_initial")
            if given is not None and given != n_startup_trials:
                raise ValueError(
                    f"n_startup_trials={n_startup_trials!r} contradicts settings n_initial="
                    f"{given!r}; give one of them"
                )
            sampler = make_sampler(algorithm, {**settings, "n_initial": n_startup_trials})
        if seed is not None:
            check_int(seed, "seed", low=0)
        self._algorithm = algorithm
        self._sampler = sampler
        self._seed = _fresh_seed() if seed is None else int(seed)
        self._random = RandomSampler(seed=seed)
        self._fits = _DictFits()

    def __repr__(self) -> str:
        return (
            f"FrontierboSampler(algorithm={self._algorithm!r}, seed={self._seed}, "
            f"settings={self._sampler.settings()!r})"
        )

    @property
    def algorithm(self) -> str:
        return self._algorithm

    @property
    def seed(self) -> int:
        """The seed in use (a fresh one after :meth:`reseed_rng`)."""
        return self._seed

    @property
    def sampler(self):
        """The frontierbo sampler behind this one."""
        return self._sampler

    def reseed_rng(self) -> None:
        """A fresh random seed for this sampler and its independent RandomSampler (Optuna calls
        it in each thread of ``optimize(n_jobs > 1)``)."""
        self._seed = _fresh_seed()
        self._random.reseed_rng()

    # -- Optuna's sampler interface -------------------------------------------------------------
    def infer_relative_search_space(
        self, study: optuna.Study, trial: FrozenTrial
    ) -> dict[str, BaseDistribution]:
        _check_single_objective(study)
        complete = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        space = intersection_search_space(complete)
        return {name: d for name, d in sorted(space.items()) if not d.single()}

    def sample_relative(
        self, study: optuna.Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        if not search_space:
            return {}
        _check_single_objective(study)
        fixed = trial.system_attrs.get("fixed_params", {})
        if all(name in fixed for name in search_space):  # an enqueued trial: nothing to choose
            return {}
        encoding = _Encoding(search_space)
        history = _history(study, trial, encoding)
        space = encoding.space
        if space.cardinality is not None and len(set(row_keys(history.asked))) >= space.cardinality:
            return {}  # every point asked: Optuna allows a repeat, the random sampler draws it
        fits = _PrefixFits(self._fits, history, self._seed)
        z, _ = suggest_point(self._sampler, history, self._seed, fits)
        params = encoding.params(z)
        text = json.dumps(params)
        for i in range(0, len(text), _ATTR_CHUNK):
            study._storage.set_trial_system_attr(
                trial._trial_id, f"{RELATIVE_PARAMS_KEY}:{i // _ATTR_CHUNK}",
                text[i : i + _ATTR_CHUNK],
            )  # fmt: skip
        return params

    def sample_independent(
        self,
        study: optuna.Study,
        trial: FrozenTrial,
        param_name: str,
        param_distribution: BaseDistribution,
    ) -> Any:
        _check_single_objective(study)
        return self._random.sample_independent(study, trial, param_name, param_distribution)

    def before_trial(self, study: optuna.Study, trial: FrozenTrial) -> None:
        self._random.before_trial(study, trial)

    def after_trial(self, study: optuna.Study, trial: FrozenTrial, state, values) -> None:
        self._random.after_trial(study, trial, state, values)


def _fresh_seed() -> int:
    return int(np.random.SeedSequence().generate_state(1)[0])


def _check_single_objective(study) -> None:
    if len(study.directions) != 1:
        raise ValueError(
            f"FrontierboSampler optimises one objective; this study has {len(study.directions)} "
            f"(directions {[d.name.lower() for d in study.directions]})"
        )


class _Encoding:
    """Optuna's distributions (in the order given) as a frontierbo :class:`Space` (module doc):
    ``point(params)`` encodes a trial's external values, ``params(z)`` decodes a point."""

    def __init__(self, search_space: Mapping[str, BaseDistribution]):
        self.distributions = dict(search_space)
        self.space = Space([_parameter(name, d) for name, d in self.distributions.items()])

    def point(self, params: Mapping) -> np.ndarray | None:
        """The encoded point of ``params``, or None when a name is missing or a value is not
        one of its distribution's (an out-of-range enqueued value, say)."""
        inner = {}
        for name, d in self.distributions.items():
            if name not in params:
                return None
            value = _inner(d, params[name])
            if value is None:
                return None
            inner[name] = value
        try:
            return self.space.encode(inner)
        except ValueError:
            return None

    def params(self, z: np.ndarray) -> dict[str, Any]:
        inner = self.space.decode(z)
        return {name: _outer(d, inner[name]) for name, d in self.distributions.items()}


def _steps(d) -> int:
    """The last index K of a stepped distribution's values ``low + k step``."""
    return int(round((d.high - d.low) / d.step))


def _stepped(d) -> bool:
    return isinstance(d, FloatDistribution | IntDistribution) and d.step not in (None, 1)


def _parameter(name: str, d: BaseDistribution):
    if isinstance(d, CategoricalDistribution):
        return Categorical(name, list(range(len(d.choices))))
    if _stepped(d):
        return Int(name, 0, _steps(d))
    if isinstance(d, FloatDistribution):
        return Float(name, d.low, d.high, log=d.log)
    if isinstance(d, IntDistribution):
        return Int(name, d.low, d.high, log=d.log)
    raise ValueError(
        f"param {name!r}: FrontierboSampler samples FloatDistribution, IntDistribution and "
        f"CategoricalDistribution, got {type(d).__name__}"
    )


def _inner(d: BaseDistribution, value):
    """A trial's external value as the :class:`Space`'s value, or None if it is not one."""
    if isinstance(d, CategoricalDistribution):
        try:
            return int(d.to_internal_repr(value))
        except (ValueError, TypeError):
            return None
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        return None
    if not math.isfinite(float(value)):
        return None
    if _stepped(d):
        k = (float(value) - d.low) / d.step
        index = round(k)
        if abs(k - index) > _STEP_TOLERANCE * max(1.0, abs(k)) or not 0 <= index <= _steps(d):
            return None
        return int(index)
    if isinstance(d, IntDistribution):
        return int(value) if float(value) == int(value) else None
    return float(value)


def _outer(d: BaseDistribution, inner):
    """The :class:`Space`'s value as Optuna's external value."""
    if isinstance(d, CategoricalDistribution):
        return d.to_external_repr(int(inner))
    if _stepped(d):
        if isinstance(d, IntDistribution):
            return int(d.low + int(inner) * d.step)
        # decimal arithmetic: low 0, step 0.1, k 3 is 0.3 (not 0.30000000000000004)
        value = float(Decimal(repr(float(d.low))) + int(inner) * Decimal(repr(float(d.step))))
        return min(max(value, d.low), d.high)
    return int(inner) if isinstance(d, IntDistribution) else float(inner)


def _asked_params(trial: FrozenTrial) -> dict:
    """What a running or waiting trial will evaluate: its enqueued params, the params this
    sampler chose for it, and those it has suggested so far."""
    chunks, i = [], 0
    while (chunk := trial.system_attrs.get(f"{RELATIVE_PARAMS_KEY}:{i}")) is not None:
        chunks.append(chunk)
        i += 1
    chosen = json.loads("".join(chunks)) if chunks else {}
    return {**trial.system_attrs.get("fixed_params", {}), **chosen, **trial.params}


def _history(study, trial: FrozenTrial, encoding: _Encoding) -> SpaceHistory:
    """The :class:`SpaceHistory` of ``study`` for ``trial`` (module doc)."""
    sign = -1.0 if study.direction == StudyDirection.MINIMIZE else 1.0
    done, pending, failed = [], [], []
    for t in study.get_trials(deepcopy=False):
        if t.number == trial.number:
            continue
        if t.state == TrialState.COMPLETE:
            z = encoding.point(t.params)
            if z is not None and t.value is not None:
                when = t.datetime_complete.timestamp() if t.datetime_complete else math.inf
                done.append((when, t.number, z, sign * float(t.value)))
        elif t.state in (TrialState.RUNNING, TrialState.WAITING):
            z = encoding.point(_asked_params(t))
            if z is not None:
                pending.append(z)
        elif t.state in (TrialState.FAIL, TrialState.PRUNED):
            z = encoding.point(t.params)
            if z is not None:
                failed.append(z)
    done.sort(key=lambda r: (r[0], r[1]))  # in the order told, as a frontierbo study
    dims = encoding.space.dims

    def block(points) -> np.ndarray:
        return np.array(points, dtype=float).reshape(-1, dims)

    return SpaceHistory(
        space=encoding.space,
        points=block([r[2] for r in done]),
        values=_finite(np.array([r[3] for r in done], dtype=float)),
        pending=block(pending),
        number=trial.number,
        failed=block(failed),
    )


def _finite(values: np.ndarray) -> np.ndarray:
    """Infinite values (Optuna allows them) clipped to the finite range, as Optuna's GPSampler."""
    finite = np.isfinite(values)
    if finite.all():
        return values
    low, high = (values[finite].min(), values[finite].max()) if finite.any() else (0.0, 0.0)
    return np.clip(np.nan_to_num(values, nan=low), low, high)


class _PrefixFits:
    """The fit cache (``get(t)`` / ``put(t, hyper)``) a frontierbo sampler expects, kept in the
    sampler's dict under the first ``t`` told points and values (and the seed): a fit is
    reused only for the very observations it was made on, whatever trials came and went."""

    def __init__(self, store: _DictFits, history: SpaceHistory, seed: int):
        self.store, self.history, self.seed = store, history, seed

    def _key(self, t: int) -> tuple:
        h = self.history
        digest = hashlib.sha1(h.space.dumps().encode())
        digest.update(np.ascontiguousarray(h.points[:t], dtype=float).tobytes())
        digest.update(np.ascontiguousarray(h.values[:t], dtype=float).tobytes())
        return self.seed, t, digest.hexdigest()

    def get(self, t: int) -> dict | None:
        return self.store.get(self._key(t))

    def put(self, t: int, hyper: dict) -> None:
        self.store.put(self._key(t), hyper)


# -- a frontierbo study as an Optuna study ------------------------------------------------------
from frontierbo.study.optuna_export import to_optuna  # noqa: E402  (re-exported)

__all__ = ["FrontierboSampler", "to_optuna"]
